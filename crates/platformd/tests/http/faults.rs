//! Fault injection through `/_admin/faults`: each kind answers exactly as the real failure
//! would, matching by method, path glob, token and user, probability and count, the control
//! plane's list/delete/reset, its authentication and validation.
use std::time::{Duration, Instant};

use crate::both;
use crate::harness::*;
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";
const STATUSES: &str = "/repos/alice/hello/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e";
const RATE_DOCS: &str = "https://docs.service.example/rest/overview/resources-in-the-rest-api#rate-limiting";
const ANON_MESSAGE: &str = "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)";
const SECONDARY: &str = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to Service Support for help, please include the request ID ";

/// A control-plane call with any (or no) bearer token: (status, headers, body).
async fn raw(s: &Server, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, HeaderMap, Value) {
    let mut r = s.client.request(method, format!("http://{}/_admin{path}", s.addr));
    if let Some(b) = body {
        r = r.json(&b);
    }
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    parts(r.send().await.unwrap()).await
}

async fn fault(s: &Server, body: Value) -> Value {
    let (st, _, b) = raw(s, Method::POST, "/faults", Some(ADMIN), Some(body)).await;
    assert_eq!(st, 201, "{b}");
    b
}

async fn list(s: &Server) -> Vec<Value> {
    let (st, _, b) = raw(s, Method::GET, "/faults", Some(ADMIN), None).await;
    assert_eq!(st, 200, "{b}");
    b.as_array().unwrap().clone()
}

async fn clear(s: &Server) {
    let (st, _, _) = raw(s, Method::DELETE, "/faults", Some(ADMIN), None).await;
    assert_eq!(st, 204);
}

/// alice with a public repository `alice/hello` on `main`; returns alice's id.
async fn setup(s: &Server) -> i64 {
    let u = s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    u["id"].as_i64().unwrap()
}

fn num(h: &HeaderMap, k: &str) -> i64 {
    header(h, k).parse().unwrap_or_else(|_| panic!("{k} is an integer: {:?}", h.get(k)))
}

/// The headers every API response carries.
fn assert_standard_headers(h: &HeaderMap) {
    for k in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-used",
        "x-ratelimit-reset",
        "x-ratelimit-resource",
        "x-service-request-id",
        "x-service-api-version-selected",
        "x-service-media-type",
        "access-control-allow-origin",
        "access-control-expose-headers",
    ] {
        assert!(h.get(k).is_some(), "{k} missing: {h:?}");
    }
    assert_eq!(header(h, "x-ratelimit-resource"), "core");
    assert_eq!(num(h, "x-ratelimit-limit") - num(h, "x-ratelimit-used"), num(h, "x-ratelimit-remaining"));
}

fn names(h: &HeaderMap) -> Vec<String> {
    let mut v: Vec<String> = h.keys().map(|k| k.as_str().to_string()).filter(|k| k != "date").collect();
    v.sort();
    v
}

both!(primary_fault_answers_as_the_real_limit, Options::with(|c| c.limits.rate_limit_factor = 0.001), |s| {
    let alice = setup(&s).await;
    let t = s.classic("alice", &["repo"]).await;
    let f = fault(&s, json!({"kind": "primary", "user": "alice", "count": 1})).await;
    assert_eq!(f["kind"], "primary");
    assert_eq!(f["remaining"], 1);
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_error(st, &h, &b, 403, &format!("API rate limit exceeded for user ID {alice}."));
    assert_eq!(b["documentation_url"], RATE_DOCS);
    assert_standard_headers(&h);
    assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
    assert_eq!(header(&h, "x-ratelimit-limit"), "5");
    assert_eq!(header(&h, "x-ratelimit-used"), "5");
    assert!(h.get("retry-after").is_none(), "no retry-after on a primary limit");
    let faulted = (h, b);

    // Nothing was charged: the real bucket is untouched.
    let (st, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    assert_eq!((header(&h, "x-ratelimit-used"), header(&h, "x-ratelimit-remaining")), ("1", "4"));
    assert_eq!(num(&h, "x-ratelimit-reset"), num(&faulted.0, "x-ratelimit-reset"));
    // The real exhausted answer looks the same: same body, same header names.
    for _ in 0..4 {
        assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
    }
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 403);
    assert_eq!(b, faulted.1);
    assert_eq!(names(&h), names(&faulted.0));
    for k in ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset", "content-type", "content-length"] {
        assert_eq!(header(&h, k), header(&faulted.0, k), "{k}");
    }

    // Unauthenticated callers get their address's message; 429 on request.
    fault(&s, json!({"kind": "primary", "status": 429})).await;
    let (st, h, b) = parts(s.get("/", None).await).await;
    assert_error(st, &h, &b, 429, ANON_MESSAGE);
    assert_eq!(
        (header(&h, "x-ratelimit-remaining"), header(&h, "x-ratelimit-limit"), header(&h, "x-ratelimit-used")),
        ("0", "1", "1"),
        "limit 60 × 0.001, at least 1"
    );
    assert!(h.get("retry-after").is_none());
});

