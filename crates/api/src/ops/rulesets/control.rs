//! Control plane for rulesets: organization rulesets (the parents repository rulesets list with
//! `includes_parents`; the spec has no operations for them) and repository rulesets for seeds.
//!   POST   /_admin/orgs/{org}/rulesets        body as the API's create, plus `conditions.repository_name`
//!                                             `{include, exclude, protected}` or `conditions.repository_id`
//!                                             `{repository_ids}` (exactly one) → 201 the ruleset
//!   PUT    /_admin/orgs/{org}/rulesets/{id}   fields to change → 200 the ruleset
//!   DELETE /_admin/orgs/{org}/rulesets/{id}   → 204
//!   POST   /_admin/repos/{owner}/{repo}/rulesets → 201 the ruleset (as the API's create)
//! Versions made here are recorded with the owning account as the actor.
use axum::extract::{Path, State};
use axum::http::StatusCode;
use platform_store::domain::accounts::Account;
use platform_store::domain::rulesets::{self, Actor, Fields, Ruleset};
use platform_store::Conn;
use serde_json::Value;

use super::body::{self, Source};
use super::{definition_of, events, fields, full, origin, source_of, FullRuleset};
use crate::error::{ApiError, ApiResult};
use crate::input::BodyRules;
use crate::operation::Operation;
use crate::reply::Reply;
use crate::request::JsonBody;
use crate::shapes::Urls;
use crate::state::Shared;

/// Where a control-plane ruleset goes: an organization, or a repository (`owner/name`).
pub enum Scope<'a> {
    Org(&'a str),
    Repo(&'a str),
}

/// A created or changed ruleset with what its shape needs: the owner and the repository's name.
pub type Made = (Account, Option<String>, Ruleset);

/// Validates and creates a ruleset in one transaction (the admin API and seeds).
pub fn create(c: &mut dyn Conn, u: &Urls, scope: Scope, body: Value, now: i64) -> ApiResult<Made> {
    let (owner, repo, source) = match scope {
        Scope::Org(login) => (crate::ops::provision::org(c, login)?, None, Source::Organization),
        Scope::Repo(full_name) => {
            let r = crate::ops::provision::repo(c, full_name)?;
            let source = source_of(&r);
            (r.owner.clone(), Some(r), source)
        }
    };
    // The create operation's body, checked as the API checks it.
    let b: super::CreateRuleset = read_as(&super::CREATE, body)?;
    let def = body::definition(&b.into(), None, source)?;
    let (name, target, enforcement, definition) = fields(&def);
    let f = Fields { name: &name, target: &target, enforcement: &enforcement, definition: &definition };
    let rs = rulesets::create(c, owner.id, repo.as_ref().map(|r| r.id), &f, actor_of(&owner), now)?;
    events::record(c, u, (&owner, repo.as_ref()), &rs, events::Change::Created, None, now)?;
    Ok((owner, repo.map(|r| r.name), rs))
}

/// `body` checked and read as the API's `op` reads the `B` its handler takes.
fn read_as<B: serde::de::DeserializeOwned + schemars::JsonSchema>(op: &Operation, body: Value) -> ApiResult<B> {
    BodyRules::of(op.resource.unwrap_or_default(), crate::typed::schema_of::<B>).read(body)
}

fn actor_of(owner: &Account) -> Actor<'_> {
    Actor { id: Some(owner.id), kind: Some(owner.kind.as_str()) }
}

fn shape(app: &Shared, (owner, repo_name, rs): &Made) -> FullRuleset {
    full(&origin(&app.urls, rs, &owner.login, repo_name.as_deref()), rs, &definition_of(rs), None)
}

fn org_ruleset(c: &mut dyn Conn, org: &str, id: &str) -> ApiResult<(Account, Ruleset)> {
    let org = crate::ops::provision::org(c, org)?;
    let id = id.parse::<i64>().map_err(|_| ApiError::not_found())?;
    let rs = rulesets::locked(c, id)?.filter(|r| r.repo_id.is_none() && r.owner_id == org.id).ok_or_else(ApiError::not_found)?;
    Ok((org, rs))
}

