//! One way to run a background loop, so every loop wakes, backs off and stops alike. A
//! [`Worker`] names the loop and its wake-ups (the store's writes, a poll interval, a wake-up of
//! its own); its [`Work`] does one pass at a time and says what comes next. Errors ([`WorkError`]:
//! what failed, and why) are logged loudly with the worker's name and retried after a backoff. Cancellation is looked at only
//! between passes, so a pass in flight finishes: a batch is handled and its cursor advanced
//! together, or not at all. [`Workers`] is the handle of a server's workers: `shutdown` cancels
//! them and waits for each (aborting what outlives a bound) before the store may close.
use std::borrow::Cow;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use platform_store::{DbError, DbErrorKind};

use crate::error::ApiError;

/// A busy worker's passes are at least this far apart, so one pass serves the writes made
/// meanwhile: under a thousand writes a second, a pass per write would cost each worker's
/// queries a thousand times a second (and each pass's own write wakes the others).
pub const GATHER: Duration = Duration::from_millis(10);
/// Consecutive failures back off (from the worker's poll interval, doubling) up to this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long [`Workers::shutdown`] waits for the workers to finish before aborting them.
pub const STOP_WITHIN: Duration = Duration::from_secs(5);

/// A background loop: its name (in logs) and when its passes run.
#[derive(Clone, Debug)]
pub struct Worker {
    pub name: Cow<'static, str>,
    /// Passes run at least this often (writes of other nodes, work due by the clock); after an
    /// error, the first retry waits this long.
    pub poll: Duration,
    /// Passes also run after every write of this process, at least [`GATHER`] apart.
    pub on_writes: bool,
}

/// What a pass asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Sleep until the next wake-up.
    Wait,
    /// There is more to do now: run again at once.
    Again,
    /// Run again after this long, whatever wakes meanwhile (work held by something no wake-up
    /// announces, e.g. a transaction still running).
    After(Duration),
    /// The work is complete: the worker ends.
    Done,
}

/// Why a pass failed, in a worker's words: what it was doing, and the cause (a database error's
/// own message; never an HTTP status alone, which says nothing in a worker's log).
#[derive(Debug)]
pub struct WorkError {
    what: Cow<'static, str>,
    cause: String,
}

impl WorkError {
    pub fn new(what: impl Into<Cow<'static, str>>, cause: impl std::fmt::Display) -> WorkError {
        WorkError { what: what.into(), cause: cause.to_string() }
    }
}

impl std::fmt::Display for WorkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.what.is_empty() {
            true => f.write_str(&self.cause),
            false => write!(f, "{}: {}", self.what, self.cause),
        }
    }
}

impl std::error::Error for WorkError {}

impl From<DbError> for WorkError {
    fn from(e: DbError) -> WorkError {
        let kind = if matches!(e.kind, DbErrorKind::Unavailable) { "database unavailable" } else { "database" };
        WorkError::new("", format!("{kind}: {}", e.message))
    }
}

/// An error of code shared with the request path: its message, with the status it would answer
/// (a 500's cause was logged where it arose, e.g. `database error`).
impl From<ApiError> for WorkError {
    fn from(e: ApiError) -> WorkError {
        let errors = e.errors.map(|v| format!(" ({v})")).unwrap_or_default();
        WorkError::new("", format!("{}{errors} [{}]", e.message, e.status.as_u16()))
    }
}

/// Says what a worker was doing when a step failed: `step().await.context("claiming deliveries")?`.
pub trait Context<T> {
    fn context(self, what: &'static str) -> Result<T, WorkError>;
}

impl<T, E: Into<WorkError>> Context<T> for Result<T, E> {
    fn context(self, what: &'static str) -> Result<T, WorkError> {
        self.map_err(|e| {
            let mut e = e.into();
            e.what = if e.what.is_empty() { what.into() } else { format!("{what}: {}", e.what).into() };
            e
        })
    }
}

/// What a worker does.
pub trait Work: Send + 'static {
    /// One pass. An error is logged and the pass retried after a backoff.
    fn pass(&mut self) -> impl Future<Output = Result<Next, WorkError>> + Send;

    /// A wake-up of the worker's own besides writes and the poll (e.g. a delivery finished).
    fn woken(&mut self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }

