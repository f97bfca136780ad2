//! Rulesets of repositories and organizations, with the history of their versions. The API layer
//! validates and normalizes a ruleset into its `definition` (JSON); this module stores it.
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct Ruleset {
    pub id: i64,
    /// The repository's owner for repository rulesets, the organization for organization ones.
    pub owner_id: i64,
    /// `None` for organization rulesets.
    pub repo_id: Option<i64>,
    pub name: String,
    pub target: String,
    pub enforcement: String,
    /// Normalized JSON: name, target, enforcement, bypass_actors, conditions, rules.
    pub definition: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Who made a version: a user (`User`) or an application (`Integration`); none from the control plane.
#[derive(Clone, Copy, Debug, Default)]
pub struct Actor<'a> {
    pub id: Option<i64>,
    pub kind: Option<&'a str>,
}

pub struct Fields<'a> {
    pub name: &'a str,
    pub target: &'a str,
    pub enforcement: &'a str,
    pub definition: &'a str,
}

#[derive(Clone, Debug)]
pub struct Version {
    pub id: i64,
    pub ruleset_id: i64,
    pub actor_id: Option<i64>,
    pub actor_type: Option<String>,
    pub definition: String,
    pub created_at: i64,
}

const COLS: &str = "s.id, s.owner_id, s.repo_id, s.name, s.target, s.enforcement, s.definition, s.created_at, s.updated_at";

fn from_row(r: &Row) -> Ruleset {
    Ruleset {
        id: r.i64(0),
        owner_id: r.i64(1),
        repo_id: r.opt_i64(2),
        name: r.string(3),
        target: r.string(4),
        enforcement: r.string(5),
        definition: r.string(6),
        created_at: r.i64(7),
        updated_at: r.i64(8),
    }
}

fn record_version(c: &mut dyn Conn, id: i64, f: &Fields, actor: Actor, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO ruleset_versions (ruleset_id, actor_id, actor_type, definition, created_at) VALUES (?, ?, ?, ?, ?)",
        params![id, actor.id, actor.kind, f.definition, now],
    )?;
    Ok(())
}

/// Creates a ruleset (of a repository when `repo_id` is given) and its first version.
pub fn create(c: &mut dyn Conn, owner_id: i64, repo_id: Option<i64>, f: &Fields, actor: Actor, now: i64) -> Result<Ruleset, DbError> {
    let id = c.query_i64(
        "INSERT INTO rulesets (owner_id, repo_id, name, target, enforcement, definition, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![owner_id, repo_id, f.name, f.target, f.enforcement, f.definition, now, now],
    )?;
    record_version(c, id, f, actor, now)?;
    Ok(get(c, id)?.expect("ruleset just created"))
}

/// Replaces a ruleset's definition and records the new version.
pub fn update(c: &mut dyn Conn, id: i64, f: &Fields, actor: Actor, now: i64) -> Result<Ruleset, DbError> {
    c.execute(
        "UPDATE rulesets SET name = ?, target = ?, enforcement = ?, definition = ?, updated_at = ? WHERE id = ?",
        params![f.name, f.target, f.enforcement, f.definition, now, id],
    )?;
    record_version(c, id, f, actor, now)?;
    get(c, id)?.ok_or_else(|| DbError::other("ruleset vanished during update"))
}

/// Deletes a ruleset the caller read under its row lock ([`locked`], so one request deletes it
/// and records the deletion), with its versions.
pub fn delete(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    c.execute("DELETE FROM ruleset_versions WHERE ruleset_id = ?", params![id])?;
    c.execute("DELETE FROM rulesets WHERE id = ?", params![id])?;
    Ok(())
}

/// The ruleset as it is now, under its row lock ([`crate::lock::rows`]).
pub fn locked(c: &mut dyn Conn, id: i64) -> Result<Option<Ruleset>, DbError> {
    crate::lock::rows(c, "rulesets", "id = ?", params![id])?;
    get(c, id)
}

pub fn get(c: &mut dyn Conn, id: i64) -> Result<Option<Ruleset>, DbError> {
    let sql = format!("SELECT {COLS} FROM rulesets s WHERE s.id = ?");
    Ok(c.query_opt(&sql, params![id])?.map(|r| from_row(&r)))
}

/// A repository's own rulesets, oldest first.
pub fn for_repo(c: &mut dyn Conn, repo_id: i64) -> Result<Vec<Ruleset>, DbError> {
    let sql = format!("SELECT {COLS} FROM rulesets s WHERE s.repo_id = ? ORDER BY s.id");
    Ok(c.query(&sql, params![repo_id])?.iter().map(from_row).collect())
}

/// An organization's own rulesets (not those of its repositories), oldest first.
pub fn for_org(c: &mut dyn Conn, org_id: i64) -> Result<Vec<Ruleset>, DbError> {
    let sql = format!("SELECT {COLS} FROM rulesets s WHERE s.owner_id = ? AND s.repo_id IS NULL ORDER BY s.id");
    Ok(c.query(&sql, params![org_id])?.iter().map(from_row).collect())
}

const VCOLS: &str = "v.id, v.ruleset_id, v.actor_id, v.actor_type, v.definition, v.created_at";

fn version_from_row(r: &Row) -> Version {
    Version {
        id: r.i64(0),
        ruleset_id: r.i64(1),
        actor_id: r.opt_i64(2),
        actor_type: r.opt_string(3),
        definition: r.string(4),
        created_at: r.i64(5),
    }
}

/// Versions of a ruleset, newest first, and how many there are.
pub fn history(c: &mut dyn Conn, ruleset_id: i64, offset: i64, limit: i64) -> Result<(Vec<Version>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM ruleset_versions WHERE ruleset_id = ?", params![ruleset_id])?;
    let sql = format!("SELECT {VCOLS} FROM ruleset_versions v WHERE v.ruleset_id = ? ORDER BY v.id DESC LIMIT ? OFFSET ?");
    Ok((c.query(&sql, params![ruleset_id, limit, offset])?.iter().map(version_from_row).collect(), total))
}

pub fn version(c: &mut dyn Conn, ruleset_id: i64, version_id: i64) -> Result<Option<Version>, DbError> {
    let sql = format!("SELECT {VCOLS} FROM ruleset_versions v WHERE v.ruleset_id = ? AND v.id = ?");
    Ok(c.query_opt(&sql, params![ruleset_id, version_id])?.map(|r| version_from_row(&r)))
}

/// Ids of the teams a user belongs to (team bypass actors).
pub fn team_ids_of(c: &mut dyn Conn, user_id: i64) -> Result<Vec<i64>, DbError> {
    Ok(c.query("SELECT team_id FROM team_members WHERE user_id = ?", params![user_id])?.iter().map(|r| r.i64(0)).collect())
}
