//! Commit history from git: `GET …/commits` (from a sha or branch, by path, author and time,
//! paged) and `GET …/compare/{base}...{head}`.
use axum::http::StatusCode;
use platform_core::time::parse_ts;
use platform_store::domain::accounts;
use platform_store::domain::repos::Repo;
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{empty_repository, git, READ};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::ops::git::{changes, commit, known, match_people, Commit, DiffEntry};
use crate::ops::git_hosting::git_error;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Ctx, Pagination, Query};
use crate::shapes::repo_api_url;
use crate::typed::Uri;

/// The query of the commit list.
#[derive(Deserialize, JsonSchema)]
struct CommitsQuery {
    /// SHA or branch to start listing commits from (default: the repository's default branch).
    sha: Option<String>,
    /// Only commits changing this file path.
    path: Option<String>,
    /// Only commits by this author: a login or an email address.
    author: Option<String>,
    /// Only commits committed at or after this time (`YYYY-MM-DDTHH:MM:SSZ`).
    since: Option<String>,
    /// Only commits committed at or before this time (`YYYY-MM-DDTHH:MM:SSZ`).
    until: Option<String>,
    #[serde(flatten)]
    page: Pagination,
}

pub static LIST_COMMITS: Operation = Operation::get("commits/list", "/repos/{owner}/{repo}/commits", "List commits")
    .docs("https://docs.service.example/rest/commits/commits#list-commits")
    .access(READ)
    .cached()
    .responds(&[
        Resp::typed::<Vec<Commit>>(200, "Commits reachable from the starting point, newest first (git's order).").with_headers(&["Link"]),
        Resp::typed::<crate::error::BasicError>(409, "The repository is empty."),
    ]);

pub static COMPARE: Operation = Operation::get("repos/compare-commits", "/repos/{owner}/{repo}/compare/{basehead}", "Compare two commits")
    .docs("https://docs.service.example/rest/commits/commits#compare-two-commits")
    .access(READ)
    .slash_param("basehead")
    .cached()
    .responds(&[Resp::typed::<CommitComparison>(
        200,
        "How `head` compares with `base` (`base...head`: a sha, branch or tag each): the commits of head not in base, \
             oldest first, and the files changed since their merge base.",
    )]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_COMMITS, list_commits).op(&COMPARE, compare)
}

/// How two commits compare.
#[derive(Serialize, JsonSchema)]
pub struct CommitComparison {
    pub url: Uri,
    pub html_url: Uri,
    pub permalink_url: Uri,
    pub diff_url: Uri,
    pub patch_url: Uri,
    pub base_commit: Commit,
    pub merge_base_commit: Commit,
    #[schemars(extend("enum" = ["diverged", "ahead", "behind", "identical"]))]
    pub status: &'static str,
    pub ahead_by: i64,
    pub behind_by: i64,
    pub total_commits: i64,
    pub commits: Vec<Commit>,
    pub files: Vec<DiffEntry>,
}

/// The commit shapes of `oids` (commits git has), in that order.
pub(super) async fn commit_shapes(ctx: &Ctx, repo: &Repo, g: &platform_git::Repo, oids: &[String]) -> ApiResult<Vec<Commit>> {
    let found = g.commits(oids).await.map_err(git_error)?;
    let id = repo.id;
    let knowns = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let mut out = Vec::new();
            for k in found {
                let mut kn = known(c, id, &k.oid)?;
                let sha = k.oid.clone();
                // What git has of it, when the store has not recorded it (yet).
                if kn.stored.is_none() {
                    kn.stored = Some(crate::ops::git_hosting::refs::record(k));
                    match_people(c, &mut kn)?;
                }
                out.push((sha, kn));
            }
            Ok(out)
        })
        .await?;
    Ok(knowns.iter().map(|(sha, k)| commit(&ctx.app.urls, repo, sha, k)).collect())
}

/// A time of the query, or its 422.
fn time_param(name: &str, v: Option<&str>) -> ApiResult<Option<i64>> {
    match v {
        None => Ok(None),
        Some(t) => parse_ts(t).map(Some).ok_or_else(|| ApiError::invalid_request(format!("For '{name}', {t:?} is not a timestamp."))),
    }
}

