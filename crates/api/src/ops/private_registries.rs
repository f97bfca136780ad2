//! Organization private registries (document 2): list, create, public key, get, update, delete.
//! Organization owners; `admin:org` or the Organization private registries permission. Create
//! and update validate every rule of document 2 and api-facts §5.6/5.7: required fields per
//! `auth_type`, a sealed `encrypted_value` with the current `key_id` for the token kinds and none
//! for the OIDC kinds, `selected_repository_ids` only with visibility `selected` (and naming the
//! organization's repositories), and an `auth_type` that never changes.
use axum::http::StatusCode;
use platform_core::pagination::Page;
use platform_store::domain::private_registries::{self as store, Registry};
use platform_store::domain::repos;
use platform_store::{Conn, DbError};
use schemars::{JsonSchema, SchemaGenerator};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::input::{checked_by_handler, Patch, SEALED_VALUE_MAX_CHARS};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::ops::devenv_secrets::PublicKey;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, Query};
use crate::secrets::{self, KeyScope};
use crate::typed::{Timestamp, Uri};

const fn access(level: Level) -> Access {
    Access::token(&["admin:org"], Some(("organization_private_registries", level)), level)
}
const RESOURCE: &str = "PrivateRegistryConfiguration";

pub const REGISTRY_TYPES: &[&str] = &[
    "maven_repository",
    "nuget_feed",
    "goproxy_server",
    "npm_registry",
    "rubygems_server",
    "cargo_registry",
    "composer_repository",
    "docker_registry",
    "git_source",
    "helm_registry",
    "hex_organization",
    "hex_repository",
    "pub_repository",
    "python_index",
    "terraform_registry",
];
pub const AUTH_TYPES: &[&str] =
    &["token", "username_password", "oidc_cloud_a", "oidc_cloud_b", "oidc_artifact_a", "oidc_artifact_b", "oidc_cloud_c"];
const VISIBILITIES: &[&str] = &["all", "private", "selected"];

/// The OIDC fields each auth type requires and allows (api-facts §5.7).
fn oidc_fields(auth_type: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match auth_type {
        "oidc_cloud_a" => (&["tenant_id", "client_id"], &[]),
        "oidc_cloud_b" => (&["cloud_b_region", "account_id", "role_name", "domain", "domain_owner"], &["audience"]),
        "oidc_artifact_a" => (&["artifact_a_oidc_provider_name"], &["audience", "identity_mapping_name"]),
        "oidc_artifact_b" => (&["namespace", "service_slug", "audience"], &["api_host"]),
        "oidc_cloud_c" => (&["workload_identity_provider"], &["service_account", "audience"]),
        _ => (&[], &[]),
    }
}
const OIDC_FIELDS: [&str; 15] = [
    "tenant_id",
    "client_id",
    "cloud_b_region",
    "account_id",
    "role_name",
    "domain",
    "domain_owner",
    "audience",
    "artifact_a_oidc_provider_name",
    "identity_mapping_name",
    "namespace",
    "service_slug",
    "api_host",
    "workload_identity_provider",
    "service_account",
];

#[derive(Deserialize, JsonSchema)]
struct CreateRegistry {
    #[schemars(extend("enum" = REGISTRY_TYPES))]
    registry_type: String,
    url: String,
    #[schemars(extend("enum" = VISIBILITIES))]
    visibility: String,
    #[serde(flatten)]
    rest: RegistryFields,
}

#[derive(Deserialize, JsonSchema)]
struct UpdateRegistry {
    #[schemars(extend("enum" = REGISTRY_TYPES))]
    registry_type: Option<String>,
    url: Option<String>,
    #[schemars(extend("enum" = VISIBILITIES))]
    visibility: Option<String>,
    #[serde(flatten)]
    rest: RegistryFields,
}

/// A create is an update of nothing: [`merge`] reads both alike.
impl From<CreateRegistry> for UpdateRegistry {
    fn from(c: CreateRegistry) -> Self {
        UpdateRegistry { registry_type: Some(c.registry_type), url: Some(c.url), visibility: Some(c.visibility), rest: c.rest }
    }
}

