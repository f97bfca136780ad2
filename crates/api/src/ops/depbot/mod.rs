//! Dependency alerts (document 3): the enterprise, organization and repository lists with every
//! filter of api-facts §5.1 and cursor pagination, get one alert, and update (dismiss, reopen,
//! assignees). Repository alerts need push access (or the organization's security manager
//! role) and the Dependency-bot alerts permission; organization lists its owners and security
//! managers; the enterprise list classic (scope) tokens of its members, showing only
//! organizations they own or manage.
pub mod alerts;

use base64::Engine;
use platform_core::pagination::Page;
use platform_core::TokenKind;
use platform_store::domain::depbot::{self, Alert, Assignee, Change, Epss, Filter, Position, Sort, Within};
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::{accounts, security_managers};
use platform_store::{DbError, Value as SqlValue};
use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::input::{by_handler, checked_by_handler, comma_list};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{encode_query, BodyValue, Ctx, Query};
use alerts::{
    depbot_alert, render_list, DepbotAlert, DepbotAlertWithRepository, CLASSIFICATIONS, DISMISSED_REASONS, ECOSYSTEMS,
    SCOPES as DEP_SCOPES, SEVERITIES, STATES,
};

const SCOPES: &[&str] = &["repo", "security_events"];
const PERMISSION: &str = "vulnerability_alerts";

/// Repository alerts: the permission at `level`, and push access to the repository.
const fn repo_access(level: Level) -> Access {
    Access::token(SCOPES, Some((PERMISSION, level)), Level::Write)
}
const ORG_ACCESS: Access = Access::token(SCOPES, Some((PERMISSION, Level::Read)), Level::Read);
/// Classic (scope) tokens only: no fine-grained permission grants it.
const ENTERPRISE_ACCESS: Access = Access::token(SCOPES, None, Level::Read).only(&[TokenKind::Classic, TokenKind::Oauth]);

/// The filters, order and cursors of every alert list (api-facts §5.1). Values the contract does
/// not check it passes as sent: `filter` and `order` answer these operations' own messages.
#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    /// Comma-separated states: `auto_dismissed`, `dismissed`, `fixed`, `open`.
    #[schemars(extend("pattern" = "^$|^(auto_dismissed|dismissed|fixed|open)(,(auto_dismissed|dismissed|fixed|open))*$"))]
    state: Option<String>,
    /// Comma-separated severities: `low`, `medium`, `high`, `critical`.
    #[schemars(extend("pattern" = "^$|^(low|medium|high|critical)(,(low|medium|high|critical))*$"))]
    severity: Option<String>,
    /// Comma-separated ecosystems: `composer`, `go`, `maven`, `npm`, `nuget`, `pip`, `pub`, `rubygems`, `rust`.
    #[schemars(extend(
        "pattern" = "^$|^(composer|go|maven|npm|nuget|pip|pub|rubygems|rust)(,(composer|go|maven|npm|nuget|pip|pub|rubygems|rust))*$"
    ))]
    ecosystem: Option<String>,
    /// Comma-separated package names.
    package: Option<String>,
    /// Comma-separated advisory classifications: `malware`, `general`.
    #[schemars(extend("pattern" = "^$|^(malware|general)(,(malware|general))*$"))]
    classification: Option<String>,
    /// `n`, `>n`, `<n`, `>=n`, `<=n` or `n..n`, n in 0.0–1.0.
    #[schemars(extend(
        "pattern" = r"^$|^((>=|<=|>|<)?(0(\.[0-9]{1,6})?|1(\.0{1,6})?)|(0(\.[0-9]{1,6})?|1(\.0{1,6})?)\.\.(0(\.[0-9]{1,6})?|1(\.0{1,6})?))$"
    ))]
    epss_percentage: Option<String>,
    /// `patch`: only alerts with a patched version.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("pattern" = "^$|^patch(,patch)*$"), transform = comma_list)]
    has: Vec<String>,
    /// Comma-separated logins; `*` any assignee, `none` no assignee.
    assignee: Option<String>,
    /// Dependency scope.
    #[schemars(extend("enum" = ["development", "runtime"]), transform = checked_by_handler)]
    scope: Option<String>,
    /// Comma-separated relationships (`unknown`, `direct`, `transitive`, `inconclusive`).
    relationship: Option<String>,
    /// Order (default `created`).
    #[schemars(extend("enum" = ["created", "updated", "epss_percentage"]), transform = checked_by_handler)]
    sort: Option<String>,
    /// Direction (default `desc`).
    #[schemars(extend("enum" = ["asc", "desc"]), transform = checked_by_handler)]
    direction: Option<String>,
    /// Cursor from a `Link` header: the page before it.
    before: Option<String>,
    /// Cursor from a `Link` header: the page after it.
    after: Option<String>,
    /// Results per page (max 100).
    per_page: Option<i64>,
    /// Not published: these lists have no pages (`position` refuses it).
    #[schemars(skip)]
    page: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct OrgQuery {
    #[serde(flatten)]
    list: ListQuery,
    /// Comma-separated: `critical-resource`, `internet-exposed`, `sensitive-data`, `lateral-movement`.
    #[schemars(extend(
        "pattern" = "^$|^(critical-resource|internet-exposed|sensitive-data|lateral-movement)(,(critical-resource|internet-exposed|sensitive-data|lateral-movement))*$"
    ))]
    runtime_risk: Option<String>,
    /// Comma-separated artifact registry URLs.
    artifact_registry_url: Option<String>,
    /// Artifact registry product.
    artifact_registry: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct RepoQuery {
    #[serde(flatten)]
    list: ListQuery,
    /// Comma-separated manifest paths.
    manifest: Option<String>,
}

