//! Runs move on the platform clock: requests settle a repository's runs before reading them, and
//! a background ticker settles the rest, so completion activity (the `workflow_run` webhook, the
//! `ci_activity` notification) is recorded even when nobody looks. Settling applies each
//! transition at its scheduled time, so whoever settles first, the outcome is the same.
use std::time::Duration;

use platform_core::ApiVersion;
use platform_store::domain::activity::{self, NewActivity};
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::workflow_runs::{self as runs};
use platform_store::{Conn, DbError};

use crate::error::ApiResult;
use crate::ops::hooks::activity::{self as hook_activity, WorkflowRunActivity};
use crate::ops::hooks::payloads::WebhookWorkflowRun;
use crate::shapes::Urls;
use crate::state::Shared;
use crate::worker::{Context, Next, Work, WorkError, Worker, Workers};

/// Records the completion of runs as platform activity (`WorkflowRunEvent`, action `completed`),
/// in the transaction that completed them.
pub fn record_completions(c: &mut dyn Conn, u: &Urls, ids: &[i64], now: i64) -> Result<(), DbError> {
    for &id in ids {
        let Some(repo_id) = c.query_opt("SELECT repo_id FROM workflow_runs WHERE id = ?", platform_store::params![id])?.map(|r| r.i64(0))
        else {
            continue;
        };
        let (Some(repo), Some(run)) = (repos::by_id(c, repo_id)?, runs::get(c, repo_id, id)?) else { continue };
        record_run(c, u, &repo, &run, "completed", now)?;
    }
    Ok(())
}

/// Records a `WorkflowRunEvent` of `run` (`requested`, `in_progress`, `completed`) with the run
/// and its workflow as they are now.
pub fn record_run(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, action: &str, now: i64) -> Result<(), DbError> {
    let workflow = match runs::workflow(c, repo.id, &run.workflow_id.to_string())? {
        Some(w) => hook_activity::stored(&super::shapes::workflow(u, repo, &w)),
        None => return Ok(()),
    };
    let payload = hook_activity::stored(&WorkflowRunActivity {
        action: action.into(),
        workflow_run: hook_activity::stored(&WebhookWorkflowRun::from(super::shapes::run(u, ApiVersion::DEFAULT, repo, run, false))),
        workflow,
    });
    activity::record(c, &NewActivity::in_repo("WorkflowRunEvent", Some(run.triggering_actor.id), repo, &payload), now)?;
    Ok(())
}

/// Runs' statuses before a settle (the runs it may move), to record what it changed.
pub(super) fn statuses(c: &mut dyn Conn, due: Option<(Option<i64>, i64)>, id: Option<i64>) -> Result<Vec<(i64, String)>, DbError> {
    let rows = match (id, due) {
        (Some(id), _) => c.query("SELECT id, status FROM workflow_runs WHERE id = ?", platform_store::params![id])?,
        (None, Some((Some(repo_id), now))) => {
            c.query("SELECT id, status FROM workflow_runs WHERE repo_id = ? AND due_at <= ?", platform_store::params![repo_id, now])?
        }
        (None, Some((None, now))) => c.query("SELECT id, status FROM workflow_runs WHERE due_at <= ?", platform_store::params![now])?,
        (None, None) => Vec::new(),
    };
    Ok(rows.iter().map(|r| (r.i64(0), r.string(1))).collect())
}

/// Records what a settle did to runs (their statuses before): `in_progress` for a run that
/// started, then `completed` for one that completed, in the order the hosted platform sends them.
pub fn record_changes(c: &mut dyn Conn, u: &Urls, before: &[(i64, String)], now: i64) -> Result<(), DbError> {
    for (id, was) in before {
        let Some(repo_id) = c.query_opt("SELECT repo_id FROM workflow_runs WHERE id = ?", platform_store::params![*id])?.map(|r| r.i64(0))
        else {
            continue;
        };
        let (Some(repo), Some(run)) = (repos::by_id(c, repo_id)?, runs::get(c, repo_id, *id)?) else { continue };
        let started = |s: &str| s == "in_progress" || s == "completed";
        if !started(was) && started(&run.status) && run.conclusion.as_deref() != Some("cancelled") {
            record_run(c, u, &repo, &run, "in_progress", now)?;
        }
        if was != "completed" && run.status == "completed" {
            record_run(c, u, &repo, &run, "completed", now)?;
        }
    }
    Ok(())
}

/// Records a new run (or a new attempt) as `requested`; settling it records the rest.
pub fn record_requested(c: &mut dyn Conn, u: &Urls, repo: &Repo, id: i64, now: i64) -> Result<(), DbError> {
    if let Some(run) = runs::get(c, repo.id, id)? {
        record_run(c, u, repo, &run, "requested", now)?;
    }
    Ok(())
}

/// Settles one run now (after a change to it) and records what changed.
pub fn settle_one(c: &mut dyn Conn, u: &Urls, id: i64, now: i64) -> Result<(), DbError> {
    let before = statuses(c, None, Some(id))?;
    super::machine::settle_run(c, id, now)?;
    record_changes(c, u, &before, now)
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
            let before = statuses(c, Some((Some(repo_id), now)), None)?;
            super::machine::settle_due(c, Some(repo_id), now)?;
            record_changes(c, &u, &before, now)?;
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
        self.state
            .store
            .write(move |c| -> Result<(), DbError> {
                let before = statuses(c, Some((None, now)), None)?;
                super::machine::settle_due(c, None, now)?;
                record_changes(c, &u, &before, now)
            })
            .await
            .context("settling due workflow runs")?;
        Ok(Next::Again)
    }
}
