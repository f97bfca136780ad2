//! Notifications produced by platform activity: the outbox consumer that maps each activity
//! kind to its recipients and reasons (document 3's reason table), and the background job that
//! finishes a large mark-all-read.
use std::collections::HashMap;
use std::time::Duration;

use platform_store::domain::activity::Activity;
use platform_store::domain::depbot;
use platform_store::domain::notifications::{self as notif, Subject};
use platform_store::domain::repos::{self, Repo};
use platform_store::{Conn, DbError};
use serde::Deserialize;

use crate::ops::hooks::activity::Record;

use crate::error::ApiError;
use crate::ops::outbox::Consumer;
use crate::shapes::{repo_api_url, Urls};
use crate::state::Shared;
use crate::worker::{Context, Next, Work, WorkError, Worker};

/// One notification to deliver.
struct Delivery {
    user_id: i64,
    reason: &'static str,
}

/// The consumer named `notifications`.
pub struct Notifications {
    pub urls: Urls,
}

fn short_sha(s: &str) -> &str {
    s.get(..7).unwrap_or(s)
}

/// What a notification names of the run in a `WorkflowRunEvent` (the REST run).
#[derive(Deserialize)]
struct RunNamed {
    id: i64,
    name: Option<String>,
    triggering_actor: Option<ActorId>,
}

#[derive(Deserialize)]
struct ActorId {
    id: i64,
}

/// What a notification names of the alert in a `DepbotAlertEvent`.
#[derive(Deserialize)]
struct AlertNumbered {
    number: i64,
}

/// What a batch reads once per repository: its row, its watchers (no record this consumer
/// handles changes either, and a burst of activity is mostly on one repository) and the pushers
/// of its commits (which pushes in the batch change, here as in the store).
#[derive(Default)]
struct Memo {
    repos: HashMap<i64, Option<Repo>>,
    watchers: HashMap<i64, Vec<i64>>,
    pushers: HashMap<(i64, String), Option<i64>>,
}

impl Memo {
    fn repo(&mut self, c: &mut dyn Conn, id: i64) -> Result<Option<Repo>, DbError> {
        once(&mut self.repos, id, || repos::by_id(c, id))
    }

    fn watchers(&mut self, c: &mut dyn Conn, repo_id: i64) -> Result<Vec<i64>, DbError> {
        once(&mut self.watchers, repo_id, || notif::watchers(c, repo_id))
    }

    fn pusher(&mut self, c: &mut dyn Conn, repo_id: i64, sha: &str) -> Result<Option<i64>, DbError> {
        once(&mut self.pushers, (repo_id, sha.to_string()), || notif::pusher(c, repo_id, sha))
    }

    fn set_pusher(&mut self, c: &mut dyn Conn, repo_id: i64, sha: &str, user_id: i64) -> Result<(), DbError> {
        notif::set_pusher(c, repo_id, sha, user_id)?;
        self.pushers.insert((repo_id, sha.to_string()), Some(user_id));
        Ok(())
    }
}

/// `map[k]`, loaded the first time it is asked for.
fn once<K: std::hash::Hash + Eq, V: Clone>(map: &mut HashMap<K, V>, k: K, load: impl FnOnce() -> Result<V, DbError>) -> Result<V, DbError> {
    if let Some(v) = map.get(&k) {
        return Ok(v.clone());
    }
    let v = load()?;
    map.insert(k, v.clone());
    Ok(v)
}

/// Recipients of activity on a repository: `first` (with their reason) and then every watcher
/// with `subscribed`; the actor is never notified of their own action, nobody twice.
fn with_watchers(c: &mut dyn Conn, memo: &mut Memo, a: &Activity, repo: &Repo, first: Vec<Delivery>) -> Result<Vec<Delivery>, DbError> {
    let mut out: Vec<Delivery> = Vec::new();
    for d in first {
        if Some(d.user_id) != a.actor_id && !out.iter().any(|o| o.user_id == d.user_id) && notif::can_see(c, repo.id, d.user_id)? {
            out.push(d);
        }
    }
    for w in memo.watchers(c, repo.id)? {
        if Some(w) != a.actor_id && !out.iter().any(|o| o.user_id == w) {
            out.push(Delivery { user_id: w, reason: "subscribed" });
        }
    }
    Ok(out)
}

