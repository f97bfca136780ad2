//! Recording of API usage for the insights operations (`ops/insights.rs`).
//!
//! The contract layer calls [`record`] once per request, whatever its outcome. On that hot path a
//! small fixed-size record (the principal's `Arc`, the operation, the organization login of the
//! path copied inline) is pushed onto one of a few mutex-guarded vectors, picked per thread so
//! threads do not contend. A background worker ([`start_flusher`]) takes the vectors every second
//! (sooner when one fills), aggregates them per second, actor, route and status, resolves the
//! organization logins and writes the rows in one transaction. Requests answered before routing
//! (rate limited, bad credentials) carry their path instead, matched to a route at flush time.
//! Requests that touch no organization (no `org`/`owner` path parameter naming one) and requests
//! matching no operation are not recorded.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use platform_core::clock::Clock;

use foldhash::quality::RandomState;
use platform_core::TokenKind;
use platform_store::domain::insights::Entry;

use crate::operation::{OpMeta, Operation};
use crate::principal::Principal;

const SHARDS: usize = 8;
/// A shard this long wakes the flusher early.
const WAKE_AT: usize = 1 << 14;
/// Past this a shard drops records (only when the database cannot keep up): insights never
/// slow requests down or grow without bound.
const MAX_PER_SHARD: usize = 1 << 18;
/// Organization logins are at most 39 characters; longer path segments name no organization.
const LOGIN_MAX: usize = 40;

/// An organization login from the request path, inline (no allocation on the hot path).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Login {
    len: u8,
    bytes: [u8; LOGIN_MAX],
}

impl Login {
    fn new(s: &str) -> Option<Login> {
        let b = s.as_bytes();
        if b.is_empty() || b.len() > LOGIN_MAX {
            return None;
        }
        let mut bytes = [0; LOGIN_MAX];
        bytes[..b.len()].copy_from_slice(b);
        // Logins are case-insensitive: one key per organization however the path spells it.
        bytes.make_ascii_lowercase();
        Some(Login { len: b.len() as u8, bytes })
    }
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

struct Record {
    at: i64,
    principal: Principal,
    op: &'static Operation,
    method: &'static str,
    status: u16,
    rate_limited: bool,
    org: Login,
}

/// A request answered before routing (rate limited, bad credentials, …).
struct Unrouted {
    at: i64,
    principal: Principal,
    method: &'static str,
    status: u16,
    rate_limited: bool,
    path: Box<str>,
}

impl Unrouted {
    /// The record of the operation the path names, if it names one and an organization.
    fn route(self, ops: &[&'static Operation]) -> Option<Record> {
        let op = match_route(ops, self.method, &self.path)?;
        let org = op.meta().org_segment.and_then(|i| self.path.split('/').nth(i)).and_then(Login::new)?;
        Some(Record {
            at: self.at,
            principal: self.principal,
            op,
            method: self.method,
            status: self.status,
            rate_limited: self.rate_limited,
            org,
        })
    }
}

/// The buffers of one server (tests run many servers in one process).
pub struct Recorder {
    pub enabled: bool,
    /// The platform clock requests are recorded by.
    clock: Arc<Clock>,
    /// Seconds before recorded requests show in the insights operations.
    pub delay_seconds: i64,
    shards: Vec<Mutex<Vec<Record>>>,
    /// Requests answered before routing: the path is kept and matched at flush time.
    unrouted: Mutex<Vec<Unrouted>>,
    dropped: AtomicU64,
    pub wake: tokio::sync::Notify,
    /// One flush at a time (the ticker, a query and shutdown may all flush).
    pub flushing: tokio::sync::Mutex<()>,
    /// The operations served, to match unrouted paths against (set by the application).
    operations: std::sync::OnceLock<&'static [&'static Operation]>,
}

impl Recorder {
    pub fn new(enabled: bool, delay_seconds: i64, clock: Arc<Clock>) -> Recorder {
        Recorder {
            clock,
            enabled,
            delay_seconds,
            shards: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
            unrouted: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            wake: tokio::sync::Notify::new(),
            flushing: tokio::sync::Mutex::new(()),
            operations: std::sync::OnceLock::new(),
        }
    }

    /// The operations the application serves: unrouted requests are matched against them.
    pub fn serve(&self, ops: &'static [&'static Operation]) {
        let _ = self.operations.set(ops);
    }

