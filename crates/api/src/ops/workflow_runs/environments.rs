//! Deployment environments of a repository (read): their protection rules are the ones runs
//! wait for, so they live with the runs (store `workflow_runs`, shapes `EnvironmentRef`,
//! `PendingReviewer`).
use platform_core::ids::node_id;
use platform_store::domain::accounts;
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs::{self as runs};
use platform_store::{Conn, DbError};
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{self, EnvironmentRef, PendingReviewer, Reviewer};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::shapes::{simple_user, Urls};
use crate::typed::Timestamp;

// Actions read (hosted: apps need actions:read), anonymous on a public repository.
use super::READ;

pub static LIST: Operation = Operation::get("environments/list", "/repos/{owner}/{repo}/environments", "List environments")
    .docs("https://docs.service.example/rest/deployments/environments#list-environments")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<EnvironmentList>(200, "The repository's environments by name.").with_headers(&["Link"])]);

pub static GET: Operation =
    Operation::get("environments/get", "/repos/{owner}/{repo}/environments/{environment_name}", "Get an environment")
        .docs("https://docs.service.example/rest/deployments/environments#get-an-environment")
        .access(READ)
        .cached()
        .responds(&[Resp::typed::<Environment>(200, "The environment and its protection rules.")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET, get)
}

/// A protection rule: a wait timer or required reviewers.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum ProtectionRule {
    WaitTimer {
        id: i64,
        node_id: String,
        #[serde(rename = "type")]
        #[schemars(extend("enum" = ["wait_timer"]))]
        kind: &'static str,
        /// Minutes.
        wait_timer: i64,
    },
    RequiredReviewers {
        id: i64,
        node_id: String,
        prevent_self_review: bool,
        #[serde(rename = "type")]
        #[schemars(extend("enum" = ["required_reviewers"]))]
        kind: &'static str,
        reviewers: Vec<PendingReviewer>,
    },
}

/// Which branches may deploy; null here: every branch may (custom policies are not modelled).
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct DeploymentBranchPolicy {
    pub protected_branches: bool,
    pub custom_branch_policies: bool,
}

/// A deployment environment.
#[derive(Serialize, JsonSchema)]
pub struct Environment {
    #[serde(flatten)]
    pub environment: EnvironmentRef,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub can_admins_bypass: bool,
    pub protection_rules: Vec<ProtectionRule>,
    pub deployment_branch_policy: Option<DeploymentBranchPolicy>,
}

/// A page of environments.
#[derive(Serialize, JsonSchema)]
pub struct EnvironmentList {
    pub total_count: i64,
    pub environments: Vec<Environment>,
}

/// Required reviewers as shapes (accounts and teams since removed are left out).
pub fn reviewers(c: &mut dyn Conn, u: &Urls, list: &[runs::Reviewer]) -> Result<Vec<PendingReviewer>, DbError> {
    let mut out = Vec::new();
    for rv in list {
        let v = match rv.kind.as_str() {
            "User" => accounts::by_id(c, rv.id)?.map(|a| Reviewer::User(simple_user(u, &a))),
            _ => runs::team(c, rv.id)?.map(|(t, org)| Reviewer::Team(shapes::team(u, &t, &org))),
        };
        if let Some(v) = v {
            out.push(PendingReviewer { kind: rv.kind.clone(), reviewer: v });
        }
    }
    Ok(out)
}

/// An environment with its rules; the rules' ids derive from the environment's (one of each kind).
fn environment(c: &mut dyn Conn, u: &Urls, repo: &Repo, e: &runs::Environment) -> Result<Environment, DbError> {
    let mut rules = Vec::new();
    if e.wait_timer > 0 {
        let id = e.id * 10 + 1;
        rules.push(ProtectionRule::WaitTimer { id, node_id: node_id("ProtectionRule", id), kind: "wait_timer", wait_timer: e.wait_timer });
    }
    let list = runs::reviewers(c, e.id)?;
    if !list.is_empty() {
        let id = e.id * 10 + 2;
        rules.push(ProtectionRule::RequiredReviewers {
            id,
            node_id: node_id("ProtectionRule", id),
            prevent_self_review: false,
            kind: "required_reviewers",
            reviewers: reviewers(c, u, &list)?,
        });
    }
    Ok(Environment {
        environment: shapes::environment(u, repo, e),
        created_at: Timestamp(e.created_at),
        updated_at: Timestamp(e.updated_at),
        can_admins_bypass: true,
        protection_rules: rules,
        deployment_branch_policy: None,
    })
}

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let page = q.page(30, 100);
    let (u, r) = (ctx.app.urls.clone(), ctx.repo().clone());
    let body = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let (list, total) = runs::environments(c, r.id, page.offset(), page.per_page)?;
            let environments = list.iter().map(|e| environment(c, &u, &r, e)).collect::<Result<Vec<_>, _>>()?;
            Ok(EnvironmentList { total_count: total, environments })
        })
        .await?;
    let total = body.total_count;
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let (u, r, name) = (ctx.app.urls.clone(), ctx.repo().clone(), ctx.param("environment_name").to_string());
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(e) = runs::environment_named(c, r.id, &name)? else { return Ok(None) };
            Ok(Some(environment(c, &u, &r, &e)?))
        })
        .await?;
    Ok(Reply::ok(found.ok_or_else(ApiError::not_found)?))
}
