//! Enterprise team memberships: every operation, slug or id in the path, bulk changes that are
//! all-or-nothing, owners and members, scopes and permissions, and the list-teams-for-user rule.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

/// dave owns enterprise acme-corp, alice and bob are members, carol is outside; team
/// `Platform` (`ent:platform`) has alice. Returns dave's `admin:enterprise` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/enterprises", json!({"slug": "acme-corp", "name": "Acme Corp", "owners": ["dave"], "members": ["alice", "bob"]})).await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "enterprise": "acme-corp"})).await;
    s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Platform", "description": "The platform team", "members": ["alice"]}))
        .await;
    s.classic("dave", &["admin:enterprise"]).await
}

const TEAM: &str = "/enterprises/acme-corp/teams/ent:platform/memberships";

fn logins(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|u| u["login"].as_str().unwrap()).collect()
}

both!(control_plane_team_shape, |s| {
    world(&s).await;
    let t = s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Release Crew!"})).await;
    assert_conforms_to_snapshot("EnterpriseTeam", &t);
    assert_eq!(t["slug"], "ent:release-crew");
    assert_eq!(t["name"], "Release Crew!");
    assert!(t["id"].as_i64().unwrap() > 0);
    assert!(t["url"].as_str().unwrap().ends_with("/enterprises/acme-corp/teams/ent:release-crew"));
    assert!(t["members_url"].as_str().unwrap().ends_with("/memberships{/member}"));
    assert!(t["group_id"].is_null());
    assert!(is_ts(&t["created_at"]) && is_ts(&t["updated_at"]));
    // A taken name, an unknown enterprise and a member outside the enterprise are refused.
    let r = s
        .client
        .post(format!("http://{}/_admin/enterprises/acme-corp/teams", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"name": "release crew"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let r = s
        .client
        .post(format!("http://{}/_admin/enterprises/nope/teams", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let r = s
        .client
        .post(format!("http://{}/_admin/enterprises/acme-corp/teams", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"name": "y", "members": ["carol"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
});

both!(list_members_by_slug_or_id_with_pagination, |s| {
    let dave = world(&s).await;
    let (st, _, team) = call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&dave), None).await;
    assert_eq!(st, 201, "{team}");
    let (st, _, b) = call(&s, Method::GET, TEAM, Some(&dave), None).await;
    assert_eq!(st, 200);
    assert_eq!(logins(&b), ["alice", "bob"]);
    // By id, and by slug without its prefix or in another case.
    let t = s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Other"})).await;
    let id = t["id"].as_i64().unwrap();
    let (st, _, b) = call(&s, Method::GET, &format!("/enterprises/acme-corp/teams/{id}/memberships"), Some(&dave), None).await;
    assert_eq!((st, b), (200, json!([])));
    let (st, _, b) = call(&s, Method::GET, "/enterprises/ACME-CORP/teams/ENT:Platform/memberships", Some(&dave), None).await;
    assert_eq!((st, logins(&b).len()), (200, 2));
    let (st, _, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams/platform/memberships", Some(&dave), None).await;
    assert_eq!((st, logins(&b).len()), (200, 2));
    // Pages with absolute Links.
    let (st, h, b) = call(&s, Method::GET, &format!("{TEAM}?per_page=1"), Some(&dave), None).await;
    assert_eq!((st, logins(&b)), (200, vec!["alice"]));
    let link = header(&h, "link");
    assert!(link.contains(&format!("<{}{TEAM}?per_page=1&page=2>; rel=\"next\"", s.base)), "{link}");
    let (_, _, b) = call(&s, Method::GET, &format!("{TEAM}?per_page=1&page=2"), Some(&dave), None).await;
    assert_eq!(logins(&b), ["bob"]);
    // Unknown team or enterprise: 404.
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams/ent:nope/memberships", Some(&dave), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = call(&s, Method::GET, "/enterprises/nope/teams/ent:platform/memberships", Some(&dave), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

both!(get_add_remove_one_member, |s| {
    let dave = world(&s).await;
    let (st, _, u) = call(&s, Method::GET, &format!("{TEAM}/alice"), Some(&dave), None).await;
    assert_eq!((st, u["login"].as_str()), (200, Some("alice")));
    assert_eq!(u["type"], "User");
    let (st, h, b) = call(&s, Method::GET, &format!("{TEAM}/bob"), Some(&dave), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = call(&s, Method::GET, &format!("{TEAM}/nobody"), Some(&dave), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Add: 201 with the user, then visible; adding again is still 201.
    let (st, _, u) = call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&dave), None).await;
    assert_eq!((st, u["login"].as_str()), (201, Some("bob")));
    assert_eq!(call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&dave), None).await.0, 201);
    assert_eq!(call(&s, Method::GET, &format!("{TEAM}/bob"), Some(&dave), None).await.0, 200);
    // Users outside the enterprise cannot be added.
    let (st, _, b) = call(&s, Method::PUT, &format!("{TEAM}/carol"), Some(&dave), None).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["errors"][0]["field"], "usernames");
    // Remove: 204, then gone.
    let (st, _, b) = call(&s, Method::DELETE, &format!("{TEAM}/bob"), Some(&dave), None).await;
    assert_eq!((st, b), (204, Value::Null));
    assert_eq!(call(&s, Method::GET, &format!("{TEAM}/bob"), Some(&dave), None).await.0, 404);
});

both!(bulk_add_and_remove_are_all_or_nothing, |s| {
    let dave = world(&s).await;
    let (st, _, b) = call(&s, Method::POST, &format!("{TEAM}/add"), Some(&dave), Some(json!({"usernames": ["bob", "dave", "bob"]}))).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(logins(&b), ["bob", "dave"]);
    let (_, _, b) = call(&s, Method::GET, TEAM, Some(&dave), None).await;
    assert_eq!(logins(&b), ["alice", "bob", "dave"]);
    // An unknown login or a user outside the enterprise: 422 naming them, nothing changed.
    let (st, _, b) = call(&s, Method::POST, &format!("{TEAM}/remove"), Some(&dave), Some(json!({"usernames": ["bob", "ghost"]}))).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["errors"][0]["code"], "missing");
    assert!(b["errors"][0]["message"].as_str().unwrap().contains("ghost"));
    let (st, _, b) = call(&s, Method::POST, &format!("{TEAM}/add"), Some(&dave), Some(json!({"usernames": ["carol"]}))).await;
    assert_eq!((st, b["errors"][0]["code"].as_str()), (422, Some("invalid")));
    let (_, _, b) = call(&s, Method::GET, TEAM, Some(&dave), None).await;
    assert_eq!(logins(&b), ["alice", "bob", "dave"]);
    // Remove returns the users that were members.
    let (st, _, b) = call(&s, Method::POST, &format!("{TEAM}/remove"), Some(&dave), Some(json!({"usernames": ["bob", "dave"]}))).await;
    assert_eq!((st, logins(&b)), (200, vec!["bob", "dave"]));
    let (_, _, b) = call(&s, Method::POST, &format!("{TEAM}/remove"), Some(&dave), Some(json!({"usernames": ["bob"]}))).await;
    assert_eq!(b, json!([]));
    // Body validation: `usernames` is required and an array of strings.
    let (st, _, b) = call(&s, Method::POST, &format!("{TEAM}/add"), Some(&dave), Some(json!({}))).await;
    assert_eq!(st, 422);
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    let (st, _, _) = call(&s, Method::POST, &format!("{TEAM}/add"), Some(&dave), Some(json!({"usernames": "bob"}))).await;
    assert_eq!(st, 422);
});

both!(owners_change_members_read, |s| {
    world(&s).await;
    let alice_admin = s.classic("alice", &["admin:enterprise"]).await;
    // Members read.
    let (st, h, _) = call(&s, Method::GET, TEAM, Some(&alice_admin), None).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "read:enterprise");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "enterprise_teams=read");
    // Only owners change memberships.
    for (m, p, body) in [
        (Method::PUT, format!("{TEAM}/bob"), None),
        (Method::DELETE, format!("{TEAM}/alice"), None),
        (Method::POST, format!("{TEAM}/add"), Some(json!({"usernames": ["bob"]}))),
        (Method::POST, format!("{TEAM}/remove"), Some(json!({"usernames": ["alice"]}))),
    ] {
        let (st, h, b) = call(&s, m, &p, Some(&alice_admin), body).await;
        assert_error(st, &h, &b, 403, "Must be an enterprise owner to change enterprise team memberships.");
    }
    // Outsiders see nothing.
    let carol = s.classic("carol", &["admin:enterprise"]).await;
    let (st, h, b) = call(&s, Method::GET, TEAM, Some(&carol), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&carol), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // No credentials.
    let (st, h, b) = call(&s, Method::GET, TEAM, None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
});

both!(scopes_and_permissions, |s| {
    world(&s).await;
    // Classic: read:enterprise reads, admin:enterprise (which covers it) changes.
    let read = s.classic("dave", &["read:enterprise"]).await;
    assert_eq!(call(&s, Method::GET, TEAM, Some(&read), None).await.0, 200);
    let (st, h, b) = call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&read), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "admin:enterprise");
    let none = s.classic("dave", &["repo"]).await;
    let (st, h, b) = call(&s, Method::GET, TEAM, Some(&none), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    // Fine-grained: the Enterprise teams permission.
    let fg_read = s.token(json!({"kind": "fine_grained", "login": "dave", "permissions": {"enterprise_teams": "read"}})).await;
    assert_eq!(call(&s, Method::GET, &format!("{TEAM}/alice"), Some(&fg_read), None).await.0, 200);
    let (st, h, b) = call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&fg_read), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let fg_write = s.token(json!({"kind": "fine_grained", "login": "dave", "permissions": {"enterprise_teams": "write"}})).await;
    assert_eq!(call(&s, Method::PUT, &format!("{TEAM}/bob"), Some(&fg_write), None).await.0, 201);
    let fg_other = s.token(json!({"kind": "fine_grained", "login": "dave", "permissions": {"statuses": "write"}})).await;
    assert_eq!(call(&s, Method::GET, TEAM, Some(&fg_other), None).await.0, 403);
    // App tokens are not accepted.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"enterprise_teams": "write"}})).await;
    let (st, h, b) = call(&s, Method::GET, TEAM, Some(&inst), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
    let u2s = s.token(json!({"kind": "user_to_server", "login": "dave", "app": "CI", "permissions": {"enterprise_teams": "write"}})).await;
    assert_eq!(call(&s, Method::GET, TEAM, Some(&u2s), None).await.0, 403);
});

both!(list_teams_for_user, |s| {
    let dave = world(&s).await;
    s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Api", "members": ["alice"]})).await;
    s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Zeta", "members": ["bob"]})).await;
    let path = "/enterprises/acme-corp/members/alice/teams";
    // Enterprise owners.
    let (st, _, b) = call(&s, Method::GET, path, Some(&dave), None).await;
    assert_eq!(st, 200, "{b}");
    let slugs: Vec<&str> = b.as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["ent:api", "ent:platform"]);
    assert_eq!(b[1]["description"], "The platform team");
    let (_, h, b) = call(&s, Method::GET, &format!("{path}?per_page=1"), Some(&dave), None).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert!(header(&h, "link").contains("rel=\"last\""));
    // A member with a classic token may not; with `enterprise_teams: read` may.
    let alice = s.classic("alice", &["admin:enterprise"]).await;
    let (st, h, b) = call(&s, Method::GET, path, Some(&alice), None).await;
    assert_eq!((st, b["status"].as_str()), (403, Some("403")), "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob", "permissions": {"enterprise_teams": "read"}})).await;
    let (st, _, b) = call(&s, Method::GET, path, Some(&fg), None).await;
    assert_eq!((st, b.as_array().map(Vec::len)), (200, Some(2)));
    // Users outside the enterprise (or unknown): 404.
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/members/carol/teams", Some(&dave), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(call(&s, Method::GET, "/enterprises/acme-corp/members/ghost/teams", Some(&dave), None).await.0, 404);
});

