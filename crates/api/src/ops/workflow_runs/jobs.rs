//! Jobs of workflow runs: a run's jobs (latest attempt or all), an attempt's jobs, one job and
//! its log (a signed download, like the run logs).
use axum::http::StatusCode;
use platform_core::pagination::Page;
use platform_store::domain::workflow_runs as runs;
use platform_store::DbError;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{self, JobList};
use super::{engine, id_param, logs, READ};
use crate::error::{ApiError, ApiResult};
use crate::input::checked_by_handler;
use crate::operation::{Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};

const FILTER: [&str; 2] = ["latest", "all"];

#[derive(Deserialize, JsonSchema)]
struct JobsQuery {
    /// `latest`: the jobs of the latest attempt (default); `all`: the jobs of every attempt.
    #[schemars(extend("enum" = FILTER), transform = checked_by_handler)]
    filter: Option<String>,
    #[serde(flatten)]
    page: Pagination,
}

pub static LIST: Operation =
    Operation::get("jobs/list-for-run", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", "List jobs for a workflow run")
        .docs("https://docs.service.example/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run")
        .access(READ)
        .cached_per_repository()
        .responds(&[Resp::typed::<JobList>(200, "The run's jobs: of its latest attempt, or of every attempt (oldest attempt first).")
            .with_headers(&["Link"])]);

pub static GET: Operation = Operation::get("jobs/get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", "Get a job for a workflow run")
    .docs("https://docs.service.example/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run")
    .access(READ)
    .responds(&[Resp::typed::<shapes::Job>(200, "The job.")]);

pub static DOWNLOAD_LOGS: Operation =
    Operation::get("jobs/download-logs", "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs", "Download job logs for a workflow run")
        .docs("https://docs.service.example/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run")
        .access(READ)
        .responds(&[Resp::empty(302, "Redirect to the job's plain-text log; the URL is valid for 1 minute.").with_headers(&["Location"])]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&super::LIST_ATTEMPT_JOBS, list_attempt).op(&GET, get).op(&DOWNLOAD_LOGS, download_logs)
}

/// The run's jobs (`filter`). Shared by everyone who may read the runs until the next write or
/// scheduled transition, like the run list (`Cache::Repository`).
async fn list(ctx: Ctx, Query(q): Query<JobsQuery>) -> ApiResult<Reply> {
    let all = match q.filter.as_deref().filter(|f| !f.is_empty()) {
        None | Some("latest") => false,
        Some("all") => true,
        Some(v) => {
            return Err(ApiError::invalid_field(
                "WorkflowJob",
                "filter",
                "invalid",
                Some(format!("filter must be one of {}, not {v:?}", FILTER.join(", "))),
            ))
        }
    };
    list_page(&ctx, None, all, q.page.page(30, 100)).await
}

/// One attempt's jobs.
async fn list_attempt(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let attempt = id_param(&ctx, "attempt_number")?;
    list_page(&ctx, Some(attempt), false, q.page(30, 100)).await
}

async fn list_page(ctx: &Ctx, attempt: Option<i64>, all: bool, page: Page) -> ApiResult<Reply> {
    let run_id = id_param(ctx, "run_id")?;
    let repo = ctx.repo();
    let next = engine::settle_repo(&ctx.app, repo.id).await?;
    let repo_id = repo.id;
    let run = ctx.app.store.read(move |c| runs::get(c, repo_id, run_id)).await?.ok_or_else(ApiError::not_found)?;
    let (run, jobs) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let n = attempt.unwrap_or(run.run_attempt);
            let Some(a) = runs::attempt(c, &run, n)? else { return Ok(None) };
            let jobs = if all { runs::all_jobs(c, run.id)? } else { runs::jobs(c, run.id, n)? };
            Ok(Some((a, jobs)))
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    let total = jobs.len() as i64;
    let shown: Vec<_> =
        jobs.iter().skip(page.offset() as usize).take(page.per_page as usize).map(|j| shapes::job(&ctx.app.urls, repo, &run, j)).collect();
    let reply = Reply::ok(JobList { total_count: total, jobs: shown }).opt_header("link", ctx.link(page, total));
    Ok(reply.fresh_until(next.unwrap_or(i64::MAX)))
}

/// The job of the path with its run, the repository settled first.
async fn load_job(ctx: &Ctx) -> ApiResult<(runs::Job, runs::Run)> {
    let repo_id = ctx.repo().id;
    let job_id = id_param(ctx, "job_id")?;
    engine::settle_repo(&ctx.app, repo_id).await?;
    ctx.app.store.read(move |c| runs::job(c, repo_id, job_id)).await?.ok_or_else(ApiError::not_found)
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let (job, run) = load_job(&ctx).await?;
    Ok(Reply::ok(shapes::job(&ctx.app.urls, ctx.repo(), &run, &job)))
}

/// 302 to the signed log URL; a job that has not started, or whose run's logs were deleted,
/// has no log (404).
async fn download_logs(ctx: Ctx) -> ApiResult<Reply> {
    let (job, run) = load_job(&ctx).await?;
    if run.logs_deleted || job.started_at.is_none() {
        return Err(ApiError::not_found());
    }
    let url = logs::signed_job_url(&ctx.app, job.id).await?;
    Ok(Reply::empty(StatusCode::FOUND).header("location", url))
}
