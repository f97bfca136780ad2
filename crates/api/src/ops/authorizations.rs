//! OAuth application authorizations (document 2): application owners check, reset and revoke
//! user tokens with the application's basic credentials.
use axum::http::StatusCode;
use platform_core::ids::sha256_hex;
use platform_core::TokenKind;
use platform_store::domain::accounts::Account;
use platform_store::domain::apps::App;
use platform_store::domain::tokens::{self, Token};
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Limits, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx};
use crate::shapes::{self, SimpleUser};
use crate::typed::{Timestamp, Uri};

pub static DELETE_GRANT: Operation =
    Operation::delete("authorizations/delete-grant", "/applications/{client_id}/grant", "Delete an app authorization")
        .docs("https://docs.service.example/rest/apps/oauth-applications#delete-an-app-authorization")
        .access(Access::app_basic())
        .resource("Authorization")
        .responds(&[Resp::empty(204, "The grant and every token of the application for the user are gone.")]);

pub static CHECK_TOKEN: Operation = Operation::post("authorizations/check-token", "/applications/{client_id}/token", "Check a token")
    .docs("https://docs.service.example/rest/apps/oauth-applications#check-a-token")
    .access(Access::app_basic())
    .resource("Authorization")
    .responds(&[Resp::typed::<Authorization>(200, "The token is valid.")]);

pub static RESET_TOKEN: Operation = Operation::patch("authorizations/reset-token", "/applications/{client_id}/token", "Reset a token")
    .docs("https://docs.service.example/rest/apps/oauth-applications#reset-a-token")
    .access(Access::app_basic())
    .resource("Authorization")
    .limits(Limits::IssuesTokens)
    .responds(&[Resp::typed::<Authorization>(200, "The token was replaced; `token` holds the new one.")]);

pub static DELETE_TOKEN: Operation =
    Operation::delete("authorizations/delete-token", "/applications/{client_id}/token", "Delete an app token")
        .docs("https://docs.service.example/rest/apps/oauth-applications#delete-an-app-token")
        .access(Access::app_basic())
        .resource("Authorization")
        .responds(&[Resp::empty(204, "The token is revoked.")]);

pub fn routes(api: Api) -> Api {
    api.op(&DELETE_GRANT, delete_grant).op(&CHECK_TOKEN, check_token).op(&RESET_TOKEN, reset_token).op(&DELETE_TOKEN, delete_token)
}

#[derive(Deserialize, JsonSchema)]
struct AccessToken {
    access_token: String,
}

/// The live token of the path's application (authenticated by the contract) named by
/// `access_token`, with its user; 404 when it is not one.
async fn app_token(ctx: &Ctx, AccessToken { access_token: text }: AccessToken) -> ApiResult<(App, Token, Account, String)> {
    let app = ctx.application().clone();
    let hash = sha256_hex(text.as_bytes());
    let now = ctx.app.clock.now();
    let found = ctx.app.store.read(move |c| tokens::by_hash(c, &hash)).await?;
    match found {
        Some((t, Some(user)))
            if t.app_id == Some(app.id)
                && matches!(t.kind, TokenKind::Oauth | TokenKind::UserToServer)
                && t.expires_at.is_none_or(|e| e > now) =>
        {
            Ok((app, t, user, text))
        }
        _ => Err(ApiError::not_found()),
    }
}

/// Authorization: a user's token of an OAuth application, as its owner sees it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Authorization {
    pub id: i64,
    pub url: Uri,
    pub scopes: Vec<String>,
    pub token: String,
    pub token_last_eight: String,
    pub hashed_token: String,
    pub app: AuthorizationApp,
    pub note: Option<String>,
    pub note_url: Option<String>,
    pub updated_at: Timestamp,
    pub created_at: Timestamp,
    pub fingerprint: Option<String>,
    pub expires_at: Option<Timestamp>,
    pub user: SimpleUser,
    /// Always null: installations hold no OAuth authorizations.
    pub installation: Option<Map<String, Value>>,
}

/// The application an authorization belongs to.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct AuthorizationApp {
    pub url: Uri,
    pub name: String,
    pub client_id: String,
}

fn authorization(ctx: &Ctx, app: &App, t: &Token, user: &Account, text: &str) -> Authorization {
    let u = &ctx.app.urls;
    Authorization {
        id: t.id,
        url: Uri(format!("{}/authorizations/{}", u.api, t.id)),
        scopes: t.scopes.clone(),
        token: text.to_string(),
        token_last_eight: t.last_eight.clone(),
        hashed_token: t.token_hash.clone(),
        app: AuthorizationApp {
            url: Uri(format!("{}/apps/{}", u.web, app.slug)),
            name: app.name.clone(),
            client_id: app.client_id.clone(),
        },
        note: t.note.clone(),
        note_url: t.note_url.clone(),
        updated_at: Timestamp(t.updated_at),
        created_at: Timestamp(t.created_at),
        fingerprint: None,
        expires_at: t.expires_at.map(Timestamp),
        user: shapes::simple_user(u, user),
        installation: None,
    }
}

async fn check_token(ctx: Ctx, Body(body): Body<AccessToken>) -> ApiResult<Reply> {
    let (app, t, user, text) = app_token(&ctx, body).await?;
    Ok(Reply::ok(authorization(&ctx, &app, &t, &user, &text)))
}

/// The new token works at once and the old one stops at once: one commit swaps the hash.
async fn reset_token(ctx: Ctx, Body(body): Body<AccessToken>) -> ApiResult<Reply> {
    let (app, t, user, _) = app_token(&ctx, body).await?;
    let text = t.kind.generate();
    let (hash, last8) = (sha256_hex(text.as_bytes()), text[text.len() - 8..].to_string());
    let now = ctx.app.clock.now();
    let id = t.id;
    let fresh = ctx
        .write(move |c| -> Result<_, DbError> {
            tokens::replace_secret(c, id, &hash, &last8, now)?;
            tokens::by_id(c, id)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(authorization(&ctx, &app, &fresh, &user, &text)))
}

async fn delete_token(ctx: Ctx, Body(body): Body<AccessToken>) -> ApiResult<Reply> {
    let (_, t, _, _) = app_token(&ctx, body).await?;
    ctx.write(move |c| tokens::delete(c, t.id)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// Revokes the grant: every token of this application for the token's user.
async fn delete_grant(ctx: Ctx, Body(body): Body<AccessToken>) -> ApiResult<Reply> {
    let (app, _, user, _) = app_token(&ctx, body).await?;
    ctx.write(move |c| tokens::delete_for_app_user(c, app.id, user.id)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
