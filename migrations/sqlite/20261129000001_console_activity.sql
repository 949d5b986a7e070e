-- Who did what in the console (issue 38): one row for every write a console user made to a
-- record (create, edit, a workflow action, delete), in the write's own transaction, with the
-- user's id and their name at the time (a record's page shows it; the name stays readable
-- after the user is gone). The events of a console write are the API's and name no user.
-- Kept as long as the records; a sandbox reset deletes the sandbox's.
CREATE TABLE console_activity (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL,
    id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    collection TEXT NOT NULL,
    action TEXT NOT NULL,
    -- The fields an edit changed, separated by commas (empty for anything else).
    fields TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX console_activity_record ON console_activity (tenant_id, livemode, record_id, created_at);
