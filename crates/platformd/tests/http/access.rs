//! The authorization matrix (authorize.rs): who may read the combined status and create a
//! status, on a private and a public repository owned by an organization.
use crate::both;
use crate::harness::*;
use reqwest::Method;
use serde_json::json;

const PRIVATE: &str = "acme/private";
const PUBLIC: &str = "acme/public";
const PAT_403: &str = "Resource not accessible by personal access token";
const INT_403: &str = "Resource not accessible by integration";

/// alice owns org `acme` (bob is a member), dave owns org `other`, carol is an outsider with
/// her own private repository.
async fn world(s: &Server) {
    for u in ["alice", "bob", "carol", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.admin_post("/orgs", json!({"login": "other", "owners": ["dave"]})).await;
    for (o, n, p) in [
        ("acme", "private", true),
        ("acme", "public", false),
        ("other", "private", true),
        ("other", "public", false),
        ("carol", "notes", true),
    ] {
        s.repo(o, n, p).await;
        s.push(&format!("{o}/{n}"), "refs/heads/main", SHA).await;
    }
}

/// (status, message) of GET combined status.
async fn read(s: &Server, repo: &str, token: Option<&str>) -> (u16, String) {
    let (st, h, b) = parts(s.get(&format!("/repos/{repo}/commits/main/status"), token).await).await;
    check_body(st, &h, &b);
    (st, b["message"].as_str().unwrap_or("").to_string())
}

/// (status, message) of POST status.
async fn write(s: &Server, repo: &str, token: Option<&str>) -> (u16, String) {
    let (st, h, b) =
        parts(s.post(&format!("/repos/{repo}/statuses/{SHA}"), token, json!({"state": "success", "context": "matrix"})).await).await;
    check_body(st, &h, &b);
    (st, b["message"].as_str().unwrap_or("").to_string())
}

/// Error responses carry the §3 error body.
fn check_body(st: u16, h: &reqwest::header::HeaderMap, b: &serde_json::Value) {
    if st >= 400 {
        let msg = b["message"].as_str().unwrap_or_default().to_string();
        assert_error(st, h, b, st, &msg);
    }
}

fn ok(st: u16) -> (u16, String) {
    (st, String::new())
}
fn err(st: u16, m: &str) -> (u16, String) {
    (st, m.to_string())
}
fn not_found() -> (u16, String) {
    err(404, "Not Found")
}

/// Asserts [read private, write private, read public, write public].
async fn matrix(s: &Server, token: Option<&str>, want: [(u16, String); 4], what: &str) {
    let got = [read(s, PRIVATE, token).await, write(s, PRIVATE, token).await, read(s, PUBLIC, token).await, write(s, PUBLIC, token).await];
    let norm = |x: &(u16, String)| if x.0 < 300 { (x.0, String::new()) } else { x.clone() };
    let got: Vec<_> = got.iter().map(norm).collect();
    assert_eq!(got, want.to_vec(), "{what}: [read private, write private, read public, write public]");
}

both!(anonymous_bad_and_expired_credentials, |s| {
    world(&s).await;
    matrix(&s, None, [not_found(), not_found(), ok(200), err(401, "Requires authentication")], "no credentials").await;
    let bad = [err(401, "Bad credentials"), err(401, "Bad credentials"), err(401, "Bad credentials"), err(401, "Bad credentials")];
    matrix(&s, Some("svp_thisisnotatokenthisisnotatoken0000"), bad.clone(), "unknown token").await;
    matrix(&s, Some("garbage"), bad.clone(), "garbage token").await;
    // A malformed authorization header.
    let r = s.req(Method::GET, "/repos/acme/public/commits/main/status", None).header("authorization", "Weird xyz").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // Expiry with the manual clock.
    let now = s.admin(Method::GET, "/clock", serde_json::Value::Null).await["epoch"].as_i64().unwrap();
    let exp = platform_core::time::format_ts(now + 60);
    let t = s.token(json!({"kind": "classic", "login": "alice", "scopes": ["repo"], "expires_at": exp})).await;
    matrix(&s, Some(&t), [ok(200), ok(201), ok(200), ok(201)], "alice before expiry").await;
    s.advance(120).await;
    matrix(&s, Some(&t), bad.clone(), "expired classic").await;
    let f = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"statuses": "write"}, "expires_at": platform_core::time::format_ts(now + 180)})).await;
    matrix(&s, Some(&f), [ok(200), ok(201), ok(200), ok(201)], "fine-grained before expiry").await;
    s.advance(61).await;
    matrix(&s, Some(&f), bad, "expired fine-grained").await;
});

