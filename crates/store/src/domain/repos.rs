//! Repositories, their refs and the redirects renames leave behind.
use super::accounts::{self, Account};
use crate::{params, Conn, DbError, Row, Value};

/// The repositories a credential reaches (decided by the API's `authorize::reach`), as a
/// filter of rows and queries that span many repositories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Private repositories may appear.
    pub private: bool,
    /// Only repositories of this owner.
    pub owner: Option<i64>,
    /// Only these repositories.
    pub only: Option<Vec<i64>>,
}

impl Reach {
    /// Is a repository (`id`, its owner's id, whether it is private) within reach for reading?
    /// Public repositories always are (anyone may read them); private ones with the grant and
    /// within the limits.
    pub fn allows(&self, id: i64, owner_id: i64, private: bool) -> bool {
        !private || (self.private && self.within_limits(id, owner_id))
    }

    /// Within the credential's own limits (owner, selection), whatever the visibility.
    pub fn within_limits(&self, id: i64, owner_id: i64) -> bool {
        self.owner.is_none_or(|o| o == owner_id) && self.only.as_ref().is_none_or(|ids| ids.contains(&id))
    }

    /// [`Reach::allows`] as an SQL condition on a repository id column (`?` parameters pushed
    /// to `p`); `None` when every repository is within reach.
    pub fn sql(&self, repo_id_col: &str, cond: &mut Vec<String>, p: &mut Vec<Value>) {
        let public = format!("{repo_id_col} IN (SELECT id FROM repos WHERE private = FALSE)");
        if !self.private {
            cond.push(public);
            return;
        }
        let mut limits: Vec<String> = Vec::new();
        if let Some(o) = self.owner {
            limits.push(format!("{repo_id_col} IN (SELECT id FROM repos WHERE owner_id = ?)"));
            p.push(Value::from(o));
        }
        match &self.only {
            Some(ids) if ids.is_empty() => limits.push("1 = 0".into()),
            Some(ids) => {
                limits.push(format!("{repo_id_col} IN ({})", vec!["?"; ids.len()].join(", ")));
                p.extend(ids.iter().map(|i| Value::from(*i)));
            }
            None => {}
        }
        if !limits.is_empty() {
            cond.push(format!("({public} OR ({}))", limits.join(" AND ")));
        }
    }
}

#[derive(Clone, Debug)]
pub struct Repo {
    pub id: i64,
    pub owner: Account,
    pub name: String,
    pub private: bool,
    pub description: Option<String>,
    pub default_branch: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub pushed_at: Option<i64>,
    pub homepage: Option<String>,
}

impl Repo {
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner.login, self.name)
    }
}

const REPO_COLS: &str = "r.id, r.name, r.private, r.description, r.default_branch, r.created_at, r.updated_at, r.pushed_at, r.homepage";

fn from_row(r: &Row) -> Repo {
    Repo {
        id: r.i64(0),
        name: r.string(1),
        private: r.bool(2),
        description: r.opt_string(3),
        default_branch: r.string(4),
        created_at: r.i64(5),
        updated_at: r.i64(6),
        pushed_at: r.opt_i64(7),
        homepage: r.opt_string(8),
        owner: accounts::from_row(r, 9),
    }
}

fn select() -> String {
    format!("SELECT {REPO_COLS}, {} FROM repos r JOIN accounts a ON a.id = r.owner_id", accounts::COLS)
}

#[derive(Clone, Debug)]
pub enum Lookup {
    Found(Repo),
    /// The name was renamed away; this is the repository now.
    Moved(Repo),
    Missing,
}

/// Finds `owner/name` case-insensitively, following rename redirects.
pub fn lookup(c: &mut dyn Conn, owner: &str, name: &str) -> Result<Lookup, DbError> {
    let (owner, name) = (owner.to_lowercase(), name.to_lowercase());
    let sql = format!("{} WHERE a.login_lower = ? AND r.name_lower = ?", select());
    if let Some(r) = c.query_opt(&sql, params![&owner, &name])? {
        return Ok(Lookup::Found(from_row(&r)));
    }
    let moved = c.query_opt(
        "SELECT d.repo_id FROM repo_redirects d JOIN accounts a ON a.id = d.owner_id \
         WHERE a.login_lower = ? AND d.name_lower = ?",
        params![&owner, &name],
    )?;
    match moved {
        Some(r) => Ok(by_id(c, r.i64(0))?.map(Lookup::Moved).unwrap_or(Lookup::Missing)),
        None => Ok(Lookup::Missing),
    }
}

