//! The REST reads and writes clients make around pushes, answered from git itself: the commit
//! history (`…/commits` with its filters, `…/compare/{base}...{head}`), file contents (read, and
//! written by a commit of the API's), tags, git commits and trees, and the reference writes
//! (`POST`/`PATCH`/`DELETE …/git/refs`).
//!
//! Every ref change here takes the one path of every ref change ([`super::git_hosting::refs`]):
//! the repository's lock, an intent, git, and the record — so the store and git agree, and a
//! change by the API is recorded as a push is ([`move_refs`]).
//!
//! - [`history`]: commit lists and comparisons.
//! - [`contents`]: `…/contents/{path}` read, created, updated and deleted.
//! - [`objects`]: tags, `…/git/commits/{sha}`, `…/git/trees/{sha}`.
//! - [`database`]: blobs and annotated tag objects, read and written (`…/git/blobs`, `…/git/tags`).
//! - [`ref_writes`]: `…/git/refs` created, moved and deleted.
mod contents;
mod database;
mod history;
mod objects;
mod ref_writes;

use axum::http::StatusCode;
use platform_git::RefUpdate;
use platform_store::domain::repos::Repo;

use super::git_hosting::refs::{Applied, Locked, Source};
use super::git_hosting::{git_error, rules, WORKFLOWS_DIR};
use crate::error::{ApiError, ApiResult};
use crate::operation::Access;
use crate::registry::Api;
use crate::request::Ctx;

/// Reading contents: public repositories without credentials; `repo`, or `contents: read`.
const READ: Access = Access::read(&["repo"], "contents");
/// Writing contents and refs: `repo` (or `public_repo` on a public repository), or
/// `contents: write` — as a push needs.
const WRITE: Access = Access::write(&["repo", "public_repo"], "contents");

/// Registered after `super::git`, whose `…/git/refs/{ref}` read alias must be tried first.
pub fn routes(api: Api) -> Api {
    let api = history::routes(api);
    let api = contents::routes(api);
    let api = objects::routes(api);
    let api = database::routes(api);
    ref_writes::routes(api)
}

/// The repository's git repository.
async fn git(ctx: &Ctx, repo: &Repo) -> ApiResult<platform_git::Repo> {
    super::git_hosting::repository(&ctx.app, repo).await
}

/// 409 of a read of a repository git has nothing of, as hosted.
fn empty_repository() -> ApiError {
    ApiError::new(StatusCode::CONFLICT, "Git Repository is empty.")
}

/// Applies the ref changes of a REST write, the repository's lock held (`l`): the checks of a
/// push, then intent, git and record (a change by the API is recorded as a push is, with its
/// source `api`). `updates` must be relative to the refs as they are under the lock.
async fn move_refs(ctx: &Ctx, l: &Locked, updates: &[RefUpdate]) -> ApiResult<Applied> {
    // Workflow files change only with the `workflow` grant, whatever writes them (the push
    // gate's rule and message).
    let wanted: Vec<String> = updates.iter().filter(|u| !u.is_delete()).map(|u| u.new.clone()).collect();
    let known: Vec<String> = l.git.refs().await.map_err(git_error)?.into_iter().map(|r| r.oid).collect();
    let workflows = l.git.paths_changed(&wanted, &known, WORKFLOWS_DIR).await.map_err(git_error)?;
    if let Some(refusal) = super::git_hosting::push::workflow_refusal(&ctx.principal, &workflows) {
        let first = refusal.first().map(|m| m.trim_start_matches("error: ").to_string()).unwrap_or_default();
        return Err(ApiError::forbidden(first));
    }
    // The rulesets judge the write as they judge a push by the same caller; a refusal is
    // recorded and answered (422 naming each rule), and nothing moves.
    let judged = rules::judge(&ctx.app, &l.repo, &l.git, rules::Actor::Principal(&ctx.principal), updates, &known).await?;
    if judged.refused() {
        let e = judged.error();
        rules::record(&ctx.app, judged.suites).await?;
        return Err(e);
    }
    let pusher = ctx.principal.user().map(|u| u.id);
    l.apply_judged(&ctx.app, pusher, Source::Api, updates, judged.suites).await
}
