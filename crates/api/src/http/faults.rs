//! Fault injection: rules set through the control plane (`/_admin/faults`) that make matching API
//! requests fail as a real limit or outage would (primary or secondary rate limit, an error
//! status) or answer late. In memory, per process; `POST /_admin/reset` clears them.
//!
//! The contract layer calls [`inject`] after authentication and before the primary limiter
//! charges. Nothing in a faulted response says it was injected. `maintenance` faults put a
//! service under maintenance instead: the operations of that service ask [`Faults::maintenance`]
//! and answer 503 themselves (with their own headers, e.g. `Deprecation`).
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use platform_core::ids::sha256_hex;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{ApiError, RATE_LIMIT_DOCS};
use crate::principal::Principal;
use crate::ratelimit::RateClass;

const MAX_LATENCY_MS: u64 = 600_000;
const MAX_RETRY_AFTER: u64 = 86_400;
const DEFAULT_RETRY_AFTER: u64 = 60;
/// The 503 message of a service under maintenance.
pub const MAINTENANCE_MESSAGE: &str = "Unavailable due to service under maintenance.";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    Primary,
    Secondary,
    Status,
    Latency,
    Maintenance,
}

impl FaultKind {
    fn parse(s: &str) -> Option<FaultKind> {
        Some(match s {
            "primary" => FaultKind::Primary,
            "secondary" => FaultKind::Secondary,
            "status" => FaultKind::Status,
            "latency" => FaultKind::Latency,
            "maintenance" => FaultKind::Maintenance,
            _ => return None,
        })
    }
    fn as_str(self) -> &'static str {
        match self {
            FaultKind::Primary => "primary",
            FaultKind::Secondary => "secondary",
            FaultKind::Status => "status",
            FaultKind::Latency => "latency",
            FaultKind::Maintenance => "maintenance",
        }
    }
}

/// One active fault. The caller's token is kept only as its SHA-256 hash.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub id: u64,
    pub kind: FaultKind,
    /// Upper-case method; `None` matches any.
    pub method: Option<String>,
    /// Glob over the request path below the API base.
    pub path: Option<String>,
    pub token_hash: Option<String>,
    /// Login of the authenticated user (case-insensitive).
    pub user: Option<String>,
    pub probability: f64,
    pub count: Option<u64>,
    /// Hits left; `None` is unlimited.
    pub remaining: Option<u64>,
    /// Answer status (primary/secondary: 403 or 429; status: 4xx/5xx).
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    pub latency_ms: Option<u64>,
    pub message: Option<String>,
}

impl Fault {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "kind": self.kind.as_str(),
            "method": self.method,
            "path": self.path,
            "token": self.token_hash.as_ref().map(|_| "<redacted>"),
            "user": self.user,
            "probability": self.probability,
            "count": self.count,
            "remaining": self.remaining,
            "status": self.status,
            "retry_after": self.retry_after,
            "latency_ms": self.latency_ms,
            "message": self.message,
        })
    }

    fn matches(&self, req: &Target<'_>, token_hash: &mut Option<Option<String>>) -> bool {
        if self.method.as_deref().is_some_and(|m| m != req.method.as_str()) {
            return false;
        }
        if self.path.as_deref().is_some_and(|g| !glob_match(g, req.path)) {
            return false;
        }
        if let Some(u) = &self.user {
            if !req.user.is_some_and(|l| l.eq_ignore_ascii_case(u)) {
                return false;
            }
        }
        if let Some(want) = &self.token_hash {
            // Hashed once per request, and only when some fault filters on a token.
            let got = token_hash.get_or_insert_with(|| req.token.map(|t| sha256_hex(t.as_bytes())));
            if got.as_deref() != Some(want.as_str()) {
                return false;
            }
        }
        true
    }
}

/// The control-plane body of `POST /_admin/faults`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultIn {
    pub kind: String,
    pub method: Option<String>,
    pub path: Option<String>,
    pub token: Option<String>,
    pub user: Option<String>,
    pub probability: Option<f64>,
    pub count: Option<u64>,
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    pub latency_ms: Option<u64>,
    pub message: Option<String>,
}

