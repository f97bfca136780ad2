//! An import with real Git: the status vocabulary, the response shapes and the
//! `RepositoryImportEvent` activity. Its siblings: `git` runs the machine's git binary,
//! `worker` moves imports through their statuses in the background (resuming after a restart).
use platform_store::domain::repos::Repo;
use platform_store::domain::source_imports::{self as store, Author};
use platform_store::{Conn, DbError};
use schemars::JsonSchema;
use serde::Serialize;

use crate::ops::hooks::activity::{self, Record, RepositoryImportActivity, Scope};
use crate::shapes::{repo_api_url, Urls};
use crate::typed::Uri;

/// Files above this are large files (document 1).
pub const LARGE_FILE_BYTES: i64 = 100 * 1024 * 1024;

/// Statuses the worker moves on, in order; `complete` follows the last.
pub const ACTIVE: &[&str] = &["detecting", "importing", "mapping", "pushing"];

pub const VCS: &[&str] = &["subversion", "git", "mercurial", "tfvc"];

/// The status after `status` in the normal progression.
pub fn next_status(status: &str) -> &'static str {
    match status {
        "detecting" => "importing",
        "importing" => "mapping",
        "mapping" => "pushing",
        _ => "complete",
    }
}

fn status_text(status: &str) -> &'static str {
    match status {
        "detecting" => "Detecting source",
        "importing" => "Importing...",
        "mapping" => "Rewriting history...",
        "pushing" => "Pushing...",
        "complete" => "Done",
        "auth_failed" => "Authentication failed",
        "error" => "Error",
        "detection_needs_auth" => "Detection needs authentication",
        "detection_found_nothing" => "No source found",
        "detection_found_multiple" => "Multiple projects found",
        _ => "",
    }
}

/// A new attempt's mirror directory name (unique across databases sharing a data directory).
pub fn new_workdir(repo_id: i64) -> String {
    format!("{repo_id}-{}.git", platform_core::ids::random_hex(8))
}

/// Gigabytes, rounded up, so that `large_files_size` is never 0 while large files exist.
fn gigabytes(bytes: i64) -> i64 {
    const GB: i64 = 1024 * 1024 * 1024;
    (bytes + GB - 1) / GB
}

fn import_url(u: &Urls, repo: &Repo) -> String {
    format!("{}/import", repo_api_url(u, repo))
}

/// Import (api-facts §4.12); progress fields only in the statuses that carry them.
#[derive(Serialize, JsonSchema)]
pub struct Import {
    pub vcs: Option<String>,
    pub use_lfs: bool,
    pub vcs_url: String,
    #[schemars(extend("enum" = [
        "auth", "error", "none", "detecting", "choose", "auth_failed", "importing", "mapping", "waiting_to_push", "pushing",
        "complete", "setup", "unknown", "detection_found_multiple", "detection_found_nothing", "detection_needs_auth"
    ]))]
    pub status: String,
    pub status_text: &'static str,
    pub has_large_files: bool,
    /// Gigabytes, rounded up.
    pub large_files_size: i64,
    pub large_files_count: i64,
    pub authors_count: i64,
    pub url: Uri,
    pub html_url: Uri,
    pub authors_url: Uri,
    pub repository_url: Uri,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tfvc_project: Option<String>,
    /// While importing, and once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_count: Option<i64>,
    /// While importing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import_percent: Option<i64>,
    /// While pushing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_percent: Option<i64>,
    /// After an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    /// After an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// When detection found several projects (none are offered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_choices: Option<Vec<ProjectChoice>>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ProjectChoice {
    pub vcs: String,
    pub tfvc_project: String,
    pub human_name: String,
}

pub fn import(u: &Urls, repo: &Repo, i: &store::Import) -> Import {
    let url = import_url(u, repo);
    let importing = i.status == "importing";
    // Strings in the spec: an error recorded without its step or message still names them.
    let error = i.status == "error";
    Import {
        vcs: i.vcs.clone(),
        use_lfs: i.use_lfs == "opt_in",
        vcs_url: i.vcs_url.clone(),
        status: i.status.clone(),
        status_text: status_text(&i.status),
        has_large_files: i.large_files_count > 0,
        large_files_size: gigabytes(i.large_files_size),
        large_files_count: i.large_files_count,
        authors_count: i.authors_count,
        html_url: Uri(format!("{}/{}/import", u.web, repo.full_name())),
        authors_url: Uri(format!("{url}/authors")),
        repository_url: Uri(repo_api_url(u, repo)),
        url: Uri(url),
        tfvc_project: i.tfvc_project.clone(),
        commit_count: if importing { Some(i.commit_count.unwrap_or(0)) } else { i.commit_count },
        import_percent: importing.then(|| i.import_percent.unwrap_or(0)),
        push_percent: (i.status == "pushing").then(|| i.push_percent.unwrap_or(0)),
        failed_step: error.then(|| i.failed_step.clone().unwrap_or_else(|| "import".into())),
        error_message: error.then(|| i.error_message.clone().unwrap_or_default()),
        project_choices: (i.status == "detection_found_multiple").then(Vec::new),
    }
}

/// An author of the imported history.
#[derive(Serialize, JsonSchema)]
pub struct PorterAuthor {
    pub id: i64,
    pub remote_id: String,
    pub remote_name: String,
    pub email: String,
    pub name: String,
    pub url: Uri,
    pub import_url: Uri,
}

pub fn author(u: &Urls, repo: &Repo, a: &Author) -> PorterAuthor {
    let url = import_url(u, repo);
    PorterAuthor {
        id: a.id,
        remote_id: a.remote_id.clone(),
        remote_name: a.remote_name.clone(),
        email: a.email.clone(),
        name: a.name.clone(),
        url: Uri(format!("{url}/authors/{}", a.id)),
        import_url: Uri(url),
    }
}

/// A file above 100 MB in the imported history.
#[derive(Serialize, JsonSchema)]
pub struct LargeFile {
    pub ref_name: String,
    pub path: String,
    pub oid: String,
    pub size: i64,
}

pub fn large_file(f: &store::LargeFile) -> LargeFile {
    LargeFile { ref_name: f.ref_name.clone(), path: f.path.clone(), oid: f.oid.clone(), size: f.size }
}

/// Records `RepositoryImportEvent` (webhook event `repository_import`) with `status`
/// `success`, `cancelled` or `failure`, in the transaction of the change.
pub fn record_event(c: &mut dyn Conn, repo: &Repo, actor_id: Option<i64>, status: &str, now: i64) -> Result<(), DbError> {
    let r = Record::RepositoryImport(RepositoryImportActivity { status: status.into() });
    activity::record(c, Scope::repo(actor_id, repo), &r, now)?;
    Ok(())
}

/// The event status of an import entering `status`, if that ends the attempt.
pub fn event_status(status: &str) -> Option<&'static str> {
    match status {
        "complete" => Some("success"),
        "error" | "auth_failed" | "detection_found_nothing" | "detection_needs_auth" => Some("failure"),
        _ => None,
    }
}

/// Credentials of a source, kept encrypted under the server key as `username\0password`.
pub fn seal_credentials(key: &[u8], username: &str, password: &str) -> String {
    crate::secrets::encrypt(key, format!("{username}\0{password}").as_bytes())
}

pub fn open_credentials(key: &[u8], enc: &str) -> Option<(String, String)> {
    let plain = String::from_utf8(crate::secrets::decrypt(key, enc)?).ok()?;
    let (u, p) = plain.split_once('\0')?;
    Some((u.to_string(), p.to_string()))
}
