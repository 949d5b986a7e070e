-- Flow tokens can be revoked (issue 19, point 5): `POST /v1/flow-tokens/{id}/revoke`
-- moves a token from `active` to `revoked` and stamps `revoked_at`; the flow API refuses
-- a revoked token from its next request on. Tokens made before this are active.
ALTER TABLE flow_tokens ADD COLUMN status TEXT COLLATE "C" NOT NULL DEFAULT 'active';
ALTER TABLE flow_tokens ADD COLUMN revoked_at TIMESTAMPTZ;
CREATE INDEX flow_tokens_status ON flow_tokens (tenant_id, livemode, status, id);
