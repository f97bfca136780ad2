//! Limits shared by every node (`PLATFORM_REDIS_URL`): the primary windows, the secondary limits
//! and the failed-login lockout live in Redis and change only inside Lua scripts, so each
//! decision is one atomic round trip and N nodes together accept a limit once.
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
use redis::Script;
use tokio::sync::Mutex;

/// Longest wait for Redis before a call falls back to the node's own engine.
pub const TIMEOUT: Duration = Duration::from_millis(250);
/// Fallback log lines at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);
/// Real seconds a key outlives its window.
const SLACK: i64 = 60;

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
    scripts: Scripts,
}

struct Scripts {
    window: Script,
    enter: Script,
    leave: Script,
    lockout: Script,
}

/// Primary window: mode 0 (charge) adds one below the limit, 1 (refund) gives one back, 2
/// (peek) reads. Returns {used, start, accepted}; an absent or ended window reads as empty from now.
const WINDOW: &str = r#"
local now, limit, len, mode, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local w = redis.call('HMGET', KEYS[1], 's', 'u')
local s, u = tonumber(w[1]), tonumber(w[2])
if s == nil or now >= s + len then
  if mode ~= 0 then return {0, now, 1} end
  s, u = now, 0
end
local ok = 1
if mode == 0 then
  if u >= limit then ok = 0 else u = u + 1 end
elseif mode == 1 then
  if u > 0 then u = u - 1 end
end
if mode ~= 2 then
  redis.call('HSET', KEYS[1], 's', s, 'u', u)
  redis.call('EXPIRE', KEYS[1], ttl)
end
return {u, s, ok}
"#;

/// Secondary windows, all or nothing: KEYS are window hashes, ARGV = now, then (len, n, limit)
/// per key; optionally preceded by a concurrency counter (ARGV[2] = its limit, 0 = none, with
/// KEYS[1] the counter). Returns 0 when admitted, else the seconds until the refusing window
/// ends (1 for concurrency).
const ENTER: &str = r#"
local now, conc = tonumber(ARGV[1]), tonumber(ARGV[2])
local first = 1
if conc > 0 then
  local c = tonumber(redis.call('GET', KEYS[1]) or '0')
  if c >= conc then return 1 end
  first = 2
end
local wins = {}
for i = first, #KEYS do
  local a = 3 + (i - first) * 3
  local len, n, limit = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local w = redis.call('HMGET', KEYS[i], 's', 'u')
  local s, u = tonumber(w[1]), tonumber(w[2])
  if s == nil or now >= s + len then s, u = now, 0 end
  if u + n > limit then return s + len - now end
  wins[i] = {s, u + n, len}
end
for i = first, #KEYS do
  redis.call('HSET', KEYS[i], 's', wins[i][1], 'u', wins[i][2])
  redis.call('EXPIRE', KEYS[i], wins[i][3] + 60)
end
if conc > 0 then
  redis.call('INCR', KEYS[1])
  redis.call('EXPIRE', KEYS[1], 60)
end
return 0
"#;

const LEAVE: &str = r#"
if redis.call('DECR', KEYS[1]) < 0 then redis.call('SET', KEYS[1], 0, 'EX', 60) end
return 0
"#;

/// Lockout: KEYS[1] = failure window, KEYS[2] = locked-until. ARGV = now, mode (0: check,
/// 1: count a failure), attempts, len. Returns the seconds still locked (0: not locked).
const LOCKOUT: &str = r#"
local now, mode, attempts, len = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if mode == 0 then
  local locked = tonumber(redis.call('GET', KEYS[2]) or '0')
  if locked > now then return locked - now end
  return 0
end
local w = redis.call('HMGET', KEYS[1], 's', 'u')
local s, u = tonumber(w[1]), tonumber(w[2])
if s == nil or now >= s + len then s, u = now, 0 end
if u + 1 > attempts - 1 then
  redis.call('SET', KEYS[2], now + len, 'EX', len + 60)
  redis.call('DEL', KEYS[1])
  return len
end
redis.call('HSET', KEYS[1], 's', s, 'u', u + 1)
redis.call('EXPIRE', KEYS[1], len + 60)
return 0
"#;

