//! Control-plane operations (users, organizations, repositories, pushes, apps, tokens). The spec
//! has no operations for these; the admin API and the seed loader both call these functions,
//! each inside one store transaction.
use std::collections::BTreeMap;

use platform_core::ids::{random_alnum, random_hex, sha256_hex};
use platform_core::time::parse_ts;
use platform_core::TokenKind;
use platform_store::domain::accounts::{self, Account, NewAccount};
use platform_store::domain::apps::{self, App, Installation, NewApp};
use platform_store::domain::notifications;
use platform_store::domain::repos::{self, Lookup, NewRepo, Repo};
use platform_store::domain::tokens::{self, NewToken, Token};
use platform_store::{Conn, DbError, DbErrorKind};
use serde::Deserialize;
use serde_json::json;

use crate::error::ApiError;
use crate::ops::hooks::activity::{self, Record, Scope, UnstarActivity, WatchActivity};
use crate::ops::hooks::org_events;

type R<T> = Result<T, ApiError>;

/// Maps a unique-constraint failure to `422 already_exists` on `resource.field`.
fn unique<T>(r: Result<T, DbError>, resource: &str, field: &str) -> R<T> {
    r.map_err(|e| match e.kind {
        DbErrorKind::Unique => ApiError::invalid_field(resource, field, "already_exists", None),
        _ => e.into(),
    })
}

fn missing(resource: &str, field: &str, value: &str) -> ApiError {
    ApiError::invalid_field(resource, field, "missing", Some(format!("{resource} '{value}' does not exist")))
}

fn valid_login(s: &str) -> bool {
    !s.is_empty() && s.len() <= 39 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') && !s.starts_with('-')
}

fn valid_repo_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 100 && s != "." && s != ".." && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

pub fn user(c: &mut dyn Conn, login: &str) -> R<Account> {
    accounts::by_login(c, login)?.filter(|a| !a.is_org()).ok_or_else(|| missing("User", "login", login))
}

pub fn org(c: &mut dyn Conn, login: &str) -> R<Account> {
    accounts::by_login(c, login)?.filter(Account::is_org).ok_or_else(|| missing("Organization", "org", login))
}

/// `owner/name` of an existing repository (renames followed).
pub fn repo(c: &mut dyn Conn, full_name: &str) -> R<Repo> {
    find_repo(c, full_name)?.ok_or_else(|| missing("Repository", "repo", full_name))
}

fn find_repo(c: &mut dyn Conn, full_name: &str) -> Result<Option<Repo>, DbError> {
    let Some((o, n)) = full_name.split_once('/') else { return Ok(None) };
    Ok(match repos::lookup(c, o, n)? {
        Lookup::Found(r) | Lookup::Moved(r) => Some(r),
        Lookup::Missing => None,
    })
}

#[derive(Deserialize)]
pub struct UserIn {
    pub login: String,
    pub name: Option<String>,
    pub email: Option<String>,
    #[serde(default)]
    pub site_admin: bool,
}

pub fn create_user(c: &mut dyn Conn, u: &UserIn, now: i64) -> R<Account> {
    if !valid_login(&u.login) {
        return Err(ApiError::invalid_field("User", "login", "invalid", None));
    }
    let n = NewAccount { kind: "User", login: &u.login, name: u.name.as_deref(), email: u.email.as_deref(), site_admin: u.site_admin };
    unique(accounts::create(c, &n, now), "User", "login")
}

#[derive(Deserialize)]
pub struct OrgIn {
    pub login: String,
    pub name: Option<String>,
    #[serde(default)]
    pub owners: Vec<String>,
    #[serde(default)]
    pub members: Vec<String>,
    /// Slug of the enterprise that owns the organization (enterprise-cloud limits apply).
    pub enterprise: Option<String>,
}

