//! The import worker: takes imports whose current status has work to do (detecting, importing,
//! mapping, pushing), does it with git under a lease (renewed while git runs; a crashed node's
//! lease runs out and another node, or the restarted one, redoes the step), and moves each on
//! to its next status once the platform clock reaches the step's end. Everything it needs is in
//! the database, so an import resumes after a restart.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use platform_store::domain::repos;
use platform_store::domain::source_imports::{self as store, Import, LargeFile};
use platform_store::DbError;
use tokio::task::JoinSet;

use super::git::{self, GitError, Source};
use super::import::{event_status, next_status, record_event, ACTIVE, LARGE_FILE_BYTES};
use crate::error::ApiError;
use crate::outbound::AllowList;
use crate::state::Shared;
use crate::worker::{Context, Next, Work, WorkError, Worker, Workers};

/// A lease on an import, renewed every [`RENEW`] while its git work runs.
const LEASE_SECONDS: i64 = 30;
const RENEW: Duration = Duration::from_secs(10);
/// How often progress is written while git runs.
const PROGRESS: Duration = Duration::from_millis(500);
/// Imports worked on at once (per node).
const CONCURRENCY: usize = 4;

fn wall() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Starts the import worker: woken by writes (a new import, a restart) and polling for steps
/// whose time is up. Stopped, it lets the steps in flight finish; one cut off by the shutdown
/// bound is abandoned: its lease runs out and the step is done again.
pub fn start(workers: &mut Workers, state: &Shared) {
    let worker = Worker { name: "import worker".into(), poll: Duration::from_millis(250), on_writes: true };
    workers.start(worker, Importing { state: state.clone(), in_flight: JoinSet::new() });
}

struct Importing {
    state: Shared,
    /// Steps being worked on, at most [`CONCURRENCY`].
    in_flight: JoinSet<()>,
}

impl Work for Importing {
    async fn pass(&mut self) -> Result<Next, WorkError> {
        while self.in_flight.try_join_next().is_some() {}
        Ok(if tick(&self.state, &mut self.in_flight).await.context("moving imports on")? { Next::Again } else { Next::Wait })
    }

    async fn stop(mut self) {
        while self.in_flight.join_next().await.is_some() {}
    }
}

/// One pass over the runnable imports: moves on those whose step is over, and starts the work
/// of others in tasks of their own (up to [`CONCURRENCY`]); true when something happened.
async fn tick(state: &Shared, in_flight: &mut JoinSet<()>) -> Result<bool, ApiError> {
    let (now, w) = (state.clock.now(), wall());
    let list = state.store.read(move |c| store::runnable(c, ACTIVE, now, w)).await?;
    let mut moved = false;
    for imp in list {
        if imp.step_done {
            moved |= advance(state, imp).await?;
            continue;
        }
        if in_flight.len() >= CONCURRENCY {
            continue;
        }
        let (repo_id, workdir) = (imp.repo_id, imp.workdir.clone());
        if !state.store.write(move |c| store::claim(c, repo_id, &workdir, w, w + LEASE_SECONDS)).await? {
            continue;
        }
        let state = state.clone();
        in_flight.spawn(async move {
            if let Err(e) = work(&state, imp).await {
                // The lease runs out and the step is tried again.
                tracing::warn!(error = %e.message, repo_id, "import step failed; retrying");
            }
        });
        moved = true;
    }
    Ok(moved)
}

/// The step's time is up: on to the next status (recording the event when complete).
async fn advance(state: &Shared, mut imp: Import) -> Result<bool, ApiError> {
    let now = state.clock.now();
    imp.status = next_status(&imp.status).to_string();
    imp.step_done = imp.status == "complete";
    imp.due_at = now + state.config.imports.step_seconds;
    if imp.status == "pushing" {
        imp.push_percent = Some(0);
    }
    save(state, imp).await
}

/// Saves an attempt's progress (releasing the lease), with the event of a final status.
async fn save(state: &Shared, imp: Import) -> Result<bool, ApiError> {
    let now = state.clock.now();
    let saved = state
        .store
        .write(move |c| -> Result<bool, DbError> {
            if !store::save_progress(c, &imp, None, now)? {
                return Ok(false);
            }
            if let (Some(ev), Some(repo)) = (event_status(&imp.status), repos::by_id(c, imp.repo_id)?) {
                record_event(c, &repo, imp.actor_id, ev, now)?;
            }
            Ok(true)
        })
        .await?;
    Ok(saved)
}

fn fail(imp: &mut Import, step: &str, e: GitError) {
    match e {
        GitError::Auth => imp.status = "auth_failed".into(),
        GitError::Failed(m) => {
            imp.status = "error".into();
            imp.failed_step = Some(step.to_string());
            imp.error_message = Some(m);
        }
    }
}

