//! The reference writes: `POST …/git/refs`, `PATCH …/git/refs/{ref}` (`force`) and
//! `DELETE …/git/refs/{ref}`, each through the one ref-change path (recorded as a push is).
//! Branches and tags only, as a push may change.
use axum::http::StatusCode;
use platform_git::{RefUpdate, ZERO};
use platform_store::domain::git::Ref;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{move_refs, WRITE};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::ops::git::{git_ref, GitRef};
use crate::ops::git_hosting::git_error;
use crate::ops::git_hosting::refs::{self, Locked};
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx};
use crate::shapes::repo_api_url;
use crate::typed::Uri;

/// A reference to create.
#[derive(Deserialize, JsonSchema)]
struct CreateRef {
    /// The full name: `refs/heads/<branch>` or `refs/tags/<tag>`.
    #[serde(rename = "ref")]
    name: String,
    /// The object it names (a commit for a branch).
    sha: String,
}

/// Where a reference is to point.
#[derive(Deserialize, JsonSchema)]
struct UpdateRef {
    /// The object it is to name (a commit for a branch).
    sha: String,
    /// Move it even when that is no fast forward (commits are left behind). Default: false.
    force: Option<bool>,
}

pub static CREATE_REF: Operation = Operation::post("git/create-ref", "/repos/{owner}/{repo}/git/refs", "Create a reference")
    .docs("https://docs.service.example/rest/git/refs#create-a-reference")
    .access(WRITE)
    .resource("Reference")
    .responds(&[Resp::typed::<GitRef>(201, "The reference was created.").with_headers(&["Location"])]);

pub static UPDATE_REF: Operation = Operation::patch("git/update-ref", "/repos/{owner}/{repo}/git/refs/{ref}", "Update a reference")
    .docs("https://docs.service.example/rest/git/refs#update-a-reference")
    .access(WRITE)
    .slash_param("ref")
    .resource("Reference")
    .responds(&[Resp::typed::<GitRef>(200, "The reference was moved.")]);

pub static DELETE_REF: Operation = Operation::delete("git/delete-ref", "/repos/{owner}/{repo}/git/refs/{ref}", "Delete a reference")
    .docs("https://docs.service.example/rest/git/refs#delete-a-reference")
    .access(WRITE)
    .slash_param("ref")
    .responds(&[
        Resp::empty(204, "The reference was deleted."),
        Resp::typed::<crate::error::BasicError>(422, "No such branch or tag (`Reference does not exist`), or a ruleset refused it."),
    ]);

pub fn routes(api: Api) -> Api {
    api.op(&CREATE_REF, create_ref).op(&UPDATE_REF, update_ref).op(&DELETE_REF, delete_ref)
}

fn unprocessable(message: &'static str) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
}

/// A full reference name the API may change: a branch or a tag, `refs/` and two slashes at least.
fn check_name(name: &str) -> ApiResult<()> {
    if !name.starts_with("refs/") || name.matches('/').count() < 2 {
        return Err(unprocessable("Reference name must start with 'refs/' and have at least two slashes."));
    }
    if !(name.starts_with("refs/heads/") || name.starts_with("refs/tags/")) {
        return Err(unprocessable("Only branches (refs/heads/) and tags (refs/tags/) are kept here."));
    }
    Ok(())
}

/// The object a write names, checked: it exists, and a branch names a commit.
async fn target(l: &Locked, name: &str, sha: &str) -> ApiResult<(String, String)> {
    let sha = sha.trim().to_lowercase();
    let kind = l.git.object_type(&sha).await.map_err(git_error)?.ok_or_else(|| unprocessable("Object does not exist"))?;
    if name.starts_with("refs/heads/") && kind != "commit" {
        return Err(unprocessable("Object is not a commit"));
    }
    Ok((sha, kind))
}

/// The reference's value in git now (exactly this name).
async fn current(l: &Locked, name: &str) -> ApiResult<Option<String>> {
    Ok(l.git.refs().await.map_err(git_error)?.into_iter().find(|r| r.name == name).map(|r| r.oid))
}

/// The reference shape of `name` now naming `sha` (an object of type `kind`).
fn shape(ctx: &Ctx, name: &str, sha: &str, kind: &str) -> GitRef {
    let repo = ctx.repo();
    let mut r = git_ref(&ctx.app.urls, repo, &Ref { name: name.to_string(), sha: sha.to_string() });
    if kind == "tag" {
        r.object.kind = "tag";
        r.object.url = Uri(format!("{}/git/tags/{sha}", repo_api_url(&ctx.app.urls, repo)));
    }
    r
}

async fn create_ref(ctx: Ctx, Body(b): Body<CreateRef>) -> ApiResult<Reply> {
    check_name(&b.name)?;
    let l = refs::lock(&ctx.app, ctx.repo()).await?;
    if current(&l, &b.name).await?.is_some() {
        return Err(unprocessable("Reference already exists"));
    }
    let (sha, kind) = target(&l, &b.name, &b.sha).await?;
    move_refs(&ctx, &l, &[RefUpdate { name: b.name.clone(), old: ZERO.into(), new: sha.clone() }]).await?;
    let body = shape(&ctx, &b.name, &sha, &kind);
    let url = body.url.0.clone();
    Ok(Reply::created(body).header("location", url))
}

async fn update_ref(ctx: Ctx, Body(b): Body<UpdateRef>) -> ApiResult<Reply> {
    let name = format!("refs/{}", ctx.param("ref").trim_matches('/'));
    check_name(&name)?;
    let l = refs::lock(&ctx.app, ctx.repo()).await?;
    let old = current(&l, &name).await?.ok_or_else(|| unprocessable("Reference does not exist"))?;
    let (sha, kind) = target(&l, &name, &b.sha).await?;
    if !b.force.unwrap_or(false) && old != sha {
        // Commits the reference names now (a tag peeled) must stay reachable from the new one.
        let (was, will) = (l.git.resolve_commit(&old).await.map_err(git_error)?, l.git.resolve_commit(&sha).await.map_err(git_error)?);
        let ff = match (was, will) {
            (Some(a), Some(b)) => l.git.is_ancestor(&a, &b).await.map_err(git_error)?,
            _ => false,
        };
        if !ff {
            return Err(unprocessable("Update is not a fast forward"));
        }
    }
    if old != sha {
        move_refs(&ctx, &l, &[RefUpdate { name: name.clone(), old, new: sha.clone() }]).await?;
    }
    Ok(Reply::ok(shape(&ctx, &name, &sha, &kind)))
}

async fn delete_ref(ctx: Ctx) -> ApiResult<Reply> {
    let name = format!("refs/{}", ctx.param("ref").trim_matches('/'));
    if check_name(&name).is_err() {
        return Err(unprocessable("Reference does not exist"));
    }
    let l = refs::lock(&ctx.app, ctx.repo()).await?;
    let old = current(&l, &name).await?.ok_or_else(|| unprocessable("Reference does not exist"))?;
    move_refs(&ctx, &l, &[RefUpdate { name, old, new: ZERO.into() }]).await?;
    Ok(Reply::empty(StatusCode::NO_CONTENT))
}
