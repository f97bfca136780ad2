//! The settings, each declared once: its flag, `PLATFORM_*` environment variable, default and
//! help text are the attributes of one field of [`Config`], or of a group it flattens: the groups
//! the API needs are declared by the api crate (`platform_api::state`) and are, as parsed, the
//! parts of the server's and the test harness's [`ApiConfig`] ([`Config::api_config`]). From that
//! declaration come `platformd serve --help`, the keys of the TOML file (`cli::parse`) and the
//! README's settings table (checked by the `readme_settings` test). Secrets are redacted in
//! `Debug`.
use std::fmt;

use clap::{Args, Command, FromArgMatches, ValueEnum};
use platform_api::forwarded::TrustedProxies;
use platform_api::secrets::AtRestKey;
pub use platform_api::settings::Url;
use platform_api::settings::{choice, number, setting};
use platform_api::state::{
    GitSettings, ImportSettings, InsightsSettings, LimitSettings, NotificationSettings, RedisSettings, WebhookSettings,
};
use platform_api::ApiConfig;

/// A setting without a fixed default says what happens unset at the end of its help, in the form
/// clap gives fixed defaults (the README table takes it from there). Its file key is the field's
/// name, its flag that name with `-`, its variable that name in capitals after `PLATFORM_` (a
/// test holds all three to it).
#[derive(Clone, Debug, Args)]
#[command(next_help_heading = "Settings")]
pub struct Config {
    /// address:port; port `0` picks a free port (the chosen address is printed as `listening on http://ADDR`)
    #[arg(long, env = "PLATFORM_LISTEN", default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: String,
    /// SQLite file path (`sqlite://PATH` also works); `postgres://…` switches to PostgreSQL (several nodes may share one)
    #[arg(long, env = "PLATFORM_DATABASE_URL", default_value = "platform.db", value_name = "URL", hide_env_values = true, value_parser = setting(|v| Ok(Url(v.into()))))]
    pub database_url: Url,
    /// base of every self-link and `Link` header; its path (e.g. `/api/v3`) is also served [default: `http://<listen address>` (`https://` when serving TLS)]
    #[arg(long, env = "PLATFORM_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// serve HTTPS with this certificate chain (PEM, leaf first), its key in `PLATFORM_TLS_KEY` [default: unset: plain HTTP]
    #[arg(long, env = "PLATFORM_TLS_CERT", value_name = "FILE")]
    pub tls_cert: Option<String>,
    /// the private key of `PLATFORM_TLS_CERT` (PEM: PKCS#8, PKCS#1 or SEC1) [default: unset]
    #[arg(long, env = "PLATFORM_TLS_KEY", value_name = "FILE")]
    pub tls_key: Option<String>,
    /// serve HTTPS with a certificate generated at start for `127.0.0.1`, `::1`, `localhost` (and the public URL's host), written (PEM) to this file for clients to trust (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`); its key never leaves the process, so each start writes a new one [default: unset]
    #[arg(long, env = "PLATFORM_TLS_SELF_SIGNED", value_name = "FILE")]
    pub tls_self_signed: Option<String>,
    /// guards the control plane [default: generated and printed]
    #[arg(long, env = "PLATFORM_ADMIN_TOKEN", value_name = "TOKEN", hide_env_values = true, value_parser = setting(|v| Ok(Secret(v.into()))))]
    pub admin_token: Option<Secret>,
    /// the key secrets are encrypted under at rest (32 bytes: 64 hex digits or base64, e.g. `openssl rand -hex 32`), kept outside the database; see [Security](#security) [default: unset: a key in the database]
    #[arg(long, env = "PLATFORM_SECRET_KEY", value_name = "KEY", hide_env_values = true, value_parser = setting(AtRestKey::parse))]
    pub secret_key: Option<AtRestKey>,
    /// a file holding `PLATFORM_SECRET_KEY` (which wins when both are set) [default: unset]
    #[arg(long, env = "PLATFORM_SECRET_KEY_FILE", value_name = "FILE", value_parser = setting(key_file))]
    pub secret_key_file: Option<AtRestKey>,
    /// `manual`: time moves only through `POST /_admin/clock` (tests)
    #[arg(long, env = "PLATFORM_CLOCK", default_value = "system", value_name = "system|manual", value_parser = setting(choice::<ClockKind>))]
    pub clock: ClockKind,
    #[command(flatten)]
    pub limits: LimitSettings,
    /// a connection that has not sent a whole request head this long after opening (or after the head's first byte) is closed
    #[arg(long, env = "PLATFORM_HEADER_READ_TIMEOUT_SECONDS", default_value = "20", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub header_read_timeout_seconds: u64,
    /// a request body not received within this answers `408` with the JSON error body
    #[arg(long, env = "PLATFORM_BODY_READ_TIMEOUT_SECONDS", default_value = "60", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub body_read_timeout_seconds: u64,
    /// a kept-alive connection without a new request this long is closed
    #[arg(long, env = "PLATFORM_IDLE_TIMEOUT_SECONDS", default_value = "75", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub idle_timeout_seconds: u64,
    /// open connections at most; at the cap a new connection closes the one that has waited longest for a request (so a flood of silent sockets cannot lock out `/healthz`). At start the open-file limit is raised to the system's hard limit
    #[arg(long, env = "PLATFORM_MAX_CONNECTIONS", default_value = "4096", value_name = "N", value_parser = setting(number::<usize>))]
    pub max_connections: usize,
    /// your load balancers' addresses or CIDR ranges (comma-separated): a request from one of them is the caller's whose address is the right-most `X-Forwarded-For` entry none of them wrote [default: unset: the connection's address is the caller's]
    #[arg(long, env = "PLATFORM_TRUSTED_PROXIES", value_name = "ADDRESSES", value_parser = setting(TrustedProxies::parse))]
    pub trusted_proxies: Option<TrustedProxies>,
    /// `on`: a connection from `PLATFORM_TRUSTED_PROXIES` that opens with a PROXY protocol header (v1 or v2, as a layer-4 balancer such as HAProxy in `mode tcp` with `send-proxy-v2` sends it) is the client's the header names, `X-Forwarded-For` unread; an invalid header closes it. Headers from other addresses are never read
    #[arg(long, env = "PLATFORM_PROXY_PROTOCOL", default_value = "off", value_name = "on|off", action = clap::ArgAction::Set, value_parser = setting(platform_api::settings::on_off))]
    pub proxy_protocol: bool,
    /// `full`: every acknowledged write survives a power cut (group commit keeps it fast); `normal` trades that for speed
    #[arg(long, env = "PLATFORM_SQLITE_SYNCHRONOUS", default_value = "full", value_name = "full|normal", value_parser = setting(choice::<SqliteSynchronous>))]
    pub sqlite_synchronous: SqliteSynchronous,
    #[command(flatten)]
    pub redis: RedisSettings,
    /// bytes the in-process caches (answers, validators, rendered alerts, tokens, repository access, rulesets) hold together at most, approximately; older entries make room
    #[arg(long, env = "PLATFORM_CACHE_BYTES", default_value = "67108864", value_name = "BYTES", value_parser = setting(number::<usize>))]
    pub cache_bytes: usize,
    /// SQLite read connections, each with its own thread; PostgreSQL: connections for writes, each with its own database thread, and at most as many more for reads, which run as coroutines on a thread per two cores and pipeline their statements on two of them unless one stalls (requests beyond them wait as tasks, not threads: a PostgreSQL node keeps a fixed thread count however many clients it has; its memory is in [Benchmarks](#benchmarks))
    #[arg(long, env = "PLATFORM_DB_POOL_SIZE", default_value = "8", value_name = "N", value_parser = setting(number::<usize>))]
    pub db_pool_size: usize,
    /// after SIGTERM/SIGINT, how long requests in flight may finish before the process exits
    #[arg(long, env = "PLATFORM_SHUTDOWN_GRACE_SECONDS", default_value = "10", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub shutdown_grace_seconds: u64,
    /// `X-Poll-Interval` of the event feeds, in seconds; doubled while more than 512 requests are in flight
    #[arg(long, env = "PLATFORM_POLL_INTERVAL", default_value = "60", value_name = "SECONDS", value_parser = setting(number::<u64>))]
    pub poll_interval: u64,
    /// tracing filter, e.g. `platformd=debug`
    #[arg(long, env = "PLATFORM_LOG", default_value = "info", value_name = "FILTER")]
    pub log: String,
    /// `json` for one JSON object per line
    #[arg(long, env = "PLATFORM_LOG_FORMAT", default_value = "text", value_name = "text|json", value_parser = setting(choice::<LogFormat>))]
    pub log_format: LogFormat,
    #[command(flatten)]
    pub notifications: NotificationSettings,
    #[command(flatten)]
    pub webhooks: WebhookSettings,
    /// where every repository's git data lives (`git/<database namespace>/<repo id>.git`) and imports are mirrored (`imports/<repo id>-<random>.git`); with several PostgreSQL nodes, a directory they share [default: `<SQLite file>.data` (PostgreSQL: `<temp dir>/platformd-data`)]
    #[arg(long, env = "PLATFORM_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<String>,
    #[command(flatten)]
    pub git: GitSettings,
    #[command(flatten)]
    pub imports: ImportSettings,
    #[command(flatten)]
    pub insights: InsightsSettings,
}

