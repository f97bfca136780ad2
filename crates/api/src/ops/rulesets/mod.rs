//! Repository rules and rulesets (document 2; api-facts §1.7, §2, §4.14–4.15): the rules that
//! apply to a branch, and the rulesets of a repository with their history. Organization rulesets
//! (the parents) are made through the control plane (`control`). Reads need Metadata (public
//! repositories without credentials); writes Administration and repository admin.
pub mod body;
pub mod branches;
pub mod control;
pub mod enforce;
pub mod events;
pub mod matching;
pub mod suites;

use axum::http::StatusCode;
use platform_core::ids::node_id;
use platform_store::domain::repos::Repo;
use platform_store::domain::rulesets::{self, Actor, Fields, Ruleset};
use platform_store::DbError;
use schemars::{JsonSchema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::input::{by_handler_value, comma_list, present};
use crate::operation::{Access, Operation, Resp};
use crate::principal::Principal;
use crate::principal::Role;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, Pagination, Query};
use crate::shapes::Urls;
use crate::state::AppState;
use crate::typed::{Timestamp, Uri};
use body::Source;
use matching::{Condition, RepoCondition};

const SCOPES: &[&str] = &["repo"];
const READ: Access = Access::read(SCOPES, "metadata");
const WRITE: Access = Access::write(SCOPES, "administration");

#[derive(Deserialize, JsonSchema)]
struct ListQuery {
    #[serde(flatten)]
    page: Pagination,
    /// Include rulesets of the organization that apply to the repository (default true).
    includes_parents: Option<bool>,
    /// Comma-separated targets to list (branch, tag, push).
    #[schemars(with = "Option<String>", extend("pattern" = "^(branch|tag|push)(,(branch|tag|push))*$"), transform = comma_list)]
    targets: Option<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
struct GetQuery {
    /// Include rulesets of the organization that apply to the repository (default true).
    includes_parents: Option<bool>,
}

pub static BRANCH_RULES: Operation = Operation::get(
    "rules/list-for-branch",
    "/repos/{owner}/{repo}/rules/branches/{branch}",
    "Get rules for a branch",
)
.docs("https://docs.service.example/rest/repos/rules#get-rules-for-a-branch")
.access(READ)
.slash_param("branch")
// Not through the response cache: the compiled rulesets are cached, and an answer is a
// match and a join, cheaper than keying, storing and admitting it.
.responds(&[Resp::typed::<Vec<branches::BranchRule>>(
    200,
    "Every active rule of the repository's and organization's branch rulesets whose conditions match the branch (it need not exist).",
)
.with_headers(&["Link"])]);

pub static LIST: Operation = Operation::get("rulesets/list", "/repos/{owner}/{repo}/rulesets", "Get all repository rulesets")
    .docs("https://docs.service.example/rest/repos/rules#get-all-repository-rulesets")
    .access(READ)
    .cached()
    .responds(&[
        Resp::typed::<Vec<RulesetSummary>>(200, "The rulesets (summaries), repository first, then organization.").with_headers(&["Link"])
    ]);

pub static CREATE: Operation = Operation::post("rulesets/create", "/repos/{owner}/{repo}/rulesets", "Create a repository ruleset")
    .docs("https://docs.service.example/rest/repos/rules#create-a-repository-ruleset")
    .access(WRITE)
    .admin()
    .resource("Ruleset")
    .responds(&[Resp::typed::<FullRuleset>(201, "The ruleset was created.")]);

pub static GET: Operation = Operation::get("rulesets/get", "/repos/{owner}/{repo}/rulesets/{ruleset_id}", "Get a repository ruleset")
    .docs("https://docs.service.example/rest/repos/rules#get-a-repository-ruleset")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<FullRuleset>(200, "The ruleset.")]);

