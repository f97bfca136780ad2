//! Reading repositories: one (with the caller's permissions) and the lists of an organization,
//! of the authenticated user and of a user.
use std::collections::HashMap;

use platform_store::domain::accounts;
use platform_store::domain::repos::{self, Repo};
use platform_store::DbError;

use super::shapes::{self, RepositoryItem};
use super::{OrgReposQuery, OwnReposQuery, UserReposQuery};
use crate::authorize::{not_accessible, reach, role_given};
use crate::error::{ApiError, ApiResult};
use crate::principal::{Principal, Role};
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};

pub const ORG_TYPES: [&str; 6] = ["all", "public", "private", "forks", "sources", "member"];
pub const USER_TYPES: [&str; 5] = ["all", "owner", "public", "private", "member"];
pub const SORTS: [&str; 4] = ["created", "updated", "pushed", "full_name"];

pub async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let id = ctx.repo().id;
    let subscribers =
        ctx.app.store.read(move |c| c.query_i64("SELECT COUNT(*) FROM watchers WHERE repo_id = ?", platform_store::params![id])).await?;
    let perms = shapes::permissions(&ctx.principal, ctx.role());
    Ok(Reply::ok(shapes::full(&ctx.app.urls, ctx.version, ctx.repo(), perms, subscribers)))
}

/// The order of a list: `sort` (`default` when absent) and `direction`.
struct Order<'a> {
    sort: &'a str,
    direction: Option<&'a str>,
    page: Pagination,
}

impl<'a> Order<'a> {
    fn of(sort: &'a Option<String>, direction: &'a Option<String>, page: Pagination, default: &'a str) -> Order<'a> {
        Order { sort: sort.as_deref().unwrap_or(default), direction: direction.as_deref(), page }
    }
}

/// A repository the caller may see in a list, with its role there.
struct Seen {
    repo: Repo,
    role: Role,
}

/// The repositories of `owners` the caller may see: public ones, and private ones it has a role
/// on and whose credential reaches private repositories.
fn visible(ctx: &Ctx, rows: Vec<Repo>, org_roles: &HashMap<i64, String>) -> Vec<Seen> {
    let reach = reach(&ctx.principal, &ctx.op.access);
    rows.into_iter()
        .map(|repo| {
            let role = role_given(&ctx.principal, &repo, org_roles.get(&repo.owner.id).map(String::as_str));
            Seen { repo, role }
        })
        .filter(|s| !s.repo.private || (s.role > Role::None && reach.private))
        .collect()
}

/// Sorts by the `sort` and `direction` of the query and answers one page, with `Link`.
fn page_of(ctx: &Ctx, mut seen: Vec<Seen>, order: Order) -> ApiResult<Reply> {
    let sort = order.sort;
    let direction = order.direction.unwrap_or(if sort == "full_name" { "asc" } else { "desc" });
    let page = order.page.page(30, 100);
    seen.sort_by(|a, b| {
        let (a, b) = (&a.repo, &b.repo);
        let by = match sort {
            "full_name" => a.full_name().to_lowercase().cmp(&b.full_name().to_lowercase()),
            "updated" => a.updated_at.cmp(&b.updated_at),
            "pushed" => a.pushed_at.cmp(&b.pushed_at),
            _ => a.created_at.cmp(&b.created_at),
        };
        by.then(a.id.cmp(&b.id))
    });
    if direction == "desc" {
        seen.reverse();
    }
    let total = seen.len() as i64;
    let body: Vec<RepositoryItem> = seen
        .iter()
        .skip(page.offset().min(total) as usize)
        .take(page.per_page as usize)
        .map(|s| shapes::item(&ctx.app.urls, ctx.version, &s.repo, shapes::permissions(&ctx.principal, s.role)))
        .collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

pub async fn list_for_org(ctx: Ctx, Query(q): Query<OrgReposQuery>) -> ApiResult<Reply> {
    let kind = q.kind.as_deref().unwrap_or("all");
    let login = ctx.param("org").to_string();
    let user_id = ctx.principal.user().map(|u| u.id);
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(org) = accounts::by_login(c, &login)?.filter(|a| a.is_org()) else { return Ok(None) };
            let role = match user_id {
                Some(u) => accounts::org_role(c, org.id, u)?,
                None => None,
            };
            Ok(Some((org.id, role, repos::of_owners(c, &[org.id])?)))
        })
        .await?;
    let (org_id, role, rows) = found.ok_or_else(ApiError::not_found)?;
    let roles: HashMap<i64, String> = role.into_iter().map(|r| (org_id, r)).collect();
    let seen = visible(&ctx, rows, &roles).into_iter().filter(|s| match kind {
        "public" => !s.repo.private,
        "private" => s.repo.private,
        // No repository is a fork.
        "forks" => false,
        "member" => s.role > Role::None,
        _ => true,
    });
    page_of(&ctx, seen.collect(), Order::of(&q.sort, &q.direction, q.page, "created"))
}

