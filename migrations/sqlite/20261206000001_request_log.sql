-- The request log (issue 39): every /v1 call a credential made, in its tenant and
-- environment, written in batches off the request path and kept 7 days (a setting);
-- secrets are redacted before a row is written. The table is the `request-logs`
-- collection, as `gable migration request-logs` prints it, and an index for its purge.
CREATE TABLE request_logs (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    route TEXT,
    query TEXT,
    status INTEGER NOT NULL,
    status_class TEXT NOT NULL,
    error_code TEXT,
    duration_ms REAL NOT NULL,
    credential_type TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    key_prefix TEXT,
    oauth_client_id TEXT,
    user_id TEXT,
    idempotency_key TEXT,
    idempotent_replayed INTEGER NOT NULL,
    api_version TEXT,
    client_ip TEXT,
    user_agent TEXT,
    request_headers TEXT,
    request_body TEXT,
    request_body_truncated INTEGER NOT NULL,
    response_body TEXT,
    response_body_truncated INTEGER NOT NULL,
    event_ids TEXT,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX request_logs_created ON request_logs (tenant_id, livemode, created_at, id);
CREATE INDEX request_logs_status ON request_logs (tenant_id, livemode, status, id);
CREATE INDEX request_logs_credential_id ON request_logs (tenant_id, livemode, credential_id);
CREATE INDEX request_logs_retention ON request_logs (created_at);

-- An event names the request that caused it (null for what the scheduler caused on its
-- own): the request log lists a call's events, and an event links to its call.
ALTER TABLE events ADD COLUMN request_id TEXT;
CREATE INDEX events_request_id ON events (tenant_id, livemode, request_id);
