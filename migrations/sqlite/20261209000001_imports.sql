-- Bulk import (issue 41): an uploaded file's import (the `imports` collection, as
-- `gable migration imports` prints it) and its rows as the upload read and checked them
-- (`import_rows`, deleted with their import), kept 30 days (docs/imports.md).
-- imports: A file of records brought in at once (CSV or NDJSON; `POST /v1/imports` with the file as the body): checked row by row when it is uploaded, which writes no record (a dry run), then written by the `commit` action in batches. Rows are matched to records by `external_id`, so importing a file again creates nothing new. Kept 30 days.
CREATE TABLE imports (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    collection TEXT,
    format TEXT,
    file_name TEXT,
    status TEXT NOT NULL,
    collections TEXT,
    total_rows INTEGER NOT NULL,
    valid_rows INTEGER NOT NULL,
    invalid_rows INTEGER NOT NULL,
    processed_rows INTEGER NOT NULL,
    next_line INTEGER NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    unchanged INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    skip_invalid INTEGER NOT NULL,
    failure TEXT,
    committed_at TEXT,
    completed_at TEXT,
    expires_at TEXT,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX imports_created ON imports (tenant_id, livemode, created_at, id);
CREATE INDEX imports_status ON imports (tenant_id, livemode, status, id);
CREATE INDEX imports_expires ON imports (expires_at);

-- A row: its line, its collection and external id, the create body as the file gave it,
-- and what is wrong with it (null for a valid row). The commit reads rows in line order.
CREATE TABLE import_rows (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    import_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    collection TEXT NOT NULL,
    external_id TEXT,
    body TEXT NOT NULL,
    errors TEXT,
    PRIMARY KEY (tenant_id, livemode, import_id, line),
    FOREIGN KEY (tenant_id, livemode, import_id) REFERENCES imports (tenant_id, livemode, id) ON DELETE CASCADE
);
CREATE INDEX import_rows_errors ON import_rows (tenant_id, livemode, import_id, line) WHERE errors IS NOT NULL;
