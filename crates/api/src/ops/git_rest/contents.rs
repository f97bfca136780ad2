//! `…/contents/{path}`: a file (its bytes base64-encoded, or raw with the raw media type), a
//! directory's listing, at a ref; and files created, updated and deleted by a commit the API
//! writes on a branch, through the one ref-change path.
use std::collections::BTreeMap;

use axum::http::StatusCode;
use base64::Engine;
use platform_core::time::parse_ts;
use platform_git::{Kind, NewCommit, Person, RefUpdate, ZERO};
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::objects::{git_commit_object, GitCommitObject};
use super::{git, move_refs, READ, WRITE};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::ops::git::percent_encode_path;
use crate::ops::git_hosting::{git_error, refs};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{percent_encode, Body, Ctx, Query};
use crate::shapes::{repo_api_url, Urls};
use crate::typed::Uri;

/// The query of a contents read.
#[derive(Deserialize, JsonSchema)]
struct ContentsQuery {
    /// The commit, branch or tag to read at (default: the repository's default branch).
    #[serde(rename = "ref")]
    git_ref: Option<String>,
}

pub static GET_CONTENT: Operation = Operation::get("repos/get-content", "/repos/{owner}/{repo}/contents/{path}", "Get repository content")
    .docs("https://docs.service.example/rest/repos/contents#get-repository-content")
    .access(READ)
    .slash_param("path")
    .responds(&[Resp::typed::<ContentOrListing>(
        200,
        "A file (its bytes base64-encoded in `content`; up to 1 MB, larger files with `encoding` `none`), a symbolic link, \
         a submodule, or a directory's entries. With `Accept: application/vnd.service.raw` a file answers its bytes as they are.",
    )]);

/// Who a commit names.
#[derive(Clone, Deserialize, JsonSchema)]
pub(super) struct Who {
    name: String,
    email: String,
    /// `YYYY-MM-DDTHH:MM:SSZ` (default: now).
    date: Option<String>,
}

/// A file written by a commit.
#[derive(Deserialize, JsonSchema)]
struct PutContents {
    /// The commit message.
    message: String,
    /// The file's new contents, base64-encoded.
    content: String,
    /// The blob sha of the file being replaced (required when the file exists).
    sha: Option<String>,
    /// The branch to commit to (default: the repository's default branch).
    branch: Option<String>,
    /// Who commits (default: the authenticated user).
    committer: Option<Who>,
    /// Who wrote it (default: the committer).
    author: Option<Who>,
}

/// A file removed by a commit.
#[derive(Deserialize, JsonSchema)]
struct DeleteContents {
    /// The commit message.
    message: String,
    /// The blob sha of the file being removed.
    sha: String,
    /// The branch to commit to (default: the repository's default branch).
    branch: Option<String>,
    /// Who commits (default: the authenticated user).
    committer: Option<Who>,
    /// Who wrote it (default: the committer).
    author: Option<Who>,
}

pub static PUT_CONTENT: Operation =
    Operation::put("repos/create-or-update-file-contents", "/repos/{owner}/{repo}/contents/{path}", "Create or update file contents")
        .docs("https://docs.service.example/rest/repos/contents#create-or-update-file-contents")
        .access(WRITE)
        .slash_param("path")
        .resource("Content")
        .responds(&[
            Resp::typed::<FileCommit>(200, "The file was updated by a new commit on the branch."),
            Resp::typed::<FileCommit>(201, "The file was created by a new commit on the branch."),
            Resp::typed::<crate::error::BasicError>(409, "`sha` is not the blob the file has."),
        ]);

pub static DELETE_CONTENT: Operation = Operation::delete("repos/delete-file", "/repos/{owner}/{repo}/contents/{path}", "Delete a file")
    .docs("https://docs.service.example/rest/repos/contents#delete-a-file")
    .access(WRITE)
    .slash_param("path")
    .resource("Content")
    .responds(&[
        Resp::typed::<FileCommit>(200, "The file was removed by a new commit on the branch (`content` is null)."),
        Resp::typed::<crate::error::BasicError>(409, "`sha` is not the blob the file has."),
    ]);

/// The repository's top directory (`…/contents` with no path, as clients ask for it).
pub static GET_ROOT_CONTENT: Operation =
    Operation::get("repos/get-root-content", "/repos/{owner}/{repo}/contents", "Get repository content (top directory)")
        .docs("https://docs.service.example/rest/repos/contents#get-repository-content")
        .access(READ)
        .responds(&[Resp::typed::<Vec<Content>>(200, "The entries of the repository's top directory at the ref.")]);

