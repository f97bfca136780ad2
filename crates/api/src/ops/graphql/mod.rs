//! The GraphQL endpoint, `POST {base}/graphql` (and `/api/graphql` beside a `/api/v3` base, the
//! enterprise layout), on the async-graphql library: it parses, validates (fields unknown to
//! [`schema`] are its validation errors), answers introspection and executes. Clients send
//! `viewer` to learn who their credential is (`gh auth status`: `query UserCurrent{viewer{login}}`).
//!
//! It sits behind the same contract as the REST operations (authentication and its 401, the
//! failed-login lockout, secondary limits, the primary limit counted in the `graphql` resource)
//! but is no [`crate::operation::Operation`]: one URL whose answer depends on the query in the
//! body is not a REST operation, and the OpenAPI document describes only those. Its body is read
//! as REST bodies are (the size limit and its 413, the body-read timeout and its 408); what a
//! document may cost is in [`limits`]. Everything runs inside the handler's future, nothing is
//! spawned: a client that goes away (or [`limits::MAX_EXECUTION`]) drops it, and the work with it.
mod limits;
mod repositories;
mod schema;

use async_graphql::parser::{parse_query, Error as ParseError};
use async_graphql::{ServerError, Variables};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::principal::Principal;
use crate::ratelimit::GRAPHQL_PATH;
use crate::reply::json_response;
use crate::request::{content_length, read_limited, ReqInfo};
use crate::state::Shared;

const DOCS: &str = "https://docs.service.example/graphql";

pub fn routes(r: axum::Router<Shared>) -> Router<Shared> {
    r.route(GRAPHQL_PATH, post(serve))
}

async fn serve(State(app): State<Shared>, Extension(info): Extension<ReqInfo>, req: Request) -> Response {
    if matches!(info.principal, Principal::Anonymous) {
        // The hosted GraphQL endpoint's words for the REST "Requires authentication".
        return ApiError::new(StatusCode::UNAUTHORIZED, "This endpoint requires you to be authenticated.").with_docs(DOCS).into_response();
    }
    let body = match read_limited(&app, content_length(req.headers()), req.into_body()).await {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let request = match read_request(&body) {
        Ok(request) => request,
        Err(message) => return json_response(StatusCode::BAD_REQUEST, &json!({ "errors": [{ "message": message }] })),
    };
    answer(request.data(app).data(info)).await
}

/// The GraphQL request of a body: `query` (required), `operationName` and `variables`.
fn read_request(body: &[u8]) -> Result<async_graphql::Request, &'static str> {
    // serde_json refuses JSON nested more than 128 deep, so variables cannot nest deeper.
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(body) else { return Err("Problems parsing JSON") };
    let Some(Value::String(query)) = fields.remove("query") else {
        return Err("A query attribute must be specified and must be a string.");
    };
    let mut request = async_graphql::Request::new(query);
    match fields.remove("operationName") {
        Some(Value::String(name)) if !name.is_empty() => request = request.operation_name(name),
        None | Some(Value::Null | Value::String(_)) => {}
        Some(_) => return Err("operationName must be a string."),
    }
    match fields.remove("variables") {
        Some(v @ Value::Object(_)) => request = request.variables(Variables::from_json(v)),
        None | Some(Value::Null) => {}
        Some(_) => return Err("variables must be an object."),
    }
    Ok(request)
}

/// Checks, parses and executes; the answer is always a GraphQL response (status 200).
async fn answer(mut request: async_graphql::Request) -> Response {
    if let Err(e) = limits::check_text(&request.query) {
        return respond(async_graphql::Response::from_errors(vec![e]));
    }
    let doc = match parse_query(&request.query).map_err(parse_error).and_then(|doc| limits::check_fragments(&doc).map(|()| doc)) {
        Ok(doc) => doc,
        Err(e) => return respond(async_graphql::Response::from_errors(vec![e])),
    };
    request.set_parsed_query(doc);
    match tokio::time::timeout(limits::MAX_EXECUTION, schema::schema().execute(request)).await {
        Ok(response) => respond(response),
        Err(_) => {
            let message = format!("The query ran longer than {} seconds and was stopped.", limits::MAX_EXECUTION.as_secs());
            respond(async_graphql::Response::from_errors(vec![ServerError::new(message, None)]))
        }
    }
}

