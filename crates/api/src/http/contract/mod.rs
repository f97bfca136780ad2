//! The request contract of document 1, applied to every API request in one place, as stages:
//!
//! 1. [`path::locate`]: below the public URL's path, branch names as one segment (the
//!    operations' declared slash parameters, [`path::SlashRoutes`]);
//! 2. [`admit`]: preflight, API version, User-Agent, lockout, authentication, secondary limits,
//!    (the limits count in the resource the path decides: `graphql` for the GraphQL endpoint)
//!    injected faults (`faults.rs`), the primary rate limit — or the refusal;
//! 3. [`conditional`]: a conditional GET whose answer is known not to have changed is a 304
//!    without routing;
//! 4. [`handle`]: the operation — its declaration enforced, then its handler ([`declared`]);
//!    a panic answers 500;
//! 5. [`validate`]: a strong ETag on successful GETs, and the 304 for a matching
//!    `If-None-Match` (or a handler's `Last-Modified` and `If-Modified-Since`); neither 304 is
//!    charged;
//! 6. [`stamp`]: error bodies with the operation's docs, and the response headers
//!    (`x-ratelimit-*`, scopes, accepted permissions, closing down, poll interval, version, CORS);
//! 7. [`record`]: metrics, the access log and API insights.
//!
//! The stages share one [`Exchange`] on the stack: the hot path allocates nothing more than
//! the single function it replaced.
pub mod declared;
mod path;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use platform_core::ids::request_id;
use platform_core::ApiVersion;

use crate::admission::Verdict;
use crate::authenticate::authenticate;
use crate::error::{ApiError, ErrorMark, RATE_LIMIT_DOCS};
use crate::etag::{etag_matches, etag_of, not_modified_since};
use crate::forwarded::TrustedProxies;
use crate::headers as names;
use crate::not_modified;
use crate::operation::{Limits, Operation, Poll};
use crate::principal::Principal;
use crate::ratelimit::{Quota, RateClass, Resource};
use crate::reply::Fresh;
use crate::request::{OpRef, ReqInfo};
use crate::secondary::Slot;
use crate::shared_limits::Mode;
use crate::state::{Generation, Shared};

pub const EXPOSED_HEADERS: &str = "ETag, Link, Location, Retry-After, X-Service-OTP, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Used, X-RateLimit-Resource, X-RateLimit-Reset, X-OAuth-Scopes, X-Accepted-OAuth-Scopes, X-Poll-Interval, X-Service-Media-Type, X-Service-SSO, X-Service-Request-Id, Deprecation, Sunset, X-Service-Api-Version-Selected";
const ALLOWED_HEADERS: &str = "Authorization, Content-Type, If-Match, If-Modified-Since, If-None-Match, If-Unmodified-Since, Accept, Accept-Encoding, User-Agent, X-Requested-With, X-Service-OTP, X-Service-Api-Version";
const UA_MESSAGE: &str = "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.service.example/rest/overview/resources-in-the-rest-api#user-agent-required).";

/// What the contract knows about the operations before routing, from their declarations (built
/// once per process by the router): the paths the primary limit never charges (operations with
/// `Limits::Report`) and the parameters that may hold slashes.
#[derive(Default)]
pub struct Routing {
    uncharged: Vec<&'static str>,
    slashes: path::SlashRoutes,
    /// Every operation by path, as the router will match it: the operation's own limits are
    /// decided with the others, before routing.
    by_path: matchit::Router<Vec<&'static Operation>>,
}

impl Routing {
    pub fn of(ops: &[&'static Operation]) -> Routing {
        let uncharged = ops.iter().filter(|o| o.traits.limits == Limits::Report).map(|o| o.path).collect();
        let mut paths: Vec<(&str, Vec<&'static Operation>)> = Vec::new();
        for op in ops {
            match paths.iter_mut().find(|(p, _)| *p == op.path) {
                Some((_, list)) => list.push(op),
                None => paths.push((op.path, vec![op])),
            }
        }
        let mut by_path = matchit::Router::new();
        for (path, list) in paths {
            // A path the router would refuse is never routed either.
            let _ = by_path.insert(path, list);
        }
        Routing { uncharged, slashes: path::SlashRoutes::of(ops), by_path }
    }

    /// The operation a request will be routed to, if it counts toward limits of its own
    /// (reads never do).
    fn counting(&self, method: &Method, path: &str) -> Option<&'static Operation> {
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return None;
        }
        let found = self.by_path.at(path).ok()?;
        found.value.iter().copied().find(|op| op.method.http() == method)
    }
}

