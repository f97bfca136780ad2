//! Authorization of a request against a repository, per the operation's declared [`Access`]:
//! private repositories the caller may not see are 404; a visible repository the credentials
//! may not act on is 403; anonymous callers of non-public operations get 401.
use platform_core::TokenKind;
use platform_store::domain::repos::{self, Lookup, Reach, Repo};
use platform_store::domain::{accounts, enterprise_teams, security_managers};
use platform_store::{Conn, DbError};

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, AuthKind, Level, On};
use crate::principal::{Principal, Role, TokenAuth};
use crate::request::{Ctx, EnterpriseCaller, OrgCaller, Target};

/// Scopes implied by a held scope (`repo` covers `repo:status`, …).
fn scope_covers(held: &str, wanted: &str) -> bool {
    held == wanted
        || match held {
            "repo" => matches!(wanted, "repo:status" | "repo_deployment" | "public_repo" | "repo:invite" | "security_events"),
            "admin:org" => matches!(wanted, "write:org" | "read:org"),
            "write:org" => wanted == "read:org",
            "admin:enterprise" => matches!(wanted, "manage_runners:enterprise" | "manage_billing:enterprise" | "read:enterprise"),
            "admin:org_hook" => false,
            "user" => matches!(wanted, "read:user" | "user:email" | "user:follow"),
            _ => false,
        }
}

pub fn has_scope(scopes: &[String], accepted: &[&str]) -> bool {
    accepted.is_empty() || accepted.iter().any(|w| scopes.iter().any(|h| scope_covers(h, w)))
}

/// Fine-grained permission check; `write` implies `read`, `metadata: read` is implicit.
pub fn has_permission(t: &TokenAuth, (name, level): (&str, Level)) -> bool {
    if name == "metadata" && level == Level::Read {
        return true;
    }
    match t.token.permissions.get(name).map(String::as_str) {
        Some("write") | Some("admin") => true,
        Some("read") => level == Level::Read,
        _ => false,
    }
}

/// The 403 message for a token lacking a scope or permission.
pub fn not_accessible(kind: TokenKind) -> ApiError {
    if kind.is_integration() || kind == TokenKind::Oauth {
        ApiError::forbidden("Resource not accessible by integration")
    } else {
        ApiError::forbidden("Resource not accessible by personal access token")
    }
}

/// What `p` reaches in an operation with `access`, whatever its identity may see: the one
/// rule for single repositories ([`role_of`], [`check_repo`]) and for lists spanning many
/// (dependency alerts of organizations and enterprises, user and dashboard event feeds), which
/// filter their rows by it before paging. Private repositories need [`sees_private`] from scope
/// tokens, and the operation's permission from other tokens.
pub fn reach(p: &Principal, access: &Access) -> Reach {
    let Principal::Token(t) = p else { return Reach { private: false, owner: None, only: None } };
    let private = if t.token.kind.uses_scopes() {
        sees_private(&t.token.scopes, access)
    } else {
        access.permission.is_none_or(|perm| has_permission(t, perm))
    };
    Reach { private, ..limits(t) }
}

/// Scopes that act on repositories without reaching private ones: `public_repo` reaches public
/// repositories only; `delete_repo` adds deletion to what `repo` or `public_repo` reach.
const PUBLIC_ONLY: [&str; 2] = ["public_repo", "delete_repo"];

/// Whether scope-token `scopes` see private repositories in an operation with `access`: a scope
/// the operation accepts that reaches private repositories (`repo`, `repo:status`, …), or `repo`
/// where it accepts none of those. Reads and writes alike: a token that cannot see a private
/// repository can change nothing in it.
pub fn sees_private(scopes: &[String], access: &Access) -> bool {
    let reaching: Vec<&str> = access.scopes.iter().copied().filter(|s| !PUBLIC_ONLY.contains(s)).collect();
    has_scope(scopes, if reaching.is_empty() { &["repo"] } else { &reaching })
}

/// Whether a token's scopes (scope tokens) or permissions (the others) grant an operation with
/// `access`, on a private repository (`private`), or on a public one or none at all. The one
/// rule every operation's grant is decided by: on a private repository `public_repo` grants
/// nothing.
pub fn grants(t: &TokenAuth, access: &Access, private: bool) -> bool {
    if t.token.kind.uses_scopes() {
        let mut accepted = access.scopes.iter().filter(|s| !(private && **s == "public_repo"));
        access.scopes.is_empty() || accepted.any(|w| t.token.scopes.iter().any(|h| scope_covers(h, w)))
    } else {
        access.permission.is_none_or(|perm| has_permission(t, perm))
    }
}