    /// Called once when cancelled: finishes, or safely abandons, work the passes left running
    /// (in tasks of their own, or a job half done). Bounded by [`Workers::shutdown`].
    fn stop(self) -> impl Future<Output = ()> + Send
    where
        Self: Sized,
    {
        async {}
    }
}

/// The cancellation a worker watches: set by [`Workers::shutdown`], or when the handle is
/// dropped; `None` for work started where no [`Workers`] runs, never cancelled.
#[derive(Clone)]
struct Cancel(Option<watch::Receiver<bool>>);

impl Cancel {
    fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|c| *c.borrow() || c.has_changed().is_err())
    }

    async fn cancelled(&mut self) {
        match self.0.as_mut() {
            Some(c) => {
                let _ = c.wait_for(|c| *c).await;
            }
            None => std::future::pending().await,
        }
    }

    /// Sleeps `d`; false when cancelled first.
    async fn sleep(&mut self, d: Duration) -> bool {
        tokio::select! {
            _ = self.cancelled() => false,
            _ = tokio::time::sleep(d) => true,
        }
    }
}

impl Worker {
    /// The backoff after `failures` consecutive failures.
    fn backoff(&self, failures: u32) -> Duration {
        self.poll.saturating_mul(1 << failures.saturating_sub(1).min(16)).min(MAX_BACKOFF.max(self.poll))
    }

    /// Runs `work` until it is done or cancelled, then stops it.
    async fn run(self, mut writes: Option<watch::Receiver<u64>>, mut cancel: Cancel, mut work: impl Work) {
        let mut failures = 0u32;
        while !cancel.is_cancelled() {
            // Writes from now on wake the next pass.
            if let Some(w) = writes.as_mut() {
                w.borrow_and_update();
            }
            let began = Instant::now();
            let pause = match work.pass().await {
                Ok(next) => {
                    failures = 0;
                    match next {
                        Next::Wait => None,
                        Next::Again => continue,
                        Next::After(d) => Some(d),
                        Next::Done => return,
                    }
                }
                Err(e) => {
                    failures += 1;
                    let retry = self.backoff(failures);
                    tracing::warn!(worker = %self.name, error = %e, failures, ?retry, "background worker failed; retrying");
                    Some(retry)
                }
            };
            let go_on = match pause {
                Some(d) => cancel.sleep(d).await,
                None => self.wait(&mut writes, began, &mut cancel, work.woken()).await,
            };
            if !go_on {
                break;
            }
        }
        work.stop().await;
    }

    /// Waits for a write, the poll or `also`, then until [`GATHER`] after the pass that
    /// `began`; false when cancelled (or the store is gone).
    async fn wait(&self, writes: &mut Option<watch::Receiver<u64>>, began: Instant, cancel: &mut Cancel, also: impl Future) -> bool {
        let written = async {
            match writes.as_mut() {
                Some(w) => w.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = cancel.cancelled() => return false,
            alive = written => if !alive { return false },
            _ = also => {}
            _ = tokio::time::sleep(self.poll) => {}
        }
        if writes.is_some() {
            tokio::time::sleep_until(began + GATHER).await;
        }
        true
    }
}

/// What runs the workers of one server, shared with the jobs its requests start.
struct Crew {
    cancel: Cancel,
    writes: watch::Receiver<u64>,
    tasks: Mutex<Vec<(Cow<'static, str>, JoinHandle<()>)>>,
}

impl Crew {
    fn start(&self, worker: Worker, work: impl Work) {
        let writes = worker.on_writes.then(|| self.writes.clone());
        let name = worker.name.clone();
        let task = tokio::spawn(worker.run(writes, self.cancel.clone(), work));
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|(_, t)| !t.is_finished());
        tasks.push((name, task));
    }
}

/// The handle of a server's workers. Dropping it cancels them without waiting.
pub struct Workers {
    cancel: watch::Sender<bool>,
    crew: Arc<Crew>,
}

/// What [`Workers::shutdown`] found.
#[derive(Debug, Default)]
pub struct Stopped {
    /// Workers that finished by themselves once cancelled.
    pub finished: Vec<Cow<'static, str>>,
    /// Workers still running at the bound, aborted: their work in flight is abandoned (leases
    /// run out, cursors did not advance).
    pub aborted: Vec<Cow<'static, str>>,
}

impl Workers {
    /// Workers woken by the writes `writes` announces (`Store::subscribe_writes`).
    pub fn new(writes: watch::Receiver<u64>) -> Workers {
        let (cancel, rx) = watch::channel(false);
        Workers { cancel, crew: Arc::new(Crew { cancel: Cancel(Some(rx)), writes, tasks: Mutex::new(Vec::new()) }) }
    }