pub fn by_id(c: &mut dyn Conn, id: i64) -> Result<Option<Repo>, DbError> {
    let sql = format!("{} WHERE r.id = ?", select());
    Ok(c.query_opt(&sql, params![id])?.map(|r| from_row(&r)))
}

/// Takes the repository's row lock ([`crate::lock::rows`]): writers that read the row to decide
/// what they change and record (numbering, `changes` of a webhook) act one after the other
/// across nodes.
pub fn lock(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    crate::lock::rows(c, "repos", "id = ?", params![id])?;
    Ok(())
}

/// The repository as it is now, under its row lock ([`lock`]).
pub fn locked(c: &mut dyn Conn, id: i64) -> Result<Option<Repo>, DbError> {
    lock(c, id)?;
    by_id(c, id)
}

pub struct NewRepo<'a> {
    pub owner: &'a Account,
    pub name: &'a str,
    pub private: bool,
    pub description: Option<&'a str>,
    pub default_branch: &'a str,
    pub homepage: Option<&'a str>,
}

/// Creates a repository; a taken name under the owner is a `Unique` error.
pub fn create(c: &mut dyn Conn, n: &NewRepo, now: i64) -> Result<Repo, DbError> {
    // A new repository takes over a name a rename left behind.
    c.execute("DELETE FROM repo_redirects WHERE owner_id = ? AND name_lower = ?", params![n.owner.id, n.name.to_lowercase()])?;
    let id = c.query_i64(
        "INSERT INTO repos (owner_id, name, name_lower, private, description, default_branch, homepage, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![n.owner.id, n.name, n.name.to_lowercase(), n.private, n.description, n.default_branch, n.homepage, now, now],
    )?;
    Ok(Repo {
        id,
        owner: n.owner.clone(),
        name: n.name.into(),
        private: n.private,
        description: n.description.map(Into::into),
        default_branch: n.default_branch.into(),
        created_at: now,
        updated_at: now,
        pushed_at: None,
        homepage: n.homepage.map(Into::into),
    })
}

/// Renames; the old name keeps answering through a redirect. A taken name is `Unique`.
pub fn rename(c: &mut dyn Conn, repo: &Repo, new_name: &str, now: i64) -> Result<(), DbError> {
    if repo.name.to_lowercase() != new_name.to_lowercase() {
        c.execute("DELETE FROM repo_redirects WHERE owner_id = ? AND name_lower = ?", params![repo.owner.id, new_name.to_lowercase()])?;
        c.execute(
            "INSERT INTO repo_redirects (owner_id, name_lower, repo_id) VALUES (?, ?, ?) \
             ON CONFLICT (owner_id, name_lower) DO UPDATE SET repo_id = excluded.repo_id",
            params![repo.owner.id, repo.name.to_lowercase(), repo.id],
        )?;
    }
    c.execute(
        "UPDATE repos SET name = ?, name_lower = ?, updated_at = ? WHERE id = ?",
        params![new_name, new_name.to_lowercase(), now, repo.id],
    )?;
    Ok(())
}

/// Creates or moves a ref; returns the sha it pointed at before, if any.
pub fn set_ref(c: &mut dyn Conn, repo_id: i64, name: &str, sha: &str, now: i64) -> Result<Option<String>, DbError> {
    let before = c.query_opt("SELECT sha FROM refs WHERE repo_id = ? AND name = ?", params![repo_id, name])?.map(|r| r.string(0));
    point_ref(c, repo_id, name, sha, now)?;
    c.execute("UPDATE repos SET pushed_at = ?, updated_at = ? WHERE id = ?", params![now, now, repo_id])?;
    Ok(before)
}

