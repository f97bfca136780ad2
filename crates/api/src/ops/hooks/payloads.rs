//! Webhook payloads in the official shapes (the published webhook schemas, one per event and
//! action): the objects every delivery carries (repository, organization, sender, installation)
//! and each event's own fields, as types. The consumer builds one of these for each delivery;
//! nothing is assembled by key.
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::activity::{RepositoryChanges, Stored, WorkflowJobActivity, WorkflowRunActivity};
use super::deliveries::OrgHook;
use super::deployment_events::{DeploymentActivity, DeploymentBody, DeploymentStatusActivity};
use super::ruleset_events::RepositoryRulesetActivity;
use crate::ops::accounts::shapes::OrganizationSimple;
use crate::ops::depbot::alerts::{Cvss, Cwe, DepbotAlert, Identifier, Package, Reference, SecurityVulnerability};
use crate::ops::git::{Commit, GitUser, Parent, Tree};
use crate::ops::git_hosting::effects::PushWebhook;
use crate::ops::workflow_runs::shapes::{HeadCommit, RunFields, WorkflowRun};
use crate::shapes::{self, LicenseSimple, MinimalRepository, SimpleUser, Urls};
use crate::typed::{Timestamp, Uri};

/// The repository of a webhook: the minimal repository with what the webhook form adds.
/// Settings the platform does not keep show the hosted defaults.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct WebhookRepository {
    #[serde(flatten)]
    pub repo: MinimalRepository,
    pub license: Option<LicenseSimple>,
    pub has_discussions: bool,
    pub allow_forking: bool,
    pub web_commit_signoff_required: bool,
    pub custom_properties: Map<String, Value>,
}

pub fn repository(u: &Urls, r: &Repo) -> WebhookRepository {
    WebhookRepository {
        repo: shapes::minimal_repository(u, platform_core::ApiVersion::DEFAULT, r),
        license: None,
        has_discussions: false,
        allow_forking: true,
        web_commit_signoff_required: false,
        custom_properties: Map::new(),
    }
}

/// The app installation a delivery is for (`installation-lite`). Organization hooks belong to
/// no installation, so their deliveries carry none.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct InstallationLite {
    pub id: i64,
    pub node_id: String,
}

/// The repository a delivery names: as it is now, or as an event recorded it (a deleted or
/// renamed repository is shown as it was then).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RepositoryField {
    Now(Box<WebhookRepository>),
    Recorded(Stored<WebhookRepository>),
}

/// One delivery's payload: the event's own fields and the objects every event carries.
#[derive(Serialize, JsonSchema)]
pub struct Payload<B: Serialize> {
    #[serde(flatten)]
    pub body: B,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "WebhookRepository")]
    pub repository: Option<RepositoryField>,
    pub organization: OrganizationSimple,
    pub sender: SimpleUser,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "InstallationLite")]
    pub installation: Option<InstallationLite>,
}

/// The event bodies the platform sends (`X-Service-Event` in the comments).
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Body {
    /// `ping`
    Ping(Ping),
    /// `push` (a moved, created or deleted branch or tag)
    Push(Box<PushWebhook>),
    /// `create` (a branch or tag)
    Create(Create),
    /// `delete` (a branch or tag)
    Delete(Delete),
    /// `status`
    Status(Box<Status>),
    /// `watch` `started`
    Action(Action),
    /// `star` `created`
    Star(Star),
    /// `public`
    Public(Public),
    /// `workflow_run`
    WorkflowRun(WorkflowRunActivity),
    /// `workflow_job`
    WorkflowJob(WorkflowJobActivity),
    /// `repository`
    Repository(RepositoryBody),
    /// `repository_import`
    RepositoryImport(RepositoryImport),
    /// `meta` `deleted` (to the deleted hook itself)
    Meta(Meta),
    /// `depbot_alert`
    DepbotAlert(DepbotAlertBody),
    // Deployments of reviewed runs, and ruleset changes.
    /// `deployment` `created`
    Deployment(DeploymentBody<DeploymentActivity>),
    /// `deployment_status` `created`
    DeploymentStatus(DeploymentBody<DeploymentStatusActivity>),
    /// `repository_ruleset`
    RepositoryRuleset(RepositoryRulesetActivity),
    /// `team`, `membership`, `organization` (`org_events`)
    Org(super::org_events::OrgBody),
}

