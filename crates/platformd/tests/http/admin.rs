//! The control plane under `/_admin/` and the seed loader.
use std::sync::Arc;

use crate::both;
use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

/// A control-plane call with any (or no) bearer token: (status, body).
async fn raw(s: &Server, method: Method, path: &str, token: Option<&str>, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.client.request(method, format!("http://{}/_admin{path}", s.addr)).json(&body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    parts(r.send().await.unwrap()).await
}

fn assert_validation(st: u16, b: &Value, field: &str, code: &str) {
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["message"], "Validation Failed", "{b}");
    assert_eq!(b["errors"][0]["field"], field, "{b}");
    assert_eq!(b["errors"][0]["code"], code, "{b}");
}

/// Failed control-plane logins lock out after `attempts` for `lockout_seconds` of wall-clock time.
fn admin_lockout(attempts: i64, lockout_seconds: i64) -> Options {
    Options::with(|c| (c.limits.secondary.login_attempts, c.limits.secondary.login_lockout_seconds) = (attempts, lockout_seconds))
}

both!(admin_token_required, admin_lockout(1000, 300), |s| {
    for (m, p) in
        [(Method::POST, "/users"), (Method::GET, "/clock"), (Method::POST, "/reset"), (Method::POST, "/tokens"), (Method::POST, "/nope")]
    {
        let (st, h, b) = raw(&s, m.clone(), p, None, json!({"login": "mallory"})).await;
        assert_error(st, &h, &b, 401, "Requires authentication");
        let (st, h, b) = raw(&s, m.clone(), p, Some("not-the-admin-token"), json!({"login": "mallory"})).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
        // A platform token is not the admin token either.
        let (st, _, _) = raw(&s, m.clone(), p, Some(&format!("{ADMIN}x")), json!({"login": "mallory"})).await;
        assert_eq!(st, 401);
        let r = s.client.request(m, format!("http://{}/_admin{p}", s.addr)).basic_auth("admin", Some(ADMIN)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401);
    }
    // Nothing was created.
    let (st, _, _) = raw(&s, Method::POST, "/repos", Some(ADMIN), json!({"owner": "mallory", "name": "x"})).await;
    assert_eq!(st, 422);
    // Unknown admin paths with the token: 404.
    let (st, h, b) = raw(&s, Method::GET, "/nope", Some(ADMIN), Value::Null).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

// Guessing the admin token: wrong tokens lock the address out of the control plane (even with
// the right token, until the lockout passes), although the API's limits are switched off.
both!(wrong_admin_tokens_lock_out, admin_lockout(3, 2), |s| {
    for _ in 0..2 {
        let (st, h, b) = raw(&s, Method::GET, "/clock", Some("guess"), Value::Null).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
    }
    let (st, _, _) = raw(&s, Method::GET, "/clock", Some(ADMIN), Value::Null).await;
    assert_eq!(st, 200, "two failures do not lock");
    let (st, _, _) = raw(&s, Method::GET, "/clock", Some("guess"), Value::Null).await;
    assert_eq!(st, 401, "the third failure");
    let (st, h, b) = raw(&s, Method::GET, "/clock", Some(ADMIN), Value::Null).await;
    assert_error(st, &h, &b, 403, "Maximum number of login attempts exceeded. Please try again later.");
    // The API itself is not locked by control-plane failures.
    assert_eq!(s.get("/", None).await.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let (st, _, _) = raw(&s, Method::GET, "/clock", Some(ADMIN), Value::Null).await;
    assert_eq!(st, 200, "after the lockout");
});

both!(admin_validation, |s| {
    let u = s.user("alice").await;
    assert_simple_user(&s, &u, "alice", "User");
    // Duplicate logins (users and organizations share the namespace, case-insensitively).
    let (st, _, b) = raw(&s, Method::POST, "/users", Some(ADMIN), json!({"login": "alice"})).await;
    assert_validation(st, &b, "login", "already_exists");
    let (st, _, b) = raw(&s, Method::POST, "/users", Some(ADMIN), json!({"login": "ALICE"})).await;
    assert_validation(st, &b, "login", "already_exists");
    let (st, _, b) = raw(&s, Method::POST, "/orgs", Some(ADMIN), json!({"login": "alice"})).await;
    assert_validation(st, &b, "login", "already_exists");
    let (st, _, b) = raw(&s, Method::POST, "/users", Some(ADMIN), json!({"login": "bad login!"})).await;
    assert_validation(st, &b, "login", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/users", Some(ADMIN), json!({})).await;
    assert_eq!(st, 422, "{b}");
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    // Unknown owners.
    let (st, _, b) = raw(&s, Method::POST, "/repos", Some(ADMIN), json!({"owner": "nobody", "name": "x"})).await;
    assert_validation(st, &b, "owner", "missing");
    let (st, _, b) = raw(&s, Method::POST, "/apps", Some(ADMIN), json!({"owner": "nobody", "name": "x", "kind": "oauth"})).await;
    assert_validation(st, &b, "owner", "missing");
    let (st, _, b) = raw(&s, Method::POST, "/orgs", Some(ADMIN), json!({"login": "acme", "members": ["nobody"]})).await;
    assert_validation(st, &b, "login", "missing");
    // ... and that org was not half-created.
    let (st, _, _) = raw(&s, Method::POST, "/orgs", Some(ADMIN), json!({"login": "acme"})).await;
    assert_eq!(st, 201);
    // Repositories.
    s.repo("alice", "hello", false).await;
    let (st, _, b) = raw(&s, Method::POST, "/repos", Some(ADMIN), json!({"owner": "alice", "name": "hello"})).await;
    assert_validation(st, &b, "name", "already_exists");
    let (st, _, b) = raw(&s, Method::POST, "/repos", Some(ADMIN), json!({"owner": "alice", "name": "x.git"})).await;
    assert_validation(st, &b, "name", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/repos/alice/hello/refs", Some(ADMIN), json!({"ref": "main", "sha": SHA})).await;
    assert_validation(st, &b, "ref", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/repos/alice/hello/refs", Some(ADMIN), json!({"ref": "refs/heads/main", "sha": "abc"})).await;
    assert_validation(st, &b, "sha", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/repos/alice/nope/refs", Some(ADMIN), json!({"ref": "refs/heads/main", "sha": SHA})).await;
    assert_validation(st, &b, "repo", "missing");
    // Bad kinds.
    let (st, _, b) = raw(&s, Method::POST, "/apps", Some(ADMIN), json!({"owner": "alice", "name": "x", "kind": "plugin"})).await;
    assert_validation(st, &b, "kind", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "magic", "login": "alice"})).await;
    assert_validation(st, &b, "kind", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "classic"})).await;
    assert_validation(st, &b, "login", "missing_field");
    let (st, _, b) = raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "classic", "login": "nobody"})).await;
    assert_validation(st, &b, "login", "missing");
    let (st, _, b) = raw(
        &s,
        Method::POST,
        "/tokens",
        Some(ADMIN),
        json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "admin"}}),
    )
    .await;
    assert_validation(st, &b, "permissions", "invalid");
    let (st, _, b) =
        raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "classic", "login": "alice", "expires_at": "tomorrow"})).await;
    assert_validation(st, &b, "expires_at", "invalid");
    let oauth = s.admin_post("/apps", json!({"owner": "alice", "name": "OA", "kind": "oauth"})).await;
    // An OAuth token needs an OAuth app; a user-to-server token an app.
    let (st, _, b) =
        raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "user_to_server", "login": "alice", "client_id": oauth["client_id"]}))
            .await;
    assert_validation(st, &b, "client_id", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "oauth", "login": "alice"})).await;
    assert_validation(st, &b, "client_id", "invalid");
    // OAuth apps are not installed.
    let (st, _, b) = raw(
        &s,
        Method::POST,
        &format!("/apps/{}/installations", oauth["client_id"].as_str().unwrap()),
        Some(ADMIN),
        json!({"org": "acme"}),
    )
    .await;
    assert_validation(st, &b, "app", "invalid");
    let (st, _, b) = raw(&s, Method::POST, "/apps", Some(ADMIN), json!({"owner": "alice", "name": "OA", "kind": "oauth"})).await;
    assert_validation(st, &b, "name", "already_exists");
    // Not JSON.
    let r = s.client.post(format!("http://{}/_admin/users", s.addr)).bearer_auth(ADMIN).body("{").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
});