pub static UPDATE: Operation =
    Operation::put("rulesets/update", "/repos/{owner}/{repo}/rulesets/{ruleset_id}", "Update a repository ruleset")
        .docs("https://docs.service.example/rest/repos/rules#update-a-repository-ruleset")
        .access(WRITE)
        .admin()
        .resource("Ruleset")
        .responds(&[Resp::typed::<FullRuleset>(200, "The updated ruleset (fields not sent keep their value); a new version is recorded.")]);

pub static DELETE: Operation =
    Operation::delete("rulesets/delete", "/repos/{owner}/{repo}/rulesets/{ruleset_id}", "Delete a repository ruleset")
        .docs("https://docs.service.example/rest/repos/rules#delete-a-repository-ruleset")
        .access(WRITE)
        .admin()
        .responds(&[Resp::empty(204, "The ruleset and its history were deleted.")]);

pub static HISTORY: Operation =
    Operation::get("rulesets/list-history", "/repos/{owner}/{repo}/rulesets/{ruleset_id}/history", "Get repository ruleset history")
        .docs("https://docs.service.example/rest/repos/rules#get-repository-ruleset-history")
        .access(READ)
        .cached()
        .responds(&[Resp::typed::<Vec<RulesetVersion>>(200, "Versions of the ruleset, newest first.").with_headers(&["Link"])]);

pub static VERSION: Operation = Operation::get(
    "rulesets/get-version",
    "/repos/{owner}/{repo}/rulesets/{ruleset_id}/history/{version_id}",
    "Get repository ruleset version",
)
.docs("https://docs.service.example/rest/repos/rules#get-repository-ruleset-version")
.access(READ)
.cached()
.responds(&[Resp::typed::<RulesetVersionWithState>(200, "The version with the ruleset as it was (`state`).")]);

pub fn routes(api: Api) -> Api {
    suites::routes(api)
        .op(&BRANCH_RULES, branches::branch_rules)
        .op(&LIST, list)
        .op(&CREATE, create)
        .op(&GET, get)
        .op(&UPDATE, update)
        .op(&DELETE, delete)
        .op(&HISTORY, history)
        .op(&VERSION, version)
}

// The bodies: `body::definition` validates the fields it takes as JSON (`name` and the nested
// ones, with the platform's messages for every nested path) and merges an update over the
// current definition; the schemas publish the exact rules it enforces (one declaration).
#[derive(Deserialize, JsonSchema)]
struct CreateRuleset {
    #[schemars(schema_with = "name_schema")]
    name: Value,
    #[schemars(extend("enum" = body::TARGETS))]
    target: Option<String>,
    #[schemars(extend("enum" = body::ENFORCEMENTS))]
    enforcement: String,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "bypass_actors_body")]
    bypass_actors: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "conditions_body")]
    conditions: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "rules_body")]
    rules: Option<Value>,
}

// An update: the fields sent replace the current ones (`null` is refused, never "clear").
#[derive(Deserialize, JsonSchema)]
struct UpdateRuleset {
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "name_schema")]
    name: Option<Value>,
    #[schemars(extend("enum" = body::TARGETS))]
    target: Option<String>,
    #[schemars(extend("enum" = body::ENFORCEMENTS))]
    enforcement: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "bypass_actors_body")]
    bypass_actors: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "conditions_body")]
    conditions: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "rules_body")]
    rules: Option<Value>,
}

/// A create is an update of nothing: `body::definition` reads both alike.
impl From<CreateRuleset> for UpdateRuleset {
    fn from(c: CreateRuleset) -> Self {
        UpdateRuleset {
            name: Some(c.name),
            target: c.target,
            enforcement: Some(c.enforcement),
            bypass_actors: c.bypass_actors,
            conditions: c.conditions,
            rules: c.rules,
        }
    }
}

fn name_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler_value(body::name_schema())
}
fn bypass_actors_body(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler_value(body::bypass_actors_schema())
}
fn conditions_body(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler_value(body::conditions_schema())
}
fn rules_body(_: &mut SchemaGenerator) -> schemars::Schema {
    by_handler_value(body::rules_schema())
}

// ------------------------------------------------------------------ shapes

