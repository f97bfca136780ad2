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
use crate::settings::{number, on_off, seconds, setting};
use crate::shapes::Urls;
pub use crate::shared_limits::RedisSettings;
use clap::ArgAction;

/// What the API is configured with: the groups of settings it needs as the binary parses them
/// (each a `clap::Args` group the binary flattens into its command line, `platformd::config`),
/// and the values decided at start; so it has no defaults of its own.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Base of every self-link and `Link` header, e.g. `http://127.0.0.1:8080` or `https://host/api/v3`.
    pub public_url: String,
    /// The primary and secondary limits and the body bound.
    pub limits: LimitSettings,
    /// The key secrets are encrypted under at rest.
    pub secret_key: crate::secrets::AtRestKey,
    /// A request body not received within this long is refused with 408.
    pub body_read_timeout: std::time::Duration,
    /// The load balancers whose `X-Forwarded-For` names the caller.
    pub trusted_proxies: crate::forwarded::TrustedProxies,
    /// Guards the control plane under `/_admin/`.
    pub admin_token: String,
    /// Mark-all-read's bound and the notifications' poll interval.
    pub notifications: NotificationSettings,
    /// `X-Poll-Interval` of the event feeds, in seconds; doubled while the server is busy
    /// (see `contract::poll_interval`).
    pub poll_interval: u64,
    /// Organization webhook delivery: allow-list, retries, auto-disable, concurrency.
    pub webhooks: WebhookSettings,
    /// Source imports: data directory and pacing.
    pub imports: ImportSettings,
    /// Git hosting: the bounds of pushes and git runs.
    pub git: GitSettings,
    /// Recording requests for API usage insights.
    pub insights: InsightsSettings,
    /// The Redis the limits share between nodes, if any.
    pub redis: RedisSettings,
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
            limits: LimitSettings {
                rate_limits: true,
                rate_limit_factor: 1.0,
                secondary: crate::secondary::SecondarySettings::default(),
                max_body_bytes: 1 << 20,
            },
            secret_key: crate::secrets::AtRestKey::default(),
            body_read_timeout: std::time::Duration::from_secs(10),
            trusted_proxies: Default::default(),
            admin_token: "unit-test-admin-token".into(),
            notifications: NotificationSettings { sync_limit: 1_000, poll_interval: 60 },
            poll_interval: 60,
            webhooks: WebhookSettings { allowed_hosts: None, retries: 0, disable_after: 0, concurrency: 8 },
            imports: ImportSettings::default(),
            git: GitSettings { max_push_bytes: 1 << 30, timeout: std::time::Duration::from_secs(60) },
            insights: InsightsSettings { enabled: true, delay_seconds: 0 },
            redis: RedisSettings { url: None, prefix: "platform-unit".into(), flush: crate::shared_limits::FLUSH_AFTER, lease: 256 },
            cache_bytes: 64 << 20,
        }
    }
}

/// The primary limits, the secondary ones and the body bound (`PLATFORM_RATE_LIMITS`, …).
#[derive(Clone, Debug, clap::Args)]
pub struct LimitSettings {
    /// `off` disables primary limits (`GET /rate_limit` then answers 404)
    #[arg(long, env = "PLATFORM_RATE_LIMITS", default_value = "on", value_name = "on|off", action = ArgAction::Set, value_parser = setting(on_off))]
    pub rate_limits: bool,
    /// multiplies every limit, primary and secondary (benchmarks raise it so the limiter runs but never exhausts)
    #[arg(long, env = "PLATFORM_RATE_LIMIT_FACTOR", default_value = "1", value_name = "FACTOR", value_parser = setting(number::<f64>))]
    pub rate_limit_factor: f64,
    // Secondary limits and the failed-login lockout (off with `rate_limits` too).
    #[command(flatten)]
    pub secondary: crate::secondary::SecondarySettings,
    /// larger request bodies get `413 Payload Too Large`
    #[arg(long, env = "PLATFORM_MAX_BODY_BYTES", default_value = "1048576", value_name = "BYTES", value_parser = setting(number::<usize>))]
    pub max_body_bytes: usize,
}

/// Notification settings (`PLATFORM_NOTIFICATIONS_*`).
#[derive(Clone, Debug, clap::Args)]
pub struct NotificationSettings {
    /// mark-all-notifications-read changing more threads than this answers 202 and finishes in the background
    #[arg(id = "notifications_sync_limit", long = "notifications-sync-limit", env = "PLATFORM_NOTIFICATIONS_SYNC_LIMIT", default_value = "1000", value_name = "N", value_parser = setting(number::<i64>))]
    pub sync_limit: i64,
    /// `X-Poll-Interval` (seconds) of the notification operations
    #[arg(id = "notifications_poll_interval", long = "notifications-poll-interval", env = "PLATFORM_NOTIFICATIONS_POLL_INTERVAL", default_value = "60", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub poll_interval: u64,
}