/// `PLATFORM_CLOCK`: the platform clock's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClockKind {
    System,
    /// Time moves only through `POST /_admin/clock`.
    Manual,
}

/// `PLATFORM_LOG_FORMAT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    /// One JSON object per line.
    Json,
}

/// `PLATFORM_SQLITE_SYNCHRONOUS`: SQLite's `synchronous` pragma.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SqliteSynchronous {
    Full,
    Normal,
}

/// A value shown as `<redacted>` in `Debug` (and so in the logs).
#[derive(Clone, PartialEq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

fn key_file(path: &str) -> Result<AtRestKey, String> {
    AtRestKey::parse(&std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?)
}

impl Default for Config {
    /// Every setting at its declared default, whatever the environment holds.
    fn default() -> Self {
        let cmd = Config::command().mut_args(|a| a.env(None));
        Config::from_arg_matches(&cmd.get_matches_from(["platformd"])).expect("the declared defaults parse")
    }
}

impl Config {
    /// The settings alone, as a command (their flags, variables, defaults and help).
    pub fn command() -> Command {
        Config::augment_args(Command::new("platformd"))
    }

    /// The at-rest key: `PLATFORM_SECRET_KEY`, else the file's, else one kept in the database.
    pub fn at_rest_key(&self) -> AtRestKey {
        self.secret_key.or(self.secret_key_file).unwrap_or_default()
    }

