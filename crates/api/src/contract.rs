//! The request contract of document 1, applied to every API request in one place:
//! request id, path normalisation, API version, User-Agent, authentication, injected faults
//! (`faults.rs`), primary rate limit, ETag/304 (and `Last-Modified`/`If-Modified-Since` → 304 for
//! handlers that set `Last-Modified`; neither 304 is charged), error bodies with the operation's docs, and the
//! response headers
//! (`x-ratelimit-*`, scopes, accepted permissions, version, CORS).
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use platform_core::ids::request_id;
use platform_core::ApiVersion;

use crate::error::{ApiError, ErrorMark, RATE_LIMIT_DOCS};
use crate::headers as names;
use crate::not_modified;
use crate::principal::{authenticate, Principal};
use crate::ratelimit::Quota;
use crate::reply::Fresh;
use crate::request::{OpRef, ReqInfo};
use crate::state::Shared;

pub const EXPOSED_HEADERS: &str = "ETag, Link, Location, Retry-After, X-Service-OTP, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Used, X-RateLimit-Resource, X-RateLimit-Reset, X-OAuth-Scopes, X-Accepted-OAuth-Scopes, X-Poll-Interval, X-Service-Media-Type, X-Service-SSO, X-Service-Request-Id, Deprecation, Sunset, X-Service-Api-Version-Selected";
const ALLOWED_HEADERS: &str = "Authorization, Content-Type, If-Match, If-Modified-Since, If-None-Match, If-Unmodified-Since, Accept, Accept-Encoding, User-Agent, X-Requested-With, X-Service-OTP, X-Service-Api-Version";
const UA_MESSAGE: &str = "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.service.example/rest/overview/resources-in-the-rest-api#user-agent-required).";

/// Paths whose last parameter may contain `/` (branch names): the slashes are encoded so the
/// router sees one segment; the path extractor decodes them again.
fn normalize_path(path: &str) -> Option<String> {
    // Most paths need nothing: look at the fifth segment only, without splitting the rest.
    let mut head = path.splitn(6, '/');
    let (Some(""), Some("repos"), Some(owner), Some(repo), Some(fifth), Some(rest)) =
        (head.next(), head.next(), head.next(), head.next(), head.next(), head.next())
    else {
        return None;
    };
    // `…/commits/{ref..}/status|statuses` and `…/rules/branches/{branch..}`: the slashes of the
    // ref or branch (what lies between `keep_head` and `keep_tail`) are encoded.
    let (keep_head, name, keep_tail) = match fifth {
        "commits" => {
            let (name, last) = rest.rsplit_once('/')?;
            if last != "status" && last != "statuses" {
                return None;
            }
            ("commits/", name, Some(last))
        }
        "rules" => ("rules/branches/", rest.strip_prefix("branches/")?, None),
        _ => return None,
    };
    if !name.contains('/') {
        return None;
    }
    let mut out = String::with_capacity(path.len() + 16);
    for part in ["/repos/", owner, "/", repo, "/", keep_head] {
        out.push_str(part);
    }
    for (i, seg) in name.split('/').enumerate() {
        if i > 0 {
            out.push_str("%2F");
        }
        out.push_str(seg);
    }
    if let Some(last) = keep_tail {
        out.push('/');
        out.push_str(last);
    }
    Some(out)
}

pub fn client_ip(req: &Request, trust_forwarded: bool) -> IpAddr {
    if trust_forwarded {
        if let Some(ip) = req
            .headers()
            .get(names::X_FORWARDED_FOR)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.trim().parse().ok())
        {
            return ip;
        }
    }
    req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// SipHash-1-3 with a 128-bit output under the keys `(k0, k1)`: the one fast keyed hash of
/// whole values (ETags under fixed keys, the token cache under secret ones).
pub fn sip128(k0: u64, k1: u64, bytes: &[u8]) -> u128 {
    use siphasher::sip128::{Hasher128, SipHasher13};
    use std::hash::Hasher;
    let mut h = SipHasher13::new_with_keys(k0, k1);
    h.write(bytes);
    h.finish128().as_u128()
}

