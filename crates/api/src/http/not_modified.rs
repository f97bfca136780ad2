//! Conditional GETs answered before routing. When a GET served from the response cache (an
//! operation declared cached, `contract::declared`) is asked again with its ETag, by the same
//! caller, under the same store generation and within the span in which the cached answer is
//! exact, the contract would only repeat its authorization and cache lookup to reach the same
//! 304: it answers here instead. Any write changes the generation and sends the next request the full way.
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use platform_core::ApiVersion;

use crate::cache::GenCache;
use crate::operation::Operation;

/// (path and query as sent, version, caller).
pub type Key = (String, ApiVersion, i64);

/// The validators of answers, by key and generation.
pub type Validators = GenCache<Key, Arc<Validated>>;

/// What a 304 for a key carries.
pub struct Validated {
    until: i64,
    etag: String,
    /// The handler's headers (`ETag`, `Link`, `Last-Modified`…), without the body's.
    headers: HeaderMap,
    op: &'static Operation,
}

/// A validator's approximate bytes (`cache`).
pub fn weigh(key: &Key, v: &Arc<Validated>) -> usize {
    key.0.len() + v.etag.len() + v.headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 32).sum::<usize>()
}

/// The 304 for `key` when the caller's `If-None-Match` names the ETag still current, with the
/// operation that answered.
pub fn answer(
    validators: &Validators,
    key: &Key,
    generation: u64,
    if_none_match: &HeaderValue,
    now: i64,
) -> Option<(Response, &'static Operation)> {
    let v = validators.get(key, generation)?;
    if now >= v.until || !crate::etag::etag_matches(Some(if_none_match), &v.etag) {
        return None;
    }
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::NOT_MODIFIED;
    *resp.headers_mut() = with_room(&v.headers);
    Some((resp, v.op))
}

/// A copy of `headers` with room for the contract's: a clone would have none, and regrow on
/// every header added after it.
fn with_room(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len() + crate::headers::ADDED_HEADERS);
    for (name, value) in headers {
        out.append(name.clone(), value.clone());
    }
    out
}

/// Remembers a cached GET's validator, from the response's head as the handler made it.
pub fn remember(validators: &Validators, key: Key, generation: u64, until: i64, etag: &str, headers: &HeaderMap, op: &'static Operation) {
    let mut kept = headers.clone();
    kept.remove(header::CONTENT_TYPE);
    kept.remove(header::CONTENT_LENGTH);
    let v = Validated { until, etag: etag.to_string(), headers: kept, op };
    validators.put(key, generation, Arc::new(v));
}
