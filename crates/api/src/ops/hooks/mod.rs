//! Organization webhooks (document 3): hooks, their configuration, deliveries, redelivery and
//! ping. Organization owners only; `admin:org_hook` for scope tokens, the Webhooks
//! (organization) permission otherwise. An OAuth application sees only the hooks it created;
//! users may not modify hooks OAuth applications created.
pub mod activity;
pub mod deliveries;
pub mod deployment_events;
pub mod org_events;
pub mod payloads;
pub mod published;
pub mod ruleset_events;

use axum::http::StatusCode;
use platform_store::domain::accounts::Account;
use platform_store::domain::hooks::{self, Delivery, Hook, HookFields, NewDelivery};
use platform_store::DbError;
use schemars::{JsonSchema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::input::{by_handler, checked_by_handler, present};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{encode_query, percent_encode, Body, BodyValue, Ctx, OrgCaller, Pagination, Query};
use crate::secrets;
use crate::typed::Timestamp;
use deliveries::{org_hook, webhook_config, OrgHook, WebhookConfig};

const SCOPES: &[&str] = &["admin:org_hook"];
const PERMISSION: &str = "organization_hooks";

const fn access(level: Level) -> Access {
    Access::token(SCOPES, Some((PERMISSION, level)), level)
}
const READ: Access = access(Level::Read);
const WRITE: Access = access(Level::Write);

pub static LIST: Operation = Operation::get("org-hooks/list", "/orgs/{org}/hooks", "List organization webhooks")
    .docs("https://docs.service.example/rest/orgs/webhooks#list-organization-webhooks")
    .access(READ)
    .on(On::OrgOwner)
    .responds(&[Resp::typed::<Vec<OrgHook>>(200, "The organization's webhooks.").with_headers(&["Link"])]);

pub static CREATE: Operation = Operation::post("org-hooks/create", "/orgs/{org}/hooks", "Create an organization webhook")
    .docs("https://docs.service.example/rest/orgs/webhooks#create-an-organization-webhook")
    .access(WRITE)
    .on(On::OrgOwner)
    .resource("Hook")
    .responds(&[Resp::typed::<OrgHook>(201, "The webhook was created (and a `ping` delivery queued).").with_headers(&["Location"])]);

pub static GET: Operation = Operation::get("org-hooks/get", "/orgs/{org}/hooks/{hook_id}", "Get an organization webhook")
    .docs("https://docs.service.example/rest/orgs/webhooks#get-an-organization-webhook")
    .access(READ)
    .on(On::OrgOwner)
    .responds(&[Resp::typed::<OrgHook>(200, "The webhook.")]);

pub static UPDATE: Operation = Operation::patch("org-hooks/update", "/orgs/{org}/hooks/{hook_id}", "Update an organization webhook")
    .docs("https://docs.service.example/rest/orgs/webhooks#update-an-organization-webhook")
    .access(WRITE)
    .on(On::OrgOwner)
    .resource("Hook")
    .responds(&[Resp::typed::<OrgHook>(200, "The updated webhook. The secret is replaced: one not sent is removed.")]);

pub static DELETE: Operation = Operation::delete("org-hooks/delete", "/orgs/{org}/hooks/{hook_id}", "Delete an organization webhook")
    .docs("https://docs.service.example/rest/orgs/webhooks#delete-an-organization-webhook")
    .access(WRITE)
    .on(On::OrgOwner)
    .responds(&[Resp::empty(204, "The webhook and its deliveries were deleted.")]);

pub static GET_CONFIG: Operation =
    Operation::get("org-hooks/get-config", "/orgs/{org}/hooks/{hook_id}/config", "Get a webhook configuration for an organization")
        .docs("https://docs.service.example/rest/orgs/webhooks#get-a-webhook-configuration-for-an-organization")
        .access(READ)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<WebhookConfig>(200, "The configuration (the secret masked).")]);

