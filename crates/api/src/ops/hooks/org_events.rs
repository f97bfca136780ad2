//! Organization-level webhook events: `team`, `membership` (a team's) and `organization`
//! (its members). The control plane records them in the transaction of the change, under the
//! organization and no repository, by no actor (the sender is the organization, as for every
//! control-plane event); the webhook consumer turns them into these payloads.
//!
//! A record keeps the team as it was (a deleted one is gone) and the member's account id
//! (accounts are never deleted); the webhook forms are built when delivered.
use platform_store::domain::accounts::{self, Account, Team};
use platform_store::{Conn, DbError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::activity::{self, From, Record, Scope};
use super::published;
use crate::shapes::{self, team_simple, SimpleUser, Urls};
use crate::typed::Uri;

/// A team as a record keeps it (as it was then).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecordedTeam {
    pub id: i64,
    pub name: String,
    pub slug: String,
    pub description: Option<String>,
    pub privacy: String,
}

impl RecordedTeam {
    pub fn of(t: &Team) -> RecordedTeam {
        RecordedTeam {
            id: t.id,
            name: t.name.clone(),
            slug: t.slug.clone(),
            description: t.description.clone(),
            privacy: t.privacy.clone(),
        }
    }

    fn row(&self, org_id: i64) -> Team {
        Team {
            id: self.id,
            org_id,
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            privacy: self.privacy.clone(),
        }
    }
}

/// `TeamEvent`: a team was `created`, `edited` (with `changes`) or `deleted`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TeamActivity {
    pub action: String,
    pub team: RecordedTeam,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<TeamChanges>,
}

/// What a `team` `edited` changed: each field's value before (a description that was none is
/// the empty string: the published payload's `from` is a string).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TeamChanges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<From<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<From<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privacy: Option<From<String>>,
}

impl TeamChanges {
    /// The changes from `before` to `after`; `None` when nothing changed.
    pub fn between(before: &Team, after: &Team) -> Option<TeamChanges> {
        let from = |a: &str, b: &str| (a != b).then(|| From { from: a.to_string() });
        let ch = TeamChanges {
            name: from(&before.name, &after.name),
            description: (before.description != after.description).then(|| From { from: before.description.clone().unwrap_or_default() }),
            privacy: from(&before.privacy, &after.privacy),
        };
        (ch != TeamChanges::default()).then_some(ch)
    }
}

/// `MembershipEvent`: a user was `added` to or `removed` from a team; `scope` `team`, or
/// `organization` when the removal is the organization's (the user left the organization).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MembershipActivity {
    pub action: String,
    pub scope: String,
    pub member_id: i64,
    pub team: RecordedTeam,
}

/// `OrganizationEvent`: a user was added to the organization (`member_added`) or removed from
/// it (`member_removed`), with the role they had.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OrganizationActivity {
    pub action: String,
    pub member_id: i64,
    /// `owner` or `member` (the store's roles).
    pub role: String,
}

fn record(c: &mut dyn Conn, org: &Account, r: Record, now: i64) -> Result<(), DbError> {
    // Organization business, never public activity.
    activity::record(c, Scope::org(None, Some(org.id)), &r, now)?;
    Ok(())
}

/// Records a team's `created`, `edited` or `deleted`.
pub fn team(c: &mut dyn Conn, org: &Account, t: &Team, action: &str, changes: Option<TeamChanges>, now: i64) -> Result<(), DbError> {
    let a = TeamActivity { action: action.into(), team: RecordedTeam::of(t), changes };
    record(c, org, Record::Team(a), now)
}

/// Records a team membership's `added` or `removed` (`scope`: `team` or `organization`).
pub fn membership(c: &mut dyn Conn, org: &Account, t: &Team, member: &Account, action: &str, scope: &str, now: i64) -> Result<(), DbError> {
    let a = MembershipActivity { action: action.into(), scope: scope.into(), member_id: member.id, team: RecordedTeam::of(t) };
    record(c, org, Record::Membership(a), now)
}

/// Records an organization's `member_added` or `member_removed`.
pub fn organization(c: &mut dyn Conn, org: &Account, member: &Account, role: &str, action: &str, now: i64) -> Result<(), DbError> {
    let a = OrganizationActivity { action: action.into(), member_id: member.id, role: role.into() };
    record(c, org, Record::Organization(a), now)
}

// ---------------------------------------------------------------------------------------------
// Webhook forms.