pub static LIST_FOR_ENTERPRISE: Operation = Operation::get(
    "depbot-alerts/list-for-enterprise",
    "/enterprises/{enterprise}/depbot/alerts",
    "List dependency alerts for an enterprise",
)
.docs("https://docs.service.example/rest/depbot/alerts#list-depbot-alerts-for-an-enterprise")
.access(ENTERPRISE_ACCESS)
.on(On::EnterpriseMember)
.cached()
.responds(&[Resp::typed::<Vec<DepbotAlertWithRepository>>(
    200,
    "Alerts of the organizations the caller owns or manages (cursor pagination).",
)
.with_headers(&["Link"])]);

pub static LIST_FOR_ORG: Operation =
    Operation::get("depbot-alerts/list-for-org", "/orgs/{org}/depbot/alerts", "List dependency alerts for an organization")
        .docs("https://docs.service.example/rest/depbot/alerts#list-depbot-alerts-for-an-organization")
        .access(ORG_ACCESS)
        .on(On::OrgOwnerOrSecurityManager)
        .cached()
        .responds(&[
            Resp::typed::<Vec<DepbotAlertWithRepository>>(200, "The organization's alerts (cursor pagination).").with_headers(&["Link"])
        ]);

pub static LIST_FOR_REPO: Operation =
    Operation::get("depbot-alerts/list-for-repo", "/repos/{owner}/{repo}/depbot/alerts", "List dependency alerts for a repository")
        .docs("https://docs.service.example/rest/depbot/alerts#list-depbot-alerts-for-a-repository")
        .access(repo_access(Level::Read))
        .cached()
        .responds(&[Resp::typed::<Vec<DepbotAlert>>(200, "The repository's alerts (cursor pagination).").with_headers(&["Link"])]);

pub static GET: Operation =
    Operation::get("depbot-alerts/get", "/repos/{owner}/{repo}/depbot/alerts/{alert_number}", "Get a dependency alert")
        .docs("https://docs.service.example/rest/depbot/alerts#get-a-depbot-alert")
        .access(repo_access(Level::Read))
        .responds(&[Resp::typed::<DepbotAlert>(200, "The alert.")]);

pub static UPDATE: Operation =
    Operation::patch("depbot-alerts/update", "/repos/{owner}/{repo}/depbot/alerts/{alert_number}", "Update a dependency alert")
        .docs("https://docs.service.example/rest/depbot/alerts#update-a-depbot-alert")
        .access(repo_access(Level::Write))
        // Read by `check_update`, which answers these operations' own messages.
        .resource("DepbotAlert")
        .responds(&[Resp::typed::<DepbotAlert>(200, "The updated alert.")]);

