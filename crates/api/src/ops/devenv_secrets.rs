//! Repository development-environment secrets (document 2): list, public key, get, create or
//! update, delete. Values arrive as sealed boxes for the repository's public key and are opened
//! on write (invalid base64, a stale `key_id` or a box that does not open are 422), then kept
//! encrypted under the server key; they are never returned or logged. `repo` scope or the Devenv
//! secrets permission (write for every operation); push access to read, admin to change.
use axum::http::{Method, StatusCode};
use platform_store::domain::devenv_secrets::{self as store, Secret};
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::authorize::not_accessible;
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, AuthKind, Body, Derived, Level, Operation, Resp, Traits, PAGINATION};
use crate::principal::Principal;
use crate::principal::Role;
use crate::reply::Reply;
use crate::request::{Ctx, JsonBody};
use crate::routes::Api;
use crate::secrets::{self, KeyScope};
use crate::shape::Timestamp;
use crate::validate::SEALED_VALUE_MAX_CHARS;

const ACCESS: Access = Access {
    auth: AuthKind::Token,
    public: false,
    scopes: &["repo"],
    permission: Some(("devenv_secrets", Level::Write)),
    role: Level::Write,
};
const BASE: &str = "/repos/{owner}/{repo}/devenvs/secrets";

pub static LIST: Operation = Operation {
    id: "devenv-secrets/list",
    method: Method::GET,
    path: BASE,
    summary: "List repository secrets",
    docs: "https://docs.service.example/rest/devenvs/repository-secrets#list-repository-secrets",
    access: ACCESS,
    query: &PAGINATION,
    body: None,
    responses: &[Resp::typed::<DevenvSecretList>(200, "The repository's secrets (names and dates, never values).").with_headers(&["Link"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static GET_PUBLIC_KEY: Operation = Operation {
    id: "devenv-secrets/get-public-key",
    method: Method::GET,
    path: "/repos/{owner}/{repo}/devenvs/secrets/public-key",
    summary: "Get a repository public key",
    docs: "https://docs.service.example/rest/devenvs/repository-secrets#get-a-repository-public-key",
    access: ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::typed::<PublicKey>(200, "The repository's X25519 public key: seal values for it.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static GET: Operation = Operation {
    id: "devenv-secrets/get",
    method: Method::GET,
    path: "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
    summary: "Get a repository secret",
    docs: "https://docs.service.example/rest/devenvs/repository-secrets#get-a-repository-secret",
    access: ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::typed::<DevenvSecret>(200, "The secret's metadata (never its value).")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

#[derive(Deserialize, JsonSchema)]
struct PutSecret {
    #[schemars(length(max = SEALED_VALUE_MAX_CHARS))]
    encrypted_value: String,
    key_id: String,
}

pub static PUT: Operation = Operation {
    id: "devenv-secrets/create-or-update",
    method: Method::PUT,
    path: "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
    summary: "Create or update a repository secret",
    docs: "https://docs.service.example/rest/devenvs/repository-secrets#create-or-update-a-repository-secret",
    access: ACCESS,
    query: &[],
    body: Some(Body::of::<PutSecret>("Secret")),
    responses: &[Resp::typed::<crate::shapes::Empty>(201, "The secret was created."), Resp::empty(204, "The secret's value was replaced.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static DELETE: Operation = Operation {
    id: "devenv-secrets/delete",
    method: Method::DELETE,
    path: "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
    summary: "Delete a repository secret",
    docs: "https://docs.service.example/rest/devenvs/repository-secrets#delete-a-repository-secret",
    access: ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::empty(204, "The secret was deleted.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET_PUBLIC_KEY, public_key).op(&GET, get).op(&PUT, put).op(&DELETE, delete)
}

/// Secret names: letters, digits and underscores, not starting with a digit; case-insensitive
/// (kept upper case).
pub fn secret_name(raw: &str) -> Option<String> {
    let ok = !raw.is_empty()
        && raw.len() <= 255
        && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !raw.as_bytes()[0].is_ascii_digit();
    ok.then(|| raw.to_ascii_uppercase())
}

/// A public key to seal secret values for (repository or organization scope).
#[derive(Serialize, JsonSchema)]
pub struct PublicKey {
    /// The key's id, sent back as `key_id` with a sealed value.
    pub key_id: String,
    /// The X25519 key, base64.
    pub key: String,
}

impl PublicKey {
    pub fn new((key_id, key): (String, String)) -> PublicKey {
        PublicKey { key_id, key }
    }
}

/// A secret's metadata (never its value).
#[derive(Serialize, JsonSchema)]
pub struct DevenvSecret {
    pub name: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Always `all` for repository secrets.
    pub visibility: &'static str,
}

/// A page of secrets and how many there are in all.
#[derive(Serialize, JsonSchema)]
pub struct DevenvSecretList {
    pub total_count: i64,
    pub secrets: Vec<DevenvSecret>,
}

fn devenv_secret(s: &Secret) -> DevenvSecret {
    DevenvSecret { name: s.name.clone(), created_at: Timestamp(s.created_at), updated_at: Timestamp(s.updated_at), visibility: "all" }
}

/// Changing secrets needs a repository admin.
fn require_admin(role: Role) -> ApiResult<()> {
    if role == Role::Admin {
        Ok(())
    } else {
        Err(ApiError::forbidden("Must have admin rights to Repository."))
    }
}

async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().await?;
    let page = ctx.page(30, 100)?;
    let (rows, total) = ctx.app.store.read(move |c| store::list(c, repo.id, page.offset(), page.per_page)).await?;
    let body = DevenvSecretList { total_count: total, secrets: rows.iter().map(devenv_secret).collect() };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn public_key(ctx: Ctx) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    // Not available to app tokens.
    if let Principal::Token(t) = &ctx.principal {
        if t.token.kind.is_integration() {
            return Err(not_accessible(t.token.kind));
        }
    }
    let repo = ctx.repo().await?;
    let now = ctx.app.clock.now();
    let key = ctx.app.store.write(move |c| secrets::public_key(c, &sk, KeyScope::Repo(repo.id), now)).await?;
    Ok(Reply::ok(PublicKey::new(key)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().await?;
    let name = secret_name(ctx.param("secret_name")).ok_or_else(ApiError::not_found)?;
    let s = ctx.app.store.read(move |c| store::get(c, repo.id, &name)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(devenv_secret(&s)))
}

async fn put(ctx: Ctx, JsonBody(body): JsonBody) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let (repo, role) = ctx.repo_role().await?;
    require_admin(role)?;
    let b: PutSecret = ctx.body(body)?;
    let name = secret_name(ctx.param("secret_name")).ok_or_else(|| {
        ApiError::invalid_field(
            "Secret",
            "name",
            "invalid",
            Some("Secret names can only contain letters, digits and underscores, and must not start with a digit.".into()),
        )
    })?;
    let (value, key_id) = (b.encrypted_value, b.key_id);
    let now = ctx.app.clock.now();
    let created = ctx
        .app
        .store
        .write(move |c| -> ApiResult<bool> {
            let enc = secrets::open_sealed(c, &sk, KeyScope::Repo(repo.id), &key_id, &value, now)?.map_err(|e| e.into_error("Secret"))?;
            Ok(store::put(c, repo.id, &name, &enc, now)?)
        })
        .await?;
    Ok(if created { Reply::created(Value::Object(Map::new())) } else { Reply::empty(StatusCode::NO_CONTENT) })
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let (repo, role) = ctx.repo_role().await?;
    require_admin(role)?;
    let name = secret_name(ctx.param("secret_name")).ok_or_else(ApiError::not_found)?;
    if !ctx.app.store.write(move |c| store::delete(c, repo.id, &name)).await? {
        return Err(ApiError::not_found());
    }
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

// ---------------------------------------------------------------------------------------------
// Control plane: `POST /_admin/repos/{owner}/{repo}/devenvs/secrets/{name}/verify` `{value}` →
// 200 `{matches}`: does the stored value equal `value`? The value itself is never returned.

pub async fn admin_verify(
    axum::extract::State(app): axum::extract::State<crate::state::Shared>,
    axum::extract::Path((owner, repo, name)): axum::extract::Path<(String, String, String)>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let sk = app.config.secret_key;
    let value = b.get("value").and_then(Value::as_str).ok_or_else(|| ApiError::invalid_request("\"value\" wasn't supplied."))?.to_string();
    let name = secret_name(&name).ok_or_else(ApiError::not_found)?;
    let matches = app
        .store
        .read(move |c| -> ApiResult<bool> {
            let repo = crate::control::repo(c, &format!("{owner}/{repo}"))?;
            let enc = store::value_enc(c, repo.id, &name)?.ok_or_else(ApiError::not_found)?;
            let key = secrets::server_key(c, &sk)?;
            let plain =
                secrets::decrypt(&key, &enc).ok_or_else(|| ApiError::from(DbError::other("secret not readable with the server key")))?;
            Ok(crate::secrets::constant_time_eq(&plain, value.as_bytes()))
        })
        .await?;
    Ok(Reply::ok(json!({"matches": matches})))
}

/// The control plane's part: checking a secret's value without revealing it.
pub fn control(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    r.route("/repos/{owner}/{repo}/devenvs/secrets/{name}/verify", axum::routing::post(admin_verify))
}
