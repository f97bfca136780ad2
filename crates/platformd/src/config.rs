//! Typed configuration: defaults, then a TOML file (`--config FILE` or `PLATFORM_CONFIG`), then
//! `PLATFORM_*` environment variables. Secrets are redacted in `Debug`.
use std::fmt;

use serde::Deserialize;

#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `PLATFORM_LISTEN`: address:port; port 0 picks a free port.
    pub listen: String,
    /// `PLATFORM_DATABASE_URL`: an SQLite file path (default) or `postgres://…`.
    pub database_url: String,
    /// `PLATFORM_PUBLIC_URL`: base of self-links and `Link` headers; default `http://<listen address>`.
    pub public_url: Option<String>,
    /// `PLATFORM_ADMIN_TOKEN`: guards `/_admin/`; generated and printed when absent.
    pub admin_token: Option<String>,
    /// `PLATFORM_SECRET_KEY` (or the contents of `PLATFORM_SECRET_KEY_FILE`): the key secrets
    /// are encrypted under at rest, kept outside the database; unset, a key in the database.
    pub secret_key: platform_api::secrets::AtRestKey,
    /// `PLATFORM_CLOCK`: `system` or `manual` (time moves only through the control plane).
    pub clock: String,
    /// `PLATFORM_RATE_LIMITS`: `on` (default) or `off`.
    pub rate_limits: bool,
    /// `PLATFORM_RATE_LIMIT_FACTOR`: multiplies every rate limit.
    pub rate_limit_factor: f64,
    /// `PLATFORM_SECONDARY_LIMITS`: `on` (default) or `off` (secondary limits and the
    /// failed-login lockout; `PLATFORM_RATE_LIMITS=off` switches them off too).
    pub secondary_limits: bool,
    /// `PLATFORM_CONCURRENT_REQUESTS`: requests in flight per requester.
    pub concurrent_requests: i64,
    /// `PLATFORM_POINTS_PER_MINUTE`: secondary-limit points per requester and minute.
    pub points_per_minute: i64,
    /// `PLATFORM_CONTENT_PER_MINUTE`, `PLATFORM_CONTENT_PER_HOUR`: content-creating requests.
    pub content_per_minute: i64,
    pub content_per_hour: i64,
    /// `PLATFORM_OAUTH_TOKENS_PER_HOUR`: token-issuing requests per application.
    pub oauth_tokens_per_hour: i64,
    /// `PLATFORM_LOGIN_ATTEMPTS`: failed logins from one address that lock it out (0: never).
    pub login_attempts: i64,
    /// `PLATFORM_LOGIN_LOCKOUT_SECONDS`: window of those failures, and length of the lockout.
    pub login_lockout_seconds: i64,
    /// `PLATFORM_MAX_BODY_BYTES`: larger request bodies get 413.
    pub max_body_bytes: usize,
    /// `PLATFORM_HEADER_READ_TIMEOUT_SECONDS`: a request head not complete within this closes the connection.
    pub header_read_timeout_seconds: u64,
    /// `PLATFORM_BODY_READ_TIMEOUT_SECONDS`: a request body not complete within this is a 408.
    pub body_read_timeout_seconds: u64,
    /// `PLATFORM_IDLE_TIMEOUT_SECONDS`: a kept-alive connection without a request this long is closed.
    pub idle_timeout_seconds: u64,
    /// `PLATFORM_MAX_CONNECTIONS`: open connections at most (the longest waiting is closed for a new one).
    pub max_connections: usize,
    /// `PLATFORM_TRUST_FORWARDED`: take the client address from `X-Forwarded-For`.
    pub trust_forwarded: bool,
    /// `PLATFORM_SQLITE_SYNCHRONOUS`: `full` (default, durable) or `normal`.
    pub sqlite_synchronous: String,
    /// `PLATFORM_DB_POOL_SIZE`
    pub db_pool_size: usize,
    /// `PLATFORM_SHUTDOWN_GRACE_SECONDS`: after SIGTERM/SIGINT, how long requests in flight may finish.
    pub shutdown_grace_seconds: u64,
    /// `PLATFORM_POLL_INTERVAL`: `X-Poll-Interval` seconds of the event feeds (doubled under load).
    pub poll_interval: u64,
    /// `PLATFORM_LOG_FORMAT`: `text` or `json`.
    pub log_format: String,
    /// `PLATFORM_LOG`: a tracing filter such as `info` or `platformd=debug`.
    pub log: String,
    /// `PLATFORM_NOTIFICATIONS_SYNC_LIMIT`: mark-all-read changing more threads answers 202.
    pub notifications_sync_limit: i64,
    /// `PLATFORM_NOTIFICATIONS_POLL_INTERVAL`: `X-Poll-Interval` seconds of notifications.
    pub notifications_poll_interval: u64,
    /// `PLATFORM_WEBHOOK_ALLOWED_HOSTS`: hosts and CIDRs (comma-separated; `loopback` for
    /// 127.0.0.0/8 and ::1) webhook deliveries may reach although internal.
    pub webhook_allowed_hosts: Option<String>,
    /// `PLATFORM_WEBHOOK_RETRIES`: automatic retries of a failed delivery (0: none).
    pub webhook_retries: u32,
    /// `PLATFORM_WEBHOOK_DISABLE_AFTER`: consecutive failed deliveries that deactivate a hook (0: never).
    pub webhook_disable_after: u32,
    /// `PLATFORM_WEBHOOK_CONCURRENCY`: deliveries in flight at once.
    pub webhook_concurrency: usize,
    /// `PLATFORM_DATA_DIR`: where imported repositories are mirrored; default next to the
    /// SQLite file (`<file>.data`), or the temporary directory with PostgreSQL.
    pub data_dir: Option<String>,
    /// `PLATFORM_IMPORT_STEP_SECONDS`: platform-clock seconds each import status lasts at least.
    pub import_step_seconds: i64,
    /// `PLATFORM_IMPORT_LOCAL_SOURCES`: `on` lets imports read paths on this machine (off: remote
    /// URLs only).
    pub import_local_sources: bool,
    /// `PLATFORM_INSIGHTS`: `on` (default) records requests for API usage insights; `off` does not.
    pub insights: bool,
    /// `PLATFORM_INSIGHTS_DELAY_SECONDS`: how long before a request shows in insights (default 0;
    /// the hosted platform takes 4 to 6 hours).
    pub insights_delay_seconds: i64,
    /// `PLATFORM_REDIS_URL`: Redis (`redis://host:port/db`) shared by every node for the rate
    /// limits, secondary limits and login lockout; unset: each node limits in its own memory.
    pub redis_url: Option<String>,
    /// `PLATFORM_REDIS_PREFIX`: namespace of this deployment's keys in that Redis.
    pub redis_prefix: String,
}