/// Points ref `name` at `sha`, which becomes a known commit of the repository (even one
/// recorded without its details).
pub(crate) fn point_ref(c: &mut dyn Conn, repo_id: i64, name: &str, sha: &str, now: i64) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO refs (repo_id, name, sha, updated_at) VALUES (?, ?, ?, ?) \
         ON CONFLICT (repo_id, name) DO UPDATE SET sha = excluded.sha, updated_at = excluded.updated_at",
        params![repo_id, name, sha, now],
    )?;
    c.execute(
        "INSERT INTO commits (repo_id, sha, created_at) VALUES (?, ?, ?) ON CONFLICT (repo_id, sha) DO NOTHING",
        params![repo_id, sha, now],
    )?;
    Ok(())
}

/// Resolves a ref as the commit endpoints take it — `heads/<branch>`, `tags/<tag>`, a bare branch
/// or tag name, or the full 40-hex sha of a commit the repository has seen pushed — to a sha.
pub fn resolve_ref(c: &mut dyn Conn, repo_id: i64, r: &str) -> Result<Option<String>, DbError> {
    let (sql, p) = resolve_ref_sql(repo_id, r);
    Ok(c.query_opt(&sql, &p)?.map(|row| row.string(0)))
}

/// The statement (and its parameters) [`resolve_ref`] runs, one column `sha` and at most one
/// row, for statements that resolve a ref on the way.
pub fn resolve_ref_sql(repo_id: i64, r: &str) -> (String, Vec<crate::Value>) {
    let candidates: Vec<String> = if let Some(b) = r.strip_prefix("heads/") {
        vec![format!("refs/heads/{b}")]
    } else if let Some(t) = r.strip_prefix("tags/") {
        vec![format!("refs/tags/{t}")]
    } else if r.starts_with("refs/") {
        vec![r.to_string()]
    } else {
        vec![format!("refs/heads/{r}"), format!("refs/tags/{r}")]
    };
    // One index scan finds the first candidate ref: `refs/heads/…` sorts before `refs/tags/…`,
    // the order a bare name is resolved in.
    let marks = vec!["?"; candidates.len()].join(", ");
    let refs = format!("SELECT sha FROM refs WHERE repo_id = ? AND name IN ({marks}) ORDER BY name LIMIT 1");
    let mut p: Vec<crate::Value> = vec![repo_id.into()];
    p.extend(candidates.iter().map(|n| crate::Value::from(n.as_str())));
    if !platform_core::ids::is_sha(r) {
        return (refs, p);
    }
    // A sha: a ref of that name first, then the commit itself.
    p.extend([crate::Value::from(repo_id), crate::Value::from(r.to_lowercase())]);
    let sql = format!(
        "SELECT sha FROM (SELECT sha, 0 AS pos FROM ({refs}) AS named \
         UNION ALL SELECT sha, 1 AS pos FROM commits WHERE repo_id = ? AND sha = ?) AS found ORDER BY pos LIMIT 1"
    );
    (sql, p)
}

pub fn count_for_owner(c: &mut dyn Conn, owner_id: i64) -> Result<i64, DbError> {
    c.query_i64("SELECT COUNT(*) FROM repos WHERE owner_id = ?", params![owner_id])
}

/// Every repository of these owners (lists filter, sort and page them by what the caller may see).
pub fn of_owners(c: &mut dyn Conn, owner_ids: &[i64]) -> Result<Vec<Repo>, DbError> {
    if owner_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!("{} WHERE r.owner_id IN ({}) ORDER BY r.id", select(), vec!["?"; owner_ids.len()].join(", "));
    let p: Vec<Value> = owner_ids.iter().map(|i| Value::from(*i)).collect();
    Ok(c.query(&sql, &p)?.iter().map(from_row).collect())
}

/// The organizations a user belongs to, with the user's role in each.
pub fn org_roles_of(c: &mut dyn Conn, user_id: i64) -> Result<Vec<(i64, String)>, DbError> {
    let rows = c.query("SELECT org_id, role FROM org_members WHERE user_id = ?", params![user_id])?;
    Ok(rows.iter().map(|r| (r.i64(0), r.string(1))).collect())
}