pub fn create_org(c: &mut dyn Conn, o: &OrgIn, now: i64) -> R<Account> {
    if !valid_login(&o.login) {
        return Err(ApiError::invalid_field("Organization", "login", "invalid", None));
    }
    let n = NewAccount { kind: "Organization", login: &o.login, name: o.name.as_deref(), email: None, site_admin: false };
    let org = unique(accounts::create(c, &n, now), "Organization", "login")?;
    for (logins, role) in [(&o.members, "member"), (&o.owners, "owner")] {
        for l in logins {
            let u = user(c, l)?;
            accounts::set_org_member(c, org.id, u.id, role)?;
        }
    }
    if let Some(slug) = &o.enterprise {
        let e = accounts::enterprise_by_slug(c, slug)?.ok_or_else(|| missing("Enterprise", "enterprise", slug))?;
        accounts::add_enterprise_org(c, e.id, org.id)?;
    }
    Ok(org)
}

#[derive(Deserialize)]
pub struct EnterpriseIn {
    pub slug: String,
    pub name: String,
    #[serde(default)]
    pub owners: Vec<String>,
    #[serde(default)]
    pub members: Vec<String>,
}

pub fn create_enterprise(c: &mut dyn Conn, e: &EnterpriseIn, now: i64) -> R<accounts::Enterprise> {
    if !valid_login(&e.slug) {
        return Err(ApiError::invalid_field("Enterprise", "slug", "invalid", None));
    }
    let ent = unique(accounts::create_enterprise(c, &e.slug, &e.name, now), "Enterprise", "slug")?;
    for (logins, role) in [(&e.members, "member"), (&e.owners, "owner")] {
        for l in logins {
            let u = user(c, l)?;
            accounts::set_enterprise_member(c, ent.id, u.id, role)?;
        }
    }
    Ok(ent)
}

#[derive(Deserialize)]
pub struct TeamIn {
    pub name: String,
    pub description: Option<String>,
    /// `closed` (the default) or `secret`.
    pub privacy: Option<String>,
    #[serde(default)]
    pub members: Vec<String>,
}

pub fn create_team(c: &mut dyn Conn, org_login: &str, t: &TeamIn, now: i64) -> R<accounts::Team> {
    let o = org(c, org_login)?;
    if accounts::slugify(&t.name).is_empty() {
        return Err(ApiError::invalid_field("Team", "name", "invalid", None));
    }
    let privacy = t.privacy.as_deref().unwrap_or("closed");
    if !["closed", "secret"].contains(&privacy) {
        return Err(ApiError::invalid_field("Team", "privacy", "invalid", None));
    }
    let team = unique(accounts::create_team(c, o.id, &t.name, t.description.as_deref(), privacy, now), "Team", "name")?;
    // `team` `created`, then `membership` `added` for each member in the order given.
    org_events::team(c, &o, &team, "created", None, now)?;
    for l in &t.members {
        let u = user(c, l)?;
        if accounts::add_team_member(c, team.id, u.id)? {
            org_events::membership(c, &o, &team, &u, "added", "team", now)?;
        }
    }
    Ok(team)
}

#[derive(Deserialize)]
pub struct RepoIn {
    pub owner: String,
    pub name: String,
    #[serde(default)]
    pub private: bool,
    pub default_branch: Option<String>,
    pub description: Option<String>,
}

pub fn create_repo(c: &mut dyn Conn, r: &RepoIn, now: i64) -> R<Repo> {
    if !valid_repo_name(&r.name) || r.name.ends_with(".git") {
        return Err(ApiError::invalid_field("Repository", "name", "invalid", None));
    }
    let owner = accounts::by_login(c, &r.owner)?.ok_or_else(|| missing("Account", "owner", &r.owner))?;
    let n = NewRepo {
        owner: &owner,
        name: &r.name,
        private: r.private,
        description: r.description.as_deref(),
        default_branch: r.default_branch.as_deref().unwrap_or("main"),
        homepage: None,
    };
    unique(repos::create(c, &n, now), "Repository", "name")
}