const AGENT_ASSIGNMENT: &str = r#"{"type": "object", "additionalProperties": false, "properties": {"custom_instructions": {"type": "string"}, "custom_agent": {"type": "string"}, "model": {"type": "string"}}}"#;

// An alert update. Its fields take any JSON (`Sent`) so that `check_update` answers these
// operations' own messages (ValidationErrorSimple), in its order, instead of the common checks.
#[derive(Deserialize, JsonSchema)]
struct UpdateAlert {
    #[serde(default)]
    #[schemars(extend("enum" = ["dismissed", "open"]))]
    state: Sent<String>,
    #[serde(default)]
    #[schemars(extend("enum" = DISMISSED_REASONS))]
    dismissed_reason: Sent<String>,
    #[serde(default)]
    #[schemars(length(max = 280))]
    dismissed_comment: Sent<String>,
    #[serde(default)]
    assignees: Sent<Vec<String>>,
    #[serde(default)]
    #[schemars(schema_with = "agent_assignment_schema")]
    agent_assignment: Sent<Value>,
}

/// A field of an alert update as sent: absent, a `T`, or another JSON value (null included).
#[derive(Default)]
enum Sent<T> {
    #[default]
    Absent,
    Valid(T),
    Invalid(Value),
}

impl<T> Sent<T> {
    fn is_absent(&self) -> bool {
        matches!(self, Sent::Absent)
    }
    /// The value; `check_update` has refused an invalid one.
    fn valid(self) -> Option<T> {
        match self {
            Sent::Valid(t) => Some(t),
            _ => None,
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Sent<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match serde_json::from_value(v.clone()) {
            Ok(t) => Sent::Valid(t),
            Err(_) => Sent::Invalid(v),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Sent<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(g: &mut SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}

fn agent_assignment_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(AGENT_ASSIGNMENT)
}

pub fn routes(api: Api) -> Api {
    api.op(&LIST_FOR_ENTERPRISE, list_for_enterprise)
        .op(&LIST_FOR_ORG, list_for_org)
        .op(&LIST_FOR_REPO, list_for_repo)
        .op(&GET, get)
        .op(&UPDATE, update)
}

/// 422 with ValidationErrorSimple's `errors` (an array of strings), as these operations answer.
fn unprocessable(message: impl Into<String>) -> ApiError {
    ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed").with_errors(json!([message.into()]))
}

// ---------------------------------------------------------------------------------------------
// Query parsing.

/// A comma-separated list parameter, each value from `allowed` (when given).
fn list_param(name: &str, raw: &Option<String>, allowed: Option<&[&str]>) -> ApiResult<Vec<String>> {
    let Some(raw) = raw else { return Ok(Vec::new()) };
    let values: Vec<String> = raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    if let Some(allowed) = allowed {
        if let Some(bad) = values.iter().find(|v| !allowed.contains(&v.as_str())) {
            return Err(unprocessable(format!(
                "{name} has an invalid value {bad:?}: use a comma-separated list of {}",
                allowed.join(", ")
            )));
        }
    }
    Ok(values)
}

fn epss_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|n| (0.0..=1.0).contains(n))
}

/// `n`, `>n`, `<n`, `>=n`, `<=n` or `n..n`, n in 0.0–1.0.
fn parse_epss(s: &str) -> Option<Epss> {
    if let Some((lo, hi)) = s.split_once("..") {
        // A reversed range is valid and matches nothing.
        return Some(Epss::Range(epss_number(lo)?, epss_number(hi)?));
    }
    for op in [">=", "<=", ">", "<"] {
        if let Some(n) = s.strip_prefix(op) {
            return Some(Epss::Cmp(op, epss_number(n)?));
        }
    }
    Some(Epss::Cmp("=", epss_number(s)?))
}

/// Sort and direction of a list.
fn order(q: &ListQuery) -> ApiResult<(Sort, bool)> {
    let sort = match q.sort.as_deref() {
        None | Some("created") => Sort::Created,
        Some("updated") => Sort::Updated,
        Some("epss_percentage") => Sort::Epss,
        Some(other) => return Err(unprocessable(format!("sort {other:?} is not one of created, updated, epss_percentage"))),
    };
    let desc = match q.direction.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => return Err(unprocessable(format!("direction {other:?} is not one of asc, desc"))),
    };
    Ok((sort, desc))
}

