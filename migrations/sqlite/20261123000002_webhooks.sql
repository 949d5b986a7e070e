-- Webhook delivery (issue 9). See the PostgreSQL migration of the same name.
ALTER TABLE webhooks ADD COLUMN secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT;
ALTER TABLE webhooks ADD COLUMN failing_since TEXT;
CREATE INDEX webhooks_enabled ON webhooks (tenant_id, livemode, status);

DROP TABLE webhook_deliveries;
CREATE TABLE webhook_deliveries (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    event_id TEXT,
    event_type TEXT NOT NULL,
    event_created_at TEXT NOT NULL,
    url TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    status TEXT NOT NULL,
    request_headers TEXT,
    response_status INTEGER,
    response_headers TEXT,
    response_excerpt TEXT,
    latency_ms INTEGER,
    error TEXT,
    next_attempt_at TEXT,
    claimed_until TEXT,
    payload TEXT,
    PRIMARY KEY (tenant_id, livemode, id),
    FOREIGN KEY (tenant_id, livemode, webhook_id) REFERENCES webhooks (tenant_id, livemode, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, livemode, event_id) REFERENCES events (tenant_id, livemode, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (tenant_id, livemode, created_at, id);
CREATE INDEX webhook_deliveries_webhook_id ON webhook_deliveries (tenant_id, livemode, webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_event_id ON webhook_deliveries (tenant_id, livemode, event_id);
CREATE INDEX webhook_deliveries_status ON webhook_deliveries (tenant_id, livemode, status, id);
CREATE INDEX webhook_deliveries_event_type ON webhook_deliveries (tenant_id, livemode, event_type, id);
CREATE INDEX webhook_deliveries_response_status ON webhook_deliveries (tenant_id, livemode, response_status);
CREATE INDEX webhook_deliveries_next_attempt_at ON webhook_deliveries (tenant_id, livemode, next_attempt_at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_retention ON webhook_deliveries (created_at);
