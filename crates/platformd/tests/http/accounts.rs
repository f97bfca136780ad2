//! Accounts: `GET /user`, `/users/{username}`, `/user/orgs`, `/orgs/{org}`, the teams of an
//! organization (secret teams, non-members), and the shapes, 304s, pages and token kinds of each.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

/// alice owns acme (repos: public `site`, private `vault`), bob is a member, carol is outside;
/// acme has teams `Core` (closed, bob) and `Red Team` (secret, alice only); alice also belongs
/// to org `beta`.
async fn world(s: &Server) {
    s.admin_post("/users", json!({"login": "alice", "name": "Alice A", "email": "alice@example.com"})).await;
    for u in ["bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "name": "Acme Inc", "owners": ["alice"], "members": ["bob"]})).await;
    s.admin_post("/orgs", json!({"login": "beta", "members": ["alice"]})).await;
    s.repo("acme", "site", false).await;
    s.repo("acme", "vault", true).await;
    s.repo("alice", "notes", true).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Core", "description": "Core team", "members": ["bob"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Red Team", "privacy": "secret", "members": ["alice"]})).await;
}

fn logins(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|u| u["login"].as_str().or(u["slug"].as_str()).unwrap()).collect()
}

/// A GET answered 200 with an ETag answers 304 to `If-None-Match`.
async fn assert_304(s: &Server, path: &str, token: Option<&str>) {
    let (st, h, _) = parts(s.get(path, token).await).await;
    assert_eq!(st, 200, "{path}");
    let etag = header(&h, "etag").to_string();
    assert!(etag.starts_with('"'), "{path}: {etag}");
    let r = s.req(Method::GET, path, token).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304, "{path}");
}

both!(authenticated_user_by_token_kind, |s| {
    world(&s).await;
    let full = s.classic("alice", &["user"]).await;
    let (st, _, b) = call(&s, Method::GET, "/user", Some(&full), None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("PrivateUser", &b);
    assert_eq!((b["login"].as_str(), b["type"].as_str(), b["name"].as_str()), (Some("alice"), Some("User"), Some("Alice A")));
    assert_eq!(b["url"], format!("{}/users/alice", s.base));
    assert_eq!((b["total_private_repos"].as_i64(), b["public_repos"].as_i64()), (Some(1), Some(0)));
    assert!(is_ts(&b["created_at"]) && b["plan"]["name"].is_string());
    assert_304(&s, "/user", Some(&full)).await;
    // Without a user scope: the public profile only.
    let bare = s.classic("alice", &["repo"]).await;
    let (st, _, b) = call(&s, Method::GET, "/user", Some(&bare), None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("PublicUser", &b);
    assert!(b.get("total_private_repos").is_none() && b.get("plan").is_none(), "{b}");
    // Fine-grained tokens act for their user.
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob"})).await;
    let (st, _, b) = call(&s, Method::GET, "/user", Some(&fg), None).await;
    assert_eq!((st, b["login"].as_str()), (200, Some("bob")));
    // Anonymous: 401; installation tokens have no user: 403.
    let (st, h, b) = call(&s, Method::GET, "/user", None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"members": "read"}})).await;
    let (st, h, b) = call(&s, Method::GET, "/user", Some(&inst), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
    // Both API versions serve it.
    let r = s.req(Method::GET, "/user", Some(&full)).header("x-service-api-version", "2026-03-10").send().await.unwrap();
    assert_eq!(r.status(), 200);
});

