//! `GET /orgs/{org}/teams`, `GET /orgs/{org}/teams/{team_slug}` and the `url` every team
//! carries, `GET /organizations/{org_id}/team/{team_id}`: the teams of an organization its
//! members may see. Owners and the organization's installations see every
//! team; other members every team but the secret ones they are not on; anyone else finds
//! nothing (404). Scope tokens need `read:org`, others the Members permission (read).
use axum::http::Method;
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account, TeamKey, TeamView};

use super::orgs::{org_with_facts, OrgKey};
use super::shapes::{self, OrgFacts, Team, TeamFull};
use crate::authorize::{grants, not_accessible};
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

/// The hosted platform answers a team's `url` (by organization and team id); clients follow it
/// to complete a team read from a list.
pub static GET_BY_ID: Operation = Operation {
    id: "teams/get-by-id",
    method: Method::GET,
    path: "/organizations/{org_id}/team/{team_id}",
    summary: "Get a team by id",
    docs: "https://docs.service.example/rest/teams/teams#get-a-team-by-name",
    access: ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::typed::<TeamFull>(200, "The team of a team's `url` (a secret team only for its members and the owners).")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET_BY_NAME, get_by_name).op(&GET_BY_ID, get_by_id)
}

/// A path segment that must be an id: anything else names nothing.
fn id_param(ctx: &Ctx, name: &str) -> ApiResult<i64> {
    ctx.param(name).parse().map_err(|_| ApiError::not_found())
}

/// The organization of the path and what of its teams the caller sees, authorized.
async fn caller(ctx: &Ctx, org: OrgKey) -> ApiResult<(Account, TeamView, OrgFacts)> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::not_found()),
        Principal::Token(t) => t.clone(),
    };
    let (org, role, facts) = org_with_facts(ctx, org).await?;
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
    if !grants(&t, access, false) {
        return Err(not_accessible(kind));
    }
    Ok((org, view, facts))
}

fn org_login(ctx: &Ctx) -> OrgKey {
    OrgKey::Login(ctx.param("org").to_string())
}

async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let (org, view, _) = caller(&ctx, org_login(&ctx)).await?;
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
    let (org, view, facts) = caller(&ctx, org_login(&ctx)).await?;
    let key = TeamKey::Slug(ctx.param("team_slug").to_string());
    one_team(&ctx, org, view, facts, key).await
}

async fn get_by_id(ctx: Ctx) -> ApiResult<Reply> {
    let (org_id, team_id) = (id_param(&ctx, "org_id")?, id_param(&ctx, "team_id")?);
    let (org, view, facts) = caller(&ctx, OrgKey::Id(org_id)).await?;
    one_team(&ctx, org, view, facts, TeamKey::Id(team_id)).await
}

async fn one_team(ctx: &Ctx, org: Account, view: TeamView, facts: OrgFacts, key: TeamKey) -> ApiResult<Reply> {
    ctx.cached(async {
        let org_id = org.id;
        let team = ctx.app.store.read(move |c| accounts::find_team(c, org_id, &key, view)).await?.ok_or_else(ApiError::not_found)?;
        Ok(Reply::ok(shapes::team_full(&ctx.app.urls, &org, &team, facts)))
    })
    .await
}
