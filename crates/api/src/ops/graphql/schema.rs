//! The GraphQL schema answered: its types and fields, named and typed as the hosted schema
//! names them (a subset of it). A field is added by declaring it here; the library validates
//! documents against these declarations, answers introspection from them and resolves them.
//! Resolvers find the request's [`ReqInfo`] (the caller) and the application ([`Shared`]: the
//! store) in the context.
use std::sync::OnceLock;

use async_graphql::{
    Context, EmptyMutation, EmptySubscription, Enum, Error, ErrorExtensions, InputValueError, InputValueResult, Interface, Object, Scalar,
    ScalarType, Schema, Value, ID,
};
use platform_core::ids::node_id;
use platform_core::time::{format_ts, parse_ts};
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::{self, Lookup, Repo};
use platform_store::DbError;

use super::limits::{MAX_COMPLEXITY, MAX_DEPTH, MAX_DIRECTIVES, MAX_NESTING};
use crate::authorize::{check_repo, role_of};
use crate::principal::Role;
use crate::request::ReqInfo;
use crate::state::Shared;

pub type PlatformSchema = Schema<Query, EmptyMutation, EmptySubscription>;

/// The schema with its limits, built once per process.
pub fn schema() -> &'static PlatformSchema {
    static SCHEMA: OnceLock<PlatformSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Schema::build(Query, EmptyMutation, EmptySubscription)
            .limit_depth(MAX_DEPTH)
            .limit_complexity(MAX_COMPLEXITY)
            .limit_recursive_depth(MAX_NESTING)
            .limit_directives(MAX_DIRECTIVES)
            .finish()
    })
}

/// The query root.
pub struct Query;

#[Object]
impl Query {
    /// The currently authenticated user.
    async fn viewer(&self, ctx: &Context<'_>) -> async_graphql::Result<User> {
        match ctx.data_unchecked::<ReqInfo>().principal.user() {
            Some(user) => Ok(User(user.clone())),
            // Installation, workflow and app credentials act for no user.
            None => Err(Error::new("Resource not accessible by integration").extend_with(|_, e| e.set("type", "FORBIDDEN"))),
        }
    }

    /// Lookup a given repository by the owner and repository name (hidden from those who may
    /// not read it, as through the REST API).
    async fn repository(&self, ctx: &Context<'_>, owner: String, name: String) -> async_graphql::Result<Repository> {
        let info = ctx.data_unchecked::<ReqInfo>();
        let app = ctx.data_unchecked::<Shared>();
        let p = info.principal.clone();
        let (o, n) = (owner.clone(), name.clone());
        let found = app
            .store
            .read(move |c| {
                let repo = match repos::lookup(c, &o, &n)? {
                    Lookup::Found(r) | Lookup::Moved(r) => r,
                    Lookup::Missing => return Ok(None),
                };
                let role = role_of(c, &p, &repo)?;
                let head = repos::resolve_ref(c, repo.id, &format!("heads/{}", repo.default_branch))?;
                Ok::<_, DbError>(Some((repo, role, head)))
            })
            .await
            .map_err(|e| Error::new(e.message))?;
        let visible = found.filter(|(repo, role, _)| check_repo(&info.principal, &crate::ops::repos::GET.access, repo, *role).is_ok());
        let Some((repo, role, head)) = visible else {
            return Err(Error::new(format!("Could not resolve to a Repository with the name '{owner}/{name}'."))
                .extend_with(|_, e| e.set("type", "NOT_FOUND")));
        };
        Ok(Repository { web: app.urls.web.clone(), host: app.urls.host.clone(), repo, role, head })
    }
}

/// A repository, as a caller with `role` sees it; `head` is its default branch's commit.
pub struct Repository {
    web: String,
    host: String,
    repo: Repo,
    role: Role,
    head: Option<String>,
}

/// The access levels a user may have on a repository.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum RepositoryPermission {
    Admin,
    Maintain,
    Write,
    Triage,
    Read,
}

/// The repository's visibility level.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum RepositoryVisibility {
    Private,
    Public,
    Internal,
}

#[Object]
impl Repository {
    async fn id(&self) -> ID {
        ID(node_id("Repository", self.repo.id))
    }

    async fn database_id(&self) -> Option<i64> {
        Some(self.repo.id)
    }

    async fn name(&self) -> &str {
        &self.repo.name
    }

    /// `owner/name`.
    async fn name_with_owner(&self) -> String {
        self.repo.full_name()
    }

    /// The user or organization that owns the repository.
    async fn owner(&self) -> RepositoryOwner {
        if self.repo.owner.is_org() {
            RepositoryOwner::Organization(Organization(self.repo.owner.clone()))
        } else {
            RepositoryOwner::User(User(self.repo.owner.clone()))
        }
    }

    async fn description(&self) -> Option<&str> {
        self.repo.description.as_deref()
    }

    /// The repository's web page (clone with `url` + `.git`).
    async fn url(&self) -> String {
        format!("{}/{}", self.web, self.repo.full_name())
    }

    async fn ssh_url(&self) -> String {
        format!("git@{}:{}.git", self.host, self.repo.full_name())
    }

