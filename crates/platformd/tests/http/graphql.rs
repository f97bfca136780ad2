//! The GraphQL endpoint: the `viewer` query behind the REST contract (credentials, the `graphql`
//! rate-limit resource), GraphQL errors for everything else, the enterprise path.
use crate::both;
use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn graphql(s: &Server, path: &str, token: Option<&str>, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    call(s, Method::POST, path, token, Some(body)).await
}

/// Asserts a GraphQL error answer: `status`, one error whose message contains `message`.
fn assert_graphql_error(status: u16, body: &Value, want: u16, message: &str) -> Value {
    assert_eq!(status, want, "{body}");
    assert!(body.get("data").is_none_or(Value::is_null), "{body}");
    let errors = body["errors"].as_array().unwrap_or_else(|| panic!("no errors: {body}"));
    assert_eq!(errors.len(), 1, "{body}");
    assert!(errors[0]["message"].as_str().is_some_and(|m| m.contains(message)), "{body}");
    errors[0].clone()
}

both!(viewer_of_a_token, |s| {
    s.user("alice").await;
    let classic = s.classic("alice", &[]).await;
    // gh's query, exactly as `gh auth status` sends it.
    let (st, h, b) = graphql(&s, "/graphql", Some(&classic), json!({"query": "query UserCurrent{viewer{login}}", "variables": null})).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b, json!({"data": {"viewer": {"login": "alice"}}}));
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(header(&h, "x-oauth-scopes"), "");

    // Every field the user store holds, in the order asked, aliases included; the node id and
    // database id are the REST user's.
    let fine = s.token(json!({"kind": "fine_grained", "login": "alice"})).await;
    let q = "query Me($unused: Int) { viewer { login } }";
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": q})).await;
    let e = assert_graphql_error(st, &b, 200, "not supported");
    assert_eq!(e["type"], "NOT_SUPPORTED");
    let q = "{\n  me: viewer { __typename, databaseId id name handle: login isSiteAdmin createdAt updatedAt }\n}";
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": q, "operationName": null})).await;
    assert_eq!(st, 200, "{b}");
    let me = &b["data"]["me"];
    let keys: Vec<&str> = me.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["__typename", "databaseId", "id", "name", "handle", "isSiteAdmin", "createdAt", "updatedAt"]);
    assert_eq!(me["__typename"], "User");
    assert_eq!(me["handle"], "alice");
    assert_eq!(me["isSiteAdmin"], false);
    assert!(is_ts(&me["createdAt"]) && is_ts(&me["updatedAt"]), "{me}");
    let (_, _, rest) = call(&s, Method::GET, "/user", Some(&classic), None).await;
    assert!(rest["id"].as_i64().is_some() && rest["node_id"].as_str().is_some(), "{rest}");
    assert_eq!((&me["databaseId"], &me["id"], &me["name"]), (&rest["id"], &rest["node_id"], &rest["name"]), "{rest}");

    // `operationName` must name the operation.
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": "query A { viewer { login } }", "operationName": "B"})).await;
    assert_graphql_error(st, &b, 200, "No operation named \"B\"");
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": "query A { viewer { login } }", "operationName": "A"})).await;
    assert_eq!((st, &b["data"]["viewer"]["login"]), (200, &json!("alice")), "{b}");
});

both!(credentials_as_rest, |s| {
    s.user("alice").await;
    let q = json!({"query": "{ viewer { login } }"});
    let (st, h, b) = graphql(&s, "/graphql", Some("ghp_not_a_real_token_at_all_000000000000"), q.clone()).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
    let (st, h, b) = graphql(&s, "/graphql", None, q.clone()).await;
    assert_error(st, &h, &b, 401, "This endpoint requires you to be authenticated.");
    // A credential acting for no user has no viewer.
    s.repo("alice", "hello", false).await;
    let workflow = s.admin_post("/tokens", json!({"kind": "workflow", "repo": "alice/hello"})).await["token"].as_str().unwrap().to_string();
    let (st, _, b) = graphql(&s, "/graphql", Some(&workflow), q).await;
    let e = assert_graphql_error(st, &b, 200, "Resource not accessible by integration");
    assert_eq!((&e["type"], &e["path"]), (&json!("FORBIDDEN"), &json!(["viewer"])));
    assert_eq!(b["data"], Value::Null);
});

