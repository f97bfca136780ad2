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

/// Statuses of `target`, newest first, one page, and the total. `None`: the ref names nothing.
pub fn list(c: &mut dyn Conn, repo_id: i64, target: Target, offset: i64, limit: i64) -> Result<Option<(Vec<Status>, i64)>, DbError> {
    let Some((sha, page)) = page(c, repo_id, &target, Statuses::All, offset, limit)? else { return Ok(None) };
    let total = if whole(&page, offset, limit) {
        page.len() as i64
    } else {
        c.query_i64("SELECT COUNT(*) FROM statuses WHERE repo_id = ? AND sha = ?", params![repo_id, sha])?
    };
    Ok(Some((page, total)))
}

/// Which statuses of a commit a [`page`] reads.
enum Statuses {
    All,
    /// The newest of each context.
    Latest,
}

/// One page of `target`'s statuses, newest first, and the commit's sha: the ref resolved in the
/// same statement, so a page costs one round trip on PostgreSQL as on SQLite (an empty page
/// resolves the ref again, alone, to tell a commit without statuses from a ref naming nothing:
/// `None`). The statement is kept plain, without window counts or a join to the target: on
/// PostgreSQL, setting up each plan node costs more than running it on a page of statuses.
fn page(
    c: &mut dyn Conn,
    repo_id: i64,
    target: &Target,
    which: Statuses,
    offset: i64,
    limit: i64,
) -> Result<Option<(String, Vec<Status>)>, DbError> {
    let (target_sql, target_params) = target.sql(repo_id);
    let (from, commit) = match which {
        Statuses::All => ("statuses s", "s.repo_id = ? AND s.sha"),
        Statuses::Latest => ("status_latest l JOIN statuses s ON s.id = l.status_id", "l.repo_id = ? AND l.sha"),
    };
    let sql = format!(
        "SELECT {COLS}, {} FROM {from} LEFT JOIN accounts a ON a.id = s.creator_id \
         WHERE {commit} = ({target_sql}) ORDER BY s.id DESC LIMIT ? OFFSET ?",
        accounts::COLS
    );
    let mut p = vec![Value::from(repo_id)];
    p.extend(target_params.iter().cloned());
    p.extend([Value::from(limit), Value::from(offset)]);
    let rows = c.query(&sql, &p)?;
    if let Some(first) = rows.first() {
        return Ok(Some((first.string(2), rows.iter().map(from_row).collect())));
    }
    Ok(c.query_opt(&target_sql, &target_params)?.map(|r| (r.string(0), Vec::new())))
}

/// Is `page` every status there is (so they are counted from it, without a statement)?
fn whole(page: &[Status], offset: i64, limit: i64) -> bool {
    offset == 0 && (page.len() as i64) < limit
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

/// The latest statuses of `target` (see [`page`]) and their states, counted from the page when
/// it holds them all. `None`: the ref names nothing.
pub fn latest(c: &mut dyn Conn, repo_id: i64, target: Target, offset: i64, limit: i64) -> Result<Option<Latest>, DbError> {
    let Some((sha, page)) = page(c, repo_id, &target, Statuses::Latest, offset, limit)? else { return Ok(None) };
    let states =
        if whole(&page, offset, limit) { StateCounts::of(page.iter().map(|s| s.state.as_str())) } else { count_states(c, repo_id, &sha)? };
    Ok(Some(Latest { sha, page, states }))
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
