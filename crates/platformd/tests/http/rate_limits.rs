//! Primary rate limits of document 1: headers on every response, the per-requester buckets and
//! limits, the exhausted answer, windows on the manual clock, and `GET /rate_limit`.
use crate::both;
use crate::harness::*;
use platform_api::forwarded::TrustedProxies;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";
const ANON_MESSAGE: &str = "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)";
const RATE_DOCS: &str = "https://docs.service.example/rest/overview/resources-in-the-rest-api#rate-limiting";

/// Limit 5 per hour for 5,000 (see `Limiter::limit`: rounded, at least 1).
fn small() -> Options {
    Options::with(|c| c.limits.rate_limit_factor = 0.001)
}

async fn setup(s: &Server) -> i64 {
    let u = s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    u["id"].as_i64().unwrap()
}

fn num(h: &reqwest::header::HeaderMap, k: &str) -> i64 {
    header(h, k).parse().unwrap_or_else(|_| panic!("{k} is an integer: {:?}", h.get(k)))
}

/// (limit, remaining, used, reset) of a response, checking the header set is complete.
fn quota(h: &reqwest::header::HeaderMap) -> (i64, i64, i64, i64) {
    assert_eq!(header(h, "x-ratelimit-resource"), "core");
    let q = (num(h, "x-ratelimit-limit"), num(h, "x-ratelimit-remaining"), num(h, "x-ratelimit-used"), num(h, "x-ratelimit-reset"));
    assert_eq!(q.0 - q.2, q.1, "remaining = limit - used: {q:?}");
    q
}

async fn get_with(s: &Server, path: &str, auth: Option<(&str, &str)>) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.req(Method::GET, path, None);
    if let Some((k, v)) = auth {
        r = r.header("authorization", format!("{k} {v}"));
    }
    parts(r.send().await.unwrap()).await
}

async fn clock_epoch(s: &Server) -> i64 {
    s.admin(Method::GET, "/clock", Value::Null).await["epoch"].as_i64().unwrap()
}

both!(headers_on_every_response, |s| {
    setup(&s).await;
    let t = s.classic("alice", &["repo"]).await;
    let now = clock_epoch(&s).await;
    let cases: Vec<(&str, reqwest::Response)> = vec![
        ("200 anon", s.get(COMBINED, None).await),
        ("200 token", s.get(COMBINED, Some(&t)).await),
        ("200 root", s.get("/", None).await),
        ("200 rate_limit", s.get("/rate_limit", None).await),
        ("201", s.post("/repos/alice/hello/statuses/main", Some(&t), json!({"state": "success"})).await),
        ("404 route", s.get("/no/such/route", None).await),
        ("404 repo", s.get("/repos/alice/nope/commits/main/status", Some(&t)).await),
        ("422", s.post("/repos/alice/hello/statuses/main", Some(&t), json!({})).await),
        ("400", s.req(Method::POST, "/repos/alice/hello/statuses/main", Some(&t)).body("{").send().await.unwrap()),
        ("401 anon write", s.post("/repos/alice/hello/statuses/main", None, json!({"state": "success"})).await),
        ("401 bad credentials", s.get(COMBINED, Some("ghp_000000000000000000000000000000000000")).await),
        ("400 version", s.req(Method::GET, COMBINED, None).header("x-service-api-version", "1999-01-01").send().await.unwrap()),
        ("403 no user agent", s.client.get(s.url(COMBINED)).send().await.unwrap()),
    ];
    for (what, r) in cases {
        let h = r.headers().clone();
        for k in ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset", "x-ratelimit-resource"] {
            assert!(h.get(k).is_some(), "{what} ({}): {k} missing", r.status());
        }
        let (limit, _, _, reset) = quota(&h);
        assert!(limit == 60 || limit == 5000, "{what}: {limit}");
        assert!(reset > now && reset <= now + 3600, "{what}: reset {reset} is epoch seconds within the hour after {now}");
        assert!(h.get("retry-after").is_none(), "{what}");
    }
});

