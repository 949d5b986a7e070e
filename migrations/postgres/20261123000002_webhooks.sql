-- Webhook delivery (issue 9).

-- Subscriptions keep their signing secret sealed under the master key (never in plain),
-- and the previous one for 24 hours after a rotation. Gable records why it disabled one.
ALTER TABLE webhooks ADD COLUMN secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at TIMESTAMPTZ;
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT COLLATE "C";
ALTER TABLE webhooks ADD COLUMN failing_since TIMESTAMPTZ;
CREATE INDEX webhooks_enabled ON webhooks (tenant_id, livemode, status);

-- The delivery register: one row per attempt. Nothing was ever written to the first
-- shape of this table (it had no writer), so it is made anew. A pending row is an attempt
-- to make; the first ones are written in the transaction of their event, so what is to be
-- delivered is as durable as the event. A worker claims due rows (claimed_until) and a
-- claim that lapses (a process killed mid-attempt) is taken again: at least once.
DROP TABLE webhook_deliveries;
CREATE TABLE webhook_deliveries (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    id UUID NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    webhook_id UUID NOT NULL,
    event_id UUID,
    event_type TEXT COLLATE "C" NOT NULL,
    event_created_at TIMESTAMPTZ NOT NULL,
    url TEXT COLLATE "C" NOT NULL,
    attempt BIGINT NOT NULL,
    trigger TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    request_headers JSONB,
    response_status BIGINT,
    response_headers JSONB,
    response_excerpt TEXT COLLATE "C",
    latency_ms BIGINT,
    error TEXT COLLATE "C",
    next_attempt_at TIMESTAMPTZ,
    claimed_until TIMESTAMPTZ,
    payload JSONB,
    PRIMARY KEY (tenant_id, livemode, id),
    -- A subscription's register, and an event's deliveries, go with them.
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
-- The workers' queue, across tenants: due pending attempts.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_retention ON webhook_deliveries (created_at);
ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON webhook_deliveries USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_deliveries TO gable_app;