/// Where a ruleset comes from, as responses name it.
struct Origin {
    kind: &'static str,
    source: String,
    self_url: String,
    html_url: String,
}

/// `org` is the organization's login for organization rulesets; `repo` the repository otherwise.
fn origin(u: &Urls, rs: &Ruleset, owner_login: &str, repo_name: Option<&str>) -> Origin {
    match (rs.repo_id, repo_name) {
        (Some(_), Some(name)) => Origin {
            kind: "Repository",
            source: format!("{owner_login}/{name}"),
            self_url: format!("{}/repos/{owner_login}/{name}/rulesets/{}", u.api, rs.id),
            html_url: format!("{}/{owner_login}/{name}/rules/{}", u.web, rs.id),
        },
        _ => Origin {
            kind: "Organization",
            source: owner_login.to_string(),
            self_url: format!("{}/orgs/{owner_login}/rulesets/{}", u.api, rs.id),
            html_url: format!("{}/organizations/{owner_login}/settings/rules/{}", u.web, rs.id),
        },
    }
}

fn repo_origin(u: &Urls, rs: &Ruleset, repo: &Repo) -> Origin {
    origin(u, rs, &repo.owner.login, Some(&repo.name))
}

/// RulesetSummary: the list element, api-facts §4.14's summary fields.
#[derive(Serialize, JsonSchema)]
pub struct RulesetSummary {
    pub id: i64,
    pub name: String,
    #[schemars(extend("enum" = ["Repository", "Organization"]))]
    pub source_type: &'static str,
    /// `owner/repo` or the organization's login.
    pub source: String,
    #[schemars(extend("enum" = ["disabled", "active", "evaluate"]))]
    pub enforcement: String,
    pub node_id: String,
    #[serde(rename = "_links")]
    pub links: RulesetLinks,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The ruleset's API and web addresses.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RulesetLinks {
    #[serde(rename = "self")]
    pub self_link: Link,
    pub html: Link,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Link {
    pub href: Uri,
}

/// Ruleset: the full ruleset (api-facts §4.14); rules, conditions and bypass actors as
/// `body` declares them, stored as sent.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Ruleset")]
pub struct FullRuleset {
    #[serde(flatten)]
    pub summary: RulesetSummary,
    #[schemars(with = "String", extend("enum" = ["branch", "tag", "push", "repository"]))]
    pub target: Value,
    /// Shown to repository admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bypass_actors_schema")]
    pub bypass_actors: Option<Value>,
    /// For the caller, at repository level.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("enum" = ["always", "pull_requests_only", "never", "exempt"]))]
    pub current_user_can_bypass: Option<&'static str>,
    #[schemars(with = "Option<Map<String, Value>>")]
    pub conditions: Value,
    #[schemars(schema_with = "rules_schema")]
    pub rules: Value,
}

fn bypass_actors_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    body::bypass_actors_schema().try_into().expect("an object schema")
}

fn rules_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    body::rules_schema().try_into().expect("an object schema")
}

fn summary(o: &Origin, rs: &Ruleset) -> RulesetSummary {
    RulesetSummary {
        id: rs.id,
        name: rs.name.clone(),
        source_type: o.kind,
        source: o.source.clone(),
        enforcement: rs.enforcement.clone(),
        node_id: node_id("RepositoryRuleset", rs.id),
        links: RulesetLinks { self_link: Link { href: Uri(o.self_url.clone()) }, html: Link { href: Uri(o.html_url.clone()) } },
        created_at: Timestamp(rs.created_at),
        updated_at: Timestamp(rs.updated_at),
    }
}

fn definition_of(rs: &Ruleset) -> Value {
    serde_json::from_str(&rs.definition).unwrap_or(Value::Null)
}

