//! Test harness: a real server on 127.0.0.1:<random port> over a fresh database (an SQLite file
//! or a PostgreSQL schema), driven over HTTP with reqwest.
use std::net::SocketAddr;
use std::sync::Arc;

use platform_api::listener::ConnSettings;
use platform_api::settings::Url;
use platform_api::{ApiConfig, AppState};
use platform_core::Clock;
use platform_store::testing::{test_database, TestDatabase};
use platform_store::{Backend, Store, StoreOptions};
use platformd::config::Config;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::{json, Value};

use crate::schema_check::assert_conforms_to_snapshot;

pub const ADMIN: &str = "test-admin-token";
pub const UA: &str = "platform-tests/1.0";

#[derive(Clone, Debug)]
pub struct Options {
    /// The server's settings: the binary's defaults (`platformd::config::Config`, the settings'
    /// one declaration) with the suite's changes (see `Default`); `public_url` and `admin_token`
    /// are set when the server starts, and on PostgreSQL the Redis of [`test_redis`] unless one
    /// is given.
    pub api: ApiConfig,
    /// Connection timeouts and cap (the binary's defaults).
    pub conns: ConnSettings,
    pub manual_clock: bool,
    /// Path appended to the public URL (e.g. `/api/v3`).
    pub base_path: &'static str,
    /// A document served at `/openapi.json` in front of the app (docs page tests).
    pub openapi_fixture: Option<&'static str>,
}

impl Default for Options {
    /// The binary's defaults, except: a manual clock; secondary limits and the login lockout off
    /// (functional tests create content faster than 80 a minute on the manual clock; the
    /// rate-limit tests turn them on); webhook deliveries may reach loopback (test receivers);
    /// the data directory (git data, import mirrors) one of the suite's own per database.
    fn default() -> Self {
        let config = Config::default();
        let mut api = config.api_config(String::new(), ADMIN.into());
        api.limits.secondary.enabled = false;
        api.webhooks.allowed_hosts = Some("loopback".into());
        api.imports.data_dir = None;
        Options { api, conns: config.conn_settings(), manual_clock: true, base_path: "", openapi_fixture: None }
    }
}

impl Options {
    /// The defaults with `change` made to the server's settings.
    pub fn with(change: impl FnOnce(&mut ApiConfig)) -> Options {
        let mut o = Options::default();
        change(&mut o.api);
        o
    }
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
    /// The data directory (repositories' git data, import mirrors) when the suite made it: one
    /// per database, kept across restarts and shared with peers, removed with the last of them.
    data: Option<Arc<tempfile::TempDir>>,
    db: Option<TestDatabase>,
    /// The database URL (a peer node opens the same).
    pub url: String,
}

/// Starts a server on a fresh database; `None` when the backend is unavailable (PostgreSQL
/// skipped loudly by the store's test support unless PLATFORM_REQUIRE_POSTGRES=1).
///
/// On PostgreSQL the limits are kept in Redis when it answers (see [`test_redis`]), so every
/// limit test also runs against the engine many nodes share.
pub async fn start(backend: Backend, mut opts: Options) -> Option<Server> {
    let db = test_database(backend)?;
    let data = opts.api.imports.data_dir.is_none().then(|| Arc::new(tempfile::tempdir().expect("data directory")));
    if let Some(d) = &data {
        opts.api.imports.data_dir = Some(d.path().to_path_buf());
    }
    if backend == Backend::Postgres && opts.api.redis.url.is_none() {
        if let Some((url, prefix)) = test_redis() {
            (opts.api.redis.url, opts.api.redis.prefix) = (Some(Url(url)), prefix);
        }
    }
    Some(start_on(db, backend, opts, data).await)
}

async fn start_on(db: TestDatabase, backend: Backend, opts: Options, data: Option<Arc<tempfile::TempDir>>) -> Server {
    let url = db.url.clone();
    start_node(&url, Some(db), backend, opts, data).await
}

