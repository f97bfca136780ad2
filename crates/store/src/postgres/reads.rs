//! Reads on PostgreSQL without a thread waiting on each: a read's closure runs as a coroutine
//! on a reads thread, and each statement it sends suspends it until the answer comes, while the
//! thread runs the other reads. Statements of concurrent reads go out on the same connections,
//! pipelined, so one wake-up of the thread (and of the database's process) serves several.
//!
//! Why: a read on a database thread of its own costs two thread wake-ups per statement (the
//! request's worker wakes the database thread, which wakes the worker with the answer) and a
//! connection per read in flight; under load that cost more than the statement itself. The
//! domain code stays one sync code base for both backends (SQLite is sync by nature): a
//! coroutine lets sync code wait without a thread. A coroutine never leaves the thread that
//! started it (its stack may hold anything), so it needs no `Send` of its own.
//!
//! A statement goes to the least busy connection that is making progress. Two are opened as
//! soon as statements wait (two busy database processes); more, up to the pool size, only for
//! statements that would otherwise queue behind a stalled one (a slow statement). Each statement
//! runs on its own (autocommit), as on SQLite's read connections: it sees every write committed
//! before it began.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use tokio::sync::{mpsc, oneshot, Notify, OnceCell, Semaphore};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::{map_err, prepare, row, STATEMENT_CACHE};
use crate::sql::{Backend, Conn, DbError, Row, Value};

/// A coroutine's stack: as much as a thread's (pages never touched cost nothing).
const STACK: usize = 2 << 20;
/// Stacks a thread keeps for its next reads instead of unmapping them.
const SPARE_STACKS: usize = 64;
/// Reads a thread runs at once (each holds a stack); later ones wait in its queue.
const RUNNING: usize = 512;
/// Connections opened as soon as statements wait: the database's work of a busy node then runs
/// in two of its processes.
const BASE: usize = 2;
/// A connection with statements in flight and no answer for this long is stalled (a slow
/// statement holds up those behind it); only when every one is does a read open another.
const STALL: Duration = Duration::from_millis(20);
/// After a failed connection attempt, how long before another is made ahead of need.
const RETRY: Duration = Duration::from_secs(1);

type Job = Box<dyn FnOnce(&mut dyn Conn) + Send>;

/// What a suspended read waits for: a statement's answer.
type Ask = Pin<Box<dyn Future<Output = Result<Answer, DbError>>>>;

enum Answer {
    Rows(Vec<tokio_postgres::Row>),
    Count(u64),
    Done,
}

/// The reads threads: a read goes to the next one in turn.
pub(crate) struct Reads {
    threads: Vec<mpsc::UnboundedSender<Job>>,
    next: AtomicUsize,
}

impl Reads {
    /// `threads` threads sharing at most `connections` connections (each at least one).
    pub(crate) fn start(config: &Config, connections: usize, threads: usize) -> Reads {
        let connections = connections.max(1);
        let threads = threads.clamp(1, connections);
        let per_thread = connections.div_ceil(threads);
        let senders = (0..threads)
            .map(|i| {
                let (tx, rx) = mpsc::unbounded_channel();
                let config = config.clone();
                std::thread::Builder::new()
                    .name(format!("pg-reads-{i}"))
                    .spawn(move || serve(rx, Lanes::new(config, per_thread)))
                    .expect("reads thread");
                tx
            })
            .collect();
        Reads { threads: senders, next: AtomicUsize::new(0) }
    }

    /// Runs `f` on a reads thread; `None` if it could not (the store is closing, say).
    pub(crate) async fn run<T: Send + 'static>(&self, f: impl FnOnce(&mut dyn Conn) -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |c| {
            let _ = tx.send(f(c));
        });
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        self.threads[i].send(job).ok()?;
        rx.await.ok()
    }
}

/// A reads thread: runs each read it is given as a task of its own, until the store is dropped.
fn serve(mut jobs: mpsc::UnboundedReceiver<Job>, lanes: Lanes) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("reads runtime");
    let local = tokio::task::LocalSet::new();
    let lanes = Rc::new(lanes);
    let running = Arc::new(Semaphore::new(RUNNING));
    local.block_on(&rt, async move {
        while let Some(job) = jobs.recv().await {
            let Ok(permit) = running.clone().acquire_owned().await else { return };
            let lanes = lanes.clone();
            tokio::task::spawn_local(async move {
                read(job, lanes).await;
                drop(permit);
            });
        }
    });
}

