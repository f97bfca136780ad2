//! Rule suites: the record of every ref change rulesets were evaluated for, with each rule's
//! outcome (kept as JSON: the API layer decides the rules and their shape), listed per
//! repository and per owning organization.
use crate::{params, Conn, DbError, Row, Value};

/// A rule suite to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSuite {
    pub repo_id: i64,
    pub owner_id: i64,
    pub repository_name: String,
    pub actor_id: Option<i64>,
    pub actor_name: Option<String>,
    pub ref_name: String,
    pub before_sha: String,
    pub after_sha: String,
    /// `pass`, `fail` or `bypass` (active rulesets).
    pub result: String,
    /// The same over active and evaluate rulesets.
    pub evaluation_result: String,
    /// JSON array of the rule evaluations.
    pub evaluations: String,
}

/// A recorded rule suite.
#[derive(Clone, Debug)]
pub struct Suite {
    pub id: i64,
    pub at: i64,
    pub suite: NewSuite,
}

/// What a list asks for: the repository's (`repo_id`) or an organization's (`owner_id`, and
/// optionally one `repository_name`) suites since `since`.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub repo_id: Option<i64>,
    pub owner_id: Option<i64>,
    pub repository_name: Option<String>,
    /// A full ref name, or a short one matched under `refs/heads/` and `refs/tags/` too.
    pub ref_name: Option<String>,
    pub actor_name: Option<String>,
    pub result: Option<String>,
    pub since: i64,
}

const COLS: &str = "id, repo_id, owner_id, repository_name, actor_id, actor_name, ref, before_sha, after_sha, \
                    pushed_at, result, evaluation_result, evaluations";

fn from_row(r: &Row) -> Suite {
    Suite {
        id: r.i64(0),
        at: r.i64(9),
        suite: NewSuite {
            repo_id: r.i64(1),
            owner_id: r.i64(2),
            repository_name: r.string(3),
            actor_id: r.opt_i64(4),
            actor_name: r.opt_string(5),
            ref_name: r.string(6),
            before_sha: r.string(7),
            after_sha: r.string(8),
            result: r.string(10),
            evaluation_result: r.string(11),
            evaluations: r.string(12),
        },
    }
}

/// Records suites (one per evaluated ref change) at `now`.
pub fn record(c: &mut dyn Conn, suites: &[NewSuite], now: i64) -> Result<(), DbError> {
    for s in suites {
        c.execute(
            "INSERT INTO rule_suites (repo_id, owner_id, repository_name, actor_id, actor_name, ref, before_sha, after_sha, \
             pushed_at, result, evaluation_result, evaluations) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                s.repo_id,
                s.owner_id,
                s.repository_name.as_str(),
                s.actor_id,
                s.actor_name.as_deref(),
                s.ref_name.as_str(),
                s.before_sha.as_str(),
                s.after_sha.as_str(),
                now,
                s.result.as_str(),
                s.evaluation_result.as_str(),
                s.evaluations.as_str()
            ],
        )?;
    }
    Ok(())
}

/// One page of the suites `f` selects, newest first, and how many there are.
pub fn list(c: &mut dyn Conn, f: &Filter, offset: i64, limit: i64) -> Result<(Vec<Suite>, i64), DbError> {
    let mut wheres = vec!["pushed_at >= ?".to_string()];
    let mut args: Vec<Value> = vec![Value::from(f.since)];
    if let Some(id) = f.repo_id {
        wheres.push("repo_id = ?".into());
        args.push(Value::from(id));
    }
    if let Some(id) = f.owner_id {
        wheres.push("owner_id = ?".into());
        args.push(Value::from(id));
    }
    if let Some(n) = &f.repository_name {
        wheres.push("LOWER(repository_name) = ?".into());
        args.push(Value::from(n.to_lowercase()));
    }
    if let Some(r) = &f.ref_name {
        if r.starts_with("refs/") {
            wheres.push("ref = ?".into());
            args.push(Value::from(r.clone()));
        } else {
            wheres.push("(ref = ? OR ref = ? OR ref = ?)".into());
            args.push(Value::from(r.clone()));
            args.push(Value::from(format!("refs/heads/{r}")));
            args.push(Value::from(format!("refs/tags/{r}")));
        }
    }
    if let Some(a) = &f.actor_name {
        wheres.push("LOWER(actor_name) = ?".into());
        args.push(Value::from(a.to_lowercase()));
    }
    if let Some(r) = &f.result {
        wheres.push("result = ?".into());
        args.push(Value::from(r.clone()));
    }
    let w = wheres.join(" AND ");
    let total = c.query_i64(&format!("SELECT COUNT(*) FROM rule_suites WHERE {w}"), &args)?;
    let mut page = args;
    page.push(Value::from(limit));
    page.push(Value::from(offset));
    let rows = c.query(&format!("SELECT {COLS} FROM rule_suites WHERE {w} ORDER BY id DESC LIMIT ? OFFSET ?"), &page)?;
    Ok((rows.iter().map(from_row).collect(), total))
}

/// One suite, by id.
pub fn get(c: &mut dyn Conn, id: i64) -> Result<Option<Suite>, DbError> {
    Ok(c.query_opt(&format!("SELECT {COLS} FROM rule_suites WHERE id = ?"), params![id])?.map(|r| from_row(&r)))
}