both!(secondary_fault, |s| {
    setup(&s).await;
    let t = s.classic("alice", &["repo"]).await;
    fault(&s, json!({"kind": "secondary", "count": 1})).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    let rid = header(&h, "x-service-request-id").to_string();
    assert!(!rid.is_empty());
    assert_error(st, &h, &b, 403, &format!("{SECONDARY}{rid}."));
    assert!(b["message"].as_str().unwrap().contains("secondary rate limit"));
    assert_eq!(b["documentation_url"], RATE_DOCS);
    assert_eq!(header(&h, "retry-after"), "60");
    assert_eq!(header(&h, "retry-after").parse::<u64>().unwrap(), 60);
    assert_standard_headers(&h);
    // The real bucket, not exhausted and not charged.
    assert_eq!((header(&h, "x-ratelimit-remaining"), header(&h, "x-ratelimit-used")), ("5000", "0"));
    let (st, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-ratelimit-used"), "1");
    assert!(h.get("retry-after").is_none());

    // 429 with a chosen retry-after; a fresh request id each time.
    fault(&s, json!({"kind": "secondary", "status": 429, "retry_after": 7, "count": 2})).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (st, h, b) = parts(s.post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
        let rid = header(&h, "x-service-request-id").to_string();
        assert_error(st, &h, &b, 429, &format!("{SECONDARY}{rid}."));
        assert_eq!(header(&h, "retry-after"), "7");
        assert_eq!(header(&h, "x-ratelimit-remaining"), "4999");
        ids.push(rid);
    }
    assert_ne!(ids[0], ids[1]);
    // The write never happened.
    let (_, _, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(b["total_count"], 0, "{b}");
});

both!(status_faults, |s| {
    setup(&s).await;
    for (status, message) in [(500, "Internal Server Error"), (502, "Bad Gateway"), (503, "Service Unavailable"), (404, "Not Found")] {
        fault(&s, json!({"kind": "status", "status": status, "count": 1})).await;
        let (st, h, b) = parts(s.get(COMBINED, None).await).await;
        assert_error(st, &h, &b, status, message);
        assert_eq!(b["documentation_url"], "https://docs.service.example/rest");
        assert_standard_headers(&h);
        assert_eq!(header(&h, "x-ratelimit-remaining"), "60", "not charged");
        assert!(h.get("retry-after").is_none());
    }
    fault(&s, json!({"kind": "status", "status": 503, "message": "Server is under maintenance", "count": 1})).await;
    let (st, h, b) = parts(s.get("/", None).await).await;
    assert_error(st, &h, &b, 503, "Server is under maintenance");
    let (st, _, _) = parts(s.get("/", None).await).await;
    assert_eq!(st, 200);
    assert!(list(&s).await.is_empty());
});

both!(latency_fault, |s| {
    setup(&s).await;
    fault(&s, json!({"kind": "latency", "latency_ms": 400, "path": "/repos/**"})).await;
    let started = Instant::now();
    let (st, h, b) = parts(s.get(COMBINED, None).await).await;
    assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["state"], "pending");
    assert_eq!(header(&h, "x-ratelimit-used"), "1", "served and charged normally");
    // Combined with a failure: waits, then fails.
    fault(&s, json!({"kind": "status", "status": 502, "count": 1})).await;
    let started = Instant::now();
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(st, 502);
    // Other paths are not delayed.
    let (st, _, _) = parts(s.get("/", None).await).await;
    assert_eq!(st, 200);
});

both!(a_client_that_hangs_up_is_no_longer_in_flight, |s| {
    setup(&s).await;
    let gauge = || async {
        let text = s.client.get(format!("http://{}/metrics", s.addr)).send().await.unwrap().text().await.unwrap();
        text.lines().find_map(|l| l.strip_prefix("platform_http_requests_in_flight ")).expect("gauge").parse::<i64>().unwrap()
    };
    let before = gauge().await;
    fault(&s, json!({"kind": "latency", "latency_ms": 30000, "path": "/repos/**"})).await;
    let hung_up = s.client.get(s.url(COMBINED)).header("user-agent", "t").timeout(Duration::from_millis(300)).send().await;
    assert!(hung_up.is_err(), "the client gave up first");
    // The server drops the abandoned request with its connection: the gauge is back long
    // before the 30-second delay would have ended.
    let deadline = Instant::now() + Duration::from_secs(10);
    while gauge().await != before {
        assert!(Instant::now() < deadline, "the abandoned request is still counted in flight");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
});

both!(matching_by_method_and_path, |s| {
    setup(&s).await;
    let t = s.classic("alice", &["repo"]).await;
    fault(&s, json!({"kind": "status", "status": 500, "method": "post"})).await;
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
    assert_eq!(s.post(STATUSES, Some(&t), json!({"state": "success"})).await.status(), 500);
    clear(&s).await;

    fault(&s, json!({"kind": "status", "status": 503, "path": "/repos/*/*/statuses/**"})).await;
    assert_eq!(s.post(STATUSES, Some(&t), json!({"state": "success"})).await.status(), 503);
    assert_eq!(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), Some(&t)).await.status(), 200);
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
    assert_eq!(s.get("/", None).await.status(), 200);
    clear(&s).await;

    // `*` stays in a segment; `**` crosses; `/**/` also matches one `/`.
    fault(&s, json!({"kind": "status", "status": 502, "path": "/repos/*/*/commits/*/status"})).await;
    assert_eq!(s.get(COMBINED, None).await.status(), 502);
    assert_ne!(s.get("/repos/alice/hello/commits/heads/main/status", None).await.status(), 502);
    clear(&s).await;
    fault(&s, json!({"kind": "status", "status": 502, "path": "/repos/**/status"})).await;
    assert_eq!(s.get("/repos/alice/hello/commits/heads/main/status", None).await.status(), 502);
    assert_eq!(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), None).await.status(), 200);
    clear(&s).await;
    fault(&s, json!({"kind": "status", "status": 502, "path": "/rate_limit"})).await;
    assert_eq!(s.get("/rate_limit", None).await.status(), 502);
    assert_eq!(s.get("/", None).await.status(), 200);
});