pub fn rename_repo(c: &mut dyn Conn, repo: &Repo, name: &str, now: i64) -> R<Repo> {
    if !valid_repo_name(name) || name.ends_with(".git") {
        return Err(ApiError::invalid_field("Repository", "name", "invalid", None));
    }
    unique(repos::rename(c, repo, name, now), "Repository", "name")?;
    repos::by_id(c, repo.id)?.ok_or_else(ApiError::not_found)
}

#[derive(Deserialize, Clone)]
pub struct RefIn {
    #[serde(rename = "ref")]
    pub name: String,
    /// The commit to point at. One the repository's git does not have is a placeholder (kept
    /// for seeds and tests that invent shas): recorded in the store only. Left out, a new commit
    /// is written (see `ops::git_hosting::control`).
    pub sha: Option<String>,
    /// Login of the user who pushed (defaults to the repository owner).
    pub pusher: Option<String>,
    /// The new commit's message (default `Update <ref>`).
    pub message: Option<String>,
    /// The new commit's author and committer (default: the pusher, now).
    pub author: Option<PersonIn>,
    /// Files the new commit writes (`null` removes one), over its parent's tree.
    #[serde(default)]
    pub files: BTreeMap<String, Option<String>>,
    /// Where a new ref starts: the parent of its new commit, or what a new tag names (a ref or
    /// sha; default: the default branch's head).
    pub base: Option<String>,
    /// Skip rulesets (seeds do): otherwise the change is judged as the pusher's, and a violation
    /// is a 422 naming each rule and ruleset.
    #[serde(default)]
    pub bypass_rules: bool,
}

/// A commit's author as the control plane is given it.
#[derive(Deserialize, Clone, Default)]
pub struct PersonIn {
    pub name: Option<String>,
    pub email: Option<String>,
    /// `YYYY-MM-DDTHH:MM:SSZ` (default: the platform clock's now).
    pub date: Option<String>,
}

/// A ref name the control plane may push: `(ref type, short name)`.
pub fn ref_kind(name: &str) -> R<(&'static str, &str)> {
    let (ref_type, short) = if let Some(b) = name.strip_prefix("refs/heads/") {
        ("branch", b)
    } else if let Some(t) = name.strip_prefix("refs/tags/") {
        ("tag", t)
    } else {
        return Err(ApiError::invalid_field("Ref", "ref", "invalid", Some("ref must start with refs/heads/ or refs/tags/".into())));
    };
    let bad = short.is_empty()
        || short.contains("..")
        || short.ends_with('/')
        || short.ends_with(".lock")
        || short.starts_with('-')
        || short.contains(|c: char| c.is_control() || " ~^:?*[\\".contains(c))
        || short.contains("@{");
    if bad {
        return Err(ApiError::invalid_field("Ref", "ref", "invalid", None));
    }
    Ok((ref_type, short))
}

/// The pusher a control-plane push names (default: the owner of a user's repository).
pub fn pusher(c: &mut dyn Conn, repo: &Repo, r: &RefIn) -> R<Option<Account>> {
    match &r.pusher {
        Some(l) => Ok(Some(user(c, l)?)),
        None if !repo.owner.is_org() => Ok(Some(repo.owner.clone())),
        None => Ok(None),
    }
}

#[derive(Deserialize)]
pub struct WatcherIn {
    pub login: String,
}

/// Watches a repository: the user gets `subscribed` notifications of its activity.
pub fn add_watcher(c: &mut dyn Conn, repo: &Repo, w: &WatcherIn, now: i64) -> R<serde_json::Value> {
    let u = user(c, &w.login)?;
    notifications::watch(c, repo.id, u.id, now)?;
    Ok(json!({"repo": repo.full_name(), "login": u.login}))
}

#[derive(Deserialize)]
pub struct SubjectIn {
    pub title: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: Option<String>,
    pub latest_comment_url: Option<String>,
}

