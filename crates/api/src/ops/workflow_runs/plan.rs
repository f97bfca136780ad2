//! Control-plane plans: `POST /_admin/repos/{owner}/{repo}/runs` and the seed file's `[[runs]]`
//! create a run from a plan (workflow, trigger, jobs with `needs`, runner, duration, planned
//! outcome per attempt, log, optional environment gate); `[[run_batches]]` bulk-inserts completed
//! runs (benchmarks, fuzzing worlds). `POST /_admin/runs/{run_id}/advance` moves a run one step.
use platform_store::domain::accounts;
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::workflow_runs::{self as runs, NewJob, NewRun, PastRun, Reviewer, OUTCOMES};
use platform_store::Conn;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::ops::provision;

type R<T> = Result<T, ApiError>;

fn invalid(field: &str, message: String) -> ApiError {
    ApiError::invalid_field("WorkflowRun", field, "invalid", Some(message))
}

/// One value or a list (a job's outcome per attempt).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Clone)]
pub struct ReviewerIn {
    /// `User` or `Team`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A user's login (`User`).
    pub login: Option<String>,
    /// A team's slug in the repository's organization (`Team`).
    pub slug: Option<String>,
}

#[derive(Deserialize, Clone)]
pub struct EnvironmentIn {
    pub name: String,
    #[serde(default)]
    pub reviewers: Vec<ReviewerIn>,
    /// Minutes a job waits at the environment (0–43200).
    #[serde(default)]
    pub wait_timer: i64,
    /// Named by a workflow file: an existing environment is used as configured (reviewers, wait
    /// timer); a new one is created without either.
    #[serde(skip)]
    pub as_configured: bool,
}

#[derive(Deserialize, Clone)]
pub struct JobIn {
    pub name: String,
    #[serde(default)]
    pub needs: Vec<String>,
    /// `ubuntu` (default), `macos` or `windows` (a `-latest` suffix is accepted).
    pub runs_on: Option<String>,
    /// Seconds the job runs (default 60).
    pub duration_seconds: Option<i64>,
    /// Planned conclusion, or one per attempt (the last repeats); default `success`.
    pub outcome: Option<OneOrMany>,
    pub log: Option<String>,
    pub steps: Option<Vec<String>>,
    pub environment: Option<EnvironmentIn>,
}

#[derive(Deserialize, Clone)]
pub struct PlanIn {
    /// Workflow file path, e.g. `.workflows/ci.yml`.
    pub workflow: String,
    /// Workflow name (default: the file name without extension).
    pub name: Option<String>,
    pub event: Option<String>,
    /// Default: the repository's default branch.
    pub branch: Option<String>,
    /// Default: the branch's head.
    pub head_sha: Option<String>,
    /// Default: the repository's owner when a user.
    pub actor: Option<String>,
    pub triggering_actor: Option<String>,
    pub message: Option<String>,
    pub display_title: Option<String>,
    #[serde(default)]
    pub pull_requests: Vec<i64>,
    /// A fork pull request's run: waits for approval (`action_required`).
    #[serde(default)]
    pub fork: bool,
    /// Seconds between queued and started (default 5).
    pub queue_seconds: Option<i64>,
    pub jobs: Option<Vec<JobIn>>,
}

fn runner_os(given: Option<&str>) -> R<String> {
    let g = given.unwrap_or("ubuntu").to_lowercase();
    let os = g.strip_suffix("-latest").unwrap_or(&g);
    match os {
        "ubuntu" | "linux" => Ok("UBUNTU".into()),
        "macos" => Ok("MACOS".into()),
        "windows" => Ok("WINDOWS".into()),
        _ => Err(invalid("runs_on", format!("unknown runner {given:?}: use ubuntu, macos or windows"))),
    }
}

fn environment(c: &mut dyn Conn, repo: &Repo, e: &EnvironmentIn, now: i64) -> R<i64> {
    if e.name.trim().is_empty() || e.name.len() > 255 {
        return Err(invalid("environment", "environment name is empty or too long".into()));
    }
    if e.as_configured {
        if let Some(existing) = runs::environment_named(c, repo.id, e.name.trim())? {
            return Ok(existing.id);
        }
    }
    if !(0..=43_200).contains(&e.wait_timer) {
        return Err(invalid("wait_timer", "wait_timer is minutes from 0 to 43200".into()));
    }
    let mut reviewers = Vec::new();
    for r in &e.reviewers {
        let reviewer = match (r.kind.as_str(), &r.login, &r.slug) {
            ("User", Some(login), _) => Reviewer { kind: "User".into(), id: provision::user(c, login)?.id },
            ("Team", _, Some(slug)) if repo.owner.is_org() => {
                let id = runs::team_by_slug(c, repo.owner.id, slug)?
                    .ok_or_else(|| invalid("reviewers", format!("no team {slug:?} in {}", repo.owner.login)))?;
                Reviewer { kind: "Team".into(), id }
            }
            _ => {
                return Err(invalid(
                    "reviewers",
                    "a reviewer is {type: User, login} or {type: Team, slug} (teams of the owning organization)".into(),
                ))
            }
        };
        reviewers.push(reviewer);
    }
    if reviewers.len() > 6 {
        return Err(invalid("reviewers", "at most 6 required reviewers".into()));
    }
    Ok(runs::put_environment(c, repo.id, e.name.trim(), e.wait_timer, &reviewers, now)?.id)
}

