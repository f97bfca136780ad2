//! Repository shapes: the full repository of `GET /repos/{owner}/{repo}` and the list items,
//! both built on [`MinimalRepository`] with the caller's permissions.
use platform_core::ApiVersion;
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::Serialize;

use crate::principal::{Principal, Role};
use crate::shapes::{self, LicenseSimple, MinimalRepository, SimpleUser, Urls};

/// What the caller may do in a repository (present for authenticated callers).
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
pub struct RepoPermissions {
    pub admin: bool,
    pub maintain: bool,
    pub push: bool,
    pub triage: bool,
    pub pull: bool,
}

/// The permissions a role grants; every authenticated caller may pull a repository it sees.
pub fn permissions(p: &Principal, role: Role) -> Option<RepoPermissions> {
    if !matches!(p, Principal::Token(_)) {
        return None;
    }
    Some(RepoPermissions {
        admin: role >= Role::Admin,
        maintain: role >= Role::Admin,
        push: role >= Role::Write,
        triage: role >= Role::Write,
        pull: true,
    })
}

/// A repository as the repository lists show it (minimal repository, with permissions).
#[derive(Serialize, JsonSchema)]
pub struct RepositoryItem {
    #[serde(flatten)]
    pub repo: MinimalRepository,
    pub license: Option<LicenseSimple>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<RepoPermissions>,
}

/// FullRepository: the repository with its settings, its organization (organization
/// repositories) and the caller's permissions. Settings the platform does not keep show the
/// hosted defaults; there are no forks, so `parent` and `source` never appear.
#[derive(Serialize, JsonSchema)]
pub struct FullRepository {
    #[serde(flatten)]
    pub repo: MinimalRepository,
    pub license: Option<LicenseSimple>,
    pub has_discussions: bool,
    pub network_count: i64,
    pub subscribers_count: i64,
    pub allow_forking: bool,
    pub web_commit_signoff_required: bool,
    pub allow_rebase_merge: bool,
    pub allow_squash_merge: bool,
    pub allow_merge_commit: bool,
    pub allow_auto_merge: bool,
    pub allow_update_branch: bool,
    pub delete_branch_on_merge: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<RepoPermissions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<SimpleUser>,
}

pub fn item(u: &Urls, v: ApiVersion, r: &Repo, permissions: Option<RepoPermissions>) -> RepositoryItem {
    RepositoryItem { repo: shapes::minimal_repository(u, v, r), license: None, permissions }
}

pub fn full(u: &Urls, v: ApiVersion, r: &Repo, permissions: Option<RepoPermissions>, subscribers: i64) -> FullRepository {
    FullRepository {
        repo: shapes::minimal_repository(u, v, r),
        license: None,
        has_discussions: false,
        network_count: 0,
        subscribers_count: subscribers,
        allow_forking: true,
        web_commit_signoff_required: false,
        allow_rebase_merge: true,
        allow_squash_merge: true,
        allow_merge_commit: true,
        allow_auto_merge: false,
        allow_update_branch: false,
        delete_branch_on_merge: false,
        permissions,
        organization: r.owner.is_org().then(|| shapes::simple_user(u, &r.owner)),
    }
}