both!(classic_tokens_and_roles, |s| {
    world(&s).await;
    // Owner and member with `repo`, or `repo:status`.
    for (login, scopes) in [("alice", &["repo"][..]), ("bob", &["repo"][..]), ("bob", &["repo:status"][..])] {
        let t = s.classic(login, scopes).await;
        matrix(&s, Some(&t), [ok(200), ok(201), ok(200), ok(201)], &format!("{login} {scopes:?}")).await;
    }
    // The creator of a member's status is the member.
    let t = s.classic("bob", &["repo"]).await;
    let (_, _, b) = parts(s.post(&format!("/repos/acme/private/statuses/{SHA}"), Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(b["creator"]["login"], "bob");
    // Missing the scope: private invisible, public read-only.
    let t = s.classic("alice", &["read:org"]).await;
    matrix(&s, Some(&t), [not_found(), not_found(), ok(200), err(403, PAT_403)], "alice read:org").await;
    let t = s.classic("alice", &[]).await;
    matrix(&s, Some(&t), [not_found(), not_found(), ok(200), err(403, PAT_403)], "alice no scopes").await;
    // A non-member: private 404 even with `repo`, public needs push access.
    let t = s.classic("carol", &["repo"]).await;
    matrix(&s, Some(&t), [not_found(), not_found(), ok(200), err(403, "Must have push access to this repository.")], "carol repo").await;
    // Another user's private repository.
    let t = s.classic("alice", &["repo"]).await;
    assert_eq!(read(&s, "carol/notes", Some(&t)).await, not_found());
    assert_eq!(write(&s, "carol/notes", Some(&t)).await, not_found());
    let carol = s.classic("carol", &["repo"]).await;
    assert_eq!(read(&s, "carol/notes", Some(&carol)).await.0, 200);
    assert_eq!(write(&s, "carol/notes", Some(&carol)).await.0, 201);
    // Another organization's private repository.
    assert_eq!(read(&s, "other/private", Some(&t)).await, not_found());
    assert_eq!(write(&s, "other/public", Some(&t)).await, err(403, "Must have push access to this repository."));
});

both!(fine_grained_tokens, |s| {
    world(&s).await;
    let tok = |body: serde_json::Value| {
        let mut b = json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme"});
        for (k, v) in body.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    let w = s.token(tok(json!({"permissions": {"statuses": "write"}}))).await;
    matrix(&s, Some(&w), [ok(200), ok(201), ok(200), ok(201)], "statuses write").await;
    let r = s.token(tok(json!({"permissions": {"statuses": "read"}}))).await;
    matrix(&s, Some(&r), [ok(200), err(403, PAT_403), ok(200), err(403, PAT_403)], "statuses read").await;
    // Without the permission.
    let none = s.token(tok(json!({"permissions": {"contents": "write"}}))).await;
    matrix(&s, Some(&none), [err(403, PAT_403), err(403, PAT_403), ok(200), err(403, PAT_403)], "no statuses permission").await;
    // Another resource owner: acme's private repository does not exist for it.
    let mine = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "write"}})).await;
    let (st, _) = read(&s, PRIVATE, Some(&mine)).await;
    assert_eq!(st, 404);
    assert_eq!(write(&s, PRIVATE, Some(&mine)).await, not_found());
    assert_eq!(read(&s, PUBLIC, Some(&mine)).await.0, 200);
    assert_eq!(write(&s, PUBLIC, Some(&mine)).await.0, 403);
    let dave =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "other", "permissions": {"statuses": "write"}})).await;
    assert_eq!(read(&s, PRIVATE, Some(&dave)).await, not_found());
    assert_eq!(read(&s, "other/private", Some(&dave)).await, not_found(), "alice is not in org other");
    // A selection of repositories that leaves out the private one.
    let sel = s.token(tok(json!({"permissions": {"statuses": "write"}, "repositories": ["public"]}))).await;
    matrix(&s, Some(&sel), [not_found(), not_found(), ok(200), ok(201)], "selected: public only").await;
    let sel = s.token(tok(json!({"permissions": {"statuses": "write"}, "repositories": ["acme/private"]}))).await;
    matrix(&s, Some(&sel), [ok(200), ok(201), ok(200), err(403, "Must have push access to this repository.")], "selected: private only")
        .await;
    // A non-member's fine-grained token on the organization.
    let carol =
        s.token(json!({"kind": "fine_grained", "login": "carol", "resource_owner": "acme", "permissions": {"statuses": "write"}})).await;
    matrix(&s, Some(&carol), [not_found(), not_found(), ok(200), err(403, "Must have push access to this repository.")], "carol").await;
});

