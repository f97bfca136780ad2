//! Creating, updating and deleting repositories. Each is one transaction with its activity:
//! `CreateEvent` and `PublicEvent` for the feeds, `RepositoryEvent` for the organization's
//! `repository` webhooks (created, deleted, renamed, edited, publicized, privatized).
use axum::http::StatusCode;
use platform_core::TokenKind;
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::{self, Changes, NewRepo, Repo};
use platform_store::{Conn, DbError, DbErrorKind};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::shapes;
use crate::authorize::{grants, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::input::nullable;
use crate::ops::hooks::activity::{
    self as activity, CreateActivity, From, PublicActivity, Record, Renamed, RepositoryActivity, RepositoryChanges, Scope,
};
use crate::ops::hooks::payloads;
use crate::principal::{Principal, Role, TokenAuth};
use crate::reply::Reply;
use crate::request::{Body, Ctx};
use crate::shapes::{repo_api_url, Urls};

/// Settings clients send that the platform answers with its defaults: type-checked, not kept.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Settings {
    has_issues: Option<bool>,
    has_projects: Option<bool>,
    has_wiki: Option<bool>,
    has_discussions: Option<bool>,
    is_template: Option<bool>,
    allow_squash_merge: Option<bool>,
    allow_merge_commit: Option<bool>,
    allow_rebase_merge: Option<bool>,
    allow_auto_merge: Option<bool>,
    delete_branch_on_merge: Option<bool>,
    allow_forking: Option<bool>,
    web_commit_signoff_required: Option<bool>,
}

const VISIBILITIES: [&str; 3] = ["public", "private", "internal"];

/// A new repository.
#[derive(Deserialize, JsonSchema)]
pub struct CreateRepo {
    #[schemars(length(max = 100))]
    name: String,
    // The hosted platform's limits.
    #[schemars(length(max = 350), transform = nullable)]
    description: Option<String>,
    #[schemars(length(max = 255), transform = nullable)]
    homepage: Option<String>,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    auto_init: bool,
    // Accepted as the platform does; no templates are applied here.
    #[allow(dead_code)]
    #[schemars(transform = nullable)]
    gitignore_template: Option<String>,
    #[allow(dead_code)]
    #[schemars(transform = nullable)]
    license_template: Option<String>,
    #[serde(flatten)]
    #[allow(dead_code)]
    settings: Settings,
}

/// A new repository of the organization, with its visibility.
#[derive(Deserialize, JsonSchema)]
pub struct CreateOrgRepo {
    #[serde(flatten)]
    repo: CreateRepo,
    #[schemars(extend("enum" = VISIBILITIES))]
    visibility: Option<String>,
    // Accepted as the platform does; teams get no repository access here.
    #[allow(dead_code)]
    team_id: Option<i64>,
}

/// What changes in the repository; fields left out keep their values.
#[derive(Deserialize, JsonSchema)]
pub struct UpdateRepo {
    #[schemars(length(max = 100))]
    name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>", length(max = 350), transform = nullable)]
    description: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>", length(max = 255), transform = nullable)]
    homepage: Option<Option<String>>,
    private: Option<bool>,
    #[schemars(extend("enum" = VISIBILITIES))]
    visibility: Option<String>,
    #[schemars(length(max = 255))]
    default_branch: Option<String>,
    #[allow(dead_code)]
    archived: Option<bool>,
    #[serde(flatten)]
    #[allow(dead_code)]
    settings: Settings,
}

/// The branch every new repository starts with (the hosted platform's default).
const DEFAULT_BRANCH: &str = "main";

/// A repository name as the hosted platform keeps it: characters other than ASCII letters,
/// digits, `.`, `-` and `_` become `-`; `.`, `..` and names ending in `.git` are refused.
fn normalized_name(name: &str, failed: &'static str) -> ApiResult<String> {
    let n: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '-' }).collect();
    if n.is_empty() || n == "." || n == ".." || n.to_lowercase().ends_with(".git") {
        return Err(name_error(failed, "invalid", None));
    }
    Ok(n)
}

fn name_error(message: &'static str, code: &str, detail: Option<&str>) -> ApiError {
    let mut e = json!({"resource": "Repository", "code": code, "field": "name"});
    if let Some(d) = detail {
        e["message"] = json!(d);
    }
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message).with_errors(json!([e]))
}

/// A taken name, as the hosted platform words it.
fn taken(message: &'static str) -> impl Fn(DbError) -> ApiError {
    move |e| match e.kind {
        DbErrorKind::Unique => name_error(message, "custom", Some("name already exists on this account")),
        _ => e.into(),
    }
}

