//! Workflow runs (document 3): workflows, runs (the row holds the latest attempt, earlier ones are
//! snapshots in `run_attempts`), jobs per attempt with their `needs` graph, environments with
//! protection rules (required reviewers, wait timer), gates (pending deployments), reviews and the
//! deployments approvals create.
//!
//! A run moves on the platform clock; what follows what, and when, is the api's run state machine
//! (`ops::workflow_runs::machine`). Here are its reads and writes: a run loaded for change
//! ([`load_live`], row-locked) and saved ([`save_live`]), its gates, deployments and new attempts;
//! `due_at` holds the next scheduled transition and is indexed ([`due_runs`]).
use serde_json::{json, Value};

use super::accounts::{self, Account};
use crate::{params, Conn, DbError, Row};

/// `status` filter values that are statuses; the others of document 3 are conclusions.
pub const STATUSES: [&str; 6] = ["completed", "in_progress", "queued", "requested", "waiting", "pending"];
pub const CONCLUSIONS: [&str; 8] = ["action_required", "cancelled", "failure", "neutral", "skipped", "stale", "success", "timed_out"];
/// Planned job outcomes.
pub const OUTCOMES: [&str; 6] = ["success", "failure", "cancelled", "skipped", "timed_out", "neutral"];
/// Runner operating systems (the usage keys).
pub const RUNNER_OS: [&str; 3] = ["UBUNTU", "MACOS", "WINDOWS"];
/// A filtered list finds at most this many runs (document 1, limits).
pub const FILTERED_MAX: i64 = 1000;
/// Check suite ids are derived from run ids (one suite per run, kept by its re-runs).
pub const CHECK_SUITE_BASE: i64 = 1_000_000_000;

#[derive(Clone, Debug)]
pub struct Run {
    pub id: i64,
    pub repo_id: i64,
    pub workflow_id: i64,
    pub workflow_path: String,
    pub workflow_name: String,
    pub run_number: i64,
    pub run_attempt: i64,
    pub event: String,
    pub head_branch: Option<String>,
    pub head_sha: String,
    pub head_commit: Value,
    pub display_title: String,
    pub pull_requests: Value,
    pub actor: Account,
    pub triggering_actor: Account,
    pub status: String,
    pub conclusion: Option<String>,
    pub needs_approval: bool,
    pub queue_seconds: i64,
    pub start_at: Option<i64>,
    pub run_started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub due_at: Option<i64>,
    pub debug_logging: bool,
    pub logs_deleted: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Run {
    pub fn check_suite_id(&self) -> i64 {
        self.id + CHECK_SUITE_BASE
    }
    pub fn completed(&self) -> bool {
        self.status == "completed"
    }
}

const RUN_COLS: &str = "r.id, r.repo_id, r.workflow_id, w.path, w.name, r.run_number, r.run_attempt, r.event, \
    r.head_branch, r.head_sha, r.head_commit, r.display_title, r.pull_requests, r.status, r.conclusion, \
    r.needs_approval, r.queue_seconds, r.start_at, r.run_started_at, r.completed_at, r.due_at, r.debug_logging, \
    r.logs_deleted, r.created_at, r.updated_at";
const RUN_NCOLS: usize = 25;

fn json_col(r: &Row, i: usize) -> Value {
    serde_json::from_str(r.str(i)).unwrap_or(Value::Null)
}

fn run_from_row(r: &Row) -> Run {
    Run {
        id: r.i64(0),
        repo_id: r.i64(1),
        workflow_id: r.i64(2),
        workflow_path: r.string(3),
        workflow_name: r.string(4),
        run_number: r.i64(5),
        run_attempt: r.i64(6),
        event: r.string(7),
        head_branch: r.opt_string(8),
        head_sha: r.string(9),
        head_commit: json_col(r, 10),
        display_title: r.string(11),
        pull_requests: json_col(r, 12),
        status: r.string(13),
        conclusion: r.opt_string(14),
        needs_approval: r.bool(15),
        queue_seconds: r.i64(16),
        start_at: r.opt_i64(17),
        run_started_at: r.opt_i64(18),
        completed_at: r.opt_i64(19),
        due_at: r.opt_i64(20),
        debug_logging: r.bool(21),
        logs_deleted: r.bool(22),
        created_at: r.i64(23),
        updated_at: r.i64(24),
        actor: accounts::from_row(r, RUN_NCOLS),
        triggering_actor: accounts::from_row(r, RUN_NCOLS + accounts::NCOLS),
    }
}

fn select_runs() -> String {
    let t = accounts::COLS.replace("a.", "t.");
    format!(
        "SELECT {RUN_COLS}, {}, {t} FROM workflow_runs r JOIN workflows w ON w.id = r.workflow_id \
         JOIN accounts a ON a.id = r.actor_id JOIN accounts t ON t.id = r.triggering_actor_id",
        accounts::COLS
    )
}

#[derive(Clone, Debug)]
pub struct Job {
    pub id: i64,
    pub run_id: i64,
    pub attempt: i64,
    pub position: i64,
    pub name: String,
    pub needs: Vec<String>,
    pub outcomes: Vec<String>,
    pub steps: Vec<String>,
    pub runner_os: String,
    /// Seconds from start to end (shortened when the control plane advances the job).
    pub duration: i64,
    /// The duration its plan gave it: a re-run plans the job again with it.
    pub planned: i64,
    pub log: String,
    pub environment_id: Option<i64>,
    /// Set on a job a re-run did not repeat: the earlier job whose result it carries.
    pub carried_from: Option<i64>,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub created_at: i64,
    /// Changed since it was loaded: [`save_live`] writes it.
    pub dirty: bool,
}

const JOB_COLS: &str = "j.id, j.run_id, j.attempt, j.position, j.name, j.needs, j.outcomes, j.steps, j.runner_os, \
    j.duration, j.log, j.environment_id, j.status, j.conclusion, j.started_at, j.completed_at, j.created_at, j.carried_from, j.planned_duration";

fn strings(v: Value) -> Vec<String> {
    serde_json::from_value(v).unwrap_or_default()
}

fn job_from_row(r: &Row) -> Job {
    Job {
        id: r.i64(0),
        run_id: r.i64(1),
        attempt: r.i64(2),
        position: r.i64(3),
        name: r.string(4),
        needs: strings(json_col(r, 5)),
        outcomes: strings(json_col(r, 6)),
        steps: strings(json_col(r, 7)),
        runner_os: r.string(8),
        duration: r.i64(9),
        log: r.string(10),
        environment_id: r.opt_i64(11),
        status: r.string(12),
        conclusion: r.opt_string(13),
        started_at: r.opt_i64(14),
        completed_at: r.opt_i64(15),
        created_at: r.i64(16),
        carried_from: r.opt_i64(17),
        planned: r.i64(18),
        dirty: false,
    }
}

// ---------------------------------------------------------------------------------------------
// Creating runs.

/// A job of a plan.
#[derive(Clone, Debug)]
pub struct NewJob {
    pub name: String,
    pub needs: Vec<String>,
    pub outcomes: Vec<String>,
    pub steps: Vec<String>,
    pub runner_os: String,
    pub duration: i64,
    pub log: String,
    pub environment_id: Option<i64>,
}

pub struct NewRun<'a> {
    pub repo_id: i64,
    pub workflow_path: &'a str,
    pub workflow_name: &'a str,
    pub event: &'a str,
    pub head_branch: Option<&'a str>,
    pub head_sha: &'a str,
    pub head_commit: &'a Value,
    pub display_title: &'a str,
    pub pull_requests: &'a Value,
    pub actor_id: i64,
    pub triggering_actor_id: i64,
    /// A fork pull request's run: completed with `action_required` until approved.
    pub needs_approval: bool,
    pub queue_seconds: i64,
    pub jobs: &'a [NewJob],
}