/// What a list filters by beyond the common filters.
enum Extra<'a> {
    None,
    /// Repository lists: `manifest`.
    Repo(&'a RepoQuery),
    /// Organization lists: runtime risk and artifact registries, which no alert has.
    Org(&'a OrgQuery),
}

/// The filters of api-facts §5.1 (and `manifest` on repository lists); `None` when they can
/// match no alert.
async fn filter(ctx: &Ctx, q: &ListQuery, extra: &Extra<'_>) -> ApiResult<Option<Filter>> {
    let mut f = Filter {
        states: list_param("state", &q.state, Some(&STATES))?,
        severities: list_param("severity", &q.severity, Some(&SEVERITIES))?,
        ecosystems: list_param("ecosystem", &q.ecosystem, Some(&ECOSYSTEMS))?,
        classifications: list_param("classification", &q.classification, Some(&CLASSIFICATIONS))?,
        packages: list_param("package", &q.package, None)?,
        relationships: list_param("relationship", &q.relationship, None)?,
        ..Filter::default()
    };
    if let Extra::Repo(r) = extra {
        f.manifests = list_param("manifest", &r.manifest, None)?;
    }
    f.scope = match q.scope.as_deref() {
        None | Some("") => None,
        Some(s) if DEP_SCOPES.contains(&s) => Some(s.to_string()),
        Some(s) => return Err(unprocessable(format!("scope {s:?} is not one of development, runtime"))),
    };
    f.epss = match q.epss_percentage.as_deref() {
        None | Some("") => None,
        Some(s) => Some(parse_epss(s).ok_or_else(|| {
            unprocessable(format!("epss_percentage {s:?} must be n, >n, <n, >=n, <=n or n..n with n between 0.0 and 1.0"))
        })?),
    };
    // `has` is a string or a repeated array; an alert must have every value (only `patch` exists).
    for value in &q.has {
        if value != "patch" {
            return Err(unprocessable(format!("has {value:?} is not one of patch")));
        }
        f.has_patch = true;
    }
    if let Some(raw) = q.assignee.as_ref().filter(|r| r.split(',').any(|v| !v.trim().is_empty())) {
        let mut a = Assignee::default();
        let mut logins = Vec::new();
        for v in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match v {
                "*" => a.any = true,
                "none" => a.none = true,
                login => logins.push(login.to_string()),
            }
        }
        // Unknown logins match nothing.
        a.user_ids = ctx
            .app
            .store
            .read(move |c| -> Result<Vec<i64>, DbError> {
                let mut ids = Vec::new();
                for l in &logins {
                    if let Some(u) = accounts::by_login(c, l)? {
                        ids.push(u.id);
                    }
                }
                Ok(ids)
            })
            .await?;
        f.assignee = Some(a);
    }
    if let Extra::Org(o) = extra {
        list_param(
            "runtime_risk",
            &o.runtime_risk,
            Some(&["critical-resource", "internet-exposed", "sensitive-data", "lateral-movement"]),
        )?;
        // No alert has runtime-risk or artifact-registry data: these filters match nothing.
        if [&o.runtime_risk, &o.artifact_registry_url, &o.artifact_registry].iter().any(|p| p.as_ref().is_some_and(|v| !v.is_empty())) {
            return Ok(None);
        }
    }
    Ok(Some(f))
}

// ---------------------------------------------------------------------------------------------
// Cursor pagination.

const CURSOR_VERSION: &str = "v1";

fn encode_cursor(sort: Sort, a: &Alert) -> String {
    let key = match sort.key(a) {
        SqlValue::Float(f) => format!("f{f}"),
        SqlValue::Int(i) => format!("i{i}"),
        _ => String::new(),
    };
    let raw = format!("{CURSOR_VERSION}:{}:{key}:{}", sort_name(sort), a.id);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn sort_name(s: Sort) -> &'static str {
    match s {
        Sort::Created => "created",
        Sort::Updated => "updated",
        Sort::Epss => "epss_percentage",
    }
}

