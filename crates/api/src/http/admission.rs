//! One request's limit decisions together, in document 1's order: the failed-login lockout,
//! the secondary limits (a place among the requester's requests in flight, the method's
//! points), the primary limit, and what the operation itself counts toward (content creation,
//! token issuing). With Redis they are one script call (`shared_limits::ADMIT`), so a request
//! costs one round trip however many limits it meets, and none when the node's lease of its
//! requester's limits covers it (`leases`); without Redis, or while it does not answer, the
//! node's in-memory engines decide in the same order.
use std::net::IpAddr;

use axum::http::Method;

use crate::operation::Operation;
use crate::ratelimit::{Limiter, Quota, RateClass};
use crate::secondary::{Secondary, Slot};
use crate::shared_limits::{self, Lock, Mode};

/// What a request asks.
pub struct Ask<'a> {
    pub ip: IpAddr,
    /// `None`: no lockout check (no credentials); `Some(false)`: is the address locked out?;
    /// `Some(true)`: that, and a failed login counted.
    pub lock: Option<bool>,
    pub class: RateClass,
    /// The secondary limits, for a request of this method (`None`: not asked).
    pub enter: Option<&'a Method>,
    /// The primary limit: charged or read (`None`: rate limits off).
    pub primary: Option<Mode>,
    /// The operation, when known before routing, and the caller's application.
    pub op: Option<(&'static Operation, Option<i64>)>,
}

/// Admitted (with its place among the requests in flight), or the limit that refused.
pub enum Verdict<'a> {
    Admitted(Slot<'a>),
    LockedOut,
    /// `retry-after` seconds.
    Secondary(i64),
    Primary,
    /// `retry-after` seconds.
    Operation(i64),
}

/// The verdict and the primary window's state (when a primary part was asked).
pub struct Decision<'a> {
    pub verdict: Verdict<'a>,
    pub quota: Option<Quota>,
}

pub async fn decide<'a>(limiter: &Limiter, secondary: &'a Secondary, ask: &Ask<'_>, now: i64) -> Decision<'a> {
    let lock = ask.lock.and_then(|fail| secondary.lockout().map(|(attempts, len)| (fail, attempts, len)));
    let enter = ask.enter.filter(|_| secondary.enabled());
    let operation = ask.op.map(|(op, app)| secondary.operation_windows(&ask.class.bucket, op, app)).unwrap_or_default();
    let asks_anything = lock.is_some() || enter.is_some() || ask.primary.is_some() || !operation.is_empty();
    if let (Some(redis), true) = (limiter.shared(), asks_anything) {
        let (ip, bucket) = (ask.ip.to_string(), ask.class.bucket.key());
        let (pkey, plimit, plen) = limiter.window(&ask.class);
        let scope = secondary.shared().map_or("login", |s| s.1);
        let shared = shared_limits::Ask {
            lock: lock.map(|(fail, attempts, len)| (scope, ip.as_str(), if fail { Lock::Fail { attempts, len } } else { Lock::Check })),
            concurrency: enter.map(|_| (bucket.as_str(), secondary.concurrent())),
            secondary: enter.map(|m| vec![secondary.points(&ask.class.bucket, m)]).unwrap_or_default(),
            primary: ask.primary.map(|mode| (pkey.as_str(), plimit, plen, mode)),
            operation,
        };
        if let Ok(a) = redis.admit(&shared, now).await {
            let quota = ask.primary.map(|_| limiter.quota_of(&ask.class, a.start, a.used));
            let verdict = match a.verdict {
                shared_limits::Verdict::Admitted if enter.is_some() => Verdict::Admitted(match a.lease {
                    Some(lease) => Slot::leased(redis.clone(), lease),
                    None => Slot::shared(redis.clone(), ask.class.bucket),
                }),
                shared_limits::Verdict::Admitted => Verdict::Admitted(Slot::none()),
                shared_limits::Verdict::LockedOut(_) => Verdict::LockedOut,
                shared_limits::Verdict::Secondary(s) => Verdict::Secondary(s),
                shared_limits::Verdict::Primary => Verdict::Primary,
                shared_limits::Verdict::Operation(s) => Verdict::Operation(s),
            };
            return Decision { verdict, quota };
        }
    }
    local(limiter, secondary, ask, now)
}

/// The same decisions by this node's own engines.
fn local<'a>(limiter: &Limiter, secondary: &'a Secondary, ask: &Ask<'_>, now: i64) -> Decision<'a> {
    let peek = |verdict| Decision { verdict, quota: ask.primary.map(|_| limiter.peek_local(&ask.class, now)) };
    if let Some(fail) = ask.lock {
        if secondary.locked_out_local(ask.ip, now).is_some() {
            return peek(Verdict::LockedOut);
        }
        if fail {
            secondary.failed_login_local(ask.ip, now);
        }
    }
    let slot = match ask.enter {
        Some(method) => match secondary.enter_local(ask.class.bucket, method, now) {
            Ok(slot) => slot,
            Err(retry) => return peek(Verdict::Secondary(retry)),
        },
        None => Slot::none(),
    };
    let quota = match ask.primary {
        Some(Mode::Charge) => match limiter.charge_local(&ask.class, now) {
            Ok(q) => Some(q),
            Err(q) => return Decision { verdict: Verdict::Primary, quota: Some(q) },
        },
        Some(Mode::Peek) => Some(limiter.peek_local(&ask.class, now)),
        None => None,
    };
    if let Some((op, app)) = ask.op {
        if let Err(retry) = secondary.operation_local(ask.class.bucket, op, app, now) {
            return Decision { verdict: Verdict::Operation(retry), quota };
        }
    }
    Decision { verdict: Verdict::Admitted(slot), quota }
}
