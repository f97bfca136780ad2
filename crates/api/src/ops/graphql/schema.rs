//! The GraphQL schema answered: its types and fields, named and typed as the hosted schema
//! names them (a subset of it). A field is added by declaring it here; the library validates
//! documents against these declarations, answers introspection from them and resolves them.
//! Resolvers find the request's [`ReqInfo`] (the caller) and the application ([`Shared`]: the
//! store) in the context.
use std::sync::OnceLock;

use async_graphql::{
    Context, EmptyMutation, EmptySubscription, Enum, Error, ErrorExtensions, InputValueError, InputValueResult, Interface, Object, Scalar,
    ScalarType, Schema, SimpleObject, Value, ID,
};
use platform_core::ids::node_id;
use platform_core::time::{format_ts, parse_ts};
use platform_store::domain::accounts::{self, Account};
use platform_store::domain::repos::{self, Lookup, Repo};
use platform_store::DbError;

use super::limits::{MAX_COMPLEXITY, MAX_DEPTH, MAX_DIRECTIVES, MAX_NESTING};
use super::repositories::{self, RepositoryAffiliation, RepositoryOrder, RepositoryPrivacy};
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
        Ok(Repository::new(app, repo, role, head))
    }

    /// Lookup a repository owner (a user or an organization) by login; null when no account
    /// has it.
    async fn repository_owner(&self, ctx: &Context<'_>, login: String) -> async_graphql::Result<Option<RepositoryOwner>> {
        let app = ctx.data_unchecked::<Shared>();
        let found = app.store.read(move |c| accounts::by_login(c, &login)).await.map_err(|e| Error::new(e.message))?;
        Ok(found.map(RepositoryOwner::of))
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

impl Repository {
    pub fn new(app: &Shared, repo: Repo, role: Role, head: Option<String>) -> Repository {
        Repository { web: app.urls.web.clone(), host: app.urls.host.clone(), repo, role, head }
    }
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
        RepositoryOwner::of(self.repo.owner.clone())
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

    /// A list of repositories that the owner owns.
    #[allow(clippy::too_many_arguments)] // the field's arguments, as the hosted schema declares them
    async fn repositories(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
        privacy: Option<RepositoryPrivacy>,
        visibility: Option<RepositoryVisibility>,
        is_fork: Option<bool>,
        is_archived: Option<bool>,
        is_locked: Option<bool>,
        owner_affiliations: Option<Vec<RepositoryAffiliation>>,
        affiliations: Option<Vec<RepositoryAffiliation>>,
        order_by: Option<RepositoryOrder>,
    ) -> async_graphql::Result<RepositoryConnection> {
        repositories_of(
            ctx,
            &self.0,
            first,
            after,
            last,
            before,
            privacy,
            visibility,
            is_fork,
            is_archived,
            is_locked,
            owner_affiliations,
            affiliations,
            order_by,
        )
        .await
    }
}

/// The owner of a repository.
// Arguments of one type repeat their `ty = …` (clippy reads those as duplicated attributes).
#[allow(clippy::duplicated_attributes)]
#[derive(Interface)]
#[graphql(
    field(name = "id", ty = "ID"),
    field(name = "login", ty = "&str"),
    field(
        name = "repositories",
        ty = "RepositoryConnection",
        desc = "A list of repositories that the user owns.",
        arg(name = "first", ty = "Option<i32>"),
        arg(name = "after", ty = "Option<String>"),
        arg(name = "last", ty = "Option<i32>"),
        arg(name = "before", ty = "Option<String>"),
        arg(name = "privacy", ty = "Option<RepositoryPrivacy>"),
        arg(name = "visibility", ty = "Option<RepositoryVisibility>"),
        arg(name = "is_fork", ty = "Option<bool>"),
        arg(name = "is_archived", ty = "Option<bool>"),
        arg(name = "is_locked", ty = "Option<bool>"),
        arg(name = "owner_affiliations", ty = "Option<Vec<RepositoryAffiliation>>"),
        arg(name = "affiliations", ty = "Option<Vec<RepositoryAffiliation>>"),
        arg(name = "order_by", ty = "Option<RepositoryOrder>"),
    )
)]
pub enum RepositoryOwner {
    User(User),
    Organization(Organization),
}

