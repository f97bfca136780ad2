//! Webhook delivery: the activity consumer that queues deliveries (in its transaction, so the
//! queue is as durable as the activity), and the sender that claims due deliveries, POSTs them
//! signed, and records every attempt. Targets pass the outbound guard (`crate::outbound`).
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use platform_store::domain::accounts::{self, Account};
use platform_store::domain::activity::Activity;
use platform_store::domain::hooks::{self, Attempt, Delivery, Hook, NewDelivery};
use platform_store::domain::repos::{self, Repo};
use platform_store::{Backend, Conn, DbError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio::task::JoinSet;

use super::activity::Record;
use super::deployment_events::DeploymentBody;
use super::payloads::{
    self, Body, Create, Delete, LastResponse, Meta, Payload, Ping, PingHook, Public, RepositoryBody, RepositoryField, RepositoryImport,
    Star, Status,
};
use super::published;
use crate::error::ApiError;
use crate::ops::accounts::shapes::organization_simple;
use crate::ops::git_hosting::effects::{self, Pusher};
use crate::ops::outbox::Consumer;
use crate::outbound::{find_refused, refusal, AllowList, GuardResolver};
use crate::secrets;
use crate::shapes::{self, Urls};
use crate::state::Shared;
use crate::typed::{Timestamp, Uri};
use crate::worker::{Next, Work, Worker, Workers};

/// Payloads larger than this are not delivered (recorded as such).
pub const MAX_PAYLOAD_BYTES: usize = 25 * 1024 * 1024;
/// A receiver must answer within this.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// A claimed delivery not finished by then (a crash) is taken again.
pub const LEASE_SECONDS: i64 = 15;
/// Automatic retry delays (seconds) when retries are enabled: attempt 2 after 10 s, then 30 s,
/// 1 min, 5 min, 15 min, 1 h, and hourly after that.
pub const BACKOFF: [i64; 6] = [10, 30, 60, 300, 900, 3600];
/// Response bodies are recorded up to this size.
const MAX_RECORDED_RESPONSE: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Signatures (secrets at rest are `crate::secrets`).

pub fn sign_sha256(secret: &str, body: &[u8]) -> String {
    format!("sha256={}", hex::encode(secrets::hmac256(secret.as_bytes(), &[body])))
}

pub fn sign_sha1(secret: &str, body: &[u8]) -> String {
    let mut m = Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()).expect("hmac key");
    m.update(body);
    format!("sha1={}", hex::encode(m.finalize().into_bytes()))
}

/// A delivery GUID (random, version 4 layout).
pub fn guid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// `Service-Hookshot/<short id>`.
pub fn user_agent() -> String {
    let id = platform_core::ids::sha256_hex(concat!("platformd-", env!("CARGO_PKG_VERSION")).as_bytes());
    format!("Service-Hookshot/{}", &id[..7])
}

// ---------------------------------------------------------------------------------------------
// Shapes.

/// WebhookConfig: the hook's `config` as reads show it (secret masked).
#[derive(Serialize, JsonSchema)]
pub struct WebhookConfig {
    /// `json` or `form`.
    pub content_type: String,
    /// `0` or `1`.
    pub insecure_ssl: String,
    /// `********` when a secret is set; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub secret: Option<&'static str>,
    pub url: Uri,
}

pub fn webhook_config(h: &Hook) -> WebhookConfig {
    WebhookConfig {
        content_type: h.content_type.clone(),
        insecure_ssl: h.insecure_ssl.clone(),
        secret: h.secret_enc.as_ref().map(|_| "********"),
        url: Uri(h.url.clone()),
    }
}

/// OrgHook: an organization webhook.
#[derive(Serialize, JsonSchema)]
pub struct OrgHook {
    #[serde(flatten)]
    pub hook: HookBase,
    pub url: Uri,
    pub ping_url: Uri,
    pub deliveries_url: Uri,
}

/// A hook's own fields, without its API URLs: what `meta` `deleted` shows of the hook.
#[derive(Serialize, JsonSchema)]
pub struct HookBase {
    /// Always `Organization`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: i64,
    /// Always `web`.
    pub name: String,
    pub active: bool,
    pub events: Vec<String>,
    pub config: WebhookConfig,
    pub updated_at: Timestamp,
    pub created_at: Timestamp,
}

