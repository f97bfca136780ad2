//! Commit statuses. `status_latest` keeps the newest status per (repo, sha, context), so the
//! combined status is one indexed join however many statuses a context collected.
use super::accounts::{self, Account};
use crate::{params, Conn, DbError, Row};
use platform_core::status::MAX_PER_SHA_AND_CONTEXT;

#[derive(Clone, Debug)]
pub struct Status {
    pub id: i64,
    pub repo_id: i64,
    pub sha: String,
    pub context: String,
    pub state: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
    pub creator: Option<Account>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLS: &str = "s.id, s.repo_id, s.sha, s.context, s.state, s.description, s.target_url, s.created_at, s.updated_at";

fn from_row(r: &Row) -> Status {
    Status {
        id: r.i64(0),
        repo_id: r.i64(1),
        sha: r.string(2),
        context: r.string(3),
        state: r.string(4),
        description: r.opt_string(5),
        target_url: r.opt_string(6),
        created_at: r.i64(7),
        updated_at: r.i64(8),
        creator: accounts::opt_from_row(r, 9),
    }
}

pub struct NewStatus<'a> {
    pub repo_id: i64,
    pub sha: &'a str,
    pub state: &'a str,
    pub context: &'a str,
    pub description: Option<&'a str>,
    pub target_url: Option<&'a str>,
    pub creator: Option<&'a Account>,
}

/// Adds a status; `Ok(None)` when the sha and context already hold the maximum.
pub fn create(c: &mut dyn Conn, n: &NewStatus, now: i64) -> Result<Option<Status>, DbError> {
    let context_lower = n.context.to_lowercase();
    let id = c.query_i64(
        "INSERT INTO statuses (repo_id, sha, context, context_lower, state, description, target_url, creator_id, \
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![n.repo_id, n.sha, n.context, &context_lower, n.state, n.description, n.target_url, n.creator.map(|a| a.id), now, now],
    )?;
    // Counted and named the latest in one statement, under the key's row lock, so concurrent
    // creators on PostgreSQL (read committed) cannot overshoot the maximum together; the higher
    // id stays the latest whichever of two commits first.
    let counted = c.query_opt(
        "INSERT INTO status_latest (repo_id, sha, context_lower, status_id, status_count) VALUES (?, ?, ?, ?, 1) \
         ON CONFLICT (repo_id, sha, context_lower) DO UPDATE SET status_count = status_latest.status_count + 1, \
         status_id = CASE WHEN excluded.status_id > status_latest.status_id THEN excluded.status_id ELSE status_latest.status_id END \
         WHERE status_latest.status_count < ? RETURNING status_count",
        params![n.repo_id, n.sha, &context_lower, id, MAX_PER_SHA_AND_CONTEXT],
    )?;
    if counted.is_none() {
        c.execute("DELETE FROM statuses WHERE id = ?", params![id])?;
        return Ok(None);
    }
    Ok(Some(Status {
        id,
        repo_id: n.repo_id,
        sha: n.sha.into(),
        context: n.context.into(),
        state: n.state.into(),
        description: n.description.map(Into::into),
        target_url: n.target_url.map(Into::into),
        creator: n.creator.cloned(),
        created_at: now,
        updated_at: now,
    }))
}

/// Statuses of a sha, newest first, one page, and the total.
pub fn list(c: &mut dyn Conn, repo_id: i64, sha: &str, offset: i64, limit: i64) -> Result<(Vec<Status>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM statuses WHERE repo_id = ? AND sha = ?", params![repo_id, sha])?;
    let sql = format!(
        "SELECT {COLS}, {} FROM statuses s LEFT JOIN accounts a ON a.id = s.creator_id \
         WHERE s.repo_id = ? AND s.sha = ? ORDER BY s.id DESC LIMIT ? OFFSET ?",
        accounts::COLS
    );
    let rows = c.query(&sql, params![repo_id, sha, limit, offset])?;
    Ok((rows.iter().map(from_row).collect(), total))
}

/// The latest status of every context of a sha (newest first; one page), the states of all of
/// them (for the combined state), and the number of contexts.
pub fn latest(c: &mut dyn Conn, repo_id: i64, sha: &str, offset: i64, limit: i64) -> Result<(Vec<Status>, Vec<String>), DbError> {
    let states = c
        .query(
            "SELECT s.state FROM status_latest l JOIN statuses s ON s.id = l.status_id WHERE l.repo_id = ? AND l.sha = ?",
            params![repo_id, sha],
        )?
        .iter()
        .map(|r| r.string(0))
        .collect();
    // The creator is read too: the combined status omits `creator` but shows its `avatar_url`.
    let sql = format!(
        "SELECT {COLS}, {} FROM status_latest l JOIN statuses s ON s.id = l.status_id \
         LEFT JOIN accounts a ON a.id = s.creator_id \
         WHERE l.repo_id = ? AND l.sha = ? ORDER BY s.id DESC LIMIT ? OFFSET ?",
        accounts::COLS
    );
    let rows = c.query(&sql, params![repo_id, sha, limit, offset])?;
    Ok((rows.iter().map(from_row).collect(), states))
}
