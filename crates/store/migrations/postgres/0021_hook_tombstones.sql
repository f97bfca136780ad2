-- A deleted hook is kept (deleted_at set) until its last delivery, the `meta` `deleted` that goes
-- to the hook itself, has been attempted; then the row and its deliveries go. Keep in step with
-- the other dialect's 0021_hook_tombstones.sql.
ALTER TABLE hooks ADD COLUMN deleted_at BIGINT;