both!(unauthenticated_60_per_hour_per_address, |s| {
    setup(&s).await;
    let mut reset = 0;
    for i in 1..=60 {
        let (st, h, _) = parts(s.get(COMBINED, None).await).await;
        assert_eq!(st, 200, "request {i}");
        let q = quota(&h);
        assert_eq!((q.0, q.1, q.2), (60, 60 - i, i), "request {i}");
        if i == 1 {
            reset = q.3;
        }
        assert_eq!(q.3, reset, "fixed window");
    }
    let (st, h, b) = parts(s.get(COMBINED, None).await).await;
    assert_error(st, &h, &b, 403, ANON_MESSAGE);
    assert_eq!(b["documentation_url"], RATE_DOCS);
    assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
    assert_eq!(header(&h, "x-ratelimit-limit"), "60");
    assert_eq!(header(&h, "x-ratelimit-used"), "60");
    assert_eq!(num(&h, "x-ratelimit-reset"), reset);
    assert!(h.get("retry-after").is_none(), "no retry-after on a primary limit");
    // Every route is refused, writes too; nothing is charged beyond the limit.
    let (st, h, b) = parts(s.get("/", None).await).await;
    assert_eq!(st, 403);
    assert!(b["message"].as_str().unwrap().starts_with("API rate limit exceeded for"));
    assert_eq!(header(&h, "x-ratelimit-used"), "60");
    // GET /rate_limit still answers, reporting the exhausted bucket.
    let (st, h, b) = parts(s.get("/rate_limit", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b["resources"]["core"], json!({"limit": 60, "remaining": 0, "used": 60, "reset": reset}));
    assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
    // An authenticated caller from the same address has its own bucket.
    let t = s.classic("alice", &[]).await;
    let (st, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h).0, 5000);

    // The next window opens after an hour.
    s.advance(1800).await;
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 403, "still limited half an hour later");
    s.advance(1800).await;
    let (st, h, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 200);
    let q = quota(&h);
    assert_eq!((q.0, q.1, q.2), (60, 59, 1));
    assert!(q.3 >= reset + 3600 - 1, "reset moved: {} -> {}", reset, q.3);
});

both!(user_limit_shared_by_all_tokens_of_the_user, small(), |s| {
    let alice = setup(&s).await;
    s.user("bob").await;
    s.user("carol").await;
    let app = s.admin_post("/apps", json!({"name": "ci-app", "owner": "carol", "kind": "oauth"})).await;
    let classic = s.classic("alice", &["repo"]).await;
    let classic2 = s.classic("alice", &[]).await;
    let fine = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "read"}})).await;
    let oauth = s.token(json!({"kind": "oauth", "login": "alice", "client_id": app["client_id"], "scopes": ["repo"]})).await;
    let bob = s.classic("bob", &["repo"]).await;

    let mut used = 0;
    for t in [&classic, &classic2, &fine, &oauth, &classic] {
        used += 1;
        let (st, h, b) = parts(s.get(COMBINED, Some(t)).await).await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(quota(&h), (5, 5 - used, used, quota(&h).3), "one bucket for all of alice's tokens");
    }
    for t in [&classic2, &oauth] {
        let (st, h, b) = parts(s.get(COMBINED, Some(t)).await).await;
        assert_error(st, &h, &b, 403, &format!("API rate limit exceeded for user ID {alice}."));
        assert_eq!(b["documentation_url"], RATE_DOCS);
        assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
        assert!(h.get("retry-after").is_none());
    }
    // A write is refused as well, and writes nothing.
    let (st, _, _) = parts(s.post("/repos/alice/hello/statuses/main", Some(&classic), json!({"state": "success"})).await).await;
    assert_eq!(st, 403);
    // Another user is not affected.
    let (st, h, _) = parts(s.get(COMBINED, Some(&bob)).await).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h).2, 1);
    // The window resets after an hour.
    s.advance(3600).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&fine)).await).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h).2, 1);
    assert_eq!(b["total_count"], 0, "the refused write wrote nothing");
});

