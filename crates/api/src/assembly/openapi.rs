//! The OpenAPI 3.1 document, generated from the operation registry that also wires the routes
//! (so it cannot drift): paths, parameters, request bodies (the schemas of the types handlers read them into, `input.rs`),
//! every response with its schema (derived from the body's Rust type, `typed.rs`) and headers,
//! and the security each operation accepts.
use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use schemars::SchemaGenerator;

use crate::error::{BasicError, ValidationError};
use crate::typed::schema_of;

use crate::operation::{AuthKind, Level, Limits, Verb};
use crate::ops::hooks::published::{self, EVENTS};
use crate::registry::Registered;

const COMMON_HEADERS: [&str; 7] = [
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-used",
    "x-ratelimit-reset",
    "x-ratelimit-resource",
    "X-Service-Request-Id",
    "X-Service-Api-Version-Selected",
];

fn headers(extra: &[&str]) -> Value {
    let mut h = Map::new();
    for name in COMMON_HEADERS.iter().chain(extra) {
        h.insert(name.to_string(), json!({"$ref": format!("#/components/headers/{name}")}));
    }
    Value::Object(h)
}

fn response(description: &str, schema: Option<Value>, extra_headers: &[&str]) -> Value {
    let mut r = json!({"description": description, "headers": headers(extra_headers)});
    if let Some(s) = schema {
        r["content"] = json!({"application/json": {"schema": s}});
    }
    r
}

fn error(g: &mut SchemaGenerator, description: &str, validation: bool) -> Value {
    let body = if validation { schema_of::<ValidationError>(g) } else { schema_of::<BasicError>(g) };
    response(description, Some(body.to_value()), &[])
}

/// Path parameters in the order the path names them.
fn path_params(path: &str) -> Vec<&str> {
    path.split('{').skip(1).filter_map(|p| p.split_once('}').map(|(n, _)| n)).collect()
}

fn operation(registered: &Registered, g: &mut SchemaGenerator) -> Value {
    let (op, input) = (registered.op, &registered.input);
    let mut params: Vec<Value> = path_params(op.path)
        .into_iter()
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect();
    for q in input.query.iter().flat_map(|rules| &rules.params) {
        let q = &q.param;
        params.push(json!({"name": q.name, "in": "query", "required": q.required, "description": q.description, "schema": q.schema}));
    }
    params.push(json!({"$ref": "#/components/parameters/ApiVersion"}));

    let mut responses = Map::new();
    for r in op.responses {
        // Headers that follow from the operation's traits, then its validator.
        let polled = op.traits.poll.is_some() && r.status == 200;
        let closing_down = if op.traits.closing_down.is_some() { &["Deprecation", "Sunset"][..] } else { &[] };
        let extra: Vec<&str> = (r.headers.iter().copied())
            .chain(polled.then_some("X-Poll-Interval"))
            .chain(closing_down.iter().copied())
            .chain((op.method == Verb::Get).then_some("ETag"))
            .collect();
        let schema = r.schema.map(|of| of(g).to_value());
        responses.insert(r.status.to_string(), response(r.description, schema, &extra));
    }
    let repo_scoped = op.path.starts_with("/repos/{owner}/{repo}") || op.path.starts_with("/networks/{owner}/{repo}");
    if op.method == Verb::Get {
        let desc = if op.responses.iter().any(|r| r.headers.contains(&"Last-Modified")) {
            "Not modified: the `If-None-Match` ETag, or the `If-Modified-Since` time, is current (not charged)."
        } else {
            "Not modified: the `If-None-Match` ETag is current (not charged)."
        };
        responses.insert("304".into(), response(desc, None, &["ETag"]));
    }
    if repo_scoped {
        responses.insert(
            "301".into(),
            response("Moved permanently: the repository was renamed.", Some(schema_of::<BasicError>(g).to_value()), &["Location"]),
        );
    }
    responses.insert("400".into(), error(g, "Bad request: unsupported API version, or a body that is not a JSON object.", true));
    if op.access.auth != AuthKind::Any {
        responses.insert("401".into(), error(g, "Requires authentication, or bad credentials.", false));
    }
    responses.insert(
        "403".into(),
        error(
            g,
            "Forbidden: the credentials may not act on the resource, a rate limit is exhausted, or the User-Agent header is missing.",
            false,
        ),
    );
    if op.access.auth != AuthKind::Any || op.traits.limits == Limits::Report {
        responses.insert("404".into(), error(g, "Not found, or a private resource the caller may not see.", false));
    }
    if input.body.is_some() {
        responses.insert("413".into(), error(g, "The request body is too large.", false));
    }
    if input.body.is_some() || input.query.is_some() {
        responses.insert("422".into(), error(g, "Validation failed: missing, mistyped or invalid fields or parameters.", true));
    }

    let security = match op.access.auth {
        AuthKind::AppBasic => json!([{"appBasic": []}]),
        AuthKind::Any => json!([{}, {"bearerAuth": []}, {"appBasic": []}]),
        AuthKind::Token if op.access.public => json!([{"bearerAuth": []}, {}, {"appBasic": []}]),
        AuthKind::Token => json!([{"bearerAuth": []}]),
    };
    let tag = op.id.split('/').next().unwrap_or("meta");
    let mut o = json!({
        "operationId": op.id,
        "summary": op.summary,
        "tags": [tag],
        "externalDocs": {"url": op.docs},
        "parameters": params,
        "responses": responses,
        "security": security,
        "x-accepted-oauth-scopes": op.access.scopes,
    });
    if let Some((name, level)) = op.access.permission {
        o["x-accepted-service-permissions"] = json!(format!("{name}={}", level.as_str()));
        if level == Level::Read && op.access.public {
            o["description"] = json!("Public resources are readable without credentials.");
        }
    }
    if op.traits.closing_down.is_some() {
        o["deprecated"] = json!(true);
    }
    if let Some(body) = &input.body {
        o["requestBody"] = json!({"required": body.required, "content": {"application/json": {"schema": body.schema}}});
    }
    o
}

