//! The request contract of document 1: pagination and `Link`, base path, API versions, request
//! ids, ETag/304, CORS, User-Agent, error bodies, body parsing and validation, path rules,
//! redirects of renamed repositories, timestamps, scope and permission headers, auth schemes.
use crate::both;
use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const STATUSES: &str = "/repos/alice/hello/commits/main/statuses";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";
const CREATE: &str = "/repos/alice/hello/statuses/main";

/// alice, public alice/hello with `main` at [`SHA`]; returns a classic `repo` token of alice.
async fn setup(s: &Server) -> String {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo", "user"]).await
}

async fn create_statuses(s: &Server, t: &str, n: usize) {
    for i in 0..n {
        let r = s.post(CREATE, Some(t), json!({"state": "success", "context": format!("ci-{i}")})).await;
        assert_eq!(r.status().as_u16(), 201);
    }
}

/// Parses a `Link` header into (rel, url) pairs in order, checking the exact entry syntax.
fn links(h: &str) -> Vec<(String, String)> {
    h.split(", ")
        .map(|e| {
            let (u, rel) = e.split_once(">; rel=\"").unwrap_or_else(|| panic!("bad Link entry {e:?} in {h:?}"));
            let u = u.strip_prefix('<').unwrap_or_else(|| panic!("bad Link entry {e:?}"));
            let rel = rel.strip_suffix('"').unwrap_or_else(|| panic!("bad Link entry {e:?}"));
            (rel.to_string(), u.to_string())
        })
        .collect()
}

fn rels(l: &[(String, String)]) -> Vec<&str> {
    l.iter().map(|(r, _)| r.as_str()).collect()
}

fn url_of<'a>(l: &'a [(String, String)], rel: &str) -> &'a str {
    &l.iter().find(|(r, _)| r == rel).unwrap_or_else(|| panic!("no rel {rel} in {l:?}")).1
}

