//! Extractors: the request context every handler takes, path and query parameters, and JSON
//! bodies whose rejections are our own error bodies.
use std::collections::HashMap;
use std::hash::BuildHasher;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::request::Parts;
use platform_core::pagination::Page;
use platform_core::ApiVersion;
use serde_json::Value;

use crate::error::ApiError;
use crate::operation::Operation;
use crate::principal::Principal;
use crate::state::Shared;

/// Set by the contract layer on every API request.
#[derive(Clone)]
pub struct ReqInfo {
    pub principal: Principal,
    pub ip: std::net::IpAddr,
    pub version: ApiVersion,
    pub request_id: String,
    /// The write generation observed when the request began.
    pub generation: crate::state::Generation,
}

/// The operation a route serves; set by the route's own layer.
#[derive(Clone, Copy)]
pub struct OpRef(pub &'static Operation);

pub struct Ctx {
    pub app: Shared,
    pub principal: Principal,
    /// The write generation observed when the request began (see [`Ctx::generation`]).
    observed: crate::state::Generation,
    pub ip: std::net::IpAddr,
    pub version: ApiVersion,
    pub op: &'static Operation,
    /// Request path below the API base, e.g. `/repos/o/r/commits/main/statuses`.
    pub path: String,
    pub query: Query,
    params: HashMap<String, String>,
}

impl FromRequestParts<Shared> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, ApiError> {
        let info = parts.extensions.get::<ReqInfo>().cloned().ok_or_else(ApiError::internal)?;
        let op = parts.extensions.get::<OpRef>().copied().ok_or_else(ApiError::internal)?.0;
        let raw = RawPathParams::from_request_parts(parts, app).await.map_err(|_| ApiError::not_found())?;
        // What the operation itself counts toward the secondary limits.
        let app_id = match &info.principal {
            Principal::App(a) => Some(a.app.id),
            Principal::Token(t) => t.app.as_ref().map(|a| a.id),
            Principal::Anonymous => None,
        };
        if let Err(retry_after) = app.secondary.operation(info.principal.rate_class(info.ip).bucket, op, app_id, app.clock.now()).await {
            return Err(crate::secondary::refusal(axum::http::StatusCode::FORBIDDEN, &info.request_id, retry_after));
        }
        // NUL can name nothing stored (PostgreSQL text refuses it): such a path names no
        // resource, and such a query value is no valid filter.
        if raw.iter().any(|(_, v)| v.contains('\0')) {
            return Err(ApiError::not_found());
        }
        let query = Query::parse(parts.uri.query().unwrap_or(""));
        if query.pairs.iter().any(|(k, v)| k.contains('\0') || v.contains('\0')) {
            return Err(ApiError::invalid_request("Query parameters may not contain NUL characters."));
        }
        let params = raw.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Ok(Ctx {
            app: app.clone(),
            principal: info.principal,
            observed: info.generation,
            ip: info.ip,
            version: info.version,
            op,
            path: parts.uri.path().to_string(),
            query,
            params,
        })
    }
}

/// Fixed keys: the admission set only needs a spread, not secrecy.
static ASKED_HASHER: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x5eed);

impl Ctx {
    /// A path parameter of the route (missing only through a routing bug).
    pub fn param(&self, name: &str) -> &str {
        self.params.get(name).map(String::as_str).unwrap_or("")
    }

    /// The body as the operation's declared type: checked first against its schema (the one
    /// OpenAPI publishes) for the platform's messages, then deserialized.
    pub fn body<T: serde::de::DeserializeOwned>(&self, body: Value) -> Result<T, ApiError> {
        self.op.read_body(body)
    }

    /// `page`/`per_page` of the query with the operation's default and maximum; a value that is
    /// not an integer is `422 Invalid request.`
    pub fn page(&self, default: i64, max: i64) -> Result<Page, ApiError> {
        Page::parse(self.query.get("page"), self.query.get("per_page"), default, max)
            .map_err(|(name, v)| ApiError::invalid_request(format!("For '{name}', {v:?} is not an integer.")))
    }

    /// The generation caches are keyed by for this request now (`None`: no cache).
    pub fn generation(&self) -> Option<u64> {
        self.app.generation(self.observed)
    }

    /// [`Ctx::generation`] for caches of credentials and repository access.
    pub fn access_generation(&self) -> Option<u64> {
        self.app.access_generation(self.observed)
    }

    /// Serves a GET from the response cache when nothing was written since it was built. Entries
    /// are per caller (token, app or anonymous) as well as per request, so content that depends on
    /// who asks can never be served to someone else; authorization has already run.
    pub async fn cached<F>(&self, build: F) -> Result<crate::reply::Reply, ApiError>
    where
        F: std::future::Future<Output = Result<crate::reply::Reply, ApiError>>,
    {
        self.cached_until(Sharing::Caller, async { Ok((build.await?, i64::MAX)) }).await
    }