both!(installation_limits, |s| {
    // Small org: 5,000. An org with 25 repositories and 25 members: 5,000 + 5·50 + 5·50.
    let mut members = Vec::new();
    for i in 0..25 {
        let login = format!("m{i}");
        s.user(&login).await;
        members.push(login);
    }
    s.admin_post("/orgs", json!({"login": "small", "owners": [], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "big", "owners": [], "members": members})).await;
    for i in 0..25 {
        s.repo("big", &format!("r{i}"), false).await;
    }
    s.repo("small", "only", false).await;
    s.admin_post("/enterprises", json!({"slug": "acme", "name": "Acme", "owners": [], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "ent", "owners": [], "members": [], "enterprise": "acme"})).await;
    let app = s.admin_post("/apps", json!({"name": "bot", "owner": "m0", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    for (org, want) in [("small", 5000), ("big", 5500), ("ent", 15000)] {
        s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": org})).await;
        let t = s.token(json!({"kind": "installation", "client_id": cid, "org": org})).await;
        let (st, h, _) = parts(s.get("/", Some(&t)).await).await;
        assert_eq!(st, 200);
        assert_eq!(quota(&h), (want, want - 1, 1, quota(&h).3), "installation on {org}");
        // Two tokens of one installation share the bucket.
        let t2 = s.token(json!({"kind": "installation", "client_id": cid, "org": org})).await;
        let (_, h, _) = parts(s.get("/", Some(&t2)).await).await;
        assert_eq!(quota(&h).2, 2, "{org}");
    }
});

both!(installation_exhausted_message, small(), |s| {
    s.user("owner").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["owner"], "members": []})).await;
    let app = s.admin_post("/apps", json!({"name": "bot", "owner": "owner", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    let inst = s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    let t = s.token(json!({"kind": "installation", "installation_id": inst["id"]})).await;
    for _ in 0..5 {
        assert_eq!(s.get("/", Some(&t)).await.status().as_u16(), 200);
    }
    let (st, h, b) = parts(s.get("/", Some(&t)).await).await;
    assert_error(st, &h, &b, 403, &format!("API rate limit exceeded for installation ID {}.", inst["id"]));
    assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
});

both!(workflow_token_limit_per_repository, |s| {
    setup(&s).await;
    s.repo("alice", "other", false).await;
    let w1 = s.token(json!({"kind": "workflow", "repo": "alice/hello"})).await;
    let w2 = s.token(json!({"kind": "workflow", "repo": "alice/hello"})).await;
    let w3 = s.token(json!({"kind": "workflow", "repo": "alice/other"})).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&w1)).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(quota(&h), (1000, 999, 1, quota(&h).3));
    let (_, h, _) = parts(s.get(COMBINED, Some(&w2)).await).await;
    assert_eq!(quota(&h), (1000, 998, 2, quota(&h).3), "two workflow tokens of one repository share it");
    let (_, h, _) = parts(s.get(COMBINED, Some(&w1)).await).await;
    assert_eq!(quota(&h).2, 3);
    let (_, h, _) = parts(s.get(COMBINED, Some(&w3)).await).await;
    assert_eq!(quota(&h), (1000, 999, 1, quota(&h).3), "another repository has its own bucket");
    // alice's own bucket is untouched.
    let t = s.classic("alice", &[]).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(quota(&h), (5000, 4999, 1, quota(&h).3));
    // Repositories of an enterprise account: 15,000.
    s.admin_post("/enterprises", json!({"slug": "acme", "name": "Acme", "owners": [], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "entorg", "owners": ["alice"], "members": [], "enterprise": "acme"})).await;
    s.repo("entorg", "svc", false).await;
    let w4 = s.token(json!({"kind": "workflow", "repo": "entorg/svc"})).await;
    let (st, h, _) = parts(s.get("/", Some(&w4)).await).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h), (15000, 14999, 1, quota(&h).3));
});

both!(workflow_token_exhausted, small(), |s| {
    setup(&s).await;
    let w1 = s.token(json!({"kind": "workflow", "repo": "alice/hello"})).await;
    let w2 = s.token(json!({"kind": "workflow", "repo": "alice/hello"})).await;
    // 1,000 × 0.001 = 1.
    let (st, h, _) = parts(s.get(COMBINED, Some(&w1)).await).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h).0, 1);
    let (st, h, b) = parts(s.get(COMBINED, Some(&w2)).await).await;
    assert_eq!(st, 403);
    assert!(b["message"].as_str().unwrap().starts_with("API rate limit exceeded for"), "{b}");
    assert_eq!(b["documentation_url"], RATE_DOCS);
    assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
});

both!(oauth_app_basic_credentials, |s| {
    setup(&s).await;
    let app = s.admin_post("/apps", json!({"name": "reader", "owner": "alice", "kind": "oauth"})).await;
    let basic = base64(&format!("{}:{}", app["client_id"].as_str().unwrap(), app["client_secret"].as_str().unwrap()));
    let (st, h, b) = get_with(&s, COMBINED, Some(("Basic", &basic))).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(quota(&h), (5000, 4999, 1, quota(&h).3));
    let (_, h, _) = get_with(&s, COMBINED, Some(("Basic", &basic))).await;
    assert_eq!(quota(&h).2, 2);
    // The app's bucket is not its owner's.
    let t = s.classic("alice", &[]).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(quota(&h).2, 1);
    // A wrong secret is 401 Bad credentials.
    let wrong = base64(&format!("{}:nope", app["client_id"].as_str().unwrap()));
    let (st, h, b) = get_with(&s, COMBINED, Some(("Basic", &wrong))).await;
    assert_error(st, &h, &b, 401, "Bad credentials");

    // Owned by an organization of an enterprise: 15,000.
    s.admin_post("/enterprises", json!({"slug": "acme", "name": "Acme", "owners": [], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "entorg", "owners": ["alice"], "members": [], "enterprise": "acme"})).await;
    let app = s.admin_post("/apps", json!({"name": "ent-reader", "owner": "entorg", "kind": "oauth"})).await;
    let basic = base64(&format!("{}:{}", app["client_id"].as_str().unwrap(), app["client_secret"].as_str().unwrap()));
    let (st, h, _) = get_with(&s, COMBINED, Some(("Basic", &basic))).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h).0, 15000);
});