pub fn routes(api: Api) -> Api {
    api.op(&GET_ROOT_CONTENT, get_content).op(&GET_CONTENT, get_content).op(&PUT_CONTENT, put_content).op(&DELETE_CONTENT, delete_content)
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ContentLinks {
    pub git: Option<Uri>,
    pub html: Option<Uri>,
    #[serde(rename = "self")]
    pub self_link: Uri,
}

/// A file, symbolic link, submodule or directory entry.
#[derive(Serialize, JsonSchema)]
pub struct Content {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["file", "dir", "symlink", "submodule"]))]
    pub kind: &'static str,
    /// `base64`, or `none` for a file too large to include (a file read alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["base64", "none"]))]
    pub encoding: Option<&'static str>,
    pub size: i64,
    pub name: String,
    pub path: String,
    /// Base64, in lines of 60 characters (a file read alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub sha: String,
    pub url: Uri,
    pub git_url: Option<Uri>,
    pub html_url: Option<Uri>,
    pub download_url: Option<Uri>,
    /// A symbolic link's target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A submodule's repository (not known here: null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submodule_git_url: Option<Option<Uri>>,
    #[serde(rename = "_links")]
    pub links: ContentLinks,
}

/// A file or what a directory holds.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ContentOrListing {
    One(Box<Content>),
    Listing(Vec<Content>),
}

/// What a contents write did: the file as it is now (null once deleted) and the commit.
#[derive(Serialize, JsonSchema)]
pub struct FileCommit {
    pub content: Option<Content>,
    pub commit: GitCommitObject,
}

/// Bytes of a file included in its JSON answer at most, as hosted.
const MAX_INLINE: u64 = 1 << 20;
/// Bytes of a file answered raw at most, as hosted.
pub(super) const MAX_RAW: u64 = 100 << 20;

/// Does `accept` ask for raw contents (`application/vnd.service.raw`, with or without `v3.` or `+json`)?
fn wants_raw(accept: &str) -> bool {
    accept.split(',').any(|m| {
        let m = m.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        let m = m.strip_suffix("+json").unwrap_or(&m);
        m == "application/vnd.service.raw" || m == "application/vnd.service.v3.raw"
    })
}

