//! The GraphQL endpoint: the `viewer` query behind the REST contract (credentials, the lockout,
//! the `graphql` rate-limit resource), the library's validation errors and introspection, the
//! enterprise path, and the limits: documents too deep, too wide, too large or too slow get a
//! clear answer while the node goes on answering everyone else.
use std::time::{Duration, Instant};

use crate::both;
use crate::harness::*;
use platform_api::secondary::SecondarySettings;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn graphql(s: &Server, path: &str, token: Option<&str>, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    call(s, Method::POST, path, token, Some(body)).await
}

async fn query(s: &Server, token: &str, q: &str) -> Value {
    let (st, h, b) = graphql(s, "/graphql", Some(token), json!({ "query": q })).await;
    assert_eq!((st, header(&h, "content-type")), (200, "application/json; charset=utf-8"), "{b}");
    b
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

    // Fragments, inline fragments, directives and variables: GraphQL as the library reads it.
    let q = "query Me($full: Boolean!) { viewer { ...Names ... on User @include(if: $full) { isSiteAdmin } } }
             fragment Names on User { login name }";
    for (full, keys) in [(true, vec!["login", "name", "isSiteAdmin"]), (false, vec!["login", "name"])] {
        let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": q, "variables": {"full": full}})).await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(b["data"]["viewer"].as_object().unwrap().keys().collect::<Vec<_>>(), keys, "{b}");
    }
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": q, "variables": {"full": "yes"}})).await;
    assert_graphql_error(st, &b, 200, "Invalid value");

    // `operationName` picks the operation.
    let two = "query A { viewer { login } } query B { viewer { id } }";
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": two, "operationName": "C"})).await;
    assert_graphql_error(st, &b, 200, "Unknown operation named \"C\"");
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": two})).await;
    assert_graphql_error(st, &b, 200, "Operation name required");
    let (st, _, b) = graphql(&s, "/graphql", Some(&fine), json!({"query": two, "operationName": "A"})).await;
    assert_eq!((st, &b), (200, &json!({"data": {"viewer": {"login": "alice"}}})), "{b}");
});

both!(credentials_as_rest, |s| {
    s.user("alice").await;
    let q = json!({"query": "{ viewer { login } }"});
    let (st, h, b) = graphql(&s, "/graphql", Some("ghp_not_a_real_token_at_all_000000000000"), q.clone()).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
    let (st, h, b) = graphql(&s, "/graphql", None, q.clone()).await;
    assert_error(st, &h, &b, 401, "This endpoint requires you to be authenticated.");
    // A credential acting for no user has no viewer: the error's `type` beside its message.
    s.repo("alice", "hello", false).await;
    let workflow = s.admin_post("/tokens", json!({"kind": "workflow", "repo": "alice/hello"})).await["token"].as_str().unwrap().to_string();
    let (st, _, b) = graphql(&s, "/graphql", Some(&workflow), q).await;
    let e = assert_graphql_error(st, &b, 200, "Resource not accessible by integration");
    assert_eq!((&e["type"], &e["path"]), (&json!("FORBIDDEN"), &json!(["viewer"])));
    assert!(e.get("extensions").is_none(), "{e}");
    assert_eq!(b["data"], Value::Null);
    // But it may ask what the schema is.
    let b = query(&s, &workflow, "{ __typename }").await;
    assert_eq!(b, json!({"data": {"__typename": "Query"}}));
});

