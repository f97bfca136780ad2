//! Branches, commits and refs (reads): what a repository's refs point at, as the branch, commit
//! and git-ref shapes. Refs and the commits they have pointed at are kept by pushes (control
//! plane); a commit's message and people come from a workflow run of it when there is one.
use axum::http::StatusCode;
use platform_core::ids::{node_id, sha256_hex};
use platform_store::domain::accounts::{self, Account};
use platform_store::domain::git::{self, Ref};
use platform_store::domain::repos::Repo;
use platform_store::DbError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::operation::{Access, Operation, Resp};
use crate::reply::Reply;
use crate::request::{percent_encode, Ctx, Pagination, Query};
use crate::routes::Api;
use crate::shape::{Timestamp, Uri};
use crate::shapes::{repo_api_url, simple_user, SimpleUser, Urls};

const READ: Access = Access::read(&["repo"], "contents");

/// The query of the branch list.
#[derive(Deserialize, JsonSchema)]
struct BranchesQuery {
    /// Only protected (true) or unprotected (false) branches.
    protected: Option<bool>,
    #[serde(flatten)]
    page: Pagination,
}

pub static LIST_BRANCHES: Operation = Operation::get("branches/list", "/repos/{owner}/{repo}/branches", "List branches")
    .docs("https://docs.service.example/rest/branches/branches#list-branches")
    .access(READ)
    .query::<BranchesQuery>()
    .cached()
    .responds(&[Resp::typed::<Vec<ShortBranch>>(200, "Branches by name.").with_headers(&["Link"])]);

pub static GET_BRANCH: Operation = Operation::get("branches/get", "/repos/{owner}/{repo}/branches/{branch}", "Get a branch")
    .docs("https://docs.service.example/rest/branches/branches#get-a-branch")
    .access(READ)
    .slash_param("branch")
    .cached()
    .responds(&[Resp::typed::<BranchWithProtection>(200, "The branch (its name may contain slashes) and its commit.")]);

pub static GET_COMMIT: Operation = Operation::get("commits/get", "/repos/{owner}/{repo}/commits/{ref}", "Get a commit")
    .docs("https://docs.service.example/rest/commits/commits#get-a-commit")
    .access(READ)
    // Other resources below a commit are not part of a ref.
    .slash_param_except("ref", &["check-runs", "check-suites", "comments", "pulls", "branches-where-head"])
    .cached()
    .responds(&[
        Resp::typed::<Commit>(200, "The commit a sha (full or abbreviated), branch or tag names."),
        Resp::typed::<crate::error::BasicError>(422, "No commit found for the reference."),
    ]);

/// Also read through `…/git/refs/{ref}`, as on the hosted platform: it is the `url` of every
/// reference and what a repository's `git_refs_url` expands to (other methods there are the
/// reference writes).
pub static GET_REF: Operation = Operation::get("git/get-ref", "/repos/{owner}/{repo}/git/ref/{ref}", "Get a reference")
    .docs("https://docs.service.example/rest/git/refs#get-a-reference")
    .access(READ)
    .slash_param_read_alias("ref", "/repos/{owner}/{repo}/git/refs/{ref}")
    .cached()
    .responds(&[Resp::typed::<GitRef>(200, "The reference (`heads/<branch>` or `tags/<tag>`, exactly).")]);

pub static LIST_MATCHING_REFS: Operation =
    Operation::get("git/list-matching-refs", "/repos/{owner}/{repo}/git/matching-refs/{ref}", "List matching references")
        .docs("https://docs.service.example/rest/git/refs#list-matching-references")
        .access(READ)
        .slash_param("ref")
        .query::<Pagination>()
        .cached()
        .responds(&[Resp::typed::<Vec<GitRef>>(200, "References whose name starts with `refs/<ref>`, by name.").with_headers(&["Link"])]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_BRANCHES, list_branches)
        .op(&GET_BRANCH, get_branch)
        .op(&GET_COMMIT, get_commit)
        .op(&GET_REF, get_ref)
        .op(&LIST_MATCHING_REFS, list_matching_refs)
}