fn invalid(field: &str, message: &str) -> ApiError {
    ApiError::invalid_field("Fault", field, "invalid", Some(message.to_string()))
}

fn not_for(field: &str, kind: FaultKind) -> ApiError {
    invalid(field, &format!("{field} does not apply to a {} fault", kind.as_str()))
}

impl FaultIn {
    /// Checks the body and builds the fault (without its id).
    pub fn validate(self) -> Result<Fault, ApiError> {
        let kind = FaultKind::parse(&self.kind)
            .ok_or_else(|| invalid("kind", "kind is one of primary, secondary, status, latency, maintenance"))?;
        let method = match self.method {
            Some(m) if m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphabetic()) => {
                return Err(invalid("method", "method is an HTTP method name"))
            }
            Some(m) => Some(m.to_ascii_uppercase()),
            None => None,
        };
        if self.path.as_deref().is_some_and(|p| !p.starts_with('/')) {
            return Err(invalid("path", "path is a glob starting with /"));
        }
        if kind == FaultKind::Maintenance && self.token.is_some() {
            return Err(not_for("token", kind));
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err(invalid("token", "token is not empty"));
        }
        if self.user.as_deref().is_some_and(str::is_empty) {
            return Err(invalid("user", "user is a login"));
        }
        let probability = self.probability.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&probability) {
            return Err(invalid("probability", "probability is between 0 and 1"));
        }
        if self.count == Some(0) {
            return Err(invalid("count", "count is at least 1"));
        }
        let status = match (kind, self.status) {
            (FaultKind::Primary | FaultKind::Secondary, None) => Some(403),
            (FaultKind::Primary | FaultKind::Secondary, Some(s @ (403 | 429))) => Some(s),
            (FaultKind::Primary | FaultKind::Secondary, Some(_)) => return Err(invalid("status", "status of a rate limit is 403 or 429")),
            (FaultKind::Status, Some(s @ 400..=599)) => Some(s),
            (FaultKind::Status, _) => return Err(invalid("status", "status is required: 400 to 599")),
            (FaultKind::Latency, Some(_)) => return Err(not_for("status", kind)),
            (FaultKind::Latency, None) => None,
            (FaultKind::Maintenance, Some(_)) => return Err(not_for("status", kind)),
            (FaultKind::Maintenance, None) => Some(503),
        };
        let retry_after = match (kind, self.retry_after) {
            (FaultKind::Secondary, Some(r)) if r > MAX_RETRY_AFTER => {
                return Err(invalid("retry_after", "retry_after is at most 86400 seconds"))
            }
            (FaultKind::Secondary, r) => Some(r.unwrap_or(DEFAULT_RETRY_AFTER)),
            (_, Some(_)) => return Err(not_for("retry_after", kind)),
            (_, None) => None,
        };
        let latency_ms = match (kind, self.latency_ms) {
            (FaultKind::Latency, Some(l)) if l <= MAX_LATENCY_MS => Some(l),
            (FaultKind::Latency, _) => return Err(invalid("latency_ms", "latency_ms is required: 0 to 600000")),
            (_, Some(_)) => return Err(not_for("latency_ms", kind)),
            (_, None) => None,
        };
        let message = match (kind, self.message) {
            (FaultKind::Status, Some(m)) if m.is_empty() => return Err(invalid("message", "message is not empty")),
            (FaultKind::Status | FaultKind::Maintenance, Some(m)) if m.is_empty() => {
                return Err(invalid("message", "message is not empty"))
            }
            (FaultKind::Status | FaultKind::Maintenance, m) => m,
            (_, Some(_)) => return Err(not_for("message", kind)),
            (_, None) => None,
        };
        Ok(Fault {
            id: 0,
            kind,
            method,
            path: self.path,
            token_hash: self.token.map(|t| sha256_hex(t.as_bytes())),
            user: self.user,
            probability,
            count: self.count,
            remaining: self.count,
            status,
            retry_after,
            latency_ms,
            message,
        })
    }
}

/// The active faults of this process, in creation order.
#[derive(Default)]
pub struct Faults {
    list: Mutex<Vec<Fault>>,
    /// Mirrors `list.len()` so requests skip the lock when no fault is set.
    active: AtomicUsize,
    next_id: AtomicU64,
}

