//! Event feeds (document 3): every operation, visibility, payload shapes, conditional polling,
//! X-Poll-Interval, pagination, the 300-event cap and the 30-day window.
use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const SHA2: &str = "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d";

fn sha(i: usize) -> String {
    format!("{i:040x}")
}

async fn push_by(s: &Server, full: &str, r: &str, sha: &str, pusher: &str) {
    s.admin_post(&format!("/repos/{full}/refs"), json!({"ref": r, "sha": sha, "pusher": pusher})).await;
}

async fn star(s: &Server, full: &str, login: &str) -> u16 {
    let r = s
        .client
        .post(format!("http://{}/_admin/repos/{full}/stars", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({ "login": login }))
        .send()
        .await
        .unwrap();
    r.status().as_u16()
}

/// GET that must answer 200 with an array; returns (headers, elements).
async fn list(s: &Server, path: &str, token: Option<&str>) -> (reqwest::header::HeaderMap, Vec<Value>) {
    let (st, h, b) = parts(s.get(path, token).await).await;
    assert_eq!(st, 200, "{path}: {b}");
    (h, b.as_array().unwrap_or_else(|| panic!("{path}: not an array: {b}")).clone())
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

/// An Event, with `org` exactly when the repository belongs to one.
fn assert_event(s: &Server, e: &Value, repo: &str, actor: &str, org: Option<&str>) {
    assert_conforms_to_snapshot("Event", e);
    assert_eq!(e.get("org").is_some(), org.is_some(), "{e}");
    assert!(e["id"].as_str().is_some_and(|i| i.parse::<i64>().is_ok()), "{e}");
    assert!(is_ts(&e["created_at"]), "{e}");
    let a = &e["actor"];
    assert_eq!(a["login"], actor);
    assert_eq!(a["display_login"], actor);
    assert_eq!(a["url"], format!("{}/users/{actor}", s.base));
    assert!(a["avatar_url"].as_str().unwrap().starts_with("http"));
    assert!(a["id"].as_i64().unwrap() > 0);
    assert_eq!(e["repo"]["name"], repo);
    assert_eq!(e["repo"]["url"], format!("{}/repos/{repo}", s.base));
    assert!(e["repo"]["id"].as_i64().unwrap() > 0);
    if let Some(o) = org {
        assert!(e["org"].get("display_login").is_none(), "{e}");
        assert_eq!(e["org"]["login"], o);
        assert_eq!(e["org"]["url"], format!("{}/orgs/{o}", s.base));
    }
}

both!(payload_shapes_and_kinds, |s| {
    s.user("alice").await;
    s.user("bob").await;
    let repo = s.repo("alice", "pub", false).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    s.advance(1).await;
    s.push("alice/pub", "refs/heads/main", SHA2).await;
    s.push("alice/pub", "refs/tags/v1", SHA2).await;
    assert_eq!(star(&s, "alice/pub", "bob").await, 201);
    assert_eq!(star(&s, "alice/pub", "bob").await, 204, "a repeated star records nothing");
    // A commit status is activity too, but not a feed event.
    let t = s.classic("alice", &["repo"]).await;
    let (st, _, _) = parts(s.post(&format!("/repos/alice/pub/statuses/{SHA2}"), Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201);

    let (h, ev) = list(&s, "/repos/alice/pub/events", None).await;
    assert_eq!(types(&ev), ["WatchEvent", "CreateEvent", "PushEvent", "PushEvent", "CreateEvent"]);
    assert_eq!(header(&h, "x-poll-interval"), "60");
    assert!(!header(&h, "etag").is_empty());
    assert_eq!(header(&h, "link"), "", "a single page has no Link");
    let ids: Vec<i64> = ev.iter().map(|e| e["id"].as_str().unwrap().parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_event(&s, &ev[0], "alice/pub", "bob", None);
    assert_eq!(ev[0]["payload"], json!({"action": "started"}));
    assert_event(&s, &ev[1], "alice/pub", "alice", None);
    assert_eq!(
        ev[1]["payload"],
        json!({"ref": "v1", "ref_type": "tag", "full_ref": "refs/tags/v1", "master_branch": "main", "description": null, "pusher_type": "user"})
    );
    let push = &ev[2]["payload"];
    assert_eq!(keys(push), ["before", "head", "push_id", "ref", "repository_id"]);
    assert_eq!(push["repository_id"], repo["id"]);
    assert!(push["push_id"].as_i64().unwrap() > 0);
    assert_eq!(push["ref"], "refs/heads/main");
    assert_eq!(push["head"], SHA2);
    assert_eq!(push["before"], SHA);
    assert_eq!(ev[3]["payload"]["before"], "0".repeat(40));
    assert_eq!(ev[4]["payload"]["ref_type"], "branch");
    assert_eq!(ev[4]["payload"]["full_ref"], "refs/heads/main");
    assert!(ev.iter().all(|e| e["public"] == true));

    // The same events on the public feeds; case-insensitive names.
    let (_, public) = list(&s, "/events", None).await;
    assert_eq!(public, ev);
    let (_, mine) = list(&s, "/users/ALICE/events/public", None).await;
    assert_eq!(types(&mine), ["CreateEvent", "PushEvent", "PushEvent", "CreateEvent"]);
    let (_, bobs) = list(&s, "/users/bob/events", None).await;
    assert_eq!(types(&bobs), ["WatchEvent"]);
    let (_, upper) = list(&s, "/repos/ALICE/PUB/events", None).await;
    assert_eq!(upper, ev);
    for p in ["/users/nobody/events", "/users/nobody/events/public", "/repos/alice/nope/events", "/orgs/nobody/events"] {
        let (st, h, b) = parts(s.get(p, None).await).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    // A star of an unknown user is 422 on the control plane.
    let r = s
        .client
        .post(format!("http://{}/_admin/repos/alice/pub/stars", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"login": "ghost"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
});

both!(private_repository_events, |s| {
    s.user("alice").await;
    s.user("bob").await;
    s.repo("alice", "pub", false).await;
    s.repo("alice", "priv", true).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    s.push("alice/priv", "refs/heads/main", SHA).await;
    let alice = s.classic("alice", &["repo"]).await;
    let alice_public = s.classic("alice", &["read:user"]).await;
    let bob = s.classic("bob", &["repo"]).await;

    // Repository feed: private repositories only to callers who can see them.
    for t in [None, Some(bob.as_str()), Some(alice_public.as_str())] {
        let (st, h, b) = parts(s.get("/repos/alice/priv/events", t).await).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    let (_, ev) = list(&s, "/repos/alice/priv/events", Some(&alice)).await;
    assert_eq!(types(&ev), ["PushEvent", "CreateEvent"]);
    assert!(ev.iter().all(|e| e["public"] == false));
    assert_event(&s, &ev[0], "alice/priv", "alice", None);

    // The public timeline never shows private events, whoever asks.
    for t in [None, Some(alice.as_str())] {
        let (_, ev) = list(&s, "/events", t).await;
        assert!(ev.iter().all(|e| e["repo"]["name"] == "alice/pub" && e["public"] == true), "{ev:?}");
        assert_eq!(ev.len(), 2);
    }

    // A user's events: private ones only to the user themself.
    let (_, anon) = list(&s, "/users/alice/events", None).await;
    assert_eq!(anon.len(), 2);
    let (_, other) = list(&s, "/users/alice/events", Some(&bob)).await;
    assert_eq!(other, anon);
    let (_, own) = list(&s, "/users/alice/events", Some(&alice)).await;
    assert_eq!(own.len(), 4);
    assert_eq!(own.iter().filter(|e| e["public"] == false).count(), 2);
    let (_, own_public) = list(&s, "/users/alice/events/public", Some(&alice)).await;
    assert_eq!(own_public, anon);
    // Fine-grained: private events need the Events (user) permission.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "read"}})).await;
    let (_, without) = list(&s, "/users/alice/events", Some(&fg)).await;
    assert_eq!(without, anon);
    let fg_events = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"events": "read"}})).await;
    let (h, with) = list(&s, "/users/alice/events", Some(&fg_events)).await;
    assert_eq!(with, own);
    assert_eq!(header(&h, "x-accepted-service-permissions"), "events=read");
});

both!(organization_feeds, |s| {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", false).await;
    s.repo("acme", "secret", true).await;
    s.repo("carol", "own", false).await;
    push_by(&s, "acme/widgets", "refs/heads/main", SHA, "alice").await;
    push_by(&s, "acme/secret", "refs/heads/main", SHA, "bob").await;
    s.push("carol/own", "refs/heads/main", SHA).await;
    assert_eq!(star(&s, "acme/widgets", "carol").await, 201);

    // Public organization events: public repositories only, elements carry `org`.
    let (_, ev) = list(&s, "/orgs/ACME/events", None).await;
    assert_eq!(types(&ev), ["WatchEvent", "PushEvent", "CreateEvent"]);
    assert_event(&s, &ev[0], "acme/widgets", "carol", Some("acme"));
    assert_event(&s, &ev[1], "acme/widgets", "alice", Some("acme"));
    let bob = s.classic("bob", &["repo"]).await;
    let (_, as_member) = list(&s, "/orgs/acme/events", Some(&bob)).await;
    assert_eq!(as_member, ev);
    // A user is not an organization.
    let (st, h, b) = parts(s.get("/orgs/carol/events", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");

    // The user's organization dashboard: members see private repositories' events too.
    let (_, dash) = list(&s, "/users/bob/events/orgs/acme", Some(&bob)).await;
    assert_eq!(dash.len(), 5);
    assert_eq!(dash.iter().filter(|e| e["public"] == false).count(), 2);
    assert!(dash.iter().all(|e| e["org"]["login"] == "acme"));
    let carol = s.classic("carol", &[]).await;
    let (_, outsider) = list(&s, "/users/CAROL/events/orgs/ACME", Some(&carol)).await;
    assert_eq!(outsider, ev);
    // Only the user themself.
    let (st, h, b) = parts(s.get("/users/bob/events/orgs/acme", Some(&carol)).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = parts(s.get("/users/bob/events/orgs/acme", None).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    let (st, h, b) = parts(s.get("/users/bob/events/orgs/nope", Some(&bob)).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Fine-grained: Events (organization) read.
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"statuses": "read"}})).await;
    let (st, h, b) = parts(s.get("/users/bob/events/orgs/acme", Some(&fg)).await).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"events": "read"}})).await;
    let (_, with) = list(&s, "/users/bob/events/orgs/acme", Some(&fg)).await;
    assert_eq!(with, dash);
    // App installation tokens are not accepted (noapp).
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"events": "read"}})).await;
    let (st, h, b) = parts(s.get("/users/bob/events/orgs/acme", Some(&inst)).await).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
});