both!(enterprise_app_acting_for_member_gets_15000, |s| {
    setup(&s).await;
    s.user("outsider").await;
    s.admin_post("/enterprises", json!({"slug": "acme", "name": "Acme", "owners": [], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "entorg", "owners": [], "members": ["alice"], "enterprise": "acme"})).await;
    let app = s.admin_post("/apps", json!({"name": "ent-app", "owner": "entorg", "kind": "app"})).await;
    let member = s.token(json!({"kind": "user_to_server", "login": "alice", "client_id": app["client_id"]})).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&member)).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(quota(&h).0, 15000);
    let other = s.token(json!({"kind": "user_to_server", "login": "outsider", "client_id": app["client_id"]})).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&other)).await).await;
    assert_eq!(quota(&h).0, 5000, "a non-member gets the user limit");
});

both!(rate_limit_endpoint_is_free_and_agrees, |s| {
    setup(&s).await;
    let t = s.classic("alice", &[]).await;
    let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    let q = quota(&h);
    assert_eq!(q.2, 1);
    for _ in 0..5 {
        let (st, h, b) = parts(s.get("/rate_limit", Some(&t)).await).await;
        assert_eq!(st, 200);
        assert_eq!(quota(&h), q, "never charged");
        let core = &b["resources"]["core"];
        assert_eq!(*core, json!({"limit": q.0, "remaining": q.1, "used": q.2, "reset": q.3}));
        assert_eq!(b["rate"], *core);
    }
    // A 2026-03-10 request is not charged either.
    let r = s.req(Method::GET, "/rate_limit", Some(&t)).header("x-service-api-version", "2026-03-10").send().await.unwrap();
    let (st, h, _) = parts(r).await;
    assert_eq!(st, 200);
    assert_eq!(quota(&h), q);
    let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(quota(&h).2, 2, "the next charged request continues from 1");
    // Anonymous callers see their own (address) bucket.
    let (_, h, b) = parts(s.get("/rate_limit", None).await).await;
    assert_eq!(b["resources"]["core"]["limit"], 60);
    assert_eq!(b["resources"]["core"]["used"], 0);
    assert_eq!(quota(&h).0, 60);
});

both!(rate_limiting_disabled, Options::with(|c| c.limits.rate_limits = false), |s| {
    setup(&s).await;
    let (st, h, b) = parts(s.get("/rate_limit", None).await).await;
    assert_error(st, &h, &b, 404, "Rate limiting is not enabled.");
    // Nothing is ever refused.
    for _ in 0..70 {
        assert_eq!(s.get(COMBINED, None).await.status().as_u16(), 200);
    }
});

fn base64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The anonymous bucket a request with `X-Forwarded-For: forwarded` was counted in: its `used`.
async fn anonymous_used(s: &Server, forwarded: &str) -> i64 {
    let r = s.req(Method::GET, COMBINED, None).header("x-forwarded-for", forwarded).send().await.unwrap();
    assert_eq!(r.status(), 200);
    quota(r.headers()).2
}

both!(forwarded_addresses_are_believed_only_from_trusted_proxies, |s| {
    setup(&s).await;
    // The suite's client is not a trusted proxy: whatever it writes, it is one address.
    for (i, spoof) in ["203.0.113.1", "203.0.113.2", "203.0.113.3, 198.51.100.1"].iter().enumerate() {
        assert_eq!(anonymous_used(&s, spoof).await, i as i64 + 1, "{spoof}");
    }
});

both!(
    behind_a_trusted_proxy_the_caller_is_the_last_address_it_did_not_write,
    Options::with(|c| c.trusted_proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap()),
    |s| {
        setup(&s).await;
        // Entries the client wrote come first; the proxies' own come last.
        assert_eq!(anonymous_used(&s, "198.51.100.7").await, 1);
        assert_eq!(anonymous_used(&s, "203.0.113.9, 198.51.100.7").await, 2, "a client-written first entry changes nothing");
        assert_eq!(anonymous_used(&s, "203.0.113.8, 198.51.100.7, 10.1.2.3").await, 3, "past every trusted hop");
        assert_eq!(anonymous_used(&s, "198.51.100.8").await, 1, "another caller, another bucket");
    }
);
