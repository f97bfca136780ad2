//! Limits shared by every node (`PLATFORM_REDIS_URL`): the primary windows, the secondary limits
//! and the failed-login lockout live in Redis and change only inside one Lua script
//! ([`ADMIT`]), so N nodes together accept a limit once. A request's every decision is one
//! script call (`admission`): one round trip and one top-level command (`EVALSHA`; `EVAL` once
//! after a Redis restart). What needs no answer — a freed concurrency place, a refunded charge
//! — is deferred and carried by the node's next call ([`Redis::defer`] says why that stays exact).
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
    /// Work for the next call (see [`Redis::defer`]).
    deferred: std::sync::Mutex<Queue>,
    wake: Arc<Notify>,
    flush_after: Duration,
    flusher: std::sync::Once,
}

/// The script every limit call runs (see [`ADMIT`]), loaded once per Redis server.
struct Script {
    source: &'static str,
    sha: String,
}

/// One request's every limit decision, in document 1's order, in one atomic call. KEYS and
/// ARGV are read in sections (a count or a mode first, then its keys and numbers); ARGV[1] is
/// the platform time.
///
/// 0. Deferred work of this node: freed concurrency places (`DECR`), then refunded primary
///    charges (a 304), each with the time it was made at (a window that ended meanwhile is
///    left alone).
/// 1. Lockout: mode 0 none, 1 check, 2 check and count a failed login; then the failure
///    window and locked-until keys, attempts, length.
/// 2. Secondary: a concurrency bound (0: none) and its counter, then windows (len, n, limit),
///    all or nothing.
/// 3. Primary: mode 0 none, 1 charge, 2 peek; then its key, limit and length.
/// 4. The operation's own windows (content creation, token issuing), all or nothing.
///
/// A stage refusing ends the decision: the stages before it stay charged (as when they were
/// separate calls), the concurrency place is taken only when the request is admitted.
/// Returns {verdict (0 admitted, 1 locked out, 2 secondary, 3 primary, 4 operation), retry
/// seconds, primary used, primary start} — the primary window is read even when a stage
/// before it refused, so every answer reports `x-ratelimit-*`.
const ADMIT: &str = r#"
local now, a, k = tonumber(ARGV[1]), 2, 1
local function arg() local v = tonumber(ARGV[a]); a = a + 1; return v end
local function key() local v = KEYS[k]; k = k + 1; return v end
local function window(name, len)
  local w = redis.call('HMGET', name, 's', 'u')
  local s, u = tonumber(w[1]), tonumber(w[2])
  if s == nil or now >= s + len then return now, 0 end
  return s, u
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
  local t = {}
  for i, w in ipairs(list) do
    local s, u = window(w[1], w[2])
    if u + w[3] > w[4] then return s + w[2] - now end
    t[i] = {s, u + w[3]}
  end
  for i, w in ipairs(list) do
    redis.call('HSET', w[1], 's', t[i][1], 'u', t[i][2])
    redis.call('EXPIRE', w[1], w[2] + 60)
  end
  return 0
end
for _ = 1, arg() do
  local c = key()
  if redis.call('DECR', c) < 0 then redis.call('SET', c, 0, 'EX', 60) end
end
for _ = 1, arg() do
  local p = key()
  local len = arg()
  local at = arg()
  local w = redis.call('HMGET', p, 's', 'u')
  local s, u = tonumber(w[1]), tonumber(w[2])
  if s ~= nil and at < s + len and u > 0 then redis.call('HSET', p, 'u', u - 1) end
end
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

local verdict, retry = 0, 0
if lock > 0 then
  local locked = tonumber(redis.call('GET', locked_key) or '0')
  if locked > now then
    verdict, retry = 1, locked - now
  elseif lock == 2 then
    local s, u = window(fails, lock_len)
    if u + 1 > attempts - 1 then
      redis.call('SET', locked_key, now + lock_len, 'EX', lock_len + 60)
      redis.call('DEL', fails)
    else
      redis.call('HSET', fails, 's', s, 'u', u + 1)
      redis.call('EXPIRE', fails, lock_len + 60)
    end
  end