/// Checks the jobs (unique names, known needs, no cycle) and creates their environments.
fn jobs(c: &mut dyn Conn, repo: &Repo, given: &[JobIn], now: i64) -> R<Vec<NewJob>> {
    if given.is_empty() || given.len() > 256 {
        return Err(invalid("jobs", "a plan has 1 to 256 jobs".into()));
    }
    let mut out: Vec<NewJob> = Vec::new();
    for j in given {
        if j.name.trim().is_empty() || given.iter().filter(|o| o.name == j.name).count() > 1 {
            return Err(invalid("jobs", format!("job names must be unique and not empty: {:?}", j.name)));
        }
        if let Some(n) = j.needs.iter().find(|n| *n == &j.name || !given.iter().any(|o| &o.name == *n)) {
            return Err(invalid("needs", format!("job {:?} needs unknown job {n:?}", j.name)));
        }
        let outcomes = match &j.outcome {
            None => vec!["success".to_string()],
            Some(OneOrMany::One(o)) => vec![o.clone()],
            Some(OneOrMany::Many(v)) => v.clone(),
        };
        if outcomes.is_empty() || outcomes.iter().any(|o| !OUTCOMES.contains(&o.as_str())) {
            return Err(invalid("outcome", format!("outcomes are among {}", OUTCOMES.join(", "))));
        }
        let duration = j.duration_seconds.unwrap_or(60);
        if !(0..=30 * 86_400).contains(&duration) {
            return Err(invalid("duration_seconds", "duration_seconds is from 0 to 2592000".into()));
        }
        let environment_id = match &j.environment {
            Some(e) => Some(environment(c, repo, e, now)?),
            None => None,
        };
        out.push(NewJob {
            name: j.name.clone(),
            needs: j.needs.clone(),
            outcomes,
            steps: j.steps.clone().unwrap_or_default(),
            runner_os: runner_os(j.runs_on.as_deref())?,
            duration,
            log: j.log.clone().unwrap_or_else(|| format!("Running {}\nDone", j.name)),
            environment_id,
        });
    }
    // Kahn's algorithm: every job must become ready.
    let mut done: Vec<&str> = Vec::new();
    while done.len() < out.len() {
        let ready: Vec<&str> = out
            .iter()
            .filter(|j| !done.contains(&j.name.as_str()) && j.needs.iter().all(|n| done.contains(&n.as_str())))
            .map(|j| j.name.as_str())
            .collect();
        if ready.is_empty() {
            return Err(invalid("needs", "the jobs' needs form a cycle".into()));
        }
        done.extend(ready);
    }
    Ok(out)
}

fn workflow_name(path: &str, given: Option<&str>) -> String {
    given.map(Into::into).unwrap_or_else(|| {
        let file = path.rsplit('/').next().unwrap_or(path);
        file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file).to_string()
    })
}

fn check_workflow(path: &str) -> R<()> {
    if path.is_empty() || path.len() > 255 || !(path.ends_with(".yml") || path.ends_with(".yaml")) || path.starts_with('/') {
        return Err(invalid("workflow", "workflow is the path of a .yml or .yaml file".into()));
    }
    Ok(())
}

/// The actor of a plan: the given user, else the repository's owner when a user.
fn actor(c: &mut dyn Conn, repo: &Repo, login: Option<&str>) -> R<accounts::Account> {
    match login {
        Some(l) => provision::user(c, l),
        None if !repo.owner.is_org() => Ok(repo.owner.clone()),
        None => Err(ApiError::invalid_field(
            "WorkflowRun",
            "actor",
            "missing_field",
            Some("actor is required for organization repositories".into()),
        )),
    }
}

