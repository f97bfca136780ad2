//! The ref-change path every change takes (see the module above): the repository's lock, the
//! intent, git, and the record of what git moved with the commits it brought.
use std::collections::HashMap;

use platform_git::{is_oid, RefUpdate, ZERO};
use platform_store::domain::pushes::{self, CommitRecord, Intent, RefChange, Signature};
use platform_store::domain::repos::{self, Repo};
use platform_store::domain::rule_suites::{self, NewSuite};
use platform_store::{Conn, DbError, Exclusive};

use super::{effects, git_error, lock_key, repository, storage};
use crate::error::ApiResult;
use crate::ops::workflow_runs::triggers;
use crate::state::AppState;

/// What asked for a ref change (kept with its intent, for the record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A `git push`.
    Push,
    /// The control plane (`POST /_admin/repos/{owner}/{repo}/refs`, seeds).
    Control,
    /// A repository's first commit (`auto_init`).
    Create,
    /// A source import's `pushing` step.
    Import,
    /// The REST ref and contents writes (`…/git/refs`, `…/contents/{path}`).
    Api,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Push => "push",
            Source::Control => "control",
            Source::Create => "create",
            Source::Import => "import",
            Source::Api => "api",
        }
    }
}

/// A repository whose refs this task alone may change, on every node, while it is held.
pub struct Locked {
    pub repo: Repo,
    pub git: platform_git::Repo,
    _lock: Exclusive,
}

/// A ref as git moved it: its update, and the commit the store records for it (an annotated
/// tag peeled; `None` for a deletion, or a tag of something other than a commit).
#[derive(Clone, Debug)]
pub struct Moved {
    pub update: RefUpdate,
    pub commit: Option<String>,
}

/// What a ref change did.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    pub moved: Vec<Moved>,
    /// The commits it introduced, newest first.
    pub commits: Vec<CommitRecord>,
}

/// Takes `repo`'s lock (waiting for a change in flight anywhere), then records whatever a
/// crashed change left.
pub async fn lock(app: &AppState, repo: &Repo) -> ApiResult<Locked> {
    let key = lock_key(storage(app).await?, repo.id);
    let held = app.store.exclusive(key).await?;
    locked(app, repo, held).await
}

/// [`lock`] unless someone holds the lock now (`None`).
pub async fn try_lock(app: &AppState, repo: &Repo) -> ApiResult<Option<Locked>> {
    let key = lock_key(storage(app).await?, repo.id);
    match app.store.try_exclusive(key).await? {
        Some(held) => Ok(Some(locked(app, repo, held).await?)),
        None => Ok(None),
    }
}

async fn locked(app: &AppState, repo: &Repo, held: Exclusive) -> ApiResult<Locked> {
    let l = Locked { repo: repo.clone(), git: repository(app, repo).await?, _lock: held };
    let id = repo.id;
    for intent in app.store.read(move |c| pushes::intents(c, Some(id))).await? {
        let a = settle(app, &l, &intent).await?;
        tracing::warn!(repo_id = id, intent = intent.id, moved = a.moved.len(), "reconciled a ref change a crash interrupted");
    }
    Ok(l)
}

impl Locked {
    /// Records that `updates` are about to happen (each from its `old` value, which git must
    /// still have for it to move).
    pub async fn intend(&self, app: &AppState, pusher_id: Option<i64>, source: Source, updates: &[RefUpdate]) -> ApiResult<Intent> {
        self.intend_judged(app, pusher_id, source, updates, Vec::new()).await
    }

    /// [`Locked::intend`], recording in the same transaction the rule suites of the change.
    pub async fn intend_judged(
        &self,
        app: &AppState,
        pusher_id: Option<i64>,
        source: Source,
        updates: &[RefUpdate],
        suites: Vec<NewSuite>,
    ) -> ApiResult<Intent> {
        let changes: Vec<RefChange> =
            updates.iter().map(|u| RefChange { name: u.name.clone(), old: u.old.clone(), new: u.new.clone() }).collect();
        let (repo_id, now) = (self.repo.id, app.clock.now());
        let c2 = changes.clone();
        let id = app
            .store
            .write_unobserved(move |c| {
                rule_suites::record(c, &suites, now)?;
                pushes::record_intent(c, repo_id, pusher_id, source.as_str(), &c2, now)
            })
            .await?;
        Ok(Intent { id, repo_id, pusher_id, source: source.as_str().into(), updates: changes, created_at: now })
    }

    /// Moves refs with `update-ref` (all or none, each checked against its old value) and
    /// records what moved: the one path of every ref change that is not a push.
    pub async fn apply(&self, app: &AppState, pusher_id: Option<i64>, source: Source, updates: &[RefUpdate]) -> ApiResult<Applied> {
        self.apply_judged(app, pusher_id, source, updates, Vec::new()).await
    }

