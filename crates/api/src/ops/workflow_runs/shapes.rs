//! Response shapes of workflow runs (api-facts §4.5–4.6): WorkflowRun, jobs, PendingDeployment,
//! Deployment, EnvironmentApproval and RunUsage.
use platform_core::ids::{node_id, sha256_hex};
use platform_core::time::format_ts;
use platform_core::ApiVersion;
use platform_store::domain::accounts::{Account, Team};
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs::{Deployment, Environment, Job, Review, Run};
use serde_json::{json, Value};

use crate::shapes::{minimal_repository, repo_api_url, simple_user, Urls};

pub fn run_url(u: &Urls, repo: &Repo, run_id: i64) -> String {
    format!("{}/actions/runs/{run_id}", repo_api_url(u, repo))
}

/// `{name, email}` of a commit person: as planned, else the actor's.
/// A head commit's author or committer: what the control plane gave, with `name` and `email`
/// (strings in the spec) filled from the actor where it left them out.
fn person(given: &Value, actor: &Account) -> Value {
    let text = |k: &str| given.get(k).and_then(Value::as_str).map(str::to_string);
    let name = text("name").unwrap_or_else(|| actor.name.clone().unwrap_or_else(|| actor.login.clone()));
    let email =
        text("email").unwrap_or_else(|| actor.email.clone().unwrap_or_else(|| format!("{}@users.noreply.service.example", actor.login)));
    json!({"name": name, "email": email})
}

/// Pull requests as PullRequestMinimal (none when `exclude_pull_requests` is set).
fn pull_requests(u: &Urls, repo: &Repo, prs: &Value) -> Value {
    let base = repo_api_url(u, repo);
    let r = json!({"id": repo.id, "url": base, "name": repo.name});
    let list = prs.as_array().cloned().unwrap_or_default();
    Value::Array(
        list.iter()
            .map(|p| {
                let n = p["number"].as_i64().unwrap_or(0);
                json!({
                    "id": repo.id * 100_000 + n, "number": n, "url": format!("{base}/pulls/{n}"),
                    "head": {"ref": p["head_ref"], "sha": p["head_sha"], "repo": r},
                    "base": {"ref": p["base_ref"], "sha": p["base_sha"], "repo": r},
                })
            })
            .collect(),
    )
}

/// WorkflowRun: the run as of its attempt `run.run_attempt`.
pub fn run(u: &Urls, v: ApiVersion, repo: &Repo, r: &Run, exclude_prs: bool) -> Value {
    let base = repo_api_url(u, repo);
    let url = run_url(u, repo, r.id);
    let suite = r.check_suite_id();
    let c = &r.head_commit;
    let timestamp = c["timestamp"].as_i64().unwrap_or(r.created_at);
    let repository = minimal_repository(u, v, repo);
    json!({
        "id": r.id,
        "name": r.workflow_name,
        "node_id": node_id("WorkflowRun", r.id),
        "check_suite_id": suite,
        "check_suite_node_id": node_id("CheckSuite", suite),
        "head_branch": r.head_branch,
        "head_sha": r.head_sha,
        "path": r.workflow_path,
        "run_number": r.run_number,
        "event": r.event,
        "display_title": r.display_title,
        "status": r.status,
        "conclusion": r.conclusion,
        "workflow_id": r.workflow_id,
        "url": url,
        "html_url": format!("{}/{}/actions/runs/{}", u.web, repo.full_name(), r.id),
        "pull_requests": if exclude_prs { json!([]) } else { pull_requests(u, repo, &r.pull_requests) },
        "created_at": format_ts(r.created_at),
        "updated_at": format_ts(r.updated_at),
        "actor": simple_user(u, &r.actor),
        "run_attempt": r.run_attempt,
        "referenced_workflows": [],
        "run_started_at": format_ts(r.run_started_at.unwrap_or(r.created_at)),
        "triggering_actor": simple_user(u, &r.triggering_actor),
        "jobs_url": format!("{url}/jobs"),
        "logs_url": format!("{url}/logs"),
        "check_suite_url": format!("{base}/check-suites/{suite}"),
        "artifacts_url": format!("{url}/artifacts"),
        "cancel_url": format!("{url}/cancel"),
        "rerun_url": format!("{url}/rerun"),
        "previous_attempt_url": (r.run_attempt > 1).then(|| format!("{url}/attempts/{}", r.run_attempt - 1)),
        "workflow_url": format!("{base}/actions/workflows/{}", r.workflow_id),
        "head_commit": {
            "id": r.head_sha,
            "tree_id": &sha256_hex(format!("tree {}", r.head_sha).as_bytes())[..40],
            "message": c["message"].as_str().unwrap_or(&r.display_title),
            "timestamp": format_ts(timestamp),
            "author": person(&c["author"], &r.actor),
            "committer": person(&c["committer"], &r.actor),
        },
        "repository": repository,
        "head_repository": repository,
        "head_repository_id": repo.id,
    })
}

/// The runner label a job ran on.
fn label(os: &str) -> String {
    format!("{}-latest", os.to_lowercase())
}