/// The hook's own fields as they are now.
pub fn hook_base(h: &Hook) -> HookBase {
    HookBase {
        kind: "Organization",
        id: h.id,
        name: h.name.clone(),
        active: h.active,
        events: h.events.clone(),
        config: webhook_config(h),
        updated_at: Timestamp(h.updated_at),
        created_at: Timestamp(h.created_at),
    }
}

pub fn org_hook(u: &Urls, org: &Account, h: &Hook) -> OrgHook {
    let base = format!("{}/orgs/{}/hooks/{}", u.api, org.login, h.id);
    OrgHook {
        hook: hook_base(h),
        ping_url: Uri(format!("{base}/pings")),
        deliveries_url: Uri(format!("{base}/deliveries")),
        url: Uri(base),
    }
}

/// The `ping` a hook's creation and `POST …/pings` send.
pub fn ping_payload(u: &Urls, org: &Account, h: &Hook, sender: &Account) -> Payload<Body> {
    let last_response = LastResponse {
        code: h.last_code,
        status: h.last_status.clone().unwrap_or_else(|| "unused".into()),
        message: h.last_message.clone(),
    };
    let ping = Ping { zen: "Keep it logically awesome.", hook_id: h.id, hook: PingHook { hook: org_hook(u, org, h), last_response } };
    Payload {
        body: Body::Ping(ping),
        repository: None,
        organization: organization_simple(u, org),
        sender: shapes::simple_user(u, sender),
        installation: None,
    }
}

/// The `meta` `deleted` a hook's deletion sends to the hook itself: the hook as it was.
pub fn meta_deleted_payload(u: &Urls, org: &Account, h: &Hook, sender: &Account) -> Payload<Body> {
    let hook = hook_base(h);
    Payload {
        body: Body::Meta(Meta { action: "deleted", hook_id: h.id, hook }),
        repository: None,
        organization: organization_simple(u, org),
        sender: shapes::simple_user(u, sender),
        installation: None,
    }
}

/// Queues a delivery of `payload` to `hook`, due now. Only what `published` lists is sent.
pub fn enqueue(
    c: &mut dyn Conn,
    hook: &Hook,
    event: &str,
    action: Option<&str>,
    payload: &impl Serialize,
    repo_id: Option<i64>,
    now: i64,
) -> Result<i64, DbError> {
    debug_assert!(published::is_published(event, action), "{event} {action:?} is not in published::EVENTS");
    let text = serde_json::to_string(payload).expect("webhook payloads are plain data");
    let g = guid();
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    let d = NewDelivery {
        guid: &g,
        hook_id: hook.id,
        event,
        action,
        payload: &text,
        redelivery: false,
        installation_id: None,
        repository_id: repo_id,
        activity_at_ms: Some(now_ms),
    };
    hooks::enqueue(c, &d, now)
}

// ---------------------------------------------------------------------------------------------
// The activity consumer.

pub struct WebhookConsumer {
    pub urls: Urls,
}

/// The webhook events a record is sent as: a deleted branch or tag is also a `push`
/// (`deleted: true`), as hosted.
fn event_names(r: &Record) -> &'static [&'static str] {
    match r {
        Record::Push(_) => &["push"],
        Record::Create(_) => &["create"],
        // Starring: `watch` `started` and `star` `created`, as hosted.
        Record::Watch(_) => &["watch", "star"],
        Record::Unstar(_) => &["star"],
        Record::Public(_) => &["public"],
        Record::Status(_) => &["status"],
        Record::Delete(_) => &["delete", "push"],
        Record::WorkflowRun(_) => &["workflow_run"],
        Record::WorkflowJob(_) => &["workflow_job"],
        Record::DepbotAlert(_) => &["depbot_alert"],
        Record::RepositoryImport(_) => &["repository_import"],
        Record::Repository(_) => &["repository"],
        // Deployments of reviewed runs, and ruleset changes.
        Record::Deployment(_) => &["deployment"],
        Record::DeploymentStatus(_) => &["deployment_status"],
        Record::RepositoryRuleset(_) => &["repository_ruleset"],
        // Organization-level records.
        Record::Team(_) => &["team"],
        Record::Membership(_) => &["membership"],
        Record::Organization(_) => &["organization"],
    }
}

