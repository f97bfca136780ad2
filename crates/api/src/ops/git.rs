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
use crate::registry::Api;
use crate::reply::Reply;
use crate::request::{percent_encode, Ctx, Pagination, Query};
use crate::shapes::{repo_api_url, simple_user, SimpleUser, Urls};
use crate::typed::{Timestamp, Uri};

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
    .responds(&[Resp::typed::<RefOrRefs>(
        200,
        "The reference (`heads/<branch>` or `tags/<tag>`, exactly); for a name that is only a prefix of references \
         (`heads`, `tags/v1`), the references below it, by name (the legacy list form).",
    )]);

/// `…/git/refs` read as a list (the legacy form of matching references; no `ref` lists them all).
pub static LIST_REFS: Operation = Operation::get("git/list-refs", "/repos/{owner}/{repo}/git/refs", "List references")
    .docs("https://docs.service.example/rest/git/refs#list-matching-references")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<Vec<GitRef>>(200, "Every reference, by name.").with_headers(&["Link"])]);

/// One reference, or the references below a prefix.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RefOrRefs {
    One(GitRef),
    Many(Vec<GitRef>),
}

pub static LIST_MATCHING_REFS: Operation =
    Operation::get("git/list-matching-refs", "/repos/{owner}/{repo}/git/matching-refs/{ref}", "List matching references")
        .docs("https://docs.service.example/rest/git/refs#list-matching-references")
        .access(READ)
        .slash_param("ref")
        .cached()
        .responds(&[Resp::typed::<Vec<GitRef>>(200, "References whose name starts with `refs/<ref>`, by name.").with_headers(&["Link"])]);

pub fn routes(api: Api) -> Api {
    api.op(&LIST_BRANCHES, list_branches)
        .op(&GET_BRANCH, get_branch)
        .op(&GET_COMMIT, get_commit)
        .op(&GET_REF, get_ref)
        .op(&LIST_MATCHING_REFS, list_matching_refs)
        .op(&LIST_REFS, list_refs)
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

/// A commit: what git recorded of it (or, for a sha only the store knows, what a run recorded).
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
    /// The lines the commit changes against its first parent (one commit's answer; not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    /// The files it changes against its first parent (at most 300; not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<DiffEntry>>,
}