/// A node on the database at `url`; it owns (and drops) `db` when given.
async fn start_node(url: &str, db: Option<TestDatabase>, backend: Backend, opts: Options, data: Option<Arc<tempfile::TempDir>>) -> Server {
    let store = Store::open(StoreOptions::new(url)).await.expect("open store");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}{}", opts.base_path);
    let config = ApiConfig { public_url: base.clone(), admin_token: ADMIN.into(), ..opts.api.clone() };
    let clock = Arc::new(if opts.manual_clock { Clock::manual() } else { Clock::system() });
    let state = AppState::new(store.clone(), clock, config);
    let sk = opts.api.secret_key;
    platform_api::secrets::prepare_at_start(&store, sk).await.expect("secret key fits the database");
    let workers = Some(platform_api::spawn_workers(&state));
    let mut app = platform_api::app(state);
    if let Some(doc) = opts.openapi_fixture {
        let serve = move || async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc) };
        app = axum::Router::new().route("/openapi.json", axum::routing::get(serve)).fallback_service(app);
    }
    // The binary's own accept loop, so the suite exercises its timeouts and cap.
    let conns = opts.conns.clone();
    let task = tokio::spawn(platform_api::listener::serve(listener, app, conns, std::future::pending()));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    Server { base, addr, client, store, backend, opts, task, workers, data, db, url: url.to_string() }
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
        let mut opts = opts;
        if opts.api.imports.data_dir.is_none() {
            opts.api.imports.data_dir = self.opts.api.imports.data_dir.clone();
        }
        start_on(db, self.backend, opts, self.data.take()).await
    }

    /// Another node on this server's database (PostgreSQL: a second process would do the same),
    /// with `opts` of its own.
    pub async fn peer(&self, opts: Options) -> Server {
        let mut opts = opts;
        if opts.api.imports.data_dir.is_none() {
            opts.api.imports.data_dir = self.opts.api.imports.data_dir.clone();
        }
        start_node(&self.url, None, self.backend, opts, self.data.clone()).await
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

/// A request with an optional JSON body: status, headers and JSON body.
pub async fn call(
    s: &Server,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = s.req(method, path, token);
    if let Some(b) = body {
        r = r.json(&b);
    }
    parts(r.send().await.unwrap()).await
}

/// The commits most tests push (any 40-hex sha will do; these are the documents' examples).
pub const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
pub const SHA2: &str = "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d";

/// A SimpleUser of `login`: the published shape (every field, with its type), and links
/// under the user's API URL.
pub fn assert_simple_user(s: &Server, u: &Value, login: &str, kind: &str) {
    assert_conforms_to_snapshot("SimpleUser", u);
    assert_eq!(u["login"], login, "{u}");
    assert!(u["id"].as_i64().is_some_and(|i| i > 0), "{u}");
    let api = format!("{}/users/{login}", s.base);
    assert_eq!(u["url"], api.as_str(), "{u}");
    assert!(u["html_url"].as_str().is_some_and(|h| h.starts_with("http") && h.ends_with(&format!("/{login}"))), "{u}");
    assert_eq!(u["following_url"], format!("{api}/following{{/other_user}}"));
    assert_eq!(u["events_url"], format!("{api}/events{{/privacy}}"));
    assert_links_under(u, &api, &["url", "html_url", "avatar_url"]);
    assert_eq!(u["type"], kind, "{u}");
}

/// A MinimalRepository `owner/name`: the published shape, and every API link under the
/// repository's API URL.
pub fn assert_minimal_repository(s: &Server, r: &Value, owner: &str, name: &str, private: bool) {
    assert_conforms_to_snapshot("MinimalRepository", r);
    assert_eq!(r["name"], name);
    assert_eq!(r["full_name"], format!("{owner}/{name}"));
    assert_simple_user(s, &r["owner"], owner, r["owner"]["type"].as_str().unwrap_or("?"));
    assert_eq!(r["private"], private);
    assert_eq!(r["fork"], false);
    let api = format!("{}/repos/{owner}/{name}", s.base);
    assert_eq!(r["url"], api.as_str());
    // Web and git addresses are elsewhere; every other link is an API one.
    assert_links_under(r, &api, &["html_url", "git_url", "ssh_url", "clone_url", "svn_url", "mirror_url"]);
    assert_eq!(r["statuses_url"], format!("{api}/statuses/{{sha}}"));
}

/// Every `…_url` field of `v` but `except` is a link under `api`.
fn assert_links_under(v: &Value, api: &str, except: &[&str]) {
    let links = v.as_object().unwrap().iter().filter(|(k, _)| k.ends_with("_url") && !except.contains(&k.as_str()));
    let mut n = 0;
    for (k, link) in links {
        assert!(link.as_str().is_some_and(|l| l.starts_with(api)), "{k}: {v}");
        n += 1;
    }
    assert!(n > 0, "no links: {v}");
}