/// The contract's state: the application and what it knows of the operations before routing.
pub type ContractState = (Shared, &'static Routing);

/// What the stages learn about one request, read by the later ones.
struct Exchange {
    started: Instant,
    rid: String,
    method: Method,
    /// Below the API base, with branch names as one segment (what the router sees).
    path: String,
    ip: IpAddr,
    /// The rate-limit resource the request counts against (its path decides).
    resource: Resource,
    version: ApiVersion,
    principal: Principal,
    quota: Option<Quota>,
    rate_limited: bool,
    /// The operation of an answer given before routing (a known 304); routed answers carry theirs.
    answered_by: Option<&'static Operation>,
}

/// An admitted request: what validating its answer needs. The secondary-limit slot is held
/// until the answer is made (injected latency included).
struct Admitted<'a> {
    class: RateClass,
    now: i64,
    /// Charged to the primary limit (a 304 refunds it).
    charged: bool,
    observed: Generation,
    /// The operation whose own limits were decided with the rest.
    counted: Option<&'static Operation>,
    _slot: Slot<'a>,
}

/// The operation whose own limits (content creation, token issuing) the contract decided
/// with the rest, so the declaration's stage does not charge them again.
#[derive(Clone, Copy)]
pub struct Counted(pub &'static Operation);

/// A conditional GET's validator: the cache key of the answer and the generation it is valid in.
type Validator = (not_modified::Key, u64);

pub async fn contract(State((app, routing)): State<ContractState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let _in_flight = app.metrics.enter();
    let (api_path, path) = path::locate(app.urls.base_path(), &routing.slashes, &mut req);
    let mut x = Exchange {
        started,
        rid: request_id(),
        method: req.method().clone(),
        resource: Resource::of_path(&path),
        path,
        ip: client_ip(&req, &app.config.trusted_proxies),
        version: ApiVersion::DEFAULT,
        principal: Principal::Anonymous,
        quota: None,
        rate_limited: false,
        answered_by: None,
    };
    let resp = match admit(&app, routing, &mut x, req.headers(), &api_path).await {
        Err(refusal) => refusal,
        Ok(admitted) => match conditional(&app, &mut x, &admitted, req.headers(), req.uri()).await {
            Err(not_modified) => not_modified,
            Ok(validator) => {
                // Only the conditional headers are needed after the handler: keep them, not every header.
                let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
                let if_modified_since = req.headers().get(header::IF_MODIFIED_SINCE).cloned();
                if let Some(op) = admitted.counted {
                    req.extensions_mut().insert(Counted(op));
                }
                let resp = handle(&x, admitted.observed, req, next).await;
                validate(&app, &mut x, &admitted, validator, [if_none_match, if_modified_since], resp).await
            }
        },
    };
    let resp = stamp(&app, &mut x, resp).await;
    record(&app, &x, &resp);
    resp
}

/// Stage 2: the checks before the operation runs, in document 1's order; `Err` is the answer
/// that refuses the request.
async fn admit<'a>(
    app: &'a Shared,
    routing: &Routing,
    x: &mut Exchange,
    headers: &HeaderMap,
    api_path: &str,
) -> Result<Admitted<'a>, Response> {
    if x.method == Method::OPTIONS {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PATCH, PUT, DELETE"));
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOWED_HEADERS));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        return Err(r);
    }
    if let Some(v) = headers.get(names::X_SERVICE_API_VERSION) {
        let given = String::from_utf8_lossy(v.as_bytes()).to_string();
        match ApiVersion::parse(&given) {
            Some(v) => x.version = v,
            None => {
                return Err(ApiError::bad_request("Bad Request")
                    .with_errors(serde_json::Value::String(ApiVersion::unsupported_message(&given)))
                    .into_response())
            }
        }
    }
    if headers.get(header::USER_AGENT).is_none_or(|v| v.is_empty()) {
        return Err(ApiError::forbidden(UA_MESSAGE).into_response());
    }
    // Before anything cached is read: see `state::Generation`.
    let observed = app.observe().await;
    let authenticated = authenticate(app, headers, observed).await;
    // Every limit below is one decision (`admission`): an address locked out after failed
    // logins hears only that, whatever its credentials; every credential that fails counts,
    // application secrets included. (Checking tokens is free, document 2: an unknown token
    // checked with the right secret is a 404 of the operation, never a failed login.)
    let credentials = headers.contains_key(header::AUTHORIZATION);
    let failed = authenticated.as_ref().err().is_some_and(|e| e.status == StatusCode::UNAUTHORIZED);
    if let Ok(p) = &authenticated {
        x.principal = p.clone();
    }
    let class = x.principal.rate_class(x.ip).in_resource(x.resource);
    let now = app.clock.now();
    let charged = app.config.limits.rate_limits && !routing.uncharged.contains(&x.path.as_str()) && authenticated.is_ok();
    let app_id = match &x.principal {
        Principal::App(a) => Some(a.app.id),
        Principal::Token(t) => t.app.as_ref().map(|a| a.id),
        Principal::Anonymous => None,
    };
    let counting = routing.counting(&x.method, &x.path).filter(|_| authenticated.is_ok());
    let ask = crate::admission::Ask {
        ip: x.ip,
        lock: (credentials || failed).then_some(failed),
        class,
        enter: authenticated.is_ok().then_some(&x.method),
        primary: app.config.limits.rate_limits.then_some(if charged { Mode::Charge } else { Mode::Peek }),
        op: counting.map(|op| (op, app_id)),
    };
    let decision = crate::admission::decide(&app.limiter, &app.secondary, &ask, now).await;
    x.quota = decision.quota;
    let slot = match decision.verdict {
        Verdict::LockedOut => return Err(ApiError::forbidden(crate::secondary::LOCKOUT_MESSAGE).into_response()),
        Verdict::Secondary(retry_after) | Verdict::Operation(retry_after) => {
            x.rate_limited = true;
            return Err(crate::secondary::refusal(StatusCode::FORBIDDEN, &x.rid, retry_after).into_response());
        }
        Verdict::Primary => {
            x.rate_limited = true;
            return Err(ApiError::forbidden(class.exceeded_message()).with_docs(RATE_LIMIT_DOCS).into_response());
        }
        Verdict::Admitted(slot) => slot,
    };
    if let Err(e) = authenticated {
        return Err(e.into_response());
    }
    // Injected faults: after the secondary limits; an injected answer is not charged.
    if let Some(f) = crate::faults::inject(&app.faults, &x.method, api_path, headers, &x.principal, &class, &x.rid).await {
        x.rate_limited = f.rate_limited;
        if charged {
            app.limiter.refund(&class, now);
            x.quota = x.quota.map(Quota::refunded);
        }
        if f.exhausts_primary {
            let real = match x.quota {
                Some(q) => q,
                None => app.limiter.peek(&class, now).await,
            };
            x.quota = Some(Quota { used: real.limit, remaining: 0, ..real });
        }
        return Err(f.response);
    }
    Ok(Admitted { class, now, charged, observed, counted: counting, _slot: slot })
}