pub static UPDATE_CONFIG: Operation =
    Operation::patch("org-hooks/update-config", "/orgs/{org}/hooks/{hook_id}/config", "Update a webhook configuration for an organization")
        .docs("https://docs.service.example/rest/orgs/webhooks#update-a-webhook-configuration-for-an-organization")
        .access(WRITE)
        .on(On::OrgOwner)
        .resource("Hook")
        .responds(&[Resp::typed::<WebhookConfig>(200, "The updated configuration (the secret masked).")]);

#[derive(Deserialize, JsonSchema)]
struct DeliveryQuery {
    /// Results per page (max 100).
    per_page: Option<i64>,
    /// Starting point of the page, from a `Link` header.
    cursor: Option<String>,
    /// `success`: status code 200–399; `failure`: any other.
    #[schemars(extend("enum" = ["success", "failure"]), transform = checked_by_handler)]
    status: Option<String>,
}

pub static LIST_DELIVERIES: Operation =
    Operation::get("org-hooks/list-deliveries", "/orgs/{org}/hooks/{hook_id}/deliveries", "List deliveries for an organization webhook")
        .docs("https://docs.service.example/rest/orgs/webhooks#list-deliveries-for-an-organization-webhook")
        .access(READ)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<Vec<HookDeliveryItem>>(200, "Deliveries, newest first (cursor pagination).").with_headers(&["Link"])]);

pub static GET_DELIVERY: Operation = Operation::get(
    "org-hooks/get-delivery",
    "/orgs/{org}/hooks/{hook_id}/deliveries/{delivery_id}",
    "Get a webhook delivery for an organization webhook",
)
.docs("https://docs.service.example/rest/orgs/webhooks#get-a-webhook-delivery-for-an-organization-webhook")
.access(READ)
.on(On::OrgOwner)
.responds(&[Resp::typed::<HookDelivery>(200, "The delivery with its request and response.")]);

pub static REDELIVER: Operation = Operation::post(
    "org-hooks/redeliver",
    "/orgs/{org}/hooks/{hook_id}/deliveries/{delivery_id}/attempts",
    "Redeliver a delivery for an organization webhook",
)
.docs("https://docs.service.example/rest/orgs/webhooks#redeliver-a-delivery-for-an-organization-webhook")
.access(WRITE)
.on(On::OrgOwner)
.responds(&[Resp::typed::<crate::shapes::Empty>(202, "A redelivery was queued.")]);

pub static PING: Operation = Operation::post("org-hooks/ping", "/orgs/{org}/hooks/{hook_id}/pings", "Ping an organization webhook")
    .docs("https://docs.service.example/rest/orgs/webhooks#ping-an-organization-webhook")
    .access(WRITE)
    .on(On::OrgOwner)
    .responds(&[Resp::empty(204, "A `ping` delivery was queued.")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list)
        .op(&CREATE, create)
        .op(&GET, get)
        .op(&UPDATE, update)
        .op(&DELETE, delete)
        .op(&GET_CONFIG, get_config)
        .op(&UPDATE_CONFIG, update_config)
        .op(&LIST_DELIVERIES, list_deliveries)
        .op(&GET_DELIVERY, get_delivery)
        .op(&REDELIVER, redeliver)
        .op(&PING, ping)
}

/// Target URLs: http(s) with a host name.
macro_rules! url_schema {
    () => {
        r#"{"type": "string", "format": "uri", "pattern": "^https?://[a-z][a-z0-9]{0,20}(\\.[a-z][a-z0-9]{0,20}){0,3}(:[1-9][0-9]{0,3})?(/[a-z0-9]{0,20})?$"}"#
    };
}
/// `insecure_ssl`: 0 or 1, as a string or a number.
macro_rules! insecure_ssl {
    () => {
        r#"{"anyOf": [{"type": "string", "enum": ["0", "1"]}, {"type": "number", "enum": [0, 1]}]}"#
    };
}
macro_rules! config_props {
    () => {
        concat!(
            r#""url": "#,
            url_schema!(),
            r#", "content_type": {"type": "string", "enum": ["json", "form"]}, "#,
            r#""secret": {"type": "string"}, "insecure_ssl": "#,
            insecure_ssl!()
        )
    };
}
const CONFIG_CREATE: &str = concat!(r#"{"type": "object", "required": ["url"], "properties": {"#, config_props!(), r#"}}"#);
const CONFIG_UPDATE: &str = concat!(r#"{"type": "object", "properties": {"#, config_props!(), r#"}}"#);
const EVENTS: &str = r#"{"type": "array", "items": {"type": "string", "minLength": 1}}"#;

fn config_create(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(CONFIG_CREATE)
}
fn config_update(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(CONFIG_UPDATE)
}
fn events_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(EVENTS)
}
fn url_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(url_schema!())
}
fn insecure_ssl_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler(insecure_ssl!())
}

