//! Organization-level webhooks (`team`, `membership`, `organization`) from the control plane's
//! member and team changes, in the order they are queued, and what those changes do to access.
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;

/// A control-plane call that may fail: (status, body).
async fn admin(s: &Server, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut r = s.client.request(method, format!("http://{}/_admin{path}", s.addr)).bearer_auth(ADMIN);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let (st, _, b) = parts(r.send().await.unwrap()).await;
    (st, b)
}

/// Organization `acme` (owner alice, members bob and erin), users carol and dave outside it,
/// private repository acme/secret; a hook of acme subscribed to the three events, its ping
/// delivered. Returns alice's token and the hook id.
async fn world(s: &Server) -> (String, i64) {
    for u in ["alice", "bob", "erin", "carol", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob", "erin"]})).await;
    s.repo("acme", "secret", true).await;
    let t = s.classic("alice", &["repo", "read:org", "admin:org_hook"]).await;
    let hook = json!({"name": "web", "config": {"url": "http://127.0.0.1:9/x"}, "events": ["team", "membership", "organization"]});
    let (st, _, b) = call(s, Method::POST, "/orgs/acme/hooks", Some(&t), Some(hook)).await;
    assert_eq!(st, 201, "{b}");
    (t, b["id"].as_i64().unwrap())
}

/// The deliveries of `acme`'s hook but the ping, oldest first, once there are `n` (the queue's order).
pub(crate) async fn queued(s: &Server, t: &str, hook: i64, n: usize) -> Vec<(String, String, Value)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (st, _, b) = call(s, Method::GET, &format!("/orgs/acme/hooks/{hook}/deliveries?per_page=100"), Some(t), None).await;
        assert_eq!(st, 200, "{b}");
        let mut list: Vec<Value> = b.as_array().unwrap().iter().filter(|d| d["event"] != "ping").cloned().collect();
        if list.len() >= n {
            assert_eq!(list.len(), n, "{b}");
            list.reverse();
            let mut out = Vec::new();
            for d in list {
                let id = d["id"].as_i64().unwrap();
                let (_, _, full) = call(s, Method::GET, &format!("/orgs/acme/hooks/{hook}/deliveries/{id}"), Some(t), None).await;
                let action = d["action"].as_str().unwrap_or("").to_string();
                out.push((d["event"].as_str().unwrap().to_string(), action, full["request"]["payload"].clone()));
            }
            return out;
        }
        assert!(Instant::now() < deadline, "expected {n} deliveries: {b}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A team in its webhook form: no `type`, `organization_id` or parent; its members' URL.
fn assert_team(team: &Value, slug: &str) {
    assert_eq!(team["slug"], slug, "{team}");
    assert!(team["parent"].is_null() && team.get("type").is_none() && team.get("organization_id").is_none(), "{team}");
    let members = format!("/team/{}/members{{/member}}", team["id"]);
    assert!(team["members_url"].as_str().unwrap().ends_with(&members), "{team}");
}

both!(team_and_membership_changes_are_webhooks, |s| {
    let (t, hook) = world(&s).await;
    // team created, then membership added for each member in the order given.
    let (st, b) = admin(&s, Method::POST, "/orgs/acme/teams", Some(json!({"name": "Platform", "members": ["erin", "bob"]}))).await;
    assert_eq!(st, 201, "{b}");
    let got = queued(&s, &t, hook, 3).await;
    let seen: Vec<(&str, &str)> = got.iter().map(|(e, a, _)| (e.as_str(), a.as_str())).collect();
    assert_eq!(seen, [("team", "created"), ("membership", "added"), ("membership", "added")]);
    let created = &got[0].2;
    assert_team(&created["team"], "platform");
    assert_eq!((created["sender"]["login"].clone(), created["organization"]["login"].clone()), (json!("acme"), json!("acme")));
    assert!(created.get("repository").is_none() && created.get("changes").is_none(), "{created}");
    let members: Vec<&Value> = got[1..].iter().map(|(_, _, p)| &p["member"]["login"]).collect();
    assert_eq!(members, [&json!("erin"), &json!("bob")]);
    assert_eq!((got[1].2["scope"].clone(), got[1].2["team"]["slug"].clone()), (json!("team"), json!("platform")));

    // Edited: what changed, each field's value before (no description before: "").
    let (st, b) =
        admin(&s, Method::PATCH, "/orgs/acme/teams/platform", Some(json!({"name": "Platform Eng", "description": "builds"}))).await;
    assert_eq!((st, b["slug"].clone(), b["description"].clone()), (200, json!("platform-eng"), json!("builds")), "{b}");
    // Nothing changes: nothing sent.
    let (st, _) = admin(&s, Method::PATCH, "/orgs/acme/teams/platform-eng", Some(json!({"privacy": "closed"}))).await;
    assert_eq!(st, 200);
    let got = queued(&s, &t, hook, 4).await;
    let edited = &got[3].2;
    assert_eq!((got[3].0.as_str(), got[3].1.as_str()), ("team", "edited"));
    assert_eq!(edited["changes"], json!({"name": {"from": "Platform"}, "description": {"from": ""}}));
    assert_eq!((edited["team"]["name"].clone(), edited["team"]["slug"].clone()), (json!("Platform Eng"), json!("platform-eng")));

    // Team members: only the organization's members may join; a second add sends nothing.
    let (st, b) = admin(&s, Method::PUT, "/orgs/acme/teams/platform-eng/members/carol", None).await;
    assert_eq!((st, b["errors"][0]["code"].clone()), (422, json!("invalid")), "{b}");
    let (st, b) = admin(&s, Method::PUT, "/orgs/acme/members/carol", None).await;
    assert_eq!(
        (st, b["role"].clone(), b["state"].clone(), b["user"]["login"].clone()),
        (201, json!("member"), json!("active"), json!("carol"))
    );
    let (st, b) = admin(&s, Method::PUT, "/orgs/acme/members/carol", Some(json!({"role": "member"}))).await;
    assert_eq!(st, 200, "{b}");
    let (st, b) = admin(&s, Method::PUT, "/orgs/acme/teams/platform-eng/members/carol", Some(json!({}))).await;
    assert_eq!((st, b["state"].clone()), (201, json!("active")), "{b}");
    let (st, _) = admin(&s, Method::PUT, "/orgs/acme/teams/platform-eng/members/carol", None).await;
    assert_eq!(st, 200);
    let (st, _) = admin(&s, Method::DELETE, "/orgs/acme/teams/platform-eng/members/bob", None).await;
    assert_eq!(st, 204);
    let (st, _) = admin(&s, Method::DELETE, "/orgs/acme/teams/platform-eng/members/bob", None).await;
    assert_eq!(st, 404);
    let (st, _) = admin(&s, Method::DELETE, "/orgs/acme/teams/platform-eng", None).await;
    assert_eq!(st, 204);
    let (st, _) = admin(&s, Method::DELETE, "/orgs/acme/teams/platform-eng", None).await;
    assert_eq!(st, 404);

    let got = queued(&s, &t, hook, 8).await;
    let seen: Vec<(&str, &str)> = got[4..].iter().map(|(e, a, _)| (e.as_str(), a.as_str())).collect();
    assert_eq!(seen, [("organization", "member_added"), ("membership", "added"), ("membership", "removed"), ("team", "deleted")]);
    let joined = &got[4].2["membership"];
    assert_eq!(
        (joined["role"].clone(), joined["state"].clone(), joined["user"]["login"].clone()),
        (json!("member"), json!("active"), json!("carol"))
    );
    assert_eq!(joined["url"], format!("{}/orgs/acme/memberships/carol", s.base));
    assert_eq!(joined["organization_url"], format!("{}/orgs/acme", s.base));
    assert_eq!((got[5].2["member"]["login"].clone(), got[6].2["member"]["login"].clone()), (json!("carol"), json!("bob")));
    assert_eq!(got[6].2["scope"], "team");
    // The deleted team as it was.
    assert_team(&got[7].2["team"], "platform-eng");
    let (st, _, _) = call(&s, Method::GET, "/orgs/acme/teams/platform-eng", Some(&t), None).await;
    assert_eq!(st, 404);
});

both!(member_changes_check_their_input, |s| {
    world(&s).await;
    for (m, path, body, want) in [
        (Method::PUT, "/orgs/nope/members/bob", None, 404),
        (Method::PUT, "/orgs/acme/members/nobody", None, 404),
        (Method::PUT, "/orgs/acme/members/bob", Some(json!({"role": "admin"})), 422),
        (Method::PUT, "/orgs/acme/members/bob", Some(json!({"roles": "member"})), 422),
        (Method::DELETE, "/orgs/acme/members/carol", None, 404),
        (Method::PATCH, "/orgs/acme/teams/nope", Some(json!({"name": "x"})), 404),
        (Method::PUT, "/orgs/acme/teams/nope/members/bob", None, 404),
        (Method::DELETE, "/orgs/acme/teams/nope", None, 404),
    ] {
        let (st, b) = admin(&s, m, path, body).await;
        assert_eq!(st, want, "{path}: {b}");
    }
    s.admin_post("/orgs/acme/teams", json!({"name": "core"})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "web"})).await;
    for (body, field, code) in [
        (json!({"privacy": "open"}), "privacy", "invalid"),
        (json!({"name": "--"}), "name", "invalid"),
        (json!({"name": "Web"}), "name", "already_exists"),
    ] {
        let (st, b) = admin(&s, Method::PATCH, "/orgs/acme/teams/core", Some(body)).await;
        assert_eq!((st, b["errors"][0]["field"].clone(), b["errors"][0]["code"].clone()), (422, json!(field), json!(code)), "{b}");
    }
    // An owner's membership shows the `admin` role.
    let (st, b) = admin(&s, Method::PUT, "/orgs/acme/members/dave", Some(json!({"role": "owner"}))).await;
    assert_eq!((st, b["role"].clone()), (201, json!("admin")), "{b}");
});

