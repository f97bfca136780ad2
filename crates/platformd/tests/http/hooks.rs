//! Organization webhooks: every operation and its codes, and real deliveries to a local
//! receiver (headers, HMAC over the exact body, form encoding), the deliveries list, redelivery,
//! opt-in retries with auto-disable, the SSRF guard, and durability across a graceful shutdown
//! and `kill -9`.
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

// ---------------------------------------------------------------------------------------------
// A local receiver.

#[derive(Clone)]
pub struct Hit {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Hit {
    pub(crate) fn h(&self, name: &str) -> String {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
    }
    /// The JSON payload (decoding a form body).
    pub(crate) fn payload(&self) -> Value {
        let text = std::str::from_utf8(&self.body).unwrap();
        if let Some(p) = text.strip_prefix("payload=") {
            let decoded = platform_api::request::percent_decode(p);
            serde_json::from_str(&decoded).unwrap()
        } else {
            serde_json::from_str(text).unwrap()
        }
    }
}

#[derive(Clone, Default)]
pub struct Recv {
    pub hits: Arc<Mutex<Vec<Hit>>>,
    pub started: Arc<AtomicUsize>,
    pub status: Arc<AtomicU16>,
    pub hang: Arc<AtomicBool>,
    /// Milliseconds each answer takes.
    pub delay_ms: Arc<AtomicU64>,
}

async fn handle(State(r): State<Recv>, headers: HeaderMap, body: Bytes) -> (StatusCode, [(&'static str, &'static str); 1], &'static str) {
    r.started.fetch_add(1, Ordering::SeqCst);
    if r.hang.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    tokio::time::sleep(Duration::from_millis(r.delay_ms.load(Ordering::SeqCst))).await;
    r.hits.lock().unwrap().push(Hit { headers, body });
    let code = StatusCode::from_u16(r.status.load(Ordering::SeqCst)).unwrap();
    (code, [("x-receiver", "test")], "thanks")
}

impl Recv {
    pub async fn start_on(listener: tokio::net::TcpListener) -> (String, Recv) {
        let r = Recv::default();
        r.status.store(200, Ordering::SeqCst);
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let app = axum::Router::new().route("/hook", axum::routing::post(handle)).with_state(r.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (url, r)
    }

    pub async fn start() -> (String, Recv) {
        Recv::start_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await
    }

    pub fn count(&self) -> usize {
        self.hits.lock().unwrap().len()
    }

    /// Waits until `n` deliveries arrived; returns them.
    pub async fn wait(&self, n: usize, secs: u64) -> Vec<Hit> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let hits = self.hits.lock().unwrap().clone();
            if hits.len() >= n {
                return hits;
            }
            assert!(Instant::now() < deadline, "expected {n} deliveries, got {}", hits.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn hmac256(secret: &str, body: &[u8]) -> String {
    let mut m = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    m.update(body);
    format!("sha256={}", hex::encode(m.finalize().into_bytes()))
}

fn hmac1(secret: &str, body: &[u8]) -> String {
    let mut m = Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()).unwrap();
    m.update(body);
    format!("sha1={}", hex::encode(m.finalize().into_bytes()))
}

// ---------------------------------------------------------------------------------------------
// World.

/// alice owns acme, bob is a member, carol an outsider; acme/widgets is public. Returns alice's
/// `admin:org_hook` token.
pub(crate) async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", false).await;
    s.classic("alice", &["admin:org_hook"]).await
}

pub(crate) async fn create_hook(s: &Server, t: &str, body: Value) -> Value {
    let (st, _, b) = call(s, Method::POST, "/orgs/acme/hooks", Some(t), Some(body)).await;
    assert_eq!(st, 201, "{b}");
    assert_conforms_to_snapshot("OrgHook", &b);
    b
}

/// Waits until the hook's newest delivery has been attempted.
async fn deliveries(s: &Server, t: &str, hook: i64, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (st, _, b) = call(s, Method::GET, &format!("/orgs/acme/hooks/{hook}/deliveries?per_page=100"), Some(t), None).await;
        assert_eq!(st, 200, "{b}");
        let list = b.as_array().unwrap().clone();
        list.iter().for_each(|d| assert_conforms_to_snapshot("HookDeliveryItem", d));
        if list.len() >= n && list.iter().all(|d| d["status"] != "pending") {
            return list;
        }
        assert!(Instant::now() < deadline, "deliveries did not finish: {b}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Operations.

both!(crud_and_shapes, |s| {
    let t = world(&s).await;
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/hooks", Some(&t), None).await;
    assert_eq!((st, b.clone()), (200, json!([])));

    // Create: defaults, masked secret, Location.
    let (st, h, hook) = call(
        &s,
        Method::POST,
        "/orgs/acme/hooks",
        Some(&t),
        Some(json!({"name": "web", "config": {"url": "http://127.0.0.1:9/a", "secret": "s3cret"}})),
    )
    .await;
    assert_eq!(st, 201, "{hook}");
    let id = hook["id"].as_i64().unwrap();
    let base = format!("{}/orgs/acme/hooks/{id}", s.base);
    assert_eq!(header(&h, "location"), base);
    assert_eq!(hook["url"], base);
    assert_eq!(hook["ping_url"], format!("{base}/pings"));
    assert_eq!(hook["deliveries_url"], format!("{base}/deliveries"));
    assert_eq!(hook["name"], "web");
    assert_eq!(hook["type"], "Organization");
    assert_eq!(hook["events"], json!(["push"]));
    assert_eq!(hook["active"], true);
    assert_eq!(hook["config"], json!({"content_type": "form", "insecure_ssl": "0", "secret": "********", "url": "http://127.0.0.1:9/a"}));
    assert_conforms_to_snapshot("OrgHook", &hook);
    assert!(!hook.to_string().contains("s3cret"));

    let (st, _, got) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}"), Some(&t), None).await;
    assert_eq!((st, &got), (200, &hook));
    let (st, _, cfg) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/config"), Some(&t), None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("WebhookConfig", &cfg);
    assert_eq!(cfg, json!({"content_type": "form", "insecure_ssl": "0", "secret": "********", "url": "http://127.0.0.1:9/a"}));

    // Wildcard events, json, insecure_ssl as a number.
    let h2 = create_hook(
        &s,
        &t,
        json!({"name": "web", "events": ["*"], "active": false,
        "config": {"url": "https://hooks.example/b", "content_type": "json", "insecure_ssl": 1}}),
    )
    .await;
    assert_eq!(h2["events"], json!(["*"]));
    assert_eq!(h2["active"], false);
    assert_eq!(h2["config"], json!({"content_type": "json", "insecure_ssl": "1", "url": "https://hooks.example/b"}));
    let (st, hd, list) = call(&s, Method::GET, "/orgs/acme/hooks?per_page=1", Some(&t), None).await;
    assert_eq!(st, 200);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert!(header(&hd, "link").contains("rel=\"next\""), "{hd:?}");

    // Update without a secret removes it; events and active take their defaults.
    let (st, _, up) = call(
        &s,
        Method::PATCH,
        &format!("/orgs/acme/hooks/{id}"),
        Some(&t),
        Some(json!({"config": {"url": "http://127.0.0.1:9/c", "content_type": "json"}})),
    )
    .await;
    assert_eq!(st, 200, "{up}");
    assert_eq!(up["config"], json!({"content_type": "json", "insecure_ssl": "0", "url": "http://127.0.0.1:9/c"}));
    assert_eq!(up["events"], json!(["push"]));
    // With a secret it is kept (masked); events replaced.
    let (_, _, up) = call(
        &s,
        Method::PATCH,
        &format!("/orgs/acme/hooks/{id}"),
        Some(&t),
        Some(json!({"events": ["push", "status"], "config": {"url": "http://127.0.0.1:9/c", "secret": "new"}})),
    )
    .await;
    assert_eq!(up["config"]["secret"], "********");
    assert_eq!(up["events"], json!(["push", "status"]));
    // Config update: partial, keeps the secret when none is sent.
    let (st, _, cfg) =
        call(&s, Method::PATCH, &format!("/orgs/acme/hooks/{id}/config"), Some(&t), Some(json!({"insecure_ssl": "1"}))).await;
    assert_eq!(st, 200, "{cfg}");
    assert_eq!(cfg, json!({"content_type": "json", "insecure_ssl": "1", "secret": "********", "url": "http://127.0.0.1:9/c"}));
    let (st, _, cfg) =
        call(&s, Method::PATCH, &format!("/orgs/acme/hooks/{id}/config"), Some(&t), Some(json!({"content_type": "xml"}))).await;
    assert_eq!(st, 422, "{cfg}");

    // Validation.
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&t), Some(json!({"name": "web"}))).await;
    assert_eq!(st, 422);
    assert_eq!(b["message"], "Validation Failed");
    assert_eq!(b["errors"], json!([{"resource": "Hook", "field": "config", "code": "missing_field"}]));
    assert_eq!(b["documentation_url"], "https://docs.service.example/rest/orgs/webhooks#create-an-organization-webhook");
    for bad in [
        json!({"name": "email", "config": {"url": "http://x.example"}}),
        json!({"name": "web", "config": {}}),
        json!({"name": "web", "config": {"url": "not a url"}}),
        json!({"name": "web", "config": {"url": "http://x.example", "content_type": "xml"}}),
        json!({"name": "web", "config": {"url": "http://x.example", "insecure_ssl": "2"}}),
    ] {
        let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&t), Some(bad.clone())).await;
        assert_eq!(st, 422, "{bad} -> {b}");
        assert_eq!(b["message"], "Validation Failed", "{bad} -> {b}");
    }
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&t), Some(json!({"config": {"url": "http://x.example"}}))).await;
    assert_eq!(st, 422);
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    let (st, _, b) = call(
        &s,
        Method::POST,
        "/orgs/acme/hooks",
        Some(&t),
        Some(json!({"name": "web", "config": {"url": "http://x.example"}, "events": "push"})),
    )
    .await;
    assert_eq!(st, 422, "{b}");

    // 404s.
    for path in [
        "/orgs/acme/hooks/999999",
        "/orgs/acme/hooks/abc",
        "/orgs/nope/hooks",
        "/orgs/acme/hooks/999999/config",
        &format!("/orgs/acme/hooks/{id}/deliveries/999999"),
    ] {
        let (st, h, b) = call(&s, Method::GET, path, Some(&t), None).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    // Delete.
    let (st, _, _) = call(&s, Method::DELETE, &format!("/orgs/acme/hooks/{id}"), Some(&t), None).await;
    assert_eq!(st, 204);
    let (st, _, _) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}"), Some(&t), None).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::DELETE, &format!("/orgs/acme/hooks/{id}"), Some(&t), None).await;
    assert_eq!(st, 404);
});

