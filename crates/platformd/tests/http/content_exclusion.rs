//! Assistant content exclusion: get and set (replace), comments dropped, the last of duplicate
//! keys kept, values that are not arrays of paths refused, the documented body limit, owners
//! only and the scopes of document 3.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

const PATH: &str = "/orgs/acme/assistant/content_exclusion";

/// alice owns acme, bob is a member. Returns alice's `assistant` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.classic("alice", &["assistant"]).await
}

async fn put_raw(s: &Server, t: &str, body: impl Into<reqwest::Body>) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.req(Method::PUT, PATH, Some(t)).header("content-type", "application/json").body(body).send().await.unwrap()).await
}

async fn get(s: &Server, t: &str) -> (u16, Value) {
    let (st, _, b) = parts(s.get(PATH, Some(t)).await).await;
    (st, b)
}

both!(set_replaces_and_get_returns_the_rules, |s| {
    let t = world(&s).await;
    assert_eq!(get(&s, &t).await, (200, json!({})));
    let (st, _, b) = put_raw(&s, &t, r#"{"widgets": ["/src/secret/**", "*.pem"], "*": ["/.env"]}"#).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("ContentExclusionSet", &b);
    let (st, rules) = get(&s, &t).await;
    assert_eq!((st, rules.to_string()), (200, r#"{"widgets":["/src/secret/**","*.pem"],"*":["/.env"]}"#.to_string()));
    // A set replaces everything.
    put_raw(&s, &t, r#"{"tools": []}"#).await;
    assert_eq!(get(&s, &t).await, (200, json!({"tools": []})));
});

both!(comments_are_dropped_and_the_last_duplicate_wins, |s| {
    let t = world(&s).await;
    let body = "{\n  // repositories of the platform team\n  \"widgets\": [\"/a\"], /* replaced below */\n  \"tools\": [\"/b\"],\n  \"widgets\": [\"/c // kept\"]\n}";
    let (st, _, b) = put_raw(&s, &t, body).await;
    assert_eq!(st, 200, "{b}");
    let (_, rules) = get(&s, &t).await;
    assert_eq!(rules.to_string(), r#"{"tools":["/b"],"widgets":["/c // kept"]}"#);
});

both!(values_must_be_arrays_of_paths, |s| {
    let t = world(&s).await;
    put_raw(&s, &t, r#"{"keep": ["/x"]}"#).await;
    for body in [r#"{"a": "/x"}"#, r#"{"a": [1, 2]}"#, r#"{"a": ["/ok", ""]}"#, r#"{"a": {"p": "/x"}}"#, r#"{"": ["/x"]}"#] {
        let (st, h, b) = put_raw(&s, &t, body).await;
        assert_eq!(st, 422, "{body}: {b}");
        assert_eq!(b["message"], "Validation Failed");
        assert!(b["errors"].as_array().unwrap().iter().all(Value::is_string), "simple validation errors: {b}");
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    }
    // Not JSON, or not an object: 400. Nothing changed.
    let (st, h, b) = put_raw(&s, &t, "{").await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    let (st, h, b) = put_raw(&s, &t, r#"["/x"]"#).await;
    assert_error(st, &h, &b, 400, "Body should be a JSON object");
    assert_eq!(get(&s, &t).await.1, json!({"keep": ["/x"]}));
});

both!(body_over_the_limit_is_413, |s| {
    let t = world(&s).await;
    put_raw(&s, &t, r#"{"keep": ["/x"]}"#).await;
    let paths: Vec<String> = (0..8000).map(|i| format!("/some/long/path/{i:05}")).collect();
    let big = json!({ "widgets": paths }).to_string();
    assert!(big.len() > 64 * 1024);
    let (st, h, b) = put_raw(&s, &t, big).await;
    assert_error(st, &h, &b, 413, "Payload Too Large");
    assert_eq!(get(&s, &t).await.1, json!({"keep": ["/x"]}));
    // Just under the limit is fine.
    let paths: Vec<String> = (0..2500).map(|i| format!("/p/{i:05}")).collect();
    let ok = json!({ "widgets": paths }).to_string();
    assert!(ok.len() < 64 * 1024);
    assert_eq!(put_raw(&s, &t, ok).await.0, 200);
});

both!(owners_only_with_the_scopes, |s| {
    let t = world(&s).await;
    let (_, h, _) = parts(s.get(PATH, Some(&t)).await).await;
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "assistant, read:org");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "assistant_content_exclusion=read");
    // read:org reads but does not set.
    let read_org = s.classic("alice", &["read:org"]).await;
    assert_eq!(get(&s, &read_org).await.0, 200);
    let (st, h, b) = put_raw(&s, &read_org, "{}").await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "assistant");
    let other = s.classic("alice", &["repo"]).await;
    assert_eq!(get(&s, &other).await.0, 403);
    // Members are not owners: 404, as for an unknown organization; no credentials: 401.
    let bob = s.classic("bob", &["assistant"]).await;
    let (st, h, b) = parts(s.get(PATH, Some(&bob)).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(put_raw(&s, &bob, "{}").await.0, 404);
    assert_eq!(parts(s.get("/orgs/nope/assistant/content_exclusion", Some(&t)).await).await.0, 404);
    let (st, h, b) = parts(s.get(PATH, None).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // Fine-grained: the Assistant content exclusion permission.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"assistant_content_exclusion": "read"}})).await;
    assert_eq!(get(&s, &fg).await.0, 200);
    assert_eq!(put_raw(&s, &fg, "{}").await.0, 403);
    let fgw = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"assistant_content_exclusion": "write"}})).await;
    assert_eq!(put_raw(&s, &fgw, r#"{"a": ["/b"]}"#).await.0, 200);
});