/// `depbot_alert`: the action and the alert as it was then (`WebhookDepbotAlert`).
#[derive(Serialize, JsonSchema)]
pub struct DepbotAlertBody {
    pub action: String,
    pub alert: Stored<WebhookDepbotAlert>,
}

/// A dependency alert as webhooks show it: the REST alert without what only the API shows
/// (`relationship`, `assignees`, the advisory's classification, EPSS and CVSS severities), the
/// advisory's `cvss` always present (zero, no vector, when it has none).
#[derive(Serialize, JsonSchema)]
pub struct WebhookDepbotAlert {
    pub number: i64,
    pub state: String,
    pub dependency: WebhookDependency,
    pub security_advisory: WebhookAdvisory,
    pub security_vulnerability: SecurityVulnerability,
    pub url: Uri,
    pub html_url: Uri,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub dismissed_at: Option<Timestamp>,
    pub auto_dismissed_at: Option<Timestamp>,
    pub dismissed_by: Option<SimpleUser>,
    pub dismissed_reason: Option<String>,
    pub dismissed_comment: Option<String>,
    pub fixed_at: Option<Timestamp>,
}

#[derive(Serialize, JsonSchema)]
pub struct WebhookDependency {
    pub package: Package,
    pub manifest_path: String,
    pub scope: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct WebhookAdvisory {
    pub advisory_id: String,
    pub cve_id: Option<String>,
    pub summary: String,
    pub description: String,
    pub vulnerabilities: Vec<SecurityVulnerability>,
    pub severity: String,
    pub cvss: Cvss,
    pub cwes: Vec<Cwe>,
    pub identifiers: Vec<Identifier>,
    pub references: Vec<Reference>,
    pub published_at: String,
    pub updated_at: String,
    pub withdrawn_at: Option<String>,
}

impl From<DepbotAlert> for WebhookDepbotAlert {
    fn from(a: DepbotAlert) -> WebhookDepbotAlert {
        let v = a.security_advisory;
        WebhookDepbotAlert {
            number: a.number,
            state: a.state,
            dependency: WebhookDependency {
                package: a.dependency.package,
                manifest_path: a.dependency.manifest_path,
                scope: a.dependency.scope,
            },
            security_advisory: WebhookAdvisory {
                advisory_id: v.advisory_id,
                cve_id: v.cve_id,
                summary: v.summary,
                description: v.description,
                vulnerabilities: v.vulnerabilities,
                severity: v.severity,
                cvss: v.cvss.unwrap_or(Cvss { vector_string: None, score: 0.0 }),
                cwes: v.cwes,
                identifiers: v.identifiers,
                references: v.references,
                published_at: v.published_at,
                updated_at: v.updated_at,
                withdrawn_at: v.withdrawn_at,
            },
            security_vulnerability: a.security_vulnerability,
            url: a.url,
            html_url: a.html_url,
            created_at: a.created_at,
            updated_at: a.updated_at,
            dismissed_at: a.dismissed_at,
            auto_dismissed_at: a.auto_dismissed_at,
            dismissed_by: a.dismissed_by,
            dismissed_reason: a.dismissed_reason,
            dismissed_comment: a.dismissed_comment,
            fixed_at: a.fixed_at,
        }
    }
}

/// `meta` `deleted`: the deleted hook, as it was.
#[derive(Serialize, JsonSchema)]
pub struct Meta {
    pub action: &'static str,
    pub hook_id: i64,
    pub hook: super::deliveries::HookBase,
}

/// The hook as a ping shows it: the hook with its last response.
#[derive(Serialize, JsonSchema)]
pub struct PingHook {
    #[serde(flatten)]
    pub hook: OrgHook,
    pub last_response: LastResponse,
}

#[derive(Serialize, JsonSchema)]
pub struct LastResponse {
    pub code: Option<i64>,
    pub status: String,
    pub message: Option<String>,
}

/// `ping`: the hook, as a new hook or `POST …/pings` sends it.
#[derive(Serialize, JsonSchema)]
pub struct Ping {
    pub zen: &'static str,
    pub hook_id: i64,
    pub hook: PingHook,
}

/// `create`: a new branch or tag.
#[derive(Serialize, JsonSchema)]
pub struct Create {
    #[serde(rename = "ref")]
    pub name: String,
    pub ref_type: String,
    pub master_branch: String,
    pub description: Option<String>,
    pub pusher_type: String,
}

/// `delete`: a deleted branch or tag.
#[derive(Serialize, JsonSchema)]
pub struct Delete {
    #[serde(rename = "ref")]
    pub name: String,
    pub ref_type: String,
    pub pusher_type: String,
}

/// An event whose body is its action alone.
#[derive(Serialize, JsonSchema)]
pub struct Action {
    pub action: &'static str,
}

/// `star` `created` (when the repository was starred) and `deleted` (`starred_at` null).
#[derive(Serialize, JsonSchema)]
pub struct Star {
    pub action: &'static str,
    pub starred_at: Option<Timestamp>,
}

/// `public`: the repository (now public) and sender are all it carries.
#[derive(Serialize, JsonSchema)]
pub struct Public {}

/// The commit a `status` names, in full (the REST commit without what only its own GET shows).
#[derive(Serialize, JsonSchema)]
pub struct StatusCommit {
    pub sha: String,
    pub node_id: String,
    pub commit: StatusGitCommit,
    pub url: Uri,
    pub html_url: Uri,
    pub comments_url: Uri,
    pub author: Option<SimpleUser>,
    pub committer: Option<SimpleUser>,
    pub parents: Vec<Parent>,
}

#[derive(Serialize, JsonSchema)]
pub struct StatusGitCommit {
    pub author: GitUser,
    pub committer: GitUser,
    pub message: String,
    pub tree: Tree,
    pub url: Uri,
    pub comment_count: i64,
    pub verification: Verification,
}

/// A webhook commit's verification (no `verified_at` in the webhook form).
#[derive(Serialize, JsonSchema)]
pub struct Verification {
    pub verified: bool,
    pub reason: &'static str,
    pub signature: Option<String>,
    pub payload: Option<String>,
}

impl From<Commit> for StatusCommit {
    fn from(k: Commit) -> StatusCommit {
        let g = k.commit;
        StatusCommit {
            sha: k.sha,
            node_id: k.node_id,
            commit: StatusGitCommit {
                author: g.author,
                committer: g.committer,
                message: g.message,
                tree: g.tree,
                url: g.url,
                comment_count: g.comment_count,
                verification: Verification {
                    verified: g.verification.verified,
                    reason: g.verification.reason,
                    signature: g.verification.signature,
                    payload: g.verification.payload,
                },
            },
            url: k.url,
            html_url: k.html_url,
            comments_url: k.comments_url,
            author: k.author,
            committer: k.committer,
            parents: k.parents,
        }
    }
}

/// A branch that holds a status's commit.
#[derive(Serialize, JsonSchema)]
pub struct StatusBranch {
    pub name: String,
    pub commit: BranchCommit,
    pub protected: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct BranchCommit {
    pub sha: String,
    pub url: Uri,
}

/// `status`: a new commit status, with the commit in full.
#[derive(Serialize, JsonSchema)]
pub struct Status {
    pub id: i64,
    pub sha: String,
    /// The repository's full name.
    pub name: String,
    pub target_url: Option<String>,
    pub context: String,
    pub description: Option<String>,
    pub state: String,
    pub commit: StatusCommit,
    pub branches: Vec<StatusBranch>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `repository`: what changed (`changes` for `edited` and `renamed`); the repository itself is
/// the payload's recorded one.
#[derive(Serialize, JsonSchema)]
pub struct RepositoryBody {
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<RepositoryChanges>,
}

/// `repository_import`: an import ended (`status`).
#[derive(Serialize, JsonSchema)]
pub struct RepositoryImport {
    pub status: String,
}

/// A repository as a webhook's workflow run names it (`repository-lite`: the minimal
/// repository's identity and URLs, nothing else).
#[derive(Serialize, JsonSchema)]
pub struct RepositoryLite {
    pub id: i64,
    pub node_id: String,
    pub name: String,
    pub full_name: String,
    pub owner: SimpleUser,
    pub private: bool,
    pub html_url: Uri,
    pub description: Option<String>,
    pub fork: bool,
    pub url: Uri,
    pub archive_url: String,
    pub assignees_url: String,
    pub blobs_url: String,
    pub branches_url: String,
    pub collaborators_url: String,
    pub comments_url: String,
    pub commits_url: String,
    pub compare_url: String,
    pub contents_url: String,
    pub contributors_url: String,
    pub deployments_url: String,
    pub downloads_url: String,
    pub events_url: String,
    pub forks_url: String,
    pub git_commits_url: String,
    pub git_refs_url: String,
    pub git_tags_url: String,
    pub hooks_url: String,
    pub issue_comment_url: String,
    pub issue_events_url: String,
    pub issues_url: String,
    pub keys_url: String,
    pub labels_url: String,
    pub languages_url: String,
    pub merges_url: String,
    pub milestones_url: String,
    pub notifications_url: String,
    pub pulls_url: String,
    pub releases_url: String,
    pub stargazers_url: String,
    pub statuses_url: String,
    pub subscribers_url: String,
    pub subscription_url: String,
    pub tags_url: String,
    pub teams_url: String,
    pub trees_url: String,
}

impl From<MinimalRepository> for RepositoryLite {
    fn from(r: MinimalRepository) -> RepositoryLite {
        RepositoryLite {
            id: r.id,
            node_id: r.node_id,
            name: r.name,
            full_name: r.full_name,
            owner: r.owner,
            private: r.private,
            html_url: r.html_url,
            description: r.description,
            fork: r.fork,
            url: r.url,
            archive_url: r.archive_url,
            assignees_url: r.assignees_url,
            blobs_url: r.blobs_url,
            branches_url: r.branches_url,
            collaborators_url: r.collaborators_url,
            comments_url: r.comments_url,
            commits_url: r.commits_url,
            compare_url: r.compare_url,
            contents_url: r.contents_url,
            contributors_url: r.contributors_url,
            deployments_url: r.deployments_url,
            downloads_url: r.downloads_url,
            events_url: r.events_url,
            forks_url: r.forks_url,
            git_commits_url: r.git_commits_url,
            git_refs_url: r.git_refs_url,
            git_tags_url: r.git_tags_url,
            hooks_url: r.hooks_url,
            issue_comment_url: r.issue_comment_url,
            issue_events_url: r.issue_events_url,
            issues_url: r.issues_url,
            keys_url: r.keys_url,
            labels_url: r.labels_url,
            languages_url: r.languages_url,
            merges_url: r.merges_url,
            milestones_url: r.milestones_url,
            notifications_url: r.notifications_url,
            pulls_url: r.pulls_url,
            releases_url: r.releases_url,
            stargazers_url: r.stargazers_url,
            statuses_url: r.statuses_url,
            subscribers_url: r.subscribers_url,
            subscription_url: r.subscription_url,
            tags_url: r.tags_url,
            teams_url: r.teams_url,
            trees_url: r.trees_url,
        }
    }
}

/// A workflow run as webhooks show it: the REST run, its repositories in the lite form.
#[derive(Serialize, JsonSchema)]
pub struct WebhookWorkflowRun {
    #[serde(flatten)]
    pub run: RunFields,
    pub head_commit: HeadCommit,
    pub repository: RepositoryLite,
    pub head_repository: RepositoryLite,
}

impl From<WorkflowRun> for WebhookWorkflowRun {
    fn from(r: WorkflowRun) -> WebhookWorkflowRun {
        WebhookWorkflowRun {
            run: r.run,
            head_commit: r.head_commit,
            repository: r.repository.into(),
            head_repository: r.head_repository.into(),
        }
    }
}