end
if verdict == 0 and conc > 0 and tonumber(redis.call('GET', conc_key) or '0') >= conc then verdict, retry = 2, 1 end
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
    redis.call('HSET', pkey, 's', start, 'u', used)
    redis.call('EXPIRE', pkey, plen + 60)
  end
end
if verdict == 0 then
  local r = take(operation)
  if r > 0 then verdict, retry = 4, r end
end
if verdict == 0 and conc > 0 then
  redis.call('INCR', conc_key)
  redis.call('EXPIRE', conc_key, 60)
end
return {verdict, retry, used, start}
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

/// A call's answer: the verdict and the primary window (used, start) when one was asked.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub verdict: Verdict,
    pub used: i64,
    pub start: i64,
}

/// Work that needs no answer, carried by this node's next call (see [`Redis::defer`]).
enum Deferred {
    /// A concurrency place freed (the counter's key).
    Release(String),
    /// A primary charge given back: (window key, length, platform time of the refund).
    Refund(String, i64, i64),
}

/// Deferred work, and since when its oldest item waits.
#[derive(Default)]
struct Queue {
    items: Vec<Deferred>,
    since: Option<tokio::time::Instant>,
}

/// Deferred work waiting longer than this is sent by a call of its own (an idle node).
pub const FLUSH_AFTER: Duration = Duration::from_millis(20);
/// Deferred items kept at most while Redis does not answer (beyond: dropped, the keys expire).
const MAX_DEFERRED: usize = 100_000;

impl Redis {
    /// A client for `url` (nothing is connected yet: a Redis that is down at start only means
    /// the first calls fall back). `prefix` namespaces the keys of one deployment; deferred
    /// work of an idle node is sent `flush_after` it was deferred.
    pub fn new(url: &str, prefix: &str, flush_after: Duration) -> Result<Arc<Redis>, String> {
        let client = redis::Client::open(url).map_err(|e| format!("PLATFORM_REDIS_URL: {e}"))?;
        Ok(Arc::new(Redis {
            client,
            prefix: prefix.to_string(),
            conn: Mutex::new(None),
            last_attempt: AtomicI64::new(0),
            last_log: AtomicI64::new(0),
            fallbacks: AtomicU64::new(0),
            script: Script { source: ADMIT, sha: redis::Script::new(ADMIT).get_hash().to_string() },
            deferred: std::sync::Mutex::new(Queue::default()),
            wake: Arc::new(Notify::new()),
            flush_after,
            flusher: std::sync::Once::new(),
        }))
    }

    /// Calls that fell back to the node's own engine.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
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