/// What a request looks like to the matcher.
pub struct Target<'a> {
    pub method: &'a Method,
    pub path: &'a str,
    /// The token text the caller sent (bearer or `token` scheme).
    pub token: Option<&'a str>,
    pub user: Option<&'a str>,
}

/// What the faults that fired decided for one request.
#[derive(Debug, Default, PartialEq)]
pub struct Hit {
    pub delay_ms: u64,
    /// The failure to answer with (the first failing fault that fired).
    pub failure: Option<Fault>,
}

impl Faults {
    pub fn add(&self, mut f: Fault) -> Fault {
        f.id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut list = self.lock();
        list.push(f.clone());
        self.active.store(list.len(), Ordering::Release);
        f
    }

    pub fn list(&self) -> Vec<Fault> {
        self.lock().clone()
    }

    pub fn remove(&self, id: u64) -> bool {
        let mut list = self.lock();
        let before = list.len();
        list.retain(|f| f.id != id);
        self.active.store(list.len(), Ordering::Release);
        list.len() != before
    }

    pub fn clear(&self) {
        let mut list = self.lock();
        list.clear();
        self.active.store(0, Ordering::Release);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Fault>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The message of a `maintenance` fault matching a request of a service's operation, if one
    /// fires (it uses one of its `count`, as other faults do).
    pub fn maintenance(&self, method: &Method, path: &str, user: Option<&str>) -> Option<String> {
        if self.active.load(Ordering::Acquire) == 0 {
            return None;
        }
        let req = Target { method, path, token: None, user };
        let mut out = None;
        let mut list = self.lock();
        list.retain_mut(|f| {
            if out.is_some() || f.kind != FaultKind::Maintenance || !f.matches(&req, &mut None) {
                return true;
            }
            if !(f.probability >= 1.0 || rand::random::<f64>() < f.probability) {
                return true;
            }
            out = Some(f.message.clone().unwrap_or_else(|| MAINTENANCE_MESSAGE.to_string()));
            match &mut f.remaining {
                Some(n) => {
                    *n -= 1;
                    *n > 0
                }
                None => true,
            }
        });
        self.active.store(list.len(), Ordering::Release);
        out
    }

    /// Rolls every matching fault: latency faults that fire add up; the first failing fault that
    /// fires is the answer (later failing faults are not consulted). Each fault that fires uses
    /// one of its `count`; a fault whose count runs out is removed.
    pub fn hit(&self, req: &Target<'_>, roll: &mut dyn FnMut() -> f64) -> Hit {
        let mut out = Hit::default();
        if self.active.load(Ordering::Acquire) == 0 {
            return out;
        }
        let mut token_hash = None;
        let mut list = self.lock();
        list.retain_mut(|f| {
            if f.kind == FaultKind::Maintenance || (f.kind != FaultKind::Latency && out.failure.is_some()) {
                return true;
            }
            if !f.matches(req, &mut token_hash) || !(f.probability >= 1.0 || roll() < f.probability) {
                return true;
            }
            match f.kind {
                FaultKind::Latency => out.delay_ms += f.latency_ms.unwrap_or(0),
                _ => out.failure = Some(f.clone()),
            }
            match &mut f.remaining {
                Some(n) => {
                    *n -= 1;
                    *n > 0
                }
                None => true,
            }
        });
        self.active.store(list.len(), Ordering::Release);
        out
    }
}

/// The token text of an `Authorization: Bearer|token <text>` header.
fn token_text(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, rest) = v.split_once(' ')?;
    matches!(scheme.to_ascii_lowercase().as_str(), "bearer" | "token").then(|| rest.trim()).filter(|t| !t.is_empty())
}

/// A failure answered in place of the operation.
pub struct Injected {
    pub response: Response,
    /// A primary-limit failure: the caller's real bucket is reported exhausted.
    pub exhausts_primary: bool,
    pub rate_limited: bool,
}

