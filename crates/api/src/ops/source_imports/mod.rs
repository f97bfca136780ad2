//! Source imports (document 3, retired): start, get, update (credentials, project, restart),
//! cancel, commit authors and their mapping, large files and the Git LFS preference. Imports are
//! real for Git (`import`, `git`, `worker`). Classic personal tokens only (`repo`; Contents read for
//! GET, write otherwise); every operation is closing down (`Deprecation`/`Sunset`) and answers
//! 503 while the import service is under maintenance (a `maintenance` fault). Starting is
//! refused (422) when the repository has workflow automation, that is at least one workflow.
pub mod git;
pub mod import;
pub mod source;
pub mod worker;

use axum::http::StatusCode;
use platform_core::TokenKind;
use platform_store::domain::repos::Repo;
use platform_store::domain::source_imports::{self as store, Import};
use platform_store::DbError;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, Operation, Resp, IMPORTS_SUNSET};
use crate::outbound::AllowList;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, Query};
use crate::state::ImportSettings;
use import::record_event;

/// Classic personal tokens only, before the repository is looked at.
const CLASSIC: &[TokenKind] = &[TokenKind::Classic];
const READ: Access = Access::token(&["repo"], Some(("contents", Level::Read)), Level::Read).only(CLASSIC);
const WRITE: Access = Access::token(&["repo"], Some(("contents", Level::Write)), Level::Write).only(CLASSIC);
const BASE: &str = "/repos/{owner}/{repo}/import";

pub static GET: Operation = Operation::get("imports/get", BASE, "Get an import status")
    .docs("https://docs.service.example/rest/migrations/source-imports#get-an-import-status")
    .access(READ)
    .closing_down(IMPORTS_SUNSET)
    .responds(&[Resp::typed::<import::Import>(200, "The repository's import and its progress.")]);

#[derive(Deserialize, JsonSchema)]
struct StartImport {
    vcs_url: String,
    #[schemars(extend("enum" = import::VCS))]
    vcs: Option<String>,
    vcs_username: Option<String>,
    vcs_password: Option<String>,
    tfvc_project: Option<String>,
}

pub static START: Operation = Operation::put("imports/start", BASE, "Start an import")
    .docs("https://docs.service.example/rest/migrations/source-imports#start-an-import")
    .access(WRITE)
    .resource("Import")
    .closing_down(IMPORTS_SUNSET)
    .responds(&[
        Resp::typed::<import::Import>(201, "The import was started (detection first when `vcs` was omitted).").with_headers(&["Location"])
    ]);

#[derive(Deserialize, JsonSchema)]
struct UpdateImport {
    vcs_username: Option<String>,
    vcs_password: Option<String>,
    #[schemars(extend("enum" = import::VCS))]
    vcs: Option<String>,
    tfvc_project: Option<String>,
    human_name: Option<String>,
}

pub static UPDATE: Operation = Operation::patch("imports/update", BASE, "Update an import")
    .docs("https://docs.service.example/rest/migrations/source-imports#update-an-import")
    .access(WRITE)
    .resource("Import")
    .closing_down(IMPORTS_SUNSET)
    .responds(&[Resp::typed::<import::Import>(200, "The import; with no body, or after a failure, it starts over.")]);

pub static CANCEL: Operation = Operation::delete("imports/cancel", BASE, "Cancel an import")
    .docs("https://docs.service.example/rest/migrations/source-imports#cancel-an-import")
    .access(WRITE)
    .closing_down(IMPORTS_SUNSET)
    .responds(&[Resp::empty(204, "The import was cancelled and removed.")]);

#[derive(Deserialize, JsonSchema)]
struct AuthorsQuery {
    /// Only authors with an id above this.
    since: Option<i64>,
}

pub static LIST_AUTHORS: Operation = Operation::get("imports/list-authors", "/repos/{owner}/{repo}/import/authors", "Get commit authors")
    .docs("https://docs.service.example/rest/migrations/source-imports#get-commit-authors")
    .access(READ)
    .closing_down(IMPORTS_SUNSET)
    .responds(&[Resp::typed::<Vec<import::PorterAuthor>>(200, "The authors of the imported history, by id.")]);

