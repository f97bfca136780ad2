//! Log downloads: the API answers 302 with a URL served by platformd itself, signed with a key
//! kept in the database (HMAC-SHA256 over run, attempt and expiry) and valid for one minute of
//! the platform clock. The URL needs no credentials; an expired or altered one is refused. A
//! job's log is served the same way, as plain text (signed over the job instead).
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use platform_store::domain::{hooks, workflow_runs as runs};
use platform_store::{params, DbError};
use serde::Deserialize;
use sha2::Sha256;

use crate::error::{ApiError, ApiResult};
use crate::state::Shared;

/// How long a log URL stays valid (seconds of the platform clock).
pub const URL_TTL: i64 = 60;
/// Where the signed URLs are served (outside the API; see `router::app`).
pub const ROUTE: &str = "/_runlogs/{run_id}/{attempt}";
pub const JOB_ROUTE: &str = "/_joblogs/{job_id}";

/// The signing key, generated once per database.
async fn key(app: &Shared) -> ApiResult<Vec<u8>> {
    const NAME: &str = "run-logs";
    let found = app
        .store
        .read(|c| -> Result<_, DbError> {
            Ok(c.query_opt("SELECT value FROM webhook_keys WHERE name = ?", params![NAME])?.map(|r| r.string(0)))
        })
        .await?;
    let k = match found {
        Some(k) => k,
        None => app.store.write(|c| hooks::key(c, NAME, || platform_core::ids::random_hex(32))).await?,
    };
    Ok(k.into_bytes())
}

fn signature(key: &[u8], run_id: i64, attempt: i64, expires: i64) -> String {
    sign(key, &format!("{run_id}:{attempt}:{expires}"))
}

/// A job's signature is over another text than a run's: neither URL can stand for the other.
fn job_signature(key: &[u8], job_id: i64, expires: i64) -> String {
    sign(key, &format!("job:{job_id}:{expires}"))
}

fn sign(key: &[u8], text: &str) -> String {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("hmac key");
    m.update(text.as_bytes());
    hex::encode(m.finalize().into_bytes())
}

/// A download URL for an attempt's logs, valid for [`URL_TTL`] seconds from now.
pub async fn signed_url(app: &Shared, run_id: i64, attempt: i64) -> ApiResult<String> {
    let expires = app.clock.now() + URL_TTL;
    let sig = signature(&key(app).await?, run_id, attempt, expires);
    Ok(format!("{}/_runlogs/{run_id}/{attempt}?expires={expires}&signature={sig}", app.urls.web))
}

/// A download URL for a job's log, valid for [`URL_TTL`] seconds from now.
pub async fn signed_job_url(app: &Shared, job_id: i64) -> ApiResult<String> {
    let expires = app.clock.now() + URL_TTL;
    let sig = job_signature(&key(app).await?, job_id, expires);
    Ok(format!("{}/_joblogs/{job_id}?expires={expires}&signature={sig}", app.urls.web))
}

#[derive(Deserialize)]
pub struct Signed {
    expires: Option<String>,
    signature: Option<String>,
}

/// `GET /_runlogs/{run_id}/{attempt}?expires&signature`: the zip of the attempt's job logs.
pub async fn download(State(app): State<Shared>, Path((run_id, attempt)): Path<(String, String)>, Query(q): Query<Signed>) -> Response {
    match serve(&app, &run_id, &attempt, q).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

fn refused() -> ApiError {
    ApiError::forbidden("The log URL is invalid or has expired.")
}

/// Checks a signature (computed by `good` for the expiry) and the expiry itself.
async fn check(app: &Shared, q: Signed, good: impl FnOnce(&[u8], i64) -> String) -> ApiResult<()> {
    let (Some(Ok(expires)), Some(sig)) = (q.expires.map(|e| e.parse::<i64>()), q.signature) else { return Err(refused()) };
    let good = good(&key(app).await?, expires);
    if !crate::secrets::constant_time_eq(good.as_bytes(), sig.as_bytes()) || app.clock.now() >= expires {
        return Err(refused());
    }
    Ok(())
}

async fn serve(app: &Shared, run_id: &str, attempt: &str, q: Signed) -> ApiResult<Response> {
    let (Ok(run_id), Ok(attempt)) = (run_id.parse::<i64>(), attempt.parse::<i64>()) else { return Err(refused()) };
    check(app, q, |k, expires| signature(k, run_id, attempt, expires)).await?;
    let found = app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(repo_id) = c.query_opt("SELECT repo_id FROM workflow_runs WHERE id = ?", params![run_id])?.map(|r| r.i64(0)) else {
                return Ok(None);
            };
            let Some(run) = runs::get(c, repo_id, run_id)? else { return Ok(None) };
            let Some(a) = runs::attempt(c, &run, attempt)?.filter(|_| !run.logs_deleted) else { return Ok(None) };
            Ok(Some((a, runs::jobs(c, run_id, attempt)?)))
        })
        .await?;
    let (run, jobs) = found.ok_or_else(ApiError::not_found)?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/zip".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=logs_{}.zip", run.id)),
        ],
        archive(&jobs, run.debug_logging, run.updated_at),
    )
        .into_response())
}