/// Stage 3: a conditional GET whose answer is known not to have changed is a 304 (`Err`)
/// without routing; otherwise the validator to remember the answer under, if it may be.
async fn conditional(
    app: &Shared,
    x: &mut Exchange,
    a: &Admitted<'_>,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<Option<Validator>, Response> {
    let (Some(inm), Some(g)) = (headers.get(header::IF_NONE_MATCH), app.generation(a.observed)) else { return Ok(None) };
    if x.method != Method::GET {
        return Ok(None);
    }
    let pq = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    let key = (pq, x.version, x.principal.cache_key());
    if let Some((r, op)) = not_modified::answer(&app.caches.validated, &key, g, inm, a.now) {
        if a.charged {
            app.limiter.refund(&a.class, a.now);
            x.quota = x.quota.map(Quota::refunded);
        }
        x.answered_by = Some(op);
        return Err(r);
    }
    Ok(Some((key, g)))
}

/// Stage 4: the operation. A panicking handler answers 500 with the error body; the server goes on.
async fn handle(x: &Exchange, observed: Generation, mut req: Request, next: Next) -> Response {
    let info = ReqInfo { principal: x.principal.clone(), ip: x.ip, version: x.version, request_id: x.rid.clone(), generation: observed };
    req.extensions_mut().insert(info);
    match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(r) => r,
        Err(_) => {
            tracing::error!(request_id = %x.rid, "handler panicked");
            ApiError::internal().into_response()
        }
    }
}

