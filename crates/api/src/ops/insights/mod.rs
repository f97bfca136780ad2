//! API usage insights (document 2, plus `user-stats` of api-facts): the requests made to an
//! organization's resources, recorded by `crate::usage_log`, summed per route, subject, actor,
//! user or time bucket. Organization owners with `read:org`, or tokens with the organization API
//! Insights permission (read); others get 404.
//!
//! Windows are `min_timestamp <= t < max_timestamp` (whole seconds, `YYYY-MM-DDTHH:MM:SSZ`;
//! `max_timestamp` defaults to now). Requests younger than the configured delay are not shown.
//! Time buckets are aligned to the epoch (a day is a UTC day) and every bucket of the window is
//! listed, empty ones with zero counts.
pub mod flush;

use platform_core::time::parse_ts;
use platform_store::domain::insights::{self as store, Filter, Stats};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::typed::Timestamp;

const ACCESS: Access = Access::token(&["read:org"], Some(("organization_api_insights", Level::Read)), Level::Read);
const ACTOR_TYPES: &[&str] = &["installation", "classic_pat", "fine_grained_pat", "oauth_app", "app_user_to_server"];
const ROUTE_SORTS: &[&str] = &[
    "last_rate_limited_timestamp",
    "last_request_timestamp",
    "rate_limited_request_count",
    "http_method",
    "api_route",
    "total_request_count",
];
const SUBJECT_SORTS: &[&str] =
    &["last_rate_limited_timestamp", "last_request_timestamp", "rate_limited_request_count", "subject_name", "total_request_count"];
/// A time series longer than this is refused (a smaller window or a larger increment).
const MAX_BUCKETS: i64 = 50_000;

/// The published form: fields in range, so generated values name real times (February 30 aside).
const TS_PATTERN: &str = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$";

