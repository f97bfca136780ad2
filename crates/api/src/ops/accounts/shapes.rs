//! The hosted shapes of accounts: public-user and private-user, organization-simple and
//! organization-full, team and team-full.
use platform_core::ids::node_id;
use platform_store::domain::accounts::{Account, Team as TeamRow, TeamDetail};
use schemars::JsonSchema;
use serde::Serialize;

use crate::shapes::{simple_user, team_simple, SimpleUser, TeamSimple, Urls};
use crate::typed::{Timestamp, Uri};

/// What a profile counts, read from the store.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub public_repos: i64,
    pub private_repos: i64,
}

/// public-user: an account's public profile (users and organizations alike).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PublicUser {
    #[serde(flatten)]
    pub user: SimpleUser,
    /// `public`, or `private` in the private-user shape.
    pub user_view_type: String,
    pub name: Option<String>,
    pub company: Option<String>,
    pub blog: Option<String>,
    pub location: Option<String>,
    pub email: Option<String>,
    pub hireable: Option<bool>,
    pub bio: Option<String>,
    pub twitter_username: Option<String>,
    pub public_repos: i64,
    pub public_gists: i64,
    pub followers: i64,
    pub following: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// private-user: the authenticated user's own profile, with what only they see.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PrivateUser {
    #[serde(flatten)]
    pub public: PublicUser,
    pub private_gists: i64,
    pub total_private_repos: i64,
    pub owned_private_repos: i64,
    pub disk_usage: i64,
    pub collaborators: i64,
    pub two_factor_authentication: bool,
    pub plan: UserPlan,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct UserPlan {
    pub collaborators: i64,
    pub name: String,
    pub space: i64,
    pub private_repos: i64,
}

/// `GET /user`: the private profile, or the public one for a token without a user scope.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AuthenticatedUser {
    Private(PrivateUser),
    Public(PublicUser),
}

/// Unlimited private repositories, as the free plan has today.
const PLAN_PRIVATE_REPOS: i64 = 10_000;
const PLAN_SPACE: i64 = 976_562_499;

pub fn public_user(u: &Urls, a: &Account, n: Counts) -> PublicUser {
    PublicUser {
        user: simple_user(u, a),
        user_view_type: "public".into(),
        name: a.name.clone(),
        company: None,
        blog: Some(String::new()),
        location: None,
        email: a.email.clone(),
        hireable: None,
        bio: None,
        twitter_username: None,
        public_repos: n.public_repos,
        public_gists: 0,
        followers: 0,
        following: 0,
        created_at: Timestamp(a.created_at),
        updated_at: Timestamp(a.updated_at),
    }
}

pub fn private_user(u: &Urls, a: &Account, n: Counts) -> PrivateUser {
    let mut public = public_user(u, a, n);
    public.user_view_type = "private".into();
    PrivateUser {
        public,
        private_gists: 0,
        total_private_repos: n.private_repos,
        owned_private_repos: n.private_repos,
        disk_usage: 0,
        collaborators: 0,
        two_factor_authentication: false,
        plan: UserPlan { collaborators: 0, name: "free".into(), space: PLAN_SPACE, private_repos: PLAN_PRIVATE_REPOS },
    }
}

/// organization-simple: an organization as lists name it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OrganizationSimple {
    pub login: String,
    pub id: i64,
    pub node_id: String,
    pub url: Uri,
    pub repos_url: Uri,
    pub events_url: Uri,
    pub hooks_url: String,
    pub issues_url: String,
    pub members_url: String,
    pub public_members_url: String,
    pub avatar_url: String,
    pub description: Option<String>,
}

pub fn organization_simple(u: &Urls, org: &Account) -> OrganizationSimple {
    let api = format!("{}/orgs/{}", u.api, org.login);
    OrganizationSimple {
        login: org.login.clone(),
        id: org.id,
        node_id: node_id("Organization", org.id),
        repos_url: Uri(format!("{api}/repos")),
        events_url: Uri(format!("{api}/events")),
        hooks_url: format!("{api}/hooks"),
        issues_url: format!("{api}/issues"),
        members_url: format!("{api}/members{{/member}}"),
        public_members_url: format!("{api}/public_members{{/member}}"),
        avatar_url: format!("{}/avatars/u/{}?v=4", u.web, org.id),
        description: None,
        url: Uri(api),
    }
}