// The fields a create and an update share.
#[derive(Deserialize, JsonSchema)]
struct RegistryFields {
    // `null` (or empty) clears it; absent keeps it.
    #[serde(default)]
    username: Patch<String>,
    replaces_base: Option<bool>,
    #[schemars(length(max = SEALED_VALUE_MAX_CHARS))]
    encrypted_value: Option<String>,
    key_id: Option<String>,
    selected_repository_ids: Option<Vec<i64>>,
    #[schemars(extend("enum" = AUTH_TYPES))]
    auth_type: Option<String>,
    tenant_id: Option<String>,
    client_id: Option<String>,
    cloud_b_region: Option<String>,
    account_id: Option<String>,
    role_name: Option<String>,
    domain: Option<String>,
    domain_owner: Option<String>,
    audience: Option<String>,
    artifact_a_oidc_provider_name: Option<String>,
    identity_mapping_name: Option<String>,
    namespace: Option<String>,
    service_slug: Option<String>,
    api_host: Option<String>,
    workload_identity_provider: Option<String>,
    service_account: Option<String>,
}

impl RegistryFields {
    /// The OIDC fields sent, by name, in the order of [`OIDC_FIELDS`].
    fn oidc(&self) -> [(&'static str, Option<&str>); 15] {
        let f = Option::as_deref;
        let fields = [
            ("tenant_id", f(&self.tenant_id)),
            ("client_id", f(&self.client_id)),
            ("cloud_b_region", f(&self.cloud_b_region)),
            ("account_id", f(&self.account_id)),
            ("role_name", f(&self.role_name)),
            ("domain", f(&self.domain)),
            ("domain_owner", f(&self.domain_owner)),
            ("audience", f(&self.audience)),
            ("artifact_a_oidc_provider_name", f(&self.artifact_a_oidc_provider_name)),
            ("identity_mapping_name", f(&self.identity_mapping_name)),
            ("namespace", f(&self.namespace)),
            ("service_slug", f(&self.service_slug)),
            ("api_host", f(&self.api_host)),
            ("workload_identity_provider", f(&self.workload_identity_provider)),
            ("service_account", f(&self.service_account)),
        ];
        debug_assert!(fields.iter().map(|(n, _)| *n).eq(OIDC_FIELDS));
        fields
    }
}

/// The list's query: its page parameters, checked here (their refusal is the 400 document 2 lists).
#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    /// Results per page (max 100).
    #[schemars(with = "Option<i64>", transform = checked_by_handler)]
    per_page: Option<String>,
    /// Page number of the results to fetch.
    #[schemars(with = "Option<i64>", transform = checked_by_handler)]
    page: Option<String>,
}

pub static LIST: Operation =
    Operation::get("private-registries/list", "/orgs/{org}/private-registries", "List private registries for an organization")
        .docs(
            "https://docs.service.example/rest/private-registries/organization-configurations#list-private-registries-for-an-organization",
        )
        .access(access(Level::Read))
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<RegistryConfigList>(200, "The organization's configurations (never their secret values).")
            .with_headers(&["Link"])]);

pub static CREATE: Operation = Operation::post(
    "private-registries/create",
    "/orgs/{org}/private-registries",
    "Create a private registry for an organization",
)
.docs("https://docs.service.example/rest/private-registries/organization-configurations#create-a-private-registry-for-an-organization")
.access(access(Level::Write))
.on(On::OrgOwner)
.resource(RESOURCE)
.responds(&[Resp::typed::<RegistryConfig>(201, "The configuration, with `selected_repository_ids`.")]);

pub static GET_PUBLIC_KEY: Operation = Operation::get(
    "private-registries/get-public-key",
    "/orgs/{org}/private-registries/public-key",
    "Get private registries public key for an organization",
)
.docs("https://docs.service.example/rest/private-registries/organization-configurations#get-private-registries-public-key-for-an-organization")
.access(access(Level::Read))
.on(On::OrgOwner)
.responds(&[Resp::typed::<PublicKey>(200, "The organization's X25519 public key: seal `encrypted_value` for it.")]);

