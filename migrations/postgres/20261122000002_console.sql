-- The signed-in console: passwords, sessions, and what service accounts need.
-- See docs/console.md. Both new tables are Gable's own bookkeeping, read outside any
-- tenant (by email at sign-in, by token hash on every console request), by the
-- connecting role. They are deliberately NOT granted to gable_app: tenant-scoped work
-- (every /v1 request) cannot read a password hash or a session, even by a bug.
-- Row-level security is enabled as well, so a later grant still sees one tenant only.

-- Service accounts are deleted softly (their keys stay listed as revoked history).
ALTER TABLE service_accounts ADD COLUMN deleted_at TIMESTAMPTZ;
-- A name is unique in a tenant among the accounts not deleted.
CREATE UNIQUE INDEX service_accounts_name ON service_accounts (tenant_id, name) WHERE deleted_at IS NULL;
-- A service account's keys, newest first.
CREATE INDEX api_keys_service_account ON api_keys (tenant_id, service_account_id, created_at);

-- A console user's password (argon2id, PHC string). One per user of the live `users`
-- collection; the email (lowercase) is unique across Gable, since sign-in is by email alone.
CREATE TABLE console_credentials (
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    livemode BOOLEAN NOT NULL DEFAULT TRUE CHECK (livemode),
    user_id UUID NOT NULL,
    email TEXT COLLATE "C" NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id),
    -- Deleting the user (also through the API) deletes the password and the sessions.
    FOREIGN KEY (tenant_id, livemode, user_id) REFERENCES users (tenant_id, livemode, id) ON DELETE CASCADE
);

-- Console sessions: only the SHA-256 of the cookie's token is kept.
CREATE TABLE console_sessions (
    token_hash TEXT COLLATE "C" PRIMARY KEY,
    tenant_id UUID NOT NULL,
    user_id UUID NOT NULL,
    csrf TEXT NOT NULL,
    -- The environment the console shows: newcomers start in the sandbox.
    livemode BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (tenant_id, user_id) REFERENCES console_credentials (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX console_sessions_user ON console_sessions (tenant_id, user_id);

ALTER TABLE console_credentials ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON console_credentials USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid);
ALTER TABLE console_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON console_sessions USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid) WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid);
