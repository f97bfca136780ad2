//! The run state machine: what follows what in a workflow run, and when, on the platform clock.
//!
//! A run is `queued` until its start time, then `in_progress`; a job starts once every job it
//! needs has completed (skipped when one did not succeed, or when planned so), runs for its planned
//! duration and ends with its planned outcome for the attempt; a job for a protected environment
//! first opens a gate that waits for a review (or, without required reviewers, only for the wait
//! timer). The run is `waiting` while only gated jobs are left, and `completed` when every job is,
//! its conclusion drawn from theirs. Cancels, re-runs, approvals and the admin's advance are
//! changes from outside, refused ([`Refusal`]) when the run's state does not allow them.
//!
//! [`settle_run`] applies every transition due by `now` at the time it was scheduled for, so the
//! result never depends on when settling happens (a request, the [`super::engine`] ticker, or
//! both). The rows are read and written by the store (`workflow_runs::load_live`, `save_live`, …);
//! the decisions are here.
use platform_store::domain::accounts::Account;
use platform_store::domain::workflow_runs::{self as runs, Gate, Job, Live};
use platform_store::{Conn, DbError};

/// A job's steps through its states.
trait Step {
    fn outcome(&self, attempt: i64) -> &str;
    fn complete(&mut self, conclusion: &str, at: i64);
    fn start(&mut self, at: i64);
}

impl Step for Job {
    /// The planned conclusion in `attempt` (the last planned one repeats).
    fn outcome(&self, attempt: i64) -> &str {
        let i = ((attempt - 1).max(0) as usize).min(self.outcomes.len().saturating_sub(1));
        self.outcomes.get(i).map(String::as_str).unwrap_or("success")
    }
    fn complete(&mut self, conclusion: &str, at: i64) {
        self.status = "completed".into();
        self.conclusion = Some(conclusion.into());
        self.completed_at = Some(at);
        self.dirty = true;
    }
    fn start(&mut self, at: i64) {
        self.status = "in_progress".into();
        self.started_at = Some(at);
        self.dirty = true;
    }
}

/// A run's transitions, on a run loaded for change.
trait Transitions {
    fn next_event(&self) -> Option<i64>;
    fn apply(&mut self, c: &mut dyn Conn, t: i64) -> Result<(), DbError>;
    fn release(&mut self, c: &mut dyn Conn, t: i64) -> Result<(), DbError>;
    fn open_gate(&mut self, c: &mut dyn Conn, env_id: i64, t: i64) -> Result<Gate, DbError>;
    fn conclude(&mut self, t: i64);
    fn settle(&mut self, c: &mut dyn Conn, now: i64) -> Result<bool, DbError>;
}

impl Transitions for Live {
    /// The time of the next scheduled transition.
    fn next_event(&self) -> Option<i64> {
        let r = &self.run;
        if r.completed() {
            return None;
        }
        if r.status == "queued" {
            return r.start_at;
        }
        let ends = self.jobs.iter().filter(|j| j.status == "in_progress").filter_map(|j| j.started_at.map(|s| s + j.duration));
        let ready = self.jobs.iter().filter(|j| j.status == "waiting").filter_map(|j| {
            let g = self.gates.iter().find(|g| Some(g.environment_id) == j.environment_id)?;
            (g.state == "approved").then_some(g.ready_at).flatten()
        });
        ends.chain(ready).min()
    }

    /// Applies everything that happens at `t`.
    fn apply(&mut self, c: &mut dyn Conn, t: i64) -> Result<(), DbError> {
        if self.run.status == "queued" && self.run.start_at.is_some_and(|s| s <= t) {
            self.run.status = "in_progress".into();
            self.run.run_started_at = Some(t);
            self.run.updated_at = t;
        }
        if self.run.status == "queued" {
            return Ok(());
        }
        let attempt = self.run.run_attempt;
        for j in self.jobs.iter_mut() {
            if j.status == "in_progress" && j.started_at.is_some_and(|s| s + j.duration <= t) {
                let end = j.started_at.unwrap_or(t) + j.duration;
                let outcome = j.outcome(attempt).to_string();
                j.complete(&outcome, end);
            }
        }
        for j in self.jobs.iter_mut().filter(|j| j.status == "waiting") {
            let Some(g) = self.gates.iter().find(|g| Some(g.environment_id) == j.environment_id) else { continue };
            match g.state.as_str() {
                "approved" if g.ready_at.is_some_and(|r| r <= t) => j.start(g.ready_at.unwrap_or(t)),
                "rejected" => j.complete("failure", t),
                "cancelled" => j.complete("cancelled", t),
                _ => {}
            }
        }
        self.release(c, t)?;
        self.conclude(t);
        Ok(())
    }