/// organization-full: an organization's profile; owners also see [`OrgOwnerView`].
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OrganizationFull {
    #[serde(flatten)]
    pub org: OrganizationSimple,
    pub name: Option<String>,
    pub company: Option<String>,
    pub blog: Option<String>,
    pub location: Option<String>,
    pub email: Option<String>,
    pub twitter_username: Option<String>,
    pub is_verified: bool,
    pub has_organization_projects: bool,
    pub has_repository_projects: bool,
    pub public_repos: i64,
    pub public_gists: i64,
    pub followers: i64,
    pub following: i64,
    pub html_url: Uri,
    #[serde(rename = "type")]
    pub kind: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub archived_at: Option<Timestamp>,
    #[serde(flatten)]
    pub owner_view: Option<OrgOwnerView>,
}

/// The fields of organization-full only owners are shown.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OrgOwnerView {
    pub total_private_repos: i64,
    pub owned_private_repos: i64,
    pub private_gists: i64,
    pub disk_usage: i64,
    pub collaborators: i64,
    pub billing_email: Option<String>,
    pub plan: OrgPlan,
    pub default_repository_permission: Option<String>,
    pub members_can_create_repositories: Option<bool>,
    pub two_factor_requirement_enabled: Option<bool>,
    pub members_allowed_repository_creation_type: String,
    pub members_can_create_public_repositories: bool,
    pub members_can_create_private_repositories: bool,
    pub members_can_create_internal_repositories: bool,
    pub members_can_fork_private_repositories: Option<bool>,
    pub web_commit_signoff_required: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OrgPlan {
    pub name: String,
    pub space: i64,
    pub private_repos: i64,
    pub filled_seats: i64,
    pub seats: i64,
}

/// What an organization's full profile needs beyond the account.
#[derive(Clone, Copy, Debug)]
pub struct OrgFacts {
    pub counts: Counts,
    /// Members, for owners' `plan.filled_seats`; `None` when the caller is not shown owner fields.
    pub owner_seats: Option<i64>,
}

pub fn organization_full(u: &Urls, org: &Account, f: OrgFacts) -> OrganizationFull {
    let private = f.counts.private_repos;
    OrganizationFull {
        org: organization_simple(u, org),
        name: org.name.clone(),
        company: None,
        blog: None,
        location: None,
        email: None,
        twitter_username: None,
        is_verified: false,
        has_organization_projects: true,
        has_repository_projects: true,
        public_repos: f.counts.public_repos,
        public_gists: 0,
        followers: 0,
        following: 0,
        html_url: Uri(format!("{}/{}", u.web, org.login)),
        kind: "Organization".into(),
        created_at: Timestamp(org.created_at),
        updated_at: Timestamp(org.updated_at),
        archived_at: None,
        owner_view: f.owner_seats.map(|seats| OrgOwnerView {
            total_private_repos: private,
            owned_private_repos: private,
            private_gists: 0,
            disk_usage: 0,
            collaborators: 0,
            billing_email: org.email.clone(),
            plan: OrgPlan { name: "free".into(), space: PLAN_SPACE, private_repos: PLAN_PRIVATE_REPOS, filled_seats: seats, seats },
            default_repository_permission: Some("read".into()),
            members_can_create_repositories: Some(true),
            two_factor_requirement_enabled: Some(false),
            members_allowed_repository_creation_type: "all".into(),
            members_can_create_public_repositories: true,
            members_can_create_private_repositories: true,
            members_can_create_internal_repositories: false,
            members_can_fork_private_repositories: Some(false),
            web_commit_signoff_required: false,
        }),
    }
}

/// team: a team as the organization's list shows it (teams are not nested here: no parent).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Team {
    #[serde(flatten)]
    pub team: TeamSimple,
    pub parent: Option<TeamSimple>,
}

pub fn team(u: &Urls, org: &Account, t: &TeamRow) -> Team {
    Team { team: team_simple(u, org, t), parent: None }
}

/// team-full: one team, with its counts and its organization.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamFull {
    #[serde(flatten)]
    pub team: TeamSimple,
    pub parent: Option<TeamSimple>,
    pub members_count: i64,
    pub repos_count: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub organization: OrganizationFull,
}

pub fn team_full(u: &Urls, org: &Account, t: &TeamDetail, f: OrgFacts) -> TeamFull {
    TeamFull {
        team: team_simple(u, org, &t.team),
        parent: None,
        members_count: t.members_count,
        repos_count: 0,
        created_at: Timestamp(t.created_at),
        updated_at: Timestamp(t.updated_at),
        organization: organization_full(u, org, f),
    }
}
