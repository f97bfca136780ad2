//! Source imports: one per repository, its commit authors and large files, and writing the
//! imported refs and commits into the repository.
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct Import {
    pub repo_id: i64,
    pub vcs: Option<String>,
    pub vcs_url: String,
    pub tfvc_project: Option<String>,
    pub credentials_enc: Option<String>,
    /// `opt_in`, `opt_out` or `undecided`.
    pub use_lfs: String,
    pub status: String,
    pub failed_step: Option<String>,
    pub error_message: Option<String>,
    pub commit_count: Option<i64>,
    pub import_percent: Option<i64>,
    pub push_percent: Option<i64>,
    pub authors_count: i64,
    pub large_files_size: i64,
    pub large_files_count: i64,
    pub step_done: bool,
    pub due_at: i64,
    pub workdir: String,
    pub actor_id: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLS: &str = "repo_id, vcs, vcs_url, tfvc_project, credentials_enc, use_lfs, status, failed_step, error_message, \
    commit_count, import_percent, push_percent, authors_count, large_files_size, large_files_count, step_done, due_at, \
    workdir, actor_id, created_at, updated_at";

fn from_row(r: &Row) -> Import {
    Import {
        repo_id: r.i64(0),
        vcs: r.opt_string(1),
        vcs_url: r.string(2),
        tfvc_project: r.opt_string(3),
        credentials_enc: r.opt_string(4),
        use_lfs: r.string(5),
        status: r.string(6),
        failed_step: r.opt_string(7),
        error_message: r.opt_string(8),
        commit_count: r.opt_i64(9),
        import_percent: r.opt_i64(10),
        push_percent: r.opt_i64(11),
        authors_count: r.i64(12),
        large_files_size: r.i64(13),
        large_files_count: r.i64(14),
        step_done: r.bool(15),
        due_at: r.i64(16),
        workdir: r.string(17),
        actor_id: r.opt_i64(18),
        created_at: r.i64(19),
        updated_at: r.i64(20),
    }
}

pub fn get(c: &mut dyn Conn, repo_id: i64) -> Result<Option<Import>, DbError> {
    let sql = format!("SELECT {COLS} FROM imports WHERE repo_id = ?");
    Ok(c.query_opt(&sql, params![repo_id])?.map(|r| from_row(&r)))
}

/// The import as it is now, under its row lock ([`crate::lock::rows`]).
pub fn locked(c: &mut dyn Conn, repo_id: i64) -> Result<Option<Import>, DbError> {
    crate::lock::rows(c, "imports", "repo_id = ?", params![repo_id])?;
    get(c, repo_id)
}

/// Inserts a new import (the caller checked there is none).
pub fn create(c: &mut dyn Conn, i: &Import) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO imports (repo_id, vcs, vcs_url, tfvc_project, credentials_enc, use_lfs, status, authors_count, \
         large_files_size, large_files_count, step_done, due_at, workdir, actor_id, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, ?, ?, ?, ?)",
        params![
            i.repo_id,
            i.vcs.as_deref(),
            &i.vcs_url,
            i.tfvc_project.as_deref(),
            i.credentials_enc.as_deref(),
            &i.use_lfs,
            &i.status,
            false,
            i.due_at,
            &i.workdir,
            i.actor_id,
            i.created_at,
            i.updated_at
        ],
    )?;
    Ok(())
}

/// Deletes an import with its authors and large files; true when there was one.
pub fn delete(c: &mut dyn Conn, repo_id: i64) -> Result<bool, DbError> {
    c.execute("DELETE FROM import_authors WHERE repo_id = ?", params![repo_id])?;
    c.execute("DELETE FROM import_large_files WHERE repo_id = ?", params![repo_id])?;
    Ok(c.execute("DELETE FROM imports WHERE repo_id = ?", params![repo_id])? > 0)
}

/// Changes the source fields the caller may update (vcs, project, credentials).
pub fn set_source(c: &mut dyn Conn, i: &Import, now: i64) -> Result<(), DbError> {
    c.execute(
        "UPDATE imports SET vcs = ?, tfvc_project = ?, credentials_enc = ?, updated_at = ? WHERE repo_id = ?",
        params![i.vcs.as_deref(), i.tfvc_project.as_deref(), i.credentials_enc.as_deref(), now, i.repo_id],
    )?;
    Ok(())
}

pub fn set_lfs(c: &mut dyn Conn, repo_id: i64, use_lfs: &str, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE imports SET use_lfs = ?, updated_at = ? WHERE repo_id = ?", params![use_lfs, now, repo_id])?;
    Ok(())
}

