//! Dependency alerts and their advisories: creation (one, or many in bulk), the filtered lists
//! with keyset pagination, updates (state, dismissal, assignees) and who may see them.
use super::accounts::{self, Account};
use super::repos::Reach;
use super::security_managers;
use crate::{params, Conn, DbError, Row, Value};

/// An advisory as stored: its row id, the JSON served as `security_advisory`, its withdrawal.
#[derive(Clone, Debug)]
pub struct Advisory {
    pub id: i64,
    pub advisory_id: String,
    pub body: serde_json::Value,
    pub withdrawn_at: Option<i64>,
}

pub fn find_advisory(c: &mut dyn Conn, advisory_id: &str) -> Result<Option<Advisory>, DbError> {
    Ok(c.query_opt("SELECT id, advisory_id, body, withdrawn_at FROM depbot_advisories WHERE advisory_id = ?", params![advisory_id])?.map(
        |r| Advisory {
            id: r.i64(0),
            advisory_id: r.string(1),
            body: serde_json::from_str(r.str(2)).unwrap_or(serde_json::Value::Null),
            withdrawn_at: r.opt_i64(3),
        },
    ))
}

pub fn create_advisory(
    c: &mut dyn Conn,
    advisory_id: &str,
    body: &serde_json::Value,
    withdrawn_at: Option<i64>,
    now: i64,
) -> Result<Advisory, DbError> {
    let id = c.query_i64(
        "INSERT INTO depbot_advisories (advisory_id, body, withdrawn_at, created_at) VALUES (?, ?, ?, ?) RETURNING id",
        params![advisory_id, body.to_string(), withdrawn_at, now],
    )?;
    Ok(Advisory { id, advisory_id: advisory_id.to_string(), body: body.clone(), withdrawn_at })
}

/// A new alert; the filter columns repeat the advisory's and the vulnerability's values.
pub struct NewAlert<'a> {
    pub repo_id: i64,
    pub org_id: Option<i64>,
    pub advisory_id: i64,
    pub state: &'a str,
    pub ecosystem: &'a str,
    pub package: &'a str,
    pub manifest_path: &'a str,
    pub scope: Option<&'a str>,
    pub relationship: Option<&'a str>,
    pub severity: &'a str,
    pub classification: &'a str,
    /// -1 when the advisory has no EPSS score.
    pub epss_percentage: f64,
    pub has_patch: bool,
    pub vulnerability: &'a serde_json::Value,
    pub created_at: i64,
}

const INSERT_COLS: &str = "repo_id, org_id, number, advisory_id, state, ecosystem, package, manifest_path, scope, relationship, \
     severity, classification, epss_percentage, has_patch, vulnerability, created_at, updated_at, fixed_at, auto_dismissed_at";
const INSERT_ARITY: usize = 19;

fn insert_values(a: &NewAlert, number: i64, out: &mut Vec<Value>) {
    let at = |s: &str| (a.state == s).then_some(a.created_at);
    out.extend([
        Value::from(a.repo_id),
        Value::from(a.org_id),
        Value::from(number),
        Value::from(a.advisory_id),
        Value::from(a.state),
        Value::from(a.ecosystem),
        Value::from(a.package),
        Value::from(a.manifest_path),
        Value::from(a.scope),
        Value::from(a.relationship),
        Value::from(a.severity),
        Value::from(a.classification),
        Value::from(a.epss_percentage),
        Value::from(a.has_patch),
        Value::from(a.vulnerability.to_string()),
        Value::from(a.created_at),
        Value::from(a.created_at),
        Value::from(at("fixed")),
        Value::from(at("auto_dismissed")),
    ]);
}

/// The next alert number of a repository, under the repository's row lock, so nodes creating
/// alerts at once cannot pick the same number.
fn next_number(c: &mut dyn Conn, repo_id: i64) -> Result<i64, DbError> {
    super::repos::lock(c, repo_id)?;
    c.query_i64("SELECT COALESCE(MAX(number), 0) + 1 FROM depbot_alerts WHERE repo_id = ?", params![repo_id])
}

/// Creates one alert; returns its id and number.
pub fn create(c: &mut dyn Conn, a: &NewAlert) -> Result<(i64, i64), DbError> {
    let number = next_number(c, a.repo_id)?;
    let mut vals = Vec::with_capacity(INSERT_ARITY);
    insert_values(a, number, &mut vals);
    let marks = vec!["?"; INSERT_ARITY].join(", ");
    let id = c.query_i64(&format!("INSERT INTO depbot_alerts ({INSERT_COLS}) VALUES ({marks}) RETURNING id"), &vals)?;
    Ok((id, number))
}