/// A syntax error as one line, `Parse error at [line, column]: expected …` (the library's message
/// draws the line of the document with a caret under the place).
fn parse_error(e: ParseError) -> ServerError {
    match (&e, e.positions().next()) {
        (ParseError::Syntax { message, .. }, Some(at)) => {
            let what = message.lines().rev().find_map(|l| l.trim().strip_prefix("= ")).unwrap_or("invalid syntax");
            ServerError::new(format!("Parse error at [{}, {}]: {what}", at.line, at.column), Some(at))
        }
        _ => e.into(),
    }
}

/// The response as JSON, each error's `type` (`FORBIDDEN`, …) beside its message as the hosted
/// API writes it rather than among its extensions.
fn respond(response: async_graphql::Response) -> Response {
    let mut body = serde_json::to_value(&response).unwrap_or_else(|_| json!({ "data": null }));
    for error in body.get_mut("errors").and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(error) = error.as_object_mut() else { continue };
        let Some(extensions) = error.get_mut("extensions").and_then(Value::as_object_mut) else { continue };
        if let Some(kind) = extensions.remove("type") {
            if extensions.is_empty() {
                error.remove("extensions");
            }
            error.insert("type".into(), kind);
        }
    }
    json_response(StatusCode::OK, &body)
}

#[cfg(test)]
mod tests {
    use super::limits::{MAX_NESTING, MAX_QUERY_BYTES};
    use super::*;

    /// The answer to `query` (with `variables`) from an anonymous caller, and its status.
    async fn run(query: &str, variables: Value) -> (StatusCode, Value) {
        let info = ReqInfo {
            principal: Principal::Anonymous,
            ip: std::net::Ipv4Addr::LOCALHOST.into(),
            version: platform_core::ApiVersion::DEFAULT,
            request_id: "test".into(),
            generation: crate::state::Generation::Local,
        };
        let request = read_request(json!({ "query": query, "variables": variables }).to_string().as_bytes()).unwrap();
        let response = answer(request.data(info)).await;
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    /// Every way a document nests, as deep as the text limits let it, is answered (parsed,
    /// validated, refused or executed) within a quarter of a runtime worker's 2 MiB stack.
    #[test]
    fn documents_at_the_limits_fit_a_small_stack() {
        let n = MAX_NESTING - 4;
        let nest = |open: &str, inner: &str, close: &str| format!("{}{inner}{}", open.repeat(n), close.repeat(n));
        let fragments: String = (0..n).map(|i| format!("fragment F{i} on User {{ ...F{} }}\n", i + 1)).collect();
        let documents = [
            format!("{{ viewer {{ {} }} }}", nest("a {", "login", "}")),
            format!("{{ viewer {{ {} }} }}", nest("... {", "login", "}")),
            format!("{{ viewer(x: {}) {{ login }} }}", nest("[", "1", "]")),
            format!("{{ viewer(x: {}) {{ login }} }}", nest("{a: ", "1", "}")),
            format!("{{ viewer @include(if: {}) {{ login }} }}", nest("[", "true", "]")),
            format!("query($v: {}) {{ viewer {{ login }} }}", nest("[", "Int", "]")),
            format!("query($v: [Int] = {}) {{ viewer {{ login }} }}", nest("[", "1", "]")),
            format!("{{ viewer {{ ...F0 }} }}\n{fragments}fragment F{n} on User {{ login }}"),
            format!("{{ viewer {{ {}}} }}", "login ".repeat((MAX_QUERY_BYTES - 20) / 6)),
            format!("{{ viewer {{ {}}} }}", (0..(MAX_QUERY_BYTES - 20) / 13).map(|i| format!("a{i:04}: login ")).collect::<String>()),
            "{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }".into(),
        ];
        let variables = [json!({}), json!({ "v": serde_json::from_str::<Value>(&nest("[", "1", "]")).unwrap() })];
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
                for doc in &documents {
                    for v in &variables {
                        let (status, body) = rt.block_on(run(doc, v.clone()));
                        assert_eq!(status, StatusCode::OK, "{body}");
                        assert!(body["errors"].is_array() || body["data"].is_object(), "{body}");
                    }
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
