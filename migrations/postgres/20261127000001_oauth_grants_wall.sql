-- Disabling or deleting a user revokes the OAuth grants they gave in the same transaction
-- as the change (issue 19): re-enabling the user must never revive old tokens, so the
-- revocation cannot be a separate step that might fail after the commit.
--
-- The change runs in a tenant transaction (role gable_app), which otherwise reaches no
-- table of Gable's own. It gets exactly what the revocation needs: to find a tenant's
-- grants by user and stamp `revoked_at`, behind the same tenant wall as tenant data.
-- (A grant's `livemode` is its app's environment, not the user's, so the wall here is
-- the tenant alone; users and their grants are live records.)
ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON oauth_grants
    USING (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid);
GRANT SELECT (id, tenant_id, user_id, revoked_at), UPDATE (revoked_at) ON oauth_grants TO gable_app;
