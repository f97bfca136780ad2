//! The one error type: it owns status codes and the JSON error bodies of api-facts §3.
use std::borrow::Cow;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use platform_store::{DbError, DbErrorKind};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{json, Value};

pub const GENERIC_DOCS: &str = "https://docs.service.example/rest";
pub const RATE_LIMIT_DOCS: &str = "https://docs.service.example/rest/overview/resources-in-the-rest-api#rate-limiting";

pub type ApiResult<T = Response> = Result<T, ApiError>;

#[derive(Clone, Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: Cow<'static, str>,
    /// `errors`: an array of validation objects, an array of strings, or a string.
    pub errors: Option<Value>,
    /// Overrides the operation's documentation URL (rate limits have their own page).
    pub docs: Option<&'static str>,
    /// `url` of a 301: where the resource moved.
    pub url: Option<String>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        ApiError { status, message: message.into(), errors: None, docs: None, url: None, headers: Vec::new() }
    }
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "Not Found")
    }
    pub fn bad_credentials() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Bad credentials")
    }
    pub fn requires_authentication() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Requires authentication")
    }
    pub fn forbidden(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }
    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    /// 422 `Validation Failed` with `errors` objects (`{resource, field, code[, message]}`).
    pub fn validation(errors: Vec<Value>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed").with_errors(Value::Array(errors))
    }
    /// One validation error object.
    pub fn invalid_field(resource: &str, field: &str, code: &str, message: Option<String>) -> Self {
        let mut e = json!({"resource": resource, "field": field, "code": code});
        if let Some(m) = message {
            e["message"] = Value::String(m);
        }
        Self::validation(vec![e])
    }
    /// 422 for missing or mistyped parameters: `Invalid request.\n\n<detail>`.
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, format!("Invalid request.\n\n{detail}"))
    }
    /// 408: the request body did not arrive in time.
    pub fn request_timeout() -> Self {
        Self::new(StatusCode::REQUEST_TIMEOUT, "Request Timeout")
    }
    pub fn payload_too_large() -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large")
    }
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
    }
    pub fn with_errors(mut self, errors: Value) -> Self {
        self.errors = Some(errors);
        self
    }
    pub fn with_docs(mut self, docs: &'static str) -> Self {
        self.docs = Some(docs);
        self
    }
    pub fn with_header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.headers.push((crate::headers::name(name), v));
        }
        self
    }
    /// 301 for a renamed resource.
    pub fn moved(location: String) -> Self {
        let mut e = Self::new(StatusCode::MOVED_PERMANENTLY, "Moved Permanently").with_header("location", &location);
        e.url = Some(location);
        e
    }

    /// The JSON body, with `documentation_url` from the operation when the error names none:
    /// a [`ValidationError`] when it has `errors`, else a [`BasicError`].
    pub fn body(&self, op_docs: Option<&'static str>) -> Value {
        let documentation_url = self.docs.or(op_docs).unwrap_or(GENERIC_DOCS);
        let status = self.status.as_str();
        match &self.errors {
            Some(errors) => json!(ValidationError { message: &self.message, errors: Some(errors), documentation_url, status }),
            None => json!(BasicError { message: &self.message, url: self.url.as_deref(), documentation_url, status }),
        }
    }

    pub fn render(&self, op_docs: Option<&'static str>) -> Response {
        let mut resp = crate::reply::json_response(self.status, &self.body(op_docs));
        for (k, v) in &self.headers {
            resp.headers_mut().insert(k.clone(), v.clone());
        }
        resp
    }
}

/// BasicError: the body of an error.
#[derive(Serialize, JsonSchema)]
pub struct BasicError<'a> {
    pub message: &'a str,
    /// Where a renamed resource moved (301).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    pub documentation_url: &'a str,
    /// The HTTP status code, as a string.
    pub status: &'a str,
}

/// ValidationError: the body of a 400 or 422 that says what is wrong with the request.
#[derive(Serialize, JsonSchema)]
pub struct ValidationError<'a> {
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "validation_errors_schema")]
    pub errors: Option<&'a Value>,
    pub documentation_url: &'a str,
    /// The HTTP status code, as a string.
    pub status: &'a str,
}

/// `errors`: objects naming the field and the problem, strings, or one string.
fn validation_errors_schema(_: &mut SchemaGenerator) -> Schema {
    let string = json!({"type": "string"});
    json_schema!({ "anyOf": [
        { "type": "array", "items": {
            "type": "object",
            "properties": {
                "code": string, "resource": string, "field": string, "message": string,
                "index": {"type": "integer"}, "value": {}
            },
            "required": ["code"]
        }},
        { "type": "array", "items": string },
        string
    ]})
}

/// Marker left on error responses so the contract layer can re-render the body with the
/// operation's own documentation URL.
#[derive(Clone)]
pub struct ErrorMark(pub Arc<ApiError>);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut resp = self.render(None);
        resp.extensions_mut().insert(ErrorMark(Arc::new(self)));
        resp
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        match e.kind {
            DbErrorKind::Unavailable => {
                tracing::error!(error = %e.message, "database unavailable");
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable")
            }
            _ => {
                tracing::error!(error = %e.message, "database error");
                ApiError::internal()
            }
        }
    }
}
