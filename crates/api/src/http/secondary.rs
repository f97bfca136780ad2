//! Secondary rate limits of document 1 and the failed-login lockout, in memory per node — or,
//! with Redis configured, shared by every node (`shared_limits`), the memory engine deciding only
//! while Redis is unreachable.
//!
//! Per requester (the primary limit's bucket): at most `concurrent` requests in flight, at most
//! `points_per_minute` points a minute (GET/HEAD/OPTIONS cost 1, other methods 5), at most
//! `content_per_minute` and `content_per_hour` content-creating requests (operations that answer
//! 201); per application, at most `oauth_tokens_per_hour` token-issuing requests. Windows are
//! fixed, starting with their first request, on the platform clock. Refusals are 403 with the
//! secondary-limit message and a whole-seconds `retry-after`.
//!
//! Failed logins: `login_attempts` bad credentials from one address within
//! `login_lockout_seconds` lock that address out of authenticated requests for that long.
use std::net::IpAddr;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use clap::ArgAction;

use crate::error::{ApiError, RATE_LIMIT_DOCS};
use crate::leases::Lease;
use crate::operation::{Limits, Operation};
use crate::ratelimit::Bucket;
use crate::settings::{number, on_off, setting};
use crate::sharded::Sharded;
use crate::shared_limits::{Ask, Redis, Take, Verdict};

/// The bounds; every count is multiplied by the limiter's factor (but the login attempts). Also
/// the settings of the same names (the binary flattens this group into its command line).
#[derive(Clone, Debug, clap::Args)]
pub struct SecondarySettings {
    /// `off` disables the secondary limits and the failed-login lockout (`PLATFORM_RATE_LIMITS=off` disables them too)
    #[arg(id = "secondary_limits", long = "secondary-limits", env = "PLATFORM_SECONDARY_LIMITS", default_value = "on", value_name = "on|off", action = ArgAction::Set, value_parser = setting(on_off))]
    pub enabled: bool,
    /// requests in flight at once per requester (user, installation, app, address); the next one gets the secondary-limit 403 with `retry-after: 1`
    #[arg(id = "concurrent_requests", long = "concurrent-requests", env = "PLATFORM_CONCURRENT_REQUESTS", default_value_t = SecondarySettings::default().concurrent, value_name = "N", value_parser = setting(number::<i64>))]
    pub concurrent: i64,
    /// secondary-limit points per requester and minute, over all REST operations: GET/HEAD/OPTIONS cost 1, POST/PATCH/PUT/DELETE 5
    #[arg(long, env = "PLATFORM_POINTS_PER_MINUTE", default_value_t = SecondarySettings::default().points_per_minute, value_name = "N", value_parser = setting(number::<i64>))]
    pub points_per_minute: i64,
    /// content-creating requests (operations that answer 201) per requester and minute
    #[arg(long, env = "PLATFORM_CONTENT_PER_MINUTE", default_value_t = SecondarySettings::default().content_per_minute, value_name = "N", value_parser = setting(number::<i64>))]
    pub content_per_minute: i64,
    /// content-creating requests per requester and hour
    #[arg(long, env = "PLATFORM_CONTENT_PER_HOUR", default_value_t = SecondarySettings::default().content_per_hour, value_name = "N", value_parser = setting(number::<i64>))]
    pub content_per_hour: i64,
    /// token-issuing requests (reset a token) per OAuth application and hour
    #[arg(long, env = "PLATFORM_OAUTH_TOKENS_PER_HOUR", default_value_t = SecondarySettings::default().oauth_tokens_per_hour, value_name = "N", value_parser = setting(number::<i64>))]
    pub oauth_tokens_per_hour: i64,
    /// failed authentications from one address within the lockout period that lock it out of authenticated requests (403 `Maximum number of login attempts exceeded…`); `0` never locks; the application token check never counts. Wrong admin tokens lock an address out of `/_admin` the same way, counted apart and always (even with the limits switched off), on the wall clock
    #[arg(long, env = "PLATFORM_LOGIN_ATTEMPTS", default_value_t = SecondarySettings::default().login_attempts, value_name = "N", value_parser = setting(number::<i64>))]
    pub login_attempts: i64,
    /// that period, and how long the lockout lasts
    #[arg(long, env = "PLATFORM_LOGIN_LOCKOUT_SECONDS", default_value_t = SecondarySettings::default().login_lockout_seconds, value_name = "SECONDS", value_parser = setting(number::<i64>))]
    pub login_lockout_seconds: i64,
}

