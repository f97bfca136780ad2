//! API usage insights: a known request script (several actors, a rate-limited answer, another
//! organization, an anonymous caller) at fixed times of the manual clock, then every insights
//! operation checked against the numbers it must give; access, validation and the delay.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

const T0: &str = "2031-03-04T10:00:00Z";
/// The script's window: the queries themselves (made an hour later) fall outside it.
const WINDOW: &str = "min_timestamp=2031-03-04T10:00:00Z&max_timestamp=2031-03-04T10:30:00Z";
const API: &str = "/orgs/acme/insights/api";

/// Ids the expectations name.
struct World {
    alice_id: i64,
    bob_id: i64,
    alice_pat: (String, i64),
    bob_fg: (String, i64),
    installation: (String, i64),
    oauth: (String, i64),
    /// alice, `read:org`, for the queries.
    reader: String,
}

async fn token(s: &Server, body: Value) -> (String, i64) {
    let t = s.admin_post("/tokens", body).await;
    (t["token"].as_str().unwrap().to_string(), t["id"].as_i64().unwrap())
}

/// alice owns acme, bob is a member; carol owns `other`. App `CI` is installed on acme; `OA` is
/// an OAuth application.
async fn world(s: &Server) -> World {
    let alice_id = s.user("alice").await["id"].as_i64().unwrap();
    let bob_id = s.user("bob").await["id"].as_i64().unwrap();
    s.user("carol").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.admin_post("/orgs", json!({"login": "other", "owners": ["carol"]})).await;
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let inst = s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let oa = s.admin_post("/apps", json!({"name": "OA", "owner": "acme", "kind": "oauth"})).await;
    let installation = token(
        s,
        json!({"kind": "installation", "app": "CI", "org": "acme",
        "permissions": {"organization_private_registries": "read", "organization_api_insights": "read"}}),
    )
    .await;
    World {
        alice_id,
        bob_id,
        alice_pat: token(s, json!({"kind": "classic", "login": "alice", "scopes": ["admin:org"], "note": "deploy-bot"})).await,
        bob_fg: token(s, json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"organization_administration": "read"}})).await,
        installation: (installation.0, inst["id"].as_i64().unwrap()),
        oauth: (token(s, json!({"kind": "oauth", "login": "alice", "app": "OA", "scopes": ["read:org"]})).await.0, oa["id"].as_i64().unwrap()),
        reader: s.classic("alice", &["read:org"]).await,
    }
}

async fn call(s: &Server, path: &str, t: Option<&str>) -> u16 {
    s.get(path, t).await.status().as_u16()
}

/// The request script; what it must add up to is written next to each step.
async fn script(s: &Server, w: &World) {
    s.admin_post("/clock", json!({"now": T0})).await;
    // 10:00:00 alice's PAT: 3 answered, then 1 rate limited (answered before routing; the path
    // spells the organization in capitals).
    for _ in 0..3 {
        assert_eq!(call(s, "/orgs/acme/security-managers", Some(&w.alice_pat.0)).await, 200);
    }
    s.admin_post("/faults", json!({"kind": "primary", "user": "alice", "count": 1})).await;
    assert_eq!(call(s, "/orgs/ACME/security-managers", Some(&w.alice_pat.0)).await, 403);
    // 10:01:05 the installation twice, alice's PAT once, on another route.
    s.advance(65).await;
    for _ in 0..2 {
        assert_eq!(call(s, "/orgs/acme/private-registries", Some(&w.installation.0)).await, 200);
    }
    call(s, "/orgs/acme/private-registries", Some(&w.alice_pat.0)).await;
    // 10:06:05 bob (not an owner: 404), an anonymous caller (401), alice through the OAuth app;
    // alice's PAT on another organization and on no organization at all.
    s.advance(300).await;
    assert_eq!(call(s, "/orgs/acme/security-managers", Some(&w.bob_fg.0)).await, 404);
    assert_eq!(call(s, "/orgs/acme/security-managers", None).await, 401);
    assert_eq!(call(s, "/orgs/acme/security-managers", Some(&w.oauth.0)).await, 200);
    assert_eq!(call(s, "/orgs/other/security-managers", Some(&w.alice_pat.0)).await, 404);
    assert_eq!(call(s, "/rate_limit", Some(&w.alice_pat.0)).await, 200);
    // The queries come an hour later.
    s.advance(3600).await;
}