#[derive(Deserialize)]
pub struct NotificationIn {
    pub login: String,
    /// `owner/name`.
    pub repo: String,
    pub subject: SubjectIn,
    pub reason: String,
}

/// Delivers a notification (mentions, review requests, assignments, …): creates or updates the
/// user's thread for the subject, replacing its reason. The user must be able to see the
/// repository; a muted thread takes only mentions and comments (then 422 `muted`).
pub fn notify(c: &mut dyn Conn, n: &NotificationIn, now: i64) -> R<(notifications::Thread, Repo)> {
    if !notifications::REASONS.contains(&n.reason.as_str()) {
        return Err(ApiError::invalid_field("Notification", "reason", "invalid", Some(format!("unknown reason {:?}", n.reason))));
    }
    if n.subject.title.is_empty() || n.subject.kind.is_empty() {
        return Err(ApiError::invalid_field("Notification", "subject", "invalid", Some("subject needs title and type".into())));
    }
    let u = user(c, &n.login)?;
    let repo = repo(c, &n.repo)?;
    if !notifications::can_see(c, repo.id, u.id)? {
        return Err(ApiError::invalid_field("Notification", "repo", "invalid", Some(format!("{} cannot see {}", u.login, n.repo))));
    }
    let s = notifications::Subject {
        kind: &n.subject.kind,
        title: &n.subject.title,
        url: n.subject.url.as_deref(),
        latest_comment_url: n.subject.latest_comment_url.as_deref().or(n.subject.url.as_deref()),
    };
    let id = notifications::deliver(c, u.id, repo.id, &s, &n.reason, now)?
        .ok_or_else(|| ApiError::invalid_field("Notification", "reason", "muted", Some("the thread is muted".into())))?;
    let t = notifications::get(c, u.id, id)?.ok_or_else(ApiError::internal)?;
    Ok((t, repo))
}

#[derive(Deserialize)]
pub struct StarIn {
    pub login: String,
}

/// Stars a repository for a user and records a `WatchEvent` in the same transaction; `None`
/// when the user had already starred it (nothing recorded).
pub fn star(c: &mut dyn Conn, repo: &Repo, s: &StarIn, now: i64) -> R<Option<serde_json::Value>> {
    let u = user(c, &s.login)?;
    if !platform_store::domain::feeds::star(c, repo.id, u.id, now)? {
        return Ok(None);
    }
    activity::record(c, Scope::repo(Some(u.id), repo), &Record::Watch(WatchActivity::started()), now)?;
    Ok(Some(json!({"repo": repo.full_name(), "login": u.login, "starred_at": platform_core::time::format_ts(now)})))
}

/// Removes a user's star and records it (`star` `deleted`; not public: no feed shows it, as
/// hosted). 404 when the repository or the user is unknown, or the user had not starred it.
pub fn unstar(c: &mut dyn Conn, full_name: &str, login: &str, now: i64) -> R<()> {
    let repo = find_repo(c, full_name)?;
    let u = accounts::by_login(c, login)?.filter(|a| !a.is_org());
    let (Some(repo), Some(u)) = (repo, u) else { return Err(ApiError::not_found()) };
    if !platform_store::domain::feeds::unstar(c, repo.id, u.id)? {
        return Err(ApiError::not_found());
    }
    activity::record(c, Scope::repo(Some(u.id), &repo).private(), &Record::Unstar(UnstarActivity {}), now)?;
    Ok(())
}

#[derive(Deserialize)]
pub struct AppIn {
    pub name: String,
    pub owner: String,
    /// `oauth` (OAuth app) or `app`.
    pub kind: String,
}

