//! Repositories through the API: get with the caller's permissions, the three lists, create,
//! update (rename → 301) and delete, their errors, activity and `repository` webhooks.
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::hooks::Recv;
use crate::schema_check::assert_conforms_to_snapshot;

/// alice owns acme, bob is a member, carol an outsider. acme/widgets is public, acme/vault and
/// alice/diary private. Returns `repo` tokens of alice, bob and carol.
async fn world(s: &Server) -> (String, String, String) {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", false).await;
    s.repo("acme", "vault", true).await;
    s.repo("alice", "diary", true).await;
    let t = |u: &'static str| async move { s.classic(u, &["repo", "delete_repo"]).await };
    (t("alice").await, t("bob").await, t("carol").await)
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap_or_else(|| panic!("not a list: {list}")).iter().map(|r| r["full_name"].as_str().unwrap().to_string()).collect()
}

both!(get_shape_and_permissions, |s| {
    let (alice, bob, carol) = world(&s).await;
    let (st, h, anon) = call(&s, Method::GET, "/repos/acme/widgets", None, None).await;
    assert_eq!(st, 200, "{anon}");
    assert_conforms_to_snapshot("FullRepository", &anon);
    assert_eq!(anon["full_name"], "acme/widgets");
    assert_eq!(anon["visibility"], "public");
    assert_eq!(anon["default_branch"], "main");
    assert_simple_user(&s, &anon["organization"], "acme", "Organization");
    assert_simple_user(&s, &anon["owner"], "acme", "Organization");
    // Anonymous callers have no permissions; there are no forks.
    for absent in ["permissions", "parent", "source"] {
        assert!(anon.get(absent).is_none(), "{absent}: {anon}");
    }
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo");

    // Permissions per role: organization owner, member, outsider.
    let perms = |v: &Value| v["permissions"].clone();
    let (_, _, a) = call(&s, Method::GET, "/repos/acme/widgets", Some(&alice), None).await;
    assert_eq!(perms(&a), json!({"admin": true, "maintain": true, "push": true, "triage": true, "pull": true}));
    let (_, _, b) = call(&s, Method::GET, "/repos/acme/widgets", Some(&bob), None).await;
    assert_eq!(perms(&b), json!({"admin": false, "maintain": false, "push": true, "triage": true, "pull": true}));
    let (_, _, c) = call(&s, Method::GET, "/repos/acme/widgets", Some(&carol), None).await;
    assert_eq!(perms(&c), json!({"admin": false, "maintain": false, "push": false, "triage": false, "pull": true}));
    assert_conforms_to_snapshot("FullRepository", &c);

    // Private repositories: invisible to outsiders, anonymous callers and tokens without `repo`.
    let public_only = s.classic("bob", &["public_repo"]).await;
    for t in [None, Some(carol.as_str()), Some(public_only.as_str())] {
        let (st, h, b) = call(&s, Method::GET, "/repos/acme/vault", t, None).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    let (st, _, v) = call(&s, Method::GET, "/repos/acme/vault", Some(&bob), None).await;
    assert_eq!((st, v["private"].clone(), v["visibility"].clone()), (200, json!(true), json!("private")), "{v}");
    let (st, _, d) = call(&s, Method::GET, "/repos/alice/diary", Some(&alice), None).await;
    assert_eq!(st, 200);
    assert!(d.get("organization").is_none(), "a user's repository has no organization: {d}");
    // Fine-grained tokens: metadata read is implicit, within their owner.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "alice", "permissions": {}})).await;
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/diary", Some(&fg), None).await;
    assert_eq!(st, 200);
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/vault", Some(&fg), None).await;
    assert_eq!(st, 404);

    // ETag and 304.
    let r = s.get("/repos/acme/widgets", Some(&bob)).await;
    let etag = header(r.headers(), "etag").to_string();
    assert!(!etag.is_empty());
    let r = s.req(Method::GET, "/repos/acme/widgets", Some(&bob)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 304);

    // Both API versions: `has_downloads` only in 2022-11-28.
    assert_eq!(anon["has_downloads"], true);
    let r = s.req(Method::GET, "/repos/acme/widgets", None).header("x-service-api-version", "2026-03-10").send().await.unwrap();
    let (st, _, v) = parts(r).await;
    assert_eq!(st, 200);
    assert!(v.get("has_downloads").is_none(), "{v}");
    assert_conforms_to_snapshot("FullRepository", &v);

    // Watchers are the subscribers.
    s.admin_post("/repos/acme/widgets/watchers", json!({"login": "carol"})).await;
    let (_, _, w) = call(&s, Method::GET, "/repos/acme/widgets", None, None).await;
    assert_eq!(w["subscribers_count"], 1, "{w}");
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/nothing", Some(&alice), None).await;
    assert_eq!(st, 404);
});

both!(lists, |s| {
    let (alice, bob, carol) = world(&s).await;
    for n in ["a1", "a2", "a3"] {
        s.repo("acme", n, false).await;
    }
    // An organization's repositories: private ones for members only.
    let (st, _, anon) = call(&s, Method::GET, "/orgs/acme/repos?sort=full_name", None, None).await;
    assert_eq!(st, 200, "{anon}");
    assert_eq!(names(&anon), ["acme/a1", "acme/a2", "acme/a3", "acme/widgets"]);
    anon.as_array().unwrap().iter().for_each(|r| assert_conforms_to_snapshot("RepositoryItem", r));
    assert!(anon[0].get("permissions").is_none());
    let (_, _, c) = call(&s, Method::GET, "/orgs/acme/repos?sort=full_name", Some(&carol), None).await;
    assert_eq!(names(&c), names(&anon));
    assert_eq!(c[0]["permissions"]["push"], false);
    let (_, _, b) = call(&s, Method::GET, "/orgs/acme/repos?sort=full_name&direction=desc", Some(&bob), None).await;
    assert_eq!(names(&b), ["acme/widgets", "acme/vault", "acme/a3", "acme/a2", "acme/a1"]);
    assert_eq!(b[0]["permissions"]["push"], true);
    let (_, _, p) = call(&s, Method::GET, "/orgs/acme/repos?type=private", Some(&bob), None).await;
    assert_eq!(names(&p), ["acme/vault"]);
    let (_, _, f) = call(&s, Method::GET, "/orgs/acme/repos?type=forks", Some(&bob), None).await;
    assert_eq!(names(&f), Vec::<String>::new());
    // Pagination with Link, newest first by default.
    let (st, h, page) = call(&s, Method::GET, "/orgs/acme/repos?per_page=2&page=2&sort=full_name", Some(&bob), None).await;
    assert_eq!(st, 200);
    assert_eq!(names(&page), ["acme/a3", "acme/vault"]);
    let link = header(&h, "link");
    assert!(link.contains("page=3") && link.contains("rel=\"next\"") && link.contains("rel=\"prev\""), "{link}");
    let (st, h, e) = call(&s, Method::GET, "/orgs/acme/repos?type=mine", Some(&bob), None).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\nFor 'type', \"mine\" is not one of all, public, private, forks, sources, member.");
    let (st, _, _) = call(&s, Method::GET, "/orgs/nope/repos", None, None).await;
    assert_eq!(st, 404);

    // The authenticated user's repositories: owned and through organization membership.
    let (st, h, e) = call(&s, Method::GET, "/user/repos", None, None).await;
    assert_error(st, &h, &e, 401, "Requires authentication");
    let (st, _, mine) = call(&s, Method::GET, "/user/repos", Some(&alice), None).await;
    assert_eq!(st, 200);
    assert_eq!(names(&mine), ["acme/a1", "acme/a2", "acme/a3", "acme/vault", "acme/widgets", "alice/diary"]);
    let (_, _, own) = call(&s, Method::GET, "/user/repos?affiliation=owner", Some(&alice), None).await;
    assert_eq!(names(&own), ["alice/diary"]);
    let (_, _, pr) = call(&s, Method::GET, "/user/repos?visibility=private", Some(&alice), None).await;
    assert_eq!(names(&pr), ["acme/vault", "alice/diary"]);
    let (_, _, none) = call(&s, Method::GET, "/user/repos", Some(&carol), None).await;
    assert_eq!(names(&none), Vec::<String>::new());
    let (st, h, e) = call(&s, Method::GET, "/user/repos?type=owner&visibility=all", Some(&alice), None).await;
    assert_error(st, &h, &e, 422, "If you specify visibility or affiliation, you cannot specify type.");

    // A user's repositories: public ones only.
    s.repo("alice", "blog", false).await;
    let (st, _, pub_) = call(&s, Method::GET, "/users/alice/repos", Some(&alice), None).await;
    assert_eq!(st, 200);
    assert_eq!(names(&pub_), ["alice/blog"]);
    let (st, _, _) = call(&s, Method::GET, "/users/nobody/repos", None, None).await;
    assert_eq!(st, 404);
});