/// The workflow at `path` (created on first use) and its next run number.
fn next_run_number(c: &mut dyn Conn, repo_id: i64, path: &str, name: &str, count: i64, now: i64) -> Result<(i64, i64), DbError> {
    c.execute(
        "INSERT INTO workflows (repo_id, path, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT (repo_id, path) DO NOTHING",
        params![repo_id, path, name, now, now],
    )?;
    let r = c.query_one(
        "UPDATE workflows SET last_run_number = last_run_number + ?, updated_at = ? WHERE repo_id = ? AND path = ? \
         RETURNING id, last_run_number",
        params![count, now, repo_id, path],
    )?;
    Ok((r.i64(0), r.i64(1) - count + 1))
}

fn insert_job(c: &mut dyn Conn, run_id: i64, attempt: i64, position: i64, j: &NewJob, now: i64) -> Result<i64, DbError> {
    c.query_i64(
        "INSERT INTO run_jobs (run_id, attempt, position, name, needs, outcomes, steps, runner_os, duration, \
         planned_duration, log, environment_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?) \
         RETURNING id",
        params![
            run_id,
            attempt,
            position,
            &j.name,
            json!(j.needs).to_string(),
            json!(j.outcomes).to_string(),
            json!(j.steps).to_string(),
            &j.runner_os,
            j.duration,
            j.duration,
            &j.log,
            j.environment_id,
            now
        ],
    )
}

/// Creates a run queued at `now` (it starts `queue_seconds` later); returns its id.
pub fn create(c: &mut dyn Conn, n: &NewRun, now: i64) -> Result<i64, DbError> {
    let (workflow_id, number) = next_run_number(c, n.repo_id, n.workflow_path, n.workflow_name, 1, now)?;
    let (status, conclusion, start_at) =
        if n.needs_approval { ("completed", Some("action_required"), None) } else { ("queued", None, Some(now + n.queue_seconds)) };
    let id = c.query_i64(
        "INSERT INTO workflow_runs (repo_id, workflow_id, run_number, run_attempt, event, head_branch, head_sha, \
         head_commit, display_title, pull_requests, actor_id, triggering_actor_id, status, conclusion, needs_approval, \
         queue_seconds, start_at, completed_at, due_at, debug_logging, logs_deleted, created_at, updated_at) \
         VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![
            n.repo_id,
            workflow_id,
            number,
            n.event,
            n.head_branch,
            n.head_sha,
            n.head_commit.to_string(),
            n.display_title,
            n.pull_requests.to_string(),
            n.actor_id,
            n.triggering_actor_id,
            status,
            conclusion,
            n.needs_approval,
            n.queue_seconds,
            start_at,
            n.needs_approval.then_some(now),
            start_at,
            false,
            false,
            now,
            now
        ],
    )?;
    for (i, j) in n.jobs.iter().enumerate() {
        insert_job(c, id, 1, i as i64, j, now)?;
    }
    Ok(id)
}

/// One completed run of a bulk insert (benchmarks, seeds): a single job that ran `duration`
/// seconds and ended with `conclusion`.
pub struct PastRun<'a> {
    pub head_branch: &'a str,
    pub head_sha: &'a str,
    pub event: &'a str,
    pub conclusion: &'a str,
    pub created_at: i64,
}