/// The full ruleset object. `viewer`: the caller at repository level (bypass actors are shown
/// to repository admins only; `current_user_can_bypass` is for the caller).
fn full(o: &Origin, rs: &Ruleset, def: &Value, viewer: Option<&Viewer>) -> FullRuleset {
    let shows_bypass = viewer.is_none_or(|w| w.role == Role::Admin);
    FullRuleset {
        summary: summary(o, rs),
        target: def["target"].clone(),
        bypass_actors: shows_bypass.then(|| def["bypass_actors"].clone()),
        current_user_can_bypass: viewer.map(|w| w.can_bypass(&def["bypass_actors"])),
        conditions: def["conditions"].clone(),
        rules: def["rules"].clone(),
    }
}

/// Who is asking, for bypass decisions.
struct Viewer {
    role: Role,
    user_id: Option<i64>,
    /// The GitHub-App-style application acting (installation and user-to-server tokens).
    app_id: Option<i64>,
    org_owner: bool,
    teams: Vec<i64>,
}

/// The user and the GitHub-App-style application (installation and user-to-server tokens) a
/// caller acts as.
pub(crate) fn ids_of(p: &Principal) -> (Option<i64>, Option<i64>) {
    let app_id = match p {
        Principal::Token(t) => t.app.as_ref().filter(|a| a.kind == "app").map(|a| a.id),
        _ => None,
    };
    (p.user().map(|u| u.id), app_id)
}

/// Repository role ids of `RepositoryRole` bypass actors: write 4, admin 5.
fn role_id(role: Role) -> Option<i64> {
    match role {
        Role::Admin => Some(5),
        Role::Write => Some(4),
        _ => None,
    }
}

impl Viewer {
    async fn of(ctx: &Ctx, repo: &Repo, role: Role, defs: &[&Value]) -> ApiResult<Viewer> {
        let (user_id, app_id) = ids_of(&ctx.principal);
        Viewer::of_ids(&ctx.app, repo, role, user_id, app_id, defs).await
    }

    /// The viewer acting as the user `user_id` and the application `app_id`, whose role in `repo`
    /// is `role`; `defs`: the definitions whose bypass lists are to be judged (teams are looked
    /// up only when one names a team).
    async fn of_ids(
        app: &AppState,
        repo: &Repo,
        role: Role,
        user_id: Option<i64>,
        app_id: Option<i64>,
        defs: &[&Value],
    ) -> ApiResult<Viewer> {
        let has_team_actor =
            defs.iter().any(|d| d["bypass_actors"].as_array().is_some_and(|a| a.iter().any(|x| x["actor_type"] == "Team")));
        let teams = match user_id {
            Some(u) if has_team_actor => app.store.read(move |c| rulesets::team_ids_of(c, u)).await?,
            _ => Vec::new(),
        };
        let org_owner = user_id.is_some() && repo.owner.is_org() && role == Role::Admin;
        Ok(Viewer { role, user_id, app_id, org_owner, teams })
    }

    /// `always`, `pull_requests_only`, `exempt` or `never`: the most the caller's matching actors allow.
    fn can_bypass(&self, actors: &Value) -> &'static str {
        let mut best = 0;
        for a in actors.as_array().into_iter().flatten() {
            let id = a["actor_id"].as_i64();
            let matched = match a["actor_type"].as_str().unwrap_or_default() {
                "User" => self.user_id.is_some() && id == self.user_id,
                "Team" => id.is_some_and(|i| self.teams.contains(&i)),
                "Integration" => self.app_id.is_some() && id == self.app_id,
                "RepositoryRole" => id.is_some() && id == role_id(self.role),
                "OrganizationAdmin" => self.org_owner,
                _ => false, // DeployKey: never a caller of the API
            };
            if matched {
                best = best.max(match a["bypass_mode"].as_str() {
                    Some("exempt") => 3,
                    Some("pull_request") => 1,
                    _ => 2,
                });
            }
        }
        ["never", "pull_requests_only", "always", "exempt"][best]
    }
}

// ------------------------------------------------------------------ what applies where