both!(failed_logins_on_graphql_lock_out, Options::with(|c| c.limits.secondary = SecondarySettings::default()), |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let q = json!({"query": "{ viewer { login } }"});
    for _ in 0..10 {
        let (st, h, b) = graphql(&s, "/graphql", Some("ghp_not_a_real_token_at_all_000000000000"), q.clone()).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
    }
    // Locked: good credentials are refused too, on GraphQL as on REST.
    for path in ["/graphql", "/user"] {
        let (st, h, b) = call(&s, if path == "/user" { Method::GET } else { Method::POST }, path, Some(&t), Some(q.clone())).await;
        assert_error(st, &h, &b, 403, "Maximum number of login attempts exceeded. Please try again later.");
    }
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

both!(unknown_fields_are_validation_errors, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &["repo"]).await;
    for (q, message) in [
        ("{ organization(login: \"acme\") { id } }", "Unknown field \"organization\" on type \"Query\""),
        ("{ rateLimit { remaining } }", "Unknown field \"rateLimit\" on type \"Query\""),
        ("{ viewer { login organizations { nodes { login } } } }", "Unknown field \"organizations\" on type \"User\""),
        ("{ viewer { email } }", "Unknown field \"email\" on type \"User\""),
        ("{ viewer(login: \"bob\") { login } }", "Unknown argument \"login\""),
        ("mutation { addStar { clientMutationId } }", "not configured for mutations"),
        ("{ viewer { ...Me } } fragment Me on Gist { id }", "Unknown type \"Gist\""),
        ("{ viewer }", "must have a selection of subfields"),
        ("{ viewer { login { x } } }", "must not have a selection"),
        ("{ viewer { a: login a: name } }", "conflict"),
    ] {
        // (The library may say it more than once: a mutation is refused by two of its rules.)
        let b = query(&s, &t, q).await;
        let e = &b["errors"][0];
        assert!(b["data"].is_null() && e["message"].as_str().is_some_and(|m| m.contains(message)), "{q}: {b}");
        assert!(e["locations"][0]["line"].is_u64(), "{q}: {b}");
    }
    // Not GraphQL: a parse error where it is, on one line.
    let b = query(&s, &t, "{ viewer { login }").await;
    let e = assert_graphql_error(200, &b, 200, "Parse error at [1, 19]: expected");
    assert_eq!(e["locations"], json!([{"line": 1, "column": 19}]));
    assert!(!e["message"].as_str().unwrap().contains('\n'), "{e}");
});

both!(repositories_are_read_as_the_rest_api_reads_them, |s| {
    s.user("alice").await;
    s.user("carol").await;
    s.repo("alice", "hello", false).await;
    s.repo("alice", "vault", true).await;
    let alice = s.classic("alice", &["repo"]).await;
    let carol = s.classic("carol", &["repo"]).await;
    let fields = "{ id name nameWithOwner owner { login } isPrivate visibility viewerPermission isEmpty defaultBranchRef { name } url parent { id } }";
    let b = query(&s, &alice, &format!("{{ repository(owner: \"alice\", name: \"vault\") {fields} }}")).await;
    let r = &b["data"]["repository"];
    assert_eq!(
        (r["nameWithOwner"].as_str(), r["isPrivate"].as_bool(), r["visibility"].as_str()),
        (Some("alice/vault"), Some(true), Some("PRIVATE")),
        "{b}"
    );
    assert_eq!(
        (r["viewerPermission"].as_str(), r["owner"]["login"].as_str(), r["parent"].clone()),
        (Some("ADMIN"), Some("alice"), Value::Null),
        "{b}"
    );
    assert!(r["url"].as_str().unwrap().ends_with("/alice/vault"), "{b}");
    // Public: read by anyone; private or unknown: the same NOT_FOUND error.
    let b = query(&s, &carol, &format!("{{ repository(owner: \"alice\", name: \"hello\") {fields} }}")).await;
    assert_eq!(b["data"]["repository"]["viewerPermission"], "READ", "{b}");
    for name in ["vault", "nothing"] {
        let b = query(&s, &carol, &format!("{{ repository(owner: \"alice\", name: \"{name}\") {{ id }} }}")).await;
        assert_eq!(b["errors"][0]["type"], "NOT_FOUND", "{b}");
        assert_eq!(b["errors"][0]["message"], format!("Could not resolve to a Repository with the name 'alice/{name}'."), "{b}");
    }
});

