//! Leases: a busy node's block of one requester's limits, so that most of its requests are
//! decided in memory instead of waiting for a Redis call (`shared_limits`).
//!
//! A node asks for a lease when several identical requests (one requester, one address, one
//! method's cost) wait for the same call, and renews it while they keep coming. The script
//! grants it in the same call, all or nothing: `g` requests' worth of the primary window and of
//! every secondary window, and `p` places among the requester's requests in flight, charged in
//! Redis at once. The node then admits up to `g` such requests itself, at most `p` of them in
//! flight. What a lease does not use goes back to Redis when it ends ([`TTL`] after its last
//! grant), as refunds and freed places that ride with the node's next call.
//!
//! What stays exact, and the bound on what does not:
//! - **A limit is never exceeded:** every leased request was charged in Redis before it was
//!   admitted, so N nodes together still accept a limit at most once.
//! - **A request may be refused early:** units another node holds unused count as taken. A
//!   grant takes at most 1/[`SHARE`] of what is left of each limit and at most the configured
//!   block (`PLATFORM_REDIS_LEASE`); a node asks for more only when less than half of its last
//!   grant is left, and gives back what it does not use [`TTL`] after its last grant; below
//!   [`SHARE`] × [`MIN`] left, no lease is granted and every request is decided by Redis alone.
//!   Waiting [`TTL`] after a burst gives every unused unit back. A node's requests use its own
//!   lease before Redis decides them, also those that waited for the call that granted it: its
//!   own lease makes it refuse early only for a place freed while the refusing call was out.
//! - **`x-ratelimit-used`** of a leased request is its place in the node's block (exact on one
//!   node); across nodes it can run ahead of another node's by the blocks they hold, and
//!   `GET /rate_limit` counts held units as used until they are given back.
//! - **A lockout** set through another node reaches a node's leased requests within [`TTL`]
//!   (a lease is granted only to an address that is not locked out, and is keyed by it).
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A request's identity in the shared engine: its keys and numbers, without its time.
pub type Ident = (Vec<String>, Vec<i64>);

/// A lease ends this long after its last grant, giving back what it holds unused.
pub const TTL: Duration = Duration::from_millis(100);
/// A grant takes at most 1/SHARE of what is left of every limit it charges.
pub const SHARE: i64 = 4;
/// Smaller grants are not made: a limit near its end is decided request by request.
pub const MIN: i64 = 8;

/// Work that needs no answer, carried by the node's next call (`shared_limits`' `Redis::defer`
/// says why that stays exact): what leases give back, freed places and refunded charges.
pub enum Deferred {
    /// Concurrency places freed: the counter's key, how many.
    Release(String, i64),
    /// Charges given back (a 304's primary charge, a lease's unused units): (window key,
    /// length, platform time of the refund, units).
    Refund(String, i64, i64, i64),
}

/// What a lease charged per request, to give back what it does not use.
pub struct Charged {
    /// (window key, window length, units per request): the secondary windows and the primary.
    pub windows: Vec<(String, i64, i64)>,
    /// The concurrency counter its places are held in.
    pub counter: Option<String>,
}

struct State {
    /// Requests it may still admit.
    left: i64,
    /// Places held in Redis, and how many of its requests are in flight.
    places: i64,
    in_flight: i64,
    /// The primary window's count after the last grant (every held unit counted), its start,
    /// and when the first of the lease's windows ends (platform time).
    used: i64,
    start: i64,
    end: i64,
    /// Platform time of the last request it admitted (a refund's time).
    at: i64,
    expires: Instant,
    /// Size of the last grant; a renewal is asked for when half of it is used.
    size: i64,
    /// A renewal is on its way; ran out of places.
    asked: bool,
    short: bool,
    retired: bool,
}

pub struct Lease {
    charged: Arc<Charged>,
    state: Mutex<State>,
}

