//! Workflow runs and deployment review (document 3; the related operations of api-facts §2).
//! Every operation first settles the repository's runs on the platform clock (`runs::engine`).
//!
//! Beyond the operations: the response shapes, the engine glue that settles runs on the platform
//! clock and records their completion as activity, the control-plane plans that create runs,
//! and the signed log downloads.
pub mod deployments;
pub mod engine;
pub mod logs;
pub mod machine;
pub mod plan;
pub mod shapes;
pub mod triggers;
mod zip;

use axum::http::StatusCode;
use machine::{Refusal, Rerun};
use platform_core::{daterange, TokenKind};
use platform_store::domain::accounts::Account;
use platform_store::domain::workflow_runs::{self as runs, Filter, Run, CONCLUSIONS, STATUSES};
use platform_store::DbError;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::json;

use crate::authorize::{grants, not_accessible};
use crate::error::{ApiError, ApiResult};
use crate::input::{checked_by_handler, schema_text, BODY_STRING_MAX_CHARS};
use crate::operation::{Access, Level, Operation, Resp, RUN_USAGE_SUNSET};
use crate::principal::Principal;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, Pagination, Query};
use crate::typed::Timestamp;
use shapes::{Deployment, EnvironmentApproval, JobList, PendingDeployment, WorkflowRun, WorkflowRunList, WorkflowRunUsage};

const SCOPES: &[&str] = &["repo"];
const READ: Access = Access::read(SCOPES, "actions");
const WRITE: Access = Access::write(SCOPES, "actions");
/// Reviewers need read access to the repository and Deployments write on their token.
const REVIEW: Access = Access::token(SCOPES, Some(("deployments", Level::Write)), Level::Read);

/// A date or date-time of the `created` grammar, as JSON-escaped regex text (days every month
/// has, so every string the pattern admits names a real time).
macro_rules! date_re {
    () => {
        r"(19|20)\\d\\d-(0[1-9]|1[0-2])-(0[1-9]|1\\d|2[0-8])(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?(Z|[+-](0\\d|1[0-3]):[0-5]\\d)?)?"
    };
}
/// The `created` grammar as a pattern, published so clients and fuzzers know it.
const CREATED_SCHEMA: &str = concat!(
    r#"{"type": "string", "pattern": "^((>=|<=|>|<)?"#,
    date_re!(),
    r"|",
    date_re!(),
    r"\\.\\.(",
    date_re!(),
    r"|\\*)|\\*\\.\\.",
    date_re!(),
    r#")$"}"#
);
/// The query of the run lists.
#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    /// Runs of this user (the one who pushed or opened the trigger).
    actor: Option<String>,
    /// Runs of this branch.
    branch: Option<String>,
    /// Runs triggered by this event.
    event: Option<String>,
    /// A status or a conclusion.
    #[schemars(extend("enum" = STATUS_FILTERS), transform = checked_by_handler)]
    status: Option<String>,
    #[serde(flatten)]
    page: Pagination,
    /// Creation time in search syntax: >=D, <=D, >D, <D, D..D, D..*, *..D or D; dates or date-times.
    #[serde(default)]
    #[schemars(schema_with = "created_schema")]
    created: Option<String>,
    /// If true, pull_requests is empty in the response.
    exclude_pull_requests: Option<bool>,
    /// Runs of this check suite.
    check_suite_id: Option<i64>,
    /// Runs of this head commit.
    head_sha: Option<String>,
}

const STATUS_FILTERS: [&str; 14] = [
    "completed",
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "skipped",
    "stale",
    "success",
    "timed_out",
    "in_progress",
    "queued",
    "requested",
    "waiting",
    "pending",
];

fn created_schema(_: &mut SchemaGenerator) -> Schema {
    schema_text(CREATED_SCHEMA)
}

/// The query of one run.
#[derive(Deserialize, JsonSchema)]
struct RunQuery {
    /// If true, pull_requests is empty in the response.
    exclude_pull_requests: Option<bool>,
}

