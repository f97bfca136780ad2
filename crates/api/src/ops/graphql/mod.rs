//! The GraphQL endpoint, `POST {base}/graphql` (and `/api/graphql` beside a `/api/v3` base, the
//! enterprise layout): just the `viewer` query, which clients send to learn who their
//! credential is (`gh auth status`: `query UserCurrent{viewer{login}}`). Everything else
//! GraphQL can ask is answered with a `NOT_SUPPORTED` error, never guessed at.
//!
//! It sits behind the same contract as the REST operations (authentication and its 401,
//! secondary limits, the primary limit counted in the `graphql` resource) but is no
//! [`crate::operation::Operation`]: one URL whose answer depends on the query in the body is not
//! a REST operation, and the OpenAPI document describes only those.
mod query;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};
use platform_core::ids::node_id;
use platform_store::domain::accounts::Account;
use serde_json::{json, Map, Value};

use self::query::{Field, QueryError};
use crate::error::ApiError;
use crate::ratelimit::GRAPHQL_PATH;
use crate::reply::json_response;
use crate::request::ReqInfo;
use crate::shape::Timestamp;
use crate::state::Shared;

const DOCS: &str = "https://docs.service.example/graphql";

/// The fields of `viewer` answered (what the user store holds).
const VIEWER_FIELDS: &str = "__typename login id databaseId name isSiteAdmin createdAt updatedAt";

pub fn routes(r: axum::Router<Shared>) -> Router<Shared> {
    r.route(GRAPHQL_PATH, post(serve))
}

async fn serve(Extension(info): Extension<ReqInfo>, body: Bytes) -> Response {
    if matches!(info.principal, crate::principal::Principal::Anonymous) {
        // The hosted GraphQL endpoint's words for the REST "Requires authentication".
        return ApiError::new(StatusCode::UNAUTHORIZED, "This endpoint requires you to be authenticated.").with_docs(DOCS).into_response();
    }
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(&body) else {
        return errors(StatusCode::BAD_REQUEST, json!({ "message": "Problems parsing JSON" }));
    };
    let Some(Value::String(src)) = request.get("query") else {
        return errors(StatusCode::BAD_REQUEST, json!({ "message": "A query attribute must be specified and must be a string." }));
    };
    let op = match query::parse(src) {
        Ok(op) => op,
        Err(QueryError::Syntax(message, (line, column))) => {
            return errors(StatusCode::OK, json!({ "message": message, "locations": [{ "line": line, "column": column }] }))
        }
        Err(QueryError::Unsupported(what)) => return errors(StatusCode::OK, unsupported(&what)),
    };
    // `operationName` must name the document's operation when given.
    if let Some(Value::String(wanted)) = request.get("operationName").filter(|n| n.as_str().is_some_and(|n| !n.is_empty())) {
        if op.name.as_deref() != Some(wanted) {
            return errors(StatusCode::OK, json!({ "message": format!("No operation named \"{wanted}\"") }));
        }
    }
    match execute(&op.selections, info.principal.user()) {
        Ok(data) => json_response(StatusCode::OK, &json!({ "data": data })),
        Err(Refusal::Error(e)) => errors(StatusCode::OK, e),
        Err(Refusal::Null(e)) => json_response(StatusCode::OK, &json!({ "data": null, "errors": [e] })),
    }
}

/// Why a query has no data: an error about the query itself, or one met while resolving a
/// non-null field (the data is then `null`).
enum Refusal {
    Error(Value),
    Null(Value),
}

fn errors(status: StatusCode, error: Value) -> Response {
    json_response(status, &json!({ "errors": [error] }))
}

fn unsupported(what: &str) -> Value {
    json!({
        "type": "NOT_SUPPORTED",
        "message": format!("{what} not supported: this server answers only the viewer query, `{{ viewer {{ {VIEWER_FIELDS} }} }}`."),
    })
}

/// Answers the operation's selections; each response key once (a repeated key must select the
/// same field, as GraphQL's field merging requires).
fn execute(selections: &[Field], user: Option<&Account>) -> Result<Map<String, Value>, Refusal> {
    let mut data = Map::new();
    for f in selections {
        let value = match (f.name.as_str(), &f.selections) {
            ("__typename", None) => json!("Query"),
            ("viewer", Some(fields)) => match user {
                Some(user) => Value::Object(viewer(user, fields)?),
                // Installation, workflow and app credentials act for no user.
                None => {
                    return Err(Refusal::Null(json!({
                        "type": "FORBIDDEN",
                        "path": [f.key()],
                        "message": "Resource not accessible by integration",
                    })))
                }
            },
            ("viewer", None) => {
                return Err(Refusal::Error(json!({
                    "message": "Field must have selections (field 'viewer' returns User but has no selections. Did you mean 'viewer { ... }'?)"
                })))
            }
            (name, _) => return Err(Refusal::Error(unsupported(&format!("The field `{name}` is")))),
        };
        merge(&mut data, selections, f, value)?;
    }
    Ok(data)
}

fn viewer(user: &Account, fields: &[Field]) -> Result<Map<String, Value>, Refusal> {
    let mut out = Map::new();
    for f in fields {
        let value = match f.name.as_str() {
            "__typename" => json!("User"),
            "login" => json!(user.login),
            "id" => json!(node_id("User", user.id)),
            "databaseId" => json!(user.id),
            "name" => json!(user.name),
            "isSiteAdmin" => json!(user.site_admin),
            "createdAt" => json!(Timestamp(user.created_at)),
            "updatedAt" => json!(Timestamp(user.updated_at)),
            name => return Err(Refusal::Error(unsupported(&format!("The field `User.{name}` is")))),
        };
        // Every field answered is a scalar.
        if f.selections.is_some() {
            return Err(Refusal::Error(json!({ "message": format!("Selections can't be made on scalars (field '{}' of User)", f.name) })));
        }
        merge(&mut out, fields, f, value)?;
    }
    Ok(out)
}

/// Puts `f`'s value under its key, refusing two different fields under one key.
fn merge(into: &mut Map<String, Value>, siblings: &[Field], f: &Field, value: Value) -> Result<(), Refusal> {
    if let Some(other) = siblings.iter().find(|o| o.key() == f.key() && o.name != f.name) {
        return Err(Refusal::Error(json!({
            "message": format!("Field '{}' has a field conflict: {} or {}?", f.key(), f.name, other.name)
        })));
    }
    into.insert(f.key().to_string(), value);
    Ok(())
}
