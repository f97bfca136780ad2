//! Jobs of workflow runs: a run's jobs (latest attempt or all), an attempt's jobs, one job and
//! its log (a signed download, like the run logs).
use axum::http::{Method, StatusCode};
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs as runs;
use platform_store::DbError;

use super::shapes::{self, JobList};
use super::{engine, id_param, logs, READ};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Derived, Operation, Param, Resp, Traits, PAGINATION};
use crate::reply::Reply;
use crate::request::{Ctx, Sharing};
use crate::routes::Api;
use crate::validate::Ty;

const FILTER: [&str; 2] = ["latest", "all"];
const LIST_QUERY: [Param; 3] = [
    Param {
        name: "filter",
        ty: Ty::Enum(&FILTER),
        description: "`latest`: the jobs of the latest attempt (default); `all`: the jobs of every attempt.",
        required: false,
    },
    PAGINATION[0],
    PAGINATION[1],
];

op!(
    @"actions/workflow-jobs",
    LIST,
    "jobs/list-for-run",
    GET,
    "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
    "List jobs for a workflow run",
    "list-jobs-for-a-workflow-run",
    READ,
    &LIST_QUERY,
    None,
    &[Resp::typed::<JobList>(200, "The run's jobs: of its latest attempt, or of every attempt (oldest attempt first).")
        .with_headers(&["Link"])]
);
op!(
    @"actions/workflow-jobs",
    GET,
    "jobs/get",
    GET,
    "/repos/{owner}/{repo}/actions/jobs/{job_id}",
    "Get a job for a workflow run",
    "get-a-job-for-a-workflow-run",
    READ,
    &[],
    None,
    &[Resp::typed::<shapes::Job>(200, "The job.")]
);
op!(
    @"actions/workflow-jobs",
    DOWNLOAD_LOGS,
    "jobs/download-logs",
    GET,
    "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
    "Download job logs for a workflow run",
    "download-job-logs-for-a-workflow-run",
    READ,
    &[],
    None,
    &[Resp::empty(302, "Redirect to the job's plain-text log; the URL is valid for 1 minute.").with_headers(&["Location"])]
);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&super::LIST_ATTEMPT_JOBS, list).op(&GET, get).op(&DOWNLOAD_LOGS, download_logs)
}

/// Both lists: the run's jobs (`filter`), or one attempt's. Shared by everyone who may read the
/// runs until the next write or scheduled transition, like the run list.
async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().await?;
    ctx.cached_until(Sharing::View(format!("runs:{}", repo.id)), list_page(&ctx, repo)).await
}

async fn list_page(ctx: &Ctx, repo: Repo) -> ApiResult<(Reply, i64)> {
    let run_id = id_param(ctx, "run_id")?;
    let (attempt, all) = match ctx.op.id == super::LIST_ATTEMPT_JOBS.id {
        true => (Some(id_param(ctx, "attempt_number")?), false),
        false => match ctx.query.get("filter").filter(|f| !f.is_empty()) {
            None | Some("latest") => (None, false),
            Some("all") => (None, true),
            Some(v) => {
                return Err(ApiError::invalid_field(
                    "WorkflowJob",
                    "filter",
                    "invalid",
                    Some(format!("filter must be one of {}, not {v:?}", FILTER.join(", "))),
                ))
            }
        },
    };
    let page = ctx.page(30, 100)?;
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
        jobs.iter().skip(page.offset() as usize).take(page.per_page as usize).map(|j| shapes::job(&ctx.app.urls, &repo, &run, j)).collect();
    let reply = Reply::ok(JobList { total_count: total, jobs: shown }).opt_header("link", ctx.link(page, total));
    Ok((reply, next.unwrap_or(i64::MAX)))
}

/// The job of the path with its run, the repository settled first.
async fn load_job(ctx: &Ctx) -> ApiResult<(Repo, runs::Job, runs::Run)> {
    let repo = ctx.repo().await?;
    let job_id = id_param(ctx, "job_id")?;
    engine::settle_repo(&ctx.app, repo.id).await?;
    let repo_id = repo.id;
    let (job, run) = ctx.app.store.read(move |c| runs::job(c, repo_id, job_id)).await?.ok_or_else(ApiError::not_found)?;
    Ok((repo, job, run))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let (repo, job, run) = load_job(&ctx).await?;
    Ok(Reply::ok(shapes::job(&ctx.app.urls, &repo, &run, &job)))
}

/// 302 to the signed log URL; a job that has not started, or whose run's logs were deleted,
/// has no log (404).
async fn download_logs(ctx: Ctx) -> ApiResult<Reply> {
    let (_, job, run) = load_job(&ctx).await?;
    if run.logs_deleted || job.started_at.is_none() {
        return Err(ApiError::not_found());
    }
    let url = logs::signed_job_url(&ctx.app, job.id).await?;
    Ok(Reply::empty(StatusCode::FOUND).header("location", url))
}