// ------------------------------------------------------------------ shapes

/// A commit as a short branch names it.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct CommitLink {
    pub sha: String,
    pub url: Uri,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct RequiredStatusChecks {
    #[schemars(extend("enum" = ["off", "non_admins", "everyone"]))]
    pub enforcement_level: &'static str,
    pub contexts: Vec<String>,
    pub checks: Vec<Value>,
}

/// A branch's protection summary: enabled when rules protect it (rulesets; classic protection
/// settings are not modelled, so required checks are off).
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct BranchProtection {
    pub enabled: bool,
    pub required_status_checks: RequiredStatusChecks,
}

/// A branch as the list gives it; protection details only for protected branches.
#[derive(Serialize, JsonSchema)]
pub struct ShortBranch {
    pub name: String,
    pub commit: CommitLink,
    pub protected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection: Option<BranchProtection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection_url: Option<Uri>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct BranchLinks {
    pub html: Uri,
    #[serde(rename = "self")]
    pub self_link: Uri,
}

/// A branch with its commit.
#[derive(Serialize, JsonSchema)]
pub struct BranchWithProtection {
    pub name: String,
    pub commit: Commit,
    #[serde(rename = "_links")]
    pub links: BranchLinks,
    pub protected: bool,
    pub protection: BranchProtection,
    pub protection_url: Uri,
}

/// A commit's author or committer as git records them.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct GitUser {
    pub name: String,
    pub email: String,
    pub date: Timestamp,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Tree {
    pub sha: String,
    pub url: Uri,
}

/// Commits are not signed here.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Verification {
    pub verified: bool,
    pub reason: &'static str,
    pub signature: Option<String>,
    pub payload: Option<String>,
    pub verified_at: Option<Timestamp>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct GitCommit {
    pub url: Uri,
    pub author: GitUser,
    pub committer: GitUser,
    pub message: String,
    pub comment_count: i64,
    pub tree: Tree,
    pub verification: Verification,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Parent {
    pub sha: String,
    pub url: Uri,
    pub html_url: Uri,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Stats {
    pub total: i64,
    pub additions: i64,
    pub deletions: i64,
}

/// A commit. The platform keeps no trees or history: no parents, no files.
#[derive(Serialize, JsonSchema)]
pub struct Commit {
    pub url: Uri,
    pub sha: String,
    pub node_id: String,
    pub html_url: Uri,
    pub comments_url: Uri,
    pub commit: GitCommit,
    /// The accounts of the author and committer, null when unknown.
    pub author: Option<SimpleUser>,
    pub committer: Option<SimpleUser>,
    pub parents: Vec<Parent>,
    pub stats: Stats,
    pub files: Vec<Value>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct GitObject {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["commit", "tag", "tree", "blob"]))]
    pub kind: &'static str,
    pub sha: String,
    pub url: Uri,
}

/// A git reference.
#[derive(Serialize, JsonSchema)]
pub struct GitRef {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub node_id: String,
    pub url: Uri,
    pub object: GitObject,
}

/// A stable number for things named by text (refs, commits), for their node ids.
fn number_of(text: &str) -> i64 {
    i64::from_str_radix(&sha256_hex(text.as_bytes())[..12], 16).unwrap_or(0)
}

fn git_ref(u: &Urls, repo: &Repo, r: &Ref) -> GitRef {
    let base = repo_api_url(u, repo);
    let short = r.name.strip_prefix("refs/").unwrap_or(&r.name);
    GitRef {
        node_id: node_id("Ref", number_of(&format!("{}:{}", repo.id, r.name))),
        url: Uri(format!("{base}/git/refs/{short}")),
        object: GitObject { kind: "commit", sha: r.sha.clone(), url: Uri(format!("{base}/git/commits/{}", r.sha)) },
        git_ref: r.name.clone(),
    }
}

/// What is known of a commit: when the repository first saw it, what git recorded of it (when
/// it came with a push), and a run's record of it.
struct Known {
    seen_at: i64,
    stored: Option<platform_store::domain::pushes::CommitRecord>,
    run: Option<(Value, Account)>,
}

fn known(c: &mut dyn platform_store::Conn, repo_id: i64, sha: &str) -> Result<Known, DbError> {
    let seen_at = git::commit_seen_at(c, repo_id, sha)?.unwrap_or(0);
    let stored = platform_store::domain::pushes::commit(c, repo_id, sha)?;
    let run = match git::run_commit(c, repo_id, sha)? {
        Some((commit, actor_id)) => accounts::by_id(c, actor_id)?.map(|a| (commit, a)),
        None => None,
    };
    Ok(Known { seen_at, stored, run })
}

/// The commit shape. What git recorded (message, people, dates, tree, parents) when the commit
/// came with a push; else with a run's record, its message, people and time; otherwise the
/// repository owner as the person, the time the commit was first pushed and an empty message.
fn commit(u: &Urls, repo: &Repo, sha: &str, k: &Known) -> Commit {
    let base = repo_api_url(u, repo);
    let owner = &repo.owner;
    let fallback_email = |a: &Account| a.email.clone().unwrap_or_else(|| format!("{}@users.noreply.service.example", a.login));
    let (message, when, people, account) = match &k.run {
        Some((c, actor)) => {
            let person = |key: &str| {
                let v = &c[key];
                let name =
                    v["name"].as_str().map(str::to_string).unwrap_or_else(|| actor.name.clone().unwrap_or_else(|| actor.login.clone()));
                let email = v["email"].as_str().map(str::to_string).unwrap_or_else(|| fallback_email(actor));
                (name, email)
            };
            let when = c["timestamp"].as_i64().unwrap_or(k.seen_at);
            (c["message"].as_str().unwrap_or_default().to_string(), when, [person("author"), person("committer")], Some(actor))
        }
        None => {
            let p = (owner.name.clone().unwrap_or_else(|| owner.login.clone()), fallback_email(owner));
            (String::new(), k.seen_at, [p.clone(), p], (!owner.is_org()).then_some(owner))
        }
    };
    let [(an, ae), (cn, ce)] = people;
    let (mut author, mut committer) =
        (GitUser { name: an, email: ae, date: Timestamp(when) }, GitUser { name: cn, email: ce, date: Timestamp(when) });
    let (mut message, mut tree, mut parents) = (message, sha256_hex(format!("tree {sha}").as_bytes())[..40].to_string(), Vec::new());
    if let Some(g) = &k.stored {
        let person = |p: &platform_store::domain::pushes::Signature| GitUser {
            name: p.name.clone(),
            email: p.email.clone(),
            date: Timestamp(p.date),
        };
        (author, committer) = (person(&g.author), person(&g.committer));
        // As hosted: the message without the line end git keeps after it.
        (message, tree) = (g.message.trim_end_matches('\n').to_string(), g.tree.clone());
        parents = g
            .parents
            .iter()
            .map(|p| Parent {
                url: Uri(format!("{base}/commits/{p}")),
                html_url: Uri(format!("{}/{}/commit/{p}", u.web, repo.full_name())),
                sha: p.clone(),
            })
            .collect();
    }
    let user = account.map(|a| simple_user(u, a));
    Commit {
        url: Uri(format!("{base}/commits/{sha}")),
        sha: sha.to_string(),
        node_id: node_id("Commit", number_of(&format!("{}:{sha}", repo.id))),
        html_url: Uri(format!("{}/{}/commit/{sha}", u.web, repo.full_name())),
        comments_url: Uri(format!("{base}/commits/{sha}/comments")),
        commit: GitCommit {
            url: Uri(format!("{base}/git/commits/{sha}")),
            author,
            committer,
            message,
            comment_count: 0,
            tree: Tree { url: Uri(format!("{base}/git/trees/{tree}")), sha: tree },
            verification: Verification { verified: false, reason: "unsigned", signature: None, payload: None, verified_at: None },
        },
        author: user.clone(),
        committer: user,
        parents,
        stats: Stats { total: 0, additions: 0, deletions: 0 },
        files: Vec::new(),
    }
}

fn protection(protected: bool) -> BranchProtection {
    BranchProtection {
        enabled: protected,
        required_status_checks: RequiredStatusChecks { enforcement_level: "off", contexts: Vec::new(), checks: Vec::new() },
    }
}

fn branch_url(u: &Urls, repo: &Repo, name: &str) -> String {
    format!("{}/branches/{}", repo_api_url(u, repo), percent_encode(name))
}

// ------------------------------------------------------------------ handlers

async fn list_branches(ctx: Ctx, Query(q): Query<BranchesQuery>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page.page(30, 100);
    let id = repo.id;
    let refs = ctx.app.store.read(move |c| git::refs_with_prefix(c, id, "refs/heads/")).await?;
    let is_protected = super::rulesets::protected_branches(&ctx, repo).await?;
    let u = &ctx.app.urls;
    let all: Vec<ShortBranch> = refs
        .iter()
        .map(|r| {
            let name = r.name["refs/heads/".len()..].to_string();
            let protected = is_protected(&name);
            ShortBranch {
                commit: CommitLink { sha: r.sha.clone(), url: Uri(format!("{}/commits/{}", repo_api_url(u, repo), r.sha)) },
                protection: protected.then(|| protection(true)),
                protection_url: protected.then(|| Uri(format!("{}/protection", branch_url(u, repo, &name)))),
                protected,
                name,
            }
        })
        .filter(|b| q.protected.is_none_or(|p| p == b.protected))
        .collect();
    let total = all.len() as i64;
    let shown: Vec<ShortBranch> = all.into_iter().skip(page.offset() as usize).take(page.per_page as usize).collect();
    Ok(Reply::ok(shown).opt_header("link", ctx.link(page, total)))
}

async fn get_branch(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let name = ctx.param("branch").to_string();
    let (id, full) = (repo.id, format!("refs/heads/{name}"));
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(r) = git::get_ref(c, id, &full)? else { return Ok(None) };
            let k = known(c, id, &r.sha)?;
            Ok(Some((r, k)))
        })
        .await?;
    let (r, k) = found.ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "Branch not found"))?;
    let protected = super::rulesets::protected_branches(&ctx, repo).await?(&name);
    let u = &ctx.app.urls;
    let url = branch_url(u, repo, &name);
    let body = BranchWithProtection {
        commit: commit(u, repo, &r.sha, &k),
        links: BranchLinks { html: Uri(format!("{}/{}/tree/{name}", u.web, repo.full_name())), self_link: Uri(url.clone()) },
        protected,
        protection: protection(protected),
        protection_url: Uri(format!("{url}/protection")),
        name,
    };
    Ok(Reply::ok(body))
}

