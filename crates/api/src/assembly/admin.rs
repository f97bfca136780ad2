//! The control plane under `/_admin/`: JSON in and out, guarded by the admin token.
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use platform_core::time::{format_ts, parse_ts};
use platform_store::DbError;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::faults::FaultIn;
use crate::ops::provision::{self, parse, write, AppIn, EnterpriseIn, OrgIn, RefIn, RepoIn, StarIn, TeamIn, TokenIn, UserIn};
use crate::reply::Reply;
use crate::request::JsonBody;
use crate::secrets::constant_time_eq;
use crate::shapes;
use crate::state::Shared;

/// The core of the control plane (accounts, repositories, apps, tokens, the clock, faults),
/// then every feature's own part (`ops::control`).
pub fn router(state: Shared) -> Router<Shared> {
    crate::ops::control(Router::new())
        .route("/users", post(create_user))
        .route("/orgs", post(create_org))
        .route("/orgs/{org}/teams", post(create_team))
        .route("/enterprises", post(create_enterprise))
        .route("/repos", post(create_repo))
        .route("/repos/{owner}/{repo}/refs", post(push_ref))
        .route("/repos/{owner}/{repo}/rename", post(rename_repo))
        .route("/repos/{owner}/{repo}/watchers", post(add_watcher))
        .route("/repos/{owner}/{repo}/stars", post(star))
        .route("/repos/{owner}/{repo}/stars/{login}", delete(unstar))
        .route("/apps", post(create_app))
        .route("/apps/{client_id}/installations", post(create_installation))
        .route("/tokens", post(create_token))
        .route("/clock", get(get_clock).post(set_clock))
        .route("/faults", get(list_faults).post(create_fault).delete(clear_faults))
        .route("/faults/{id}", delete(delete_fault))
        .route("/reset", post(reset))
        .fallback(|| async { ApiError::not_found() })
        .layer(middleware::from_fn_with_state(state, guard))
}