#[derive(Deserialize, JsonSchema)]
struct MapAuthor {
    email: Option<String>,
    name: Option<String>,
}

pub static MAP_AUTHOR: Operation =
    Operation::patch("imports/map-author", "/repos/{owner}/{repo}/import/authors/{author_id}", "Map a commit author")
        .docs("https://docs.service.example/rest/migrations/source-imports#map-a-commit-author")
        .access(WRITE)
        .resource("PorterAuthor")
        .closing_down(IMPORTS_SUNSET)
        .responds(&[Resp::typed::<import::PorterAuthor>(200, "The author with its new identity.")]);

pub static LIST_LARGE_FILES: Operation =
    Operation::get("imports/list-large-files", "/repos/{owner}/{repo}/import/large_files", "Get large files")
        .docs("https://docs.service.example/rest/migrations/source-imports#get-large-files")
        .access(READ)
        .closing_down(IMPORTS_SUNSET)
        .responds(&[Resp::typed::<Vec<import::LargeFile>>(200, "Files above 100 MB in the imported history.")]);

#[derive(Deserialize, JsonSchema)]
struct SetLfs {
    #[schemars(extend("enum" = ["opt_in", "opt_out"]))]
    use_lfs: String,
}

pub static SET_LFS: Operation =
    Operation::patch("imports/set-lfs-preference", "/repos/{owner}/{repo}/import/lfs", "Update Git LFS preference")
        .docs("https://docs.service.example/rest/migrations/source-imports#update-git-lfs-preference")
        .access(WRITE)
        .resource("Import")
        .closing_down(IMPORTS_SUNSET)
        .responds(&[Resp::typed::<import::Import>(200, "The import with the preference.")]);

pub fn routes(api: Api) -> Api {
    api.op(&GET, get)
        .op(&START, start)
        .op(&UPDATE, update)
        .op(&CANCEL, cancel)
        .op(&LIST_AUTHORS, list_authors)
        .op(&MAP_AUTHOR, map_author)
        .op(&LIST_LARGE_FILES, list_large_files)
        .op(&SET_LFS, set_lfs)
}

/// The repository (authorized by the contract), unless the import service is under
/// maintenance (503).
fn repo(ctx: &Ctx) -> ApiResult<Repo> {
    let user = ctx.principal.user().map(|u| u.login.as_str());
    if let Some(message) = ctx.app.faults.maintenance(&ctx.op.method.http(), &ctx.path, user) {
        return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message));
    }
    Ok(ctx.repo().clone())
}

/// The repository and its import (404 when there is none).
async fn repo_import(ctx: &Ctx) -> ApiResult<(Repo, Import)> {
    let repo = repo(ctx)?;
    let id = repo.id;
    let imp = ctx.app.store.read(move |c| store::get(c, id)).await?.ok_or_else(ApiError::not_found)?;
    Ok((repo, imp))
}

fn reply(ctx: &Ctx, repo: &Repo, imp: &Import, status: StatusCode) -> Reply {
    Reply::json(status, import::import(&ctx.app.urls, repo, imp))
}

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid_field("Import", field, "invalid", Some(message.into()))
}

/// Checks a source URL ([`source::classify`]); internal hosts are refused unless
/// allow-listed (as webhook targets are).
async fn check_url(ctx: &Ctx, url: &str) -> ApiResult<()> {
    let kind = source::classify(url, &ctx.app.config.imports).map_err(|m| invalid("vcs_url", m))?;
    let allow = AllowList::parse(ctx.app.config.webhooks.allowed_hosts()).unwrap_or_default();
    match git::guard(&kind, &allow).await {
        Err(m) if m.starts_with("refused") => Err(invalid("vcs_url", m)),
        // Unresolvable hosts are for detection (or the import) to report.
        _ => Ok(()),
    }
}

/// The status a new attempt starts in.
fn first_status(vcs: &Option<String>) -> &'static str {
    if vcs.is_some() {
        "importing"
    } else {
        "detecting"
    }
}

