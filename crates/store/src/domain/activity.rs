//! The activity outbox: every platform action writes one record in the same transaction as the
//! change; workers fan records out to feeds, webhooks and notifications.
use crate::{params, Conn, DbError};

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