    /// Starts (or skips) every queued job whose needs have completed, until nothing changes.
    fn release(&mut self, c: &mut dyn Conn, t: i64) -> Result<(), DbError> {
        loop {
            let mut changed = false;
            for i in 0..self.jobs.len() {
                if self.jobs[i].status != "queued" {
                    continue;
                }
                let needs: Vec<Option<&Job>> = self.jobs[i].needs.iter().map(|n| self.jobs.iter().find(|j| &j.name == n)).collect();
                if needs.iter().any(|n| n.is_some_and(|j| j.status != "completed")) {
                    continue;
                }
                let ok = needs.iter().flatten().all(|j| matches!(j.conclusion.as_deref(), Some("success" | "neutral")));
                changed = true;
                if !ok || self.jobs[i].outcome(self.run.run_attempt) == "skipped" {
                    self.jobs[i].complete("skipped", t);
                    continue;
                }
                let Some(env_id) = self.jobs[i].environment_id else {
                    self.jobs[i].start(t);
                    continue;
                };
                let gate = match self.gates.iter().position(|g| g.environment_id == env_id) {
                    Some(p) => self.gates[p].clone(),
                    None => self.open_gate(c, env_id, t)?,
                };
                match gate.state.as_str() {
                    "approved" if gate.ready_at.is_some_and(|r| r <= t) => self.jobs[i].start(t),
                    "rejected" => self.jobs[i].complete("failure", t),
                    "cancelled" => self.jobs[i].complete("cancelled", t),
                    _ => {
                        self.jobs[i].status = "waiting".into();
                        self.jobs[i].dirty = true;
                    }
                }
            }
            if !changed {
                return Ok(());
            }
        }
    }

    /// A job reached a protected environment at `t`: the gate waits for a review, or (with no
    /// required reviewers) only for its wait timer, approved by the platform.
    fn open_gate(&mut self, c: &mut dyn Conn, env_id: i64, t: i64) -> Result<Gate, DbError> {
        let env = runs::environment(c, env_id)?.ok_or_else(|| DbError::other("environment vanished"))?;
        let mut g = Gate { environment_id: env_id, state: "waiting".into(), wait_timer_started_at: t, ready_at: None };
        if runs::reviewers(c, env_id)?.is_empty() {
            g.state = "approved".into();
            g.ready_at = Some(t + env.wait_timer * 60);
            let actor = self.run.triggering_actor.clone();
            runs::create_deployment(c, &self.run, &env, &actor, t)?;
        }
        runs::save_gate(c, self.run.id, self.run.run_attempt, &g)?;
        self.gates.push(g.clone());
        Ok(g)
    }

    /// The run's status from its jobs; completes it when every job has.
    fn conclude(&mut self, t: i64) {
        let r = &mut self.run;
        if r.status == "queued" || r.completed() {
            return;
        }
        let status = if self.jobs.iter().all(|j| j.status == "completed") {
            let has = |c: &str| self.jobs.iter().any(|j| j.conclusion.as_deref() == Some(c));
            let conclusion = if has("failure") {
                "failure"
            } else if has("timed_out") {
                "timed_out"
            } else if has("cancelled") {
                "cancelled"
            } else if !self.jobs.is_empty() && self.jobs.iter().all(|j| j.conclusion.as_deref() == Some("skipped")) {
                "skipped"
            } else {
                "success"
            };
            r.conclusion = Some(conclusion.into());
            r.completed_at = Some(t);
            "completed"
        } else if self.jobs.iter().any(|j| j.status == "waiting") && !self.jobs.iter().any(|j| j.status == "in_progress") {
            "waiting"
        } else {
            "in_progress"
        };
        if r.status != status {
            r.status = status.into();
            r.updated_at = t;
        }
    }

    /// Applies every transition due by `now`, then what outside changes (reviews, cancels) cause
    /// at `now`; returns whether the run completed.
    fn settle(&mut self, c: &mut dyn Conn, now: i64) -> Result<bool, DbError> {
        let was_completed = self.run.completed();
        while let Some(t) = self.next_event().filter(|t| *t <= now) {
            self.apply(c, t)?;
        }
        if !self.run.completed() {
            self.apply(c, now)?;
        }
        self.run.due_at = self.next_event();
        Ok(!was_completed && self.run.completed())
    }
}

/// Brings one run up to `now`; returns whether it completed (the caller records that activity).
pub fn settle_run(c: &mut dyn Conn, id: i64, now: i64) -> Result<bool, DbError> {
    let Some(mut live) = runs::load_live(c, id)? else { return Ok(false) };
    let done = live.settle(c, now)?;
    runs::save_live(c, &mut live)?;
    Ok(done)
}

/// Why a change of a run was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The run has completed (cancel).
    Completed,
    /// The run has not completed (re-runs, log deletion).
    NotCompleted,
    /// A re-run of failed jobs found none.
    NothingFailed,
    /// Approval of a run that does not wait for one.
    NoApprovalNeeded,
    /// Nothing scheduled (advance): completed, or waiting for a review.
    NothingScheduled,
}