/// Primary window modes.
#[derive(Clone, Copy)]
pub enum Mode {
    Charge = 0,
    Refund = 1,
    Peek = 2,
}

impl Redis {
    /// A client for `url` (nothing is connected yet: a Redis that is down at start only means
    /// the first calls fall back). `prefix` namespaces the keys of one deployment.
    pub fn new(url: &str, prefix: &str) -> Result<Arc<Redis>, String> {
        let client = redis::Client::open(url).map_err(|e| format!("PLATFORM_REDIS_URL: {e}"))?;
        Ok(Arc::new(Redis {
            client,
            prefix: prefix.to_string(),
            conn: Mutex::new(None),
            last_attempt: AtomicI64::new(0),
            last_log: AtomicI64::new(0),
            fallbacks: AtomicU64::new(0),
            scripts: Scripts {
                window: Script::new(WINDOW),
                enter: Script::new(ENTER),
                leave: Script::new(LEAVE),
                lockout: Script::new(LOCKOUT),
            },
        }))
    }

    /// Calls that fell back to the node's own engine.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    fn key(&self, kind: &str, id: &str) -> String {
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

    /// Runs `script` with `keys` and `args`; any failure is counted, logged and `Unavailable`.
    async fn run<T: redis::FromRedisValue>(&self, script: &Script, keys: &[String], args: &[i64]) -> Result<T, Unavailable> {
        let call = async {
            let mut conn = self.connection().await?;
            let mut inv = script.prepare_invoke();
            for k in keys {
                inv.key(k);
            }
            for a in args {
                inv.arg(*a);
            }
            inv.invoke_async::<T>(&mut conn).await.map_err(|e| e.to_string())
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

    /// A primary window: {used, start, accepted}.
    pub async fn primary(&self, bucket: &str, limit: i64, len: i64, mode: Mode, now: i64) -> Result<(i64, i64, bool), Unavailable> {
        let (u, s, ok): (i64, i64, i64) =
            self.run(&self.scripts.window, &[self.key("p", bucket)], &[now, limit, len, mode as i64, len + SLACK]).await?;
        Ok((u, s, ok == 1))
    }

    /// Charges `windows` all or nothing, after a place among `concurrent` in flight (0: no
    /// concurrency bound). `Ok(Err(seconds))` is a refusal.
    pub async fn enter(&self, concurrency: Option<(&str, i64)>, windows: &[Take<'_>], now: i64) -> Result<Result<(), i64>, Unavailable> {
        let mut keys = Vec::with_capacity(windows.len() + 1);
        let mut args = vec![now, 0];
        if let Some((b, limit)) = concurrency {
            keys.push(self.key("c", b));
            args[1] = limit;
        }
        for w in windows {
            keys.push(self.key(w.kind, &w.id));
            args.extend([w.len, w.n, w.limit]);
        }
        let retry: i64 = self.run(&self.scripts.enter, &keys, &args).await?;
        Ok(if retry == 0 { Ok(()) } else { Err(retry.max(1)) })
    }

    /// Frees a place taken by [`Redis::enter`].
    pub async fn leave(&self, bucket: &str) {
        let _ = self.run::<i64>(&self.scripts.leave, &[self.key("c", bucket)], &[]).await;
    }

    /// Seconds `ip` is still locked out of scope `scope` (0: not locked).
    pub async fn locked_out(&self, scope: &str, ip: &str, now: i64) -> Result<i64, Unavailable> {
        self.run(&self.scripts.lockout, &self.lock_keys(scope, ip), &[now, 0, 0, 0]).await
    }

    /// Counts a failed login of `ip`; the `attempts`-th within `len` seconds locks it for `len`.
    pub async fn failed_login(&self, scope: &str, ip: &str, attempts: i64, len: i64, now: i64) -> Result<(), Unavailable> {
        self.run::<i64>(&self.scripts.lockout, &self.lock_keys(scope, ip), &[now, 1, attempts, len]).await.map(drop)
    }

    fn lock_keys(&self, scope: &str, ip: &str) -> [String; 2] {
        [self.key(&format!("{scope}f"), ip), self.key(&format!("{scope}u"), ip)]
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