    /// What the API is given: its groups of these settings, with the public URL and admin token
    /// decided at start.
    pub fn api_config(&self, public_url: String, admin_token: String) -> ApiConfig {
        ApiConfig {
            public_url,
            limits: self.limits.clone(),
            secret_key: self.at_rest_key(),
            body_read_timeout: std::time::Duration::from_secs(self.body_read_timeout_seconds),
            trusted_proxies: self.trusted_proxies.clone().unwrap_or_default(),
            admin_token,
            notifications: self.notifications.clone(),
            poll_interval: self.poll_interval,
            webhooks: self.webhooks.clone(),
            imports: ImportSettings { data_dir: Some(self.data_dir()), ..self.imports.clone() },
            git: self.git.clone(),
            insights: self.insights.clone(),
            redis: self.redis.clone(),
            cache_bytes: self.cache_bytes,
        }
    }

    /// The listener's timeouts and cap (before the cap is fitted to the open-file limit); plain
    /// HTTP (the server adds its TLS configuration).
    pub fn conn_settings(&self) -> platform_api::listener::ConnSettings {
        platform_api::listener::ConnSettings {
            header_read: std::time::Duration::from_secs(self.header_read_timeout_seconds),
            idle: std::time::Duration::from_secs(self.idle_timeout_seconds),
            max_connections: self.max_connections,
            proxy_protocol: self.proxy_protocol.then(|| self.trusted_proxies.clone().unwrap_or_default()),
            tls: None,
        }
    }