    /// [`Locked::apply`] with the rule suites of the change, recorded with its intent.
    pub async fn apply_judged(
        &self,
        app: &AppState,
        pusher_id: Option<i64>,
        source: Source,
        updates: &[RefUpdate],
        suites: Vec<NewSuite>,
    ) -> ApiResult<Applied> {
        let intent = self.intend_judged(app, pusher_id, source, updates, suites).await?;
        let moved = self.git.update_refs(updates).await;
        let applied = settle(app, self, &intent).await?;
        moved.map_err(git_error)?;
        Ok(applied)
    }
}

/// Reads what git did of `intent` and records it — the refs that moved, the commits they
/// introduced, and the activity of the change — in one transaction that removes the intent (so a
/// change is recorded once, whoever settles it). Nothing moved: only the intent goes.
pub async fn settle(app: &AppState, l: &Locked, intent: &Intent) -> ApiResult<Applied> {
    let now_refs = l.git.refs().await.map_err(git_error)?;
    let current: HashMap<&str, &str> = now_refs.iter().map(|r| (r.name.as_str(), r.oid.as_str())).collect();
    let moved_updates: Vec<RefUpdate> = intent
        .updates
        .iter()
        .filter(|u| u.old != u.new && current.get(u.name.as_str()).copied().unwrap_or(ZERO) == u.new)
        .map(|u| RefUpdate { name: u.name.clone(), old: u.old.clone(), new: u.new.clone() })
        .collect();
    // The refs as they were: now, with the moved ones back at their old values.
    let before: Vec<platform_git::Ref> = now_refs
        .iter()
        .filter(|r| !moved_updates.iter().any(|m| m.name == r.name))
        .cloned()
        .chain(moved_updates.iter().filter(|m| !m.is_create()).map(|m| platform_git::Ref { name: m.name.clone(), oid: m.old.clone() }))
        .collect();
    let introduced = l.git.introduced(&moved_updates, &before).await.map_err(git_error)?;
    let pushed = if records_activity(&intent.source) {
        effects::gather(&l.git, &moved_updates, &before).await.map_err(git_error)?
    } else {
        HashMap::new()
    };
    let mut read = FromGit { pushed, workflows: HashMap::new() };
    // The workflow files of each pushed head (a push of git's starts their runs).
    if starts_runs(&intent.source) {
        for u in moved_updates.iter().filter(|u| !u.is_delete()) {
            let Some(sha) = l.git.resolve_commit(&u.new).await.map_err(git_error)? else { continue };
            let files = triggers::files_at(&l.git, &sha).await.map_err(git_error)?;
            if !files.is_empty() {
                let message = l.git.commit(&sha).await.map_err(git_error)?.map(|k| k.message).unwrap_or_default();
                read.workflows.insert(u.name.clone(), (files, message));
            }
        }
    }
    let commits: Vec<CommitRecord> = l.git.commits(&introduced).await.map_err(git_error)?.into_iter().map(record).collect();
    let mut moved = Vec::new();
    for u in moved_updates {
        let commit = if u.is_delete() {
            None
        } else if u.name.starts_with("refs/tags/") {
            l.git.resolve_commit(&u.new).await.map_err(git_error)?
        } else {
            Some(u.new.clone())
        };
        moved.push(Moved { update: u, commit });
    }
    let (repo, intent2, moved2, commits2, now) = (l.repo.clone(), intent.clone(), moved.clone(), commits.clone(), app.clock.now());
    let recorded = app
        .store
        .write(move |c| -> Result<bool, DbError> {
            if !pushes::remove_intent(c, intent2.id)? {
                return Ok(false);
            }
            let mut refs = Vec::new();
            let mut was = Vec::new();
            for m in &moved2 {
                // A tag of a tree or blob is no ref the store keeps: a deletion there.
                let sha = m.commit.clone().filter(|s| is_oid(s));
                was.push(platform_store::domain::git::get_ref(c, repo.id, &m.update.name)?.map(|r| r.sha));
                refs.push((m.update.name.clone(), sha));
            }
            pushes::record_commits(c, repo.id, &commits2, now)?;
            pushes::apply_refs(c, repo.id, &refs, now)?;
            activity(c, &repo, &intent2, &moved2, &was, &read, now)?;
            Ok(true)
        })
        .await?;
    if !recorded {
        return Ok(Applied::default());
    }
    Ok(Applied { moved, commits })
}

/// What the activity of a change needs from git, read before its transaction: the push detail of
/// each moved branch, and the workflow files (with the head's message) of each pushed head.
struct FromGit {
    pushed: HashMap<String, effects::Pushed>,
    workflows: HashMap<String, (Vec<triggers::WorkflowFile>, String)>,
}