/// A token's own limits (owner, selection, single repository), private repositories aside.
fn limits(t: &TokenAuth) -> Reach {
    let tok = &t.token;
    let selected = (tok.repository_selection == "selected").then(|| tok.repository_ids.clone());
    let (owner, only) = match tok.kind {
        TokenKind::Workflow => (None, Some(tok.repo_id.into_iter().collect())),
        // No installation behind the token: nothing (no account has id -1).
        TokenKind::Installation => (Some(t.installation.as_ref().map_or(-1, |i| i.account_id)), selected),
        TokenKind::FineGrained => (tok.resource_owner_id, selected),
        _ => (None, None),
    };
    Reach { private: true, owner, only }
}

/// The identity's role on a repository, within the token's limits ([`Reach`]).
pub fn role_of(c: &mut dyn Conn, p: &Principal, repo: &Repo) -> Result<Role, DbError> {
    let org_role = match p.user() {
        Some(u) if repo.owner.is_org() && repo.owner.id != u.id => accounts::org_role(c, repo.owner.id, u.id)?,
        _ => None,
    };
    Ok(role_given(p, repo, org_role.as_deref()))
}

/// [`role_of`] with the user's role in the owning organization already known (lists of many
/// repositories look memberships up once).
pub fn role_given(p: &Principal, repo: &Repo, org_role: Option<&str>) -> Role {
    let Principal::Token(t) = p else { return Role::None };
    if !limits(t).within_limits(repo.id, repo.owner.id) {
        return Role::None;
    }
    match t.token.kind {
        TokenKind::Workflow | TokenKind::Installation => Role::Admin,
        _ => {
            let Some(user) = &t.user else { return Role::None };
            if repo.owner.id == user.id {
                Role::Admin
            } else if repo.owner.is_org() {
                match org_role {
                    Some("owner") => Role::Admin,
                    Some(_) => Role::Write,
                    None => Role::None,
                }
            } else {
                Role::None
            }
        }
    }
}

/// Applies an operation's access rule to a repository the caller asked for.
pub fn check_repo(p: &Principal, access: &Access, repo: &Repo, role: Role) -> ApiResult<()> {
    // Private repositories are invisible (404) to callers with no role, and to scope tokens
    // without a scope that reaches private repositories.
    if repo.private && role == Role::None {
        return Err(ApiError::not_found());
    }
    let public_read = !repo.private && access.public && access.role == Level::Read;
    let t = match p {
        Principal::Token(t) => t,
        Principal::Anonymous if public_read => return Ok(()),
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) if public_read => return Ok(()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
    };
    let kind = t.token.kind;
    // A scope token that does not reach private repositories cannot see this one.
    if repo.private && kind.uses_scopes() && !sees_private(&t.token.scopes, access) {
        return Err(ApiError::not_found());
    }
    if (repo.private || access.role == Level::Write) && !grants(t, access, repo.private) {
        return Err(not_accessible(kind));
    }
    let effective = if repo.private { role } else { role.max(Role::Read) };
    let needed = match access.role {
        Level::Read => Role::Read,
        Level::Write => Role::Write,
    };
    if effective < needed {
        return Err(ApiError::forbidden("Must have push access to this repository."));
    }
    Ok(())
}

