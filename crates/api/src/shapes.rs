//! Response shapes of the spec (SimpleUser, MinimalRepository, statuses, authorizations), built
//! from the configured public URLs so every self-link points where clients connected.
use platform_core::ids::node_id;
use platform_core::time::format_ts;
use platform_core::ApiVersion;
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::Repo;
use platform_store::domain::statuses::Status;
use serde_json::{json, Map, Value};

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

pub fn simple_user(u: &Urls, a: &Account) -> Value {
    let api = format!("{}/users/{}", u.api, a.login);
    json!({
        "login": a.login,
        "id": a.id,
        "node_id": node_id(if a.is_org() { "Organization" } else { "User" }, a.id),
        "avatar_url": format!("{}/avatars/u/{}?v=4", u.web, a.id),
        "gravatar_id": "",
        "url": api,
        "html_url": format!("{}/{}", u.web, a.login),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": a.kind,
        "site_admin": a.site_admin,
    })
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

/// MinimalRepository: every always-present field, the common optional ones, and the
/// version-dependent ones from [`versions`].
pub fn minimal_repository(u: &Urls, v: ApiVersion, r: &Repo) -> Value {
    let full = r.full_name();
    let a = repo_api_url(u, r);
    let html = format!("{}/{full}", u.web);
    let mut m = Map::new();
    let mut put = |k: &str, val: Value| {
        m.insert(k.to_string(), val);
    };
    put("id", json!(r.id));
    put("node_id", json!(node_id("Repository", r.id)));
    put("name", json!(r.name));
    put("full_name", json!(full));
    put("owner", simple_user(u, &r.owner));
    put("private", json!(r.private));
    put("html_url", json!(html));
    put("description", json!(r.description));
    put("fork", json!(false));
    put("url", json!(a));
    for (k, suffix) in [
        ("archive_url", "/{archive_format}{/ref}"),
        ("assignees_url", "/assignees{/user}"),
        ("blobs_url", "/git/blobs{/sha}"),
        ("branches_url", "/branches{/branch}"),
        ("collaborators_url", "/collaborators{/collaborator}"),
        ("comments_url", "/comments{/number}"),
        ("commits_url", "/commits{/sha}"),
        ("compare_url", "/compare/{base}...{head}"),
        ("contents_url", "/contents/{+path}"),
        ("contributors_url", "/contributors"),
        ("deployments_url", "/deployments"),
        ("downloads_url", "/downloads"),
        ("events_url", "/events"),
        ("forks_url", "/forks"),
        ("git_commits_url", "/git/commits{/sha}"),
        ("git_refs_url", "/git/refs{/sha}"),
        ("git_tags_url", "/git/tags{/sha}"),
    ] {
        put(k, json!(format!("{a}{suffix}")));
    }
    put("git_url", json!(format!("git://{}/{full}.git", u.host)));
    for (k, suffix) in [
        ("issue_comment_url", "/issues/comments{/number}"),
        ("issue_events_url", "/issues/events{/number}"),
        ("issues_url", "/issues{/number}"),
        ("keys_url", "/keys{/key_id}"),
        ("labels_url", "/labels{/name}"),
        ("languages_url", "/languages"),
        ("merges_url", "/merges"),
        ("milestones_url", "/milestones{/number}"),
        ("notifications_url", "/notifications{?since,all,participating}"),
        ("pulls_url", "/pulls{/number}"),
        ("releases_url", "/releases{/id}"),
    ] {
        put(k, json!(format!("{a}{suffix}")));
    }
    put("ssh_url", json!(format!("git@{}:{full}.git", u.host.split(':').next().unwrap_or(&u.host))));
    for (k, suffix) in [
        ("stargazers_url", "/stargazers"),
        ("statuses_url", "/statuses/{sha}"),
        ("subscribers_url", "/subscribers"),
        ("subscription_url", "/subscription"),
        ("tags_url", "/tags"),
        ("teams_url", "/teams"),
        ("trees_url", "/git/trees{/sha}"),
    ] {
        put(k, json!(format!("{a}{suffix}")));
    }
    put("clone_url", json!(format!("{html}.git")));
    put("mirror_url", Value::Null);
    put("hooks_url", json!(format!("{a}/hooks")));
    put("svn_url", json!(html));
    put("homepage", Value::Null);
    put("language", Value::Null);
    put("forks_count", json!(0));
    put("stargazers_count", json!(0));
    put("watchers_count", json!(0));
    put("size", json!(0));
    put("default_branch", json!(r.default_branch));
    put("open_issues_count", json!(0));
    put("is_template", json!(false));
    put("topics", json!([]));
    put("has_issues", json!(true));
    put("has_projects", json!(true));
    put("has_wiki", json!(true));
    put("has_pages", json!(false));
    put("archived", json!(false));
    put("disabled", json!(false));
    put("visibility", json!(if r.private { "private" } else { "public" }));
    put("pushed_at", json!(r.pushed_at.map(format_ts)));
    put("created_at", json!(format_ts(r.created_at)));
    put("updated_at", json!(format_ts(r.updated_at)));
    put("forks", json!(0));
    put("open_issues", json!(0));
    put("watchers", json!(0));
    versions::repository_fields(v, &mut m);
    Value::Object(m)
}

/// A commit status; `creator` is left out inside the combined status.
pub fn status(u: &Urls, repo: &Repo, s: &Status, with_creator: bool) -> Value {
    let creator = s.creator.as_ref().unwrap_or_else(|| ghost());
    let avatar = format!("{}/avatars/u/{}?v=4", u.web, creator.id);
    let mut v = json!({
        "url": format!("{}/statuses/{}", repo_api_url(u, repo), s.sha),
        "avatar_url": avatar,
        "id": s.id,
        "node_id": node_id("Status", s.id),
        "state": s.state,
        "description": s.description,
        "target_url": s.target_url,
        "context": s.context,
        "created_at": format_ts(s.created_at),
        "updated_at": format_ts(s.updated_at),
    });
    if with_creator {
        v["creator"] = simple_user(u, creator);
    }
    v
}

/// TeamSimple (api-facts §4.6) of an organization team.
pub fn team_simple(u: &Urls, org: &Account, t: &platform_store::domain::accounts::Team) -> Value {
    let api = format!("{}/organizations/{}/team/{}", u.api, org.id, t.id);
    json!({
        "id": t.id,
        "node_id": node_id("Team", t.id),
        "url": api,
        "html_url": format!("{}/orgs/{}/teams/{}", u.web, org.login, t.slug),
        "name": t.name,
        "slug": t.slug,
        "description": t.description,
        "privacy": t.privacy,
        "notification_setting": "notifications_enabled",
        "permission": "pull",
        "members_url": format!("{api}/members{{/member}}"),
        "repositories_url": format!("{api}/repos"),
        "type": "organization",
        "organization_id": org.id,
    })
}