/// The token creating a repository for `owner`, with the scope or permission to.
fn creator(ctx: &Ctx, private: bool) -> ApiResult<&TokenAuth> {
    let t = match &ctx.principal {
        Principal::Anonymous => return Err(ApiError::requires_authentication()),
        Principal::App(_) => return Err(ApiError::forbidden("Resource not accessible by integration")),
        Principal::Token(t) => t,
    };
    let kind = t.token.kind;
    // `public_repo` creates public repositories only.
    if !grants(t, &ctx.op.access, private) || kind == TokenKind::Workflow {
        return Err(not_accessible(kind));
    }
    Ok(t)
}

pub async fn create_for_authenticated_user(ctx: Ctx, Body(b): Body<CreateRepo>) -> ApiResult<Reply> {
    let t = creator(&ctx, b.private)?;
    let user = t.user.clone().ok_or_else(|| not_accessible(t.token.kind))?;
    if t.token.resource_owner_id.is_some_and(|o| o != user.id) {
        return Err(not_accessible(t.token.kind));
    }
    let private = b.private;
    create(&ctx, user.clone(), Some(user), b, private).await
}

/// The contract admitted members of the organization and its installations (`On::OrgMember`).
pub async fn create_in_org(ctx: Ctx, Body(b): Body<CreateOrgRepo>) -> ApiResult<Reply> {
    let CreateOrgRepo { repo: b, visibility, .. } = b;
    let private = match visibility.as_deref() {
        Some("internal") => {
            return Err(ApiError::invalid_field(
                "Repository",
                "visibility",
                "invalid",
                Some("Internal repositories are not available to this organization.".into()),
            ))
        }
        Some(v) => v == "private",
        None => b.private,
    };
    let user = creator(&ctx, private)?.user.clone();
    create(&ctx, ctx.org().org.clone(), user, b, private).await
}

async fn create(ctx: &Ctx, owner: Account, actor: Option<Account>, b: CreateRepo, private: bool) -> ApiResult<Reply> {
    const FAILED: &str = "Repository creation failed.";
    let name = normalized_name(&b.name, FAILED)?;
    let urls = ctx.app.urls.clone();
    let now = ctx.app.clock.now();
    let actor_id = actor.as_ref().map(|a| a.id);
    let b_auto_init = b.auto_init;
    let repo = ctx
        .write(move |c| -> Result<Repo, ApiError> {
            let n = NewRepo {
                owner: &owner,
                name: &name,
                private,
                description: b.description.as_deref().filter(|d| !d.is_empty()),
                default_branch: DEFAULT_BRANCH,
                homepage: b.homepage.as_deref().filter(|h| !h.is_empty()),
            };
            let repo = repos::create(c, &n, now).map_err(taken(FAILED))?;
            let created = CreateActivity {
                name: None,
                ref_type: "repository".into(),
                full_ref: None,
                master_branch: repo.default_branch.clone(),
                description: repo.description.clone(),
                pusher_type: "user".into(),
            };
            activity::record(c, Scope::repo(actor_id, &repo), &Record::Create(created), now)?;
            repository_event(c, &urls, &repo, actor_id, "created", None, now)?;
            Ok(repo)
        })
        .await?;
    // Its git repository, and with `auto_init` the first commit and the default branch.
    crate::ops::git_hosting::repository(&ctx.app, &repo).await?;
    let repo = if b_auto_init {
        crate::ops::git_hosting::control::first_commit(&ctx.app, &repo, actor.as_ref()).await?;
        let id = repo.id;
        ctx.app.store.read(move |c| repos::by_id(c, id)).await?.ok_or_else(ApiError::internal)?
    } else {
        repo
    };
    let location = repo_api_url(&ctx.app.urls, &repo);
    let perms = shapes::permissions(&ctx.principal, Role::Admin);
    Ok(Reply::created(shapes::full(&ctx.app.urls, ctx.version, &repo, perms, 0)).header("location", location))
}

/// Records a `repository` webhook event of `repo` (as it is after the change).
fn repository_event(
    c: &mut dyn Conn,
    urls: &Urls,
    repo: &Repo,
    actor_id: Option<i64>,
    action: &str,
    changes: Option<RepositoryChanges>,
    now: i64,
) -> Result<(), DbError> {
    let repository = activity::stored(&payloads::repository(urls, repo));
    let r = Record::Repository(RepositoryActivity { action: action.into(), repository, changes });
    activity::record(c, Scope::repo(actor_id, repo), &r, now)?;
    Ok(())
}

/// A field given as `null` is `Some(None)`, one left out `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

