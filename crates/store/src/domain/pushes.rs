//! The store's side of git hosting: the namespace of this database's repositories on disk,
//! intents of ref changes (written before git moves refs, removed with the record of what moved),
//! and the record itself: refs and the commits they brought, with what each commit says.
use serde::{Deserialize, Serialize};

use crate::{params, Conn, DbError, Value};

/// This database's namespace under the data directory: `fresh` if none was drawn yet (the first
/// node to start draws it; every later one reads it).
pub fn storage_namespace(c: &mut dyn Conn, fresh: &str) -> Result<String, DbError> {
    c.execute("INSERT INTO git_storage (id, namespace) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", params![fresh])?;
    Ok(c.query_opt("SELECT namespace FROM git_storage WHERE id = 1", &[])?.map(|r| r.string(0)).unwrap_or_else(|| fresh.to_string()))
}

/// One ref's change: from `old` to `new`, full object names (40 zeros for none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefChange {
    pub name: String,
    pub old: String,
    pub new: String,
}

/// Ref changes about to happen in a repository.
#[derive(Clone, Debug)]
pub struct Intent {
    pub id: i64,
    pub repo_id: i64,
    pub pusher_id: Option<i64>,
    /// What asked for the change (`push`, `control`, `create`, `import`).
    pub source: String,
    pub updates: Vec<RefChange>,
    pub created_at: i64,
}

/// Records an intent; its id.
pub fn record_intent(
    c: &mut dyn Conn,
    repo_id: i64,
    pusher_id: Option<i64>,
    source: &str,
    updates: &[RefChange],
    now: i64,
) -> Result<i64, DbError> {
    let json = serde_json::to_string(updates).map_err(|e| DbError::other(e.to_string()))?;
    c.query_i64(
        "INSERT INTO push_intents (repo_id, pusher_id, source, updates, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
        params![repo_id, pusher_id, source, json, now],
    )
}

const INTENT: &str = "SELECT id, repo_id, pusher_id, source, updates, created_at FROM push_intents";

/// The intents left of a repository (every repository's with `None`), oldest first.
pub fn intents(c: &mut dyn Conn, repo_id: Option<i64>) -> Result<Vec<Intent>, DbError> {
    let rows = match repo_id {
        Some(id) => c.query(&format!("{INTENT} WHERE repo_id = ? ORDER BY id"), params![id])?,
        None => c.query(&format!("{INTENT} ORDER BY id"), &[])?,
    };
    Ok(rows
        .iter()
        .map(|r| Intent {
            id: r.i64(0),
            repo_id: r.i64(1),
            pusher_id: r.opt_i64(2),
            source: r.string(3),
            updates: serde_json::from_str(r.str(4)).unwrap_or_default(),
            created_at: r.i64(5),
        })
        .collect())
}

/// Removes an intent; false when it was gone already (recorded by someone else).
pub fn remove_intent(c: &mut dyn Conn, id: i64) -> Result<bool, DbError> {
    Ok(c.execute("DELETE FROM push_intents WHERE id = ?", params![id])? > 0)
}

/// A commit as git records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitRecord {
    pub sha: String,
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author: Signature,
    pub committer: Signature,
}

/// A commit's author or committer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub name: String,
    pub email: String,
    /// Seconds since the epoch.
    pub date: i64,
    /// Minutes east of UTC.
    pub offset: i64,
}

/// Records commits the repository now has (filling in what rows from before git hosting lack).
pub fn record_commits(c: &mut dyn Conn, repo_id: i64, commits: &[CommitRecord], now: i64) -> Result<(), DbError> {
    for k in commits {
        let (a, m) = (&k.author, &k.committer);
        let p: Vec<Value> = vec![
            repo_id.into(),
            k.sha.as_str().into(),
            now.into(),
            k.tree.as_str().into(),
            k.parents.join(" ").into(),
            k.message.as_str().into(),
            a.name.as_str().into(),
            a.email.as_str().into(),
            a.date.into(),
            a.offset.into(),
            m.name.as_str().into(),
            m.email.as_str().into(),
            m.date.into(),
            m.offset.into(),
        ];
        c.execute(
            "INSERT INTO commits (repo_id, sha, created_at, tree, parents, message, author_name, author_email, author_date, \
             author_offset, committer_name, committer_email, committer_date, committer_offset) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (repo_id, sha) DO UPDATE SET tree = excluded.tree, parents = excluded.parents, message = excluded.message, \
             author_name = excluded.author_name, author_email = excluded.author_email, author_date = excluded.author_date, \
             author_offset = excluded.author_offset, committer_name = excluded.committer_name, \
             committer_email = excluded.committer_email, committer_date = excluded.committer_date, \
             committer_offset = excluded.committer_offset WHERE commits.tree IS NULL",
            &p,
        )?;
    }
    Ok(())
}

/// Sets (`Some(sha)`) or deletes (`None`) refs, as git now has them; the repository was pushed to.
pub fn apply_refs(c: &mut dyn Conn, repo_id: i64, refs: &[(String, Option<String>)], now: i64) -> Result<(), DbError> {
    for (name, sha) in refs {
        match sha {
            Some(sha) => super::repos::point_ref(c, repo_id, name, sha, now)?,
            None => {
                c.execute("DELETE FROM refs WHERE repo_id = ? AND name = ?", params![repo_id, name])?;
            }
        }
    }
    if !refs.is_empty() {
        c.execute("UPDATE repos SET pushed_at = ?, updated_at = ? WHERE id = ?", params![now, now, repo_id])?;
    }
    Ok(())
}

/// What the store knows of a commit: its record, when it has one.
pub fn commit(c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<Option<CommitRecord>, DbError> {
    let r = c.query_opt(
        "SELECT sha, tree, parents, message, author_name, author_email, author_date, author_offset, committer_name, \
         committer_email, committer_date, committer_offset FROM commits WHERE repo_id = ? AND sha = ? AND tree IS NOT NULL",
        params![repo_id, sha],
    )?;
    Ok(r.map(|r| CommitRecord {
        sha: r.string(0),
        tree: r.string(1),
        parents: r.str(2).split_whitespace().map(str::to_string).collect(),
        message: r.opt_string(3).unwrap_or_default(),
        author: Signature { name: r.string(4), email: r.string(5), date: r.i64(6), offset: r.i64(7) },
        committer: Signature { name: r.string(8), email: r.string(9), date: r.i64(10), offset: r.i64(11) },
    }))
}
