//! Runs move on the platform clock: requests settle a repository's runs before reading them, and
//! a background ticker settles the rest, so completion activity (the `workflow_run` webhook, the
//! `ci_activity` notification) is recorded even when nobody looks. Settling applies each
//! transition at its scheduled time, so whoever settles first, the outcome is the same.
use std::time::Duration;

use platform_core::ApiVersion;
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::workflow_runs::{self as runs};
use platform_store::{Conn, DbError};

use crate::error::ApiResult;
use crate::ops::hooks::activity::{self, Record, Scope, WorkflowJobActivity, WorkflowRunActivity};
use crate::ops::hooks::payloads::WebhookWorkflowRun;
use crate::shapes::Urls;
use crate::state::Shared;
use crate::worker::{Context, Next, Work, WorkError, Worker, Workers};

/// Records a `WorkflowRunEvent` of `run` (`requested`, `in_progress`, `completed`) with the run
/// and its workflow as they are now.
pub fn record_run(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, action: &str, now: i64) -> Result<(), DbError> {
    let workflow = match runs::workflow(c, repo.id, &run.workflow_id.to_string())? {
        Some(w) => activity::stored(&super::shapes::workflow(u, repo, &w)),
        None => return Ok(()),
    };
    let r = Record::WorkflowRun(WorkflowRunActivity {
        action: action.into(),
        workflow_run: activity::stored(&WebhookWorkflowRun::from(super::shapes::run(u, ApiVersion::DEFAULT, repo, run, false))),
        workflow,
    });
    activity::record(c, Scope::repo(Some(run.triggering_actor.id), repo), &r, now)?;
    Ok(())
}

/// A run before a settle (one it may move): its status and its jobs' statuses, to record what
/// the settle changed.
pub struct Before {
    id: i64,
    repo_id: i64,
    status: String,
    jobs: Vec<(i64, String)>,
}

/// A run's status and its jobs' before a change, read under the run's row lock (taken here and
/// held to the end of the transaction): on PostgreSQL another node may be settling the same run,
/// and a status read before the lock could be one it has already moved on from — its change
/// would then be recorded twice.
pub(super) fn statuses(c: &mut dyn Conn, id: i64) -> Result<Option<Before>, DbError> {
    if !runs::lock(c, id)? {
        return Ok(None);
    }
    let Some(r) = c.query_opt("SELECT status, run_attempt, repo_id FROM workflow_runs WHERE id = ?", platform_store::params![id])? else {
        return Ok(None);
    };
    let jobs = runs::jobs(c, id, r.i64(1))?.into_iter().map(|j| (j.id, j.status)).collect();
    Ok(Some(Before { id, repo_id: r.i64(2), status: r.string(0), jobs }))
}

/// Records what a settle did to a run (as it was before, `None`: no such run), in the order the
/// hosted platform sends it: the run's `in_progress`, then its jobs' transitions in the order
/// they happened (`waiting`, `in_progress`, `completed`), then the run's `completed`.
pub fn record_changes(c: &mut dyn Conn, u: &Urls, before: &Option<Before>, now: i64) -> Result<(), DbError> {
    let Some(b) = before else { return Ok(()) };
    let (Some(repo), Some(run)) = (repos::by_id(c, b.repo_id)?, runs::get(c, b.repo_id, b.id)?) else { return Ok(()) };
    // A run waiting for a review has started (its `in_progress` was sent before).
    let started = |s: &str| matches!(s, "in_progress" | "waiting" | "completed");
    if !started(&b.status) && started(&run.status) && run.conclusion.as_deref() != Some("cancelled") {
        record_run(c, u, &repo, &run, "in_progress", now)?;
    }
    record_jobs(c, u, &repo, &run, &b.jobs, now)?;
    if b.status != "completed" && run.status == "completed" {
        record_run(c, u, &repo, &run, "completed", now)?;
    }
    Ok(())
}