    /// Whether `serve` speaks HTTPS.
    pub fn tls(&self) -> bool {
        self.tls_cert.is_some() || self.tls_self_signed.is_some()
    }

    /// The public URL: configured, else the scheme served and `addr`.
    pub fn public_url_for(&self, addr: impl fmt::Display) -> String {
        let scheme = if self.tls() { "https" } else { "http" };
        self.public_url.clone().unwrap_or_else(|| format!("{scheme}://{addr}"))
    }

    /// `PLATFORM_DATA_DIR`, else next to the SQLite file, else (PostgreSQL) the temporary directory.
    pub fn data_dir(&self) -> std::path::PathBuf {
        if let Some(d) = &self.data_dir {
            return d.into();
        }
        let url = self.database_url.0.trim();
        let file = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
        if url.starts_with("postgres") || file.is_empty() || file.starts_with(':') {
            std::env::temp_dir().join("platformd-data")
        } else {
            format!("{}.data", file.split('?').next().unwrap_or(file)).into()
        }
    }

    /// Rules between and within values that parsing alone does not check.
    pub fn validate(&self) -> Result<(), String> {
        // Its "on" believed the client-written first entry: say what replaces it rather than
        // silently limiting every caller as the balancer.
        if std::env::var_os("PLATFORM_TRUST_FORWARDED").is_some() {
            return Err(
                "PLATFORM_TRUST_FORWARDED was replaced by PLATFORM_TRUSTED_PROXIES: set it to your load balancers' addresses".into()
            );
        }
        if self.proxy_protocol && self.trusted_proxies.is_none() {
            return Err("proxy_protocol on needs trusted_proxies: the balancers whose connections carry the header".into());
        }
        if self.notifications.sync_limit < 1 {
            return Err("notifications_sync_limit must be at least 1".into());
        }
        if self.poll_interval == 0 {
            return Err("poll_interval must be at least 1".into());
        }
        let l = &self.limits.secondary;
        let bounds = [l.concurrent, l.points_per_minute, l.content_per_minute, l.content_per_hour, l.oauth_tokens_per_hour];
        if bounds.iter().any(|b| *b < 1) || l.login_attempts < 0 || l.login_lockout_seconds < 1 {
            return Err("secondary limits and the login lockout must be positive (login_attempts 0 disables the lockout)".into());
        }
        if self.limits.rate_limit_factor.is_nan() || self.limits.rate_limit_factor <= 0.0 {
            return Err("rate_limit_factor must be positive".into());
        }
        if let Some(h) = &self.webhooks.allowed_hosts {
            platform_api::outbound::AllowList::parse(h)?;
        }
        if self.header_read_timeout_seconds == 0
            || self.body_read_timeout_seconds == 0
            || self.idle_timeout_seconds == 0
            || self.max_connections == 0
        {
            return Err("connection timeouts and max_connections must be positive".into());
        }
        if self.git.max_push_bytes == 0 || self.git.timeout.is_zero() {
            return Err("git_max_push_bytes and git_timeout_seconds must be positive".into());
        }
        if self.imports.step_seconds < 0 {
            return Err("import_step_seconds must not be negative".into());
        }
        if self.redis.url.is_some() {
            platform_api::shared_limits::Redis::new(&self.redis)?;
        }
        if self.redis.prefix.is_empty() || self.redis.prefix.contains(['*', '?', '[', ' ']) {
            return Err("redis_prefix must be non-empty, without spaces or glob characters".into());
        }
        if self.insights.delay_seconds < 0 {
            return Err("insights_delay_seconds must not be negative".into());
        }
        if self.webhooks.concurrency == 0 {
            return Err("webhook_concurrency must be positive".into());
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err("tls_cert and tls_key go together: set both (or tls_self_signed instead)".into());
        }
        if self.tls_self_signed.is_some() && self.tls_cert.is_some() {
            return Err("tls_self_signed and tls_cert exclude each other: set one".into());
        }
        if let Some(u) = &self.public_url {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!("public_url must be an http(s) URL, got {u:?}"));
            }
        }
        Ok(())
    }
}