/// Removes an old attempt's mirror in the background.
fn remove_mirror(settings: &ImportSettings, workdir: &str) {
    let dir = settings.mirrors().join(workdir);
    tokio::task::spawn_blocking(move || {
        let _ = std::fs::remove_dir_all(dir);
    });
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let (repo, imp) = repo_import(&ctx).await?;
    Ok(reply(&ctx, &repo, &imp, StatusCode::OK))
}

async fn start(ctx: Ctx, Body(b): Body<StartImport>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let repo = repo(&ctx)?;
    let url = b.vcs_url;
    check_url(&ctx, &url).await?;
    let vcs = b.vcs;
    let (username, password) = (b.vcs_username, b.vcs_password);
    let now = ctx.app.clock.now();
    let imp = Import {
        repo_id: repo.id,
        vcs: vcs.clone(),
        vcs_url: url,
        tfvc_project: b.tfvc_project,
        credentials_enc: None,
        use_lfs: "undecided".into(),
        status: first_status(&vcs).into(),
        failed_step: None,
        error_message: None,
        commit_count: None,
        import_percent: None,
        push_percent: None,
        authors_count: 0,
        large_files_size: 0,
        large_files_count: 0,
        step_done: false,
        due_at: now + ctx.app.config.imports.step_seconds,
        workdir: import::new_workdir(repo.id),
        actor_id: ctx.principal.user().map(|u| u.id),
        created_at: now,
        updated_at: now,
    };
    let imp = ctx
        .write(move |c| -> ApiResult<Import> {
            let mut imp = imp;
            if store::has_workflows(c, imp.repo_id)? {
                return Err(ApiError::invalid_field(
                    "Import",
                    "repository",
                    "unprocessable",
                    Some("The repository has workflow automation enabled; imports into it are refused.".into()),
                ));
            }
            // Under the repository's row lock: two starts at once (on any nodes) are one import
            // and one refusal, not a failed insert.
            platform_store::domain::repos::lock(c, imp.repo_id)?;
            if store::get(c, imp.repo_id)?.is_some() {
                return Err(ApiError::invalid_field(
                    "Import",
                    "repository",
                    "already_exists",
                    Some("The repository already has an import; cancel it to start another.".into()),
                ));
            }
            if username.is_some() || password.is_some() {
                let key = crate::secrets::server_key(c, &sk)?;
                imp.credentials_enc =
                    Some(import::seal_credentials(&key, username.as_deref().unwrap_or(""), password.as_deref().unwrap_or("")));
            }
            store::create(c, &imp)?;
            Ok(imp)
        })
        .await?;
    let location = format!("{}/import", crate::shapes::repo_api_url(&ctx.app.urls, &repo));
    Ok(reply(&ctx, &repo, &imp, StatusCode::CREATED).header("location", location))
}

/// Statuses an update starts over from (the caller supplied what was missing).
const RETRY_FROM: &[&str] = &["auth_failed", "error", "detection_needs_auth", "detection_found_multiple"];

async fn update(ctx: Ctx, Body(b): Body<UpdateImport>) -> ApiResult<Reply> {
    let sk = ctx.app.config.secret_key;
    let repo = repo(&ctx)?;
    let restart_always = [&b.vcs_username, &b.vcs_password, &b.vcs, &b.tfvc_project, &b.human_name].iter().all(|f| f.is_none());
    let (vcs, project) = (b.vcs, b.tfvc_project);
    let (username, password) = (b.vcs_username, b.vcs_password);
    let (now, step, id) = (ctx.app.clock.now(), ctx.app.config.imports.step_seconds, repo.id);
    let (imp, old_workdir) = ctx
        .write(move |c| -> ApiResult<(Import, Option<String>)> {
            // As it is under its row lock: two updates at once (on any nodes), one of the user
            // name and one of the password, both stay, and it restarts once.
            let mut imp = store::locked(c, id)?.ok_or_else(ApiError::not_found)?;
            if vcs.is_some() {
                imp.vcs = vcs;
            }
            if project.is_some() {
                imp.tfvc_project = project;
            }
            if username.is_some() || password.is_some() {
                let key = crate::secrets::server_key(c, &sk)?;
                let old = imp.credentials_enc.as_deref().and_then(|e| import::open_credentials(&key, e)).unwrap_or_default();
                let u = username.unwrap_or(old.0);
                let p = password.unwrap_or(old.1);
                imp.credentials_enc = Some(import::seal_credentials(&key, &u, &p));
            }
            store::set_source(c, &imp, now)?;
            if !(restart_always || RETRY_FROM.contains(&imp.status.as_str())) {
                return Ok((imp, None));
            }
            let old = imp.workdir.clone();
            let status = first_status(&imp.vcs);
            let workdir = import::new_workdir(id);
            store::restart(c, id, status, &workdir, now + step, now)?;
            let imp = store::get(c, id)?.ok_or_else(ApiError::not_found)?;
            Ok((imp, Some(old)))
        })
        .await?;
    if let Some(old) = old_workdir {
        remove_mirror(&ctx.app.config.imports, &old);
    }
    Ok(reply(&ctx, &repo, &imp, StatusCode::OK))
}

