//! Ref changes the server makes itself, each through the one path ([`super::refs`]): the control
//! plane's ref pushes (a real commit written with the message, author and date given, or a
//! commit pointed at), a repository's first commit, and a source import's history.
use std::collections::BTreeMap;
use std::path::Path;

use platform_core::time::parse_ts;
use platform_git::{NewCommit, Person, RefUpdate, ZERO};
use platform_store::domain::accounts::Account;
use platform_store::domain::pushes;
use platform_store::domain::repos::{self, Repo};
use platform_store::Conn;
use serde_json::{json, Value};

use super::effects;
use super::refs::{self, Source};
use super::rules;
use super::{git_error, storage};
use crate::error::{ApiError, ApiResult};
use crate::ops::provision::{self, RefIn};
use crate::state::AppState;

fn noreply(login: &str) -> String {
    format!("{login}@users.noreply.service.example")
}

/// Who a commit of the control plane names: the given person, else the pusher, else the owner.
fn person(app: &AppState, given: Option<&provision::PersonIn>, who: Option<&Account>, repo: &Repo) -> ApiResult<Person> {
    let who = who.unwrap_or(&repo.owner);
    let g = given.cloned().unwrap_or_default();
    let time = match &g.date {
        Some(d) => parse_ts(d)
            .ok_or_else(|| ApiError::invalid_field("Ref", "author", "invalid", Some("date must be YYYY-MM-DDTHH:MM:SSZ".into())))?,
        None => app.clock.now(),
    };
    Ok(Person {
        name: g.name.unwrap_or_else(|| who.name.clone().unwrap_or_else(|| who.login.clone())),
        email: g.email.unwrap_or_else(|| who.email.clone().unwrap_or_else(|| noreply(&who.login))),
        time,
        offset_minutes: 0,
    })
}

/// `POST /_admin/repos/{owner}/{repo}/refs` (and seeds' `[[refs]]`): points a ref at a commit
/// git has, writes a new commit for it (no `sha`), or records a placeholder sha (one git does
/// not have) in the store alone. Answers `{ref, sha, before}`. Rulesets judge the change as the
/// pusher's unless `bypass_rules` (placeholders, which git never sees, are not judged).
pub async fn push_ref(app: &AppState, repo: &Repo, r: &RefIn) -> ApiResult<Value> {
    let (ref_type, _) = provision::ref_kind(&r.name)?;
    let (repo2, r_pusher) = (repo.clone(), r.pusher.clone());
    let pusher = app
        .store
        .read(move |c| -> ApiResult<Option<Account>> {
            match &r_pusher {
                Some(l) => Ok(Some(provision::user(c, l)?)),
                None if !repo2.owner.is_org() => Ok(Some(repo2.owner.clone())),
                None => Ok(None),
            }
        })
        .await?;
    if let Some(v) = placeholder(app, repo, r).await? {
        return Ok(v);
    }
    let l = refs::lock(app, repo).await?;
    let before = l.git.ref_value(&r.name).await.map_err(git_error)?;
    let target = match &r.sha {
        Some(sha) => {
            if !platform_core::ids::is_sha(sha) {
                return Err(ApiError::invalid_field("Ref", "sha", "invalid", Some("sha must be 40 hexadecimal characters".into())));
            }
            let sha = sha.to_lowercase();
            let kind = l.git.object_type(&sha).await.map_err(git_error)?;
            let fits = match kind.as_deref() {
                Some("commit") => true,
                Some("tag") => ref_type == "tag",
                _ => false,
            };
            if !fits {
                // A placeholder: the store alone has it; git keeps no other value for the ref.
                if let Some(b) = &before {
                    let gone = RefUpdate { name: r.name.clone(), old: b.clone(), new: ZERO.into() };
                    l.git.update_refs(&[gone]).await.map_err(git_error)?;
                }
                let (repo, r2) = (repo.clone(), r.clone());
                let now = app.clock.now();
                return app.store.write(move |c| push_placeholder(c, &repo, &r2, &sha, now)).await;
            }
            sha
        }
        None => {
            let base = match (&before, ref_type) {
                (Some(b), "branch") => Some(b.clone()),
                _ => {
                    let from = r.base.clone().unwrap_or_else(|| format!("refs/heads/{}", repo.default_branch));
                    let found = l.git.resolve_commit(&from).await.map_err(git_error)?;
                    if found.is_none() && r.base.is_some() {
                        return Err(ApiError::invalid_field("Ref", "base", "invalid", Some(format!("no commit found for {from}"))));
                    }
                    found
                }
            };
            let make = ref_type == "branch" || r.message.is_some() || !r.files.is_empty();
            match (make, base) {
                (false, Some(b)) => b,
                (false, None) => {
                    return Err(ApiError::invalid_field(
                        "Ref",
                        "sha",
                        "missing_field",
                        Some("an empty repository has nothing to tag".into()),
                    ))
                }
                (true, base) => {
                    let who = person(app, r.author.as_ref(), pusher.as_ref(), repo)?;
                    let message = r.message.clone().unwrap_or_else(|| format!("Update {}", r.name));
                    commit(&l.git, base.as_deref(), &r.files, &message, &who).await?
                }
            }
        }
    };
    let update = RefUpdate { name: r.name.clone(), old: before.clone().unwrap_or_else(|| ZERO.into()), new: target.clone() };
    let suites = if r.bypass_rules {
        Vec::new()
    } else {
        let known: Vec<String> = l.git.refs().await.map_err(git_error)?.into_iter().map(|x| x.oid).collect();
        let judged = rules::judge(app, repo, &l.git, rules::Actor::Account(pusher.as_ref()), std::slice::from_ref(&update), &known).await?;
        if judged.refused() {
            let e = judged.error();
            rules::record(app, judged.suites).await?;
            return Err(e);
        }
        judged.suites
    };
    l.apply_judged(app, pusher.as_ref().map(|p| p.id), Source::Control, &[update], suites).await?;
    Ok(json!({"ref": r.name, "sha": target, "before": before}))
}