/// Creates many alerts with multi-row inserts (bulk seeding): numbers continue each repository's.
pub fn create_many(c: &mut dyn Conn, alerts: &[NewAlert]) -> Result<(), DbError> {
    let mut next: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    // Multi-row inserts stay below SQLite's and PostgreSQL's bound-parameter limits.
    for chunk in alerts.chunks(500) {
        let mut vals = Vec::with_capacity(chunk.len() * INSERT_ARITY);
        for a in chunk {
            let n = match next.get(&a.repo_id) {
                Some(n) => *n,
                None => next_number(c, a.repo_id)?,
            };
            next.insert(a.repo_id, n + 1);
            insert_values(a, n, &mut vals);
        }
        let row = format!("({})", vec!["?"; INSERT_ARITY].join(", "));
        let rows = vec![row; chunk.len()].join(", ");
        c.execute(&format!("INSERT INTO depbot_alerts ({INSERT_COLS}) VALUES {rows}"), &vals)?;
    }
    // Fresh planner statistics: without them PostgreSQL takes the just-filled table for empty and
    // scans it for every list instead of walking the order indexes.
    c.execute("ANALYZE depbot_alerts", &[])?;
    Ok(())
}

#[derive(Clone, Debug)]
pub struct Alert {
    pub id: i64,
    pub repo_id: i64,
    pub number: i64,
    pub state: String,
    pub ecosystem: String,
    pub package: String,
    pub manifest_path: String,
    pub scope: Option<String>,
    pub relationship: Option<String>,
    pub epss_percentage: f64,
    /// The vulnerability and advisory as stored JSON text: parsed only when an alert is rendered
    /// (lists reuse rendered alerts, so most reads never parse them).
    pub vulnerability: String,
    pub advisory: String,
    pub advisory_withdrawn_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub dismissed_at: Option<i64>,
    pub dismissed_by: Option<Account>,
    pub dismissed_reason: Option<String>,
    pub dismissed_comment: Option<String>,
    pub fixed_at: Option<i64>,
    pub auto_dismissed_at: Option<i64>,
    pub assignees: Vec<Account>,
}

const COLS: &str = "x.id, x.repo_id, x.number, x.state, x.ecosystem, x.package, x.manifest_path, x.scope, x.relationship, \
     x.epss_percentage, x.vulnerability, v.body, v.withdrawn_at, x.created_at, x.updated_at, x.dismissed_at, \
     x.dismissed_reason, x.dismissed_comment, x.fixed_at, x.auto_dismissed_at";
const NCOLS: usize = 20;
const FROM: &str = "depbot_alerts x JOIN depbot_advisories v ON v.id = x.advisory_id LEFT JOIN accounts a ON a.id = x.dismissed_by";

fn from_row(r: &Row) -> Alert {
    Alert {
        id: r.i64(0),
        repo_id: r.i64(1),
        number: r.i64(2),
        state: r.string(3),
        ecosystem: r.string(4),
        package: r.string(5),
        manifest_path: r.string(6),
        scope: r.opt_string(7),
        relationship: r.opt_string(8),
        epss_percentage: r.f64(9),
        vulnerability: r.string(10),
        advisory: r.string(11),
        advisory_withdrawn_at: r.opt_i64(12),
        created_at: r.i64(13),
        updated_at: r.i64(14),
        dismissed_at: r.opt_i64(15),
        dismissed_reason: r.opt_string(16),
        dismissed_comment: r.opt_string(17),
        fixed_at: r.opt_i64(18),
        auto_dismissed_at: r.opt_i64(19),
        dismissed_by: accounts::opt_from_row(r, NCOLS),
        assignees: Vec::new(),
    }
}

fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Reads alerts by a condition and fills their assignees (one query for all of them).
fn load(c: &mut dyn Conn, cond: &str, tail: &str, params: &[Value]) -> Result<Vec<Alert>, DbError> {
    let sql = format!("SELECT {COLS}, {} FROM {FROM} WHERE {cond} {tail}", accounts::COLS);
    let mut alerts: Vec<Alert> = c.query(&sql, params)?.iter().map(from_row).collect();
    if alerts.is_empty() {
        return Ok(alerts);
    }
    let ids: Vec<Value> = alerts.iter().map(|a| Value::from(a.id)).collect();
    let sql = format!(
        "SELECT s.alert_id, {} FROM depbot_alert_assignees s JOIN accounts a ON a.id = s.user_id \
         WHERE s.alert_id IN ({}) ORDER BY a.login_lower",
        accounts::COLS,
        marks(ids.len())
    );
    for r in c.query(&sql, &ids)? {
        let id = r.i64(0);
        if let Some(a) = alerts.iter_mut().find(|a| a.id == id) {
            a.assignees.push(accounts::from_row(&r, 1));
        }
    }
    Ok(alerts)
}