impl Default for Config {
    fn default() -> Self {
        let d = platform_api::secondary::SecondarySettings::default();
        Config {
            listen: "127.0.0.1:8080".into(),
            database_url: "platform.db".into(),
            public_url: None,
            admin_token: None,
            secret_key: Default::default(),
            clock: "system".into(),
            rate_limits: true,
            rate_limit_factor: 1.0,
            secondary_limits: d.enabled,
            concurrent_requests: d.concurrent,
            points_per_minute: d.points_per_minute,
            content_per_minute: d.content_per_minute,
            content_per_hour: d.content_per_hour,
            oauth_tokens_per_hour: d.oauth_tokens_per_hour,
            login_attempts: d.login_attempts,
            login_lockout_seconds: d.login_lockout_seconds,
            max_body_bytes: 1 << 20,
            header_read_timeout_seconds: 20,
            body_read_timeout_seconds: 60,
            idle_timeout_seconds: 75,
            max_connections: 4096,
            trust_forwarded: false,
            sqlite_synchronous: "full".into(),
            db_pool_size: 8,
            shutdown_grace_seconds: 10,
            poll_interval: 60,
            log_format: "text".into(),
            log: "info".into(),
            notifications_sync_limit: 1000,
            notifications_poll_interval: 60,
            webhook_allowed_hosts: None,
            webhook_retries: 0,
            webhook_disable_after: 0,
            webhook_concurrency: 256,
            data_dir: None,
            import_step_seconds: 0,
            import_local_sources: false,
            insights: true,
            insights_delay_seconds: 0,
            redis_url: None,
            redis_prefix: "platform".into(),
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("database_url", &redact_url(&self.database_url))
            .field("public_url", &self.public_url)
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<redacted>"))
            .field("clock", &self.clock)
            .field("rate_limits", &self.rate_limits)
            .field("rate_limit_factor", &self.rate_limit_factor)
            .field("secondary_limits", &self.secondary_limits)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("sqlite_synchronous", &self.sqlite_synchronous)
            .field("redis_url", &self.redis_url.as_deref().map(redact_url))
            .finish_non_exhaustive()
    }
}

/// Hides a password in a database URL.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{}:<redacted>{}", &url[..s + 3], user, &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

fn flag(name: &str, v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(format!("{name}: expected on/off, got {v:?}")),
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| format!("{name}: not a number: {v:?}"))
}