/// Only `Authorization: Bearer <admin token>` passes. Wrong tokens count as failed logins of
/// the address, which is locked out of the control plane as the API locks out its clients.
async fn guard(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let ip = crate::contract::client_ip(&req, &app.config.trusted_proxies);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    if app.admin_logins.locked_out(ip, now).await.is_some() {
        return ApiError::forbidden(crate::secondary::LOCKOUT_MESSAGE).into_response();
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .unwrap_or("");
    let expected = &app.config.admin_token;
    if expected.is_empty() || !constant_time_eq(given.trim().as_bytes(), expected.as_bytes()) {
        if given.is_empty() {
            return ApiError::requires_authentication().into_response();
        }
        app.admin_logins.failed_login(ip, now).await;
        return ApiError::bad_credentials().into_response();
    }
    next.run(req).await
}

async fn create_user(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let u: UserIn = parse(b)?;
    let acc = write(&app, move |c, now| provision::create_user(c, &u, now)).await?;
    Ok(Reply::created(shapes::simple_user(&app.urls, &acc)))
}

async fn create_org(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let o: OrgIn = parse(b)?;
    let acc = write(&app, move |c, now| provision::create_org(c, &o, now)).await?;
    Ok(Reply::created(shapes::simple_user(&app.urls, &acc)))
}

async fn create_enterprise(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let e: EnterpriseIn = parse(b)?;
    let ent = write(&app, move |c, now| provision::create_enterprise(c, &e, now)).await?;
    Ok(Reply::created(json!({"id": ent.id, "slug": ent.slug, "name": ent.name, "created_at": format_ts(ent.created_at)})))
}

async fn create_team(State(app): State<Shared>, Path(org): Path<String>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let t: TeamIn = parse(b)?;
    let team = write(&app, move |c, now| provision::create_team(c, &org, &t, now)).await?;
    Ok(Reply::created(json!({"id": team.id, "name": team.name, "slug": team.slug, "description": team.description})))
}

async fn create_repo(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let r: RepoIn = parse(b)?;
    let repo = write(&app, move |c, now| provision::create_repo(c, &r, now)).await?;
    crate::ops::git_hosting::repository(&app, &repo).await?;
    Ok(Reply::created(shapes::minimal_repository(&app.urls, platform_core::ApiVersion::DEFAULT, &repo)))
}

async fn push_ref(State(app): State<Shared>, Path((owner, repo)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let r: RefIn = parse(b)?;
    let repo = app.store.read(move |c| provision::repo(c, &format!("{owner}/{repo}"))).await?;
    Ok(Reply::created(crate::ops::git_hosting::control::push_ref(&app, &repo, &r).await?))
}

async fn star(State(app): State<Shared>, Path((owner, repo)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let s: StarIn = parse(b)?;
    let out = write(&app, move |c, now| {
        let repo = provision::repo(c, &format!("{owner}/{repo}"))?;
        provision::star(c, &repo, &s, now)
    })
    .await?;
    Ok(match out {
        Some(v) => Reply::created(v),
        None => Reply::empty(StatusCode::NO_CONTENT),
    })
}

async fn unstar(State(app): State<Shared>, Path((owner, repo, login)): Path<(String, String, String)>) -> ApiResult<Reply> {
    write(&app, move |c, now| provision::unstar(c, &format!("{owner}/{repo}"), &login, now)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn rename_repo(State(app): State<Shared>, Path((owner, repo)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    #[derive(serde::Deserialize)]
    struct Rename {
        name: String,
    }
    let r: Rename = parse(b)?;
    let repo = write(&app, move |c, now| {
        let repo = provision::repo(c, &format!("{owner}/{repo}"))?;
        provision::rename_repo(c, &repo, &r.name, now)
    })
    .await?;
    Ok(Reply::ok(shapes::minimal_repository(&app.urls, platform_core::ApiVersion::DEFAULT, &repo)))
}

async fn add_watcher(State(app): State<Shared>, Path((owner, repo)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let w: provision::WatcherIn = parse(b)?;
    let out = write(&app, move |c, now| {
        let repo = provision::repo(c, &format!("{owner}/{repo}"))?;
        provision::add_watcher(c, &repo, &w, now)
    })
    .await?;
    Ok(Reply::created(out))
}

async fn create_app(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let a: AppIn = parse(b)?;
    let (created, secret) = write(&app, move |c, now| provision::create_app(c, &a, now)).await?;
    Ok(Reply::created(json!({
        "id": created.id, "kind": created.kind, "name": created.name, "slug": created.slug,
        "client_id": created.client_id, "client_secret": secret,
    })))
}

async fn create_installation(State(app): State<Shared>, Path(client_id): Path<String>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    #[derive(serde::Deserialize)]
    struct Install {
        org: String,
    }
    let i: Install = parse(b)?;
    let inst = write(&app, move |c, now| {
        let a = provision::app_by_client_id(c, &client_id)?;
        provision::create_installation(c, &a, &i.org, now)
    })
    .await?;
    Ok(Reply::created(json!({"id": inst.id, "app_id": inst.app_id, "account_id": inst.account_id})))
}

async fn create_token(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let t: TokenIn = parse(b)?;
    let (tok, text) = write(&app, move |c, now| provision::create_token(c, &t, now)).await?;
    Ok(Reply::created(token_json(&tok, &text)))
}

pub fn token_json(t: &platform_store::domain::tokens::Token, text: &str) -> Value {
    json!({
        "token": text, "id": t.id, "kind": t.kind.as_str(), "user_id": t.user_id, "scopes": t.scopes,
        "permissions": t.permissions, "repository_selection": t.repository_selection,
        "expires_at": t.expires_at.map(format_ts),
    })
}

fn clock_json(app: &Shared) -> Value {
    let now = app.clock.now();
    json!({"now": format_ts(now), "epoch": now, "manual": app.clock.is_manual()})
}

async fn get_clock(State(app): State<Shared>) -> Reply {
    Reply::ok(clock_json(&app))
}

/// `{advance_seconds}` or `{now}` (timestamp or epoch seconds); manual clock only.
async fn set_clock(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    if !app.clock.is_manual() {
        return Err(ApiError::new(StatusCode::CONFLICT, "The clock is not manual: start with PLATFORM_CLOCK=manual."));
    }
    if let Some(n) = b.get("advance_seconds") {
        let secs = n.as_i64().filter(|s| *s >= 0).ok_or_else(|| ApiError::invalid_field("Clock", "advance_seconds", "invalid", None))?;
        app.clock.advance(secs);
    } else if let Some(n) = b.get("now") {
        let t =
            n.as_i64().or_else(|| n.as_str().and_then(parse_ts)).ok_or_else(|| ApiError::invalid_field("Clock", "now", "invalid", None))?;
        app.clock.set(t);
    } else {
        return Err(ApiError::invalid_request("\"advance_seconds\" or \"now\" wasn't supplied."));
    }
    Ok(Reply::ok(clock_json(&app)))
}

/// `{kind, method?, path?, token?, user?, probability?, count?, status?, retry_after?,
/// latency_ms?, message?}` → 201 the fault (its token redacted).
async fn create_fault(State(app): State<Shared>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let f: FaultIn = parse(b)?;
    let f = app.faults.add(f.validate()?);
    Ok(Reply::created(f.to_json()))
}

async fn list_faults(State(app): State<Shared>) -> Reply {
    Reply::ok(Value::Array(app.faults.list().iter().map(|f| f.to_json()).collect()))
}

async fn clear_faults(State(app): State<Shared>) -> Reply {
    app.faults.clear();
    Reply::empty(StatusCode::NO_CONTENT)
}

async fn delete_fault(State(app): State<Shared>, Path(id): Path<String>) -> ApiResult<Reply> {
    match id.parse::<u64>() {
        Ok(id) if app.faults.remove(id) => Ok(Reply::empty(StatusCode::NO_CONTENT)),
        _ => Err(ApiError::not_found()),
    }
}

/// Empties everything but the admin token (and in-memory limiter state and faults).
async fn reset(State(app): State<Shared>) -> ApiResult<Reply> {
    app.store.reset().await.map_err(|e: DbError| ApiError::from(e))?;
    crate::ops::git_hosting::clear(&app).await?;
    // The emptied database records which key its new secrets will be encrypted under.
    let sk = app.config.secret_key;
    app.store.write(move |c| crate::secrets::prepare(c, &sk)).await?.map_err(|m| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, m))?;
    app.limiter.clear().await;
    app.secondary.clear().await;
    app.caches.clear();
    app.features.clear();
    app.faults.clear();
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