impl Lease {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a grant gave (all zero: nothing).
#[derive(Clone, Copy, Default)]
pub struct Grant {
    pub units: i64,
    pub places: i64,
    pub used: i64,
    pub start: i64,
    pub end: i64,
}

/// A request admitted by a lease: its primary count and window start, and the lease whose
/// place it holds (freed by [`Leases::leave`]).
pub struct Taken {
    pub used: i64,
    pub start: i64,
    pub place: Option<Arc<Lease>>,
}

/// More of a lease to ask for: requests, places, and what they charge.
pub struct Renewal {
    pub units: i64,
    pub places: i64,
    pub charged: Arc<Charged>,
}

/// This node's leases (see the module's doc).
pub struct Leases {
    /// Largest grant (0: leasing off).
    max: i64,
    map: Mutex<HashMap<Ident, Arc<Lease>>>,
    /// Requests admitted by a lease.
    admitted: AtomicU64,
}

impl Leases {
    pub fn new(max: i64) -> Leases {
        Leases { max: max.max(0), map: Mutex::default(), admitted: AtomicU64::new(0) }
    }

    /// Requests admitted by a lease so far.
    pub fn admitted(&self) -> u64 {
        self.admitted.load(Ordering::Relaxed)
    }

    pub fn enabled(&self) -> bool {
        self.max > 0
    }

    fn map(&self) -> MutexGuard<'_, HashMap<Ident, Arc<Lease>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits a request of `ident` from its lease, when one holds a unit (and a place, when it
    /// holds places) for the platform time `now`. The second part is a renewal to ask for,
    /// once per grant: half the block used, or the lease unusable.
    pub fn take(&self, ident: &Ident, now: i64) -> (Option<Taken>, Option<Renewal>) {
        let Some(lease) = self.map().get(ident).cloned() else { return (None, None) };
        let mut st = lease.state();
        let places = lease.charged.counter.is_some();
        let usable = !st.retired && st.left > 0 && now < st.end && Instant::now() < st.expires;
        let placed = !places || st.in_flight < st.places;
        let taken = (usable && placed).then(|| {
            st.left -= 1;
            st.in_flight += places as i64;
            st.at = st.at.max(now);
            self.admitted.fetch_add(1, Ordering::Relaxed);
            Taken { used: st.used - st.left, start: st.start, place: places.then(|| lease.clone()) }
        });
        st.short |= usable && !placed;
        let renew = (!st.retired && !st.asked && (taken.is_none() || st.left * 2 < st.size)).then(|| {
            st.asked = true;
            let places = if st.short { st.places.max(2) } else { 0 };
            Renewal { units: self.max.min(st.size * 2), places, charged: lease.charged.clone() }
        });
        (taken, renew)
    }

    /// What a call's group of `count` identical requests (waiting for Redis) asks for beside
    /// their decisions: a first lease, or nothing (a lease being renewed, a lone request).
    pub fn want(&self, ident: &Ident, count: usize) -> (i64, i64) {
        if self.max == 0 || count < 2 {
            return (0, 0);
        }
        match self.map().get(ident) {
            Some(_) => (0, 0),
            None => (self.max.min(8 * count as i64), 2 * count as i64),
        }
    }

    /// Records what Redis granted `ident`, charging `charged` per request (a lease ended
    /// meanwhile starts again). A lease granted nothing (too little left, Redis unreachable)
    /// asks no more: it ends with its time, and requests are decided by Redis alone.
    pub fn grant(&self, ident: &Ident, charged: &Arc<Charged>, g: Grant, now: i64) {
        if g.units == 0 {
            return;
        }
        let mut map = self.map();
        if let Some(lease) = map.get(ident) {
            let mut st = lease.state();
            // Units of windows that ended meanwhile are worth nothing.
            st.left = if g.end == st.end { st.left + g.units } else { g.units };
            (st.used, st.start, st.end, st.size) = (g.used, g.start, g.end, g.units);
            st.places += g.places;
            st.short &= g.places == 0;
            st.expires = Instant::now() + TTL;
            st.asked = false;
            return;
        }
        let state = State {
            left: g.units,
            places: g.places,
            in_flight: 0,
            used: g.used,
            start: g.start,
            end: g.end,
            at: now,
            expires: Instant::now() + TTL,
            size: g.units,
            asked: false,
            short: false,
            retired: false,
        };
        map.insert(ident.clone(), Arc::new(Lease { charged: charged.clone(), state: Mutex::new(state) }));
    }

    /// A leased request has left: its place returns to its lease, or to Redis once the lease
    /// has ended.
    pub fn leave(&self, lease: &Lease) -> Option<Deferred> {
        let mut st = lease.state();
        st.in_flight -= 1;
        let counter = lease.charged.counter.as_ref().filter(|_| st.retired)?;
        Some(Deferred::Release(counter.clone(), 1))
    }