/// The rulesets of a repository's owner organization whose repository condition takes it.
fn org_rulesets_for(c: &mut dyn platform_store::Conn, repo: &Repo) -> Result<Vec<Ruleset>, DbError> {
    if !repo.owner.is_org() {
        return Ok(Vec::new());
    }
    let all = rulesets::for_org(c, repo.owner.id)?;
    Ok(all
        .into_iter()
        .filter(|rs| RepoCondition::compile(&definition_of(rs)["conditions"]).is_some_and(|cond| cond.applies(repo.id, &repo.name)))
        .collect())
}

/// The rulesets judged on a ref change of `repo`: the active and evaluate ones, the repository's
/// and its organization's that apply to it, with their definitions.
pub(crate) async fn enforced(app: &AppState, repo: &Repo) -> ApiResult<Vec<(Ruleset, Value)>> {
    let r = repo.clone();
    let all = app
        .store
        .read(move |c| -> Result<_, DbError> {
            let mut all = rulesets::for_repo(c, r.id)?;
            all.extend(org_rulesets_for(c, &r)?);
            Ok(all)
        })
        .await?;
    Ok(all
        .into_iter()
        .filter(|rs| rs.enforcement == "active" || rs.enforcement == "evaluate")
        .map(|rs| {
            let d = definition_of(&rs);
            (rs, d)
        })
        .collect())
}

/// [`enforced`] rulesets ready for [`enforce::evaluate`], with the bypass of each for the actor
/// (the user and application of [`ids_of`], whose role in `repo` is `role`).
pub(crate) async fn applicable(
    app: &AppState,
    repo: &Repo,
    all: &[(Ruleset, Value)],
    (user_id, app_id): (Option<i64>, Option<i64>),
    role: Role,
) -> ApiResult<Vec<enforce::Applicable>> {
    let defs: Vec<&Value> = all.iter().map(|(_, d)| d).collect();
    let viewer = Viewer::of_ids(app, repo, role, user_id, app_id, &defs).await?;
    Ok(all
        .iter()
        .map(|(rs, def)| {
            let o = repo_origin(&app.urls, rs, repo);
            enforce::Applicable {
                id: rs.id,
                name: rs.name.clone(),
                source_type: o.kind,
                source: o.source,
                target: rs.target.clone(),
                enforcement: rs.enforcement.clone(),
                ref_name: Condition::compile(&def["conditions"]["ref_name"]),
                rules: def["rules"].as_array().cloned().unwrap_or_default(),
                bypass: enforce::Bypass::of(viewer.can_bypass(&def["bypass_actors"])),
            }
        })
        .collect())
}

/// The repository's rulesets, then (with `parents`) the organization's that apply to it.
async fn visible(ctx: &Ctx, repo: &Repo, parents: bool) -> ApiResult<Vec<Ruleset>> {
    let r = repo.clone();
    Ok(ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let mut all = rulesets::for_repo(c, r.id)?;
            if parents {
                all.extend(org_rulesets_for(c, &r)?);
            }
            Ok(all)
        })
        .await?)
}

// ------------------------------------------------------------------ handlers

/// A numeric id of the path; anything else names nothing (404).
fn path_id(ctx: &Ctx, name: &str) -> ApiResult<i64> {
    ctx.param(name).parse::<i64>().map_err(|_| ApiError::not_found())
}

async fn list(ctx: Ctx, Query(q): Query<ListQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page.page(30, 100);
    if let Some(bad) = q.targets.iter().flatten().find(|x| !body::TARGETS.contains(&x.as_str())) {
        return Err(ApiError::invalid_request(format!("For 'targets', {bad:?} is not one of branch, tag, push.")));
    }
    let all: Vec<Ruleset> = visible(&ctx, repo, q.includes_parents.unwrap_or(true))
        .await?
        .into_iter()
        .filter(|rs| q.targets.as_ref().is_none_or(|t| t.contains(&rs.target)))
        .collect();
    let total = all.len() as i64;
    let items: Vec<RulesetSummary> = all
        .iter()
        .skip(page.offset() as usize)
        .take(page.per_page as usize)
        .map(|rs| summary(&repo_origin(&ctx.app.urls, rs, repo), rs))
        .collect();
    Ok(Reply::ok(items).opt_header("link", ctx.link(page, total)))
}