/// Starts the import over as a new attempt in `workdir`: progress, authors and large files
/// are cleared.
pub fn restart(c: &mut dyn Conn, repo_id: i64, status: &str, workdir: &str, due_at: i64, now: i64) -> Result<(), DbError> {
    c.execute("DELETE FROM import_authors WHERE repo_id = ?", params![repo_id])?;
    c.execute("DELETE FROM import_large_files WHERE repo_id = ?", params![repo_id])?;
    c.execute(
        "UPDATE imports SET status = ?, failed_step = NULL, error_message = NULL, commit_count = NULL, import_percent = NULL, \
         push_percent = NULL, authors_count = 0, large_files_size = 0, large_files_count = 0, step_done = ?, due_at = ?, \
         lease_until = NULL, workdir = ?, updated_at = ? WHERE repo_id = ?",
        params![status, false, due_at, workdir, now, repo_id],
    )?;
    Ok(())
}

/// Writes the worker's columns of an attempt; false when the attempt is no longer current
/// (cancelled or restarted meanwhile).
pub fn save_progress(c: &mut dyn Conn, i: &Import, lease_until: Option<i64>, now: i64) -> Result<bool, DbError> {
    Ok(c.execute(
        "UPDATE imports SET vcs = ?, status = ?, failed_step = ?, error_message = ?, commit_count = ?, import_percent = ?, \
         push_percent = ?, authors_count = ?, large_files_size = ?, large_files_count = ?, step_done = ?, due_at = ?, \
         lease_until = ?, updated_at = ? WHERE repo_id = ? AND workdir = ?",
        params![
            i.vcs.as_deref(),
            &i.status,
            i.failed_step.as_deref(),
            i.error_message.as_deref(),
            i.commit_count,
            i.import_percent,
            i.push_percent,
            i.authors_count,
            i.large_files_size,
            i.large_files_count,
            i.step_done,
            i.due_at,
            lease_until,
            now,
            i.repo_id,
            &i.workdir
        ],
    )? > 0)
}

/// Imports with something to do: work not done yet, or done and due. `statuses` are the
/// statuses a worker advances.
pub fn runnable(c: &mut dyn Conn, statuses: &[&str], now: i64, wall: i64) -> Result<Vec<Import>, DbError> {
    let marks = vec!["?"; statuses.len()].join(", ");
    let sql = format!(
        "SELECT {COLS} FROM imports WHERE status IN ({marks}) AND (lease_until IS NULL OR lease_until < ?) \
         AND (step_done = ? OR due_at <= ?) ORDER BY updated_at, repo_id LIMIT 16"
    );
    let mut p: Vec<crate::Value> = statuses.iter().map(|s| crate::Value::from(*s)).collect();
    p.extend([crate::Value::from(wall), crate::Value::from(false), crate::Value::from(now)]);
    Ok(c.query(&sql, &p)?.iter().map(from_row).collect())
}

/// The earliest `due_at` of an import whose work is done (the worker sleeps until then).
pub fn next_due(c: &mut dyn Conn, statuses: &[&str]) -> Result<Option<i64>, DbError> {
    let marks = vec!["?"; statuses.len()].join(", ");
    let sql = format!("SELECT MIN(due_at) FROM imports WHERE status IN ({marks}) AND step_done = ?");
    let mut p: Vec<crate::Value> = statuses.iter().map(|s| crate::Value::from(*s)).collect();
    p.push(crate::Value::from(true));
    Ok(c.query_one(&sql, &p)?.opt_i64(0))
}

/// Takes an attempt for this node until `lease_until` (wall-clock seconds); false when another
/// node holds it or the attempt changed.
pub fn claim(c: &mut dyn Conn, repo_id: i64, workdir: &str, wall: i64, lease_until: i64) -> Result<bool, DbError> {
    Ok(c.execute(
        "UPDATE imports SET lease_until = ? WHERE repo_id = ? AND workdir = ? AND (lease_until IS NULL OR lease_until < ?)",
        params![lease_until, repo_id, workdir, wall],
    )? > 0)
}

/// Extends a lease held on an attempt.
pub fn renew(c: &mut dyn Conn, repo_id: i64, workdir: &str, lease_until: i64) -> Result<(), DbError> {
    c.execute("UPDATE imports SET lease_until = ? WHERE repo_id = ? AND workdir = ?", params![lease_until, repo_id, workdir])?;
    Ok(())
}

/// Does the repository have workflow automation (at least one workflow)?
pub fn has_workflows(c: &mut dyn Conn, repo_id: i64) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM workflows WHERE repo_id = ? LIMIT 1", params![repo_id])?.is_some())
}

// ---------------------------------------------------------------------------------------------
// Authors.

#[derive(Clone, Debug)]
pub struct Author {
    pub id: i64,
    pub remote_id: String,
    pub remote_name: String,
    pub email: String,
    pub name: String,
}

const AUTHOR_COLS: &str = "id, remote_id, remote_name, email, name";