pub static GET: Operation =
    Operation::get("private-registries/get", "/orgs/{org}/private-registries/{secret_name}", "Get a private registry for an organization")
        .docs("https://docs.service.example/rest/private-registries/organization-configurations#get-a-private-registry-for-an-organization")
        .access(access(Level::Read))
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<RegistryConfig>(200, "The configuration.")]);

pub static UPDATE: Operation = Operation::patch(
    "private-registries/update",
    "/orgs/{org}/private-registries/{secret_name}",
    "Update a private registry for an organization",
)
.docs("https://docs.service.example/rest/private-registries/organization-configurations#update-a-private-registry-for-an-organization")
.access(access(Level::Write))
.on(On::OrgOwner)
.resource(RESOURCE)
.responds(&[Resp::empty(204, "The configuration was updated.")]);

pub static DELETE: Operation = Operation::delete(
    "private-registries/delete",
    "/orgs/{org}/private-registries/{secret_name}",
    "Delete a private registry for an organization",
)
.docs("https://docs.service.example/rest/private-registries/organization-configurations#delete-a-private-registry-for-an-organization")
.access(access(Level::Write))
.on(On::OrgOwner)
.responds(&[Resp::empty(204, "The configuration was deleted.")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&CREATE, create).op(&GET_PUBLIC_KEY, public_key).op(&GET, get).op(&UPDATE, update).op(&DELETE, delete)
}

/// RegistryConfig (api-facts §4.16): a configuration, never its secret value.
#[derive(Serialize, JsonSchema)]
pub struct RegistryConfig {
    pub name: String,
    pub registry_type: String,
    pub auth_type: String,
    pub url: Uri,
    /// Left out of the create response when there is none (not nullable there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<Option<String>>,
    pub replaces_base: bool,
    #[schemars(extend("enum" = ["all", "private", "selected"]))]
    pub visibility: String,
    /// With visibility `selected`, and always in the create response.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<i64>")]
    pub selected_repository_ids: Option<Vec<i64>>,
    #[serde(flatten)]
    pub oidc: OidcFields,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The OIDC fields of the auth type, in the order they were set; each one of [`OIDC_FIELDS`].
pub struct OidcFields(Map<String, Value>);

impl Serialize for OidcFields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl JsonSchema for OidcFields {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OidcFields".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        let props: Map<String, Value> = OIDC_FIELDS.iter().map(|f| (f.to_string(), json!({"type": "string"}))).collect();
        schemars::json_schema!({ "type": "object", "properties": props })
    }
}

/// The organization's configurations, a page of them.
#[derive(Serialize, JsonSchema)]
pub struct RegistryConfigList {
    pub total_count: i64,
    pub configurations: Vec<RegistryConfig>,
}

/// The create response always carries `selected_repository_ids` and leaves out an absent
/// `username`.
fn registry_config(r: &Registry, created: bool) -> RegistryConfig {
    RegistryConfig {
        name: r.name.clone(),
        registry_type: r.registry_type.clone(),
        auth_type: r.auth_type.clone(),
        url: Uri(r.url.clone()),
        username: (!created || r.username.is_some()).then(|| r.username.clone()),
        replaces_base: r.replaces_base,
        visibility: r.visibility.clone(),
        selected_repository_ids: (created || r.visibility == "selected").then(|| r.selected_repository_ids.clone()),
        oidc: OidcFields(r.oidc.clone()),
        created_at: Timestamp(r.created_at),
        updated_at: Timestamp(r.updated_at),
    }
}

fn invalid(field: &str, code: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid_field(RESOURCE, field, code, Some(message.into()))
}

/// A non-empty string field of the body.
fn text(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.trim().is_empty())
}

/// A sealed value to open in the write transaction: `(key_id, encrypted_value)`.
type Sealed = Option<(String, String)>;