/// Decodes a cursor of the same sort; anything else is `None`.
fn decode_cursor(sort: Sort, text: &str) -> Option<(SqlValue, i64)> {
    let raw = String::from_utf8(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?).ok()?;
    let mut it = raw.split(':');
    if it.next()? != CURSOR_VERSION || it.next()? != sort_name(sort) {
        return None;
    }
    let key = it.next()?;
    let id = it.next()?.parse::<i64>().ok()?;
    let key = match (sort, key.split_at_checked(1)?) {
        (Sort::Epss, ("f", f)) => SqlValue::Float(f.parse::<f64>().ok().filter(|f| f.is_finite())?),
        (Sort::Created | Sort::Updated, ("i", i)) => SqlValue::Int(i.parse().ok()?),
        _ => return None,
    };
    Some((key, id))
}

/// `before`/`after` of the request; `page` is refused (these lists have no pages, and a client
/// paging by number would loop on the first page forever).
fn position(q: &ListQuery, sort: Sort, bad: fn(String) -> ApiError) -> ApiResult<Option<Position>> {
    if q.page.is_some() {
        return Err(bad("Pagination with `page` is not supported here: follow the `before`/`after` cursors of the Link header.".into()));
    }
    let before = q.before.as_deref().filter(|s| !s.is_empty());
    let after = q.after.as_deref().filter(|s| !s.is_empty());
    let (text, is_before) = match (before, after) {
        (Some(_), Some(_)) => return Err(bad("Send either `before` or `after`, not both.".into())),
        (Some(b), None) => (b, true),
        (None, Some(a)) => (a, false),
        (None, None) => return Ok(None),
    };
    let (key, id) = decode_cursor(sort, text)
        .ok_or_else(|| bad(format!("Invalid cursor {text:?}: use the cursors of the Link header (with the same sort).")))?;
    Ok(Some(Position { key, id, before: is_before }))
}

/// One page of alerts and its `Link` header: `next` when more follow, `prev` when alerts come
/// before, `first` once paging started. No `last`: cursors cannot compute it.
/// One page of alerts: the alerts, their repositories (each loaded once, in the same read) when
/// the list spans several, and its `Link` header.
struct AlertPage {
    rows: Vec<Alert>,
    repos: Vec<Repo>,
    link: Option<String>,
    /// The store generation the page was read at (rendered alerts are kept under it).
    generation: Option<u64>,
}

async fn page(ctx: &Ctx, q: &ListQuery, extra: Extra<'_>, within: Within, bad: fn(String) -> ApiError) -> ApiResult<AlertPage> {
    let (sort, desc) = order(q)?;
    let at = position(q, sort, bad)?;
    let generation = ctx.generation();
    let Some(f) = filter(ctx, q, &extra).await? else {
        return Ok(AlertPage { rows: Vec::new(), repos: Vec::new(), link: None, generation });
    };
    let per_page = Page::of(None, q.per_page, 30, 100).per_page;
    let from = at.clone();
    let reach = crate::authorize::reach(&ctx.principal, &ctx.op.access);
    let (mut rows, repos) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let rows = depbot::list(c, &within, &reach, &f, sort, desc, from.as_ref(), per_page + 1)?;
            let mut ids: Vec<i64> = match within {
                Within::Orgs(_) => rows.iter().map(|a| a.repo_id).collect(),
                Within::Repo(_) => Vec::new(),
            };
            ids.sort_unstable();
            ids.dedup();
            let repos = ids.iter().filter_map(|id| repos::by_id(c, *id).transpose()).collect::<Result<Vec<Repo>, _>>()?;
            Ok((rows, repos))
        })
        .await?;
    let more = rows.len() as i64 > per_page;
    let backwards = at.as_ref().is_some_and(|p| p.before);
    if more {
        // The extra row is past the page's far end: the last one, or (backwards) the first.
        if backwards {
            rows.remove(0);
        } else {
            rows.pop();
        }
    }
    let url = |k: Option<(&str, String)>| {
        let mut q: Vec<(String, String)> = ctx.query_pairs().iter().filter(|(k, _)| k != "before" && k != "after").cloned().collect();
        if let Some((name, c)) = k {
            q.push((name.to_string(), c));
        }
        if q.is_empty() {
            format!("{}{}", ctx.app.urls.api, ctx.path)
        } else {
            format!("{}{}?{}", ctx.app.urls.api, ctx.path, encode_query(&q))
        }
    };
    let mut links = Vec::new();
    let (has_prev, has_next) = match &at {
        None => (false, more),
        Some(p) if p.before => (more, true),
        Some(_) => (true, more),
    };
    if let (true, Some(first)) = (has_prev, rows.first()) {
        links.push(format!("<{}>; rel=\"prev\"", url(Some(("before", encode_cursor(sort, first))))));
    }
    if let (true, Some(last)) = (has_next, rows.last()) {
        links.push(format!("<{}>; rel=\"next\"", url(Some(("after", encode_cursor(sort, last))))));
    }
    if at.is_some() {
        links.push(format!("<{}>; rel=\"first\"", url(None)));
    }
    Ok(AlertPage { rows, repos, link: (!links.is_empty()).then(|| links.join(", ")), generation })
}

