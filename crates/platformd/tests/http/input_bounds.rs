//! Values no stored field can hold are refused the same way on both backends, for every
//! operation of the published document: NUL in a path segment is 404, in a query parameter or
//! anywhere in a body 422; strings over their documented maximum are 422. Never a 500.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;

/// Every `(method, path template, operation)` of `/openapi.json`.
async fn operations(s: &Server) -> Vec<(Method, String, Value)> {
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (m, op) in item.as_object().unwrap() {
            if let Ok(method) = m.to_uppercase().parse::<Method>() {
                out.push((method, path.clone(), op.clone()));
            }
        }
    }
    assert!(out.len() > 100, "{} operations", out.len());
    out
}

fn params<'a>(op: &'a Value, kind: &str) -> Vec<&'a str> {
    op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == kind).filter_map(|p| p["name"].as_str()).collect()
}

/// Path parameters filled with names of the world below.
fn fill(template: &str, nasty: Option<(&str, &str)>) -> String {
    let mut out = template.to_string();
    for (name, value) in [
        ("owner", "acme"),
        ("repo", "widgets"),
        ("org", "acme"),
        ("username", "alice"),
        ("enterprise", "acme-corp"),
        ("branch", "main"),
        ("ref", "main"),
    ] {
        out = out.replace(&format!("{{{name}}}"), nasty.filter(|(n, _)| *n == name).map_or(value, |(_, v)| v));
    }
    while let Some(start) = out.find('{') {
        let end = out[start..].find('}').unwrap() + start;
        let name = out[start + 1..end].to_string();
        let v = nasty.filter(|(n, _)| *n == name).map_or("1", |(_, v)| v);
        out.replace_range(start..=end, v);
    }
    out
}

async fn world(s: &Server) -> String {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", false).await;
    s.classic("alice", &["repo", "admin:org", "admin:org_hook", "notifications", "admin:enterprise", "security_events"]).await
}

async fn send(s: &Server, method: Method, path: &str, token: &str, body: Option<&Value>) -> (u16, Value) {
    let mut r = s.req(method, path, Some(token));
    if let Some(b) = body {
        r = r.json(b);
    }
    let (st, _, b) = parts(r.send().await.unwrap()).await;
    (st, b)
}

both!(nul_in_any_path_segment_is_not_found, |s| {
    let t = world(&s).await;
    let mut checked = 0;
    for (method, template, op) in operations(&s).await {
        for p in params(&op, "path") {
            for nasty in ["%00", "a%00b"] {
                let path = fill(&template, Some((p, nasty)));
                let (st, b) = send(&s, method.clone(), &path, &t, None).await;
                assert_eq!(st, 404, "{method} {path}: {b}");
                assert_eq!(b["message"], "Not Found", "{method} {path}");
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked}");
    // Anonymous too.
    let (st, _, _) = parts(s.get("/repos/acme/%00/events", None).await).await;
    assert_eq!(st, 404);
});

both!(nul_in_query_or_body_is_refused, |s| {
    let t = world(&s).await;
    for (method, template, op) in operations(&s).await {
        let path = fill(&template, None);
        for q in params(&op, "query") {
            let url = format!("{path}?{q}=a%00b");
            let (st, b) = send(&s, method.clone(), &url, &t, None).await;
            assert!(st == 422 || st == 404 || st == 403, "{method} {url}: {st} {b}");
            assert!(b["message"].is_string(), "{method} {url}: {b}");
        }
        let Some(props) = op["requestBody"]["content"]["application/json"]["schema"]["properties"].as_object() else { continue };
        for (field, _) in props {
            for value in [json!("a\u{0}b"), json!(["a\u{0}b"]), json!({"k": "a\u{0}b"})] {
                let (st, b) = send(&s, method.clone(), &path, &t, Some(&json!({ field: value }))).await;
                assert!(st == 422 || st == 404 || st == 403, "{method} {path} {field}: {st} {b}");
            }
        }
    }
});

both!(strings_over_their_maximum_are_refused, |s| {
    let t = world(&s).await;
    let sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
    s.push("acme/widgets", "refs/heads/main", sha).await;
    let statuses = format!("/repos/acme/widgets/statuses/{sha}");
    // The documented maximum of each status field is accepted, one more character is not.
    for (field, max) in [("context", 255), ("description", 140), ("target_url", 2048)] {
        let ok = json!({"state": "success", field: "é".repeat(max)});
        let (st, b) = send(&s, Method::POST, &statuses, &t, Some(&ok)).await;
        assert_eq!(st, 201, "{field}: {b}");
        let long = json!({"state": "success", field: "x".repeat(max + 1)});
        let (st, b) = send(&s, Method::POST, &statuses, &t, Some(&long)).await;
        assert_eq!(st, 422, "{field}: {b}");
        assert_eq!(b["errors"][0]["field"], field);
        assert_eq!(b["errors"][0]["message"], format!("{field} is too long (maximum is {max} characters)"));
    }
    // The limits are published.
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    let schema = &doc["paths"]["/repos/{owner}/{repo}/statuses/{sha}"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(schema["properties"]["context"]["maxLength"], 255, "{schema}");
    assert_eq!(schema["properties"]["context"]["type"], json!(["string", "null"]), "{schema}");
    // Any string of any body, nested too, has a ceiling (here a ruleset name and its patterns).
    let huge = "x".repeat(65_537);
    let (st, b) = send(&s, Method::POST, "/repos/acme/widgets/rulesets", &t, Some(&json!({"name": huge, "enforcement": "active"}))).await;
    assert_eq!(st, 422, "{b}");
    let conditions = json!({"ref_name": {"include": [huge], "exclude": []}});
    let (st, b) = send(
        &s,
        Method::POST,
        "/repos/acme/widgets/rulesets",
        &t,
        Some(&json!({"name": "n", "enforcement": "active", "conditions": conditions})),
    )
    .await;
    assert_eq!(st, 422, "{b}");
});

both!(parsers_refuse_what_they_cannot_read, |s| {
    let t = world(&s).await;
    // Multi-byte characters where parsers cut strings, and out-of-range numbers: 422 or 304/200, never 500.
    for q in [
        "timestamp_increment=1%C3%A9",
        "timestamp_increment=%C3%A9",
        "timestamp_increment=99999999999999999999d",
        "min_timestamp=2026-01-01T00:00:00%2Ba%C3%A900",
    ] {
        let url = format!("/orgs/acme/insights/api/time-stats?min_timestamp=2026-01-01T00:00:00Z&{q}");
        let (st, b) = send(&s, Method::GET, &url, &t, None).await;
        assert_eq!(st, 422, "{url}: {b}");
    }
    for c in ["%3E%3D2026-01-01T00%3A00%3A00%2Ba%C3%A900", "2026-01-01..%C3%A9", "99999999999999999999-01-01"] {
        let url = format!("/repos/acme/widgets/actions/runs?created={c}");
        let (st, b) = send(&s, Method::GET, &url, &t, None).await;
        assert_eq!(st, 422, "{url}: {b}");
    }
    let r = s
        .req(Method::GET, "/repos/acme/widgets/events", Some(&t))
        .header("if-modified-since", "Sun, 06 Nov 99999999999999999 08:49:37 GMT")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
});
