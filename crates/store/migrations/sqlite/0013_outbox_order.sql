-- The shape of the PostgreSQL migration: one writer at a time commits ids in order here, so
-- every record's transaction is 0 and consumers read in id order.
ALTER TABLE activity ADD COLUMN txid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE worker_cursors ADD COLUMN last_txid INTEGER NOT NULL DEFAULT 0;
CREATE INDEX activity_txid ON activity (txid, id);
