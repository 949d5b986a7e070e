-- The event stream (`GET /v1/events/stream`, `gable listen`) hands a tenant's events out
-- in the order their transactions committed, so that a listener that resumes after the
-- last event it saw misses none and repeats none. Ids are made before commit: of two
-- concurrent transactions the one with the earlier id may commit later, and a reader that
-- had already passed that id would never see it. So each event keeps the id of the
-- transaction that wrote it, and the stream reads only events of transactions older than
-- every transaction still running (`pg_snapshot_xmin`), in (transaction, id) order.
ALTER TABLE events ADD COLUMN stream_xid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX events_stream ON events (tenant_id, livemode, stream_xid, id);