impl Default for SecondarySettings {
    /// Document 1's bounds.
    fn default() -> Self {
        SecondarySettings {
            enabled: true,
            concurrent: 100,
            points_per_minute: 900,
            content_per_minute: 80,
            content_per_hour: 500,
            oauth_tokens_per_hour: 2_000,
            login_attempts: 10,
            login_lockout_seconds: 300,
        }
    }
}

/// The documented secondary-limit message, with the request id clients quote to support.
pub fn message(request_id: &str) -> String {
    format!(
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to Service Support for help, please include the request ID {request_id}."
    )
}

/// The refusal of a secondary limit: 403 (or `status`), the message, `retry-after` seconds.
pub fn refusal(status: StatusCode, request_id: &str, retry_after: i64) -> ApiError {
    ApiError::new(status, message(request_id)).with_docs(RATE_LIMIT_DOCS).with_header("retry-after", retry_after.to_string())
}

pub const LOCKOUT_MESSAGE: &str = "Maximum number of login attempts exceeded. Please try again later.";

#[derive(Clone, Copy, Default)]
struct Window {
    start: i64,
    used: i64,
}

impl Window {
    /// Adds `n` within a window of `len` seconds unless that would pass `limit`; `Err` is the
    /// seconds until the window ends.
    fn take(&mut self, now: i64, len: i64, n: i64, limit: i64) -> Result<(), i64> {
        if now >= self.start + len {
            *self = Window { start: now, used: 0 };
        }
        if self.used + n > limit {
            return Err(self.start + len - now);
        }
        self.used += n;
        Ok(())
    }
}

#[derive(Default)]
struct Requester {
    in_flight: i64,
    points: Window,
    content_minute: Window,
    content_hour: Window,
}

#[derive(Default)]
struct Logins {
    failures: Window,
    locked_until: i64,
}

pub struct Secondary {
    settings: SecondarySettings,
    factor: f64,
    requesters: Sharded<Bucket, Requester>,
    apps: Sharded<i64, Window>,
    logins: Sharded<IpAddr, Logins>,
    /// The shared engine and this limiter's key scope in it.
    shared: Option<(Arc<Redis>, &'static str)>,
}

/// A request in flight; leaving (drop, also on panic or cancellation) frees its place.
pub struct Slot<'a>(Place<'a>);

/// Where a request's place is held.
enum Place<'a> {
    /// None (limits off, or none asked).
    None,
    /// In this node's memory.
    Local(&'a Secondary, Bucket),
    /// In the shared engine, freed with the node's next call (`Redis::release`).
    Shared(Arc<Redis>, Bucket),
    /// Among this node's lease's places (`leases`), given back to it (`Redis::leave`).
    Leased(Arc<Redis>, Arc<Lease>),
}

impl Slot<'_> {
    /// No place held (limits off, or none asked).
    pub fn none() -> Slot<'static> {
        Slot(Place::None)
    }

    /// A place taken in the shared engine.
    pub fn shared(redis: Arc<Redis>, bucket: Bucket) -> Slot<'static> {
        Slot(Place::Shared(redis, bucket))
    }

    /// A place of this node's lease.
    pub fn leased(redis: Arc<Redis>, lease: Arc<Lease>) -> Slot<'static> {
        Slot(Place::Leased(redis, lease))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.0, Place::None) {
            Place::None => {}
            Place::Local(s, bucket) => {
                if let Some(r) = s.requesters.shard(&bucket).get_mut(&bucket) {
                    r.in_flight -= 1;
                }
            }
            Place::Shared(redis, bucket) => redis.release(&bucket.key()),
            Place::Leased(redis, lease) => redis.leave(&lease),
        }
    }
}