/// The contract layer's hook: sleeps for latency faults, then returns the failure to answer
/// with, if any.
pub async fn inject(
    faults: &Faults,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    principal: &Principal,
    class: &RateClass,
    request_id: &str,
) -> Option<Injected> {
    if faults.active.load(Ordering::Acquire) == 0 {
        return None;
    }
    let target = Target { method, path, token: token_text(headers), user: principal.user().map(|u| u.login.as_str()) };
    let hit = faults.hit(&target, &mut || rand::random::<f64>());
    if hit.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(hit.delay_ms)).await;
    }
    let f = hit.failure?;
    let status = StatusCode::from_u16(f.status.unwrap_or(500)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    Some(match f.kind {
        FaultKind::Primary => {
            let response = ApiError::new(status, class.exceeded_message()).with_docs(RATE_LIMIT_DOCS).into_response();
            Injected { response, exhausts_primary: true, rate_limited: true }
        }
        FaultKind::Secondary => {
            let retry_after = f.retry_after.unwrap_or(DEFAULT_RETRY_AFTER) as i64;
            let response = crate::secondary::refusal(status, request_id, retry_after).into_response();
            Injected { response, exhausts_primary: false, rate_limited: true }
        }
        _ => {
            let message = f.message.unwrap_or_else(|| standard_message(status, principal).to_string());
            Injected { response: ApiError::new(status, message).into_response(), exhausts_primary: false, rate_limited: false }
        }
    })
}

/// The message the platform uses for a status (api-facts §3.2), else the reason phrase.
fn standard_message(status: StatusCode, principal: &Principal) -> &'static str {
    match status.as_u16() {
        401 if matches!(principal, Principal::Anonymous) => "Requires authentication",
        401 => "Bad credentials",
        404 => "Not Found",
        422 => "Validation Failed",
        500 => "Internal Server Error",
        s => StatusCode::from_u16(s).ok().and_then(|s| s.canonical_reason()).unwrap_or("Error"),
    }
}

/// Glob over a path: `*` matches within one segment (no `/`), `**` matches across segments
/// (any characters, `/` included). `/**/` also matches a single `/`, and a trailing `/**` also
/// matches nothing (`/repos/**` matches `/repos`). Other characters match themselves.
pub fn glob_match(glob: &str, path: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum T {
        Lit(u8),
        Star,
        /// `**`; `true` for `/**/`, which may also be skipped together with the `/` after it.
        Deep(bool),
    }
    let g = glob.as_bytes();
    let mut toks = Vec::with_capacity(g.len());
    let mut i = 0;
    while i < g.len() {
        if g[i] == b'*' {
            let mut n = i;
            while n < g.len() && g[n] == b'*' {
                n += 1;
            }
            if n - i >= 2 {
                let after_slash = i > 0 && g[i - 1] == b'/';
                toks.push(T::Deep(after_slash && (n == g.len() || g[n] == b'/')));
            } else {
                toks.push(T::Star);
            }
            i = n;
        } else {
            toks.push(T::Lit(g[i]));
            i += 1;
        }
    }
    let p = path.as_bytes();
    let (n, m) = (toks.len(), p.len());
    // ok[i][j]: toks[i..] matches p[j..]; filled from the end (linear in glob × path).
    let mut ok = vec![vec![false; m + 1]; n + 1];
    ok[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            ok[i][j] = match toks[i] {
                T::Lit(c) => j < m && p[j] == c && ok[i + 1][j + 1],
                T::Star => ok[i + 1][j] || (j < m && p[j] != b'/' && ok[i][j + 1]),
                T::Deep(skippable) => {
                    ok[i + 1][j]
                        || (j < m && ok[i][j + 1])
                        // `/**/x` matches `/x`: drop the `**` and the `/` after it.
                        || (skippable && i + 1 < n && toks[i + 1] == T::Lit(b'/') && ok[i + 2][j])
                }
            };
        }
    }
    if ok[0][0] {
        return true;
    }
    // A trailing `/**` also matches the bare prefix.
    glob.strip_suffix("/**").is_some_and(|prefix| !prefix.is_empty() && glob_match(prefix, path))
}

#[cfg(test)]
mod tests {
    /// Fault path globs come from the control plane; paths from anyone.
    #[test]
    fn globs_never_panic() {
        let inputs = platform_core::fuzz::strings(&["/repos/*/*/events", "/repos/**", "/orgs/{org}/hooks", "*", "/a/b"], 3_000, 5);
        for (i, g) in inputs.iter().enumerate() {
            for p in inputs.iter().skip(i % 89).step_by(277) {
                let _ = glob_match(g, p);
            }
        }
    }

