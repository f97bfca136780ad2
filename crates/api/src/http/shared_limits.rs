//! Limits shared by every node (`PLATFORM_REDIS_URL`): the primary windows, the secondary limits
//! and the failed-login lockout live in Redis and change only inside one Lua script
//! ([`ADMIT`]), so N nodes together accept a limit once. A request's every decision is one
//! script call (`admission`): one round trip and one top-level command (`EVALSHA`; `EVAL` once
//! after a Redis restart) — or none, when the node's lease of a busy requester's limits covers
//! it (`leases`, granted by the same script). What needs no answer — a freed concurrency place,
//! a refunded charge — is deferred and carried by the node's next call ([`Redis::defer`] says
//! why that stays exact).
//!
//! Every window is a hash `{s: start, u: used}` under `<prefix>:<kind>:<bucket>`, with the same
//! fixed-window rule as the in-memory engine (`ratelimit`, `secondary`): a window starts with its
//! first request on the platform clock the node passes in, and ends `len` seconds later. Keys
//! expire (real time) a minute after their longest window, so idle buckets leave Redis by
//! themselves; concurrency counters expire a minute after their last request, which also bounds
//! what a node killed with requests in flight leaves behind.
//!
//! Redis unreachable or slower than [`TIMEOUT`]: the call answers `Err(Unavailable)` and the
//! caller decides with the node's own in-memory engine — the API keeps answering, each node
//! limiting on its own — counted in `platform_limits_fallbacks_total` and logged at error level
//! (at most every [`LOG_EVERY`]). Reconnection is tried at most once a second.
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use tokio::sync::{Mutex, Notify};

use crate::leases::{self, Charged, Deferred, Grant, Ident, Lease, Leases};
use crate::settings::{millis, number, setting, Url};

/// The Redis shared by every node for the rate limits, secondary limits and lockouts
/// (`PLATFORM_REDIS_*`).
#[derive(Clone, Debug, clap::Args)]
pub struct RedisSettings {
    /// Redis shared by every node for the rate limits, secondary limits and lockouts (see "Many nodes"); unset: each node limits in its own memory [default: unset]
    #[arg(id = "redis_url", long = "redis-url", env = "PLATFORM_REDIS_URL", value_name = "URL", hide_env_values = true, value_parser = setting(|v| Ok(Url(v.into()))))]
    pub url: Option<Url>,
    /// namespace of this deployment's keys in that Redis
    #[arg(id = "redis_prefix", long = "redis-prefix", env = "PLATFORM_REDIS_PREFIX", default_value = "platform", value_name = "PREFIX")]
    pub prefix: String,
    /// how long an idle node keeps freed concurrency places and refunded charges before sending them to Redis in a call of their own (a busy node sends them with its next request's call, no round trip of their own); until then Redis counts them as still taken
    #[arg(id = "redis_flush_ms", long = "redis-flush-ms", env = "PLATFORM_REDIS_FLUSH_MS", default_value = "20", value_name = "MS", value_parser = setting(millis))]
    pub flush: std::time::Duration,
    /// largest block of a busy requester's limits a node holds at once, deciding those requests without a Redis call (see "Many nodes"; at most a quarter of what is left of each limit, what it does not use given back 100 ms after its last grant); 0: every request asks Redis
    #[arg(id = "redis_lease", long = "redis-lease", env = "PLATFORM_REDIS_LEASE", default_value = "256", value_name = "N", value_parser = setting(number::<i64>))]
    pub lease: i64,
}

/// Longest wait for Redis before a call falls back to the node's own engine.
pub const TIMEOUT: Duration = Duration::from_millis(250);
/// Fallback log lines at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Redis did not answer; decide locally.
#[derive(Debug)]
pub struct Unavailable;

/// One fixed window to charge: `n` more within `len` seconds, at most `limit`.
pub struct Take<'a> {
    pub kind: &'a str,
    pub id: String,
    pub len: i64,
    pub n: i64,
    pub limit: i64,
}

pub struct Redis {
    client: redis::Client,
    prefix: String,
    conn: Mutex<Option<ConnectionManager>>,
    /// Unix milliseconds of the last connection attempt that failed.
    last_attempt: AtomicI64,
    last_log: AtomicI64,
    fallbacks: AtomicU64,
    script: Script,
    /// Work for the next call: requests and deferred work (see [`Redis::defer`]).
    queue: std::sync::Mutex<Queue>,
    wake: Arc<Notify>,
    flush_after: Duration,
    leases: Leases,
    dispatcher: std::sync::Once,
    /// This client, for its dispatcher (which must not keep it alive).
    me: std::sync::Weak<Redis>,
}

