//! Repository development-environment secrets (document 2): list, public key, get, create or
//! update, delete. Values arrive as sealed boxes for the repository's public key and are opened
//! on write (invalid base64, a stale `key_id` or a box that does not open are 422), then kept
//! encrypted under the server key; they are never returned or logged. `repo` scope or the Devenv
//! secrets permission (write for every operation); push access to read, admin to change.
use axum::http::StatusCode;
use platform_core::TokenKind;
use platform_store::domain::devenv_secrets::{self as store, Secret};
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::input::SEALED_VALUE_MAX_CHARS;
use crate::operation::{Access, Level, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, JsonBody, Pagination, Query};
use crate::secrets::{self, KeyScope};
use crate::typed::Timestamp;

const ACCESS: Access = Access::token(&["repo"], Some(("devenv_secrets", Level::Write)), Level::Write);
const BASE: &str = "/repos/{owner}/{repo}/devenvs/secrets";

pub static LIST: Operation = Operation::get("devenv-secrets/list", BASE, "List repository secrets")
    .docs("https://docs.service.example/rest/devenvs/repository-secrets#list-repository-secrets")
    .access(ACCESS)
    .responds(&[Resp::typed::<DevenvSecretList>(200, "The repository's secrets (names and dates, never values).").with_headers(&["Link"])]);

pub static GET_PUBLIC_KEY: Operation =
    Operation::get("devenv-secrets/get-public-key", "/repos/{owner}/{repo}/devenvs/secrets/public-key", "Get a repository public key")
        .docs("https://docs.service.example/rest/devenvs/repository-secrets#get-a-repository-public-key")
        // Not available to app tokens.
        .access(ACCESS.only(&[TokenKind::Classic, TokenKind::FineGrained, TokenKind::Oauth]))
        .responds(&[Resp::typed::<PublicKey>(200, "The repository's X25519 public key: seal values for it.")]);

pub static GET: Operation =
    Operation::get("devenv-secrets/get", "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}", "Get a repository secret")
        .docs("https://docs.service.example/rest/devenvs/repository-secrets#get-a-repository-secret")
        .access(ACCESS)
        .responds(&[Resp::typed::<DevenvSecret>(200, "The secret's metadata (never its value).")]);

#[derive(Deserialize, JsonSchema)]
struct PutSecret {
    #[schemars(length(max = SEALED_VALUE_MAX_CHARS))]
    encrypted_value: String,
    key_id: String,
}

pub static PUT: Operation = Operation::put(
    "devenv-secrets/create-or-update",
    "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
    "Create or update a repository secret",
)
.docs("https://docs.service.example/rest/devenvs/repository-secrets#create-or-update-a-repository-secret")
.access(ACCESS)
.admin()
.resource("Secret")
.responds(&[Resp::typed::<crate::shapes::Empty>(201, "The secret was created."), Resp::empty(204, "The secret's value was replaced.")]);

pub static DELETE: Operation =
    Operation::delete("devenv-secrets/delete", "/repos/{owner}/{repo}/devenvs/secrets/{secret_name}", "Delete a repository secret")
        .docs("https://docs.service.example/rest/devenvs/repository-secrets#delete-a-repository-secret")
        .access(ACCESS)
        .admin()
        .responds(&[Resp::empty(204, "The secret was deleted.")]);

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

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo().clone();
    let page = q.page(30, 100);
    let (rows, total) = ctx.app.store.read(move |c| store::list(c, repo.id, page.offset(), page.per_page)).await?;
    let body = DevenvSecretList { total_count: total, secrets: rows.iter().map(devenv_secret).collect() };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn public_key(ctx: Ctx) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let (repo_id, now) = (ctx.repo().id, ctx.app.clock.now());
    let key = ctx.write(move |c| secrets::public_key(c, &sk, KeyScope::Repo(repo_id), now)).await?;
    Ok(Reply::ok(PublicKey::new(key)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let repo_id = ctx.repo().id;
    let name = secret_name(ctx.param("secret_name")).ok_or_else(ApiError::not_found)?;
    let s = ctx.app.store.read(move |c| store::get(c, repo_id, &name)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(devenv_secret(&s)))
}

async fn put(ctx: Ctx, Body(b): Body<PutSecret>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let repo_id = ctx.repo().id;
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
        .write(move |c| -> ApiResult<bool> {
            let enc = secrets::open_sealed(c, &sk, KeyScope::Repo(repo_id), &key_id, &value, now)?.map_err(|e| e.into_error("Secret"))?;
            Ok(store::put(c, repo_id, &name, &enc, now)?)
        })
        .await?;
    Ok(if created { Reply::created(Value::Object(Map::new())) } else { Reply::empty(StatusCode::NO_CONTENT) })
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let repo_id = ctx.repo().id;
    let name = secret_name(ctx.param("secret_name")).ok_or_else(ApiError::not_found)?;
    if !ctx.write(move |c| store::delete(c, repo_id, &name)).await? {
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
            let repo = crate::ops::provision::repo(c, &format!("{owner}/{repo}"))?;
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