/// Creates an application; the returned secret is shown once and stored only as a hash.
pub fn create_app(c: &mut dyn Conn, a: &AppIn, now: i64) -> R<(App, String)> {
    let (prefix, kind) = match a.kind.as_str() {
        "oauth" => ("Ov23li", "oauth"),
        "app" => ("Iv23li", "app"),
        _ => return Err(ApiError::invalid_field("App", "kind", "invalid", Some("kind must be oauth or app".into()))),
    };
    let slug = accounts::slugify(&a.name);
    if slug.is_empty() {
        return Err(ApiError::invalid_field("App", "name", "invalid", None));
    }
    let owner = accounts::by_login(c, &a.owner)?.ok_or_else(|| missing("Account", "owner", &a.owner))?;
    let client_id = format!("{prefix}{}", random_alnum(14));
    let secret = random_hex(20);
    let n =
        NewApp { kind, name: &a.name, slug: &slug, owner_id: owner.id, client_id: &client_id, secret_hash: &sha256_hex(secret.as_bytes()) };
    let app = unique(apps::create(c, &n, now), "App", "name")?;
    Ok((app, secret))
}

pub fn app_by_client_id(c: &mut dyn Conn, client_id: &str) -> R<App> {
    apps::by_client_id(c, client_id)?.ok_or_else(|| missing("App", "client_id", client_id))
}

pub fn create_installation(c: &mut dyn Conn, app: &App, org_login: &str, now: i64) -> R<Installation> {
    if app.kind != "app" {
        return Err(ApiError::invalid_field("Installation", "app", "invalid", Some("only apps (kind app) are installed".into())));
    }
    let o = org(c, org_login)?;
    unique(apps::create_installation(c, app.id, o.id, now), "Installation", "org")
}

#[derive(Deserialize, Default)]
pub struct TokenIn {
    pub kind: String,
    pub login: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    #[serde(default)]
    pub permissions: BTreeMap<String, String>,
    /// Fine-grained tokens: the account whose resources the token reaches (default: the user).
    pub resource_owner: Option<String>,
    /// `owner/name` (or names under the resource owner); given means selection `selected`.
    pub repositories: Option<Vec<String>>,
    pub client_id: Option<String>,
    /// The application by name (alternative to `client_id`).
    pub app: Option<String>,
    pub installation_id: Option<i64>,
    /// Installation tokens: the organization the app is installed on (with `app`/`client_id`).
    pub org: Option<String>,
    /// Workflow tokens: `owner/name`.
    pub repo: Option<String>,
    pub expires_at: Option<String>,
    pub note: Option<String>,
}

/// Permissions a workflow token gets when none are given.
const WORKFLOW_DEFAULT: [(&str, &str); 6] = [
    ("actions", "write"),
    ("contents", "write"),
    ("deployments", "write"),
    ("metadata", "read"),
    ("statuses", "write"),
    ("pull_requests", "write"),
];

