//! Rule suites (the hosted "rule insights"): every ref change rulesets were evaluated for, with
//! each rule's outcome, as [`super::enforce`] judged it and `ops::git_hosting::rules` recorded it.
//! `GET /repos/{owner}/{repo}/rulesets/rule-suites` (push access; Administration read) and
//! `GET /orgs/{org}/rulesets/rule-suites` (owners; organization Administration read), each with
//! `…/{rule_suite_id}`. Filters as hosted: `ref` (full, or a short name matching a branch or a
//! tag), `time_period` (`hour`, `day` (default), `week`, `month`), `actor_name`,
//! `rule_suite_result` (`pass`, `fail`, `bypass`, `all`), `repository_name` (organizations).
use platform_store::domain::rule_suites::{self, Filter, Suite};
use platform_store::domain::rulesets as store_rulesets;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::enforce::RuleEvaluation;
use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::typed::Timestamp;

const REPO_ACCESS: Access = Access::token(&["repo"], Some(("administration", Level::Read)), Level::Write);
const ORG_ACCESS: Access = Access::token(&["admin:org"], Some(("organization_administration", Level::Read)), Level::Read);

#[derive(Deserialize, JsonSchema)]
struct RepoQuery {
    #[serde(flatten)]
    page: Pagination,
    /// The ref: a full name, or a short one (then branches and tags of that name). No wildcards.
    #[serde(rename = "ref")]
    ref_name: Option<String>,
    /// Suites of the last hour, day (default), week or month.
    #[schemars(extend("enum" = ["hour", "day", "week", "month"]))]
    time_period: Option<String>,
    /// The login of the actor who made the change.
    actor_name: Option<String>,
    /// The suites of this result (default all).
    #[schemars(extend("enum" = ["pass", "fail", "bypass", "all"]))]
    rule_suite_result: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct OrgQuery {
    #[serde(flatten)]
    filters: RepoQuery,
    /// The name of the repository to filter on.
    repository_name: Option<String>,
}

pub static LIST: Operation =
    Operation::get("repos/get-repo-rule-suites", "/repos/{owner}/{repo}/rulesets/rule-suites", "List repository rule suites")
        .docs("https://docs.service.example/rest/repos/rule-suites#list-repository-rule-suites")
        .access(REPO_ACCESS)
        .responds(&[Resp::typed::<Vec<RuleSuiteSummary>>(200, "The repository's rule suites, newest first.").with_headers(&["Link"])]);

pub static GET: Operation = Operation::get(
    "repos/get-repo-rule-suite",
    "/repos/{owner}/{repo}/rulesets/rule-suites/{rule_suite_id}",
    "Get a repository rule suite",
)
.docs("https://docs.service.example/rest/repos/rule-suites#get-a-repository-rule-suite")
.access(REPO_ACCESS)
.responds(&[Resp::typed::<RuleSuite>(200, "The rule suite with each rule's evaluation.")]);

pub static ORG_LIST: Operation =
    Operation::get("repos/get-org-rule-suites", "/orgs/{org}/rulesets/rule-suites", "List organization rule suites")
        .docs("https://docs.service.example/rest/orgs/rule-suites#list-organization-rule-suites")
        .access(ORG_ACCESS)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<Vec<RuleSuiteSummary>>(200, "The rule suites of the organization's repositories, newest first.")
            .with_headers(&["Link"])]);

pub static ORG_GET: Operation =
    Operation::get("repos/get-org-rule-suite", "/orgs/{org}/rulesets/rule-suites/{rule_suite_id}", "Get an organization rule suite")
        .docs("https://docs.service.example/rest/orgs/rule-suites#get-an-organization-rule-suite")
        .access(ORG_ACCESS)
        .on(On::OrgOwner)
        .responds(&[Resp::typed::<RuleSuite>(200, "The rule suite with each rule's evaluation.")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET, get).op(&ORG_LIST, org_list).op(&ORG_GET, org_get)
}

/// RuleSuiteSummary: an element of a rule suite list.
#[derive(Serialize, JsonSchema)]
pub struct RuleSuiteSummary {
    pub id: i64,
    /// The user who made the change (null for an application or the organization).
    pub actor_id: Option<i64>,
    pub actor_name: Option<String>,
    /// The ref's value before the change (40 zeros for a creation).
    pub before_sha: String,
    /// Its value after (40 zeros for a deletion).
    pub after_sha: String,
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub repository_id: i64,
    pub repository_name: String,
    pub pushed_at: Timestamp,
    /// Over active rulesets: `bypass` when only rules the actor may bypass failed.
    #[schemars(extend("enum" = ["pass", "fail", "bypass"]))]
    pub result: String,
    /// Over active and evaluate rulesets: what the result would be were they all active.
    #[schemars(extend("enum" = ["pass", "fail", "bypass"]))]
    pub evaluation_result: Option<String>,
}

/// RuleSuite: a rule suite with each rule's evaluation.
#[derive(Serialize, JsonSchema)]
pub struct RuleSuite {
    #[serde(flatten)]
    pub summary: RuleSuiteSummary,
    pub rule_evaluations: Vec<RuleEvaluationShape>,
}

/// One rule's evaluation.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "RuleEvaluation")]
pub struct RuleEvaluationShape {
    pub rule_source: RuleSource,
    /// The ruleset's enforcement then (`deleted ruleset` once it is gone).
    #[schemars(extend("enum" = ["active", "evaluate", "deleted ruleset"]))]
    pub enforcement: String,
    #[schemars(extend("enum" = ["pass", "fail"]))]
    pub result: String,
    pub rule_type: String,
    /// Why the rule failed (null when it passed).
    pub details: Option<String>,
}