// After `READ`, which they use.
pub mod artifacts;
pub mod environments;
pub mod jobs;
pub mod workflows;

pub static LIST: Operation = Operation::get("runs/list", "/repos/{owner}/{repo}/actions/runs", "List workflow runs for a repository")
    .docs("https://docs.service.example/rest/actions/workflow-runs#list-workflow-runs-for-a-repository")
    .access(READ)
    .cached_per_repository()
    .responds(&[Resp::typed::<WorkflowRunList>(200, "Runs, newest first (at most 1,000 when filtered).").with_headers(&["Link"])]);

pub static LIST_FOR_WORKFLOW: Operation = Operation::get(
    "runs/list-for-workflow",
    "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
    "List workflow runs for a workflow",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow")
.access(READ)
.cached_per_repository()
.responds(&[Resp::typed::<WorkflowRunList>(200, "Runs of the workflow (its id or file name), newest first.").with_headers(&["Link"])]);

pub static GET: Operation = Operation::get("runs/get", "/repos/{owner}/{repo}/actions/runs/{run_id}", "Get a workflow run")
    .docs("https://docs.service.example/rest/actions/workflow-runs#get-a-workflow-run")
    .access(READ)
    .responds(&[Resp::typed::<WorkflowRun>(200, "The run (its latest attempt).")]);

pub static DELETE: Operation = Operation::delete("runs/delete", "/repos/{owner}/{repo}/actions/runs/{run_id}", "Delete a workflow run")
    .docs("https://docs.service.example/rest/actions/workflow-runs#delete-a-workflow-run")
    .access(WRITE)
    .responds(&[Resp::empty(204, "The run was deleted.")]);

pub static CANCEL: Operation =
    Operation::post("runs/cancel", "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel", "Cancel a workflow run")
        .docs("https://docs.service.example/rest/actions/workflow-runs#cancel-a-workflow-run")
        .access(WRITE)
        .responds(&[
            Resp::typed::<crate::shapes::Empty>(202, "The run is cancelled."),
            Resp::typed::<crate::error::BasicError>(409, "The run has completed."),
        ]);

pub static FORCE_CANCEL: Operation =
    Operation::post("runs/force-cancel", "/repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel", "Force cancel a workflow run")
        .docs("https://docs.service.example/rest/actions/workflow-runs#force-cancel-a-workflow-run")
        .access(WRITE)
        .responds(&[
            Resp::typed::<crate::shapes::Empty>(202, "The run is cancelled, bypassing conditions that would keep jobs running."),
            Resp::typed::<crate::error::BasicError>(409, "The run has completed."),
        ]);

pub static DOWNLOAD_LOGS: Operation =
    Operation::get("runs/download-logs", "/repos/{owner}/{repo}/actions/runs/{run_id}/logs", "Download workflow run logs")
        .docs("https://docs.service.example/rest/actions/workflow-runs#download-workflow-run-logs")
        .access(READ)
        .responds(&[Resp::empty(302, "Redirect to a zip archive of the latest attempt's logs; the URL is valid for 1 minute.")
            .with_headers(&["Location"])]);

pub static DELETE_LOGS: Operation =
    Operation::delete("runs/delete-logs", "/repos/{owner}/{repo}/actions/runs/{run_id}/logs", "Delete workflow run logs")
        .docs("https://docs.service.example/rest/actions/workflow-runs#delete-workflow-run-logs")
        .access(WRITE)
        .responds(&[Resp::empty(204, "The logs were deleted.")]);

pub static LIST_PENDING: Operation = Operation::get(
    "runs/list-pending-deployments",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",
    "Get pending deployments for a workflow run",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#get-pending-deployments-for-a-workflow-run")
.access(READ)
.responds(&[Resp::typed::<Vec<PendingDeployment>>(200, "Environments the run waits for.")]);

pub static REVIEW_PENDING: Operation = Operation::post(
    "runs/review-pending-deployments",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",
    "Review pending deployments for a workflow run",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#review-pending-deployments-for-a-workflow-run")
.access(REVIEW)
.resource("DeploymentReview")
.responds(&[Resp::typed::<Vec<Deployment>>(200, "The deployments the approval created (none on rejection).")]);

pub static RERUN: Operation = Operation::post("runs/rerun", "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun", "Re-run a workflow")
    .docs("https://docs.service.example/rest/actions/workflow-runs#re-run-a-workflow")
    .access(WRITE)
    .resource("WorkflowRun")
    .responds(&[Resp::typed::<crate::shapes::Empty>(201, "A new attempt is queued.")]);

pub static RERUN_FAILED: Operation = Operation::post(
    "runs/rerun-failed-jobs",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
    "Re-run failed jobs from a workflow run",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run")
.access(WRITE)
.resource("WorkflowRun")
.responds(&[Resp::typed::<crate::shapes::Empty>(201, "A new attempt re-runs the failed jobs and the jobs that need them.")]);

pub static GET_USAGE: Operation =
    Operation::get("runs/get-usage", "/repos/{owner}/{repo}/actions/runs/{run_id}/timing", "Get workflow run usage")
        .docs("https://docs.service.example/rest/actions/workflow-runs#get-workflow-run-usage")
        .access(READ)
        .closing_down(RUN_USAGE_SUNSET)
        .responds(&[Resp::typed::<WorkflowRunUsage>(200, "Billable time per runner OS and the run's duration (closing down).")]);

pub static RERUN_JOB: Operation =
    Operation::post("runs/rerun-job", "/repos/{owner}/{repo}/actions/jobs/{job_id}/rerun", "Re-run a job from a workflow run")
        .docs("https://docs.service.example/rest/actions/workflow-runs#re-run-a-job-from-a-workflow-run")
        .access(WRITE)
        .resource("WorkflowJob")
        .responds(&[Resp::typed::<crate::shapes::Empty>(201, "A new attempt re-runs the job and the jobs that need it.")]);

pub static GET_ATTEMPT: Operation = Operation::get(
    "runs/get-attempt",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}",
    "Get a workflow run attempt",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#get-a-workflow-run-attempt")
.access(READ)
.responds(&[Resp::typed::<WorkflowRun>(200, "The run as of that attempt.")]);

pub static DOWNLOAD_ATTEMPT_LOGS: Operation = Operation::get(
    "runs/download-attempt-logs",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/logs",
    "Download workflow run attempt logs",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#download-workflow-run-attempt-logs")
.access(READ)
.responds(&[
    Resp::empty(302, "Redirect to a zip archive of the attempt's logs; the URL is valid for 1 minute.").with_headers(&["Location"])
]);

pub static LIST_ATTEMPT_JOBS: Operation = Operation::get(
    "runs/list-attempt-jobs",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs",
    "List jobs for a workflow run attempt",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#list-jobs-for-a-workflow-run-attempt")
.access(READ)
.cached_per_repository()
.responds(&[Resp::typed::<JobList>(200, "The attempt's jobs in plan order.").with_headers(&["Link"])]);

pub static APPROVE: Operation = Operation::post(
    "runs/approve-fork-run",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/approve",
    "Approve a workflow run for a fork pull request",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#approve-a-workflow-run-for-a-fork-pull-request")
.access(WRITE)
.responds(&[Resp::typed::<crate::shapes::Empty>(201, "The run is queued.")]);

pub static LIST_REVIEWS: Operation = Operation::get(
    "runs/list-reviews",
    "/repos/{owner}/{repo}/actions/runs/{run_id}/approvals",
    "Get the review history for a workflow run",
)
.docs("https://docs.service.example/rest/actions/workflow-runs#get-the-review-history-for-a-workflow-run")
.access(READ)
.responds(&[Resp::typed::<Vec<EnvironmentApproval>>(200, "Reviews of the run's deployments, oldest first.")]);

#[derive(Deserialize, JsonSchema)]
struct Review {
    environment_ids: Vec<i64>,
    #[schemars(extend("enum" = ["approved", "rejected"]))]
    state: String,
    #[schemars(length(max = BODY_STRING_MAX_CHARS))]
    comment: String,
}

#[derive(Deserialize, JsonSchema)]
struct RerunRun {
    enable_debug_logging: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
struct RerunJob {
    enable_debug_logging: Option<bool>,
    // Accepted as the platform does; there is no debugger to attach here.
    #[allow(dead_code)]
    enable_debugger: Option<bool>,
}

pub fn routes(api: Api) -> Api {
    let api = artifacts::routes(jobs::routes(workflows::routes(environments::routes(api))));
    api.op(&LIST, list)
        .op(&LIST_FOR_WORKFLOW, list)
        .op(&GET, get)
        .op(&DELETE, delete)
        .op(&CANCEL, cancel)
        .op(&FORCE_CANCEL, cancel)
        .op(&DOWNLOAD_LOGS, download_logs)
        .op(&DELETE_LOGS, delete_logs)
        .op(&LIST_PENDING, list_pending)
        .op(&REVIEW_PENDING, review)
        .op(&RERUN, rerun)
        .op(&RERUN_FAILED, rerun)
        .op(&GET_USAGE, usage)
        .op(&RERUN_JOB, rerun_job)
        .op(&GET_ATTEMPT, get_attempt)
        .op(&DOWNLOAD_ATTEMPT_LOGS, download_logs)
        .op(&APPROVE, approve)
        .op(&LIST_REVIEWS, list_reviews)
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/// A numeric path parameter; anything else names nothing (404).
fn id_param(ctx: &Ctx, name: &str) -> ApiResult<i64> {
    ctx.param(name).parse::<i64>().ok().filter(|i| *i > 0).ok_or_else(ApiError::not_found)
}

/// `noapp` operations refuse app installation and app user tokens.
fn refuse_apps(ctx: &Ctx) -> ApiResult<()> {
    match &ctx.principal {
        Principal::Token(t) if matches!(t.token.kind, TokenKind::Installation | TokenKind::UserToServer) => {
            Err(ApiError::forbidden("Resource not accessible by integration"))
        }
        _ => Ok(()),
    }
}

/// The repository's runs settled, and the run of the path.
async fn load(ctx: &Ctx) -> ApiResult<Run> {
    let repo_id = ctx.repo().id;
    let id = id_param(ctx, "run_id")?;
    engine::settle_repo(&ctx.app, repo_id).await?;
    ctx.app.store.read(move |c| runs::get(c, repo_id, id)).await?.ok_or_else(ApiError::not_found)
}

/// The list filters of the query; malformed values are 422.
fn filter(q: ListQuery) -> ApiResult<Filter> {
    let text = |v: Option<String>| v.filter(|v| !v.is_empty());
    let mut f = Filter {
        actor: text(q.actor),
        branch: text(q.branch),
        event: text(q.event),
        head_sha: text(q.head_sha),
        check_suite_id: q.check_suite_id,
        ..Filter::default()
    };
    if let Some(s) = text(q.status) {
        if !STATUSES.contains(&s.as_str()) && !CONCLUSIONS.contains(&s.as_str()) {
            return Err(ApiError::invalid_field(
                "WorkflowRun",
                "status",
                "invalid",
                Some(format!("status must be one of {}, {}", STATUSES.join(", "), CONCLUSIONS.join(", "))),
            ));
        }
        f.status = Some(s);
    }
    if let Some(c) = text(q.created) {
        let range = daterange::parse(&c).ok_or_else(|| {
            ApiError::invalid_field(
                "WorkflowRun",
                "created",
                "invalid",
                Some(format!(
                    "{c:?} is not a date range: use >=D, <=D, >D, <D, D..D, D..*, *..D or D with YYYY-MM-DD dates or ISO 8601 date-times"
                )),
            )
        })?;
        f.created = Some(range);
    }
    Ok(f)
}

// ---------------------------------------------------------------------------------------------
// Handlers.

/// Everyone allowed to list sees the same runs: the page is shared among them (`Cache::Repository`)
/// until the next write or the next scheduled transition.
async fn list(ctx: Ctx, Query(q): Query<ListQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let (exclude_prs, page) = (q.exclude_pull_requests.unwrap_or(false), q.page.page(30, 100));
    let mut f = filter(q)?;
    let next = engine::settle_repo(&ctx.app, repo.id).await?;
    let repo_id = repo.id;
    if ctx.op.id == LIST_FOR_WORKFLOW.id {
        let given = ctx.param("workflow_id").to_string();
        f.workflow_id = Some(ctx.app.store.read(move |c| runs::workflow_id(c, repo_id, &given)).await?.ok_or_else(ApiError::not_found)?);
    }
    let (list, total) = ctx.app.store.read(move |c| runs::list(c, repo_id, &f, page.offset(), page.per_page)).await?;
    let u = &ctx.app.urls;
    let body = WorkflowRunList {
        total_count: total,
        workflow_runs: list.iter().map(|r| shapes::run(u, ctx.version, repo, r, exclude_prs)).collect(),
    };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)).fresh_until(next.unwrap_or(i64::MAX)))
}

async fn get(ctx: Ctx, Query(q): Query<RunQuery>) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    Ok(Reply::ok(shapes::run(&ctx.app.urls, ctx.version, ctx.repo(), &run, q.exclude_pull_requests.unwrap_or(false))))
}

async fn get_attempt(ctx: Ctx, Query(q): Query<RunQuery>) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let n = id_param(&ctx, "attempt_number")?;
    let found = ctx.app.store.read(move |c| runs::attempt(c, &run, n)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(shapes::run(&ctx.app.urls, ctx.version, ctx.repo(), &found, q.exclude_pull_requests.unwrap_or(false))))
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    ctx.write(move |c| runs::delete(c, run.id)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

fn refusal(r: Refusal) -> ApiError {
    match r {
        Refusal::Completed => ApiError::new(StatusCode::CONFLICT, "Cannot cancel a workflow run that is completed."),
        Refusal::NotCompleted => ApiError::forbidden("This workflow run is not completed: it cannot be re-run until it completes."),
        Refusal::NothingFailed => ApiError::forbidden("This workflow run has no failed jobs to re-run."),
        Refusal::NoApprovalNeeded => ApiError::forbidden("This workflow run is not waiting for approval."),
        Refusal::NothingScheduled => ApiError::new(StatusCode::CONFLICT, "This workflow run has nothing scheduled."),
    }
}

/// Runs a change of one run in a write transaction, settling it (and recording its completion)
/// in the same transaction.
async fn change<F>(ctx: &Ctx, run_id: i64, f: F) -> ApiResult<()>
where
    F: FnOnce(&mut dyn platform_store::Conn, i64) -> Result<Result<(), Refusal>, DbError> + Send + 'static,
{
    let (now, u) = (ctx.app.clock.now(), ctx.app.urls.clone());
    let out = ctx
        .write(move |c| -> Result<_, DbError> {
            let out = f(c, now)?;
            if out.is_ok() {
                engine::settle_one(c, &u, run_id, now)?;
            }
            Ok(out)
        })
        .await?;
    out.map_err(refusal)
}

async fn cancel(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let u = ctx.app.urls.clone();
    change(&ctx, run.id, move |c, now| {
        let before = engine::statuses(c, run.id)?;
        let out = machine::cancel(c, run.id, now)?;
        // The cancellation completes the run and its jobs: recorded here (settling after it
        // finds nothing left to complete).
        if out.is_ok() {
            engine::record_changes(c, &u, &before, now)?;
        }
        Ok(out)
    })
    .await?;
    Ok(Reply::json(StatusCode::ACCEPTED, json!({})))
}

/// Starts a new attempt of `run`, recorded as `requested` (settling records the rest).
async fn rerun_run(ctx: &Ctx, run: Run, what: Rerun, by: Account, debug: bool) -> ApiResult<()> {
    let (repo, u) = (ctx.repo().clone(), ctx.app.urls.clone());
    change(ctx, run.id, move |c, now| {
        let out = machine::rerun(c, run.id, &what, &by, debug, now)?;
        if out.is_ok() {
            engine::record_requested(c, &u, &repo, run.id, now)?;
        }
        Ok(out)
    })
    .await
}

fn caller(ctx: &Ctx) -> ApiResult<Account> {
    match &ctx.principal {
        Principal::Token(t) => match &t.user {
            Some(u) => Ok(u.clone()),
            // Installation and workflow tokens act as the platform's bot; runs need a person.
            None => Err(not_accessible(t.token.kind)),
        },
        _ => Err(ApiError::requires_authentication()),
    }
}

async fn rerun(ctx: Ctx, Body(b): Body<RerunRun>) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let debug = b.enable_debug_logging.unwrap_or(false);
    let by = caller(&ctx)?;
    let what = if ctx.op.id == RERUN_FAILED.id { Rerun::Failed } else { Rerun::All };
    rerun_run(&ctx, run, what, by, debug).await?;
    Ok(Reply::created(json!({})))
}

async fn rerun_job(ctx: Ctx, Body(b): Body<RerunJob>) -> ApiResult<Reply> {
    let repo_id = ctx.repo().id;
    let job_id = id_param(&ctx, "job_id")?;
    let debug = b.enable_debug_logging.unwrap_or(false);
    engine::settle_repo(&ctx.app, repo_id).await?;
    let (job, run) = ctx.app.store.read(move |c| runs::job(c, repo_id, job_id)).await?.ok_or_else(ApiError::not_found)?;
    let by = caller(&ctx)?;
    rerun_run(&ctx, run, Rerun::Job(job.name), by, debug).await?;
    Ok(Reply::created(json!({})))
}

async fn approve(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    change(&ctx, run.id, move |c, now| machine::approve(c, run.id, now)).await?;
    Ok(Reply::created(json!({})))
}

async fn download_logs(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let attempt = match ctx.op.id == DOWNLOAD_ATTEMPT_LOGS.id {
        true => {
            let n = id_param(&ctx, "attempt_number")?;
            let r = run.clone();
            ctx.app.store.read(move |c| runs::attempt(c, &r, n)).await?.ok_or_else(ApiError::not_found)?.run_attempt
        }
        false => run.run_attempt,
    };
    if run.logs_deleted {
        return Err(ApiError::not_found());
    }
    let url = logs::signed_url(&ctx.app, run.id, attempt).await?;
    Ok(Reply::empty(StatusCode::FOUND).header("location", url))
}

async fn delete_logs(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    if !run.completed() {
        return Err(ApiError::forbidden("Cannot delete the logs of a workflow run that is not completed."));
    }
    let now = ctx.app.clock.now();
    ctx.write(move |c| runs::delete_logs(c, run.id, now)).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// Whether the caller may review: a user listed as a required reviewer, directly or by team.
fn user_of(p: &Principal) -> Option<i64> {
    p.user().map(|u| u.id)
}

async fn list_pending(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let user = user_of(&ctx.principal);
    let u = ctx.app.urls.clone();
    let r = ctx.repo().clone();
    let body = ctx
        .app
        .store
        .read(move |c| -> Result<Vec<PendingDeployment>, DbError> {
            let mut out = Vec::new();
            for p in runs::pending(c, &run)? {
                let can = match user {
                    Some(id) => runs::is_reviewer(c, &p.reviewers, id)?,
                    None => false,
                };
                let reviewers = environments::reviewers(c, &u, &p.reviewers)?;
                out.push(PendingDeployment {
                    environment: shapes::environment(&u, &r, &p.environment),
                    wait_timer: p.environment.wait_timer,
                    wait_timer_started_at: Timestamp(p.gate.wait_timer_started_at),
                    current_user_can_approve: can,
                    reviewers,
                });
            }
            Ok(out)
        })
        .await?;
    Ok(Reply::ok(body))
}

/// The grant a reviewer's token needs: Deployments write (fine-grained), `repo` (classic).
fn check_review_grant(ctx: &Ctx) -> ApiResult<()> {
    let Principal::Token(t) = &ctx.principal else { return Err(ApiError::requires_authentication()) };
    if grants(t, &REVIEW, ctx.repo().private) {
        Ok(())
    } else {
        Err(not_accessible(t.token.kind))
    }
}

async fn review(ctx: Ctx, Body(b): Body<Review>) -> ApiResult<Reply> {
    refuse_apps(&ctx)?;
    let run = load(&ctx).await?;
    check_review_grant(&ctx)?;
    let user = caller(&ctx)?;
    if b.environment_ids.is_empty() {
        return Err(ApiError::invalid_field("DeploymentReview", "environment_ids", "missing_field", None));
    }
    let (now, u, repo) = (ctx.app.clock.now(), ctx.app.urls.clone(), ctx.repo().clone());
    let deployments = ctx
        .write(move |c| -> Result<_, ApiError> {
            // Settled first: only environments the run waits for now can be reviewed.
            engine::settle_one(c, &u, run.id, now)?;
            let run = runs::get(c, run.repo_id, run.id)?.ok_or_else(ApiError::not_found)?;
            let pending = runs::pending(c, &run)?;
            for id in &b.environment_ids {
                let Some(p) = pending.iter().find(|p| p.environment.id == *id) else {
                    return Err(ApiError::invalid_field(
                        "DeploymentReview",
                        "environment_ids",
                        "invalid",
                        Some(format!("environment {id} is not waiting for a review in this run")),
                    ));
                };
                if !runs::is_reviewer(c, &p.reviewers, user.id)? {
                    return Err(ApiError::invalid_field(
                        "DeploymentReview",
                        "environment_ids",
                        "custom",
                        Some(format!("{} is not a required reviewer of environment {}", user.login, p.environment.name)),
                    ));
                }
            }
            let made = runs::review(c, &run, &user, &b.environment_ids, &b.state, &b.comment, now)?;
            deployments::record_created(c, &u, &repo, &run, &made, now)?;
            engine::settle_one(c, &u, run.id, now)?;
            Ok(made)
        })
        .await?;
    let body: Vec<Deployment> = deployments.iter().map(|(d, _)| shapes::deployment(&ctx.app.urls, ctx.repo(), d)).collect();
    Ok(Reply::ok(body))
}

async fn list_reviews(ctx: Ctx) -> ApiResult<Reply> {
    let run = load(&ctx).await?;
    let reviews = ctx.app.store.read(move |c| runs::reviews(c, run.id)).await?;
    let body: Vec<EnvironmentApproval> = reviews.iter().map(|r| shapes::approval(&ctx.app.urls, ctx.repo(), r)).collect();
    Ok(Reply::ok(body))
}

async fn usage(ctx: Ctx) -> ApiResult<Reply> {
    refuse_apps(&ctx)?;
    let run = load(&ctx).await?;
    let now = ctx.app.clock.now();
    let (jobs, spans) =
        ctx.app.store.read(move |c| -> Result<_, DbError> { Ok((runs::all_jobs(c, run.id)?, runs::attempt_spans(c, run.id)?)) }).await?;
    let current = (run.run_started_at.filter(|_| run.status != "queued"), run.completed_at.or(Some(now)));
    let duration: i64 =
        spans.iter().chain(std::iter::once(&current)).filter_map(|(s, e)| Some((e.as_ref()? - s.as_ref()?).max(0) * 1000)).sum();
    Ok(Reply::ok(shapes::usage(ctx.repo().private, &jobs, duration)))
}

/// The control plane's part: runs planned (one, or batches) and advanced (`plan`).
pub fn control(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    use axum::routing::post;
    r.route("/repos/{owner}/{repo}/runs", post(plan::admin_create))
        .route("/repos/{owner}/{repo}/run_batches", post(plan::admin_batch))
        .route("/runs/{run_id}/advance", post(plan::admin_advance))
}
