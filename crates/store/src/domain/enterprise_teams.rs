//! Enterprise teams and their memberships, and enterprise membership roles.
use crate::domain::accounts::{self, Account};
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct EnterpriseTeam {
    pub id: i64,
    pub enterprise_id: i64,
    pub name: String,
    pub slug: String,
    pub description: Option<String>,
    pub group_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLS: &str = "t.id, t.enterprise_id, t.name, t.slug, t.description, t.group_id, t.created_at, t.updated_at";

fn from_row(r: &Row) -> EnterpriseTeam {
    EnterpriseTeam {
        id: r.i64(0),
        enterprise_id: r.i64(1),
        name: r.string(2),
        slug: r.string(3),
        description: r.opt_string(4),
        group_id: r.opt_string(5),
        created_at: r.i64(6),
        updated_at: r.i64(7),
    }
}

/// The slug of an enterprise team: `ent:` and the slugified name.
pub fn slug_of(name: &str) -> String {
    format!("ent:{}", accounts::slugify(name))
}

/// Creates a team; a taken slug in the enterprise is a `Unique` error.
pub fn create(c: &mut dyn Conn, enterprise_id: i64, name: &str, description: Option<&str>, now: i64) -> Result<EnterpriseTeam, DbError> {
    let slug = slug_of(name);
    let id = c.query_i64(
        "INSERT INTO enterprise_teams (enterprise_id, name, slug, description, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        params![enterprise_id, name, &slug, description, now, now],
    )?;
    Ok(EnterpriseTeam {
        id,
        enterprise_id,
        name: name.into(),
        slug,
        description: description.map(Into::into),
        group_id: None,
        created_at: now,
        updated_at: now,
    })
}

/// A team of the enterprise by id (all digits) or slug (case-insensitive; the `ent:` prefix may
/// be left out).
pub fn find(c: &mut dyn Conn, enterprise_id: i64, key: &str) -> Result<Option<EnterpriseTeam>, DbError> {
    let row = match key.parse::<i64>() {
        Ok(id) => c.query_opt(
            &format!("SELECT {COLS} FROM enterprise_teams t WHERE t.enterprise_id = ? AND t.id = ?"),
            params![enterprise_id, id],
        )?,
        Err(_) => {
            let lower = key.to_lowercase();
            let slug = if lower.starts_with("ent:") { lower } else { format!("ent:{lower}") };
            c.query_opt(
                &format!("SELECT {COLS} FROM enterprise_teams t WHERE t.enterprise_id = ? AND t.slug = ?"),
                params![enterprise_id, slug],
            )?
        }
    };
    Ok(row.map(|r| from_row(&r)))
}

/// The caller's role in an enterprise: `owner`, `member` or none.
pub fn enterprise_role(c: &mut dyn Conn, enterprise_id: i64, user_id: i64) -> Result<Option<String>, DbError> {
    Ok(c.query_opt("SELECT role FROM enterprise_members WHERE enterprise_id = ? AND user_id = ?", params![enterprise_id, user_id])?
        .map(|r| r.string(0)))
}

/// Is the account an organization of the enterprise?
pub fn owns_org(c: &mut dyn Conn, enterprise_id: i64, org_id: i64) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM enterprise_orgs WHERE enterprise_id = ? AND org_id = ?", params![enterprise_id, org_id])?.is_some())
}

/// Members of a team, in login order, one page, with the total.
pub fn members(c: &mut dyn Conn, team_id: i64, offset: i64, limit: i64) -> Result<(Vec<Account>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM enterprise_team_members WHERE team_id = ?", params![team_id])?;
    let sql = format!(
        "SELECT {} FROM enterprise_team_members m JOIN accounts a ON a.id = m.user_id \
         WHERE m.team_id = ? ORDER BY a.login_lower LIMIT ? OFFSET ?",
        accounts::COLS
    );
    let rows = c.query(&sql, params![team_id, limit, offset])?;
    Ok((rows.iter().map(|r| accounts::from_row(r, 0)).collect(), total))
}

pub fn is_member(c: &mut dyn Conn, team_id: i64, user_id: i64) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM enterprise_team_members WHERE team_id = ? AND user_id = ?", params![team_id, user_id])?.is_some())
}

pub fn add_member(c: &mut dyn Conn, team_id: i64, user_id: i64, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO enterprise_team_members (team_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT (team_id, user_id) DO NOTHING",
        params![team_id, user_id, now],
    )?;
    touch(c, team_id, now)
}

/// Removes a member; true when the user was one.
pub fn remove_member(c: &mut dyn Conn, team_id: i64, user_id: i64, now: i64) -> Result<bool, DbError> {
    let n = c.execute("DELETE FROM enterprise_team_members WHERE team_id = ? AND user_id = ?", params![team_id, user_id])?;
    if n > 0 {
        touch(c, team_id, now)?;
    }
    Ok(n > 0)
}

fn touch(c: &mut dyn Conn, team_id: i64, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE enterprise_teams SET updated_at = ? WHERE id = ?", params![now, team_id])?;
    Ok(())
}

/// Teams of the enterprise the user belongs to, by name, one page, with the total.
pub fn teams_of(
    c: &mut dyn Conn,
    enterprise_id: i64,
    user_id: i64,
    offset: i64,
    limit: i64,
) -> Result<(Vec<EnterpriseTeam>, i64), DbError> {
    let from = "FROM enterprise_teams t JOIN enterprise_team_members m ON m.team_id = t.id WHERE t.enterprise_id = ? AND m.user_id = ?";
    let total = c.query_i64(&format!("SELECT COUNT(*) {from}"), params![enterprise_id, user_id])?;
    let rows =
        c.query(&format!("SELECT {COLS} {from} ORDER BY t.slug LIMIT ? OFFSET ?"), params![enterprise_id, user_id, limit, offset])?;
    Ok((rows.iter().map(from_row).collect(), total))
}

/// The teams of an enterprise, by slug, one page, with the total.
pub fn list(c: &mut dyn Conn, enterprise_id: i64, offset: i64, limit: i64) -> Result<(Vec<EnterpriseTeam>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM enterprise_teams WHERE enterprise_id = ?", params![enterprise_id])?;
    let rows = c.query(
        &format!("SELECT {COLS} FROM enterprise_teams t WHERE t.enterprise_id = ? ORDER BY t.slug LIMIT ? OFFSET ?"),
        params![enterprise_id, limit, offset],
    )?;
    Ok((rows.iter().map(from_row).collect(), total))
}
