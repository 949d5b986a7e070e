-- Workflows, events and the ledger (issue 4).

-- The draft lease an approved application was converted into.
ALTER TABLE applications ADD COLUMN lease_id UUID;
ALTER TABLE applications ADD CONSTRAINT applications_lease_id_fk
    FOREIGN KEY (tenant_id, livemode, lease_id) REFERENCES leases (tenant_id, livemode, id);
CREATE INDEX applications_lease_id ON applications (tenant_id, livemode, lease_id);

-- Charges are posted to the ledger when created; a mistaken one is voided.
ALTER TABLE charges ADD COLUMN status TEXT COLLATE "C" NOT NULL DEFAULT 'posted';
ALTER TABLE charges ADD COLUMN voided_at TIMESTAMPTZ;
CREATE INDEX charges_status ON charges (tenant_id, livemode, status, id);

-- When a lease was ended or terminated (the rent roll's "in force").
ALTER TABLE leases ADD COLUMN ended_at TIMESTAMPTZ;

ALTER TABLE payments ADD COLUMN succeeded_at TIMESTAMPTZ;
ALTER TABLE payments ADD COLUMN reversed_at TIMESTAMPTZ;
ALTER TABLE refunds ADD COLUMN succeeded_at TIMESTAMPTZ;

-- A scheduled event names its occurrence (a due date, a notice period and end date);
-- the unique index makes each fire once even with several processes scanning at once.
ALTER TABLE events ADD COLUMN occurrence TEXT COLLATE "C";
CREATE UNIQUE INDEX events_occurrence ON events (tenant_id, livemode, type, related_object_id, occurrence);
CREATE INDEX events_retention ON events (created_at);

-- The scheduler and the report queue scan across tenants.
CREATE INDEX charges_rent_due ON charges (kind, due_date);
CREATE INDEX leases_ending ON leases (status, end_date);
CREATE INDEX documents_expiring ON documents (expires_at);
CREATE INDEX reports_queue ON reports (status, created_at);

-- The lines of every journal entry, one row each, so balances are SQL sums.
CREATE TABLE ledger_lines (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    entry_id UUID NOT NULL,
    line_no INTEGER NOT NULL,
    account TEXT COLLATE "C" NOT NULL,
    debit BIGINT NOT NULL,
    credit BIGINT NOT NULL,
    currency TEXT COLLATE "C" NOT NULL,
    posted_on DATE NOT NULL,
    property_id UUID,
    PRIMARY KEY (tenant_id, livemode, entry_id, line_no),
    FOREIGN KEY (tenant_id, livemode, entry_id) REFERENCES accounting_entries (tenant_id, livemode, id)
);
CREATE INDEX ledger_lines_account ON ledger_lines (tenant_id, livemode, currency, account);
ALTER TABLE ledger_lines ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON ledger_lines USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON ledger_lines TO gable_app;