/// Creates a run from a plan at `now`; returns its id.
pub fn create(c: &mut dyn Conn, repo: &Repo, p: &PlanIn, now: i64) -> R<i64> {
    check_workflow(&p.workflow)?;
    let branch = p.branch.clone().unwrap_or_else(|| repo.default_branch.clone());
    let head_sha = match &p.head_sha {
        Some(s) if platform_core::ids::is_sha(s) => s.to_lowercase(),
        Some(_) => return Err(invalid("head_sha", "head_sha must be 40 hexadecimal characters".into())),
        None => repos::resolve_ref(c, repo.id, &format!("heads/{branch}"))?
            .ok_or_else(|| invalid("head_sha", format!("branch {branch:?} has no commit; push it or give head_sha")))?,
    };
    let actor = actor(c, repo, p.actor.as_deref())?;
    let triggering = match &p.triggering_actor {
        Some(l) => provision::user(c, l)?,
        None => actor.clone(),
    };
    let event = p.event.clone().unwrap_or_else(|| "push".into());
    if event.is_empty() || event.len() > 100 {
        return Err(invalid("event", "event is required".into()));
    }
    let queue_seconds = p.queue_seconds.unwrap_or(5);
    if !(0..=86_400).contains(&queue_seconds) {
        return Err(invalid("queue_seconds", "queue_seconds is from 0 to 86400".into()));
    }
    let default_jobs = [JobIn {
        name: "build".into(),
        needs: vec![],
        runs_on: None,
        duration_seconds: None,
        outcome: None,
        log: None,
        steps: None,
        environment: None,
    }];
    let jobs = jobs(c, repo, p.jobs.as_deref().unwrap_or(&default_jobs), now)?;
    let file = p.workflow.rsplit('/').next().unwrap_or(&p.workflow).to_string();
    let message = p.message.clone().unwrap_or_else(|| format!("Update {file}"));
    let title = p.display_title.clone().unwrap_or_else(|| message.lines().next().unwrap_or("").to_string());
    let base_sha = repos::resolve_ref(c, repo.id, &format!("heads/{}", repo.default_branch))?.unwrap_or_else(|| head_sha.clone());
    let prs: Vec<Value> = p
        .pull_requests
        .iter()
        .map(|n| json!({"number": n, "head_ref": branch, "head_sha": head_sha, "base_ref": repo.default_branch, "base_sha": base_sha}))
        .collect();
    let head_commit =
        json!({"message": message, "timestamp": now, "author": null, "committer": {"name": "Service", "email": "noreply@service.example"}});
    let name = workflow_name(&p.workflow, p.name.as_deref());
    let n = NewRun {
        repo_id: repo.id,
        workflow_path: &p.workflow,
        workflow_name: &name,
        event: &event,
        head_branch: Some(&branch),
        head_sha: &head_sha,
        head_commit: &head_commit,
        display_title: &title,
        pull_requests: &Value::Array(prs),
        actor_id: actor.id,
        triggering_actor_id: triggering.id,
        needs_approval: p.fork,
        queue_seconds,
        jobs: &jobs,
    };
    Ok(runs::create(c, &n, now)?)
}

/// `[[run_batches]]`: `count` completed runs of one workflow, cycling through the given branches,
/// conclusions and events, one `spacing_seconds` apart and ending now.
#[derive(Deserialize)]
pub struct BatchIn {
    /// `owner/name`.
    pub repo: String,
    pub workflow: String,
    pub name: Option<String>,
    pub count: i64,
    pub actor: Option<String>,
    #[serde(default)]
    pub branches: Vec<String>,
    #[serde(default)]
    pub conclusions: Vec<String>,
    #[serde(default)]
    pub events: Vec<String>,
    pub runs_on: Option<String>,
    pub duration_seconds: Option<i64>,
    pub spacing_seconds: Option<i64>,
}

pub fn batch(c: &mut dyn Conn, b: &BatchIn, now: i64) -> R<usize> {
    let repo = provision::repo(c, &b.repo)?;
    check_workflow(&b.workflow)?;
    if !(1..=1_000_000).contains(&b.count) {
        return Err(invalid("count", "count is from 1 to 1000000".into()));
    }
    let actor = actor(c, &repo, b.actor.as_deref())?;
    let or = |v: &Vec<String>, d: &str| if v.is_empty() { vec![d.to_string()] } else { v.clone() };
    let branches = or(&b.branches, &repo.default_branch);
    let conclusions = or(&b.conclusions, "success");
    if conclusions.iter().any(|o| !OUTCOMES.contains(&o.as_str())) {
        return Err(invalid("conclusions", format!("conclusions are among {}", OUTCOMES.join(", "))));
    }
    let events = or(&b.events, "push");
    let spacing = b.spacing_seconds.unwrap_or(60).max(0);
    let duration = b.duration_seconds.unwrap_or(60).clamp(0, 30 * 86_400);
    let shas: Vec<String> = (0..b.count).map(|i| format!("{:040x}", i + 1)).collect();
    let past: Vec<PastRun> = (0..b.count as usize)
        .map(|i| PastRun {
            head_branch: &branches[i % branches.len()],
            head_sha: &shas[i],
            event: &events[i % events.len()],
            conclusion: &conclusions[(i / branches.len()) % conclusions.len()],
            created_at: now - (b.count - i as i64) * spacing - duration,
        })
        .collect();
    let job = NewJob {
        name: "build".into(),
        needs: vec![],
        outcomes: vec![],
        steps: vec![],
        runner_os: runner_os(b.runs_on.as_deref())?,
        duration,
        log: "Running build\nDone".into(),
        environment_id: None,
    };
    let name = workflow_name(&b.workflow, b.name.as_deref());
    Ok(runs::insert_past(c, repo.id, (&b.workflow, &name), actor.id, &job, &past, now)?)
}

