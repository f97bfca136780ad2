//! Tags (`GET …/tags`), and git's own objects: `GET …/git/commits/{commit_sha}` and
//! `GET …/git/trees/{tree_sha}` (`recursive`).
use platform_core::ids::node_id;
use platform_git::{is_oid, Kind};
use platform_store::domain::git as refs_store;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{empty_repository, git, READ};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::ops::git::{number_of, CommitLink, GitUser, Parent, Tree, Verification};
use crate::ops::git_hosting::git_error;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{percent_encode, Ctx, Pagination, Query};
use crate::shapes::{repo_api_url, Urls};
use crate::typed::{Timestamp, Uri};
use platform_store::domain::repos::Repo;

pub static LIST_TAGS: Operation = Operation::get("repos/list-tags", "/repos/{owner}/{repo}/tags", "List repository tags")
    .docs("https://docs.service.example/rest/repos/repos#list-repository-tags")
    .access(READ)
    .cached()
    .responds(&[
        Resp::typed::<Vec<Tag>>(200, "The tags, by name (byte order, last first), with the commits they name.").with_headers(&["Link"])
    ]);

pub static GET_GIT_COMMIT: Operation =
    Operation::get("git/get-commit", "/repos/{owner}/{repo}/git/commits/{commit_sha}", "Get a commit object")
        .docs("https://docs.service.example/rest/git/commits#get-a-commit-object")
        .access(READ)
        .cached()
        .responds(&[Resp::typed::<GitCommitObject>(200, "The commit object (a full sha).")]);

/// The query of a tree.
#[derive(Deserialize, JsonSchema)]
struct TreeQuery {
    /// Any value lists the whole tree below (subtrees and their entries), as hosted; leave it
    /// out for one level.
    recursive: Option<String>,
}

pub static GET_TREE: Operation = Operation::get("git/get-tree", "/repos/{owner}/{repo}/git/trees/{tree_sha}", "Get a tree")
    .docs("https://docs.service.example/rest/git/trees#get-a-tree")
    .access(READ)
    .slash_param("tree_sha")
    .cached()
    .responds(&[
        Resp::typed::<GitTree>(200, "The tree a tree sha, commit sha, branch or tag names."),
        Resp::typed::<crate::error::BasicError>(409, "The repository is empty."),
    ]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_TAGS, list_tags).op(&GET_GIT_COMMIT, get_git_commit).op(&GET_TREE, get_tree)
}

/// A tag as the tag list shows it.
#[derive(Serialize, JsonSchema)]
pub struct Tag {
    pub name: String,
    pub commit: CommitLink,
    pub zipball_url: Uri,
    pub tarball_url: Uri,
    pub node_id: String,
}

/// A git commit object.
#[derive(Serialize, JsonSchema)]
pub struct GitCommitObject {
    pub sha: String,
    pub node_id: String,
    pub url: Uri,
    pub html_url: Uri,
    pub author: GitUser,
    pub committer: GitUser,
    pub message: String,
    pub tree: Tree,
    pub parents: Vec<Parent>,
    pub verification: Verification,
}

/// An entry of a tree.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct TreeEntry {
    pub path: String,
    pub mode: String,
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["blob", "tree", "commit"]))]
    pub kind: &'static str,
    pub sha: String,
    /// Blobs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// Blobs and trees (a submodule's commit is in another repository).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<Uri>,
}

/// A git tree.
#[derive(Serialize, JsonSchema)]
pub struct GitTree {
    pub sha: String,
    pub url: Uri,
    pub tree: Vec<TreeEntry>,
    /// More entries than one answer holds (100,000): the list is cut.
    pub truncated: bool,
}

/// Entries of one tree answer at most, as hosted.
const MAX_ENTRIES: usize = 100_000;