both!(who_may_act, |s| {
    let t = world(&s).await;
    let hook = create_hook(&s, &t, json!({"name": "web", "config": {"url": "http://127.0.0.1:9/a"}})).await;
    let id = hook["id"].as_i64().unwrap();
    let get = format!("/orgs/acme/hooks/{id}");
    // Anonymous: 401. Non-owners: 404. The owner without the scope: 403.
    let (st, h, b) = call(&s, Method::GET, "/orgs/acme/hooks", None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    for login in ["bob", "carol"] {
        let tok = s.classic(login, &["admin:org_hook", "admin:org"]).await;
        let (st, h, b) = call(&s, Method::GET, &get, Some(&tok), None).await;
        assert_error(st, &h, &b, 404, "Not Found");
        let (st, _, _) =
            call(&s, Method::POST, "/orgs/acme/hooks", Some(&tok), Some(json!({"name": "web", "config": {"url": "http://x.example"}})))
                .await;
        assert_eq!(st, 404);
    }
    let repo_only = s.classic("alice", &["repo", "admin:org"]).await;
    let (st, h, b) = call(&s, Method::GET, &get, Some(&repo_only), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let (_, h, _) = call(&s, Method::GET, &get, Some(&t), None).await;
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "admin:org_hook");

    // Fine-grained: the Webhooks permission, read for GETs and write otherwise.
    let fg = |perm: &str| json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"organization_hooks": perm}});
    let read = s.token(fg("read")).await;
    let write = s.token(fg("write")).await;
    let (st, _, _) = call(&s, Method::GET, &get, Some(&read), None).await;
    assert_eq!(st, 200);
    let (st, h, b) = call(&s, Method::POST, &format!("{get}/pings"), Some(&read), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let (st, _, _) = call(&s, Method::POST, &format!("{get}/pings"), Some(&write), None).await;
    assert_eq!(st, 204);
    let none =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"statuses": "write"}})).await;
    let (st, _, _) = call(&s, Method::GET, &get, Some(&none), None).await;
    assert_eq!(st, 403);

    // OAuth applications see only their own hooks; users may not modify those.
    for name in ["OA", "OB"] {
        s.admin_post("/apps", json!({"owner": "acme", "name": name, "kind": "oauth"})).await;
    }
    let oa = s.token(json!({"kind": "oauth", "login": "alice", "app": "OA", "scopes": ["admin:org_hook"]})).await;
    let ob = s.token(json!({"kind": "oauth", "login": "alice", "app": "OB", "scopes": ["admin:org_hook"]})).await;
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/hooks", Some(&oa), None).await;
    assert_eq!((st, b), (200, json!([])));
    let (st, _, _) = call(&s, Method::GET, &get, Some(&oa), None).await;
    assert_eq!(st, 404);
    let app_hook = create_hook(&s, &oa, json!({"name": "web", "config": {"url": "http://127.0.0.1:9/app"}})).await;
    let app_path = format!("/orgs/acme/hooks/{}", app_hook["id"]);
    let (_, _, b) = call(&s, Method::GET, "/orgs/acme/hooks", Some(&oa), None).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
    let (st, _, _) = call(&s, Method::PATCH, &app_path, Some(&oa), Some(json!({"active": false}))).await;
    assert_eq!(st, 200);
    let (st, _, _) = call(&s, Method::GET, &app_path, Some(&ob), None).await;
    assert_eq!(st, 404);
    // The user sees it but cannot touch it.
    let (st, _, b) = call(&s, Method::GET, "/orgs/acme/hooks", Some(&t), None).await;
    assert_eq!((st, b.as_array().unwrap().len()), (200, 2));
    for (m, p) in [(Method::PATCH, app_path.clone()), (Method::DELETE, app_path.clone()), (Method::PATCH, format!("{app_path}/config"))] {
        let (st, _, b) = call(&s, m.clone(), &p, Some(&t), Some(json!({}))).await;
        assert_eq!(st, 403, "{m} {p}: {b}");
    }
    let (st, _, _) = call(&s, Method::DELETE, &app_path, Some(&oa), None).await;
    assert_eq!(st, 204);

    // An installation on the organization, with the permission.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"organization_hooks": "read"}})).await;
    let (st, _, _) = call(&s, Method::GET, &get, Some(&inst), None).await;
    assert_eq!(st, 200);
    let (st, h, b) = call(&s, Method::DELETE, &get, Some(&inst), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
});

