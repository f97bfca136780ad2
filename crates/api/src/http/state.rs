//! Shared server state. Nothing global: the store, clock, limiter and metrics are passed in,
//! so tests run many servers in one process.
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use platform_core::Clock;
use platform_store::{Generations, Store};

use platform_core::ApiVersion;
use platform_store::domain::repos::Lookup;

use crate::cache::GenCache;
use crate::faults::Faults;
use crate::metrics::Metrics;
use crate::principal::Role;
use crate::principal::TokenAuth;
use crate::ratelimit::Limiter;
use crate::reply::Reply;
use crate::settings::{number, seconds, setting};
use crate::shapes::Urls;

/// What the API is configured with; built from the settings' one declaration
/// (`platformd::config::Config::api_config`), so it has no defaults of its own.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Base of every self-link and `Link` header, e.g. `http://127.0.0.1:8080` or `https://host/api/v3`.
    pub public_url: String,
    /// Primary rate limits on (the default).
    pub rate_limits: bool,
    /// Multiplies every limit (benchmarks raise it so the limiter runs but never exhausts).
    pub rate_limit_factor: f64,
    /// Secondary limits and the failed-login lockout (off with `rate_limits` too).
    pub secondary: crate::secondary::SecondarySettings,
    /// Request bodies above this are refused with 413.
    pub max_body_bytes: usize,
    /// The key secrets are encrypted under at rest.
    pub secret_key: crate::secrets::AtRestKey,
    /// A request body not received within this long is refused with 408.
    pub body_read_timeout: std::time::Duration,
    /// The load balancers whose `X-Forwarded-For` names the caller.
    pub trusted_proxies: crate::forwarded::TrustedProxies,
    /// Guards the control plane under `/_admin/`.
    pub admin_token: String,
    /// Mark-all-notifications-read changes at most this many threads in the request; more is
    /// answered 202 and finished in the background.
    pub notifications_sync_limit: i64,
    /// `X-Poll-Interval` of the notification operations, in seconds.
    pub notifications_poll_interval: u64,
    /// `X-Poll-Interval` of the event feeds, in seconds; doubled while the server is busy
    /// (see `contract::poll_interval`).
    pub poll_interval: u64,
    /// Organization webhook delivery: allow-list, retries, auto-disable, concurrency.
    pub webhooks: WebhookSettings,
    /// Source imports: data directory and pacing.
    pub imports: ImportSettings,
    /// Git hosting: the bounds of pushes and git runs.
    pub git: GitSettings,
    /// Record requests for API usage insights (on by default; off for benchmarks' baseline).
    pub insights: bool,
    /// Seconds before a recorded request shows in the insights operations (0: once flushed).
    pub insights_delay_seconds: i64,
    /// Redis shared by every node for the rate limits and the lockout (`redis://…`); `None`:
    /// each node limits in its own memory (one node needs nothing else).
    pub redis_url: Option<String>,
    /// Namespace of this deployment's keys in Redis.
    pub redis_prefix: String,
    /// How long an idle node keeps deferred limit work (`shared_limits::Redis::defer`).
    pub redis_flush: std::time::Duration,
    /// The in-process caches together hold about this many bytes at most (`cache`).
    pub cache_bytes: usize,
}

#[cfg(test)]
impl ApiConfig {
    /// A configuration for the crate's unit tests. Not the server's defaults: those are
    /// declared once, with the settings (`platformd::config::Config`).
    pub fn for_tests() -> ApiConfig {
        ApiConfig {
            public_url: "http://127.0.0.1:8080".into(),
            rate_limits: true,
            rate_limit_factor: 1.0,
            secondary: crate::secondary::SecondarySettings::default(),
            max_body_bytes: 1 << 20,
            secret_key: crate::secrets::AtRestKey::default(),
            body_read_timeout: std::time::Duration::from_secs(10),
            trusted_proxies: Default::default(),
            admin_token: "unit-test-admin-token".into(),
            notifications_sync_limit: 1_000,
            notifications_poll_interval: 60,
            poll_interval: 60,
            webhooks: WebhookSettings { allowed_hosts: String::new(), retries: 0, disable_after: 0, concurrency: 8 },
            imports: ImportSettings::default(),
            git: GitSettings { max_push_bytes: 1 << 30, timeout: std::time::Duration::from_secs(60) },
            insights: true,
            insights_delay_seconds: 0,
            redis_url: None,
            redis_prefix: "platform-unit".into(),
            redis_flush: crate::shared_limits::FLUSH_AFTER,
            cache_bytes: 64 << 20,
        }
    }
}