both!(graphql_rate_limit_resource, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let (_, h, _) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { login } }"})).await;
    assert_eq!(header(&h, "x-ratelimit-resource"), "graphql");
    assert_eq!(header(&h, "x-ratelimit-used"), "1");
    graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { nope } }"})).await;
    // Counted in its own window, which `GET /rate_limit` reports; `core` untouched by it.
    let (_, h, b) = call(&s, Method::GET, "/rate_limit", Some(&t), None).await;
    assert_eq!(header(&h, "x-ratelimit-resource"), "core");
    assert_eq!(b["resources"]["graphql"]["used"], 2, "{b}");
    assert_eq!(b["resources"]["graphql"]["remaining"], b["resources"]["graphql"]["limit"].as_i64().unwrap() - 2, "{b}");
    assert_eq!(b["resources"]["core"]["used"], 0, "{b}");
});

both!(unsupported_queries, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &["repo"]).await;
    for (q, what) in [
        ("{ repository(owner: \"alice\", name: \"hello\") { id } }", "arguments"),
        ("{ rateLimit { remaining } }", "`rateLimit`"),
        ("{ viewer { login organizations { nodes { login } } } }", "`User.organizations`"),
        ("{ viewer { email } }", "`User.email`"),
        ("mutation { addStar { clientMutationId } }", "mutation"),
        ("{ viewer { ...Me } } fragment Me on User { login }", "fragments"),
    ] {
        let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": q})).await;
        let e = assert_graphql_error(st, &b, 200, what);
        assert_eq!(e["type"], "NOT_SUPPORTED", "{q}: {b}");
        assert!(e["message"].as_str().unwrap().contains("only the viewer query"), "{b}");
    }
    // Not GraphQL: a parse error where it is.
    let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { login }"})).await;
    let e = assert_graphql_error(st, &b, 200, "Parse error");
    assert_eq!(e["locations"], json!([{"line": 1, "column": 19}]));
    let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer }"})).await;
    assert_graphql_error(st, &b, 200, "Field must have selections");
    let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { a: login a: name } }"})).await;
    assert_graphql_error(st, &b, 200, "field conflict");
});

both!(malformed_requests, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let raw = |body: &'static str| s.req(Method::POST, "/graphql", Some(&t)).header("content-type", "application/json").body(body);
    for body in ["not json", "[]", "{\"query\": "] {
        let (st, _, b) = parts(raw(body).send().await.unwrap()).await;
        assert_graphql_error(st, &b, 400, "Problems parsing JSON");
    }
    for body in [json!({}), json!({"query": 1}), json!({"query": null, "variables": {}})] {
        let (st, _, b) = graphql(&s, "/graphql", Some(&t), body).await;
        assert_graphql_error(st, &b, 400, "A query attribute must be specified and must be a string.");
    }
    // GraphQL is POST only.
    let (st, h, b) = call(&s, Method::GET, "/graphql", Some(&t), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

both!(enterprise_layout, Options { base_path: "/api/v3", ..Options::default() }, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let root = format!("http://{}", s.addr);
    let q = json!({"query": "query UserCurrent{viewer{login}}"});
    // Where gh looks on an enterprise host, under the public URL, and at the root as the REST API.
    for url in [format!("{root}/api/graphql"), format!("{}/graphql", s.base), format!("{root}/graphql")] {
        let (st, h, b) = graphql(&s, &url, Some(&t), q.clone()).await;
        assert_eq!((st, &b), (200, &json!({"data": {"viewer": {"login": "alice"}}})), "{url}");
        assert_eq!(header(&h, "x-ratelimit-resource"), "graphql", "{url}");
    }
    let (st, h, b) = graphql(&s, &format!("{root}/api/graphql"), Some("ghp_bad"), q).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
});

both!(no_enterprise_path_without_api_v3, Options { base_path: "/v3", ..Options::default() }, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let (st, _, _) = graphql(&s, &format!("http://{}/api/graphql", s.addr), Some(&t), json!({"query": "{ viewer { login } }"})).await;
    assert_eq!(st, 404);
});
