//! Users and organizations (one id space, as owners of repositories are either), enterprises, teams.
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct Account {
    pub id: i64,
    /// `User` or `Organization`.
    pub kind: String,
    pub login: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub site_admin: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Account {
    pub fn is_org(&self) -> bool {
        self.kind == "Organization"
    }
}

pub const COLS: &str = "a.id, a.kind, a.login, a.name, a.email, a.site_admin, a.created_at, a.updated_at";
pub const NCOLS: usize = 8;

/// Reads an account from `row` starting at column `at` (the columns of [`COLS`]).
pub fn from_row(r: &Row, at: usize) -> Account {
    Account {
        id: r.i64(at),
        kind: r.string(at + 1),
        login: r.string(at + 2),
        name: r.opt_string(at + 3),
        email: r.opt_string(at + 4),
        site_admin: r.bool(at + 5),
        created_at: r.i64(at + 6),
        updated_at: r.i64(at + 7),
    }
}

/// Like [`from_row`] for a LEFT JOIN that may have found nothing.
pub fn opt_from_row(r: &Row, at: usize) -> Option<Account> {
    r.opt_i64(at).map(|_| from_row(r, at))
}

pub fn by_login(c: &mut dyn Conn, login: &str) -> Result<Option<Account>, DbError> {
    let sql = format!("SELECT {COLS} FROM accounts a WHERE a.login_lower = ?");
    Ok(c.query_opt(&sql, params![login.to_lowercase()])?.map(|r| from_row(&r, 0)))
}

/// The user with this email address (case-insensitive; the first made when several share it).
pub fn user_by_email(c: &mut dyn Conn, email: &str) -> Result<Option<Account>, DbError> {
    let sql = format!("SELECT {COLS} FROM accounts a WHERE a.kind = 'User' AND LOWER(a.email) = ? ORDER BY a.id LIMIT 1");
    Ok(c.query_opt(&sql, params![email.to_lowercase()])?.map(|r| from_row(&r, 0)))
}

pub fn by_id(c: &mut dyn Conn, id: i64) -> Result<Option<Account>, DbError> {
    let sql = format!("SELECT {COLS} FROM accounts a WHERE a.id = ?");
    Ok(c.query_opt(&sql, params![id])?.map(|r| from_row(&r, 0)))
}

pub struct NewAccount<'a> {
    pub kind: &'a str,
    pub login: &'a str,
    pub name: Option<&'a str>,
    pub email: Option<&'a str>,
    pub site_admin: bool,
}

/// Creates an account; a taken login is a `Unique` error.
pub fn create(c: &mut dyn Conn, a: &NewAccount, now: i64) -> Result<Account, DbError> {
    let id = c.query_i64(
        "INSERT INTO accounts (kind, login, login_lower, name, email, site_admin, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![a.kind, a.login, a.login.to_lowercase(), a.name, a.email, a.site_admin, now, now],
    )?;
    Ok(Account {
        id,
        kind: a.kind.to_string(),
        login: a.login.to_string(),
        name: a.name.map(str::to_string),
        email: a.email.map(str::to_string),
        site_admin: a.site_admin,
        created_at: now,
        updated_at: now,
    })
}

/// Takes the account's row lock ([`crate::lock::rows`]): changes of an organization's members
/// and teams that read before they write act one after the other across nodes, so each is
/// decided, and recorded, once.
pub fn lock(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    crate::lock::rows(c, "accounts", "id = ?", params![id])?;
    Ok(())
}

/// Organization role of a user: `owner`, `member` or none.
pub fn org_role(c: &mut dyn Conn, org_id: i64, user_id: i64) -> Result<Option<String>, DbError> {
    Ok(c.query_opt("SELECT role FROM org_members WHERE org_id = ? AND user_id = ?", params![org_id, user_id])?.map(|r| r.string(0)))
}

pub fn set_org_member(c: &mut dyn Conn, org_id: i64, user_id: i64, role: &str) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO org_members (org_id, user_id, role) VALUES (?, ?, ?) \
         ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
        params![org_id, user_id, role],
    )?;
    Ok(())
}

pub fn org_member_count(c: &mut dyn Conn, org_id: i64) -> Result<i64, DbError> {
    c.query_i64("SELECT COUNT(*) FROM org_members WHERE org_id = ?", params![org_id])
}

#[derive(Clone, Debug)]
pub struct Enterprise {
    pub id: i64,
    pub slug: String,
    pub name: String,
    pub created_at: i64,
}

pub fn create_enterprise(c: &mut dyn Conn, slug: &str, name: &str, now: i64) -> Result<Enterprise, DbError> {
    let id = c.query_i64(
        "INSERT INTO enterprises (slug, slug_lower, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
        params![slug, slug.to_lowercase(), name, now, now],
    )?;
    Ok(Enterprise { id, slug: slug.into(), name: name.into(), created_at: now })
}

