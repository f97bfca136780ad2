//! Secondary rate limits of document 1 at their boundaries (manual clock): concurrent requests,
//! points per minute, content creation per minute and hour, token issuing per application, and
//! the failed-login lockout; all switched off with the limits.
use crate::authorizations::app;
use crate::both;
use crate::harness::*;
use platform_api::secondary::SecondarySettings;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";
const STATUSES: &str = "/repos/alice/hello/statuses/main";
const SECONDARY: &str =
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to Service Support for help, please include the request ID ";
const LOCKOUT: &str = "Maximum number of login attempts exceeded. Please try again later.";

/// Document 1's bounds.
fn defaults() -> Options {
    with(SecondarySettings::default())
}

fn with(s: SecondarySettings) -> Options {
    Options::with(|c| c.limits.secondary = s)
}

async fn setup(s: &Server) -> String {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo"]).await
}

/// A secondary-limit refusal: 403, the message with this response's request id, the rate-limit
/// docs and `retry-after` in whole seconds (returned).
fn assert_secondary(st: u16, h: &reqwest::header::HeaderMap, b: &Value) -> i64 {
    let rid = header(h, "x-service-request-id");
    assert_error(st, h, b, 403, &format!("{SECONDARY}{rid}."));
    assert_eq!(b["documentation_url"], "https://docs.service.example/rest/overview/resources-in-the-rest-api#rate-limiting");
    header(h, "retry-after").parse().expect("retry-after is whole seconds")
}

both!(points_per_minute, defaults(), |s| {
    let t = setup(&s).await;
    // 900 points a minute, a GET costs 1.
    for i in 0..900 {
        let (st, _, b) = parts(s.get(COMBINED, Some(&t)).await).await;
        assert_eq!(st, 200, "request {i}: {b}");
    }
    s.advance(20).await;
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(assert_secondary(st, &h, &b), 40, "until the minute ends");
    // The primary bucket still reports the caller's real state.
    assert_eq!(header(&h, "x-ratelimit-used"), "900");
    // Other requesters are not affected.
    let (st, _, _) = parts(s.get(COMBINED, None).await).await;
    assert_eq!(st, 200);
    s.advance(40).await;
    let (st, _, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 200, "a new minute");
});