#[derive(Deserialize, JsonSchema)]
struct CreateHook {
    #[schemars(extend("enum" = ["web"]))]
    name: String,
    #[schemars(schema_with = "config_create")]
    config: Value,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "events_schema")]
    events: Option<Value>,
    active: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct UpdateHook {
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "config_update")]
    config: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "events_schema")]
    events: Option<Value>,
    active: Option<bool>,
    #[schemars(extend("enum" = ["web"]))]
    name: Option<String>,
}

// A configuration update; a hook body's nested `config` is read as one too (`nested_config`),
// so both answer the same messages.
#[derive(Deserialize, JsonSchema)]
struct UpdateHookConfig {
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "url_schema")]
    url: Option<Value>,
    #[schemars(extend("enum" = ["json", "form"]))]
    content_type: Option<String>,
    secret: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "insecure_ssl_schema")]
    insecure_ssl: Option<Value>,
}

fn invalid(field: &str, code: &str, message: Option<String>) -> ApiError {
    ApiError::invalid_field("Hook", field, code, message)
}

/// A validated configuration: url, content type, insecure_ssl, and the secret (`None`: absent).
struct Config {
    url: String,
    content_type: String,
    insecure_ssl: String,
    secret: Option<String>,
}

impl Config {
    /// The row's fields: this configuration with the hook's events, state and encrypted secret.
    fn fields<'a>(&'a self, events: &'a [String], active: bool, secret_enc: Option<&'a str>) -> HookFields<'a> {
        HookFields { events, active, url: &self.url, content_type: &self.content_type, insecure_ssl: &self.insecure_ssl, secret_enc }
    }
}

/// A hook body's `config`, which the body's checks let through whatever it is: an object whose
/// string fields are strings (the messages the configuration update's checks answer).
fn nested_config(v: &Value) -> ApiResult<UpdateHookConfig> {
    let Some(obj) = v.as_object() else { return Err(invalid("config", "invalid", None)) };
    for name in ["url", "content_type", "secret"] {
        if let Some(other) = obj.get(name).filter(|v| !v.is_string()) {
            return Err(ApiError::invalid_request(format!("For 'properties/{name}', {other} is not a string.")));
        }
    }
    serde_json::from_value(v.clone()).map_err(ApiError::invalid_request)
}

/// Applies a configuration over `base` (the current values, for partial updates).
fn parse_config(c: UpdateHookConfig, base: Option<&Hook>) -> ApiResult<Config> {
    let url = match (c.url, base) {
        (Some(Value::String(u)), _) => u,
        (Some(other), _) => return Err(ApiError::invalid_request(format!("For 'properties/url', {other} is not a string."))),
        (None, Some(h)) => h.url.clone(),
        (None, None) => return Err(invalid("url", "missing_field", Some("Config must contain a url".into()))),
    };
    let parsed = reqwest::Url::parse(&url).ok().filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    if parsed.is_none() {
        return Err(invalid("url", "invalid", Some(format!("{url} is not a valid URL"))));
    }
    let content_type = match c.content_type {
        Some(c) if c == "json" || c == "form" => c,
        Some(c) => return Err(invalid("content_type", "invalid", Some(format!("{c} is not a valid content type (json or form)")))),
        None => base.map(|h| h.content_type.clone()).unwrap_or_else(|| "form".into()),
    };
    let insecure_ssl = match c.insecure_ssl {
        None => base.map(|h| h.insecure_ssl.clone()).unwrap_or_else(|| "0".into()),
        Some(Value::String(s)) if s == "0" || s == "1" => s,
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) || n.as_f64() == Some(1.0) => {
            if n.as_f64() == Some(1.0) {
                "1".into()
            } else {
                "0".into()
            }
        }
        Some(other) => return Err(invalid("insecure_ssl", "invalid", Some(format!("{other} is not 0 or 1")))),
    };
    let secret = c.secret.filter(|s| !s.is_empty());
    Ok(Config { url, content_type, insecure_ssl, secret })
}

