//! Successful responses: JSON with the platform's content type, plus headers.
use axum::body::Body;
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

pub struct Reply {
    status: StatusCode,
    body: Option<Value>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    pub fn json(status: StatusCode, body: Value) -> Self {
        Reply { status, body: Some(body), headers: Vec::new() }
    }
    pub fn ok(body: Value) -> Self {
        Self::json(StatusCode::OK, body)
    }
    pub fn created(body: Value) -> Self {
        Self::json(StatusCode::CREATED, body)
    }
    /// A status with no body (204, 205, 302).
    pub fn empty(status: StatusCode) -> Self {
        Reply { status, body: None, headers: Vec::new() }
    }
    pub fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.headers.push((HeaderName::from_static(name), v));
        }
        self
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
        let mut resp = match &self.body {
            Some(b) => json_response(self.status, b),
            None => {
                let mut r = Response::new(Body::empty());
                *r.status_mut() = self.status;
                r
            }
        };
        for (k, v) in self.headers {
            resp.headers_mut().append(k, v);
        }
        resp
    }
}
