//! `GET /`, `GET /rate_limit`, and the operational endpoints `/healthz`, `/readyz`, `/metrics`.
use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use reqwest::Method;
use serde_json::Value;

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";

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
        assert_conforms_to_snapshot("Root", &b);
        let m = b.as_object().unwrap();
        for (k, v) in m {
            assert!(v.as_str().is_some_and(|v| v.starts_with("http://") || v.starts_with("https://")), "{k}: {v}");
        }
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
    s.user("alice").await;
    s.admin_post("/orgs", serde_json::json!({"login": "acme", "owners": ["alice"]})).await;
    let t = s.classic("alice", &["read:org", "user"]).await;
    let expand = |k: &str| b[k].as_str().unwrap().replace("{user}", "alice").replace("{org}", "acme");
    for k in ["current_user_url", "user_url", "organization_url", "user_organizations_url", "organization_teams_url"] {
        let (st, _, body) = parts(s.get(&expand(k), Some(&t)).await).await;
        assert_eq!(st, 200, "{k}: {body}");
    }
});

both!(meta_overview, |s| {
    for version in [None, Some("2026-03-10")] {
        let (st, h, b) = get_version(&s, "/meta", version, None).await;
        assert_eq!(st, 200);
        assert_conforms_to_snapshot("ApiOverview", &b);
        assert_eq!(b["verifiable_password_authentication"], false);
        assert!(b["hooks"].as_array().unwrap().iter().any(|r| r == "127.0.0.1/32"), "{b}");
        let host = s.base.trim_start_matches("http://").split([':', '/']).next().unwrap().to_string();
        assert_eq!(b["domains"]["website"], serde_json::json!([host]));
        let etag = header(&h, "etag").to_string();
        let r = s.req(Method::GET, "/meta", None).header("if-none-match", etag).send().await.unwrap();
        assert_eq!(r.status(), 304);
    }
});

fn assert_bucket(name: &str, v: &Value) {
    assert_conforms_to_snapshot("RateLimitBucket", v);
    assert_eq!(v["limit"].as_i64().unwrap() - v["used"].as_i64().unwrap(), v["remaining"].as_i64().unwrap(), "{name}");
}

both!(rate_limit_overview_shape, |s| {
    s.user("alice").await;
    let t = s.classic("alice", &[]).await;
    let now = s.admin(Method::GET, "/clock", Value::Null).await["epoch"].as_i64().unwrap();
    for token in [None, Some(t.as_str())] {
        let (st, h, b) = get_version(&s, "/rate_limit", None, token).await;
        assert_eq!(st, 200);
        assert_eq!(header(&h, "x-service-api-version-selected"), "2022-11-28");
        assert_conforms_to_snapshot("RateLimitOverview", &b);
        for (k, v) in b["resources"].as_object().unwrap() {
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
        assert_conforms_to_snapshot("RateLimitOverview", &b);
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

both!(prometheus_metrics, Options::with(|c| c.limits.rate_limit_factor = 0.02), |s| {
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

/// Root URLs the hosted platform advertises that this server does not serve (yet). Any other
/// root URL must expand to a GET operation of `/openapi.json`, and these must not (a URL that
/// becomes served leaves the list).
const ROOT_UNSERVED: &[&str] = &[
    "authorizations_url",
    "code_search_url",
    "commit_search_url",
    "current_user_authorizations_html_url", // a website page
    "emails_url",
    "emojis_url",
    "feeds_url",
    "followers_url",
    "following_url",
    "gists_url",
    "hub_url",
    "issue_search_url",
    "issues_url",
    "keys_url",
    "label_search_url",
    "public_gists_url",
    "repository_search_url",
    "starred_gists_url",
    "starred_url",
    "topic_search_url",
    "user_search_url",
];

/// A URL template's path without the base, optional `{/x}` segments and query templates.
fn template_path<'a>(base: &str, url: &'a str) -> &'a str {
    let path = url.strip_prefix(base).unwrap_or(url);
    let end = ["?", "{/", "{?", "{&"].iter().filter_map(|m| path.find(m)).min().unwrap_or(path.len());
    &path[..end]
}

/// Same number of segments, each literal equal or a `{variable}` on either side.
fn path_matches(path: &str, template: &str) -> bool {
    let (a, b): (Vec<_>, Vec<_>) = (path.split('/').collect(), template.split('/').collect());
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x == y || x.starts_with('{') || y.starts_with('{'))
}

both!(root_urls_are_served_or_listed, |s| {
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    let gets: Vec<&str> =
        doc["paths"].as_object().unwrap().iter().filter(|(_, v)| v.get("get").is_some()).map(|(p, _)| p.as_str()).collect();
    // Version 2022-11-28 advertises the most URLs.
    let (_, _, root) = get_version(&s, "/", Some("2022-11-28"), None).await;
    for (k, v) in root.as_object().unwrap() {
        let path = template_path(&s.base, v.as_str().unwrap());
        let served = gets.iter().any(|t| path_matches(path, t));
        assert_eq!(served, !ROOT_UNSERVED.contains(&k.as_str()), "{k}: {path} (served: {served}); update ROOT_UNSERVED");
    }
});

/// `template` with its `{/x}` segment filled with `fill` (or dropped when empty) and query
/// templates removed.
fn follow(template: &str, fill: &str) -> String {
    let mut url = template.split("{?").next().unwrap().to_string();
    if let Some(i) = url.find("{/") {
        let j = i + url[i..].find('}').unwrap();
        let seg = if fill.is_empty() { String::new() } else { format!("/{fill}") };
        url.replace_range(i..=j, &seg);
    }
    url
}

// The URLs of the core reads' shapes answer 200 when followed with a token that can read them
// (a private organization repository here, so each one checks access too).
both!(shape_urls_answer, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", serde_json::json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "hello", true).await;
    s.push("acme/hello", "refs/heads/main", SHA).await;
    let t = s.classic("alice", &["repo", "read:org", "user", "admin:org_hook"]).await;
    let table: &[(&str, &str, &str)] = &[
        ("/repos/acme/hello", "url", ""),
        ("/repos/acme/hello", "branches_url", ""),
        ("/repos/acme/hello", "branches_url", "main"),
        ("/repos/acme/hello", "commits_url", "main"),
        ("/repos/acme/hello", "git_refs_url", "heads/main"),
        ("/repos/acme/hello", "statuses_url", SHA),
        ("/repos/acme/hello", "events_url", ""),
        ("/repos/acme/hello/git/ref/heads/main", "url", ""),
        ("/users/alice", "url", ""),
        ("/users/alice", "repos_url", ""),
        ("/users/alice", "events_url", ""),
        ("/orgs/acme", "url", ""),
        ("/orgs/acme", "repos_url", ""),
        ("/orgs/acme", "events_url", ""),
        ("/orgs/acme", "hooks_url", ""),
    ];
    for (shape, key, fill) in table {
        let (st, _, body) = parts(s.get(shape, Some(&t)).await).await;
        assert_eq!(st, 200, "{shape}: {body}");
        let template = body[key].as_str().unwrap_or_else(|| panic!("{shape} has no {key}: {body}"));
        let url = follow(template.replace("{sha}", fill).as_str(), fill);
        let (st, _, got) = parts(s.get(&url, Some(&t)).await).await;
        assert_eq!(st, 200, "{shape} {key} -> {url}: {got}");
    }
});
