//! Workflows: the files runs were planned from (`runs::plan` creates them with their first run).
use axum::http::Method;
use platform_store::domain::repos::Repo;
use platform_store::domain::workflow_runs as runs;

use super::shapes::{self, WorkflowList};
use super::READ;
use crate::error::{ApiError, ApiResult};
use crate::operation::{Derived, Operation, Resp, Traits, PAGINATION};
use crate::reply::Reply;
use crate::request::Ctx;
use crate::routes::Api;

op!(
    @"actions/workflows",
    LIST,
    "workflows/list",
    GET,
    "/repos/{owner}/{repo}/actions/workflows",
    "List repository workflows",
    "list-repository-workflows",
    READ,
    &PAGINATION,
    None,
    &[Resp::typed::<WorkflowList>(200, "The repository's workflows, oldest first.").with_headers(&["Link"])]
);
op!(
    @"actions/workflows",
    GET,
    "workflows/get",
    GET,
    "/repos/{owner}/{repo}/actions/workflows/{workflow_id}",
    "Get a workflow",
    "get-a-workflow",
    READ,
    &[],
    None,
    &[Resp::typed::<shapes::Workflow>(200, "The workflow (by id or file name).")]
);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET, get)
}

async fn list(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().await?;
    ctx.cached(list_page(&ctx, repo)).await
}

async fn list_page(ctx: &Ctx, repo: Repo) -> ApiResult<Reply> {
    let page = ctx.page(30, 100)?;
    let id = repo.id;
    let (list, total) = ctx.app.store.read(move |c| runs::workflows(c, id, page.offset(), page.per_page)).await?;
    let body = WorkflowList { total_count: total, workflows: list.iter().map(|w| shapes::workflow(&ctx.app.urls, &repo, w)).collect() };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo().await?;
    ctx.cached(one(&ctx, repo)).await
}

async fn one(ctx: &Ctx, repo: Repo) -> ApiResult<Reply> {
    let (id, given) = (repo.id, ctx.param("workflow_id").to_string());
    let w = ctx.app.store.read(move |c| runs::workflow(c, id, &given)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(shapes::workflow(&ctx.app.urls, &repo, &w)))
}