/// Webhook settings (`PLATFORM_WEBHOOK_*`).
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Comma-separated hosts and CIDRs delivery may reach although internal; `loopback` allows
    /// 127.0.0.0/8 and ::1.
    pub allowed_hosts: String,
    /// Automatic retries of a failed delivery (0: none, as the hosted platform).
    pub retries: u32,
    /// Consecutive failed deliveries after which a hook is deactivated (0: never).
    pub disable_after: u32,
    /// Deliveries in flight at once.
    pub concurrency: usize,
}

/// Import settings (`PLATFORM_DATA_DIR`, `PLATFORM_IMPORT_STEP_SECONDS`).
#[derive(Clone, Debug, Default)]
pub struct ImportSettings {
    /// Where the mirrors of imported repositories are kept (`<dir>/imports/`); `None`: the
    /// system's temporary directory.
    pub data_dir: Option<PathBuf>,
    /// Platform-clock seconds each status lasts at least (0: as fast as the work goes). Makes
    /// progress observable with a manual clock.
    pub step_seconds: i64,
    /// Imports from paths on this machine (`PLATFORM_IMPORT_LOCAL_SOURCES`): off, API callers
    /// may only import from remote URLs.
    pub local_sources: bool,
}

impl ImportSettings {
    /// The data directory (`PLATFORM_DATA_DIR`): repositories' git data and import mirrors.
    pub fn root(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("platformd-data"))
    }

    pub fn mirrors(&self) -> PathBuf {
        self.root().join("imports")
    }
}

/// Git hosting settings (`PLATFORM_GIT_*`; the binary flattens this group into its command line).
#[derive(Clone, Debug, clap::Args)]
pub struct GitSettings {
    /// a push's request body (the pack, decompressed) larger than this is refused: `413` when announced by `Content-Length`, cut off when streamed; also git's `receive.maxInputSize`
    #[arg(id = "git_max_push_bytes", long = "git-max-push-bytes", env = "PLATFORM_GIT_MAX_PUSH_BYTES", default_value = "2147483648", value_name = "BYTES", value_parser = setting(number::<u64>))]
    pub max_push_bytes: u64,
    /// a clone, fetch or push (one git HTTP request) and any other git run taking longer is cut off (the git process killed)
    #[arg(id = "git_timeout_seconds", long = "git-timeout-seconds", env = "PLATFORM_GIT_TIMEOUT_SECONDS", default_value = "600", value_name = "SECONDS", value_parser = setting(seconds))]
    pub timeout: std::time::Duration,
}

/// Caches of hot reads, exact under [`AppState::generation`].
pub struct Caches {
    /// Token hash → the authenticated token.
    pub tokens: GenCache<u128, Arc<TokenAuth>>,
    /// (owner, repo, principal key) → the lookup and the caller's role.
    pub repos: GenCache<(String, String, i64), (Lookup, Role)>,
    /// (path and query, version, caller) → a whole GET response, with the span of the platform
    /// clock in which it is exact (the contract keeps the answers of operations declared cached:
    /// `contract::declared`).
    pub responses: GenCache<(String, ApiVersion, i64), (i64, i64, Reply)>,
    /// Validators of cached GETs, for 304s answered before routing (`not_modified`).
    pub validated: GenCache<crate::not_modified::Key, Arc<crate::not_modified::Validated>>,
    /// Hashes of response-cache keys asked once: an answer is kept on its second request.
    pub asked: GenCache<u64, ()>,
    /// Dependency alerts rendered as JSON, per (alert, version, with its repository).
    pub alerts: GenCache<(i64, ApiVersion, bool), axum::body::Bytes>,
}

