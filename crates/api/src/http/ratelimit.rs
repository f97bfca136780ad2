//! Primary rate limits: fixed one-hour windows per resource (`core`, `graphql`) and bucket
//! (address, user, installation, repository for workflow tokens, app), in memory and sharded so requests rarely contend — or,
//! with Redis configured, shared by every node (`shared_limits`), the memory engine deciding only
//! while Redis is unreachable.
use std::net::IpAddr;
use std::sync::Arc;

use crate::sharded::Sharded;
use crate::shared_limits::{Ask, Mode, Redis};

const WINDOW: i64 = 3600;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bucket {
    Ip(IpAddr),
    User(i64),
    Installation(i64),
    /// Workflow tokens: per repository.
    Repo(i64),
    App(i64),
    /// A user-less token of another kind (defensive; every user token has a user).
    Token(i64),
}

impl Bucket {
    /// The bucket's part of a key in the shared engine.
    pub fn key(&self) -> String {
        match self {
            Bucket::Ip(ip) => format!("ip:{ip}"),
            Bucket::User(id) => format!("user:{id}"),
            Bucket::Installation(id) => format!("inst:{id}"),
            Bucket::Repo(id) => format!("repo:{id}"),
            Bucket::App(id) => format!("app:{id}"),
            Bucket::Token(id) => format!("token:{id}"),
        }
    }
}

/// What a request counts against: GraphQL has its own window, apart from the REST (`core`) one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Resource {
    #[default]
    Core,
    Graphql,
}

/// The GraphQL endpoint's path below the API base (`{base}/graphql`; the enterprise layout's
/// `/api/graphql` beside a `/api/v3` base is located there too, see `contract::path`).
pub const GRAPHQL_PATH: &str = "/graphql";

impl Resource {
    /// The resource of a request, by its path below the API base.
    pub fn of_path(path: &str) -> Resource {
        if path == GRAPHQL_PATH {
            Resource::Graphql
        } else {
            Resource::Core
        }
    }

    /// Its name in `x-ratelimit-resource` and `GET /rate_limit`.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Core => "core",
            Resource::Graphql => "graphql",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct RateClass {
    pub bucket: Bucket,
    /// Requests per hour before the configured factor.
    pub limit: i64,
    pub resource: Resource,
}

impl RateClass {
    /// The same caller's class in another resource (same hourly limit, its own window).
    pub fn in_resource(self, resource: Resource) -> RateClass {
        RateClass { resource, ..self }
    }

    /// The window's key in the shared engine (`core` keeps the keys it always had).
    pub fn key(&self) -> String {
        match self.resource {
            Resource::Core => self.bucket.key(),
            Resource::Graphql => format!("graphql:{}", self.bucket.key()),
        }
    }

    /// The primary-limit message (clients classify on its `API rate limit exceeded for` prefix).
    pub fn exceeded_message(&self) -> String {
        match self.bucket {
            Bucket::Ip(ip) => format!(
                "API rate limit exceeded for {ip}. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
            ),
            Bucket::User(id) => format!("API rate limit exceeded for user ID {id}."),
            Bucket::Installation(id) => format!("API rate limit exceeded for installation ID {id}."),
            Bucket::Repo(id) => format!("API rate limit exceeded for repository ID {id}."),
            Bucket::App(id) => format!("API rate limit exceeded for app ID {id}."),
            Bucket::Token(id) => format!("API rate limit exceeded for token ID {id}."),
        }
    }
}

/// State of a bucket as the `x-ratelimit-*` headers report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub limit: i64,
    pub used: i64,
    pub remaining: i64,
    pub reset: i64,
}

impl Quota {
    /// After its charge was given back.
    pub fn refunded(self) -> Quota {
        let used = (self.used - 1).max(0);
        Quota { used, remaining: (self.limit - used).max(0), ..self }
    }
}

#[derive(Clone, Copy)]
struct Window {
    start: i64,
    used: i64,
}

pub struct Limiter {
    windows: Sharded<(Resource, Bucket), Window>,
    factor: f64,
    shared: Option<Arc<Redis>>,
}

impl Limiter {
    pub fn new(factor: f64, shared: Option<Arc<Redis>>) -> Limiter {
        Limiter { windows: Sharded::default(), factor: if factor > 0.0 { factor } else { 1.0 }, shared }
    }

