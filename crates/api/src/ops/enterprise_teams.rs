//! Enterprise teams and their memberships (document 2): list and get teams, list memberships,
//! bulk add and remove, get, add and remove one member, and the teams of an enterprise member. Classic and OAuth tokens need
//! `read:enterprise` for GETs and `admin:enterprise` otherwise; fine-grained tokens the
//! Enterprise teams permission; app tokens are refused. The caller must belong to the
//! enterprise (else 404); changes need an enterprise owner (403); the teams of a user need an
//! owner or a fine-grained token with `enterprise_teams: read`.
use axum::http::StatusCode;
use platform_store::domain::accounts::{self, Account, Enterprise};
use platform_store::domain::enterprise_teams::{self as teams, EnterpriseTeam as TeamRow};
use platform_store::{Conn, DbError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, EnterpriseCaller, JsonBody, Pagination, Query};
use crate::shapes::{simple_user, Urls};
use crate::typed::{Timestamp, Uri};

const PERMISSION: &str = "enterprise_teams";
const READ: Access = Access::token(&["read:enterprise"], Some((PERMISSION, Level::Read)), Level::Read);
const WRITE: Access = Access::token(&["admin:enterprise"], Some((PERMISSION, Level::Write)), Level::Write);
const TEAM: &str = "/enterprises/{enterprise}/teams/{enterprise-team}/memberships";

