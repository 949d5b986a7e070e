-- OAuth 2.1 for third-party apps (issue 12, docs/oauth.md). Gable's own bookkeeping, read
-- outside any tenant: an app registered by one tenant is authorized by users of any tenant.

-- An app. `client_id` is public; only the SHA-256 of a confidential client's secret is kept.
CREATE TABLE oauth_clients (
    id UUID PRIMARY KEY,
    -- The tenant that registered the app (and may edit or delete it).
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    client_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- A JSON array of the redirect URIs, each matched exactly.
    redirect_uris JSONB NOT NULL,
    secret_hash TEXT,
    -- The environment its tokens act in (live or sandbox), on the matching listener.
    livemode BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    deleted_at TIMESTAMPTZ
);
CREATE INDEX oauth_clients_tenant ON oauth_clients (tenant_id, created_at);

-- One authorization: a user granted scopes in their tenant to an app. Its code and tokens
-- are one family: revoking the grant (a reused code or refresh token, the user in the
-- console, the user disabled or deleted) ends them all.
CREATE TABLE oauth_grants (
    id UUID PRIMARY KEY,
    client_id UUID NOT NULL REFERENCES oauth_clients (id),
    tenant_id UUID NOT NULL REFERENCES tenants (id),
    user_id UUID NOT NULL,
    livemode BOOLEAN NOT NULL,
    scopes JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX oauth_grants_user ON oauth_grants (tenant_id, user_id, created_at);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- An authorization code (its SHA-256), single use, bound to its redirect URI and challenge.
CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id UUID NOT NULL REFERENCES oauth_grants (id),
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);

-- Access and refresh tokens (their SHA-256). A refresh token is used once: `used_at` is
-- set when it is rotated, and presenting it again revokes its grant.
CREATE TABLE oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id UUID NOT NULL REFERENCES oauth_grants (id),
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    scopes JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