pub async fn list_for_authenticated_user(ctx: Ctx, Query(q): Query<OwnReposQuery>) -> ApiResult<Reply> {
    let user = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => t.user.clone().ok_or_else(|| not_accessible(t.token.kind))?,
    };
    if q.kind.is_some() && (q.visibility.is_some() || q.affiliation.is_some()) {
        return Err(ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "If you specify visibility or affiliation, you cannot specify type.",
        ));
    }
    let visibility = q.visibility.as_deref().unwrap_or("all");
    let kind = q.kind.as_deref().unwrap_or("all");
    let mut affiliation: Vec<String> = Vec::new();
    for a in q.affiliation.as_deref().unwrap_or("owner,collaborator,organization_member").split(',') {
        let a = a.trim();
        if !["owner", "collaborator", "organization_member"].contains(&a) {
            return Err(ApiError::invalid_request(format!(
                "For 'affiliation', {a:?} is not one of owner, collaborator, organization_member."
            )));
        }
        affiliation.push(a.to_string());
    }
    let user_id = user.id;
    let (org_roles, rows) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let roles = repos::org_roles_of(c, user_id)?;
            let mut owners: Vec<i64> = roles.iter().map(|(o, _)| *o).collect();
            owners.push(user_id);
            Ok((roles, repos::of_owners(c, &owners)?))
        })
        .await?;
    let org_roles: HashMap<i64, String> = org_roles.into_iter().collect();
    let seen = visible(&ctx, rows, &org_roles).into_iter().filter(|s| {
        let own = s.repo.owner.id == user_id;
        // Organization repositories reach the user through membership; the platform keeps
        // no outside collaborators.
        let affiliated =
            if own { affiliation.iter().any(|a| a == "owner") } else { affiliation.iter().any(|a| a == "organization_member") };
        let typed = match kind {
            "owner" => own,
            "member" => !own,
            "public" => !s.repo.private,
            "private" => s.repo.private,
            _ => true,
        };
        let shown = match visibility {
            "public" => !s.repo.private,
            "private" => s.repo.private,
            _ => true,
        };
        affiliated && typed && shown && s.role > Role::None
    });
    page_of(&ctx, seen.collect(), Order::of(&q.sort, &q.direction, q.page, "full_name"))
}

pub async fn list_for_user(ctx: Ctx, Query(q): Query<UserReposQuery>) -> ApiResult<Reply> {
    let kind = q.kind.as_deref().unwrap_or("owner");
    let login = ctx.param("username").to_string();
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(a) = accounts::by_login(c, &login)? else { return Ok(None) };
            Ok(Some(repos::of_owners(c, &[a.id])?))
        })
        .await?;
    let rows = found.ok_or_else(ApiError::not_found)?;
    // Public repositories only; the platform keeps no collaborators, so `member` is empty.
    let seen = rows
        .into_iter()
        .filter(|r| !r.private && kind != "member")
        .map(|repo| {
            let role = role_given(&ctx.principal, &repo, None);
            Seen { repo, role }
        })
        .collect();
    page_of(&ctx, seen, Order::of(&q.sort, &q.direction, q.page, "full_name"))
}