/// Applies a create (`base` none) or update body over `base` and checks every rule; the sealed
/// value and the repository ids are checked against the database by [`save`].
fn merge(body: &UpdateRegistry, base: Option<&Registry>, now: i64) -> ApiResult<(Registry, Sealed)> {
    let rest = &body.rest;
    let mut r = base.cloned().unwrap_or_default();
    if let Some(b) = base {
        if rest.auth_type.as_ref().is_some_and(|a| *a != b.auth_type) {
            return Err(invalid("auth_type", "invalid", "auth_type cannot be changed; delete the configuration and create it again."));
        }
    } else {
        r.auth_type = rest.auth_type.clone().unwrap_or_else(|| "token".into());
        r.created_at = now;
    }
    r.updated_at = now;
    if let Some(t) = &body.registry_type {
        r.registry_type = t.clone();
    }
    if let Some(u) = &body.url {
        let ok = reqwest::Url::parse(u).ok().is_some_and(|p| matches!(p.scheme(), "http" | "https") && p.host_str().is_some());
        if !ok {
            return Err(invalid("url", "invalid", format!("{u} is not a valid http or https URL.")));
        }
        r.url = u.clone();
    }
    match &rest.username {
        Patch::Value(s) if !s.is_empty() => r.username = Some(s.clone()),
        Patch::Value(_) | Patch::Null => r.username = None,
        Patch::Absent => {}
    }
    if let Some(b) = rest.replaces_base {
        r.replaces_base = b;
    }
    if let Some(v) = &body.visibility {
        r.visibility = v.clone();
    }
    match &rest.selected_repository_ids {
        Some(_) if r.visibility != "selected" => {
            return Err(invalid(
                "selected_repository_ids",
                "invalid",
                format!("selected_repository_ids is only allowed with visibility selected (the visibility is {}).", r.visibility),
            ))
        }
        Some(ids) => {
            let mut ids = ids.clone();
            ids.sort_unstable();
            ids.dedup();
            r.selected_repository_ids = ids;
        }
        None if r.visibility != "selected" => r.selected_repository_ids.clear(),
        None => {}
    }

    // The secret value: required for the token kinds (kept on update), refused for OIDC.
    let oidc_kind = r.auth_type.starts_with("oidc_");
    let (value, key_id) = (text(&rest.encrypted_value), text(&rest.key_id));
    let sealed = if oidc_kind {
        for (f, sent) in [("encrypted_value", &rest.encrypted_value), ("key_id", &rest.key_id)] {
            if sent.is_some() {
                return Err(invalid(f, "invalid", format!("{f} must be omitted with auth_type {}.", r.auth_type)));
            }
        }
        None
    } else {
        match (value, key_id) {
            (Some(v), Some(k)) => Some((k.to_string(), v.to_string())),
            (None, None) if r.value_enc.is_some() => None,
            (v, _) => {
                let missing = if v.is_none() { "encrypted_value" } else { "key_id" };
                return Err(invalid(
                    missing,
                    "missing_field",
                    format!("encrypted_value and key_id are required with auth_type {}.", r.auth_type),
                ));
            }
        }
    };
    if r.auth_type == "username_password" && r.username.is_none() {
        return Err(invalid("username", "missing_field", "username is required with auth_type username_password."));
    }

    // The OIDC fields: exactly those of the auth type; its required ones present.
    let (required, optional) = oidc_fields(&r.auth_type);
    for (f, v) in rest.oidc() {
        let Some(v) = v else { continue };
        if !required.contains(&f) && !optional.contains(&f) {
            return Err(invalid(f, "invalid", format!("{f} is not used with auth_type {}.", r.auth_type)));
        }
        match Some(v).filter(|s| !s.trim().is_empty()) {
            Some(s) => r.oidc.insert(f.to_string(), json!(s)),
            None => r.oidc.remove(f),
        };
    }
    for f in required {
        if !r.oidc.contains_key(*f) {
            return Err(invalid(f, "missing_field", format!("{f} is required with auth_type {}.", r.auth_type)));
        }
    }
    Ok((r, sealed))
}