pub fn get(c: &mut dyn Conn, repo_id: i64, number: i64) -> Result<Option<Alert>, DbError> {
    Ok(load(c, "x.repo_id = ? AND x.number = ?", "", params![repo_id, number])?.into_iter().next())
}

/// The alert as it is now, under its row lock (to the end of the transaction): a change decided
/// against it (a dismissal, a reopening, and the activity recording it) is made once however
/// many nodes make it at once.
pub fn locked(c: &mut dyn Conn, repo_id: i64, number: i64) -> Result<Option<Alert>, DbError> {
    crate::lock::rows(c, "depbot_alerts", "repo_id = ? AND number = ?", params![repo_id, number])?;
    get(c, repo_id, number)
}

/// `epss_percentage` filter: a comparison or an inclusive range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Epss {
    Cmp(&'static str, f64),
    Range(f64, f64),
}

/// `assignee` filter: any of these logins, or any assignee (`*`), or none (`none`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assignee {
    pub user_ids: Vec<i64>,
    pub any: bool,
    pub none: bool,
}

/// The list filters of api-facts §5.1; empty lists do not filter.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub states: Vec<String>,
    pub severities: Vec<String>,
    pub ecosystems: Vec<String>,
    pub classifications: Vec<String>,
    pub packages: Vec<String>,
    pub manifests: Vec<String>,
    pub scope: Option<String>,
    pub relationships: Vec<String>,
    pub epss: Option<Epss>,
    pub has_patch: bool,
    pub assignee: Option<Assignee>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    Created,
    Updated,
    Epss,
}

impl Sort {
    fn column(self) -> &'static str {
        match self {
            Sort::Created => "x.created_at",
            Sort::Updated => "x.updated_at",
            Sort::Epss => "x.epss_percentage",
        }
    }
    /// An alert's sort key, as a cursor carries it.
    pub fn key(self, a: &Alert) -> Value {
        match self {
            Sort::Created => Value::Int(a.created_at),
            Sort::Updated => Value::Int(a.updated_at),
            Sort::Epss => Value::Float(a.epss_percentage),
        }
    }
}

/// Which alerts a list covers.
pub enum Within {
    Repo(i64),
    Orgs(Vec<i64>),
}

/// A page position: strictly after (or before) the alert with this sort key and id.
#[derive(Clone, Debug)]
pub struct Position {
    pub key: Value,
    pub id: i64,
    pub before: bool,
}

fn in_list(cond: &mut Vec<String>, p: &mut Vec<Value>, col: &str, values: &[String]) {
    if !values.is_empty() {
        cond.push(format!("{col} IN ({})", marks(values.len())));
        p.extend(values.iter().map(Value::from));
    }
}

