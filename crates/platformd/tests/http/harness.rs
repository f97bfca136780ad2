//! Test harness: a real server on 127.0.0.1:<random port> over a fresh database (an SQLite file
//! or a PostgreSQL schema), driven over HTTP with reqwest.
use std::net::SocketAddr;
use std::sync::Arc;

use platform_api::{ApiConfig, AppState};
use platform_core::Clock;
use platform_store::testing::{test_database, TestDatabase};
use platform_store::{Backend, Store, StoreOptions};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::{json, Value};

pub const ADMIN: &str = "test-admin-token";
pub const UA: &str = "platform-tests/1.0";

#[derive(Clone, Debug)]
pub struct Options {
    pub rate_limits: bool,
    pub rate_limit_factor: f64,
    /// Secondary limits and the login lockout: off for functional tests (they create content
    /// faster than 80 a minute on the manual clock); the rate-limit tests turn them on.
    pub secondary: platform_api::secondary::SecondarySettings,
    pub manual_clock: bool,
    /// Path appended to the public URL (e.g. `/api/v3`).
    pub base_path: &'static str,
    pub max_body_bytes: usize,
    /// A document served at `/openapi.json` in front of the app (docs page tests).
    pub openapi_fixture: Option<&'static str>,
    /// `notifications_sync_limit` of the server (mark-all-read above it answers 202).
    pub notifications_sync_limit: i64,
    /// Webhook delivery settings (the default allows loopback, so test receivers work).
    pub webhooks: platform_api::webhooks::WebhookSettings,
    /// Source import settings (mirrors in the temporary directory by default).
    pub imports: platform_api::imports::ImportSettings,
    pub insights_delay_seconds: i64,
    /// Connection timeouts and cap (the binary's defaults).
    pub conns: Connections,
    /// The at-rest key (in the database by default).
    pub secret_key: platform_api::secrets::AtRestKey,
    /// Redis shared by the nodes for the limits: (URL, key prefix); `None`: in memory.
    pub redis: Option<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct Connections {
    pub settings: platform_api::listener::ConnSettings,
    pub body_read: std::time::Duration,
}

impl Default for Connections {
    fn default() -> Self {
        Connections { settings: Default::default(), body_read: std::time::Duration::from_secs(60) }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rate_limits: true,
            rate_limit_factor: 1.0,
            secondary: no_secondary_limits(),
            manual_clock: true,
            base_path: "",
            max_body_bytes: 1 << 20,
            openapi_fixture: None,
            notifications_sync_limit: 1000,
            webhooks: loopback_webhooks(),
            imports: Default::default(),
            insights_delay_seconds: 0,
            conns: Default::default(),
            secret_key: Default::default(),
            redis: None,
        }
    }
}

pub fn no_secondary_limits() -> platform_api::secondary::SecondarySettings {
    platform_api::secondary::SecondarySettings { enabled: false, ..Default::default() }
}

/// Webhook settings that allow loopback targets (local receivers).
pub fn loopback_webhooks() -> platform_api::webhooks::WebhookSettings {
    platform_api::webhooks::WebhookSettings { allowed_hosts: "loopback".into(), ..Default::default() }
}

pub struct Server {
    /// The API base URL (with `base_path`).
    pub base: String,
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    pub store: Store,
    pub backend: Backend,
    pub opts: Options,
    task: tokio::task::JoinHandle<()>,
    /// Background workers (activity consumers, senders…); cancelled when dropped, shut down
    /// (as the binary does) by a restart.
    workers: Option<platform_api::worker::Workers>,
    db: Option<TestDatabase>,
    /// The database URL (a peer node opens the same).
    url: String,
}

/// Starts a server on a fresh database; `None` when the backend is unavailable (PostgreSQL
/// skipped loudly by the store's test support unless PLATFORM_REQUIRE_POSTGRES=1).
///
/// On PostgreSQL the limits are kept in Redis when it answers (see [`test_redis`]), so every
/// limit test also runs against the engine many nodes share.
pub async fn start(backend: Backend, mut opts: Options) -> Option<Server> {
    let db = test_database(backend)?;
    if backend == Backend::Postgres && opts.redis.is_none() {
        opts.redis = test_redis();
    }
    Some(start_on(db, backend, opts).await)
}