/// Runs one read's closure as a coroutine, answering each statement it suspends on.
async fn read(job: Job, lanes: Rc<Lanes>) {
    let Some(stack) = lanes.stack() else { return }; // the job drops: its caller hears None
    let conn_lanes = lanes.clone();
    let mut co = Coroutine::with_stack(stack, move |yielder: &Yielder<Result<Answer, DbError>, Ask>, _| {
        job(&mut CoConn { yielder, lanes: conn_lanes })
    });
    let mut input = Ok(Answer::Done);
    loop {
        // The job catches its own panics; anything else unwinding here ends the read alone.
        match catch_unwind(AssertUnwindSafe(|| co.resume(input))) {
            Ok(CoroutineResult::Yield(ask)) => input = ask.await,
            Ok(CoroutineResult::Return(())) => break,
            Err(_) => return,
        }
    }
    lanes.spare(co.into_stack());
}

/// The connection a read's closure sees: each call suspends the read until its answer.
struct CoConn<'y> {
    yielder: &'y Yielder<Result<Answer, DbError>, Ask>,
    lanes: Rc<Lanes>,
}

impl CoConn<'_> {
    fn ask(&mut self, kind: Kind, sql: &str, params: &[Value]) -> Result<Answer, DbError> {
        let ask = Box::pin(self.lanes.clone().send(kind, sql.to_owned(), params.to_vec()));
        self.yielder.suspend(ask)
    }
}

impl Conn for CoConn<'_> {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        match self.ask(Kind::Query, sql, params)? {
            Answer::Rows(rows) => rows.iter().map(|r| row(r).map_err(|e| map_err(&e))).collect(),
            _ => Ok(Vec::new()),
        }
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        match self.ask(Kind::Execute, sql, params)? {
            Answer::Count(n) => Ok(n),
            _ => Ok(0),
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.ask(Kind::Batch, sql, &[]).map(|_| ())
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Query,
    Execute,
    Batch,
}

/// One reads thread's connections, opened as the load needs them.
struct Lanes {
    config: Config,
    max: usize,
    open: RefCell<Vec<Rc<Lane>>>,
    connecting: Cell<usize>,
    /// When a connection attempt last failed: none is opened ahead of need for a while after.
    failed_at: Cell<Option<Instant>>,
    /// Told when a connection attempt ends (reads with no connection to use wait for it).
    settled: Notify,
    stacks: RefCell<Vec<DefaultStack>>,
}

struct Lane {
    client: Client,
    /// Statements sent on this connection and not answered yet.
    busy: Cell<usize>,
    /// When it last answered a statement, or last became busy after none was in flight.
    progress: Cell<Instant>,
    /// Prepared statements by domain SQL; reads that want one being prepared wait for it.
    stmts: RefCell<HashMap<String, Rc<OnceCell<Statement>>>>,
}

impl Lanes {
    fn new(config: Config, max: usize) -> Lanes {
        Lanes {
            config,
            max,
            open: RefCell::default(),
            connecting: Cell::new(0),
            failed_at: Cell::new(None),
            settled: Notify::new(),
            stacks: RefCell::default(),
        }
    }

    fn stack(&self) -> Option<DefaultStack> {
        if let Some(s) = self.stacks.borrow_mut().pop() {
            return Some(s);
        }
        DefaultStack::new(STACK).map_err(|e| tracing::error!(error = %e, "cannot map a read's stack")).ok()
    }

    fn spare(&self, stack: DefaultStack) {
        let mut stacks = self.stacks.borrow_mut();
        if stacks.len() < SPARE_STACKS {
            stacks.push(stack);
        }
    }

