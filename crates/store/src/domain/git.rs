//! Reads of a repository's refs and commits (branches, tags, the commits they point at).
use crate::{params, Conn, DbError};

/// A ref: its full name (`refs/heads/main`) and the sha it points at.
#[derive(Clone, Debug)]
pub struct Ref {
    pub name: String,
    pub sha: String,
}

/// The refs whose full name starts with `prefix`, by name (a plain text prefix, not a pattern).
pub fn refs_with_prefix(c: &mut dyn Conn, repo_id: i64, prefix: &str) -> Result<Vec<Ref>, DbError> {
    let rows = c.query("SELECT name, sha FROM refs WHERE repo_id = ?", params![repo_id])?;
    let mut out: Vec<Ref> =
        rows.iter().filter(|r| r.str(0).starts_with(prefix)).map(|r| Ref { name: r.string(0), sha: r.string(1) }).collect();
    // Sorted here, byte-wise: the backends' collations differ.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The ref of exactly this full name.
pub fn get_ref(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<Option<Ref>, DbError> {
    Ok(c.query_opt("SELECT name, sha FROM refs WHERE repo_id = ? AND name = ?", params![repo_id, name])?
        .map(|r| Ref { name: r.string(0), sha: r.string(1) }))
}

/// When the repository first saw a commit (`None`: it never did).
pub fn commit_seen_at(c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<Option<i64>, DbError> {
    Ok(c.query_opt("SELECT created_at FROM commits WHERE repo_id = ? AND sha = ?", params![repo_id, sha])?.map(|r| r.i64(0)))
}

/// What the platform knows of a commit beyond its sha: the head commit a workflow run recorded
/// for it (JSON `{message, timestamp, author, committer}`) and that run's actor.
pub fn run_commit(c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<Option<(serde_json::Value, i64)>, DbError> {
    let r = c.query_opt(
        "SELECT head_commit, actor_id FROM workflow_runs WHERE repo_id = ? AND head_sha = ? ORDER BY id LIMIT 1",
        params![repo_id, sha],
    )?;
    Ok(r.map(|r| (serde_json::from_str(r.str(0)).unwrap_or_default(), r.i64(1))))
}

/// Resolves a ref as the commit endpoint takes it: what [`repos::resolve_ref`] resolves, or an
/// abbreviated sha (at least 7 hex digits) of exactly one commit the repository has seen.
pub fn resolve_commit(c: &mut dyn Conn, repo_id: i64, r: &str) -> Result<Option<String>, DbError> {
    if let Some(sha) = super::repos::resolve_ref(c, repo_id, r)? {
        return Ok(Some(sha));
    }
    if !(7..40).contains(&r.len()) || !r.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    // Hex digits hold no LIKE wildcards.
    let rows =
        c.query("SELECT sha FROM commits WHERE repo_id = ? AND sha LIKE ? LIMIT 2", params![repo_id, format!("{}%", r.to_lowercase())])?;
    Ok(if rows.len() == 1 { Some(rows[0].string(0)) } else { None })
}