/// Where the rule came from.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RuleSource {
    /// `ruleset`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: Option<i64>,
    pub name: Option<String>,
}

fn summary(s: &Suite) -> RuleSuiteSummary {
    let n = &s.suite;
    RuleSuiteSummary {
        id: s.id,
        actor_id: n.actor_id,
        actor_name: n.actor_name.clone(),
        before_sha: n.before_sha.clone(),
        after_sha: n.after_sha.clone(),
        ref_name: n.ref_name.clone(),
        repository_id: n.repo_id,
        repository_name: n.repository_name.clone(),
        pushed_at: Timestamp(s.at),
        result: n.result.clone(),
        evaluation_result: Some(n.evaluation_result.clone()),
    }
}

fn period(p: Option<&str>) -> ApiResult<i64> {
    Ok(match p.unwrap_or("day") {
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        "month" => 30 * 86_400,
        other => return Err(ApiError::invalid_request(format!("For 'time_period', {other:?} is not one of hour, day, week, month."))),
    })
}

fn filter(ctx: &Ctx, q: &RepoQuery) -> ApiResult<Filter> {
    let result = match q.rule_suite_result.as_deref() {
        None | Some("all") => None,
        Some(r @ ("pass" | "fail" | "bypass")) => Some(r.to_string()),
        Some(other) => {
            return Err(ApiError::invalid_request(format!("For 'rule_suite_result', {other:?} is not one of pass, fail, bypass, all.")))
        }
    };
    if q.ref_name.as_deref().is_some_and(|r| r.contains(['*', '?', '[', '{'])) {
        return Err(ApiError::invalid_request("For 'ref', wildcard characters are not allowed."));
    }
    Ok(Filter {
        ref_name: q.ref_name.clone().filter(|r| !r.is_empty()),
        actor_name: q.actor_name.clone().filter(|a| !a.is_empty()),
        result,
        since: ctx.app.clock.now() - period(q.time_period.as_deref())?,
        ..Filter::default()
    })
}

async fn page_of(ctx: &Ctx, f: Filter, page: &Pagination) -> ApiResult<Reply> {
    let page = page.page(30, 100);
    let (suites, total) = ctx.app.store.read(move |c| rule_suites::list(c, &f, page.offset(), page.per_page)).await?;
    let items: Vec<RuleSuiteSummary> = suites.iter().map(summary).collect();
    Ok(Reply::ok(items).opt_header("link", ctx.link(page, total)))
}

async fn list(ctx: Ctx, Query(q): Query<RepoQuery>) -> ApiResult<Reply> {
    let f = Filter { repo_id: Some(ctx.repo().id), ..filter(&ctx, &q)? };
    page_of(&ctx, f, &q.page).await
}

async fn org_list(ctx: Ctx, Query(q): Query<OrgQuery>) -> ApiResult<Reply> {
    let f = Filter {
        owner_id: Some(ctx.org().org.id),
        repository_name: q.repository_name.clone().filter(|n| !n.is_empty()),
        ..filter(&ctx, &q.filters)?
    };
    page_of(&ctx, f, &q.filters.page).await
}

/// The suite of the path, if `owns` says it is the path's (anything else is 404).
async fn one(ctx: &Ctx, owns: impl Fn(&Suite) -> bool) -> ApiResult<Reply> {
    let id = ctx.param("rule_suite_id").parse::<i64>().map_err(|_| ApiError::not_found())?;
    let (suite, live) = ctx
        .app
        .store
        .read(move |c| -> Result<_, platform_store::DbError> {
            let Some(s) = rule_suites::get(c, id)? else { return Ok((None, Vec::new())) };
            let evals: Vec<RuleEvaluation> = serde_json::from_str(&s.suite.evaluations).unwrap_or_default();
            let mut ids: Vec<i64> = evals.iter().map(|e| e.ruleset_id).collect();
            ids.sort_unstable();
            ids.dedup();
            let mut live = Vec::new();
            for i in ids {
                if store_rulesets::get(c, i)?.is_some() {
                    live.push(i);
                }
            }
            Ok((Some(s), live))
        })
        .await?;
    let suite = suite.filter(|s| owns(s)).ok_or_else(ApiError::not_found)?;
    let evals: Vec<RuleEvaluation> = serde_json::from_str(&suite.suite.evaluations).unwrap_or_default();
    let rule_evaluations = evals
        .into_iter()
        .map(|e| RuleEvaluationShape {
            rule_source: RuleSource { kind: "ruleset".into(), id: Some(e.ruleset_id), name: Some(e.ruleset_name) },
            enforcement: if live.contains(&e.ruleset_id) { e.enforcement } else { "deleted ruleset".into() },
            result: e.result,
            rule_type: e.rule_type,
            details: e.details,
        })
        .collect();
    Ok(Reply::ok(RuleSuite { summary: summary(&suite), rule_evaluations }))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let repo_id = ctx.repo().id;
    one(&ctx, |s| s.suite.repo_id == repo_id).await
}

async fn org_get(ctx: Ctx) -> ApiResult<Reply> {
    let org_id = ctx.org().org.id;
    one(&ctx, |s| s.suite.owner_id == org_id).await
}