/// Runs `work` (git) while renewing the import's lease and writing the `import_percent` that
/// `progress` receives.
async fn guarded<T>(
    state: &Shared,
    imp: &Import,
    progress: Option<Progress>,
    work: impl std::future::Future<Output = T>,
) -> Result<T, ApiError> {
    let mut work = std::pin::pin!(work);
    let (mut renewed, mut written) = (std::time::Instant::now(), None);
    loop {
        tokio::select! {
            r = &mut work => return Ok(r),
            _ = tokio::time::sleep(PROGRESS) => {}
        }
        let (id, wd) = (imp.repo_id, imp.workdir.clone());
        if renewed.elapsed() >= RENEW {
            renewed = std::time::Instant::now();
            let wd = wd.clone();
            state.store.write(move |c| store::renew(c, id, &wd, wall() + LEASE_SECONDS)).await?;
        }
        let now = progress.as_ref().and_then(|p| *p.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(p) = now.filter(|p| Some(*p) != written) {
            written = Some(p);
            state
                .store
                .write(move |c| {
                    c.execute(
                        "UPDATE imports SET import_percent = ? WHERE repo_id = ? AND workdir = ?",
                        platform_store::params![p, id, &wd],
                    )
                })
                .await?;
        }
    }
}

/// The latest percentage a git run reported.
type Progress = Arc<Mutex<Option<i64>>>;

/// The source with its credentials and the address the guard checked.
async fn source(state: &Shared, imp: &Import) -> Result<Result<Source, String>, ApiError> {
    let sk = state.config.secret_key;
    let enc = imp.credentials_enc.clone();
    let creds = match enc {
        Some(enc) => {
            let key = state.store.write(move |c| crate::secrets::server_key(c, &sk)).await?;
            super::import::open_credentials(&key, &enc)
        }
        None => None,
    };
    // Checked again before every git run: the settings or the host's addresses may have changed.
    let kind = match super::source::classify(&imp.vcs_url, &state.config.imports) {
        Ok(k) => k,
        Err(m) => return Ok(Err(m)),
    };
    let allow = AllowList::parse(state.config.webhooks.allowed_hosts()).unwrap_or_default();
    let pin = match git::guard(&kind, &allow).await {
        Ok(p) => p,
        Err(m) => return Ok(Err(m)),
    };
    let (username, password) = creds.map(|(u, p)| (Some(u), Some(p))).unwrap_or((None, None));
    let local = matches!(kind, super::source::Kind::Local(_));
    Ok(Ok(Source { url: imp.vcs_url.clone(), local, username, password, pin }))
}

fn mirror(state: &Shared, imp: &Import) -> PathBuf {
    state.config.imports.mirrors().join(&imp.workdir)
}

/// Does the work of the import's current status, then saves the outcome.
async fn work(state: &Shared, mut imp: Import) -> Result<(), ApiError> {
    let status = imp.status.clone();
    match status.as_str() {
        "detecting" => detect(state, &mut imp).await?,
        "importing" => import(state, &mut imp).await?,
        "mapping" => map(state, &mut imp).await?,
        "pushing" => push(state, &mut imp).await?,
        _ => return Ok(()),
    }
    let dir = mirror(state, &imp);
    if !save(state, imp).await? {
        // Cancelled or restarted while git ran: this attempt's mirror is nobody's.
        tokio::task::spawn_blocking(move || {
            let _ = std::fs::remove_dir_all(dir);
        });
    }
    Ok(())
}

fn unsupported(imp: &mut Import, step: &str, vcs: &str) {
    let (name, tool) = match vcs {
        "subversion" => ("Subversion", "svn"),
        "mercurial" => ("Mercurial", "hg"),
        _ => ("TFVC", "tf"),
    };
    imp.status = "error".into();
    imp.failed_step = Some(step.into());
    imp.error_message = Some(if git::tool_present(tool) {
        format!("{name} imports are unsupported on this server.")
    } else {
        format!("{name} imports are unsupported on this server ({tool} is not installed).")
    });
}

/// Recognises the version control type at the URL: a Git remote, or (when their tools are
/// installed) a Subversion or Mercurial one.
async fn detect(state: &Shared, imp: &mut Import) -> Result<(), ApiError> {
    let src = match source(state, imp).await? {
        Ok(s) => s,
        Err(m) => {
            imp.status = "detection_found_nothing".into();
            imp.error_message = Some(m);
            return Ok(());
        }
    };
    let git = crate::ops::git_hosting::storage(state).await?.git().clone();
    let found = guarded(state, imp, None, async {
        match git.ls_remote(&src).await {
            Ok(()) => Ok("git"),
            Err(GitError::Auth) => Err(true),
            Err(_) => {
                let url = src.url.clone();
                // Subversion and Mercurial: recognised when their tools are installed.
                let other = tokio::task::spawn_blocking(move || {
                    let other = |tool: &str, args: &[&str]| {
                        git::tool_present(tool)
                            && std::process::Command::new(tool)
                                .args(args)
                                .arg(&url)
                                .env("HGPLAIN", "1")
                                .stdin(std::process::Stdio::null())
                                .stdout(std::process::Stdio::null())
                                .stderr(std::process::Stdio::null())
                                .status()
                                .is_ok_and(|st| st.success())
                    };
                    if other("svn", &["info", "--non-interactive"]) {
                        Some("subversion")
                    } else if other("hg", &["identify", "--noninteractive"]) {
                        Some("mercurial")
                    } else {
                        None
                    }
                })
                .await
                .ok()
                .flatten();
                other.ok_or(false)
            }
        }
    })
    .await?;
    match found {
        Ok(vcs) => {
            imp.vcs = Some(vcs.into());
            imp.step_done = true;
        }
        Err(true) => imp.status = "detection_needs_auth".into(),
        Err(false) => imp.status = "detection_found_nothing".into(),
    }
    Ok(())
}

/// Mirrors the Git source, reporting the receive percentage, then counts its commits.
async fn import(state: &Shared, imp: &mut Import) -> Result<(), ApiError> {
    let vcs = imp.vcs.clone().unwrap_or_else(|| "git".into());
    if vcs != "git" {
        unsupported(imp, "importing", &vcs);
        return Ok(());
    }
    let src = match source(state, imp).await? {
        Ok(s) => s,
        Err(m) => {
            fail(imp, "importing", GitError::Failed(m));
            return Ok(());
        }
    };
    let dir = mirror(state, imp);
    let storage = crate::ops::git_hosting::storage(state).await?.clone();
    let seen: Progress = Arc::new(Mutex::new(None));
    let seen2 = seen.clone();
    let out = guarded(state, imp, Some(seen), async {
        let mut report = |p| *seen2.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
        storage.git().clone_mirror(&src, &dir, &mut report).await?;
        let commits = storage.open_mirror(dir.clone()).all_commits().await.map_err(|e| GitError::Failed(e.to_string()))?;
        Ok::<i64, GitError>(commits.len() as i64)
    })
    .await?;
    match out {
        Ok(n) => {
            imp.commit_count = Some(n);
            imp.import_percent = Some(100);
            imp.step_done = true;
        }
        Err(e) => fail(imp, "importing", e),
    }
    Ok(())
}

/// Authors (`(email, name)`) and large files of a history.
type Mapped = (Vec<(String, String)>, Vec<LargeFile>);

/// Finds the authors of the history and the large files.
async fn map(state: &Shared, imp: &mut Import) -> Result<(), ApiError> {
    let source = crate::ops::git_hosting::storage(state).await?.open_mirror(mirror(state, imp));
    let out = guarded(state, imp, None, async {
        let head = source.head_branch().await;
        let failed = |e: platform_git::Error| GitError::Failed(e.to_string());
        let authors = source.authors().await.map_err(failed)?;
        let large = source.large_blobs(LARGE_FILE_BYTES, head.as_deref()).await.map_err(failed)?;
        let large = large.into_iter().map(|b| LargeFile { ref_name: b.ref_name, path: b.path, oid: b.oid, size: b.size }).collect();
        Ok::<Mapped, GitError>((authors, large))
    })
    .await?;
    match out {
        Ok((authors, large)) => {
            let (id, wd) = (imp.repo_id, imp.workdir.clone());
            let count = state
                .store
                .write(move |c| -> Result<Option<i64>, DbError> {
                    // Only while the attempt is current (not cancelled or restarted).
                    if store::get(c, id)?.is_none_or(|i| i.workdir != wd) {
                        return Ok(None);
                    }
                    store::set_large_files(c, id, &large)?;
                    Ok(Some(store::add_authors(c, id, &authors)?))
                })
                .await?;
            let stored = state.store.read(move |c| store::large_files(c, id)).await?;
            imp.authors_count = count.unwrap_or(0);
            imp.large_files_count = stored.len() as i64;
            imp.large_files_size = stored.iter().map(|f| f.size).sum();
            imp.step_done = true;
        }
        Err(e) => fail(imp, "mapping", e),
    }
    Ok(())
}

/// Pushes the imported history into the repository: its branches, tags and default branch
/// become the source's (git hosting's ref-change path records them and their commits).
async fn push(state: &Shared, imp: &mut Import) -> Result<(), ApiError> {
    let (id, wd) = (imp.repo_id, imp.workdir.clone());
    let repo = state
        .store
        .read(move |c| -> Result<_, DbError> {
            // Only while the attempt is current (not cancelled or restarted).
            if store::get(c, id)?.is_none_or(|i| i.workdir != wd) {
                return Ok(None);
            }
            repos::by_id(c, id)
        })
        .await?;
    let Some(repo) = repo else { return Ok(()) };
    let dir = mirror(state, imp);
    match guarded(state, imp, None, crate::ops::git_hosting::control::import(state, &repo, &dir, imp.actor_id)).await? {
        Ok(()) => {
            imp.push_percent = Some(100);
            imp.step_done = true;
        }
        Err(e) if e.status.is_server_error() => return Err(e),
        Err(e) => fail(imp, "pushing", GitError::Failed(e.message.to_string())),
    }
    Ok(())
}