/// A job of an attempt, with steps sharing its duration.
pub fn job(u: &Urls, repo: &Repo, run: &Run, j: &Job) -> Value {
    let base = repo_api_url(u, repo);
    let names: Vec<String> =
        if j.steps.is_empty() { vec!["Set up job".into(), format!("Run {}", j.name), "Complete job".into()] } else { j.steps.clone() };
    let n = names.len() as i64;
    let steps: Vec<Value> = match (j.status.as_str(), j.started_at) {
        ("in_progress", Some(s)) | ("completed", Some(s)) => names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (from, to) = (s + j.duration * i as i64 / n, s + j.duration * (i as i64 + 1) / n);
                let (status, conclusion) = if j.status == "completed" {
                    let last = i as i64 == n - 1;
                    let c = match j.conclusion.as_deref() {
                        Some("failure" | "timed_out") if !last => "success",
                        other => other.unwrap_or("success"),
                    };
                    ("completed", Some(c))
                } else if i == 0 {
                    ("in_progress", None)
                } else {
                    ("queued", None)
                };
                let done = status == "completed";
                json!({"name": name, "status": status, "conclusion": conclusion, "number": i + 1,
                       "started_at": (status != "queued").then(|| format_ts(from)), "completed_at": done.then(|| format_ts(to))})
            })
            .collect(),
        _ => Vec::new(),
    };
    json!({
        "id": j.id,
        "run_id": run.id,
        "workflow_name": run.workflow_name,
        "head_branch": run.head_branch,
        "run_url": run_url(u, repo, run.id),
        "run_attempt": j.attempt,
        "node_id": node_id("CheckRun", j.id),
        "head_sha": run.head_sha,
        "url": format!("{base}/actions/jobs/{}", j.id),
        "html_url": format!("{}/{}/actions/runs/{}/job/{}", u.web, repo.full_name(), run.id, j.id),
        "status": j.status,
        "conclusion": j.conclusion,
        "created_at": format_ts(j.created_at),
        "started_at": format_ts(j.started_at.unwrap_or(j.created_at)),
        "completed_at": j.completed_at.map(format_ts),
        "name": j.name,
        "steps": steps,
        "check_run_url": format!("{base}/check-runs/{}", j.id),
        "labels": [label(&j.runner_os)],
        "runner_id": j.started_at.map(|_| 1),
        "runner_name": j.started_at.map(|_| format!("Service Actions {}", j.id)),
        "runner_group_id": j.started_at.map(|_| 1),
        "runner_group_name": j.started_at.map(|_| "Service Actions"),
    })
}

pub fn environment(u: &Urls, repo: &Repo, e: &Environment) -> Value {
    json!({
        "id": e.id,
        "node_id": node_id("Environment", e.id),
        "name": e.name,
        "url": format!("{}/environments/{}", repo_api_url(u, repo), crate::request::percent_encode(&e.name)),
        "html_url": format!("{}/{}/deployments/activity_log?environments_filter={}", u.web, repo.full_name(), crate::request::percent_encode(&e.name)),
    })
}

pub fn team(u: &Urls, t: &Team, org_login: &str) -> Value {
    json!({
        "id": t.id,
        "node_id": node_id("Team", t.id),
        "url": format!("{}/teams/{}", u.api, t.id),
        "html_url": format!("{}/orgs/{org_login}/teams/{}", u.web, t.slug),
        "name": t.name,
        "slug": t.slug,
        "description": t.description,
        "privacy": t.privacy,
        "notification_setting": "notifications_enabled",
        "permission": "pull",
        "members_url": format!("{}/teams/{}/members{{/member}}", u.api, t.id),
        "repositories_url": format!("{}/teams/{}/repos", u.api, t.id),
        "parent": null,
        "type": "organization",
    })
}

pub fn deployment(u: &Urls, repo: &Repo, d: &Deployment) -> Value {
    let base = repo_api_url(u, repo);
    json!({
        "url": format!("{base}/deployments/{}", d.id),
        "id": d.id,
        "node_id": node_id("Deployment", d.id),
        "sha": d.sha,
        "ref": d.r#ref,
        "task": "deploy",
        "payload": {},
        "original_environment": d.environment,
        "environment": d.environment,
        "description": "",
        "creator": simple_user(u, d.creator.as_ref().unwrap_or_else(|| crate::shapes::ghost())),
        "created_at": format_ts(d.created_at),
        "updated_at": format_ts(d.created_at),
        "statuses_url": format!("{base}/deployments/{}/statuses", d.id),
        "repository_url": base,
        "transient_environment": false,
        "production_environment": d.environment.eq_ignore_ascii_case("production"),
    })
}

/// EnvironmentApproval: one review of the history.
pub fn approval(u: &Urls, repo: &Repo, r: &Review) -> Value {
    let envs: Vec<Value> = r
        .environments
        .iter()
        .map(|e| {
            let mut v = environment(u, repo, e);
            v["created_at"] = json!(format_ts(e.created_at));
            v["updated_at"] = json!(format_ts(e.updated_at));
            v
        })
        .collect();
    json!({"environments": envs, "state": r.state, "user": simple_user(u, &r.user), "comment": r.comment})
}

/// RunUsage: billable time per runner OS (private repositories only; re-runs included, jobs a
/// re-run carried over counted once) and the run's duration over all attempts.
pub fn usage(private: bool, jobs: &[Job], run_duration_ms: i64) -> Value {
    let mut billable = serde_json::Map::new();
    if private {
        for os in platform_store::domain::workflow_runs::RUNNER_OS {
            let runs: Vec<Value> = jobs
                .iter()
                .filter(|j| j.runner_os == os && j.carried_from.is_none())
                .filter_map(|j| Some(json!({"job_id": j.id, "duration_ms": (j.completed_at? - j.started_at?) * 1000})))
                .collect();
            if runs.is_empty() {
                continue;
            }
            let total: i64 = runs.iter().map(|r| r["duration_ms"].as_i64().unwrap_or(0)).sum();
            billable.insert(os.into(), json!({"total_ms": total, "jobs": runs.len(), "job_runs": runs}));
        }
    }
    json!({"billable": billable, "run_duration_ms": run_duration_ms})
}