async fn start_on(db: TestDatabase, backend: Backend, opts: Options) -> Server {
    let url = db.url.clone();
    start_node(&url, Some(db), backend, opts).await
}

/// A node on the database at `url`; it owns (and drops) `db` when given.
async fn start_node(url: &str, db: Option<TestDatabase>, backend: Backend, opts: Options) -> Server {
    let store = Store::open(StoreOptions::new(url)).await.expect("open store");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}{}", opts.base_path);
    let config = ApiConfig {
        public_url: base.clone(),
        rate_limits: opts.rate_limits,
        rate_limit_factor: opts.rate_limit_factor,
        secondary: opts.secondary.clone(),
        max_body_bytes: opts.max_body_bytes,
        secret_key: opts.secret_key,
        body_read_timeout: opts.conns.body_read,
        trust_forwarded: false,
        admin_token: ADMIN.into(),
        notifications_sync_limit: opts.notifications_sync_limit,
        notifications_poll_interval: 60,
        poll_interval: 60,
        webhooks: opts.webhooks.clone(),
        imports: opts.imports.clone(),
        insights: true,
        insights_delay_seconds: opts.insights_delay_seconds,
        redis_url: opts.redis.as_ref().map(|r| r.0.clone()),
        redis_prefix: opts.redis.as_ref().map_or_else(|| "platform".into(), |r| r.1.clone()),
    };
    let clock = Arc::new(if opts.manual_clock { Clock::manual() } else { Clock::system() });
    let state = AppState::new(store.clone(), clock, config);
    let sk = opts.secret_key;
    store.write(move |c| platform_api::secrets::prepare(c, &sk)).await.expect("database").expect("secret key fits the database");
    let workers = Some(platform_api::spawn_workers(&state));
    let mut app = platform_api::app(state);
    if let Some(doc) = opts.openapi_fixture {
        let serve = move || async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc) };
        app = axum::Router::new().route("/openapi.json", axum::routing::get(serve)).fallback_service(app);
    }
    // The binary's own accept loop, so the suite exercises its timeouts and cap.
    let conns = opts.conns.settings.clone();
    let task = tokio::spawn(platform_api::listener::serve(listener, app, conns, std::future::pending()));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    Server { base, addr, client, store, backend, opts, task, workers, db, url: url.to_string() }
}

/// A Redis for shared limits under a key prefix of its own: (URL, prefix). `None` (warned)
/// when `PLATFORM_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`) does not answer, unless
/// `PLATFORM_REQUIRE_REDIS=1`, which makes that a failure.
pub fn test_redis() -> Option<(String, String)> {
    use std::io::{Read, Write};
    let url = std::env::var("PLATFORM_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let hostport = url.trim_start_matches("redis://").split('/').next().unwrap_or("").rsplit('@').next().unwrap_or("").to_string();
    let answers = std::net::TcpStream::connect(&hostport).ok().and_then(|mut s| {
        s.set_read_timeout(Some(std::time::Duration::from_secs(2))).ok()?;
        s.write_all(b"PING\r\n").ok()?;
        let mut buf = [0u8; 7];
        s.read_exact(&mut buf).ok()?;
        (&buf == b"+PONG\r\n").then_some(())
    });
    if answers.is_none() {
        assert!(std::env::var("PLATFORM_REQUIRE_REDIS").as_deref() != Ok("1"), "Redis not reachable at {url} and PLATFORM_REQUIRE_REDIS=1");
        let _ = writeln!(std::io::stderr(), "!!! Redis not reachable at {url}: shared-limit tests SKIPPED !!!");
        return None;
    }
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some((url, format!("test-{}-{n}-{}", std::process::id(), rand_suffix())))
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64);
    h.finish()
}

impl Server {
    /// Stops this server and starts a new one on the same database.
    pub async fn restart(self) -> Server {
        let opts = self.opts.clone();
        self.restart_with(opts).await
    }

    /// Stops this server and starts one with other options on the same database.
    pub async fn restart_with(mut self, opts: Options) -> Server {
        self.task.abort();
        let stopped = self.workers.take().unwrap().shutdown().await;
        assert!(stopped.aborted.is_empty(), "workers outlived the shutdown bound: {:?}", stopped.aborted);
        self.store.close().await;
        let db = self.db.take().unwrap();
        start_on(db, self.backend, opts).await
    }