both!(network_feed_and_renames, |s| {
    s.user("alice").await;
    s.user("bob").await;
    s.repo("alice", "pub", false).await;
    s.repo("alice", "priv", true).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    let (_, ev) = list(&s, "/networks/alice/pub/events", None).await;
    assert_eq!(types(&ev), ["PushEvent", "CreateEvent"]);
    let (st, h, b) = parts(s.get("/networks/alice/priv/events", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let bob = s.classic("bob", &["repo"]).await;
    let (st, h, b) = parts(s.get("/networks/alice/priv/events", Some(&bob)).await).await;
    assert_error(st, &h, &b, 404, "Not Found");

    s.admin_post("/repos/alice/pub/rename", json!({"name": "renamed"})).await;
    let (st, h, _) = parts(s.get("/networks/alice/pub/events?per_page=5", None).await).await;
    assert_eq!(st, 301);
    assert_eq!(header(&h, "location"), format!("{}/networks/alice/renamed/events?per_page=5", s.base));
    let (st, h, _) = parts(s.get("/repos/alice/pub/events", None).await).await;
    assert_eq!(st, 301);
    assert_eq!(header(&h, "location"), format!("{}/repos/alice/renamed/events", s.base));
    // Events name the repository as it is named now.
    let (_, ev) = list(&s, "/networks/alice/renamed/events", None).await;
    assert!(ev.iter().all(|e| e["repo"]["name"] == "alice/renamed"));
});

both!(conditional_polling_is_free, |s| {
    s.user("alice").await;
    s.user("bob").await;
    s.repo("alice", "pub", false).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    let t = s.classic("bob", &[]).await;
    for path in ["/repos/alice/pub/events", "/events", "/users/alice/events", "/networks/alice/pub/events"] {
        let (st, h, _) = parts(s.get(path, Some(&t)).await).await;
        assert_eq!(st, 200);
        let etag = header(&h, "etag").to_string();
        let remaining: i64 = header(&h, "x-ratelimit-remaining").parse().unwrap();
        // The first 304 goes through the handler, later ones are answered before routing
        // (`not_modified`): the same headers either way.
        let mut first: Option<Vec<(String, String)>> = None;
        for _ in 0..3 {
            let r = s.req(Method::GET, path, Some(&t)).header("if-none-match", &etag).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 304, "{path}");
            let mut head: Vec<(String, String)> = r
                .headers()
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "x-service-request-id" | "date"))
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
                .collect();
            head.sort();
            assert_eq!(first.get_or_insert_with(|| head.clone()), &head, "{path}");
            assert_eq!(header(r.headers(), "x-ratelimit-remaining").parse::<i64>().unwrap(), remaining, "a 304 is not charged");
            assert_eq!(header(r.headers(), "x-poll-interval"), "60");
            assert_eq!(header(r.headers(), "etag"), etag);
            assert!(r.bytes().await.unwrap().is_empty());
        }
    }
    // Anonymous polling too (the address's bucket).
    let (_, h, _) = parts(s.get("/events", None).await).await;
    let etag = header(&h, "etag").to_string();
    let r = s.req(Method::GET, "/events", None).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 304);
    // Something new: a new ETag.
    assert_eq!(star(&s, "alice/pub", "bob").await, 201);
    let r = s.req(Method::GET, "/events", None).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_ne!(header(r.headers(), "etag"), etag);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body[0]["type"], "WatchEvent");
});

