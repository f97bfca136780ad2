//! `GET /user` (the token's user) and `GET /users/{username}` (any account's public profile).
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account};
use platform_store::DbError;

use super::shapes::{self, AuthenticatedUser, Counts, PublicUser};
use crate::authorize::{has_scope, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, Operation, Resp};
use crate::principal::Principal;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::Ctx;

/// Scopes that show the private profile; without one a scope token sees the public one.
const PROFILE_SCOPES: &[&str] = &["read:user"];

pub static GET_AUTHENTICATED: Operation = Operation::get("users/get-authenticated", "/user", "Get the authenticated user")
    .docs("https://docs.service.example/rest/users/users#get-the-authenticated-user")
    .cached()
    .responds(&[Resp::typed::<AuthenticatedUser>(
        200,
        "The token's user: the private profile, or the public one for a classic or OAuth token without the `user` or `read:user` scope.",
    )]);

pub static GET_BY_USERNAME: Operation = Operation::get("users/get-by-username", "/users/{username}", "Get a user")
    .docs("https://docs.service.example/rest/users/users#get-a-user")
    .access(Access::token(&[], None, Level::Read).public())
    .cached()
    .responds(&[Resp::typed::<PublicUser>(200, "The account's public profile (`type` is `Organization` for an organization).")]);

pub fn routes(api: Api) -> Api {
    api.op(&GET_AUTHENTICATED, get_authenticated).op(&GET_BY_USERNAME, get_by_username)
}

/// The account's repository counts.
pub async fn counts(ctx: &Ctx, id: i64) -> ApiResult<Counts> {
    let (public_repos, private_repos) = ctx.app.store.read(move |c| accounts::repo_counts(c, id)).await?;
    Ok(Counts { public_repos, private_repos })
}

/// The user a token acts for: app and installation credentials have none (403), anonymous
/// callers 401.
pub fn token_user(ctx: &Ctx) -> ApiResult<(Account, &crate::principal::TokenAuth)> {
    match &ctx.principal {
        Principal::Anonymous => Err(ApiError::requires_authentication()),
        Principal::App(_) => Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => match (&t.user, t.token.kind) {
            (Some(u), TokenKind::Classic | TokenKind::Oauth | TokenKind::FineGrained | TokenKind::UserToServer) => Ok((u.clone(), t)),
            _ => Err(not_accessible(t.token.kind)),
        },
    }
}

async fn get_authenticated(ctx: Ctx) -> ApiResult<Reply> {
    let (user, t) = token_user(&ctx)?;
    let private = !t.token.kind.uses_scopes() || has_scope(&t.token.scopes, PROFILE_SCOPES);
    let n = counts(&ctx, user.id).await?;
    let u = &ctx.app.urls;
    Ok(Reply::ok(if private {
        AuthenticatedUser::Private(shapes::private_user(u, &user, n))
    } else {
        AuthenticatedUser::Public(shapes::public_user(u, &user, n))
    }))
}

async fn get_by_username(ctx: Ctx) -> ApiResult<Reply> {
    let login = ctx.param("username").to_string();
    let (account, n) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(a) = accounts::by_login(c, &login)? else { return Ok(None) };
            let n = accounts::repo_counts(c, a.id)?;
            Ok(Some((a, n)))
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let n = Counts { public_repos: n.0, private_repos: n.1 };
    Ok(Reply::ok(shapes::public_user(&ctx.app.urls, &account, n)))
}