fn source_of(repo: &Repo) -> Source {
    if repo.owner.is_org() {
        Source::OrgRepository
    } else {
        Source::UserRepository
    }
}

/// Who made a change, for the history.
fn actor(p: &Principal) -> (Option<i64>, Option<&'static str>) {
    match p {
        Principal::Token(t) => match &t.user {
            Some(u) => (Some(u.id), Some("User")),
            None => (t.app.as_ref().map(|a| a.id), Some("Integration")),
        },
        _ => (None, None),
    }
}

fn fields(def: &Value) -> (String, String, String, String) {
    let s = |k: &str| def[k].as_str().unwrap_or_default().to_string();
    (s("name"), s("target"), s("enforcement"), def.to_string())
}

/// What recording an API change needs (`events::record`): the repository, now, the URLs and the
/// calling user.
fn recording(ctx: &Ctx) -> (Repo, i64, Urls, Option<i64>) {
    (ctx.repo().clone(), ctx.app.clock.now(), ctx.app.urls.clone(), ctx.principal.user().map(|x| x.id))
}

/// The full object answered to a repository-level caller.
async fn respond(ctx: &Ctx, rs: &Ruleset, status: StatusCode) -> ApiResult<Reply> {
    let (repo, def) = (ctx.repo(), definition_of(rs));
    let viewer = Viewer::of(ctx, repo, ctx.role(), &[&def]).await?;
    Ok(Reply::json(status, full(&repo_origin(&ctx.app.urls, rs, repo), rs, &def, Some(&viewer))))
}

async fn create(ctx: Ctx, Body(b): Body<CreateRuleset>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let def = body::definition(&b.into(), None, source_of(repo))?;
    let (name, target, enforcement, definition) = fields(&def);
    let (actor_id, actor_kind) = actor(&ctx.principal);
    let (r, now, u, user) = recording(&ctx);
    let rs = ctx
        .write(move |c| -> Result<_, DbError> {
            let f = Fields { name: &name, target: &target, enforcement: &enforcement, definition: &definition };
            let rs = rulesets::create(c, r.owner.id, Some(r.id), &f, Actor { id: actor_id, kind: actor_kind }, now)?;
            events::record(c, &u, (&r.owner, Some(&r)), &rs, events::Change::Created, user, now)?;
            Ok(rs)
        })
        .await?;
    respond(&ctx, &rs, StatusCode::CREATED).await
}

/// A ruleset the repository path reaches: its own, or (with `parents`) an organization ruleset
/// that applies to it; anything else is 404.
async fn load(ctx: &Ctx, parents: bool) -> ApiResult<Ruleset> {
    let id = path_id(ctx, "ruleset_id")?;
    let r = ctx.repo().clone();
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(rs) = rulesets::get(c, id)? else { return Ok(None) };
            if rs.repo_id == Some(r.id) {
                return Ok(Some(rs));
            }
            if parents && rs.repo_id.is_none() && rs.owner_id == r.owner.id {
                return Ok(org_rulesets_for(c, &r)?.into_iter().find(|x| x.id == id));
            }
            Ok(None)
        })
        .await?;
    found.ok_or_else(ApiError::not_found)
}

async fn get(ctx: Ctx, Query(q): Query<GetQuery>) -> ApiResult<Reply> {
    let rs = load(&ctx, q.includes_parents.unwrap_or(true)).await?;
    respond(&ctx, &rs, StatusCode::OK).await
}

