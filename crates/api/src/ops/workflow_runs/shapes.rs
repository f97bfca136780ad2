//! Response shapes of workflow runs (api-facts §4.5–4.6): WorkflowRun, jobs, PendingDeployment,
//! Deployment, EnvironmentApproval and WorkflowRunUsage, as types whose schemas are the
//! published components. Field order is the order bodies have always had.
use platform_core::ids::{node_id, sha256_hex};
use platform_core::ApiVersion;
use platform_store::domain::accounts::{Account, Team};
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs::{self as store, Environment, Review, Run};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::shapes::{minimal_repository, repo_api_url, simple_user, MinimalRepository, SimpleUser, Urls};
use crate::typed::{Timestamp, Uri};

pub fn run_url(u: &Urls, repo: &Repo, run_id: i64) -> String {
    format!("{}/actions/runs/{run_id}", repo_api_url(u, repo))
}

/// A head commit's author or committer.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Person {
    pub name: String,
    pub email: String,
}

/// What the control plane gave, with `name` and `email` (strings in the spec) filled from the
/// actor where it left them out.
fn person(given: &Value, actor: &Account) -> Person {
    let text = |k: &str| given.get(k).and_then(Value::as_str).map(str::to_string);
    let name = text("name").unwrap_or_else(|| actor.name.clone().unwrap_or_else(|| actor.login.clone()));
    let email =
        text("email").unwrap_or_else(|| actor.email.clone().unwrap_or_else(|| format!("{}@users.noreply.service.example", actor.login)));
    Person { name, email }
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct PullRequestRepo {
    pub id: i64,
    pub url: Uri,
    pub name: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct PullRequestRef {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub sha: String,
    pub repo: PullRequestRepo,
}

/// PullRequestMinimal.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct PullRequestMinimal {
    pub id: i64,
    pub number: i64,
    pub url: Uri,
    pub head: PullRequestRef,
    pub base: PullRequestRef,
}

/// Pull requests as the plan recorded them (`number`, `head_ref`, `head_sha`, `base_ref`, `base_sha`).
fn pull_requests(u: &Urls, repo: &Repo, prs: &Value) -> Vec<PullRequestMinimal> {
    let base = repo_api_url(u, repo);
    let side = |p: &Value, r: &str, s: &str| PullRequestRef {
        git_ref: p[r].as_str().unwrap_or_default().to_string(),
        sha: p[s].as_str().unwrap_or_default().to_string(),
        repo: PullRequestRepo { id: repo.id, url: Uri(base.clone()), name: repo.name.clone() },
    };
    let list = prs.as_array().map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .map(|p| {
            let n = p["number"].as_i64().unwrap_or(0);
            PullRequestMinimal {
                id: repo.id * 100_000 + n,
                number: n,
                url: Uri(format!("{base}/pulls/{n}")),
                head: side(p, "head_ref", "head_sha"),
                base: side(p, "base_ref", "base_sha"),
            }
        })
        .collect()
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct HeadCommit {
    pub id: String,
    pub tree_id: String,
    pub message: String,
    pub timestamp: Timestamp,
    pub author: Person,
    pub committer: Person,
}

/// A workflow run as of one attempt.
#[derive(Serialize, JsonSchema)]
pub struct WorkflowRun {
    #[serde(flatten)]
    pub run: RunFields,
    pub head_commit: HeadCommit,
    pub repository: MinimalRepository,
    pub head_repository: MinimalRepository,
    pub head_repository_id: i64,
}

/// A run's own fields: the REST run without its head commit and repositories (webhooks show
/// the repositories in their lite form, and a deployment's run no head commit).
#[derive(Serialize, JsonSchema)]
pub struct RunFields {
    pub id: i64,
    pub name: String,
    pub node_id: String,
    pub check_suite_id: i64,
    pub check_suite_node_id: String,
    /// Null for a run of a detached commit.
    pub head_branch: Option<String>,
    pub head_sha: String,
    pub path: String,
    pub run_number: i64,
    pub event: String,
    pub display_title: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub workflow_id: i64,
    pub url: Uri,
    pub html_url: Uri,
    /// Empty with `exclude_pull_requests`.
    pub pull_requests: Vec<PullRequestMinimal>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub actor: SimpleUser,
    pub run_attempt: i64,
    /// Always empty: reusable workflows are not modelled.
    pub referenced_workflows: Vec<ReferencedWorkflow>,
    pub run_started_at: Timestamp,
    pub triggering_actor: SimpleUser,
    pub jobs_url: Uri,
    pub logs_url: Uri,
    pub check_suite_url: Uri,
    pub artifacts_url: Uri,
    pub cancel_url: Uri,
    pub rerun_url: Uri,
    /// Null on the first attempt.
    pub previous_attempt_url: Option<Uri>,
    pub workflow_url: Uri,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ReferencedWorkflow {
    pub path: String,
    pub sha: String,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
}

/// The run as of its attempt `run.run_attempt`.
pub fn run(u: &Urls, v: ApiVersion, repo: &Repo, r: &Run, exclude_prs: bool) -> WorkflowRun {
    let base = repo_api_url(u, repo);
    let url = run_url(u, repo, r.id);
    let suite = r.check_suite_id();
    let c = &r.head_commit;
    let repository = minimal_repository(u, v, repo);
    let run = RunFields {
        id: r.id,
        name: r.workflow_name.clone(),
        node_id: node_id("WorkflowRun", r.id),
        check_suite_id: suite,
        check_suite_node_id: node_id("CheckSuite", suite),
        head_branch: r.head_branch.clone(),
        head_sha: r.head_sha.clone(),
        path: r.workflow_path.clone(),
        run_number: r.run_number,
        event: r.event.clone(),
        display_title: r.display_title.clone(),
        status: r.status.clone(),
        conclusion: r.conclusion.clone(),
        workflow_id: r.workflow_id,
        html_url: Uri(format!("{}/{}/actions/runs/{}", u.web, repo.full_name(), r.id)),
        pull_requests: if exclude_prs { Vec::new() } else { pull_requests(u, repo, &r.pull_requests) },
        created_at: Timestamp(r.created_at),
        updated_at: Timestamp(r.updated_at),
        actor: simple_user(u, &r.actor),
        run_attempt: r.run_attempt,
        referenced_workflows: Vec::new(),
        run_started_at: Timestamp(r.run_started_at.unwrap_or(r.created_at)),
        triggering_actor: simple_user(u, &r.triggering_actor),
        jobs_url: Uri(format!("{url}/jobs")),
        logs_url: Uri(format!("{url}/logs")),
        check_suite_url: Uri(format!("{base}/check-suites/{suite}")),
        artifacts_url: Uri(format!("{url}/artifacts")),
        cancel_url: Uri(format!("{url}/cancel")),
        rerun_url: Uri(format!("{url}/rerun")),
        previous_attempt_url: (r.run_attempt > 1).then(|| Uri(format!("{url}/attempts/{}", r.run_attempt - 1))),
        workflow_url: Uri(format!("{base}/actions/workflows/{}", r.workflow_id)),
        url: Uri(url),
    };
    let head_commit = HeadCommit {
        id: r.head_sha.clone(),
        tree_id: sha256_hex(format!("tree {}", r.head_sha).as_bytes())[..40].to_string(),
        message: c["message"].as_str().unwrap_or(&r.display_title).to_string(),
        timestamp: Timestamp(c["timestamp"].as_i64().unwrap_or(r.created_at)),
        author: person(&c["author"], &r.actor),
        committer: person(&c["committer"], &r.actor),
    };
    WorkflowRun { run, head_commit, head_repository: repository.clone(), repository, head_repository_id: repo.id }
}

/// A page of runs.
#[derive(Serialize, JsonSchema)]
pub struct WorkflowRunList {
    pub total_count: i64,
    pub workflow_runs: Vec<WorkflowRun>,
}

/// The runner label a job ran on.
fn label(os: &str) -> String {
    format!("{}-latest", os.to_lowercase())
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Step {
    pub name: String,
    pub status: &'static str,
    pub conclusion: Option<String>,
    pub number: i64,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
}

/// A job of an attempt.
#[derive(Serialize, JsonSchema)]
pub struct Job {
    pub id: i64,
    pub run_id: i64,
    pub workflow_name: String,
    pub head_branch: Option<String>,
    pub run_url: Uri,
    pub run_attempt: i64,
    pub node_id: String,
    pub head_sha: String,
    pub url: Uri,
    pub html_url: Uri,
    pub status: String,
    pub conclusion: Option<String>,
    pub created_at: Timestamp,
    pub started_at: Timestamp,
    pub completed_at: Option<Timestamp>,
    pub name: String,
    /// Empty while the job is queued; the steps share its duration.
    pub steps: Vec<Step>,
    pub check_run_url: Uri,
    pub labels: Vec<String>,
    /// The runner fields are null until the job starts.
    pub runner_id: Option<i64>,
    pub runner_name: Option<String>,
    pub runner_group_id: Option<i64>,
    pub runner_group_name: Option<&'static str>,
}

/// A page of an attempt's jobs.
#[derive(Serialize, JsonSchema)]
pub struct JobList {
    pub total_count: i64,
    pub jobs: Vec<Job>,
}

/// A job's step names: the planned ones, or set-up, run and complete.
pub fn step_names(j: &store::Job) -> Vec<String> {
    if j.steps.is_empty() {
        vec!["Set up job".into(), format!("Run {}", j.name), "Complete job".into()]
    } else {
        j.steps.clone()
    }
}

/// The step that does the job's work: the last one before completion. It writes the job's log,
/// and a job that fails fails there (as hosted: later steps are skipped, completion succeeds).
pub fn work_step(names: &[String]) -> usize {
    names.iter().rposition(|s| s != "Complete job").unwrap_or(0)
}

fn steps(j: &store::Job) -> Vec<Step> {
    let names = step_names(j);
    let work = work_step(&names);
    let n = names.len() as i64;
    let s = match (j.status.as_str(), j.started_at) {
        ("in_progress", Some(s)) | ("completed", Some(s)) => s,
        _ => return Vec::new(),
    };
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let (from, to) = (s + j.duration * i as i64 / n, s + j.duration * (i as i64 + 1) / n);
            let (status, conclusion) = if j.status == "completed" {
                let c = match j.conclusion.as_deref() {
                    Some("failure" | "timed_out") if i < work || name == "Complete job" => "success",
                    Some("failure" | "timed_out") if i > work => "skipped",
                    other => other.unwrap_or("success"),
                };
                ("completed", Some(c.to_string()))
            } else if i == 0 {
                ("in_progress", None)
            } else {
                ("queued", None)
            };
            let done = status == "completed";
            Step {
                name,
                status,
                conclusion,
                number: i as i64 + 1,
                started_at: (status != "queued").then_some(Timestamp(from)),
                completed_at: done.then_some(Timestamp(to)),
            }
        })
        .collect()
}

pub fn job(u: &Urls, repo: &Repo, run: &Run, j: &store::Job) -> Job {
    let base = repo_api_url(u, repo);
    Job {
        id: j.id,
        run_id: run.id,
        workflow_name: run.workflow_name.clone(),
        head_branch: run.head_branch.clone(),
        run_url: Uri(run_url(u, repo, run.id)),
        run_attempt: j.attempt,
        node_id: node_id("CheckRun", j.id),
        head_sha: run.head_sha.clone(),
        url: Uri(format!("{base}/actions/jobs/{}", j.id)),
        html_url: Uri(format!("{}/{}/actions/runs/{}/job/{}", u.web, repo.full_name(), run.id, j.id)),
        status: j.status.clone(),
        conclusion: j.conclusion.clone(),
        created_at: Timestamp(j.created_at),
        started_at: Timestamp(j.started_at.unwrap_or(j.created_at)),
        completed_at: j.completed_at.map(Timestamp),
        name: j.name.clone(),
        steps: steps(j),
        check_run_url: Uri(format!("{base}/check-runs/{}", j.id)),
        labels: vec![label(&j.runner_os)],
        runner_id: j.started_at.map(|_| 1),
        runner_name: j.started_at.map(|_| format!("Service Actions {}", j.id)),
        runner_group_id: j.started_at.map(|_| 1),
        runner_group_name: j.started_at.map(|_| "Service Actions"),
    }
}

/// An environment as runs name it.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct EnvironmentRef {
    pub id: i64,
    pub node_id: String,
    pub name: String,
    pub url: Uri,
    pub html_url: Uri,
}

pub fn environment(u: &Urls, repo: &Repo, e: &Environment) -> EnvironmentRef {
    let name = crate::request::percent_encode(&e.name);
    EnvironmentRef {
        id: e.id,
        node_id: node_id("Environment", e.id),
        name: e.name.clone(),
        url: Uri(format!("{}/environments/{name}", repo_api_url(u, repo))),
        html_url: Uri(format!("{}/{}/deployments/activity_log?environments_filter={name}", u.web, repo.full_name())),
    }
}

/// A team as a required reviewer.
#[derive(Serialize, JsonSchema)]
pub struct DeploymentTeam {
    pub id: i64,
    pub node_id: String,
    pub url: Uri,
    pub html_url: Uri,
    pub name: String,
    pub slug: String,
    pub description: Option<String>,
    pub privacy: String,
    pub notification_setting: &'static str,
    pub permission: &'static str,
    pub members_url: String,
    pub repositories_url: Uri,
    /// Always null: teams are not nested.
    pub parent: (),
    #[serde(rename = "type")]
    pub kind: &'static str,
}

pub fn team(u: &Urls, t: &Team, org_login: &str) -> DeploymentTeam {
    DeploymentTeam {
        id: t.id,
        node_id: node_id("Team", t.id),
        url: Uri(format!("{}/teams/{}", u.api, t.id)),
        html_url: Uri(format!("{}/orgs/{org_login}/teams/{}", u.web, t.slug)),
        name: t.name.clone(),
        slug: t.slug.clone(),
        description: t.description.clone(),
        privacy: t.privacy.clone(),
        notification_setting: "notifications_enabled",
        permission: "pull",
        members_url: format!("{}/teams/{}/members{{/member}}", u.api, t.id),
        repositories_url: Uri(format!("{}/teams/{}/repos", u.api, t.id)),
        parent: (),
        kind: "organization",
    }
}

/// A required reviewer: a user or a team.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum Reviewer {
    User(SimpleUser),
    Team(DeploymentTeam),
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct PendingReviewer {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["User", "Team"]))]
    pub kind: String,
    pub reviewer: Reviewer,
}