/// Strong ETag of a body: SipHash under fixed keys, so every node names the same body alike. A
/// validator needs no cryptographic hash, and SHA-256 cost a third of the time of a 100 KB list
/// on this hardware.
pub fn etag_of(body: &[u8]) -> String {
    format!("\"{:032x}\"", sip128(0x706c_6174_666f_726d, 0x6574_6167_7631, body))
}

pub fn etag_matches(if_none_match: Option<&HeaderValue>, etag: &str) -> bool {
    let Some(inm) = if_none_match.and_then(|v| v.to_str().ok()) else { return false };
    let bare = etag.trim_start_matches("W/");
    inm.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == bare)
}

/// A handler's `Last-Modified` answered by `If-Modified-Since` (only when no `If-None-Match`
/// was sent: that one takes precedence): the resource did not change since the client's copy.
fn not_modified_since(
    if_none_match: Option<&HeaderValue>,
    if_modified_since: Option<&HeaderValue>,
    last_modified: Option<&HeaderValue>,
) -> bool {
    if if_none_match.is_some() {
        return false;
    }
    let parse = |v: &HeaderValue| v.to_str().ok().and_then(platform_core::time::parse_http_date);
    match (if_modified_since.and_then(parse), last_modified.and_then(parse)) {
        (Some(since), Some(modified)) => modified <= since,
        _ => false,
    }
}