impl Secondary {
    /// `shared`: the engine every node uses and the scope of this limiter's keys in it.
    pub fn new(settings: SecondarySettings, factor: f64, shared: Option<(Arc<Redis>, &'static str)>) -> Secondary {
        Secondary {
            settings,
            factor: if factor > 0.0 { factor } else { 1.0 },
            requesters: Sharded::default(),
            apps: Sharded::default(),
            logins: Sharded::default(),
            shared,
        }
    }

    fn bound(&self, n: i64) -> i64 {
        ((n as f64) * self.factor).round().max(1.0) as i64
    }

    /// The shared engine and this limiter's scope in it.
    pub fn shared(&self) -> Option<&(Arc<Redis>, &'static str)> {
        self.shared.as_ref()
    }

    /// Secondary limits on.
    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// Failed logins lock addresses out: (attempts, lockout seconds).
    pub fn lockout(&self) -> Option<(i64, i64)> {
        (self.settings.enabled && self.settings.login_attempts > 0)
            .then(|| (self.settings.login_attempts, self.settings.login_lockout_seconds.max(1)))
    }

    /// The concurrency bound.
    pub fn concurrent(&self) -> i64 {
        self.bound(self.settings.concurrent)
    }

    /// The points window a request of `method` is charged in.
    pub fn points<'k>(&self, bucket: &Bucket, method: &Method) -> Take<'k> {
        let cost = if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) { 1 } else { 5 };
        Take { kind: "pts", id: bucket.key(), len: 60, n: cost, limit: self.bound(self.settings.points_per_minute) }
    }

    /// The windows an operation itself counts toward (content creation, token issuing).
    pub fn operation_windows<'k>(&self, bucket: &Bucket, op: &Operation, app_id: Option<i64>) -> Vec<Take<'k>> {
        let mut takes = Vec::new();
        if !self.settings.enabled {
            return takes;
        }
        if let (Limits::IssuesTokens, Some(app)) = (op.traits.limits, app_id) {
            takes.push(Take { kind: "tok", id: app.to_string(), len: 3600, n: 1, limit: self.bound(self.settings.oauth_tokens_per_hour) });
        }
        if op.creates() {
            let (cm, ch) = (self.bound(self.settings.content_per_minute), self.bound(self.settings.content_per_hour));
            takes.push(Take { kind: "cmin", id: bucket.key(), len: 60, n: 1, limit: cm });
            takes.push(Take { kind: "chour", id: bucket.key(), len: 3600, n: 1, limit: ch });
        }
        takes
    }