both!(pagination_and_link, |s| {
    s.user("alice").await;
    s.repo("alice", "pub", false).await;
    for i in 0..34 {
        s.push("alice/pub", "refs/heads/main", &sha(i + 1)).await; // 1 CreateEvent + 34 PushEvents
    }
    let (h, p1) = list(&s, "/repos/alice/pub/events", None).await;
    assert_eq!(p1.len(), 30);
    let base = format!("{}/repos/alice/pub/events", s.base);
    assert_eq!(header(&h, "link"), format!("<{base}?page=2>; rel=\"next\", <{base}?page=2>; rel=\"last\""));
    let (h, p2) = list(&s, "/repos/alice/pub/events?page=2", None).await;
    assert_eq!(p2.len(), 5);
    assert_eq!(p2[4]["type"], "CreateEvent");
    assert!(header(&h, "link").contains("rel=\"first\"") && header(&h, "link").contains("rel=\"prev\""));
    let last1: i64 = p1[29]["id"].as_str().unwrap().parse().unwrap();
    let first2: i64 = p2[0]["id"].as_str().unwrap().parse().unwrap();
    assert!(last1 > first2);
    // /events: 15 per page by default; per_page repeats in the links.
    let (h, ev) = list(&s, "/events", None).await;
    assert_eq!(ev.len(), 15);
    assert!(header(&h, "link").contains(&format!("<{}/events?page=3>; rel=\"last\"", s.base)), "{}", header(&h, "link"));
    let (h, ev) = list(&s, "/users/alice/events?per_page=10&page=2", None).await;
    assert_eq!(ev.len(), 10);
    assert!(header(&h, "link").contains("per_page=10&page=3>; rel=\"next\""), "{}", header(&h, "link"));
    let (_, ev) = list(&s, "/events?per_page=1000", None).await;
    assert_eq!(ev.len(), 35, "per_page is capped at 100");
    let (st, h, b) = parts(s.get("/events?per_page=x", None).await).await;
    assert_eq!(st, 422, "{b} {h:?}");
});