async fn cancel(ctx: Ctx) -> ApiResult<Reply> {
    let repo = repo(&ctx)?;
    let (now, r) = (ctx.app.clock.now(), repo.clone());
    let actor = ctx.principal.user().map(|u| u.id);
    let gone = ctx
        .write(move |c| -> Result<Option<Import>, DbError> {
            let Some(imp) = store::get(c, r.id)? else { return Ok(None) };
            // Cancelled by the one request (on any node) whose delete removed it.
            if !store::delete(c, r.id)? {
                return Ok(None);
            }
            if imp.status != "complete" {
                record_event(c, &r, actor, "cancelled", now)?;
            }
            Ok(Some(imp))
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    remove_mirror(&ctx.app.config.imports, &gone.workdir);
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

async fn list_authors(ctx: Ctx, Query(q): Query<AuthorsQuery>) -> ApiResult<Reply> {
    let since = q.since.unwrap_or(0);
    let (repo, imp) = repo_import(&ctx).await?;
    let list = ctx.app.store.read(move |c| store::authors(c, imp.repo_id, since)).await?;
    let u = &ctx.app.urls;
    Ok(Reply::ok(list.iter().map(|a| import::author(u, &repo, a)).collect::<Vec<_>>()))
}

async fn map_author(ctx: Ctx, Body(MapAuthor { email, name }): Body<MapAuthor>) -> ApiResult<Reply> {
    let (repo, imp) = repo_import(&ctx).await?;
    let author_id: i64 = ctx.param("author_id").parse().map_err(|_| ApiError::not_found())?;
    if email.as_deref().is_some_and(|e| e.trim().is_empty() || !e.contains('@') || e.contains(['<', '>', '\n'])) {
        return Err(ApiError::invalid_field("PorterAuthor", "email", "invalid", Some("email must be an email address".into())));
    }
    if name.as_deref().is_some_and(|n| n.trim().is_empty() || n.contains(['<', '>', '\n'])) {
        return Err(ApiError::invalid_field("PorterAuthor", "name", "invalid", Some("name must not be empty".into())));
    }
    let a = ctx
        .write(move |c| store::map_author(c, imp.repo_id, author_id, email.as_deref(), name.as_deref()))
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(import::author(&ctx.app.urls, &repo, &a)))
}

async fn list_large_files(ctx: Ctx) -> ApiResult<Reply> {
    let (_, imp) = repo_import(&ctx).await?;
    let list = ctx.app.store.read(move |c| store::large_files(c, imp.repo_id)).await?;
    Ok(Reply::ok(list.iter().map(import::large_file).collect::<Vec<_>>()))
}

async fn set_lfs(ctx: Ctx, Body(SetLfs { use_lfs: pref }): Body<SetLfs>) -> ApiResult<Reply> {
    let (repo, mut imp) = repo_import(&ctx).await?;
    let now = ctx.app.clock.now();
    let (id, p) = (imp.repo_id, pref.clone());
    ctx.write(move |c| store::set_lfs(c, id, &p, now)).await?;
    imp.use_lfs = pref;
    Ok(reply(&ctx, &repo, &imp, StatusCode::OK))
}
