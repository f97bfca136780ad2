//! `GET /` and `GET /rate_limit`.
use axum::http::{Method, StatusCode};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Derived, Limits, Operation, Resp, Traits};
use crate::reply::Reply;
use crate::request::Ctx;
use crate::routes::Api;
use crate::versions;

pub static ROOT: Operation = Operation {
    id: "meta/root",
    method: Method::GET,
    path: "/",
    summary: "API root",
    docs: "https://docs.service.example/rest/meta/meta#service-api-root",
    access: Access::any(),
    query: &[],
    body: None,
    responses: &[Resp::json(200, "URL templates of the API.", "Root")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static RATE_LIMIT: Operation = Operation {
    id: "rate-limit/get",
    method: Method::GET,
    path: "/rate_limit",
    summary: "Get rate limit status for the authenticated user",
    docs: "https://docs.service.example/rest/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user",
    access: Access::any(),
    query: &[],
    body: None,
    responses: &[Resp::json(200, "The caller's rate-limit buckets; never charged.", "RateLimitOverview")],
    traits: Traits { limits: Limits::Report, ..Traits::NONE },
    derived: Derived::new(),
};

pub fn routes(api: Api) -> Api {
    api.op(&ROOT, root).op(&RATE_LIMIT, rate_limit)
}

async fn root(ctx: Ctx) -> ApiResult<Reply> {
    let a = &ctx.app.urls.api;
    let w = &ctx.app.urls.web;
    let mut m = Map::new();
    for (k, v) in [
        ("current_user_url", format!("{a}/user")),
        ("current_user_authorizations_html_url", format!("{w}/settings/connections/applications{{/client_id}}")),
        ("code_search_url", format!("{a}/search/code?q={{query}}{{&page,per_page,sort,order}}")),
        ("commit_search_url", format!("{a}/search/commits?q={{query}}{{&page,per_page,sort,order}}")),
        ("emails_url", format!("{a}/user/emails")),
        ("emojis_url", format!("{a}/emojis")),
        ("events_url", format!("{a}/events")),
        ("feeds_url", format!("{a}/feeds")),
        ("followers_url", format!("{a}/user/followers")),
        ("following_url", format!("{a}/user/following{{/target}}")),
        ("gists_url", format!("{a}/gists{{/gist_id}}")),
        ("issue_search_url", format!("{a}/search/issues?q={{query}}{{&page,per_page,sort,order}}")),
        ("issues_url", format!("{a}/issues")),
        ("keys_url", format!("{a}/user/keys")),
        ("label_search_url", format!("{a}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}")),
        ("notifications_url", format!("{a}/notifications")),
        ("organization_url", format!("{a}/orgs/{{org}}")),
        ("organization_repositories_url", format!("{a}/orgs/{{org}}/repos{{?type,page,per_page,sort}}")),
        ("organization_teams_url", format!("{a}/orgs/{{org}}/teams")),
        ("public_gists_url", format!("{a}/gists/public")),
        ("rate_limit_url", format!("{a}/rate_limit")),
        ("repository_url", format!("{a}/repos/{{owner}}/{{repo}}")),
        ("repository_search_url", format!("{a}/search/repositories?q={{query}}{{&page,per_page,sort,order}}")),
        ("current_user_repositories_url", format!("{a}/user/repos{{?type,page,per_page,sort}}")),
        ("starred_url", format!("{a}/user/starred{{/owner}}{{/repo}}")),
        ("starred_gists_url", format!("{a}/gists/starred")),
        ("topic_search_url", format!("{a}/search/topics?q={{query}}{{&page,per_page}}")),
        ("user_url", format!("{a}/users/{{user}}")),
        ("user_organizations_url", format!("{a}/user/orgs")),
        ("user_repositories_url", format!("{a}/users/{{user}}/repos{{?type,page,per_page,sort}}")),
        ("user_search_url", format!("{a}/search/users?q={{query}}{{&page,per_page,sort,order}}")),
    ] {
        m.insert(k.into(), Value::String(v));
    }
    versions::root_fields(ctx.version, &mut m, a);
    Ok(Reply::ok(Value::Object(m)))
}

/// Never charged; `resources.core` (and `rate` before 2026-03-10) agree with the headers.
async fn rate_limit(ctx: Ctx) -> ApiResult<Reply> {
    if !ctx.app.config.rate_limits {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Rate limiting is not enabled."));
    }
    let now = ctx.app.clock.now();
    let q = ctx.app.limiter.peek(&ctx.principal.rate_class(ctx.ip), now).await;
    let core = json!({"limit": q.limit, "used": q.used, "remaining": q.remaining, "reset": q.reset});
    let anonymous = matches!(ctx.principal, crate::principal::Principal::Anonymous);
    let fixed = |limit: i64, window: i64| json!({"limit": limit, "used": 0, "remaining": limit, "reset": now + window});
    let mut resources = Map::new();
    resources.insert("core".into(), core.clone());
    resources.insert("search".into(), fixed(if anonymous { 10 } else { 30 }, 60));
    resources.insert("graphql".into(), fixed(if anonymous { 0 } else { 5_000 }, 3600));
    resources.insert("integration_manifest".into(), fixed(5_000, 3600));
    resources.insert("source_import".into(), fixed(100, 60));
    resources.insert("code_scanning_upload".into(), fixed(500, 3600));
    resources.insert("actions_runner_registration".into(), fixed(10_000, 3600));
    resources.insert("scim".into(), fixed(15_000, 3600));
    resources.insert("dependency_snapshots".into(), fixed(100, 60));
    resources.insert("dependency_sbom".into(), fixed(100, 60));
    resources.insert("code_search".into(), fixed(10, 60));
    resources.insert("code_scanning_autofix".into(), fixed(10, 60));
    let mut m = Map::new();
    m.insert("resources".into(), Value::Object(resources));
    versions::rate_limit_fields(ctx.version, &mut m, core);
    Ok(Reply::ok(Value::Object(m)))
}
