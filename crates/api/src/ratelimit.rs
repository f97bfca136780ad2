//! Primary rate limits: fixed one-hour windows per bucket (address, user, installation,
//! repository for workflow tokens, app), in memory and sharded so requests rarely contend.
use std::net::IpAddr;

use crate::sharded::Sharded;

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

#[derive(Clone, Copy, Debug)]
pub struct RateClass {
    pub bucket: Bucket,
    /// Requests per hour before the configured factor.
    pub limit: i64,
}

impl RateClass {
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

#[derive(Clone, Copy)]
struct Window {
    start: i64,
    used: i64,
}

pub struct Limiter {
    windows: Sharded<Bucket, Window>,
    factor: f64,
}

impl Limiter {
    pub fn new(factor: f64) -> Limiter {
        Limiter { windows: Sharded::default(), factor: if factor > 0.0 { factor } else { 1.0 } }
    }

    fn limit(&self, class: &RateClass) -> i64 {
        ((class.limit as f64) * self.factor).round().max(1.0) as i64
    }

    fn quota(limit: i64, w: Window) -> Quota {
        Quota { limit, used: w.used, remaining: (limit - w.used).max(0), reset: w.start + WINDOW }
    }

    /// Charges one request. `Err` (nothing charged) when the bucket is exhausted.
    pub fn charge(&self, class: &RateClass, now: i64) -> Result<Quota, Quota> {
        let limit = self.limit(class);
        let mut map = self.windows.shard(&class.bucket);
        let w = map.entry(class.bucket).or_insert(Window { start: now, used: 0 });
        if now >= w.start + WINDOW {
            *w = Window { start: now, used: 0 };
        }
        if w.used >= limit {
            return Err(Self::quota(limit, *w));
        }
        w.used += 1;
        Ok(Self::quota(limit, *w))
    }

    /// Gives back a charge (a 304, or an operation that is never charged).
    pub fn refund(&self, class: &RateClass, now: i64) -> Quota {
        let limit = self.limit(class);
        let mut map = self.windows.shard(&class.bucket);
        match map.get_mut(&class.bucket) {
            Some(w) if now < w.start + WINDOW => {
                w.used = (w.used - 1).max(0);
                Self::quota(limit, *w)
            }
            _ => Quota { limit, used: 0, remaining: limit, reset: now + WINDOW },
        }
    }

    /// The bucket's state without charging.
    pub fn peek(&self, class: &RateClass, now: i64) -> Quota {
        let limit = self.limit(class);
        let map = self.windows.shard(&class.bucket);
        match map.get(&class.bucket) {
            Some(w) if now < w.start + WINDOW => Self::quota(limit, *w),
            _ => Quota { limit, used: 0, remaining: limit, reset: now + WINDOW },
        }
    }

    pub fn clear(&self) {
        self.windows.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn window_exhausts_and_resets() {
        let l = Limiter::new(1.0);
        let c = RateClass { bucket: Bucket::User(1), limit: 2 };
        assert_eq!(l.charge(&c, 100).unwrap().remaining, 1);
        assert_eq!(l.charge(&c, 100).unwrap().remaining, 0);
        let q = l.charge(&c, 200).unwrap_err();
        assert_eq!((q.remaining, q.reset), (0, 3700));
        assert_eq!(l.refund(&c, 200).remaining, 1);
        assert_eq!(l.charge(&c, 3700).unwrap().used, 1);
    }
}