both!(path_is_below_the_api_base, Options { base_path: "/api/v3", ..Options::default() }, |s| {
    setup(&s).await;
    fault(&s, json!({"kind": "status", "status": 503, "path": "/repos/*/*/commits/*/status"})).await;
    // `s.get` goes through the public base (`/api/v3`); the root form is served too.
    assert_eq!(s.get(COMBINED, None).await.status(), 503);
    let root = format!("http://{}{COMBINED}", s.addr);
    assert_eq!(s.req(Method::GET, &root, None).send().await.unwrap().status(), 503);
    assert_eq!(s.get("/", None).await.status(), 200);
});

both!(matching_by_token_and_user, |s| {
    setup(&s).await;
    s.user("bob").await;
    let t1 = s.classic("alice", &["repo"]).await;
    let t2 = s.classic("alice", &["repo"]).await;
    let bob = s.classic("bob", &["repo"]).await;

    let f = fault(&s, json!({"kind": "status", "status": 503, "token": t1})).await;
    assert_eq!(f["token"], "<redacted>");
    assert!(!f.to_string().contains(&t1), "the token text is never echoed: {f}");
    let (_, _, l) = raw(&s, Method::GET, "/faults", Some(ADMIN), None).await;
    assert!(!l.to_string().contains(&t1), "{l}");
    assert_eq!(l[0]["token"], "<redacted>");
    assert_eq!(s.get(COMBINED, Some(&t1)).await.status(), 503);
    // The `token` scheme carries the same text.
    let r = s.req(Method::GET, COMBINED, None).header("authorization", format!("token {t1}")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(s.get(COMBINED, Some(&t2)).await.status(), 200);
    assert_eq!(s.get(COMBINED, Some(&bob)).await.status(), 200);
    assert_eq!(s.get(COMBINED, None).await.status(), 200);
    // Faults come after authentication: bad credentials stay a 401.
    assert_eq!(s.get(COMBINED, Some(&format!("{t1}0"))).await.status(), 401);
    clear(&s).await;

    fault(&s, json!({"kind": "secondary", "user": "ALICE"})).await;
    assert_eq!(s.get(COMBINED, Some(&t1)).await.status(), 403);
    assert_eq!(s.get(COMBINED, Some(&t2)).await.status(), 403);
    assert_eq!(s.get(COMBINED, Some(&bob)).await.status(), 200);
    assert_eq!(s.get(COMBINED, None).await.status(), 200);
    clear(&s).await;

    // Every given field must match.
    fault(&s, json!({"kind": "status", "status": 500, "user": "alice", "method": "GET", "path": "/"})).await;
    assert_eq!(s.get("/", Some(&t1)).await.status(), 500);
    assert_eq!(s.get(COMBINED, Some(&t1)).await.status(), 200);
    assert_eq!(s.get("/", Some(&bob)).await.status(), 200);
});

both!(probability_and_count, |s| {
    setup(&s).await;
    fault(&s, json!({"kind": "status", "status": 500, "probability": 0})).await;
    for _ in 0..30 {
        assert_eq!(s.get("/", None).await.status(), 200);
    }
    assert_eq!(list(&s).await[0]["remaining"], Value::Null, "unlimited");
    clear(&s).await;

    // Certain (probability 1, the default) with a count of 3.
    let f = fault(&s, json!({"kind": "status", "status": 502, "probability": 1, "count": 3})).await;
    assert_eq!((f["count"].as_i64(), f["remaining"].as_i64()), (Some(3), Some(3)));
    assert_eq!(s.get("/", None).await.status(), 502);
    assert_eq!(list(&s).await[0]["remaining"], 2);
    assert_eq!(s.get("/", None).await.status(), 502);
    assert_eq!(s.get("/", None).await.status(), 502);
    assert!(list(&s).await.is_empty(), "gone at 0");
    assert_eq!(s.get("/", None).await.status(), 200);

    // A middling probability fires sometimes, and only the hits use the count.
    fault(&s, json!({"kind": "status", "status": 503, "probability": 0.5, "count": 1000})).await;
    let mut hits = 0;
    for _ in 0..60 {
        if s.get("/", None).await.status() == 503 {
            hits += 1;
        }
    }
    assert!(hits > 0 && hits < 60, "{hits}");
    assert_eq!(list(&s).await[0]["remaining"], 1000 - hits);
});

both!(list_delete_clear_and_reset, |s| {
    let a = fault(&s, json!({"kind": "primary", "method": "GET", "path": "/repos/**", "user": "alice"})).await;
    let b = fault(&s, json!({"kind": "secondary", "retry_after": 5})).await;
    let c = fault(&s, json!({"kind": "latency", "latency_ms": 10, "count": 2})).await;
    assert_eq!(
        a,
        json!({"id": a["id"], "kind": "primary", "method": "GET", "path": "/repos/**", "token": null, "user": "alice",
               "probability": 1.0, "count": null, "remaining": null, "status": 403, "retry_after": null,
               "latency_ms": null, "message": null})
    );
    assert_eq!((b["status"].as_i64(), b["retry_after"].as_i64()), (Some(403), Some(5)));
    assert_eq!(c["latency_ms"], 10);
    let ids: Vec<Value> = list(&s).await.iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, vec![a["id"].clone(), b["id"].clone(), c["id"].clone()]);
    assert_eq!(list(&s).await[0], a);

    let (st, _, _) = raw(&s, Method::DELETE, &format!("/faults/{}", b["id"]), Some(ADMIN), None).await;
    assert_eq!(st, 204);
    let (st, h, body) = raw(&s, Method::DELETE, &format!("/faults/{}", b["id"]), Some(ADMIN), None).await;
    assert_error(st, &h, &body, 404, "Not Found");
    let (st, _, _) = raw(&s, Method::DELETE, "/faults/abc", Some(ADMIN), None).await;
    assert_eq!(st, 404);
    assert_eq!(list(&s).await.len(), 2);

    clear(&s).await;
    assert!(list(&s).await.is_empty());

    fault(&s, json!({"kind": "status", "status": 500})).await;
    assert_eq!(s.get("/", None).await.status(), 500);
    let (st, _, _) = raw(&s, Method::POST, "/reset", Some(ADMIN), None).await;
    assert_eq!(st, 204);
    assert!(list(&s).await.is_empty());
    assert_eq!(s.get("/", None).await.status(), 200);
});