    pub fn start(&mut self, worker: Worker, work: impl Work) {
        self.crew.start(worker, work);
    }

    /// The jobs started through `jobs` (see [`job`]) run and stop with these workers.
    pub fn adopt(&self, jobs: &Jobs) {
        *jobs.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::downgrade(&self.crew));
    }

    /// Cancels every worker and waits for each, within [`STOP_WITHIN`].
    pub async fn shutdown(self) -> Stopped {
        self.shutdown_within(STOP_WITHIN).await
    }

    /// Cancels every worker and waits for each; those still running after `bound` are aborted.
    pub async fn shutdown_within(self, bound: Duration) -> Stopped {
        let _ = self.cancel.send(true);
        let deadline = Instant::now() + bound;
        let mut stopped = Stopped::default();
        // Jobs may start while others are awaited: take the list until it stays empty.
        loop {
            let tasks = std::mem::take(&mut *self.crew.tasks.lock().unwrap_or_else(|e| e.into_inner()));
            if tasks.is_empty() {
                return stopped;
            }
            for (name, mut task) in tasks {
                if tokio::time::timeout_at(deadline, &mut task).await.is_ok() {
                    stopped.finished.push(name);
                    continue;
                }
                tracing::warn!(worker = %name, ?bound, "background worker still running at shutdown; aborted");
                task.abort();
                let _ = task.await;
                stopped.aborted.push(name);
            }
        }
    }
}

/// Where a server's requests start their jobs (one per server state): the workers that
/// adopted it, if any ran.
#[derive(Default)]
pub struct Jobs(Mutex<Option<Weak<Crew>>>);

