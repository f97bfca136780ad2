//! An import with real Git: the status vocabulary, the response shapes and the
//! `RepositoryImportEvent` activity. Its siblings: `git` runs the machine's git binary,
//! `worker` moves imports through their statuses in the background (resuming after a restart).
use platform_store::domain::activity::{self, NewActivity};
use platform_store::domain::repos::Repo;
use platform_store::domain::source_imports::{Author, Import, LargeFile};
use platform_store::{Conn, DbError};
use serde_json::{json, Value};

use crate::shapes::{repo_api_url, Urls};

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

/// Import (api-facts §4.12). Progress fields appear in the statuses that carry them.
pub fn import_json(u: &Urls, repo: &Repo, i: &Import) -> Value {
    let url = import_url(u, repo);
    let mut v = json!({
        "vcs": i.vcs,
        "use_lfs": i.use_lfs == "opt_in",
        "vcs_url": i.vcs_url,
        "status": i.status,
        "status_text": status_text(&i.status),
        "has_large_files": i.large_files_count > 0,
        "large_files_size": gigabytes(i.large_files_size),
        "large_files_count": i.large_files_count,
        "authors_count": i.authors_count,
        "url": url,
        "html_url": format!("{}/{}/import", u.web, repo.full_name()),
        "authors_url": format!("{url}/authors"),
        "repository_url": repo_api_url(u, repo),
    });
    if let Some(p) = &i.tfvc_project {
        v["tfvc_project"] = json!(p);
    }
    if i.status == "importing" {
        v["commit_count"] = json!(i.commit_count.unwrap_or(0));
        v["import_percent"] = json!(i.import_percent.unwrap_or(0));
    } else if i.commit_count.is_some() {
        v["commit_count"] = json!(i.commit_count);
    }
    if i.status == "pushing" {
        v["push_percent"] = json!(i.push_percent.unwrap_or(0));
    }
    // Strings in the spec: an error recorded without its step or message still names them.
    if i.status == "error" {
        v["failed_step"] = json!(i.failed_step.as_deref().unwrap_or("import"));
        v["error_message"] = json!(i.error_message.as_deref().unwrap_or(""));
    }
    if i.status == "detection_found_multiple" {
        v["project_choices"] = json!([]);
    }
    v
}

/// PorterAuthor.
pub fn author_json(u: &Urls, repo: &Repo, a: &Author) -> Value {
    let url = import_url(u, repo);
    json!({
        "id": a.id,
        "remote_id": a.remote_id,
        "remote_name": a.remote_name,
        "email": a.email,
        "name": a.name,
        "url": format!("{url}/authors/{}", a.id),
        "import_url": url,
    })
}

/// LargeFile.
pub fn large_file_json(f: &LargeFile) -> Value {
    json!({"ref_name": f.ref_name, "path": f.path, "oid": f.oid, "size": f.size})
}

/// Records `RepositoryImportEvent` (webhook event `repository_import`) with `status`
/// `success`, `cancelled` or `failure`, in the transaction of the change.
pub fn record_event(c: &mut dyn Conn, repo: &Repo, actor_id: Option<i64>, status: &str, now: i64) -> Result<(), DbError> {
    let payload = json!({"status": status});
    activity::record(c, &NewActivity::in_repo("RepositoryImportEvent", actor_id, repo, &payload), now)?;
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
