//! `deployment` and `deployment_status` for the deployments approvals of reviewed runs create:
//! the activity records (`DeploymentEvent`, `DeploymentStatusEvent`) and the webhook shapes of
//! what they carry beside the REST deployment.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::activity::Stored;
use super::payloads::RepositoryLite;
use crate::ops::workflow_runs::shapes::{Deployment, RunFields, Workflow, WorkflowRun};
use crate::shapes::SimpleUser;
use crate::typed::{Timestamp, Uri};

/// `DeploymentEvent` (`created`): the deployment (the REST `Deployment`) with the run and
/// workflow whose approval created it, as they were then.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeploymentActivity {
    pub deployment: Stored<Deployment>,
    pub workflow: Stored<Workflow>,
    pub workflow_run: Stored<DeploymentWorkflowRun>,
}

/// `DeploymentStatusEvent` (`created`): a new status of a deployment (`WebhookDeploymentStatus`),
/// with the deployment, run and workflow as they were then.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeploymentStatusActivity {
    pub deployment_status: Stored<WebhookDeploymentStatus>,
    #[serde(flatten)]
    pub of: DeploymentActivity,
}

/// The body of both events: `created`, and the record's objects.
#[derive(Serialize, JsonSchema)]
pub struct DeploymentBody<T: Serialize> {
    pub action: &'static str,
    #[serde(flatten)]
    pub activity: T,
}

/// A deployment status as webhooks show it. The run's page is its target and log.
#[derive(Serialize, JsonSchema)]
pub struct WebhookDeploymentStatus {
    pub url: Uri,
    pub id: i64,
    pub node_id: String,
    pub state: String,
    pub creator: SimpleUser,
    /// Always empty: the platform writes no description.
    pub description: &'static str,
    pub environment: String,
    pub target_url: Uri,
    pub log_url: Uri,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub deployment_url: Uri,
    pub repository_url: Uri,
}

/// The run a deployment webhook names: the webhook run without its head commit (null there,
/// as hosted).
#[derive(Serialize, JsonSchema)]
pub struct DeploymentWorkflowRun {
    #[serde(flatten)]
    pub run: RunFields,
    pub head_commit: Option<()>,
    pub repository: RepositoryLite,
    pub head_repository: RepositoryLite,
}

impl From<WorkflowRun> for DeploymentWorkflowRun {
    fn from(r: WorkflowRun) -> DeploymentWorkflowRun {
        DeploymentWorkflowRun { run: r.run, head_commit: None, repository: r.repository.into(), head_repository: r.head_repository.into() }
    }
}