/// An environment a run waits for.
#[derive(Serialize, JsonSchema)]
pub struct PendingDeployment {
    pub environment: EnvironmentRef,
    pub wait_timer: i64,
    pub wait_timer_started_at: Timestamp,
    pub current_user_can_approve: bool,
    pub reviewers: Vec<PendingReviewer>,
}

/// A deployment an approval created.
#[derive(Serialize, JsonSchema)]
pub struct Deployment {
    pub url: Uri,
    pub id: i64,
    pub node_id: String,
    pub sha: String,
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub task: &'static str,
    /// Always empty.
    pub payload: serde_json::Map<String, Value>,
    pub original_environment: String,
    pub environment: String,
    pub description: &'static str,
    pub creator: SimpleUser,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub statuses_url: Uri,
    pub repository_url: Uri,
    pub transient_environment: bool,
    pub production_environment: bool,
}

pub fn deployment(u: &Urls, repo: &Repo, d: &store::Deployment) -> Deployment {
    let base = repo_api_url(u, repo);
    Deployment {
        url: Uri(format!("{base}/deployments/{}", d.id)),
        id: d.id,
        node_id: node_id("Deployment", d.id),
        sha: d.sha.clone(),
        git_ref: d.r#ref.clone(),
        task: "deploy",
        payload: serde_json::Map::new(),
        original_environment: d.environment.clone(),
        environment: d.environment.clone(),
        description: "",
        creator: simple_user(u, d.creator.as_ref().unwrap_or_else(|| crate::shapes::ghost())),
        created_at: Timestamp(d.created_at),
        updated_at: Timestamp(d.created_at),
        statuses_url: Uri(format!("{base}/deployments/{}/statuses", d.id)),
        repository_url: Uri(base),
        transient_environment: false,
        production_environment: d.environment.eq_ignore_ascii_case("production"),
    }
}