pub static LIST_FOR_USER: Operation = Operation::get(
    "enterprise-teams/list-for-user",
    "/enterprises/{enterprise}/members/{username}/teams",
    "List enterprise teams for a user",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-teams#list-enterprise-teams-for-a-user")
.access(READ)
.on(On::EnterpriseMember)
.responds(&[Resp::typed::<Vec<EnterpriseTeam>>(200, "The enterprise teams the user belongs to.").with_headers(&["Link"])]);

pub static LIST_TEAMS: Operation = Operation::get("enterprise-teams/list", "/enterprises/{enterprise}/teams", "List enterprise teams")
    .docs("https://docs.service.example/rest/enterprise-teams/enterprise-teams#list-enterprise-teams")
    .access(READ)
    .on(On::EnterpriseMember)
    .cached()
    .responds(&[Resp::typed::<Vec<EnterpriseTeam>>(200, "The enterprise's teams, by slug.").with_headers(&["Link"])]);

/// The team of the path is found by slug (with or without `ent:`) or by id, as for memberships.
pub static GET_TEAM: Operation =
    Operation::get("enterprise-teams/get", "/enterprises/{enterprise}/teams/{enterprise-team}", "Get an enterprise team")
        .docs("https://docs.service.example/rest/enterprise-teams/enterprise-teams#get-an-enterprise-team")
        .access(READ)
        .on(On::EnterpriseMember)
        .cached()
        .responds(&[Resp::typed::<EnterpriseTeamFull>(200, "The team, with its member count.")]);

pub static LIST: Operation = Operation::get("enterprise-team-members/list", TEAM, "List members in an enterprise team")
    .docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#list-members-in-an-enterprise-team")
    .access(READ)
    .on(On::EnterpriseMember)
    .responds(&[Resp::typed::<Vec<crate::shapes::SimpleUser>>(200, "The team's members, by login.").with_headers(&["Link"])]);

#[derive(Deserialize, JsonSchema)]
struct Usernames {
    usernames: Vec<String>,
}

pub static BULK_ADD: Operation = Operation::post(
    "enterprise-team-members/bulk-add",
    "/enterprises/{enterprise}/teams/{enterprise-team}/memberships/add",
    "Bulk add team members",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#bulk-add-team-members")
.access(WRITE)
.on(On::EnterpriseMember)
.resource("EnterpriseTeamMembership")
.responds(&[Resp::typed::<Vec<crate::shapes::SimpleUser>>(200, "The users named, now members (all or none are added).")]);

pub static BULK_REMOVE: Operation = Operation::post(
    "enterprise-team-members/bulk-remove",
    "/enterprises/{enterprise}/teams/{enterprise-team}/memberships/remove",
    "Bulk remove team members",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#bulk-remove-team-members")
.access(WRITE)
.on(On::EnterpriseMember)
.resource("EnterpriseTeamMembership")
.responds(&[Resp::typed::<Vec<crate::shapes::SimpleUser>>(200, "The users named that were members and are removed.")]);

pub static GET: Operation = Operation::get(
    "enterprise-team-members/get",
    "/enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}",
    "Get enterprise team membership",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#get-enterprise-team-membership")
.access(READ)
.on(On::EnterpriseMember)
.responds(&[Resp::typed::<crate::shapes::SimpleUser>(200, "The user, a member of the team (404 otherwise).")]);

pub static ADD: Operation = Operation::put(
    "enterprise-team-members/add",
    "/enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}",
    "Add team member",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#add-team-member")
.access(WRITE)
.on(On::EnterpriseMember)
.responds(&[Resp::typed::<crate::shapes::SimpleUser>(201, "The user, now a member.")]);

pub static REMOVE: Operation = Operation::delete(
    "enterprise-team-members/remove",
    "/enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}",
    "Remove team membership",
)
.docs("https://docs.service.example/rest/enterprise-teams/enterprise-team-members#remove-team-membership")
.access(WRITE)
.on(On::EnterpriseMember)
.responds(&[Resp::empty(204, "The user is not a member (any more).")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_FOR_USER, list_for_user)
        .op(&LIST_TEAMS, list_teams)
        .op(&GET_TEAM, get_team)
        .op(&LIST, list)
        .op(&BULK_ADD, bulk_add)
        .op(&BULK_REMOVE, bulk_remove)
        .op(&GET, get)
        .op(&ADD, add)
        .op(&REMOVE, remove)
}

/// EnterpriseTeam (api-facts §4.16).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EnterpriseTeam {
    pub id: i64,
    pub name: String,
    /// A string in the spec: a team created without one has an empty description.
    pub description: String,
    pub slug: String,
    pub url: Uri,
    pub html_url: Uri,
    pub members_url: String,
    pub sync_to_organizations: String,
    pub organization_selection_type: String,
    pub group_id: Option<String>,
    pub group_name: Option<String>,
    #[schemars(extend("enum" = ["notifications_enabled", "notifications_disabled"]))]
    pub notification_setting: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An enterprise team as its own GET shows it: with its member count, as hosted.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EnterpriseTeamFull {
    #[serde(flatten)]
    pub team: EnterpriseTeam,
    pub members_count: i64,
}

pub fn team_json(u: &Urls, ent: &Enterprise, t: &TeamRow) -> EnterpriseTeam {
    let url = format!("{}/enterprises/{}/teams/{}", u.api, ent.slug, t.slug);
    EnterpriseTeam {
        id: t.id,
        name: t.name.clone(),
        description: t.description.clone().unwrap_or_default(),
        slug: t.slug.clone(),
        html_url: Uri(format!("{}/enterprises/{}/teams/{}", u.web, ent.slug, t.slug)),
        members_url: format!("{url}/memberships{{/member}}"),
        sync_to_organizations: "disabled".into(),
        organization_selection_type: "disabled".into(),
        group_id: t.group_id.clone(),
        group_name: None,
        notification_setting: "notifications_enabled".into(),
        created_at: Timestamp(t.created_at),
        updated_at: Timestamp(t.updated_at),
        url: Uri(url),
    }
}

/// Only enterprise owners change memberships.
fn require_owner(c: &EnterpriseCaller) -> ApiResult<()> {
    if c.owner {
        Ok(())
    } else {
        Err(ApiError::forbidden("Must be an enterprise owner to change enterprise team memberships."))
    }
}

async fn team(ctx: &Ctx) -> ApiResult<TeamRow> {
    let (ent_id, key) = (ctx.enterprise().ent.id, ctx.param("enterprise-team").to_string());
    ctx.app.store.read(move |c| teams::find(c, ent_id, &key)).await?.ok_or_else(ApiError::not_found)
}

/// A user of the path: unknown users are 404.
async fn path_user(ctx: &Ctx) -> ApiResult<Account> {
    let login = ctx.param("username").to_string();
    ctx.app.store.read(move |c| accounts::by_login(c, &login)).await?.filter(|a| !a.is_org()).ok_or_else(ApiError::not_found)
}

async fn list_for_user(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let caller = ctx.enterprise();
    if !caller.owner && !caller.fine_grained {
        return Err(ApiError::forbidden("Must be an enterprise owner, or use a token with the enterprise_teams read permission."));
    }
    let page = q.page(30, 100);
    let user = path_user(&ctx).await?;
    let ent_id = caller.ent.id;
    let (rows, total) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            if teams::enterprise_role(c, ent_id, user.id)?.is_none() {
                return Ok(None);
            }
            teams::teams_of(c, ent_id, user.id, page.offset(), page.per_page).map(Some)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let body: Vec<EnterpriseTeam> = rows.iter().map(|t| team_json(&ctx.app.urls, &caller.ent, t)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn list_teams(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let ent = &ctx.enterprise().ent;
    let page = q.page(30, 100);
    let ent_id = ent.id;
    let (rows, total) = ctx.app.store.read(move |c| teams::list(c, ent_id, page.offset(), page.per_page)).await?;
    let body: Vec<EnterpriseTeam> = rows.iter().map(|t| team_json(&ctx.app.urls, ent, t)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn get_team(ctx: Ctx) -> ApiResult<Reply> {
    let t = team(&ctx).await?;
    let id = t.id;
    let (_, members_count) = ctx.app.store.read(move |c| teams::members(c, id, 0, 0)).await?;
    Ok(Reply::ok(EnterpriseTeamFull { team: team_json(&ctx.app.urls, &ctx.enterprise().ent, &t), members_count }))
}

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let page = q.page(30, 100);
    let team = team(&ctx).await?;
    let (rows, total) = ctx.app.store.read(move |c| teams::members(c, team.id, page.offset(), page.per_page)).await?;
    let body: Vec<crate::shapes::SimpleUser> = rows.iter().map(|a| simple_user(&ctx.app.urls, a)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

/// The named users, once each in request order; unknown logins and users outside the
/// enterprise are a 422 naming them.
fn enterprise_users(c: &mut dyn Conn, ent_id: i64, logins: &[String]) -> ApiResult<Vec<Account>> {
    let mut users: Vec<Account> = Vec::new();
    let (mut unknown, mut outside) = (Vec::new(), Vec::new());
    for login in logins {
        match accounts::by_login(c, login)?.filter(|a| !a.is_org()) {
            None => unknown.push(login.clone()),
            Some(u) if teams::enterprise_role(c, ent_id, u.id)?.is_none() => outside.push(login.clone()),
            Some(u) if users.iter().any(|x| x.id == u.id) => {}
            Some(u) => users.push(u),
        }
    }
    let mut errors = Vec::new();
    if !unknown.is_empty() {
        errors.push(json!({"resource": "EnterpriseTeamMembership", "field": "usernames", "code": "missing",
                           "message": format!("No such user: {}", unknown.join(", "))}));
    }
    if !outside.is_empty() {
        errors.push(json!({"resource": "EnterpriseTeamMembership", "field": "usernames", "code": "invalid",
                           "message": format!("Not a member of the enterprise: {}", outside.join(", "))}));
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        Err(ApiError::validation(errors))
    }
}

async fn bulk(ctx: Ctx, Usernames { usernames: logins }: Usernames, adding: bool) -> ApiResult<Reply> {
    let team = team(&ctx).await?;
    require_owner(ctx.enterprise())?;
    let (ent_id, now) = (ctx.enterprise().ent.id, ctx.app.clock.now());
    let changed = ctx
        .write(move |c| -> ApiResult<Vec<Account>> {
            let users = enterprise_users(c, ent_id, &logins)?;
            let mut out = Vec::new();
            for u in users {
                if adding {
                    teams::add_member(c, team.id, u.id, now)?;
                    out.push(u);
                } else if teams::remove_member(c, team.id, u.id, now)? {
                    out.push(u);
                }
            }
            Ok(out)
        })
        .await?;
    Ok(Reply::ok(changed.iter().map(|a| simple_user(&ctx.app.urls, a)).collect::<Vec<_>>()))
}

async fn bulk_add(ctx: Ctx, Body(body): Body<Usernames>) -> ApiResult<Reply> {
    bulk(ctx, body, true).await
}

async fn bulk_remove(ctx: Ctx, Body(body): Body<Usernames>) -> ApiResult<Reply> {
    bulk(ctx, body, false).await
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let team = team(&ctx).await?;
    let user = path_user(&ctx).await?;
    let uid = user.id;
    if !ctx.app.store.read(move |c| teams::is_member(c, team.id, uid)).await? {
        return Err(ApiError::not_found());
    }
    Ok(Reply::ok(simple_user(&ctx.app.urls, &user)))
}

async fn add(ctx: Ctx) -> ApiResult<Reply> {
    let team = team(&ctx).await?;
    require_owner(ctx.enterprise())?;
    let user = path_user(&ctx).await?;
    let (ent_id, login, now) = (ctx.enterprise().ent.id, user.login.clone(), ctx.app.clock.now());
    ctx.write(move |c| -> ApiResult<()> {
        let users = enterprise_users(c, ent_id, &[login])?;
        for u in users {
            teams::add_member(c, team.id, u.id, now)?;
        }
        Ok(())
    })
    .await?;
    Ok(Reply::created(simple_user(&ctx.app.urls, &user)))
}

async fn remove(ctx: Ctx) -> ApiResult<Reply> {
    let team = team(&ctx).await?;
    require_owner(ctx.enterprise())?;
    let user = path_user(&ctx).await?;
    let (uid, now) = (user.id, ctx.app.clock.now());
    ctx.write(move |c| teams::remove_member(c, team.id, uid, now)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

// ---------------------------------------------------------------------------------------------
// Control plane: `POST /_admin/enterprises/{enterprise}/teams` and seed `[[enterprise_teams]]`.

#[derive(serde::Deserialize)]
pub struct EnterpriseTeamIn {
    pub name: String,
    pub description: Option<String>,
    /// Logins of enterprise members.
    #[serde(default)]
    pub members: Vec<String>,
}

/// Creates an enterprise team with its members (they must belong to the enterprise).
pub fn create_team(c: &mut dyn Conn, enterprise: &str, t: &EnterpriseTeamIn, now: i64) -> ApiResult<(Enterprise, TeamRow)> {
    let ent = accounts::enterprise_by_slug(c, enterprise)?.ok_or_else(|| {
        ApiError::invalid_field("Enterprise", "enterprise", "missing", Some(format!("Enterprise '{enterprise}' does not exist")))
    })?;
    if accounts::slugify(&t.name).is_empty() {
        return Err(ApiError::invalid_field("EnterpriseTeam", "name", "invalid", None));
    }
    let team = teams::create(c, ent.id, &t.name, t.description.as_deref(), now).map_err(|e| {
        if e.is_unique() {
            ApiError::invalid_field("EnterpriseTeam", "name", "already_exists", None)
        } else {
            e.into()
        }
    })?;
    for u in enterprise_users(c, ent.id, &t.members)? {
        teams::add_member(c, team.id, u.id, now)?;
    }
    Ok((ent, team))
}

/// A seed's team: created unless the enterprise has one of that slug already.
pub fn seed_team(c: &mut dyn Conn, enterprise: &str, t: &EnterpriseTeamIn, now: i64) -> ApiResult<()> {
    if let Some(ent) = accounts::enterprise_by_slug(c, enterprise)? {
        if teams::find(c, ent.id, &teams::slug_of(&t.name))?.is_some() {
            return Ok(());
        }
    }
    create_team(c, enterprise, t, now).map(|_| ())
}

/// `POST /_admin/enterprises/{enterprise}/teams` → 201 EnterpriseTeam.
pub async fn admin_create(
    axum::extract::State(app): axum::extract::State<crate::state::Shared>,
    axum::extract::Path(enterprise): axum::extract::Path<String>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let t: EnterpriseTeamIn = serde_json::from_value(b).map_err(ApiError::invalid_request)?;
    let now = app.clock.now();
    let (ent, team) = app.store.write(move |c| create_team(c, &enterprise, &t, now)).await?;
    Ok(Reply::created(team_json(&app.urls, &ent, &team)))
}

/// The control plane's part: enterprise teams.
pub fn control(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    r.route("/enterprises/{enterprise}/teams", axum::routing::post(admin_create))
}