/// Pushes, REST writes and the control plane's ref changes are activity; a repository's first commit (its
/// creation is) and an import's history are not.
fn records_activity(source: &str) -> bool {
    [Source::Push, Source::Api, Source::Control].iter().any(|s| s.as_str() == source)
}

/// Changes of code by people (a `git push`, a REST write) start the workflows `on: push`; the
/// control plane plans its runs explicitly.
fn starts_runs(source: &str) -> bool {
    [Source::Push, Source::Api].iter().any(|s| s.as_str() == source)
}

/// The activity of a ref change, written in the transaction that records it: the one place
/// where the events of every ref change are recorded ([`effects::record`]: `CreateEvent`,
/// `PushEvent`, `DeleteEvent`, and from them the webhooks), with each ref's value in the store
/// before (`was`), git's after, and what git gave before the transaction (`read`).
fn activity(
    c: &mut dyn Conn,
    repo: &Repo,
    intent: &Intent,
    moved: &[Moved],
    was: &[Option<String>],
    read: &FromGit,
    now: i64,
) -> Result<(), DbError> {
    if !records_activity(&intent.source) {
        return Ok(());
    }
    let pusher = match intent.pusher_id {
        Some(id) => platform_store::domain::accounts::by_id(c, id)?,
        None => None,
    };
    for (m, before) in moved.iter().zip(was) {
        // A tag of a tree or blob moved nothing the store keeps.
        if m.commit.is_none() && !m.update.is_delete() {
            continue;
        }
        let name = &m.update.name;
        let change =
            effects::RefMove { name, before: before.as_deref(), after: m.commit.as_deref(), pushed: read.pushed.get(name).cloned() };
        effects::record(c, repo, pusher.as_ref(), change, now)?;
        // Runs need a person to act for: a push by an installation starts none.
        if let (Some(who), Some(sha), Some((files, message))) = (pusher.as_ref(), m.commit.as_deref(), read.workflows.get(name)) {
            let changed: Vec<String> = read
                .pushed
                .get(name)
                .map(|p| p.commits.iter().flat_map(|k| k.added.iter().chain(&k.removed).chain(&k.modified)).cloned().collect())
                .unwrap_or_default();
            let p = triggers::Pushed { name, sha, message, changed: &changed };
            triggers::start_runs(c, repo, who, files, &p, now)?;
        }
    }
    Ok(())
}

pub(crate) fn record(k: platform_git::Commit) -> CommitRecord {
    let sig = |p: &platform_git::Person| Signature {
        name: p.name.clone(),
        email: p.email.clone(),
        date: p.time,
        offset: p.offset_minutes.into(),
    };
    CommitRecord { sha: k.oid, tree: k.tree, parents: k.parents, message: k.message, author: sig(&k.author), committer: sig(&k.committer) }
}

/// Records what crashed changes left, on every repository nobody is changing now (at start, and
/// now and then: a node that died leaves its intents to the others). Repositories whose lock is
/// held are left to their holder, which reconciles before it changes anything.
pub async fn reconcile(app: &AppState) -> ApiResult<usize> {
    let intents = app.store.read(|c| pushes::intents(c, None)).await?;
    let mut repo_ids: Vec<i64> = intents.iter().map(|i| i.repo_id).collect();
    repo_ids.sort_unstable();
    repo_ids.dedup();
    let mut done = 0;
    for id in repo_ids {
        let Some(repo) = app.store.read(move |c| repos::by_id(c, id)).await? else {
            app.store
                .write_unobserved(move |c| c.execute("DELETE FROM push_intents WHERE repo_id = ?", platform_store::params![id]))
                .await?;
            continue;
        };
        if try_lock(app, &repo).await?.is_some() {
            done += 1;
        }
    }
    Ok(done)
}

/// Starts the worker that reconciles what crashed changes left: at start, then every
/// [`RECONCILE_EVERY`] (a node of a cluster that died leaves its intents to the others).
pub fn start_reconciler(workers: &mut crate::worker::Workers, state: &crate::state::Shared) {
    let worker = crate::worker::Worker { name: "git reconciler".into(), poll: RECONCILE_EVERY, on_writes: false };
    workers.start(worker, Reconciler(state.clone()));
}

const RECONCILE_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

struct Reconciler(crate::state::Shared);

impl crate::worker::Work for Reconciler {
    async fn pass(&mut self) -> Result<crate::worker::Next, crate::worker::WorkError> {
        crate::worker::Context::context(reconcile(&self.0).await, "reconciling interrupted ref changes")?;
        Ok(crate::worker::Next::Wait)
    }
}
