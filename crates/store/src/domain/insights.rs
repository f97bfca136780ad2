//! API usage insights: requests attributed to an organization, stored aggregated per second
//! (`insights_requests`), and the sums the insights operations read. Every query sums over rows,
//! so one key written by two flushes counts once per request all the same.
use crate::{Conn, DbError, Row, Value};

/// One aggregated row: the requests of one second by one actor to one route.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entry {
    pub org_id: i64,
    pub at: i64,
    pub actor_type: Option<&'static str>,
    pub actor_id: Option<i64>,
    pub actor_name: Option<String>,
    pub integration_id: Option<i64>,
    pub oauth_application_id: Option<i64>,
    pub user_id: Option<i64>,
    pub subject_type: Option<&'static str>,
    pub subject_id: Option<i64>,
    pub subject_name: Option<String>,
    pub http_method: &'static str,
    pub api_route: String,
    pub status: i64,
    pub total: i64,
    pub rate_limited: i64,
}

const INSERT_COLS: &str = "org_id, at, actor_type, actor_id, actor_name, integration_id, oauth_application_id, \
    user_id, subject_type, subject_id, subject_name, http_method, api_route, status, total, rate_limited";
/// Rows per INSERT statement (16 parameters each; well under both backends' limits).
const CHUNK: usize = 200;

/// Appends the entries (the caller's transaction makes the batch atomic).
pub fn insert(c: &mut dyn Conn, entries: &[Entry]) -> Result<(), DbError> {
    for chunk in entries.chunks(CHUNK) {
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        let sql = format!("INSERT INTO insights_requests ({INSERT_COLS}) VALUES {}", vec![row; chunk.len()].join(", "));
        let mut params: Vec<Value> = Vec::with_capacity(chunk.len() * 16);
        for e in chunk {
            params.extend([
                Value::from(e.org_id),
                Value::from(e.at),
                Value::from(e.actor_type),
                Value::from(e.actor_id),
                Value::from(e.actor_name.clone()),
                Value::from(e.integration_id),
                Value::from(e.oauth_application_id),
                Value::from(e.user_id),
                Value::from(e.subject_type),
                Value::from(e.subject_id),
                Value::from(e.subject_name.clone()),
                Value::from(e.http_method),
                Value::from(e.api_route.as_str()),
                Value::from(e.status),
                Value::from(e.total),
                Value::from(e.rate_limited),
            ]);
        }
        c.execute(&sql, &params)?;
    }
    Ok(())
}

/// Which requests a query covers: one organization, `from <= at < until`, optionally one actor
/// or one user.
#[derive(Clone, Debug)]
pub struct Filter {
    pub org_id: i64,
    pub from: i64,
    pub until: i64,
    pub actor: Option<(String, i64)>,
    pub user_id: Option<i64>,
}

impl Filter {
    fn sql(&self) -> (String, Vec<Value>) {
        let mut sql = String::from("org_id = ? AND at >= ? AND at < ?");
        let mut params = vec![Value::from(self.org_id), Value::from(self.from), Value::from(self.until)];
        if let Some((kind, id)) = &self.actor {
            sql.push_str(" AND actor_type = ? AND actor_id = ?");
            params.extend([Value::from(kind.as_str()), Value::from(*id)]);
        }
        if let Some(u) = self.user_id {
            sql.push_str(" AND user_id = ?");
            params.push(Value::from(u));
        }
        (sql, params)
    }
}

/// Counts and last times of a group of requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub total: i64,
    pub rate_limited: i64,
    pub last_at: i64,
    pub last_rate_limited_at: Option<i64>,
}

const STATS: &str = "CAST(SUM(total) AS BIGINT), CAST(SUM(rate_limited) AS BIGINT), MAX(at), \
    MAX(CASE WHEN rate_limited > 0 THEN at END)";