both!(app_tokens, |s| {
    world(&s).await;
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    // Installation token: its organization's repositories.
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"statuses": "write"}})).await;
    assert!(inst.starts_with("svs_"));
    matrix(&s, Some(&inst), [ok(200), ok(201), ok(200), ok(201)], "installation").await;
    assert_eq!(read(&s, "other/private", Some(&inst)).await, not_found());
    assert_eq!(write(&s, "other/private", Some(&inst)).await, not_found());
    assert_eq!(read(&s, "carol/notes", Some(&inst)).await, not_found());
    // An installation status has no user creator.
    let (st, _, b) =
        parts(s.post(&format!("/repos/acme/public/statuses/{SHA}"), Some(&inst), json!({"state": "success", "context": "bot"})).await)
            .await;
    assert_eq!(st, 201, "{b}");
    let inst_read = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"statuses": "read"}})).await;
    matrix(&s, Some(&inst_read), [ok(200), err(403, INT_403), ok(200), err(403, INT_403)], "installation statuses read").await;
    let inst_none = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"contents": "read"}})).await;
    matrix(&s, Some(&inst_none), [err(403, INT_403), err(403, INT_403), ok(200), err(403, INT_403)], "installation without statuses").await;

    // Workflow token: its own repository, statuses write by default.
    let wf = s.admin_post("/tokens", json!({"kind": "workflow", "repo": "acme/private"})).await;
    assert_eq!(wf["permissions"]["statuses"], "write", "{wf}");
    let wf = wf["token"].as_str().unwrap().to_string();
    assert!(wf.starts_with("svw_"));
    assert_eq!(read(&s, PRIVATE, Some(&wf)).await.0, 200);
    assert_eq!(write(&s, PRIVATE, Some(&wf)).await.0, 201);
    assert_eq!(read(&s, "other/private", Some(&wf)).await, not_found());
    assert_eq!(write(&s, "other/private", Some(&wf)).await, not_found());
    assert_eq!(read(&s, "carol/notes", Some(&wf)).await, not_found());
    assert_eq!(read(&s, PUBLIC, Some(&wf)).await.0, 200);
    assert_eq!(write(&s, PUBLIC, Some(&wf)).await.0, 403);
    let wf_read = s.token(json!({"kind": "workflow", "repo": "acme/private", "permissions": {"statuses": "read"}})).await;
    assert_eq!(read(&s, PRIVATE, Some(&wf_read)).await.0, 200);
    assert_eq!(write(&s, PRIVATE, Some(&wf_read)).await, err(403, INT_403));

    // User-to-server token: needs the permission and the user's access.
    let u2s = s.token(json!({"kind": "user_to_server", "login": "bob", "client_id": cid, "permissions": {"statuses": "write"}})).await;
    matrix(&s, Some(&u2s), [ok(200), ok(201), ok(200), ok(201)], "u2s statuses write").await;
    let u2s_none = s.token(json!({"kind": "user_to_server", "login": "bob", "client_id": cid, "permissions": {}})).await;
    matrix(&s, Some(&u2s_none), [err(403, INT_403), err(403, INT_403), ok(200), err(403, INT_403)], "u2s without permission").await;
    let u2s_carol =
        s.token(json!({"kind": "user_to_server", "login": "carol", "client_id": cid, "permissions": {"statuses": "write"}})).await;
    matrix(&s, Some(&u2s_carol), [not_found(), not_found(), ok(200), err(403, "Must have push access to this repository.")], "u2s carol")
        .await;
});

both!(oauth_tokens_and_app_credentials, |s| {
    world(&s).await;
    let app = s.admin_post("/apps", json!({"name": "OA", "owner": "acme", "kind": "oauth"})).await;
    let (cid, secret) = (app["client_id"].as_str().unwrap().to_string(), app["client_secret"].as_str().unwrap().to_string());
    // An OAuth user token follows scopes like a classic token.
    let t = s.token(json!({"kind": "oauth", "login": "bob", "client_id": cid, "scopes": ["repo:status"]})).await;
    matrix(&s, Some(&t), [ok(200), ok(201), ok(200), ok(201)], "oauth repo:status").await;
    let r = s.get("/repos/acme/public/commits/main/status", Some(&t)).await;
    assert_eq!(header(r.headers(), "x-oauth-client-id"), cid);
    let t = s.token(json!({"kind": "oauth", "login": "bob", "client_id": cid, "scopes": ["user"]})).await;
    let (st, _) = read(&s, PRIVATE, Some(&t)).await;
    assert_eq!(st, 404);
    assert_eq!(read(&s, PUBLIC, Some(&t)).await.0, 200);
    assert_eq!(write(&s, PUBLIC, Some(&t)).await.0, 403);
    // Application basic credentials: public data only.
    let basic = |m: Method, repo: &str| {
        let path = if m == Method::GET { format!("/repos/{repo}/commits/main/status") } else { format!("/repos/{repo}/statuses/{SHA}") };
        s.req(m, &path, None).basic_auth(&cid, Some(&secret)).json(&json!({"state": "success"}))
    };
    let r = basic(Method::GET, PUBLIC).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(header(r.headers(), "x-ratelimit-limit"), "5000");
    let (st, h, b) = parts(basic(Method::GET, PRIVATE).send().await.unwrap()).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = parts(basic(Method::POST, PRIVATE).send().await.unwrap()).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, _, _) = parts(basic(Method::POST, PUBLIC).send().await.unwrap()).await;
    assert_eq!(st, 403);
    let (st, h, b) =
        parts(s.req(Method::GET, "/repos/acme/public/commits/main/status", None).basic_auth(&cid, Some("wrong")).send().await.unwrap())
            .await;
    assert_error(st, &h, &b, 401, "Bad credentials");
});