fn author(r: &Row) -> Author {
    Author { id: r.i64(0), remote_id: r.string(1), remote_name: r.string(2), email: r.string(3), name: r.string(4) }
}

/// Adds authors found in the history (known ones keep their mapping); returns the count.
pub fn add_authors(c: &mut dyn Conn, repo_id: i64, found: &[(String, String)]) -> Result<i64, DbError> {
    for (email, name) in found {
        c.execute(
            "INSERT INTO import_authors (repo_id, remote_id, remote_name, email, name) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (repo_id, remote_id) DO NOTHING",
            params![repo_id, email, name, email, name],
        )?;
    }
    c.query_i64("SELECT COUNT(*) FROM import_authors WHERE repo_id = ?", params![repo_id])
}

/// Authors with an id above `since`, by id.
pub fn authors(c: &mut dyn Conn, repo_id: i64, since: i64) -> Result<Vec<Author>, DbError> {
    let sql = format!("SELECT {AUTHOR_COLS} FROM import_authors WHERE repo_id = ? AND id > ? ORDER BY id");
    Ok(c.query(&sql, params![repo_id, since])?.iter().map(author).collect())
}

/// Maps an author to a new identity; the author after the change, or none when unknown.
pub fn map_author(c: &mut dyn Conn, repo_id: i64, id: i64, email: Option<&str>, name: Option<&str>) -> Result<Option<Author>, DbError> {
    c.execute(
        "UPDATE import_authors SET email = COALESCE(?, email), name = COALESCE(?, name) WHERE repo_id = ? AND id = ?",
        params![email, name, repo_id, id],
    )?;
    let sql = format!("SELECT {AUTHOR_COLS} FROM import_authors WHERE repo_id = ? AND id = ?");
    Ok(c.query_opt(&sql, params![repo_id, id])?.map(|r| author(&r)))
}

// ---------------------------------------------------------------------------------------------
// Large files.

#[derive(Clone, Debug)]
pub struct LargeFile {
    pub ref_name: String,
    pub path: String,
    pub oid: String,
    pub size: i64,
}

pub fn set_large_files(c: &mut dyn Conn, repo_id: i64, files: &[LargeFile]) -> Result<(), DbError> {
    c.execute("DELETE FROM import_large_files WHERE repo_id = ?", params![repo_id])?;
    for f in files {
        c.execute(
            "INSERT INTO import_large_files (repo_id, oid, path, ref_name, size) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (repo_id, oid, path) DO NOTHING",
            params![repo_id, &f.oid, &f.path, &f.ref_name, f.size],
        )?;
    }
    Ok(())
}

pub fn large_files(c: &mut dyn Conn, repo_id: i64) -> Result<Vec<LargeFile>, DbError> {
    let rows =
        c.query("SELECT ref_name, path, oid, size FROM import_large_files WHERE repo_id = ? ORDER BY path, oid", params![repo_id])?;
    Ok(rows.iter().map(|r| LargeFile { ref_name: r.string(0), path: r.string(1), oid: r.string(2), size: r.i64(3) }).collect())
}

// ---------------------------------------------------------------------------------------------
// The repository's content.

/// Records commits as known to the repository (statuses may then be created on them).
pub fn add_commits(c: &mut dyn Conn, repo_id: i64, shas: &[String], now: i64) -> Result<(), DbError> {
    for sha in shas {
        c.execute(
            "INSERT INTO commits (repo_id, sha, created_at) VALUES (?, ?, ?) ON CONFLICT (repo_id, sha) DO NOTHING",
            params![repo_id, sha, now],
        )?;
    }
    Ok(())
}

/// Makes the repository's branches and tags exactly `refs` (full names and commit shas), and
/// its default branch `default_branch` when given.
pub fn replace_refs(
    c: &mut dyn Conn,
    repo_id: i64,
    refs: &[(String, String)],
    default_branch: Option<&str>,
    now: i64,
) -> Result<(), DbError> {
    let existing: Vec<String> = c
        .query("SELECT name FROM refs WHERE repo_id = ? AND (name LIKE 'refs/heads/%' OR name LIKE 'refs/tags/%')", params![repo_id])?
        .iter()
        .map(|r| r.string(0))
        .collect();
    for name in existing.iter().filter(|n| !refs.iter().any(|(r, _)| r == *n)) {
        c.execute("DELETE FROM refs WHERE repo_id = ? AND name = ?", params![repo_id, name])?;
    }
    for (name, sha) in refs {
        super::repos::set_ref(c, repo_id, name, sha, now)?;
    }
    if let Some(b) = default_branch {
        c.execute("UPDATE repos SET default_branch = ? WHERE id = ?", params![b, repo_id])?;
    }
    Ok(())
}
