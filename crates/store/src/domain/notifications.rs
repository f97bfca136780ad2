//! Notification threads: one per (user, repository, subject). New notifications reopen and
//! update a thread (replacing its reason); reads, done and subscriptions are per thread.
use crate::{params, Conn, DbError, Row, Value};

#[derive(Clone, Debug)]
pub struct Thread {
    pub id: i64,
    pub user_id: i64,
    pub repo_id: i64,
    pub subject_type: String,
    pub subject_title: String,
    pub subject_url: Option<String>,
    pub latest_comment_url: Option<String>,
    pub reason: String,
    pub unread: bool,
    pub done: bool,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_read_at: Option<i64>,
    /// `default`, `subscribed`, `ignored` or `unsubscribed`.
    pub sub_state: String,
    pub sub_created_at: Option<i64>,
}

const COLS: &str = "t.id, t.user_id, t.repo_id, t.subject_type, t.subject_title, t.subject_url, t.latest_comment_url, \
                    t.reason, t.unread, t.done, t.created_at, t.updated_at, t.last_read_at, t.sub_state, t.sub_created_at";

fn from_row(r: &Row) -> Thread {
    Thread {
        id: r.i64(0),
        user_id: r.i64(1),
        repo_id: r.i64(2),
        subject_type: r.string(3),
        subject_title: r.string(4),
        subject_url: r.opt_string(5),
        latest_comment_url: r.opt_string(6),
        reason: r.string(7),
        unread: r.bool(8),
        done: r.bool(9),
        created_at: r.i64(10),
        updated_at: r.i64(11),
        last_read_at: r.opt_i64(12),
        sub_state: r.string(13),
        sub_created_at: r.opt_i64(14),
    }
}

/// Every reason of document 3's table.
pub const REASONS: [&str; 15] = [
    "approval_requested",
    "assign",
    "author",
    "ci_activity",
    "comment",
    "invitation",
    "manual",
    "member_feature_requested",
    "mention",
    "review_requested",
    "security_advisory_credit",
    "security_alert",
    "state_change",
    "subscribed",
    "team_mention",
];

/// Reasons that notify (and resubscribe) even on a muted thread: the user was addressed
/// directly or took part.
pub const UNMUTING: [&str; 3] = ["mention", "team_mention", "comment"];

/// A user can see a repository: public, owned, or a member of its owning organization. The
/// same rule as repository access for user tokens (`authorize.rs`), in SQL over `r` and `uid`.
fn visible(user: &str) -> String {
    format!(
        "(r.private = ? OR r.owner_id = {user} OR EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = r.owner_id AND m.user_id = {user}))"
    )
}

pub struct Subject<'a> {
    pub kind: &'a str,
    pub title: &'a str,
    pub url: Option<&'a str>,
    pub latest_comment_url: Option<&'a str>,
}

/// Records that the user's notifications changed; `Last-Modified` moves strictly forward
/// (one second past the previous value when several changes share a second), so a client's
/// `If-Modified-Since` never hides a change.
pub fn touch(c: &mut dyn Conn, user_id: i64, now: i64) -> Result<i64, DbError> {
    c.query_i64(
        "INSERT INTO notification_users (user_id, modified_at) VALUES (?, ?) \
         ON CONFLICT (user_id) DO UPDATE SET modified_at = CASE WHEN notification_users.modified_at >= excluded.modified_at \
         THEN notification_users.modified_at + 1 ELSE excluded.modified_at END RETURNING modified_at",
        params![user_id, now],
    )
}

/// When the user's notifications last changed (`None`: never).
pub fn modified_at(c: &mut dyn Conn, user_id: i64) -> Result<Option<i64>, DbError> {
    Ok(c.query_opt("SELECT modified_at FROM notification_users WHERE user_id = ?", params![user_id])?.map(|r| r.i64(0)))
}