both!(timeline_cap_and_window, |s| {
    s.user("alice").await;
    s.repo("alice", "pub", false).await;
    // 1 CreateEvent + 309 PushEvents.
    for i in 0..309 {
        s.push("alice/pub", "refs/heads/main", &sha(i + 1)).await;
    }
    let (h, p3) = list(&s, "/repos/alice/pub/events?per_page=100&page=3", None).await;
    assert_eq!(p3.len(), 100);
    assert!(!header(&h, "link").contains("rel=\"next\""), "page 3 is the last: {}", header(&h, "link"));
    assert_eq!(p3[99]["payload"]["head"], sha(10), "the 300 newest");
    let (_, p4) = list(&s, "/repos/alice/pub/events?per_page=100&page=4", None).await;
    assert!(p4.is_empty());
    let (_, ev) = list(&s, "/users/alice/events?per_page=100&page=3", None).await;
    assert_eq!(ev.len(), 100);
    let (_, ev) = list(&s, "/events?per_page=100&page=4", None).await;
    assert!(ev.is_empty());

    // The 30-day window, by the platform clock.
    s.advance(20 * 86_400).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    let (_, ev) = list(&s, "/repos/alice/pub/events?per_page=100", None).await;
    assert_eq!(ev.len(), 100);
    s.advance(10 * 86_400 + 1).await;
    for path in ["/repos/alice/pub/events", "/events", "/users/alice/events", "/users/alice/events/public", "/networks/alice/pub/events"] {
        let (_, ev) = list(&s, path, None).await;
        assert_eq!(ev.len(), 1, "{path}");
        assert_eq!(ev[0]["payload"]["head"], SHA);
    }
    s.advance(20 * 86_400).await;
    let (h, ev) = list(&s, "/repos/alice/pub/events", None).await;
    assert!(ev.is_empty());
    assert_eq!(header(&h, "x-poll-interval"), "60");
});