async fn update(ctx: Ctx, Body(b): Body<UpdateRuleset>) -> ApiResult<Reply> {
    let id = load(&ctx, false).await?.id;
    let source = source_of(ctx.repo());
    let (actor_id, actor_kind) = actor(&ctx.principal);
    let (r, now, u, user) = recording(&ctx);
    let rs = ctx
        .write(move |c| -> ApiResult<_> {
            // The body merged with the ruleset as it is under its lock, not as read before: two
            // changes of different fields at once (on any nodes) both stay, each recorded once.
            let current = rulesets::locked(c, id)?.filter(|rs| rs.repo_id == Some(r.id)).ok_or_else(ApiError::not_found)?;
            let def = body::definition(&b, Some(&definition_of(&current)), source)?;
            let (name, target, enforcement, definition) = fields(&def);
            let f = Fields { name: &name, target: &target, enforcement: &enforcement, definition: &definition };
            let rs = rulesets::update(c, current.id, &f, Actor { id: actor_id, kind: actor_kind }, now)?;
            events::record(c, &u, (&r.owner, Some(&r)), &rs, events::Change::Edited { before: &current }, user, now)?;
            Ok(rs)
        })
        .await?;
    respond(&ctx, &rs, StatusCode::OK).await
}

async fn delete(ctx: Ctx) -> ApiResult<Reply> {
    let rs = load(&ctx, false).await?;
    let (r, now, u, user) = recording(&ctx);
    ctx.write(move |c| -> ApiResult<()> {
        // Under its row lock: deleted, and recorded as it is, by one request on any node.
        let rs = rulesets::locked(c, rs.id)?.ok_or_else(ApiError::not_found)?;
        rulesets::delete(c, rs.id)?;
        Ok(events::record(c, &u, (&r.owner, Some(&r)), &rs, events::Change::Deleted, user, now)?)
    })
    .await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}

/// RulesetVersion: an entry of a ruleset's history.
#[derive(Serialize, JsonSchema)]
pub struct RulesetVersion {
    pub version_id: i64,
    pub actor: VersionActor,
    pub updated_at: Timestamp,
}

/// Who made the change: null when no user or application did (the control plane).
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct VersionActor {
    pub id: Option<i64>,
    /// `User`, `Integration`, or the owner's kind for control-plane changes.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// RulesetVersionWithState: a version and the ruleset as it left it.
#[derive(Serialize, JsonSchema)]
pub struct RulesetVersionWithState {
    #[serde(flatten)]
    pub version: RulesetVersion,
    pub state: FullRuleset,
}

fn ruleset_version(v: &rulesets::Version) -> RulesetVersion {
    RulesetVersion {
        version_id: v.id,
        actor: VersionActor { id: v.actor_id, kind: v.actor_type.clone() },
        updated_at: Timestamp(v.created_at),
    }
}

async fn history(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let page = q.page(30, 100);
    let rs = load(&ctx, false).await?;
    let (versions, total) = ctx.app.store.read(move |c| rulesets::history(c, rs.id, page.offset(), page.per_page)).await?;
    let items: Vec<RulesetVersion> = versions.iter().map(ruleset_version).collect();
    Ok(Reply::ok(items).opt_header("link", ctx.link(page, total)))
}

async fn version(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let rs = load(&ctx, false).await?;
    let vid = path_id(&ctx, "version_id")?;
    let id = rs.id;
    let v = ctx.app.store.read(move |c| rulesets::version(c, id, vid)).await?.ok_or_else(ApiError::not_found)?;
    // The state is the ruleset as this version left it.
    let state_def: Value = serde_json::from_str(&v.definition).unwrap_or(Value::Null);
    let then = Ruleset {
        name: state_def["name"].as_str().unwrap_or_default().to_string(),
        target: state_def["target"].as_str().unwrap_or_default().to_string(),
        enforcement: state_def["enforcement"].as_str().unwrap_or_default().to_string(),
        updated_at: v.created_at,
        ..rs.clone()
    };
    let viewer = Viewer::of(&ctx, repo, ctx.role(), &[&state_def]).await?;
    let state = full(&repo_origin(&ctx.app.urls, &then, repo), &then, &state_def, Some(&viewer));
    Ok(Reply::ok(RulesetVersionWithState { version: ruleset_version(&v), state }))
}
