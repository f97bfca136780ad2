//! `GET /user/orgs` (the token user's organizations) and `GET /orgs/{org}` (an organization's
//! profile; owners see the owner fields).
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account};
use platform_store::DbError;

use super::shapes::{self, Counts, OrgFacts, OrganizationFull, OrganizationSimple};
use super::users::token_user;
use crate::authorize::{has_permission, has_scope, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, Operation, Resp};
use crate::principal::Principal;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};

pub static LIST_FOR_AUTHENTICATED_USER: Operation =
    Operation::get("orgs/list-for-authenticated-user", "/user/orgs", "List organizations for the authenticated user")
        .docs("https://docs.service.example/rest/orgs/orgs#list-organizations-for-the-authenticated-user")
        // Fine-grained tokens need no permission; they list the organization they are limited to.
        .access(Access::token(&["read:org", "user"], None, Level::Read))
        .cached()
        .responds(&[
            Resp::typed::<Vec<OrganizationSimple>>(200, "The organizations the user belongs to, by login.").with_headers(&["Link"])
        ]);

/// The fine-grained permission that shows an organization's owner fields.
const ORG_ADMIN: (&str, Level) = ("organization_administration", Level::Read);

pub static GET: Operation = Operation::get("orgs/get", "/orgs/{org}", "Get an organization")
    .docs("https://docs.service.example/rest/orgs/orgs#get-an-organization")
    .access(Access::token(&[], None, Level::Read).public())
    .cached()
    .responds(&[Resp::typed::<OrganizationFull>(
        200,
        "The organization; owners (classic and OAuth tokens with `admin:org`, other tokens with Administration read) also see its plan, private repository counts and member settings.",
    )]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_FOR_AUTHENTICATED_USER, list_for_authenticated_user).op(&GET, get)
}

async fn list_for_authenticated_user(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let (user, t) = token_user(&ctx)?;
    if t.token.kind.uses_scopes() && !has_scope(&t.token.scopes, ctx.op.access.scopes) {
        return Err(not_accessible(t.token.kind));
    }
    // A fine-grained token limited to an organization reaches only that one.
    let only = t.token.resource_owner_id.filter(|o| t.token.kind == TokenKind::FineGrained && *o != user.id);
    let page = q.page(30, 100);
    let (rows, total) = ctx.app.store.read(move |c| accounts::orgs_of(c, user.id, only, page.offset(), page.per_page)).await?;
    let body: Vec<OrganizationSimple> = rows.iter().map(|o| shapes::organization_simple(&ctx.app.urls, o)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

/// Does the caller see the organization's owner fields? Owners with `admin:org` (scope
/// tokens) or Administration read (others), and the organization's own installations with it.
pub fn sees_owner_fields(p: &Principal, org_role: Option<&str>, org: &Account) -> bool {
    let Principal::Token(t) = p else { return false };
    match t.token.kind {
        TokenKind::Classic | TokenKind::Oauth => org_role == Some("owner") && has_scope(&t.token.scopes, &["admin:org"]),
        TokenKind::FineGrained | TokenKind::UserToServer => {
            org_role == Some("owner") && t.token.resource_owner_id.is_none_or(|o| o == org.id) && has_permission(t, ORG_ADMIN)
        }
        TokenKind::Installation => t.installation.as_ref().is_some_and(|i| i.account_id == org.id) && has_permission(t, ORG_ADMIN),
        TokenKind::Workflow => false,
    }
}

/// The organization of `login` (404 unless it is one) with what its full profile shows this
/// caller.
pub async fn org_with_facts(ctx: &Ctx, login: String) -> ApiResult<(Account, OrgFacts)> {
    let user_id = ctx.principal.user().map(|u| u.id);
    let (org, role, counts, seats) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(org) = accounts::by_login(c, &login)?.filter(Account::is_org) else { return Ok(None) };
            let role = match user_id {
                Some(u) => accounts::org_role(c, org.id, u)?,
                None => None,
            };
            let counts = accounts::repo_counts(c, org.id)?;
            let seats = accounts::org_member_count(c, org.id)?;
            Ok(Some((org, role, counts, seats)))
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let facts = facts(&ctx.principal, &org, role.as_deref(), counts, seats);
    Ok((org, facts))
}

/// What an organization's full profile shows the caller of an organization operation.
pub async fn org_facts(ctx: &Ctx) -> ApiResult<OrgFacts> {
    let caller = ctx.org();
    let id = caller.org.id;
    let (counts, seats) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> { Ok((accounts::repo_counts(c, id)?, accounts::org_member_count(c, id)?)) })
        .await?;
    Ok(facts(&ctx.principal, &caller.org, caller.role.as_deref(), counts, seats))
}

fn facts(p: &Principal, org: &Account, role: Option<&str>, counts: (i64, i64), seats: i64) -> OrgFacts {
    let owner = sees_owner_fields(p, role, org);
    OrgFacts { counts: Counts { public_repos: counts.0, private_repos: counts.1 }, owner_seats: owner.then_some(seats) }
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let (org, facts) = org_with_facts(&ctx, ctx.param("org").to_string()).await?;
    Ok(Reply::ok(shapes::organization_full(&ctx.app.urls, &org, facts)))
}