both!(a_removed_member_loses_access, |s| {
    let (t, hook) = world(&s).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "core", "members": ["bob"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "ops", "members": ["bob", "erin"]})).await;
    let bob = s.classic("bob", &["repo", "read:org"]).await;
    // Read twice: the second answer may come from the access caches.
    for _ in 0..2 {
        assert_eq!(call(&s, Method::GET, "/repos/acme/secret", Some(&bob), None).await.0, 200);
    }
    assert_eq!(call(&s, Method::GET, "/orgs/acme/teams/core", Some(&bob), None).await.0, 200);
    let (st, b) = admin(&s, Method::DELETE, "/orgs/acme/members/bob", None).await;
    assert_eq!(st, 204, "{b}");
    assert_eq!(call(&s, Method::GET, "/repos/acme/secret", Some(&bob), None).await.0, 404);
    // Off the organization's teams too.
    let (_, _, team) = call(&s, Method::GET, "/orgs/acme/teams/ops", Some(&t), None).await;
    assert_eq!(team["members_count"], 1, "{team}");
    // Team created + added (core: bob; ops: bob, erin) = 5; then the removal's three.
    let got = queued(&s, &t, hook, 8).await;
    let seen: Vec<(&str, &str, &str)> =
        got[5..].iter().map(|(e, a, p)| (e.as_str(), a.as_str(), p["team"]["slug"].as_str().unwrap_or(""))).collect();
    assert_eq!(seen, [("membership", "removed", "core"), ("membership", "removed", "ops"), ("organization", "member_removed", "")]);
    assert!(got[5..7].iter().all(|(_, _, p)| p["scope"] == "organization" && p["member"]["login"] == "bob"));
    let m = &got[7].2["membership"];
    assert_eq!((m["user"]["login"].clone(), m["role"].clone()), (json!("bob"), json!("member")));
    // Back in: access again (and `member_added`).
    let (st, _) = admin(&s, Method::PUT, "/orgs/acme/members/bob", None).await;
    assert_eq!(st, 201);
    assert_eq!(call(&s, Method::GET, "/repos/acme/secret", Some(&bob), None).await.0, 200);
    let got = queued(&s, &t, hook, 9).await;
    assert_eq!((got[8].0.as_str(), got[8].1.as_str()), ("organization", "member_added"));
});
