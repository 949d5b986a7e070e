-- Who did what in the console (issue 38): one row for every write a console user made to a
-- record (create, edit, a workflow action, delete), in the write's own transaction, with the
-- user's id and their name at the time (a record's page shows it; the name stays readable
-- after the user is gone). The events of a console write are the API's and name no user.
-- Kept as long as the records; a sandbox reset deletes the sandbox's.
CREATE TABLE console_activity (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL,
    id UUID NOT NULL,
    record_id UUID NOT NULL,
    collection TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    -- The fields an edit changed, separated by commas (empty for anything else).
    fields TEXT COLLATE "C" NOT NULL,
    user_id UUID NOT NULL,
    user_name TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, livemode, id)
);
CREATE INDEX console_activity_record ON console_activity (tenant_id, livemode, record_id, created_at);
ALTER TABLE console_activity ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON console_activity USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean);
GRANT SELECT, INSERT, UPDATE, DELETE ON console_activity TO gable_app;