/// The store alone records a ref push naming a sha no ref change ever recorded (so git does not
/// have it) over a ref git keeps no value of (absent, or a placeholder itself): one transaction,
/// no git, no lock — as fast as before git hosting, for tests and seeds that invent shas. The
/// conditions are checked in that transaction, so a push recording the ref meanwhile makes this
/// `None` (the caller takes the path through git) or follows it; `None` too when they do not hold.
async fn placeholder(app: &AppState, repo: &Repo, r: &RefIn) -> ApiResult<Option<Value>> {
    let Some(sha) = r.sha.as_deref().filter(|s| platform_core::ids::is_sha(s)).map(str::to_lowercase) else { return Ok(None) };
    let (repo, r, now) = (repo.clone(), r.clone(), app.clock.now());
    app.store
        .write(move |c| -> ApiResult<Option<Value>> {
            let recorded = |c: &mut dyn platform_store::Conn, sha: &str| pushes::commit(c, repo.id, sha).map(|k| k.is_some());
            if recorded(c, &sha)? {
                return Ok(None);
            }
            if let Some(current) = platform_store::domain::git::get_ref(c, repo.id, &r.name)? {
                if recorded(c, &current.sha)? {
                    return Ok(None);
                }
            }
            push_placeholder(c, &repo, &r, &sha, now).map(Some)
        })
        .await
}

/// Writes a commit on `parent` (or a root commit) with `files` changed in its tree.
async fn commit(
    git: &platform_git::Repo,
    parent: Option<&str>,
    files: &BTreeMap<String, Option<String>>,
    message: &str,
    who: &Person,
) -> ApiResult<String> {
    let base_tree = match parent {
        Some(p) => Some(git.commit(p).await.map_err(git_error)?.ok_or_else(ApiError::internal)?.tree),
        None => None,
    };
    let changes = files.iter().map(|(p, c)| (p.clone(), c.as_ref().map(|c| (c.clone().into_bytes(), false)))).collect();
    let tree = git.edit_tree(base_tree.as_deref(), &changes).await.map_err(|e| match e {
        platform_git::Error::Invalid(m) => ApiError::invalid_field("Ref", "files", "invalid", Some(m)),
        other => git_error(other),
    })?;
    let parents: Vec<String> = parent.map(str::to_string).into_iter().collect();
    git.write_commit(&NewCommit { tree: &tree, parents: &parents, message, author: who, committer: who }).await.map_err(|e| match e {
        platform_git::Error::Invalid(m) => ApiError::invalid_field("Ref", "author", "invalid", Some(m)),
        other => git_error(other),
    })
}