// ---------------------------------------------------------------------------------------------
// Deliveries.

both!(signed_deliveries, |s| {
    let t = world(&s).await;
    let (url, recv) = Recv::start().await;
    let hook =
        create_hook(&s, &t, json!({"name": "web", "config": {"url": url, "content_type": "json", "secret": "It's a Secret to Everybody"}}))
            .await;
    let id = hook["id"].as_i64().unwrap();
    // The ping.
    let hits = recv.wait(1, 10).await;
    let ping = &hits[0];
    assert_eq!(ping.h("x-service-event"), "ping");
    let p = ping.payload();
    assert_eq!(p["hook_id"], id);
    assert_eq!(p["hook"]["type"], "Organization");
    assert_eq!(p["hook"]["config"]["secret"], "********");
    assert_eq!(p["organization"]["login"], "acme");
    assert_eq!(p["sender"]["login"], "alice");
    assert!(p["zen"].is_string());

    // A push.
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    let hits = recv.wait(2, 10).await;
    let d = &hits[1];
    assert_eq!(d.h("x-service-event"), "push");
    assert_eq!(d.h("x-service-hook-id"), id.to_string());
    assert_eq!(d.h("x-service-hook-installation-target-type"), "organization");
    let org_id = p["organization"]["id"].as_i64().unwrap();
    assert_eq!(d.h("x-service-hook-installation-target-id"), org_id.to_string());
    assert_eq!(d.h("content-type"), "application/json");
    assert_eq!(d.h("accept"), "*/*");
    assert!(d.h("user-agent").starts_with("Service-Hookshot/"), "{}", d.h("user-agent"));
    let guid = d.h("x-service-delivery");
    assert_eq!(guid.len(), 36);
    assert_eq!(d.h("x-service-signature-256"), hmac256("It's a Secret to Everybody", &d.body));
    assert_eq!(d.h("x-service-signature"), hmac1("It's a Secret to Everybody", &d.body));
    let body = d.payload();
    assert_eq!(body["ref"], "refs/heads/main");
    assert_eq!(body["after"], SHA);
    assert_eq!(body["before"], "0".repeat(40));
    assert_eq!(body["repository"]["full_name"], "acme/widgets");
    assert_eq!(body["organization"]["login"], "acme");

    // Deliveries: newest first, the push's record with its request and response.
    let list = deliveries(&s, &t, id, 2).await;
    assert_eq!(list.len(), 2, "CreateEvent is not a push: {list:?}");
    assert_eq!(list[0]["event"], "push");
    assert_eq!(list[0]["guid"], guid);
    assert_eq!(list[0]["status"], "OK");
    assert_eq!(list[0]["status_code"], 200);
    assert_eq!(list[0]["redelivery"], false);
    assert!(list[0]["duration"].is_number());
    assert!(is_ts(&list[0]["delivered_at"]));
    assert_eq!(list[1]["event"], "ping");
    let did = list[0]["id"].as_i64().unwrap();
    let (st, _, full) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries/{did}"), Some(&t), None).await;
    assert_eq!(st, 200, "{full}");
    assert_conforms_to_snapshot("HookDelivery", &full);
    assert_eq!(full["url"], url);
    assert_eq!(full["request"]["headers"]["X-Service-Delivery"], guid);
    assert_eq!(full["request"]["headers"]["X-Service-Signature-256"], d.h("x-service-signature-256"));
    assert_eq!(full["request"]["payload"], body);
    assert_eq!(full["response"]["payload"], "thanks");
    assert_eq!(full["response"]["headers"]["x-receiver"], "test");

    // Redelivery: 202 {}, a new record with the same GUID, flagged.
    let (st, _, b) = call(&s, Method::POST, &format!("/orgs/acme/hooks/{id}/deliveries/{did}/attempts"), Some(&t), None).await;
    assert_eq!((st, b), (202, json!({})));
    let hits = recv.wait(3, 10).await;
    assert_eq!(hits[2].h("x-service-delivery"), guid);
    assert_eq!(hits[2].body, d.body);
    let list = deliveries(&s, &t, id, 3).await;
    assert_eq!(list[0]["redelivery"], true);
    assert_eq!(list[0]["guid"], guid);
    let (st, _, _) = call(&s, Method::POST, &format!("/orgs/acme/hooks/{id}/deliveries/424242/attempts"), Some(&t), None).await;
    assert_eq!(st, 404);

    // Ping: 204 and a ping delivery.
    let (st, _, _) = call(&s, Method::POST, &format!("/orgs/acme/hooks/{id}/pings"), Some(&t), None).await;
    assert_eq!(st, 204);
    let hits = recv.wait(4, 10).await;
    assert_eq!(hits[3].h("x-service-event"), "ping");

    // Failures, then the status filter and cursor pagination.
    recv.status.store(500, Ordering::SeqCst);
    s.push("acme/widgets", "refs/heads/main", SHA2).await;
    recv.wait(5, 10).await;
    let list = deliveries(&s, &t, id, 5).await;
    assert_eq!(list[0]["status_code"], 500);
    assert_eq!(list[0]["status"], "Invalid HTTP Response: 500");
    let (_, _, ok) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries?status=success"), Some(&t), None).await;
    assert_eq!(ok.as_array().unwrap().len(), 4);
    let (_, _, bad) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries?status=failure"), Some(&t), None).await;
    assert_eq!(bad.as_array().unwrap().len(), 1);
    let (st, _, _) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries?status=meh"), Some(&t), None).await;
    assert_eq!(st, 422);
    let (st, _, _) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries?cursor=garbage"), Some(&t), None).await;
    assert_eq!(st, 400);
    let mut seen = Vec::new();
    let mut next = Some(format!("/orgs/acme/hooks/{id}/deliveries?per_page=2"));
    while let Some(path) = next {
        let (st, h, page) = call(&s, Method::GET, &path, Some(&t), None).await;
        assert_eq!(st, 200);
        assert!(page.as_array().unwrap().len() <= 2);
        seen.extend(page.as_array().unwrap().iter().map(|d| d["id"].as_i64().unwrap()));
        next = header(&h, "link").split(", ").find(|l| l.ends_with("rel=\"next\"")).map(|l| {
            let u = l.trim_start_matches('<').split('>').next().unwrap().to_string();
            assert!(u.starts_with(&s.base) && u.contains("cursor=") && u.contains("per_page=2"), "{u}");
            u
        });
    }
    assert_eq!(seen.len(), 5);
    assert!(seen.windows(2).all(|w| w[0] > w[1]), "{seen:?}");
});

