//! Git's own objects written and read one at a time: blobs (`GET`/`POST …/git/blobs`) and
//! annotated tag objects (`GET`/`POST …/git/tags`). Writing one moves no ref (a tag object
//! becomes a tag once `POST …/git/refs` names it), so no ruleset judges it; it is stored
//! unreferenced until a ref reaches it.
use axum::http::StatusCode;
use base64::Engine;
use platform_core::ids::node_id;
use platform_git::{is_oid, NewTag};
use platform_store::domain::repos::Repo;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::contents::{person, wrapped_base64, Who, MAX_RAW};
use super::{git, READ, WRITE};
use crate::error::{ApiError, ApiResult};
use crate::operation::{Operation, Resp};
use crate::ops::git::{number_of, GitUser, Verification};
use crate::ops::git_hosting::git_error;
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{Body, Ctx};
use crate::shapes::{repo_api_url, Urls};
use crate::typed::{Timestamp, Uri};

/// A blob to store.
#[derive(Deserialize, JsonSchema)]
struct CreateBlob {
    /// The blob's contents, in `encoding`.
    content: String,
    /// `utf-8` (the default) or `base64`.
    encoding: Option<String>,
}

/// An annotated tag object to store.
#[derive(Deserialize, JsonSchema)]
struct CreateTag {
    /// The tag's name (usually the name of the ref that will name it, like `v0.0.1`).
    tag: String,
    /// The tag message.
    message: String,
    /// The sha of the object tagged.
    object: String,
    /// The type of the object tagged.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["commit", "tree", "blob"]))]
    kind: String,
    /// Who tags (default: the authenticated user, now).
    tagger: Option<Who>,
}

pub static GET_BLOB: Operation = Operation::get("git/get-blob", "/repos/{owner}/{repo}/git/blobs/{file_sha}", "Get a blob")
    .docs("https://docs.service.example/rest/git/blobs#get-a-blob")
    .access(READ)
    .cached()
    .responds(&[
        Resp::typed::<Blob>(200, "The blob, its bytes base64-encoded (blobs up to 100 MB)."),
        Resp::typed::<crate::error::BasicError>(403, "The blob is larger than 100 MB."),
    ]);

pub static CREATE_BLOB: Operation = Operation::post("git/create-blob", "/repos/{owner}/{repo}/git/blobs", "Create a blob")
    .docs("https://docs.service.example/rest/git/blobs#create-a-blob")
    .access(WRITE)
    .resource("Blob")
    .responds(&[Resp::typed::<ShortBlob>(201, "The blob was stored (or was there already).").with_headers(&["Location"])]);

pub static GET_TAG: Operation = Operation::get("git/get-tag", "/repos/{owner}/{repo}/git/tags/{tag_sha}", "Get a tag")
    .docs("https://docs.service.example/rest/git/tags#get-a-tag")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<GitTag>(200, "The annotated tag object.")]);

pub static CREATE_TAG: Operation = Operation::post("git/create-tag", "/repos/{owner}/{repo}/git/tags", "Create a tag object")
    .docs("https://docs.service.example/rest/git/tags#create-a-tag-object")
    .access(WRITE)
    .resource("Tag")
    .responds(&[Resp::typed::<GitTag>(201, "The tag object was stored (no ref names it yet).").with_headers(&["Location"])]);

pub fn routes(api: Api) -> Api {
    api.op(&GET_BLOB, get_blob).op(&CREATE_BLOB, create_blob).op(&GET_TAG, get_tag).op(&CREATE_TAG, create_tag)
}

/// A blob.
#[derive(Serialize, JsonSchema)]
pub struct Blob {
    /// Base64, in lines of 60 characters.
    pub content: String,
    #[schemars(extend("enum" = ["base64"]))]
    pub encoding: &'static str,
    pub url: Uri,
    pub sha: String,
    pub size: Option<i64>,
    pub node_id: String,
}

/// A blob as its creation answers it.
#[derive(Serialize, JsonSchema)]
pub struct ShortBlob {
    pub url: Uri,
    pub sha: String,
}

/// The object a tag names.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct TagObject {
    pub sha: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: Uri,
}

/// An annotated tag object.
#[derive(Serialize, JsonSchema)]
pub struct GitTag {
    pub node_id: String,
    /// The tag's name.
    pub tag: String,
    pub sha: String,
    pub url: Uri,
    pub message: String,
    pub tagger: GitUser,
    pub object: TagObject,
    pub verification: Verification,
}

fn unprocessable(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message.into())
}

