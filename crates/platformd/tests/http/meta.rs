//! `GET /`, `GET /rate_limit`, and the operational endpoints `/healthz`, `/readyz`, `/metrics`.
use crate::both;
use crate::harness::*;
use reqwest::Method;
use serde_json::Value;

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";

/// Required in both versions (api-facts §4.19).
const ROOT_KEYS: [&str; 31] = [
    "current_user_url",
    "current_user_authorizations_html_url",
    "current_user_repositories_url",
    "code_search_url",
    "commit_search_url",
    "issue_search_url",
    "label_search_url",
    "repository_search_url",
    "user_search_url",
    "emails_url",
    "followers_url",
    "following_url",
    "keys_url",
    "starred_url",
    "user_url",
    "user_organizations_url",
    "user_repositories_url",
    "emojis_url",
    "events_url",
    "feeds_url",
    "gists_url",
    "public_gists_url",
    "starred_gists_url",
    "issues_url",
    "notifications_url",
    "organization_url",
    "organization_repositories_url",
    "organization_teams_url",
    "rate_limit_url",
    "repository_url",
    // Optional, but served.
    "topic_search_url",
];

async fn get_version(s: &Server, path: &str, version: Option<&str>, token: Option<&str>) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.req(Method::GET, path, token);
    if let Some(v) = version {
        r = r.header("x-service-api-version", v);
    }
    parts(r.send().await.unwrap()).await
}

both!(api_root, |s| {
    for version in [None, Some("2022-11-28"), Some("2026-03-10")] {
        let (st, h, b) = get_version(&s, "/", version, None).await;
        assert_eq!(st, 200);
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
        let m = b.as_object().unwrap();
        for k in ROOT_KEYS {
            let v = m.get(k).and_then(Value::as_str).unwrap_or_else(|| panic!("{version:?}: {k} missing: {b}"));
            assert!(v.starts_with("http://") || v.starts_with("https://"), "{k}: {v}");
        }
        assert!(m.values().all(Value::is_string), "all uri-template strings");
        let old = version != Some("2026-03-10");
        assert_eq!(m.contains_key("authorizations_url"), old, "{version:?}: authorizations_url only in 2022-11-28");
        if !old {
            assert!(!m.contains_key("hub_url"));
        }
        // API URLs come from the public URL; templates are literal.
        assert_eq!(b["rate_limit_url"], format!("{}/rate_limit", s.base));
        assert_eq!(b["current_user_url"], format!("{}/user", s.base));
        assert_eq!(b["repository_url"], format!("{}/repos/{{owner}}/{{repo}}", s.base));
        assert_eq!(b["organization_url"], format!("{}/orgs/{{org}}", s.base));
        assert!(b["starred_url"].as_str().unwrap().ends_with("/user/starred{/owner}{/repo}"));
        assert!(b["following_url"].as_str().unwrap().contains('{'));
    }
    let (_, _, b) = get_version(&s, "/", None, None).await;
    assert_eq!(b["authorizations_url"], format!("{}/authorizations", s.base));
    // The root URLs point at working operations.
    let (st, _, _) = parts(s.get(b["rate_limit_url"].as_str().unwrap(), None).await).await;
    assert_eq!(st, 200);
});

fn assert_bucket(name: &str, v: &Value) {
    let o = v.as_object().unwrap_or_else(|| panic!("{name}: {v}"));
    for k in ["limit", "remaining", "reset", "used"] {
        assert!(o.get(k).is_some_and(Value::is_i64), "{name}.{k} is an integer: {v}");
    }
    assert_eq!(o.len(), 4, "{name}: exactly limit, remaining, reset, used: {v}");
    assert_eq!(o["limit"].as_i64().unwrap() - o["used"].as_i64().unwrap(), o["remaining"].as_i64().unwrap(), "{name}");
}