/// A list of alerts of several repositories, each with its repository.
fn with_repos(ctx: &Ctx, p: AlertPage) -> Reply {
    let body = render_list(&ctx.app, p.generation, ctx.version, &p.rows, |a| p.repos.iter().find(|r| r.id == a.repo_id), true);
    Reply::ok_serialized(body).opt_header("link", p.link)
}

// ---------------------------------------------------------------------------------------------
// Handlers.

/// Scope (classic and OAuth) tokens of the enterprise's members: the alerts of the
/// organizations they own or manage.
async fn list_for_enterprise(ctx: Ctx, Query(q): Query<ListQuery>) -> ApiResult<Reply> {
    let (ent_id, user_id) = (ctx.enterprise().ent.id, ctx.enterprise().user.id);
    let orgs = ctx.app.store.read(move |c| security_managers::managed_orgs(c, ent_id, user_id)).await?;
    Ok(with_repos(&ctx, page(&ctx, &q, Extra::None, Within::Orgs(orgs), unprocessable).await?))
}

async fn list_for_org(ctx: Ctx, Query(q): Query<OrgQuery>) -> ApiResult<Reply> {
    let within = Within::Orgs(vec![ctx.org().org.id]);
    Ok(with_repos(&ctx, page(&ctx, &q.list, Extra::Org(&q), within, ApiError::bad_request).await?))
}

async fn list_for_repo(ctx: Ctx, Query(q): Query<RepoQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let p = page(&ctx, &q.list, Extra::Repo(&q), Within::Repo(repo.id), ApiError::bad_request).await?;
    let body = render_list(&ctx.app, p.generation, ctx.version, &p.rows, |_| Some(repo), false);
    Ok(Reply::ok_serialized(body).opt_header("link", p.link))
}

/// The path's alert; 404 when there is none.
async fn load(ctx: &Ctx) -> ApiResult<Alert> {
    let number = ctx.param("alert_number").parse::<i64>().map_err(|_| ApiError::not_found())?;
    let id = ctx.repo().id;
    ctx.app.store.read(move |c| depbot::get(c, id, number)).await?.ok_or_else(ApiError::not_found)
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let alert = load(&ctx).await?;
    Ok(Reply::ok(depbot_alert(&ctx.app.urls, ctx.version, ctx.repo(), &alert)))
}

