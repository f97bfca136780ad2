//! Development-environment secrets of a repository: names and encrypted values.
use crate::{params, Conn, DbError};

#[derive(Clone, Debug)]
pub struct Secret {
    pub name: String,
    pub created_at: i64,
    pub updated_at: i64,
}

pub fn get(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<Option<Secret>, DbError> {
    Ok(c.query_opt("SELECT name, created_at, updated_at FROM devenv_secrets WHERE repo_id = ? AND name = ?", params![repo_id, name])?
        .map(|r| Secret { name: r.string(0), created_at: r.i64(1), updated_at: r.i64(2) }))
}

/// One page of a repository's secrets by name, with the total.
pub fn list(c: &mut dyn Conn, repo_id: i64, offset: i64, limit: i64) -> Result<(Vec<Secret>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM devenv_secrets WHERE repo_id = ?", params![repo_id])?;
    let rows = c.query(
        "SELECT name, created_at, updated_at FROM devenv_secrets WHERE repo_id = ? ORDER BY name LIMIT ? OFFSET ?",
        params![repo_id, limit, offset],
    )?;
    Ok((rows.iter().map(|r| Secret { name: r.string(0), created_at: r.i64(1), updated_at: r.i64(2) }).collect(), total))
}

/// Creates or replaces a secret; true when it was created.
pub fn put(c: &mut dyn Conn, repo_id: i64, name: &str, value_enc: &str, now: i64) -> Result<bool, DbError> {
    let existed = get(c, repo_id, name)?.is_some();
    c.execute(
        "INSERT INTO devenv_secrets (repo_id, name, value_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT (repo_id, name) DO UPDATE SET value_enc = excluded.value_enc, updated_at = excluded.updated_at",
        params![repo_id, name, value_enc, now, now],
    )?;
    Ok(!existed)
}

/// The encrypted value (control-plane checks only).
pub fn value_enc(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<Option<String>, DbError> {
    Ok(c.query_opt("SELECT value_enc FROM devenv_secrets WHERE repo_id = ? AND name = ?", params![repo_id, name])?.map(|r| r.string(0)))
}

/// Deletes a secret; true when it existed.
pub fn delete(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<bool, DbError> {
    Ok(c.execute("DELETE FROM devenv_secrets WHERE repo_id = ? AND name = ?", params![repo_id, name])? > 0)
}
