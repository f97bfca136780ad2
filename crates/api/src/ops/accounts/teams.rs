//! `GET /orgs/{org}/teams`, `GET /orgs/{org}/teams/{team_slug}` and the `url` every team
//! carries, `GET /organizations/{org_id}/team/{team_id}`: the teams of an organization its
//! members may see. Owners and the organization's installations see every
//! team; other members every team but the secret ones they are not on; anyone else finds
//! nothing (404). Scope tokens need `read:org`, others the Members permission (read).
use platform_store::domain::accounts::{self, TeamKey, TeamView};

use super::orgs::org_facts;
use super::shapes::{self, Team, TeamFull};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};

const ACCESS: Access = Access::token(&["read:org"], Some(("members", Level::Read)), Level::Read);

pub static LIST: Operation = Operation::get("teams/list", "/orgs/{org}/teams", "List teams")
    .docs("https://docs.service.example/rest/teams/teams#list-teams")
    .access(ACCESS)
    .on(On::OrgMember)
    .cached()
    .responds(&[Resp::typed::<Vec<Team>>(200, "The teams the caller may see, by slug.").with_headers(&["Link"])]);

pub static GET_BY_NAME: Operation = Operation::get("teams/get-by-name", "/orgs/{org}/teams/{team_slug}", "Get a team by name")
    .docs("https://docs.service.example/rest/teams/teams#get-a-team-by-name")
    .access(ACCESS)
    .on(On::OrgMember)
    .cached()
    .responds(&[Resp::typed::<TeamFull>(200, "The team (a secret team only for its members and the owners).")]);

/// The hosted platform answers a team's `url` (by organization and team id); clients follow it
/// to complete a team read from a list.
pub static GET_BY_ID: Operation = Operation::get("teams/get-by-id", "/organizations/{org_id}/team/{team_id}", "Get a team by id")
    .docs("https://docs.service.example/rest/teams/teams#get-a-team-by-name")
    .access(ACCESS)
    .on(On::OrgMember)
    .cached()
    .responds(&[Resp::typed::<TeamFull>(200, "The team of a team's `url` (a secret team only for its members and the owners).")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET_BY_NAME, get_by_name).op(&GET_BY_ID, get_by_id)
}

/// What of the organization's teams the caller sees: owners and the organization's
/// installations every team, other members every team but the secret ones they are not on.
fn view(ctx: &Ctx) -> TeamView {
    let caller = ctx.org();
    match (&caller.user, caller.role.as_deref()) {
        (Some(u), Some(role)) if role != "owner" && !caller.installation => TeamView::Member(u.id),
        _ => TeamView::All,
    }
}

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let (org, view) = (&ctx.org().org, view(&ctx));
    let page = q.page(30, 100);
    let org_id = org.id;
    let (rows, total) = ctx.app.store.read(move |c| accounts::teams_of_org(c, org_id, view, page.offset(), page.per_page)).await?;
    let body: Vec<Team> = rows.iter().map(|t| shapes::team(&ctx.app.urls, org, t)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn get_by_name(ctx: Ctx) -> ApiResult<Reply> {
    one_team(&ctx, TeamKey::Slug(ctx.param("team_slug").to_string())).await
}

async fn get_by_id(ctx: Ctx) -> ApiResult<Reply> {
    let team_id = ctx.param("team_id").parse().map_err(|_| ApiError::not_found())?;
    one_team(&ctx, TeamKey::Id(team_id)).await
}

async fn one_team(ctx: &Ctx, key: TeamKey) -> ApiResult<Reply> {
    let facts = org_facts(ctx).await?;
    let (org, view) = (&ctx.org().org, view(ctx));
    let org_id = org.id;
    let team = ctx.app.store.read(move |c| accounts::find_team(c, org_id, &key, view)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(shapes::team_full(&ctx.app.urls, org, &team, facts)))
}
