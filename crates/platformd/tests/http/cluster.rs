//! Two nodes on one PostgreSQL database (and one Redis), as `scripts/cluster` runs them:
//! the limits are accepted once by both together and both report the same state, the API keeps
//! answering when Redis is gone, a write on one node is read at once on the other, and through
//! HAProxy round-robining every request: current answers, one limit, every webhook delivery and
//! every run completion exactly once.
use crate::harness::*;
use platform_api::secondary::SecondarySettings;
use platform_api::settings::Url;
use platform_store::Backend;
use serde_json::json;

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const COMBINED: &str = "/repos/alice/hello/commits/main/status";
const STATUSES: &str = "/repos/alice/hello/statuses/main";

/// Two nodes on one PostgreSQL database sharing one Redis namespace; `None` (skipped, loudly
/// by the helpers) without PostgreSQL or Redis.
pub async fn pair(opts: Options) -> Option<(Server, Server)> {
    let redis = test_redis()?;
    let mut opts = opts;
    (opts.api.redis.url, opts.api.redis.prefix) = (Some(Url(redis.0)), redis.1);
    let a = start(Backend::Postgres, opts.clone()).await?;
    let b = a.peer(opts).await;
    Some((a, b))
}

async fn setup(s: &Server) -> String {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo"]).await
}

/// Limit decisions a node made alone because Redis did not answer (or refused a script).
async fn fallbacks(s: &Server) -> u64 {
    counter(s, "platform_limits_fallbacks_total").await
}

/// Requests admitted by a node's leases.
async fn leased(s: &Server) -> u64 {
    counter(s, "platform_limits_leased_total").await
}

/// A counter of the node's `/metrics`.
async fn counter(s: &Server, name: &str) -> u64 {
    let metrics = s.client.get(format!("http://{}/metrics", s.addr)).send().await.unwrap().text().await.unwrap();
    let value = metrics.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' '));
    value.unwrap_or_else(|| panic!("no {name} in /metrics")).parse().unwrap()
}

fn used(h: &reqwest::header::HeaderMap) -> i64 {
    header(h, "x-ratelimit-used").parse().unwrap()
}

#[tokio::test]
async fn primary_limit_is_accepted_once_by_both_nodes() {
    // 5,000 an hour × 0.002 = 10 for the user.
    let Some((a, b)) = pair(Options::with(|c| c.limits.rate_limit_factor = 0.002)).await else { return };
    let t = setup(&a).await;
    let mut accepted = 0;
    for i in 0..16 {
        let node = if i % 2 == 0 { &a } else { &b };
        let (st, h, body) = parts(node.get(COMBINED, Some(&t)).await).await;
        if st == 200 {
            accepted += 1;
            assert_eq!(used(&h), accepted, "both nodes count one bucket: {h:?}");
            assert_eq!(header(&h, "x-ratelimit-remaining"), (10 - accepted).to_string());
        } else {
            assert_eq!(st, 403, "{body}");
            assert_eq!(body["message"].as_str().unwrap().split(" for ").next(), Some("API rate limit exceeded"));
        }
    }
    assert_eq!(accepted, 10, "the hourly limit once, not once per node");
    // Both report the same state on /rate_limit.
    let (_, _, ra) = parts(a.get("/rate_limit", Some(&t)).await).await;
    let (_, _, rb) = parts(b.get("/rate_limit", Some(&t)).await).await;
    assert_eq!(ra["resources"]["core"], rb["resources"]["core"]);
    assert_eq!(ra["resources"]["core"]["remaining"], 0);
    assert_eq!((fallbacks(&a).await, fallbacks(&b).await), (0, 0), "every decision was Redis's");
}

#[tokio::test]
async fn secondary_limits_and_lockout_are_shared() {
    let settings = SecondarySettings { points_per_minute: 30, content_per_minute: 3, login_attempts: 4, ..SecondarySettings::default() };
    let Some((a, b)) = pair(Options::with(|c| c.limits.secondary = settings)).await else { return };
    let t = setup(&a).await;
    let nodes = [&a, &b];
    // Points: 30 GETs a minute between both nodes.
    let mut ok = 0;
    for i in 0..40 {
        if nodes[i % 2].get(COMBINED, Some(&t)).await.status() == 200 {
            ok += 1;
        }
    }
    assert_eq!(ok, 30, "points per minute across nodes");
    a.advance(60).await;
    b.advance(60).await;
    // Content creation: 3 a minute between both nodes (5 writes cost 25 points).
    let mut created = 0;
    for i in 0..5 {
        let (st, _, body) = parts(nodes[i % 2].post(STATUSES, Some(&t), json!({"state": "success"})).await).await;
        match st {
            201 => created += 1,
            _ => assert_eq!(st, 403, "{body}"),
        }
    }
    assert_eq!(created, 3, "content per minute across nodes");
    // Lockout: 4 failed logins from one address, spread over both nodes, lock it on both.
    for i in 0..4 {
        let node = if i % 2 == 0 { &a } else { &b };
        assert_eq!(node.get(COMBINED, Some("svp_wrong")).await.status(), 401);
    }
    for node in [&a, &b] {
        let (st, _, body) = parts(node.get(COMBINED, Some(&t)).await).await;
        assert_eq!(
            (st, body["message"].as_str()),
            (403, Some("Maximum number of login attempts exceeded. Please try again later.")),
            "locked on every node"
        );
    }
    assert_eq!((fallbacks(&a).await, fallbacks(&b).await), (0, 0), "every decision was Redis's");
}