pub fn enterprise_by_slug(c: &mut dyn Conn, slug: &str) -> Result<Option<Enterprise>, DbError> {
    Ok(c.query_opt("SELECT id, slug, name, created_at FROM enterprises WHERE slug_lower = ?", params![slug.to_lowercase()])?
        .map(|r| Enterprise { id: r.i64(0), slug: r.string(1), name: r.string(2), created_at: r.i64(3) }))
}

pub fn set_enterprise_member(c: &mut dyn Conn, ent_id: i64, user_id: i64, role: &str) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO enterprise_members (enterprise_id, user_id, role) VALUES (?, ?, ?) \
         ON CONFLICT (enterprise_id, user_id) DO UPDATE SET role = excluded.role",
        params![ent_id, user_id, role],
    )?;
    Ok(())
}

/// Places an organization under an enterprise (it becomes enterprise-cloud for rate limits).
pub fn add_enterprise_org(c: &mut dyn Conn, ent_id: i64, org_id: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO enterprise_orgs (enterprise_id, org_id) VALUES (?, ?) ON CONFLICT (org_id) DO NOTHING",
        params![ent_id, org_id],
    )?;
    Ok(())
}

/// Is this account an organization owned by an enterprise?
pub fn in_enterprise(c: &mut dyn Conn, account_id: i64) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM enterprise_orgs WHERE org_id = ?", params![account_id])?.is_some())
}

#[derive(Clone, Debug)]
pub struct Team {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    pub slug: String,
    pub description: Option<String>,
    pub privacy: String,
}

/// Creates a team; `privacy` is `closed` (visible to the organization) or `secret` (to its
/// members and the owners).
pub fn create_team(c: &mut dyn Conn, org_id: i64, name: &str, description: Option<&str>, privacy: &str, now: i64) -> Result<Team, DbError> {
    let slug = slugify(name);
    let id = c.query_i64(
        "INSERT INTO teams (org_id, name, slug, description, privacy, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![org_id, name, &slug, description, privacy, now, now],
    )?;
    Ok(Team { id, org_id, name: name.into(), slug, description: description.map(Into::into), privacy: privacy.into() })
}

/// Adds a user to a team; false when already on it.
pub fn add_team_member(c: &mut dyn Conn, team_id: i64, user_id: i64) -> Result<bool, DbError> {
    let n = c.execute(
        "INSERT INTO team_members (team_id, user_id) VALUES (?, ?) ON CONFLICT (team_id, user_id) DO NOTHING",
        params![team_id, user_id],
    )?;
    Ok(n > 0)
}

/// Team slugs as the platform makes them: lowercase, runs of other characters become `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Organizations the user belongs to (any role), by login, one page, with the total; `only`
/// narrows them to one organization (a token limited to it).
pub fn orgs_of(c: &mut dyn Conn, user_id: i64, only: Option<i64>, offset: i64, limit: i64) -> Result<(Vec<Account>, i64), DbError> {
    let mut p = vec![crate::Value::from(user_id)];
    let filter = match only {
        Some(o) => {
            p.push(crate::Value::from(o));
            " AND a.id = ?"
        }
        None => "",
    };
    let from = format!("FROM org_members m JOIN accounts a ON a.id = m.org_id WHERE m.user_id = ?{filter}");
    let total = c.query_i64(&format!("SELECT COUNT(*) {from}"), &p)?;
    p.extend([crate::Value::from(limit), crate::Value::from(offset)]);
    let rows = c.query(&format!("SELECT {COLS} {from} ORDER BY a.login_lower LIMIT ? OFFSET ?"), &p)?;
    Ok((rows.iter().map(|r| from_row(r, 0)).collect(), total))
}

/// How many public and private repositories an account owns.
pub fn repo_counts(c: &mut dyn Conn, owner_id: i64) -> Result<(i64, i64), DbError> {
    let count = |c: &mut dyn Conn, private: bool| {
        c.query_i64("SELECT COUNT(*) FROM repos WHERE owner_id = ? AND private = ?", params![owner_id, private])
    };
    Ok((count(c, false)?, count(c, true)?))
}

const TEAM_COLS: &str = "t.id, t.org_id, t.name, t.slug, t.description, t.privacy";

fn team_from_row(r: &Row) -> Team {
    Team { id: r.i64(0), org_id: r.i64(1), name: r.string(2), slug: r.string(3), description: r.opt_string(4), privacy: r.string(5) }
}

/// Whose teams a list or a lookup may show: all of them (owners, the organization's apps) or
/// those a member may see (every team but the secret ones they are not on).
#[derive(Clone, Copy, Debug)]
pub enum TeamView {
    All,
    Member(i64),
}

impl TeamView {
    fn filter(self) -> (&'static str, i64) {
        match self {
            TeamView::All => ("", 0),
            TeamView::Member(u) => {
                (" AND (t.privacy <> 'secret' OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = t.id AND tm.user_id = ?))", u)
            }
        }
    }
}

