//! The activity outbox: every platform action writes one record in the same transaction as the
//! change; workers fan records out to feeds, webhooks and notifications.
use crate::{params, Backend, Conn, DbError, Row, Value};

pub struct NewActivity<'a> {
    /// Event type name, e.g. `PushEvent`.
    pub kind: &'a str,
    pub actor_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub org_id: Option<i64>,
    pub public: bool,
    pub payload: &'a serde_json::Value,
}

pub fn record(c: &mut dyn Conn, a: &NewActivity, now: i64) -> Result<i64, DbError> {
    c.query_i64(
        "INSERT INTO activity (kind, actor_id, repo_id, org_id, public, payload, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![a.kind, a.actor_id, a.repo_id, a.org_id, a.public, a.payload.to_string(), now],
    )
}

/// A recorded platform action.
#[derive(Clone, Debug)]
pub struct Activity {
    pub id: i64,
    pub kind: String,
    pub actor_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub org_id: Option<i64>,
    pub public: bool,
    pub payload: serde_json::Value,
    pub created_at: i64,
}

pub const COLS: &str = "v.id, v.kind, v.actor_id, v.repo_id, v.org_id, v.public, v.payload, v.created_at";

pub fn from_row(r: &Row, at: usize) -> Activity {
    Activity {
        id: r.i64(at),
        kind: r.string(at + 1),
        actor_id: r.opt_i64(at + 2),
        repo_id: r.opt_i64(at + 3),
        org_id: r.opt_i64(at + 4),
        public: r.bool(at + 5),
        payload: serde_json::from_str(r.str(at + 6)).unwrap_or(serde_json::Value::Null),
        created_at: r.i64(at + 7),
    }
}

/// A consumer's position: the last record it handled, in (writing transaction, id) order.
///
/// Why not ids alone: on PostgreSQL ids are drawn when a row is inserted, but transactions
/// commit in any order, so a consumer that moved past id 11 would never see id 10 committed a
/// moment later. Records carry their transaction's id (`txid`) instead, and [`after`] returns
/// only records of transactions older than the oldest one still running (the snapshot's
/// `xmin`): those have all ended, so nothing can appear before the cursor afterwards, and every
/// record is handled exactly once. On SQLite one writer at a time commits ids in order; every
/// `txid` is 0 and the order is the id order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub txid: i64,
    pub id: i64,
}

/// "After the cursor, in order" as each backend's index answers it without walking what lies
/// before (condition, order, parameters): on SQLite every `txid` is 0, so `id > ?` in id order
/// is a rowid range; on PostgreSQL the row comparison is an index condition on `activity_txid
/// (txid, id)`. (SQLite turns neither a row-value `>` nor `ORDER BY txid, id` into a range: it
/// walked the whole `activity_txid` index, ~10 ms a call at 140,000 records.)
fn beyond(c: &dyn Conn, at: Cursor) -> (&'static str, &'static str, Vec<Value>) {
    match c.backend() {
        Backend::Sqlite => ("v.id > ?", "v.id", vec![Value::from(at.id)]),
        Backend::Postgres => ("(v.txid, v.id) > (?, ?)", "v.txid, v.id", vec![Value::from(at.txid), Value::from(at.id)]),
    }
}

/// Up to `limit` records after `at` that no running transaction can precede, in order.
pub fn after(c: &mut dyn Conn, at: Cursor, limit: i64) -> Result<Vec<(Cursor, Activity)>, DbError> {
    let (cond, order, mut args) = beyond(c, at);
    let sql = format!("SELECT {COLS}, v.txid FROM activity v WHERE {cond} AND v.txid < ? ORDER BY {order} LIMIT ?");
    // Taken before the read: every transaction older than it has ended by the time the read's
    // own snapshot is taken, so all its records are visible to the read.
    let horizon = match c.backend() {
        Backend::Postgres => c.query_i64("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint", &[])?,
        Backend::Sqlite => 1,
    };
    args.extend([Value::from(horizon), Value::from(limit)]);
    let rows = c.query(&sql, &args)?;
    Ok(rows.iter().map(|r| (Cursor { txid: r.i64(8), id: r.i64(0) }, from_row(r, 0))).collect())
}

/// Are there records after `at` (whether or not they can be handled yet)?
pub fn pending(c: &mut dyn Conn, at: Cursor) -> Result<bool, DbError> {
    let (cond, order, args) = beyond(c, at);
    // The ORDER BY makes it an index probe: without it a generic plan may scan the whole table
    // for the row that, when the consumer is caught up, is not there.
    let sql = format!("SELECT 1 FROM activity v WHERE {cond} ORDER BY {order} LIMIT 1");
    Ok(c.query_opt(&sql, &args)?.is_some())
}

/// Takes a consumer's cursor for this transaction (the row lock serialises nodes sharing a
/// PostgreSQL database) and returns its position.
pub fn lock_cursor(c: &mut dyn Conn, name: &str) -> Result<Cursor, DbError> {
    // Creates the cursor if new; either way its row is locked until the transaction ends.
    let r = c.query_opt(
        "INSERT INTO worker_cursors (name, last_id) VALUES (?, 0) \
         ON CONFLICT (name) DO UPDATE SET last_id = worker_cursors.last_id RETURNING last_txid, last_id",
        params![name],
    )?;
    Ok(r.map(|r| Cursor { txid: r.i64(0), id: r.i64(1) }).unwrap_or_default())
}

/// A consumer's position without locking.
pub fn cursor(c: &mut dyn Conn, name: &str) -> Result<Cursor, DbError> {
    let row = c.query_opt("SELECT last_txid, last_id FROM worker_cursors WHERE name = ?", params![name])?;
    Ok(row.map(|r| Cursor { txid: r.i64(0), id: r.i64(1) }).unwrap_or_default())
}

pub fn set_cursor(c: &mut dyn Conn, name: &str, at: Cursor) -> Result<(), DbError> {
    c.execute("UPDATE worker_cursors SET last_txid = ?, last_id = ? WHERE name = ?", params![at.txid, at.id, name])?;
    Ok(())
}