// ---------------------------------------------------------------------------------------------
// Control-plane handlers.

use crate::error::ApiResult;
use crate::reply::Reply;
use crate::request::JsonBody;
use crate::state::Shared;
use axum::extract::{Path, State};

fn run_reply(app: &Shared, repo: &Repo, run: &runs::Run, status: axum::http::StatusCode) -> Reply {
    Reply::json(status, super::shapes::run(&app.urls, platform_core::ApiVersion::DEFAULT, repo, run, false))
}

/// `POST /_admin/repos/{owner}/{repo}/runs`: a plan → 201 the run (settled at once, so a plan
/// with `queue_seconds: 0` has already started).
pub async fn admin_create(
    State(app): State<Shared>,
    Path((owner, name)): Path<(String, String)>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let p: PlanIn = serde_json::from_value(b).map_err(ApiError::invalid_request)?;
    let (now, u) = (app.clock.now(), app.urls.clone());
    let (repo, run) = app
        .store
        .write(move |c| -> R<_> {
            let repo = provision::repo(c, &format!("{owner}/{name}"))?;
            let id = create(c, &repo, &p, now)?;
            super::engine::record_requested(c, &u, &repo, id, now)?;
            super::engine::settle_one(c, &u, id, now)?;
            let run = runs::get(c, repo.id, id)?.ok_or_else(ApiError::internal)?;
            Ok((repo, run))
        })
        .await?;
    Ok(run_reply(&app, &repo, &run, axum::http::StatusCode::CREATED))
}

/// `POST /_admin/runs/{run_id}/advance`: the run's next scheduled transition happens now →
/// 200 the run; 409 when nothing is scheduled (completed, or waiting for a review).
pub async fn admin_advance(State(app): State<Shared>, Path(id): Path<String>) -> ApiResult<Reply> {
    let id: i64 = id.parse().map_err(|_| ApiError::not_found())?;
    let (now, u) = (app.clock.now(), app.urls.clone());
    let (repo, run) = app
        .store
        .write(move |c| -> R<_> {
            let repo_id = c
                .query_opt("SELECT repo_id FROM workflow_runs WHERE id = ?", platform_store::params![id])?
                .map(|r| r.i64(0))
                .ok_or_else(ApiError::not_found)?;
            let before = super::engine::statuses(c, id)?;
            match super::machine::advance(c, id, now)? {
                Ok(_) => super::engine::record_changes(c, &u, &before, now)?,
                Err(_) => {
                    return Err(ApiError::new(
                        axum::http::StatusCode::CONFLICT,
                        "The run has nothing scheduled: it has completed or waits for a review.",
                    ))
                }
            }
            let repo = repos::by_id(c, repo_id)?.ok_or_else(ApiError::not_found)?;
            let run = runs::get(c, repo_id, id)?.ok_or_else(ApiError::not_found)?;
            Ok::<_, ApiError>((repo, run))
        })
        .await?;
    Ok(run_reply(&app, &repo, &run, axum::http::StatusCode::OK))
}

/// `POST /_admin/repos/{owner}/{repo}/run_batches`: a `[[run_batches]]` body without `repo` →
/// 201 `{count}`.
pub async fn admin_batch(
    State(app): State<Shared>,
    Path((owner, name)): Path<(String, String)>,
    JsonBody(mut b): JsonBody,
) -> ApiResult<Reply> {
    b["repo"] = Value::String(format!("{owner}/{name}"));
    let batch_in: BatchIn = serde_json::from_value(b).map_err(ApiError::invalid_request)?;
    let now = app.clock.now();
    let count = app.store.write(move |c| batch(c, &batch_in, now)).await?;
    Ok(Reply::created(json!({ "count": count })))
}