async fn list_commits(ctx: Ctx, Query(q): Query<CommitsQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page.page(30, 100);
    let (since, until) = (time_param("since", q.since.as_deref())?, time_param("until", q.until.as_deref())?);
    let g = git(&ctx, repo).await?;
    let from = q.sha.clone().unwrap_or_else(|| repo.default_branch.clone());
    let Some(start) = g.resolve_commit(&from).await.map_err(git_error)? else {
        if g.refs().await.map_err(git_error)?.is_empty() {
            return Err(empty_repository());
        }
        return Err(ApiError::new(StatusCode::NOT_FOUND, format!("No commit found for SHA: {from}")));
    };
    // A login stands for the account's email addresses (its own and its no-reply one).
    let mut authors = Vec::new();
    if let Some(a) = q.author.clone().filter(|a| !a.is_empty()) {
        if !a.contains('@') {
            let login = a.clone();
            if let Some(acc) = ctx.app.store.read(move |c| accounts::by_login(c, &login)).await? {
                authors.extend(acc.email.clone());
                authors.push(format!("{}@users.noreply.service.example", acc.login));
            }
        }
        authors.push(a);
    }
    let lq = platform_git::LogQuery {
        start: &start,
        path: q.path.as_deref(),
        authors: &authors,
        since,
        until,
        skip: page.offset() as u64,
        max: page.per_page as u64,
    };
    let (oids, total) = g.log(&lq).await.map_err(git_error)?;
    let shown = commit_shapes(&ctx, repo, &g, &oids).await?;
    Ok(Reply::ok(shown).opt_header("link", ctx.link(page, total as i64)))
}

/// Commits of a comparison shown at most, as hosted.
const MAX_COMPARED: usize = 250;

async fn compare(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let basehead = ctx.param("basehead").to_string();
    let (base_name, head_name) = basehead.split_once("...").ok_or_else(ApiError::not_found)?;
    let g = git(&ctx, repo).await?;
    let (Some(base), Some(head)) =
        (g.resolve_commit(base_name).await.map_err(git_error)?, g.resolve_commit(head_name).await.map_err(git_error)?)
    else {
        return Err(ApiError::not_found());
    };
    let merge_base = g
        .merge_base(&base, &head)
        .await
        .map_err(git_error)?
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("No common ancestor between {base_name} and {head_name}.")))?;
    let ahead = g.count_between(&base, &head).await.map_err(git_error)? as i64;
    let behind = g.count_between(&head, &base).await.map_err(git_error)? as i64;
    let status = match (ahead, behind) {
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    let page = q.page(MAX_COMPARED as i64, MAX_COMPARED as i64);
    let mut listed = g.rev_list(std::slice::from_ref(&head), std::slice::from_ref(&base)).await.map_err(git_error)?;
    listed.reverse();
    let listed: Vec<String> = listed.into_iter().skip(page.offset() as usize).take(page.per_page as usize).collect();
    let commits = commit_shapes(&ctx, repo, &g, &listed).await?;
    let mut ends = commit_shapes(&ctx, repo, &g, &[base.clone(), merge_base.clone()]).await?.into_iter();
    let base_commit = ends.next().ok_or_else(ApiError::internal)?;
    // The merge base is the base itself when head is ahead: `commits` lists it once.
    let merge_base_commit = match ends.next() {
        Some(m) => m,
        None => commit_shapes(&ctx, repo, &g, std::slice::from_ref(&merge_base)).await?.pop().ok_or_else(ApiError::internal)?,
    };
    let (_, files) = changes(&ctx.app.urls, repo, &g, Some(&merge_base), &head).await?;
    let u = &ctx.app.urls;
    let (api, web) = (repo_api_url(u, repo), format!("{}/{}", u.web, repo.full_name()));
    let owner = &repo.owner.login;
    Ok(Reply::ok(CommitComparison {
        url: Uri(format!("{api}/compare/{basehead}")),
        html_url: Uri(format!("{web}/compare/{basehead}")),
        permalink_url: Uri(format!("{web}/compare/{owner}:{base}...{owner}:{head}")),
        diff_url: Uri(format!("{web}/compare/{basehead}.diff")),
        patch_url: Uri(format!("{web}/compare/{basehead}.patch")),
        base_commit,
        merge_base_commit,
        status,
        ahead_by: ahead,
        behind_by: behind,
        total_commits: ahead,
        commits,
        files,
    }))
}