impl Notifications {
    fn handle_one(&self, c: &mut dyn Conn, memo: &mut Memo, a: &Activity, now: i64) -> Result<(), DbError> {
        let Some(repo_id) = a.repo_id else { return Ok(()) };
        let Some(repo) = memo.repo(c, repo_id)? else { return Ok(()) };
        let base = repo_api_url(&self.urls, &repo);
        let Some(record) = Record::read(&a.kind, &a.payload) else { return Ok(()) };
        let (title, url, latest, recipients): (String, String, String, Vec<Delivery>) = match &record {
            // A push: watchers are told about the new head commit.
            Record::Push(push) => {
                let head = push.head.as_str();
                if head.is_empty() {
                    return Ok(());
                }
                if let Some(actor) = a.actor_id {
                    memo.set_pusher(c, repo.id, head, actor)?;
                }
                let branch = push.name.trim_start_matches("refs/heads/");
                let url = format!("{base}/commits/{head}");
                let r = with_watchers(c, memo, a, &repo, Vec::new())?;
                (format!("Pushed {} to {branch}", short_sha(head)), url.clone(), url, r)
            }
            // A commit status: the commit's pusher (`author`) and the watchers, on the commit's thread.
            Record::Status(st) => {
                let sha = st.sha.as_str();
                let author = memo.pusher(c, repo.id, sha)?;
                let first = author.map(|u| Delivery { user_id: u, reason: "author" }).into_iter().collect();
                let r = with_watchers(c, memo, a, &repo, first)?;
                let title = format!("{}: {} on {}", st.context, st.state, short_sha(sha));
                (title, format!("{base}/commits/{sha}"), format!("{base}/statuses/{sha}"), r)
            }
            // A completed workflow run: the user who triggered it, `ci_activity`.
            Record::WorkflowRun(w) => {
                let Some(run) = (w.action == "completed").then(|| w.workflow_run.read::<RunNamed>()).flatten() else {
                    return Ok(());
                };
                let Some(user) = run.triggering_actor.map(|t| t.id).or(a.actor_id) else { return Ok(()) };
                let url = format!("{base}/actions/runs/{}", run.id);
                let mut r = Vec::new();
                if notif::can_see(c, repo.id, user)? {
                    r.push(Delivery { user_id: user, reason: "ci_activity" });
                }
                (format!("{} run completed", run.name.as_deref().unwrap_or("workflow")), url.clone(), url, r)
            }
            // Dependency alerts: the repository's owner and the watchers who may see its alerts
            // (push access or the security manager role), `security_alert`.
            Record::DepbotAlert(d) => {
                let Some(alert) = (d.action == "created").then(|| d.alert.read::<AlertNumbered>()).flatten() else {
                    return Ok(());
                };
                let url = format!("{base}/depbot/alerts/{}", alert.number);
                let mut r: Vec<Delivery> = Vec::new();
                if !repo.owner.is_org() {
                    r.push(Delivery { user_id: repo.owner.id, reason: "security_alert" });
                }
                for w in memo.watchers(c, repo.id)? {
                    if !r.iter().any(|d| d.user_id == w) && depbot::may_see(c, repo.id, w)? {
                        r.push(Delivery { user_id: w, reason: "security_alert" });
                    }
                }
                (format!("Security alert #{}", alert.number), url.clone(), url, r)
            }
            _ => return Ok(()),
        };
        let kind = match record {
            Record::WorkflowRun(_) => "CheckSuite",
            Record::DepbotAlert(_) => "RepositoryVulnerabilityAlert",
            _ => "Commit",
        };
        let s = Subject { kind, title: &title, url: Some(&url), latest_comment_url: Some(&latest) };
        for d in recipients {
            notif::deliver(c, d.user_id, repo.id, &s, d.reason, now.max(a.created_at))?;
        }
        Ok(())
    }
}

impl Consumer for Notifications {
    fn name(&self) -> &'static str {
        "notifications"
    }

    fn handle(&self, c: &mut dyn Conn, batch: &[Activity], now: i64) -> Result<(), ApiError> {
        let mut memo = Memo::default();
        for a in batch {
            self.handle_one(c, &mut memo, a, now)?;
        }
        Ok(())
    }
}

/// Finishes a mark-all-read in the background, `chunk` threads per transaction. Stopped with
/// the workers, it finishes first (within their shutdown bound): the request was accepted.
pub fn spawn_mark_all(state: Shared, user_id: i64, until: i64, chunk: i64) {
    let worker = Worker { name: "mark-all-read".into(), poll: Duration::from_secs(1), on_writes: false };
    let work = MarkAll { state: state.clone(), user_id, until, chunk: chunk.max(1) };
    crate::worker::job(&state.jobs, worker, work);
}

struct MarkAll {
    state: Shared,
    user_id: i64,
    until: i64,
    chunk: i64,
}

impl Work for MarkAll {
    async fn pass(&mut self) -> Result<Next, WorkError> {
        let (now, user_id, until, chunk) = (self.state.clock.now(), self.user_id, self.until, self.chunk);
        let n = self
            .state
            .store
            .write(move |c| notif::mark_all_read(c, user_id, until, chunk, now))
            .await
            .context("marking notifications read")?;
        Ok(if n < chunk { Next::Done } else { Next::Again })
    }

    async fn stop(mut self) {
        while let Ok(Next::Again) = self.pass().await {}
    }
}
