//! Event feeds (document 3): timelines read straight from the activity outbox. Every query is
//! one bounded range of a partial index (`0004_feeds`): the newest [`TIMELINE_MAX`] feed events
//! of one repository, actor, organization or of the public, newest first; the 30-day window is
//! applied by the caller to those rows, so no query ever reads more than 300 records however
//! large the table grows.
use super::accounts::{self, Account};
use super::activity::{self, Activity};
use crate::{params, Conn, DbError, Row};

/// A timeline holds at most this many events (document 1, limits).
pub const TIMELINE_MAX: i64 = 300;

/// The activity kinds that appear in feeds; other records (e.g. `StatusEvent`) do not. The
/// partial indexes of `0004_feeds` repeat this list verbatim.
pub const FEED_KINDS: [&str; 5] = ["WatchEvent", "PushEvent", "CreateEvent", "PublicEvent", "DeleteEvent"];
const KINDS_SQL: &str = "kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent')";

/// Which timeline.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// Public events of public repositories (`/events`).
    Public,
    /// Every event of one repository.
    Repo(i64),
    /// Events one user performed; `public_only` leaves out private ones.
    Actor { id: i64, public_only: bool },
    /// Events of an organization's repositories.
    Org { id: i64, public_only: bool },
}

/// A feed event with what its shape needs.
#[derive(Clone, Debug)]
pub struct FeedEvent {
    pub activity: Activity,
    pub actor: Option<Account>,
    /// `(id, "owner/name")` of the repository as it is named now.
    pub repo: Option<(i64, String)>,
    /// The repository's owner (what a token's reach is decided on).
    pub repo_owner_id: Option<i64>,
    pub org: Option<Account>,
}

fn cols(p: &str) -> String {
    accounts::COLS.split(", ").map(|c| c.replacen("a.", &format!("{p}."), 1)).collect::<Vec<_>>().join(", ")
}

/// The newest [`TIMELINE_MAX`] feed events of `scope`, newest first.
pub fn timeline(c: &mut dyn Conn, scope: Scope) -> Result<Vec<FeedEvent>, DbError> {
    let (filter, id) = match scope {
        Scope::Public => ("public = TRUE AND ".to_string(), None),
        Scope::Repo(id) => ("repo_id = ? AND ".to_string(), Some(id)),
        Scope::Actor { id, public_only } => (format!("actor_id = ? AND {}", if public_only { "public = TRUE AND " } else { "" }), Some(id)),
        Scope::Org { id, public_only } => (format!("org_id = ? AND {}", if public_only { "public = TRUE AND " } else { "" }), Some(id)),
    };
    let sql = format!(
        "SELECT {}, {}, r.name, ro.login, r.owner_id, {} FROM \
         (SELECT id, kind, actor_id, repo_id, org_id, public, payload, created_at FROM activity \
          WHERE {filter}{KINDS_SQL} ORDER BY id DESC LIMIT {TIMELINE_MAX}) v \
         LEFT JOIN accounts ac ON ac.id = v.actor_id \
         LEFT JOIN repos r ON r.id = v.repo_id \
         LEFT JOIN accounts ro ON ro.id = r.owner_id \
         LEFT JOIN accounts og ON og.id = v.org_id \
         ORDER BY v.id DESC",
        activity::COLS,
        cols("ac"),
        cols("og"),
    );
    let rows = match id {
        Some(id) => c.query(&sql, params![id])?,
        None => c.query(&sql, &[])?,
    };
    Ok(rows.iter().map(from_row).collect())
}

fn from_row(r: &Row) -> FeedEvent {
    let n = accounts::NCOLS;
    let activity = activity::from_row(r, 0);
    let actor = accounts::opt_from_row(r, 8);
    let repo = match (activity.repo_id, r.opt_str(8 + n), r.opt_str(9 + n)) {
        (Some(id), Some(name), Some(owner)) => Some((id, format!("{owner}/{name}"))),
        _ => None,
    };
    let repo_owner_id = r.opt_i64(10 + n);
    let org = accounts::opt_from_row(r, 11 + n);
    FeedEvent { activity, actor, repo, repo_owner_id, org }
}

/// Stars a repository; `false` when the user had already starred it.
pub fn star(c: &mut dyn Conn, repo_id: i64, user_id: i64, now: i64) -> Result<bool, DbError> {
    let n = c.execute(
        "INSERT INTO stars (repo_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT (repo_id, user_id) DO NOTHING",
        params![repo_id, user_id, now],
    )?;
    Ok(n > 0)
}

/// Removes a user's star; `false` when there was none.
pub fn unstar(c: &mut dyn Conn, repo_id: i64, user_id: i64) -> Result<bool, DbError> {
    Ok(c.execute("DELETE FROM stars WHERE repo_id = ? AND user_id = ?", params![repo_id, user_id])? > 0)
}