/// Creates a token; returns the record and its text, shown once.
pub fn create_token(c: &mut dyn Conn, t: &TokenIn, now: i64) -> R<(Token, String)> {
    let kind = TokenKind::parse(&t.kind).ok_or_else(|| {
        ApiError::invalid_field(
            "Token",
            "kind",
            "invalid",
            Some("kind must be one of classic, fine_grained, oauth, user_to_server, installation, workflow".into()),
        )
    })?;
    for level in t.permissions.values() {
        if level != "read" && level != "write" {
            return Err(ApiError::invalid_field("Token", "permissions", "invalid", Some("permission levels are read or write".into())));
        }
    }
    let expires_at = match &t.expires_at {
        Some(s) => Some(parse_ts(s).ok_or_else(|| ApiError::invalid_field("Token", "expires_at", "invalid", None))?),
        None => None,
    };
    let needs_user = !matches!(kind, TokenKind::Installation | TokenKind::Workflow);
    let user_acc = match (&t.login, needs_user) {
        (Some(l), true) => Some(user(c, l)?),
        (None, true) => return Err(ApiError::invalid_field("Token", "login", "missing_field", None)),
        _ => None,
    };
    let app = match (&t.client_id, &t.app) {
        (Some(id), _) => Some(app_by_client_id(c, id)?),
        (None, Some(name)) => Some(apps::by_name(c, name)?.ok_or_else(|| missing("App", "app", name))?),
        _ => None,
    };
    let mut installation_id = None;
    let mut repo_id = None;
    let mut resource_owner_id = None;
    let mut permissions = t.permissions.clone();
    match kind {
        TokenKind::Oauth | TokenKind::UserToServer => {
            let want = if kind == TokenKind::Oauth { "oauth" } else { "app" };
            match &app {
                Some(a) if a.kind == want => {}
                _ => {
                    return Err(ApiError::invalid_field(
                        "Token",
                        "client_id",
                        "invalid",
                        Some(format!("{} tokens need an application of kind {want}", kind.as_str())),
                    ))
                }
            }
        }
        TokenKind::Installation => {
            let inst = match (t.installation_id, &app, &t.org) {
                (Some(id), _, _) => apps::installation(c, id)?,
                (None, Some(a), Some(o)) => {
                    let o = org(c, o)?;
                    apps::installation_for(c, a.id, o.id)?
                }
                _ => None,
            }
            .ok_or_else(|| missing("Installation", "installation_id", &t.installation_id.map(|i| i.to_string()).unwrap_or_default()))?;
            installation_id = Some(inst.id);
            resource_owner_id = Some(inst.account_id);
        }
        TokenKind::Workflow => {
            let name = t.repo.as_deref().ok_or_else(|| ApiError::invalid_field("Token", "repo", "missing_field", None))?;
            let r = repo(c, name)?;
            repo_id = Some(r.id);
            resource_owner_id = Some(r.owner.id);
            if permissions.is_empty() {
                permissions = WORKFLOW_DEFAULT.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            }
        }
        TokenKind::FineGrained => {
            let owner = match &t.resource_owner {
                Some(l) => accounts::by_login(c, l)?.ok_or_else(|| missing("Account", "resource_owner", l))?,
                None => user_acc.clone().expect("fine-grained tokens have a user"),
            };
            resource_owner_id = Some(owner.id);
        }
        TokenKind::Classic => {}
    }
    let mut repository_ids = Vec::new();
    if let Some(names) = &t.repositories {
        for n in names {
            let full = match (n.contains('/'), resource_owner_id) {
                (true, _) => n.clone(),
                (false, Some(o)) => {
                    let owner = accounts::by_id(c, o)?.ok_or_else(ApiError::not_found)?;
                    format!("{}/{n}", owner.login)
                }
                (false, None) => n.clone(),
            };
            repository_ids.push(repo(c, &full)?.id);
        }
    }
    let text = kind.generate();
    let hash = sha256_hex(text.as_bytes());
    let scopes = if kind.uses_scopes() { t.scopes.clone() } else { Vec::new() };
    let n = NewToken {
        kind,
        token_hash: &hash,
        last_eight: &text[text.len() - 8..],
        user_id: user_acc.as_ref().map(|u| u.id),
        app_id: app.as_ref().map(|a| a.id),
        installation_id,
        repo_id,
        scopes: &scopes,
        permissions: &permissions,
        resource_owner_id,
        repository_selection: if t.repositories.is_some() { "selected" } else { "all" },
        repository_ids: &repository_ids,
        note: t.note.as_deref(),
        expires_at,
    };
    let token = tokens::create(c, &n, now)?;
    Ok((token, text))
}

/// A control-plane body as `T`: a mismatch is a 400 with serde's message.
pub fn parse<T: serde::de::DeserializeOwned>(body: serde_json::Value) -> crate::error::ApiResult<T> {
    serde_json::from_value(body).map_err(ApiError::invalid_request)
}

/// Runs a control operation in one write transaction.
pub async fn write<T, F>(app: &crate::state::Shared, f: F) -> crate::error::ApiResult<T>
where
    F: FnOnce(&mut dyn platform_store::Conn, i64) -> crate::error::ApiResult<T> + Send + 'static,
    T: Send + 'static,
{
    let now = app.clock.now();
    app.store.write(move |c| f(c, now)).await
}
