//! Response shapes of the spec (SimpleUser, MinimalRepository, TeamSimple, Empty), built
//! from the configured public URLs so every self-link points where clients connected.
use platform_core::ids::node_id;
use platform_core::ApiVersion;
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::Serialize;

use crate::typed::{Timestamp, Uri};

use crate::versions;

/// Base URLs: `api` for API links (e.g. `http://127.0.0.1:8080` or `…/api/v3`), `web` for
/// `html_url`s, `host` for git/ssh URLs.
#[derive(Clone, Debug)]
pub struct Urls {
    pub api: String,
    pub web: String,
    pub host: String,
}

impl Urls {
    pub fn new(public_url: &str) -> Urls {
        let api = public_url.trim_end_matches('/').to_string();
        let scheme_end = api.find("://").map(|i| i + 3).unwrap_or(0);
        let origin_end = api[scheme_end..].find('/').map(|i| i + scheme_end).unwrap_or(api.len());
        Urls { web: api[..origin_end].to_string(), host: api[scheme_end..origin_end].to_string(), api }
    }

    /// The path part of the API base (`/api/v3`), empty at the root.
    pub fn base_path(&self) -> &str {
        &self.api[self.web.len()..]
    }
}

/// SimpleUser (api-facts §3): an account as other resources name it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SimpleUser {
    pub login: String,
    pub id: i64,
    pub node_id: String,
    pub avatar_url: Uri,
    pub gravatar_id: String,
    pub url: Uri,
    pub html_url: Uri,
    pub followers_url: String,
    pub following_url: String,
    pub gists_url: String,
    pub starred_url: String,
    pub subscriptions_url: String,
    pub organizations_url: String,
    pub repos_url: String,
    pub events_url: String,
    pub received_events_url: String,
    /// `User` or `Organization`.
    #[serde(rename = "type")]
    pub kind: String,
    pub site_admin: bool,
}

pub fn simple_user(u: &Urls, a: &Account) -> SimpleUser {
    let api = format!("{}/users/{}", u.api, a.login);
    SimpleUser {
        login: a.login.clone(),
        id: a.id,
        node_id: node_id(if a.is_org() { "Organization" } else { "User" }, a.id),
        avatar_url: Uri(format!("{}/avatars/u/{}?v=4", u.web, a.id)),
        gravatar_id: String::new(),
        html_url: Uri(format!("{}/{}", u.web, a.login)),
        followers_url: format!("{api}/followers"),
        following_url: format!("{api}/following{{/other_user}}"),
        gists_url: format!("{api}/gists{{/gist_id}}"),
        starred_url: format!("{api}/starred{{/owner}}{{/repo}}"),
        subscriptions_url: format!("{api}/subscriptions"),
        organizations_url: format!("{api}/orgs"),
        repos_url: format!("{api}/repos"),
        events_url: format!("{api}/events{{/privacy}}"),
        received_events_url: format!("{api}/received_events"),
        url: Uri(api),
        kind: a.kind.clone(),
        site_admin: a.site_admin,
    }
}

/// The account shown as the creator of something whose creator is not an account: the
/// hosted platform's `ghost` (deleted accounts), so fields the spec types as SimpleUser never
/// come back null (statuses created with installation or workflow tokens, for example).
pub fn ghost() -> &'static Account {
    static GHOST: std::sync::OnceLock<Account> = std::sync::OnceLock::new();
    GHOST.get_or_init(|| Account {
        id: 10137,
        kind: "User".into(),
        login: "ghost".into(),
        name: None,
        email: None,
        site_admin: false,
        created_at: 0,
        updated_at: 0,
    })
}

pub fn repo_api_url(u: &Urls, r: &Repo) -> String {
    format!("{}/repos/{}/{}", u.api, r.owner.login, r.name)
}

