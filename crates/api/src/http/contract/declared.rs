//! The contract's part for a routed request (inside stage 4, `handle`): what the operation's
//! declaration says, enforced for every operation before its handler runs, in this order:
//!
//! 1. the secondary limits the operation itself counts toward (content creation, token
//!    issuing);
//! 2. path and query values (NUL names nothing);
//! 3. the body, as the handler takes it (its size, the read timeout, its JSON syntax);
//! 4. what the path names (`operation::On`), loaded and authorized (`authorize::target`);
//! 5. the query, checked and read into the type the handler takes (`input::QueryRules`);
//! 6. the response cache, for a declared cached GET (`operation::Cache`);
//! 7. the handler, with its context, query and body (checked against the type it takes, then
//!    deserialized); its answer cached when declared.
use std::hash::BuildHasher;
use std::sync::Arc;

use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::response::{IntoResponse, Response};
use platform_core::ApiVersion;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Cache, Operation, Verb};
use crate::principal::Principal;
use crate::reply::Reply;
use crate::request::{content_length, parse_query, Ctx, Handler, Input, InputRules, OpRef, Payload, ReqInfo};
use crate::state::Shared;

/// Serves a routed request: the declaration enforced, then the handler; the answer carries the
/// operation (for the later stages).
pub async fn serve<H: Handler<A>, A>(app: Shared, op: &'static Operation, rules: Arc<InputRules>, req: Request, handler: H) -> Response {
    let mut resp = run(app, op, rules, req, handler).await.into_response();
    resp.extensions_mut().insert(OpRef(op));
    resp
}

async fn run<H: Handler<A>, A>(app: Shared, op: &'static Operation, rules: Arc<InputRules>, req: Request, handler: H) -> ApiResult<Reply> {
    let (mut parts, body) = req.into_parts();
    let info = parts.extensions.remove::<ReqInfo>().ok_or_else(ApiError::internal)?;
    // What the operation itself counts toward the secondary limits, unless the contract
    // decided it with the rest (an operation it could not tell before routing).
    let counted = parts.extensions.get::<super::Counted>().is_some_and(|c| std::ptr::eq(c.0, op));
    let app_id = match &info.principal {
        Principal::App(a) => Some(a.app.id),
        Principal::Token(t) => t.app.as_ref().map(|a| a.id),
        Principal::Anonymous => None,
    };
    if !counted {
        if let Err(retry_after) = app.secondary.operation(info.principal.rate_class(info.ip).bucket, op, app_id, app.clock.now()).await {
            return Err(crate::secondary::refusal(axum::http::StatusCode::FORBIDDEN, &info.request_id, retry_after));
        }
    }
    let raw = RawPathParams::from_request_parts(&mut parts, &app).await.map_err(|_| ApiError::not_found())?;
    // NUL can name nothing stored (PostgreSQL text refuses it): such a path names no
    // resource, and such a query value is no valid filter.
    if raw.iter().any(|(_, v)| v.contains('\0')) {
        return Err(ApiError::not_found());
    }
    let pairs = parse_query(parts.uri.query().unwrap_or(""));
    if pairs.iter().any(|(k, v)| k.contains('\0') || v.contains('\0')) {
        return Err(ApiError::invalid_request("Query parameters may not contain NUL characters."));
    }
    let params = raw.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // The body, as the handler takes it: its size, the read timeout and its JSON syntax are
    // answered before anything is looked up.
    let body = Payload::read(&app, H::takes().body.map(|(read, _)| read), content_length(&parts.headers), body).await?;
    let mut ctx = Ctx::new(app, info, op, parts.uri.path().to_string(), pairs, params);
    ctx.read_alias = parts.extensions.get::<super::path::ReadAlias>().is_some();
    if let Some(a) = parts.headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()) {
        ctx.accept = a.to_string();
    }
    ctx.set_target(crate::authorize::target(&ctx).await?);
    let query = match &rules.query {
        Some(rules) => rules.check(ctx.query_pairs())?,
        None => Default::default(),
    };
    let cached = match cache_key(&ctx) {
        Some(at) => match lookup(&ctx, &at) {
            Some(hit) => return Ok(hit),
            None => Some(at),
        },
        None => None,
    };
    let app = ctx.app.clone();
    let reply = handler.call(ctx, Input { query, body, rules }).await?;
    Ok(match cached {
        Some(at) => store(&app, at, reply),
        None => reply,
    })
}

/// Where a cached answer is kept: (path and query, version, caller or 0 when shared), the
/// generation it is exact in, and the platform time of the request.
struct CacheAt {
    key: (String, ApiVersion, i64),
    generation: u64,
    now: i64,
}

fn cache_key(ctx: &Ctx) -> Option<CacheAt> {
    if ctx.op.method != Verb::Get || ctx.op.cache == Cache::No {
        return None;
    }
    let generation = ctx.generation()?;
    let key = match ctx.op.cache {
        Cache::Repository => (format!("repo:{}|{}", ctx.repo().id, ctx.path_and_query()), ctx.version, 0),
        _ => (ctx.path_and_query(), ctx.version, ctx.principal.cache_key()),
    };
    Some(CacheAt { key, generation, now: ctx.app.clock.now() })
}

/// The cached answer, when nothing was written since it was built and it is still exact.
fn lookup(ctx: &Ctx, at: &CacheAt) -> Option<Reply> {
    let (from, until, hit) = ctx.app.caches.responses.get(&at.key, at.generation)?;
    (from <= at.now && at.now < until).then_some(hit)
}

/// Fixed keys: the admission set only needs a spread, not secrecy.
static ASKED_HASHER: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x5eed);

/// Keeps an answer for as long as it is exact (a handler says until when with
/// `Reply::fresh_until`; otherwise until the next write), with its ETag so the contract need
/// not hash the body again. Only successful answers are kept.
fn store(app: &Shared, at: CacheAt, reply: Reply) -> Reply {
    let until = reply.exact_until().unwrap_or(i64::MAX);
    let reply = match reply.body().map(|b| crate::etag::etag_of(b)) {
        Some(e) => reply.header("etag", e),
        None => reply,
    }
    .fresh_until(until);
    // Admission on the second request: one-off URLs (cursors, unique names, salts) would
    // otherwise push out the answers that are asked again, and hold memory for nothing.
    let asked = ASKED_HASHER.hash_one(&at.key);
    if app.caches.asked.get(&asked, at.generation).is_some() {
        app.caches.responses.put(at.key, at.generation, (at.now, until, reply.clone()));
    } else {
        app.caches.asked.put(asked, at.generation, ());
    }
    reply
}