/// Starts a job of a request (a worker that ends once [`Next::Done`]): it runs with the
/// server's workers and stops with them. Where no workers ever adopted `jobs` (tools, some
/// tests) it runs uncancelled; once they were shut down, it is abandoned (as by a restart).
pub fn job(jobs: &Jobs, worker: Worker, work: impl Work) {
    let crew = jobs.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(Weak::upgrade);
    match crew {
        Some(Some(crew)) => crew.start(worker, work),
        Some(None) => tracing::warn!(worker = %worker.name, "background workers stopped: job abandoned"),
        None => {
            tokio::spawn(worker.run(None, Cancel(None), work));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its passes; fails the first `fail` of them.
    struct Counting {
        passes: Arc<AtomicUsize>,
        fail: usize,
        next: Next,
    }

    impl Work for Counting {
        async fn pass(&mut self) -> Result<Next, WorkError> {
            let n = self.passes.fetch_add(1, Ordering::SeqCst);
            if n < self.fail {
                return Err(WorkError::new("failing on purpose", "test"));
            }
            Ok(self.next)
        }
    }

    #[test]
    fn a_work_error_says_what_failed_and_why() {
        let db: Result<(), DbError> = Err(DbError::other("disk I/O error"));
        assert_eq!(
            db.context("settling due workflow runs").unwrap_err().to_string(),
            "settling due workflow runs: database: disk I/O error"
        );
        let api: Result<(), ApiError> = Err(ApiError::not_found());
        let e = api.context("inner").context("outer").unwrap_err().to_string();
        assert!(e.starts_with("outer: inner: Not Found") && e.ends_with("[404]"), "{e}");
    }

    /// Never finishes a pass.
    struct Stuck;

    impl Work for Stuck {
        async fn pass(&mut self) -> Result<Next, WorkError> {
            std::future::pending().await
        }
    }

    fn worker(name: &'static str, poll: Duration) -> Worker {
        Worker { name: name.into(), poll, on_writes: false }
    }

    fn counting(fail: usize, next: Next) -> (Arc<AtomicUsize>, Counting) {
        let passes = Arc::new(AtomicUsize::new(0));
        (passes.clone(), Counting { passes, fail, next })
    }

    #[tokio::test]
    async fn shutdown_cancels_and_awaits_every_worker() {
        let (writes_tx, writes) = watch::channel(0u64);
        let mut workers = Workers::new(writes);
        let (a, work_a) = counting(0, Next::Wait);
        let (b, work_b) = counting(0, Next::After(Duration::from_secs(3600)));
        workers.start(Worker { on_writes: true, ..worker("a", Duration::from_secs(3600)) }, work_a);
        workers.start(worker("b", Duration::from_secs(3600)), work_b);
        tokio::time::sleep(Duration::from_millis(50)).await;
        // A write wakes the worker that asked for writes, not the other.
        writes_tx.send_modify(|g| *g += 1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (2, 1));
        let started = Instant::now();
        let stopped = workers.shutdown().await;
        assert!(started.elapsed() < Duration::from_secs(1), "sleeping workers stop at once");
        assert_eq!(stopped.finished, ["a", "b"]);
        assert!(stopped.aborted.is_empty());
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (2, 1), "no pass after cancellation");
    }

    #[tokio::test]
    async fn a_worker_outliving_the_bound_is_aborted() {
        let (_tx, writes) = watch::channel(0u64);
        let mut workers = Workers::new(writes);
        workers.start(worker("stuck", Duration::from_millis(10)), Stuck);
        let (_, quick) = counting(0, Next::Wait);
        workers.start(worker("quick", Duration::from_millis(10)), quick);
        // Both are in their first pass.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let stopped = workers.shutdown_within(Duration::from_millis(100)).await;
        assert_eq!(stopped.finished, ["quick"]);
        assert_eq!(stopped.aborted, ["stuck"]);
    }

    #[tokio::test]
    async fn errors_back_off_and_dropping_the_handle_cancels() {
        let (_tx, writes) = watch::channel(0u64);
        let mut workers = Workers::new(writes);
        let (n, work) = counting(usize::MAX, Next::Wait);
        workers.start(worker("failing", Duration::from_millis(100)), work);
        // Retries after 100, 200, 400 ms…: 3 passes in 500 ms, not one per poll.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(n.load(Ordering::SeqCst), 3);
        let task = workers.crew.tasks.lock().unwrap().pop().unwrap().1;
        drop(workers);
        tokio::time::timeout(Duration::from_secs(1), task).await.expect("cancelled by the drop").unwrap();
    }

    #[test]
    fn backoff_doubles_up_to_the_bound() {
        let w = worker("w", Duration::from_secs(1));
        let got: Vec<u64> = (1..=7).map(|f| w.backoff(f).as_secs()).collect();
        assert_eq!(got, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(w.backoff(u32::MAX), MAX_BACKOFF);
        // A poll longer than the bound is not shortened.
        assert_eq!(worker("w", Duration::from_secs(60)).backoff(3), Duration::from_secs(60));
    }

    #[tokio::test]
    async fn a_job_is_done_or_stopped_with_the_workers() {
        // Jobs without workers for their state still run to completion.
        let db = platform_store::testing::test_database(platform_store::Backend::Sqlite).unwrap();
        let store = platform_store::Store::open(platform_store::StoreOptions::new(&db.url)).await.unwrap();
        let jobs = Jobs::default();
        let (n, work) = counting(0, Next::Again);
        struct UpTo(Counting, usize);
        impl Work for UpTo {
            async fn pass(&mut self) -> Result<Next, WorkError> {
                self.0.pass().await?;
                Ok(if self.0.passes.load(Ordering::SeqCst) >= self.1 { Next::Done } else { Next::Again })
            }
        }
        job(&jobs, worker("job", Duration::from_secs(1)), UpTo(work, 3));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(n.load(Ordering::SeqCst), 3);
        // With workers, a job is one of them: shutdown waits for it.
        let workers = Workers::new(store.subscribe_writes());
        workers.adopt(&jobs);
        let (_, work) = counting(0, Next::After(Duration::from_secs(3600)));
        job(&jobs, worker("job", Duration::from_secs(1)), work);
        let stopped = workers.shutdown().await;
        assert_eq!(stopped.finished, ["job"]);
        store.close().await;
        // Once they are shut down, a job is abandoned.
        let (n, work) = counting(0, Next::Done);
        job(&jobs, worker("job", Duration::from_secs(1)), work);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(n.load(Ordering::SeqCst), 0);
    }
}