/// A job's transition: when, its rank among transitions at the same time, the job, the action.
type Transition = (i64, u8, usize, &'static str);

/// Records the transitions of the run's jobs since `was` (job id → status), ordered by when they
/// happened; at one instant a job that ends comes before the jobs its end releases.
fn record_jobs(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, was: &[(i64, String)], now: i64) -> Result<(), DbError> {
    let jobs = runs::jobs(c, run.id, run.run_attempt)?;
    let mut moves: Vec<Transition> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let Some((_, before)) = was.iter().find(|(id, _)| *id == j.id) else { continue };
        if *before == j.status || before == "completed" {
            continue;
        }
        // Waiting for a review (a settle ends there: the review is a request of its own).
        if j.status == "waiting" {
            moves.push((now, 1, i, "waiting"));
        }
        // Only a job that started has an `in_progress` (a skipped one, or one cancelled in the
        // queue, only completes).
        if let Some(s) = j.started_at.filter(|_| before != "in_progress") {
            moves.push((s, 2, i, "in_progress"));
        }
        if j.status == "completed" {
            let at = j.completed_at.unwrap_or(now);
            let rank = if j.started_at.is_some_and(|s| s < at) || before == "in_progress" { 0 } else { 3 };
            moves.push((at, rank, i, "completed"));
        }
    }
    moves.sort();
    for (_, _, i, action) in moves {
        record_job(c, u, repo, run, &jobs[i], action, now)?;
        super::deployments::job_moved(c, u, repo, run, &jobs[i], action, now)?;
    }
    Ok(())
}

/// Records a `WorkflowJobEvent` of `job` with the job as it was at that transition.
fn record_job(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, job: &runs::Job, action: &str, now: i64) -> Result<(), DbError> {
    let mut then = job.clone();
    match action {
        "queued" | "waiting" => {
            then.status = action.into();
            (then.conclusion, then.started_at, then.completed_at) = (None, None, None);
        }
        "in_progress" => {
            then.status = action.into();
            (then.conclusion, then.completed_at) = (None, None);
        }
        _ => {}
    }
    let r = Record::WorkflowJob(WorkflowJobActivity {
        action: action.into(),
        workflow_job: activity::stored(&super::shapes::job(u, repo, run, &then)),
    });
    activity::record(c, Scope::repo(Some(run.triggering_actor.id), repo), &r, now)?;
    Ok(())
}

/// Records a new run (or a new attempt) as `requested` and its jobs as `queued`; settling it
/// records the rest.
pub fn record_requested(c: &mut dyn Conn, u: &Urls, repo: &Repo, id: i64, now: i64) -> Result<(), DbError> {
    if let Some(run) = runs::get(c, repo.id, id)? {
        record_run(c, u, repo, &run, "requested", now)?;
        // Its jobs are queued with it (a run awaiting approval has not queued any).
        if run.status == "queued" {
            for j in runs::jobs(c, run.id, run.run_attempt)?.iter().filter(|j| j.status == "queued") {
                record_job(c, u, repo, &run, j, "queued", now)?;
            }
        }
    }
    Ok(())
}

/// Settles one run now (after a change to it) and records what changed.
pub fn settle_one(c: &mut dyn Conn, u: &Urls, id: i64, now: i64) -> Result<(), DbError> {
    let before = statuses(c, id)?;
    super::machine::settle_run(c, id, now)?;
    record_changes(c, u, &before, now)
}

/// Settles every run (of a repository) with a transition due, one after the other, each
/// recorded from its state under its lock.
fn settle_due(c: &mut dyn Conn, u: &Urls, repo_id: Option<i64>, now: i64) -> Result<(), DbError> {
    for id in runs::due_runs(c, repo_id, now)? {
        settle_one(c, u, id, now)?;
    }
    Ok(())
}

/// Brings a repository's runs up to the platform clock; returns the time of the next scheduled
/// transition (until then, what was read stays exact).
pub async fn settle_repo(app: &Shared, repo_id: i64) -> ApiResult<Option<i64>> {
    let now = app.clock.now();
    let due = app.store.read(move |c| runs::next_due(c, Some(repo_id))).await?;
    if due.is_none_or(|d| d > now) {
        return Ok(due);
    }
    let u = app.urls.clone();
    let next = app
        .store
        .write(move |c| -> Result<_, DbError> {
            settle_due(c, &u, Some(repo_id), now)?;
            runs::next_due(c, Some(repo_id))
        })
        .await?;
    Ok(next)
}

/// Starts the ticker: settles every run with a transition due, on whole-second ticks (a tick
/// that settles some ticks again at once).
pub fn start_ticker(workers: &mut Workers, state: &Shared) {
    let worker = Worker { name: "workflow run engine".into(), poll: Duration::from_secs(1), on_writes: false };
    workers.start(worker, Ticker { state: state.clone() });
}

struct Ticker {
    state: Shared,
}

impl Work for Ticker {
    async fn pass(&mut self) -> Result<Next, WorkError> {
        let now = self.state.clock.now();
        let due = self.state.store.read(|c| runs::next_due(c, None)).await.context("reading when runs are due")?;
        if due.is_none_or(|d| d > now) {
            return Ok(Next::Wait);
        }
        let u = self.state.urls.clone();
        self.state.store.write(move |c| settle_due(c, &u, None, now)).await.context("settling due workflow runs")?;
        Ok(Next::Again)
    }
}
