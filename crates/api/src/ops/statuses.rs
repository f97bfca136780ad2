//! Commit statuses (document 2).
use platform_core::ids::node_id;
use platform_core::status::STATES;
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::statuses::Status;
use platform_store::domain::statuses::{self, NewStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::input::nullable;
use crate::operation::{Access, Operation, Resp};
use crate::ops::hooks::activity::{self, Record, Scope, StatusActivity};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx, Pagination, Query};
use crate::shapes::{self, repo_api_url, MinimalRepository, SimpleUser, Urls};
use crate::typed::{Timestamp, Uri};

const SCOPES: &[&str] = &["repo", "repo:status"];

pub static GET_COMBINED: Operation = Operation::get(
    "statuses/get-combined",
    "/repos/{owner}/{repo}/commits/{ref}/status",
    "Get the combined status for a specific reference",
)
.docs("https://docs.service.example/rest/commits/statuses#get-the-combined-status-for-a-specific-reference")
.access(Access::read(SCOPES, "statuses"))
.slash_param("ref")
.cached()
.responds(&[Resp::typed::<CombinedStatus>(200, "The combined status: the latest status of each context.").with_headers(&["Link"])]);

pub static LIST: Operation =
    Operation::get("statuses/list", "/repos/{owner}/{repo}/commits/{ref}/statuses", "List commit statuses for a reference")
        .docs("https://docs.service.example/rest/commits/statuses#list-commit-statuses-for-a-reference")
        .access(Access::read(SCOPES, "statuses"))
        .slash_param("ref")
        .cached()
        .responds(&[Resp::typed::<Vec<CommitStatus>>(200, "Statuses of the reference, newest first.").with_headers(&["Link"])]);

/// The legacy list route; it shares its path with create, hence `{sha}`.
pub static LIST_LEGACY: Operation =
    Operation::get("statuses/list-legacy", "/repos/{owner}/{repo}/statuses/{sha}", "List commit statuses for a reference (legacy route)")
        .docs("https://docs.service.example/rest/commits/statuses#list-commit-statuses-for-a-reference")
        .access(Access::read(SCOPES, "statuses"))
        .cached()
        .responds(&[Resp::typed::<Vec<CommitStatus>>(200, "Statuses of the reference, newest first.").with_headers(&["Link"])]);

pub static CREATE: Operation = Operation::post("statuses/create", "/repos/{owner}/{repo}/statuses/{sha}", "Create a commit status")
    .docs("https://docs.service.example/rest/commits/statuses#create-a-commit-status")
    .access(Access::write(SCOPES, "statuses"))
    .resource("Status")
    .writes_content()
    .responds(&[Resp::typed::<CommitStatus>(201, "The status was created.").with_headers(&["Location"])]);

pub fn routes(api: Api) -> Api {
    api.op(&GET_COMBINED, get_combined).op(&LIST, list).op(&LIST_LEGACY, list).op(&CREATE, create)
}

async fn get_combined(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let (id, r) = (repo.id, ctx.param("ref").to_string());
    let latest = ctx.app.store.read(move |c| statuses::latest(c, id, statuses::Target::Ref(&r), page.offset(), page.per_page)).await?;
    let statuses::Latest { sha, page: rows, states } = latest.ok_or_else(ApiError::not_found)?;
    let u = &ctx.app.urls;
    let base = repo_api_url(u, repo);
    let body = CombinedStatus {
        state: states.state(),
        statuses: rows.iter().map(|s| simple_status(u, repo, s)).collect(),
        total_count: states.total,
        repository: shapes::minimal_repository(u, ctx.version, repo),
        commit_url: Uri(format!("{base}/commits/{sha}")),
        url: Uri(format!("{base}/commits/{sha}/status")),
        sha,
    };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, states.total)))
}

/// Both list routes: newest first, paginated.
async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let r = if ctx.op.id == LIST_LEGACY.id { ctx.param("sha") } else { ctx.param("ref") };
    let page = q.page(30, 100);
    let (id, r) = (ctx.repo().id, r.to_string());
    let found = ctx.app.store.read(move |c| statuses::list(c, id, statuses::Target::Ref(&r), page.offset(), page.per_page)).await?;
    let (rows, total) = found.ok_or_else(ApiError::not_found)?;
    let body: Vec<CommitStatus> = rows.iter().map(|s| commit_status(&ctx.app.urls, ctx.repo(), s)).collect();
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