async fn q(s: &Server, path: &str, t: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.get(&format!("{API}/{path}"), Some(t)).await).await
}

async fn ok(s: &Server, path: &str, t: &str) -> Value {
    let (st, _, b) = q(s, path, t).await;
    assert_eq!(st, 200, "{path}: {b}");
    b
}

fn summary(total: i64, limited: i64) -> Value {
    json!({"total_request_count": total, "rate_limited_request_count": limited})
}

/// Every row of a list conforms to the published component `name`.
fn each_conforms(name: &str, list: &Value) {
    list.as_array().expect("a list").iter().for_each(|row| assert_conforms_to_snapshot(name, row));
}

fn bucket(ts: &str, total: i64, limited: i64) -> Value {
    json!({"timestamp": ts, "total_request_count": total, "rate_limited_request_count": limited})
}

both!(numbers_match_the_script, |s| {
    let w = world(&s).await;
    script(&s, &w).await;
    let r = &w.reader;

    // Summaries: 10 requests touched acme, 1 was rate limited.
    let all = ok(&s, &format!("summary-stats?{WINDOW}"), r).await;
    assert_conforms_to_snapshot("ApiInsightsSummaryStats", &all);
    assert_eq!(all, summary(10, 1));
    assert_eq!(ok(&s, &format!("summary-stats/users/{}?{WINDOW}", w.alice_id), r).await, summary(6, 1));
    assert_eq!(ok(&s, &format!("summary-stats/users/{}?{WINDOW}", w.bob_id), r).await, summary(1, 0));
    assert_eq!(ok(&s, &format!("summary-stats/users/nobody?{WINDOW}"), r).await, summary(0, 0));
    assert_eq!(ok(&s, &format!("summary-stats/classic_pat/{}?{WINDOW}", w.alice_pat.1), r).await, summary(5, 1));
    assert_eq!(ok(&s, &format!("summary-stats/installation/{}?{WINDOW}", w.installation.1), r).await, summary(2, 0));
    assert_eq!(ok(&s, &format!("summary-stats/fine_grained_pat/{}?{WINDOW}", w.bob_fg.1), r).await, summary(1, 0));
    assert_eq!(ok(&s, &format!("summary-stats/oauth_app/{}?{WINDOW}", w.oauth.1), r).await, summary(1, 0));
    // The window is half-open and exact to the second.
    assert_eq!(ok(&s, "summary-stats?min_timestamp=2031-03-04T10:00:00Z&max_timestamp=2031-03-04T10:01:05Z", r).await, summary(4, 1));
    assert_eq!(ok(&s, "summary-stats?min_timestamp=2031-03-04T10:01:05Z&max_timestamp=2031-03-04T10:06:06Z", r).await, summary(6, 0));
    // The other organization saw alice's one request; its owner reads it, acme's may not.
    let carol = s.classic("carol", &["read:org"]).await;
    let (st, _, b) = parts(s.get(&format!("/orgs/other/insights/api/summary-stats?{WINDOW}"), Some(&carol)).await).await;
    assert_eq!((st, b), (200, summary(1, 0)));
    assert_eq!(parts(s.get(&format!("/orgs/other/insights/api/summary-stats?{WINDOW}"), Some(r)).await).await.0, 404);

    // Time series: every bucket of the window, aligned, empty ones included.
    let five = ok(&s, &format!("time-stats?{WINDOW}&timestamp_increment=5m"), r).await;
    each_conforms("ApiInsightsTimeStats", &five);
    assert_eq!(
        five,
        json!([
            bucket("2031-03-04T10:00:00Z", 7, 1),
            bucket("2031-03-04T10:05:00Z", 3, 0),
            bucket("2031-03-04T10:10:00Z", 0, 0),
            bucket("2031-03-04T10:15:00Z", 0, 0),
            bucket("2031-03-04T10:20:00Z", 0, 0),
            bucket("2031-03-04T10:25:00Z", 0, 0),
        ])
    );
    let one = ok(&s, &format!("time-stats?{WINDOW}&timestamp_increment=1m"), r).await;
    let one = one.as_array().unwrap();
    assert_eq!(one.len(), 30);
    assert_eq!(one[0], bucket("2031-03-04T10:00:00Z", 4, 1));
    assert_eq!(one[1], bucket("2031-03-04T10:01:00Z", 3, 0));
    assert_eq!(one[6], bucket("2031-03-04T10:06:00Z", 3, 0));
    assert_eq!(one.iter().map(|b| b["total_request_count"].as_i64().unwrap()).sum::<i64>(), 10);
    assert_eq!(
        ok(&s, &format!("time-stats/installation/{}?{WINDOW}&timestamp_increment=1h", w.installation.1), r).await,
        json!([bucket("2031-03-04T10:00:00Z", 2, 0)])
    );
    assert_eq!(
        ok(&s, &format!("time-stats/users/{}?{WINDOW}&timestamp_increment=10m", w.alice_id), r).await,
        json!([bucket("2031-03-04T10:00:00Z", 6, 1), bucket("2031-03-04T10:10:00Z", 0, 0), bucket("2031-03-04T10:20:00Z", 0, 0)])
    );
    // A window starting inside a bucket: the bucket is labelled by its aligned start and counts
    // only the requests inside the window.
    assert_eq!(
        ok(&s, "time-stats?min_timestamp=2031-03-04T10:01:00Z&max_timestamp=2031-03-04T10:07:00Z&timestamp_increment=5m", r).await,
        json!([bucket("2031-03-04T10:00:00Z", 3, 0), bucket("2031-03-04T10:05:00Z", 3, 0)])
    );

    // Routes of alice's PAT, by total (default, descending).
    let routes = ok(&s, &format!("route-stats/classic_pat/{}?{WINDOW}", w.alice_pat.1), r).await;
    each_conforms("ApiInsightsRouteStats", &routes);
    assert_eq!(
        routes,
        json!([
            {"http_method": "GET", "api_route": "/orgs/:org/security-managers", "total_request_count": 4, "rate_limited_request_count": 1,
             "last_request_timestamp": "2031-03-04T10:00:00Z", "last_rate_limited_timestamp": "2031-03-04T10:00:00Z"},
            {"http_method": "GET", "api_route": "/orgs/:org/private-registries", "total_request_count": 1, "rate_limited_request_count": 0,
             "last_request_timestamp": "2031-03-04T10:01:05Z", "last_rate_limited_timestamp": null},
        ])
    );
    let order = |v: &Value| v.as_array().unwrap().iter().map(|r| r["api_route"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let path = format!("route-stats/classic_pat/{}?{WINDOW}", w.alice_pat.1);
    let (sm, pr) = ("/orgs/:org/security-managers", "/orgs/:org/private-registries");
    assert_eq!(order(&ok(&s, &format!("{path}&sort=last_request_timestamp"), r).await), [pr, sm]);
    assert_eq!(order(&ok(&s, &format!("{path}&direction=asc"), r).await), [pr, sm]);
    assert_eq!(order(&ok(&s, &format!("{path}&sort=api_route&direction=asc"), r).await), [pr, sm]);
    assert_eq!(order(&ok(&s, &format!("{path}&sort=http_method,last_rate_limited_timestamp"), r).await), [sm, pr]);
    assert_eq!(order(&ok(&s, &format!("{path}&sort=http_method&sort=api_route"), r).await), [sm, pr]);
    assert_eq!(order(&ok(&s, &format!("{path}&api_route_substring=PRIVATE"), r).await), [pr]);
    // Pages with Link headers that repeat the query.
    let (st, h, b) = q(&s, &format!("{path}&per_page=1"), r).await;
    assert_eq!((st, order(&b)), (200, vec![sm.to_string()]));
    let link = header(&h, "link");
    assert!(link.contains("rel=\"next\"") && link.contains("rel=\"last\"") && link.contains("per_page=1"), "{link}");
    assert!(link.contains("min_timestamp=2031-03-04T10%3A00%3A00Z") && link.contains("page=2"), "{link}");
    let (_, h, b) = q(&s, &format!("{path}&per_page=1&page=2"), r).await;
    assert_eq!(order(&b), [pr]);
    assert!(header(&h, "link").contains("rel=\"prev\""));
    assert_eq!(ok(&s, &format!("{path}&page=3&per_page=1"), r).await, json!([]));
    // Another actor's routes; an actor with no requests has none.
    let inst = ok(&s, &format!("route-stats/installation/{}?{WINDOW}", w.installation.1), r).await;
    assert_eq!(order(&inst), [pr]);
    assert_eq!(inst[0]["total_request_count"], 2);
    assert_eq!(ok(&s, &format!("route-stats/installation/999999?{WINDOW}"), r).await, json!([]));

    // Subjects: users, and the installation acting for itself; not the anonymous caller.
    let subjects = ok(&s, &format!("subject-stats?{WINDOW}"), r).await;
    each_conforms("ApiInsightsSubjectStats", &subjects);
    assert_eq!(
        subjects,
        json!([
            {"subject_type": "user", "subject_name": "alice", "subject_id": w.alice_id, "total_request_count": 6, "rate_limited_request_count": 1,
             "last_request_timestamp": "2031-03-04T10:06:05Z", "last_rate_limited_timestamp": "2031-03-04T10:00:00Z"},
            {"subject_type": "installation", "subject_name": "CI", "subject_id": w.installation.1, "total_request_count": 2, "rate_limited_request_count": 0,
             "last_request_timestamp": "2031-03-04T10:01:05Z", "last_rate_limited_timestamp": null},
            {"subject_type": "user", "subject_name": "bob", "subject_id": w.bob_id, "total_request_count": 1, "rate_limited_request_count": 0,
             "last_request_timestamp": "2031-03-04T10:06:05Z", "last_rate_limited_timestamp": null},
        ])
    );
    let names = |v: &Value| v.as_array().unwrap().iter().map(|r| r["subject_name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&ok(&s, &format!("subject-stats?{WINDOW}&subject_name_substring=cI"), r).await), ["CI"]);
    assert_eq!(
        names(&ok(&s, &format!("subject-stats?{WINDOW}&sort=rate_limited_request_count,subject_name&direction=asc"), r).await),
        ["CI", "bob", "alice"]
    );
    assert_eq!(names(&ok(&s, &format!("subject-stats?{WINDOW}&sort=last_request_timestamp"), r).await), ["alice", "bob", "CI"]);

    // alice's actors (user-stats).
    let actors = ok(&s, &format!("user-stats/{}?{WINDOW}", w.alice_id), r).await;
    each_conforms("ApiInsightsUserStats", &actors);
    assert_eq!(
        actors,
        json!([
            {"actor_type": "classic_pat", "actor_name": "deploy-bot", "actor_id": w.alice_pat.1, "integration_id": null, "oauth_application_id": null,
             "total_request_count": 5, "rate_limited_request_count": 1, "last_request_timestamp": "2031-03-04T10:01:05Z",
             "last_rate_limited_timestamp": "2031-03-04T10:00:00Z"},
            {"actor_type": "oauth_app", "actor_name": "OA", "actor_id": w.oauth.1, "integration_id": null, "oauth_application_id": w.oauth.1,
             "total_request_count": 1, "rate_limited_request_count": 0, "last_request_timestamp": "2031-03-04T10:06:05Z",
             "last_rate_limited_timestamp": null},
        ])
    );
    let an = |v: &Value| v.as_array().unwrap().iter().map(|r| r["actor_name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(an(&ok(&s, &format!("user-stats/{}?{WINDOW}&actor_name_substring=BOT", w.alice_id), r).await), ["deploy-bot"]);
    assert_eq!(an(&ok(&s, &format!("user-stats/{}?{WINDOW}&sort=subject_name&direction=asc", w.alice_id), r).await), ["OA", "deploy-bot"]);

    // The queries themselves are recorded too (they touch acme): the hour after the script holds
    // them, the reader's PAT being their actor.
    let later = "min_timestamp=2031-03-04T10:30:00Z";
    let (st, _, b) = q(&s, &format!("summary-stats?{later}"), r).await;
    assert_eq!(st, 200);
    assert!(b["total_request_count"].as_i64().unwrap() > 20, "{b}");
});

both!(access_and_headers, |s| {
    let w = world(&s).await;
    let path = format!("{API}/summary-stats?{WINDOW}");
    let (st, h, b) = parts(s.get(&path, Some(&w.reader)).await).await;
    assert_eq!((st, b), (200, summary(0, 0)));
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "read:org");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "organization_api_insights=read");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");

    let (st, h, b) = parts(s.get(&path, None).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    assert!(b["documentation_url"].as_str().unwrap().contains("api-insights"), "{b}");
    // A member who is not an owner, and an unknown organization: 404.
    let bob = s.classic("bob", &["read:org"]).await;
    assert_eq!(parts(s.get(&path, Some(&bob)).await).await.0, 404);
    assert_eq!(parts(s.get(&format!("/orgs/nope/insights/api/summary-stats?{WINDOW}"), Some(&w.reader)).await).await.0, 404);
    // An owner's PAT without the scope: 403.
    let repo_only = s.classic("alice", &["repo"]).await;
    let (st, h, b) = parts(s.get(&path, Some(&repo_only)).await).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    // Fine-grained: the permission decides.
    let fg = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"organization_api_insights": "read"}})).await;
    assert_eq!(parts(s.get(&path, Some(&fg)).await).await.0, 200);
    let fg_other = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"organization_administration": "read"}})).await;
    assert_eq!(parts(s.get(&path, Some(&fg_other)).await).await.0, 403);
    // Installations: with the permission (the world's token) yes, without no.
    assert_eq!(parts(s.get(&path, Some(&w.installation.0)).await).await.0, 200);
    let no_perm = s
        .token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"organization_private_registries": "read"}}))
        .await;
    let (st, h, b) = parts(s.get(&path, Some(&no_perm)).await).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
});