async fn list_tags(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let id = repo.id;
    let mut tags = ctx.app.store.read(move |c| refs_store::refs_with_prefix(c, id, "refs/tags/")).await?;
    tags.reverse();
    let total = tags.len() as i64;
    let api = repo_api_url(&ctx.app.urls, repo);
    let shown: Vec<Tag> = tags
        .iter()
        .skip(page.offset() as usize)
        .take(page.per_page as usize)
        .map(|r| {
            let name = r.name["refs/tags/".len()..].to_string();
            let enc = percent_encode(&name);
            Tag {
                commit: CommitLink { sha: r.sha.clone(), url: Uri(format!("{api}/commits/{}", r.sha)) },
                zipball_url: Uri(format!("{api}/zipball/refs/tags/{enc}")),
                tarball_url: Uri(format!("{api}/tarball/refs/tags/{enc}")),
                node_id: node_id("Ref", number_of(&format!("{}:{}", repo.id, r.name))),
                name,
            }
        })
        .collect();
    Ok(Reply::ok(shown).opt_header("link", ctx.link(page, total)))
}

async fn get_git_commit(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let sha = ctx.param("commit_sha").to_lowercase();
    let g = git(&ctx, repo).await?;
    let k = if is_oid(&sha) { g.commit(&sha).await.map_err(git_error)? } else { None };
    let k = k.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(git_commit_object(&ctx.app.urls, repo, k)))
}

/// The commit object shape of what git has of a commit.
pub(super) fn git_commit_object(u: &Urls, repo: &Repo, k: platform_git::Commit) -> GitCommitObject {
    let api = repo_api_url(u, repo);
    let person = |p: &platform_git::Person| GitUser { name: p.name.clone(), email: p.email.clone(), date: Timestamp(p.time) };
    GitCommitObject {
        node_id: node_id("Commit", number_of(&format!("{}:{}", repo.id, k.oid))),
        url: Uri(format!("{api}/git/commits/{}", k.oid)),
        html_url: Uri(format!("{}/{}/commit/{}", u.web, repo.full_name(), k.oid)),
        author: person(&k.author),
        committer: person(&k.committer),
        // As hosted: without the line end git keeps after it.
        message: k.message.trim_end_matches('\n').to_string(),
        tree: Tree { url: Uri(format!("{api}/git/trees/{}", k.tree)), sha: k.tree.clone() },
        parents: k
            .parents
            .iter()
            .map(|p| Parent {
                url: Uri(format!("{api}/git/commits/{p}")),
                html_url: Uri(format!("{}/{}/commit/{p}", u.web, repo.full_name())),
                sha: p.clone(),
            })
            .collect(),
        verification: Verification {
            verified: false,
            reason: if k.signature.is_some() { "unknown_key" } else { "unsigned" },
            signature: k.signature.clone(),
            payload: None,
            verified_at: None,
        },
        sha: k.oid,
    }
}

async fn get_tree(ctx: Ctx, Query(q): Query<TreeQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let given = ctx.param("tree_sha").to_string();
    let g = git(&ctx, repo).await?;
    let lower = given.to_lowercase();
    let tree = match g.object_type(&lower).await.map_err(git_error)?.as_deref() {
        Some("tree") => Some(lower),
        Some("commit") => g.commit(&lower).await.map_err(git_error)?.map(|k| k.tree),
        _ => match g.resolve_commit(&given).await.map_err(git_error)? {
            Some(c) => g.commit(&c).await.map_err(git_error)?.map(|k| k.tree),
            None => None,
        },
    };
    let Some(tree) = tree else {
        if g.refs().await.map_err(git_error)?.is_empty() {
            return Err(empty_repository());
        }
        return Err(ApiError::not_found());
    };
    let mut entries = g.tree(&tree, q.recursive.is_some()).await.map_err(git_error)?;
    let truncated = entries.len() > MAX_ENTRIES;
    entries.truncate(MAX_ENTRIES);
    let api = repo_api_url(&ctx.app.urls, repo);
    let tree_entries = entries
        .into_iter()
        .map(|e| {
            let (kind, url) = match e.kind {
                Kind::Blob => ("blob", Some(Uri(format!("{api}/git/blobs/{}", e.oid)))),
                Kind::Tree => ("tree", Some(Uri(format!("{api}/git/trees/{}", e.oid)))),
                Kind::Commit => ("commit", None),
            };
            TreeEntry { path: e.path, mode: e.mode, kind, size: e.size.map(|s| s as i64), url, sha: e.oid }
        })
        .collect();
    Ok(Reply::ok(GitTree { url: Uri(format!("{api}/git/trees/{tree}")), sha: tree, tree: tree_entries, truncated }))
}