fn stats(r: &Row, i: usize) -> Stats {
    Stats { total: r.i64(i), rate_limited: r.i64(i + 1), last_at: r.i64(i + 2), last_rate_limited_at: r.opt_i64(i + 3) }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteStat {
    pub http_method: String,
    pub api_route: String,
    pub stats: Stats,
}

/// Per method and route.
pub fn routes(c: &mut dyn Conn, f: &Filter) -> Result<Vec<RouteStat>, DbError> {
    let (cond, params) = f.sql();
    let sql = format!("SELECT http_method, api_route, {STATS} FROM insights_requests WHERE {cond} GROUP BY http_method, api_route");
    Ok(c.query(&sql, &params)?.iter().map(|r| RouteStat { http_method: r.string(0), api_route: r.string(1), stats: stats(r, 2) }).collect())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectStat {
    pub subject_type: String,
    pub subject_id: i64,
    pub subject_name: String,
    pub stats: Stats,
}

/// Per subject (a user, or an app acting on its own); requests without one are left out.
pub fn subjects(c: &mut dyn Conn, f: &Filter) -> Result<Vec<SubjectStat>, DbError> {
    let (cond, params) = f.sql();
    let sql = format!(
        "SELECT subject_type, subject_id, MAX(subject_name), {STATS} FROM insights_requests \
         WHERE {cond} AND subject_type IS NOT NULL GROUP BY subject_type, subject_id"
    );
    Ok(c.query(&sql, &params)?
        .iter()
        .map(|r| SubjectStat {
            subject_type: r.string(0),
            subject_id: r.i64(1),
            subject_name: r.opt_string(2).unwrap_or_default(),
            stats: stats(r, 3),
        })
        .collect())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorStat {
    pub actor_type: String,
    pub actor_id: i64,
    pub actor_name: String,
    pub integration_id: Option<i64>,
    pub oauth_application_id: Option<i64>,
    pub stats: Stats,
}

/// Per actor; requests without one are left out.
pub fn actors(c: &mut dyn Conn, f: &Filter) -> Result<Vec<ActorStat>, DbError> {
    let (cond, params) = f.sql();
    let sql = format!(
        "SELECT actor_type, actor_id, MAX(actor_name), MAX(integration_id), MAX(oauth_application_id), {STATS} \
         FROM insights_requests WHERE {cond} AND actor_type IS NOT NULL GROUP BY actor_type, actor_id"
    );
    Ok(c.query(&sql, &params)?
        .iter()
        .map(|r| ActorStat {
            actor_type: r.string(0),
            actor_id: r.i64(1),
            actor_name: r.opt_string(2).unwrap_or_default(),
            integration_id: r.opt_i64(3),
            oauth_application_id: r.opt_i64(4),
            stats: stats(r, 5),
        })
        .collect())
}

/// Total and rate-limited requests.
pub fn summary(c: &mut dyn Conn, f: &Filter) -> Result<(i64, i64), DbError> {
    let (cond, params) = f.sql();
    let sql = format!(
        "SELECT COALESCE(CAST(SUM(total) AS BIGINT), 0), COALESCE(CAST(SUM(rate_limited) AS BIGINT), 0) \
         FROM insights_requests WHERE {cond}"
    );
    let r = c.query_one(&sql, &params)?;
    Ok((r.i64(0), r.i64(1)))
}

/// Total and rate-limited requests per bucket of `increment` seconds (aligned to the epoch, so
/// a day is a UTC day), ordered by bucket start; buckets without requests are absent.
pub fn buckets(c: &mut dyn Conn, f: &Filter, increment: i64) -> Result<Vec<(i64, i64, i64)>, DbError> {
    let (cond, mut params) = f.sql();
    let sql = format!(
        "SELECT (at / ?) * ?, CAST(SUM(total) AS BIGINT), CAST(SUM(rate_limited) AS BIGINT) \
         FROM insights_requests WHERE {cond} GROUP BY 1 ORDER BY 1"
    );
    params.splice(0..0, [Value::from(increment), Value::from(increment)]);
    Ok(c.query(&sql, &params)?.iter().map(|r| (r.i64(0), r.i64(1), r.i64(2))).collect())
}
