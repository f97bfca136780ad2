//! Commit statuses. `status_latest` keeps the newest status per (repo, sha, context), so the
//! combined status is one indexed join however many statuses a context collected.
use super::accounts::{self, Account};
use super::repos;
use crate::{params, Conn, DbError, Row, Value};
use platform_core::status::{StateCounts, MAX_PER_SHA_AND_CONTEXT};

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

/// Statuses of `target`, newest first, one page, and the total, in one statement as
/// [`latest`]. `None`: the ref names nothing.
pub fn list(c: &mut dyn Conn, repo_id: i64, target: Target, offset: i64, limit: i64) -> Result<Option<(Vec<Status>, i64)>, DbError> {
    let (target_sql, mut p) = target.sql(repo_id);
    let sql = format!(
        "WITH target AS ({target_sql}) \
         SELECT x.*, t.sha FROM target t LEFT JOIN (\
           SELECT {COLS}, {}, COUNT(*) OVER () AS n_all FROM statuses s LEFT JOIN accounts a ON a.id = s.creator_id \
           WHERE s.repo_id = ? AND s.sha = (SELECT sha FROM target) ORDER BY s.id DESC LIMIT ? OFFSET ?) x ON 1 = 1",
        accounts::COLS
    );
    p.extend([Value::from(repo_id), Value::from(limit), Value::from(offset)]);
    let rows = c.query(&sql, &p)?;
    let Some(first) = rows.first() else { return Ok(None) };
    if first.opt_i64(0).is_none() {
        // No row on this page: none at all, or a page past the end (counted apart).
        let total = if offset == 0 {
            0
        } else {
            c.query_i64("SELECT COUNT(*) FROM statuses WHERE repo_id = ? AND sha = ?", params![repo_id, first.str(first.len() - 1)])?
        };
        return Ok(Some((Vec::new(), total)));
    }
    let total = first.i64(COLS.split(',').count() + accounts::NCOLS);
    Ok(Some((rows.iter().map(from_row).collect(), total)))
}

/// The latest status of every context of a commit (newest first; one page), and how many
/// contexts there are in each state.
pub struct Latest {
    /// The commit's sha (what a ref resolved to).
    pub sha: String,
    pub page: Vec<Status>,
    pub states: StateCounts,
}

/// Where [`latest`] looks: a commit by sha, or a ref (or sha) of the path to resolve first.
pub enum Target<'a> {
    Sha(&'a str),
    Ref(&'a str),
}

impl Target<'_> {
    /// A statement yielding the commit's sha in one column `sha` (no row: nothing found).
    fn sql(&self, repo_id: i64) -> (String, Vec<Value>) {
        match self {
            Target::Sha(sha) => ("SELECT ? AS sha".to_string(), vec![Value::from(*sha)]),
            Target::Ref(r) => repos::resolve_ref_sql(repo_id, r),
        }
    }
}

/// The latest statuses of `target` in one statement — the ref resolved, the page read and the
/// contexts counted by state together, so a combined status costs one round trip on
/// PostgreSQL as on SQLite. `None`: the ref names nothing.
pub fn latest(c: &mut dyn Conn, repo_id: i64, target: Target, offset: i64, limit: i64) -> Result<Option<Latest>, DbError> {
    let (target_sql, mut p) = target.sql(repo_id);
    let sql = format!(
        "WITH target AS ({target_sql}) \
         SELECT x.*, t.sha FROM target t LEFT JOIN (\
           SELECT {COLS}, {}, COUNT(*) OVER () AS n_all, \
             SUM(CASE WHEN s.state IN ('error', 'failure') THEN 1 ELSE 0 END) OVER () AS n_failing, \
             SUM(CASE WHEN s.state = 'pending' THEN 1 ELSE 0 END) OVER () AS n_pending \
           FROM status_latest l JOIN statuses s ON s.id = l.status_id LEFT JOIN accounts a ON a.id = s.creator_id \
           WHERE l.repo_id = ? AND l.sha = (SELECT sha FROM target) ORDER BY s.id DESC LIMIT ? OFFSET ?) x ON 1 = 1",
        accounts::COLS
    );
    p.extend([Value::from(repo_id), Value::from(limit), Value::from(offset)]);
    let rows = c.query(&sql, &p)?;
    let Some(first) = rows.first() else { return Ok(None) };
    let counts = COLS.split(',').count() + accounts::NCOLS;
    let sha = first.string(counts + 3);
    if first.opt_i64(0).is_none() {
        // No row on this page: none at all, or a page past the end (counted apart).
        let states = if offset == 0 { StateCounts::default() } else { count_states(c, repo_id, &sha)? };
        return Ok(Some(Latest { sha, page: Vec::new(), states }));
    }
    let states = StateCounts { total: first.i64(counts), failing: first.i64(counts + 1), pending: first.i64(counts + 2) };
    Ok(Some(Latest { sha, page: rows.iter().map(from_row).collect(), states }))
}

fn count_states(c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<StateCounts, DbError> {
    let r = c.query_opt(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN s.state IN ('error', 'failure') THEN 1 ELSE 0 END), 0), \
         COALESCE(SUM(CASE WHEN s.state = 'pending' THEN 1 ELSE 0 END), 0) \
         FROM status_latest l JOIN statuses s ON s.id = l.status_id WHERE l.repo_id = ? AND l.sha = ?",
        params![repo_id, sha],
    )?;
    Ok(r.map_or_else(StateCounts::default, |r| StateCounts { total: r.i64(0), failing: r.i64(1), pending: r.i64(2) }))
}
