-- The request log (issue 39): every /v1 call a credential made, in its tenant and
-- environment, written in batches off the request path and kept 7 days (a setting);
-- secrets are redacted before a row is written. The table is the `request-logs`
-- collection, as `gable migration request-logs` prints it, and an index for its purge.
CREATE TABLE request_logs (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    id UUID NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    method TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    route TEXT COLLATE "C",
    query TEXT COLLATE "C",
    status BIGINT NOT NULL,
    status_class TEXT COLLATE "C" NOT NULL,
    error_code TEXT COLLATE "C",
    duration_ms DOUBLE PRECISION NOT NULL,
    credential_type TEXT COLLATE "C" NOT NULL,
    credential_id UUID NOT NULL,
    key_prefix TEXT COLLATE "C",
    oauth_client_id UUID,
    user_id UUID,
    idempotency_key TEXT COLLATE "C",
    idempotent_replayed BOOLEAN NOT NULL,
    api_version TEXT COLLATE "C",
    client_ip TEXT COLLATE "C",
    user_agent TEXT COLLATE "C",
    request_headers JSONB,
    request_body TEXT COLLATE "C",
    request_body_truncated BOOLEAN NOT NULL,
    response_body TEXT COLLATE "C",
    response_body_truncated BOOLEAN NOT NULL,
    event_ids JSONB,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX request_logs_created ON request_logs (tenant_id, livemode, created_at, id);
CREATE INDEX request_logs_status ON request_logs (tenant_id, livemode, status, id);
CREATE INDEX request_logs_credential_id ON request_logs (tenant_id, livemode, credential_id);

ALTER TABLE request_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON request_logs USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON request_logs TO gable_app;
CREATE INDEX request_logs_retention ON request_logs (created_at);

-- An event names the request that caused it (null for what the scheduler caused on its
-- own): the request log lists a call's events, and an event links to its call.
ALTER TABLE events ADD COLUMN request_id UUID;
CREATE INDEX events_request_id ON events (tenant_id, livemode, request_id);
