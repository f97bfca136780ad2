//! Workflows: the files runs were planned from (`runs::plan` creates them with their first run).
use platform_store::domain::workflow_runs as runs;

use super::shapes::{self, WorkflowList};
use super::READ;
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};

pub static LIST: Operation = Operation::get("workflows/list", "/repos/{owner}/{repo}/actions/workflows", "List repository workflows")
    .docs("https://docs.service.example/rest/actions/workflows#list-repository-workflows")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<WorkflowList>(200, "The repository's workflows, oldest first.").with_headers(&["Link"])]);

pub static GET: Operation = Operation::get("workflows/get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}", "Get a workflow")
    .docs("https://docs.service.example/rest/actions/workflows#get-a-workflow")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<shapes::Workflow>(200, "The workflow (by id or file name).")]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST, list).op(&GET, get)
}

async fn list(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let id = repo.id;
    let (list, total) = ctx.app.store.read(move |c| runs::workflows(c, id, page.offset(), page.per_page)).await?;
    let body = WorkflowList { total_count: total, workflows: list.iter().map(|w| shapes::workflow(&ctx.app.urls, repo, w)).collect() };
    Ok(Reply::ok(body).opt_header("link", ctx.link(page, total)))
}

async fn get(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let (id, given) = (repo.id, ctx.param("workflow_id").to_string());
    let w = ctx.app.store.read(move |c| runs::workflow(c, id, &given)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(shapes::workflow(&ctx.app.urls, repo, &w)))
}