    fn push(&self, r: Record) {
        let mut shard = self.shards[shard_index()].lock().unwrap_or_else(|e| e.into_inner());
        if shard.len() >= MAX_PER_SHARD {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        shard.push(r);
        if shard.len() == WAKE_AT {
            self.wake.notify_one();
        }
    }

    fn take(&self) -> (Vec<Record>, Vec<Unrouted>) {
        let mut all = Vec::new();
        for s in &self.shards {
            // The next second's buffer starts at this one's size: pushes on the hot path then
            // rarely grow (and copy) a large vector while holding the lock.
            let mut shard = s.lock().unwrap_or_else(|e| e.into_inner());
            let size = shard.len();
            let mut taken = std::mem::replace(&mut *shard, Vec::with_capacity(size));
            drop(shard);
            if all.is_empty() {
                all = taken;
            } else {
                all.append(&mut taken);
            }
        }
        let unrouted = std::mem::take(&mut *self.unrouted.lock().unwrap_or_else(|e| e.into_inner()));
        (all, unrouted)
    }
}

fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

/// Records one request (the contract layer's hook). `op` is the operation that answered (with
/// its [`OpMeta`]), none when the answer came before routing; `path` is the request path below the API base.
pub fn record(
    ins: &Recorder,
    principal: &Principal,
    op: Option<(&'static Operation, &OpMeta)>,
    method: &'static str,
    path: &str,
    status: u16,
    rate_limited: bool,
) {
    if !ins.enabled {
        return;
    }
    let at = ins.clock.now();
    match op {
        Some((op, meta)) => {
            let Some(i) = meta.org_segment else { return };
            let Some(org) = path.split('/').nth(i).and_then(Login::new) else { return };
            ins.push(Record { at, principal: principal.clone(), op, method, status, rate_limited, org });
        }
        None => {
            // Only paths that can name an organization are worth matching later.
            if !(path.starts_with("/orgs/") || path.starts_with("/repos/")) || method == "OPTIONS" {
                return;
            }
            let r = Unrouted { at, principal: principal.clone(), method, status, rate_limited, path: Box::from(path) };
            let mut q = ins.unrouted.lock().unwrap_or_else(|e| e.into_inner());
            if q.len() >= MAX_PER_SHARD {
                ins.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            q.push(r);
        }
    }
}

/// The operation serving `method path`, for answers given before routing: literal segments win
/// over parameters (`…/summary-stats/users/{user_id}` over `…/summary-stats/{actor_type}/{actor_id}`).
fn match_route(ops: &[&'static Operation], method: &str, path: &str) -> Option<&'static Operation> {
    let method = if method == "HEAD" { "GET" } else { method };
    let n = path.split('/').count();
    let mut best: Option<(usize, &'static Operation)> = None;
    for op in ops.iter().filter(|o| o.method.as_str() == method) {
        if op.path.split('/').count() != n {
            continue;
        }
        let mut literal = 0;
        let fits = op.path.split('/').zip(path.split('/')).all(|(t, s)| {
            if t.starts_with('{') {
                !s.is_empty()
            } else {
                literal += 1;
                t == s
            }
        });
        if fits && best.is_none_or(|(l, _)| literal > l) {
            best = Some((literal, op));
        }
    }
    best.map(|(_, op)| op)
}

/// Route template as the insights rows show it: `/orgs/:org/…`.
pub fn api_route(template: &str) -> String {
    template
        .split('/')
        .map(|s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => format!(":{name}"),
            None => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Who made a request, as the insights rows name it. Workflow tokens and anonymous callers have
/// no actor and no subject: they count in an organization's totals only.
#[derive(Default)]
struct Who {
    actor_type: Option<&'static str>,
    actor_id: Option<i64>,
    actor_name: Option<String>,
    integration_id: Option<i64>,
    oauth_application_id: Option<i64>,
    user_id: Option<i64>,
    subject: Option<(&'static str, i64, String)>,
}

fn who(p: &Principal) -> Who {
    match p {
        Principal::Anonymous => Who::default(),
        // Application credentials (client id and secret): the OAuth application itself.
        Principal::App(a) => Who {
            actor_type: Some("oauth_app"),
            actor_id: Some(a.app.id),
            actor_name: Some(a.app.name.clone()),
            oauth_application_id: Some(a.app.id),
            subject: Some(("oauth_app", a.app.id, a.app.name.clone())),
            ..Who::default()
        },
        Principal::Token(t) => {
            let tok = &t.token;
            let app = t.app.as_ref();
            let app_name = app.map(|a| a.name.clone());
            let user = t.user.as_ref();
            let subject = user.map(|u| ("user", u.id, u.login.clone()));
            let mut w = Who { user_id: user.map(|u| u.id), subject, ..Who::default() };
            match tok.kind {
                TokenKind::Workflow => return Who::default(),
                TokenKind::Installation => {
                    let id = tok.installation_id.unwrap_or(0);
                    w.actor_type = Some("installation");
                    w.actor_id = Some(id);
                    w.actor_name = app_name.clone();
                    w.integration_id = tok.app_id;
                    w.subject = Some(("installation", id, app_name.unwrap_or_default()));
                }
                TokenKind::Classic | TokenKind::FineGrained => {
                    w.actor_type = Some(if tok.kind == TokenKind::Classic { "classic_pat" } else { "fine_grained_pat" });
                    w.actor_id = Some(tok.id);
                    // A token's name is its note; unnamed tokens go by their user.
                    w.actor_name = tok.note.clone().filter(|n| !n.is_empty()).or_else(|| user.map(|u| u.login.clone()));
                }
                TokenKind::Oauth => {
                    w.actor_type = Some("oauth_app");
                    w.actor_id = tok.app_id;
                    w.actor_name = app_name;
                    w.oauth_application_id = tok.app_id;
                }
                TokenKind::UserToServer => {
                    w.actor_type = Some("app_user_to_server");
                    w.actor_id = tok.app_id;
                    w.actor_name = app_name;
                    w.integration_id = tok.app_id;
                }
            }
            w
        }
    }
}

/// One aggregation key: the requests of one second by one caller to one route with one outcome.
#[derive(PartialEq, Eq, Hash)]
struct Key {
    org: Login,
    at: i64,
    caller: i64,
    method: &'static str,
    route: &'static str,
    status: u16,
}

/// What a flush writes: the entries of the buffered requests, aggregated per second, caller,
/// route and status, with the organization each names by login; and how many requests that is.
pub struct Drained {
    pub entries: Vec<(Login, Entry)>,
    pub requests: usize,
}

impl Recorder {
    /// Empties the buffers into [`Drained`] entries; none when recording is off or nothing was
    /// recorded. One flush at a time: hold [`Recorder::flushing`] across this and the write.
    pub fn drain(&self) -> Option<Drained> {
        if !self.enabled {
            return None;
        }
        let (records, unrouted) = self.take();
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(dropped, "insights buffers full: requests were not recorded");
        }
        if records.is_empty() && unrouted.is_empty() {
            return None;
        }
        let ops = self.operations.get().copied().unwrap_or_default();
        let mut groups: HashMap<Key, (i64, i64, Principal), RandomState> = HashMap::default();
        let requests = records.len() + unrouted.len();
        for r in records.into_iter().chain(unrouted.into_iter().filter_map(|u| u.route(ops))) {
            let key = Key { org: r.org, at: r.at, caller: r.principal.cache_key(), method: r.method, route: r.op.path, status: r.status };
            let g = groups.entry(key).or_insert_with(|| (0, 0, r.principal));
            g.0 += 1;
            g.1 += i64::from(r.rate_limited);
        }
        let mut routes: HashMap<&'static str, String, RandomState> = HashMap::default();
        let mut entries: Vec<(Login, Entry)> = Vec::with_capacity(groups.len());
        for (k, (total, rate_limited, principal)) in groups {
            let w = who(&principal);
            let api_route = routes.entry(k.route).or_insert_with(|| api_route(k.route)).clone();
            let (subject_type, subject_id, subject_name) = match w.subject {
                Some((t, id, name)) => (Some(t), Some(id), Some(name)),
                None => (None, None, None),
            };
            entries.push((
                k.org,
                Entry {
                    org_id: 0,
                    at: k.at,
                    actor_type: w.actor_type,
                    actor_id: w.actor_id,
                    actor_name: w.actor_name,
                    integration_id: w.integration_id,
                    oauth_application_id: w.oauth_application_id,
                    user_id: w.user_id,
                    subject_type,
                    subject_id,
                    subject_name,
                    http_method: k.method,
                    api_route,
                    status: i64::from(k.status),
                    total,
                    rate_limited,
                },
            ));
        }
        Some(Drained { entries, requests })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_segments() {
        assert_eq!(api_route("/repos/{owner}/{repo}/commits/{ref}/status"), "/repos/:owner/:repo/commits/:ref/status");
        let segment = |path: &str| crate::router::operations().iter().find(|o| o.path == path).and_then(|o| o.meta().org_segment);
        assert_eq!(segment("/orgs/{org}/hooks"), Some(2));
        assert_eq!(segment("/repos/{owner}/{repo}/commits/{ref}/status"), Some(2));
        assert_eq!(segment("/notifications"), None);
        let l = Login::new("AcMe").unwrap();
        assert_eq!(l.as_str(), "acme");
        assert!(Login::new(&"x".repeat(41)).is_none());
    }

    #[test]
    fn unrouted_paths_match_the_most_literal_route() {
        let op = match_route(crate::router::operations(), "GET", "/orgs/acme/insights/api/summary-stats/users/5").unwrap();
        assert_eq!(op.id, "insights/get-summary-stats-by-user");
        let op = match_route(crate::router::operations(), "GET", "/orgs/acme/insights/api/summary-stats/installation/5").unwrap();
        assert_eq!(op.id, "insights/get-summary-stats-by-actor");
        assert!(match_route(crate::router::operations(), "GET", "/orgs/acme/nothing-here/at/all/x/y").is_none());
    }
}