both!(form_content_and_event_selection, |s| {
    let t = world(&s).await;
    let (url, recv) = Recv::start().await;
    let form =
        create_hook(&s, &t, json!({"name": "web", "events": ["status"], "config": {"url": format!("{url}?k=form"), "secret": "abc"}}))
            .await;
    let (url2, all) = Recv::start().await;
    create_hook(&s, &t, json!({"name": "web", "events": ["*"], "config": {"url": url2, "content_type": "json"}})).await;
    recv.wait(1, 10).await;
    all.wait(1, 10).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    let st = s.classic("alice", &["repo"]).await;
    let (code, _, _) = call(
        &s,
        Method::POST,
        &format!("/repos/acme/widgets/statuses/{SHA}"),
        Some(&st),
        Some(json!({"state": "success", "context": "ci"})),
    )
    .await;
    assert_eq!(code, 201);
    // The wildcard hook gets create, push and status; the status hook only status.
    let hits = all.wait(4, 10).await;
    let mut events: Vec<String> = hits.iter().map(|h| h.h("x-service-event")).collect();
    events.sort();
    assert_eq!(events, ["create", "ping", "push", "status"]);
    assert!(hits[1].h("x-service-signature-256").is_empty(), "no secret, no signature");
    let hits = recv.wait(2, 10).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(recv.count(), 2);
    let d = &hits[1];
    assert_eq!(d.h("x-service-event"), "status");
    assert_eq!(d.h("content-type"), "application/x-www-form-urlencoded");
    let text = std::str::from_utf8(&d.body).unwrap();
    assert!(text.starts_with("payload=%7B"), "{text}");
    assert_eq!(d.h("x-service-signature-256"), hmac256("abc", &d.body));
    let p = d.payload();
    assert_eq!(p["sha"], SHA);
    assert_eq!(p["state"], "success");
    assert_eq!(p["context"], "ci");
    assert_eq!(p["repository"]["full_name"], "acme/widgets");
    let _ = form;
});