/// A delivery's payload and its action.
type Made = (Payload<Body>, Option<&'static str>);

impl WebhookConsumer {
    /// The payload of `event` for activity `a` (read as `r`), with its action; `None` when the
    /// record makes no such delivery.
    fn payload(&self, c: &mut dyn Conn, a: &Activity, r: &Record, event: &str, org: &Account) -> Result<Option<Made>, DbError> {
        let u = &self.urls;
        let repo: Option<Repo> = match a.repo_id {
            Some(id) => repos::by_id(c, id)?,
            None => None,
        };
        let actor = match a.actor_id {
            Some(id) => accounts::by_id(c, id)?,
            None => None,
        };
        let who = actor.as_ref().unwrap_or(org);
        let mut repository = repo.as_ref().map(|r| RepositoryField::Now(Box::new(payloads::repository(u, r))));
        let mut action = None;
        let body = match (event, r.clone()) {
            ("push", _) => {
                let pusher = Pusher { name: who.login.clone(), email: actor.as_ref().and_then(|x| x.email.clone()) };
                match effects::push_webhook(u, repo.as_ref(), r, pusher) {
                    Some(body) => Body::Push(Box::new(body)),
                    None => return Ok(None),
                }
            }
            (_, Record::Delete(d)) => Body::Delete(Delete { name: d.name, ref_type: d.ref_type, pusher_type: d.pusher_type }),
            (_, Record::Create(k)) => {
                let Some(name) = k.name else { return Ok(None) };
                Body::Create(Create {
                    name,
                    ref_type: k.ref_type,
                    master_branch: k.master_branch,
                    description: k.description,
                    pusher_type: k.pusher_type,
                })
            }
            (_, Record::Status(st)) => {
                let Some(r) = repo.as_ref() else { return Ok(None) };
                let known = crate::ops::git::known(c, r.id, &st.sha)?;
                let commit = crate::ops::git::commit(u, r, &st.sha, &known);
                Body::Status(Box::new(Status {
                    id: st.id,
                    name: r.full_name(),
                    target_url: st.target_url,
                    context: st.context,
                    description: st.description,
                    state: st.state,
                    commit: commit.into(),
                    branches: Vec::new(),
                    created_at: Timestamp(a.created_at),
                    updated_at: Timestamp(a.created_at),
                    sha: st.sha,
                }))
            }
            ("watch", Record::Watch(_)) => {
                action = Some("started");
                Body::Action(payloads::Action { action: "started" })
            }
            ("star", Record::Watch(_)) => {
                action = Some("created");
                Body::Star(Star { action: "created", starred_at: Some(Timestamp(a.created_at)) })
            }
            (_, Record::Unstar(_)) => {
                action = Some("deleted");
                Body::Star(Star { action: "deleted", starred_at: None })
            }
            (_, Record::Public(_)) => Body::Public(Public {}),
            (_, Record::WorkflowRun(w)) => {
                action = published::action(event, &w.action);
                Body::WorkflowRun(w)
            }
            // Alerts the control plane creates already fixed or auto-dismissed (history) send none.
            (_, Record::DepbotAlert(d)) => {
                if d.action == "created" && d.state != "open" {
                    return Ok(None);
                }
                action = published::action(event, &d.action);
                Body::DepbotAlert(payloads::DepbotAlertBody { action: d.action, alert: d.alert })
            }
            (_, Record::WorkflowJob(j)) => {
                action = published::action(event, &j.action);
                Body::WorkflowJob(j)
            }
            // The repository as it was when the event happened (a deleted one is gone now).
            (_, Record::Repository(r)) => {
                action = published::action(event, &r.action);
                repository = Some(RepositoryField::Recorded(r.repository));
                Body::Repository(RepositoryBody { action: r.action, changes: r.changes })
            }
            (_, Record::RepositoryImport(i)) => Body::RepositoryImport(RepositoryImport { status: i.status }),
            // Deployments of reviewed runs (`deployment_events`) and ruleset changes
            // (`ruleset_events`); an organization's ruleset names no repository.
            (_, Record::Deployment(d)) => {
                action = Some("created");
                Body::Deployment(DeploymentBody { action: "created", activity: d })
            }
            (_, Record::DeploymentStatus(d)) => {
                action = Some("created");
                Body::DeploymentStatus(DeploymentBody { action: "created", activity: d })
            }
            (_, Record::RepositoryRuleset(r)) => {
                action = published::action(event, &r.action);
                Body::RepositoryRuleset(r)
            }
            (_, Record::Team(_) | Record::Membership(_) | Record::Organization(_)) => {
                let Some((b, act)) = super::org_events::body(c, u, org, r)? else { return Ok(None) };
                action = Some(act);
                Body::Org(b)
            }
            (_, Record::Push(_) | Record::Watch(_)) => return Ok(None),
        };
        // A record whose action is not one the event is published with sends nothing.
        if !published::is_published(event, action) {
            return Ok(None);
        }
        let payload = Payload {
            body,
            repository,
            organization: organization_simple(u, org),
            sender: shapes::simple_user(u, who),
            installation: None,
        };
        Ok(Some((payload, action)))
    }
}

impl Consumer for WebhookConsumer {
    fn name(&self) -> &'static str {
        "webhooks"
    }

    fn handle(&self, c: &mut dyn Conn, batch: &[Activity], now: i64) -> Result<(), ApiError> {
        let mut org_hooks: HashMap<i64, (Option<Account>, Vec<Hook>)> = HashMap::new();
        for a in batch {
            let Some(org_id) = a.org_id else { continue };
            let Some(record) = Record::read(&a.kind, &a.payload) else { continue };
            for &event in event_names(&record) {
                if let std::collections::hash_map::Entry::Vacant(e) = org_hooks.entry(org_id) {
                    let list = hooks::active_for_org(c, org_id)?;
                    let org = if list.is_empty() { None } else { accounts::by_id(c, org_id)? };
                    e.insert((org, list));
                }
                let (org, list) = &org_hooks[&org_id];
                let Some(org) = org.clone() else { continue };
                let targets: Vec<Hook> = list.iter().filter(|h| h.wants(event)).cloned().collect();
                if targets.is_empty() {
                    continue;
                }
                let Some((payload, action)) = self.payload(c, a, &record, event, &org)? else { continue };
                for h in &targets {
                    enqueue(c, h, event, action, &payload, a.repo_id, now)?;
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The sender.

struct Sender {
    state: Shared,
    key: Vec<u8>,
    allow: Arc<AllowList>,
    client: reqwest::Client,
    insecure: reqwest::Client,
    user_agent: String,
}

fn client(allow: &Arc<AllowList>, insecure: bool) -> reqwest::Client {
    reqwest::Client::builder()
        .use_rustls_tls()
        .dns_resolver(Arc::new(GuardResolver::new(allow.clone())))
        .danger_accept_invalid_certs(insecure)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(TIMEOUT)
        .pool_max_idle_per_host(256)
        .build()
        .expect("webhook HTTP client")
}

/// Starts the sender: claims due deliveries (waking on every local write and every finished
/// delivery, and polling for retries and other nodes), sends them concurrently, records each
/// attempt. Stopped, it lets the deliveries in flight finish and be recorded; one cut off is
/// sent again once its lease runs out.
pub fn start_sender(workers: &mut Workers, state: &Shared) {
    let allow = match AllowList::parse(state.config.webhooks.allowed_hosts()) {
        Ok(a) => Arc::new(a),
        Err(e) => {
            tracing::error!(error = %e, "webhook allow-list invalid; internal targets are all refused");
            Arc::new(AllowList::default())
        }
    };
    let worker = Worker { name: "webhook sender".into(), poll: Duration::from_millis(250), on_writes: true };
    workers.start(worker, Sending { state: state.clone(), allow, sender: None, in_flight: JoinSet::new() });
}

struct Sending {
    state: Shared,
    allow: Arc<AllowList>,
    /// Built on the first pass that reaches the database (it holds the secrets' key).
    sender: Option<Arc<Sender>>,
    /// Deliveries being sent, at most `concurrency`.
    in_flight: JoinSet<()>,
}

impl Sending {
    async fn sender(&mut self) -> Result<Arc<Sender>, ApiError> {
        if let Some(s) = &self.sender {
            return Ok(s.clone());
        }
        let sk = self.state.config.secret_key;
        // One node: claims left by a crash are nobody's.
        let single = self.state.store.backend() == Backend::Sqlite;
        let key = self
            .state
            .store
            .write(move |c| -> Result<Vec<u8>, DbError> {
                if single {
                    hooks::release_claims(c)?;
                }
                secrets::server_key(c, &sk)
            })
            .await?;
        let sender = Arc::new(Sender {
            client: client(&self.allow, false),
            insecure: client(&self.allow, true),
            user_agent: user_agent(),
            state: self.state.clone(),
            key,
            allow: self.allow.clone(),
        });
        self.sender = Some(sender.clone());
        Ok(sender)
    }
}

impl Work for Sending {
    async fn pass(&mut self) -> Result<Next, crate::worker::WorkError> {
        let sender = self.sender().await?;
        while self.in_flight.try_join_next().is_some() {}
        let concurrency = self.state.config.webhooks.concurrency.max(1);
        let free = concurrency.saturating_sub(self.in_flight.len());
        if free == 0 {
            return Ok(Next::Wait);
        }
        let batch = claim(&self.state, self.state.clock.now(), free.min(512) as i64).await?;
        let claimed = batch.len();
        for (d, h) in batch {
            let s = sender.clone();
            self.in_flight.spawn(async move { s.attempt(d, h).await });
        }
        Ok(if claimed > 0 && self.in_flight.len() < concurrency { Next::Again } else { Next::Wait })
    }

    /// A delivery finished: its slot is free.
    async fn woken(&mut self) {
        match self.in_flight.join_next().await {
            Some(_) => {}
            None => std::future::pending().await,
        }
    }

    async fn stop(mut self) {
        while self.in_flight.join_next().await.is_some() {}
    }
}

// Claiming deliveries changes no access.
#[allow(clippy::disallowed_methods)]
async fn claim(state: &Shared, now: i64, limit: i64) -> Result<Vec<(Delivery, Hook)>, DbError> {
    if !state.store.read(move |c| hooks::any_due(c, now)).await? {
        return Ok(Vec::new());
    }
    state.store.write_content(move |c| hooks::claim(c, now, now + LEASE_SECONDS, limit)).await
}

struct Outcome {
    state: &'static str,
    status: String,
    status_code: i64,
    response_headers: Value,
    response_body: Option<String>,
    success: bool,
    retryable: bool,
}

impl Outcome {
    fn failed(status: String, retryable: bool, state: &'static str) -> Outcome {
        Outcome { state, status, status_code: 0, response_headers: json!({}), response_body: None, success: false, retryable }
    }
}

impl Sender {
    async fn attempt(&self, d: Delivery, hook: Hook) {
        let secret = hook.secret_enc.as_deref().and_then(|s| secrets::decrypt(&self.key, s)).and_then(|b| String::from_utf8(b).ok());
        let (body, content_type) = if hook.content_type == "json" {
            (d.payload.clone().into_bytes(), "application/json")
        } else {
            (format!("payload={}", form_encode(&d.payload)).into_bytes(), "application/x-www-form-urlencoded")
        };
        let mut headers: Vec<(&str, String)> = vec![
            ("Accept", "*/*".into()),
            ("content-type", content_type.into()),
            ("User-Agent", self.user_agent.clone()),
            ("X-Service-Delivery", d.guid.clone()),
            ("X-Service-Event", d.event.clone()),
            ("X-Service-Hook-ID", hook.id.to_string()),
            ("X-Service-Hook-Installation-Target-ID", hook.org_id.to_string()),
            ("X-Service-Hook-Installation-Target-Type", "organization".into()),
        ];
        if let Some(s) = &secret {
            headers.push(("X-Service-Signature", sign_sha1(s, &body)));
            headers.push(("X-Service-Signature-256", sign_sha256(s, &body)));
        }
        let request_headers: Map<String, Value> = headers.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        let started = Instant::now();
        let outcome = if body.len() > MAX_PAYLOAD_BYTES {
            Outcome::failed(format!("payload too large: {} bytes (the maximum is 25 MB); not delivered", body.len()), false, "failed")
        } else {
            self.send(&hook, &headers, body).await
        };
        let duration_ms = started.elapsed().as_millis() as i64;
        let now = self.state.clock.now();
        let settings = &self.state.config.webhooks;
        let (state, next) = if !outcome.success && outcome.retryable && (d.attempts as u32) < settings.retries {
            let delay = BACKOFF[(d.attempts as usize).min(BACKOFF.len() - 1)];
            ("pending", now + delay)
        } else {
            (outcome.state, now)
        };
        let disable_after = settings.disable_after as i64;
        let rh = Value::Object(request_headers).to_string();
        let resp_h = outcome.response_headers.to_string();
        let url = hook.url.clone();
        let success = outcome.success;
        // An attempt's outcome changes no access.
        #[allow(clippy::disallowed_methods)]
        let r = self
            .state
            .store
            .write_content(move |c| {
                let a = Attempt {
                    state,
                    next_attempt_at: next,
                    url: &url,
                    status: &outcome.status,
                    status_code: outcome.status_code,
                    duration_ms,
                    request_headers: &rh,
                    request_body: None,
                    response_headers: &resp_h,
                    response_body: outcome.response_body.as_deref(),
                    delivered_at: now,
                };
                hooks::record_attempt(c, &d, &a, success, disable_after)
            })
            .await;
        match r {
            Ok(true) => tracing::info!(hook = hook.id, "webhook disabled after consecutive failed deliveries"),
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e.message, "webhook sender: recording an attempt failed (the delivery will be retried after its lease)")
            }
        }
    }

    async fn send(&self, hook: &Hook, headers: &[(&str, String)], body: Vec<u8>) -> Outcome {
        let url = match reqwest::Url::parse(&hook.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => return Outcome::failed("invalid URL".into(), false, "failed"),
        };
        // Literal addresses never reach the resolver: check them here.
        let literal = url.host_str().and_then(|h| h.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok());
        if let Some(ip) = literal {
            if !self.allow.ip_allowed(ip) {
                return Outcome::failed(refusal(&ip.to_string(), ip), false, "refused");
            }
        }
        let client = if hook.insecure_ssl == "1" { &self.insecure } else { &self.client };
        let mut req = client.post(url);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let sent = tokio::time::timeout(TIMEOUT, async {
            let resp = req.body(body).send().await?;
            let code = resp.status();
            let rh: Map<String, Value> =
                resp.headers().iter().map(|(k, v)| (k.as_str().to_string(), json!(v.to_str().unwrap_or("")))).collect();
            let mut resp = resp;
            let mut buf = Vec::new();
            while let Some(chunk) = resp.chunk().await? {
                if buf.len() < MAX_RECORDED_RESPONSE {
                    buf.extend_from_slice(&chunk[..chunk.len().min(MAX_RECORDED_RESPONSE - buf.len())]);
                }
            }
            Ok::<_, reqwest::Error>((code, rh, buf))
        })
        .await;
        match sent {
            Err(_) => Outcome::failed("timed out".into(), true, "failed"),
            Ok(Err(e)) => {
                if let Some(r) = find_refused(&e) {
                    return Outcome::failed(r, false, "refused");
                }
                let msg = if e.is_timeout() {
                    "timed out".to_string()
                } else if e.is_connect() {
                    "failed to connect".to_string()
                } else {
                    format!("request failed: {e}")
                };
                Outcome::failed(msg, true, "failed")
            }
            Ok(Ok((code, rh, buf))) => {
                let ok = (200..400).contains(&code.as_u16());
                let status = if ok {
                    code.canonical_reason().unwrap_or("OK").to_string()
                } else {
                    format!("Invalid HTTP Response: {}", code.as_u16())
                };
                Outcome {
                    state: if ok { "delivered" } else { "failed" },
                    status,
                    status_code: code.as_u16() as i64,
                    response_headers: Value::Object(rh),
                    response_body: Some(String::from_utf8_lossy(&buf).into_owned()),
                    success: ok,
                    retryable: !ok,
                }
            }
        }
    }
}

/// `application/x-www-form-urlencoded` encoding of a value.
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn signatures() {
        // Known HMAC-SHA256 vector (key "key", message "The quick brown fox jumps over the lazy dog").
        let m = b"The quick brown fox jumps over the lazy dog";
        assert_eq!(sign_sha256("key", m), "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
        assert_eq!(sign_sha1("key", m), "sha1=de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9");
        assert_eq!(form_encode("{\"a\": 1}"), "%7B%22a%22%3A+1%7D");
        assert_eq!(guid().len(), 36);
    }
}
