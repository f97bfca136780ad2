//! `GET /orgs/{org}/teams` and `GET /orgs/{org}/teams/{team_slug}`: the teams of an
//! organization its members may see. Owners and the organization's installations see every
//! team; other members every team but the secret ones they are not on; anyone else finds
//! nothing (404). Scope tokens need `read:org`, others the Members permission (read).
use axum::http::Method;
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account, TeamView};

use super::orgs::org_with_facts;
use super::shapes::{self, OrgFacts, Team, TeamFull};
use crate::authorize::{has_permission, has_scope, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, AuthKind, Derived, Level, Operation, Resp, Traits, PAGINATION};
use crate::principal::Principal;
use crate::reply::Reply;
use crate::request::Ctx;
use crate::routes::Api;

const ACCESS: Access =
    Access { auth: AuthKind::Token, public: false, scopes: &["read:org"], permission: Some(("members", Level::Read)), role: Level::Read };

pub static LIST: Operation = Operation {
    id: "teams/list",
    method: Method::GET,
    path: "/orgs/{org}/teams",
    summary: "List teams",
    docs: "https://docs.service.example/rest/teams/teams#list-teams",
    access: ACCESS,
    query: &PAGINATION,
    body: None,
    responses: &[Resp::typed::<Vec<Team>>(200, "The teams the caller may see, by slug.").with_headers(&["Link"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static GET_BY_NAME: Operation = Operation {
    id: "teams/get-by-name",
    method: Method::GET,
    path: "/orgs/{org}/teams/{team_slug}",
    summary: "Get a team by name",
    docs: "https://docs.service.example/rest/teams/teams#get-a-team-by-name",
    access: ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::typed::<TeamFull>(200, "The team (a secret team only for its members and the owners).")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET_BY_NAME, get_by_name)
}

/// The organization of the path and what of its teams the caller sees, authorized.
async fn caller(ctx: &Ctx) -> ApiResult<(Account, TeamView, OrgFacts)> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::not_found()),
        Principal::Token(t) => t.clone(),
    };
    let (org, role, facts) = org_with_facts(ctx).await?;
    let kind = t.token.kind;
    let view = match (kind, &t.user) {
        (TokenKind::Installation, _) if t.installation.as_ref().is_some_and(|i| i.account_id == org.id) => TeamView::All,
        (TokenKind::Classic | TokenKind::Oauth | TokenKind::FineGrained | TokenKind::UserToServer, Some(u)) => {
            let limited_elsewhere = kind == TokenKind::FineGrained && t.token.resource_owner_id.is_some_and(|o| o != org.id);
            match role.as_deref() {
                _ if limited_elsewhere => return Err(ApiError::not_found()),
                Some("owner") => TeamView::All,
                Some(_) => TeamView::Member(u.id),
                None => return Err(ApiError::not_found()),
            }
        }
        _ => return Err(ApiError::not_found()),
    };
    let access = &ctx.op.access;
    let granted = if kind.uses_scopes() {
        has_scope(&t.token.scopes, access.scopes)
    } else {
        access.permission.is_none_or(|p| has_permission(&t, p))
    };
    if !granted {
        return Err(not_accessible(kind));
    }
    Ok((org, view, facts))
}

async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let (org, view, _) = caller(&ctx).await?;
    let page = ctx.page(30, 100)?;
    ctx.cached(async {
        let org_id = org.id;
        let (rows, total) = ctx.app.store.read(move |c| accounts::teams_of_org(c, org_id, view, page.offset(), page.per_page)).await?;
        let body: Vec<Team> = rows.iter().map(|t| shapes::team(&ctx.app.urls, &org, t)).collect();
        Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
    })
    .await
}

async fn get_by_name(ctx: Ctx) -> ApiResult<Reply> {
    let (org, view, facts) = caller(&ctx).await?;
    ctx.cached(async {
        let (org_id, slug) = (org.id, ctx.param("team_slug").to_string());
        let team = ctx.app.store.read(move |c| accounts::team_by_slug(c, org_id, &slug, view)).await?.ok_or_else(ApiError::not_found)?;
        Ok(Reply::ok(shapes::team_full(&ctx.app.urls, &org, &team, facts)))
    })
    .await
}