/// One page of alerts in `sort` order (`desc` or ascending), after or before `at`; `limit` rows.
/// Keyset pagination over the (key, id) indexes keeps every page as cheap as the first.
/// Only alerts of repositories within `reach` (the credential's).
#[allow(clippy::too_many_arguments)] // one page query: every argument is a part of the keyset
pub fn list(
    c: &mut dyn Conn,
    within: &Within,
    reach: &Reach,
    f: &Filter,
    sort: Sort,
    desc: bool,
    at: Option<&Position>,
    limit: i64,
) -> Result<Vec<Alert>, DbError> {
    let mut cond: Vec<String> = Vec::new();
    let mut p: Vec<Value> = Vec::new();
    reach.sql("x.repo_id", &mut cond, &mut p);
    match within {
        Within::Repo(id) => {
            cond.push("x.repo_id = ?".into());
            p.push(Value::from(*id));
        }
        Within::Orgs(ids) if ids.is_empty() => return Ok(Vec::new()),
        Within::Orgs(ids) => {
            cond.push(format!("x.org_id IN ({})", marks(ids.len())));
            p.extend(ids.iter().map(|i| Value::from(*i)));
        }
    }
    in_list(&mut cond, &mut p, "x.state", &f.states);
    in_list(&mut cond, &mut p, "x.severity", &f.severities);
    in_list(&mut cond, &mut p, "x.ecosystem", &f.ecosystems);
    in_list(&mut cond, &mut p, "x.classification", &f.classifications);
    in_list(&mut cond, &mut p, "x.package", &f.packages);
    in_list(&mut cond, &mut p, "x.manifest_path", &f.manifests);
    in_list(&mut cond, &mut p, "x.relationship", &f.relationships);
    if let Some(s) = &f.scope {
        cond.push("x.scope = ?".into());
        p.push(Value::from(s));
    }
    match f.epss {
        Some(Epss::Cmp(op, n)) => {
            cond.push(format!("x.epss_percentage >= 0 AND x.epss_percentage {op} ?"));
            p.push(Value::from(n));
        }
        Some(Epss::Range(lo, hi)) => {
            cond.push("x.epss_percentage >= 0 AND x.epss_percentage >= ? AND x.epss_percentage <= ?".into());
            p.extend([Value::from(lo), Value::from(hi)]);
        }
        None => {}
    }
    if f.has_patch {
        cond.push("x.has_patch = ?".into());
        p.push(Value::from(true));
    }
    if let Some(a) = &f.assignee {
        let mut any: Vec<String> = Vec::new();
        if !a.user_ids.is_empty() {
            any.push(format!(
                "EXISTS (SELECT 1 FROM depbot_alert_assignees s WHERE s.alert_id = x.id AND s.user_id IN ({}))",
                marks(a.user_ids.len())
            ));
            p.extend(a.user_ids.iter().map(|i| Value::from(*i)));
        }
        if a.any {
            any.push("EXISTS (SELECT 1 FROM depbot_alert_assignees s WHERE s.alert_id = x.id)".into());
        }
        if a.none {
            any.push("NOT EXISTS (SELECT 1 FROM depbot_alert_assignees s WHERE s.alert_id = x.id)".into());
        }
        cond.push(if any.is_empty() { "1 = 0".into() } else { format!("({})", any.join(" OR ")) });
    }
    let col = sort.column();
    // Walking backwards (`before`) reads in the opposite order; the caller reverses the page.
    let forward = at.is_none_or(|a| !a.before);
    let desc_now = desc == forward;
    if let Some(a) = at {
        let op = if desc_now { "<" } else { ">" };
        cond.push(format!("({col}, x.id) {op} (?, ?)"));
        p.extend([a.key.clone(), Value::from(a.id)]);
    }
    let dir = if desc_now { "DESC" } else { "ASC" };
    let tail = format!("ORDER BY {col} {dir}, x.id {dir} LIMIT {}", limit.max(1));
    let mut rows = load(c, &cond.join(" AND "), &tail, &p)?;
    if !forward {
        rows.reverse();
    }
    Ok(rows)
}

/// What an update changes; `None` leaves a part as it is.
pub struct Change<'a> {
    /// New state and its dismissal fields (`open` clears them).
    pub state: Option<(&'a str, Option<&'a str>, Option<&'a str>)>,
    pub assignees: Option<&'a [i64]>,
    pub agent_assignment: Option<&'a serde_json::Value>,
}

pub fn update(c: &mut dyn Conn, alert: &Alert, by: Option<i64>, ch: &Change, now: i64) -> Result<(), DbError> {
    if let Some((state, reason, comment)) = ch.state {
        if state == "dismissed" {
            c.execute(
                "UPDATE depbot_alerts SET state = ?, dismissed_at = ?, dismissed_by = ?, dismissed_reason = ?, dismissed_comment = ? WHERE id = ?",
                params![state, now, by, reason, comment, alert.id],
            )?;
        } else {
            c.execute(
                "UPDATE depbot_alerts SET state = ?, dismissed_at = NULL, dismissed_by = NULL, dismissed_reason = NULL, dismissed_comment = NULL WHERE id = ?",
                params![state, alert.id],
            )?;
        }
    }
    if let Some(users) = ch.assignees {
        c.execute("DELETE FROM depbot_alert_assignees WHERE alert_id = ?", params![alert.id])?;
        for u in users {
            c.execute(
                "INSERT INTO depbot_alert_assignees (alert_id, user_id) VALUES (?, ?) ON CONFLICT (alert_id, user_id) DO NOTHING",
                params![alert.id, *u],
            )?;
        }
    }
    if let Some(a) = ch.agent_assignment {
        c.execute("UPDATE depbot_alerts SET agent_assignment = ? WHERE id = ?", params![a.to_string(), alert.id])?;
    }
    c.execute("UPDATE depbot_alerts SET updated_at = ? WHERE id = ?", params![now, alert.id])?;
    Ok(())
}

/// May the user see (and manage) the repository's alerts? Its owner, members of its
/// organization (who have push access) and the organization's security managers may.
pub fn may_see(c: &mut dyn Conn, repo_id: i64, user_id: i64) -> Result<bool, DbError> {
    let sql = format!(
        "SELECT 1 FROM repos r WHERE r.id = ? AND (r.owner_id = ? OR EXISTS (SELECT 1 FROM org_members m \
         WHERE m.org_id = r.owner_id AND m.user_id = ?) OR {})",
        security_managers::is_manager_sql("r.owner_id")
    );
    Ok(c.query_opt(&sql, params![repo_id, user_id, user_id, user_id])?.is_some())
}