both!(writes_cost_five_points, with(SecondarySettings { points_per_minute: 12, ..SecondarySettings::default() }), |s| {
    let t = setup(&s).await;
    for _ in 0..2 {
        let (st, _, b) = parts(s.post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
        assert_eq!(st, 201, "{b}");
    }
    // 10 used: two GETs fit, a third does not, nor does a POST.
    for _ in 0..2 {
        assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
    }
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_secondary(st, &h, &b);
    let (st, h, b) = parts(s.post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
    assert_secondary(st, &h, &b);
    // The refused write never happened.
    s.advance(60).await;
    let (_, _, b) = parts(s.get("/repos/alice/hello/commits/main/statuses", Some(&t)).await).await;
    assert_eq!(b.as_array().unwrap().len(), 2);
});

both!(content_creation_80_per_minute, defaults(), |s| {
    let t = setup(&s).await;
    for i in 0..80 {
        let (st, _, b) = parts(s.post(STATUSES, Some(&t), json!({"state": "success", "context": format!("ci/{i}")})).await).await;
        assert_eq!(st, 201, "status {i}: {b}");
    }
    s.advance(15).await;
    let (st, h, b) = parts(s.post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(assert_secondary(st, &h, &b), 45);
    // Reading and writes that create nothing go on.
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
    s.advance(45).await;
    let (st, _, _) = parts(s.post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
    assert_eq!(st, 201, "a new minute");
});

both!(
    content_creation_per_hour,
    with(SecondarySettings { content_per_minute: 2, content_per_hour: 3, ..SecondarySettings::default() }),
    |s| {
        let t = setup(&s).await;
        let post = || s.post(STATUSES, Some(&t), json!({"state": "success"}));
        assert_eq!(post().await.status(), 201);
        assert_eq!(post().await.status(), 201);
        let (st, h, b) = parts(post().await).await;
        assert_eq!(assert_secondary(st, &h, &b), 60, "the minute");
        s.advance(60).await;
        assert_eq!(post().await.status(), 201, "third of the hour");
        let (st, h, b) = parts(post().await).await;
        assert_eq!(assert_secondary(st, &h, &b), 3540, "the hour");
        s.advance(3540).await;
        assert_eq!(post().await.status(), 201);
    }
);

both!(concurrent_requests_per_user, defaults(), |s| {
    let t = setup(&s).await;
    // Every request to the combined status waits 3 s in flight (all 101 are sent well within it).
    s.admin(Method::POST, "/faults", json!({"kind": "latency", "latency_ms": 3000, "path": "/repos/alice/hello/commits/**"})).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let calls: Vec<_> = (0..101)
        .map(|_| {
            let (client, url, t) = (client.clone(), s.url(COMBINED), t.clone());
            tokio::spawn(async move {
                let r = client.get(url).header("user-agent", "test").header("authorization", format!("Bearer {t}")).send().await.unwrap();
                parts(r).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for c in calls {
        answers.push(c.await.unwrap());
    }
    let refused: Vec<_> = answers.iter().filter(|(st, _, _)| *st == 403).collect();
    assert_eq!(answers.iter().filter(|(st, _, _)| *st == 200).count(), 100);
    assert_eq!(refused.len(), 1, "the 101st request in flight");
    let (st, h, b) = refused[0];
    assert_eq!(assert_secondary(*st, h, b), 1);
    // Places are given back when requests end.
    s.admin(Method::DELETE, "/faults", Value::Null).await;
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
});

both!(token_issuing_per_application, with(SecondarySettings { oauth_tokens_per_hour: 2, ..SecondarySettings::default() }), |s| {
    setup(&s).await;
    let a = app(&s, "App", "alice", "oauth").await;
    let other = app(&s, "Other", "alice", "oauth").await;
    let reset = |a: &crate::authorizations::App, token: String| {
        let path = format!("/applications/{}/token", a.client_id);
        let r = s.req(Method::PATCH, &path, None).basic_auth(&a.client_id, Some(&a.secret)).json(&json!({"access_token": token}));
        async move { parts(r.send().await.unwrap()).await }
    };
    let mut token = s.token(json!({"kind": "oauth", "login": "alice", "client_id": a.client_id, "scopes": ["repo"]})).await;
    for _ in 0..2 {
        let (st, _, b) = reset(&a, token.clone()).await;
        assert_eq!(st, 200, "{b}");
        token = b["token"].as_str().unwrap().to_string();
    }
    let (st, h, b) = reset(&a, token.clone()).await;
    assert_eq!(assert_secondary(st, &h, &b), 3600);
    // The token was not reset, and another application has its own budget.
    assert_eq!(s.get(COMBINED, Some(&token)).await.status(), 200);
    let t2 = s.token(json!({"kind": "oauth", "login": "alice", "client_id": other.client_id, "scopes": ["repo"]})).await;
    assert_eq!(reset(&other, t2).await.0, 200);
});

both!(failed_logins_lock_the_address_out, defaults(), |s| {
    let t = setup(&s).await;
    for i in 0..9 {
        let (st, h, b) = parts(s.get(COMBINED, Some("svp_not_a_real_token_0000000000000000000")).await).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
        assert!(h.get("retry-after").is_none(), "attempt {i}");
    }
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200, "nine failures do not lock");
    let (st, _, _) = parts(s.get(COMBINED, Some("svp_not_a_real_token_0000000000000000000")).await).await;
    assert_eq!(st, 401, "the tenth failure");
    // Locked: even good credentials are refused, without a retry-after (not a rate limit).
    let (st, h, b) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_error(st, &h, &b, 403, LOCKOUT);
    assert!(h.get("retry-after").is_none());
    // Unauthenticated requests go on.
    assert_eq!(s.get(COMBINED, None).await.status(), 200);
    s.advance(299).await;
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 403);
    s.advance(1).await;
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200, "after the lockout");
});

both!(token_checks_do_not_count_as_failed_logins, defaults(), |s| {
    let t = setup(&s).await;
    let a = app(&s, "App", "alice", "oauth").await;
    let path = format!("/applications/{}/token", a.client_id);
    for _ in 0..12 {
        let r = s.req(Method::POST, &path, None).basic_auth(&a.client_id, Some(&a.secret)).json(&json!({"access_token": "svp_unknown"}));
        assert_eq!(r.send().await.unwrap().status(), 404);
    }
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
});

both!(wrong_application_secrets_count_as_failed_logins, defaults(), |s| {
    let t = setup(&s).await;
    let a = app(&s, "App", "alice", "oauth").await;
    let token = format!("/applications/{}/token", a.client_id);
    let grant = format!("/applications/{}/grant", a.client_id);
    // Wrong secrets on every application-credential operation, the token check included.
    let calls = [(Method::POST, &token), (Method::PATCH, &token), (Method::DELETE, &token), (Method::DELETE, &grant)];
    for i in 0..10 {
        let (m, path) = &calls[i % calls.len()];
        let r = s.req(m.clone(), path, None).basic_auth(&a.client_id, Some("wrong")).json(&json!({"access_token": "svp_unknown"}));
        let (st, h, b) = parts(r.send().await.unwrap()).await;
        assert_error(st, &h, &b, 401, "Bad credentials");
    }
    // The address is locked out: the right secret and good tokens are refused for a while.
    let r = s.req(Method::POST, &token, None).basic_auth(&a.client_id, Some(&a.secret)).json(&json!({"access_token": "svp_unknown"}));
    let (st, h, b) = parts(r.send().await.unwrap()).await;
    assert_error(st, &h, &b, 403, LOCKOUT);
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 403);
    s.advance(300).await;
    assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200, "after the lockout");
});

both!(
    switched_off,
    Options::with(|c| {
        c.limits.rate_limits = false;
        c.limits.secondary = SecondarySettings { points_per_minute: 1, login_attempts: 1, ..SecondarySettings::default() };
    }),
    |s| {
        let t = setup(&s).await;
        for _ in 0..3 {
            assert_eq!(s.get(COMBINED, Some("svp_not_a_real_token_0000000000000000000")).await.status(), 401);
            assert_eq!(s.get(COMBINED, Some(&t)).await.status(), 200);
        }
    }
);

both!(
    switched_off_alone,
    with(SecondarySettings {
        enabled: false,
        points_per_minute: 1,
        content_per_minute: 1,
        login_attempts: 1,
        ..SecondarySettings::default()
    }),
    |s| {
        let t = setup(&s).await;
        for _ in 0..3 {
            assert_eq!(s.get(COMBINED, Some("svp_not_a_real_token_0000000000000000000")).await.status(), 401);
            assert_eq!(s.post(STATUSES, Some(&t), json!({"state": "success"})).await.status(), 201);
        }
        // Primary limits still apply.
        let (_, h, _) = parts(s.get(COMBINED, Some(&t)).await).await;
        assert_eq!(header(&h, "x-ratelimit-used"), "4");
    }
);
