//! OAuth application authorizations (document 2): check, reset, delete token, delete grant,
//! all with application basic credentials.
use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use reqwest::Method;
use serde_json::{json, Value};

pub struct App {
    pub client_id: String,
    pub secret: String,
}

pub async fn app(s: &Server, name: &str, owner: &str, kind: &str) -> App {
    let b = s.admin_post("/apps", json!({"name": name, "owner": owner, "kind": kind})).await;
    assert_eq!(b["kind"], kind);
    App { client_id: b["client_id"].as_str().unwrap().into(), secret: b["client_secret"].as_str().unwrap().into() }
}

/// A call of one of the four operations with basic credentials `(user, password)`.
async fn call(
    s: &Server,
    method: Method,
    path: &str,
    creds: Option<(&str, &str)>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.req(method, path, None).json(&body);
    if let Some((u, p)) = creds {
        r = r.basic_auth(u, Some(p));
    }
    parts(r.send().await.unwrap()).await
}

async fn check(s: &Server, a: &App, token: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    call(s, Method::POST, &format!("/applications/{}/token", a.client_id), Some((&a.client_id, &a.secret)), json!({"access_token": token}))
        .await
}

/// GET of the combined status of `alice/hello`, the status code.
async fn works(s: &Server, token: &str) -> u16 {
    s.get("/repos/alice/hello/commits/main/status", Some(token)).await.status().as_u16()
}

async fn world(s: &Server) -> (App, String) {
    s.user("alice").await;
    s.repo("alice", "hello", true).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let a = app(s, "My OAuth App", "alice", "oauth").await;
    let t = s
        .token(json!({"kind": "oauth", "login": "alice", "client_id": a.client_id, "scopes": ["repo", "user"], "note": "optional note"}))
        .await;
    (a, t)
}