impl Config {
    /// Loads the file (if any) and applies the environment.
    pub fn load(file: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let file = file.map(String::from).or_else(|| env("PLATFORM_CONFIG"));
        let mut c = match file {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?
            }
            None => Config::default(),
        };
        let get = |k: &str| env(k).filter(|v| !v.is_empty());
        if let Some(v) = get("PLATFORM_LISTEN") {
            c.listen = v;
        }
        if let Some(v) = get("PLATFORM_DATABASE_URL") {
            c.database_url = v;
        }
        if let Some(v) = get("PLATFORM_PUBLIC_URL") {
            c.public_url = Some(v);
        }
        if let Some(v) = get("PLATFORM_ADMIN_TOKEN") {
            c.admin_token = Some(v);
        }
        if let Some(path) = get("PLATFORM_SECRET_KEY_FILE") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("PLATFORM_SECRET_KEY_FILE {path}: {e}"))?;
            c.secret_key = platform_api::secrets::AtRestKey::parse(&text).map_err(|e| format!("PLATFORM_SECRET_KEY_FILE: {e}"))?;
        }
        if let Some(v) = get("PLATFORM_SECRET_KEY") {
            c.secret_key = platform_api::secrets::AtRestKey::parse(&v).map_err(|e| format!("PLATFORM_SECRET_KEY: {e}"))?;
        }
        if let Some(v) = get("PLATFORM_CLOCK") {
            c.clock = v;
        }
        if let Some(v) = get("PLATFORM_RATE_LIMITS") {
            c.rate_limits = flag("PLATFORM_RATE_LIMITS", &v)?;
        }
        if let Some(v) = get("PLATFORM_RATE_LIMIT_FACTOR") {
            c.rate_limit_factor = number("PLATFORM_RATE_LIMIT_FACTOR", &v)?;
        }
        if let Some(v) = get("PLATFORM_SECONDARY_LIMITS") {
            c.secondary_limits = flag("PLATFORM_SECONDARY_LIMITS", &v)?;
        }
        if let Some(v) = get("PLATFORM_CONCURRENT_REQUESTS") {
            c.concurrent_requests = number("PLATFORM_CONCURRENT_REQUESTS", &v)?;
        }
        if let Some(v) = get("PLATFORM_POINTS_PER_MINUTE") {
            c.points_per_minute = number("PLATFORM_POINTS_PER_MINUTE", &v)?;
        }
        if let Some(v) = get("PLATFORM_CONTENT_PER_MINUTE") {
            c.content_per_minute = number("PLATFORM_CONTENT_PER_MINUTE", &v)?;
        }
        if let Some(v) = get("PLATFORM_CONTENT_PER_HOUR") {
            c.content_per_hour = number("PLATFORM_CONTENT_PER_HOUR", &v)?;
        }
        if let Some(v) = get("PLATFORM_OAUTH_TOKENS_PER_HOUR") {
            c.oauth_tokens_per_hour = number("PLATFORM_OAUTH_TOKENS_PER_HOUR", &v)?;
        }
        if let Some(v) = get("PLATFORM_LOGIN_ATTEMPTS") {
            c.login_attempts = number("PLATFORM_LOGIN_ATTEMPTS", &v)?;
        }
        if let Some(v) = get("PLATFORM_LOGIN_LOCKOUT_SECONDS") {
            c.login_lockout_seconds = number("PLATFORM_LOGIN_LOCKOUT_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_MAX_BODY_BYTES") {
            c.max_body_bytes = number("PLATFORM_MAX_BODY_BYTES", &v)?;
        }
        if let Some(v) = get("PLATFORM_HEADER_READ_TIMEOUT_SECONDS") {
            c.header_read_timeout_seconds = number("PLATFORM_HEADER_READ_TIMEOUT_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_BODY_READ_TIMEOUT_SECONDS") {
            c.body_read_timeout_seconds = number("PLATFORM_BODY_READ_TIMEOUT_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_IDLE_TIMEOUT_SECONDS") {
            c.idle_timeout_seconds = number("PLATFORM_IDLE_TIMEOUT_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_MAX_CONNECTIONS") {
            c.max_connections = number("PLATFORM_MAX_CONNECTIONS", &v)?;
        }
        if let Some(v) = get("PLATFORM_TRUST_FORWARDED") {
            c.trust_forwarded = flag("PLATFORM_TRUST_FORWARDED", &v)?;
        }
        if let Some(v) = get("PLATFORM_SQLITE_SYNCHRONOUS") {
            c.sqlite_synchronous = v;
        }
        if let Some(v) = get("PLATFORM_DB_POOL_SIZE") {
            c.db_pool_size = number("PLATFORM_DB_POOL_SIZE", &v)?;
        }
        if let Some(v) = get("PLATFORM_SHUTDOWN_GRACE_SECONDS") {
            c.shutdown_grace_seconds = number("PLATFORM_SHUTDOWN_GRACE_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_POLL_INTERVAL") {
            c.poll_interval = number("PLATFORM_POLL_INTERVAL", &v)?;
        }
        if let Some(v) = get("PLATFORM_LOG_FORMAT") {
            c.log_format = v;
        }
        if let Some(v) = get("PLATFORM_LOG") {
            c.log = v;
        }
        if let Some(v) = get("PLATFORM_NOTIFICATIONS_SYNC_LIMIT") {
            c.notifications_sync_limit = number("PLATFORM_NOTIFICATIONS_SYNC_LIMIT", &v)?;
        }
        if let Some(v) = get("PLATFORM_NOTIFICATIONS_POLL_INTERVAL") {
            c.notifications_poll_interval = number("PLATFORM_NOTIFICATIONS_POLL_INTERVAL", &v)?;
        }
        if let Some(v) = env("PLATFORM_WEBHOOK_ALLOWED_HOSTS") {
            c.webhook_allowed_hosts = Some(v);
        }
        if let Some(v) = get("PLATFORM_WEBHOOK_RETRIES") {
            c.webhook_retries = number("PLATFORM_WEBHOOK_RETRIES", &v)?;
        }
        if let Some(v) = get("PLATFORM_WEBHOOK_DISABLE_AFTER") {
            c.webhook_disable_after = number("PLATFORM_WEBHOOK_DISABLE_AFTER", &v)?;
        }
        if let Some(v) = get("PLATFORM_WEBHOOK_CONCURRENCY") {
            c.webhook_concurrency = number("PLATFORM_WEBHOOK_CONCURRENCY", &v)?;
        }
        if let Some(v) = get("PLATFORM_DATA_DIR") {
            c.data_dir = Some(v);
        }
        if let Some(v) = get("PLATFORM_IMPORT_STEP_SECONDS") {
            c.import_step_seconds = number("PLATFORM_IMPORT_STEP_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_IMPORT_LOCAL_SOURCES") {
            c.import_local_sources = flag("PLATFORM_IMPORT_LOCAL_SOURCES", &v)?;
        }
        if let Some(v) = get("PLATFORM_INSIGHTS") {
            c.insights = flag("PLATFORM_INSIGHTS", &v)?;
        }
        if let Some(v) = get("PLATFORM_INSIGHTS_DELAY_SECONDS") {
            c.insights_delay_seconds = number("PLATFORM_INSIGHTS_DELAY_SECONDS", &v)?;
        }
        if let Some(v) = get("PLATFORM_REDIS_URL") {
            c.redis_url = Some(v);
        }
        if let Some(v) = get("PLATFORM_REDIS_PREFIX") {
            c.redis_prefix = v;
        }
        c.validate()?;
        Ok(c)
    }

    fn validate(&self) -> Result<(), String> {
        if !matches!(self.clock.as_str(), "system" | "manual") {
            return Err(format!("clock: expected system or manual, got {:?}", self.clock));
        }
        if !matches!(self.sqlite_synchronous.as_str(), "full" | "normal") {
            return Err(format!("sqlite_synchronous: expected full or normal, got {:?}", self.sqlite_synchronous));
        }
        if !matches!(self.log_format.as_str(), "text" | "json") {
            return Err(format!("log_format: expected text or json, got {:?}", self.log_format));
        }
        if self.notifications_sync_limit < 1 {
            return Err("notifications_sync_limit must be at least 1".into());
        }
        if self.poll_interval == 0 {
            return Err("poll_interval must be at least 1".into());
        }
        let bounds =
            [self.concurrent_requests, self.points_per_minute, self.content_per_minute, self.content_per_hour, self.oauth_tokens_per_hour];
        if bounds.iter().any(|b| *b < 1) || self.login_attempts < 0 || self.login_lockout_seconds < 1 {
            return Err("secondary limits and the login lockout must be positive (login_attempts 0 disables the lockout)".into());
        }
        if self.rate_limit_factor.is_nan() || self.rate_limit_factor <= 0.0 {
            return Err("rate_limit_factor must be positive".into());
        }
        if let Some(h) = &self.webhook_allowed_hosts {
            platform_api::webhooks::AllowList::parse(h)?;
        }
        if self.header_read_timeout_seconds == 0
            || self.body_read_timeout_seconds == 0
            || self.idle_timeout_seconds == 0
            || self.max_connections == 0
        {
            return Err("connection timeouts and max_connections must be positive".into());
        }
        if self.import_step_seconds < 0 {
            return Err("import_step_seconds must not be negative".into());
        }
        if let Some(url) = &self.redis_url {
            platform_api::shared_limits::Redis::new(url, &self.redis_prefix)?;
        }
        if self.redis_prefix.is_empty() || self.redis_prefix.contains(['*', '?', '[', ' ']) {
            return Err("redis_prefix must be non-empty, without spaces or glob characters".into());
        }
        if self.insights_delay_seconds < 0 {
            return Err("insights_delay_seconds must not be negative".into());
        }
        if self.webhook_concurrency == 0 {
            return Err("webhook_concurrency must be positive".into());
        }
        if let Some(u) = &self.public_url {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!("public_url must be an http(s) URL, got {u:?}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn env_overrides_and_redaction() {
        let env = |k: &str| match k {
            "PLATFORM_LISTEN" => Some("127.0.0.1:0".into()),
            "PLATFORM_RATE_LIMITS" => Some("off".into()),
            "PLATFORM_ADMIN_TOKEN" => Some("s3cret".into()),
            "PLATFORM_DATABASE_URL" => Some("postgres://u:pw@h/db".into()),
            _ => None,
        };
        let c = Config::load(None, env).unwrap();
        assert_eq!(c.listen, "127.0.0.1:0");
        assert!(!c.rate_limits);
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("s3cret") && !dbg.contains("pw@"), "{dbg}");
        assert!(Config::load(None, |k| (k == "PLATFORM_CLOCK").then(|| "fast".into())).is_err());
    }

    #[test]
    fn secret_key_from_env_or_file() {
        use platform_api::secrets::AtRestKey;
        let hex_key = "07".repeat(32);
        let c = Config::load(None, |k| (k == "PLATFORM_SECRET_KEY").then(|| hex_key.clone())).unwrap();
        assert_eq!(c.secret_key, AtRestKey::External([7; 32]));
        assert!(!format!("{c:?}").contains(&hex_key));
        let file = std::env::temp_dir().join(format!("platformd-key-{}", std::process::id()));
        std::fs::write(&file, format!("{}\n", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [9u8; 32]))).unwrap();
        let path = file.to_str().unwrap().to_string();
        let c = Config::load(None, |k| (k == "PLATFORM_SECRET_KEY_FILE").then(|| path.clone())).unwrap();
        assert_eq!(c.secret_key, AtRestKey::External([9; 32]));
        std::fs::remove_file(&file).unwrap();
        assert!(Config::load(None, |k| (k == "PLATFORM_SECRET_KEY").then(|| "short".into())).is_err());
        assert!(Config::load(None, |k| (k == "PLATFORM_SECRET_KEY_FILE").then(|| "/nonexistent/key".into())).is_err());
        assert_eq!(Config::load(None, |_| None).unwrap().secret_key, AtRestKey::InDatabase);
    }
}