/// The deliveries of the receiver whose `x-service-event` is `repository`, once `n` arrived.
async fn repository_events(recv: &Recv, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hits = recv.hits.lock().unwrap().clone();
        let events: Vec<Value> = hits
            .iter()
            .filter(|h| h.headers.get("x-service-event").is_some_and(|v| v == "repository"))
            .map(|h| serde_json::from_slice(&h.body).unwrap())
            .collect();
        if events.len() >= n {
            return events;
        }
        assert!(Instant::now() < deadline, "expected {n} repository deliveries, got {}", events.len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The one delivered event of `action`. Deliveries are sent concurrently, so they may arrive
/// in any order (as on the hosted platform).
fn delivered<'a>(got: &'a [Value], action: &str) -> &'a Value {
    let mut of = got.iter().filter(|e| e["action"] == action);
    let e = of.next().unwrap_or_else(|| panic!("no {action} delivery: {got:?}"));
    assert!(of.next().is_none(), "two {action} deliveries: {got:?}");
    e
}

both!(create, |s| {
    let (alice, bob, carol) = world(&s).await;
    let hooks = s.classic("alice", &["admin:org_hook"]).await;
    let (url, recv) = Recv::start().await;
    let body = json!({"name": "web", "events": ["repository", "create"], "config": {"url": url, "content_type": "json"}});
    let (st, _, _) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&hooks), Some(body)).await;
    assert_eq!(st, 201);

    // For the user: the name normalized, settings kept, an initial commit on `main`.
    let body = json!({"name": "new repo", "description": "Notes", "homepage": "https://example.com", "private": true, "auto_init": true});
    let (st, h, r) = call(&s, Method::POST, "/user/repos", Some(&alice), Some(body)).await;
    assert_eq!(st, 201, "{r}");
    assert_conforms_to_snapshot("FullRepository", &r);
    assert_eq!(r["full_name"], "alice/new-repo");
    assert_eq!((r["description"].clone(), r["homepage"].clone()), (json!("Notes"), json!("https://example.com")));
    assert_eq!((r["private"].clone(), r["default_branch"].clone()), (json!(true), json!("main")));
    assert_eq!(r["permissions"]["admin"], true);
    assert_eq!(header(&h, "location"), format!("{}/repos/alice/new-repo", s.base));
    let (st, _, got) = call(&s, Method::GET, "/repos/alice/new-repo", Some(&alice), None).await;
    assert_eq!((st, got["id"].clone()), (200, r["id"].clone()));
    assert!(is_ts(&got["pushed_at"]), "{got}");
    // The default branch exists: statuses can be set on it.
    let (st, _, stt) = call(&s, Method::POST, "/repos/alice/new-repo/statuses/main", Some(&alice), Some(json!({"state": "success"}))).await;
    assert_eq!(st, 201, "{stt}");
    // Without auto_init there is no commit yet.
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&alice), Some(json!({"name": "empty"}))).await;
    assert_eq!(st, 201);
    let (st, _, _) = call(&s, Method::POST, "/repos/alice/empty/statuses/main", Some(&alice), Some(json!({"state": "success"}))).await;
    assert_eq!(st, 422);

    // Errors.
    let (st, h, e) = call(&s, Method::POST, "/user/repos", Some(&alice), Some(json!({"name": "New-Repo"}))).await;
    assert_error(st, &h, &e, 422, "Repository creation failed.");
    assert_eq!(
        e["errors"],
        json!([{"resource": "Repository", "code": "custom", "field": "name", "message": "name already exists on this account"}])
    );
    let (st, h, e) = call(&s, Method::POST, "/user/repos", Some(&alice), Some(json!({"name": ".."}))).await;
    assert_error(st, &h, &e, 422, "Repository creation failed.");
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&alice), Some(json!({}))).await;
    assert_eq!(st, 422);
    let (st, h, e) = call(&s, Method::POST, "/user/repos", None, Some(json!({"name": "x"}))).await;
    assert_error(st, &h, &e, 401, "Requires authentication");
    let read_org = s.classic("alice", &["read:org"]).await;
    let (st, h, e) = call(&s, Method::POST, "/user/repos", Some(&read_org), Some(json!({"name": "x"}))).await;
    assert_error(st, &h, &e, 403, "Resource not accessible by personal access token");
    // `public_repo` creates public repositories only.
    let public_only = s.classic("alice", &["public_repo"]).await;
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&public_only), Some(json!({"name": "p", "private": true}))).await;
    assert_eq!(st, 403);
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&public_only), Some(json!({"name": "p"}))).await;
    assert_eq!(st, 201);
    // Fine-grained: Administration write.
    let fg_read = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "alice", "permissions": {"administration": "read"}}))
        .await;
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&fg_read), Some(json!({"name": "fg"}))).await;
    assert_eq!(st, 403);
    let fg = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "alice", "permissions": {"administration": "write"}}))
        .await;
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&fg), Some(json!({"name": "fg"}))).await;
    assert_eq!(st, 201);

    // In an organization: members create; outsiders see no organization.
    let (st, _, o) = call(&s, Method::POST, "/orgs/acme/repos", Some(&bob), Some(json!({"name": "tools", "visibility": "private"}))).await;
    assert_eq!(st, 201, "{o}");
    assert_eq!((o["full_name"].clone(), o["private"].clone()), (json!("acme/tools"), json!(true)));
    assert_simple_user(&s, &o["organization"], "acme", "Organization");
    let (st, h, e) = call(&s, Method::POST, "/orgs/acme/repos", Some(&carol), Some(json!({"name": "x"}))).await;
    assert_error(st, &h, &e, 404, "Not Found");
    let (st, _, e) = call(&s, Method::POST, "/orgs/acme/repos", Some(&bob), Some(json!({"name": "x", "visibility": "internal"}))).await;
    assert_eq!((st, e["errors"][0]["field"].clone()), (422, json!("visibility")), "{e}");
    let (st, _, e) = call(&s, Method::POST, "/orgs/acme/repos", Some(&bob), Some(json!({"name": "Widgets"}))).await;
    assert_eq!((st, e["errors"][0]["message"].clone()), (422, json!("name already exists on this account")));
    let (st, _, _) = call(&s, Method::POST, "/orgs/nope/repos", Some(&bob), Some(json!({"name": "x"}))).await;
    assert_eq!(st, 404);

    // Activity: CreateEvent of the repository in its feed; `repository` created to the
    // organization's webhook (and no `create` delivery: that one is for branches and tags).
    let (st, _, events) = call(&s, Method::GET, "/repos/acme/tools/events", Some(&bob), None).await;
    assert_eq!(st, 200);
    assert_eq!(events[0]["type"], "CreateEvent", "{events}");
    assert_conforms_to_snapshot("Event", &events[0]);
    assert_eq!(events[0]["payload"]["ref_type"], "repository");
    assert_eq!(events[0]["actor"]["login"], "bob");
    let delivered = repository_events(&recv, 1).await;
    assert_eq!(delivered[0]["action"], "created");
    assert_eq!(delivered[0]["repository"]["full_name"], "acme/tools");
    assert_eq!(delivered[0]["sender"]["login"], "bob");
    assert_eq!(delivered[0]["organization"]["login"], "acme");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let creates = recv.hits.lock().unwrap().iter().filter(|h| h.headers.get("x-service-event").is_some_and(|v| v == "create")).count();
    assert_eq!(creates, 0);
});