fn assert_authorization(s: &Server, b: &Value, a: &App, token: &str, scopes: &[&str], login: &str) {
    assert_conforms_to_snapshot("Authorization", b);
    let id = b["id"].as_i64().unwrap();
    assert_eq!(b["url"], format!("{}/authorizations/{id}", s.base));
    assert_eq!(b["scopes"], json!(scopes));
    assert_eq!(b["token"], token);
    assert_eq!(b["token_last_eight"], &token[token.len() - 8..]);
    let hashed = b["hashed_token"].as_str().unwrap();
    assert_eq!(hashed.len(), 64, "{b}");
    assert!(hashed.bytes().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(b["app"]["client_id"], a.client_id.as_str());
    assert!(b["app"]["name"].is_string() && b["app"]["url"].is_string(), "{b}");
    assert!(b["note"].is_string() || b["note"].is_null());
    assert!(b["note_url"].is_string() || b["note_url"].is_null());
    assert!(is_ts(&b["created_at"]) && is_ts(&b["updated_at"]), "{b}");
    assert!(b["fingerprint"].is_string() || b["fingerprint"].is_null());
    assert!(b["expires_at"].is_null() || is_ts(&b["expires_at"]));
    assert_simple_user(s, &b["user"], login, "User");
}

both!(check_token, |s| {
    let (a, t) = world(&s).await;
    let (st, h, b) = check(&s, &a, &t).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_authorization(&s, &b, &a, &t, &["repo", "user"], "alice");
    assert_eq!(b["app"]["name"], "My OAuth App");
    assert_eq!(b["note"], "optional note");
    assert_eq!(b["expires_at"], Value::Null);
    // Checking changes nothing and may be repeated.
    let (st, _, b2) = check(&s, &a, &t).await;
    assert_eq!(st, 200);
    assert_eq!(b2, b);
    assert_eq!(works(&s, &t).await, 200);
    // A token with an expiry reports it.
    let now = s.admin(Method::GET, "/clock", Value::Null).await["epoch"].as_i64().unwrap();
    let exp = platform_core::time::format_ts(now + 3600);
    let t2 = s.token(json!({"kind": "oauth", "login": "alice", "client_id": a.client_id, "scopes": [], "expires_at": exp})).await;
    let (st, _, b) = check(&s, &a, &t2).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["expires_at"], exp.as_str());
    assert_eq!(b["scopes"], json!([]));
    assert_ne!(b["id"], b2["id"]);
    // Once expired it is no longer a valid token: 404.
    s.advance(3601).await;
    let (st, h, b) = check(&s, &a, &t2).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

both!(check_invalid_tokens_is_404, |s| {
    let (a, t) = world(&s).await;
    let other = app(&s, "Other App", "alice", "oauth").await;
    let other_t = s.token(json!({"kind": "oauth", "login": "alice", "client_id": other.client_id, "scopes": ["repo"]})).await;
    let classic = s.classic("alice", &["repo"]).await;
    let garbage = "svo_000000000000000000000000000000000000".to_string();
    let truncated = t[..t.len() - 1].to_string();
    for bad in [&garbage, &truncated, &other_t, &classic, &String::new(), &"x".to_string()] {
        let (st, h, b) = check(&s, &a, bad).await;
        assert_error(st, &h, &b, 404, "Not Found");
        assert_eq!(b["documentation_url"], "https://docs.service.example/rest/apps/oauth-applications#check-a-token");
    }
    // Reset and delete of such tokens are 404 too, and change nothing.
    let creds = Some((a.client_id.as_str(), a.secret.as_str()));
    let path = format!("/applications/{}/token", a.client_id);
    let (st, _, _) = call(&s, Method::PATCH, &path, creds, json!({"access_token": other_t})).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::DELETE, &path, creds, json!({"access_token": other_t})).await;
    assert_eq!(st, 404);
    let (st, _, _) =
        call(&s, Method::DELETE, &format!("/applications/{}/grant", a.client_id), creds, json!({"access_token": other_t})).await;
    assert_eq!(st, 404);
    assert_eq!(works(&s, &other_t).await, 200);
    assert_eq!(works(&s, &t).await, 200);
});

both!(reset_token, |s| {
    let (a, old) = world(&s).await;
    let (_, _, before) = check(&s, &a, &old).await;
    s.advance(10).await;
    let (st, h, b) = call(
        &s,
        Method::PATCH,
        &format!("/applications/{}/token", a.client_id),
        Some((&a.client_id, &a.secret)),
        json!({"access_token": old}),
    )
    .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    let new = b["token"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    assert!(new.starts_with("svo_"), "{new}");
    assert_authorization(&s, &b, &a, &new, &["repo", "user"], "alice");
    assert_eq!(b["id"], before["id"]);
    assert_eq!(b["created_at"], before["created_at"]);
    assert!(b["updated_at"].as_str() > before["updated_at"].as_str(), "{b}");
    assert_ne!(b["hashed_token"], before["hashed_token"]);
    // At once: the new token works, the old one is dead.
    assert_eq!(works(&s, &new).await, 200);
    let (st, h, body) = parts(s.get("/repos/alice/hello/commits/main/status", Some(&old)).await).await;
    assert_error(st, &h, &body, 401, "Bad credentials");
    let (st, _, _) = check(&s, &a, &old).await;
    assert_eq!(st, 404);
    let (st, _, c) = check(&s, &a, &new).await;
    assert_eq!(st, 200);
    assert_eq!(c["token"], new.as_str());
});

both!(delete_token, |s| {
    let (a, t) = world(&s).await;
    let keep = s.token(json!({"kind": "oauth", "login": "alice", "client_id": a.client_id, "scopes": ["repo"]})).await;
    let r = s
        .req(Method::DELETE, &format!("/applications/{}/token", a.client_id), None)
        .basic_auth(&a.client_id, Some(&a.secret))
        .json(&json!({"access_token": t}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(r.text().await.unwrap(), "");
    let (st, h, b) = parts(s.get("/repos/alice/hello/commits/main/status", Some(&t)).await).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
    let (st, _, _) = check(&s, &a, &t).await;
    assert_eq!(st, 404);
    // Other tokens of the same app and user are untouched.
    assert_eq!(works(&s, &keep).await, 200);
    // Deleting again: the token is no longer valid.
    let (st, _, _) = call(
        &s,
        Method::DELETE,
        &format!("/applications/{}/token", a.client_id),
        Some((&a.client_id, &a.secret)),
        json!({"access_token": t}),
    )
    .await;
    assert_eq!(st, 404);
});

both!(delete_grant_revokes_every_token_of_the_app_for_the_user, |s| {
    let (a, t1) = world(&s).await;
    s.user("bob").await;
    let t2 = s.token(json!({"kind": "oauth", "login": "alice", "client_id": a.client_id, "scopes": ["repo"]})).await;
    let bob_same_app = s.token(json!({"kind": "oauth", "login": "bob", "client_id": a.client_id, "scopes": ["repo"]})).await;
    let other = app(&s, "Other App", "alice", "oauth").await;
    let alice_other_app = s.token(json!({"kind": "oauth", "login": "alice", "client_id": other.client_id, "scopes": ["repo"]})).await;
    let gh = app(&s, "My App", "alice", "app").await;
    let alice_u2s =
        s.token(json!({"kind": "user_to_server", "login": "alice", "client_id": gh.client_id, "permissions": {"statuses": "read"}})).await;
    let alice_classic = s.classic("alice", &["repo"]).await;
    let r = s
        .req(Method::DELETE, &format!("/applications/{}/grant", a.client_id), None)
        .basic_auth(&a.client_id, Some(&a.secret))
        .json(&json!({"access_token": t1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(r.text().await.unwrap(), "");
    for gone in [&t1, &t2] {
        let (st, h, b) = parts(s.get("/repos/alice/hello/commits/main/status", Some(gone)).await).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
        let (st, _, _) = check(&s, &a, gone).await;
        assert_eq!(st, 404);
    }
    for kept in [&alice_other_app, &alice_u2s, &alice_classic] {
        assert_eq!(works(&s, kept).await, 200, "{kept}");
    }
    // bob's token of the same app is not alice's grant.
    let (st, _, b) = check(&s, &a, &bob_same_app).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["user"]["login"], "bob");
    let (st, _, b) = check(&s, &other, &alice_other_app).await;
    assert_eq!(st, 200, "{b}");
});

both!(app_kind_apps_and_user_to_server_tokens, |s| {
    s.user("alice").await;
    s.repo("alice", "hello", true).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let a = app(&s, "CI App", "alice", "app").await;
    assert!(a.client_id.starts_with("Iv"), "{}", a.client_id);
    let t =
        s.token(json!({"kind": "user_to_server", "login": "alice", "client_id": a.client_id, "permissions": {"statuses": "write"}})).await;
    assert!(t.starts_with("svu_"));
    let (st, _, b) = check(&s, &a, &t).await;
    assert_eq!(st, 200, "{b}");
    assert_authorization(&s, &b, &a, &t, &[], "alice");
    assert_eq!(b["app"]["name"], "CI App");
    let path = format!("/applications/{}/token", a.client_id);
    let (st, _, b) = call(&s, Method::PATCH, &path, Some((&a.client_id, &a.secret)), json!({"access_token": t})).await;
    assert_eq!(st, 200, "{b}");
    let new = b["token"].as_str().unwrap().to_string();
    assert!(new.starts_with("svu_"));
    assert_eq!(works(&s, &new).await, 200);
    assert_eq!(works(&s, &t).await, 401);
    let (st, _, _) = call(&s, Method::DELETE, &path, Some((&a.client_id, &a.secret)), json!({"access_token": new})).await;
    assert_eq!(st, 204);
    assert_eq!(works(&s, &new).await, 401);
});

both!(credentials_and_body_errors, |s| {
    let (a, t) = world(&s).await;
    let other = app(&s, "Other App", "alice", "oauth").await;
    let token_path = format!("/applications/{}/token", a.client_id);
    let grant_path = format!("/applications/{}/grant", a.client_id);
    let ops = [(Method::POST, &token_path), (Method::PATCH, &token_path), (Method::DELETE, &token_path), (Method::DELETE, &grant_path)];
    let good = Some((a.client_id.as_str(), a.secret.as_str()));
    for (m, p) in &ops {
        // Missing access_token.
        let (st, h, b) = call(&s, m.clone(), p, good, json!({})).await;
        assert_eq!(st, 422, "{m} {p}: {b}");
        assert_eq!(b["message"], "Invalid request.\n\n\"access_token\" wasn't supplied.");
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
        let (st, _, b) = call(&s, m.clone(), p, good, json!({"access_token": 5})).await;
        assert_eq!(st, 422, "{b}");
        // Another application's valid credentials on this path.
        let (st, h, b) = call(&s, m.clone(), p, Some((&other.client_id, &other.secret)), json!({"access_token": t})).await;
        assert_error(st, &h, &b, 404, "Not Found");
        // Wrong secret, unknown client id.
        let (st, h, b) = call(&s, m.clone(), p, Some((&a.client_id, &other.secret)), json!({"access_token": t})).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
        let (st, h, b) = call(&s, m.clone(), p, Some(("Ov23linothing", &a.secret)), json!({"access_token": t})).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
        // No credentials.
        let (st, h, b) = call(&s, m.clone(), p, None, json!({"access_token": t})).await;
        assert_error(st, &h, &b, 401, "Requires authentication");
        // A bearer token instead of application credentials is not enough.
        let r = s.req(m.clone(), p, Some(&t)).json(&json!({"access_token": t})).send().await.unwrap();
        let st = r.status().as_u16();
        assert!(st == 404 || st == 401, "{m} {p} with a bearer token: {st}");
    }
    // Malformed basic credentials.
    let r =
        s.req(Method::POST, &token_path, None).header("authorization", "Basic !!!").json(&json!({"access_token": t})).send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 401, "Bad credentials");
    // Nothing above revoked the token.
    let (st, _, _) = check(&s, &a, &t).await;
    assert_eq!(st, 200);
    assert_eq!(works(&s, &t).await, 200);
    // Path client id unknown entirely, with good credentials: 404.
    let (st, h, b) = call(&s, Method::POST, "/applications/Ov23linothing/token", good, json!({"access_token": t})).await;
    assert_error(st, &h, &b, 404, "Not Found");
});