both!(user_by_username_for_users_and_orgs, |s| {
    world(&s).await;
    let (st, _, b) = call(&s, Method::GET, "/users/ALICE", None, None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("PublicUser", &b);
    assert_eq!((b["login"].as_str(), b["type"].as_str()), (Some("alice"), Some("User")));
    // Private repositories are not counted in public, nor shown.
    assert_eq!(b["public_repos"], 0);
    assert!(b.get("total_private_repos").is_none());
    let (st, _, b) = call(&s, Method::GET, "/users/acme", None, None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("PublicUser", &b);
    assert_eq!((b["type"].as_str(), b["public_repos"].as_i64()), (Some("Organization"), Some(1)));
    let (st, h, b) = call(&s, Method::GET, "/users/nobody", None, None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_304(&s, "/users/alice", None).await;
    // The profile's own URL answers.
    let (_, _, b) = call(&s, Method::GET, "/users/alice", None, None).await;
    assert_eq!(call(&s, Method::GET, b["url"].as_str().unwrap(), None, None).await.0, 200);
});

both!(orgs_of_the_authenticated_user, |s| {
    world(&s).await;
    let t = s.classic("alice", &["read:org"]).await;
    let (st, h, b) = call(&s, Method::GET, "/user/orgs", Some(&t), None).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(logins(&b), ["acme", "beta"]);
    for o in b.as_array().unwrap() {
        assert_conforms_to_snapshot("OrganizationSimple", o);
    }
    assert_eq!(header(&h, "link"), "");
    // Pages, with absolute Links.
    let (_, h, b) = call(&s, Method::GET, "/user/orgs?per_page=1", Some(&t), None).await;
    assert_eq!(logins(&b), ["acme"]);
    assert!(header(&h, "link").contains(&format!("<{}/user/orgs?per_page=1&page=2>; rel=\"next\"", s.base)), "{h:?}");
    let (_, _, b) = call(&s, Method::GET, "/user/orgs?per_page=1&page=2", Some(&t), None).await;
    assert_eq!(logins(&b), ["beta"]);
    assert_304(&s, "/user/orgs", Some(&t)).await;
    // Each organization's `url` answers.
    let (_, _, b) = call(&s, Method::GET, "/user/orgs", Some(&t), None).await;
    assert_eq!(call(&s, Method::GET, b[0]["url"].as_str().unwrap(), Some(&t), None).await.0, 200);
    // carol belongs to none.
    let c = s.classic("carol", &["user"]).await;
    assert_eq!(call(&s, Method::GET, "/user/orgs", Some(&c), None).await.2, json!([]));
    // A classic token needs `read:org` or `user`; anonymous callers 401.
    let repo_only = s.classic("alice", &["repo"]).await;
    let (st, h, b) = call(&s, Method::GET, "/user/orgs", Some(&repo_only), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let (st, h, b) = call(&s, Method::GET, "/user/orgs", None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // A fine-grained token limited to acme lists acme only.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme"})).await;
    assert_eq!(logins(&call(&s, Method::GET, "/user/orgs", Some(&fg), None).await.2), ["acme"]);
});

both!(organization_profile_and_owner_fields, |s| {
    world(&s).await;
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme", None, None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("OrganizationFull", &b);
    assert_eq!((b["login"].as_str(), b["type"].as_str(), b["name"].as_str()), (Some("acme"), Some("Organization"), Some("Acme Inc")));
    assert_eq!(b["public_repos"], 1);
    assert!(b.get("total_private_repos").is_none() && b.get("plan").is_none(), "only owners see them: {b}");
    assert_eq!(b["url"], format!("{}/orgs/acme", s.base));
    // A member does not see the owner fields; the owner with admin:org does.
    let bob = s.classic("bob", &["admin:org"]).await;
    assert!(call(&s, Method::GET, "/orgs/acme", Some(&bob), None).await.2.get("plan").is_none());
    let alice = s.classic("alice", &["admin:org"]).await;
    let (_, _, b) = call(&s, Method::GET, "/orgs/acme", Some(&alice), None).await;
    assert_conforms_to_snapshot("OrganizationFull", &b);
    assert_eq!((b["total_private_repos"].as_i64(), b["plan"]["filled_seats"].as_i64()), (Some(1), Some(2)));
    let alice_repo = s.classic("alice", &["repo"]).await;
    assert!(call(&s, Method::GET, "/orgs/acme", Some(&alice_repo), None).await.2.get("plan").is_none());
    // Users are not organizations; unknown logins 404.
    let (st, h, b) = call(&s, Method::GET, "/orgs/alice", None, None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(call(&s, Method::GET, "/orgs/nope", None, None).await.0, 404);
    assert_304(&s, "/orgs/acme", Some(&alice)).await;
});

both!(teams_visible_to_members_only, |s| {
    world(&s).await;
    let alice = s.classic("alice", &["read:org"]).await;
    let bob = s.classic("bob", &["read:org"]).await;
    let carol = s.classic("carol", &["read:org"]).await;
    // The owner sees the secret team; a member sees only the closed one.
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/teams", Some(&alice), None).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(logins(&b), ["core", "red-team"]);
    for t in b.as_array().unwrap() {
        assert_conforms_to_snapshot("Team", t);
    }
    assert_eq!(b[1]["privacy"], "secret");
    let (_, _, b) = call(&s, Method::GET, "/orgs/acme/teams", Some(&bob), None).await;
    assert_eq!(logins(&b), ["core"]);
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams/red-team", Some(&bob), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Someone outside the organization finds nothing.
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams", Some(&carol), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(call(&s, Method::GET, "/orgs/acme/teams/core", Some(&carol), None).await.0, 404);
    // One team, full, by slug (any case).
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/teams/Core", Some(&bob), None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("TeamFull", &b);
    assert_eq!((b["slug"].as_str(), b["members_count"].as_i64(), b["description"].as_str()), (Some("core"), Some(1), Some("Core team")));
    assert_eq!(b["organization"]["login"], "acme");
    assert!(b["parent"].is_null());
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/teams/red-team", Some(&alice), None).await;
    assert_eq!((st, b["privacy"].as_str()), (200, Some("secret")));
    assert_eq!(call(&s, Method::GET, "/orgs/acme/teams/nope", Some(&alice), None).await.0, 404);
    // A team's `url` (by organization and team id) answers the same, for the same callers.
    let listed = call(&s, Method::GET, "/orgs/acme/teams", Some(&alice), None).await.2;
    let (core_url, secret_url) = (listed[0]["url"].as_str().unwrap().to_string(), listed[1]["url"].as_str().unwrap().to_string());
    let (st, _, b) = call(&s, Method::GET, &core_url, Some(&bob), None).await;
    assert_eq!((st, b["slug"].as_str()), (200, Some("core")), "{b}");
    assert_conforms_to_snapshot("TeamFull", &b);
    assert_eq!(call(&s, Method::GET, &secret_url, Some(&bob), None).await.0, 404);
    assert_eq!(call(&s, Method::GET, &secret_url, Some(&alice), None).await.0, 200);
    assert_eq!(call(&s, Method::GET, &core_url, Some(&carol), None).await.0, 404);
    let org_id = b["organization"]["id"].as_i64().unwrap();
    assert_eq!(call(&s, Method::GET, &format!("/organizations/{org_id}/team/x"), Some(&alice), None).await.0, 404);
    // Pages and 304s.
    let (_, h, b) = call(&s, Method::GET, "/orgs/acme/teams?per_page=1", Some(&alice), None).await;
    assert_eq!(logins(&b), ["core"]);
    assert!(header(&h, "link").contains("rel=\"next\""));
    assert_eq!(logins(&call(&s, Method::GET, "/orgs/acme/teams?per_page=1&page=2", Some(&alice), None).await.2), ["red-team"]);
    assert_304(&s, "/orgs/acme/teams", Some(&bob)).await;
    assert_304(&s, "/orgs/acme/teams/core", Some(&bob)).await;
});

both!(teams_scopes_and_token_kinds, |s| {
    world(&s).await;
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams", None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // A classic token without read:org: 403, naming what it accepts.
    let repo_only = s.classic("bob", &["repo"]).await;
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams", Some(&repo_only), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "read:org");
    // Fine-grained tokens need Members read.
    let none = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme"})).await;
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams", Some(&none), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let members =
        s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"members": "read"}})).await;
    assert_eq!(logins(&call(&s, Method::GET, "/orgs/acme/teams", Some(&members), None).await.2), ["core"]);
    // The organization's installation with Members read sees every team; other organizations' none.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "beta"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"members": "read"}})).await;
    assert_eq!(logins(&call(&s, Method::GET, "/orgs/acme/teams", Some(&inst), None).await.2), ["core", "red-team"]);
    let other = s.token(json!({"kind": "installation", "app": "CI", "org": "beta", "permissions": {"members": "read"}})).await;
    assert_eq!(call(&s, Method::GET, "/orgs/acme/teams", Some(&other), None).await.0, 404);
    let no_perm = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"contents": "read"}})).await;
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/teams/core", Some(&no_perm), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
});

both!(control_plane_team_privacy, |s| {
    world(&s).await;
    let r = s
        .client
        .post(format!("http://{}/_admin/orgs/acme/teams", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"name": "x", "privacy": "open"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
});