/// The query `gh repo list <owner>` sends (gh 2.23), with its variables.
const REPO_LIST: &str = "query RepositoryList($perPage:Int!,$endCursor:String,$privacy:RepositoryPrivacy,$fork:Boolean,$owner:String!) {
    repositoryOwner(login: $owner) {
      login
      repositories(first: $perPage, after: $endCursor, privacy: $privacy, isFork: $fork, ownerAffiliations: OWNER, orderBy: { field: PUSHED_AT, direction: DESC }) {
        nodes{nameWithOwner,description,isPrivate,isFork,isArchived,createdAt,pushedAt,visibility}
        totalCount
        pageInfo{hasNextPage,endCursor}
      }
    }
  }";

async fn repo_list(s: &Server, token: &str, variables: Value) -> Value {
    let (st, _, b) = graphql(s, "/graphql", Some(token), json!({ "query": REPO_LIST, "variables": variables })).await;
    assert_eq!(st, 200, "{b}");
    assert!(b.get("errors").is_none(), "{b}");
    b["data"]["repositoryOwner"].clone()
}

fn names(owner: &Value) -> Vec<String> {
    owner["repositories"]["nodes"].as_array().unwrap().iter().map(|n| n["nameWithOwner"].as_str().unwrap().to_string()).collect()
}