/// `GET /_joblogs/{job_id}?expires&signature`: the job's log as plain text.
pub async fn download_job(State(app): State<Shared>, Path(job_id): Path<String>, Query(q): Query<Signed>) -> Response {
    match serve_job(&app, &job_id, q).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn serve_job(app: &Shared, job_id: &str, q: Signed) -> ApiResult<Response> {
    let Ok(job_id) = job_id.parse::<i64>() else { return Err(refused()) };
    check(app, q, |k, expires| job_signature(k, job_id, expires)).await?;
    let found = app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(run_id) = c.query_opt("SELECT run_id FROM run_jobs WHERE id = ?", params![job_id])?.map(|r| r.i64(0)) else {
                return Ok(None);
            };
            let Some(repo_id) = c.query_opt("SELECT repo_id FROM workflow_runs WHERE id = ?", params![run_id])?.map(|r| r.i64(0)) else {
                return Ok(None);
            };
            let Some((job, run)) = runs::job(c, repo_id, job_id)?.filter(|(j, r)| !r.logs_deleted && j.started_at.is_some()) else {
                return Ok(None);
            };
            Ok(runs::attempt(c, &run, job.attempt)?.map(|a| (job, a)))
        })
        .await?;
    let (job, attempt) = found.ok_or_else(ApiError::not_found)?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string())],
        job_text(&job, attempt.debug_logging, attempt.updated_at),
    )
        .into_response())
}

/// A job's log lines stamped with the time they were written (with a debug line when the
/// attempt enabled debug logging).
fn job_text(j: &runs::Job, debug: bool, at: i64) -> String {
    let stamp = platform_core::time::format_ts(j.started_at.unwrap_or(at)).replace('Z', ".0000000Z");
    let mut text = String::new();
    if debug {
        text.push_str(&format!("{stamp} ##[debug]Debug logging is enabled for this attempt\n"));
    }
    for line in j.log.lines() {
        text.push_str(&format!("{stamp} {line}\n"));
    }
    text
}

/// As hosted: per job that ran, `<position>_<name>.txt` (the job's [`job_text`]), and a folder
/// `<name>/` with a file per step, `<number>_<step>.txt` (what `gh run view --log` reads). The
/// job's log lines are the output of its work step (`shapes::work_step`); the others hold a
/// line saying they ran.
fn archive(jobs: &[runs::Job], debug: bool, at: i64) -> Vec<u8> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let ran: Vec<&runs::Job> = jobs.iter().filter(|j| j.started_at.is_some()).collect();
    for j in &ran {
        let name: String = j.name.chars().map(|ch| if ch == '/' || ch == '\\' { '_' } else { ch }).collect();
        files.push((format!("{}_{name}.txt", j.position), job_text(j, debug, at).into_bytes()));
    }
    for j in &ran {
        // The folder name as the hosted platform writes it: no `/` or `:`, at most 90 characters.
        let folder: String = j.name.chars().filter(|ch| !matches!(ch, '/' | ':' | '\\')).take(90).collect();
        let steps = super::shapes::step_names(j);
        let work = super::shapes::work_step(&steps);
        let stamp = platform_core::time::format_ts(j.started_at.unwrap_or(at)).replace('Z', ".0000000Z");
        for (i, step) in steps.iter().enumerate() {
            let text = if i == work { job_text(j, debug, at) } else { format!("{stamp} {step}\n") };
            let file: String = step.chars().map(|ch| if ch == '/' || ch == '\\' || ch == ':' { '_' } else { ch }).collect();
            files.push((format!("{folder}/{}_{file}.txt", i + 1), text.into_bytes()));
        }
    }
    super::zip::archive(&files, at)
}