async fn get_commit(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let given = ctx.param("ref").to_string();
    let (id, g) = (repo.id, given.clone());
    let found = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(sha) = git::resolve_commit(c, id, &g)? else { return Ok(None) };
            let k = known(c, id, &sha)?;
            Ok(Some((sha, k)))
        })
        .await?;
    let (sha, k) = found.ok_or_else(|| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("No commit found for SHA: {given}")))?;
    Ok(Reply::ok(commit(&ctx.app.urls, repo, &sha, &k)))
}

async fn get_ref(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let (id, name) = (repo.id, format!("refs/{}", ctx.param("ref")));
    let r = ctx.app.store.read(move |c| git::get_ref(c, id, &name)).await?.ok_or_else(ApiError::not_found)?;
    Ok(Reply::ok(git_ref(&ctx.app.urls, repo, &r)))
}

async fn list_matching_refs(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let (id, prefix) = (repo.id, format!("refs/{}", ctx.param("ref")));
    let refs = ctx.app.store.read(move |c| git::refs_with_prefix(c, id, &prefix)).await?;
    let total = refs.len() as i64;
    let shown: Vec<GitRef> =
        refs.iter().skip(page.offset() as usize).take(page.per_page as usize).map(|r| git_ref(&ctx.app.urls, repo, r)).collect();
    Ok(Reply::ok(shown).opt_header("link", ctx.link(page, total)))
}