    /// Sends one statement and waits for its answer.
    async fn send(self: Rc<Self>, kind: Kind, sql: String, params: Vec<Value>) -> Result<Answer, DbError> {
        let lane = self.lane().await?;
        if lane.busy.get() == 0 {
            lane.progress.set(Instant::now());
        }
        lane.busy.set(lane.busy.get() + 1);
        let _busy = Busy(&lane);
        let answer = async {
            if let Kind::Batch = kind {
                return lane.client.batch_execute(&sql).await.map(|_| Answer::Done);
            }
            let stmt = lane.statement(&sql).await?;
            let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            match kind {
                Kind::Execute => lane.client.execute(&stmt, &refs).await.map(Answer::Count),
                _ => lane.client.query(&stmt, &refs).await.map(Answer::Rows),
            }
        };
        answer.await.map_err(|e| map_err(&e))
    }

    /// The connection for a statement: the least busy of those making progress. While it is busy
    /// and fewer than `BASE` are open, another is opened for the statements to come. When every
    /// open one is stalled (or none is open), the statement waits for a new connection rather than
    /// queue behind a slow one, as long as there is room; else it queues on the least busy.
    /// (More connections than that cost more than they give: statements pipelined on a busy
    /// connection share its process's wake-ups, and two busy processes keep a database's cores
    /// as busy as one node can.)
    async fn lane(self: &Rc<Self>) -> Result<Rc<Lane>, DbError> {
        loop {
            let settled = self.settled.notified();
            let now = Instant::now();
            self.open.borrow_mut().retain(|l| !l.client.is_closed());
            let (moving, least, opening) = {
                let open = self.open.borrow();
                let moving = open.iter().filter(|l| !l.stalled(now)).min_by_key(|l| l.busy.get()).cloned();
                (moving, open.iter().min_by_key(|l| l.busy.get()).cloned(), open.len() + self.connecting.get())
            };
            let room = opening < self.max && self.failed_at.get().is_none_or(|t| now.saturating_duration_since(t) >= RETRY);
            match (moving, least) {
                (Some(l), _) => {
                    if l.busy.get() > 0 && opening < BASE.min(self.max) && room {
                        tokio::task::spawn_local(self.grow());
                    }
                    return Ok(l);
                }
                _ if self.connecting.get() > 0 => settled.await,
                (None, _) if room => return self.grow().await,
                (None, Some(l)) => return Ok(l),
                (None, None) => return self.grow().await,
            }
        }
    }

    /// Opens one more connection; counted as connecting from this call on, before the returned
    /// future first runs (a spawned one runs later), so no more than the pool size are opened.
    fn grow(self: &Rc<Self>) -> impl Future<Output = Result<Rc<Lane>, DbError>> + 'static {
        self.connecting.set(self.connecting.get() + 1);
        let lanes = self.clone();
        async move {
            let connected = lanes.config.connect(NoTls).await;
            lanes.connecting.set(lanes.connecting.get() - 1);
            lanes.settled.notify_waiters();
            let (client, connection) = connected.map_err(|e| {
                lanes.failed_at.set(Some(Instant::now()));
                DbError::unavailable(format!("cannot connect to PostgreSQL: {}", map_err(&e).message))
            })?;
            tokio::task::spawn_local(connection);
            let lane = Rc::new(Lane { client, busy: Cell::new(0), progress: Cell::new(Instant::now()), stmts: RefCell::default() });
            lanes.open.borrow_mut().push(lane.clone());
            Ok(lane)
        }
    }
}

impl Lane {
    /// Busy, and no answer since `STALL` before `now`.
    fn stalled(&self, now: Instant) -> bool {
        self.busy.get() > 0 && now.saturating_duration_since(self.progress.get()) >= STALL
    }

    async fn statement(&self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        let known = self.stmts.borrow().get(sql).cloned();
        let cell = known.unwrap_or_else(|| {
            let mut stmts = self.stmts.borrow_mut();
            if stmts.len() >= STATEMENT_CACHE {
                stmts.clear();
            }
            stmts.entry(sql.to_owned()).or_default().clone()
        });
        cell.get_or_try_init(|| prepare(&self.client, sql)).await.cloned()
    }
}

/// Counts a statement out of its connection's busy count however its wait ends.
struct Busy<'a>(&'a Lane);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.set(self.0.busy.get() - 1);
        self.0.progress.set(Instant::now());
    }
}