both!(invalid_parameters_are_422, |s| {
    let w = world(&s).await;
    let r = &w.reader;
    let min = "min_timestamp=2031-03-04T10:00:00Z";
    let cases = [
        "summary-stats".to_string(),
        "summary-stats?max_timestamp=2031-03-04T10:00:00Z".into(),
        "summary-stats?min_timestamp=2031-03-04".into(),
        "summary-stats?min_timestamp=2031-03-04T10:00:00%2B01:00".into(),
        "summary-stats?min_timestamp=2031-03-04T10:00:00.000Z".into(),
        "summary-stats?min_timestamp=2031-13-04T10:00:00Z".into(),
        "summary-stats?min_timestamp=yesterday".into(),
        format!("summary-stats?{min}&max_timestamp=now"),
        format!("summary-stats?{min}&max_timestamp=2031-03-04T09:59:59Z"),
        format!("time-stats?{min}"),
        format!("time-stats?{min}&timestamp_increment=5s"),
        format!("time-stats?{min}&timestamp_increment=0m"),
        format!("time-stats?{min}&timestamp_increment=m"),
        format!("time-stats?{min}&timestamp_increment=1w"),
        "time-stats?min_timestamp=1970-01-01T00:00:00Z&timestamp_increment=1m".into(),
        format!("subject-stats?{min}&direction=up"),
        format!("subject-stats?{min}&sort=api_route"),
        format!("subject-stats?{min}&per_page=many"),
        format!("route-stats/classic_pat/1?{min}&sort=subject_name"),
        format!("route-stats/robot/1?{min}"),
        format!("route-stats/classic_pat/x?{min}"),
        format!("summary-stats/robot/1?{min}"),
        format!("time-stats/robot/1?{min}&timestamp_increment=5m"),
        format!("user-stats/1?{min}&sort=http_method"),
    ];
    for c in cases {
        let (st, h, b) = q(&s, &c, r).await;
        assert_eq!(st, 422, "{c}: {b}");
        assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{c}: {b}");
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    }
    // Valid edge values.
    for c in [
        format!("summary-stats?{min}&max_timestamp=2031-03-04T10:00:00Z"),
        format!("time-stats?{min}&timestamp_increment=9999d"),
        format!("subject-stats?{min}&per_page=500&direction=asc&sort=subject_name%2Ctotal_request_count"),
        format!("user-stats/not-a-number?{min}"),
    ] {
        assert_eq!(q(&s, &c, r).await.0, 200, "{c}");
    }
});

