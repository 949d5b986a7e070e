-- The sandbox and safe retries (issue 10): idempotency keys and test payments.

-- Idempotency keys: a POST's key, per tenant, environment and credential, with
-- the request it was first used for (a fingerprint of method, path and body) and, once
-- answered, the answer, sealed under the master key (a create's answer may hold a secret
-- shown once). A reservation (token, locked_until) marks a request in flight; the answer
-- is written in the transaction of the write it belongs to. Kept 24 hours.
CREATE TABLE idempotency_keys (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    credential_id UUID NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT COLLATE "C" NOT NULL,
    method TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    token UUID NOT NULL,
    locked_until TIMESTAMPTZ,
    response_status BIGINT,
    response_sealed TEXT,
    PRIMARY KEY (tenant_id, livemode, credential_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON idempotency_keys USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO gable_app;

-- Test payments (issue 10): a payment may name the lease it pays, carries a description,
-- and a failed one says why as a code and a message (the message was `failure_reason`).
ALTER TABLE payments ADD COLUMN lease_id UUID;
ALTER TABLE payments ADD COLUMN description TEXT COLLATE "C";
ALTER TABLE payments ADD COLUMN failure_code TEXT COLLATE "C";
ALTER TABLE payments RENAME COLUMN failure_reason TO failure_message;
CREATE INDEX payments_lease_id ON payments (tenant_id, livemode, lease_id);
CREATE INDEX payments_scenario ON payments (tenant_id, livemode, scenario, id);
ALTER TABLE payments ADD CONSTRAINT payments_lease_id_fk FOREIGN KEY (tenant_id, livemode, lease_id) REFERENCES leases (tenant_id, livemode, id);

-- Recurring rent: a charge Gable billed from its lease names its period (`YYYY-MM`), the
-- occurrence key that makes each period billed once, whatever runs the scheduler; the
-- lease remembers the due date of the last period billed and of the next one to bill
-- (what the scheduler looks for: an index on it, across tenants).
ALTER TABLE charges ADD COLUMN period TEXT COLLATE "C";
CREATE UNIQUE INDEX charges_rent_period ON charges (tenant_id, livemode, lease_id, period) WHERE period IS NOT NULL;
ALTER TABLE leases ADD COLUMN rent_billed_through DATE;
ALTER TABLE leases ADD COLUMN rent_next_due DATE;
CREATE INDEX leases_rent_next_due ON leases (rent_next_due) WHERE status = 'active';

-- The sandbox clock: a tenant's sandbox runs `offset_ms` ahead of real time once it has
-- been advanced (forward only). Live data never sees it.
CREATE TABLE sandbox_clocks (
    tenant_id UUID PRIMARY KEY REFERENCES tenants (id),
    offset_ms BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
ALTER TABLE sandbox_clocks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON sandbox_clocks USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND NULLIF(current_setting('gable.livemode', true), '')::boolean = false) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND NULLIF(current_setting('gable.livemode', true), '')::boolean = false);
GRANT SELECT, INSERT, UPDATE, DELETE ON sandbox_clocks TO gable_app;
