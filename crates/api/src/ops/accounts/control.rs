//! The control plane's changes of an organization's members and teams after their creation:
//! `PUT`/`DELETE /_admin/orgs/{org}/members/{login}`, `PATCH`/`DELETE
//! /_admin/orgs/{org}/teams/{team_slug}` and `PUT`/`DELETE …/teams/{team_slug}/members/{login}`.
//! Each records its `organization`, `team` or `membership` activity (`hooks::org_events`) in its
//! transaction. They change who may reach what, so they are access-changing writes
//! (`Store::write`): every cache of credentials and repository access is invalidated.
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{patch, put};
use axum::Router;
use platform_store::domain::accounts::{self, Account, Team, TeamKey, TeamView};
use platform_store::Conn;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};
use crate::input::Patch;
use crate::ops::hooks::org_events::{self, org_membership, TeamChanges};
use crate::ops::provision::{parse, write};
use crate::reply::Reply;
use crate::request::JsonBody;
use crate::shapes::{team_simple, Urls};
use crate::state::Shared;
use crate::typed::Uri;

pub fn routes(r: Router<Shared>) -> Router<Shared> {
    r.route("/orgs/{org}/members/{login}", put(add_member).delete(remove_member))
        .route("/orgs/{org}/teams/{team_slug}", patch(update_team).delete(delete_team))
        .route("/orgs/{org}/teams/{team_slug}/members/{login}", put(add_team_member).delete(remove_team_member))
}

type R<T> = Result<T, ApiError>;

/// The organization of the path, under its row lock (each handler here reads its members or
/// teams, then changes them and records the change: concurrent changes on any node must not
/// decide from the same read); 404 when there is none.
fn org(c: &mut dyn Conn, login: &str) -> R<Account> {
    let org = accounts::by_login(c, login)?.filter(Account::is_org).ok_or_else(ApiError::not_found)?;
    accounts::lock(c, org.id)?;
    Ok(org)
}

/// The user of the path; 404 when there is none.
fn user(c: &mut dyn Conn, login: &str) -> R<Account> {
    accounts::by_login(c, login)?.filter(|a| !a.is_org()).ok_or_else(ApiError::not_found)
}