/// Inserts completed runs of one workflow in multi-row statements; returns how many.
pub fn insert_past(
    c: &mut dyn Conn,
    repo_id: i64,
    workflow: (&str, &str),
    actor_id: i64,
    job: &NewJob,
    runs: &[PastRun],
    now: i64,
) -> Result<usize, DbError> {
    const CHUNK: usize = 200;
    let (workflow_id, first) = next_run_number(c, repo_id, workflow.0, workflow.1, runs.len() as i64, now)?;
    let empty = json!([]).to_string();
    for (k, chunk) in runs.chunks(CHUNK).enumerate() {
        let mut sql = String::from(
            "INSERT INTO workflow_runs (repo_id, workflow_id, run_number, run_attempt, event, head_branch, head_sha, \
             head_commit, display_title, pull_requests, actor_id, triggering_actor_id, status, conclusion, needs_approval, \
             queue_seconds, run_started_at, completed_at, debug_logging, logs_deleted, created_at, updated_at) VALUES ",
        );
        let mut args: Vec<crate::Value> = Vec::with_capacity(chunk.len() * 20);
        for (i, r) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str("(?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?, 0, ?, ?, ?, ?, ?, ?)");
            let number = first + (k * CHUNK + i) as i64;
            let message = format!("{} #{number}", workflow.1);
            let commit = json!({"message": message, "timestamp": r.created_at, "author": null, "committer": null});
            let end = r.created_at + job.duration;
            args.extend([
                repo_id.into(),
                workflow_id.into(),
                number.into(),
                r.event.into(),
                r.head_branch.into(),
                r.head_sha.into(),
                commit.to_string().into(),
                message.into(),
                empty.clone().into(),
                actor_id.into(),
                actor_id.into(),
                r.conclusion.into(),
                false.into(),
                r.created_at.into(),
                end.into(),
                false.into(),
                false.into(),
                r.created_at.into(),
                end.into(),
            ]);
        }
        sql.push_str(" RETURNING id, created_at");
        let ids = c.query(&sql, &args)?;
        let mut jsql = String::from(
            "INSERT INTO run_jobs (run_id, attempt, position, name, needs, outcomes, steps, runner_os, duration, \
             planned_duration, log, status, conclusion, started_at, completed_at, created_at) VALUES ",
        );
        let mut jargs: Vec<crate::Value> = Vec::with_capacity(ids.len() * 13);
        for (i, (row, r)) in ids.iter().zip(chunk).enumerate() {
            if i > 0 {
                jsql.push_str(", ");
            }
            jsql.push_str("(?, 1, 0, ?, '[]', ?, ?, ?, ?, ?, ?, 'completed', ?, ?, ?, ?)");
            let start = row.i64(1);
            jargs.extend([
                row.i64(0).into(),
                job.name.as_str().into(),
                json!([r.conclusion]).to_string().into(),
                json!(job.steps).to_string().into(),
                job.runner_os.as_str().into(),
                job.duration.into(),
                job.duration.into(),
                job.log.as_str().into(),
                r.conclusion.into(),
                start.into(),
                (start + job.duration).into(),
                start.into(),
            ]);
        }
        c.execute(&jsql, &jargs)?;
    }
    Ok(runs.len())
}

// ---------------------------------------------------------------------------------------------
// Reading runs.

pub fn get(c: &mut dyn Conn, repo_id: i64, id: i64) -> Result<Option<Run>, DbError> {
    let sql = format!("{} WHERE r.id = ? AND r.repo_id = ?", select_runs());
    Ok(c.query_opt(&sql, params![id, repo_id])?.map(|r| run_from_row(&r)))
}

fn get_any(c: &mut dyn Conn, id: i64) -> Result<Option<Run>, DbError> {
    let sql = format!("{} WHERE r.id = ?", select_runs());
    Ok(c.query_opt(&sql, params![id])?.map(|r| run_from_row(&r)))
}

/// The run as it was in `attempt` (the latest attempt is the run itself).
pub fn attempt(c: &mut dyn Conn, run: &Run, attempt: i64) -> Result<Option<Run>, DbError> {
    if attempt == run.run_attempt {
        return Ok(Some(run.clone()));
    }
    let sql = format!(
        "SELECT x.status, x.conclusion, x.run_started_at, x.completed_at, x.debug_logging, x.updated_at, {} \
         FROM run_attempts x JOIN accounts a ON a.id = x.triggering_actor_id WHERE x.run_id = ? AND x.attempt = ?",
        accounts::COLS
    );
    let Some(r) = c.query_opt(&sql, params![run.id, attempt])? else { return Ok(None) };
    Ok(Some(Run {
        run_attempt: attempt,
        status: r.string(0),
        conclusion: r.opt_string(1),
        run_started_at: r.opt_i64(2),
        completed_at: r.opt_i64(3),
        debug_logging: r.bool(4),
        updated_at: r.i64(5),
        triggering_actor: accounts::from_row(&r, 6),
        needs_approval: false,
        start_at: None,
        due_at: None,
        ..run.clone()
    }))
}

/// When an attempt started and completed (none while it has not).
pub type Span = (Option<i64>, Option<i64>);

/// Every earlier attempt of a run (attempt, its start and end), for usage figures.
pub fn attempt_spans(c: &mut dyn Conn, run_id: i64) -> Result<Vec<Span>, DbError> {
    let rows = c.query("SELECT run_started_at, completed_at FROM run_attempts WHERE run_id = ? ORDER BY attempt", params![run_id])?;
    Ok(rows.iter().map(|r| (r.opt_i64(0), r.opt_i64(1))).collect())
}