both!(owners_list_their_repositories, |s| {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("alice", "hello", false).await;
    s.repo("alice", "vault", true).await;
    s.repo("acme", "tools", false).await;
    s.repo("acme", "secret", true).await;
    s.repo("acme", "site", false).await;
    let alice = s.classic("alice", &["repo"]).await;
    let bob = s.classic("bob", &["repo", "read:org"]).await;
    let carol = s.classic("carol", &["repo"]).await;
    let public_only = s.classic("alice", &["public_repo"]).await;
    let all = |token: &'static str| json!({"owner": token, "perPage": 30});
    // A user's own repositories: private ones for those who may see them.
    let owner = repo_list(&s, &alice, all("alice")).await;
    assert_eq!(owner["login"], "alice");
    let mut got = names(&owner);
    got.sort();
    assert_eq!(got, ["alice/hello", "alice/vault"]);
    assert_eq!(owner["repositories"]["totalCount"], 2);
    assert_eq!(owner["repositories"]["pageInfo"]["hasNextPage"], false);
    let vault = owner["repositories"]["nodes"].as_array().unwrap().iter().find(|n| n["nameWithOwner"] == "alice/vault").unwrap().clone();
    assert_eq!(
        (vault["isPrivate"].as_bool(), vault["visibility"].as_str(), vault["isFork"].as_bool()),
        (Some(true), Some("PRIVATE"), Some(false))
    );
    for (token, want) in [(&carol, vec!["alice/hello"]), (&public_only, vec!["alice/hello"])] {
        let owner = repo_list(&s, token, all("alice")).await;
        assert_eq!(names(&owner), want);
        assert_eq!(owner["repositories"]["totalCount"], 1);
    }
    // An organization's: members see its private ones.
    let mut got = names(&repo_list(&s, &bob, all("acme")).await);
    got.sort();
    assert_eq!(got, ["acme/secret", "acme/site", "acme/tools"]);
    let mut got = names(&repo_list(&s, &carol, all("acme")).await);
    got.sort();
    assert_eq!(got, ["acme/site", "acme/tools"]);
    // Filters: privacy, forks (none is one).
    assert_eq!(names(&repo_list(&s, &bob, json!({"owner": "acme", "perPage": 30, "privacy": "PRIVATE"})).await), ["acme/secret"]);
    assert_eq!(names(&repo_list(&s, &bob, json!({"owner": "acme", "perPage": 30, "fork": true})).await), Vec::<String>::new());
    assert_eq!(repo_list(&s, &bob, json!({"owner": "acme", "perPage": 30, "fork": false})).await["repositories"]["totalCount"], 3);
    // Pages by cursor, as gh follows them.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = repo_list(&s, &bob, json!({"owner": "acme", "perPage": 2, "endCursor": cursor})).await;
        assert_eq!(page["repositories"]["totalCount"], 3);
        seen.extend(names(&page));
        let info = &page["repositories"]["pageInfo"];
        if info["hasNextPage"] == false {
            break;
        }
        cursor = info["endCursor"].clone();
    }
    seen.sort();
    assert_eq!(seen, ["acme/secret", "acme/site", "acme/tools"]);
    // No such owner: null, no error (gh says the owner was not recognized).
    assert_eq!(repo_list(&s, &alice, all("nobody")).await, Value::Null);
    // Orders, edges and backward pages.
    let q = "{ repositoryOwner(login: \"acme\") { repositories(first: 10, orderBy: {field: NAME, direction: ASC}) { edges { cursor node { name } } } } }";
    let b = query(&s, &bob, q).await;
    let edges = b["data"]["repositoryOwner"]["repositories"]["edges"].as_array().unwrap().clone();
    let order: Vec<&str> = edges.iter().map(|e| e["node"]["name"].as_str().unwrap()).collect();
    assert_eq!(order, ["secret", "site", "tools"], "{b}");
    let before = edges[2]["cursor"].as_str().unwrap();
    let q = format!("{{ repositoryOwner(login: \"acme\") {{ repositories(last: 1, before: \"{before}\", orderBy: {{field: NAME, direction: ASC}}) {{ nodes {{ name }} pageInfo {{ hasPreviousPage hasNextPage }} }} }} }}");
    let b = query(&s, &bob, &q).await;
    let r = &b["data"]["repositoryOwner"]["repositories"];
    assert_eq!(
        (r["nodes"][0]["name"].as_str(), r["pageInfo"]["hasPreviousPage"].as_bool(), r["pageInfo"]["hasNextPage"].as_bool()),
        (Some("site"), Some(true), Some(true)),
        "{b}"
    );
    // The viewer's own, through the same field on `viewer`.
    let b = query(&s, &alice, "{ viewer { repositories(first: 5, privacy: PRIVATE) { totalCount nodes { name } } } }").await;
    assert_eq!(b["data"]["viewer"]["repositories"]["nodes"], json!([{"name": "vault"}]), "{b}");
    // Pages must be asked for, and are at most 100.
    for (args, message) in [
        ("", "You must provide a `first` or `last` value"),
        ("first: 101", "exceeds the `first` limit of 100 records"),
        ("first: 1, last: 1", "Passing both `first` and `last`"),
        ("first: 1, after: \"bogus\"", "does not appear to be a valid cursor"),
    ] {
        let sep = if args.is_empty() { "" } else { "(" };
        let end = if args.is_empty() { "" } else { ")" };
        let b = query(&s, &alice, &format!("{{ repositoryOwner(login: \"alice\") {{ repositories{sep}{args}{end} {{ totalCount }} }} }}"))
            .await;
        assert!(b["errors"][0]["message"].as_str().is_some_and(|m| m.contains(message)), "{args}: {b}");
    }
});