/// Validates an update body (api-facts §1.10): `state` or `assignees` required, no other keys
/// than the five, the dismissal rules. Every refusal is a 422 with string `errors`.
fn check_update(keys: &[String], b: &UpdateAlert) -> ApiResult<()> {
    const KEYS: [&str; 5] = ["state", "dismissed_reason", "dismissed_comment", "assignees", "agent_assignment"];
    if let Some(k) = keys.iter().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(unprocessable(format!(
            "{k:?} is not a permitted key: send state, dismissed_reason, dismissed_comment, assignees or agent_assignment"
        )));
    }
    if b.state.is_absent() && b.assignees.is_absent() {
        return Err(unprocessable("The body must contain state or assignees."));
    }
    let string = |k: &str, v: &Sent<String>| -> ApiResult<Option<String>> {
        match v {
            Sent::Absent => Ok(None),
            Sent::Valid(s) => Ok(Some(s.clone())),
            Sent::Invalid(other) => Err(unprocessable(format!("{k} must be a string, not {other}"))),
        }
    };
    let state = string("state", &b.state)?;
    let state = state.as_deref();
    if let Some(s) = state {
        if s != "dismissed" && s != "open" {
            return Err(unprocessable(format!("state {s:?} is not one of dismissed, open")));
        }
    }
    match string("dismissed_reason", &b.dismissed_reason)?.as_deref() {
        Some(r) if !DISMISSED_REASONS.contains(&r) => {
            return Err(unprocessable(format!("dismissed_reason {r:?} is not one of {}", DISMISSED_REASONS.join(", "))))
        }
        Some(_) if state != Some("dismissed") => return Err(unprocessable("dismissed_reason is only allowed when state is dismissed.")),
        None if state == Some("dismissed") => return Err(unprocessable("dismissed_reason is required when state is dismissed.")),
        _ => {}
    }
    match string("dismissed_comment", &b.dismissed_comment)? {
        Some(c) if c.chars().count() > 280 => return Err(unprocessable("dismissed_comment is too long (maximum is 280 characters).")),
        Some(_) if state != Some("dismissed") => return Err(unprocessable("dismissed_comment is only allowed when state is dismissed.")),
        _ => {}
    }
    if let Sent::Invalid(_) = b.assignees {
        return Err(unprocessable("assignees must be an array of logins."));
    }
    if let Sent::Valid(a) | Sent::Invalid(a) = &b.agent_assignment {
        let Some(obj) = a.as_object() else { return Err(unprocessable("agent_assignment must be an object.")) };
        for (k, v) in obj {
            if !["custom_instructions", "custom_agent", "model"].contains(&k.as_str()) {
                return Err(unprocessable(format!(
                    "agent_assignment has an unknown key {k:?}: use custom_instructions, custom_agent, model"
                )));
            }
            if !v.is_string() {
                return Err(unprocessable(format!("agent_assignment.{k} must be a string")));
            }
        }
    }
    Ok(())
}

async fn update(ctx: Ctx, body: BodyValue<UpdateAlert>) -> ApiResult<Reply> {
    let alert = load(&ctx).await?;
    let keys: Vec<String> = body.value.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let b = body.deserialize()?;
    check_update(&keys, &b)?;
    // A withdrawn advisory's alert is gone for good; only open and dismissed alerts change state.
    if alert.advisory_withdrawn_at.is_some() {
        return Err(ApiError::new(
            axum::http::StatusCode::GONE,
            "This alert's advisory was withdrawn; the alert can no longer be changed.",
        ));
    }
    let state = b.state.valid();
    if state.is_some() && (alert.state == "fixed" || alert.state == "auto_dismissed") {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            format!("The alert is {}: only open and dismissed alerts can be dismissed or reopened.", alert.state),
        ));
    }
    let (reason, comment, logins, agent) =
        (b.dismissed_reason.valid(), b.dismissed_comment.valid(), b.assignees.valid(), b.agent_assignment.valid());
    let by = ctx.principal.user().map(|u| u.id);
    let (repo_id, number, now) = (ctx.repo().id, alert.number, ctx.app.clock.now());
    let (repo, u) = (ctx.repo().clone(), ctx.app.urls.clone());
    let updated = ctx
        .write(move |c| -> ApiResult<Alert> {
            let alert = depbot::locked(c, repo_id, number)?.ok_or_else(ApiError::not_found)?;
            let users = match &logins {
                Some(logins) => {
                    let mut ids = Vec::new();
                    for l in logins {
                        let u = accounts::by_login(c, l)?.filter(|u| !u.is_org());
                        match u {
                            Some(u) if depbot::may_see(c, repo_id, u.id)? => ids.push(u.id),
                            _ => {
                                return Err(unprocessable(format!(
                                    "{l:?} cannot be assigned: not a user with access to this repository's alerts."
                                )))
                            }
                        }
                    }
                    Some(ids)
                }
                None => None,
            };
            let ch = Change {
                state: state.as_deref().map(|s| (s, reason.as_deref(), comment.as_deref())),
                assignees: users.as_deref(),
                agent_assignment: agent.as_ref(),
            };
            depbot::update(c, &alert, by, &ch, now)?;
            let updated = depbot::get(c, repo_id, number)?.ok_or_else(ApiError::not_found)?;
            // A dismissal or a reopening is activity (the `depbot_alert` webhook).
            let action = match (alert.state.as_str(), updated.state.as_str()) {
                ("open", "dismissed") => Some("dismissed"),
                ("dismissed", "open") => Some("reopened"),
                _ => None,
            };
            if let Some(action) = action {
                alerts::record(c, &u, &repo, &updated, action, by, now)?;
            }
            Ok(updated)
        })
        .await?;
    Ok(Reply::ok(depbot_alert(&ctx.app.urls, ctx.version, ctx.repo(), &updated)))
}