both!(
    retries_are_opt_in_with_backoff_and_auto_disable,
    Options::with(|c| {
        c.webhooks.retries = 2;
        c.webhooks.disable_after = 3;
    }),
    |s| {
        let t = world(&s).await;
        let (url, recv) = Recv::start().await;
        recv.status.store(503, Ordering::SeqCst);
        let hook = create_hook(&s, &t, json!({"name": "web", "config": {"url": url}})).await;
        let id = hook["id"].as_i64().unwrap();
        recv.wait(1, 10).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(recv.count(), 1, "the retry waits for its backoff");
        s.advance(9).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(recv.count(), 1);
        s.advance(1).await;
        recv.wait(2, 10).await;
        s.advance(30).await;
        recv.wait(3, 10).await;
        // Retries exhausted; three consecutive failures disabled the hook.
        s.advance(3600).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(recv.count(), 3);
        let (_, _, h) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}"), Some(&t), None).await;
        assert_eq!(h["active"], false, "{h}");
        let list = deliveries(&s, &t, id, 1).await;
        assert_eq!(list.len(), 1);
        assert_eq!(list[0]["status_code"], 503);
        // An inactive hook gets no deliveries.
        s.push("acme/widgets", "refs/heads/main", SHA).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(recv.count(), 3);
    }
);

