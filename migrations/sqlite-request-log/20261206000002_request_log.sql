-- The request log's own database file on SQLite (`gable-request-log.db` beside the
-- database): the table of the `request-logs` collection and the index of its purge, as
-- PostgreSQL has them in its one database. A file of its own because the log is written
-- by its own connection: its batches never take the writer's turn from requests, and its
-- pages never grow the database's write-ahead log. No foreign key to `tenants` (a key
-- cannot reach into another file): the log is deleted with its sandbox and by its purge.
CREATE TABLE request_logs (
    tenant_id TEXT NOT NULL,
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