async fn get_blob(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let sha = ctx.param("file_sha").to_lowercase();
    let g = git(&ctx, repo).await?;
    let size = if is_oid(&sha) { g.blob_size(&sha).await.map_err(git_error)? } else { None };
    let size = size.ok_or_else(ApiError::not_found)?;
    if size > MAX_RAW {
        return Err(ApiError::forbidden(
            "This API returns blobs up to 100 MB in size. The requested blob is too large to fetch via the API.",
        ));
    }
    let bytes = g.blob(&sha, MAX_RAW).await.map_err(git_error)?.ok_or_else(ApiError::not_found)?;
    let api = repo_api_url(&ctx.app.urls, repo);
    Ok(Reply::ok(Blob {
        content: wrapped_base64(&bytes),
        encoding: "base64",
        url: Uri(format!("{api}/git/blobs/{sha}")),
        node_id: node_id("Blob", number_of(&format!("{}:{sha}", repo.id))),
        size: Some(size as i64),
        sha,
    }))
}

async fn create_blob(ctx: Ctx, Body(b): Body<CreateBlob>) -> ApiResult<Reply> {
    let bytes = match b.encoding.as_deref().unwrap_or("utf-8").to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" => b.content.into_bytes(),
        "base64" => {
            let compact: String = b.content.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact.as_bytes())
                .map_err(|_| ApiError::invalid_field("Blob", "content", "invalid", Some("content is not valid Base64".into())))?
        }
        other => {
            return Err(ApiError::invalid_field(
                "Blob",
                "encoding",
                "invalid",
                Some(format!("encoding {other:?} is not one of utf-8, base64")),
            ))
        }
    };
    let repo = ctx.repo();
    let g = git(&ctx, repo).await?;
    let sha = g.write_blob(bytes).await.map_err(git_error)?;
    let url = Uri(format!("{}/git/blobs/{sha}", repo_api_url(&ctx.app.urls, repo)));
    let location = url.0.clone();
    Ok(Reply::created(ShortBlob { url, sha }).header("location", location))
}

async fn get_tag(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let sha = ctx.param("tag_sha").to_lowercase();
    let g = git(&ctx, repo).await?;
    let tag = g.tag(&sha).await.map_err(git_error)?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(tag_shape(&ctx.app.urls, repo, tag)))
}

async fn create_tag(ctx: Ctx, Body(b): Body<CreateTag>) -> ApiResult<Reply> {
    if !["commit", "tree", "blob"].contains(&b.kind.as_str()) {
        return Err(ApiError::invalid_field("Tag", "type", "invalid", Some("type must be one of commit, tree, blob".into())));
    }
    let repo = ctx.repo();
    let g = git(&ctx, repo).await?;
    let object = b.object.trim().to_lowercase();
    let kind = if is_oid(&object) { g.object_type(&object).await.map_err(git_error)? } else { None };
    match kind {
        None => return Err(unprocessable("Object does not exist")),
        Some(k) if k != b.kind => return Err(unprocessable(format!("Object is not a {}", b.kind))),
        Some(_) => {}
    }
    let tagger = person(&ctx, b.tagger.as_ref(), ctx.app.clock.now())?;
    let new = NewTag { object: &object, kind: &b.kind, name: &b.tag, tagger: &tagger, message: &b.message };
    let sha = g.write_tag(&new).await.map_err(|e| match e {
        platform_git::Error::Invalid(m) => ApiError::invalid_field("Tag", "tag", "invalid", Some(m)),
        other => git_error(other),
    })?;
    let tag = g.tag(&sha).await.map_err(git_error)?.ok_or_else(ApiError::internal)?;
    let body = tag_shape(&ctx.app.urls, repo, tag);
    let location = body.url.0.clone();
    Ok(Reply::created(body).header("location", location))
}

/// The shape of an annotated tag git has.
fn tag_shape(u: &Urls, repo: &Repo, t: platform_git::Tag) -> GitTag {
    let api = repo_api_url(u, repo);
    let collection = match t.kind.as_str() {
        "commit" => "commits",
        "tree" => "trees",
        "tag" => "tags",
        _ => "blobs",
    };
    let tagger = t.tagger.map(|p| GitUser { name: p.name, email: p.email, date: Timestamp(p.time) });
    GitTag {
        node_id: node_id("Tag", number_of(&format!("{}:{}", repo.id, t.oid))),
        url: Uri(format!("{api}/git/tags/{}", t.oid)),
        tag: t.name,
        message: t.message,
        tagger: tagger.unwrap_or(GitUser { name: String::new(), email: String::new(), date: Timestamp(0) }),
        object: TagObject { url: Uri(format!("{api}/git/{collection}/{}", t.object)), sha: t.object, kind: t.kind },
        verification: Verification {
            verified: false,
            reason: if t.signature.is_some() { "unknown_key" } else { "unsigned" },
            signature: t.signature,
            payload: None,
            verified_at: None,
        },
        sha: t.oid,
    }
}