/// Loads and authorizes what the operation's path names (`operation::On`), before its handler
/// runs: the one place the contract applies an operation's access rule to a resource.
pub async fn target(ctx: &Ctx) -> ApiResult<Target> {
    let kinds = ctx.op.access.tokens;
    if !kinds.is_empty() {
        match &ctx.principal {
            Principal::Anonymous => return Err(ApiError::requires_authentication()),
            Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
            Principal::Token(t) if !kinds.contains(&t.token.kind) => return Err(not_accessible(t.token.kind)),
            Principal::Token(_) => {}
        }
    }
    Ok(match ctx.op.on {
        On::Caller => match (ctx.op.access.auth, &ctx.principal) {
            // The application of `{client_id}`, by its own basic credentials.
            (AuthKind::AppBasic, Principal::App(a)) if a.app.client_id == ctx.param("client_id") => Target::App(a.app.clone()),
            (AuthKind::AppBasic, Principal::Anonymous) => return Err(ApiError::requires_authentication()),
            (AuthKind::AppBasic, _) => return Err(ApiError::not_found()),
            // Nothing public: who the caller is comes first.
            (AuthKind::Token, Principal::Anonymous) if !ctx.op.access.public => return Err(ApiError::requires_authentication()),
            _ => Target::Nothing,
        },
        On::Repo | On::RepoAdmin => {
            let (repo, role) = repo_role(ctx).await?;
            if ctx.op.on == On::RepoAdmin && role < Role::Admin {
                return Err(ApiError::forbidden(ADMIN_RIGHTS));
            }
            Target::Repo { repo, role }
        }
        On::OrgOwner => Target::Org(org_caller(ctx, Admit::Owners).await?),
        On::OrgOwnerOrSecurityManager => Target::Org(org_caller(ctx, Admit::OwnersAndSecurityManagers).await?),
        On::OrgMember => Target::Org(org_caller(ctx, Admit::Members).await?),
        On::EnterpriseMember => Target::Enterprise(enterprise_member(ctx).await?),
    })
}

/// The refusal of repository administration to others who may see the repository.
pub const ADMIN_RIGHTS: &str = "Must have admin rights to Repository.";

/// Resolves `{owner}/{repo}` of the path (case-insensitive, `.git` accepted) and authorizes
/// the operation on it, with the caller's role there. A renamed repository answers 301 to its
/// new name.
async fn repo_role(ctx: &Ctx) -> ApiResult<(Repo, Role)> {
    let owner = ctx.param("owner").to_lowercase();
    let name = ctx.param("repo");
    let name = name.strip_suffix(".git").unwrap_or(name).to_lowercase();
    let key = (owner, name, ctx.principal.cache_key());
    let generation = ctx.access_generation();
    let (found, role) = match generation.and_then(|g| ctx.app.caches.repos.get(&key, g)) {
        Some(hit) => hit,
        None => {
            let principal = ctx.principal.clone();
            let (owner, name) = (key.0.clone(), key.1.clone());
            let loaded = ctx
                .app
                .store
                .read(move |c| -> Result<_, DbError> {
                    let found = repos::lookup(c, &owner, &name)?;
                    let role = match &found {
                        Lookup::Found(r) | Lookup::Moved(r) => role_of(c, &principal, r)?,
                        Lookup::Missing => Role::None,
                    };
                    Ok((found, role))
                })
                .await?;
            if let Some(g) = generation {
                ctx.app.caches.repos.put(key, g, loaded.clone());
            }
            loaded
        }
    };
    match found {
        Lookup::Missing => Err(ApiError::not_found()),
        Lookup::Moved(r) => {
            if r.private && role == Role::None {
                return Err(ApiError::not_found());
            }
            Err(ApiError::moved(moved_location(ctx, &r)))
        }
        Lookup::Found(r) => {
            check_repo(&ctx.principal, &ctx.op.access, &r, role).map_err(|e| match ctx.op.scope_refusal {
                // A scope token lacking the operation's scope hears the operation's own refusal.
                Some(m) if e.status == axum::http::StatusCode::FORBIDDEN && uses_scopes(&ctx.principal) => ApiError::forbidden(m),
                _ => e,
            })?;
            Ok((r, role))
        }
    }
}

fn uses_scopes(p: &Principal) -> bool {
    matches!(p, Principal::Token(t) if t.token.kind.uses_scopes())
}

/// This request's URL with the repository's current `owner/name`.
fn moved_location(ctx: &Ctx, r: &Repo) -> String {
    let rest: Vec<&str> = ctx.path.splitn(5, '/').collect(); // "", "repos", owner, repo, rest
    let tail = rest.get(4).map(|t| format!("/{t}")).unwrap_or_default();
    let prefix = if rest.get(1) == Some(&"networks") { "networks" } else { "repos" };
    let pairs = ctx.query_pairs();
    let q = if pairs.is_empty() { String::new() } else { format!("?{}", crate::request::encode_query(pairs)) };
    format!("{}/{prefix}/{}/{}{tail}{q}", ctx.app.urls.api, r.owner.login, r.name)
}

/// Who an organization operation admits besides the organization's installations.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Admit {
    Owners,
    OwnersAndSecurityManagers,
    Members,
}

