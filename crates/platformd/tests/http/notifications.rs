//! Notifications (document 3): threads from the control plane and from activity (watchers,
//! authors), list filters and pagination, conditional polling, marking read and done, thread
//! subscriptions, token kinds and visibility.
use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use reqwest::Method;
use serde_json::{json, Value};

async fn world(s: &Server) -> String {
    s.user("alice").await;
    s.user("bob").await;
    s.repo("alice", "proj", false).await;
    s.classic("bob", &["notifications"]).await
}

/// Delivers a control-plane notification to `login`; returns the thread.
async fn notify(s: &Server, login: &str, repo: &str, title: &str, reason: &str) -> Value {
    let url = format!("{}/repos/{repo}/issues/{}", s.base, title.len());
    s.admin_post(
        "/notifications",
        json!({"login": login, "repo": repo, "reason": reason,
        "subject": {"title": title, "type": "Issue", "url": url}}),
    )
    .await
}

async fn list(s: &Server, q: &str, t: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.get(&format!("/notifications{q}"), Some(t)).await).await
}

fn titles(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|t| t["subject"]["title"].as_str().unwrap().to_string()).collect()
}

async fn send(s: &Server, m: Method, path: &str, t: &str, body: Option<Value>) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.req(m, path, Some(t));
    if let Some(b) = body {
        r = r.json(&b);
    }
    parts(r.send().await.unwrap()).await
}