#[derive(Deserialize, JsonSchema)]
struct CreateStatus {
    #[schemars(extend("enum" = STATES))]
    state: String,
    #[schemars(length(max = 2048), transform = nullable)]
    target_url: Option<String>,
    // The hosted platform's limit.
    #[schemars(length(max = 140), transform = nullable)]
    description: Option<String>,
    #[schemars(length(max = 255), transform = nullable)]
    context: Option<String>,
}

async fn create(ctx: Ctx, Body(b): Body<CreateStatus>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let context = b.context.filter(|c| !c.is_empty()).unwrap_or_else(|| "default".into());
    let given = ctx.param("sha").to_string();
    let id = repo.id;
    let creator = ctx.principal.user().cloned();
    let creator_id = creator.as_ref().map(|u| u.id);
    let at = Scope::repo(creator_id, repo);
    let now = ctx.app.clock.now();
    // The reference is resolved in the write's transaction: one trip to the database, not two.
    let status = ctx
        .write(move |c| -> Result<_, ApiError> {
            let unprocessable = |m: String| ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, m);
            let sha = repos::resolve_ref(c, id, &given)?.ok_or_else(|| unprocessable(format!("No commit found for SHA: {given}")))?;
            let n = NewStatus {
                repo_id: id,
                sha: &sha,
                state: &b.state,
                context: &context,
                description: b.description.as_deref(),
                target_url: b.target_url.as_deref(),
                creator: creator.as_ref(),
            };
            let Some(st) = statuses::create(c, &n, now)? else {
                return Err(unprocessable("Validation Failed".into()).with_errors(Value::String(
                    "Validation failed: This SHA and context has reached the maximum number of statuses.".into(),
                )));
            };
            // Platform activity (`status` webhooks), in the same transaction.
            let r = Record::Status(StatusActivity {
                id: st.id,
                sha: st.sha.clone(),
                state: st.state.clone(),
                context: st.context.clone(),
                description: st.description.clone(),
                target_url: st.target_url.clone(),
            });
            activity::record(c, at, &r, now)?;
            Ok(st)
        })
        .await?;
    let body = commit_status(&ctx.app.urls, repo, &status);
    let location = body.status.url.0.clone();
    Ok(Reply::created(body).header("location", location))
}

// ------------------------------------------------------------------ shapes

/// A status as the combined status lists it (api-facts §4.1).
#[derive(Serialize, JsonSchema)]
pub struct SimpleStatus {
    pub url: Uri,
    pub avatar_url: Uri,
    pub id: i64,
    pub node_id: String,
    #[schemars(extend("enum" = ["error", "failure", "pending", "success"]))]
    pub state: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
    pub context: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A status with its creator (the `ghost` account when no user created it).
#[derive(Serialize, JsonSchema)]
pub struct CommitStatus {
    #[serde(flatten)]
    pub status: SimpleStatus,
    pub creator: SimpleUser,
}

/// The latest status of each context of a reference, and their combined state.
#[derive(Serialize, JsonSchema)]
pub struct CombinedStatus {
    #[schemars(extend("enum" = ["failure", "pending", "success"]))]
    pub state: &'static str,
    pub statuses: Vec<SimpleStatus>,
    pub sha: String,
    pub total_count: i64,
    pub repository: MinimalRepository,
    pub commit_url: Uri,
    pub url: Uri,
}

pub fn simple_status(u: &Urls, repo: &Repo, s: &Status) -> SimpleStatus {
    let creator_id = s.creator.as_ref().unwrap_or_else(|| shapes::ghost()).id;
    SimpleStatus {
        url: Uri(format!("{}/statuses/{}", repo_api_url(u, repo), s.sha)),
        avatar_url: Uri(format!("{}/avatars/u/{creator_id}?v=4", u.web)),
        id: s.id,
        node_id: node_id("Status", s.id),
        state: s.state.clone(),
        description: s.description.clone(),
        target_url: s.target_url.clone(),
        context: s.context.clone(),
        created_at: Timestamp(s.created_at),
        updated_at: Timestamp(s.updated_at),
    }
}

pub fn commit_status(u: &Urls, repo: &Repo, s: &Status) -> CommitStatus {
    let creator = s.creator.as_ref().unwrap_or_else(|| shapes::ghost());
    CommitStatus { status: simple_status(u, repo, s), creator: shapes::simple_user(u, creator) }
}