/// The organization's team of the path (by slug); 404 when there is none.
fn team(c: &mut dyn Conn, org: &Account, slug: &str) -> R<Team> {
    Ok(accounts::find_team(c, org.id, &TeamKey::Slug(slug.into()), TeamView::All)?.ok_or_else(ApiError::not_found)?.team)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemberIn {
    /// `member` (the default) or `owner`.
    role: Option<String>,
}

/// 201 the membership when the user joined (`organization` `member_added`), 200 when already a
/// member (the role set; nothing recorded).
async fn add_member(State(app): State<Shared>, Path((o, login)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let m: MemberIn = parse(b)?;
    let role = m.role.unwrap_or_else(|| "member".into());
    if role != "member" && role != "owner" {
        return Err(ApiError::invalid_field("Membership", "role", "invalid", Some("role must be member or owner".into())));
    }
    let u = app.urls.clone();
    let (shown, added) = write(&app, move |c, now| {
        let (org, user) = (org(c, &o)?, user(c, &login)?);
        let added = accounts::org_role(c, org.id, user.id)?.is_none();
        accounts::set_org_member(c, org.id, user.id, &role)?;
        if added {
            org_events::organization(c, &org, &user, &role, "member_added", now)?;
        }
        Ok((org_membership(&u, &org, &user, &role), added))
    })
    .await?;
    Ok(if added { Reply::created(shown) } else { Reply::ok(shown) })
}

/// 204; the user leaves the organization and its teams (`membership` `removed` with scope
/// `organization` for each team, then `organization` `member_removed`); 404 when not a member.
async fn remove_member(State(app): State<Shared>, Path((o, login)): Path<(String, String)>) -> ApiResult<Reply> {
    write(&app, move |c, now| {
        let (org, user) = (org(c, &o)?, user(c, &login)?);
        let role = accounts::org_role(c, org.id, user.id)?.ok_or_else(ApiError::not_found)?;
        let teams = accounts::teams_of_member(c, org.id, user.id)?;
        accounts::remove_org_member(c, org.id, user.id)?;
        for t in &teams {
            org_events::membership(c, &org, t, &user, "removed", "organization", now)?;
        }
        org_events::organization(c, &org, &user, &role, "member_removed", now)?;
        Ok(())
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TeamUpdate {
    name: Option<String>,
    /// `null` removes it.
    #[serde(default)]
    description: Patch<String>,
    /// `closed` or `secret`.
    privacy: Option<String>,
}

/// 200 the team; `team` `edited` with what changed (nothing changed: nothing recorded).
async fn update_team(State(app): State<Shared>, Path((o, slug)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let up: TeamUpdate = parse(b)?;
    if let Some(p) = up.privacy.as_deref().filter(|p| !["closed", "secret"].contains(p)) {
        return Err(ApiError::invalid_field("Team", "privacy", "invalid", Some(format!("{p} is not closed or secret"))));
    }
    if up.name.as_deref().is_some_and(|n| accounts::slugify(n).is_empty()) {
        return Err(ApiError::invalid_field("Team", "name", "invalid", None));
    }
    let u = app.urls.clone();
    let shown = write(&app, move |c, now| {
        let org = org(c, &o)?;
        let before = team(c, &org, &slug)?;
        let mut after = before.clone();
        if let Some(n) = up.name {
            after.slug = accounts::slugify(&n);
            after.name = n;
        }
        match up.description {
            Patch::Absent => {}
            Patch::Null => after.description = None,
            Patch::Value(d) => after.description = Some(d),
        }
        if let Some(p) = up.privacy {
            after.privacy = p;
        }
        if let Some(changes) = TeamChanges::between(&before, &after) {
            accounts::update_team(c, &after, now).map_err(|e| match e.kind {
                platform_store::DbErrorKind::Unique => ApiError::invalid_field("Team", "name", "already_exists", None),
                _ => e.into(),
            })?;
            org_events::team(c, &org, &after, "edited", Some(changes), now)?;
        }
        Ok(team_simple(&u, &org, &after))
    })
    .await?;
    Ok(Reply::ok(shown))
}

/// 204; `team` `deleted` with the team as it was (its memberships go with it).
async fn delete_team(State(app): State<Shared>, Path((o, slug)): Path<(String, String)>) -> ApiResult<Reply> {
    write(&app, move |c, now| {
        let org = org(c, &o)?;
        let t = team(c, &org, &slug)?;
        accounts::delete_team(c, &t)?;
        org_events::team(c, &org, &t, "deleted", None, now)?;
        Ok(())
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// team-membership: a user's membership of a team.
#[derive(Serialize)]
struct TeamMembership {
    url: Uri,
    role: &'static str,
    state: &'static str,
}

fn team_membership(u: &Urls, org: &Account, t: &Team, user: &Account) -> TeamMembership {
    let url = format!("{}/organizations/{}/team/{}/memberships/{}", u.api, org.id, t.id, user.login);
    TeamMembership { url: Uri(url), role: "member", state: "active" }
}

/// 201 the membership when the user joined the team (`membership` `added`), 200 when already on
/// it; 422 when the user is not a member of the organization.
async fn add_team_member(
    State(app): State<Shared>,
    Path((o, slug, login)): Path<(String, String, String)>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    parse::<Empty>(b)?;
    let u = app.urls.clone();
    let (shown, added) = write(&app, move |c, now| {
        let org = org(c, &o)?;
        let (t, user) = (team(c, &org, &slug)?, user(c, &login)?);
        if accounts::org_role(c, org.id, user.id)?.is_none() {
            let message = format!("{} is not a member of {}", user.login, org.login);
            return Err(ApiError::invalid_field("TeamMembership", "login", "invalid", Some(message)));
        }
        let added = accounts::add_team_member(c, t.id, user.id)?;
        if added {
            org_events::membership(c, &org, &t, &user, "added", "team", now)?;
        }
        Ok((team_membership(&u, &org, &t, &user), added))
    })
    .await?;
    Ok(if added { Reply::created(shown) } else { Reply::ok(shown) })
}

/// 204; `membership` `removed` (scope `team`); 404 when the user is not on the team.
async fn remove_team_member(State(app): State<Shared>, Path((o, slug, login)): Path<(String, String, String)>) -> ApiResult<Reply> {
    write(&app, move |c, now| {
        let org = org(c, &o)?;
        let (t, user) = (team(c, &org, &slug)?, user(c, &login)?);
        if !accounts::remove_team_member(c, t.id, user.id)? {
            return Err(ApiError::not_found());
        }
        org_events::membership(c, &org, &t, &user, "removed", "team", now)?;
        Ok(())
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// A body that must hold nothing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}