fn header_components() -> Value {
    let int = |d: &str| json!({"description": d, "schema": {"type": "integer"}});
    let string = |d: &str| json!({"description": d, "schema": {"type": "string"}});
    json!({
        "x-ratelimit-limit": int("Requests allowed per hour in this bucket."),
        "x-ratelimit-remaining": int("Requests left in the window."),
        "x-ratelimit-used": int("Requests used in the window."),
        "x-ratelimit-reset": int("When the window resets, in UTC epoch seconds."),
        "x-ratelimit-resource": string("The rate-limit bucket, e.g. `core`."),
        "X-Service-Request-Id": string("The request id (quote it when asking for support)."),
        "X-Service-Api-Version-Selected": string("The API version that served the request."),
        "ETag": string("Strong entity tag; send it back in `If-None-Match`."),
        "Link": string("Pagination links (`first`, `prev`, `next`, `last`) with absolute URLs."),
        "Location": string("URL of the created or moved resource."),
        "Last-Modified": string("When the resource last changed (HTTP-date); send it back in `If-Modified-Since` for a 304 that is not charged."),
        "X-Poll-Interval": int("Minimum seconds between polls; it may increase under load."),
        "Deprecation": string("The operation is closing down: when it was deprecated (HTTP-date)."),
        "Sunset": string("When the closing-down operation goes away (HTTP-date)."),
    })
}

/// The headers of a delivery of `event` (`X-Service-Event` pinned).
fn delivery_headers(event: &str) -> Value {
    let header = |name: &str, required: bool, description: &str, schema: Value| json!({"name": name, "in": "header", "required": required, "description": description, "schema": schema});
    let string = json!({"type": "string"});
    json!([
        header("X-Service-Event", true, "The event.", json!({"type": "string", "const": event})),
        header("X-Service-Delivery", true, "The delivery's GUID (the same for its redeliveries).", string.clone()),
        header("X-Service-Hook-ID", true, "The hook's id.", string.clone()),
        header("X-Service-Hook-Installation-Target-ID", true, "The organization's id.", string.clone()),
        header(
            "X-Service-Hook-Installation-Target-Type",
            true,
            "Always `organization`.",
            json!({"type": "string", "const": "organization"})
        ),
        header(
            "X-Service-Signature-256",
            false,
            "`sha256=` and the HMAC-SHA256 of the body with the hook's secret; absent without one.",
            string.clone()
        ),
        header("X-Service-Signature", false, "The same with HMAC-SHA1.", string.clone()),
        header("User-Agent", true, "`Service-Hookshot/` and a short id.", string),
    ])
}

