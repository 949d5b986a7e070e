-- The signed-in console: passwords, sessions, and what service accounts need.
-- See docs/console.md. Both tables below are Gable's own bookkeeping, read outside any
-- tenant (by email at sign-in, by token hash on every console request).

-- Service accounts are deleted softly (their keys stay listed as revoked history).
ALTER TABLE service_accounts ADD COLUMN deleted_at TEXT;
-- A name is unique in a tenant among the accounts not deleted.
CREATE UNIQUE INDEX service_accounts_name ON service_accounts (tenant_id, name) WHERE deleted_at IS NULL;
-- A service account's keys, newest first.
CREATE INDEX api_keys_service_account ON api_keys (tenant_id, service_account_id, created_at);

-- A console user's password (argon2id, PHC string). One per user of the live `users`
-- collection; the email (lowercase) is unique across Gable, since sign-in is by email alone.
CREATE TABLE console_credentials (
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode = 1),
    user_id TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id),
    -- Deleting the user (also through the API) deletes the password and the sessions.
    FOREIGN KEY (tenant_id, livemode, user_id) REFERENCES users (tenant_id, livemode, id) ON DELETE CASCADE
);

-- Console sessions: only the SHA-256 of the cookie's token is kept.
CREATE TABLE console_sessions (
    token_hash TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    csrf TEXT NOT NULL,
    -- The environment the console shows: newcomers start in the sandbox.
    livemode INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    FOREIGN KEY (tenant_id, user_id) REFERENCES console_credentials (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX console_sessions_user ON console_sessions (tenant_id, user_id);