/// Stage 5: a strong ETag on successful GETs (remembered for stage 3), and a 304 that costs
/// nothing for a matching `If-None-Match` or a current `If-Modified-Since`.
async fn validate(
    app: &Shared,
    x: &mut Exchange,
    a: &Admitted<'_>,
    validator: Option<Validator>,
    [if_none_match, if_modified_since]: [Option<HeaderValue>; 2],
    resp: Response,
) -> Response {
    if x.method != Method::GET || resp.status() != StatusCode::OK {
        return resp;
    }
    let known = resp.headers().get(header::ETAG).and_then(|v| v.to_str().ok()).map(String::from);
    let (parts, body) = resp.into_parts();
    let (etag, body) = match known {
        Some(e) => (e, body),
        None => {
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
            (etag_of(&bytes), Body::from(bytes))
        }
    };
    if let (Some((key, g)), Some(Fresh(until)), Some(OpRef(op))) =
        (validator, parts.extensions.get().copied(), parts.extensions.get().copied())
    {
        not_modified::remember(&app.caches.validated, key, g, until, &etag, &parts.headers, op);
    }
    let mut resp = if etag_matches(if_none_match.as_ref(), &etag)
        || not_modified_since(if_none_match.as_ref(), if_modified_since.as_ref(), parts.headers.get(header::LAST_MODIFIED))
    {
        let mut resp = Response::from_parts(parts, Body::empty());
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        resp.headers_mut().remove(header::CONTENT_TYPE);
        resp.headers_mut().remove(header::CONTENT_LENGTH);
        if a.charged {
            app.limiter.refund(&a.class, a.now);
            x.quota = x.quota.map(Quota::refunded);
        }
        resp
    } else {
        Response::from_parts(parts, body)
    };
    if let Ok(v) = HeaderValue::from_str(&etag) {
        resp.headers_mut().insert(header::ETAG, v);
    }
    resp
}

/// Stage 6: what every answer carries, whoever made it.
async fn stamp(app: &Shared, x: &mut Exchange, mut resp: Response) -> Response {
    // Answers decided before charging (preflight, unsupported version, no User-Agent, bad
    // credentials) still report the caller's bucket (the address's, for an unidentified caller):
    // clients read `x-ratelimit-*` on every response.
    if x.quota.is_none() && app.config.limits.rate_limits {
        x.quota = Some(app.limiter.peek(&x.principal.rate_class(x.ip).in_resource(x.resource), app.clock.now()).await);
    }
    let op = x.answered_by.or_else(|| resp.extensions().get::<OpRef>().map(|o| o.0));
    x.answered_by = op;
    // Error bodies carry the operation's documentation URL; the rate-limit page marks limits
    // refused inside the operation (content creation, token issuing).
    let mark = resp.extensions().get::<ErrorMark>().cloned();
    x.rate_limited |= mark.as_ref().is_some_and(|m| m.0.docs == Some(RATE_LIMIT_DOCS));
    if let (Some(mark), Some(op)) = (mark, op) {
        if mark.0.docs.is_none() {
            let body = serde_json::to_vec(&mark.0.body(Some(op.docs))).unwrap_or_default();
            resp.headers_mut().remove(header::CONTENT_LENGTH);
            *resp.body_mut() = Body::from(body);
        }
    }

    let status = resp.status();
    let h = resp.headers_mut();
    h.reserve(names::ADDED_HEADERS); // the headers below, without regrowing the map several times
    let put = |h: &mut HeaderMap, k: HeaderName, v: &str| {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(k, v);
        }
    };
    if let Some(q) = x.quota {
        h.insert(names::X_RATELIMIT_LIMIT, HeaderValue::from(q.limit));
        h.insert(names::X_RATELIMIT_REMAINING, HeaderValue::from(q.remaining));
        h.insert(names::X_RATELIMIT_RESET, HeaderValue::from(q.reset));
        h.insert(names::X_RATELIMIT_USED, HeaderValue::from(q.used));
        h.insert(names::X_RATELIMIT_RESOURCE, HeaderValue::from_static(x.resource.name()));
    }
    if let Principal::Token(t) = &x.principal {
        if t.token.kind.uses_scopes() {
            put(h, names::X_OAUTH_SCOPES, &t.token.scopes.join(", "));
        }
        if let (platform_core::TokenKind::Oauth, Some(app)) = (t.token.kind, &t.app) {
            put(h, names::X_OAUTH_CLIENT_ID, &app.client_id);
        }
    }
    if let Some(op) = op {
        for (name, value) in &op.meta().headers {
            h.insert(name.clone(), value.clone());
        }
        if let (Some(poll), StatusCode::OK | StatusCode::NOT_MODIFIED) = (op.traits.poll, status) {
            let base = match poll {
                Poll::Feed => app.config.poll_interval,
                Poll::Notifications => app.config.notifications.poll_interval,
            };
            h.insert(names::X_POLL_INTERVAL, HeaderValue::from(poll_interval(base, app.metrics.in_flight())));
        }
    }
    // Constant headers are static: no per-request validation or allocation.
    h.insert(names::X_SERVICE_API_VERSION_SELECTED, HeaderValue::from_static(x.version.as_str()));
    put(h, names::X_SERVICE_REQUEST_ID, &x.rid);
    h.insert(names::X_SERVICE_MEDIA_TYPE, HeaderValue::from_static("service.v3; format=json"));
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
    h.insert(header::VARY, HeaderValue::from_static("Accept, Authorization, Cookie, X-Service-OTP"));
    resp
}