both!(not_applied_outside_the_api, |s| {
    fault(&s, json!({"kind": "status", "status": 503, "path": "/**"})).await;
    fault(&s, json!({"kind": "status", "status": 503})).await;
    assert_eq!(s.get("/", None).await.status(), 503);
    for p in ["/healthz", "/readyz", "/metrics"] {
        let r = s.client.get(format!("http://{}{p}", s.addr)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{p}");
    }
    let (st, _, b) = raw(&s, Method::GET, "/clock", Some(ADMIN), None).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(list(&s).await.len(), 2);
    // Preflight requests are answered before authentication, as always.
    let r = s.req(Method::OPTIONS, "/", None).send().await.unwrap();
    assert_eq!(r.status(), 204);
});

both!(admin_token_required, |s| {
    for (m, p) in [(Method::POST, "/faults"), (Method::GET, "/faults"), (Method::DELETE, "/faults"), (Method::DELETE, "/faults/1")] {
        let (st, h, b) = raw(&s, m.clone(), p, None, Some(json!({"kind": "primary"}))).await;
        assert_error(st, &h, &b, 401, "Requires authentication");
        let (st, h, b) = raw(&s, m.clone(), p, Some("not-the-admin-token"), Some(json!({"kind": "primary"}))).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
    }
    assert!(list(&s).await.is_empty());
    // A platform token is not the admin token either.
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let (st, _, _) = raw(&s, Method::POST, "/faults", Some(&t), Some(json!({"kind": "primary"}))).await;
    assert_eq!(st, 401);
    assert!(list(&s).await.is_empty());
});

both!(invalid_bodies, |s| {
    let (st, h, b) = raw(&s, Method::POST, "/faults", Some(ADMIN), Some(json!({}))).await;
    assert_eq!(st, 422, "{b}");
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    for body in [
        json!({"kind": "primary", "count": -1}),
        json!({"kind": "primary", "probability": "high"}),
        json!({"kind": "secondary", "retry_after": 1.5}),
        json!({"kind": "primary", "tokn": "x"}),
        json!({"kind": 1}),
    ] {
        let (st, _, b) = raw(&s, Method::POST, "/faults", Some(ADMIN), Some(body.clone())).await;
        assert_eq!(st, 422, "{body}: {b}");
        assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
        assert!(b["documentation_url"].is_string());
    }
    for (body, field) in [
        (json!({"kind": "outage"}), "kind"),
        (json!({"kind": "primary", "probability": 1.5}), "probability"),
        (json!({"kind": "primary", "probability": -0.5}), "probability"),
        (json!({"kind": "primary", "count": 0}), "count"),
        (json!({"kind": "primary", "status": 500}), "status"),
        (json!({"kind": "secondary", "status": 404}), "status"),
        (json!({"kind": "secondary", "retry_after": 100_000}), "retry_after"),
        (json!({"kind": "status"}), "status"),
        (json!({"kind": "status", "status": 302}), "status"),
        (json!({"kind": "status", "status": 600}), "status"),
        (json!({"kind": "status", "status": 500, "message": ""}), "message"),
        (json!({"kind": "status", "status": 500, "retry_after": 5}), "retry_after"),
        (json!({"kind": "latency"}), "latency_ms"),
        (json!({"kind": "latency", "latency_ms": 600_001}), "latency_ms"),
        (json!({"kind": "latency", "latency_ms": 5, "status": 500}), "status"),
        (json!({"kind": "primary", "message": "x"}), "message"),
        (json!({"kind": "primary", "latency_ms": 5}), "latency_ms"),
        (json!({"kind": "primary", "path": "repos/**"}), "path"),
        (json!({"kind": "primary", "method": "GET /"}), "method"),
        (json!({"kind": "primary", "token": ""}), "token"),
        (json!({"kind": "primary", "user": ""}), "user"),
    ] {
        let (st, h, b) = raw(&s, Method::POST, "/faults", Some(ADMIN), Some(body.clone())).await;
        assert_eq!(st, 422, "{body}: {b}");
        assert_eq!(b["message"], "Validation Failed", "{b}");
        assert_eq!(b["status"], "422");
        assert_eq!(b["errors"][0]["resource"], "Fault", "{b}");
        assert_eq!(b["errors"][0]["field"], field, "{body}: {b}");
        assert_eq!(b["errors"][0]["code"], "invalid", "{b}");
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    }
    // Not JSON, or not an object.
    let r = s.client.post(format!("http://{}/_admin/faults", s.addr)).bearer_auth(ADMIN).body("{").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    let (st, h, b) = raw(&s, Method::POST, "/faults", Some(ADMIN), Some(json!([]))).await;
    assert_error(st, &h, &b, 400, "Body should be a JSON object");
    assert!(list(&s).await.is_empty(), "nothing was created");
});