/// Shares of the cache bound (`cache_bytes`), in percent: answers first, then what they are
/// built from; [`FEATURE_CACHE_SHARE`] is the rest.
const SHARES: [usize; 6] = [40, 10, 20, 5, 10, 5];

/// The share of the cache bound (`cache_bytes`), in percent, of the caches features keep in
/// their own state ([`Features`]: the rulesets' compiled branch rules).
pub const FEATURE_CACHE_SHARE: usize = 10;

impl Caches {
    /// Caches holding about `bytes` together at most.
    pub fn new(bytes: usize) -> Caches {
        let [responses, validated, alerts, tokens, repos, asked] = SHARES.map(|p| bytes / 100 * p);
        Caches {
            tokens: GenCache::new(tokens, |_, _| std::mem::size_of::<TokenAuth>() + 256),
            repos: GenCache::new(repos, |k, _| k.0.len() + k.1.len() + std::mem::size_of::<(Lookup, Role)>() + 512),
            responses: GenCache::new(responses, |k, v| k.0.len() + v.2.approx_bytes()),
            validated: GenCache::new(validated, crate::not_modified::weigh),
            alerts: GenCache::new(alerts, |_, v| v.len()),
            asked: GenCache::new(asked, |_, _| 8),
        }
    }
}

impl Caches {
    pub fn clear(&self) {
        self.tokens.clear();
        self.repos.clear();
        self.responses.clear();
        self.validated.clear();
    }
}

/// State a feature keeps per server, of a type of its own that this layer does not name (the
/// feature reaches it typed: [`AppState::feature`]).
pub trait FeatureState: Any + Send + Sync {
    /// The state of a server configured so, made on the feature's first use.
    fn new(config: &ApiConfig) -> Self
    where
        Self: Sized;
    /// Empties what it caches (the control plane's reset).
    fn clear(&self);
}

/// Each feature's state, one value per type.
#[derive(Default)]
pub struct Features(RwLock<HashMap<TypeId, Arc<dyn FeatureState>>>);

impl Features {
    fn get<T: FeatureState>(&self, config: &ApiConfig) -> Arc<T> {
        let found = self.0.read().unwrap_or_else(|e| e.into_inner()).get(&TypeId::of::<T>()).cloned();
        let state = match found {
            Some(s) => s,
            None => {
                let mut all = self.0.write().unwrap_or_else(|e| e.into_inner());
                all.entry(TypeId::of::<T>()).or_insert_with(|| -> Arc<dyn FeatureState> { Arc::new(T::new(config)) }).clone()
            }
        };
        // Kept under its own type's id.
        (state as Arc<dyn Any + Send + Sync>).downcast().unwrap_or_else(|_| unreachable!("a feature's state is kept under its type"))
    }

    pub fn clear(&self) {
        self.0.read().unwrap_or_else(|e| e.into_inner()).values().for_each(|s| s.clear());
    }
}

pub struct AppState {
    pub store: Store,
    pub caches: Caches,
    pub clock: Arc<Clock>,
    pub config: ApiConfig,
    pub urls: Urls,
    pub limiter: Limiter,
    pub secondary: crate::secondary::Secondary,
    /// Failed control-plane logins per address: the API's lockout rule, always on (the limit
    /// switches are for tests and benchmarks of the API, not for guessing the admin token), on
    /// the wall clock (the platform clock may be manual).
    pub admin_logins: crate::secondary::Secondary,
    /// The engine the limits above share with other nodes, if configured.
    pub shared_limits: Option<Arc<crate::shared_limits::Redis>>,
    /// Injected faults (control plane `/_admin/faults`), in memory.
    pub faults: Faults,
    pub metrics: Metrics,
    /// Requests recorded for API usage insights, waiting for the next flush.
    pub insights: crate::usage_log::Recorder,
    /// Background jobs of requests (a large mark-all-read), run with the server's workers.
    pub jobs: crate::worker::Jobs,
    /// Where repositories' git data lives, opened on first use (its namespace is the
    /// database's: see `ops::git_hosting::storage`).
    pub git: tokio::sync::OnceCell<platform_git::Storage>,
    /// What features keep per server, each its own type ([`AppState::feature`]).
    pub features: Features,
}