both!(openapi_documents_the_feeds, |s| {
    let doc: Value = s.client.get(format!("http://{}/openapi.json", s.addr)).send().await.unwrap().json().await.unwrap();
    for (path, id) in [
        ("/events", "events/list-public"),
        ("/networks/{owner}/{repo}/events", "events/list-for-network"),
        ("/orgs/{org}/events", "events/list-for-org"),
        ("/repos/{owner}/{repo}/events", "events/list-for-repo"),
        ("/users/{username}/events", "events/list-for-user"),
        ("/users/{username}/events/public", "events/list-public-for-user"),
        ("/users/{username}/events/orgs/{org}", "events/list-org-for-user"),
    ] {
        let op = &doc["paths"][path]["get"];
        assert_eq!(op["operationId"], id);
        let ok = &op["responses"]["200"];
        assert_eq!(ok["content"]["application/json"]["schema"]["items"]["$ref"], "#/components/schemas/Event", "{op}");
        assert!(ok["headers"]["X-Poll-Interval"].is_object() && ok["headers"]["Link"].is_object(), "{ok}");
        assert!(op["responses"]["304"].is_object());
    }
    assert!(doc["paths"]["/networks/{owner}/{repo}/events"]["get"]["responses"]["301"].is_object());
    assert!(doc["components"]["schemas"]["Event"]["properties"]["payload"].is_object());
    assert!(doc["components"]["headers"]["X-Poll-Interval"].is_object());
});

both!(huge_page_numbers_are_empty_pages, |s| {
    s.user("alice").await;
    s.repo("alice", "pub", false).await;
    s.push("alice/pub", "refs/heads/main", SHA).await;
    for p in ["/events?page=9223372036854775807", "/repos/alice/pub/events?page=99999999999999999999&per_page=100"] {
        let (_, ev) = list(&s, p, None).await;
        assert!(ev.is_empty(), "{p}");
    }
});