/// A new repository's first commit (`auto_init`): a README naming it, on its default branch.
pub async fn first_commit(app: &AppState, repo: &Repo, actor: Option<&Account>) -> ApiResult<()> {
    let mut readme = format!("# {}\n", repo.name);
    if let Some(d) = repo.description.as_deref().filter(|d| !d.is_empty()) {
        readme.push_str(&format!("\n{d}\n"));
    }
    let files = BTreeMap::from([("README.md".to_string(), Some(readme))]);
    let who = person(app, None, actor, repo)?;
    let l = refs::lock(app, repo).await?;
    let sha = commit(&l.git, None, &files, "Initial commit", &who).await?;
    let update = RefUpdate { name: format!("refs/heads/{}", repo.default_branch), old: ZERO.into(), new: sha };
    l.apply(app, actor.map(|a| a.id), Source::Create, &[update]).await?;
    Ok(())
}

/// A source import's `pushing` step: the repository's branches and tags become exactly the
/// mirror's (its objects copied in first), and its default branch the mirror's `HEAD` branch.
pub async fn import(app: &AppState, repo: &Repo, mirror: &Path, pusher_id: Option<i64>) -> ApiResult<()> {
    let src = storage(app).await?.open_mirror(mirror.to_path_buf());
    let wanted = src.refs().await.map_err(git_error)?;
    let head = src.head_branch().await.filter(|h| wanted.iter().any(|r| r.name == format!("refs/heads/{h}")));
    let l = refs::lock(app, repo).await?;
    let tips: Vec<String> = wanted.iter().map(|r| r.oid.clone()).collect();
    l.git.fetch_objects(mirror, &tips).await.map_err(git_error)?;
    let have = l.git.refs().await.map_err(git_error)?;
    let mut updates = Vec::new();
    for w in &wanted {
        let old = have.iter().find(|h| h.name == w.name).map_or(ZERO.to_string(), |h| h.oid.clone());
        if old != w.oid {
            updates.push(RefUpdate { name: w.name.clone(), old, new: w.oid.clone() });
        }
    }
    for h in have.iter().filter(|h| !wanted.iter().any(|w| w.name == h.name)) {
        updates.push(RefUpdate { name: h.name.clone(), old: h.oid.clone(), new: ZERO.into() });
    }
    l.apply(app, pusher_id, Source::Import, &updates).await?;
    if let Some(b) = head {
        let (id, now, b2) = (repo.id, app.clock.now(), b.clone());
        app.store
            .write(move |c| {
                let ch = platform_store::domain::repos::Changes { default_branch: Some(&b2), ..Default::default() };
                platform_store::domain::repos::update(c, id, &ch, now)
            })
            .await?;
        l.git.set_head(&b).await.map_err(git_error)?;
    }
    Ok(())
}

/// Points a ref at a placeholder sha (one git does not have): the store alone records it, with
/// the activity of a push, in the caller's transaction.
pub fn push_placeholder(c: &mut dyn Conn, repo: &Repo, r: &RefIn, sha: &str, now: i64) -> ApiResult<serde_json::Value> {
    provision::ref_kind(&r.name)?;
    let pusher = provision::pusher(c, repo, r)?;
    let before = repos::set_ref(c, repo.id, &r.name, sha, now)?;
    let change = effects::RefMove { name: &r.name, before: before.as_deref(), after: Some(sha), pushed: None };
    effects::record(c, repo, pusher.as_ref(), change, now)?;
    Ok(json!({"ref": r.name, "sha": sha, "before": before}))
}