fn parse_events(v: Option<&Value>) -> ApiResult<Vec<String>> {
    let events: Vec<String> = match v {
        None => vec!["push".into()],
        Some(Value::Array(a)) => {
            if !a.iter().all(Value::is_string) {
                return Err(invalid("events", "invalid", Some("events must be an array of strings".into())));
            }
            a.iter().filter_map(|e| e.as_str().map(str::to_string)).collect()
        }
        Some(_) => return Err(invalid("events", "invalid", None)),
    };
    if events.iter().any(|e| e.trim().is_empty()) {
        return Err(invalid("events", "invalid", Some("events must be non-empty names".into())));
    }
    if events.is_empty() {
        return Ok(vec!["push".into()]);
    }
    let mut out: Vec<String> = Vec::new();
    for e in events {
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

fn check_name(v: Option<&str>) -> ApiResult<()> {
    match v {
        None | Some("web") => Ok(()),
        Some(n) => Err(invalid("name", "invalid", Some(format!("{n} is not a valid hook name (only web is supported)")))),
    }
}

/// The `{hook_id}` of the path, 404 when it is not a number.
fn hook_id(ctx: &Ctx, name: &str) -> ApiResult<i64> {
    ctx.param(name).parse::<i64>().map_err(|_| ApiError::not_found())
}

/// Loads a hook the caller may see (an OAuth application only its own).
async fn load(ctx: &Ctx) -> ApiResult<Hook> {
    let caller = ctx.org();
    let id = hook_id(ctx, "hook_id")?;
    let org_id = caller.org.id;
    let hook = ctx.app.store.read(move |c| hooks::by_id(c, org_id, id)).await?.ok_or_else(ApiError::not_found)?;
    if caller.oauth_app.is_some() && hook.created_by_app_id != caller.oauth_app {
        return Err(ApiError::not_found());
    }
    Ok(hook)
}

/// Loads a hook the caller may modify: users may not touch hooks OAuth applications created.
async fn load_mut(ctx: &Ctx) -> ApiResult<Hook> {
    let hook = load(ctx).await?;
    if ctx.org().oauth_app.is_none() && hook.created_by_app_id.is_some() {
        return Err(ApiError::forbidden("This hook was created by an OAuth application; only that application may change it."));
    }
    Ok(hook)
}

fn sender_of(caller: &OrgCaller) -> Account {
    caller.user.clone().unwrap_or_else(|| caller.org.clone())
}

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let caller = ctx.org();
    let page = q.page(30, 100);
    let (org_id, app) = (caller.org.id, caller.oauth_app);
    let (rows, total) = ctx.app.store.read(move |c| hooks::list(c, org_id, app, page.offset(), page.per_page)).await?;
    let body: Vec<OrgHook> = rows.iter().map(|h| org_hook(&ctx.app.urls, &caller.org, h)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn create(ctx: Ctx, body: BodyValue<CreateHook>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let caller = ctx.org();
    // Before the body's checks: a hook without a configuration is a missing field, not a mistyped one.
    if body.value.get("config").is_none() {
        return Err(invalid("config", "missing_field", None));
    }
    let b = body.read()?;
    check_name(Some(&b.name))?;
    let config = parse_config(nested_config(&b.config)?, None)?;
    let events = parse_events(b.events.as_ref())?;
    let active = b.active.unwrap_or(true);
    let (org, app_id, now) = (caller.org.clone(), caller.oauth_app, ctx.app.clock.now());
    let sender = sender_of(caller);
    let urls = ctx.app.urls.clone();
    let hook = ctx
        .write(move |c| -> Result<Hook, DbError> {
            let key = secrets::server_key(c, &sk)?;
            let secret_enc = config.secret.as_deref().map(|s| secrets::encrypt(&key, s.as_bytes()));
            let hook = hooks::create(c, org.id, app_id, &config.fields(&events, active, secret_enc.as_deref()), now)?;
            let payload = deliveries::ping_payload(&urls, &org, &hook, &sender);
            deliveries::enqueue(c, &hook, "ping", None, &payload, None, now)?;
            Ok(hook)
        })
        .await?;
    let body = org_hook(&ctx.app.urls, &caller.org, &hook);
    let location = body.url.0.clone();
    Ok(Reply::created(body).header("location", location))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load(&ctx).await?;
    Ok(Reply::ok(org_hook(&ctx.app.urls, &ctx.org().org, &hook)))
}

/// What a write does with the hook's secret.
enum Secret {
    /// The configuration's secret (or none) replaces the stored one.
    Replace,
    /// The stored one stays, as stored (a configuration update without `secret`).
    Keep,
}

/// What an update makes of the hook.
struct Change {
    config: Config,
    events: Vec<String>,
    active: bool,
    secret: Secret,
}

/// Updates the hook with what `change` makes of it as it is under its row lock, not as read
/// before: two updates at once (on any nodes), one of the URL and one of the events, both stay.
async fn save(ctx: &Ctx, hook: &Hook, change: impl FnOnce(&Hook) -> ApiResult<Change> + Send + 'static) -> ApiResult<Hook> {
    let sk = ctx.app.config.secret_key;
    let (id, org_id, now) = (hook.id, hook.org_id, ctx.app.clock.now());
    ctx.write(move |c| -> ApiResult<Hook> {
        let current = hooks::locked(c, org_id, id)?.ok_or_else(ApiError::not_found)?;
        let Change { config, events, active, secret } = change(&current)?;
        let secret_enc = match (secret, config.secret.as_deref()) {
            (Secret::Keep, _) => current.secret_enc,
            (Secret::Replace, Some(s)) => Some(secrets::encrypt(&secrets::server_key(c, &sk)?, s.as_bytes())),
            (Secret::Replace, None) => None,
        };
        hooks::update(c, id, &config.fields(&events, active, secret_enc.as_deref()), now)?;
        hooks::by_id(c, org_id, id)?.ok_or_else(ApiError::not_found)
    })
    .await
}

async fn update(ctx: Ctx, Body(b): Body<UpdateHook>) -> ApiResult<Reply> {
    let hook = load_mut(&ctx).await?;
    check_name(b.name.as_deref())?;
    let config = b.config.as_ref().map(nested_config).transpose()?;
    let events = parse_events(b.events.as_ref())?;
    let active = b.active.unwrap_or(true);
    let updated = save(&ctx, &hook, move |now| {
        // The secret is replaced by what this update sends: absent, it is removed.
        let config = match config {
            Some(c) => parse_config(c, Some(now))?,
            None => Config {
                url: now.url.clone(),
                content_type: now.content_type.clone(),
                insecure_ssl: now.insecure_ssl.clone(),
                secret: None,
            },
        };
        Ok(Change { config, events, active, secret: Secret::Replace })
    })
    .await?;
    Ok(Reply::ok(org_hook(&ctx.app.urls, &ctx.org().org, &updated)))
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load_mut(&ctx).await?;
    let caller = ctx.org();
    let (org, sender, urls, now) = (caller.org.clone(), sender_of(caller), ctx.app.urls.clone(), ctx.app.clock.now());
    ctx.write(move |c| -> ApiResult<()> {
        // As it is under its row lock: deleted by one request (on any node), `meta` sent once.
        let hook = hooks::locked(c, hook.org_id, hook.id)?.ok_or_else(ApiError::not_found)?;
        // `meta` `deleted` goes to the deleted hook itself, as hosted: the hook row stays (no longer
        // visible) until that delivery is done, so the sender has its URL, secret and content type.
        let last = hook.active && hook.wants("meta");
        hooks::delete(c, hook.id, last, now)?;
        if last {
            let payload = deliveries::meta_deleted_payload(&urls, &org, &hook, &sender);
            deliveries::enqueue(c, &hook, "meta", Some("deleted"), &payload, None, now)?;
        }
        Ok(())
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn get_config(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load(&ctx).await?;
    Ok(Reply::ok(webhook_config(&hook)))
}

async fn update_config(ctx: Ctx, Body(b): Body<UpdateHookConfig>) -> ApiResult<Reply> {
    let hook = load_mut(&ctx).await?;
    // A configuration update without `secret` keeps the stored one.
    let secret = if b.secret.is_none() { Secret::Keep } else { Secret::Replace };
    let updated = save(&ctx, &hook, move |now| {
        Ok(Change { config: parse_config(b, Some(now))?, events: now.events.clone(), active: now.active, secret })
    })
    .await?;
    Ok(Reply::ok(webhook_config(&updated)))
}

/// HookDeliveryItem: a delivery as the list shows it.
#[derive(Serialize, JsonSchema)]
pub struct HookDeliveryItem {
    pub id: i64,
    pub guid: String,
    /// When it was delivered; when it was queued while pending.
    pub delivered_at: Timestamp,
    pub redelivery: bool,
    /// Seconds.
    pub duration: f64,
    /// `pending` until attempted.
    pub status: String,
    pub status_code: i64,
    pub event: String,
    pub action: Option<String>,
    pub installation_id: Option<i64>,
    pub repository_id: Option<i64>,
    /// Deliveries are never throttled: always null.
    pub throttled_at: Option<Timestamp>,
}

/// HookDelivery: a delivery with the request sent and the response received.
#[derive(Serialize, JsonSchema)]
pub struct HookDelivery {
    #[serde(flatten)]
    pub item: HookDeliveryItem,
    /// The URL it was (or will be) sent to.
    pub url: String,
    pub request: DeliveryRequest,
    pub response: DeliveryResponse,
}

/// The request of a delivery: null parts are not recorded (yet).
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct DeliveryRequest {
    #[schemars(with = "Option<Map<String, Value>>")]
    pub headers: Value,
    #[schemars(with = "Option<Map<String, Value>>")]
    pub payload: Value,
}

/// The receiver's response, null parts when there was none.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct DeliveryResponse {
    #[schemars(with = "Option<Map<String, Value>>")]
    pub headers: Value,
    pub payload: Option<String>,
}

fn delivery_item(d: &Delivery) -> HookDeliveryItem {
    HookDeliveryItem {
        id: d.id,
        guid: d.guid.clone(),
        delivered_at: Timestamp(d.delivered_at.unwrap_or(d.created_at)),
        redelivery: d.redelivery,
        duration: d.duration_ms as f64 / 1000.0,
        status: d.status.clone().unwrap_or_else(|| "pending".into()),
        status_code: d.status_code,
        event: d.event.clone(),
        action: d.action.clone(),
        installation_id: d.installation_id,
        repository_id: d.repository_id,
        throttled_at: None,
    }
}

/// A recorded JSON object, null when there is none.
fn parse_obj(s: Option<&str>) -> Value {
    s.and_then(|t| serde_json::from_str::<Value>(t).ok()).unwrap_or(Value::Null)
}

fn delivery_full(d: &Delivery, hook: &Hook) -> HookDelivery {
    HookDelivery {
        item: delivery_item(d),
        url: d.url.clone().unwrap_or_else(|| hook.url.clone()),
        request: DeliveryRequest { headers: parse_obj(d.request_headers.as_deref()), payload: parse_obj(Some(&d.payload)) },
        response: DeliveryResponse { headers: parse_obj(d.response_headers.as_deref()), payload: d.response_body.clone() },
    }
}

const CURSOR_PREFIX: &str = "v1_";

async fn list_deliveries(ctx: Ctx, Query(q): Query<DeliveryQuery>) -> ApiResult<Reply> {
    let hook = load(&ctx).await?;
    let per_page = q.per_page.unwrap_or(30).clamp(1, 100);
    let before = match q.cursor.as_deref() {
        None | Some("") => None,
        Some(c) => {
            Some(c.strip_prefix(CURSOR_PREFIX).and_then(|n| n.parse::<i64>().ok()).ok_or_else(|| ApiError::bad_request("Bad Request"))?)
        }
    };
    let success = match q.status.as_deref() {
        None | Some("") => None,
        Some("success") => Some(true),
        Some("failure") => Some(false),
        Some(other) => {
            return Err(ApiError::invalid_field(
                "HookDelivery",
                "status",
                "invalid",
                Some(format!("{other} is not one of success, failure")),
            ))
        }
    };
    let id = hook.id;
    let mut rows = ctx.app.store.read(move |c| hooks::deliveries(c, id, before, success, per_page + 1)).await?;
    let more = rows.len() as i64 > per_page;
    rows.truncate(per_page as usize);
    let mut reply = Reply::ok(rows.iter().map(delivery_item).collect::<Vec<_>>());
    if more {
        if let Some(last) = rows.last() {
            let mut q: Vec<(String, String)> = ctx.query_pairs().iter().filter(|(k, _)| k != "cursor").cloned().collect();
            q.push(("cursor".into(), format!("{CURSOR_PREFIX}{}", last.id)));
            let next = format!("{}{}?{}", ctx.app.urls.api, ctx.path, encode_query(&q));
            let mut first_q: Vec<String> = ctx
                .query_pairs()
                .iter()
                .filter(|(k, _)| k != "cursor")
                .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
                .collect();
            first_q.sort();
            let first = if first_q.is_empty() {
                format!("{}{}", ctx.app.urls.api, ctx.path)
            } else {
                format!("{}{}?{}", ctx.app.urls.api, ctx.path, first_q.join("&"))
            };
            let link = if before.is_some() {
                format!("<{next}>; rel=\"next\", <{first}>; rel=\"first\"")
            } else {
                format!("<{next}>; rel=\"next\"")
            };
            reply = reply.header("link", link);
        }
    }
    Ok(reply)
}

async fn load_delivery(ctx: &Ctx, hook: &Hook) -> ApiResult<Delivery> {
    let id = hook_id(ctx, "delivery_id")?;
    let hid = hook.id;
    ctx.app.store.read(move |c| hooks::delivery(c, hid, id)).await?.ok_or_else(ApiError::not_found)
}

async fn get_delivery(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load(&ctx).await?;
    let d = load_delivery(&ctx, &hook).await?;
    Ok(Reply::ok(delivery_full(&d, &hook)))
}

async fn redeliver(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load_mut(&ctx).await?;
    let d = load_delivery(&ctx, &hook).await?;
    let now = ctx.app.clock.now();
    ctx.write(move |c| {
        let n = NewDelivery {
            guid: &d.guid,
            hook_id: d.hook_id,
            event: &d.event,
            action: d.action.as_deref(),
            payload: &d.payload,
            redelivery: true,
            installation_id: d.installation_id,
            repository_id: d.repository_id,
            activity_at_ms: None,
        };
        hooks::enqueue(c, &n, now)
    })
    .await?;
    Ok(Reply::json(StatusCode::ACCEPTED, Value::Object(Map::new())))
}

async fn ping(ctx: Ctx) -> ApiResult<Reply> {
    let hook = load_mut(&ctx).await?;
    let caller = ctx.org();
    let (org, sender, urls, now) = (caller.org.clone(), sender_of(caller), ctx.app.urls.clone(), ctx.app.clock.now());
    ctx.write(move |c| {
        let payload = deliveries::ping_payload(&urls, &org, &hook, &sender);
        deliveries::enqueue(c, &hook, "ping", None, &payload, None, now)
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