    /// Admits a request of `bucket` in memory: a place among its concurrent requests and the
    /// method's points. `Err` carries `retry-after` seconds.
    pub fn enter_local(&self, bucket: Bucket, method: &Method, now: i64) -> Result<Slot<'_>, i64> {
        if !self.settings.enabled {
            return Ok(Slot::none());
        }
        let points = self.points(&bucket, method);
        let mut map = self.requesters.shard(&bucket);
        let r = map.entry(bucket).or_default();
        if r.in_flight >= self.concurrent() {
            return Err(1);
        }
        r.points.take(now, points.len, points.n, points.limit)?;
        r.in_flight += 1;
        Ok(Slot(Place::Local(self, bucket)))
    }

    /// Charges what an operation itself counts toward: content creation (operations that
    /// answer 201) and token issuing per application. `Err` carries `retry-after` seconds.
    pub async fn operation(&self, bucket: Bucket, op: &Operation, app_id: Option<i64>, now: i64) -> Result<(), i64> {
        let takes = self.operation_windows(&bucket, op, app_id);
        if takes.is_empty() {
            return Ok(());
        }
        if let Some((redis, _)) = &self.shared {
            if let Ok(a) = redis.admit(&Ask { operation: takes, ..Ask::default() }, now).await {
                return match a.verdict {
                    Verdict::Operation(retry) => Err(retry),
                    _ => Ok(()),
                };
            }
        }
        self.operation_local(bucket, op, app_id, now)
    }

    /// [`Secondary::operation`] in memory.
    pub fn operation_local(&self, bucket: Bucket, op: &Operation, app_id: Option<i64>, now: i64) -> Result<(), i64> {
        if !self.settings.enabled {
            return Ok(());
        }
        if let (Limits::IssuesTokens, Some(app)) = (op.traits.limits, app_id) {
            let limit = self.bound(self.settings.oauth_tokens_per_hour);
            self.apps.shard(&app).entry(app).or_default().take(now, 3600, 1, limit)?;
        }
        if op.creates() {
            let (per_minute, per_hour) = (self.bound(self.settings.content_per_minute), self.bound(self.settings.content_per_hour));
            let mut map = self.requesters.shard(&bucket);
            let r = map.entry(bucket).or_default();
            // Check both windows before charging either, so a refusal charges nothing.
            let (mut minute, mut hour) = (r.content_minute, r.content_hour);
            minute.take(now, 60, 1, per_minute)?;
            hour.take(now, 3600, 1, per_hour)?;
            (r.content_minute, r.content_hour) = (minute, hour);
        }
        Ok(())
    }

    /// Is the address locked out after failed logins? `Some` holds the seconds left.
    pub async fn locked_out(&self, ip: IpAddr, now: i64) -> Option<i64> {
        self.lockout()?;
        if let Some((redis, scope)) = &self.shared {
            if let Ok(left) = redis.locked_out(scope, &ip.to_string(), now).await {
                return (left > 0).then_some(left);
            }
        }
        self.locked_out_local(ip, now)
    }

    /// [`Secondary::locked_out`] in memory.
    pub fn locked_out_local(&self, ip: IpAddr, now: i64) -> Option<i64> {
        self.lockout()?;
        let map = self.logins.shard(&ip);
        map.get(&ip).filter(|l| l.locked_until > now).map(|l| l.locked_until - now)
    }

    /// Counts a failed authentication from `ip`.
    pub async fn failed_login(&self, ip: IpAddr, now: i64) {
        let Some((limit, len)) = self.lockout() else { return };
        if let Some((redis, scope)) = &self.shared {
            if redis.failed_login(scope, &ip.to_string(), limit, len, now).await.is_ok() {
                return;
            }
        }
        self.failed_login_local(ip, now);
    }

    /// [`Secondary::failed_login`] in memory.
    pub fn failed_login_local(&self, ip: IpAddr, now: i64) {
        let Some((limit, len)) = self.lockout() else { return };
        let mut map = self.logins.shard(&ip);
        let l = map.entry(ip).or_default();
        if l.failures.take(now, len, 1, limit - 1).is_err() {
            // The limit-th failure: locked for the lockout period from now. No login is tried
            // meanwhile, so the count starts afresh with the next failure after it.
            l.locked_until = now + len;
            l.failures = Window::default();
        }
    }

    /// Forgets every window and lockout (the shared ones of this deployment too).
    pub async fn clear(&self) {
        self.requesters.clear();
        self.apps.clear();
        self.logins.clear();
        if let Some((redis, _)) = &self.shared {
            let _ = redis.clear().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Secondary {
        Secondary::new(
            SecondarySettings {
                concurrent: 2,
                points_per_minute: 10,
                content_per_minute: 2,
                content_per_hour: 3,
                login_attempts: 3,
                login_lockout_seconds: 60,
                ..Default::default()
            },
            1.0,
            None,
        )
    }

    #[test]
    fn concurrency_frees_places_on_drop() {
        let s = small();
        let b = Bucket::User(1);
        let a = s.enter_local(b, &Method::GET, 0).unwrap();
        let _b = s.enter_local(b, &Method::GET, 0).unwrap();
        assert_eq!(s.enter_local(b, &Method::GET, 0).err(), Some(1));
        drop(a);
        assert!(s.enter_local(b, &Method::GET, 0).is_ok());
        assert!(s.enter_local(Bucket::User(2), &Method::GET, 0).is_ok(), "requesters are separate");
    }

    #[test]
    fn points_by_method_per_minute() {
        let s = small();
        let b = Bucket::User(1);
        drop(s.enter_local(b, &Method::POST, 100).unwrap());
        drop(s.enter_local(b, &Method::POST, 100).unwrap());
        assert_eq!(s.enter_local(b, &Method::GET, 130).err(), Some(30), "10 points used; retry when the minute ends");
        assert!(s.enter_local(b, &Method::GET, 160).is_ok());
    }

    #[test]
    fn lockout_after_failed_logins() {
        let s = small();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        s.failed_login_local(ip, 0);
        s.failed_login_local(ip, 1);
        assert_eq!(s.locked_out_local(ip, 1), None);
        s.failed_login_local(ip, 2);
        assert_eq!(s.locked_out_local(ip, 2), Some(60));
        assert_eq!(s.locked_out_local(ip, 62), None);
    }

    #[test]
    fn off_admits_everything() {
        let s = Secondary::new(SecondarySettings { enabled: false, concurrent: 1, ..Default::default() }, 1.0, None);
        let _a = s.enter_local(Bucket::User(1), &Method::GET, 0).unwrap();
        assert!(s.enter_local(Bucket::User(1), &Method::GET, 0).is_ok());
    }
}