    use super::*;

    #[test]
    fn single_star_stays_in_a_segment() {
        assert!(glob_match("/repos/*/*/statuses/*", "/repos/alice/hello/statuses/abc"));
        assert!(!glob_match("/repos/*/*/statuses/*", "/repos/alice/hello/statuses/a/b"));
        assert!(!glob_match("/repos/*", "/repos/alice/hello"));
        assert!(glob_match("/repos/*", "/repos/alice"));
        assert!(glob_match("/repos/a*e", "/repos/alice"));
        assert!(!glob_match("/repos/a*e", "/repos/alicex"));
        assert!(glob_match("/repos/*", "/repos/"));
        assert!(!glob_match("/rate_limit", "/rate_limit/x"));
        assert!(glob_match("/rate_limit", "/rate_limit"));
        assert!(!glob_match("/rate_limit", "/rate_limi"));
    }

    #[test]
    fn double_star_crosses_segments() {
        assert!(glob_match("/repos/*/*/statuses/**", "/repos/alice/hello/statuses/abc"));
        assert!(glob_match("/repos/*/*/statuses/**", "/repos/alice/hello/statuses/heads/feature/x"));
        assert!(glob_match("/repos/*/*/statuses/**", "/repos/alice/hello/statuses"));
        assert!(!glob_match("/repos/*/*/statuses/**", "/repos/alice/hello/status"));
        assert!(glob_match("/**", "/"));
        assert!(glob_match("/**", "/anything/at/all"));
        assert!(glob_match("**", "/anything/at/all"));
        assert!(glob_match("/repos/**/status", "/repos/a/b/commits/main/status"));
        assert!(!glob_match("/repos/**/status", "/repos/a/b/commits/main/statuses"));
        assert!(glob_match("/repos/**/statuses", "/repos/a/b/commits/main/statuses"));
        assert!(glob_match("/repos/**/statuses", "/repos/statuses"));
        assert!(glob_match("/**/x*/y", "/a/xb/c/xd/y"));
        assert!(!glob_match("/**/x*/y", "/a/xb/c/d/y"));
        assert!(glob_match("/a/**", "/a"));
        assert!(glob_match("/a/**", "/a/"));
        assert!(!glob_match("/a/**", "/ab"));
        assert!(glob_match("/orgs/*/insights/**/stats", "/orgs/acme/insights/api/summary-stats/users/1/stats"));
        assert!(!glob_match("/orgs/*/insights/**", "/orgs/acme/x/insights/api"));
    }

    #[test]
    fn literal_globs() {
        assert!(glob_match("/", "/"));
        assert!(!glob_match("/", "/x"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "/"));
    }

    fn fault(body: Value) -> Fault {
        serde_json::from_value::<FaultIn>(body).unwrap().validate().unwrap()
    }

    fn target<'a>(method: &'a Method, path: &'a str, token: Option<&'a str>, user: Option<&'a str>) -> Target<'a> {
        Target { method, path, token, user }
    }