    /// Like [`Ctx::cached`], for answers that are exact only until a time of the platform clock
    /// (`build` returns it with the reply), and that callers with the same view may share. The
    /// entry carries its ETag so the contract layer need not hash the body again.
    pub async fn cached_until<F>(&self, sharing: Sharing, build: F) -> Result<crate::reply::Reply, ApiError>
    where
        F: std::future::Future<Output = Result<(crate::reply::Reply, i64), ApiError>>,
    {
        let Some(generation) = self.generation() else { return Ok(build.await?.0) };
        let now = self.app.clock.now();
        let key = match sharing {
            Sharing::Caller => (self.path_and_query(), self.version, self.principal.cache_key()),
            Sharing::View(view) => (format!("{view}|{}", self.path_and_query()), self.version, 0),
        };
        if let Some((from, until, hit)) = self.app.caches.responses.get(&key, generation) {
            if from <= now && now < until {
                return Ok(hit);
            }
        }
        let (reply, until) = build.await?;
        let etag = reply.body().map(|b| crate::etag::etag_of(b));
        let reply = match etag {
            Some(e) => reply.header("etag", e),
            None => reply,
        }
        .fresh_until(until);
        // Admission on the second request: one-off URLs (cursors, unique names, salts) would
        // otherwise push out the answers that are asked again, and hold memory for nothing.
        let asked = ASKED_HASHER.hash_one(&key);
        if self.app.caches.asked.get(&asked, generation).is_some() {
            self.app.caches.responses.put(key, generation, (now, until, reply.clone()));
        } else {
            self.app.caches.asked.put(asked, generation, ());
        }
        Ok(reply)
    }

    fn path_and_query(&self) -> String {
        let q: Vec<String> = self.query.pairs.iter().map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v))).collect();
        format!("{}?{}", self.path, q.join("&"))
    }

    /// `Link` header for a page-based list: absolute URLs that repeat the request's query.
    pub fn link(&self, page: Page, total: i64) -> Option<String> {
        page.link_header(total, |n| {
            let mut q: Vec<(String, String)> = self.query.pairs.iter().filter(|(k, _)| k != "page").cloned().collect();
            q.push(("page".into(), n.to_string()));
            format!("{}{}?{}", self.app.urls.api, self.path, encode_query(&q))
        })
    }
}

/// Who may be served a cached response.
pub enum Sharing {
    /// Only the caller that built it.
    Caller,
    /// Every caller with this view of the resource (a key naming what they may see).
    View(String),
}

/// Decoded query pairs in request order.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pub pairs: Vec<(String, String)>,
}

impl Query {
    pub fn parse(q: &str) -> Query {
        let pairs = q
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        Query { pairs }
    }

    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub fn percent_decode(s: &str) -> String {
    decode(s, true)
}

/// Percent-decoding of a URL path, where `+` is itself.
pub fn percent_decode_path(s: &str) -> String {
    decode(s, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < b.len() => match std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(v) => {
                    out.push(v);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes one query component (RFC 3986 unreserved characters stay).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn encode_query(pairs: &[(String, String)]) -> String {
    pairs.iter().map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v))).collect::<Vec<_>>().join("&")
}

/// A request body of at most `limit` bytes (413 beyond), received within the body-read timeout
/// (408 beyond: a client sending slowly holds nothing for long); the one place bodies are read.
pub async fn read_body(app: &crate::state::AppState, body: axum::body::Body, limit: usize) -> Result<Bytes, ApiError> {
    let read = tokio::time::timeout(app.config.body_read_timeout, axum::body::to_bytes(body, limit));
    read.await.map_err(|_| ApiError::request_timeout())?.map_err(|e| {
        if std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>()) {
            ApiError::payload_too_large()
        } else {
            ApiError::bad_request("Problems parsing JSON")
        }
    })
}

/// A request's body within the configured size ([`read_body`]); a larger `Content-Length` is
/// refused before anything is read.
pub async fn read_request_body(app: &crate::state::AppState, req: Request) -> Result<Bytes, ApiError> {
    let limit = app.config.max_body_bytes;
    let declared =
        req.headers().get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(ApiError::payload_too_large());
    }
    read_body(app, req.into_body(), limit).await
}

/// A JSON object body. Empty bodies read as `{}` (required fields then fail validation);
/// invalid JSON is `400 Problems parsing JSON`, other JSON `400 Body should be a JSON object`,
/// a body over the configured size `413`.
pub struct JsonBody(pub Value);

impl FromRequest<Shared> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &Shared) -> Result<Self, ApiError> {
        let bytes = read_request_body(app, req).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JsonBody(Value::Object(Default::default())));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v @ Value::Object(_)) => {
                crate::validate::check_strings(&v)?;
                Ok(JsonBody(v))
            }
            Ok(_) => Err(ApiError::bad_request("Body should be a JSON object")),
            Err(_) => Err(ApiError::bad_request("Problems parsing JSON")),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Query strings come from anyone.
    #[test]
    fn query_parsing_never_panics() {
        for s in platform_core::fuzz::strings(&["a=b&c=%20d", "%zz%4", "x=%C3%A9&y", "=&&="], 20_000, 7) {
            let q = Query::parse(&s);
            let _ = percent_encode(&percent_decode(&s));
            let _ = q.get("a");
        }
    }

    use super::*;
    #[test]
    fn query_round_trip() {
        let q = Query::parse("a=1&b=x%2Fy+z&a=2&flag");
        assert_eq!(q.get("a"), Some("2"));
        assert_eq!(q.get("b"), Some("x/y z"));
        assert_eq!(q.get("flag"), Some(""));
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_encode("heads/main x"), "heads%2Fmain%20x");
    }
}
