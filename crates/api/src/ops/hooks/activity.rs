//! The activity records webhooks are made of, as types: each producer writes one of these (in
//! its transaction) and the consumers read it back as the same type, so a field is never a
//! misspelled key. (`PushEvent` and `DeleteEvent` are `git_hosting::effects`' types.)
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `CreateEvent`: a new branch, tag or repository (`ref_type`); also what the feeds show.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CreateActivity {
    #[serde(rename = "ref")]
    pub name: Option<String>,
    pub ref_type: String,
    pub full_ref: Option<String>,
    pub master_branch: String,
    pub description: Option<String>,
    pub pusher_type: String,
}

/// `StatusEvent`: a commit status was created.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatusActivity {
    pub id: i64,
    pub sha: String,
    pub state: String,
    pub context: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
}

/// `WorkflowRunEvent`: a run changed (`action`), with the run and its workflow as they were.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkflowRunActivity {
    pub action: String,
    pub workflow_run: Value,
    pub workflow: Value,
}

/// `WorkflowJobEvent`: a job of a run changed (`queued`, `waiting`, `in_progress`,
/// `completed`), with the job as it was at that transition (the REST job, which is the webhook's
/// `workflow_job`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkflowJobActivity {
    pub action: String,
    pub workflow_job: Value,
}

/// `DepbotAlertEvent`: a dependency alert was created, dismissed or reopened (`action`), with the
/// alert as it was then (webhook form, `payloads::WebhookDepbotAlert`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DepbotAlertActivity {
    pub action: String,
    /// The alert's state then (`created` is sent only for an open alert).
    pub state: String,
    pub alert: Value,
}

/// `RepositoryEvent`: a repository was created, edited, renamed, deleted, publicized or
/// privatized; the repository as it was then (webhook form), and what changed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RepositoryActivity {
    pub action: String,
    pub repository: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<RepositoryChanges>,
}

/// What a `repository` `edited` or `renamed` changed: each field's value before.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepositoryChanges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Renamed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<From<Option<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<From<Option<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<From<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Renamed {
    pub name: From<String>,
}

/// A field's value before a change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct From<T> {
    pub from: T,
}

/// `RepositoryImportEvent`: an import ended (`success`, `cancelled`, `failure`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RepositoryImportActivity {
    pub status: String,
}

/// A stored payload as `T`, `None` for a record written before it had this shape.
pub fn read<T: for<'de> Deserialize<'de>>(stored: &Value) -> Option<T> {
    serde_json::from_value(stored.clone()).ok()
}

/// The stored form of an activity payload.
pub fn stored<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("activity payloads are plain data")
}
