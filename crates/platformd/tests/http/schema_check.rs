//! Responses checked against the component schemas the server publishes at `/openapi.json`:
//! typed clients generated from the API description reject a whole list when one field has
//! the wrong type (a `null` where the spec says string), so tests check shapes, not fields.
use serde_json::Value;

use crate::harness::Server;

/// Fails with the JSON path of every mismatch between `value` and the component schema `name`.
pub async fn assert_conforms(s: &Server, name: &str, value: &Value) {
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    let mut errors = Vec::new();
    check(&doc, &doc["components"]["schemas"][name], value, "$", &mut errors);
    assert!(errors.is_empty(), "{name} does not conform: {errors:#?}\n{value:#}");
}

/// Fails like [`assert_conforms`], against the committed snapshot of the document
/// (`docs/openapi.json`, which the `openapi_snapshot` test keeps equal to the served one).
pub fn assert_conforms_to_snapshot(name: &str, value: &Value) {
    static DOC: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let doc = DOC.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json")).expect("docs/openapi.json");
        serde_json::from_str(&text).expect("docs/openapi.json is JSON")
    });
    let mut errors = Vec::new();
    check(doc, &doc["components"]["schemas"][name], value, "$", &mut errors);
    assert!(errors.is_empty(), "{name} does not conform: {errors:#?}\n{value:#}");
}

/// The subset of JSON Schema the published document uses: `$ref`, `type`, `anyOf`, `enum`,
/// `required`, `properties`, `items`, `additionalProperties`.
fn check(doc: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return check(doc, &doc["components"]["schemas"][name], v, at, errors);
    }
    if let Some(alternatives) = schema["anyOf"].as_array() {
        let fits = alternatives.iter().any(|a| {
            let mut e = Vec::new();
            check(doc, a, v, at, &mut e);
            e.is_empty()
        });
        if !fits {
            errors.push(format!("{at}: {v} matches no alternative"));
        }
        return;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let type_ok = types.is_empty()
        || types.iter().any(|t| match *t {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            "null" => v.is_null(),
            _ => true,
        });
    if !type_ok {
        errors.push(format!("{at}: {v} is not {types:?}"));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(v) {
            errors.push(format!("{at}: {v} not in {allowed:?}"));
        }
    }
    if let Value::Object(m) = v {
        for k in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                errors.push(format!("{at}.{k}: missing"));
            }
        }
        for (k, field) in m {
            match schema["properties"].get(k) {
                Some(p) => check(doc, p, field, &format!("{at}.{k}"), errors),
                None if schema["additionalProperties"].is_object() => {
                    check(doc, &schema["additionalProperties"], field, &format!("{at}.{k}"), errors)
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(item)) = (v, schema.get("items")) {
        for (i, x) in items.iter().enumerate() {
            check(doc, item, x, &format!("{at}[{i}]"), errors);
        }
    }
}
