//! The activity records feeds, webhooks and notifications are made of, as one type: each
//! producer writes a [`Record`] (in its transaction) with [`record`], and every consumer reads
//! it back with [`Record::read`] and matches on it, so a kind string is written only here and a
//! field is never a misspelled key. Each variant's stored JSON is its struct's serde form, as
//! the records already in databases hold it.
use std::borrow::Cow;
use std::marker::PhantomData;

use platform_store::domain::activity::{self as store, NewActivity};
use platform_store::domain::repos::Repo;
use platform_store::{Conn, DbError};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::deployment_events::{DeploymentActivity, DeploymentStatusActivity};
use super::org_events::{MembershipActivity, OrganizationActivity, TeamActivity};
use super::payloads::{WebhookDepbotAlert, WebhookRepository, WebhookWorkflowRun};
use super::ruleset_events::RepositoryRulesetActivity;
use crate::ops::git_hosting::effects::{DeleteActivity, PushActivity};
use crate::ops::workflow_runs::shapes::{Job, Workflow};

/// Declares [`Record`] with each variant's stored kind.
macro_rules! records {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $kind:literal,)*) => {
        /// An activity record: one variant per stored kind.
        #[derive(Clone, Debug)]
        pub enum Record {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Record {
            /// The stored kind (the Events API's `type` for the kinds feeds show).
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Record::$variant(_) => $kind,)*
                }
            }

            /// A stored record; `None` for an unknown kind or one written before its kind had
            /// this shape.
            pub fn read(kind: &str, stored: &Value) -> Option<Record> {
                match kind {
                    // Read in place (a `&Value` deserializes): records can be large, and each
                    // consumer reads every one.
                    $($kind => <$ty>::deserialize(stored).ok().map(Record::$variant),)*
                    _ => None,
                }
            }

            /// The stored form.
            pub fn stored(&self) -> Value {
                match self {
                    $(Record::$variant(v) => serde_json::to_value(v),)*
                }
                .expect("activity payloads are plain data")
            }
        }
    };
}

records! {
    Push(PushActivity) = "PushEvent",
    Create(CreateActivity) = "CreateEvent",
    Delete(DeleteActivity) = "DeleteEvent",
    /// A user starred a repository (`watch` `started` and `star` `created`).
    Watch(WatchActivity) = "WatchEvent",
    /// A user's star was removed (`star` `deleted`; no feed shows it, as hosted).
    Unstar(UnstarActivity) = "UnstarEvent",
    Public(PublicActivity) = "PublicEvent",
    Status(StatusActivity) = "StatusEvent",
    WorkflowRun(WorkflowRunActivity) = "WorkflowRunEvent",
    WorkflowJob(WorkflowJobActivity) = "WorkflowJobEvent",
    DepbotAlert(DepbotAlertActivity) = "DepbotAlertEvent",
    Repository(RepositoryActivity) = "RepositoryEvent",
    RepositoryImport(RepositoryImportActivity) = "RepositoryImportEvent",
    Deployment(DeploymentActivity) = "DeploymentEvent",
    DeploymentStatus(DeploymentStatusActivity) = "DeploymentStatusEvent",
    RepositoryRuleset(RepositoryRulesetActivity) = "RepositoryRulesetEvent",
    Team(TeamActivity) = "TeamEvent",
    Membership(MembershipActivity) = "MembershipEvent",
    Organization(OrganizationActivity) = "OrganizationEvent",
}

/// Where a record belongs and who did it.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    pub actor_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub org_id: Option<i64>,
    /// Shown in public feeds.
    pub public: bool,
}

impl Scope {
    /// An action in a repository: under its owner organization, if any, and public when the
    /// repository is.
    pub fn repo(actor_id: Option<i64>, repo: &Repo) -> Scope {
        Scope { actor_id, repo_id: Some(repo.id), org_id: repo.owner.is_org().then_some(repo.owner.id), public: !repo.private }
    }

    /// An organization's business, no repository's: never public.
    pub fn org(actor_id: Option<i64>, org_id: Option<i64>) -> Scope {
        Scope { actor_id, repo_id: None, org_id, public: false }
    }

    /// The same, never public.
    pub fn private(self) -> Scope {
        Scope { public: false, ..self }
    }
}

/// Records `r` in the caller's transaction; returns its id.
pub fn record(c: &mut dyn Conn, at: Scope, r: &Record, now: i64) -> Result<i64, DbError> {
    let payload = r.stored();
    let a =
        NewActivity { kind: r.kind(), actor_id: at.actor_id, repo_id: at.repo_id, org_id: at.org_id, public: at.public, payload: &payload };
    store::record(c, &a, now)
}