/// MinimalRepository (api-facts §3): a repository as other resources name it, with the
/// version-dependent fields of [`versions`]. Counts the platform does not keep are zero.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MinimalRepository {
    pub id: i64,
    pub node_id: String,
    pub name: String,
    pub full_name: String,
    pub owner: SimpleUser,
    pub private: bool,
    pub html_url: Uri,
    pub description: Option<String>,
    pub fork: bool,
    pub url: Uri,
    pub archive_url: String,
    pub assignees_url: String,
    pub blobs_url: String,
    pub branches_url: String,
    pub collaborators_url: String,
    pub comments_url: String,
    pub commits_url: String,
    pub compare_url: String,
    pub contents_url: String,
    pub contributors_url: String,
    pub deployments_url: String,
    pub downloads_url: String,
    pub events_url: String,
    pub forks_url: String,
    pub git_commits_url: String,
    pub git_refs_url: String,
    pub git_tags_url: String,
    pub git_url: String,
    pub issue_comment_url: String,
    pub issue_events_url: String,
    pub issues_url: String,
    pub keys_url: String,
    pub labels_url: String,
    pub languages_url: String,
    pub merges_url: String,
    pub milestones_url: String,
    pub notifications_url: String,
    pub pulls_url: String,
    pub releases_url: String,
    pub ssh_url: String,
    pub stargazers_url: String,
    pub statuses_url: String,
    pub subscribers_url: String,
    pub subscription_url: String,
    pub tags_url: String,
    pub teams_url: String,
    pub trees_url: String,
    pub clone_url: String,
    pub mirror_url: Option<String>,
    pub hooks_url: String,
    pub svn_url: String,
    pub homepage: Option<String>,
    pub language: Option<String>,
    pub forks_count: i64,
    pub stargazers_count: i64,
    pub watchers_count: i64,
    pub size: i64,
    pub default_branch: String,
    pub open_issues_count: i64,
    pub is_template: bool,
    pub topics: Vec<String>,
    pub has_issues: bool,
    pub has_projects: bool,
    pub has_wiki: bool,
    pub has_pages: bool,
    pub archived: bool,
    pub disabled: bool,
    /// `public` or `private`.
    pub visibility: String,
    pub pushed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub forks: i64,
    pub open_issues: i64,
    pub watchers: i64,
    /// Only in API version 2022-11-28.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_downloads: Option<bool>,
}