/// Base64 as hosted: lines of 60 characters, each ended.
pub(super) fn wrapped_base64(bytes: &[u8]) -> String {
    let b = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(b.len() + b.len() / 60 + 1);
    for chunk in b.as_bytes().chunks(60) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// An entry's shape (no contents) at `rev` (the ref as asked, for the URLs).
fn entry_shape(u: &Urls, repo: &Repo, rev: &str, e: &platform_git::Entry) -> Content {
    let api = repo_api_url(u, repo);
    let web = format!("{}/{}", u.web, repo.full_name());
    let p = percent_encode_path(&e.path);
    let r = percent_encode(rev);
    let kind = match (e.kind, e.mode.as_str()) {
        (Kind::Tree, _) => "dir",
        (Kind::Commit, _) => "submodule",
        (Kind::Blob, "120000") => "symlink",
        (Kind::Blob, _) => "file",
    };
    let url = Uri(format!("{api}/contents/{p}?ref={r}"));
    let (git_url, html_url, download_url) = match kind {
        "dir" => (Some(Uri(format!("{api}/git/trees/{}", e.oid))), Some(Uri(format!("{web}/tree/{r}/{p}"))), None),
        "submodule" => (Some(Uri(format!("{api}/git/trees/{}", e.oid))), Some(Uri(format!("{web}/tree/{r}/{p}"))), None),
        _ => (
            Some(Uri(format!("{api}/git/blobs/{}", e.oid))),
            Some(Uri(format!("{web}/blob/{r}/{p}"))),
            Some(Uri(format!("{web}/raw/{r}/{p}"))),
        ),
    };
    Content {
        kind,
        encoding: None,
        size: e.size.unwrap_or(0) as i64,
        name: e.path.rsplit('/').next().unwrap_or(&e.path).to_string(),
        path: e.path.clone(),
        content: None,
        sha: e.oid.clone(),
        links: ContentLinks { git: git_url.clone(), html: html_url.clone(), self_link: url.clone() },
        url,
        git_url,
        html_url,
        download_url,
        target: None,
        submodule_git_url: (kind == "submodule").then_some(None),
    }
}

/// The commit `rev` names, or the 404 hosted answers.
async fn at(g: &platform_git::Repo, rev: &str) -> ApiResult<String> {
    match g.resolve_commit(rev).await.map_err(git_error)? {
        Some(c) => Ok(c),
        None if g.refs().await.map_err(git_error)?.is_empty() => Err(ApiError::new(StatusCode::NOT_FOUND, "This repository is empty.")),
        None => Err(ApiError::new(StatusCode::NOT_FOUND, format!("No commit found for the ref {rev}"))),
    }
}

async fn get_content(ctx: Ctx, Query(q): Query<ContentsQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let g = git(&ctx, repo).await?;
    let rev = q.git_ref.clone().filter(|r| !r.is_empty()).unwrap_or_else(|| repo.default_branch.clone());
    let commit = at(&g, &rev).await?;
    let path = ctx.param("path").trim_matches('/').to_string();
    let e = if path.is_empty() {
        // The top directory: the commit's tree.
        let tree = g.commit(&commit).await.map_err(git_error)?.ok_or_else(ApiError::not_found)?.tree;
        platform_git::Entry { mode: "040000".into(), kind: Kind::Tree, oid: tree, path: String::new(), size: None }
    } else {
        g.entry(&commit, &path).await.map_err(git_error)?.ok_or_else(ApiError::not_found)?
    };
    let u = &ctx.app.urls;
    if e.kind == Kind::Tree {
        let list: Vec<Content> = g
            .tree(&e.oid, false)
            .await
            .map_err(git_error)?
            .into_iter()
            .map(|mut c| {
                if !path.is_empty() {
                    c.path = format!("{path}/{}", c.path);
                }
                entry_shape(u, repo, &rev, &c)
            })
            .collect();
        return Ok(Reply::ok(ContentOrListing::Listing(list)));
    }
    let mut shape = entry_shape(u, repo, &rev, &e);
    if e.kind == Kind::Commit {
        return Ok(Reply::ok(ContentOrListing::One(Box::new(shape))));
    }
    let size = e.size.unwrap_or(0);
    if wants_raw(&ctx.accept) && shape.kind == "file" {
        if size > MAX_RAW {
            return Err(ApiError::forbidden("This API returns blobs up to 100 MB in size."));
        }
        let bytes = g.blob(&e.oid, MAX_RAW).await.map_err(git_error)?.ok_or_else(ApiError::not_found)?;
        return Ok(Reply::bytes(bytes, "text/plain; charset=utf-8"));
    }
    if shape.kind == "symlink" {
        let bytes = g.blob(&e.oid, MAX_INLINE).await.map_err(git_error)?.unwrap_or_default();
        shape.target = Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    if size > MAX_INLINE {
        (shape.encoding, shape.content) = (Some("none"), Some(String::new()));
    } else {
        let bytes = g.blob(&e.oid, MAX_INLINE).await.map_err(git_error)?.unwrap_or_default();
        (shape.encoding, shape.content) = (Some("base64"), Some(wrapped_base64(&bytes)));
    }
    Ok(Reply::ok(ContentOrListing::One(Box::new(shape))))
}

/// A person a commit names: as given, else the authenticated user, else the platform.
pub(super) fn person(ctx: &Ctx, given: Option<&Who>, now: i64) -> ApiResult<Person> {
    if let Some(w) = given {
        let time = match &w.date {
            Some(d) => parse_ts(d).ok_or_else(|| ApiError::invalid_request(format!("For 'date', {d:?} is not a timestamp.")))?,
            None => now,
        };
        return Ok(Person { name: w.name.clone(), email: w.email.clone(), time, offset_minutes: 0 });
    }
    Ok(match ctx.principal.user() {
        Some(a) => Person {
            name: a.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| a.login.clone()),
            email: a.email.clone().unwrap_or_else(|| format!("{}@users.noreply.service.example", a.login)),
            time: now,
            offset_minutes: 0,
        },
        None => Person { name: "Service".into(), email: "noreply@service.example".into(), time: now, offset_minutes: 0 },
    })
}

/// What a contents write changes.
struct Write<'a> {
    path: String,
    /// The new bytes; `None` removes the file.
    bytes: Option<Vec<u8>>,
    sha: Option<&'a str>,
    branch: Option<&'a str>,
    message: &'a str,
    committer: Option<&'a Who>,
    author: Option<&'a Who>,
}

