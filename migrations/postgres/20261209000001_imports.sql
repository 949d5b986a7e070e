-- Bulk import (issue 41): an uploaded file's import (the `imports` collection, as
-- `gable migration imports` prints it) and its rows as the upload read and checked them
-- (`import_rows`, deleted with their import), kept 30 days (docs/imports.md).
-- imports: A file of records brought in at once (CSV or NDJSON; `POST /v1/imports` with the file as the body): checked row by row when it is uploaded, which writes no record (a dry run), then written by the `commit` action in batches. Rows are matched to records by `external_id`, so importing a file again creates nothing new. Kept 30 days.
CREATE TABLE imports (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    id UUID NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    collection TEXT COLLATE "C",
    format TEXT COLLATE "C",
    file_name TEXT COLLATE "C",
    status TEXT COLLATE "C" NOT NULL,
    collections JSONB,
    total_rows BIGINT NOT NULL,
    valid_rows BIGINT NOT NULL,
    invalid_rows BIGINT NOT NULL,
    processed_rows BIGINT NOT NULL,
    next_line BIGINT NOT NULL,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    unchanged BIGINT NOT NULL,
    skipped BIGINT NOT NULL,
    skip_invalid BOOLEAN NOT NULL,
    failure JSONB,
    committed_at TIMESTAMPTZ,
    completed_at TIMESTAMPTZ,
    expires_at TIMESTAMPTZ,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX imports_created ON imports (tenant_id, livemode, created_at, id);
CREATE INDEX imports_status ON imports (tenant_id, livemode, status, id);

ALTER TABLE imports ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON imports USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON imports TO gable_app;
CREATE INDEX imports_expires ON imports (expires_at);

-- A row: its line, its collection and external id, the create body as the file gave it,
-- and what is wrong with it (null for a valid row). The commit reads rows in line order.
CREATE TABLE import_rows (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    import_id UUID NOT NULL,
    line BIGINT NOT NULL,
    collection TEXT COLLATE "C" NOT NULL,
    external_id TEXT COLLATE "C",
    body TEXT COLLATE "C" NOT NULL,
    errors TEXT COLLATE "C",
    PRIMARY KEY (tenant_id, livemode, import_id, line),
    FOREIGN KEY (tenant_id, livemode, import_id) REFERENCES imports (tenant_id, livemode, id) ON DELETE CASCADE
);
CREATE INDEX import_rows_errors ON import_rows (tenant_id, livemode, import_id, line) WHERE errors IS NOT NULL;
ALTER TABLE import_rows ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON import_rows USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON import_rows TO gable_app;