/// `WatchEvent`: a user starred a repository (`action` is always `started`, as the Events API
/// shows it).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct WatchActivity {
    #[schemars(extend("enum" = ["started"]))]
    pub action: String,
}

impl WatchActivity {
    pub fn started() -> WatchActivity {
        WatchActivity { action: "started".into() }
    }
}

/// `UnstarEvent`: a user's star was removed; nothing beside who and where.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UnstarActivity {}

/// `PublicEvent`: a repository was made public; nothing beside where.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(inline, deny_unknown_fields)]
pub struct PublicActivity {}

/// `CreateEvent`: a new branch, tag or repository (`ref_type`); also what the feeds show.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
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
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WorkflowRunActivity {
    pub action: String,
    pub workflow_run: Stored<WebhookWorkflowRun>,
    pub workflow: Stored<Workflow>,
}

/// `WorkflowJobEvent`: a job of a run changed (`queued`, `waiting`, `in_progress`,
/// `completed`), with the job as it was at that transition (the REST job, which is the webhook's
/// `workflow_job`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WorkflowJobActivity {
    pub action: String,
    pub workflow_job: Stored<Job>,
}

/// `DepbotAlertEvent`: a dependency alert was created, dismissed or reopened (`action`), with the
/// alert as it was then (webhook form, `payloads::WebhookDepbotAlert`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DepbotAlertActivity {
    pub action: String,
    /// The alert's state then (`created` is sent only for an open alert).
    pub state: String,
    pub alert: Stored<WebhookDepbotAlert>,
}

/// `RepositoryEvent`: a repository was created, edited, renamed, deleted, publicized or
/// privatized; the repository as it was then (webhook form), and what changed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RepositoryActivity {
    pub action: String,
    pub repository: Stored<WebhookRepository>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<RepositoryChanges>,
}

/// What a `repository` `edited` or `renamed` changed: each field's value before.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Renamed {
    pub name: From<String>,
}

/// A field's value before a change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct From<T> {
    pub from: T,
}

/// `RepositoryImportEvent`: an import ended (`success`, `cancelled`, `failure`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RepositoryImportActivity {
    pub status: String,
}

/// An object a record keeps, in its stored form.
pub fn stored<T: Serialize>(v: &T) -> Stored<T> {
    Stored { value: serde_json::to_value(v).expect("activity payloads are plain data"), of: PhantomData }
}

/// An object a record keeps as it was when recorded, made from a `T` (with [`stored`]): stored,
/// read and sent as that JSON (records already in databases read unchanged), described by `T`'s
/// schema. Read back by the consumers that need a part of it ([`Stored::read`]).
pub struct Stored<T> {
    value: Value,
    of: PhantomData<fn() -> T>,
}

impl<T> Stored<T> {
    /// The part of the object a consumer needs, as `U`; `None` when it has another shape.
    pub fn read<U: for<'de> Deserialize<'de>>(&self) -> Option<U> {
        U::deserialize(&self.value).ok()
    }
}

impl<T> Clone for Stored<T> {
    fn clone(&self) -> Self {
        Stored { value: self.value.clone(), of: PhantomData }
    }
}

impl<T> std::fmt::Debug for Stored<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> Serialize for Stored<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<'de, T> Deserialize<'de> for Stored<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Stored { value: Value::deserialize(d)?, of: PhantomData })
    }
}

impl<T: JsonSchema> JsonSchema for Stored<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        T::json_schema(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_objects_read_and_write_as_the_records_in_databases_hold_them() {
        // Any JSON, as records written before the types were exact hold it.
        let stored = json!({"action": "completed", "workflow_run": {"id": 1, "name": "ci", "extra": [1]}, "workflow": {"id": 2}});
        let r = Record::read("WorkflowRunEvent", &stored).unwrap();
        assert_eq!(r.stored(), stored);
        let Record::WorkflowRun(w) = r else { panic!() };
        #[derive(Deserialize)]
        struct Named {
            name: String,
        }
        assert_eq!(w.workflow_run.read::<Named>().unwrap().name, "ci");
        // The schema is the type's.
        let mut g = crate::typed::generator();
        assert_eq!(g.subschema_for::<Stored<Workflow>>(), g.subschema_for::<Workflow>());
    }
}