/// Delivers one notification: creates the thread or updates it (unread, reopened if done, the
/// reason replaced by this one). A muted thread (ignored or unsubscribed) only takes reasons
/// of [`UNMUTING`], which resubscribe it. Returns the thread id, `None` when muted.
pub fn deliver(c: &mut dyn Conn, user_id: i64, repo_id: i64, s: &Subject, reason: &str, now: i64) -> Result<Option<i64>, DbError> {
    let key = format!("{}\n{}", s.kind, s.url.unwrap_or(s.title));
    let existing = c.query_opt(
        "SELECT id, sub_state FROM notification_threads WHERE user_id = ? AND repo_id = ? AND subject_key = ?",
        params![user_id, repo_id, &key],
    )?;
    let id = match existing {
        Some(r) => {
            let (id, state) = (r.i64(0), r.string(1));
            let muted = state == "ignored" || state == "unsubscribed";
            let unmute = UNMUTING.contains(&reason);
            if muted && !unmute {
                return Ok(None);
            }
            let state = if muted { "default" } else { state.as_str() };
            c.execute(
                "UPDATE notification_threads SET subject_type = ?, subject_title = ?, subject_url = ?, latest_comment_url = ?, \
                 reason = ?, unread = ?, done = ?, updated_at = ?, sub_state = ? WHERE id = ?",
                params![s.kind, s.title, s.url, s.latest_comment_url, reason, true, false, now, state, id],
            )?;
            id
        }
        None => c.query_i64(
            "INSERT INTO notification_threads (user_id, repo_id, subject_key, subject_type, subject_title, subject_url, \
             latest_comment_url, reason, unread, done, created_at, updated_at, last_read_at, sub_state, sub_created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'default', NULL) RETURNING id",
            params![user_id, repo_id, &key, s.kind, s.title, s.url, s.latest_comment_url, reason, true, false, now, now],
        )?,
    };
    touch(c, user_id, now)?;
    Ok(Some(id))
}

pub struct Filter {
    pub all: bool,
    pub participating: bool,
    pub since: Option<i64>,
    pub before: Option<i64>,
}

/// The user's threads on repositories they can see, newest update first, one page, and the
/// total. Done threads are left out; unread only unless `all`; `participating` leaves out
/// `subscribed` threads.
pub fn list(c: &mut dyn Conn, user_id: i64, f: &Filter, offset: i64, limit: i64) -> Result<(Vec<Thread>, i64), DbError> {
    let mut cond = format!("t.user_id = ? AND t.done = ? AND {}", visible("t.user_id"));
    let mut args: Vec<Value> = vec![user_id.into(), false.into(), false.into()];
    if !f.all {
        cond.push_str(" AND t.unread = ?");
        args.push(true.into());
    }
    if f.participating {
        cond.push_str(" AND t.reason <> 'subscribed'");
    }
    if let Some(s) = f.since {
        cond.push_str(" AND t.updated_at >= ?");
        args.push(s.into());
    }
    if let Some(b) = f.before {
        cond.push_str(" AND t.updated_at < ?");
        args.push(b.into());
    }
    let from = format!("FROM notification_threads t JOIN repos r ON r.id = t.repo_id WHERE {cond}");
    let total = c.query_i64(&format!("SELECT COUNT(*) {from}"), &args)?;
    args.push(limit.into());
    args.push(offset.into());
    let rows = c.query(&format!("SELECT {COLS} {from} ORDER BY t.updated_at DESC, t.id DESC LIMIT ? OFFSET ?"), &args)?;
    Ok((rows.iter().map(from_row).collect(), total))
}

/// One of the user's threads on a repository they can see.
pub fn get(c: &mut dyn Conn, user_id: i64, id: i64) -> Result<Option<Thread>, DbError> {
    let sql = format!(
        "SELECT {COLS} FROM notification_threads t JOIN repos r ON r.id = t.repo_id WHERE t.id = ? AND t.user_id = ? AND {}",
        visible("t.user_id")
    );
    Ok(c.query_opt(&sql, params![id, user_id, false])?.map(|r| from_row(&r)))
}