both!(a_repository_made_private_leaves_the_public_feeds, |s| {
    // alice owns org acme; `acme/app` is public with pushes and a star, then made private.
    for u in ["alice", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "app", false).await;
    s.repo("acme", "other", false).await;
    push_by(&s, "acme/app", "refs/heads/feature/secret-name", SHA, "alice").await;
    push_by(&s, "acme/other", "refs/heads/main", SHA2, "alice").await;
    let alice = s.classic("alice", &["repo"]).await;
    let carol = s.classic("carol", &["repo"]).await;
    const FEEDS: [&str; 4] = ["/events", "/orgs/acme/events", "/users/alice/events", "/users/alice/events/public"];
    let names = |events: &[Value]| events.iter().map(|e| e["repo"]["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    // Another node on the same database answers the same (its caches are exact across nodes).
    let peer = s.peer(Options::default()).await;
    for node in [&s, &peer] {
        for path in FEEDS {
            for token in [None, Some(carol.as_str())] {
                let (_, events) = list(node, path, token).await;
                assert!(names(&events).contains(&"acme/app".to_string()), "{path} before: {events:?}");
            }
        }
    }
    let (st, _, b) = call(&s, Method::PATCH, "/repos/acme/app", Some(&alice), Some(json!({"private": true}))).await;
    assert_eq!(st, 200, "{b}");
    for node in [&s, &peer] {
        for path in FEEDS {
            for token in [None, Some(carol.as_str())] {
                let (_, events) = list(node, path, token).await;
                let shown = names(&events);
                assert!(!shown.contains(&"acme/app".to_string()), "{path} as {token:?} after: {shown:?}");
                assert!(!events.iter().any(|e| e.to_string().contains("secret-name")), "{path}: {events:?}");
                assert!(shown.contains(&"acme/other".to_string()), "{path}: the public repository stays: {shown:?}");
            }
        }
    }
    // The owner still sees her own events in the repository, now private.
    let (_, events) = list(&s, "/users/alice/events", Some(&alice)).await;
    let mine: Vec<&Value> = events.iter().filter(|e| e["repo"]["name"] == "acme/app").collect();
    assert!(!mine.is_empty() && mine.iter().all(|e| e["public"] == false), "{events:?}");
    let (_, events) = list(&s, "/repos/acme/app/events", Some(&alice)).await;
    assert!(!events.is_empty());
    let (st, _, _) = parts(s.get("/repos/acme/app/events", None).await).await;
    assert_eq!(st, 404);
});

// A star removed on the control plane (204) is a `star` `deleted` webhook with `starred_at`
// null, and no feed entry (the hosted Events API has none); 404 when the user had not starred
// the repository, or there is no such repository or user.
both!(removed_star_is_a_star_deleted_webhook_only, |s| {
    s.user("alice").await;
    s.user("bob").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "pub", false).await;
    let t = s.classic("alice", &["repo", "admin:org_hook"]).await;
    let hook = json!({"name": "web", "config": {"url": "http://127.0.0.1:9/x"}, "events": ["star", "watch"]});
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&t), Some(hook)).await;
    assert_eq!(st, 201, "{b}");
    let hook = b["id"].as_i64().unwrap();
    let unstar = |path: &str| s.client.delete(format!("http://{}/_admin/repos/{path}", s.addr)).bearer_auth(ADMIN).send();
    assert_eq!(unstar("acme/pub/stars/bob").await.unwrap().status().as_u16(), 404, "not starred");
    assert_eq!(star(&s, "acme/pub", "bob").await, 201);
    assert_eq!(unstar("acme/pub/stars/bob").await.unwrap().status().as_u16(), 204);
    for gone in ["acme/pub/stars/bob", "acme/nope/stars/bob", "acme/pub/stars/nobody", "acme/pub/stars/acme"] {
        assert_eq!(unstar(gone).await.unwrap().status().as_u16(), 404, "{gone}");
    }
    let sent = crate::org_events::queued(&s, &t, hook, 3).await;
    let events: Vec<(&str, &str)> = sent.iter().map(|(e, a, _)| (e.as_str(), a.as_str())).collect();
    assert_eq!(events, [("watch", "started"), ("star", "created"), ("star", "deleted")]);
    let deleted = &sent[2].2;
    assert_eq!(deleted["starred_at"], Value::Null, "{deleted}");
    assert!(deleted.as_object().unwrap().contains_key("starred_at"), "{deleted}");
    assert_eq!((deleted["sender"]["login"].as_str(), deleted["repository"]["full_name"].as_str()), (Some("bob"), Some("acme/pub")));
    let (_, ev) = list(&s, "/repos/acme/pub/events", None).await;
    assert_eq!(types(&ev), ["WatchEvent"], "no feed entry for the removal");
    // The star is gone: starring again is a new star.
    assert_eq!(star(&s, "acme/pub", "bob").await, 201);
});