#[tokio::test]
async fn nodes_keep_answering_without_redis() {
    let Some(db_node) = start(Backend::Postgres, Options::default()).await else { return };
    // Nothing listens on port 1: every limit call falls back to the node's own memory.
    let gone = Options::with(|c| {
        c.limits.rate_limit_factor = 0.001;
        (c.redis.url, c.redis.prefix) = (Some(Url("redis://127.0.0.1:1".into())), "gone".into());
    });
    let s = db_node.peer(gone).await;
    let t = setup(&s).await;
    for i in 0..5 {
        let (st, h, body) = parts(s.get(COMBINED, Some(&t)).await).await;
        assert_eq!(st, 200, "request {i}: {body}");
        assert_eq!(used(&h), i + 1, "the node's own count");
    }
    let (st, _, _) = parts(s.get(COMBINED, Some(&t)).await).await;
    assert_eq!(st, 403, "limits still hold, per node");
    let n = fallbacks(&s).await;
    assert!(n >= 6, "{n} fallbacks counted");
}

/// Two nodes on one PostgreSQL database (Redis only when it answers: freshness needs none).
async fn nodes() -> Option<(Server, Server)> {
    let a = start(Backend::Postgres, Options::default()).await?;
    let b = a.peer(a.opts.clone()).await;
    Some((a, b))
}

/// Reads `path` on `node` until its caches hold the answer (the response cache admits an
/// answer when it is asked a second time).
async fn warm(node: &Server, path: &str, token: Option<&str>) -> (u16, reqwest::header::HeaderMap, serde_json::Value) {
    for _ in 0..2 {
        node.get(path, token).await;
    }
    parts(node.get(path, token).await).await
}

