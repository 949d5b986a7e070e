-- The request log moves to a database file of its own (`migrations/sqlite-request-log`):
-- on one file its batches took turns with requests on SQLite's one writing connection.
-- The records kept here so far are a week of operational history at most; they are not
-- carried over. `events.request_id` stays: events live here.
DROP TABLE request_logs;