both!(update, |s| {
    let (alice, bob, carol) = world(&s).await;
    let hooks = s.classic("alice", &["admin:org_hook"]).await;
    let (url, recv) = Recv::start().await;
    let body = json!({"name": "web", "events": ["repository"], "config": {"url": url, "content_type": "json"}});
    call(&s, Method::POST, "/orgs/acme/hooks", Some(&hooks), Some(body)).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    s.push("acme/widgets", "refs/heads/dev", SHA).await;

    // Only admins.
    let (st, h, e) = call(&s, Method::PATCH, "/repos/acme/widgets", Some(&bob), Some(json!({"description": "x"}))).await;
    assert_error(st, &h, &e, 403, "Must have admin rights to Repository.");
    let (st, _, _) = call(&s, Method::PATCH, "/repos/acme/widgets", Some(&carol), Some(json!({"description": "x"}))).await;
    assert_eq!(st, 403);
    let (st, _, _) = call(&s, Method::PATCH, "/repos/acme/vault", Some(&carol), Some(json!({"description": "x"}))).await;
    assert_eq!(st, 404);
    let (st, h, e) = call(&s, Method::PATCH, "/repos/acme/widgets", None, Some(json!({"description": "x"}))).await;
    assert_error(st, &h, &e, 401, "Requires authentication");

    // The default branch must exist.
    let (st, h, e) = call(&s, Method::PATCH, "/repos/acme/widgets", Some(&alice), Some(json!({"default_branch": "nope"}))).await;
    assert_error(st, &h, &e, 422, "Validation Failed");
    assert_eq!(e["errors"][0]["message"], "The branch nope was not found. Please push that ref first or create it via the Git Data API.");

    // Settings, then a rename: the old name answers 301 to the new one.
    let body = json!({"description": "Gears", "homepage": "https://acme.example", "default_branch": "dev"});
    let (st, _, r) = call(&s, Method::PATCH, "/repos/acme/widgets", Some(&alice), Some(body)).await;
    assert_eq!(st, 200, "{r}");
    assert_conforms_to_snapshot("FullRepository", &r);
    assert_eq!((r["description"].clone(), r["default_branch"].clone()), (json!("Gears"), json!("dev")));
    let (st, _, r) = call(&s, Method::PATCH, "/repos/acme/widgets", Some(&alice), Some(json!({"name": "gadgets"}))).await;
    assert_eq!((st, r["full_name"].clone()), (200, json!("acme/gadgets")), "{r}");
    let (st, h, _) = call(&s, Method::GET, "/repos/acme/widgets", Some(&bob), None).await;
    assert_eq!(st, 301);
    assert_eq!(header(&h, "location"), format!("{}/repos/acme/gadgets", s.base));
    let (st, _, g) = call(&s, Method::GET, "/repos/acme/gadgets", Some(&bob), None).await;
    assert_eq!((st, g["homepage"].clone()), (200, json!("https://acme.example")));
    let (st, _, e) = call(&s, Method::PATCH, "/repos/acme/gadgets", Some(&alice), Some(json!({"name": "vault"}))).await;
    assert_eq!((st, e["errors"][0]["message"].clone()), (422, json!("name already exists on this account")), "{e}");

    // Visibility: private takes it out of the public's sight.
    let (st, _, r) = call(&s, Method::PATCH, "/repos/acme/gadgets", Some(&alice), Some(json!({"visibility": "private"}))).await;
    assert_eq!((st, r["private"].clone()), (200, json!(true)));
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/gadgets", None, None).await;
    assert_eq!(st, 404);
    let (st, _, r) = call(&s, Method::PATCH, "/repos/acme/gadgets", Some(&alice), Some(json!({"private": false}))).await;
    assert_eq!((st, r["visibility"].clone()), (200, json!("public")));

    // Made public: a PublicEvent in the feeds.
    let (st, _, events) = call(&s, Method::GET, "/repos/acme/gadgets/events", None, None).await;
    assert_eq!(st, 200);
    assert_eq!((events[0]["type"].clone(), events[0]["payload"].clone()), (json!("PublicEvent"), json!({})), "{events}");
    assert_conforms_to_snapshot("Event", &events[0]);

    let got = repository_events(&recv, 4).await;
    let mut actions: Vec<&str> = got.iter().map(|e| e["action"].as_str().unwrap()).collect();
    actions.sort_unstable();
    assert_eq!(actions, ["edited", "privatized", "publicized", "renamed"]);
    let edited = delivered(&got, "edited");
    assert_eq!(edited["changes"]["default_branch"]["from"], "main");
    assert_eq!(edited["changes"]["description"]["from"], Value::Null);
    let renamed = delivered(&got, "renamed");
    assert_eq!(renamed["changes"], json!({"repository": {"name": {"from": "widgets"}}}));
    assert_eq!(renamed["repository"]["name"], "gadgets");
});