/// The window every operation takes.
#[derive(Deserialize, JsonSchema)]
struct Window {
    /// Required. Start of the window (inclusive), `YYYY-MM-DDTHH:MM:SSZ`.
    #[schemars(extend("pattern" = TS_PATTERN))]
    min_timestamp: String,
    /// End of the window (exclusive), `YYYY-MM-DDTHH:MM:SSZ`; default now.
    #[schemars(extend("pattern" = TS_PATTERN))]
    max_timestamp: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct TimeQuery {
    #[serde(flatten)]
    window: Window,
    /// Required. Bucket width: minutes, hours or days, e.g. `5m`, `10m`, `1h`, `1d`.
    #[schemars(extend("pattern" = "^[1-9][0-9]{0,3}[mhd]$"))]
    timestamp_increment: String,
}

/// The sort keys a list takes: an array of the keys (the contract checks each).
fn sorts(keys: &[&str]) -> Schema {
    schemars::json_schema!({"type": "array", "items": {"type": "string", "enum": keys}})
}
fn route_sorts(_: &mut SchemaGenerator) -> Schema {
    sorts(ROUTE_SORTS)
}
fn subject_sorts(_: &mut SchemaGenerator) -> Schema {
    sorts(SUBJECT_SORTS)
}

#[derive(Deserialize, JsonSchema)]
struct RouteQuery {
    #[serde(flatten)]
    window: Window,
    #[serde(flatten)]
    page: Pagination,
    /// Sort direction (default `desc`).
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    /// Sort keys, in order (default `total_request_count`); repeated or comma-separated.
    #[serde(default)]
    #[schemars(schema_with = "route_sorts")]
    sort: Vec<String>,
    /// Only routes containing this text (case-insensitive).
    api_route_substring: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SubjectQuery {
    #[serde(flatten)]
    window: Window,
    #[serde(flatten)]
    page: Pagination,
    /// Sort direction (default `desc`).
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    /// Sort keys, in order (default `total_request_count`); repeated or comma-separated.
    #[serde(default)]
    #[schemars(schema_with = "subject_sorts")]
    sort: Vec<String>,
    /// Only subjects whose name contains this text (case-insensitive).
    subject_name_substring: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct UserQuery {
    #[serde(flatten)]
    window: Window,
    #[serde(flatten)]
    page: Pagination,
    /// Sort direction (default `desc`).
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    /// Sort keys, in order (default `total_request_count`); repeated or comma-separated.
    #[serde(default)]
    #[schemars(schema_with = "subject_sorts")]
    sort: Vec<String>,
    /// Only actors whose name contains this text (case-insensitive).
    actor_name_substring: Option<String>,
}

const LIST_HEADERS: &[&str] = &["Link"];

pub static ROUTE_STATS: Operation = Operation::get(
    "insights/get-route-stats-by-actor",
    "/orgs/{org}/insights/api/route-stats/{actor_type}/{actor_id}",
    "Get route stats by actor",
)
.docs("https://docs.service.example/rest/orgs/api-insights#get-route-stats-by-actor")
.access(ACCESS)
.on(On::OrgOwner)
.responds(&[Resp::typed::<Vec<ApiInsightsRouteStats>>(200, "Requests per route made by the actor.").with_headers(LIST_HEADERS)]);

pub static SUBJECT_STATS: Operation =
    Operation::get("insights/get-subject-stats", "/orgs/{org}/insights/api/subject-stats", "Get subject stats")
        .docs("https://docs.service.example/rest/orgs/api-insights#get-subject-stats")
        .access(ACCESS)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<Vec<ApiInsightsSubjectStats>>(200, "Requests per subject (user or app).").with_headers(LIST_HEADERS)]);

pub static SUMMARY: Operation = Operation::get("insights/get-summary-stats", "/orgs/{org}/insights/api/summary-stats", "Get summary stats")
    .docs("https://docs.service.example/rest/orgs/api-insights#get-summary-stats")
    .access(ACCESS)
    .on(On::OrgOwner)
    .responds(&[Resp::typed::<ApiInsightsSummaryStats>(200, "Total and rate-limited requests.")]);

pub static SUMMARY_BY_USER: Operation = Operation::get(
    "insights/get-summary-stats-by-user",
    "/orgs/{org}/insights/api/summary-stats/users/{user_id}",
    "Get summary stats by user",
)
.docs("https://docs.service.example/rest/orgs/api-insights#get-summary-stats-by-user")
.access(ACCESS)
.on(On::OrgOwner)
.responds(&[Resp::typed::<ApiInsightsSummaryStats>(200, "Total and rate-limited requests of the user.")]);

pub static SUMMARY_BY_ACTOR: Operation = Operation::get(
    "insights/get-summary-stats-by-actor",
    "/orgs/{org}/insights/api/summary-stats/{actor_type}/{actor_id}",
    "Get summary stats by actor",
)
.docs("https://docs.service.example/rest/orgs/api-insights#get-summary-stats-by-actor")
.access(ACCESS)
.on(On::OrgOwner)
.responds(&[Resp::typed::<ApiInsightsSummaryStats>(200, "Total and rate-limited requests of the actor.")]);

pub static TIME_STATS: Operation = Operation::get("insights/get-time-stats", "/orgs/{org}/insights/api/time-stats", "Get time stats")
    .docs("https://docs.service.example/rest/orgs/api-insights#get-time-stats")
    .access(ACCESS)
    .on(On::OrgOwner)
    .responds(&[Resp::typed::<Vec<ApiInsightsTimeStats>>(200, "Requests per time bucket.")]);

pub static TIME_BY_USER: Operation =
    Operation::get("insights/get-time-stats-by-user", "/orgs/{org}/insights/api/time-stats/users/{user_id}", "Get time stats by user")
        .docs("https://docs.service.example/rest/orgs/api-insights#get-time-stats-by-user")
        .access(ACCESS)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<Vec<ApiInsightsTimeStats>>(200, "The user's requests per time bucket.")]);

pub static TIME_BY_ACTOR: Operation = Operation::get(
    "insights/get-time-stats-by-actor",
    "/orgs/{org}/insights/api/time-stats/{actor_type}/{actor_id}",
    "Get time stats by actor",
)
.docs("https://docs.service.example/rest/orgs/api-insights#get-time-stats-by-actor")
.access(ACCESS)
.on(On::OrgOwner)
.responds(&[Resp::typed::<Vec<ApiInsightsTimeStats>>(200, "The actor's requests per time bucket.")]);

pub static USER_STATS: Operation =
    Operation::get("insights/get-user-stats", "/orgs/{org}/insights/api/user-stats/{user_id}", "Get user stats")
        .docs("https://docs.service.example/rest/orgs/api-insights#get-user-stats")
        .access(ACCESS)
        .on(On::OrgOwner)
        .responds(&[
            Resp::typed::<Vec<ApiInsightsUserStats>>(200, "The user's requests per actor (token or app).").with_headers(LIST_HEADERS)
        ]);

pub fn routes(api: Api) -> Api {
    api.op(&ROUTE_STATS, route_stats)
        .op(&SUBJECT_STATS, subject_stats)
        .op(&SUMMARY, summary)
        .op(&SUMMARY_BY_USER, summary)
        .op(&SUMMARY_BY_ACTOR, summary)
        .op(&TIME_STATS, time_stats)
        .op(&TIME_BY_USER, time_stats)
        .op(&TIME_BY_ACTOR, time_stats)
        .op(&USER_STATS, user_stats)
}