/// An environment a review was given for, with its times.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ReviewedEnvironment {
    #[serde(flatten)]
    pub environment: EnvironmentRef,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One review of the history.
#[derive(Serialize, JsonSchema)]
pub struct EnvironmentApproval {
    pub environments: Vec<ReviewedEnvironment>,
    #[schemars(extend("enum" = ["approved", "rejected", "pending"]))]
    pub state: String,
    pub user: SimpleUser,
    pub comment: String,
}

pub fn approval(u: &Urls, repo: &Repo, r: &Review) -> EnvironmentApproval {
    let environments = r
        .environments
        .iter()
        .map(|e| ReviewedEnvironment {
            environment: environment(u, repo, e),
            created_at: Timestamp(e.created_at),
            updated_at: Timestamp(e.updated_at),
        })
        .collect();
    EnvironmentApproval { environments, state: r.state.clone(), user: simple_user(u, &r.user), comment: r.comment.clone() }
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct JobRun {
    pub job_id: i64,
    pub duration_ms: i64,
}

/// Billable time on one runner OS.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct OsUsage {
    pub total_ms: i64,
    pub jobs: i64,
    pub job_runs: Vec<JobRun>,
}

/// Runner OSes with billable jobs (none for a public repository).
#[derive(Default, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Billable {
    #[serde(rename = "UBUNTU", skip_serializing_if = "Option::is_none")]
    pub ubuntu: Option<OsUsage>,
    #[serde(rename = "MACOS", skip_serializing_if = "Option::is_none")]
    pub macos: Option<OsUsage>,
    #[serde(rename = "WINDOWS", skip_serializing_if = "Option::is_none")]
    pub windows: Option<OsUsage>,
}