/// The workflow a path segment names: its id, or its file name (`ci.yml`) or path.
pub fn workflow_id(c: &mut dyn Conn, repo_id: i64, given: &str) -> Result<Option<i64>, DbError> {
    if let Ok(id) = given.parse::<i64>() {
        return Ok(c.query_opt("SELECT id FROM workflows WHERE id = ? AND repo_id = ?", params![id, repo_id])?.map(|r| r.i64(0)));
    }
    let rows = c.query("SELECT id, path FROM workflows WHERE repo_id = ? ORDER BY id", params![repo_id])?;
    Ok(rows
        .iter()
        .find(|r| {
            let p = r.str(1);
            p == given || p.rsplit('/').next() == Some(given)
        })
        .map(|r| r.i64(0)))
}

/// A workflow: a file of the repository that runs were planned from.
#[derive(Clone, Debug)]
pub struct Workflow {
    pub id: i64,
    pub path: String,
    pub name: String,
    pub created_at: i64,
    pub updated_at: i64,
}

const WORKFLOW_COLS: &str = "id, path, name, created_at, updated_at";

fn workflow_from_row(r: &Row) -> Workflow {
    Workflow { id: r.i64(0), path: r.string(1), name: r.string(2), created_at: r.i64(3), updated_at: r.i64(4) }
}

/// A page of the repository's workflows, oldest first, and their count.
pub fn workflows(c: &mut dyn Conn, repo_id: i64, offset: i64, limit: i64) -> Result<(Vec<Workflow>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM workflows WHERE repo_id = ?", params![repo_id])?;
    let sql = format!("SELECT {WORKFLOW_COLS} FROM workflows WHERE repo_id = ? ORDER BY id LIMIT ? OFFSET ?");
    Ok((c.query(&sql, params![repo_id, limit, offset])?.iter().map(workflow_from_row).collect(), total))
}

/// The workflow a path segment names (see [`workflow_id`]).
pub fn workflow(c: &mut dyn Conn, repo_id: i64, given: &str) -> Result<Option<Workflow>, DbError> {
    let Some(id) = workflow_id(c, repo_id, given)? else { return Ok(None) };
    let sql = format!("SELECT {WORKFLOW_COLS} FROM workflows WHERE id = ?");
    Ok(c.query_opt(&sql, params![id])?.map(|r| workflow_from_row(&r)))
}

/// Filters of the run lists; all given ones must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub workflow_id: Option<i64>,
    /// An actor login that names no account matches nothing.
    pub actor: Option<String>,
    pub branch: Option<String>,
    pub event: Option<String>,
    /// A status or a conclusion value.
    pub status: Option<String>,
    pub created: Option<platform_core::daterange::Range>,
    pub check_suite_id: Option<i64>,
    pub head_sha: Option<String>,
}

impl Filter {
    /// Whether the 1,000-result cap applies (any filter but the workflow).
    pub fn capped(&self) -> bool {
        self.actor.is_some()
            || self.branch.is_some()
            || self.event.is_some()
            || self.status.is_some()
            || self.created.is_some()
            || self.check_suite_id.is_some()
            || self.head_sha.is_some()
    }
}

/// Runs of a repository matching `f`, newest first: one page and the total (at most
/// [`FILTERED_MAX`] when filtered; pages past the cap are empty).
pub fn list(c: &mut dyn Conn, repo_id: i64, f: &Filter, offset: i64, limit: i64) -> Result<(Vec<Run>, i64), DbError> {
    let mut wh = String::from("r.repo_id = ?");
    let mut args: Vec<crate::Value> = vec![repo_id.into()];
    if let Some(w) = f.workflow_id {
        wh.push_str(" AND r.workflow_id = ?");
        args.push(w.into());
    }
    if let Some(login) = &f.actor {
        match accounts::by_login(c, login)? {
            Some(a) => {
                wh.push_str(" AND r.actor_id = ?");
                args.push(a.id.into());
            }
            None => return Ok((Vec::new(), 0)),
        }
    }
    if let Some(b) = &f.branch {
        wh.push_str(" AND r.head_branch = ?");
        args.push(b.as_str().into());
    }
    if let Some(e) = &f.event {
        wh.push_str(" AND r.event = ?");
        args.push(e.as_str().into());
    }
    if let Some(s) = &f.status {
        wh.push_str(if STATUSES.contains(&s.as_str()) { " AND r.status = ?" } else { " AND r.conclusion = ?" });
        args.push(s.as_str().into());
    }
    if let Some(range) = &f.created {
        if let Some(from) = range.from {
            wh.push_str(" AND r.created_at >= ?");
            args.push(from.into());
        }
        if let Some(until) = range.until {
            wh.push_str(" AND r.created_at < ?");
            args.push(until.into());
        }
    }
    if let Some(cs) = f.check_suite_id {
        wh.push_str(" AND r.id = ?");
        args.push((cs - CHECK_SUITE_BASE).into());
    }
    if let Some(sha) = &f.head_sha {
        wh.push_str(" AND r.head_sha = ?");
        args.push(sha.as_str().into());
    }
    let (total, limit) = if f.capped() {
        // Count no further than the cap: the total of a filtered search is at most 1,000.
        let sql = format!("SELECT COUNT(*) FROM (SELECT 1 FROM workflow_runs r WHERE {wh} LIMIT {FILTERED_MAX}) x");
        (c.query_i64(&sql, &args)?, limit.min(FILTERED_MAX - offset))
    } else {
        (c.query_i64(&format!("SELECT COUNT(*) FROM workflow_runs r WHERE {wh}"), &args)?, limit)
    };
    if limit <= 0 || offset >= total {
        return Ok((Vec::new(), total));
    }
    // The page's ids first (an index-only walk), then the rows with their joins.
    let ids_sql = format!("SELECT r.id FROM workflow_runs r WHERE {wh} ORDER BY r.id DESC LIMIT ? OFFSET ?");
    args.push(limit.into());
    args.push(offset.into());
    let ids: Vec<i64> = c.query(&ids_sql, &args)?.iter().map(|r| r.i64(0)).collect();
    if ids.is_empty() {
        return Ok((Vec::new(), total));
    }
    let marks = vec!["?"; ids.len()].join(", ");
    let sql = format!("{} WHERE r.id IN ({marks}) ORDER BY r.id DESC", select_runs());
    let id_args: Vec<crate::Value> = ids.iter().map(|i| (*i).into()).collect();
    Ok((c.query(&sql, &id_args)?.iter().map(run_from_row).collect(), total))
}