pub async fn update(ctx: Ctx, Body(b): Body<UpdateRepo>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let private = match b.visibility.as_deref() {
        Some("internal") => {
            return Err(ApiError::invalid_field(
                "Repository",
                "visibility",
                "invalid",
                Some("Internal repositories are not available to this account.".into()),
            ))
        }
        Some(v) => Some(v == "private"),
        None => b.private,
    };
    // Making a repository private takes the scope private repositories need.
    if private == Some(true) && !repo.private {
        creator(&ctx, true)?;
    }
    let name = match &b.name {
        Some(n) if n != &repo.name => Some(normalized_name(n, "Validation Failed")?),
        _ => None,
    };
    let urls = ctx.app.urls.clone();
    let now = ctx.app.clock.now();
    let actor_id = ctx.principal.user().map(|u| u.id);
    let id = repo.id;
    let updated = ctx
        .write(move |c| -> Result<Repo, ApiError> {
            // What changed is decided against the row as it is under its lock, not as this
            // request first read it: concurrent updates (on any node) record each change once.
            let before = repos::locked(c, id)?.ok_or_else(ApiError::not_found)?;
            if let Some(branch) = b.default_branch.as_deref().filter(|d| *d != before.default_branch) {
                if !repos::has_branch(c, before.id, branch)? {
                    let empty = repos::resolve_ref(c, before.id, &before.default_branch)?.is_none()
                        && c.query_opt("SELECT 1 FROM refs WHERE repo_id = ?", platform_store::params![before.id])?.is_none();
                    let message = if empty {
                        "Cannot update default branch for an empty repository. Please init the repository and push first.".to_string()
                    } else {
                        format!("The branch {branch} was not found. Please push that ref first or create it via the Git Data API.")
                    };
                    return Err(ApiError::invalid_field("Repository", "default_branch", "custom", Some(message)));
                }
            }
            if let Some(n) = &name {
                repos::rename(c, &before, n, now).map_err(taken("Validation Failed"))?;
            }
            let ch = Changes {
                description: b.description.as_ref().map(|d| d.as_deref().filter(|d| !d.is_empty())),
                homepage: b.homepage.as_ref().map(|h| h.as_deref().filter(|h| !h.is_empty())),
                private,
                default_branch: b.default_branch.as_deref(),
            };
            repos::update(c, before.id, &ch, now)?;
            let after = repos::by_id(c, before.id)?.ok_or_else(ApiError::not_found)?;
            if name.is_some() {
                let changes =
                    RepositoryChanges { repository: Some(Renamed { name: From { from: before.name.clone() } }), ..Default::default() };
                repository_event(c, &urls, &after, actor_id, "renamed", Some(changes), now)?;
            }
            let changed = |was: &Option<String>, now: &Option<String>| (was != now).then(|| From { from: was.clone() });
            let edited = RepositoryChanges {
                repository: None,
                description: changed(&before.description, &after.description),
                homepage: changed(&before.homepage, &after.homepage),
                default_branch: (before.default_branch != after.default_branch).then(|| From { from: before.default_branch.clone() }),
            };
            if edited != RepositoryChanges::default() {
                repository_event(c, &urls, &after, actor_id, "edited", Some(edited), now)?;
            }
            if before.private != after.private {
                if after.private {
                    repository_event(c, &urls, &after, actor_id, "privatized", None, now)?;
                } else {
                    repository_event(c, &urls, &after, actor_id, "publicized", None, now)?;
                    activity::record(c, Scope::repo(actor_id, &after), &Record::Public(PublicActivity {}), now)?;
                }
            }
            Ok(after)
        })
        .await?;
    let perms = shapes::permissions(&ctx.principal, Role::Admin);
    let id = updated.id;
    let subscribers =
        ctx.app.store.read(move |c| c.query_i64("SELECT COUNT(*) FROM watchers WHERE repo_id = ?", platform_store::params![id])).await?;
    Ok(Reply::ok(shapes::full(&ctx.app.urls, ctx.version, &updated, perms, subscribers)))
}

pub async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().clone();
    let urls = ctx.app.urls.clone();
    let now = ctx.app.clock.now();
    let actor_id = ctx.principal.user().map(|u| u.id);
    let id = repo.id;
    ctx.write(move |c| -> ApiResult<()> {
        // Under its row lock: deleted, and recorded, by one request on any node.
        let repo = repos::locked(c, repo.id)?.ok_or_else(ApiError::not_found)?;
        // Recorded before the rows go: the event carries the repository as it was.
        repository_event(c, &urls, &repo, actor_id, "deleted", None, now)?;
        Ok(repos::delete(c, repo.id)?)
    })
    .await?;
    crate::ops::git_hosting::remove(&ctx.app, id).await;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