both!(delay_hides_recent_requests, Options::with(|c| c.insights.delay_seconds = 3600), |s| {
    let w = world(&s).await;
    s.admin_post("/clock", json!({"now": T0})).await;
    assert_eq!(call(&s, "/orgs/acme/security-managers", Some(&w.alice_pat.0)).await, 200);
    let path = format!("{API}/summary-stats?min_timestamp=2031-03-04T09:00:00Z&max_timestamp=2031-03-04T10:01:00Z");
    s.advance(600).await;
    // Ten minutes later: not yet shown (default max and an explicit one alike).
    assert_eq!(parts(s.get(&path, Some(&w.reader)).await).await.2, summary(0, 0));
    let open = format!("{API}/summary-stats?min_timestamp=2031-03-04T09:00:00Z");
    assert_eq!(parts(s.get(&open, Some(&w.reader)).await).await.2, summary(0, 0));
    // An hour after the request it is.
    s.advance(3000).await;
    assert_eq!(parts(s.get(&path, Some(&w.reader)).await).await.2, summary(1, 0));
    let (_, _, b) = parts(
        s.req(
            Method::GET,
            &format!("{API}/time-stats?min_timestamp=2031-03-04T10:00:00Z&max_timestamp=2031-03-04T10:01:00Z&timestamp_increment=1m"),
            Some(&w.reader),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(b, json!([bucket("2031-03-04T10:00:00Z", 1, 0)]));
});

both!(primary_limit_answers_are_flagged, Options::with(|c| c.limits.rate_limit_factor = 0.001), |s| {
    // Every user may make 5 requests an hour: alice's sixth is refused by the limiter itself.
    for u in ["alice", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice", "dave"]})).await;
    let alice = s.classic("alice", &["read:org"]).await;
    let dave = s.classic("dave", &["read:org"]).await;
    s.admin_post("/clock", json!({"now": T0})).await;
    for _ in 0..5 {
        assert_eq!(call(&s, "/orgs/acme/security-managers", Some(&alice)).await, 200);
    }
    s.advance(10).await;
    assert_eq!(call(&s, "/orgs/acme/security-managers", Some(&alice)).await, 403);
    s.advance(60).await;
    let b = ok(&s, &format!("subject-stats?{WINDOW}"), &dave).await;
    assert_eq!(b.as_array().unwrap().len(), 1, "{b}");
    assert_eq!((b[0]["subject_name"].as_str(), b[0]["total_request_count"].as_i64()), (Some("alice"), Some(6)));
    assert_eq!(b[0]["rate_limited_request_count"], 1);
    assert_eq!(b[0]["last_request_timestamp"], "2031-03-04T10:00:10Z");
    assert_eq!(b[0]["last_rate_limited_timestamp"], "2031-03-04T10:00:10Z");
});