    /// Another node on this server's database (PostgreSQL: a second process would do the same),
    /// with `opts` of its own.
    pub async fn peer(&self, opts: Options) -> Server {
        start_node(&self.url, None, self.backend, opts).await
    }

    pub fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        }
    }

    /// A request with a User-Agent and, when given, a bearer token.
    pub fn req(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let r = self.client.request(method, self.url(path)).header("user-agent", UA);
        match token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Response {
        self.req(Method::GET, path, token).send().await.unwrap()
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> Response {
        self.req(Method::POST, path, token).json(&body).send().await.unwrap()
    }

    /// A control-plane call that must succeed; returns its JSON.
    pub async fn admin(&self, method: Method, path: &str, body: Value) -> Value {
        let r =
            self.client.request(method, format!("http://{}/_admin{path}", self.addr)).bearer_auth(ADMIN).json(&body).send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        assert!(status.is_success(), "admin {path} -> {status}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    pub async fn admin_post(&self, path: &str, body: Value) -> Value {
        self.admin(Method::POST, path, body).await
    }

    pub async fn user(&self, login: &str) -> Value {
        self.admin_post("/users", json!({ "login": login })).await
    }

    pub async fn repo(&self, owner: &str, name: &str, private: bool) -> Value {
        self.admin_post("/repos", json!({ "owner": owner, "name": name, "private": private })).await
    }

    pub async fn push(&self, full_name: &str, r: &str, sha: &str) -> Value {
        self.admin_post(&format!("/repos/{full_name}/refs"), json!({ "ref": r, "sha": sha })).await
    }

    /// Creates a token from a control-plane body; returns its text.
    pub async fn token(&self, body: Value) -> String {
        self.admin_post("/tokens", body).await["token"].as_str().unwrap().to_string()
    }

    pub async fn classic(&self, login: &str, scopes: &[&str]) -> String {
        self.token(json!({ "kind": "classic", "login": login, "scopes": scopes })).await
    }

    pub async fn advance(&self, seconds: i64) {
        self.admin_post("/clock", json!({ "advance_seconds": seconds })).await;
    }
}

/// Reads a response as (status, headers, JSON body or Null).
pub async fn parts(r: Response) -> (u16, reqwest::header::HeaderMap, Value) {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    (status, headers, serde_json::from_str(&text).unwrap_or(Value::Null))
}

pub fn header<'a>(h: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Asserts an error body of api-facts §3: `message`, `documentation_url`, `status`, JSON type.
pub fn assert_error(status: u16, h: &reqwest::header::HeaderMap, body: &Value, want: u16, message: &str) {
    assert_eq!(status, want, "body: {body}");
    assert_eq!(body["message"], message, "body: {body}");
    assert!(body["documentation_url"].as_str().is_some_and(|d| d.starts_with("https://docs.service.example/")), "{body}");
    assert_eq!(body["status"], want.to_string(), "{body}");
    assert_eq!(header(h, "content-type"), "application/json; charset=utf-8");
}

/// Defines `mod name { sqlite(), postgres() }`: the same test body on both backends.
/// The body is an async block over `s: Server` started with `$opts`.
#[macro_export]
macro_rules! both {
    ($name:ident, $opts:expr, |$s:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn run($s: $crate::harness::Server) $body
            #[tokio::test]
            async fn sqlite() {
                run($crate::harness::start(platform_store::Backend::Sqlite, $opts).await.unwrap()).await
            }
            #[tokio::test]
            async fn postgres() {
                if let Some(s) = $crate::harness::start(platform_store::Backend::Postgres, $opts).await {
                    run(s).await
                }
            }
        }
    };
    ($name:ident, |$s:ident| $body:block) => {
        $crate::both!($name, $crate::harness::Options::default(), |$s| $body);
    };
}

/// `YYYY-MM-DDTHH:MM:SSZ` (document 1's timestamp form).
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// A JSON string in timestamp form.
pub fn is_ts(v: &Value) -> bool {
    v.as_str().is_some_and(is_timestamp)
}