both!(installations_and_tokens, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", true).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    let app = s.admin_post("/apps", json!({"owner": "acme", "name": "CI App", "kind": "app"})).await;
    assert_eq!(app["name"], "CI App");
    assert_eq!(app["slug"], "ci-app");
    assert!(app["client_secret"].as_str().is_some_and(|x| x.len() >= 20));
    let cid = app["client_id"].as_str().unwrap();
    // No installation yet: installation tokens are refused.
    let (st, _, b) = raw(&s, Method::POST, "/tokens", Some(ADMIN), json!({"kind": "installation", "app": "CI App", "org": "acme"})).await;
    assert_validation(st, &b, "installation_id", "missing");
    let inst = s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    assert_eq!(inst["app_id"], app["id"]);
    let (st, _, b) = raw(&s, Method::POST, &format!("/apps/{cid}/installations"), Some(ADMIN), json!({"org": "acme"})).await;
    assert_validation(st, &b, "org", "already_exists");
    let (st, _, b) = raw(&s, Method::POST, "/apps/Iv23linothing/installations", Some(ADMIN), json!({"org": "acme"})).await;
    assert_validation(st, &b, "client_id", "missing");
    // By app name and org, by client_id and org, by installation id.
    for body in [
        json!({"kind": "installation", "app": "CI App", "org": "acme", "permissions": {"statuses": "write"}}),
        json!({"kind": "installation", "client_id": cid, "org": "acme", "permissions": {"statuses": "write"}}),
        json!({"kind": "installation", "installation_id": inst["id"], "permissions": {"statuses": "write"}}),
    ] {
        let t = s.admin_post("/tokens", body.clone()).await;
        assert_eq!(t["kind"], "installation");
        assert_eq!(t["user_id"], Value::Null);
        assert_eq!(t["permissions"]["statuses"], "write");
        let tok = t["token"].as_str().unwrap();
        assert!(tok.starts_with("svs_"));
        let (st, _, b) = parts(s.post(&format!("/repos/acme/widgets/statuses/{SHA}"), Some(tok), json!({"state": "success"})).await).await;
        assert_eq!(st, 201, "{body}: {b}");
    }
    // Token shapes of the other kinds.
    let t = s.admin_post("/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["repo"], "note": "n"})).await;
    assert_eq!(t["kind"], "classic");
    assert_eq!(t["scopes"], json!(["repo"]));
    assert!(t["token"].as_str().unwrap().starts_with("svp_"));
    let t = s.admin_post("/tokens", json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "repositories": ["widgets"], "permissions": {"statuses": "read"}})).await;
    assert_eq!(t["repository_selection"], "selected");
    assert!(t["token"].as_str().unwrap().starts_with("service_pat_"));
});

