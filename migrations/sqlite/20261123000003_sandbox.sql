-- The sandbox and safe retries (issue 10): idempotency keys and test payments.

-- Idempotency keys: a POST's key, per tenant, environment and credential, with
-- the request it was first used for (a fingerprint of method, path and body) and, once
-- answered, the answer, sealed under the master key (a create's answer may hold a secret
-- shown once). A reservation (token, locked_until) marks a request in flight; the answer
-- is written in the transaction of the write it belongs to. Kept 24 hours.
CREATE TABLE idempotency_keys (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    credential_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    created_at TEXT NOT NULL,
    token TEXT NOT NULL,
    locked_until TEXT,
    response_status INTEGER,
    response_sealed TEXT,
    PRIMARY KEY (tenant_id, livemode, credential_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Test payments (issue 10): a payment may name the lease it pays, carries a description,
-- and a failed one says why as a code and a message (the message was `failure_reason`).
ALTER TABLE payments ADD COLUMN lease_id TEXT;
ALTER TABLE payments ADD COLUMN description TEXT;
ALTER TABLE payments ADD COLUMN failure_code TEXT;
ALTER TABLE payments RENAME COLUMN failure_reason TO failure_message;
CREATE INDEX payments_lease_id ON payments (tenant_id, livemode, lease_id);
CREATE INDEX payments_scenario ON payments (tenant_id, livemode, scenario, id);

-- Recurring rent: a charge Gable billed from its lease names its period (`YYYY-MM`), the
-- occurrence key that makes each period billed once, whatever runs the scheduler; the
-- lease remembers the due date of the last period billed and of the next one to bill
-- (what the scheduler looks for: an index on it, across tenants).
ALTER TABLE charges ADD COLUMN period TEXT;
CREATE UNIQUE INDEX charges_rent_period ON charges (tenant_id, livemode, lease_id, period) WHERE period IS NOT NULL;
ALTER TABLE leases ADD COLUMN rent_billed_through TEXT;
ALTER TABLE leases ADD COLUMN rent_next_due TEXT;
CREATE INDEX leases_rent_next_due ON leases (rent_next_due) WHERE status = 'active';

-- The sandbox clock: a tenant's sandbox runs `offset_ms` ahead of real time once it has
-- been advanced (forward only). Live data never sees it.
CREATE TABLE sandbox_clocks (
    tenant_id TEXT PRIMARY KEY REFERENCES tenants (id),
    offset_ms INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