/// Stage 7: what the request leaves behind — metrics, the access log and API insights.
fn record(app: &Shared, x: &Exchange, resp: &Response) {
    let op = x.answered_by;
    let route = op.map(|o| o.path).unwrap_or("unmatched");
    let status = resp.status().as_u16();
    let took = x.started.elapsed();
    let method = method_name(&x.method);
    app.metrics.record(method, route, status, took, x.rate_limited);
    crate::access_log::record(&x.rid, method, route, status, took);
    crate::usage_log::record(&app.insights, &x.principal, op.map(|o| (o, o.meta())), method, &x.path, status, x.rate_limited);
}

/// The caller's address: the connection's (as a layer-4 balancer's PROXY protocol header named
/// it), or behind trusted HTTP proxies what they saw.
pub fn client_ip(req: &Request, proxies: &TrustedProxies) -> IpAddr {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if !proxies.trusts(peer) || req.extensions().get::<crate::proxy_protocol::NamedByBalancer>().is_some() {
        return peer;
    }
    // Several header lines are one list (RFC 9110 5.3); a proxy may have appended its own line.
    let lines: Vec<&str> = req.headers().get_all(names::X_FORWARDED_FOR).iter().filter_map(|v| v.to_str().ok()).collect();
    proxies.client_ip(peer, (!lines.is_empty()).then(|| lines.join(",")).as_deref())
}

/// Requests in flight above which the server counts as busy and `X-Poll-Interval` doubles.
pub const BUSY_IN_FLIGHT: i64 = 512;

/// `X-Poll-Interval` of polled operations: the configured interval, doubled while more than
/// [`BUSY_IN_FLIGHT`] requests are in flight (document 1: it may rise under load).
pub fn poll_interval(base: u64, in_flight: i64) -> u64 {
    if in_flight > BUSY_IN_FLIGHT {
        base.saturating_mul(2)
    } else {
        base
    }
}

fn method_name(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn poll_interval_doubles_when_busy() {
        assert_eq!(super::poll_interval(60, 3), 60);
        assert_eq!(super::poll_interval(60, super::BUSY_IN_FLIGHT), 60);
        assert_eq!(super::poll_interval(60, super::BUSY_IN_FLIGHT + 1), 120);
    }

    /// Every operation with limits of its own (content creation, token issuing) is known before
    /// routing, so its limits are decided with the rest in one call.
    #[test]
    fn operations_that_count_are_found_before_routing() {
        let ops = crate::router::operations();
        let routing = super::Routing::of(ops);
        let mut counting = 0;
        for op in ops.iter().filter(|op| op.creates() || op.traits.limits == super::Limits::IssuesTokens) {
            let path: String = op.path.split('/').map(|s| if s.starts_with('{') { "x" } else { s }).collect::<Vec<_>>().join("/");
            let found = routing.counting(&op.method.http(), &path);
            assert!(found.is_some_and(|f| std::ptr::eq(f, *op)), "{} ({path}): found {:?}", op.id, found.map(|f| f.id));
            counting += 1;
        }
        assert!(counting > 10, "{counting} operations count");
    }
}
