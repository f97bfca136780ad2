//! The webhook events and actions the platform sends, each with the type of its payload's body:
//! the one list the consumer takes actions from, the OpenAPI document's `webhooks` section is
//! built from (`assembly::openapi`: each payload's schema derived from its types, its action
//! pinned), and the README's event table is tested against.
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;

use super::activity::{WorkflowJobActivity, WorkflowRunActivity};
use super::deployment_events::{DeploymentActivity, DeploymentBody, DeploymentStatusActivity};
use super::org_events::{MembershipBody, OrganizationBody, TeamBody};
use super::payloads::{
    Action, Create, Delete, DepbotAlertBody, Meta, Payload, Ping, Public, RepositoryBody, RepositoryImport, Star, Status,
};
use super::ruleset_events::RepositoryRulesetActivity;
use crate::ops::git_hosting::effects::PushWebhook;

/// One event the platform sends.
pub struct Published {
    /// `X-Service-Event`.
    pub event: &'static str,
    /// The actions it is sent with; none when its payload has no `action`.
    pub actions: &'static [&'static str],
    /// Whether every delivery of it carries `repository` (the event happens in one).
    pub in_repository: bool,
    /// The schema of its payload (`Payload<B>`, `B` the event's body), inline, described as
    /// the body is.
    pub payload: fn(&mut SchemaGenerator) -> Schema,
}

/// An event of a repository: every delivery carries it.
const fn sent<B: Serialize + JsonSchema>(event: &'static str, actions: &'static [&'static str]) -> Published {
    Published { event, actions, in_repository: true, payload: payload_schema::<B> }
}

/// An event of the organization or a hook, which carries a repository only when it names one.
const fn sent_by_org<B: Serialize + JsonSchema>(event: &'static str, actions: &'static [&'static str]) -> Published {
    Published { event, actions, in_repository: false, payload: payload_schema::<B> }
}

fn payload_schema<B: Serialize + JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    let mut s = Payload::<B>::json_schema(g);
    if let Some(d) = B::json_schema(g).get("description").cloned() {
        s.insert("description".into(), d);
    }
    s
}

/// Every event and action the platform sends, in the README table's order.
pub static EVENTS: &[Published] = &[
    sent_by_org::<Ping>("ping", &[]),
    sent::<PushWebhook>("push", &[]),
    sent::<Create>("create", &[]),
    sent::<Delete>("delete", &[]),
    sent::<Status>("status", &[]),
    sent::<Action>("watch", &["started"]),
    sent::<Star>("star", &["created", "deleted"]),
    sent::<Public>("public", &[]),
    sent::<RepositoryBody>("repository", &["created", "edited", "renamed", "privatized", "publicized", "deleted"]),
    sent::<RepositoryImport>("repository_import", &[]),
    sent::<WorkflowRunActivity>("workflow_run", &["requested", "in_progress", "completed"]),
    sent::<WorkflowJobActivity>("workflow_job", &["queued", "waiting", "in_progress", "completed"]),
    sent_by_org::<Meta>("meta", &["deleted"]),
    sent::<DepbotAlertBody>("depbot_alert", &["created", "dismissed", "reopened"]),
    sent::<DeploymentBody<DeploymentActivity>>("deployment", &["created"]),
    sent::<DeploymentBody<DeploymentStatusActivity>>("deployment_status", &["created"]),
    sent_by_org::<RepositoryRulesetActivity>("repository_ruleset", &["created", "edited", "deleted"]),
    sent_by_org::<TeamBody>("team", &["created", "edited", "deleted"]),
    sent_by_org::<MembershipBody>("membership", &["added", "removed"]),
    sent_by_org::<OrganizationBody>("organization", &["member_added", "member_removed"]),
];

impl Published {
    /// Each delivery form of the event: its actions, or `None` once for an event without any.
    pub fn forms(&self) -> Vec<Option<&'static str>> {
        if self.actions.is_empty() {
            vec![None]
        } else {
            self.actions.iter().map(|a| Some(*a)).collect()
        }
    }
}

/// `action` of `event` as published; `None` when `event` is not sent with that action.
pub fn action(event: &str, action: &str) -> Option<&'static str> {
    EVENTS.iter().filter(|p| p.event == event).flat_map(|p| p.actions.iter().copied()).find(|a| *a == action)
}