/// Writes the commit of `w` on its branch through the ref-change path: whether the file is new,
/// the file as it is after (none once removed) and the commit.
async fn commit_file(ctx: &Ctx, w: Write<'_>) -> ApiResult<(bool, Option<Content>, GitCommitObject)> {
    let repo = ctx.repo();
    let l = refs::lock(&ctx.app, repo).await?;
    let branch = w.branch.filter(|b| !b.is_empty()).unwrap_or(&repo.default_branch).to_string();
    let name = format!("refs/heads/{branch}");
    let before = l.git.ref_value(&name).await.map_err(git_error)?;
    if before.is_none() && (w.branch.is_some() || w.bytes.is_none()) && !l.git.refs().await.map_err(git_error)?.is_empty() {
        return Err(ApiError::new(StatusCode::NOT_FOUND, format!("Branch {branch} not found")));
    }
    let parent = match &before {
        Some(b) => Some(l.git.commit(b).await.map_err(git_error)?.ok_or_else(ApiError::internal)?),
        None => None,
    };
    let existing = match &parent {
        Some(p) => l.git.entry(&p.oid, &w.path).await.map_err(git_error)?,
        None => None,
    };
    match (&existing, w.bytes.is_some()) {
        (None, false) => return Err(ApiError::not_found()),
        (Some(e), _) if e.kind != Kind::Blob => {
            return Err(ApiError::invalid_request(format!("{} is not a file.", w.path)));
        }
        (Some(e), _) => match w.sha {
            None => return Err(ApiError::invalid_request("\"sha\" wasn't supplied.")),
            Some(s) if !s.eq_ignore_ascii_case(&e.oid) => {
                return Err(ApiError::new(StatusCode::CONFLICT, format!("{} does not match {s}", w.path)));
            }
            Some(_) => {}
        },
        (None, true) => {}
    }
    let exec = existing.as_ref().is_some_and(|e| e.mode == "100755");
    let change = BTreeMap::from([(w.path.clone(), w.bytes.map(|b| (b, exec)))]);
    let tree = l.git.edit_tree(parent.as_ref().map(|p| p.tree.as_str()), &change).await.map_err(|e| match e {
        platform_git::Error::Invalid(m) => ApiError::invalid_request(format!("For 'path', {m}.")),
        other => git_error(other),
    })?;
    let now = ctx.app.clock.now();
    let committer = person(ctx, w.committer, now)?;
    let author = match w.author {
        Some(a) => person(ctx, Some(a), now)?,
        None => committer.clone(),
    };
    let parents: Vec<String> = parent.iter().map(|p| p.oid.clone()).collect();
    let sha = l
        .git
        .write_commit(&NewCommit { tree: &tree, parents: &parents, message: w.message, author: &author, committer: &committer })
        .await
        .map_err(|e| match e {
            platform_git::Error::Invalid(m) => ApiError::invalid_request(m),
            other => git_error(other),
        })?;
    let update = RefUpdate { name, old: before.unwrap_or_else(|| ZERO.into()), new: sha.clone() };
    move_refs(ctx, &l, &[update]).await?;
    let made = l.git.commit(&sha).await.map_err(git_error)?.ok_or_else(ApiError::internal)?;
    let now_entry = l.git.entry(&sha, &w.path).await.map_err(git_error)?;
    let content = now_entry.map(|e| entry_shape(&ctx.app.urls, repo, &branch, &e));
    Ok((existing.is_none(), content, git_commit_object(&ctx.app.urls, repo, made)))
}

async fn put_content(ctx: Ctx, Body(b): Body<PutContents>) -> ApiResult<Reply> {
    let compact: String = b.content.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| ApiError::invalid_request("content is not valid Base64"))?;
    let path = ctx.param("path").trim_matches('/').to_string();
    let w = Write {
        path,
        bytes: Some(bytes),
        sha: b.sha.as_deref(),
        branch: b.branch.as_deref(),
        message: &b.message,
        committer: b.committer.as_ref(),
        author: b.author.as_ref(),
    };
    let (created, content, commit) = commit_file(&ctx, w).await?;
    let body = FileCommit { content, commit };
    Ok(if created { Reply::created(body) } else { Reply::ok(body) })
}

async fn delete_content(ctx: Ctx, Body(b): Body<DeleteContents>) -> ApiResult<Reply> {
    let path = ctx.param("path").trim_matches('/').to_string();
    let w = Write {
        path,
        bytes: None,
        sha: Some(&b.sha),
        branch: b.branch.as_deref(),
        message: &b.message,
        committer: b.committer.as_ref(),
        author: b.author.as_ref(),
    };
    let (_, _, commit) = commit_file(&ctx, w).await?;
    Ok(Reply::ok(FileCommit { content: None, commit }))
}