pub type Shared = Arc<AppState>;

/// The write generations a request observed when it began. Caches hold values under the
/// generation they were read at and answer only a request at the same one, so no answer is
/// older than a write acknowledged — on any node — before the request began (`Store::observe`).
/// Caches of credentials and repository access are keyed by the access generation, which
/// content writes (`Store::write_content`) leave alone; every other cache by the write one.
#[derive(Clone, Copy, Debug)]
pub enum Generation {
    /// One writer (SQLite): the in-process generations, read at each use.
    Local,
    /// Many nodes (PostgreSQL): the shared values observed, and this node's own then.
    Shared { shared: Generations, local: Generations },
    /// The shared generations could not be read: no cache.
    Unknown,
}

impl AppState {
    /// The write generations as a request sees them when it begins (one coalesced round trip on
    /// PostgreSQL, nothing on SQLite); see [`Generation`].
    pub async fn observe(&self) -> Generation {
        if self.store.single_writer() {
            return Generation::Local;
        }
        let local = self.local_generations();
        match self.store.observe().await {
            Ok(shared) => Generation::Shared { shared, local },
            Err(e) => {
                tracing::warn!(error = %e.message, "write generation unreadable: answering without caches");
                Generation::Unknown
            }
        }
    }

    fn local_generations(&self) -> Generations {
        Generations { writes: self.store.generation(), access: self.store.access_generation() }
    }

    /// The generation caches are keyed by for a request that observed `g`, now; `None`: no
    /// cache may answer or be filled.
    pub fn generation(&self, g: Generation) -> Option<u64> {
        self.generations(g, |g| g.writes)
    }

    /// [`AppState::generation`] for the caches of credentials and repository access.
    pub fn access_generation(&self, g: Generation) -> Option<u64> {
        self.generations(g, |g| g.access)
    }

    fn generations(&self, g: Generation, which: fn(&Generations) -> u64) -> Option<u64> {
        match g {
            Generation::Local => Some(which(&self.local_generations())),
            // A write by this node since (this request's own, say) may not be in what other
            // requests cached under the observed value: no cache for the rest of the request.
            Generation::Shared { shared, local } => (which(&self.local_generations()) == which(&local)).then_some(which(&shared)),
            Generation::Unknown => None,
        }
    }

    /// The feature state of type `T` of this server, made on first use.
    pub fn feature<T: FeatureState>(&self) -> Arc<T> {
        self.features.get(&self.config)
    }

    pub fn new(store: Store, clock: Arc<Clock>, config: ApiConfig) -> Shared {
        // The URL was checked with the configuration (`shared_limits::check_url`).
        let redis = config.redis_url.as_deref().and_then(|url| {
            match crate::shared_limits::Redis::new(url, &config.redis_prefix, config.redis_flush) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(error = %e, "RATE LIMITS NOT SHARED: bad Redis URL");
                    None
                }
            }
        });
        Arc::new(AppState {
            urls: Urls::new(&config.public_url),
            limiter: Limiter::new(config.rate_limit_factor, redis.clone()),
            secondary: crate::secondary::Secondary::new(
                crate::secondary::SecondarySettings { enabled: config.rate_limits && config.secondary.enabled, ..config.secondary.clone() },
                config.rate_limit_factor,
                redis.clone().map(|r| (r, "login")),
            ),
            admin_logins: crate::secondary::Secondary::new(
                crate::secondary::SecondarySettings { enabled: true, ..config.secondary.clone() },
                1.0,
                redis.clone().map(|r| (r, "admin")),
            ),
            shared_limits: redis,
            faults: Faults::default(),
            metrics: Metrics::default(),
            insights: crate::usage_log::Recorder::new(config.insights, config.insights_delay_seconds, clock.clone()),
            jobs: crate::worker::Jobs::default(),
            git: tokio::sync::OnceCell::new(),
            features: Features::default(),
            caches: Caches::new(config.cache_bytes),
            store,
            clock,
            config,
        })
    }
}