/// Whether deliveries of `event` with `action` are published.
pub fn is_published(event: &str, act: Option<&str>) -> bool {
    match act {
        Some(a) => action(event, a).is_some(),
        None => EVENTS.iter().any(|p| p.event == event && p.actions.is_empty()),
    }
}

/// The key of a webhook in the OpenAPI document, as the official description writes it:
/// `workflow-run-completed`, `ping`.
pub fn key(event: &str, action: Option<&str>) -> String {
    let event = event.replace('_', "-");
    match action {
        Some(a) => format!("{event}-{}", a.replace('_', "-")),
        None => event,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::hooks::org_events::OrgBody;
    use crate::ops::hooks::payloads::Body;

    /// Every body the consumer can send, by its event: the match is exhaustive, so a new `Body`
    /// (or `OrgBody`) variant does not compile until it is named here, and its event is published.
    macro_rules! bodies {
        ($($variant:pat => $event:literal,)*) => {{
            #[allow(dead_code)]
            fn exhaustive(b: &Body) {
                match b {
                    $($variant => {})*
                }
            }
            [$($event),*]
        }};
    }

    #[test]
    fn every_body_is_published() {
        let events = bodies! {
            Body::Ping(_) => "ping",
            Body::Push(_) => "push",
            Body::Create(_) => "create",
            Body::Delete(_) => "delete",
            Body::Status(_) => "status",
            Body::Action(_) => "watch",
            Body::Star(_) => "star",
            Body::Public(_) => "public",
            Body::WorkflowRun(_) => "workflow_run",
            Body::WorkflowJob(_) => "workflow_job",
            Body::Repository(_) => "repository",
            Body::RepositoryImport(_) => "repository_import",
            Body::Meta(_) => "meta",
            Body::DepbotAlert(_) => "depbot_alert",
            Body::Deployment(_) => "deployment",
            Body::DeploymentStatus(_) => "deployment_status",
            Body::RepositoryRuleset(_) => "repository_ruleset",
            Body::Org(OrgBody::Team(_)) => "team",
            Body::Org(OrgBody::Membership(_)) => "membership",
            Body::Org(OrgBody::Organization(_)) => "organization",
        };
        for e in events {
            assert!(EVENTS.iter().any(|p| p.event == e), "{e} is sent but not published");
        }
        assert_eq!(events.len(), EVENTS.len(), "an event is published that no body sends");
    }

    /// The (event, action) rows of the README's event table (section "Organization webhooks"):
    /// the first column's event, the second's actions in backquotes outside parentheses (`—`:
    /// none).
    fn readme_table() -> Vec<(String, Option<String>)> {
        let readme = include_str!("../../../../../README.md");
        let table = readme.split("| `X-Service-Event` | `action` | sent when |").nth(1).expect("the README's webhook table");
        let ticked = |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(str::to_string).collect() };
        let mut rows = Vec::new();
        for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.split('|').collect();
            let event = ticked(cells[1]).remove(0);
            let mut outside = String::new();
            let mut depth = 0;
            for ch in cells[2].chars() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ if depth == 0 => outside.push(ch),
                    _ => {}
                }
            }
            let actions: Vec<Option<String>> = ticked(&outside).into_iter().map(Some).collect();
            let actions = if actions.is_empty() { vec![None] } else { actions };
            rows.extend(actions.into_iter().map(|a| (event.clone(), a)));
        }
        rows
    }

    #[test]
    fn the_readme_table_lists_what_is_published() {
        let mut table = readme_table();
        let mut ours: Vec<(String, Option<String>)> =
            EVENTS.iter().flat_map(|p| p.forms().into_iter().map(|a| (p.event.to_string(), a.map(str::to_string)))).collect();
        table.sort();
        ours.sort();
        assert_eq!(table, ours);
        assert!(is_published("workflow_run", Some("completed")) && is_published("push", None));
        assert!(!is_published("push", Some("created")) && !is_published("watch", None));
        assert_eq!(key("workflow_run", Some("in_progress")), "workflow-run-in-progress");
    }
}
