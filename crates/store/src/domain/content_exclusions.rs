//! Assistant content exclusion rules of an organization (a JSON object, stored as text).
use crate::{params, Conn, DbError};

pub fn get(c: &mut dyn Conn, org_id: i64) -> Result<Option<String>, DbError> {
    Ok(c.query_opt("SELECT rules FROM content_exclusions WHERE org_id = ?", params![org_id])?.map(|r| r.string(0)))
}

/// Replaces the organization's rules.
pub fn set(c: &mut dyn Conn, org_id: i64, rules: &str, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO content_exclusions (org_id, rules, updated_at) VALUES (?, ?, ?) \
         ON CONFLICT (org_id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at",
        params![org_id, rules, now],
    )?;
    Ok(())
}