both!(introspection, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let b = query(&s, &t, "{ __schema { queryType { name } mutationType { name } } __type(name: \"User\") { fields { name type { kind name ofType { name } } } } }").await;
    assert_eq!(b["data"]["__schema"], json!({"queryType": {"name": "Query"}, "mutationType": null}), "{b}");
    let fields: Vec<&str> = b["data"]["__type"]["fields"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(fields, ["id", "databaseId", "login", "name", "isSiteAdmin", "createdAt", "updatedAt", "repositories"]);
    assert_eq!(b["data"]["__type"]["fields"][5]["type"], json!({"kind": "NON_NULL", "name": null, "ofType": {"name": "DateTime"}}));
    // The introspection query GraphQL tools send, within the limits.
    let full = "query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name }
        types { ...FullType } directives { name description locations args { ...InputValue } } } }
      fragment FullType on __Type { kind name description
        fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
        inputFields { ...InputValue } interfaces { ...TypeRef }
        enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
      fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
      fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
        ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }";
    let b = query(&s, &t, full).await;
    let types = b["data"]["__schema"]["types"].as_array().unwrap_or_else(|| panic!("{b}"));
    assert!(types.iter().any(|t| t["name"] == "User" && t["fields"].as_array().is_some_and(|f| f.len() == 8)), "{b}");
    // The limits hold for introspection too.
    let deep = format!("{{ __schema {{ types {{ {}name{} }} }} }}", "fields { type { ".repeat(12), " } }".repeat(12));
    assert_graphql_error(200, &query(&s, &t, &deep).await, 200, "Query is nested too deep.");
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
    let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { login } }", "variables": [1]})).await;
    assert_graphql_error(st, &b, 400, "variables must be an object.");
    let (st, _, b) = graphql(&s, "/graphql", Some(&t), json!({"query": "{ viewer { login } }", "operationName": 1})).await;
    assert_graphql_error(st, &b, 400, "operationName must be a string.");
    // GraphQL is POST only.
    let (st, h, b) = call(&s, Method::GET, "/graphql", Some(&t), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

/// `/healthz` and a REST request answer, each within a few seconds (a liveness bound: a node
/// stuck on one request, or gone, answers in minutes or never).
async fn assert_answering(s: &Server, token: &str) {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let health = client.get(format!("http://{}/healthz", s.addr)).send().await.expect("/healthz answers");
    assert_eq!(health.status(), 200);
    let user = client.get(s.url("/user")).bearer_auth(token).header("user-agent", UA).send().await.expect("GET /user answers");
    assert_eq!(user.status(), 200);
}

/// Asks `/healthz` and `GET /user` every 100 ms until `until` is done, then returns its output.
async fn while_answering<T>(s: &Server, token: &str, until: impl std::future::Future<Output = T>) -> T {
    tokio::pin!(until);
    loop {
        tokio::select! {
            out = &mut until => return out,
            () = async { assert_answering(s, token).await; tokio::time::sleep(Duration::from_millis(100)).await } => {}
        }
    }
}

/// Sends raw request bytes, then reads the answer until the server closes the connection (or
/// answers in full): status and JSON body.
async fn raw_exchange(s: &Server, request: Vec<u8>) -> (u16, Value) {
    let mut c = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    // A server refusing a body may close before taking all of it: the answer is still there to read.
    let _ = c.write_all(&request).await;
    let mut out = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match c.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
            let text = String::from_utf8_lossy(&out);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let len = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse::<usize>().unwrap()));
                if len.is_some_and(|n| body.len() >= n) {
                    break;
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("an answer within 10 s");
    let text = String::from_utf8_lossy(&out);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {text:?}"));
    (head[9..12].parse().unwrap(), serde_json::from_str(body).unwrap_or(Value::Null))
}

fn raw_head(s: &Server, token: &str, content_length: usize) -> String {
    format!(
        "POST /graphql HTTP/1.1\r\nHost: {}\r\nUser-Agent: {UA}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n",
        s.addr
    )
}

