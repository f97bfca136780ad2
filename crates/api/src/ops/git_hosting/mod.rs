//! Git hosting: every repository is a real git repository (`platform_git` runs git), served over
//! smart HTTP at `{web root}/{owner}/{repo}(.git)/…` with the API's credentials and reach, and
//! every ref change — a push, the control plane, a repository's first commit, an import — goes
//! through one path here that keeps git and the store in agreement:
//!
//! 1. the repository's lock (one change at a time across nodes: `Store::exclusive`), leftovers of
//!    a crash reconciled first;
//! 2. an intent recorded (the changes expected), before git moves anything;
//! 3. git moves the refs (receive-pack, after the push [`push::PushGate`] accepted; or
//!    `update-ref` with the expected old values);
//! 4. what git actually moved, with the commits it brought, recorded in one transaction that
//!    removes the intent ([`refs::settle`]) — only then does a client hear of success.
//!
//! A crash between 2 and 4 leaves the intent: the next start (or the repository's next change)
//! reads git and records what moved, exactly once (the intent's removal is in the same
//! transaction as the record).
//!
//! - [`http`]: the smart HTTP routes, credentials and access.
//! - [`push`]: the push gate (the `pre-receive` decision).
//! - [`refs`]: the ref-change path, the record, reconciliation.
//! - [`rules`]: rulesets judging ref changes (pushes and the control plane), their rule suites.
//! - [`control`]: control-plane commits and ref pushes, first commits, imports.
//! - [`effects`]: what a ref change causes (feed events, and from them the webhooks).
pub mod control;
pub mod effects;
pub mod http;
pub mod push;
pub mod refs;
pub mod rules;

use platform_git::Storage;
use platform_store::domain::pushes;
use platform_store::domain::repos::Repo;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Where the workflows the platform knows live in a repository.
pub const WORKFLOWS_DIR: &str = ".workflows/";

/// The git storage of this server's database, opened on first use: the database's namespace is
/// drawn by the first node that needs it and read by every other.
pub async fn storage(app: &AppState) -> ApiResult<&Storage> {
    app.git
        .get_or_try_init(|| async {
            let fresh = platform_core::ids::random_hex(8);
            let ns = app.store.write_unobserved(move |c| pushes::storage_namespace(c, &fresh)).await?;
            let limits = platform_git::Limits {
                timeout: app.config.git.timeout,
                max_push_bytes: app.config.git.max_push_bytes,
                ..platform_git::Limits::default()
            };
            Storage::open(&app.config.imports.root(), &ns, limits).map_err(git_error)
        })
        .await
}

/// A repository's git repository (created if it does not exist yet, `HEAD` on its default branch).
pub async fn repository(app: &AppState, repo: &Repo) -> ApiResult<platform_git::Repo> {
    storage(app).await?.repo(repo.id, &repo.default_branch).await.map_err(git_error)
}

/// Removes a deleted repository's git data (its rows are gone; a failure leaves an orphan
/// directory no new repository can be given: ids are not reused).
pub async fn remove(app: &AppState, repo_id: i64) {
    match storage(app).await {
        Ok(s) => {
            if let Err(e) = s.delete(repo_id).await {
                tracing::warn!(repo_id, error = %e, "could not remove a deleted repository's git data");
            }
        }
        Err(e) => tracing::warn!(repo_id, error = %e.message, "could not remove a deleted repository's git data"),
    }
}

/// Removes every repository's git data (the database was emptied) and keeps the namespace.
pub async fn clear(app: &AppState) -> ApiResult<()> {
    let s = storage(app).await?;
    s.clear().await.map_err(git_error)?;
    let ns = s.namespace().to_string();
    app.store.write_unobserved(move |c| pushes::storage_namespace(c, &ns)).await?;
    Ok(())
}

/// The lock key of a repository's ref changes: the database's namespace and the repository id,
/// so databases sharing a PostgreSQL server do not wait for each other.
fn lock_key(storage: &Storage, repo_id: i64) -> i64 {
    let ns = u32::from_str_radix(storage.namespace().get(..8).unwrap_or("0"), 16).unwrap_or(0);
    ((ns as i64) << 32) | (repo_id & 0xffff_ffff)
}

/// A git failure as the API reports it: input refused is a 422, anything else a 500 (logged).
pub fn git_error(e: platform_git::Error) -> ApiError {
    match e {
        platform_git::Error::Invalid(m) => ApiError::invalid_field("Ref", "git", "invalid", Some(m)),
        other => {
            tracing::error!(error = %other, "git failed");
            ApiError::internal()
        }
    }
}