/// Marks a thread read now.
pub fn mark_read(c: &mut dyn Conn, t: &Thread, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE notification_threads SET unread = ?, last_read_at = ? WHERE id = ?", params![false, now, t.id])?;
    touch(c, t.user_id, now)?;
    Ok(())
}

/// Marks a thread done: read, and out of the lists until new activity reopens it.
pub fn mark_done(c: &mut dyn Conn, t: &Thread, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE notification_threads SET unread = ?, done = ?, last_read_at = ? WHERE id = ?", params![false, true, now, t.id])?;
    touch(c, t.user_id, now)?;
    Ok(())
}

/// Sets a thread's subscription state (`subscribed`, `ignored`, `unsubscribed`).
pub fn set_subscription(c: &mut dyn Conn, t: &Thread, state: &str, now: i64) -> Result<(), DbError> {
    let created = (state != "unsubscribed").then_some(now);
    c.execute("UPDATE notification_threads SET sub_state = ?, sub_created_at = ? WHERE id = ?", params![state, created, t.id])?;
    touch(c, t.user_id, now)?;
    Ok(())
}

/// How many unread threads (not done) updated at or before `until` the user has.
pub fn count_unread_until(c: &mut dyn Conn, user_id: i64, until: i64) -> Result<i64, DbError> {
    c.query_i64(
        "SELECT COUNT(*) FROM notification_threads WHERE user_id = ? AND unread = ? AND updated_at <= ?",
        params![user_id, true, until],
    )
}

/// Marks up to `limit` unread threads updated at or before `until` read (with `last_read_at`
/// = `until`); returns how many changed. Threads updated later stay unread.
pub fn mark_all_read(c: &mut dyn Conn, user_id: i64, until: i64, limit: i64, now: i64) -> Result<i64, DbError> {
    let n = c.execute(
        "UPDATE notification_threads SET unread = ?, last_read_at = ? WHERE id IN (SELECT id FROM notification_threads \
         WHERE user_id = ? AND unread = ? AND updated_at <= ? ORDER BY id LIMIT ?)",
        params![false, until, user_id, true, until, limit],
    )? as i64;
    if n > 0 {
        touch(c, user_id, now)?;
    }
    Ok(n)
}

/// Starts watching a repository (idempotent).
pub fn watch(c: &mut dyn Conn, repo_id: i64, user_id: i64, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO watchers (repo_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT (repo_id, user_id) DO NOTHING",
        params![repo_id, user_id, now],
    )?;
    Ok(())
}

/// Watchers of a repository who can see it.
pub fn watchers(c: &mut dyn Conn, repo_id: i64) -> Result<Vec<i64>, DbError> {
    let sql = format!(
        "SELECT w.user_id FROM watchers w JOIN repos r ON r.id = w.repo_id WHERE w.repo_id = ? AND {} ORDER BY w.user_id",
        visible("w.user_id")
    );
    Ok(c.query(&sql, params![repo_id, false])?.iter().map(|r| r.i64(0)).collect())
}

/// Whether the user can see the repository (the visibility rule of threads).
pub fn can_see(c: &mut dyn Conn, repo_id: i64, user_id: i64) -> Result<bool, DbError> {
    let sql = format!("SELECT 1 FROM repos r WHERE r.id = ? AND {}", visible("?"));
    Ok(c.query_opt(&sql, params![repo_id, false, user_id, user_id])?.is_some())
}

/// Remembers who pushed a commit (the `author` of its thread).
pub fn set_pusher(c: &mut dyn Conn, repo_id: i64, sha: &str, user_id: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO notification_pushers (repo_id, sha, user_id) VALUES (?, ?, ?) \
         ON CONFLICT (repo_id, sha) DO UPDATE SET user_id = excluded.user_id",
        params![repo_id, sha, user_id],
    )?;
    Ok(())
}

pub fn pusher(c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<Option<i64>, DbError> {
    Ok(c.query_opt("SELECT user_id FROM notification_pushers WHERE repo_id = ? AND sha = ?", params![repo_id, sha])?.map(|r| r.i64(0)))
}