/// Cancels a run now: unfinished jobs end `cancelled`, waiting gates close.
pub fn cancel(c: &mut dyn Conn, id: i64, now: i64) -> Result<Result<(), Refusal>, DbError> {
    let Some(mut live) = runs::load_live(c, id)? else { return Ok(Ok(())) };
    live.settle(c, now)?;
    if live.run.completed() {
        runs::save_live(c, &mut live)?;
        return Ok(Err(Refusal::Completed));
    }
    for j in live.jobs.iter_mut().filter(|j| j.status != "completed") {
        j.complete("cancelled", now);
    }
    for g in live.gates.iter_mut().filter(|g| g.state == "waiting") {
        g.state = "cancelled".into();
        runs::save_gate(c, id, live.run.run_attempt, g)?;
    }
    let r = &mut live.run;
    r.status = "completed".into();
    r.conclusion = Some("cancelled".into());
    r.completed_at = Some(now);
    r.due_at = None;
    r.updated_at = now;
    runs::save_live(c, &mut live)?;
    Ok(Ok(()))
}

/// What a re-run repeats.
#[derive(Debug, Clone)]
pub enum Rerun {
    All,
    /// Failed (and cancelled or timed-out) jobs and every job that needs them.
    Failed,
    /// One job (by name) and every job that needs it.
    Job(String),
}

/// Starts a new attempt: the chosen jobs run again (queued), the others keep their results.
pub fn rerun(c: &mut dyn Conn, id: i64, what: &Rerun, by: &Account, debug: bool, now: i64) -> Result<Result<(), Refusal>, DbError> {
    let Some(mut live) = runs::load_live(c, id)? else { return Ok(Ok(())) };
    live.settle(c, now)?;
    if !live.run.completed() || live.run.needs_approval {
        runs::save_live(c, &mut live)?;
        return Ok(Err(Refusal::NotCompleted));
    }
    let mut chosen: Vec<String> = match what {
        Rerun::All => live.jobs.iter().map(|j| j.name.clone()).collect(),
        Rerun::Failed => live
            .jobs
            .iter()
            .filter(|j| matches!(j.conclusion.as_deref(), Some("failure" | "cancelled" | "timed_out")))
            .map(|j| j.name.clone())
            .collect(),
        Rerun::Job(name) => vec![name.clone()],
    };
    if chosen.is_empty() {
        return Ok(Err(Refusal::NothingFailed));
    }
    // Dependents, transitively.
    loop {
        let more: Vec<String> = live
            .jobs
            .iter()
            .filter(|j| !chosen.contains(&j.name) && j.needs.iter().any(|n| chosen.contains(n)))
            .map(|j| j.name.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        chosen.extend(more);
    }
    let attempt = runs::start_attempt(c, &live, &chosen, now)?;
    let run = &mut live.run;
    run.run_attempt = attempt;
    run.triggering_actor = by.clone();
    run.status = "queued".into();
    run.conclusion = None;
    // A new attempt is queued for at least a second, whatever the plan's queue time.
    run.start_at = Some(now + run.queue_seconds.max(1));
    run.completed_at = None;
    run.due_at = run.start_at;
    run.debug_logging = debug;
    run.updated_at = now;
    live.jobs.clear();
    runs::save_live(c, &mut live)?;
    Ok(Ok(()))
}

/// Approves a fork pull request's run: it is queued now.
pub fn approve(c: &mut dyn Conn, id: i64, now: i64) -> Result<Result<(), Refusal>, DbError> {
    let Some(mut live) = runs::load_live(c, id)? else { return Ok(Ok(())) };
    if !live.run.needs_approval {
        return Ok(Err(Refusal::NoApprovalNeeded));
    }
    let r = &mut live.run;
    r.needs_approval = false;
    r.status = "queued".into();
    r.conclusion = None;
    r.completed_at = None;
    r.start_at = Some(now + r.queue_seconds);
    r.due_at = r.start_at;
    r.updated_at = now;
    runs::save_live(c, &mut live)?;
    Ok(Ok(()))
}

/// Moves a run one step: its next scheduled transition happens now (a queued run starts, the
/// next job to finish finishes, a wait timer ends). Returns whether the run completed.
pub fn advance(c: &mut dyn Conn, id: i64, now: i64) -> Result<Result<bool, Refusal>, DbError> {
    let Some(mut live) = runs::load_live(c, id)? else { return Ok(Err(Refusal::NothingScheduled)) };
    if live.settle(c, now)? {
        runs::save_live(c, &mut live)?;
        return Ok(Ok(true));
    }
    let Some(next) = live.next_event() else {
        runs::save_live(c, &mut live)?;
        return Ok(Err(Refusal::NothingScheduled));
    };
    if live.run.status == "queued" {
        live.run.start_at = Some(now);
    } else {
        for j in live.jobs.iter_mut().filter(|j| j.status == "in_progress") {
            if let Some(s) = j.started_at.filter(|s| s + j.duration == next) {
                j.duration = (now - s).max(0);
                j.dirty = true;
            }
        }
        let waiting: Vec<i64> = live.jobs.iter().filter(|j| j.status == "waiting").filter_map(|j| j.environment_id).collect();
        for g in live.gates.iter_mut().filter(|g| g.state == "approved" && g.ready_at == Some(next) && waiting.contains(&g.environment_id))
        {
            g.ready_at = Some(now);
            runs::save_gate(c, id, live.run.run_attempt, g)?;
        }
    }
    let done = live.settle(c, now)?;
    runs::save_live(c, &mut live)?;
    Ok(Ok(done))
}