both!(hostile_documents_get_clear_answers, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let ask = |q: String| {
        let (s, t) = (&s, &t);
        async move { query(s, t, &q).await }
    };
    // Each fragment spreading the next: deep chains, and twice over (2^40 selections).
    let chain = |n: usize, spreads: &str| -> String {
        let defs: String =
            (0..n).map(|i| format!("fragment F{i} on User {{ {} }}\n", spreads.replace('N', &(i + 1).to_string()))).collect();
        format!("{{ viewer {{ ...F0 }} }}\n{defs}fragment F{n} on User {{ login }}")
    };
    let cases: Vec<(String, String)> = vec![
        // Deep: ~22 KB nested a few thousand levels, in every way a document nests.
        (format!("{}{}", "{a".repeat(7_300), "}".repeat(7_300)), "Query nests brackets more than 64 deep.".into()),
        (format!("{{ viewer(x: {}1{}) {{ login }} }}", "[".repeat(11_000), "]".repeat(11_000)), "more than 64 deep".into()),
        (format!("{{ viewer(x: {}1{}) {{ login }} }}", "{a: ".repeat(4_400), "}".repeat(4_400)), "more than 64 deep".into()),
        (format!("{{ viewer {{ {}login{} }} }}", "... { ".repeat(3_600), " }".repeat(3_600)), "more than 64 deep".into()),
        (chain(800, "...FN"), "more than 64 deep once its fragments are spread".into()),
        (chain(40, "...FN ...FN"), "expands to more than 50000 selections".into()),
        (format!("{{ viewer {{ {}login{} }} }}", "a { ".repeat(30), " }".repeat(30)), "Query is nested too deep.".into()),
        // Wide: the same field or alias 50,000 times, and as many as fit the size limit.
        (format!("{{ viewer {{ {}}} }}", "login ".repeat(50_000)), "more than the 32768 accepted".into()),
        (
            format!("{{ viewer {{ {}}} }}", (0..50_000).map(|i| format!("a{i}: login ")).collect::<String>()),
            "more than the 32768 accepted".into(),
        ),
        (format!("{{ viewer {{ {}}} }}", "login ".repeat(5_400)), "Query is too complex.".into()),
        (format!("{{ viewer {{ {}}} }}", (0..2_500).map(|i| format!("a{i}: login ")).collect::<String>()), String::new()),
    ];
    for (q, message) in cases {
        let b = while_answering(&s, &t, ask(q.clone())).await;
        if message.is_empty() {
            assert_eq!(b["data"]["viewer"]["a2499"], "alice", "{}", b["errors"]);
        } else {
            assert_graphql_error(200, &b, 200, &message);
        }
        assert_answering(&s, &t).await;
    }
    // Variables nested thousands deep: not JSON this server reads (128 levels at most).
    for v in [format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000)), format!("{}1{}", "{\"a\":".repeat(5_000), "}".repeat(5_000))] {
        let body = format!("{{\"query\": \"query($v: [Int]) {{ viewer {{ login }} }}\", \"variables\": {{\"v\": {v}}}}}");
        let send = s.req(Method::POST, "/graphql", Some(&t)).header("content-type", "application/json").body(body).send();
        let (st, _, b) = parts(while_answering(&s, &t, send).await.unwrap()).await;
        assert_graphql_error(st, &b, 400, "Problems parsing JSON");
    }
    assert_answering(&s, &t).await;
});

both!(oversized_and_slow_bodies_as_rest, Options::with(|c| c.body_read_timeout = Duration::from_millis(1500)), |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    // Over the 1 MiB body limit: 413 with the REST error body, before the body is read.
    let big = json!({ "query": format!("{{ viewer {{ {}}} }}", "login ".repeat(180_000)) }).to_string();
    let (st, b) = raw_exchange(&s, format!("{}{big}", raw_head(&s, &t, big.len())).into_bytes()).await;
    assert_eq!((st, &b["message"], &b["status"]), (413, &json!("Payload Too Large"), &json!("413")), "{b}");
    assert!(b["documentation_url"].is_string(), "{b}");
    // A document sent slowly: 408 after the body-read timeout; everyone else is answered meanwhile.
    let started = Instant::now();
    let slow = raw_exchange(&s, format!("{}{{\"query\": \"{{ viewer", raw_head(&s, &t, 1_000)).into_bytes());
    let (st, b) = while_answering(&s, &t, slow).await;
    assert_eq!((st, &b["message"]), (408, &json!("Request Timeout")), "{b}");
    assert!(started.elapsed() >= Duration::from_millis(1400), "{:?}", started.elapsed());
    assert_answering(&s, &t).await;
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