both!(thread_shape_and_operations, |s| {
    let bob = world(&s).await;
    let created = notify(&s, "bob", "alice/proj", "Fix the build", "mention").await;
    let id = created["id"].as_str().unwrap().to_string();
    let (st, h, body) = list(&s, "", &bob).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(header(&h, "x-poll-interval"), "60");
    assert!(!header(&h, "last-modified").is_empty());
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "notifications, repo");
    let t = &body[0];
    assert_conforms_to_snapshot("Thread", t);
    assert_eq!(t["id"], id.as_str());
    assert_minimal_repository(&s, &t["repository"], "alice", "proj", false);
    assert_eq!(t["subject"]["title"], "Fix the build");
    assert_eq!(t["subject"]["type"], "Issue");
    assert!(t["subject"]["url"].as_str().unwrap().starts_with(&s.base));
    assert!(t["subject"]["latest_comment_url"].is_string());
    assert_eq!(t["reason"], "mention");
    assert_eq!(t["unread"], true);
    assert!(is_ts(&t["updated_at"]));
    assert!(t["last_read_at"].is_null());
    assert_eq!(t["url"], format!("{}/notifications/threads/{id}", s.base));
    assert_eq!(t["subscription_url"], format!("{}/notifications/threads/{id}/subscription", s.base));

    let path = format!("/notifications/threads/{id}");
    let (st, h, got) = send(&s, Method::GET, &path, &bob, None).await;
    assert_eq!(st, 200);
    assert_eq!(&got, t);
    assert_eq!(header(&h, "x-poll-interval"), "60");

    // Subscription: default, ignore, subscribe, delete.
    let sub = format!("{path}/subscription");
    let (st, _, b) = send(&s, Method::GET, &sub, &bob, None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("ThreadSubscription", &b);
    assert_eq!(b["subscribed"], true);
    assert_eq!(b["ignored"], false);
    assert_eq!(b["reason"], "mention");
    assert!(is_ts(&b["created_at"]));
    assert_eq!(b["url"], format!("{}{sub}", s.base));
    assert_eq!(b["thread_url"], format!("{}{path}", s.base));
    let (st, _, b) = send(&s, Method::PUT, &sub, &bob, Some(json!({"ignored": true}))).await;
    assert_eq!((st, b["subscribed"].clone(), b["ignored"].clone()), (200, json!(false), json!(true)));
    let (st, _, b) = send(&s, Method::PUT, &sub, &bob, Some(json!({}))).await;
    assert_eq!((st, b["subscribed"].clone(), b["ignored"].clone(), b["reason"].clone()), (200, json!(true), json!(false), Value::Null));
    let (st, _, b) = send(&s, Method::PUT, &sub, &bob, Some(json!({"ignored": "yes"}))).await;
    assert_eq!(st, 422, "{b}");
    let (st, _, _) = send(&s, Method::DELETE, &sub, &bob, None).await;
    assert_eq!(st, 204);
    let (_, _, b) = send(&s, Method::GET, &sub, &bob, None).await;
    assert_eq!((b["subscribed"].clone(), b["ignored"].clone(), b["created_at"].clone()), (json!(false), json!(false), Value::Null));
    // Muted: a watcher-style notification is dropped, a mention unmutes.
    let url = format!("{}/repos/alice/proj/issues/{}", s.base, "Fix the build".len());
    let r = s.client.post(format!("http://{}/_admin/notifications", s.addr)).bearer_auth(ADMIN)
        .json(&json!({"login": "bob", "repo": "alice/proj", "reason": "subscribed", "subject": {"title": "Fix the build", "type": "Issue", "url": url}}))
        .send().await.unwrap();
    assert_eq!(r.status().as_u16(), 422);
    notify(&s, "bob", "alice/proj", "Fix the build", "mention").await;
    let (_, _, b) = send(&s, Method::GET, &sub, &bob, None).await;
    assert_eq!(b["subscribed"], true);

    // Mark read: 205, no body; the thread stays in `all`.
    let (st, _, b) = send(&s, Method::PATCH, &path, &bob, None).await;
    assert_eq!((st, b), (205, Value::Null));
    let (_, _, got) = send(&s, Method::GET, &path, &bob, None).await;
    assert_eq!(got["unread"], false);
    assert!(is_ts(&got["last_read_at"]));
    assert_eq!(list(&s, "", &bob).await.2, json!([]));
    assert_eq!(list(&s, "?all=true", &bob).await.2.as_array().unwrap().len(), 1);

    // Done: 204, out of every list until new activity reopens it.
    let (st, _, _) = send(&s, Method::DELETE, &path, &bob, None).await;
    assert_eq!(st, 204);
    assert_eq!(list(&s, "?all=true", &bob).await.2, json!([]));
    s.advance(5).await;
    notify(&s, "bob", "alice/proj", "Fix the build", "comment").await;
    let (_, _, b) = list(&s, "", &bob).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert_eq!(b[0]["id"], id.as_str());
    assert_eq!(b[0]["reason"], "comment");

    // Unknown and malformed thread ids.
    for p in ["/notifications/threads/999999", "/notifications/threads/abc", "/notifications/threads/99999999999999999999999"] {
        let (st, h, b) = send(&s, Method::GET, p, &bob, None).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
});

both!(token_kinds_and_visibility, |s| {
    let bob = world(&s).await;
    s.user("carol").await;
    notify(&s, "bob", "alice/proj", "Hello", "assign").await;
    let id = list(&s, "", &bob).await.2[0]["id"].as_str().unwrap().to_string();
    let path = format!("/notifications/threads/{id}");
    // No credentials: 401.
    let (st, h, b) = parts(s.get("/notifications", None).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // `repo` works; other scopes and token kinds are 403.
    let repo = s.classic("bob", &["repo"]).await;
    assert_eq!(list(&s, "", &repo).await.0, 200);
    let other = s.classic("bob", &["read:org"]).await;
    let (st, h, b) = list(&s, "", &other).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "alice", "permissions": {"statuses": "read"}})).await;
    for (m, p) in [
        (Method::GET, "/notifications".to_string()),
        (Method::GET, path.clone()),
        (Method::PATCH, path.clone()),
        (Method::DELETE, path.clone()),
        (Method::GET, format!("{path}/subscription")),
    ] {
        let (st, h, b) = send(&s, m, &p, &fg, None).await;
        assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    }
    let app = s.admin_post("/apps", json!({"name": "helper", "owner": "alice", "kind": "app"})).await;
    let u2s = s
        .token(json!({"kind": "user_to_server", "login": "bob", "client_id": app["client_id"], "permissions": {"statuses": "read"}}))
        .await;
    let (st, h, b) = list(&s, "", &u2s).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
    // Another user's thread is 404; their list is their own.
    let carol = s.classic("carol", &["notifications"]).await;
    let (st, h, b) = send(&s, Method::GET, &path, &carol, None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(send(&s, Method::PATCH, &path, &carol, None).await.0, 404);
    assert_eq!(list(&s, "", &carol).await.2, json!([]));
    // A private repository the user cannot see: refused by the control plane; threads on an
    // organization repository vanish when the user leaves the organization.
    s.repo("alice", "secret", true).await;
    let r = s
        .client
        .post(format!("http://{}/_admin/notifications", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"login": "bob", "repo": "alice/secret", "reason": "mention", "subject": {"title": "x", "type": "Issue"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
    let secret = s
        .admin_post(
            "/notifications",
            json!({"login": "alice", "repo": "alice/secret", "reason": "author", "subject": {"title": "Mine", "type": "Issue"}}),
        )
        .await;
    assert_eq!(secret["subject"]["url"], format!("{}/repos/alice/secret", s.base));
    let alice = s.classic("alice", &["notifications"]).await;
    assert_eq!(titles(&list(&s, "", &alice).await.2), ["Mine"]);
    let secret_path = format!("/notifications/threads/{}", secret["id"].as_str().unwrap());
    assert_eq!(send(&s, Method::GET, &secret_path, &bob, None).await.0, 404);
});

both!(filters_pagination_and_order, |s| {
    let bob = world(&s).await;
    // t0 subscribed, t1 mention, … one second apart.
    for i in 0..5 {
        notify(&s, "bob", "alice/proj", &format!("n{i}{}", "x".repeat(i)), if i % 2 == 0 { "subscribed" } else { "mention" }).await;
        s.advance(10).await;
    }
    let (_, _, b) = list(&s, "", &bob).await;
    assert_eq!(titles(&b), ["n4xxxx", "n3xxx", "n2xx", "n1x", "n0"]);
    let (_, _, b) = list(&s, "?participating=true", &bob).await;
    assert_eq!(titles(&b), ["n3xxx", "n1x"]);
    let t2 = b[0]["updated_at"].as_str().unwrap().to_string();
    let (_, _, b) = list(&s, &format!("?since={t2}"), &bob).await;
    assert_eq!(titles(&b), ["n4xxxx", "n3xxx"]);
    let (_, _, b) = list(&s, &format!("?before={t2}"), &bob).await;
    assert_eq!(titles(&b), ["n2xx", "n1x", "n0"]);
    // Paging with Link.
    let (st, h, b) = list(&s, "?per_page=2&page=2", &bob).await;
    assert_eq!(st, 200);
    assert_eq!(titles(&b), ["n2xx", "n1x"]);
    let link = header(&h, "link");
    assert!(link.contains(&format!("<{}/notifications?per_page=2&page=3>; rel=\"next\"", s.base)), "{link}");
    assert!(link.contains("rel=\"prev\"") && link.contains("rel=\"first\"") && link.contains("rel=\"last\""), "{link}");
    // Validation: 422.
    for q in ["?all=maybe", "?participating=2x", "?since=yesterday", "?before=nope", "?per_page=abc"] {
        let (st, _, b) = list(&s, q, &bob).await;
        assert_eq!(st, 422, "{q}: {b}");
    }
    // Default and maximum page size 50.
    for i in 0..55 {
        s.admin_post(
            "/notifications",
            json!({"login": "bob", "repo": "alice/proj", "reason": "mention",
            "subject": {"title": format!("bulk {i}"), "type": "Issue"}}),
        )
        .await;
    }
    let (_, h, b) = list(&s, "", &bob).await;
    assert_eq!(b.as_array().unwrap().len(), 50);
    assert!(header(&h, "link").contains("page=2>; rel=\"next\""));
    let (_, _, b) = list(&s, "?per_page=100", &bob).await;
    assert_eq!(b.as_array().unwrap().len(), 50);
    let (_, _, b) = list(&s, "?page=2", &bob).await;
    assert_eq!(b.as_array().unwrap().len(), 10);
});

both!(conditional_polling_is_free, |s| {
    let bob = world(&s).await;
    notify(&s, "bob", "alice/proj", "First", "mention").await;
    let (st, h, _) = list(&s, "", &bob).await;
    assert_eq!(st, 200);
    let lm = header(&h, "last-modified").to_string();
    let used: i64 = header(&h, "x-ratelimit-used").parse().unwrap();
    for _ in 0..3 {
        let r = s.req(Method::GET, "/notifications", Some(&bob)).header("if-modified-since", &lm).send().await.unwrap();
        let (st, h, body) = parts(r).await;
        assert_eq!(st, 304);
        assert_eq!(body, Value::Null);
        assert_eq!(header(&h, "x-ratelimit-used").parse::<i64>().unwrap(), used, "a 304 is not charged");
        assert_eq!(header(&h, "x-poll-interval"), "60");
        assert_eq!(header(&h, "last-modified"), lm);
    }
    // A change in the same second still moves Last-Modified forward.
    notify(&s, "bob", "alice/proj", "Second", "mention").await;
    let r = s.req(Method::GET, "/notifications", Some(&bob)).header("if-modified-since", &lm).send().await.unwrap();
    let (st, h, body) = parts(r).await;
    assert_eq!(st, 200);
    assert_eq!(titles(&body).len(), 2);
    assert_ne!(header(&h, "last-modified"), lm);
    assert_eq!(header(&h, "x-ratelimit-used").parse::<i64>().unwrap(), used + 1);
    // Marking read changes it too; an older If-Modified-Since is a 200.
    let lm2 = header(&h, "last-modified").to_string();
    let id = body[0]["id"].as_str().unwrap().to_string();
    send(&s, Method::PATCH, &format!("/notifications/threads/{id}"), &bob, None).await;
    let r = s.req(Method::GET, "/notifications", Some(&bob)).header("if-modified-since", &lm2).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // The thread itself answers conditionally as well.
    let (_, h, _) = send(&s, Method::GET, &format!("/notifications/threads/{id}"), &bob, None).await;
    let lm3 = header(&h, "last-modified").to_string();
    let r = s.req(Method::GET, &format!("/notifications/threads/{id}"), Some(&bob)).header("if-modified-since", &lm3).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 304);
});

both!(mark_all_read_with_last_read_at, |s| {
    let bob = world(&s).await;
    notify(&s, "bob", "alice/proj", "Old", "mention").await;
    s.advance(60).await;
    let (_, _, b) = list(&s, "", &bob).await;
    let cut = b[0]["updated_at"].as_str().unwrap().to_string();
    s.advance(60).await;
    notify(&s, "bob", "alice/proj", "Newer", "mention").await;
    let (st, _, body) = send(&s, Method::PUT, "/notifications", &bob, Some(json!({"last_read_at": cut, "read": true}))).await;
    assert_eq!((st, body), (205, Value::Null));
    assert_eq!(titles(&list(&s, "", &bob).await.2), ["Newer"]);
    let (_, _, all) = list(&s, "?all=true", &bob).await;
    assert_eq!(all[1]["last_read_at"], cut.as_str());
    // Body errors.
    let (st, _, _) = send(&s, Method::PUT, "/notifications", &bob, Some(json!({"last_read_at": "soon"}))).await;
    assert_eq!(st, 422);
    let (st, _, _) = send(&s, Method::PUT, "/notifications", &bob, Some(json!({"read": "yes"}))).await;
    assert_eq!(st, 422);
    // Without a body: everything up to now.
    let (st, _, _) = send(&s, Method::PUT, "/notifications", &bob, None).await;
    assert_eq!(st, 205);
    assert_eq!(list(&s, "", &bob).await.2, json!([]));
});

both!(mark_all_read_in_the_background, Options::with(|c| c.notifications.sync_limit = 3), |s| {
    let bob = world(&s).await;
    for i in 0..10 {
        s.admin_post(
            "/notifications",
            json!({"login": "bob", "repo": "alice/proj", "reason": "mention",
            "subject": {"title": format!("t{i}"), "type": "Issue"}}),
        )
        .await;
    }
    let (st, h, body) = send(&s, Method::PUT, "/notifications", &bob, Some(json!({}))).await;
    assert_eq!(st, 202);
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(
        body,
        json!({"message": "Unread notifications couldn't be marked in a single request. Notifications are being marked as read in the background."})
    );
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = list(&s, "", &bob).await.2.as_array().unwrap().len();
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(left, 0, "the background task finished");
    // At or under the limit: synchronous.
    for i in 0..3 {
        s.admin_post(
            "/notifications",
            json!({"login": "bob", "repo": "alice/proj", "reason": "mention",
            "subject": {"title": format!("u{i}"), "type": "Issue"}}),
        )
        .await;
    }
    assert_eq!(send(&s, Method::PUT, "/notifications", &bob, None).await.0, 205);
    assert_eq!(list(&s, "", &bob).await.2, json!([]));
});

// The 202 was an acknowledgement: a graceful shutdown (a restart here) finishes the job first.
both!(shutdown_finishes_a_background_mark_all_read, Options::with(|c| c.notifications.sync_limit = 2), |s| {
    let bob = world(&s).await;
    for i in 0..60 {
        s.admin_post(
            "/notifications",
            json!({"login": "bob", "repo": "alice/proj", "reason": "mention",
            "subject": {"title": format!("t{i}"), "type": "Issue"}}),
        )
        .await;
    }
    assert_eq!(send(&s, Method::PUT, "/notifications", &bob, Some(json!({}))).await.0, 202);
    let s = s.restart().await;
    assert_eq!(list(&s, "", &bob).await.2, json!([]), "every thread read");
});

both!(reason_replacement, |s| {
    let bob = world(&s).await;
    notify(&s, "bob", "alice/proj", "Thread", "subscribed").await;
    assert_eq!(list(&s, "", &bob).await.2[0]["reason"], "subscribed");
    notify(&s, "bob", "alice/proj", "Thread", "review_requested").await;
    let (_, _, b) = list(&s, "", &bob).await;
    assert_eq!(b.as_array().unwrap().len(), 1, "same subject, same thread");
    assert_eq!(b[0]["reason"], "review_requested");
    // The reason stays until a different one arrives.
    let id = b[0]["id"].as_str().unwrap().to_string();
    send(&s, Method::PATCH, &format!("/notifications/threads/{id}"), &bob, None).await;
    assert_eq!(send(&s, Method::GET, &format!("/notifications/threads/{id}"), &bob, None).await.2["reason"], "review_requested");
    notify(&s, "bob", "alice/proj", "Thread", "subscribed").await;
    let (_, _, b) = list(&s, "", &bob).await;
    assert_eq!((b[0]["reason"].clone(), b[0]["unread"].clone()), (json!("subscribed"), json!(true)));
    // Unknown reasons are refused by the control plane.
    let r = s
        .client
        .post(format!("http://{}/_admin/notifications", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"login": "bob", "repo": "alice/proj", "reason": "gossip", "subject": {"title": "x", "type": "Issue"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
});

/// Polls the list until `n` threads appear (the activity consumer runs in the background).
async fn wait_for(s: &Server, t: &str, n: usize) -> Value {
    for _ in 0..200 {
        let (_, _, b) = list(s, "?all=true", t).await;
        if b.as_array().is_some_and(|a| a.len() >= n) {
            return b;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("{n} threads never appeared");
}

both!(watchers_and_authors_from_activity, |s| {
    let bob = world(&s).await;
    s.user("carol").await;
    let carol = s.classic("carol", &["notifications"]).await;
    let alice = s.classic("alice", &["repo"]).await;
    s.admin_post("/repos/alice/proj/watchers", json!({"login": "bob"})).await;
    s.admin_post("/repos/alice/proj/watchers", json!({"login": "bob"})).await; // idempotent
    s.admin_post("/repos/alice/proj/watchers", json!({"login": "alice"})).await;
    // alice pushes: bob (watcher) is notified, alice (the actor) is not.
    s.push("alice/proj", "refs/heads/main", SHA).await;
    let b = wait_for(&s, &bob, 1).await;
    assert_eq!(b[0]["reason"], "subscribed");
    assert_eq!(b[0]["subject"]["type"], "Commit");
    assert_eq!(b[0]["subject"]["url"], format!("{}/repos/alice/proj/commits/{SHA}", s.base));
    // carol creates a status on alice's commit: alice is its `author`, bob a watcher; same thread for bob.
    let cs = s.classic("carol", &["repo"]).await;
    let r = s.post(&format!("/repos/alice/proj/statuses/{SHA}"), Some(&cs), json!({"state": "success", "context": "ci"})).await;
    assert_eq!(r.status().as_u16(), 403, "carol has no push access");
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["carol", "bob"]})).await;
    s.repo("acme", "tool", false).await;
    s.admin_post("/repos/acme/tool/watchers", json!({"login": "bob"})).await;
    s.admin_post("/repos/acme/tool/refs", json!({"ref": "refs/heads/main", "sha": SHA2, "pusher": "alice"})).await;
    let r = s.post(&format!("/repos/acme/tool/statuses/{SHA2}"), Some(&cs), json!({"state": "failure", "context": "ci/build"})).await;
    assert_eq!(r.status().as_u16(), 201);
    let a = wait_for(&s, &alice, 1).await;
    assert_eq!(a[0]["reason"], "author");
    assert_eq!(a[0]["subject"]["title"], format!("ci/build: failure on {}", &SHA2[..7]));
    assert_eq!(a[0]["subject"]["latest_comment_url"], format!("{}/repos/acme/tool/statuses/{SHA2}", s.base));
    let b = wait_for(&s, &bob, 2).await;
    let tool: Vec<&Value> = b.as_array().unwrap().iter().filter(|t| t["repository"]["full_name"] == "acme/tool").collect();
    assert_eq!(tool.len(), 1, "push and status of one commit share a thread: {b}");
    assert_eq!(tool[0]["reason"], "subscribed");
    assert!(tool[0]["subject"]["title"].as_str().unwrap().starts_with("ci/build"));
    // carol (the actor) got nothing.
    assert_eq!(list(&s, "?all=true", &carol).await.2, json!([]));
    // Watching needs a known user.
    let r = s
        .client
        .post(format!("http://{}/_admin/repos/acme/tool/watchers", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"login": "nobody"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
});

both!(consumer_resumes_after_restart, |s| {
    let bob = world(&s).await;
    s.admin_post("/repos/alice/proj/watchers", json!({"login": "bob"})).await;
    s.push("alice/proj", "refs/heads/main", SHA).await;
    wait_for(&s, &bob, 1).await;
    let s = s.restart().await;
    s.push("alice/proj", "refs/heads/dev", SHA2).await;
    let b = wait_for(&s, &bob, 2).await;
    assert_eq!(b.as_array().unwrap().len(), 2, "each activity handled once: {b}");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(list(&s, "?all=true", &bob).await.2.as_array().unwrap().len(), 2);
});

both!(openapi_documents_notifications, |s| {
    let doc: Value = s.client.get(format!("http://{}/openapi.json", s.addr)).send().await.unwrap().json().await.unwrap();
    let list = &doc["paths"]["/notifications"]["get"];
    assert_eq!(list["operationId"], "notifications/list");
    assert!(list["responses"]["200"]["headers"]["Last-Modified"].is_object());
    assert!(list["responses"]["200"]["headers"]["X-Poll-Interval"].is_object());
    assert!(doc["components"]["headers"]["Last-Modified"].is_object());
    assert!(doc["components"]["schemas"]["Thread"].is_object());
    assert!(doc["components"]["schemas"]["ThreadSubscription"].is_object());
    for (p, m) in [
        ("/notifications", "put"),
        ("/notifications/threads/{thread_id}", "patch"),
        ("/notifications/threads/{thread_id}", "delete"),
        ("/notifications/threads/{thread_id}/subscription", "get"),
        ("/notifications/threads/{thread_id}/subscription", "put"),
        ("/notifications/threads/{thread_id}/subscription", "delete"),
    ] {
        assert!(doc["paths"][p][m]["operationId"].is_string(), "{m} {p}");
    }
    assert!(doc["paths"]["/notifications"]["put"]["responses"]["205"].is_object());
    assert!(doc["paths"]["/notifications"]["put"]["responses"]["202"].is_object());
});
