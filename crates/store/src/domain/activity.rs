//! The activity outbox: every platform action writes one record in the same transaction as the
//! change; workers fan records out to feeds, webhooks and notifications.
use crate::{params, Conn, DbError, Row};

pub struct NewActivity<'a> {
    /// Event type name, e.g. `PushEvent`.
    pub kind: &'a str,
    pub actor_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub org_id: Option<i64>,
    pub public: bool,
    pub payload: &'a serde_json::Value,
}

impl<'a> NewActivity<'a> {
    /// An action in a repository: under its owner organization, if any, and public when the
    /// repository is.
    pub fn in_repo(kind: &'a str, actor_id: Option<i64>, repo: &super::repos::Repo, payload: &'a serde_json::Value) -> Self {
        NewActivity {
            kind,
            actor_id,
            repo_id: Some(repo.id),
            org_id: repo.owner.is_org().then_some(repo.owner.id),
            public: !repo.private,
            payload,
        }
    }
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

/// Up to `limit` records after `last_id`, oldest first.
pub fn after(c: &mut dyn Conn, last_id: i64, limit: i64) -> Result<Vec<Activity>, DbError> {
    let sql = format!("SELECT {COLS} FROM activity v WHERE v.id > ? ORDER BY v.id LIMIT ?");
    Ok(c.query(&sql, params![last_id, limit])?.iter().map(|r| from_row(r, 0)).collect())
}

/// The newest record id (0 when there is none).
pub fn last_id(c: &mut dyn Conn) -> Result<i64, DbError> {
    c.query_i64("SELECT COALESCE(MAX(id), 0) FROM activity", &[])
}

/// Takes a consumer's cursor for this transaction (the row lock serialises nodes sharing a
/// PostgreSQL database) and returns its position.
pub fn lock_cursor(c: &mut dyn Conn, name: &str) -> Result<i64, DbError> {
    c.execute("INSERT INTO worker_cursors (name, last_id) VALUES (?, 0) ON CONFLICT (name) DO NOTHING", params![name])?;
    c.execute("UPDATE worker_cursors SET last_id = last_id WHERE name = ?", params![name])?;
    c.query_i64("SELECT last_id FROM worker_cursors WHERE name = ?", params![name])
}

/// A consumer's position without locking.
pub fn cursor(c: &mut dyn Conn, name: &str) -> Result<i64, DbError> {
    Ok(c.query_opt("SELECT last_id FROM worker_cursors WHERE name = ?", params![name])?.map(|r| r.i64(0)).unwrap_or(0))
}

pub fn set_cursor(c: &mut dyn Conn, name: &str, last_id: i64) -> Result<(), DbError> {
    c.execute("UPDATE worker_cursors SET last_id = ? WHERE name = ?", params![last_id, name])?;
    Ok(())
}
