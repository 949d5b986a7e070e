-- Workflows, events and the ledger (issue 4).

-- The draft lease an approved application was converted into.
ALTER TABLE applications ADD COLUMN lease_id TEXT;
CREATE INDEX applications_lease_id ON applications (tenant_id, livemode, lease_id);

-- Charges are posted to the ledger when created; a mistaken one is voided.
ALTER TABLE charges ADD COLUMN status TEXT NOT NULL DEFAULT 'posted';
ALTER TABLE charges ADD COLUMN voided_at TEXT;
CREATE INDEX charges_status ON charges (tenant_id, livemode, status, id);

-- When a lease was ended or terminated (the rent roll's "in force").
ALTER TABLE leases ADD COLUMN ended_at TEXT;

ALTER TABLE payments ADD COLUMN succeeded_at TEXT;
ALTER TABLE payments ADD COLUMN reversed_at TEXT;
ALTER TABLE refunds ADD COLUMN succeeded_at TEXT;

-- A scheduled event names its occurrence (a due date, a notice period and end date);
-- the unique index makes each fire once even with several processes scanning at once.
ALTER TABLE events ADD COLUMN occurrence TEXT;
CREATE UNIQUE INDEX events_occurrence ON events (tenant_id, livemode, type, related_object_id, occurrence);
CREATE INDEX events_retention ON events (created_at);

-- The scheduler and the report queue scan across tenants.
CREATE INDEX charges_rent_due ON charges (kind, due_date);
CREATE INDEX leases_ending ON leases (status, end_date);
CREATE INDEX documents_expiring ON documents (expires_at);
CREATE INDEX reports_queue ON reports (status, created_at);

-- The lines of every journal entry, one row each, so balances are SQL sums.
CREATE TABLE ledger_lines (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    entry_id TEXT NOT NULL,
    line_no INTEGER NOT NULL,
    account TEXT NOT NULL,
    debit INTEGER NOT NULL,
    credit INTEGER NOT NULL,
    currency TEXT NOT NULL,
    posted_on TEXT NOT NULL,
    property_id TEXT,
    PRIMARY KEY (tenant_id, livemode, entry_id, line_no),
    FOREIGN KEY (tenant_id, livemode, entry_id) REFERENCES accounting_entries (tenant_id, livemode, id)
);
CREATE INDEX ledger_lines_account ON ledger_lines (tenant_id, livemode, currency, account);