/// Billable time per runner OS and the run's duration.
#[derive(Serialize, JsonSchema)]
pub struct WorkflowRunUsage {
    pub billable: Billable,
    pub run_duration_ms: i64,
}

/// Billable time per runner OS (private repositories only; re-runs included, jobs a re-run
/// carried over counted once) and the run's duration over all attempts.
pub fn usage(private: bool, jobs: &[store::Job], run_duration_ms: i64) -> WorkflowRunUsage {
    let mut billable = Billable::default();
    if private {
        for (os, slot) in store::RUNNER_OS.into_iter().zip([&mut billable.ubuntu, &mut billable.macos, &mut billable.windows]) {
            let job_runs: Vec<JobRun> = jobs
                .iter()
                .filter(|j| j.runner_os == os && j.carried_from.is_none())
                .filter_map(|j| Some(JobRun { job_id: j.id, duration_ms: (j.completed_at? - j.started_at?) * 1000 }))
                .collect();
            if !job_runs.is_empty() {
                *slot = Some(OsUsage { total_ms: job_runs.iter().map(|r| r.duration_ms).sum(), jobs: job_runs.len() as i64, job_runs });
            }
        }
    }
    WorkflowRunUsage { billable, run_duration_ms }
}

/// A workflow file of the repository.
#[derive(Serialize, JsonSchema)]
pub struct Workflow {
    pub id: i64,
    pub node_id: String,
    pub name: String,
    pub path: String,
    /// Always `active`: workflows are not disabled here.
    #[schemars(extend("enum" = ["active", "deleted", "disabled_fork", "disabled_inactivity", "disabled_manually"]))]
    pub state: &'static str,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub url: Uri,
    pub html_url: Uri,
    pub badge_url: Uri,
}

/// A page of workflows.
#[derive(Serialize, JsonSchema)]
pub struct WorkflowList {
    pub total_count: i64,
    pub workflows: Vec<Workflow>,
}

pub fn workflow(u: &Urls, repo: &Repo, w: &store::Workflow) -> Workflow {
    let web = format!("{}/{}", u.web, repo.full_name());
    Workflow {
        id: w.id,
        node_id: node_id("Workflow", w.id),
        name: w.name.clone(),
        path: w.path.clone(),
        state: "active",
        created_at: Timestamp(w.created_at),
        updated_at: Timestamp(w.updated_at),
        url: Uri(format!("{}/actions/workflows/{}", repo_api_url(u, repo), w.id)),
        html_url: Uri(format!("{web}/blob/{}/{}", repo.default_branch, w.path)),
        badge_url: Uri(format!("{web}/workflows/{}/badge.svg", crate::request::percent_encode(&w.name))),
    }
}
