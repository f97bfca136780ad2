//! An owner's `repositories` connection (`gh repo list`: `repositoryOwner(login) { repositories
//! (first, after, privacy, isFork, ownerAffiliations, orderBy) { nodes totalCount pageInfo } }`):
//! which repositories, who may see them (as `repository(owner, name)` and the REST API decide),
//! their order, and pages by opaque cursors.
//!
//! Which repositories: an organization's own; a user's own (`OWNER`) and, with
//! `ORGANIZATION_MEMBER`, those of the organizations the user belongs to (the platform keeps no
//! outside collaborators, so `COLLABORATOR` adds none). `affiliations` keeps those the caller is
//! so affiliated with. No repository is a fork, archived or locked.
use std::collections::HashMap;

use async_graphql::{Enum, Error, ErrorExtensions, InputObject};
use base64::Engine;
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::{self, Repo};
use platform_store::DbError;

use super::schema::{Repository, RepositoryVisibility};
use crate::authorize::{check_repo, role_given};
use crate::principal::Role;
use crate::request::ReqInfo;
use crate::state::Shared;

/// The most nodes one page holds, as hosted.
const MAX_PAGE: i32 = 100;

/// The privacy of a repository.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum RepositoryPrivacy {
    Public,
    Private,
}

/// How a user is affiliated with a repository.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum RepositoryAffiliation {
    /// Repositories the user owns.
    Owner,
    /// Repositories the user was added to as a collaborator (none: the platform keeps none).
    Collaborator,
    /// Repositories of organizations the user is a member of.
    OrganizationMember,
}

/// The property repositories are ordered by.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum RepositoryOrderField {
    CreatedAt,
    UpdatedAt,
    PushedAt,
    Name,
    /// Every repository has none: the creation order decides.
    Stargazers,
}

/// A direction of an order.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum OrderDirection {
    Asc,
    Desc,
}

/// How repositories are ordered.
#[derive(InputObject, Clone, Copy)]
pub struct RepositoryOrder {
    pub field: RepositoryOrderField,
    pub direction: OrderDirection,
}

/// The arguments of a `repositories` field.
pub struct Args {
    pub first: Option<i32>,
    pub after: Option<String>,
    pub last: Option<i32>,
    pub before: Option<String>,
    pub privacy: Option<RepositoryPrivacy>,
    pub visibility: Option<RepositoryVisibility>,
    pub is_fork: Option<bool>,
    pub is_archived: Option<bool>,
    pub is_locked: Option<bool>,
    pub owner_affiliations: Option<Vec<RepositoryAffiliation>>,
    pub affiliations: Option<Vec<RepositoryAffiliation>>,
    pub order_by: Option<RepositoryOrder>,
}

/// One page of a connection: its repositories with their cursors, how many there are in all,
/// and where the page lies.
pub struct Page {
    pub nodes: Vec<(String, Repository)>,
    pub total: usize,
    pub has_next: bool,
    pub has_previous: bool,
}

fn error(message: impl Into<String>) -> Error {
    Error::new(message.into()).extend_with(|_, e| e.set("type", "INVALID_ARGUMENT"))
}

/// The opaque cursor of the repository at `index` of the ordered list.
fn cursor(index: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("cursor:v1:{index}"))
}

fn index_of(c: &str) -> Result<usize, Error> {
    base64::engine::general_purpose::STANDARD
        .decode(c)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.strip_prefix("cursor:v1:").and_then(|n| n.parse().ok()))
        .ok_or_else(|| error(format!("`{c}` does not appear to be a valid cursor.")))
}

/// The window `[start, end)` of `len` ordered items the arguments ask for, as the hosted API
/// pages its connections (`first` and `last` both required to be within 0..=100, one of them given).
fn window(a: &Args, len: usize) -> Result<(usize, usize), Error> {
    let size = |name: &str, n: i32| -> Result<usize, Error> {
        if n < 0 {
            return Err(error(format!("`{name}` on a connection cannot be less than zero.")));
        }
        if n > MAX_PAGE {
            return Err(error(format!(
                "Requesting {n} records on the `repositories` connection exceeds the `{name}` limit of {MAX_PAGE} records."
            )));
        }
        Ok(n as usize)
    };
    let mut start = match &a.after {
        Some(c) => (index_of(c)? + 1).min(len),
        None => 0,
    };
    let mut end = match &a.before {
        Some(c) => index_of(c)?.min(len),
        None => len,
    };
    end = end.max(start);
    match (a.first, a.last) {
        (Some(_), Some(_)) => {
            return Err(error("Passing both `first` and `last` to paginate the `repositories` connection is not supported."))
        }
        (None, None) => {
            return Err(error("You must provide a `first` or `last` value to properly paginate the `repositories` connection."))
        }
        (Some(n), None) => end = end.min(start + size("first", n)?),
        (None, Some(n)) => start = start.max(end.saturating_sub(size("last", n)?)),
    }
    Ok((start, end))
}