both!(rate_limit_overview_shape, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let now = s.admin(Method::GET, "/clock", Value::Null).await["epoch"].as_i64().unwrap();
    for token in [None, Some(t.as_str())] {
        let (st, h, b) = get_version(&s, "/rate_limit", None, token).await;
        assert_eq!(st, 200);
        assert_eq!(header(&h, "x-service-api-version-selected"), "2022-11-28");
        let r = b["resources"].as_object().unwrap();
        for k in [
            "core",
            "search",
            "graphql",
            "integration_manifest",
            "source_import",
            "code_search",
            "actions_runner_registration",
            "scim",
            "dependency_snapshots",
            "code_scanning_autofix",
        ] {
            assert_bucket(k, r.get(k).unwrap_or_else(|| panic!("resources.{k} missing: {b}")));
        }
        for (k, v) in r {
            assert_bucket(k, v);
            let reset = v["reset"].as_i64().unwrap();
            assert!(reset > now && reset <= now + 3600, "{k}.reset is epoch seconds: {reset}");
        }
        assert_eq!(b["rate"], b["resources"]["core"], "rate duplicates resources.core in 2022-11-28");
        let want = if token.is_some() { 5000 } else { 60 };
        assert_eq!(b["resources"]["core"]["limit"], want);
        assert_eq!(header(&h, "x-ratelimit-limit"), want.to_string());
        assert_eq!(header(&h, "x-ratelimit-remaining"), b["resources"]["core"]["remaining"].to_string());
        assert_eq!(header(&h, "x-ratelimit-reset"), b["resources"]["core"]["reset"].to_string());
        assert_eq!(b.as_object().unwrap().len(), 2, "{{resources, rate}}: {b}");

        let (st, h, b) = get_version(&s, "/rate_limit", Some("2026-03-10"), token).await;
        assert_eq!(st, 200);
        assert_eq!(header(&h, "x-service-api-version-selected"), "2026-03-10");
        assert!(b.get("rate").is_none(), "no rate in 2026-03-10: {b}");
        assert_eq!(b.as_object().unwrap().len(), 1);
        assert_bucket("core", &b["resources"]["core"]);
        assert_bucket("search", &b["resources"]["search"]);
        assert_eq!(b["resources"]["core"]["limit"], want);
    }
});

both!(health_and_readiness, |s| {
    for p in ["/healthz", "/readyz"] {
        let r = s.client.get(format!("http://{}{p}", s.addr)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{p}");
        assert!(!r.text().await.unwrap().is_empty());
    }
    // No User-Agent, no credentials, not rate limited.
    for _ in 0..70 {
        let r = s.client.get(format!("http://{}/healthz", s.addr)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    assert_eq!(s.get(COMBINED, None).await.status().as_u16(), 404, "the API still answers, its limit untouched");
});

both!(prometheus_metrics, Options::with(|c| c.rate_limit_factor = 0.02), |s| {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    let metrics = || async {
        let r = s.client.get(format!("http://{}/metrics", s.addr)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert!(header(r.headers(), "content-type").starts_with("text/plain"), "{:?}", r.headers().get("content-type"));
        r.text().await.unwrap()
    };
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 200);
    let t = s.classic("alice", &[]).await;
    let (st, _, _) = parts(s.get("/no/such/route", Some(&t)).await).await;
    assert_eq!(st, 404);
    let text = metrics().await;
    let line = "platform_http_requests_total{method=\"GET\",route=\"/repos/{owner}/{repo}/commits/{ref}/status\",status=\"200\"}";
    let count =
        |text: &str, prefix: &str| -> Option<f64> { text.lines().find_map(|l| l.strip_prefix(prefix).and_then(|v| v.trim().parse().ok())) };
    assert_eq!(count(&text, &format!("{line} ")), Some(1.0), "{text}");
    assert!(text.contains("# TYPE platform_http_requests_total counter"));
    // Latency histogram: buckets, +Inf, sum and count.
    assert!(text.contains("# TYPE platform_http_request_duration_seconds histogram"), "{text}");
    assert!(text.contains("platform_http_request_duration_seconds_bucket{le=\"+Inf\"}"), "{text}");
    let total = count(&text, "platform_http_request_duration_seconds_count ").unwrap();
    assert!(total >= 2.0, "{text}");
    assert_eq!(count(&text, "platform_http_request_duration_seconds_bucket{le=\"+Inf\"} "), Some(total));
    assert!(count(&text, "platform_http_request_duration_seconds_sum ").is_some());
    assert_eq!(count(&text, "platform_rate_limited_requests_total "), Some(0.0), "{text}");

    // The anonymous limit here is 60 × 0.02 ≈ 1, already used: refused requests are counted.
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 403, "anonymous limit 1 here is exhausted");
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 403);
    let text = metrics().await;
    assert_eq!(count(&text, &format!("{line} ")), Some(1.0));
    assert_eq!(count(&text, "platform_rate_limited_requests_total "), Some(2.0), "{text}");
    // Queue depths: the write queue is empty once every write was answered (activity consumers
    // write in the background, so wait for them to settle).
    let mut text = text;
    for _ in 0..100 {
        if count(&text, "platform_store_pending_writes ") == Some(0.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        text = metrics().await;
    }
    assert_eq!(count(&text, "platform_store_pending_writes "), Some(0.0), "{text}");
    assert!(text.contains("# TYPE platform_store_pending_writes gauge"), "{text}");
    let (st, _, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200);
    let text = metrics().await;
    assert_eq!(count(&text, &format!("{line} ")), Some(2.0));
});