/// Opens the sealed value, checks the repository ids against the organization, and writes.
fn save(
    c: &mut dyn Conn,
    sk: &secrets::AtRestKey,
    org_id: i64,
    mut r: Registry,
    sealed: Sealed,
    create: bool,
    now: i64,
) -> ApiResult<Registry> {
    if let Some((key_id, value)) = sealed {
        r.value_enc = Some(secrets::open_sealed(c, sk, KeyScope::Org(org_id), &key_id, &value, now)?.map_err(|e| e.into_error(RESOURCE))?);
    }
    let foreign: Vec<String> = r
        .selected_repository_ids
        .iter()
        .filter_map(|id| match repos::by_id(c, *id) {
            Ok(Some(repo)) if repo.owner.id == org_id => None,
            _ => Some(id.to_string()),
        })
        .collect();
    if !foreign.is_empty() {
        return Err(invalid(
            "selected_repository_ids",
            "invalid",
            format!("Not repositories of the organization: {}.", foreign.join(", ")),
        ));
    }
    if create {
        let stem = format!("{}_SECRET", r.registry_type.to_ascii_uppercase());
        r.name = stem.clone();
        let mut n = 1;
        while store::exists(c, org_id, &r.name)? {
            n += 1;
            r.name = format!("{stem}_{n}");
        }
        store::create(c, org_id, &r)?;
    } else {
        store::update(c, org_id, &r)?;
    }
    Ok(r)
}

/// `{secret_name}`: letters, digits and underscores (case-insensitive, kept upper case).
fn name_of(ctx: &Ctx) -> Option<String> {
    crate::ops::devenv_secrets::secret_name(ctx.param("secret_name"))
}

async fn load(ctx: &Ctx, org_id: i64) -> ApiResult<Registry> {
    let name = name_of(ctx).ok_or_else(ApiError::not_found)?;
    ctx.app.store.read(move |c| store::get(c, org_id, &name)).await?.ok_or_else(ApiError::not_found)
}

async fn list(ctx: Ctx, Query(q): Query<ListQuery>) -> ApiResult<Reply> {
    // A bad page parameter is the 400 document 2 lists for this operation.
    let page = Page::parse(q.page.as_deref(), q.per_page.as_deref(), 30, 100)
        .map_err(|(name, v)| ApiError::bad_request(format!("Invalid request.\n\nFor '{name}', {v:?} is not an integer.")))?;
    let org_id = ctx.org().org.id;
    let (rows, total) = ctx.app.store.read(move |c| store::list(c, org_id, page.offset(), page.per_page)).await?;
    let body = RegistryConfigList { total_count: total, configurations: rows.iter().map(|r| registry_config(r, false)).collect() };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn create(ctx: Ctx, Body(body): Body<CreateRegistry>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let now = ctx.app.clock.now();
    let (r, sealed) = merge(&body.into(), None, now)?;
    let org_id = ctx.org().org.id;
    let r = ctx.write(move |c| save(c, &sk, org_id, r, sealed, true, now)).await?;
    Ok(Reply::created(registry_config(&r, true)))
}

async fn public_key(ctx: Ctx) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let (org_id, now) = (ctx.org().org.id, ctx.app.clock.now());
    let key = ctx.write(move |c| secrets::public_key(c, &sk, KeyScope::Org(org_id), now)).await?;
    Ok(Reply::ok(PublicKey::new(key)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let r = load(&ctx, ctx.org().org.id).await?;
    Ok(Reply::ok(registry_config(&r, false)))
}

async fn update(ctx: Ctx, Body(body): Body<UpdateRegistry>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let org_id = ctx.org().org.id;
    let name = load(&ctx, org_id).await?.name;
    let now = ctx.app.clock.now();
    ctx.write(move |c| {
        // Merged with the configuration as it is under its row lock: two updates of different
        // fields at once (on any nodes) both stay.
        let existing = store::locked(c, org_id, &name)?.ok_or_else(ApiError::not_found)?;
        let (r, sealed) = merge(&body, Some(&existing), now)?;
        save(c, &sk, org_id, r, sealed, false, now)
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    // A name no configuration could have is the 400 document 2 lists for this operation.
    let name = name_of(&ctx).ok_or_else(|| ApiError::bad_request("Bad Request"))?;
    let org_id = ctx.org().org.id;
    if !ctx.write(move |c| -> Result<bool, DbError> { store::delete(c, org_id, &name) }).await? {
        return Err(ApiError::not_found());
    }
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