    /// Decides `ask` in one call, carrying this node's deferred work with it. Any failure is
    /// counted, logged and `Unavailable` (the deferred work it carried is dropped: counted
    /// busy or charged until its keys expire, never freed twice).
    pub async fn admit(&self, ask: &Ask<'_>, now: i64) -> Result<Answer, Unavailable> {
        let deferred = {
            let mut q = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
            q.since = None;
            std::mem::take(&mut q.items)
        };
        let mut keys: Vec<String> = Vec::with_capacity(deferred.len() + 8);
        let mut args: Vec<i64> = Vec::with_capacity(2 * deferred.len() + 24);
        args.push(now);
        let releases = deferred.iter().filter(|d| matches!(d, Deferred::Release(_))).count();
        args.push(releases as i64);
        for d in &deferred {
            if let Deferred::Release(k) = d {
                keys.push(k.clone());
            }
        }
        args.push((deferred.len() - releases) as i64);
        for d in &deferred {
            if let Deferred::Refund(k, len, at) = d {
                keys.push(k.clone());
                args.extend([*len, *at]);
            }
        }
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
        match ask.concurrency {
            None => args.push(0),
            Some((bucket, limit)) => {
                args.push(limit);
                keys.push(self.key("c", bucket));
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
        let [verdict, retry, used, start]: [i64; 4] = self.run(&keys, &args).await?;
        let verdict = match verdict {
            0 => Verdict::Admitted,
            1 => Verdict::LockedOut(retry.max(1)),
            2 => Verdict::Secondary(retry.max(1)),
            3 => Verdict::Primary,
            _ => Verdict::Operation(retry.max(1)),
        };
        Ok(Answer { verdict, used, start })
    }

    fn windows(&self, takes: &[Take<'_>], keys: &mut Vec<String>, args: &mut Vec<i64>) {
        args.push(takes.len() as i64);
        for w in takes {
            keys.push(self.key(w.kind, &w.id));
            args.extend([w.len, w.n, w.limit]);
        }
    }

    /// The script with `keys` and `args`: `EVALSHA`, and `EVAL` (which also caches it) only
    /// when this Redis does not know it yet (a restart, a new server).
    async fn run<T: redis::FromRedisValue>(&self, keys: &[String], args: &[i64]) -> Result<T, Unavailable> {
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
        out.map_err(|e| {
            self.fallbacks.fetch_add(1, Ordering::Relaxed);
            let now = wall_ms();
            let last = self.last_log.load(Ordering::Relaxed);
            if now - last >= LOG_EVERY.as_millis() as i64 && self.last_log.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                tracing::error!(error = %e, fallbacks = self.fallbacks(), "RATE LIMITS NOT SHARED: Redis is unreachable; each node limits on its own until it answers");
            }
            Unavailable
        })
    }

    /// Frees a concurrency place of `bucket` with this node's next call.
    pub fn release(self: &Arc<Self>, bucket: &str) {
        self.defer(Deferred::Release(self.key("c", bucket)));
    }

    /// Gives back a primary charge of `key` (a window of `len` seconds) with this node's next
    /// call; `now` is the platform time of the refund.
    pub fn refund(self: &Arc<Self>, key: &str, len: i64, now: i64) {
        self.defer(Deferred::Refund(self.key("p", key), len, now));
    }

    /// Why deferring is exact enough: a freed place or a refunded charge only ever reaches
    /// Redis late, never early or twice, so until it does the shared count is higher than
    /// the truth — a node may refuse a little early, never accept past a limit. Under load the
    /// next request of this node carries it (no round trip of its own); an idle node sends it
    /// after [`FLUSH_AFTER`] in one call, whatever it holds.
    fn defer(self: &Arc<Self>, d: Deferred) {
        {
            let mut q = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
            if q.items.len() >= MAX_DEFERRED {
                return;
            }
            if q.items.is_empty() {
                q.since = Some(tokio::time::Instant::now());
            }
            q.items.push(d);
        }
        self.start_flusher();
        self.wake.notify_one();
    }

    /// The idle node's flush: one task per client, ending with it. It sends the queue only once
    /// its oldest item has waited `flush_after` (a busy node's calls take it long before).
    fn start_flusher(self: &Arc<Self>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        self.flusher.call_once(|| {
            let (weak, wake, after) = (Arc::downgrade(self), self.wake.clone(), self.flush_after);
            rt.spawn(async move {
                loop {
                    // Wakes now and then to notice the client is gone.
                    let _ = tokio::time::timeout(Duration::from_secs(5), wake.notified()).await;
                    loop {
                        let Some(redis) = weak.upgrade() else { return };
                        let since = redis.deferred.lock().unwrap_or_else(|e| e.into_inner()).since;
                        match since {
                            None => break,
                            Some(t) if t.elapsed() >= after => {
                                let _ = redis.admit(&Ask::default(), 0).await;
                                break;
                            }
                            Some(t) => {
                                drop(redis);
                                tokio::time::sleep(after.saturating_sub(t.elapsed())).await;
                            }
                        }
                    }
                }
            });
        });
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