/// Jobs of an attempt in plan order.
pub fn jobs(c: &mut dyn Conn, run_id: i64, attempt: i64) -> Result<Vec<Job>, DbError> {
    let sql = format!("SELECT {JOB_COLS} FROM run_jobs j WHERE j.run_id = ? AND j.attempt = ? ORDER BY j.position");
    Ok(c.query(&sql, params![run_id, attempt])?.iter().map(job_from_row).collect())
}

/// Every job of every attempt (usage counts re-runs).
pub fn all_jobs(c: &mut dyn Conn, run_id: i64) -> Result<Vec<Job>, DbError> {
    let sql = format!("SELECT {JOB_COLS} FROM run_jobs j WHERE j.run_id = ? ORDER BY j.attempt, j.position");
    Ok(c.query(&sql, params![run_id])?.iter().map(job_from_row).collect())
}

/// A job with its run, found by id within a repository.
pub fn job(c: &mut dyn Conn, repo_id: i64, job_id: i64) -> Result<Option<(Job, Run)>, DbError> {
    let sql = format!("SELECT {JOB_COLS} FROM run_jobs j WHERE j.id = ?");
    let Some(j) = c.query_opt(&sql, params![job_id])?.map(|r| job_from_row(&r)) else { return Ok(None) };
    Ok(get(c, repo_id, j.run_id)?.map(|run| (j, run)))
}

/// The earliest transition due among a repository's runs (all runs when `repo_id` is `None`).
pub fn next_due(c: &mut dyn Conn, repo_id: Option<i64>) -> Result<Option<i64>, DbError> {
    let r = match repo_id {
        Some(id) => c.query_one("SELECT MIN(due_at) FROM workflow_runs WHERE repo_id = ? AND due_at IS NOT NULL", params![id])?,
        None => c.query_one("SELECT MIN(due_at) FROM workflow_runs WHERE due_at IS NOT NULL", &[])?,
    };
    Ok(r.opt_i64(0))
}

// ---------------------------------------------------------------------------------------------
// Environments, gates, reviews, deployments.

