//! `GET /`, `GET /meta` and `GET /rate_limit`.
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Limits, Operation, Resp};
use crate::ratelimit::{Quota, Resource};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::Ctx;
use crate::versions;

pub static ROOT: Operation = Operation::get("meta/root", "/", "API root")
    .docs("https://docs.service.example/rest/meta/meta#service-api-root")
    .access(Access::any())
    .responds(&[Resp::typed::<Root>(200, "URL templates of the API.")]);

pub static RATE_LIMIT: Operation = Operation::get("rate-limit/get", "/rate_limit", "Get rate limit status for the authenticated user")
    .docs("https://docs.service.example/rest/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user")
    .access(Access::any())
    .limits(Limits::Report)
    .responds(&[Resp::typed::<RateLimitOverview>(200, "The caller's rate-limit buckets; never charged.")]);

pub static META: Operation = Operation::get("meta/get", "/meta", "Get service meta information")
    .docs("https://docs.service.example/rest/meta/meta#get-service-meta-information")
    .access(Access::any())
    .cached()
    .responds(&[Resp::typed::<ApiOverview>(200, "What the service is: its domains and the addresses it serves and calls from.")]);

pub fn routes(api: Api) -> Api {
    api.op(&ROOT, root).op(&META, meta).op(&RATE_LIMIT, rate_limit)
}

/// api-overview: the service's addresses by what uses them, and its domains. A local server
/// serves and delivers webhooks from loopback; no other ranges are claimed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ApiOverview {
    /// Password authentication over git and the API is never accepted.
    pub verifiable_password_authentication: bool,
    pub hooks: Vec<String>,
    pub web: Vec<String>,
    pub api: Vec<String>,
    pub git: Vec<String>,
    pub enterprise_importer: Vec<String>,
    pub packages: Vec<String>,
    pub pages: Vec<String>,
    pub importer: Vec<String>,
    pub actions: Vec<String>,
    pub actions_macos: Vec<String>,
    pub devenvs: Vec<String>,
    pub depbot: Vec<String>,
    pub assistant: Vec<String>,
    pub domains: MetaDomains,
}

/// The domains clients and firewalls allow, by use.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MetaDomains {
    pub website: Vec<String>,
    pub devenvs: Vec<String>,
    pub assistant: Vec<String>,
    pub packages: Vec<String>,
    pub actions: Vec<String>,
}

async fn meta(ctx: Ctx) -> ApiResult<Reply> {
    let loopback = || vec!["127.0.0.1/32".to_string(), "::1/128".to_string()];
    // The host clients reach, without its port.
    let h = ctx.app.urls.host.as_str();
    let host = h.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(h, |(h, _)| h).to_string();
    Ok(Reply::ok(ApiOverview {
        verifiable_password_authentication: false,
        hooks: loopback(),
        web: loopback(),
        api: loopback(),
        git: loopback(),
        enterprise_importer: Vec::new(),
        packages: Vec::new(),
        pages: Vec::new(),
        importer: Vec::new(),
        actions: loopback(),
        actions_macos: Vec::new(),
        devenvs: Vec::new(),
        depbot: Vec::new(),
        assistant: Vec::new(),
        domains: MetaDomains {
            website: vec![host.clone()],
            devenvs: Vec::new(),
            assistant: Vec::new(),
            packages: Vec::new(),
            actions: vec![host],
        },
    }))
}

/// Root: URL templates of the API.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Root {
    pub current_user_url: String,
    pub current_user_authorizations_html_url: String,
    pub code_search_url: String,
    pub commit_search_url: String,
    pub emails_url: String,
    pub emojis_url: String,
    pub events_url: String,
    pub feeds_url: String,
    pub followers_url: String,
    pub following_url: String,
    pub gists_url: String,
    pub issue_search_url: String,
    pub issues_url: String,
    pub keys_url: String,
    pub label_search_url: String,
    pub notifications_url: String,
    pub organization_url: String,
    pub organization_repositories_url: String,
    pub organization_teams_url: String,
    pub public_gists_url: String,
    pub rate_limit_url: String,
    pub repository_url: String,
    pub repository_search_url: String,
    pub current_user_repositories_url: String,
    pub starred_url: String,
    pub starred_gists_url: String,
    pub topic_search_url: String,
    pub user_url: String,
    pub user_organizations_url: String,
    pub user_repositories_url: String,
    pub user_search_url: String,
    /// Only in API version 2022-11-28.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorizations_url: Option<String>,
    /// Only in API version 2022-11-28 (deprecated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub_url: Option<String>,
}

