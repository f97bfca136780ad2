//! Teams holding the security manager role of their organization: their members may see and
//! manage every security alert of the organization (and list them across an enterprise).
use super::accounts::Team;
use crate::{params, Conn, DbError, Row};

const TEAM_COLS: &str = "t.id, t.org_id, t.name, t.slug, t.description, t.privacy";

fn team_from_row(r: &Row) -> Team {
    Team { id: r.i64(0), org_id: r.i64(1), name: r.string(2), slug: r.string(3), description: r.opt_string(4), privacy: r.string(5) }
}

/// A team of the organization by slug (case-insensitive, as slugs are lowercase).
pub fn team_by_slug(c: &mut dyn Conn, org_id: i64, slug: &str) -> Result<Option<Team>, DbError> {
    let sql = format!("SELECT {TEAM_COLS} FROM teams t WHERE t.org_id = ? AND t.slug = ?");
    Ok(c.query_opt(&sql, params![org_id, slug.to_lowercase()])?.map(|r| team_from_row(&r)))
}

/// The organization's security manager teams, by name.
pub fn list(c: &mut dyn Conn, org_id: i64) -> Result<Vec<Team>, DbError> {
    let sql = format!(
        "SELECT {TEAM_COLS} FROM security_manager_teams s JOIN teams t ON t.id = s.team_id \
         WHERE s.org_id = ? ORDER BY t.slug"
    );
    Ok(c.query(&sql, params![org_id])?.iter().map(team_from_row).collect())
}

/// Grants the role (idempotent).
pub fn add(c: &mut dyn Conn, org_id: i64, team_id: i64, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO security_manager_teams (org_id, team_id, created_at) VALUES (?, ?, ?) \
         ON CONFLICT (org_id, team_id) DO NOTHING",
        params![org_id, team_id, now],
    )?;
    Ok(())
}

/// Revokes the role (idempotent).
pub fn remove(c: &mut dyn Conn, org_id: i64, team_id: i64) -> Result<(), DbError> {
    c.execute("DELETE FROM security_manager_teams WHERE org_id = ? AND team_id = ?", params![org_id, team_id])?;
    Ok(())
}

/// SQL condition: the user (bound once) is in a security manager team of organization `org`.
pub fn is_manager_sql(org: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM security_manager_teams s JOIN team_members tm ON tm.team_id = s.team_id \
         WHERE s.org_id = {org} AND tm.user_id = ?)"
    )
}

/// Is the user an owner or a security manager of the organization?
pub fn owner_or_manager(c: &mut dyn Conn, org_id: i64, user_id: i64) -> Result<bool, DbError> {
    let sql = format!(
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = ? AND m.user_id = ? AND m.role = 'owner') OR {}",
        is_manager_sql("?")
    );
    Ok(c.query_opt(&sql, params![org_id, user_id, org_id, user_id])?.is_some())
}

/// Organizations of the enterprise the user owns or is a security manager of.
pub fn managed_orgs(c: &mut dyn Conn, enterprise_id: i64, user_id: i64) -> Result<Vec<i64>, DbError> {
    let sql = format!(
        "SELECT e.org_id FROM enterprise_orgs e WHERE e.enterprise_id = ? AND (EXISTS (SELECT 1 FROM org_members m \
         WHERE m.org_id = e.org_id AND m.user_id = ? AND m.role = 'owner') OR {}) ORDER BY e.org_id",
        is_manager_sql("e.org_id")
    );
    Ok(c.query(&sql, params![enterprise_id, user_id, user_id])?.iter().map(|r| r.i64(0)).collect())
}