/// A `YYYY-MM-DDTHH:MM:SSZ` query value; anything else is 422.
fn timestamp(name: &str, v: &str) -> ApiResult<i64> {
    let shape = v.len() == 20
        && v.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            19 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    shape
        .then(|| parse_ts(v))
        .flatten()
        .ok_or_else(|| ApiError::invalid_request(format!("For '{name}', {v:?} is not a timestamp of the form YYYY-MM-DDTHH:MM:SSZ.")))
}

/// `timestamp_increment` in seconds: `<n>m`, `<n>h` or `<n>d`, n from 1 to 9999.
fn increment(v: &str) -> ApiResult<i64> {
    let bad = || ApiError::invalid_request(format!("For 'timestamp_increment', {v:?} is not a duration such as 5m, 1h or 1d."));
    let (n, unit) = match (v.strip_suffix('m'), v.strip_suffix('h'), v.strip_suffix('d')) {
        (Some(n), _, _) => (n, 60),
        (_, Some(n), _) => (n, 3_600),
        (_, _, Some(n)) => (n, 86_400),
        _ => return Err(bad()),
    };
    // Digits only, no sign or leading zero, as the published pattern says.
    if n.is_empty() || n.len() > 4 || n.starts_with('0') || !n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    Ok(n.parse::<i64>().map_err(|_| bad())? * unit)
}

/// Authorizes the caller, reads the window and the path's actor or user, and writes buffered
/// requests so the answer includes every request made before this one.
async fn prepare(ctx: &Ctx, w: &Window) -> ApiResult<Filter> {
    let from = timestamp("min_timestamp", &w.min_timestamp)?;
    let now = ctx.app.clock.now();
    let visible_until = now - ctx.app.insights.delay_seconds + 1;
    let until = match w.max_timestamp.as_deref() {
        Some(v) => {
            let max = timestamp("max_timestamp", v)?;
            if max < from {
                return Err(ApiError::invalid_request("'max_timestamp' must not be before 'min_timestamp'."));
            }
            max.min(visible_until)
        }
        None => visible_until,
    };
    let actor = if ctx.op.path.contains("{actor_type}") {
        let kind = ctx.param("actor_type");
        if !ACTOR_TYPES.contains(&kind) {
            return Err(ApiError::invalid_request(format!("For 'actor_type', {kind:?} is not one of {}.", ACTOR_TYPES.join(", "))));
        }
        let id = ctx.param("actor_id");
        let id = id.parse::<i64>().map_err(|_| ApiError::invalid_request(format!("For 'actor_id', {id:?} is not an integer.")))?;
        Some((kind.to_string(), id))
    } else {
        None
    };
    // `user_id` is a string in the spec: one that is not a number names no user (no requests).
    let user_id = ctx.op.path.contains("{user_id}").then(|| ctx.param("user_id").parse::<i64>().unwrap_or(i64::MIN));
    flush::flush(&ctx.app).await?;
    Ok(Filter { org_id: ctx.org().org.id, from, until: until.max(from), actor, user_id })
}

/// A sortable value of a row.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Key<'a> {
    Int(i64),
    Text(&'a str),
}

fn stats_key<'a>(s: &Stats, name: &str) -> Option<Key<'a>> {
    Some(Key::Int(match name {
        "total_request_count" => s.total,
        "rate_limited_request_count" => s.rate_limited,
        "last_request_timestamp" => s.last_at,
        // Never rate limited sorts as the oldest.
        "last_rate_limited_timestamp" => s.last_rate_limited_at.unwrap_or(i64::MIN),
        _ => return None,
    }))
}

/// Sort keys, direction, page and name filter of a list.
struct ListQuery {
    sort: Vec<String>,
    desc: bool,
    page: platform_core::pagination::Page,
    needle: Option<String>,
}

fn list_query(mut sort: Vec<String>, direction: Option<String>, page: Pagination, needle: Option<String>) -> ListQuery {
    if sort.is_empty() {
        sort.push("total_request_count".into());
    }
    let needle = needle.filter(|n| !n.is_empty()).map(|n| n.to_lowercase());
    ListQuery { sort, desc: direction.as_deref() != Some("asc"), page: page.page(30, 100), needle }
}

impl ListQuery {
    fn keeps(&self, name: &str) -> bool {
        self.needle.as_ref().is_none_or(|n| name.to_lowercase().contains(n.as_str()))
    }