async fn root(ctx: Ctx) -> ApiResult<Reply> {
    let a = &ctx.app.urls.api;
    let w = &ctx.app.urls.web;
    let (authorizations_url, hub_url) = versions::root_legacy_urls(ctx.version, a).unzip();
    Ok(Reply::ok(Root {
        current_user_url: format!("{a}/user"),
        current_user_authorizations_html_url: format!("{w}/settings/connections/applications{{/client_id}}"),
        code_search_url: format!("{a}/search/code?q={{query}}{{&page,per_page,sort,order}}"),
        commit_search_url: format!("{a}/search/commits?q={{query}}{{&page,per_page,sort,order}}"),
        emails_url: format!("{a}/user/emails"),
        emojis_url: format!("{a}/emojis"),
        events_url: format!("{a}/events"),
        feeds_url: format!("{a}/feeds"),
        followers_url: format!("{a}/user/followers"),
        following_url: format!("{a}/user/following{{/target}}"),
        gists_url: format!("{a}/gists{{/gist_id}}"),
        issue_search_url: format!("{a}/search/issues?q={{query}}{{&page,per_page,sort,order}}"),
        issues_url: format!("{a}/issues"),
        keys_url: format!("{a}/user/keys"),
        label_search_url: format!("{a}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}"),
        notifications_url: format!("{a}/notifications"),
        organization_url: format!("{a}/orgs/{{org}}"),
        organization_repositories_url: format!("{a}/orgs/{{org}}/repos{{?type,page,per_page,sort}}"),
        organization_teams_url: format!("{a}/orgs/{{org}}/teams"),
        public_gists_url: format!("{a}/gists/public"),
        rate_limit_url: format!("{a}/rate_limit"),
        repository_url: format!("{a}/repos/{{owner}}/{{repo}}"),
        repository_search_url: format!("{a}/search/repositories?q={{query}}{{&page,per_page,sort,order}}"),
        current_user_repositories_url: format!("{a}/user/repos{{?type,page,per_page,sort}}"),
        starred_url: format!("{a}/user/starred{{/owner}}{{/repo}}"),
        starred_gists_url: format!("{a}/gists/starred"),
        topic_search_url: format!("{a}/search/topics?q={{query}}{{&page,per_page}}"),
        user_url: format!("{a}/users/{{user}}"),
        user_organizations_url: format!("{a}/user/orgs"),
        user_repositories_url: format!("{a}/users/{{user}}/repos{{?type,page,per_page,sort}}"),
        user_search_url: format!("{a}/search/users?q={{query}}{{&page,per_page,sort,order}}"),
        authorizations_url,
        hub_url,
    }))
}

/// One rate-limit bucket: `reset` in epoch seconds.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct RateLimitBucket {
    pub limit: i64,
    pub used: i64,
    pub remaining: i64,
    pub reset: i64,
}

/// RateLimitOverview: the caller's buckets.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RateLimitOverview {
    pub resources: RateLimitResources,
    /// Only in API version 2022-11-28: a copy of resources.core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateLimitBucket>,
}

/// The buckets by resource; `core` and `graphql` count requests, the others show their fixed limits.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RateLimitResources {
    pub core: RateLimitBucket,
    pub search: RateLimitBucket,
    pub graphql: RateLimitBucket,
    pub integration_manifest: RateLimitBucket,
    pub source_import: RateLimitBucket,
    pub code_scanning_upload: RateLimitBucket,
    pub actions_runner_registration: RateLimitBucket,
    pub scim: RateLimitBucket,
    pub dependency_snapshots: RateLimitBucket,
    pub dependency_sbom: RateLimitBucket,
    pub code_search: RateLimitBucket,
    pub code_scanning_autofix: RateLimitBucket,
}

/// Never charged; `resources.core` (and `rate` before 2026-03-10) agree with the headers.
async fn rate_limit(ctx: Ctx) -> ApiResult<Reply> {
    if !ctx.app.config.limits.rate_limits {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Rate limiting is not enabled."));
    }
    let now = ctx.app.clock.now();
    let class = ctx.principal.rate_class(ctx.ip);
    let window = |q: Quota| RateLimitBucket { limit: q.limit, used: q.used, remaining: q.remaining, reset: q.reset };
    let core = window(ctx.app.limiter.peek(&class, now).await);
    let anonymous = matches!(ctx.principal, crate::principal::Principal::Anonymous);
    let fixed = |limit: i64, window: i64| RateLimitBucket { limit, used: 0, remaining: limit, reset: now + window };
    // GraphQL refuses anonymous callers: their bucket is empty.
    let graphql = if anonymous { fixed(0, 3600) } else { window(ctx.app.limiter.peek(&class.in_resource(Resource::Graphql), now).await) };
    let resources = RateLimitResources {
        core,
        search: fixed(if anonymous { 10 } else { 30 }, 60),
        graphql,
        integration_manifest: fixed(5_000, 3600),
        source_import: fixed(100, 60),
        code_scanning_upload: fixed(500, 3600),
        actions_runner_registration: fixed(10_000, 3600),
        scim: fixed(15_000, 3600),
        dependency_snapshots: fixed(100, 60),
        dependency_sbom: fixed(100, 60),
        code_search: fixed(10, 60),
        code_scanning_autofix: fixed(10, 60),
    };
    Ok(Reply::ok(RateLimitOverview { rate: versions::rate_limit_rate(ctx.version, core), resources }))
}