/// Webhook settings (`PLATFORM_WEBHOOK_*`).
#[derive(Clone, Debug, clap::Args)]
pub struct WebhookSettings {
    /// comma-separated hosts and CIDRs webhook deliveries may reach although internal (e.g. `loopback, 10.1.0.0/16, hooks.internal`); `loopback` allows 127.0.0.0/8 and ::1 [default: empty (`loopback` with `serve --demo`)]
    #[arg(id = "webhook_allowed_hosts", long = "webhook-allowed-hosts", env = "PLATFORM_WEBHOOK_ALLOWED_HOSTS", value_name = "HOSTS")]
    pub allowed_hosts: Option<String>,
    /// automatic retries of a failed delivery (0: none, as the hosted platform: redelivery is on request); backoff below
    #[arg(id = "webhook_retries", long = "webhook-retries", env = "PLATFORM_WEBHOOK_RETRIES", default_value = "0", value_name = "N", value_parser = setting(number::<u32>))]
    pub retries: u32,
    /// consecutive failed deliveries after which a hook is deactivated (`active: false`); 0: never
    #[arg(id = "webhook_disable_after", long = "webhook-disable-after", env = "PLATFORM_WEBHOOK_DISABLE_AFTER", default_value = "0", value_name = "N", value_parser = setting(number::<u32>))]
    pub disable_after: u32,
    /// webhook deliveries in flight at once (per node)
    #[arg(id = "webhook_concurrency", long = "webhook-concurrency", env = "PLATFORM_WEBHOOK_CONCURRENCY", default_value = "256", value_name = "N", value_parser = setting(number::<usize>))]
    pub concurrency: usize,
}

impl WebhookSettings {
    /// The hosts and CIDRs deliveries (and imports) may reach although internal; unset: none.
    pub fn allowed_hosts(&self) -> &str {
        self.allowed_hosts.as_deref().unwrap_or_default()
    }
}

/// Import settings (`PLATFORM_IMPORT_*`; the data directory is the binary's `PLATFORM_DATA_DIR`,
/// decided at start).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ImportSettings {
    /// Where the mirrors of imported repositories are kept (`<dir>/imports/`); `None`: the
    /// system's temporary directory.
    #[arg(skip)]
    pub data_dir: Option<PathBuf>,
    /// `on` lets source imports read absolute paths (and `file://` URLs) on this machine, never the server's own data (repositories, mirrors); off, API callers import only from `http(s)://` URLs, whose hosts pass the webhook guard (`PLATFORM_WEBHOOK_ALLOWED_HOSTS`)
    #[arg(id = "import_local_sources", long = "import-local-sources", env = "PLATFORM_IMPORT_LOCAL_SOURCES", default_value = "off", value_name = "on|off", action = ArgAction::Set, value_parser = setting(on_off))]
    pub local_sources: bool,
    /// platform-clock seconds each import status lasts at least (with `PLATFORM_CLOCK=manual`, tests step imports through their statuses)
    #[arg(id = "import_step_seconds", long = "import-step-seconds", env = "PLATFORM_IMPORT_STEP_SECONDS", default_value = "0", value_name = "SECONDS", value_parser = setting(number::<i64>))]
    pub step_seconds: i64,
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

/// Insights settings (`PLATFORM_INSIGHTS*`).
#[derive(Clone, Debug, clap::Args)]
pub struct InsightsSettings {
    /// records every request for API usage insights; `off` records nothing (benchmarks' baseline)
    #[arg(id = "insights", long = "insights", env = "PLATFORM_INSIGHTS", default_value = "on", value_name = "on|off", action = ArgAction::Set, value_parser = setting(on_off))]
    pub enabled: bool,
    /// requests younger than this are not shown by the insights operations (the hosted platform: 4 to 6 hours); 0: shown once flushed
    #[arg(id = "insights_delay_seconds", long = "insights-delay-seconds", env = "PLATFORM_INSIGHTS_DELAY_SECONDS", default_value = "0", value_name = "SECONDS", value_parser = setting(number::<i64>))]
    pub delay_seconds: i64,
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
        let redis = config.redis.url.as_ref().and_then(|_| match crate::shared_limits::Redis::new(&config.redis) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::error!(error = %e, "RATE LIMITS NOT SHARED: bad Redis URL");
                None
            }
        });
        Arc::new(AppState {
            urls: Urls::new(&config.public_url),
            limiter: Limiter::new(config.limits.rate_limit_factor, redis.clone()),
            secondary: crate::secondary::Secondary::new(
                crate::secondary::SecondarySettings {
                    enabled: config.limits.rate_limits && config.limits.secondary.enabled,
                    ..config.limits.secondary.clone()
                },
                config.limits.rate_limit_factor,
                redis.clone().map(|r| (r, "login")),
            ),
            admin_logins: crate::secondary::Secondary::new(
                crate::secondary::SecondarySettings { enabled: true, ..config.limits.secondary.clone() },
                1.0,
                redis.clone().map(|r| (r, "admin")),
            ),
            shared_limits: redis,
            faults: Faults::default(),
            metrics: Metrics::default(),
            insights: crate::usage_log::Recorder::new(config.insights.enabled, config.insights.delay_seconds, clock.clone()),
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