    /// Sorts by the keys (one direction for all), ties by `identity` ascending, and answers the
    /// requested page with its `Link` header.
    fn answer<T, S: Serialize>(
        &self,
        ctx: &Ctx,
        mut rows: Vec<T>,
        key: impl for<'a> Fn(&'a T, &str) -> Key<'a>,
        identity: impl Fn(&T, &T) -> std::cmp::Ordering,
        shape: impl Fn(&T) -> S,
    ) -> Reply {
        rows.sort_by(|a, b| {
            let by_keys = self.sort.iter().map(|k| key(a, k).cmp(&key(b, k))).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal);
            let by_keys = if self.desc { by_keys.reverse() } else { by_keys };
            by_keys.then_with(|| identity(a, b))
        });
        let total = rows.len() as i64;
        let start = self.page.offset().min(total) as usize;
        let body: Vec<S> = rows.iter().skip(start).take(self.page.per_page as usize).map(shape).collect();
        Reply::ok(body).opt_header("link", ctx.link(self.page, total))
    }
}

// ------------------------------------------------------------------ shapes

/// The counts and times every row of a list ends with.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RequestStats {
    pub total_request_count: i64,
    pub rate_limited_request_count: i64,
    pub last_request_timestamp: Timestamp,
    pub last_rate_limited_timestamp: Option<Timestamp>,
}

impl From<&Stats> for RequestStats {
    fn from(s: &Stats) -> RequestStats {
        RequestStats {
            total_request_count: s.total,
            rate_limited_request_count: s.rate_limited,
            last_request_timestamp: Timestamp(s.last_at),
            last_rate_limited_timestamp: s.last_rate_limited_at.map(Timestamp),
        }
    }
}

/// Requests per route.
#[derive(Serialize, JsonSchema)]
pub struct ApiInsightsRouteStats {
    pub http_method: String,
    pub api_route: String,
    #[serde(flatten)]
    pub stats: RequestStats,
}

/// Requests per subject (user or app).
#[derive(Serialize, JsonSchema)]
pub struct ApiInsightsSubjectStats {
    pub subject_type: String,
    pub subject_name: String,
    pub subject_id: i64,
    #[serde(flatten)]
    pub stats: RequestStats,
}

/// A user's requests per actor (token or app).
#[derive(Serialize, JsonSchema)]
pub struct ApiInsightsUserStats {
    pub actor_type: String,
    pub actor_name: String,
    pub actor_id: i64,
    pub integration_id: Option<i64>,
    pub oauth_application_id: Option<i64>,
    #[serde(flatten)]
    pub stats: RequestStats,
}

/// Total and rate-limited requests.
#[derive(Serialize, JsonSchema)]
pub struct ApiInsightsSummaryStats {
    pub total_request_count: i64,
    pub rate_limited_request_count: i64,
}

/// Requests in one time bucket.
#[derive(Serialize, JsonSchema)]
pub struct ApiInsightsTimeStats {
    pub timestamp: Timestamp,
    pub total_request_count: i64,
    pub rate_limited_request_count: i64,
}

async fn route_stats(ctx: Ctx, Query(q): Query<RouteQuery>) -> ApiResult<Reply> {
    let filter = prepare(&ctx, &q.window).await?;
    let lq = list_query(q.sort, q.direction, q.page, q.api_route_substring);
    let rows = ctx.app.store.read(move |c| store::routes(c, &filter)).await?;
    let rows: Vec<_> = rows.into_iter().filter(|r| lq.keeps(&r.api_route)).collect();
    Ok(lq.answer(
        &ctx,
        rows,
        |r, k| match k {
            "http_method" => Key::Text(&r.http_method),
            "api_route" => Key::Text(&r.api_route),
            _ => stats_key(&r.stats, k).unwrap_or(Key::Int(0)),
        },
        |a, b| (&a.api_route, &a.http_method).cmp(&(&b.api_route, &b.http_method)),
        |r| ApiInsightsRouteStats { http_method: r.http_method.clone(), api_route: r.api_route.clone(), stats: (&r.stats).into() },
    ))
}

async fn subject_stats(ctx: Ctx, Query(q): Query<SubjectQuery>) -> ApiResult<Reply> {
    let filter = prepare(&ctx, &q.window).await?;
    let lq = list_query(q.sort, q.direction, q.page, q.subject_name_substring);
    let rows = ctx.app.store.read(move |c| store::subjects(c, &filter)).await?;
    let rows: Vec<_> = rows.into_iter().filter(|r| lq.keeps(&r.subject_name)).collect();
    Ok(lq.answer(
        &ctx,
        rows,
        |r, k| match k {
            "subject_name" => Key::Text(&r.subject_name),
            _ => stats_key(&r.stats, k).unwrap_or(Key::Int(0)),
        },
        |a, b| (&a.subject_type, a.subject_id).cmp(&(&b.subject_type, b.subject_id)),
        |r| ApiInsightsSubjectStats {
            subject_type: r.subject_type.clone(),
            subject_name: r.subject_name.clone(),
            subject_id: r.subject_id,
            stats: (&r.stats).into(),
        },
    ))
}