both!(no_retry_by_default, |s| {
    let t = world(&s).await;
    let (url, recv) = Recv::start().await;
    recv.status.store(500, Ordering::SeqCst);
    create_hook(&s, &t, json!({"name": "web", "config": {"url": url}})).await;
    recv.wait(1, 10).await;
    s.advance(7200).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(recv.count(), 1);
});

both!(
    ssrf_guard_refuses_internal_targets,
    Options::with(|c| {
        c.webhooks.allowed_hosts = None; // the binary's default: no internal host
    }),
    |s| {
        let t = world(&s).await;
        let (url, recv) = Recv::start().await;
        let port = url.split(':').nth(2).unwrap().split('/').next().unwrap().to_string();
        let targets = [
            "http://10.0.0.1/hook".to_string(),
            "http://169.254.169.254/latest/meta-data".to_string(),
            url.clone(),
            format!("http://localhost:{port}/hook"),
            format!("http://[::1]:{port}/hook"),
        ];
        for target in &targets {
            let hook = create_hook(&s, &t, json!({"name": "web", "config": {"url": target}})).await;
            let id = hook["id"].as_i64().unwrap();
            let list = deliveries(&s, &t, id, 1).await;
            assert_eq!(list[0]["status_code"], 0, "{target}: {list:?}");
            let status = list[0]["status"].as_str().unwrap();
            assert!(status.starts_with("refused"), "{target}: {status}");
            let (_, _, full) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{id}/deliveries/{}", list[0]["id"]), Some(&t), None).await;
            assert_eq!(full["url"], target.as_str());
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(recv.started.load(Ordering::SeqCst), 0, "never connected");
    }
);

// A graceful shutdown (a restart here) lets a delivery in flight finish and be recorded: it is
// not sent again (on SQLite the restarted node would take back an abandoned claim at once).
both!(shutdown_lets_deliveries_in_flight_finish, |s| {
    let t = world(&s).await;
    let (url, recv) = Recv::start().await;
    let hook = create_hook(&s, &t, json!({"name": "web", "events": ["push"], "config": {"url": url, "content_type": "json"}})).await;
    recv.wait(1, 10).await;
    recv.delay_ms.store(300, Ordering::SeqCst);
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while recv.started.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the push was not sent");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let s = s.restart().await;
    assert_eq!(recv.count(), 2, "answered before the restart finished");
    let list = deliveries(&s, &t, hook["id"].as_i64().unwrap(), 2).await;
    assert!(list.iter().all(|d| d["status_code"] == 200), "{list:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(recv.started.load(Ordering::SeqCst), 2, "sent once");
});

// ---------------------------------------------------------------------------------------------
// Durability with the real binary: a delivery in flight when the server is killed is delivered
// after the restart.

use crate::persistence::{spawn_with_env, Proc, ADMIN_TOKEN};

/// The real binary (tests/http/persistence.rs launches it), allowed to deliver to loopback.
fn spawn_server(db: &str) -> Proc {
    spawn_with_env(db, &[], &[("PLATFORM_WEBHOOK_ALLOWED_HOSTS", "loopback")])
}

async fn killed_mid_flight(backend: platform_store::Backend) {
    let Some(db) = platform_store::testing::test_database(backend) else { return };
    let (url, recv) = Recv::start().await;
    recv.hang.store(true, Ordering::SeqCst);
    let mut p = spawn_server(&db.url);
    let http = reqwest::Client::new();
    let admin = |base: &str, path: &str, body: Value| {
        let r = http.post(format!("{base}/_admin{path}")).bearer_auth(ADMIN_TOKEN).json(&body).send();
        async move {
            let r = r.await.unwrap();
            assert!(r.status().is_success());
            r.json::<Value>().await.unwrap_or(Value::Null)
        }
    };
    admin(&p.base, "/users", json!({"login": "alice"})).await;
    admin(&p.base, "/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    admin(&p.base, "/repos", json!({"owner": "acme", "name": "widgets", "private": false})).await;
    let t = admin(&p.base, "/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["admin:org_hook"]})).await["token"]
        .as_str()
        .unwrap()
        .to_string();
    let r = http
        .post(format!("{}/orgs/acme/hooks", p.base))
        .header("user-agent", UA)
        .bearer_auth(&t)
        .json(&json!({"name": "web", "events": ["push"], "config": {"url": url, "content_type": "json", "secret": "k"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let hook_id = r.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    admin(&p.base, "/repos/acme/widgets/refs", json!({"ref": "refs/heads/main", "sha": SHA})).await;
    // Both the ping and the push are in flight at the (hanging) receiver: kill -9.
    let deadline = Instant::now() + Duration::from_secs(20);
    while recv.started.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "deliveries did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    p.child.kill().unwrap(); // SIGKILL
    p.child.wait().unwrap();
    assert_eq!(recv.count(), 0);
    recv.hang.store(false, Ordering::SeqCst);
    let mut p = spawn_server(&db.url);
    // SQLite releases stale claims at startup; PostgreSQL waits for the lease (15 s).
    let hits = recv.wait(2, 60).await;
    let mut events: Vec<String> = hits.iter().map(|h| h.h("x-service-event")).collect();
    events.sort();
    assert_eq!(events, ["ping", "push"]);
    let push = hits.iter().find(|h| h.h("x-service-event") == "push").unwrap();
    assert_eq!(push.h("x-service-signature-256"), hmac256("k", &push.body));
    assert_eq!(push.payload()["after"], SHA);
    // Recorded as delivered.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list: Value = http
            .get(format!("{}/orgs/acme/hooks/{hook_id}/deliveries", p.base))
            .header("user-agent", UA)
            .bearer_auth(&t)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if list.as_array().unwrap().iter().filter(|d| d["status_code"] == 200).count() == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = p.child.kill();
    let _ = p.child.wait();
    drop(db);
}

#[tokio::test]
async fn delivery_survives_kill_9_sqlite() {
    killed_mid_flight(platform_store::Backend::Sqlite).await;
}

#[tokio::test]
async fn delivery_survives_kill_9_postgres() {
    killed_mid_flight(platform_store::Backend::Postgres).await;
}

// A body's declared type decides what `null` means: a field the handler validates receives it
// (and refuses it with its own message), a plain optional field refuses it, and a field that
// accepts null says so in the published schema.
both!(null_in_bodies, |s| {
    let t = world(&s).await;
    let hook = create_hook(&s, &t, json!({"name": "web", "config": {"url": "http://127.0.0.1:9/h"}})).await;
    let path = format!("/orgs/acme/hooks/{}", hook["id"]);
    // `events` is the handler's: null is not "absent" (which would keep `push`).
    let (st, h, b) = call(&s, Method::PATCH, &path, Some(&t), Some(json!({"events": null}))).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["field"], "events", "{b}");
    let (st, h, b) = call(&s, Method::PATCH, &path, Some(&t), Some(json!({"config": null}))).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["field"], "config", "{b}");
    // `active` is a plain optional boolean: null is refused before the handler.
    let (st, h, b) = call(&s, Method::PATCH, &path, Some(&t), Some(json!({"active": null}))).await;
    assert_error(st, &h, &b, 422, "Invalid request.\n\nFor 'properties/active', null is not a boolean.");
    // The configuration's `secret` string has the default maximum; `url` is the handler's.
    let config = format!("{path}/config");
    let (st, h, b) = call(&s, Method::PATCH, &config, Some(&t), Some(json!({"secret": "s".repeat(1025)}))).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["message"], "secret is too long (maximum is 1024 characters)", "{b}");
    let (st, h, b) = call(&s, Method::PATCH, &config, Some(&t), Some(json!({"url": 5}))).await;
    assert_error(st, &h, &b, 422, "Invalid request.\n\nFor 'properties/url', 5 is not a string.");
    let (st, _, b) = call(&s, Method::GET, &path, Some(&t), None).await;
    assert_eq!((st, &b["events"], &b["active"]), (200, &json!(["push"]), &json!(true)), "nothing changed: {b}");

    // Published: null only where accepted.
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    let body = |p: &str, m: &str| doc["paths"][p][m]["requestBody"]["content"]["application/json"]["schema"].clone();
    let update = body("/orgs/{org}/hooks/{hook_id}", "patch");
    assert_eq!(update["properties"]["active"], json!({"type": "boolean"}), "{update}");
    assert!(update.get("required").is_none(), "{update}");
    let status = body("/repos/{owner}/{repo}/statuses/{sha}", "post");
    assert_eq!(status["properties"]["description"]["type"], json!(["string", "null"]), "{status}");
    assert_eq!(status["required"], json!(["state"]), "{status}");
    assert!(!update.to_string().contains("x-"), "markers are not published: {update}");
});

both!(meta_deleted_goes_to_the_deleted_hook, |s| {
    let t = world(&s).await;
    let (url, recv) = Recv::start().await;
    let secret = "last words";
    let meta = create_hook(
        &s,
        &t,
        json!({"name": "web", "events": ["meta"], "config": {"url": format!("{url}?meta"), "content_type": "form", "secret": secret}}),
    )
    .await;
    let other = create_hook(&s, &t, json!({"name": "web", "events": ["push"], "config": {"url": url, "content_type": "json"}})).await;
    recv.wait(2, 10).await; // the pings
    for h in [&meta, &other] {
        let (st, _, _) = call(&s, Method::DELETE, &format!("/orgs/acme/hooks/{}", h["id"]), Some(&t), None).await;
        assert_eq!(st, 204);
    }
    // Gone from the API at once, although its last delivery may still be on its way.
    let (st, _, _) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{}", meta["id"]), Some(&t), None).await;
    assert_eq!(st, 404);
    let (_, _, list) = call(&s, Method::GET, "/orgs/acme/hooks", Some(&t), None).await;
    assert_eq!(list, json!([]));
    // The hook subscribed to `meta` hears of its own deletion, signed with its secret, in its
    // content type; the other one does not.
    let hits = recv.wait(3, 10).await;
    let d = &hits[2];
    assert_eq!(d.h("x-service-event"), "meta");
    assert_eq!(d.h("x-service-hook-id"), meta["id"].to_string());
    assert_eq!(d.h("content-type"), "application/x-www-form-urlencoded");
    assert_eq!(d.h("x-service-signature-256"), hmac256(secret, &d.body));
    let p = d.payload();
    assert_eq!(p["action"], "deleted");
    assert_eq!(p["hook_id"], meta["id"]);
    assert_eq!(p["hook"]["type"], "Organization");
    assert_eq!(p["hook"]["events"], json!(["meta"]));
    assert_eq!(p["hook"]["config"]["secret"], "********");
    assert_eq!(p["hook"]["config"]["url"], format!("{url}?meta"));
    assert!(p["hook"].get("ping_url").is_none(), "{p}");
    assert_eq!(p["organization"]["login"], "acme");
    assert_eq!(p["sender"]["login"], "alice");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 3);
    // Its deliveries are no longer reachable.
    let (st, _, _) = call(&s, Method::GET, &format!("/orgs/acme/hooks/{}/deliveries", meta["id"]), Some(&t), None).await;
    assert_eq!(st, 404);
});