both!(list_and_get_enterprise_teams, |s| {
    let dave = world(&s).await;
    s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Infra"})).await;
    // Members of the enterprise read its teams, by slug order, with pages and 304s.
    let alice = s.classic("alice", &["read:enterprise"]).await;
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams", Some(&alice), None).await;
    assert_eq!(st, 200, "{b}");
    let slugs: Vec<&str> = b.as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["ent:infra", "ent:platform"]);
    for t in b.as_array().unwrap() {
        assert_conforms_to_snapshot("EnterpriseTeam", t);
    }
    assert_eq!(header(&h, "link"), "");
    let (_, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams?per_page=1", Some(&dave), None).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert!(header(&h, "link").contains(&format!("<{}/enterprises/acme-corp/teams?per_page=1&page=2>; rel=\"next\"", s.base)));
    let etag = header(&call(&s, Method::GET, "/enterprises/acme-corp/teams", Some(&alice), None).await.1, "etag").to_string();
    let r = s.req(Method::GET, "/enterprises/acme-corp/teams", Some(&alice)).header("if-none-match", etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    // One team by slug (with or without `ent:`) or by id; its `url` answers.
    let (st, _, t) = call(&s, Method::GET, "/enterprises/acme-corp/teams/ent:platform", Some(&alice), None).await;
    assert_eq!(st, 200, "{t}");
    assert_conforms_to_snapshot("EnterpriseTeam", &t);
    assert_eq!(t["description"], "The platform team");
    let id = t["id"].as_i64().unwrap();
    for key in ["platform".to_string(), id.to_string()] {
        let (st, _, b) = call(&s, Method::GET, &format!("/enterprises/acme-corp/teams/{key}"), Some(&alice), None).await;
        assert_eq!((st, b["id"].as_i64()), (200, Some(id)));
    }
    assert_eq!(call(&s, Method::GET, t["url"].as_str().unwrap(), Some(&alice), None).await.0, 200);
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams/ent:nope", Some(&alice), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Outside the enterprise: 404; without the scope: 403; anonymous: 401.
    let carol = s.classic("carol", &["read:enterprise"]).await;
    assert_eq!(call(&s, Method::GET, "/enterprises/acme-corp/teams", Some(&carol), None).await.0, 404);
    let repo_only = s.classic("alice", &["repo"]).await;
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams", Some(&repo_only), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let (st, h, b) = call(&s, Method::GET, "/enterprises/acme-corp/teams/ent:platform", None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
});