both!(delete, |s| {
    let (alice, bob, _carol) = world(&s).await;
    let hooks = s.classic("alice", &["admin:org_hook"]).await;
    let (url, recv) = Recv::start().await;
    let body = json!({"name": "web", "events": ["repository"], "config": {"url": url, "content_type": "json"}});
    call(&s, Method::POST, "/orgs/acme/hooks", Some(&hooks), Some(body)).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    let (st, _, _) =
        call(&s, Method::POST, &format!("/repos/acme/widgets/statuses/{SHA}"), Some(&alice), Some(json!({"state": "success"}))).await;
    assert_eq!(st, 201);

    let (st, h, e) = call(&s, Method::DELETE, "/repos/acme/widgets", Some(&bob), None).await;
    assert_error(st, &h, &e, 403, "Must have admin rights to Repository.");
    let no_delete = s.classic("alice", &["repo"]).await;
    let (st, h, e) = call(&s, Method::DELETE, "/repos/acme/widgets", Some(&no_delete), None).await;
    assert_error(st, &h, &e, 403, "Must have admin rights to Repository.");
    let fg = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"administration": "read"}}))
        .await;
    let (st, h, e) = call(&s, Method::DELETE, "/repos/acme/widgets", Some(&fg), None).await;
    assert_error(st, &h, &e, 403, "Resource not accessible by personal access token");
    let (st, _, _) = call(&s, Method::DELETE, "/repos/acme/widgets", None, None).await;
    assert_eq!(st, 401);
    let (st, _, _) = call(&s, Method::DELETE, "/repos/acme/vault", None, None).await;
    assert_eq!(st, 404);

    let (st, _, body) = call(&s, Method::DELETE, "/repos/acme/widgets", Some(&alice), None).await;
    assert_eq!((st, body), (204, Value::Null));
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/widgets", Some(&alice), None).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::DELETE, "/repos/acme/widgets", Some(&alice), None).await;
    assert_eq!(st, 404);
    let (_, _, list) = call(&s, Method::GET, "/orgs/acme/repos", Some(&alice), None).await;
    assert_eq!(names(&list), ["acme/vault"]);

    // A new repository of the same name starts empty: nothing of the old one is left.
    let (st, _, _) = call(&s, Method::POST, "/orgs/acme/repos", Some(&alice), Some(json!({"name": "widgets"}))).await;
    assert_eq!(st, 201);
    let (st, _, _) = call(&s, Method::GET, &format!("/repos/acme/widgets/commits/{SHA}/statuses"), Some(&alice), None).await;
    assert_eq!(st, 404);

    let got = repository_events(&recv, 2).await;
    let deleted = delivered(&got, "deleted");
    assert_eq!(deleted["repository"]["full_name"], "acme/widgets");
    assert_eq!(deleted["sender"]["login"], "alice");
    delivered(&got, "created");
});