#[tokio::test]
async fn a_write_on_one_node_is_read_at_once_on_the_other() {
    let Some((a, b)) = nodes().await else { return };
    let t = setup(&a).await;

    // Response cache: the combined status.
    let (_, _, before) = warm(&b, COMBINED, Some(&t)).await;
    assert_eq!(before["total_count"], 0);
    assert_eq!(a.post(STATUSES, Some(&t), json!({"state": "success", "context": "ci"})).await.status(), 201);
    let (_, h, after) = parts(b.get(COMBINED, Some(&t)).await).await;
    assert_eq!(after["total_count"], 1, "node b answers the write node a acknowledged");

    // ETag cache (304 answered before routing).
    let etag = header(&h, "etag").to_string();
    for _ in 0..2 {
        let r = b.req(reqwest::Method::GET, COMBINED, Some(&t)).header("if-none-match", &etag).send().await.unwrap();
        assert_eq!(r.status(), 304);
    }
    assert_eq!(a.post(STATUSES, Some(&t), json!({"state": "failure", "context": "lint"})).await.status(), 201);
    let r = b.req(reqwest::Method::GET, COMBINED, Some(&t)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 200, "not 304 after a write on the other node");

    // Rules for a branch (compiled rulesets).
    let rules = "/repos/alice/hello/rules/branches/main";
    let (_, _, none) = warm(&b, rules, Some(&t)).await;
    assert_eq!(none, json!([]));
    let body = json!({"name": "protect", "enforcement": "active", "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}}, "rules": [{"type": "deletion"}]});
    a.admin_post("/repos/alice/hello/rulesets", body).await;
    let (_, _, some) = parts(b.get(rules, Some(&t)).await).await;
    assert_eq!(some.as_array().map(Vec::len), Some(1), "{some}");

    // Dependency alerts (rendered alerts are cached per generation).
    let alerts = "/repos/alice/hello/depbot/alerts";
    a.admin_post("/repos/alice/hello/depbot/alerts", crate::depbot::alert("npm", "left-pad", "high")).await;
    let (st, _, list) = warm(&b, alerts, Some(&t)).await;
    assert_eq!((st, list[0]["state"].as_str()), (200, Some("open")), "{list}");
    let (st, _, body) = parts(
        a.req(reqwest::Method::PATCH, "/repos/alice/hello/depbot/alerts/1", Some(&t))
            .json(&json!({"state": "dismissed", "dismissed_reason": "tolerable_risk"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(st, 200, "{body}");
    let (_, _, list) = parts(b.get(alerts, Some(&t)).await).await;
    assert_eq!(list[0]["state"], "dismissed");

    // Tokens: revoked on one node, refused on the other at once.
    let app = crate::authorizations::app(&a, "App", "alice", "oauth").await;
    let oauth = a.token(json!({"kind": "oauth", "login": "alice", "client_id": app.client_id, "scopes": ["repo"]})).await;
    assert_eq!(warm(&b, COMBINED, Some(&oauth)).await.0, 200);
    let r = a
        .req(reqwest::Method::DELETE, &format!("/applications/{}/token", app.client_id), None)
        .basic_auth(&app.client_id, Some(&app.secret))
        .json(&json!({"access_token": oauth}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(b.get(COMBINED, Some(&oauth)).await.status(), 401, "the revoked token");

    // Repositories: renamed on one node, moved on the other at once.
    assert_eq!(warm(&b, COMBINED, None).await.0, 200);
    a.admin_post("/repos/alice/hello/rename", json!({"name": "world"})).await;
    assert_eq!(b.get(COMBINED, None).await.status(), 301, "the old name redirects");
    assert_eq!(b.get("/repos/alice/world/commits/main/status", None).await.status(), 200);
}

// ---------------------------------------------------------------------------------------------
// Through a real load balancer: HAProxy round-robining every request over both nodes, as
// `scripts/cluster` runs it, so no test step can pick the node that answers.

/// HAProxy in front of two nodes; stopped when dropped.
struct Balancer {
    base: String,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Balancer {
    /// `None` (skipped loudly) without haproxy, unless PostgreSQL tests are required (CI).
    async fn start(nodes: [&Server; 2]) -> Option<Balancer> {
        Balancer::start_in("http", nodes).await
    }

    /// In `mode` (`http` or `tcp`), configured by `scripts/balancer-config` as `scripts/cluster` runs it.
    async fn start_in(mode: &str, nodes: [&Server; 2]) -> Option<Balancer> {
        if std::process::Command::new("haproxy").arg("-v").output().is_err() {
            assert!(std::env::var("PLATFORM_REQUIRE_POSTGRES").as_deref() != Ok("1"), "haproxy not installed (scripts/install-deps.sh)");
            eprintln!("!!! haproxy not installed: balanced cluster tests SKIPPED !!!");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/balancer-config");
        let out = std::process::Command::new("bash")
            .arg(script)
            .arg(port.to_string())
            .args(nodes.iter().map(|n| n.addr.to_string()))
            .env("BALANCER_MODE", mode)
            .env("BALANCER_CHECK", "")
            .output()
            .expect("scripts/balancer-config");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let cfg = out.stdout;
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, cfg).unwrap();
        let child = std::process::Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("haproxy");
        let b = Balancer { base: format!("http://127.0.0.1:{port}"), child, _dir: dir };
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Some(b);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("haproxy did not listen on {port}");
    }

    fn req(&self, s: &Server, method: reqwest::Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        s.client.request(method, format!("{}{path}", self.base)).header("user-agent", UA).bearer_auth(token)
    }
}

/// Requests a node answered, from its metrics.
async fn served(s: &Server) -> u64 {
    let metrics = s.client.get(format!("http://{}/metrics", s.addr)).send().await.unwrap().text().await.unwrap();
    metrics
        .lines()
        .filter(|l| l.starts_with("platform_http_requests_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn through_the_balancer_every_answer_is_current_and_the_limit_is_one() {
    // 5,000 an hour × 0.01 = 50 for the user.
    let Some((a, b)) = pair(Options::with(|c| c.limits.rate_limit_factor = 0.01)).await else { return };
    let Some(lb) = Balancer::start([&a, &b]).await else { return };
    let t = setup(&a).await;
    let (before_a, before_b) = (served(&a).await, served(&b).await);
    let mut last_used = 0;
    let mut check = |h: &reqwest::header::HeaderMap| {
        let u = used(h);
        assert_eq!(u, last_used + 1, "one bucket whichever node answers: {h:?}");
        last_used = u;
    };
    for i in 1..=12 {
        let r = lb
            .req(&a, reqwest::Method::POST, STATUSES, &t)
            .json(&json!({"state": "success", "context": format!("ci/{i}")}))
            .send()
            .await
            .unwrap();
        let (st, h, body) = parts(r).await;
        assert_eq!(st, 201, "{body}");
        check(&h);
        // Whichever node answers next (both, over the two reads) has the write at once.
        for _ in 0..2 {
            let (st, h, c) = parts(lb.req(&a, reqwest::Method::GET, COMBINED, &t).send().await.unwrap()).await;
            assert_eq!((st, c["total_count"].as_i64()), (200, Some(i)), "{c}");
            check(&h);
        }
    }
    // 36 requests so far; the rest of the 50 and then refusals, whichever node is asked.
    let mut refused = 0;
    for _ in 0..20 {
        let (st, h, _) = parts(lb.req(&a, reqwest::Method::GET, COMBINED, &t).send().await.unwrap()).await;
        if st == 200 {
            check(&h);
        } else {
            assert_eq!(st, 403);
            assert_eq!(header(&h, "x-ratelimit-remaining"), "0");
            refused += 1;
        }
    }
    assert_eq!((last_used, refused), (50, 6), "the hourly limit once across the balancer");
    let (na, nb) = (served(&a).await - before_a, served(&b).await - before_b);
    assert!(na >= 20 && nb >= 20, "round robin: node a answered {na}, node b {nb}");
}

#[tokio::test]
async fn runs_both_nodes_settle_at_once_complete_once() {
    // Every read of a repository's runs settles its due runs first, so reads on both nodes at
    // once race for the same runs (with both nodes' tickers). Each completion is recorded once:
    // a settler reads what it changes under the run's lock, never a state another node has
    // already moved on from.
    let Some((a, b)) = pair(Options::default()).await else { return };
    let t = setup(&a).await;
    const RUNS: i64 = 12;
    for _ in 0..RUNS {
        let plan = json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": [{"name": "build", "duration_seconds": 30}]});
        a.admin_post("/repos/alice/hello/runs", plan).await;
    }
    tokio::join!(a.advance(120), b.advance(120));
    const RUNS_PATH: &str = "/repos/alice/hello/actions/runs";
    let reads = tokio::join!(
        a.get(RUNS_PATH, Some(&t)),
        b.get(RUNS_PATH, Some(&t)),
        a.get(RUNS_PATH, Some(&t)),
        b.get(RUNS_PATH, Some(&t)),
        a.get(RUNS_PATH, Some(&t)),
        b.get(RUNS_PATH, Some(&t))
    );
    for r in [reads.0, reads.1, reads.2, reads.3, reads.4, reads.5] {
        assert_eq!(r.status(), 200);
    }
    let counts = a
        .store
        .read(|c| {
            let n = |c: &mut dyn platform_store::Conn, action: &str| {
                let like = format!("{{\"action\":\"{action}\"%");
                c.query_i64("SELECT COUNT(*) FROM activity WHERE kind = 'WorkflowRunEvent' AND payload LIKE ?", &[like.as_str().into()])
            };
            Ok::<_, platform_store::DbError>((n(c, "in_progress")?, n(c, "completed")?))
        })
        .await
        .unwrap();
    assert_eq!(counts, (RUNS, RUNS), "each run started and completed once");
}

/// Two nodes on one database, with alice's private repository `name` and her `repo` token.
async fn pair_with_repo(name: &str) -> Option<(Server, Server, String)> {
    let (a, b) = pair(Options::default()).await?;
    a.user("alice").await;
    a.repo("alice", name, true).await;
    let t = a.classic("alice", &["repo"]).await;
    Some((a, b, t))
}

#[tokio::test]
async fn a_change_made_on_both_nodes_at_once_is_recorded_once() {
    // Both nodes publish the same private repository at once: one makes it public, the other
    // finds it public already under the row's lock, so `publicized` and `PublicEvent` are once.
    let Some((a, b, t)) = pair_with_repo("secret").await else { return };
    let publish = |s: &Server| s.req(reqwest::Method::PATCH, "/repos/alice/secret", Some(&t)).json(&json!({"private": false})).send();
    let (ra, rb, rc, rd) = tokio::join!(publish(&a), publish(&b), publish(&a), publish(&b));
    for r in [ra, rb, rc, rd] {
        assert_eq!(r.unwrap().status(), 200);
    }
    let counts = a
        .store
        .read(|c| {
            let publicized = c.query_i64(
                "SELECT COUNT(*) FROM activity WHERE kind = 'RepositoryEvent' AND payload LIKE '{\"action\":\"publicized\"%'",
                &[],
            )?;
            Ok::<_, platform_store::DbError>((publicized, c.query_i64("SELECT COUNT(*) FROM activity WHERE kind = 'PublicEvent'", &[])?))
        })
        .await
        .unwrap();
    assert_eq!(counts, (1, 1), "one publication recorded once");

    // The same for an alert dismissed on both nodes at once: one `dismissed`.
    a.admin_post("/repos/alice/secret/depbot/alerts", crate::depbot::alert("npm", "left-pad", "high")).await;
    let dismiss = |s: &Server| {
        s.req(reqwest::Method::PATCH, "/repos/alice/secret/depbot/alerts/1", Some(&t))
            .json(&json!({"state": "dismissed", "dismissed_reason": "tolerable_risk"}))
            .send()
    };
    let (ra, rb, rc, rd) = tokio::join!(dismiss(&a), dismiss(&b), dismiss(&a), dismiss(&b));
    for r in [ra, rb, rc, rd] {
        assert_eq!(r.unwrap().status(), 200);
    }
    assert_eq!(recorded(&a, "DepbotAlertEvent", "dismissed").await, 1, "one dismissal recorded once");

    // And for users added to an organization on both nodes at once: one `member_added` each.
    a.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    let mut joins = Vec::new();
    for i in 0..6 {
        a.user(&format!("user{i}")).await;
        for node in [&a, &b, &a, &b] {
            let (client, url) = (node.client.clone(), format!("http://{}/_admin/orgs/acme/members/user{i}", node.addr));
            joins.push(tokio::spawn(async move { client.put(url).bearer_auth(ADMIN).json(&json!({})).send().await.unwrap().status() }));
        }
    }
    for j in joins {
        assert!(j.await.unwrap().is_success());
    }
    assert_eq!(recorded(&a, "OrganizationEvent", "member_added").await, 6, "each member_added recorded once");

    // A ruleset changed on both nodes at once, one field each: both changes stay (each merged
    // with the ruleset as the other left it), and each is one version.
    let created = a.admin_post("/repos/alice/secret/rulesets", json!({"name": "r0", "enforcement": "disabled"})).await;
    let path = format!("/repos/alice/secret/rulesets/{}", created["id"]);
    let wt = a.classic("alice", &["repo", "admin:repo_hook"]).await;
    for i in 1..=5 {
        let put = |s: &Server, body: serde_json::Value| s.req(reqwest::Method::PUT, &path, Some(&wt)).json(&body).send();
        let enforcement = if i % 2 == 0 { "disabled" } else { "evaluate" };
        let (ra, rb) = tokio::join!(put(&a, json!({"name": format!("r{i}")})), put(&b, json!({"enforcement": enforcement})));
        assert_eq!((ra.unwrap().status().as_u16(), rb.unwrap().status().as_u16()), (200, 200));
        let (_, _, now) = parts(a.get(&path, Some(&wt)).await).await;
        assert_eq!((now["name"].as_str(), now["enforcement"].as_str()), (Some(format!("r{i}").as_str()), Some(enforcement)), "round {i}");
    }
    let (_, _, history) = parts(a.get(&format!("{path}/history"), Some(&wt)).await).await;
    assert_eq!(history.as_array().map(Vec::len), Some(11), "one version per change");

    // A private registry configuration updated on both nodes at once, one field each: both stay.
    let ot = a.classic("alice", &["admin:org"]).await;
    let registries = "/orgs/acme/private-registries";
    let body = json!({"registry_type": "docker_registry", "url": "https://m.example/0", "visibility": "all", "auth_type": "oidc_cloud_a", "tenant_id": "t", "client_id": "c"});
    let r = a.req(reqwest::Method::POST, registries, Some(&ot)).json(&body).send().await.unwrap();
    let (st, _, made) = parts(r).await;
    assert_eq!(st, 201, "{made}");
    let path = format!("{registries}/{}", made["name"].as_str().unwrap());
    for i in 1..=5 {
        let visibility = if i % 2 == 0 { "all" } else { "private" };
        let patch = |s: &Server, body: serde_json::Value| s.req(reqwest::Method::PATCH, &path, Some(&ot)).json(&body).send();
        let (ra, rb) =
            tokio::join!(patch(&a, json!({"url": format!("https://m.example/{i}")})), patch(&b, json!({"visibility": visibility})));
        assert_eq!((ra.unwrap().status().as_u16(), rb.unwrap().status().as_u16()), (204, 204));
        let (_, _, now) = parts(a.get(&path, Some(&ot)).await).await;
        assert_eq!(
            (now["url"].clone(), now["visibility"].clone()),
            (json!(format!("https://m.example/{i}")), json!(visibility)),
            "round {i}"
        );
    }
}

/// The same request sent to both nodes at once: their statuses, lowest first.
async fn on_both_at_once(a: &Server, b: &Server, req: impl Fn(&Server) -> reqwest::RequestBuilder) -> [u16; 2] {
    let (ra, rb) = tokio::join!(req(a).send(), req(b).send());
    let mut codes = [ra.unwrap().status().as_u16(), rb.unwrap().status().as_u16()];
    codes.sort();
    codes
}

/// How many activity records of `kind` with `action` the nodes' shared database holds.
async fn recorded(s: &Server, kind: &'static str, action: &'static str) -> i64 {
    let like = format!("{{\"action\":\"{action}\"%");
    s.store
        .read(move |c| c.query_i64("SELECT COUNT(*) FROM activity WHERE kind = ? AND payload LIKE ?", platform_store::params![kind, like]))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_hook_changed_on_both_nodes_at_once_keeps_both_changes_and_is_deleted_once() {
    let Some((a, b)) = pair(Options::default()).await else { return };
    let t = crate::hooks::world(&a).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let mut hooks = Vec::new();
    for _ in 0..3 {
        hooks.push(
            crate::hooks::create_hook(&a, &t, json!({"name": "web", "events": ["push"], "config": {"url": url, "content_type": "json"}}))
                .await,
        );
    }
    recv.wait(3, 10).await; // the pings
                            // Its URL changed on one node and its events on the other: both stay.
    let path = format!("/orgs/acme/hooks/{}", hooks[0]["id"]);
    for i in 1..=5 {
        let events = if i % 2 == 0 { json!(["push"]) } else { json!(["meta", "push"]) };
        let config =
            a.req(reqwest::Method::PATCH, &format!("{path}/config"), Some(&t)).json(&json!({"url": format!("{url}?v={i}")})).send();
        let subscribe = b.req(reqwest::Method::PATCH, &path, Some(&t)).json(&json!({"events": events})).send();
        let (ra, rb) = tokio::join!(config, subscribe);
        assert_eq!((ra.unwrap().status().as_u16(), rb.unwrap().status().as_u16()), (200, 200));
        let (_, _, now) = parts(a.get(&path, Some(&t)).await).await;
        assert_eq!((now["config"]["url"].clone(), now["events"].clone()), (json!(format!("{url}?v={i}")), events), "round {i}");
    }
    // Deleted on both nodes at once: by one request (the other finds it gone), `meta` sent once.
    for h in &hooks {
        let path = format!("/orgs/acme/hooks/{}", h["id"]);
        let (_, _, _) =
            parts(a.req(reqwest::Method::PATCH, &path, Some(&t)).json(&json!({"events": ["meta"]})).send().await.unwrap()).await;
        let codes = on_both_at_once(&a, &b, |s| s.req(reqwest::Method::DELETE, &path, Some(&t))).await;
        assert_eq!(codes, [204, 404], "deleted once");
    }
    let hits = recv.wait(6, 10).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let metas = recv.hits.lock().unwrap().iter().filter(|h| h.h("x-service-event") == "meta").count();
    assert_eq!((hits.len(), metas), (6, 3), "one meta deleted for each hook");
}

#[tokio::test]
async fn an_import_started_or_cancelled_on_both_nodes_at_once_is_one() {
    let Some((a, b, t)) = pair_with_repo("hello").await else { return };
    let path = "/repos/alice/hello/import";
    for round in 0..3 {
        let start = |s: &Server| s.req(reqwest::Method::PUT, path, Some(&t)).json(&json!({"vcs_url": "http://127.0.0.1:9/project.git"}));
        assert_eq!(on_both_at_once(&a, &b, start).await, [201, 422], "one import, one refusal (round {round})");
        let cancel = |s: &Server| s.req(reqwest::Method::DELETE, path, Some(&t));
        assert_eq!(on_both_at_once(&a, &b, cancel).await, [204, 404], "cancelled once (round {round})");
    }
    let cancelled = a
        .store
        .read(|c| c.query_i64("SELECT COUNT(*) FROM activity WHERE kind = 'RepositoryImportEvent' AND payload LIKE '%cancelled%'", &[]))
        .await
        .unwrap();
    assert_eq!(cancelled, 3, "each cancellation recorded once");
}

#[tokio::test]
async fn a_repository_or_ruleset_deleted_on_both_nodes_at_once_is_deleted_once() {
    let Some((a, b)) = pair(Options::default()).await else { return };
    a.user("alice").await;
    let t = a.classic("alice", &["repo", "delete_repo"]).await;
    for round in 0..3 {
        let name = format!("gone{round}");
        a.repo("alice", &name, true).await;
        let path = format!("/repos/alice/{name}");
        let delete = |s: &Server| s.req(reqwest::Method::DELETE, &path, Some(&t));
        assert_eq!(on_both_at_once(&a, &b, delete).await, [204, 404], "deleted once (round {round})");
    }
    assert_eq!(recorded(&a, "RepositoryEvent", "deleted").await, 3, "each deletion recorded once");

    // The same for a ruleset.
    a.repo("alice", "kept", true).await;
    for round in 0..3 {
        let made = a.admin_post("/repos/alice/kept/rulesets", json!({"name": format!("r{round}"), "enforcement": "active"})).await;
        let path = format!("/repos/alice/kept/rulesets/{}", made["id"]);
        let delete = |s: &Server| s.req(reqwest::Method::DELETE, &path, Some(&t));
        assert_eq!(on_both_at_once(&a, &b, delete).await, [204, 404], "ruleset deleted once (round {round})");
    }
    assert_eq!(recorded(&a, "RepositoryRulesetEvent", "deleted").await, 3, "each ruleset deletion recorded once");
}

#[tokio::test]
async fn through_the_balancer_every_delivery_and_every_run_completion_happens_once() {
    // The wall clock: each node's ticker settles runs as their jobs end.
    let Some((a, b)) = pair(Options { manual_clock: false, ..Options::default() }).await else { return };
    let Some(lb) = Balancer::start([&a, &b]).await else { return };
    a.user("alice").await;
    a.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    a.repo("acme", "widgets", false).await;
    a.push("acme/widgets", "refs/heads/main", SHA).await;
    let t = a.classic("alice", &["repo", "admin:org_hook"]).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let hook = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["status", "workflow_run"]});
    assert_eq!(lb.req(&a, reqwest::Method::POST, "/orgs/acme/hooks", &t).json(&hook).send().await.unwrap().status(), 201);
    recv.wait(1, 10).await; // the ping
                            // Statuses through the balancer, and runs that complete on the wall clock: both nodes'
                            // consumers and run tickers are at work.
    const STATUSES_N: usize = 30;
    const RUNS_N: usize = 4;
    let mut runs = Vec::new();
    for i in 0..RUNS_N {
        let plan = json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": [{"name": "build", "duration_seconds": 1 + i % 2}]});
        let node = if i % 2 == 0 { &a } else { &b };
        runs.push(node.admin_post("/repos/acme/widgets/runs", plan).await["id"].as_i64().unwrap());
    }
    for i in 0..STATUSES_N {
        let r = lb
            .req(&a, reqwest::Method::POST, "/repos/acme/widgets/statuses/main", &t)
            .json(&json!({"state": "success", "context": format!("ci/{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    // Each run: requested, in_progress, completed.
    let hits = recv.wait(1 + STATUSES_N + 3 * RUNS_N, 30).await;
    // Nothing more arrives: no record was handled twice.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let hits = if recv.count() > hits.len() { recv.hits.lock().unwrap().clone() } else { hits };
    let mut statuses = std::collections::HashMap::<String, usize>::new();
    let mut completed = std::collections::HashMap::<i64, usize>::new();
    let mut guids = std::collections::HashSet::new();
    for h in &hits[1..] {
        let p: serde_json::Value = serde_json::from_slice(&h.body).unwrap();
        assert!(guids.insert(h.headers["x-service-delivery"].to_str().unwrap().to_string()), "a delivery sent twice");
        match h.headers["x-service-event"].to_str().unwrap() {
            "status" => *statuses.entry(p["context"].as_str().unwrap().to_string()).or_default() += 1,
            // Each run's requested and in_progress come before its completed.
            "workflow_run" if p["action"] != "completed" => assert!(["requested", "in_progress"].contains(&p["action"].as_str().unwrap())),
            "workflow_run" => *completed.entry(p["workflow_run"]["id"].as_i64().unwrap()).or_default() += 1,
            other => panic!("unexpected {other} delivery"),
        }
    }
    assert_eq!(statuses.len(), STATUSES_N, "{statuses:?}");
    assert!(statuses.values().all(|&n| n == 1), "each status delivered once: {statuses:?}");
    assert_eq!(completed.keys().copied().collect::<std::collections::BTreeSet<_>>(), runs.iter().copied().collect(), "{completed:?}");
    assert!(completed.values().all(|&n| n == 1), "each run completed once: {completed:?}");
}

#[tokio::test]
async fn through_the_balancer_a_client_cannot_choose_its_address() {
    // As `scripts/cluster` runs them: the nodes trust the balancer (on loopback), which writes the
    // address it saw over the client's header.
    client_cannot_choose_its_address("http").await
}

#[tokio::test]
async fn through_a_layer4_balancer_a_client_cannot_choose_its_address() {
    // HAProxy forwarding connections, each named by a PROXY protocol header: the client's header
    // is not read at all (although the client, on loopback, is a trusted address itself).
    client_cannot_choose_its_address("tcp").await
}

async fn client_cannot_choose_its_address(mode: &str) {
    // 60 an hour × 0.1 = 6 anonymous requests.
    let settings = SecondarySettings { login_attempts: 3, ..SecondarySettings::default() };
    let trusted = platform_api::forwarded::TrustedProxies::parse("127.0.0.1").unwrap();
    let mut opts = Options::with(|c| {
        c.limits.rate_limit_factor = 0.1;
        c.limits.secondary = settings;
        c.trusted_proxies = trusted.clone();
    });
    opts.conns.proxy_protocol = (mode == "tcp").then_some(trusted);
    let Some((a, b)) = pair(opts).await else { return };
    let Some(lb) = Balancer::start_in(mode, [&a, &b]).await else { return };
    let t = setup(&a).await;
    let anonymous =
        |spoof: String| a.client.get(format!("{}{COMBINED}", lb.base)).header("user-agent", UA).header("x-forwarded-for", spoof);
    for i in 1..=6 {
        let r = anonymous(format!("203.0.113.{i}")).send().await.unwrap();
        assert_eq!(r.status(), 200, "request {i}");
        assert_eq!(used(r.headers()), i, "one bucket whatever the client writes");
    }
    let r = anonymous("198.51.100.1, 203.0.113.77".into()).send().await.unwrap();
    assert_eq!(r.status(), 403, "the anonymous limit holds");
    // Failed logins from one address lock it out, whatever each one claimed to come from.
    for i in 0..3 {
        let r = anonymous(format!("192.0.2.{i}")).bearer_auth("svp_wrong").send().await.unwrap();
        assert_eq!(r.status(), 401);
    }
    let r = lb.req(&a, reqwest::Method::GET, COMBINED, &t).header("x-forwarded-for", "192.0.2.200").send().await.unwrap();
    let (st, _, body) = parts(r).await;
    assert_eq!((st, body["message"].as_str()), (403, Some("Maximum number of login attempts exceeded. Please try again later.")));
}

/// The top-level commands Redis runs, as `MONITOR` streams them (commands a script runs are
/// marked `lua`).
struct Monitor {
    addr: String,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Monitor {
    fn start(url: &str) -> Monitor {
        use std::io::{BufRead, Write};
        let addr = url.trim_start_matches("redis://").split('/').next().unwrap().to_string();
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream.write_all(b"MONITOR\r\n").unwrap();
        let mut reader = std::io::BufReader::new(stream);
        let mut ok = String::new();
        reader.read_line(&mut ok).unwrap();
        assert_eq!(ok.trim(), "+OK");
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { return };
                sink.lock().unwrap().push(line);
            }
        });
        Monitor { addr, lines }
    }

    /// The top-level commands that named a key under `prefix` since the monitor started, once
    /// every command sent before this call has been streamed (a marker sent after them is seen).
    fn count(&self, prefix: &str) -> usize {
        let marker = format!("marker-{prefix}");
        redis_command(&self.addr, &format!("ECHO {marker}"));
        for _ in 0..500 {
            let lines = self.lines.lock().unwrap();
            if lines.iter().any(|l| l.contains(&marker)) {
                let key = format!("\"{prefix}:");
                return lines.iter().filter(|l| l.contains(&key) && !l.contains(" lua]")).count();
            }
            drop(lines);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the monitor never saw its marker");
    }
}

/// One inline command; its first reply line.
fn redis_command(addr: &str, command: &str) -> String {
    use std::io::{BufRead, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(format!("{command}\r\n").as_bytes()).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    if line.starts_with('$') && !line.starts_with("$-1") {
        line.clear();
        reader.read_line(&mut line).unwrap();
    }
    line.trim().to_string()
}

#[tokio::test]
async fn concurrent_requests_decided_together_are_each_decided_exactly() {
    // Requests arriving while a node's call is in flight go together in its next call: each
    // is still decided as if alone, in order, so the limit is accepted once and every accepted
    // request reports its own count.
    let Some((a, b)) = pair(Options::with(|c| c.limits.rate_limit_factor = 0.002)).await else { return };
    let t = setup(&a).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..40 {
        let node = if i % 2 == 0 { &a } else { &b };
        let request = node.client.get(node.url(COMBINED)).bearer_auth(&t).header("user-agent", "t");
        calls.spawn(async move { parts(request.send().await.unwrap()).await });
    }
    let answers = calls.join_all().await;
    let mut counts: Vec<i64> = answers.iter().filter(|(st, _, _)| *st == 200).map(|(_, h, _)| used(h)).collect();
    counts.sort_unstable();
    assert_eq!(counts, (1..=10).collect::<Vec<_>>(), "ten accepted, each with its own count");
    assert!(answers.iter().all(|(st, _, _)| *st == 200 || *st == 403));
    assert_eq!((fallbacks(&a).await, fallbacks(&b).await), (0, 0), "every decision was Redis's");
}

#[tokio::test]
async fn a_busy_requester_is_admitted_from_leases_and_its_limit_is_accepted_once() {
    // 5,000 an hour × 0.1 = 500; points and places (× 0.1) never refuse.
    let Some((a, b)) = pair(Options::with(|c| {
        c.limits.rate_limit_factor = 0.1;
        c.limits.secondary = SecondarySettings { points_per_minute: 100_000, concurrent: 1000, ..SecondarySettings::default() };
    }))
    .await
    else {
        return;
    };
    let t = setup(&a).await;
    let user = user_id(&a, &t).await;
    // 12 clients on each node, 30 requests each: 720 requests for the 499 left.
    let mut clients = tokio::task::JoinSet::new();
    for c in 0..24 {
        let node = if c % 2 == 0 { &a } else { &b };
        let (client, url, t) = (node.client.clone(), node.url(COMBINED), t.clone());
        clients.spawn(async move {
            let mut answers = Vec::new();
            for _ in 0..30 {
                answers.push(parts(client.get(&url).bearer_auth(&t).header("user-agent", "t").send().await.unwrap()).await);
            }
            answers
        });
    }
    let answers: Vec<_> = clients.join_all().await.into_iter().flatten().collect();
    let mut accepted = 1;
    for (st, h, body) in &answers {
        match st {
            200 => {
                accepted += 1;
                assert!((1..=500).contains(&used(h)), "{h:?}");
            }
            _ => assert_eq!(*st, 403, "{body}"),
        }
    }
    let by_lease = leased(&a).await + leased(&b).await;
    assert!(by_lease * 2 > accepted - 1, "most requests admitted by leases: {by_lease} of {accepted}");
    assert!(accepted <= 500, "never more than the limit: {accepted}");
    // What the leases held unused comes back: the rest of the limit is accepted, then no more.
    tokio::time::sleep(platform_api::leases::TTL * 5).await;
    for i in 0..(500 - accepted + 3) {
        let node = if i % 2 == 0 { &a } else { &b };
        if node.get(COMBINED, Some(&t)).await.status() == 200 {
            accepted += 1;
        }
    }
    assert_eq!(accepted, 500, "the hourly limit once, all of it");
    assert_eq!(places_held(&a, user).await, "0", "every place a lease held was given back");
    assert_eq!((fallbacks(&a).await, fallbacks(&b).await), (0, 0), "every decision was Redis's");
}

#[tokio::test]
async fn each_request_is_one_redis_command() {
    // An idle node's own flush is an hour away: what a request defers travels only with the
    // node's next request, so the count is exact.
    let Some((a, b)) = pair(Options::with(|c| {
        c.redis.flush = std::time::Duration::from_secs(3600);
        c.limits.secondary = SecondarySettings::default();
    }))
    .await
    else {
        return;
    };
    let t = setup(&a).await;
    let (url, prefix) = (a.opts.api.redis.url.clone().unwrap().0, a.opts.api.redis.prefix.clone());
    let user = user_id(&a, &t).await;
    // The script is known to Redis from here on.
    assert_eq!(b.get(COMBINED, Some(&t)).await.status(), 200);
    let monitor = Monitor::start(&url);
    let nodes = [&a, &b];
    let mut requests = 0;
    for i in 0..20 {
        let (st, h, _) = parts(nodes[i % 2].get(COMBINED, Some(&t)).await).await;
        assert_eq!(st, 200);
        assert_eq!(used(&h), i as i64 + 3, "one bucket on both nodes");
        requests += 1;
    }
    // Content creation: the operation's own windows are decided in the same call.
    for i in 0..4 {
        assert_eq!(nodes[i % 2].post(STATUSES, Some(&t), json!({"state": "success"})).await.status(), 201);
        requests += 1;
    }
    // A 304 is not charged: the refund travels with the next call.
    let (_, h, _) = parts(a.get(COMBINED, Some(&t)).await).await;
    let etag = header(&h, "etag").to_string();
    let (st, h, _) =
        parts(a.client.get(a.url(COMBINED)).bearer_auth(&t).header("user-agent", "t").header("if-none-match", &etag).send().await.unwrap())
            .await;
    assert_eq!(st, 304);
    requests += 2;
    let after_304 = used(&h);
    let (_, h, _) = parts(a.get(COMBINED, Some(&t)).await).await;
    assert_eq!(used(&h), after_304 + 1, "the 304's refund reached Redis before the next charge");
    requests += 1;
    assert_eq!(monitor.count(&prefix), requests, "one top-level Redis command per request");
    // Every freed place reached Redis but each node's last, still waiting for its next call.
    let in_flight = redis_command(&monitor.addr, &format!("GET {prefix}:c:user:{user}"));
    assert_eq!(in_flight, "2");
    assert_eq!((fallbacks(&a).await, fallbacks(&b).await), (0, 0), "every decision was Redis's");
}

#[tokio::test]
async fn an_idle_node_frees_its_places_by_itself() {
    let Some((a, _b)) = pair(Options::with(|c| c.limits.secondary = SecondarySettings::default())).await else { return };
    let t = setup(&a).await;
    let user = user_id(&a, &t).await;
    for _ in 0..3 {
        assert_eq!(a.get(COMBINED, Some(&t)).await.status(), 200);
    }
    assert_eq!(places_held(&a, user).await, "0", "no request in flight, none counted");
}

async fn user_id(s: &Server, t: &str) -> i64 {
    parts(s.get("/user", Some(t)).await).await.2["id"].as_i64().unwrap()
}

/// The places Redis counts as taken by `user`'s requests once they have had five seconds to be
/// freed (or as soon as none is).
async fn places_held(a: &Server, user: i64) -> String {
    let (url, prefix) = (a.opts.api.redis.url.clone().unwrap().0, a.opts.api.redis.prefix.clone());
    let addr = url.trim_start_matches("redis://").split('/').next().unwrap().to_string();
    let key = format!("GET {prefix}:c:user:{user}");
    let mut left = String::new();
    for _ in 0..500 {
        left = redis_command(&addr, &key);
        if left == "0" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    left
}

#[tokio::test]
async fn through_the_balancer_git_clones_fetches_and_pushes() {
    // Every request of a git conversation may reach another node (HAProxy round-robins each):
    // the nodes share the data directory and the store, so the conversation does not notice.
    let Some((a, b)) = pair(Options::default()).await else { return };
    let Some(lb) = Balancer::start([&a, &b]).await else { return };
    a.user("alice").await;
    let t = a.classic("alice", &["repo"]).await;
    let (st, _, body) = call(&a, reqwest::Method::POST, "/user/repos", Some(&t), Some(json!({"name": "site", "auto_init": true}))).await;
    assert_eq!(st, 201, "{body}");
    let url = crate::git_hosting::url(&lb.base, "alice/site", Some(&t));
    for protocol in [0, 2] {
        let git = crate::git_hosting::Client::new(protocol);
        let work = git.clone_repo(&url, "work").await;
        let sha = git.commit(&work, &[("a.txt", &format!("v{protocol}\n"))], "Through the balancer").await;
        git.ok(&work, &["push", "--quiet", "origin", "main"]).await;
        for node in [&a, &b] {
            let (st, _, branch) = parts(node.get("/repos/alice/site/branches/main", Some(&t)).await).await;
            assert_eq!((st, branch["commit"]["sha"].as_str()), (200, Some(sha.as_str())), "protocol {protocol}");
        }
        let other = git.clone_repo(&url, "other").await;
        assert_eq!(git.ok(&other, &["rev-parse", "HEAD"]).await.trim(), sha);
        let next = git.commit(&other, &[("b.txt", &format!("b{protocol}\n"))], "From the other clone").await;
        git.ok(&other, &["push", "--quiet", "origin", "main"]).await;
        git.ok(&work, &["fetch", "--quiet", "origin"]).await;
        assert_eq!(git.ok(&work, &["rev-parse", "origin/main"]).await.trim(), next, "protocol {protocol}");
    }
}