    async fn homepage_url(&self) -> Option<&str> {
        self.repo.homepage.as_deref()
    }

    async fn is_private(&self) -> bool {
        self.repo.private
    }

    async fn visibility(&self) -> RepositoryVisibility {
        if self.repo.private {
            RepositoryVisibility::Private
        } else {
            RepositoryVisibility::Public
        }
    }

    async fn is_fork(&self) -> bool {
        false
    }

    async fn is_archived(&self) -> bool {
        false
    }

    async fn is_template(&self) -> bool {
        false
    }

    async fn is_mirror(&self) -> bool {
        false
    }

    /// Whether the repository has no commits.
    async fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    async fn is_in_organization(&self) -> bool {
        self.repo.owner.is_org()
    }

    async fn has_issues_enabled(&self) -> bool {
        true
    }

    async fn has_wiki_enabled(&self) -> bool {
        true
    }

    async fn has_projects_enabled(&self) -> bool {
        true
    }

    /// Whether merge commits are allowed on pull requests (all three methods are).
    async fn merge_commit_allowed(&self) -> bool {
        true
    }

    async fn rebase_merge_allowed(&self) -> bool {
        true
    }

    async fn squash_merge_allowed(&self) -> bool {
        true
    }

    /// The caller's permission on the repository (`null` for none).
    async fn viewer_permission(&self) -> Option<RepositoryPermission> {
        match self.role {
            Role::Admin => Some(RepositoryPermission::Admin),
            Role::Write => Some(RepositoryPermission::Write),
            Role::Read => Some(RepositoryPermission::Read),
            Role::None if !self.repo.private => Some(RepositoryPermission::Read),
            Role::None => None,
        }
    }

    /// The ref of the default branch (`null` before its first commit).
    async fn default_branch_ref(&self) -> Option<BranchRef> {
        self.head.as_ref().map(|oid| BranchRef { name: self.repo.default_branch.clone(), oid: oid.clone() })
    }

    /// The repository this one was forked from (the platform keeps no forks).
    async fn parent(&self) -> Option<Repository> {
        None
    }

    async fn stargazer_count(&self) -> i64 {
        0
    }

    async fn fork_count(&self) -> i64 {
        0
    }

    async fn created_at(&self) -> DateTime {
        DateTime(self.repo.created_at)
    }

    async fn updated_at(&self) -> DateTime {
        DateTime(self.repo.updated_at)
    }

    async fn pushed_at(&self) -> Option<DateTime> {
        self.repo.pushed_at.map(DateTime)
    }
}

/// A branch ref.
pub struct BranchRef {
    name: String,
    oid: String,
}

#[Object(name = "Ref")]
impl BranchRef {
    async fn id(&self) -> ID {
        ID(format!("REF_{}", self.name))
    }

    async fn name(&self) -> &str {
        &self.name
    }

    /// `refs/heads/`.
    async fn prefix(&self) -> &str {
        "refs/heads/"
    }

    /// The commit the ref points at.
    async fn target(&self) -> Commit {
        Commit { oid: self.oid.clone() }
    }
}

/// A commit.
pub struct Commit {
    oid: String,
}

#[Object]
impl Commit {
    /// The commit's sha.
    async fn oid(&self) -> &str {
        &self.oid
    }

    async fn abbreviated_oid(&self) -> &str {
        &self.oid[..7.min(self.oid.len())]
    }
}

/// An organization.
pub struct Organization(Account);

#[Object]
impl Organization {
    async fn id(&self) -> ID {
        ID(node_id("Organization", self.0.id))
    }

    async fn database_id(&self) -> Option<i64> {
        Some(self.0.id)
    }

    async fn login(&self) -> &str {
        &self.0.login
    }

    async fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }
}

/// The owner of a repository.
#[derive(Interface)]
#[graphql(field(name = "id", ty = "ID"), field(name = "login", ty = "&str"))]
pub enum RepositoryOwner {
    User(User),
    Organization(Organization),
}

/// A user account.
pub struct User(Account);

#[Object]
impl User {
    /// The node ID (the REST API's `node_id`).
    async fn id(&self) -> ID {
        ID(node_id("User", self.0.id))
    }

    /// The primary key from the database (the REST API's `id`).
    async fn database_id(&self) -> Option<i64> {
        Some(self.0.id)
    }

    /// The username used to login.
    async fn login(&self) -> &str {
        &self.0.login
    }

    /// The user's public profile name.
    async fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }

    /// Whether this user is a site administrator.
    async fn is_site_admin(&self) -> bool {
        self.0.site_admin
    }

    /// When the account was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.0.created_at)
    }

    /// When the account was last updated.
    async fn updated_at(&self) -> DateTime {
        DateTime(self.0.updated_at)
    }
}

/// An ISO-8601 encoded UTC date string (`2026-11-21T10:00:00Z`).
pub struct DateTime(pub i64);

#[Scalar]
impl ScalarType for DateTime {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) => parse_ts(s).map(DateTime).ok_or_else(|| InputValueError::custom("not an ISO-8601 date and time")),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(format_ts(self.0))
    }
}