    /// The engine every node shares, if any.
    pub fn shared(&self) -> Option<&Arc<Redis>> {
        self.shared.as_ref()
    }

    /// Gives back a charge (a 304): with Redis, carried by this node's next call.
    pub fn refund(&self, class: &RateClass, now: i64) {
        match &self.shared {
            Some(r) => r.refund(&class.key(), WINDOW, now),
            None => drop(self.refund_local(class, now)),
        }
    }

    /// The bucket's state without charging.
    pub async fn peek(&self, class: &RateClass, now: i64) -> Quota {
        let limit = self.limit(class);
        if let Some(r) = &self.shared {
            let ask = Ask { primary: Some((&class.key(), limit, WINDOW, Mode::Peek)), ..Ask::default() };
            if let Ok(a) = r.admit(&ask, now).await {
                return self.quota_of(class, a.start, a.used);
            }
        }
        self.peek_local(class, now)
    }

    /// The primary window's part of a shared call: (key, limit, length).
    pub fn window(&self, class: &RateClass) -> (String, i64, i64) {
        (class.key(), self.limit(class), WINDOW)
    }

    /// The quota of a window that started at `start` with `used` requests.
    pub fn quota_of(&self, class: &RateClass, start: i64, used: i64) -> Quota {
        Self::quota(self.limit(class), Window { start, used })
    }

    /// Forgets every window (the shared ones too).
    pub async fn clear(&self) {
        self.windows.clear();
        if let Some(r) = &self.shared {
            let _ = r.clear().await;
        }
    }

    fn limit(&self, class: &RateClass) -> i64 {
        ((class.limit as f64) * self.factor).round().max(1.0) as i64
    }

    fn quota(limit: i64, w: Window) -> Quota {
        Quota { limit, used: w.used, remaining: (limit - w.used).max(0), reset: w.start + WINDOW }
    }

    pub fn charge_local(&self, class: &RateClass, now: i64) -> Result<Quota, Quota> {
        let limit = self.limit(class);
        let key = (class.resource, class.bucket);
        let mut map = self.windows.shard(&key);
        let w = map.entry(key).or_insert(Window { start: now, used: 0 });
        if now >= w.start + WINDOW {
            *w = Window { start: now, used: 0 };
        }
        if w.used >= limit {
            return Err(Self::quota(limit, *w));
        }
        w.used += 1;
        Ok(Self::quota(limit, *w))
    }

    pub fn refund_local(&self, class: &RateClass, now: i64) -> Quota {
        let limit = self.limit(class);
        let key = (class.resource, class.bucket);
        let mut map = self.windows.shard(&key);
        match map.get_mut(&key) {
            Some(w) if now < w.start + WINDOW => {
                w.used = (w.used - 1).max(0);
                Self::quota(limit, *w)
            }
            _ => Quota { limit, used: 0, remaining: limit, reset: now + WINDOW },
        }
    }

    pub fn peek_local(&self, class: &RateClass, now: i64) -> Quota {
        let limit = self.limit(class);
        let key = (class.resource, class.bucket);
        let map = self.windows.shard(&key);
        match map.get(&key) {
            Some(w) if now < w.start + WINDOW => Self::quota(limit, *w),
            _ => Quota { limit, used: 0, remaining: limit, reset: now + WINDOW },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn window_exhausts_and_resets() {
        let l = Limiter::new(1.0, None);
        let c = RateClass { bucket: Bucket::User(1), limit: 2, resource: Resource::Core };
        assert_eq!(l.charge_local(&c, 100).unwrap().remaining, 1);
        assert_eq!(l.charge_local(&c, 100).unwrap().remaining, 0);
        let q = l.charge_local(&c, 200).unwrap_err();
        assert_eq!((q.remaining, q.reset), (0, 3700));
        // GraphQL counts in a window of its own.
        assert_eq!(l.charge_local(&c.in_resource(Resource::Graphql), 200).unwrap().remaining, 1);
        assert_eq!(l.refund_local(&c, 200).remaining, 1);
        assert_eq!(l.charge_local(&c, 3700).unwrap().used, 1);
    }
}