/// The teams of an organization the view shows, by name, one page, with the total.
pub fn teams_of_org(c: &mut dyn Conn, org_id: i64, view: TeamView, offset: i64, limit: i64) -> Result<(Vec<Team>, i64), DbError> {
    let (filter, user) = view.filter();
    let from = format!("FROM teams t WHERE t.org_id = ?{filter}");
    let mut p = vec![crate::Value::from(org_id)];
    if matches!(view, TeamView::Member(_)) {
        p.push(crate::Value::from(user));
    }
    let total = c.query_i64(&format!("SELECT COUNT(*) {from}"), &p)?;
    p.extend([crate::Value::from(limit), crate::Value::from(offset)]);
    let rows = c.query(&format!("SELECT {TEAM_COLS} {from} ORDER BY t.slug LIMIT ? OFFSET ?"), &p)?;
    Ok((rows.iter().map(team_from_row).collect(), total))
}

/// A team with what its full shape counts.
#[derive(Clone, Debug)]
pub struct TeamDetail {
    pub team: Team,
    pub members_count: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// How a path names a team: by slug (case-insensitive) or by id.
#[derive(Clone, Debug)]
pub enum TeamKey {
    Slug(String),
    Id(i64),
}

/// A team of the organization, if the view shows it.
pub fn find_team(c: &mut dyn Conn, org_id: i64, key: &TeamKey, view: TeamView) -> Result<Option<TeamDetail>, DbError> {
    let (filter, user) = view.filter();
    let (column, value) = match key {
        TeamKey::Slug(s) => ("t.slug", crate::Value::from(s.to_lowercase())),
        TeamKey::Id(id) => ("t.id", crate::Value::from(*id)),
    };
    let mut p = vec![crate::Value::from(org_id), value];
    if matches!(view, TeamView::Member(_)) {
        p.push(crate::Value::from(user));
    }
    let sql = format!(
        "SELECT {TEAM_COLS}, t.created_at, t.updated_at, (SELECT COUNT(*) FROM team_members m WHERE m.team_id = t.id) \
         FROM teams t WHERE t.org_id = ? AND {column} = ?{filter}"
    );
    Ok(c.query_opt(&sql, &p)?.map(|r| TeamDetail {
        team: team_from_row(&r),
        created_at: r.i64(6),
        updated_at: r.i64(7),
        members_count: r.i64(8),
    }))
}

// ---------------------------------------------------------------------------------------------
// Membership and team changes after creation (the control plane's).

/// Removes a user from a team; false when not on it.
pub fn remove_team_member(c: &mut dyn Conn, team_id: i64, user_id: i64) -> Result<bool, DbError> {
    Ok(c.execute("DELETE FROM team_members WHERE team_id = ? AND user_id = ?", params![team_id, user_id])? > 0)
}

/// The organization's teams a user is on, by slug.
pub fn teams_of_member(c: &mut dyn Conn, org_id: i64, user_id: i64) -> Result<Vec<Team>, DbError> {
    let rows = c.query(
        &format!(
            "SELECT {TEAM_COLS} FROM teams t JOIN team_members m ON m.team_id = t.id \
             WHERE t.org_id = ? AND m.user_id = ? ORDER BY t.slug"
        ),
        params![org_id, user_id],
    )?;
    Ok(rows.iter().map(team_from_row).collect())
}

/// Removes a user from an organization and from all its teams; false when not a member.
pub fn remove_org_member(c: &mut dyn Conn, org_id: i64, user_id: i64) -> Result<bool, DbError> {
    c.execute(
        "DELETE FROM team_members WHERE user_id = ? AND team_id IN (SELECT id FROM teams WHERE org_id = ?)",
        params![user_id, org_id],
    )?;
    Ok(c.execute("DELETE FROM org_members WHERE org_id = ? AND user_id = ?", params![org_id, user_id])? > 0)
}

/// Sets a team's name (and the slug made of it), description and privacy.
pub fn update_team(c: &mut dyn Conn, t: &Team, now: i64) -> Result<(), DbError> {
    c.execute(
        "UPDATE teams SET name = ?, slug = ?, description = ?, privacy = ?, updated_at = ? WHERE id = ?",
        params![&t.name, &t.slug, t.description.as_deref(), &t.privacy, now, t.id],
    )?;
    Ok(())
}

/// Deletes a team with its memberships and its security-manager role.
pub fn delete_team(c: &mut dyn Conn, t: &Team) -> Result<(), DbError> {
    c.execute("DELETE FROM team_members WHERE team_id = ?", params![t.id])?;
    c.execute("DELETE FROM security_manager_teams WHERE org_id = ? AND team_id = ?", params![t.org_id, t.id])?;
    c.execute("DELETE FROM teams WHERE id = ?", params![t.id])?;
    Ok(())
}