pub async fn create_org(State(app): State<Shared>, Path(org): Path<String>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let now = app.clock.now();
    let u = app.urls.clone();
    let made = app.store.write(move |c| create(c, &u, Scope::Org(&org), b, now)).await?;
    Ok(Reply::created(shape(&app, &made)))
}

pub async fn create_repo(
    State(app): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let now = app.clock.now();
    let u = app.urls.clone();
    let made = app.store.write(move |c| create(c, &u, Scope::Repo(&format!("{owner}/{repo}")), b, now)).await?;
    Ok(Reply::created(shape(&app, &made)))
}

pub async fn update_org(State(app): State<Shared>, Path((org, id)): Path<(String, String)>, JsonBody(b): JsonBody) -> ApiResult<Reply> {
    let (now, u) = (app.clock.now(), app.urls.clone());
    let made = app
        .store
        .write(move |c| -> ApiResult<Made> {
            let (org, rs) = org_ruleset(c, &org, &id)?;
            let b: super::UpdateRuleset = read_as(&super::UPDATE, b)?;
            let def = body::definition(&b, Some(&definition_of(&rs)), Source::Organization)?;
            let (name, target, enforcement, definition) = fields(&def);
            let f = Fields { name: &name, target: &target, enforcement: &enforcement, definition: &definition };
            let after = rulesets::update(c, rs.id, &f, actor_of(&org), now)?;
            events::record(c, &u, (&org, None), &after, events::Change::Edited { before: &rs }, None, now)?;
            Ok((org, None, after))
        })
        .await?;
    Ok(Reply::ok(shape(&app, &made)))
}

pub async fn delete_org(State(app): State<Shared>, Path((org, id)): Path<(String, String)>) -> ApiResult<Reply> {
    let (now, u) = (app.clock.now(), app.urls.clone());
    app.store
        .write(move |c| -> ApiResult<()> {
            let (org, rs) = org_ruleset(c, &org, &id)?;
            // Under its row lock: deleted, and recorded as it is, by one request on any node.
            let rs = rulesets::locked(c, rs.id)?.ok_or_else(ApiError::not_found)?;
            rulesets::delete(c, rs.id)?;
            Ok(events::record(c, &u, (&org, None), &rs, events::Change::Deleted, None, now)?)
        })
        .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// A ruleset of the seed file: an organization's (`org`) or a repository's (`repo`,
/// `owner/name`), with the body the create operation takes.
#[derive(serde::Deserialize)]
pub struct SeedRuleset {
    pub org: Option<String>,
    pub repo: Option<String>,
    #[serde(flatten)]
    pub body: serde_json::Map<String, serde_json::Value>,
}

/// A seed's ruleset: created unless one of that name exists there (seeds load again safely).
pub fn seed(c: &mut dyn Conn, u: &Urls, r: &SeedRuleset, now: i64) -> ApiResult<()> {
    let (scope, existing) = match (&r.org, &r.repo) {
        (Some(o), None) => {
            let org = crate::ops::provision::org(c, o)?;
            (Scope::Org(o), rulesets::for_org(c, org.id)?)
        }
        (None, Some(full_name)) => {
            let repo = crate::ops::provision::repo(c, full_name)?;
            (Scope::Repo(full_name), rulesets::for_repo(c, repo.id)?)
        }
        _ => {
            return Err(ApiError::invalid_field(
                "Ruleset",
                "org",
                "invalid",
                Some("a seeded ruleset names exactly one of org or repo".into()),
            ))
        }
    };
    let name = r.body.get("name").and_then(Value::as_str).unwrap_or_default();
    if !existing.iter().any(|e| e.name == name) {
        create(c, u, scope, Value::Object(r.body.clone()), now)?;
    }
    Ok(())
}

/// The control plane's part: rulesets of any organization or repository, without a token.
pub fn routes(r: axum::Router<crate::state::Shared>) -> axum::Router<crate::state::Shared> {
    use axum::routing::{post, put};
    r.route("/orgs/{org}/rulesets", post(create_org))
        .route("/orgs/{org}/rulesets/{id}", put(update_org).delete(delete_org))
        .route("/repos/{owner}/{repo}/rulesets", post(create_repo))
}