#[derive(Clone, Debug)]
pub struct Environment {
    pub id: i64,
    pub repo_id: i64,
    pub name: String,
    pub wait_timer: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A required reviewer: `User` (an account id) or `Team` (a team id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reviewer {
    pub kind: String,
    pub id: i64,
}

fn env_from_row(r: &Row) -> Environment {
    Environment { id: r.i64(0), repo_id: r.i64(1), name: r.string(2), wait_timer: r.i64(3), created_at: r.i64(4), updated_at: r.i64(5) }
}

const ENV_COLS: &str = "e.id, e.repo_id, e.name, e.wait_timer, e.created_at, e.updated_at";

/// Creates or updates an environment's protection rules (its reviewers are replaced).
pub fn put_environment(
    c: &mut dyn Conn,
    repo_id: i64,
    name: &str,
    wait_timer: i64,
    reviewers: &[Reviewer],
    now: i64,
) -> Result<Environment, DbError> {
    let id = c.query_i64(
        "INSERT INTO environments (repo_id, name, wait_timer, created_at, updated_at) VALUES (?, ?, ?, ?, ?) \
         ON CONFLICT (repo_id, name) DO UPDATE SET wait_timer = excluded.wait_timer, updated_at = excluded.updated_at RETURNING id",
        params![repo_id, name, wait_timer, now, now],
    )?;
    c.execute("DELETE FROM environment_reviewers WHERE environment_id = ?", params![id])?;
    for (i, r) in reviewers.iter().enumerate() {
        c.execute(
            "INSERT INTO environment_reviewers (environment_id, kind, reviewer_id, position) VALUES (?, ?, ?, ?) \
             ON CONFLICT (environment_id, kind, reviewer_id) DO NOTHING",
            params![id, &r.kind, r.id, i as i64],
        )?;
    }
    environment(c, id)?.ok_or_else(|| DbError::other("environment vanished"))
}

pub fn environment(c: &mut dyn Conn, id: i64) -> Result<Option<Environment>, DbError> {
    Ok(c.query_opt(&format!("SELECT {ENV_COLS} FROM environments e WHERE e.id = ?"), params![id])?.map(|r| env_from_row(&r)))
}

/// A page of the repository's environments by name, and their count.
pub fn environments(c: &mut dyn Conn, repo_id: i64, offset: i64, limit: i64) -> Result<(Vec<Environment>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM environments WHERE repo_id = ?", params![repo_id])?;
    let sql = format!("SELECT {ENV_COLS} FROM environments e WHERE e.repo_id = ? ORDER BY e.name, e.id LIMIT ? OFFSET ?");
    Ok((c.query(&sql, params![repo_id, limit, offset])?.iter().map(env_from_row).collect(), total))
}

/// The repository's environment of this name (names compare case-insensitively, as hosted).
pub fn environment_named(c: &mut dyn Conn, repo_id: i64, name: &str) -> Result<Option<Environment>, DbError> {
    let sql = format!("SELECT {ENV_COLS} FROM environments e WHERE e.repo_id = ? AND LOWER(e.name) = LOWER(?) ORDER BY e.id LIMIT 1");
    Ok(c.query_opt(&sql, params![repo_id, name])?.map(|r| env_from_row(&r)))
}

pub fn reviewers(c: &mut dyn Conn, environment_id: i64) -> Result<Vec<Reviewer>, DbError> {
    let rows =
        c.query("SELECT kind, reviewer_id FROM environment_reviewers WHERE environment_id = ? ORDER BY position", params![environment_id])?;
    Ok(rows.iter().map(|r| Reviewer { kind: r.string(0), id: r.i64(1) }).collect())
}

/// Whether `user_id` is one of the reviewers, directly or through a team.
pub fn is_reviewer(c: &mut dyn Conn, reviewers: &[Reviewer], user_id: i64) -> Result<bool, DbError> {
    for r in reviewers {
        let hit = match r.kind.as_str() {
            "User" => r.id == user_id,
            _ => c.query_opt("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?", params![r.id, user_id])?.is_some(),
        };
        if hit {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A team reviewer with its organization's login.
pub fn team(c: &mut dyn Conn, id: i64) -> Result<Option<(accounts::Team, String)>, DbError> {
    let r = c.query_opt(
        "SELECT t.id, t.org_id, t.name, t.slug, t.description, t.privacy, o.login FROM teams t JOIN accounts o ON o.id = t.org_id WHERE t.id = ?",
        params![id],
    )?;
    Ok(r.map(|r| {
        let t = accounts::Team {
            id: r.i64(0),
            org_id: r.i64(1),
            name: r.string(2),
            slug: r.string(3),
            description: r.opt_string(4),
            privacy: r.string(5),
        };
        (t, r.string(6))
    }))
}

/// A team of an organization by slug.
pub fn team_by_slug(c: &mut dyn Conn, org_id: i64, slug: &str) -> Result<Option<i64>, DbError> {
    Ok(c.query_opt("SELECT id FROM teams WHERE org_id = ? AND slug = ?", params![org_id, slug])?.map(|r| r.i64(0)))
}

#[derive(Clone, Debug)]
pub struct Gate {
    pub environment_id: i64,
    /// `waiting`, `approved`, `rejected` or `cancelled`.
    pub state: String,
    pub wait_timer_started_at: i64,
    pub ready_at: Option<i64>,
}

fn gates(c: &mut dyn Conn, run_id: i64, attempt: i64) -> Result<Vec<Gate>, DbError> {
    let rows = c.query(
        "SELECT environment_id, state, wait_timer_started_at, ready_at FROM run_gates WHERE run_id = ? AND attempt = ? ORDER BY wait_timer_started_at, environment_id",
        params![run_id, attempt],
    )?;
    Ok(rows
        .iter()
        .map(|r| Gate { environment_id: r.i64(0), state: r.string(1), wait_timer_started_at: r.i64(2), ready_at: r.opt_i64(3) })
        .collect())
}

pub fn save_gate(c: &mut dyn Conn, run_id: i64, attempt: i64, g: &Gate) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO run_gates (run_id, attempt, environment_id, state, wait_timer_started_at, ready_at) VALUES (?, ?, ?, ?, ?, ?) \
         ON CONFLICT (run_id, attempt, environment_id) DO UPDATE SET state = excluded.state, ready_at = excluded.ready_at",
        params![run_id, attempt, g.environment_id, &g.state, g.wait_timer_started_at, g.ready_at],
    )?;
    Ok(())
}

/// An environment the run's latest attempt waits for: a pending deployment.
#[derive(Clone, Debug)]
pub struct Pending {
    pub environment: Environment,
    pub gate: Gate,
    pub reviewers: Vec<Reviewer>,
}

pub fn pending(c: &mut dyn Conn, run: &Run) -> Result<Vec<Pending>, DbError> {
    if run.completed() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for g in gates(c, run.id, run.run_attempt)?.into_iter().filter(|g| g.state == "waiting") {
        let Some(environment) = environment(c, g.environment_id)? else { continue };
        let reviewers = reviewers(c, environment.id)?;
        out.push(Pending { environment, gate: g, reviewers });
    }
    Ok(out)
}

#[derive(Clone, Debug)]
pub struct Deployment {
    pub id: i64,
    pub repo_id: i64,
    pub environment: String,
    pub sha: String,
    pub r#ref: String,
    pub creator: Option<Account>,
    pub created_at: i64,
}

pub fn create_deployment(c: &mut dyn Conn, run: &Run, env: &Environment, creator: &Account, now: i64) -> Result<Deployment, DbError> {
    let r#ref = run.head_branch.clone().unwrap_or_else(|| run.head_sha.clone());
    let id = c.query_i64(
        "INSERT INTO deployments (repo_id, run_id, environment, sha, ref, creator_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![run.repo_id, run.id, &env.name, &run.head_sha, &r#ref, creator.id, now, now],
    )?;
    Ok(Deployment {
        id,
        repo_id: run.repo_id,
        environment: env.name.clone(),
        sha: run.head_sha.clone(),
        r#ref,
        creator: Some(creator.clone()),
        created_at: now,
    })
}

/// A status of a deployment: `queued` or `waiting` when an approval creates it, then
/// `in_progress` and a final `success` or `failure` as its job moves.
#[derive(Clone, Debug)]
pub struct DeploymentStatus {
    pub id: i64,
    pub deployment_id: i64,
    pub state: String,
    pub creator: Option<Account>,
    pub created_at: i64,
}

/// The states after which a deployment gets no more statuses.
pub const FINAL_DEPLOYMENT_STATES: [&str; 3] = ["success", "failure", "error"];

pub fn add_deployment_status(c: &mut dyn Conn, d: &Deployment, state: &str, now: i64) -> Result<DeploymentStatus, DbError> {
    let creator_id = d.creator.as_ref().map(|a| a.id);
    let id = c.query_i64(
        "INSERT INTO deployment_statuses (deployment_id, state, creator_id, created_at) VALUES (?, ?, ?, ?) RETURNING id",
        params![d.id, state, creator_id, now],
    )?;
    c.execute("UPDATE deployments SET updated_at = ? WHERE id = ?", params![now, d.id])?;
    Ok(DeploymentStatus { id, deployment_id: d.id, state: state.into(), creator: d.creator.clone(), created_at: now })
}

/// The run's latest deployment to `environment` still in progress (no final status yet): the
/// one its job's transitions move.
pub fn open_deployment(c: &mut dyn Conn, run_id: i64, environment: &str) -> Result<Option<Deployment>, DbError> {
    let sql = format!(
        "SELECT d.id, d.repo_id, d.environment, d.sha, d.ref, d.created_at, {} FROM deployments d LEFT JOIN accounts a ON a.id = d.creator_id \
         WHERE d.run_id = ? AND d.environment = ? AND NOT EXISTS (SELECT 1 FROM deployment_statuses s WHERE s.deployment_id = d.id \
         AND s.state IN (?, ?, ?)) ORDER BY d.id DESC LIMIT 1",
        accounts::COLS
    );
    let [a, b, f] = FINAL_DEPLOYMENT_STATES;
    let row = c.query_opt(&sql, params![run_id, environment, a, b, f])?;
    Ok(row.map(|r| Deployment {
        id: r.i64(0),
        repo_id: r.i64(1),
        environment: r.string(2),
        sha: r.string(3),
        r#ref: r.string(4),
        created_at: r.i64(5),
        creator: r.opt_i64(6).map(|_| accounts::from_row(&r, 6)),
    }))
}

/// A review of pending deployments (the review history).
#[derive(Clone, Debug)]
pub struct Review {
    pub id: i64,
    pub user: Account,
    pub state: String,
    pub comment: String,
    pub environments: Vec<Environment>,
    pub created_at: i64,
}

/// Approves or rejects the run's waiting gates of `environment_ids` for `user` (the caller checked
/// they are pending and the user may review them); approvals create deployments, each with its
/// first status. The caller then settles the run.
pub fn review(
    c: &mut dyn Conn,
    run: &Run,
    user: &Account,
    environment_ids: &[i64],
    state: &str,
    comment: &str,
    now: i64,
) -> Result<Vec<(Deployment, DeploymentStatus)>, DbError> {
    let mut out = Vec::new();
    for mut g in gates(c, run.id, run.run_attempt)?.into_iter().filter(|g| environment_ids.contains(&g.environment_id)) {
        let env = environment(c, g.environment_id)?.ok_or_else(|| DbError::other("environment vanished"))?;
        if state == "approved" {
            g.state = "approved".into();
            g.ready_at = Some(now.max(g.wait_timer_started_at + env.wait_timer * 60));
            let d = create_deployment(c, run, &env, user, now)?;
            // A wait timer still running holds the job: the deployment waits, else it is queued.
            let state = if g.ready_at.is_some_and(|r| r > now) { "waiting" } else { "queued" };
            let status = add_deployment_status(c, &d, state, now)?;
            out.push((d, status));
        } else {
            g.state = "rejected".into();
        }
        save_gate(c, run.id, run.run_attempt, &g)?;
    }
    c.execute(
        "INSERT INTO run_reviews (run_id, user_id, state, comment, environment_ids, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        params![run.id, user.id, state, comment, json!(environment_ids).to_string(), now],
    )?;
    Ok(out)
}

pub fn reviews(c: &mut dyn Conn, run_id: i64) -> Result<Vec<Review>, DbError> {
    let sql = format!(
        "SELECT v.id, v.state, v.comment, v.environment_ids, v.created_at, {} FROM run_reviews v JOIN accounts a ON a.id = v.user_id \
         WHERE v.run_id = ? ORDER BY v.id",
        accounts::COLS
    );
    let rows = c.query(&sql, params![run_id])?;
    let mut out = Vec::new();
    for r in rows {
        let ids: Vec<i64> = serde_json::from_value(json_col(&r, 3)).unwrap_or_default();
        let mut environments = Vec::new();
        for id in ids {
            if let Some(e) = environment(c, id)? {
                environments.push(e);
            }
        }
        out.push(Review {
            id: r.i64(0),
            state: r.string(1),
            comment: r.string(2),
            created_at: r.i64(4),
            user: accounts::from_row(&r, 5),
            environments,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Changing runs: the reads and writes of the run state machine.

/// A run loaded for change: its row (locked for the transaction), its latest attempt's jobs and gates.
pub struct Live {
    pub run: Run,
    pub jobs: Vec<Job>,
    pub gates: Vec<Gate>,
}

pub fn load_live(c: &mut dyn Conn, id: i64) -> Result<Option<Live>, DbError> {
    if !lock(c, id)? {
        return Ok(None);
    }
    let Some(run) = get_any(c, id)? else { return Ok(None) };
    let jobs = jobs(c, id, run.run_attempt)?;
    let gates = gates(c, id, run.run_attempt)?;
    Ok(Some(Live { run, jobs, gates }))
}

/// Takes the run's row lock (to the end of the transaction), so concurrent settlers on
/// PostgreSQL act one after the other; `false`: no such run.
pub fn lock(c: &mut dyn Conn, id: i64) -> Result<bool, DbError> {
    Ok(crate::lock::rows(c, "workflow_runs", "id = ?", params![id])? > 0)
}

/// Writes a run loaded for change back: its row, and the jobs that changed.
pub fn save_live(c: &mut dyn Conn, live: &mut Live) -> Result<(), DbError> {
    let r = &live.run;
    c.execute(
        "UPDATE workflow_runs SET run_attempt = ?, triggering_actor_id = ?, status = ?, conclusion = ?, needs_approval = ?, \
         start_at = ?, run_started_at = ?, completed_at = ?, due_at = ?, debug_logging = ?, updated_at = ? WHERE id = ?",
        params![
            r.run_attempt,
            r.triggering_actor.id,
            &r.status,
            r.conclusion.as_deref(),
            r.needs_approval,
            r.start_at,
            r.run_started_at,
            r.completed_at,
            r.due_at,
            r.debug_logging,
            r.updated_at,
            r.id
        ],
    )?;
    for j in live.jobs.iter_mut().filter(|j| j.dirty) {
        c.execute(
            "UPDATE run_jobs SET status = ?, conclusion = ?, started_at = ?, completed_at = ?, duration = ? WHERE id = ?",
            params![&j.status, j.conclusion.as_deref(), j.started_at, j.completed_at, j.duration, j.id],
        )?;
        j.dirty = false;
    }
    Ok(())
}

/// The runs with a transition due by `now` (of one repository, or all), most overdue first.
pub fn due_runs(c: &mut dyn Conn, repo_id: Option<i64>, now: i64) -> Result<Vec<i64>, DbError> {
    let rows = match repo_id {
        Some(r) => c.query("SELECT id FROM workflow_runs WHERE repo_id = ? AND due_at <= ? ORDER BY due_at LIMIT 500", params![r, now])?,
        None => c.query("SELECT id FROM workflow_runs WHERE due_at <= ? ORDER BY due_at LIMIT 500", params![now])?,
    };
    Ok(rows.iter().map(|r| r.i64(0)).collect())
}

/// Records a new attempt of a completed run: the current one kept as a snapshot, and every job
/// planned again in attempt `run_attempt + 1`, those not in `repeat` carrying their result.
/// Returns the new attempt's number (the caller sets the run's row).
pub fn start_attempt(c: &mut dyn Conn, live: &Live, repeat: &[String], now: i64) -> Result<i64, DbError> {
    let (id, r) = (live.run.id, &live.run);
    c.execute(
        "INSERT INTO run_attempts (run_id, attempt, status, conclusion, triggering_actor_id, run_started_at, completed_at, debug_logging, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![r.id, r.run_attempt, &r.status, r.conclusion.as_deref(), r.triggering_actor.id, r.run_started_at, r.completed_at, r.debug_logging, r.updated_at],
    )?;
    let attempt = r.run_attempt + 1;
    for (i, j) in live.jobs.iter().enumerate() {
        let plan = NewJob {
            name: j.name.clone(),
            needs: j.needs.clone(),
            outcomes: j.outcomes.clone(),
            steps: j.steps.clone(),
            runner_os: j.runner_os.clone(),
            duration: j.planned,
            log: j.log.clone(),
            environment_id: j.environment_id,
        };
        let new_id = insert_job(c, id, attempt, i as i64, &plan, now)?;
        if !repeat.contains(&j.name) {
            c.execute(
                "UPDATE run_jobs SET status = ?, conclusion = ?, started_at = ?, completed_at = ?, carried_from = ? WHERE id = ?",
                params![&j.status, j.conclusion.as_deref(), j.started_at, j.completed_at, j.carried_from.unwrap_or(j.id), new_id],
            )?;
        }
    }
    Ok(attempt)
}

/// Deletes a run with its attempts, jobs, gates and reviews, under the run's row lock: taken
/// first, as a settler takes it before the jobs (the other order deadlocks with one).
pub fn delete(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    lock(c, id)?;
    for table in ["run_jobs", "run_attempts", "run_gates", "run_reviews"] {
        c.execute(&format!("DELETE FROM {table} WHERE run_id = ?"), params![id])?;
    }
    c.execute("DELETE FROM workflow_runs WHERE id = ?", params![id])?;
    Ok(())
}

pub fn delete_logs(c: &mut dyn Conn, id: i64, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE workflow_runs SET logs_deleted = ?, updated_at = ? WHERE id = ?", params![true, now, id])?;
    Ok(())
}