/// The script every limit call runs (see [`ADMIT`]), loaded once per Redis server.
struct Script {
    source: &'static str,
    sha: String,
}

/// Every limit decision of a batch of requests, each in document 1's order, in one atomic call.
/// KEYS and ARGV are read in sections (a count or a mode first, then its keys and numbers).
/// ARGV starts with the leases' share and least grant ([`leases::SHARE`], [`leases::MIN`]).
///
/// 0. Deferred work of this node: freed concurrency places (a counter and how many), then
///    refunded charges (a 304's primary charge, a lease's unused units: how many), each with the
///    time it was made at (a window that ended meanwhile is left alone).
///
/// Then a count of groups of identical requests (same keys, numbers and time: a busy token's
/// requests, sent once with how many they are; 0 for a lease's renewal alone), and for each: how
/// many, the lease it asks for (requests, places; 0: none), its platform time, then
/// 1. Lockout: mode 0 none, 1 check, 2 check and count a failed login; then the failure
///    window and locked-until keys, attempts, length.
/// 2. Secondary: a concurrency bound (0: none) and its counter, then windows (len, n, limit),
///    all or nothing.
/// 3. Primary: mode 0 none, 1 charge, 2 peek; then its key, limit and length.
/// 4. The operation's own windows (content creation, token issuing), all or nothing.
///
/// A stage refusing ends that request's decision: the stages before it stay charged (as when
/// they were separate calls), the concurrency place is taken only when the request is admitted.
/// Requests are decided one after another, exactly as separate calls in that order would be;
/// what they read and write is kept in Lua tables and written back once at the end, so a batch
/// of requests on one token touches each key once. Returns, per request, {verdict (0 admitted,
/// 1 locked out, 2 secondary, 3 primary, 4 operation), retry seconds, primary used, primary
/// start} — the primary window is read even when a stage before it refused, so every answer
/// reports `x-ratelimit-*` — then per group the lease granted after its requests were decided
/// (5.): {requests, places, primary used, primary start, platform time its first window ends}.
const ADMIT: &str = r#"
local a, k = 1, 1
local function arg() local v = tonumber(ARGV[a]); a = a + 1; return v end
local function key() local v = KEYS[k]; k = k + 1; return v end
local share, least = arg(), arg()
-- Windows ({s, u} hashes) and counters read once, written back once (ttl nil: keep the key's).
local hashes, nums = {}, {}
local function hash(name)
  local h = hashes[name]
  if h == nil then
    local w = redis.call('HMGET', name, 's', 'u')
    h = {s = tonumber(w[1]), u = tonumber(w[2])}
    hashes[name] = h
  end
  return h
end
local function put(name, s, u, ttl) local h = hash(name); h.s, h.u, h.ttl, h.dirty = s, u, ttl, true end
local function num(name)
  local n = nums[name]
  if n == nil then
    n = {v = tonumber(redis.call('GET', name) or '0')}
    nums[name] = n
  end
  return n
end
local function setnum(name, v, ttl) local n = num(name); n.v, n.ttl, n.dirty = v, ttl, true end
local now = 0
local function window(name, len)
  local h = hash(name)
  if h.s == nil or now >= h.s + len then return now, 0 end
  return h.s, h.u
end
-- Read one at a time: Lua leaves the order of a constructor's or an assignment's expressions open.
local function windows()
  local list = {}
  for i = 1, arg() do
    local w = {key()}
    w[2] = arg(); w[3] = arg(); w[4] = arg()
    list[i] = w
  end
  return list
end
-- All or nothing: 0, or the seconds until the refusing window ends.
local function take(list)
  for _, w in ipairs(list) do
    local s, u = window(w[1], w[2])
    if u + w[3] > w[4] then return s + w[2] - now end
  end
  for _, w in ipairs(list) do
    local s, u = window(w[1], w[2])
    put(w[1], s, u + w[3], w[2] + 60)
  end
  return 0
end
for _ = 1, arg() do
  local c = key()
  setnum(c, math.max(num(c).v - arg(), 0), 60)
end
for _ = 1, arg() do
  local p = key()
  local len = arg()
  local at = arg()
  local n = arg()
  local h = hash(p)
  if h.s ~= nil and at < h.s + len and h.u > 0 then put(p, h.s, math.max(h.u - n, 0), h.ttl) end
end
local out, leases = {}, {}
for _ = 1, arg() do
  local times = arg()
  local want, want_places = arg(), arg()
  now = arg()
  local lock, fails, locked_key, attempts, lock_len = arg(), nil, nil, 0, 0
  if lock > 0 then
    fails = key(); locked_key = key(); attempts = arg(); lock_len = arg()
  end
  local conc, conc_key = arg(), nil
  if conc > 0 then conc_key = key() end
  local secondary = windows()
  local pmode, pkey, plimit, plen = arg(), nil, 0, 0
  if pmode > 0 then
    pkey = key(); plimit = arg(); plen = arg()
  end
  local operation = windows()

  for _ = 1, times do
  local verdict, retry = 0, 0
  if lock > 0 then
    local locked = num(locked_key).v
    if locked > now then
      verdict, retry = 1, locked - now
    elseif lock == 2 then
      local s, u = window(fails, lock_len)
      if u + 1 > attempts - 1 then
        setnum(locked_key, now + lock_len, lock_len + 60)
        put(fails, nil, nil, nil)
      else
        put(fails, s, u + 1, lock_len + 60)
      end
    end
  end
  if verdict == 0 and conc > 0 and num(conc_key).v >= conc then verdict, retry = 2, 1 end
  if verdict == 0 then
    local r = take(secondary)
    if r > 0 then verdict, retry = 2, r end
  end
  local start, used = now, 0
  if pmode > 0 then start, used = window(pkey, plen) end
  if verdict == 0 and pmode == 1 then
    if used >= plimit then
      verdict = 3
    else
      used = used + 1
      put(pkey, start, used, plen + 60)
    end
  end
  if verdict == 0 then
    local r = take(operation)
    if r > 0 then verdict, retry = 4, r end
  end
  if verdict == 0 and conc > 0 then setnum(conc_key, num(conc_key).v + 1, 60) end
  out[#out + 1] = verdict; out[#out + 1] = retry; out[#out + 1] = used; out[#out + 1] = start
  end

  -- 5. A lease (`leases`): `want` more requests' worth of the primary and secondary windows
  -- and `want_places` places, at most 1/share of what is left of each, all or nothing.
  local g, gp, lused, lstart, lend = 0, 0, 0, 0, 0
  if want > 0 and pmode == 1 and #operation == 0 and (lock == 0 or num(locked_key).v <= now) then
    local s, u = window(pkey, plen)
    g, lend = math.min(want, math.floor((plimit - u) / share)), s + plen
    for _, w in ipairs(secondary) do
      local ws, wu = window(w[1], w[2])
      g, lend = math.min(g, math.floor((w[4] - wu) / (share * w[3]))), math.min(lend, ws + w[2])
    end
    if conc > 0 and want_places > 0 then
      gp = math.min(want_places, math.floor((conc - num(conc_key).v) / share))
      if gp < 1 then g = 0 end
    end
    if g >= least then
      put(pkey, s, u + g, plen + 60)
      for _, w in ipairs(secondary) do
        local ws, wu = window(w[1], w[2])
        put(w[1], ws, wu + g * w[3], w[2] + 60)
      end
      if gp > 0 then setnum(conc_key, num(conc_key).v + gp, 60) end
      lused, lstart = u + g, s
    else
      g, gp, lend = 0, 0, 0
    end
  end
  for _, v in ipairs({g, gp, lused, lstart, lend}) do leases[#leases + 1] = v end
end
for _, v in ipairs(leases) do out[#out + 1] = v end
for name, h in pairs(hashes) do
  if h.dirty then
    if h.s == nil then
      redis.call('DEL', name)
    else
      redis.call('HSET', name, 's', h.s, 'u', h.u)
      if h.ttl ~= nil then redis.call('EXPIRE', name, h.ttl) end
    end
  end
end
for name, n in pairs(nums) do
  if n.dirty then
    redis.call('SET', name, n.v, 'EX', n.ttl)
  end
end
return out
"#;

/// The primary window's part in a call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Charge = 1,
    Peek = 2,
}

/// The lockout's part in a call.
#[derive(Clone, Copy)]
pub enum Lock {
    /// Is the address locked out?
    Check,
    /// Checked, then a failed login counted: the `attempts`-th within `len` seconds locks the
    /// address for `len`.
    Fail { attempts: i64, len: i64 },
}

/// Everything one call decides; parts left `None` or empty are not asked.
#[derive(Default)]
pub struct Ask<'a> {
    /// (scope, address, what to do).
    pub lock: Option<(&'a str, &'a str, Lock)>,
    /// (bucket, bound): a place among the requester's requests in flight.
    pub concurrency: Option<(&'a str, i64)>,
    pub secondary: Vec<Take<'a>>,
    /// (key, limit, window length, mode).
    pub primary: Option<(&'a str, i64, i64, Mode)>,
    pub operation: Vec<Take<'a>>,
}

/// What a call decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Admitted,
    /// Seconds the address stays locked.
    LockedOut(i64),
    /// Seconds until the refusing secondary window ends.
    Secondary(i64),
    Primary,
    /// Seconds until the operation's refusing window ends.
    Operation(i64),
}

/// A call's answer: the verdict and the primary window (used, start) when one was asked; an
/// admitted request's place among its requester's requests in flight is its lease's when a
/// lease admitted it (freed by [`Redis::leave`]).
pub struct Answer {
    pub verdict: Verdict,
    pub used: i64,
    pub start: i64,
    pub lease: Option<Arc<Lease>>,
}

/// One request's part of a call, encoded, and where its answer goes (none: a lease's renewal).
struct Pending {
    ident: Ident,
    now: i64,
    /// The concurrency counter it takes a place in, freed again if its caller is gone.
    place: Option<String>,
    /// What a lease for requests like it charges (leasable requests only).
    charged: Option<Arc<Charged>>,
    /// The lease a renewal asks for (requests, places).
    renew: (i64, i64),
    reply: Option<tokio::sync::oneshot::Sender<Result<Answer, Unavailable>>>,
}

/// What waits for the next call: requests, leases' renewals, deferred work, and since when the
/// oldest deferred item waits.
#[derive(Default)]
struct Queue {
    asks: Vec<Pending>,
    renewals: Vec<Pending>,
    items: Vec<Deferred>,
    since: Option<tokio::time::Instant>,
}

/// Deferred work waiting longer than this is sent by a call of its own (an idle node).
pub const FLUSH_AFTER: Duration = Duration::from_millis(20);
/// Deferred items kept at most while Redis does not answer (beyond: dropped, the keys expire).
const MAX_DEFERRED: usize = 100_000;
/// Requests decided by one call at most (a call's arguments stay a few hundred kilobytes).
const MAX_BATCH: usize = 256;

impl Redis {
    /// A client for `settings.url` (nothing is connected yet: a Redis that is down at start
    /// only means the first calls fall back). Its prefix namespaces the keys of one deployment;
    /// deferred work of an idle node is sent `flush` after it was deferred; leases are at most
    /// `lease` requests (see `leases`).
    pub fn new(settings: &RedisSettings) -> Result<Arc<Redis>, String> {
        let url = settings.url.as_ref().map_or("", |u| u.0.as_str());
        let client = redis::Client::open(url).map_err(|e| format!("PLATFORM_REDIS_URL: {e}"))?;
        if settings.lease < 0 {
            return Err("redis_lease must not be negative".into());
        }
        Ok(Arc::new_cyclic(|me| Redis {
            me: me.clone(),
            client,
            prefix: settings.prefix.clone(),
            conn: Mutex::new(None),
            last_attempt: AtomicI64::new(0),
            last_log: AtomicI64::new(0),
            fallbacks: AtomicU64::new(0),
            script: Script { source: ADMIT, sha: redis::Script::new(ADMIT).get_hash().to_string() },
            queue: std::sync::Mutex::new(Queue::default()),
            wake: Arc::new(Notify::new()),
            flush_after: settings.flush,
            leases: Leases::new(settings.lease),
            dispatcher: std::sync::Once::new(),
        }))
    }

    /// Calls that fell back to the node's own engine.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Requests this node's leases admitted without a call.
    pub fn leased(&self) -> u64 {
        self.leases.admitted()
    }

    /// A key of this deployment.
    pub fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.prefix)
    }

    async fn connection(&self) -> Result<ConnectionManager, String> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = &*slot {
            return Ok(c.clone());
        }
        let now = wall_ms();
        if now - self.last_attempt.load(Ordering::Relaxed) < 1000 {
            return Err("not connected (next attempt within a second)".into());
        }
        let config = redis::aio::ConnectionManagerConfig::new().set_connection_timeout(Some(TIMEOUT)).set_response_timeout(Some(TIMEOUT));
        match tokio::time::timeout(TIMEOUT * 2, self.client.get_connection_manager_with_config(config)).await {
            Ok(Ok(c)) => {
                tracing::info!("rate limits shared through Redis");
                *slot = Some(c.clone());
                Ok(c)
            }
            Ok(Err(e)) => {
                self.last_attempt.store(now, Ordering::Relaxed);
                Err(e.to_string())
            }
            Err(_) => {
                self.last_attempt.store(now, Ordering::Relaxed);
                Err("connection timed out".into())
            }
        }
    }
    /// Decides `ask`. A request its requester's lease on this node covers is decided at once
    /// (`leases`). Others are queued and sent by this node's dispatcher, every request that
    /// arrived while a call was in flight in the next call (see [`ADMIT`]): under load one
    /// round trip and one command serve many requests, each decided exactly as alone; a lone
    /// request is sent at once. Any failure is counted, logged and `Unavailable` (the deferred
    /// work a failed call carried is dropped: counted busy or charged until its keys expire,
    /// never freed twice).
    pub async fn admit(&self, ask: &Ask<'_>, now: i64) -> Result<Answer, Unavailable> {
        let mut pending = self.encode(ask, now);
        let leasable = self.leases.enabled()
            && ask.operation.is_empty()
            && matches!(ask.primary, Some((_, _, _, Mode::Charge)))
            && !matches!(ask.lock, Some((_, _, Lock::Fail { .. })));
        if leasable {
            if let Some(answer) = self.admit_leased(&pending) {
                return Ok(answer);
            }
            pending.charged = Some(Arc::new(self.charged(ask)));
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        pending.reply = Some(tx);
        self.lock_queue().asks.push(pending);
        if !self.start_dispatcher() {
            return Err(Unavailable);
        }
        self.wake.notify_one();
        rx.await.unwrap_or(Err(Unavailable))
    }

    /// Admits a request from its requester's lease on this node, when that lease covers it;
    /// queues the renewal the lease asks for.
    fn admit_leased(&self, p: &Pending) -> Option<Answer> {
        let (taken, renew) = self.leases.take(&p.ident, p.now);
        if let Some(r) = renew {
            let renewal = Pending {
                ident: p.ident.clone(),
                now: p.now,
                place: None,
                charged: Some(r.charged),
                renew: (r.units, r.places),
                reply: None,
            };
            self.lock_queue().renewals.push(renewal);
            if self.start_dispatcher() {
                self.wake.notify_one();
            }
        }
        taken.map(|t| Answer { verdict: Verdict::Admitted, used: t.used, start: t.start, lease: t.place })
    }

    /// One request's keys and arguments, in the order [`ADMIT`] reads them.
    fn encode(&self, ask: &Ask<'_>, now: i64) -> Pending {
        let mut keys: Vec<String> = Vec::with_capacity(6);
        let mut args: Vec<i64> = Vec::with_capacity(16);
        match ask.lock {
            None => args.push(0),
            Some((scope, ip, lock)) => {
                keys.push(self.key(&format!("{scope}f"), ip));
                keys.push(self.key(&format!("{scope}u"), ip));
                match lock {
                    Lock::Check => args.extend([1, 0, 0]),
                    Lock::Fail { attempts, len } => args.extend([2, attempts, len]),
                }
            }
        }
        let mut place = None;
        match ask.concurrency {
            None => args.push(0),
            Some((bucket, limit)) => {
                args.push(limit);
                let k = self.key("c", bucket);
                place = Some(k.clone());
                keys.push(k);
            }
        }
        self.windows(&ask.secondary, &mut keys, &mut args);
        match ask.primary {
            None => args.push(0),
            Some((key, limit, len, mode)) => {
                args.extend([mode as i64, limit, len]);
                keys.push(self.key("p", key));
            }
        }
        self.windows(&ask.operation, &mut keys, &mut args);
        Pending { ident: (keys, args), now, place, charged: None, renew: (0, 0), reply: None }
    }

    /// What a lease of requests like `ask` charges per request.
    fn charged(&self, ask: &Ask<'_>) -> Charged {
        let mut windows: Vec<(String, i64, i64)> = ask.secondary.iter().map(|w| (self.key(w.kind, &w.id), w.len, w.n)).collect();
        if let Some((key, _, len, _)) = ask.primary {
            windows.push((self.key("p", key), len, 1));
        }
        Charged { windows, counter: ask.concurrency.map(|(bucket, _)| self.key("c", bucket)) }
    }

    fn windows(&self, takes: &[Take<'_>], keys: &mut Vec<String>, args: &mut Vec<i64>) {
        args.push(takes.len() as i64);
        for w in takes {
            keys.push(self.key(w.kind, &w.id));
            args.extend([w.len, w.n, w.limit]);
        }
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next call's work: the waiting requests (at most [`MAX_BATCH`]) and renewals with
    /// every deferred item, or the deferred items alone once the oldest has waited
    /// `flush_after` (leases unused for their time hand back what they hold first). Otherwise
    /// how long until there is some.
    fn next_batch(&self) -> Result<(Vec<Pending>, Vec<Deferred>), Option<Duration>> {
        let mut returned = Vec::new();
        let lease_due = self.leases.retire_due(&mut returned);
        for d in returned {
            self.defer(d);
        }
        let mut q = self.lock_queue();
        let due = q.since.map(|t| self.flush_after.saturating_sub(t.elapsed()));
        if q.asks.is_empty() && q.renewals.is_empty() && due != Some(Duration::ZERO) {
            return Err([due, lease_due].into_iter().flatten().min());
        }
        let n = q.asks.len().min(MAX_BATCH);
        let mut asks: Vec<Pending> = q.asks.drain(..n).collect();
        asks.append(&mut q.renewals);
        q.since = None;
        Ok((asks, std::mem::take(&mut q.items)))
    }

    /// Sends one batch and answers its requests; records the leases it was granted.
    async fn dispatch(&self, asks: Vec<Pending>, deferred: Vec<Deferred>) {
        // A lease granted while these waited covers them first: its places and units are
        // already counted in Redis, and deciding them there again could refuse them early.
        let asks: Vec<Pending> = asks.into_iter().filter_map(|p| self.answer_from_lease(p)).collect();
        let key_count = deferred.len() + asks.iter().map(|p| p.ident.0.len()).sum::<usize>();
        let mut keys: Vec<&str> = Vec::with_capacity(key_count);
        let mut args: Vec<i64> = Vec::with_capacity(4 * deferred.len() + 5 + asks.iter().map(|p| p.ident.1.len() + 4).sum::<usize>());
        args.extend([leases::SHARE, leases::MIN]);
        let releases = deferred.iter().filter(|d| matches!(d, Deferred::Release(..))).count();
        args.push(releases as i64);
        for d in &deferred {
            if let Deferred::Release(k, n) = d {
                keys.push(k);
                args.push(*n);
            }
        }
        args.push((deferred.len() - releases) as i64);
        for d in &deferred {
            if let Deferred::Refund(k, len, at, n) = d {
                keys.push(k);
                args.extend([*len, *at, *n]);
            }
        }
        // Consecutive identical requests go once, with how many they are (a renewal: none).
        let mut groups: Vec<(&Pending, i64)> = Vec::new();
        for p in &asks {
            match groups.last_mut() {
                Some((g, n)) if p.reply.is_some() && g.reply.is_some() && g.ident == p.ident && g.now == p.now => *n += 1,
                _ => groups.push((p, p.reply.is_some() as i64)),
            }
        }
        let wants: Vec<(i64, i64)> = groups
            .iter()
            .map(|(p, n)| match (&p.charged, p.reply.is_some()) {
                (_, false) => p.renew,
                (Some(_), true) => self.leases.want(&p.ident, *n as usize),
                (None, true) => (0, 0),
            })
            .collect();
        args.push(groups.len() as i64);
        for ((p, n), (units, places)) in groups.iter().zip(&wants) {
            keys.extend(p.ident.0.iter().map(String::as_str));
            args.extend([*n, *units, *places, p.now]);
            args.extend_from_slice(&p.ident.1);
        }
        let answers = asks.iter().filter(|p| p.reply.is_some()).count();
        let out: Result<Vec<i64>, Unavailable> = self.run(&keys, &args).await;
        let out = out.and_then(|v| {
            if v.len() == 4 * answers + 5 * groups.len() {
                Ok(v)
            } else {
                Err(self.unavailable("answer of the wrong length"))
            }
        });
        // Leases first: a request answered below may find its requester's lease at once.
        for (i, ((p, _), want)) in groups.iter().zip(&wants).enumerate() {
            let (Some(charged), false) = (&p.charged, *want == (0, 0)) else { continue };
            let grant = match &out {
                Ok(v) => {
                    let g = &v[4 * answers + 5 * i..];
                    Grant { units: g[0], places: g[1], used: g[2], start: g[3], end: g[4] }
                }
                Err(_) => Grant::default(),
            };
            self.leases.grant(&p.ident, charged, grant, p.now);
        }
        let replies = asks.into_iter().filter_map(|p| Some((p.reply?, p.place)));
        for (i, (reply, place)) in replies.enumerate() {
            let answer = out.as_ref().map_err(|_| Unavailable).map(|v| {
                let (verdict, retry, used, start) = (v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
                let verdict = match verdict {
                    0 => Verdict::Admitted,
                    1 => Verdict::LockedOut(retry.max(1)),
                    2 => Verdict::Secondary(retry.max(1)),
                    3 => Verdict::Primary,
                    _ => Verdict::Operation(retry.max(1)),
                };
                Answer { verdict, used, start, lease: None }
            });
            let admitted = matches!(answer, Ok(Answer { verdict: Verdict::Admitted, .. }));
            // A caller gone (its request cancelled) leaves no place taken behind.
            if reply.send(answer).is_err() && admitted {
                if let Some(k) = place {
                    self.defer(Deferred::Release(k, 1));
                }
            }
        }
    }

    /// `p` again when no lease of this node covers it; else answered from the lease.
    fn answer_from_lease(&self, mut p: Pending) -> Option<Pending> {
        let (Some(_), Some(_)) = (&p.charged, &p.reply) else { return Some(p) };
        let Some(answer) = self.admit_leased(&p) else { return Some(p) };
        // A caller gone (its request cancelled) gives its place back to the lease.
        if let Some(Err(Ok(Answer { lease: Some(lease), .. }))) = p.reply.take().map(|r| r.send(Ok(answer))) {
            self.leave(&lease);
        }
        None
    }

    /// The script with `keys` and `args`: `EVALSHA`, and `EVAL` (which also caches it) only
    /// when this Redis does not know it yet (a restart, a new server).
    async fn run<T: redis::FromRedisValue>(&self, keys: &[&str], args: &[i64]) -> Result<T, Unavailable> {
        let call = async {
            let mut conn = self.connection().await?;
            let invoke = |name: &str, script: &str| {
                let mut c = redis::cmd(name);
                c.arg(script).arg(keys.len()).arg(keys).arg(args);
                c
            };
            match invoke("EVALSHA", &self.script.sha).query_async::<T>(&mut conn).await {
                Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                    invoke("EVAL", self.script.source).query_async::<T>(&mut conn).await
                }
                r => r,
            }
            .map_err(|e| e.to_string())
        };
        let out = match tokio::time::timeout(TIMEOUT, call).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {} ms", TIMEOUT.as_millis())),
        };
        out.map_err(|e| self.unavailable(&e))
    }

    /// Counts and logs (at most every [`LOG_EVERY`]) a call that failed.
    fn unavailable(&self, e: &str) -> Unavailable {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        let now = wall_ms();
        let last = self.last_log.load(Ordering::Relaxed);
        if now - last >= LOG_EVERY.as_millis() as i64
            && self.last_log.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            tracing::error!(error = %e, fallbacks = self.fallbacks(), "RATE LIMITS NOT SHARED: Redis is unreachable; each node limits on its own until it answers");
        }
        Unavailable
    }

    /// Frees a concurrency place of `bucket` with this node's next call.
    pub fn release(self: &Arc<Self>, bucket: &str) {
        self.defer(Deferred::Release(self.key("c", bucket), 1));
    }

    /// A request its lease admitted has left: its place returns to the lease, or to Redis
    /// with this node's next call once the lease has ended.
    pub fn leave(&self, lease: &Lease) {
        if let Some(d) = self.leases.leave(lease) {
            self.defer(d);
        }
    }

    /// Gives back a primary charge of `key` (a window of `len` seconds) with this node's next
    /// call; `now` is the platform time of the refund.
    pub fn refund(self: &Arc<Self>, key: &str, len: i64, now: i64) {
        self.defer(Deferred::Refund(self.key("p", key), len, now, 1));
    }

    /// Why deferring is exact enough: a freed place or a refunded charge only ever reaches
    /// Redis late, never early or twice, so until it does the shared count is higher than
    /// the truth — a node may refuse a little early, never accept past a limit. Under load the
    /// next call of this node carries it (no round trip of its own); an idle node sends it
    /// after [`FLUSH_AFTER`] in one call, whatever it holds.
    fn defer(&self, d: Deferred) {
        let first = {
            let mut q = self.lock_queue();
            if q.items.len() >= MAX_DEFERRED {
                return;
            }
            // Places freed on one counter travel as one key and a count.
            let merged = match (&d, q.items.iter_mut().rev().find(|i| matches!(i, Deferred::Release(..)))) {
                (Deferred::Release(k, n), Some(Deferred::Release(last, m))) if last == k => {
                    *m += n;
                    true
                }
                _ => false,
            };
            if !merged {
                q.items.push(d);
            }
            let first = q.since.is_none();
            q.since.get_or_insert_with(tokio::time::Instant::now);
            first
        };
        // The dispatcher learns of the deadline once; later items ride with the same call.
        if first && self.start_dispatcher() {
            self.wake.notify_one();
        }
    }

    /// The node's one dispatcher task, started with the first call and ending with the client:
    /// it sends a batch, answers it, and sends the next (what arrived meanwhile), one call in
    /// flight at a time. False outside a runtime (nothing can be sent).
    fn start_dispatcher(&self) -> bool {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return false };
        self.dispatcher.call_once(|| {
            let (weak, wake) = (self.me.clone(), self.wake.clone());
            rt.spawn(async move {
                loop {
                    // Requests this runtime is already working on join the coming call: fewer,
                    // fuller calls, each a thread switch on both sides (none when it is idle).
                    tokio::task::yield_now().await;
                    let Some(redis) = weak.upgrade() else { return };
                    match redis.next_batch() {
                        Ok((asks, deferred)) => redis.dispatch(asks, deferred).await,
                        Err(due) => {
                            drop(redis);
                            // Wakes now and then to notice the client is gone.
                            let wait = due.unwrap_or(Duration::from_secs(5));
                            let _ = tokio::time::timeout(wait, wake.notified()).await;
                        }
                    }
                }
            });
        });
        true
    }

    /// Seconds `ip` is still locked out of scope `scope` (0: not locked).
    pub async fn locked_out(&self, scope: &str, ip: &str, now: i64) -> Result<i64, Unavailable> {
        let a = self.admit(&Ask { lock: Some((scope, ip, Lock::Check)), ..Ask::default() }, now).await?;
        Ok(match a.verdict {
            Verdict::LockedOut(s) => s,
            _ => 0,
        })
    }

    /// Counts a failed login of `ip`; the `attempts`-th within `len` seconds locks it for `len`.
    pub async fn failed_login(&self, scope: &str, ip: &str, attempts: i64, len: i64, now: i64) -> Result<(), Unavailable> {
        self.admit(&Ask { lock: Some((scope, ip, Lock::Fail { attempts, len })), ..Ask::default() }, now).await.map(drop)
    }

    /// Deletes every key of this deployment (the control plane's reset).
    pub async fn clear(&self) -> Result<(), Unavailable> {
        self.leases.clear();
        let call = async {
            let mut conn = self.connection().await?;
            let pattern = format!("{}:*", self.prefix);
            let keys: Vec<String> = {
                let mut iter: redis::AsyncIter<String> = redis::cmd("SCAN")
                    .cursor_arg(0)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .clone()
                    .iter_async(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                let mut keys = Vec::new();
                while let Some(k) = futures_util::StreamExt::next(&mut iter).await {
                    keys.push(k.map_err(|e| e.to_string())?);
                }
                keys
            };
            for chunk in keys.chunks(500) {
                redis::cmd("DEL").arg(chunk).query_async::<()>(&mut conn).await.map_err(|e| e.to_string())?;
            }
            Ok::<(), String>(())
        };
        match tokio::time::timeout(TIMEOUT * 8, call).await {
            Ok(Ok(())) => Ok(()),
            _ => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                tracing::error!("RATE LIMITS NOT SHARED: Redis is unreachable; shared limit state was not cleared");
                Err(Unavailable)
            }
        }
    }
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}