/// Resolves `{org}` (or `{org_id}`) and authorizes an organization operation per the declared
/// access: anonymous callers 401; an unknown organization, or one the caller is not admitted
/// to, 404; credentials lacking the scope or permission 403. Installation tokens act for their
/// organization with the permission.
async fn org_caller(ctx: &Ctx, admit: Admit) -> ApiResult<OrgCaller> {
    let t = match &ctx.principal {
        Principal::Token(t) => t.clone(),
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::not_found()),
    };
    let key = match ctx.op.path.contains("{org_id}") {
        true => Err(ctx.param("org_id").parse::<i64>().map_err(|_| ApiError::not_found())?),
        false => Ok(ctx.param("org").to_string()),
    };
    let user_id = t.user.as_ref().map(|u| u.id);
    let (org, role, manager) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let found = match &key {
                Ok(login) => accounts::by_login(c, login)?,
                Err(id) => accounts::by_id(c, *id)?,
            };
            let Some(org) = found.filter(|a| a.is_org()) else { return Ok((None, None, false)) };
            let role = match user_id {
                Some(u) => accounts::org_role(c, org.id, u)?,
                None => None,
            };
            let manager = match user_id {
                Some(u) if admit == Admit::OwnersAndSecurityManagers => security_managers::owner_or_manager(c, org.id, u)?,
                _ => false,
            };
            Ok((Some(org), role, manager))
        })
        .await?;
    let org = org.ok_or_else(ApiError::not_found)?;
    let kind = t.token.kind;
    let installation = kind == TokenKind::Installation;
    match kind {
        TokenKind::Workflow => return Err(ApiError::not_found()),
        TokenKind::Installation => {
            if t.installation.as_ref().is_none_or(|i| i.account_id != org.id) {
                return Err(ApiError::not_found());
            }
        }
        _ => {
            let admitted = match admit {
                Admit::Owners => role.as_deref() == Some("owner"),
                Admit::OwnersAndSecurityManagers => manager,
                Admit::Members => role.is_some(),
            };
            if !admitted || t.user.is_none() {
                return Err(ApiError::not_found());
            }
            if kind == TokenKind::FineGrained && t.token.resource_owner_id.is_some_and(|o| o != org.id) {
                return Err(ApiError::not_found());
            }
        }
    }
    if !grants(&t, &ctx.op.access, false) {
        return Err(not_accessible(kind));
    }
    let oauth_app = if kind == TokenKind::Oauth { t.token.app_id } else { None };
    Ok(OrgCaller { org, user: t.user.clone(), role, installation, oauth_app })
}

/// Resolves `{enterprise}` and authorizes an enterprise operation: tokens acting for a user
/// (classic, OAuth, fine-grained) who is a member of the enterprise (404 otherwise), with the
/// scope or permission (403); a fine-grained token reaches the enterprise through its user or
/// one of the enterprise's organizations.
async fn enterprise_member(ctx: &Ctx) -> ApiResult<EnterpriseCaller> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => t.clone(),
    };
    let kind = t.token.kind;
    let user = match (&t.user, kind) {
        (Some(u), TokenKind::Classic | TokenKind::Oauth | TokenKind::FineGrained) => u.clone(),
        _ => return Err(not_accessible(kind)),
    };
    let slug = ctx.param("enterprise").to_string();
    let (user_id, resource_owner) = (user.id, t.token.resource_owner_id);
    let (ent, role, reach) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(ent) = accounts::enterprise_by_slug(c, &slug)? else { return Ok((None, None, false)) };
            let role = enterprise_teams::enterprise_role(c, ent.id, user_id)?;
            let reach = match resource_owner {
                None => true,
                Some(o) => o == user_id || enterprise_teams::owns_org(c, ent.id, o)?,
            };
            Ok((Some(ent), role, reach))
        })
        .await?;
    let (Some(ent), Some(role)) = (ent, role) else { return Err(ApiError::not_found()) };
    if !grants(&t, &ctx.op.access, false) || (!kind.uses_scopes() && !reach) {
        return Err(not_accessible(kind));
    }
    Ok(EnterpriseCaller { ent, user, owner: role == "owner", fine_grained: kind == TokenKind::FineGrained })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn scopes() {
        let held = vec!["repo".to_string()];
        assert!(has_scope(&held, &["repo:status"]));
        assert!(!has_scope(&["read:org".to_string()], &["repo", "repo:status"]));
        assert!(has_scope(&[], &[]));
    }
}