/// The settings of a repository an update may change (`None`: unchanged).
#[derive(Default)]
pub struct Changes<'a> {
    pub description: Option<Option<&'a str>>,
    pub homepage: Option<Option<&'a str>>,
    pub private: Option<bool>,
    pub default_branch: Option<&'a str>,
}

pub fn update(c: &mut dyn Conn, id: i64, ch: &Changes, now: i64) -> Result<(), DbError> {
    let mut sets = vec!["updated_at = ?".to_string()];
    let mut p: Vec<Value> = vec![Value::from(now)];
    if let Some(d) = ch.description {
        sets.push("description = ?".into());
        p.push(Value::from(d));
    }
    if let Some(h) = ch.homepage {
        sets.push("homepage = ?".into());
        p.push(Value::from(h));
    }
    if let Some(v) = ch.private {
        sets.push("private = ?".into());
        p.push(Value::from(v));
    }
    if let Some(b) = ch.default_branch {
        sets.push("default_branch = ?".into());
        p.push(Value::from(b));
    }
    p.push(Value::from(id));
    c.execute(&format!("UPDATE repos SET {} WHERE id = ?", sets.join(", ")), &p)?;
    if ch.private == Some(true) {
        // What happened in a repository that became private leaves the public feeds in the same
        // transaction (names, branches and pushes are no longer anyone's business); records
        // made while it was private stay private if it becomes public again.
        c.execute("UPDATE activity SET public = FALSE WHERE repo_id = ? AND public = TRUE", params![id])?;
    }
    Ok(())
}

/// Does the repository have branch `name`?
pub fn has_branch(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM refs WHERE repo_id = ? AND name = ?", params![repo_id, format!("refs/heads/{name}")])?.is_some())
}

/// Deletes a repository with everything kept of it: git data, statuses, stars and watchers,
/// notification threads, workflows and their runs, environments, deployments, secrets,
/// rulesets, alerts, imports and the redirects of its old names. Activity records and webhook
/// deliveries stay: they are history already handed out. One caller's transaction: all or none;
/// the caller holds the repository's row lock ([`locked`]).
pub fn delete(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    // The rows other writers lock before their children's (a run before its jobs, an alert before
    // its assignees, ...) are locked here before those children go: the order everyone takes
    // them in, so a run settling or an alert changing meanwhile is waited for, not deadlocked with.
    for table in ["workflow_runs", "rulesets", "depbot_alerts", "environments"] {
        crate::lock::rows(c, table, "repo_id = ?", params![id])?;
    }
    const BY_RUN: &str = "run_id IN (SELECT id FROM workflow_runs WHERE repo_id = ?)";
    let statements = [
        format!("DELETE FROM run_attempts WHERE {BY_RUN}"),
        format!("DELETE FROM run_jobs WHERE {BY_RUN}"),
        format!("DELETE FROM run_gates WHERE {BY_RUN}"),
        format!("DELETE FROM run_reviews WHERE {BY_RUN}"),
        "DELETE FROM environment_reviewers WHERE environment_id IN (SELECT id FROM environments WHERE repo_id = ?)".into(),
        "DELETE FROM ruleset_versions WHERE ruleset_id IN (SELECT id FROM rulesets WHERE repo_id = ?)".into(),
        "DELETE FROM depbot_alert_assignees WHERE alert_id IN (SELECT id FROM depbot_alerts WHERE repo_id = ?)".into(),
    ];
    for sql in &statements {
        c.execute(sql, params![id])?;
    }
    for table in [
        "workflow_runs",
        "workflows",
        "environments",
        "deployments",
        "rulesets",
        "depbot_alerts",
        "refs",
        "commits",
        "statuses",
        "status_latest",
        "stars",
        "watchers",
        "notification_threads",
        "notification_pushers",
        "devenv_secrets",
        "imports",
        "import_authors",
        "import_large_files",
        "repo_redirects",
        "push_intents",
        "rule_suites",
    ] {
        c.execute(&format!("DELETE FROM {table} WHERE repo_id = ?"), params![id])?;
    }
    c.execute("DELETE FROM repos WHERE id = ?", params![id])?;
    Ok(())
}