async fn user_stats(ctx: Ctx, Query(q): Query<UserQuery>) -> ApiResult<Reply> {
    let filter = prepare(&ctx, &q.window).await?;
    let lq = list_query(q.sort, q.direction, q.page, q.actor_name_substring);
    let rows = ctx.app.store.read(move |c| store::actors(c, &filter)).await?;
    let rows: Vec<_> = rows.into_iter().filter(|r| lq.keeps(&r.actor_name)).collect();
    Ok(lq.answer(
        &ctx,
        rows,
        // `subject_name` sorts by the actor's name: the user-stats rows name actors.
        |r, k| match k {
            "subject_name" => Key::Text(&r.actor_name),
            _ => stats_key(&r.stats, k).unwrap_or(Key::Int(0)),
        },
        |a, b| (&a.actor_type, a.actor_id).cmp(&(&b.actor_type, b.actor_id)),
        |r| ApiInsightsUserStats {
            actor_type: r.actor_type.clone(),
            actor_name: r.actor_name.clone(),
            actor_id: r.actor_id,
            integration_id: r.integration_id,
            oauth_application_id: r.oauth_application_id,
            stats: (&r.stats).into(),
        },
    ))
}

async fn summary(ctx: Ctx, Query(w): Query<Window>) -> ApiResult<Reply> {
    let filter = prepare(&ctx, &w).await?;
    let (total, limited) = ctx.app.store.read(move |c| store::summary(c, &filter)).await?;
    Ok(Reply::ok(ApiInsightsSummaryStats { total_request_count: total, rate_limited_request_count: limited }))
}

async fn time_stats(ctx: Ctx, Query(q): Query<TimeQuery>) -> ApiResult<Reply> {
    let filter = prepare(&ctx, &q.window).await?;
    let step = increment(&q.timestamp_increment)?;
    let first = filter.from.div_euclid(step) * step;
    let count = if filter.until > filter.from { (filter.until - 1 - first).div_euclid(step) + 1 } else { 0 };
    if count > MAX_BUCKETS {
        return Err(ApiError::invalid_request(format!(
            "The window holds {count} buckets of 'timestamp_increment'; at most {MAX_BUCKETS} are served."
        )));
    }
    let found = ctx.app.store.read(move |c| store::buckets(c, &filter, step)).await?;
    let mut found = found.into_iter().peekable();
    let mut body = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = first + i * step;
        let (total, limited) = match found.next_if(|(b, _, _)| *b == at) {
            Some((_, t, l)) => (t, l),
            None => (0, 0),
        };
        body.push(ApiInsightsTimeStats { timestamp: Timestamp(at), total_request_count: total, rate_limited_request_count: limited });
    }
    Ok(Reply::ok(body))
}

#[cfg(test)]
mod tests {
    /// Hand-written parser: never panics, answers a duration or a 422.
    #[test]
    fn increment_never_panics() {
        for s in platform_core::fuzz::strings(&["5m", "1h", "30d", "9999d", "1é"], 20_000, 2) {
            if let Ok(n) = super::increment(&s) {
                assert!(n > 0 && s.is_ascii(), "{s:?}");
            }
        }
    }

    use super::*;

    #[test]
    fn timestamps_are_strict() {
        assert_eq!(timestamp("t", "2024-09-11T15:00:00Z").unwrap(), 1_726_066_800);
        for bad in ["2024-09-11T15:00:00", "2024-09-11 15:00:00Z", "2024-09-11T15:00:00.5Z", "2024-13-11T15:00:00Z", "x", ""] {
            assert_eq!(timestamp("t", bad).unwrap_err().status, 422, "{bad}");
        }
    }

    #[test]
    fn increments() {
        assert_eq!(increment("5m").unwrap(), 300);
        assert_eq!(increment("1h").unwrap(), 3_600);
        assert_eq!(increment("1d").unwrap(), 86_400);
        for bad in ["0m", "5", "5s", "05m", "+5m", "m", "", "10000m", "1.5h"] {
            assert!(increment(bad).is_err(), "{bad}");
        }
    }
}