/// The query of a URL as pairs.
fn query(u: &str) -> Vec<(String, String)> {
    let q = u.split_once('?').map(|(_, q)| q).unwrap_or("");
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn qget(u: &str, k: &str) -> Option<String> {
    query(u).into_iter().find(|(a, _)| a == k).map(|(_, v)| v)
}

/// Colon-separated hex groups, e.g. `14E0:4BC6:F1B8BA:208E317:62EC2715`.
fn is_request_id(s: &str) -> bool {
    let groups: Vec<&str> = s.split(':').collect();
    groups.len() == 5 && groups.iter().all(|g| !g.is_empty() && g.bytes().all(|c| c.is_ascii_hexdigit()))
}

fn ids(b: &Value) -> Vec<i64> {
    b.as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect()
}

both!(statuses_list_pagination, |s| {
    let t = setup(&s).await;
    create_statuses(&s, &t, 65).await;
    let base = format!("{}{STATUSES}", s.base);

    // Default: 30 per page, newest first, next + last only on page 1.
    let (st, h, b) = parts(s.get(STATUSES, None).await).await;
    assert_eq!(st, 200);
    let page1 = ids(&b);
    assert_eq!(page1.len(), 30);
    assert!(page1.windows(2).all(|w| w[0] > w[1]), "newest first: {page1:?}");
    assert_eq!(b[0]["context"], "ci-64");
    let l = links(header(&h, "link"));
    assert_eq!(rels(&l), ["next", "last"]);
    for (_, u) in &l {
        assert!(u.starts_with(&format!("{base}?")), "absolute URL of the list: {u}");
    }
    assert_eq!(qget(url_of(&l, "next"), "page").as_deref(), Some("2"));
    assert_eq!(qget(url_of(&l, "last"), "page").as_deref(), Some("3"));

    // Following `next` gives the next 30, with all four rels in the order prev, next, last, first.
    let (st, h, b) = parts(s.get(url_of(&l, "next"), None).await).await;
    assert_eq!(st, 200);
    let page2 = ids(&b);
    assert_eq!(page2.len(), 30);
    assert!(page1.last().unwrap() > page2.first().unwrap());
    let l = links(header(&h, "link"));
    assert_eq!(rels(&l), ["prev", "next", "last", "first"]);
    assert_eq!(qget(url_of(&l, "prev"), "page").as_deref(), Some("1"));
    assert_eq!(qget(url_of(&l, "next"), "page").as_deref(), Some("3"));
    assert_eq!(qget(url_of(&l, "last"), "page").as_deref(), Some("3"));
    assert_eq!(qget(url_of(&l, "first"), "page").as_deref(), Some("1"));

    // Last page: 5 items, prev + first only.
    let (st, h, b) = parts(s.get(&format!("{STATUSES}?page=3"), None).await).await;
    assert_eq!(st, 200);
    assert_eq!(ids(&b).len(), 5);
    let l = links(header(&h, "link"));
    assert_eq!(rels(&l), ["prev", "first"]);
    assert_eq!(qget(url_of(&l, "prev"), "page").as_deref(), Some("2"));

    // per_page and other query parameters are repeated in every Link URL.
    let (st, h, b) = parts(s.get(&format!("{STATUSES}?per_page=10&page=2&foo=bar"), None).await).await;
    assert_eq!(st, 200);
    assert_eq!(ids(&b), page1[10..20].to_vec());
    let l = links(header(&h, "link"));
    assert_eq!(rels(&l), ["prev", "next", "last", "first"]);
    for (_, u) in &l {
        assert_eq!(qget(u, "per_page").as_deref(), Some("10"), "{u}");
        assert_eq!(qget(u, "foo").as_deref(), Some("bar"), "{u}");
    }
    assert_eq!(qget(url_of(&l, "last"), "page").as_deref(), Some("7"));

    // per_page above 100 is clamped to 100: a single page, no Link.
    let (st, h, b) = parts(s.get(&format!("{STATUSES}?per_page=500"), None).await).await;
    assert_eq!(st, 200);
    assert_eq!(ids(&b).len(), 65);
    assert!(h.get("link").is_none(), "single page has no Link: {:?}", h.get("link"));
    let (_, h, b) = parts(s.get(&format!("{STATUSES}?per_page=100"), None).await).await;
    assert_eq!(ids(&b).len(), 65);
    assert!(h.get("link").is_none());

    // A branch name with a slash: Link URLs work when followed.
    s.push("alice/hello", "refs/heads/feature/x", SHA).await;
    let (st, h, b) = parts(s.get("/repos/alice/hello/commits/feature/x/statuses?per_page=40", None).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(ids(&b).len(), 40);
    let l = links(header(&h, "link"));
    let (st, _, b) = parts(s.get(url_of(&l, "next"), None).await).await;
    assert_eq!(st, 200, "{}: {b}", url_of(&l, "next"));
    assert_eq!(ids(&b).len(), 25);

    // per_page=50: two pages, `last` carries page=2 and per_page=50.
    let (_, h, b) = parts(s.get(&format!("{STATUSES}?per_page=50"), None).await).await;
    assert_eq!(ids(&b).len(), 50);
    let l = links(header(&h, "link"));
    assert_eq!(rels(&l), ["next", "last"]);
    assert_eq!(qget(url_of(&l, "last"), "page").as_deref(), Some("2"));
    assert_eq!(qget(url_of(&l, "last"), "per_page").as_deref(), Some("50"));
});

both!(single_page_list_has_no_link, |s| {
    let t = setup(&s).await;
    create_statuses(&s, &t, 3).await;
    let (st, h, b) = parts(s.get(STATUSES, None).await).await;
    assert_eq!(st, 200);
    assert_eq!(ids(&b).len(), 3);
    assert!(h.get("link").is_none());
    // An empty list is a single page too.
    s.repo("alice", "empty", false).await;
    s.push("alice/empty", "refs/heads/main", SHA).await;
    let (st, h, b) = parts(s.get("/repos/alice/empty/commits/main/statuses", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b, json!([]));
    assert!(h.get("link").is_none());
});

both!(served_under_base_path_and_root, Options { base_path: "/api/v3", ..Options::default() }, |s| {
    let t = setup(&s).await;
    assert!(s.base.ends_with("/api/v3"));
    create_statuses(&s, &t, 35).await;
    let root = format!("http://{}", s.addr);

    for url in [s.url(STATUSES), format!("{root}{STATUSES}")] {
        let (st, h, b) = parts(s.get(&url, None).await).await;
        assert_eq!(st, 200, "{url}");
        assert_eq!(ids(&b).len(), 30);
        let l = links(header(&h, "link"));
        assert_eq!(url_of(&l, "next"), format!("{root}/api/v3{STATUSES}?page=2"), "Link carries the base path");
        assert!(b[0]["url"].as_str().unwrap().starts_with(&format!("{root}/api/v3/repos/alice/hello/statuses/")), "{}", b[0]["url"]);
    }
    // Create under the base path: Location and url carry it.
    let (st, h, b) = parts(s.post(CREATE, Some(&t), json!({"state": "pending"})).await).await;
    assert_eq!(st, 201);
    assert_eq!(header(&h, "location"), format!("{root}/api/v3/repos/alice/hello/statuses/{SHA}"));
    assert_eq!(b["url"], header(&h, "location"));
    // Combined status at the root: every URL field carries /api/v3.
    let (st, _, b) = parts(s.get(&format!("{root}{COMBINED}"), None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b["url"], format!("{root}/api/v3/repos/alice/hello/commits/{SHA}/status"));
    assert_eq!(b["repository"]["url"], format!("{root}/api/v3/repos/alice/hello"));
    // The API root under the base path as well as at `/`.
    let (st, _, b) = parts(s.get(&s.base, None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b["rate_limit_url"], format!("{root}/api/v3/rate_limit"));
    let (st, _, _) = parts(s.get(&format!("{root}/api/v3/"), None).await).await;
    assert_eq!(st, 200);
    let (st, _, _) = parts(s.get(&format!("{root}/"), None).await).await;
    assert_eq!(st, 200);
});

both!(api_versions, |s| {
    setup(&s).await;
    let (st, h, b) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-service-api-version-selected"), "2022-11-28");
    assert_eq!(header(&h, "x-service-media-type"), "service.v3; format=json");
    assert_eq!(b["repository"]["has_downloads"], true, "has_downloads in 2022-11-28");

    let r = s.req(Method::GET, COMBINED, None).header("x-service-api-version", "2022-11-28").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-service-api-version-selected"), "2022-11-28");
    assert_eq!(b["repository"]["has_downloads"], true);

    let r = s.req(Method::GET, COMBINED, None).header("x-service-api-version", "2026-03-10").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-service-api-version-selected"), "2026-03-10");
    assert!(b["repository"].get("has_downloads").is_none(), "no has_downloads in 2026-03-10: {}", b["repository"]);
    assert!(b["repository"].get("full_name").is_some());

    let r = s.req(Method::GET, COMBINED, None).header("x-service-api-version", "1999-01-01").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_eq!(
        b,
        json!({
            "message": "Bad Request",
            "errors": "The version you specified in the \"X-Service-API-Version\" request header, \"1999-01-01\", is not a supported version. The following versions are currently supported: \"2026-03-10\" (most recent) and \"2022-11-28\".",
            "documentation_url": "https://docs.service.example/rest",
            "status": "400"
        })
    );
    assert_error(st, &h, &b, 400, "Bad Request");
    // The unknown value is named as given.
    let r = s.req(Method::GET, "/rate_limit", None).header("x-service-api-version", "v3").send().await.unwrap();
    let (st, _, b) = parts(r).await;
    assert_eq!(st, 400);
    assert!(b["errors"].as_str().unwrap().contains("\"v3\", is not a supported version"), "{b}");
});

both!(request_id_on_every_response, |s| {
    let t = setup(&s).await;
    let mut seen = std::collections::HashSet::new();
    let responses = vec![
        s.get(COMBINED, None).await,
        s.get("/", None).await,
        s.get("/rate_limit", Some(&t)).await,
        s.get("/no/such/route", None).await,
        s.post(CREATE, Some(&t), json!({})).await,
        s.post(CREATE, Some(&t), json!({"state": "success"})).await,
        s.get(COMBINED, Some("ghp_notavalidtoken000000000000000000000")).await,
        s.req(Method::OPTIONS, COMBINED, None).send().await.unwrap(),
        s.client.get(s.url(COMBINED)).send().await.unwrap(),
        s.req(Method::GET, COMBINED, None).header("x-service-api-version", "2000-01-01").send().await.unwrap(),
    ];
    for r in responses {
        let status = r.status();
        let id = header(r.headers(), "x-service-request-id").to_string();
        assert!(is_request_id(&id), "{status}: request id {id:?}");
        assert!(seen.insert(id.clone()), "request ids are unique: {id}");
    }
});

both!(etag_and_conditional_requests, |s| {
    let t = setup(&s).await;
    create_statuses(&s, &t, 1).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    let etag = header(&h, "etag").to_string();
    assert!(etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'), "strong quoted ETag: {etag:?}");
    let used: i64 = header(&h, "x-ratelimit-used").parse().unwrap();
    assert_eq!(b["total_count"], 1);

    // The same representation has the same ETag.
    let (_, h2, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(header(&h2, "etag"), etag);
    assert_eq!(header(&h2, "x-ratelimit-used"), (used + 1).to_string());

    // If-None-Match with the ETag: 304, empty body, not charged.
    for _ in 0..3 {
        let r = s.req(Method::GET, COMBINED, Some(&t)).header("if-none-match", &etag).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 304);
        let h = r.headers().clone();
        assert_eq!(header(&h, "etag"), etag);
        assert_eq!(header(&h, "x-ratelimit-used"), (used + 1).to_string(), "a 304 costs nothing");
        assert_eq!(header(&h, "x-ratelimit-remaining"), (5000 - used - 1).to_string());
        assert!(is_request_id(header(&h, "x-service-request-id")));
        assert_eq!(r.bytes().await.unwrap().len(), 0, "304 has no body");
    }
    // Weak comparison and lists of tags match as well.
    for inm in [format!("W/{etag}"), format!("\"other\", {etag}"), "*".to_string()] {
        let r = s.req(Method::GET, COMBINED, Some(&t)).header("if-none-match", &inm).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 304, "{inm}");
        assert_eq!(header(r.headers(), "x-ratelimit-used"), (used + 1).to_string());
    }
    // A later request is charged normally, proving the 304s were not.
    let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(header(&h, "x-ratelimit-used"), (used + 2).to_string());

    // A change gives a new ETag; the old one then yields 200.
    let (st, _, _) = parts(s.post(CREATE, Some(&t), json!({"state": "failure", "context": "other"})).await).await;
    assert_eq!(st, 201);
    let r = s.req(Method::GET, COMBINED, Some(&t)).header("if-none-match", &etag).send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_eq!(st, 200);
    assert_ne!(header(&h, "etag"), etag);
    assert_eq!(b["total_count"], 2);
    // A non-matching tag is a 200.
    let r = s.req(Method::GET, COMBINED, Some(&t)).header("if-none-match", "\"nope\"").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
});

/// Every header of api-facts §6.6.
const EXPOSED: [&str; 18] = [
    "ETag",
    "Link",
    "Location",
    "Retry-After",
    "X-Service-OTP",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Used",
    "X-RateLimit-Resource",
    "X-RateLimit-Reset",
    "X-OAuth-Scopes",
    "X-Accepted-OAuth-Scopes",
    "X-Poll-Interval",
    "X-Service-Media-Type",
    "X-Service-SSO",
    "X-Service-Request-Id",
    "Deprecation",
    "Sunset",
];

fn assert_cors(h: &reqwest::header::HeaderMap) {
    assert_eq!(header(h, "access-control-allow-origin"), "*");
    let exposed: Vec<String> = header(h, "access-control-expose-headers").split(',').map(|x| x.trim().to_ascii_lowercase()).collect();
    for e in EXPOSED {
        assert!(exposed.contains(&e.to_ascii_lowercase()), "{e} exposed: {exposed:?}");
    }
}

both!(cors_headers_and_preflight, |s| {
    setup(&s).await;
    let r = s.get(COMBINED, None).await;
    assert_eq!(r.status().as_u16(), 200);
    assert_cors(r.headers());
    // Errors carry them too.
    let r = s.get("/repos/alice/nope/commits/main/status", None).await;
    assert_eq!(r.status().as_u16(), 404);
    assert_cors(r.headers());
    // Preflight: 204, no body, allows the methods and headers clients send.
    let r = s
        .req(Method::OPTIONS, CREATE, None)
        .header("origin", "https://example.org")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, x-service-api-version")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let h = r.headers().clone();
    assert_cors(&h);
    let methods = header(&h, "access-control-allow-methods").to_ascii_uppercase();
    for m in ["GET", "POST", "PATCH", "PUT", "DELETE"] {
        assert!(methods.contains(m), "{m} in {methods}");
    }
    let allowed = header(&h, "access-control-allow-headers").to_ascii_lowercase();
    for a in ["authorization", "content-type", "x-service-api-version", "if-none-match"] {
        assert!(allowed.contains(a), "{a} in {allowed}");
    }
    assert_eq!(r.bytes().await.unwrap().len(), 0);
});

both!(missing_user_agent_is_403, |s| {
    let t = setup(&s).await;
    // reqwest sends no User-Agent unless told to.
    let r = s.client.get(s.url(COMBINED)).send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_eq!(st, 403, "{b}");
    assert_eq!(b["status"], "403");
    assert!(b["message"].as_str().unwrap().contains("User-Agent"), "{b}");
    assert!(b["documentation_url"].as_str().unwrap().starts_with("https://docs.service.example/"));
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    // An empty User-Agent too; nothing is written.
    let r = s.client.post(s.url(CREATE)).header("user-agent", "").bearer_auth(&t).json(&json!({"state": "success"})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let (_, _, b) = parts(s.get(STATUSES, None).await).await;
    assert_eq!(b, json!([]));
});

both!(unknown_route_and_wrong_method_are_404_json, |s| {
    let t = setup(&s).await;
    for (m, p) in [
        (Method::GET, "/no/such/route"),
        (Method::GET, "/repos/alice/hello/nothing"),
        (Method::DELETE, "/rate_limit"),
        (Method::PUT, COMBINED),
        (Method::DELETE, CREATE),
        (Method::GET, "/repos/alice/nope/commits/main/status"),
        (Method::GET, "/repos/alice/hello/commits/nobranch/status"),
    ] {
        let r = s.req(m.clone(), p, Some(&t)).send().await.unwrap();
        let (st, h, b) = parts(r).await;
        assert_error(st, &h, &b, 404, "Not Found");
        assert_eq!(b.as_object().unwrap().len(), 3, "{m} {p}: exactly message, documentation_url, status: {b}");
    }
    // The generic body of api-facts §3.3 for an unknown route.
    let (_, _, b) = parts(s.get("/no/such/route", None).await).await;
    assert_eq!(b, json!({"message":"Not Found","documentation_url":"https://docs.service.example/rest","status":"404"}));
});

both!(bad_bodies_are_refused_and_write_nothing, |s| {
    let t = setup(&s).await;
    let raw = |body: &'static str| s.req(Method::POST, CREATE, Some(&t)).header("content-type", "application/json").body(body).send();
    let (st, h, b) = parts(raw("{\"state\": ").await.unwrap()).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    let (st, h, b) = parts(raw("not json at all").await.unwrap()).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    for body in ["[{\"state\": \"success\"}]", "\"success\"", "42", "null"] {
        let (st, h, b) = parts(raw(body).await.unwrap()).await;
        assert_error(st, &h, &b, 400, "Body should be a JSON object");
    }
    // Wrong type: 422 `Invalid request.`
    let (st, h, b) = parts(s.post(CREATE, Some(&t), json!({"state": 5})).await).await;
    assert_eq!(st, 422, "{b}");
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(b["status"], "422");
    let (st, _, b) = parts(s.post(CREATE, Some(&t), json!({"state": "success", "description": 7})).await).await;
    assert_eq!(st, 422);
    assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    // Missing required field.
    let (st, h, b) = parts(s.post(CREATE, Some(&t), json!({"context": "ci"})).await).await;
    assert_error(st, &h, &b, 422, "Invalid request.\n\n\"state\" wasn't supplied.");
    // An empty body reads as `{}`.
    let (st, _, b) = parts(raw("").await.unwrap()).await;
    assert_eq!(st, 422);
    assert_eq!(b["message"], "Invalid request.\n\n\"state\" wasn't supplied.");
    // Unknown enum value: Validation Failed with errors[0] {resource, field, code}.
    let (st, h, b) = parts(s.post(CREATE, Some(&t), json!({"state": "bogus"})).await).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    let e = &b["errors"][0];
    assert_eq!(e["resource"], "Status", "{b}");
    assert_eq!(e["field"], "state", "{b}");
    assert_eq!(e["code"], "custom", "{b}");
    assert_eq!(e["message"], "state is not included in the list", "{b}");
    assert_eq!(b["documentation_url"], "https://docs.service.example/rest/commits/statuses#create-a-commit-status");

    // Nothing was written.
    let (st, _, b) = parts(s.get(STATUSES, None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b, json!([]));
    let (_, _, b) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(b["total_count"], 0);
});

both!(body_over_limit_is_413, Options::with(|c| c.limits.max_body_bytes = 1024), |s| {
    let t = setup(&s).await;
    let big = "x".repeat(2000);
    let (st, h, b) = parts(s.post(CREATE, Some(&t), json!({"state": "success", "target_url": big})).await).await;
    assert_eq!(st, 413, "{b}");
    assert_eq!(b["status"], "413");
    assert!(b["message"].is_string() && b["documentation_url"].is_string(), "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    // Also without a Content-Length (chunked body), over a raw connection.
    let head = format!(
        "POST /repos/alice/hello/statuses/main HTTP/1.1\r\nHost: {}\r\nUser-Agent: {UA}\r\nAuthorization: Bearer {t}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        s.addr
    );
    let body = format!("{{\"state\": \"success\", \"target_url\": \"{big}\"}}");
    let mut chunked = String::new();
    for c in body.as_bytes().chunks(300) {
        chunked.push_str(&format!("{:X}\r\n{}\r\n", c.len(), std::str::from_utf8(c).unwrap()));
    }
    chunked.push_str("0\r\n\r\n");
    let addr = s.addr;
    let reply = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(head.as_bytes()).unwrap();
        c.write_all(chunked.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    // Under the limit works; the refused ones wrote nothing.
    let (st, _, _) = parts(s.post(CREATE, Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201);
    let (_, _, b) = parts(s.get(STATUSES, None).await).await;
    assert_eq!(b.as_array().unwrap().len(), 1);
});

both!(owner_and_repo_are_case_insensitive_and_accept_dot_git, |s| {
    let t = setup(&s).await;
    create_statuses(&s, &t, 1).await;
    for p in [
        "/repos/ALICE/Hello/commits/main/status",
        "/repos/Alice/HELLO/commits/main/status",
        "/repos/alice/hello.git/commits/main/status",
        "/repos/ALICE/hello.git/commits/main/statuses",
    ] {
        let (st, _, b) = parts(s.get(p, None).await).await;
        assert_eq!(st, 200, "{p}: {b}");
    }
    let (_, _, b) = parts(s.get("/repos/ALICE/Hello/commits/main/status", None).await).await;
    assert_eq!(b["total_count"], 1);
    assert_eq!(b["repository"]["full_name"], "alice/hello");
    // Writes too.
    let (st, _, _) = parts(s.post("/repos/Alice/Hello.git/statuses/main", Some(&t), json!({"state": "failure"})).await).await;
    assert_eq!(st, 201);
    let (_, _, b) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(b["total_count"], 2);
});

both!(renamed_repository_redirects, |s| {
    let t = setup(&s).await;
    create_statuses(&s, &t, 2).await;
    s.admin_post("/repos/alice/hello/rename", json!({"name": "world"})).await;

    let (st, h, b) = parts(s.get(&format!("{STATUSES}?per_page=1"), None).await).await;
    assert_eq!(st, 301, "{b}");
    let loc = header(&h, "location").to_string();
    assert_eq!(loc, format!("{}/repos/alice/world/commits/main/statuses?per_page=1", s.base));
    assert_eq!(b["message"], "Moved Permanently");
    assert_eq!(b["url"], loc);
    assert!(b["documentation_url"].is_string());
    // The Location works.
    let (st, h, b) = parts(s.get(&loc, None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert!(header(&h, "link").contains("/repos/alice/world/commits/main/statuses?"));
    // The new name works for reads and writes.
    let (st, _, b) = parts(s.get("/repos/alice/world/commits/main/status", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b["total_count"], 2);
    assert_eq!(b["repository"]["name"], "world");
    let (st, _, _) = parts(s.post("/repos/alice/world/statuses/main", Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201);
    // The Location repeats the query, still encoded.
    let (st, h, _) = parts(s.get(&format!("{STATUSES}?per_page=1&x=a%20b%26c%3Dd"), None).await).await;
    assert_eq!(st, 301);
    let loc = header(&h, "location").to_string();
    assert_eq!(loc, format!("{}/repos/alice/world/commits/main/statuses?per_page=1&x=a%20b%26c%3Dd", s.base));
    let (st, h, _) = parts(s.get(&loc, None).await).await;
    assert_eq!(st, 200);
    let next = links(header(&h, "link")).into_iter().find(|(r, _)| r == "next").unwrap().1;
    assert_eq!(qget(&next, "x").as_deref(), Some("a%20b%26c%3Dd"), "{next}");
    // Old name, case-insensitively, still redirects.
    let (st, h, _) = parts(s.get("/repos/ALICE/Hello/commits/main/status", None).await).await;
    assert_eq!(st, 301);
    assert!(header(&h, "location").ends_with("/repos/alice/world/commits/main/status"), "{:?}", h.get("location"));
});

both!(timestamps_are_iso8601_utc, |s| {
    let t = setup(&s).await;
    let (st, _, b) =
        parts(s.post(CREATE, Some(&t), json!({"state": "success", "description": "d", "target_url": "https://ci.example/1"})).await).await;
    assert_eq!(st, 201);
    for k in ["created_at", "updated_at"] {
        assert!(is_timestamp(b[k].as_str().unwrap()), "{k}: {}", b[k]);
    }
    let (_, _, b) = parts(s.get(STATUSES, None).await).await;
    assert!(is_timestamp(b[0]["created_at"].as_str().unwrap()));
    let (_, _, b) = parts(s.get(COMBINED, None).await).await;
    assert!(is_timestamp(b["statuses"][0]["updated_at"].as_str().unwrap()), "{b}");
    for k in ["created_at", "updated_at", "pushed_at"] {
        if let Some(v) = b["repository"][k].as_str() {
            assert!(is_timestamp(v), "repository.{k}: {v}");
        }
    }
});

both!(scope_and_permission_headers, |s| {
    let t = setup(&s).await; // classic with repo, user
    let (st, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-oauth-scopes"), "repo, user");
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, repo:status");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=read");
    let (_, h, _) = parts(s.get(STATUSES, Some(&t)).await).await;
    assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=read");
    let (st, h, _) = parts(s.post(CREATE, Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201);
    assert_eq!(header(&h, "x-oauth-scopes"), "repo, user");
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, repo:status");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=write");
    // A classic token with one scope, and with none.
    let one = s.classic("alice", &["repo:status"]).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&one)).await).await;
    assert_eq!(header(&h, "x-oauth-scopes"), "repo:status");
    let none = s.classic("alice", &[]).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&none)).await).await;
    assert_eq!(header(&h, "x-oauth-scopes"), "");
    assert!(h.get("x-oauth-scopes").is_some(), "present (empty) for a classic token without scopes");
    // Fine-grained tokens have no X-OAuth-Scopes; anonymous callers neither.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "write"}})).await;
    let (st, h, _) = parts(s.get(COMBINED, Some(&fg)).await).await;
    assert_eq!(st, 200);
    assert!(h.get("x-oauth-scopes").is_none());
    assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=read");
    let (_, h, _) = parts(s.get(COMBINED, None).await).await;
    assert!(h.get("x-oauth-scopes").is_none());
    // OAuth-app user tokens: their scopes, and the app's client id.
    s.user("carol").await;
    let app = s.admin_post("/apps", json!({"name": "ci", "owner": "carol", "kind": "oauth"})).await;
    let oauth =
        s.token(json!({"kind": "oauth", "login": "alice", "client_id": app["client_id"], "scopes": ["repo:status", "read:org"]})).await;
    let (st, h, _) = parts(s.post(CREATE, Some(&oauth), json!({"state": "pending"})).await).await;
    assert_eq!(st, 201);
    assert_eq!(header(&h, "x-oauth-scopes"), "repo:status, read:org");
    assert_eq!(header(&h, "x-oauth-client-id"), app["client_id"].as_str().unwrap());
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, repo:status");
});

both!(bearer_and_token_schemes, |s| {
    let t = setup(&s).await;
    for scheme in ["Bearer", "token", "bearer"] {
        let r = s
            .client
            .post(s.url(CREATE))
            .header("user-agent", UA)
            .header("authorization", format!("{scheme} {t}"))
            .json(&json!({"state": "success"}))
            .send()
            .await
            .unwrap();
        let (st, h, b) = parts(r).await;
        assert_eq!(st, 201, "{scheme}: {b}");
        assert_eq!(header(&h, "x-oauth-scopes"), "repo, user");
        assert_eq!(b["creator"]["login"], "alice");
    }
    // A wrong token under either scheme: 401 Bad credentials.
    for scheme in ["Bearer", "token"] {
        let r =
            s.client.get(s.url(COMBINED)).header("user-agent", UA).header("authorization", format!("{scheme} {t}x")).send().await.unwrap();
        let (st, h, b) = parts(r).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
    }
    // Anonymous write: 401 Requires authentication.
    let (st, h, b) = parts(s.post(CREATE, None, json!({"state": "success"})).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
});
