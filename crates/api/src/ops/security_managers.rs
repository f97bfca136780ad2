//! Security managers (document 2, closing down): the organization's teams holding the security
//! manager role. Organization owners (and, for the list, security managers); `admin:org` (`read:org` for the list) for scope
//! tokens, the organization Administration permission otherwise. Responses carry `Deprecation`
//! and `Sunset` (see [`crate::operation::ClosingDown`]).
use axum::http::StatusCode;
use platform_store::domain::security_managers;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp, SECURITY_MANAGERS_SUNSET};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::Ctx;
use crate::shapes::{self, TeamSimple};

const PERMISSION: &str = "organization_administration";

const fn access(scopes: &'static [&'static str], level: Level) -> Access {
    Access::token(scopes, Some((PERMISSION, level)), level)
}

pub static LIST: Operation = Operation::get("security-managers/list-teams", "/orgs/{org}/security-managers", "List security manager teams")
    .docs("https://docs.service.example/rest/orgs/security-managers#list-security-manager-teams")
    .access(access(&["read:org"], Level::Read))
    .on(On::OrgOwnerOrSecurityManager)
    .closing_down(SECURITY_MANAGERS_SUNSET)
    .responds(&[Resp::typed::<Vec<TeamSimple>>(200, "The organization's security manager teams (closing down).")]);

pub static ADD: Operation =
    Operation::put("security-managers/add-team", "/orgs/{org}/security-managers/teams/{team_slug}", "Add a security manager team")
        .docs("https://docs.service.example/rest/orgs/security-managers#add-a-security-manager-team")
        .access(access(&["admin:org"], Level::Write))
        .on(On::OrgOwner)
        .closing_down(SECURITY_MANAGERS_SUNSET)
        .responds(&[Resp::empty(204, "The team holds the security manager role (closing down).")]);

pub static REMOVE: Operation =
    Operation::delete("security-managers/remove-team", "/orgs/{org}/security-managers/teams/{team_slug}", "Remove a security manager team")
        .docs("https://docs.service.example/rest/orgs/security-managers#remove-a-security-manager-team")
        .access(access(&["admin:org"], Level::Write))
        .on(On::OrgOwner)
        .closing_down(SECURITY_MANAGERS_SUNSET)
        .responds(&[Resp::empty(204, "The team no longer holds the role (closing down).")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&ADD, add).op(&REMOVE, remove)
}

async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let org = &ctx.org().org;
    let org_id = org.id;
    let teams = ctx.app.store.read(move |c| security_managers::list(c, org_id)).await?;
    let body: Vec<TeamSimple> = teams.iter().map(|t| shapes::team_simple(&ctx.app.urls, org, t)).collect();
    Ok(Reply::ok(body))
}

/// Grants (`true`) or revokes the role of the path's team; an unknown team is 404.
async fn set(ctx: Ctx, grant: bool) -> ApiResult<Reply> {
    let (org_id, slug, now) = (ctx.org().org.id, ctx.param("team_slug").to_string(), ctx.app.clock.now());
    let found = ctx
        .write(move |c| -> Result<bool, platform_store::DbError> {
            let Some(team) = security_managers::team_by_slug(c, org_id, &slug)? else { return Ok(false) };
            if grant {
                security_managers::add(c, org_id, team.id, now)?;
            } else {
                security_managers::remove(c, org_id, team.id)?;
            }
            Ok(true)
        })
        .await?;
    if !found {
        return Err(ApiError::not_found());
    }
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn add(ctx: Ctx) -> ApiResult<Reply> {
    set(ctx, true).await
}

async fn remove(ctx: Ctx) -> ApiResult<Reply> {
    set(ctx, false).await
}