    #[test]
    fn matching_counts_and_probability() {
        let faults = Faults::default();
        let get = Method::GET;
        let post = Method::POST;
        let mut one = || 0.5;
        assert_eq!(faults.hit(&target(&get, "/", None, None), &mut one), Hit::default());
        let a = faults.add(fault(json!({"kind": "status", "status": 502, "method": "post", "path": "/repos/**", "count": 2})));
        assert_eq!(a.id, 1);
        assert!(faults.hit(&target(&get, "/repos/a/b", None, None), &mut one).failure.is_none());
        assert!(faults.hit(&target(&post, "/orgs/a", None, None), &mut one).failure.is_none());
        assert_eq!(faults.hit(&target(&post, "/repos/a/b", None, None), &mut one).failure.unwrap().id, 1);
        assert_eq!(faults.list()[0].remaining, Some(1));
        assert!(faults.hit(&target(&post, "/repos/a/b", None, None), &mut one).failure.is_some());
        assert!(faults.list().is_empty());
        assert!(faults.hit(&target(&post, "/repos/a/b", None, None), &mut one).failure.is_none());

        // Probability: fires when the roll is below it.
        faults.add(fault(json!({"kind": "primary", "probability": 0.25})));
        assert!(faults.hit(&target(&get, "/", None, None), &mut one).failure.is_none());
        assert!(faults.hit(&target(&get, "/", None, None), &mut || 0.1).failure.is_some());
        faults.clear();
        faults.add(fault(json!({"kind": "primary", "probability": 0.0})));
        assert!(faults.hit(&target(&get, "/", None, None), &mut || 0.0).failure.is_none());
        faults.clear();

        // Token (by hash) and user (case-insensitive).
        let f = faults.add(fault(json!({"kind": "secondary", "token": "svp_secret", "user": "Alice"})));
        assert_eq!(f.to_json()["token"], "<redacted>");
        assert!(!f.to_json().to_string().contains("svp_secret"));
        assert_eq!(f.retry_after, Some(60));
        assert!(faults.hit(&target(&get, "/", Some("svp_secret"), Some("bob")), &mut one).failure.is_none());
        assert!(faults.hit(&target(&get, "/", Some("svp_other"), Some("alice")), &mut one).failure.is_none());
        assert!(faults.hit(&target(&get, "/", None, Some("alice")), &mut one).failure.is_none());
        assert!(faults.hit(&target(&get, "/", Some("svp_secret"), Some("alice")), &mut one).failure.is_some());
        faults.clear();

        // Latency adds up; the first failure wins and later ones keep their count.
        faults.add(fault(json!({"kind": "latency", "latency_ms": 10})));
        faults.add(fault(json!({"kind": "status", "status": 503, "count": 1})));
        faults.add(fault(json!({"kind": "status", "status": 500, "count": 1})));
        faults.add(fault(json!({"kind": "latency", "latency_ms": 5, "count": 1})));
        let h = faults.hit(&target(&get, "/", None, None), &mut one);
        assert_eq!((h.delay_ms, h.failure.unwrap().status), (15, Some(503)));
        let h = faults.hit(&target(&get, "/", None, None), &mut one);
        assert_eq!((h.delay_ms, h.failure.unwrap().status), (10, Some(500)));
        assert_eq!(faults.list().len(), 1);
        assert!(faults.remove(faults.list()[0].id));
        assert!(!faults.remove(999));
    }

    #[test]
    fn validation() {
        let bad = |b: Value| match serde_json::from_value::<FaultIn>(b) {
            Ok(f) => f.validate().err().map(|e| e.status.as_u16()),
            Err(_) => Some(422),
        };
        for b in [
            json!({}),
            json!({"kind": "nope"}),
            json!({"kind": "primary", "probability": 1.5}),
            json!({"kind": "primary", "probability": -0.1}),
            json!({"kind": "primary", "count": 0}),
            json!({"kind": "primary", "count": -1}),
            json!({"kind": "primary", "status": 500}),
            json!({"kind": "secondary", "status": 404}),
            json!({"kind": "secondary", "retry_after": 1.5}),
            json!({"kind": "secondary", "retry_after": "60"}),
            json!({"kind": "status"}),
            json!({"kind": "status", "status": 200}),
            json!({"kind": "status", "status": 600}),
            json!({"kind": "latency"}),
            json!({"kind": "latency", "latency_ms": 600_001}),
            json!({"kind": "latency", "latency_ms": 5, "status": 500}),
            json!({"kind": "primary", "message": "x"}),
            json!({"kind": "primary", "retry_after": 5}),
            json!({"kind": "primary", "path": "repos"}),
            json!({"kind": "primary", "method": "GET /"}),
            json!({"kind": "primary", "token": ""}),
            json!({"kind": "primary", "typo": 1}),
        ] {
            assert_eq!(bad(b.clone()), Some(422), "{b}");
        }
        for b in [
            json!({"kind": "primary"}),
            json!({"kind": "primary", "status": 429}),
            json!({"kind": "secondary", "status": 429, "retry_after": 0}),
            json!({"kind": "status", "status": 502, "message": "Server Error"}),
            json!({"kind": "latency", "latency_ms": 0, "probability": 0}),
        ] {
            assert_eq!(bad(b.clone()), None, "{b}");
        }
    }
}