impl RepositoryOwner {
    fn of(account: Account) -> RepositoryOwner {
        if account.is_org() {
            RepositoryOwner::Organization(Organization(account))
        } else {
            RepositoryOwner::User(User(account))
        }
    }
}

/// The `repositories` field of an owner: one page of its repositories the caller may see.
#[allow(clippy::too_many_arguments)] // the field's arguments, as the hosted schema declares them
async fn repositories_of(
    ctx: &Context<'_>,
    owner: &Account,
    first: Option<i32>,
    after: Option<String>,
    last: Option<i32>,
    before: Option<String>,
    privacy: Option<RepositoryPrivacy>,
    visibility: Option<RepositoryVisibility>,
    is_fork: Option<bool>,
    is_archived: Option<bool>,
    is_locked: Option<bool>,
    owner_affiliations: Option<Vec<RepositoryAffiliation>>,
    affiliations: Option<Vec<RepositoryAffiliation>>,
    order_by: Option<RepositoryOrder>,
) -> async_graphql::Result<RepositoryConnection> {
    let args = repositories::Args {
        first,
        after,
        last,
        before,
        privacy,
        visibility,
        is_fork,
        is_archived,
        is_locked,
        owner_affiliations,
        affiliations,
        order_by,
    };
    let page = repositories::page(ctx.data_unchecked::<Shared>(), ctx.data_unchecked::<ReqInfo>(), owner, args).await?;
    Ok(RepositoryConnection(page))
}

/// A list of repositories owned by the subject.
pub struct RepositoryConnection(repositories::Page);

#[Object]
impl RepositoryConnection {
    /// A list of nodes.
    async fn nodes(&self) -> Vec<&Repository> {
        self.0.nodes.iter().map(|(_, r)| r).collect()
    }

    /// A list of edges.
    async fn edges(&self) -> Vec<RepositoryEdge<'_>> {
        self.0.nodes.iter().map(|(cursor, node)| RepositoryEdge { cursor, node }).collect()
    }

    /// Identifies the total count of items in the connection.
    async fn total_count(&self) -> i64 {
        self.0.total as i64
    }

    /// Information to aid in pagination.
    async fn page_info(&self) -> PageInfo {
        PageInfo {
            has_next_page: self.0.has_next,
            has_previous_page: self.0.has_previous,
            start_cursor: self.0.nodes.first().map(|(c, _)| c.clone()),
            end_cursor: self.0.nodes.last().map(|(c, _)| c.clone()),
        }
    }
}

/// An edge in a connection.
pub struct RepositoryEdge<'a> {
    cursor: &'a str,
    node: &'a Repository,
}

#[Object]
impl RepositoryEdge<'_> {
    /// A cursor for use in pagination.
    async fn cursor(&self) -> &str {
        self.cursor
    }

    /// The item at the end of the edge.
    async fn node(&self) -> &Repository {
        self.node
    }
}

/// Information about pagination in a connection.
#[derive(SimpleObject)]
pub struct PageInfo {
    /// When paginating forwards, are there more items?
    has_next_page: bool,
    /// When paginating backwards, are there more items?
    has_previous_page: bool,
    /// When paginating backwards, the cursor to continue.
    start_cursor: Option<String>,
    /// When paginating forwards, the cursor to continue.
    end_cursor: Option<String>,
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

    /// A list of repositories that the owner owns.
    #[allow(clippy::too_many_arguments)] // the field's arguments, as the hosted schema declares them
    async fn repositories(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
        privacy: Option<RepositoryPrivacy>,
        visibility: Option<RepositoryVisibility>,
        is_fork: Option<bool>,
        is_archived: Option<bool>,
        is_locked: Option<bool>,
        owner_affiliations: Option<Vec<RepositoryAffiliation>>,
        affiliations: Option<Vec<RepositoryAffiliation>>,
        order_by: Option<RepositoryOrder>,
    ) -> async_graphql::Result<RepositoryConnection> {
        repositories_of(
            ctx,
            &self.0,
            first,
            after,
            last,
            before,
            privacy,
            visibility,
            is_fork,
            is_archived,
            is_locked,
            owner_affiliations,
            affiliations,
            order_by,
        )
        .await
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