pub async fn contract(State(app): State<Shared>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    app.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    let rid = request_id();
    let method = req.method().clone();

    // Serve under the public URL's path (e.g. `/api/v3`) as well as at the root.
    let base = app.urls.base_path();
    let mut path = req.uri().path().to_string();
    if !base.is_empty() && (path == base || path.starts_with(&format!("{base}/"))) {
        path = path[base.len()..].to_string();
        if path.is_empty() {
            path = "/".into();
        }
    }
    // Faults match the path as sent, below the API base.
    let api_path = path.clone();
    if let Some(p) = normalize_path(&path) {
        path = p;
    }
    if path != req.uri().path() {
        let pq = match req.uri().query() {
            Some(q) => format!("{path}?{q}"),
            None => path.clone(),
        };
        if let Ok(uri) = pq.parse() {
            *req.uri_mut() = uri;
        }
    }

    let ip = client_ip(&req, app.config.trust_forwarded);
    let mut version = ApiVersion::DEFAULT;
    let mut principal = Principal::Anonymous;
    let mut quota: Option<Quota> = None;
    let mut rate_limited = false;
    // The operation of an answer given before routing (a known 304); routed answers carry theirs.
    let mut answered_by: Option<&'static crate::operation::Operation> = None;

    let mut resp = 'serve: {
        if method == Method::OPTIONS {
            let mut r = StatusCode::NO_CONTENT.into_response();
            let h = r.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PATCH, PUT, DELETE"));
            h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOWED_HEADERS));
            h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
            break 'serve r;
        }
        if let Some(v) = req.headers().get(names::X_SERVICE_API_VERSION) {
            let given = String::from_utf8_lossy(v.as_bytes()).to_string();
            match ApiVersion::parse(&given) {
                Some(v) => version = v,
                None => {
                    break 'serve ApiError::bad_request("Bad Request")
                        .with_errors(serde_json::Value::String(ApiVersion::unsupported_message(&given)))
                        .into_response()
                }
            }
        }
        if req.headers().get(header::USER_AGENT).is_none_or(|v| v.is_empty()) {
            break 'serve ApiError::forbidden(UA_MESSAGE).into_response();
        }
        // An address locked out after failed logins may not authenticate for a while.
        if req.headers().contains_key(header::AUTHORIZATION) {
            if let Some(_left) = app.secondary.locked_out(ip, app.clock.now()).await {
                break 'serve ApiError::forbidden(crate::secondary::LOCKOUT_MESSAGE).into_response();
            }
        }
        // Before anything cached is read: see `state::Generation`.
        let observed = app.observe().await;
        principal = match authenticate(&app, req.headers(), observed).await {
            Ok(p) => p,
            Err(e) => {
                if e.status == StatusCode::UNAUTHORIZED && !crate::secondary::is_token_check(&method, &path) {
                    app.secondary.failed_login(ip, app.clock.now()).await;
                }
                break 'serve e.into_response();
            }
        };
        let class = principal.rate_class(ip);
        // Secondary limits: a place among the requester's concurrent requests (held until the
        // answer is made, injected latency included) and the method's points.
        let _slot = match app.secondary.enter(class.bucket, &method, app.clock.now()).await {
            Ok(slot) => slot,
            Err(retry_after) => {
                rate_limited = true;
                break 'serve crate::secondary::refusal(StatusCode::FORBIDDEN, &rid, retry_after).into_response();
            }
        };
        // Injected faults: after authentication, before the primary limiter charges.
        if let Some(f) = crate::faults::inject(&app, &method, &api_path, req.headers(), &principal, &class, &rid).await {
            (quota, rate_limited) = (f.quota, f.rate_limited);
            break 'serve f.response;
        }
        let now = app.clock.now();
        // `GET /rate_limit` is never charged.
        let charged = app.config.rate_limits && path != "/rate_limit";
        if charged {
            match app.limiter.charge(&class, now).await {
                Ok(q) => quota = Some(q),
                Err(q) => {
                    quota = Some(q);
                    rate_limited = true;
                    break 'serve ApiError::forbidden(class.exceeded_message()).with_docs(RATE_LIMIT_DOCS).into_response();
                }
            }
        } else if app.config.rate_limits {
            quota = Some(app.limiter.peek(&class, now).await);
        }
        // Only the conditional headers are needed after the handler: keep them, not every header.
        let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
        let if_modified_since = req.headers().get(header::IF_MODIFIED_SINCE).cloned();
        // A conditional GET whose answer is known not to have changed: 304 without routing.
        let generation = app.generation(observed);
        let validator = match (&if_none_match, generation) {
            (Some(inm), Some(g)) if method == Method::GET => {
                let pq = req.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
                let key = (pq, version, principal.cache_key());
                if let Some((r, op)) = not_modified::answer(&app, &key, g, inm, now) {
                    if charged {
                        quota = Some(app.limiter.refund(&class, now).await);
                    }
                    answered_by = Some(op);
                    break 'serve r;
                }
                Some((key, g))
            }
            _ => None,
        };
        req.extensions_mut().insert(ReqInfo { principal: principal.clone(), ip, version, request_id: rid.clone(), generation: observed });
        // A panicking handler answers 500 with the error body; the server goes on.
        let mut resp = match AssertUnwindSafe(next.run(req)).catch_unwind().await {
            Ok(r) => r,
            Err(_) => {
                tracing::error!(request_id = %rid, "handler panicked");
                ApiError::internal().into_response()
            }
        };

        // Strong ETag on successful GETs; a matching If-None-Match is a 304 that costs nothing.
        if method == Method::GET && resp.status() == StatusCode::OK {
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
                not_modified::remember(&app, key, g, until, &etag, &parts.headers, op);
            }
            if etag_matches(if_none_match.as_ref(), &etag)
                || not_modified_since(if_none_match.as_ref(), if_modified_since.as_ref(), parts.headers.get(header::LAST_MODIFIED))
            {
                resp = Response::from_parts(parts, Body::empty());
                *resp.status_mut() = StatusCode::NOT_MODIFIED;
                resp.headers_mut().remove(header::CONTENT_TYPE);
                resp.headers_mut().remove(header::CONTENT_LENGTH);
                if charged {
                    quota = Some(app.limiter.refund(&class, now).await);
                }
            } else {
                resp = Response::from_parts(parts, body);
            }
            if let Ok(v) = HeaderValue::from_str(&etag) {
                resp.headers_mut().insert(header::ETAG, v);
            }
        }
        resp
    };

    // Answers decided before charging (preflight, unsupported version, no User-Agent, bad
    // credentials) still report the caller's bucket (the address's, for an unidentified caller):
    // clients read `x-ratelimit-*` on every response.
    if quota.is_none() && app.config.rate_limits {
        quota = Some(app.limiter.peek(&principal.rate_class(ip), app.clock.now()).await);
    }

    let op = answered_by.or_else(|| resp.extensions().get::<OpRef>().map(|o| o.0));
    // Error bodies carry the operation's documentation URL; the rate-limit page marks limits
    // refused inside the operation (content creation, token issuing).
    let mark = resp.extensions().get::<ErrorMark>().cloned();
    rate_limited |= mark.as_ref().is_some_and(|m| m.0.docs == Some(RATE_LIMIT_DOCS));
    if let (Some(mark), Some(op)) = (mark, op) {
        if mark.0.docs.is_none() {
            let body = serde_json::to_vec(&mark.0.body(Some(op.docs))).unwrap_or_default();
            resp.headers_mut().remove(header::CONTENT_LENGTH);
            *resp.body_mut() = Body::from(body);
        }
    }

    let status = resp.status();
    let h = resp.headers_mut();
    h.reserve(ADDED_HEADERS); // the headers below, without regrowing the map several times
    let put = |h: &mut HeaderMap, k: HeaderName, v: &str| {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(k, v);
        }
    };
    if let Some(q) = quota {
        h.insert(names::X_RATELIMIT_LIMIT, HeaderValue::from(q.limit));
        h.insert(names::X_RATELIMIT_REMAINING, HeaderValue::from(q.remaining));
        h.insert(names::X_RATELIMIT_RESET, HeaderValue::from(q.reset));
        h.insert(names::X_RATELIMIT_USED, HeaderValue::from(q.used));
        h.insert(names::X_RATELIMIT_RESOURCE, HeaderValue::from_static("core"));
    }
    if let Principal::Token(t) = &principal {
        if t.token.kind.uses_scopes() {
            put(h, names::X_OAUTH_SCOPES, &t.token.scopes.join(", "));
        }
        if let (platform_core::TokenKind::Oauth, Some(app)) = (t.token.kind, &t.app) {
            put(h, names::X_OAUTH_CLIENT_ID, &app.client_id);
        }
    }
    let meta = op.map(|o| (o, o.meta()));
    if let Some((_, meta)) = meta {
        for (name, value) in &meta.headers {
            h.insert(name.clone(), value.clone());
        }
    }
    if let Some((op, _)) = meta.filter(|(_, m)| m.polled && matches!(status, StatusCode::OK | StatusCode::NOT_MODIFIED)) {
        let base = if op.id.starts_with("notifications/") { app.config.notifications_poll_interval } else { app.config.poll_interval };
        h.insert(names::X_POLL_INTERVAL, HeaderValue::from(poll_interval(base, app.metrics.in_flight.load(Ordering::Relaxed))));
    }
    // Constant headers are static: no per-request validation or allocation.
    h.insert(names::X_SERVICE_API_VERSION_SELECTED, HeaderValue::from_static(version.as_str()));
    put(h, names::X_SERVICE_REQUEST_ID, &rid);
    h.insert(names::X_SERVICE_MEDIA_TYPE, HeaderValue::from_static("service.v3; format=json"));
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
    h.insert(header::VARY, HeaderValue::from_static("Accept, Authorization, Cookie, X-Service-OTP"));

    let route = op.map(|o| o.path).unwrap_or("unmatched");
    let status = status.as_u16();
    let took = started.elapsed();
    app.metrics.record(method_name(&method), route, status, took, rate_limited);
    app.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
    crate::access_log::record(&rid, method_name(&method), route, status, took);
    crate::insights::record(&app, &principal, meta, method_name(&method), &path, status, rate_limited);
    resp
}

/// How many headers the contract may add to a response: maps made for responses leave room
/// for them.
pub const ADDED_HEADERS: usize = 24;

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

    #[test]
    fn branch_refs_with_slashes_become_one_segment() {
        assert_eq!(
            super::normalize_path("/repos/o/r/commits/heads/feature/x/status").as_deref(),
            Some("/repos/o/r/commits/heads%2Ffeature%2Fx/status")
        );
        assert_eq!(super::normalize_path("/repos/o/r/commits/main/status"), None);
        assert_eq!(super::normalize_path("/repos/o/r/rules/branches/feature/x").as_deref(), Some("/repos/o/r/rules/branches/feature%2Fx"));
        assert_eq!(super::normalize_path("/repos/o/r/rules/branches/main"), None);
        assert_eq!(super::normalize_path("/repos/o/r/commits/a/b/check-runs"), None);
        assert_eq!(super::normalize_path("/repos/o/r/commits/a/b/statuses").as_deref(), Some("/repos/o/r/commits/a%2Fb/statuses"));
        assert_eq!(super::normalize_path("/repos/o/r/rulesets/1/x"), None);
        assert_eq!(super::normalize_path("/orgs/o/r/commits/a/b/status"), None);
    }
}
