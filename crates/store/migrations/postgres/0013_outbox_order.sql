-- Activity records carry the id of the transaction that wrote them. Consumers read them in
-- (transaction, id) order and only from transactions older than every one still running
-- (activity::after), so a record whose transaction commits late is never passed over.
ALTER TABLE activity ADD COLUMN txid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
ALTER TABLE worker_cursors ADD COLUMN last_txid BIGINT NOT NULL DEFAULT 0;
-- Records written before this migration now belong to its transaction: cursors go on from there.
UPDATE worker_cursors SET last_txid = pg_current_xact_id()::text::bigint;
CREATE INDEX activity_txid ON activity (txid, id);
