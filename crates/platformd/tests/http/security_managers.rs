//! Security managers (closing down): list, add and remove teams; owners only (security managers
//! may list); scopes and the organization Administration permission; `Deprecation`/`Sunset` on
//! every response.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

/// alice owns acme, bob is a member, carol an outsider; acme has teams `security` (erin) and `web`.
pub async fn world(s: &Server) {
    for u in ["alice", "bob", "carol", "erin"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob", "erin"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Security", "description": "Sec team", "members": ["erin"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Web"})).await;
}

async fn send(s: &Server, m: Method, path: &str, t: Option<&str>) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.req(m, path, t).send().await.unwrap()).await
}

fn closing_down(h: &reqwest::header::HeaderMap) {
    assert_eq!(header(h, "sunset"), "Thu, 01 Jan 2026 00:00:00 GMT");
    assert!(header(h, "deprecation").ends_with(" GMT"), "{h:?}");
    assert!(h.get("link").is_none(), "no Link entry: clients read Link for pagination");
}

both!(list_add_remove, |s| {
    world(&s).await;
    let alice = s.classic("alice", &["admin:org"]).await;
    let (st, h, b) = send(&s, Method::GET, "/orgs/acme/security-managers", Some(&alice)).await;
    assert_eq!((st, b), (200, json!([])));
    closing_down(&h);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "read:org");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "organization_administration=read");

    let (st, h, _) = send(&s, Method::PUT, "/orgs/acme/security-managers/teams/security", Some(&alice)).await;
    assert_eq!(st, 204);
    closing_down(&h);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "admin:org");
    // Adding again is idempotent; slugs are case-insensitive.
    assert_eq!(send(&s, Method::PUT, "/orgs/acme/security-managers/teams/Security", Some(&alice)).await.0, 204);

    let (st, _, b) = send(&s, Method::GET, "/orgs/acme/security-managers", Some(&alice)).await;
    assert_eq!(st, 200);
    let teams = b.as_array().unwrap();
    assert_eq!(teams.len(), 1);
    let t = &teams[0];
    assert_conforms_to_snapshot("TeamSimple", t);
    assert_eq!(t["name"], "Security");
    assert_eq!(t["slug"], "security");
    assert_eq!(t["description"], "Sec team");
    assert_eq!(t["type"], "organization");
    assert_eq!(t["permission"], "pull");
    assert!(t["id"].is_i64() && t["organization_id"].is_i64());
    let api = format!("{}/organizations/{}/team/{}", s.base, t["organization_id"], t["id"]);
    assert_eq!(t["url"], api);
    assert_eq!(t["members_url"], format!("{api}/members{{/member}}"));
    assert_eq!(t["repositories_url"], format!("{api}/repos"));
    assert_eq!(t["html_url"], format!("http://{}/orgs/acme/teams/security", s.addr));

    // A security manager may list, not change.
    let erin = s.classic("erin", &["admin:org"]).await;
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&erin)).await.0, 200);
    assert_eq!(send(&s, Method::PUT, "/orgs/acme/security-managers/teams/web", Some(&erin)).await.0, 404);

    let (st, h, _) = send(&s, Method::DELETE, "/orgs/acme/security-managers/teams/security", Some(&alice)).await;
    assert_eq!(st, 204);
    closing_down(&h);
    assert_eq!(send(&s, Method::DELETE, "/orgs/acme/security-managers/teams/security", Some(&alice)).await.0, 204);
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&alice)).await.2, json!([]));
    // No longer a manager: erin is an ordinary member now.
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&erin)).await.0, 404);
});

both!(permissions_and_errors, |s| {
    world(&s).await;
    let alice = s.classic("alice", &["admin:org"]).await;
    // Unknown team and organization.
    let (st, h, b) = send(&s, Method::PUT, "/orgs/acme/security-managers/teams/nope", Some(&alice)).await;
    assert_error(st, &h, &b, 404, "Not Found");
    closing_down(&h);
    assert_eq!(send(&s, Method::DELETE, "/orgs/acme/security-managers/teams/nope", Some(&alice)).await.0, 404);
    assert_eq!(send(&s, Method::GET, "/orgs/nope/security-managers", Some(&alice)).await.0, 404);
    // Anonymous: 401. Members and outsiders: 404.
    let (st, h, b) = send(&s, Method::GET, "/orgs/acme/security-managers", None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    for who in ["bob", "carol"] {
        let t = s.classic(who, &["admin:org"]).await;
        assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&t)).await.0, 404, "{who}");
        assert_eq!(send(&s, Method::PUT, "/orgs/acme/security-managers/teams/web", Some(&t)).await.0, 404, "{who}");
    }
    // Scopes: read:org lists but does not change; nothing else reaches it.
    let read = s.classic("alice", &["read:org"]).await;
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&read)).await.0, 200);
    let (st, h, b) = send(&s, Method::PUT, "/orgs/acme/security-managers/teams/web", Some(&read)).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let repo = s.classic("alice", &["repo"]).await;
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&repo)).await.0, 403);
    // Fine-grained: the organization Administration permission, read to list, write to change.
    let fg = |level: &'static str| {
        json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme",
                                          "permissions": {"organization_administration": level}})
    };
    let r = s.token(fg("read")).await;
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&r)).await.0, 200);
    assert_eq!(send(&s, Method::PUT, "/orgs/acme/security-managers/teams/web", Some(&r)).await.0, 403);
    let w = s.token(fg("write")).await;
    assert_eq!(send(&s, Method::PUT, "/orgs/acme/security-managers/teams/web", Some(&w)).await.0, 204);
    let none =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"members": "read"}})).await;
    assert_eq!(send(&s, Method::GET, "/orgs/acme/security-managers", Some(&none)).await.0, 403);
    // The list shows the team the fine-grained token added.
    let b = send(&s, Method::GET, "/orgs/acme/security-managers", Some(&alice)).await.2;
    assert_eq!(b[0]["slug"], "web");
});

both!(openapi_marks_them_deprecated, |s| {
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    for (path, m) in [
        ("/orgs/{org}/security-managers", "get"),
        ("/orgs/{org}/security-managers/teams/{team_slug}", "put"),
        ("/orgs/{org}/security-managers/teams/{team_slug}", "delete"),
    ] {
        let op = &doc["paths"][path][m];
        assert_eq!(op["deprecated"], true, "{path} {m}");
        let ok = op["responses"].as_object().unwrap().iter().find(|(k, _)| k.starts_with('2')).unwrap().1;
        assert!(ok["headers"]["Sunset"].is_object() && ok["headers"]["Deprecation"].is_object());
    }
    assert!(doc["paths"]["/orgs/{org}/hooks"]["get"].get("deprecated").is_none());
    assert!(doc["components"]["schemas"]["TeamSimple"].is_object());
});