    /// Ends every lease whose time is up ([`TTL`] after its last grant), handing back what it
    /// holds unused; also the time until the next one ends.
    pub fn retire_due(&self, out: &mut Vec<Deferred>) -> Option<Duration> {
        let now = Instant::now();
        let mut next: Option<Duration> = None;
        self.map().retain(|_, lease| {
            let mut st = lease.state();
            if st.expires > now {
                let wait = st.expires - now;
                next = Some(next.map_or(wait, |n| n.min(wait)));
                return true;
            }
            st.retired = true;
            if st.left > 0 {
                for (key, len, n) in &lease.charged.windows {
                    out.push(Deferred::Refund(key.clone(), *len, st.at, n * st.left));
                }
            }
            if let (Some(counter), true) = (&lease.charged.counter, st.places > st.in_flight) {
                out.push(Deferred::Release(counter.clone(), st.places - st.in_flight));
            }
            false
        });
        next
    }

    /// Forgets every lease without giving anything back (the shared state was cleared).
    pub fn clear(&self) {
        for lease in self.map().drain().map(|(_, l)| l) {
            lease.state().retired = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charged() -> Arc<Charged> {
        Arc::new(Charged { windows: vec![("pts".into(), 60, 5), ("p".into(), 3600, 1)], counter: Some("c".into()) })
    }

    fn ident() -> Ident {
        (vec!["p".into()], vec![1, 2, 3])
    }

    #[test]
    fn a_lease_admits_its_units_and_places_then_gives_back_the_rest() {
        let leases = Leases::new(256);
        let id = ident();
        assert_eq!(leases.want(&id, 1), (0, 0), "a lone request asks for no lease");
        assert_eq!(leases.want(&id, 4), (32, 8));
        leases.grant(&id, &charged(), Grant { units: 10, places: 2, used: 14, start: 100, end: 160 }, 100);
        let (a, _) = leases.take(&id, 101);
        let (b, _) = leases.take(&id, 101);
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!((a.used, b.used, a.start), (5, 6, 100), "counts follow the block's place in the window");
        // Both places are taken: the next request asks Redis, and the lease asks for more places.
        let (c, renew) = leases.take(&id, 101);
        assert!(c.is_none());
        let renew = renew.expect("a renewal");
        assert_eq!((renew.units, renew.places), (20, 2));
        assert!(leases.take(&id, 101).1.is_none(), "one renewal at a time");
        assert!(leases.leave(a.place.as_ref().unwrap()).is_none(), "the place returns to the lease");
        assert_eq!(leases.take(&id, 101).0.unwrap().used, 7);
        // The lease's windows have ended: it admits nothing more.
        assert!(leases.take(&id, 160).0.is_none());
        // Unused for its time, it hands back 7 units of each window and its free place.
        leases.map().get(&id).unwrap().state().expires = Instant::now();
        let mut out = Vec::new();
        leases.retire_due(&mut out);
        let got: Vec<String> = out
            .iter()
            .map(|d| match d {
                Deferred::Refund(k, len, at, n) => format!("refund {k} {len} {at} {n}"),
                Deferred::Release(k, n) => format!("release {k} {n}"),
            })
            .collect();
        assert_eq!(got, ["refund pts 60 101 35", "refund p 3600 101 7"], "both places are still in flight");
        // A request still in flight frees its place in Redis itself.
        assert!(matches!(leases.leave(b.place.as_ref().unwrap()), Some(Deferred::Release(k, 1)) if k == "c"));
        assert!(leases.take(&id, 101).0.is_none(), "ended");
    }

    #[test]
    fn a_renewal_in_new_windows_drops_the_old_units() {
        let leases = Leases::new(16);
        let id = ident();
        leases.grant(&id, &charged(), Grant { units: 8, places: 4, used: 8, start: 0, end: 60 }, 0);
        assert_eq!(leases.take(&id, 59).0.unwrap().used, 1);
        leases.grant(&id, &charged(), Grant { units: 16, places: 0, used: 16, start: 0, end: 120 }, 60);
        let t = leases.take(&id, 60).0.unwrap();
        assert_eq!(t.used, 1, "16 fresh units, the 7 of the ended window dropped");
        assert_eq!(leases.admitted(), 2);
    }
}
