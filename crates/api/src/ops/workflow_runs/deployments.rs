//! The deployments approvals create, as activity: `deployment` `created` at the approval with its
//! first status (`queued`, or `waiting` while a wait timer holds the job), then a
//! `deployment_status` for each status its job's transitions give it (`in_progress` when the job
//! starts, `success` or `failure` when it ends), each right after that job's `workflow_job`.
use platform_core::ApiVersion;
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs::{self as runs, Deployment, DeploymentStatus};
use platform_store::{Conn, DbError};

use crate::ops::hooks::activity::{self, stored, Record, Scope};
use crate::ops::hooks::deployment_events::{DeploymentActivity, DeploymentStatusActivity, DeploymentWorkflowRun, WebhookDeploymentStatus};
use crate::shapes::{ghost, simple_user, Urls};
use crate::typed::{Timestamp, Uri};

/// The deployment, its run and workflow as they are now; `None` when the workflow is gone.
fn objects(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, d: &Deployment) -> Result<Option<DeploymentActivity>, DbError> {
    let Some(w) = runs::workflow(c, repo.id, &run.workflow_id.to_string())? else { return Ok(None) };
    Ok(Some(DeploymentActivity {
        deployment: stored(&super::shapes::deployment(u, repo, d)),
        workflow: stored(&super::shapes::workflow(u, repo, &w)),
        workflow_run: stored(&DeploymentWorkflowRun::from(super::shapes::run(u, ApiVersion::DEFAULT, repo, run, false))),
    }))
}

fn status_shape(u: &Urls, repo: &Repo, run: &runs::Run, d: &Deployment, s: &DeploymentStatus) -> WebhookDeploymentStatus {
    let deployment_url = format!("{}/deployments/{}", crate::shapes::repo_api_url(u, repo), d.id);
    let run_page = Uri(format!("{}/{}/actions/runs/{}", u.web, repo.full_name(), run.id));
    WebhookDeploymentStatus {
        url: Uri(format!("{deployment_url}/statuses/{}", s.id)),
        id: s.id,
        node_id: platform_core::ids::node_id("DeploymentStatus", s.id),
        state: s.state.clone(),
        creator: simple_user(u, s.creator.as_ref().unwrap_or_else(|| ghost())),
        description: "",
        environment: d.environment.clone(),
        target_url: run_page.clone(),
        log_url: run_page,
        created_at: Timestamp(s.created_at),
        updated_at: Timestamp(s.created_at),
        deployment_url: Uri(deployment_url),
        repository_url: Uri(crate::shapes::repo_api_url(u, repo)),
    }
}

fn record_status(
    c: &mut dyn Conn,
    u: &Urls,
    repo: &Repo,
    run: &runs::Run,
    d: &Deployment,
    s: &DeploymentStatus,
    now: i64,
) -> Result<(), DbError> {
    let Some(of) = objects(c, u, repo, run, d)? else { return Ok(()) };
    let r = Record::DeploymentStatus(DeploymentStatusActivity { deployment_status: stored(&status_shape(u, repo, run, d, s)), of });
    record(c, repo, d, &r, now)
}

fn record(c: &mut dyn Conn, repo: &Repo, d: &Deployment, r: &Record, now: i64) -> Result<(), DbError> {
    let actor = d.creator.as_ref().map(|a| a.id);
    activity::record(c, Scope::repo(actor, repo).private(), r, now)?;
    Ok(())
}

/// Records what an approval created: each deployment's `created`, then its first status.
pub fn record_created(
    c: &mut dyn Conn,
    u: &Urls,
    repo: &Repo,
    run: &runs::Run,
    made: &[(Deployment, DeploymentStatus)],
    now: i64,
) -> Result<(), DbError> {
    for (d, s) in made {
        let Some(of) = objects(c, u, repo, run, d)? else { continue };
        record(c, repo, d, &Record::Deployment(of), now)?;
        record_status(c, u, repo, run, d, s, now)?;
    }
    Ok(())
}

/// Gives the deployment of `job`'s environment the status of its transition (`action`): the
/// job started (`in_progress`) or ended (`success`, or `failure` for any other conclusion).
pub fn job_moved(c: &mut dyn Conn, u: &Urls, repo: &Repo, run: &runs::Run, job: &runs::Job, action: &str, now: i64) -> Result<(), DbError> {
    let Some(env_id) = job.environment_id else { return Ok(()) };
    let state = match action {
        "in_progress" => "in_progress",
        "completed" if job.conclusion.as_deref() == Some("success") => "success",
        "completed" => "failure",
        _ => return Ok(()),
    };
    let Some(env) = runs::environment(c, env_id)? else { return Ok(()) };
    let Some(d) = runs::open_deployment(c, run.id, &env.name)? else { return Ok(()) };
    let s = runs::add_deployment_status(c, &d, state, now)?;
    record_status(c, u, repo, run, &d, &s, now)
}