/// The repositories of `owner` the caller may see that the arguments select, one page of them.
pub async fn page(app: &Shared, info: &ReqInfo, owner: &Account, a: Args) -> async_graphql::Result<Page> {
    let p = info.principal.clone();
    let owner = owner.clone();
    let owner_affiliations =
        a.owner_affiliations.clone().unwrap_or_else(|| vec![RepositoryAffiliation::Owner, RepositoryAffiliation::Collaborator]);
    let (rows, caller_orgs) = app
        .store
        .read(move |c| -> Result<_, DbError> {
            let mut owners = Vec::new();
            if owner.is_org() || owner_affiliations.contains(&RepositoryAffiliation::Owner) {
                owners.push(owner.id);
            }
            if !owner.is_org() && owner_affiliations.contains(&RepositoryAffiliation::OrganizationMember) {
                owners.extend(repos::org_roles_of(c, owner.id)?.into_iter().map(|(org, _)| org));
            }
            let caller_orgs = match p.user() {
                Some(u) => repos::org_roles_of(c, u.id)?,
                None => Vec::new(),
            };
            Ok((repos::of_owners(c, &owners)?, caller_orgs))
        })
        .await
        .map_err(|e| Error::new(e.message))?;
    let caller_orgs: HashMap<i64, String> = caller_orgs.into_iter().collect();
    let caller = info.principal.user().map(|u| u.id);
    let access = &crate::ops::repos::GET.access;
    let mut seen: Vec<(Repo, Role)> = rows
        .into_iter()
        .map(|r| {
            let role = role_given(&info.principal, &r, caller_orgs.get(&r.owner.id).map(String::as_str));
            (r, role)
        })
        .filter(|(r, role)| check_repo(&info.principal, access, r, *role).is_ok())
        .filter(|(r, _)| selected(&a, r, caller, &caller_orgs))
        .collect();
    let order = a.order_by.unwrap_or(RepositoryOrder { field: RepositoryOrderField::CreatedAt, direction: OrderDirection::Asc });
    seen.sort_by(|(x, _), (y, _)| {
        let by = match order.field {
            RepositoryOrderField::Name => x.name.to_lowercase().cmp(&y.name.to_lowercase()),
            RepositoryOrderField::UpdatedAt => x.updated_at.cmp(&y.updated_at),
            RepositoryOrderField::PushedAt => x.pushed_at.cmp(&y.pushed_at),
            RepositoryOrderField::CreatedAt | RepositoryOrderField::Stargazers => x.created_at.cmp(&y.created_at),
        };
        by.then(x.id.cmp(&y.id))
    });
    if order.direction == OrderDirection::Desc {
        seen.reverse();
    }
    let total = seen.len();
    let (start, end) = window(&a, total)?;
    let shown: Vec<(Repo, Role)> = seen.drain(start..end).collect();
    // The default branches' heads of the page's repositories (`isEmpty`, `defaultBranchRef`).
    let keys: Vec<(i64, String)> = shown.iter().map(|(r, _)| (r.id, format!("heads/{}", r.default_branch))).collect();
    let heads = app
        .store
        .read(move |c| keys.iter().map(|(id, name)| repos::resolve_ref(c, *id, name)).collect::<Result<Vec<_>, DbError>>())
        .await
        .map_err(|e| Error::new(e.message))?;
    let nodes = shown
        .into_iter()
        .zip(heads)
        .enumerate()
        .map(|(i, ((repo, role), head))| (cursor(start + i), Repository::new(app, repo, role, head)))
        .collect();
    Ok(Page { nodes, total, has_next: end < total, has_previous: start > 0 })
}

/// Whether the filters of the arguments keep `r`.
fn selected(a: &Args, r: &Repo, caller: Option<i64>, caller_orgs: &HashMap<i64, String>) -> bool {
    let privacy = match a.privacy {
        Some(RepositoryPrivacy::Public) => !r.private,
        Some(RepositoryPrivacy::Private) => r.private,
        None => true,
    };
    let visibility = match a.visibility {
        Some(RepositoryVisibility::Public) => !r.private,
        Some(RepositoryVisibility::Private) => r.private,
        // The platform has no internal repositories.
        Some(RepositoryVisibility::Internal) => false,
        None => true,
    };
    let affiliated = match &a.affiliations {
        Some(list) if !list.is_empty() => list.iter().any(|f| match f {
            RepositoryAffiliation::Owner => Some(r.owner.id) == caller,
            RepositoryAffiliation::OrganizationMember => caller_orgs.contains_key(&r.owner.id),
            RepositoryAffiliation::Collaborator => false,
        }),
        _ => true,
    };
    let never = [a.is_fork, a.is_archived, a.is_locked].contains(&Some(true));
    privacy && visibility && affiliated && !never
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(first: Option<i32>, after: Option<usize>, last: Option<i32>, before: Option<usize>) -> Args {
        Args {
            first,
            after: after.map(cursor),
            last,
            before: before.map(cursor),
            privacy: None,
            visibility: None,
            is_fork: None,
            is_archived: None,
            is_locked: None,
            owner_affiliations: None,
            affiliations: None,
            order_by: None,
        }
    }

    #[test]
    fn windows_page_forward_and_backward() {
        assert_eq!(window(&args(Some(2), None, None, None), 5).unwrap(), (0, 2));
        assert_eq!(window(&args(Some(2), Some(1), None, None), 5).unwrap(), (2, 4));
        assert_eq!(window(&args(Some(10), Some(3), None, None), 5).unwrap(), (4, 5));
        assert_eq!(window(&args(Some(2), Some(4), None, None), 5).unwrap(), (5, 5));
        assert_eq!(window(&args(None, None, Some(2), None), 5).unwrap(), (3, 5));
        assert_eq!(window(&args(None, None, Some(2), Some(3)), 5).unwrap(), (1, 3));
        assert_eq!(window(&args(Some(0), None, None, None), 5).unwrap(), (0, 0));
        for bad in [
            args(None, None, None, None),
            args(Some(1), None, Some(1), None),
            args(Some(101), None, None, None),
            args(Some(-1), None, None, None),
        ] {
            assert!(window(&bad, 5).is_err());
        }
        let mut bad_cursor = args(Some(1), None, None, None);
        bad_cursor.after = Some("nonsense".into());
        assert!(window(&bad_cursor, 5).is_err());
    }
}