/// The control plane's part: alerts created one at a time (`alerts`).
pub fn control(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    r.route("/repos/{owner}/{repo}/depbot/alerts", axum::routing::post(alerts::admin_create))
}

#[cfg(test)]
mod tests {
    /// Cursors come from clients: any text decodes to a position or to nothing.
    #[test]
    fn cursors_never_panic() {
        use base64::Engine;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let seeds: Vec<String> = ["v1:created:i1773100800:5", "v1:epss:f0.5:3", "v1:updated:i0:1"].iter().map(|s| enc(s)).collect();
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).chain(["v1:created:i1:1", ":::"]).collect();
        for s in platform_core::fuzz::strings(&seeds, 20_000, 3) {
            for sort in [super::Sort::Created, super::Sort::Updated, super::Sort::Epss] {
                let _ = super::decode_cursor(sort, &s);
                let _ = super::decode_cursor(sort, &enc(&s));
            }
        }
    }

    use super::*;

    #[test]
    fn epss_syntax() {
        assert_eq!(parse_epss("0.5"), Some(Epss::Cmp("=", 0.5)));
        assert_eq!(parse_epss(">=0.25"), Some(Epss::Cmp(">=", 0.25)));
        assert_eq!(parse_epss("<1"), Some(Epss::Cmp("<", 1.0)));
        assert_eq!(parse_epss("0.1..0.9"), Some(Epss::Range(0.1, 0.9)));
        for bad in ["", ">", "1.5", "-0.1", "0.1..", "..0.2", "=>0.1", "abc", "0.1..0.2..0.3"] {
            assert_eq!(parse_epss(bad), None, "{bad}");
        }
    }

    fn alert(created: i64, epss: f64) -> Alert {
        Alert {
            id: 42,
            repo_id: 1,
            number: 1,
            state: "open".into(),
            ecosystem: "npm".into(),
            package: "p".into(),
            manifest_path: "m".into(),
            scope: None,
            relationship: None,
            epss_percentage: epss,
            vulnerability: "null".into(),
            advisory: "null".into(),
            advisory_withdrawn_at: None,
            created_at: created,
            updated_at: created,
            dismissed_at: None,
            dismissed_by: None,
            dismissed_reason: None,
            dismissed_comment: None,
            fixed_at: None,
            auto_dismissed_at: None,
            assignees: Vec::new(),
        }
    }

    #[test]
    fn cursors_round_trip_per_sort() {
        let a = alert(1_700_000_000, 0.123456789);
        let c = encode_cursor(Sort::Created, &a);
        assert_eq!(decode_cursor(Sort::Created, &c), Some((SqlValue::Int(1_700_000_000), 42)));
        assert_eq!(decode_cursor(Sort::Updated, &c), None, "a cursor belongs to its sort");
        let e = encode_cursor(Sort::Epss, &a);
        assert_eq!(decode_cursor(Sort::Epss, &e), Some((SqlValue::Float(0.123456789), 42)), "float keys are exact");
        for bad in ["", "x", "djE6", "!!!"] {
            assert_eq!(decode_cursor(Sort::Created, bad), None);
        }
    }
}