both!(clock, |s| {
    let c = s.admin(Method::GET, "/clock", Value::Null).await;
    assert_eq!(c["manual"], true);
    let start = c["epoch"].as_i64().unwrap();
    let c = s.admin_post("/clock", json!({"advance_seconds": 90})).await;
    assert_eq!(c["epoch"], start + 90);
    let c = s.admin_post("/clock", json!({"now": "2030-01-02T03:04:05Z"})).await;
    assert_eq!(c["now"], "2030-01-02T03:04:05Z");
    let c = s.admin_post("/clock", json!({"now": 1_900_000_000})).await;
    assert_eq!(c["epoch"], 1_900_000_000);
    assert_eq!(s.admin(Method::GET, "/clock", Value::Null).await["epoch"], 1_900_000_000);
    // Time shows in created records.
    s.admin_post("/clock", json!({"now": "2030-01-02T03:04:05Z"})).await;
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let t = s.classic("alice", &["repo"]).await;
    let (_, _, b) = parts(s.post(&format!("/repos/alice/hello/statuses/{SHA}"), Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(b["created_at"], "2030-01-02T03:04:05Z");
    // Bad bodies.
    for body in [json!({"advance_seconds": -5}), json!({"advance_seconds": "x"}), json!({"now": "yesterday"}), json!({})] {
        let (st, _, b) = raw(&s, Method::POST, "/clock", Some(ADMIN), body.clone()).await;
        assert_eq!(st, 422, "{body}: {b}");
    }
    assert_eq!(s.admin(Method::GET, "/clock", Value::Null).await["now"], "2030-01-02T03:04:05Z");
});

both!(clock_not_manual_is_conflict, Options { manual_clock: false, ..Options::default() }, |s| {
    let c = s.admin(Method::GET, "/clock", Value::Null).await;
    assert_eq!(c["manual"], false);
    let (st, _, b) = raw(&s, Method::POST, "/clock", Some(ADMIN), json!({"advance_seconds": 5})).await;
    assert_eq!(st, 409, "{b}");
});

both!(reset_empties_everything, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("alice", "hello", false).await;
    s.repo("acme", "secret", true).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let app = s.admin_post("/apps", json!({"owner": "acme", "name": "OA", "kind": "oauth"})).await;
    let t = s.classic("alice", &["repo"]).await;
    let (st, _, _) = parts(s.post(&format!("/repos/alice/hello/statuses/{SHA}"), Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201);
    let (st, _, _) = raw(&s, Method::POST, "/reset", Some(ADMIN), Value::Null).await;
    assert_eq!(st, 204);
    // Old tokens and app credentials are gone; repositories are 404.
    let (st, h, b) = parts(s.get("/repos/alice/hello/commits/main/status", Some(&t)).await).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
    let (st, h, b) = parts(s.get("/repos/alice/hello/commits/main/status", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let r = s
        .req(Method::GET, "/repos/alice/hello/commits/main/status", None)
        .basic_auth(app["client_id"].as_str().unwrap(), Some(app["client_secret"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // The same names can be created again, ids restart, and the admin token still works.
    let u = s.user("alice").await;
    assert_eq!(u["id"], 1, "{u}");
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let (st, _, c) = parts(s.get("/repos/alice/hello/commits/main/status", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(c["total_count"], 0, "statuses survived the reset: {c}");
    s.admin_post("/orgs", json!({"login": "acme"})).await;
    // Resetting an empty database works too.
    s.admin_post("/reset", Value::Null).await;
    s.admin_post("/reset", Value::Null).await;
});

/// A state over the harness's store, as the binary builds for `seed`.
fn seed_state(s: &Server) -> platform_api::Shared {
    let config = platform_api::ApiConfig { public_url: s.base.clone(), ..s.opts.api.clone() };
    platform_api::AppState::new(s.store.clone(), Arc::new(platform_core::Clock::manual()), config)
}

both!(seed_loads_twice, |s| {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../demo/seed.toml")).unwrap();
    let state = seed_state(&s);
    let first = platform_api::seed::load(&state, platform_api::seed::parse(&text).unwrap()).await.expect("first load");
    let second = platform_api::seed::load(&state, platform_api::seed::parse(&text).unwrap()).await.expect("second load");
    assert_eq!(first.tokens.len(), 8);
    assert_eq!(second.tokens.len(), first.tokens.len());
    assert_eq!(first.apps.len(), 2);
    for (a, b) in first.tokens.iter().zip(&second.tokens) {
        assert_eq!(a.0, b.0);
        assert_ne!(a.3, b.3, "a reload issues new tokens");
    }
    for (a, b) in first.apps.iter().zip(&second.apps) {
        assert_eq!(a.2, b.2, "the app keeps its client id");
        assert_ne!(a.3, b.3, "a reload issues a new secret");
    }
    let tok = |r: &platform_api::seed::SeedReport, name: &str| r.tokens.iter().find(|t| t.0 == name).unwrap().3.clone();
    // Every token of both loads works against the server.
    for report in [&first, &second] {
        let alice = tok(report, "alice-classic");
        let (st, _, b) = parts(s.get("/repos/acme/secret-plans/commits/main/status", Some(&alice)).await).await;
        assert_eq!(st, 200, "{b}");
        for name in [
            "alice-classic",
            "bob-status-only",
            "alice-fine-grained",
            "alice-oauth",
            "alice-user-to-server",
            "ci-installation",
            "widgets-workflow",
        ] {
            let t = tok(report, name);
            let (st, _, b) =
                parts(s.post("/repos/acme/widgets/statuses/main", Some(&t), json!({"state": "success", "context": name})).await).await;
            assert_eq!(st, 201, "{name}: {b}");
        }
        let carol = tok(report, "carol-classic");
        let (st, _, _) = parts(s.get("/repos/carol/private-notes/commits/main/status", Some(&carol)).await).await;
        assert_eq!(st, 200);
        let (st, _, _) = parts(s.get("/repos/acme/secret-plans/commits/main/status", Some(&carol)).await).await;
        assert_eq!(st, 404);
    }
    // Seeded refs: branch with a slash and tag.
    let (st, _, b) = parts(s.get("/repos/acme/widgets/commits/feature/login/status", None).await).await;
    assert_eq!(st, 200);
    // Real commits, written once however often the seed loads.
    let (_, _, login) = parts(s.get("/repos/acme/widgets/commits/feature/login", None).await).await;
    let (_, _, main) = parts(s.get("/repos/acme/widgets/commits/main", None).await).await;
    assert_eq!(login["sha"], b["sha"]);
    assert_eq!(login["commit"]["message"], "Add a login form");
    assert_eq!(login["parents"][0]["sha"], main["sha"]);
    assert_eq!(main["parents"], json!([]));
    let (_, _, b) = parts(s.get("/repos/acme/widgets/commits/tags/v1.0/status", None).await).await;
    assert_eq!(b["total_count"], 7);
    // The latest app secret is the valid one.
    let (name, _, cid, secret) = &second.apps[0];
    assert_eq!(name, "Demo OAuth App");
    let oauth = tok(&second, "alice-oauth");
    let r = s
        .req(Method::POST, &format!("/applications/{cid}/token"), None)
        .basic_auth(cid, Some(secret))
        .json(&json!({"access_token": oauth}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let old_secret = &first.apps[0].3;
    let r = s
        .req(Method::POST, &format!("/applications/{cid}/token"), None)
        .basic_auth(cid, Some(old_secret))
        .json(&json!({"access_token": oauth}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // A broken seed fails as a whole.
    assert!(platform_api::seed::parse("[[users]]\nlogn = \"x\"\n").is_err());
    let bad = platform_api::seed::parse("[[users]]\nlogin = \"zed\"\n[[repos]]\nowner = \"nobody\"\nname = \"x\"\n").unwrap();
    assert!(platform_api::seed::load(&state, bad).await.is_err());
    let (st, _, b) = raw(&s, Method::POST, "/users", Some(ADMIN), json!({"login": "zed"})).await;
    assert_eq!(st, 201, "a failed seed must not leave half its work: {b}");
});
