//! Successful responses: JSON with the platform's content type, plus headers.
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

pub const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

pub fn json_response(status: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    let mut resp = Response::new(Body::from(bytes));
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE));
    resp
}

/// A JSON array of items already serialized as JSON (answers assembled from cached renderings).
pub fn json_array<T: AsRef<[u8]>>(items: impl IntoIterator<Item = T>, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    out.push(b'[');
    for item in items {
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_ref());
    }
    out.push(b']');
    out
}

/// A response, its JSON body serialized at construction so it can be cached and cloned cheaply.
#[derive(Clone)]
pub struct Reply {
    status: StatusCode,
    body: Option<Bytes>,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Set on answers of the response cache: the platform time until which they are exact.
    fresh_until: Option<i64>,
    /// The body's media type when it is not JSON.
    content_type: Option<&'static str>,
}

/// Response extension of an answer from the response cache (see `not_modified`).
#[derive(Clone, Copy)]
pub struct Fresh(pub i64);

impl Reply {
    /// A body of a typed shape (`crate::typed`) or a JSON value, serialized once, here.
    pub fn json(status: StatusCode, body: impl serde::Serialize) -> Self {
        let bytes = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
        Reply { status, body: Some(Bytes::from(bytes)), headers: Vec::new(), fresh_until: None, content_type: None }
    }
    pub fn ok(body: impl serde::Serialize) -> Self {
        Self::json(StatusCode::OK, body)
    }
    /// 200 with a body already serialized as JSON.
    pub fn ok_serialized(body: Vec<u8>) -> Self {
        Reply { status: StatusCode::OK, body: Some(Bytes::from(body)), headers: Vec::new(), fresh_until: None, content_type: None }
    }
    pub fn created(body: impl serde::Serialize) -> Self {
        Self::json(StatusCode::CREATED, body)
    }
    /// 200 with a body that is not JSON (raw file contents), of media type `content_type`.
    pub fn bytes(body: Vec<u8>, content_type: &'static str) -> Self {
        Reply {
            status: StatusCode::OK,
            body: Some(Bytes::from(body)),
            headers: Vec::new(),
            fresh_until: None,
            content_type: Some(content_type),
        }
    }
    /// A status with no body (204, 205, 302).
    pub fn empty(status: StatusCode) -> Self {
        Reply { status, body: None, headers: Vec::new(), fresh_until: None, content_type: None }
    }
    pub fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.headers.push((crate::headers::name(name), v));
        }
        self
    }
    /// The platform time until which this answer is exact (the response cache keeps it that
    /// long; by default, until the next write).
    pub(crate) fn fresh_until(self, until: i64) -> Self {
        Reply { fresh_until: Some(until), ..self }
    }
    pub(crate) fn exact_until(&self) -> Option<i64> {
        self.fresh_until
    }
    pub fn body(&self) -> Option<&Bytes> {
        self.body.as_ref()
    }
    /// Approximate bytes held (for the caches' bound).
    pub fn approx_bytes(&self) -> usize {
        self.body.as_ref().map_or(0, |b| b.len()) + self.headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 32).sum::<usize>()
    }
    pub fn opt_header(self, name: &'static str, value: Option<String>) -> Self {
        match value {
            Some(v) => self.header(name, v),
            None => self,
        }
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let has_body = self.body.is_some();
        let mut resp = Response::new(self.body.map_or_else(Body::empty, Body::from));
        // Room for the contract layer's headers from the start: growing a map rehashes it.
        *resp.headers_mut() = axum::http::HeaderMap::with_capacity(self.headers.len() + 1 + crate::headers::ADDED_HEADERS);
        if has_body {
            resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(self.content_type.unwrap_or(JSON_CONTENT_TYPE)));
        }
        *resp.status_mut() = self.status;
        if let Some(until) = self.fresh_until {
            resp.extensions_mut().insert(Fresh(until));
        }
        for (k, v) in self.headers {
            resp.headers_mut().append(k, v);
        }
        resp
    }
}