/// A file a commit (or a comparison) changes.
#[derive(Serialize, JsonSchema)]
pub struct DiffEntry {
    /// The blob after the change (before it, for a removed file).
    pub sha: Option<String>,
    pub filename: String,
    #[schemars(extend("enum" = ["added", "removed", "modified", "renamed", "copied", "changed", "unchanged"]))]
    pub status: &'static str,
    pub additions: i64,
    pub deletions: i64,
    pub changes: i64,
    pub blob_url: Uri,
    pub raw_url: Uri,
    pub contents_url: Uri,
    /// The file's unified diff hunks (one commit's answer; none for binary files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
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
pub(crate) fn number_of(text: &str) -> i64 {
    i64::from_str_radix(&sha256_hex(text.as_bytes())[..12], 16).unwrap_or(0)
}

pub(crate) fn git_ref(u: &Urls, repo: &Repo, r: &Ref) -> GitRef {
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
pub(crate) struct Known {
    seen_at: i64,
    pub(crate) stored: Option<platform_store::domain::pushes::CommitRecord>,
    run: Option<(Value, Account)>,
    /// The accounts of the stored commit's author and committer, by their emails.
    people: [Option<Account>; 2],
}

pub(crate) fn known(c: &mut dyn platform_store::Conn, repo_id: i64, sha: &str) -> Result<Known, DbError> {
    let seen_at = git::commit_seen_at(c, repo_id, sha)?.unwrap_or(0);
    let stored = platform_store::domain::pushes::commit(c, repo_id, sha)?;
    let run = match git::run_commit(c, repo_id, sha)? {
        Some((commit, actor_id)) => accounts::by_id(c, actor_id)?.map(|a| (commit, a)),
        None => None,
    };
    let mut k = Known { seen_at, stored, run, people: [None, None] };
    match_people(c, &mut k)?;
    Ok(k)
}

/// The account of a commit's email: a user with that email, or the user a no-reply address
/// (`login@users.noreply…` or `id+login@users.noreply…`) names.
fn account_of_email(c: &mut dyn platform_store::Conn, email: &str) -> Result<Option<Account>, DbError> {
    if let Some(local) = email.strip_suffix("@users.noreply.service.example") {
        let login = local.split_once('+').map_or(local, |(_, l)| l);
        return Ok(accounts::by_login(c, login)?.filter(|a| !a.is_org()));
    }
    accounts::user_by_email(c, email)
}

/// Matches the stored commit's author and committer to accounts by email (once it has one).
pub(crate) fn match_people(c: &mut dyn platform_store::Conn, k: &mut Known) -> Result<(), DbError> {
    let Some(g) = &k.stored else { return Ok(()) };
    let author = account_of_email(c, &g.author.email)?;
    let committer =
        if g.committer.email.eq_ignore_ascii_case(&g.author.email) { author.clone() } else { account_of_email(c, &g.committer.email)? };
    k.people = [author, committer];
    Ok(())
}

/// The commit shape. What git recorded (message, people, dates, tree, parents) when the commit
/// came with a push; else with a run's record, its message, people and time; otherwise the
/// repository owner as the person, the time the commit was first pushed and an empty message.
pub(crate) fn commit(u: &Urls, repo: &Repo, sha: &str, k: &Known) -> Commit {
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
    // A commit git recorded names the accounts of its people's emails (none: null).
    let (author_user, committer_user) = match &k.stored {
        Some(_) => (k.people[0].as_ref().map(|a| simple_user(u, a)), k.people[1].as_ref().map(|a| simple_user(u, a))),
        None => (user.clone(), user),
    };
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
        author: author_user,
        committer: committer_user,
        parents,
        stats: None,
        files: None,
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
    let is_protected = super::rulesets::branches::protected_branches(&ctx, repo).await?;
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
    let protected = super::rulesets::branches::protected_branches(&ctx, repo).await?(&name);
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
    let mut body = commit(&ctx.app.urls, repo, &sha, &k);
    // What it changes, when git has it (a placeholder sha has no tree to compare).
    let git = super::git_hosting::repository(&ctx.app, repo).await?;
    if let Some(g) = git.commit(&sha).await.map_err(super::git_hosting::git_error)? {
        let parent = g.parents.first().map(String::as_str);
        let (stats, mut files) = changes(&ctx.app.urls, repo, &git, parent, &sha).await?;
        // Patches too large to read whole are left out, as hosted leaves out large diffs.
        let mut patches = match git.patches(parent, &sha).await {
            Ok(p) => p,
            Err(platform_git::Error::TooLarge) => Default::default(),
            Err(e) => return Err(super::git_hosting::git_error(e)),
        };
        for f in &mut files {
            f.patch = patches.remove(&f.filename);
        }
        (body.stats, body.files) = (Some(stats), Some(files));
    }
    Ok(Reply::ok(body))
}

/// Files shown of one commit or comparison at most, as hosted.
const MAX_FILES: usize = 300;

/// The lines and files that differ from `base` (`None`: the empty tree) to `head`.
pub(crate) async fn changes(
    u: &Urls,
    repo: &Repo,
    git: &platform_git::Repo,
    base: Option<&str>,
    head: &str,
) -> ApiResult<(Stats, Vec<DiffEntry>)> {
    let list = git.diff(base, head).await.map_err(super::git_hosting::git_error)?;
    let (additions, deletions) = list.iter().fold((0, 0), |(a, d), c| (a + c.additions as i64, d + c.deletions as i64));
    let api = repo_api_url(u, repo);
    let files = list
        .into_iter()
        .take(MAX_FILES)
        .map(|c| {
            let (status, sha) = match c.status {
                platform_git::Status::Added => ("added", c.new_oid),
                platform_git::Status::Removed => ("removed", c.old_oid),
                platform_git::Status::Modified => ("modified", c.new_oid),
            };
            let path = percent_encode_path(&c.path);
            DiffEntry {
                sha: Some(sha),
                status,
                additions: c.additions as i64,
                deletions: c.deletions as i64,
                changes: (c.additions + c.deletions) as i64,
                blob_url: Uri(format!("{}/{}/blob/{head}/{path}", u.web, repo.full_name())),
                raw_url: Uri(format!("{}/{}/raw/{head}/{path}", u.web, repo.full_name())),
                contents_url: Uri(format!("{api}/contents/{path}?ref={head}")),
                patch: None,
                filename: c.path,
            }
        })
        .collect();
    Ok((Stats { total: additions + deletions, additions, deletions }, files))
}

/// A path for a URL: each segment percent-encoded, the slashes kept.
pub(crate) fn percent_encode_path(path: &str) -> String {
    path.split('/').map(percent_encode).collect::<Vec<_>>().join("/")
}

/// One reference; a name that is no reference but a prefix of some (`heads`, `tags`,
/// `heads/feature`) answers the references below it, by name — the legacy list form clients
/// still read (`…/git/refs/heads`).
async fn get_ref(ctx: Ctx) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let (id, name) = (repo.id, format!("refs/{}", ctx.param("ref").trim_end_matches('/')));
    // `…/git/ref/{ref}` names one reference exactly; the legacy `…/git/refs/{prefix}` also
    // lists the references below a prefix (`heads`, `tags/v1`).
    let lists = ctx.read_alias;
    let (exact, below) = ctx
        .app
        .store
        .read(move |c| -> Result<_, DbError> {
            match git::get_ref(c, id, &name)? {
                Some(r) => Ok((Some(r), Vec::new())),
                None if lists => Ok((None, git::refs_with_prefix(c, id, &format!("{name}/"))?)),
                None => Ok((None, Vec::new())),
            }
        })
        .await?;
    match exact {
        Some(r) => Ok(Reply::ok(RefOrRefs::One(git_ref(&ctx.app.urls, repo, &r)))),
        None if !below.is_empty() => Ok(Reply::ok(RefOrRefs::Many(below.iter().map(|r| git_ref(&ctx.app.urls, repo, r)).collect()))),
        None => Err(ApiError::not_found()),
    }
}

/// `GET …/git/refs`: every reference, by name (the legacy list form).
async fn list_refs(ctx: Ctx, Query(q): Query<Pagination>) -> ApiResult<Reply> {
    let repo = ctx.repo();
    let page = q.page(30, 100);
    let id = repo.id;
    let refs = ctx.app.store.read(move |c| git::refs_with_prefix(c, id, "refs/")).await?;
    let total = refs.len() as i64;
    let shown: Vec<GitRef> =
        refs.iter().skip(page.offset() as usize).take(page.per_page as usize).map(|r| git_ref(&ctx.app.urls, repo, r)).collect();
    Ok(Reply::ok(shown).opt_header("link", ctx.link(page, total)))
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
