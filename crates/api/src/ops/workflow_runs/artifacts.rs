//! A run's artifacts: runs here upload none, so the list (the run's `artifacts_url`, which
//! `gh run view` reads) is always empty, but it answers for runs that exist.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{load, READ};
use crate::error::ApiResult;
use crate::operation::{Operation, Resp};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::typed::{Timestamp, Uri};

#[derive(Deserialize, JsonSchema)]
struct ArtifactsQuery {
    #[serde(flatten)]
    page: Pagination,
    /// Only artifacts of this name.
    #[allow(dead_code)]
    name: Option<String>,
}

pub static LIST_FOR_RUN: Operation =
    Operation::get("artifacts/list-for-run", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", "List workflow run artifacts")
        .docs("https://docs.service.example/rest/actions/artifacts#list-workflow-run-artifacts")
        .access(READ)
        .responds(&[Resp::typed::<ArtifactList>(200, "The run's artifacts (runs here upload none).").with_headers(&["Link"])]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_FOR_RUN, list_for_run)
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ArtifactRun {
    pub id: i64,
    pub repository_id: i64,
    pub head_repository_id: i64,
    pub head_branch: String,
    pub head_sha: String,
}

/// An artifact as hosted (never produced here).
#[derive(Serialize, JsonSchema)]
pub struct Artifact {
    pub id: i64,
    pub node_id: String,
    pub name: String,
    pub size_in_bytes: i64,
    pub url: Uri,
    pub archive_download_url: Uri,
    pub expired: bool,
    pub created_at: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
    pub digest: Option<String>,
    pub workflow_run: Option<ArtifactRun>,
}

/// A page of artifacts.
#[derive(Serialize, JsonSchema)]
pub struct ArtifactList {
    pub total_count: i64,
    pub artifacts: Vec<Artifact>,
}

async fn list_for_run(ctx: Ctx, Query(q): Query<ArtifactsQuery>) -> ApiResult<Reply> {
    let page = q.page.page(30, 100);
    load(&ctx).await?;
    Ok(Reply::ok(ArtifactList { total_count: 0, artifacts: Vec::new() }).opt_header("link", ctx.link(page, 0)))
}