/// The `webhooks` section: one entry per event and action the platform sends
/// (`hooks::published`), keyed as the official description keys them, each payload a component
/// `webhook-<key>` derived from its types with the action pinned; the components go in `schemas`.
fn webhooks(g: &mut SchemaGenerator, schemas: &mut std::collections::BTreeMap<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for p in EVENTS {
        for action in p.forms() {
            let key = published::key(p.event, action);
            let mut schema = (p.payload)(g).to_value();
            if let Some(a) = action {
                schema["properties"]["action"] = json!({"type": "string", "const": a});
            }
            // Every field a payload has is one of its types': nothing else is sent.
            schema["additionalProperties"] = json!(false);
            if p.in_repository {
                schema["required"].as_array_mut().expect("a payload has required fields").push(json!("repository"));
            }
            let name = format!("webhook-{key}");
            schemas.insert(name.clone(), schema);
            let summary = match action {
                Some(a) => format!("`{}` `{a}`", p.event),
                None => format!("`{}`", p.event),
            };
            out.insert(
                key.clone(),
                json!({"post": {
                    "operationId": key,
                    "summary": summary,
                    "parameters": delivery_headers(p.event),
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}},
                    "responses": {"200": {"description": "Any 2xx or 3xx status: the delivery succeeded."}},
                }}),
            );
        }
    }
    out
}

/// The whole document for the registered operations, with `public_url` as the server.
pub fn document(ops: &[Registered], public_url: &str) -> Value {
    let mut g = crate::typed::generator();
    let mut paths = Map::new();
    for r in ops {
        let item = paths.entry(r.op.path.to_string()).or_insert_with(|| json!({}));
        item[r.op.method.as_str().to_lowercase()] = operation(r, &mut g);
    }
    let mut hook_schemas = std::collections::BTreeMap::new();
    let webhooks = webhooks(&mut g, &mut hook_schemas);
    // Every shape the operations and webhooks reach, as a component named by its type, in name order.
    let mut schemas: std::collections::BTreeMap<String, Value> = g.take_definitions(true).into_iter().collect();
    schemas.extend(hook_schemas);
    let tags: BTreeSet<&str> = ops.iter().map(|r| r.op.id.split('/').next().unwrap_or("meta")).collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "platformd",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The platform REST API as platformd serves it. Every response carries the x-ratelimit-* headers, X-Service-Request-Id and X-Service-Api-Version-Selected; errors are JSON `{message, documentation_url, status}`.",
        },
        "servers": [{"url": public_url}],
        "tags": tags.iter().map(|t| json!({"name": t})).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "schemas": schemas.into_iter().collect::<Map<String, Value>>(),
            "headers": header_components(),
            "parameters": {
                "ApiVersion": {
                    "name": "X-Service-Api-Version",
                    "in": "header",
                    "required": false,
                    "description": "API version; 2022-11-28 when absent.",
                    "schema": {"type": "string", "enum": ["2022-11-28", "2026-03-10"]},
                }
            },
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "description": "A token of any kind, sent as Authorization: Bearer <token> (or the token scheme)."},
                "appBasic": {"type": "http", "scheme": "basic", "description": "Application credentials: client_id and client_secret."},
            },
        },
        "webhooks": webhooks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_routed_operation_is_documented_and_every_ref_resolves() {
        let api = crate::router::api();
        let doc = document(&api.ops, "http://127.0.0.1:8080");
        let mut ids = BTreeSet::new();
        for op in api.ops.iter().map(|r| r.op) {
            let o = &doc["paths"][op.path][op.method.as_str().to_lowercase()];
            assert_eq!(o["operationId"], op.id, "{} {} missing", op.method.as_str(), op.path);
            assert!(ids.insert(op.id), "duplicate operation id {}", op.id);
            let declared: Vec<&str> =
                o["parameters"].as_array().unwrap().iter().filter(|p| p["in"] == "path").map(|p| p["name"].as_str().unwrap()).collect();
            assert_eq!(declared, path_params(op.path), "{}", op.id);
            assert!(!o["responses"].as_object().unwrap().is_empty());
        }
        let mut all = Vec::new();
        refs(&doc, &mut all);
        for r in all {
            let ptr = r.strip_prefix('#').unwrap();
            assert!(doc.pointer(ptr).is_some(), "unresolved {r}");
        }
    }
}