/// A team as webhooks show it (`team` of the published schemas): the REST team without its
/// `type` and `organization_id`; teams are not nested, so `parent` is null.
#[derive(Serialize, JsonSchema)]
pub struct WebhookTeam {
    #[serde(flatten)]
    pub team: WebhookTeamFields,
    pub parent: Option<WebhookTeamFields>,
}

#[derive(Serialize, JsonSchema)]
pub struct WebhookTeamFields {
    pub name: String,
    pub id: i64,
    pub node_id: String,
    pub slug: String,
    pub description: Option<String>,
    pub privacy: String,
    pub notification_setting: String,
    pub url: Uri,
    pub html_url: Uri,
    pub members_url: String,
    pub repositories_url: Uri,
    pub permission: String,
}

pub fn webhook_team(u: &Urls, org: &Account, t: &RecordedTeam) -> WebhookTeam {
    let s = team_simple(u, org, &t.row(org.id));
    let team = WebhookTeamFields {
        name: s.name,
        id: s.id,
        node_id: s.node_id,
        slug: s.slug,
        description: s.description,
        privacy: s.privacy,
        notification_setting: s.notification_setting,
        url: s.url,
        html_url: s.html_url,
        members_url: s.members_url,
        repositories_url: s.repositories_url,
        permission: s.permission,
    };
    WebhookTeam { team, parent: None }
}

/// An organization membership (`membership` of the published schemas; the REST
/// org-membership without its `organization`): `role` `admin` for owners, `member` otherwise.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct OrgMembership {
    pub url: Uri,
    pub state: String,
    pub role: String,
    pub organization_url: Uri,
    pub user: SimpleUser,
}

pub fn org_membership(u: &Urls, org: &Account, user: &Account, role: &str) -> OrgMembership {
    let org_url = format!("{}/orgs/{}", u.api, org.login);
    OrgMembership {
        url: Uri(format!("{org_url}/memberships/{}", user.login)),
        state: "active".into(),
        role: if role == "owner" { "admin" } else { "member" }.into(),
        organization_url: Uri(org_url),
        user: shapes::simple_user(u, user),
    }
}

/// `team`: the action, the team (as it was), and for `edited` what changed.
#[derive(Serialize, JsonSchema)]
pub struct TeamBody {
    pub action: String,
    pub team: WebhookTeam,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<TeamChanges>,
}

/// `membership`: the user added to or removed from the team.
#[derive(Serialize, JsonSchema)]
pub struct MembershipBody {
    pub action: String,
    pub scope: String,
    pub member: SimpleUser,
    pub team: WebhookTeam,
}

/// `organization` `member_added`/`member_removed`: the membership (as it was, for a removal).
#[derive(Serialize, JsonSchema)]
pub struct OrganizationBody {
    pub action: String,
    pub membership: OrgMembership,
}

/// The organization-level event bodies.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OrgBody {
    Team(Box<TeamBody>),
    Membership(Box<MembershipBody>),
    Organization(Box<OrganizationBody>),
}

/// The body and action of an organization-level record's delivery; `None` when it makes none.
pub fn body(c: &mut dyn Conn, u: &Urls, org: &Account, r: &Record) -> Result<Option<(OrgBody, &'static str)>, DbError> {
    Ok(match r.clone() {
        Record::Team(t) => {
            let Some(action) = published::action("team", &t.action) else { return Ok(None) };
            Some((OrgBody::Team(Box::new(TeamBody { action: t.action, team: webhook_team(u, org, &t.team), changes: t.changes })), action))
        }
        Record::Membership(m) => {
            let (Some(action), Some(user)) = (published::action("membership", &m.action), accounts::by_id(c, m.member_id)?) else {
                return Ok(None);
            };
            let b = MembershipBody {
                action: m.action,
                scope: m.scope,
                member: shapes::simple_user(u, &user),
                team: webhook_team(u, org, &m.team),
            };
            Some((OrgBody::Membership(Box::new(b)), action))
        }
        Record::Organization(o) => {
            let (Some(action), Some(user)) = (published::action("organization", &o.action), accounts::by_id(c, o.member_id)?) else {
                return Ok(None);
            };
            Some((
                OrgBody::Organization(Box::new(OrganizationBody { action: o.action, membership: org_membership(u, org, &user, &o.role) })),
                action,
            ))
        }
        _ => None,
    })
}
