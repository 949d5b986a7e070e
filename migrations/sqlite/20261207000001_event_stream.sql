-- The event stream (`GET /v1/events/stream`, `gable listen`) hands a tenant's events out
-- in the order they were committed. On SQLite one connection writes, one transaction at
-- a time, and an event's id (a UUIDv7, ordered within the process) is made inside its
-- transaction: the id order is the commit order. The column exists so both databases
-- order the stream by the same (stream_xid, id); on SQLite it is always 0.
ALTER TABLE events ADD COLUMN stream_xid INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_stream ON events (tenant_id, livemode, stream_xid, id);