pub fn minimal_repository(u: &Urls, v: ApiVersion, r: &Repo) -> MinimalRepository {
    let full = r.full_name();
    let a = repo_api_url(u, r);
    let html = format!("{}/{full}", u.web);
    MinimalRepository {
        id: r.id,
        node_id: node_id("Repository", r.id),
        name: r.name.clone(),
        owner: simple_user(u, &r.owner),
        private: r.private,
        description: r.description.clone(),
        fork: false,
        archive_url: format!("{a}/{{archive_format}}{{/ref}}"),
        assignees_url: format!("{a}/assignees{{/user}}"),
        blobs_url: format!("{a}/git/blobs{{/sha}}"),
        branches_url: format!("{a}/branches{{/branch}}"),
        collaborators_url: format!("{a}/collaborators{{/collaborator}}"),
        comments_url: format!("{a}/comments{{/number}}"),
        commits_url: format!("{a}/commits{{/sha}}"),
        compare_url: format!("{a}/compare/{{base}}...{{head}}"),
        contents_url: format!("{a}/contents/{{+path}}"),
        contributors_url: format!("{a}/contributors"),
        deployments_url: format!("{a}/deployments"),
        downloads_url: format!("{a}/downloads"),
        events_url: format!("{a}/events"),
        forks_url: format!("{a}/forks"),
        git_commits_url: format!("{a}/git/commits{{/sha}}"),
        git_refs_url: format!("{a}/git/refs{{/sha}}"),
        git_tags_url: format!("{a}/git/tags{{/sha}}"),
        git_url: format!("git://{}/{full}.git", u.host),
        issue_comment_url: format!("{a}/issues/comments{{/number}}"),
        issue_events_url: format!("{a}/issues/events{{/number}}"),
        issues_url: format!("{a}/issues{{/number}}"),
        keys_url: format!("{a}/keys{{/key_id}}"),
        labels_url: format!("{a}/labels{{/name}}"),
        languages_url: format!("{a}/languages"),
        merges_url: format!("{a}/merges"),
        milestones_url: format!("{a}/milestones{{/number}}"),
        notifications_url: format!("{a}/notifications{{?since,all,participating}}"),
        pulls_url: format!("{a}/pulls{{/number}}"),
        releases_url: format!("{a}/releases{{/id}}"),
        ssh_url: format!("git@{}:{full}.git", u.host.split(':').next().unwrap_or(&u.host)),
        stargazers_url: format!("{a}/stargazers"),
        statuses_url: format!("{a}/statuses/{{sha}}"),
        subscribers_url: format!("{a}/subscribers"),
        subscription_url: format!("{a}/subscription"),
        tags_url: format!("{a}/tags"),
        teams_url: format!("{a}/teams"),
        trees_url: format!("{a}/git/trees{{/sha}}"),
        clone_url: format!("{html}.git"),
        mirror_url: None,
        hooks_url: format!("{a}/hooks"),
        svn_url: html.clone(),
        homepage: r.homepage.clone(),
        language: None,
        forks_count: 0,
        stargazers_count: 0,
        watchers_count: 0,
        size: 0,
        default_branch: r.default_branch.clone(),
        open_issues_count: 0,
        is_template: false,
        topics: Vec::new(),
        has_issues: true,
        has_projects: true,
        has_wiki: true,
        has_pages: false,
        archived: false,
        disabled: false,
        visibility: (if r.private { "private" } else { "public" }).into(),
        // As hosted, a repository is pushed at its creation: never null (clients require it).
        pushed_at: Some(Timestamp(r.pushed_at.unwrap_or(r.created_at))),
        created_at: Timestamp(r.created_at),
        updated_at: Timestamp(r.updated_at),
        forks: 0,
        open_issues: 0,
        watchers: 0,
        has_downloads: versions::has_downloads(v),
        html_url: Uri(html),
        url: Uri(a),
        full_name: full,
    }
}

/// LicenseSimple: a repository's license. The platform keeps none (`license_template` is
/// accepted, not applied), so repositories show `license: null`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LicenseSimple {
    pub key: String,
    pub name: String,
    pub spdx_id: Option<String>,
    pub url: Option<String>,
    pub node_id: String,
}

/// TeamSimple (api-facts §4.6): a team as other resources name it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamSimple {
    pub id: i64,
    pub node_id: String,
    pub url: Uri,
    pub html_url: Uri,
    pub name: String,
    pub slug: String,
    pub description: Option<String>,
    pub privacy: String,
    pub notification_setting: String,
    pub permission: String,
    pub members_url: String,
    pub repositories_url: Uri,
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["enterprise", "organization"]))]
    pub kind: String,
    pub organization_id: i64,
}

/// An organization team.
pub fn team_simple(u: &Urls, org: &Account, t: &platform_store::domain::accounts::Team) -> TeamSimple {
    let api = format!("{}/organizations/{}/team/{}", u.api, org.id, t.id);
    TeamSimple {
        id: t.id,
        node_id: node_id("Team", t.id),
        html_url: Uri(format!("{}/orgs/{}/teams/{}", u.web, org.login, t.slug)),
        name: t.name.clone(),
        slug: t.slug.clone(),
        description: t.description.clone(),
        privacy: t.privacy.clone(),
        notification_setting: "notifications_enabled".into(),
        permission: "pull".into(),
        members_url: format!("{api}/members{{/member}}"),
        repositories_url: Uri(format!("{api}/repos")),
        kind: "organization".into(),
        organization_id: org.id,
        url: Uri(api),
    }
}

/// The body of a 201 or 202 that carries nothing: `{}`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Empty {}

impl JsonSchema for Empty {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Empty".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}
