//! SQLite driver: inline reads from a small connection pool, and one writer
//! thread that group-commits every waiting job in a single durable transaction.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, Connection, ErrorCode, OpenFlags};
use tokio::sync::oneshot;

use crate::migrate;
use crate::sql::{panic_error, run_guarded, Backend, Conn, DbError, DbErrorKind, DriverConn, Row, Value};

/// Most jobs committed by one transaction; bounds latency of a huge burst.
const MAX_BATCH: usize = 512;
const STATEMENT_CACHE: usize = 256;
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) struct SqliteConn {
    conn: Connection,
    failure: Option<DbError>,
}

impl SqliteConn {
    fn open(path: &Path, writer: bool, sync_full: bool) -> Result<SqliteConn, DbError> {
        let flags = if writer {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            // Read-only: a write slipped into `read` fails loudly instead of
            // bypassing the writer.
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| DbError::unavailable(format!("cannot open SQLite database {}: {e}", path.display())))?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Without QPSG, statements with bound `col = ?` are re-prepared on each use.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(map_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
        conn.execute_batch("PRAGMA foreign_keys = OFF").map_err(map_err)?;
        if writer {
            let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(map_err)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(DbError::other(format!("cannot enable WAL mode (got {mode})")));
            }
            let sync = if sync_full { "FULL" } else { "NORMAL" };
            conn.execute_batch(&format!("PRAGMA synchronous = {sync}")).map_err(map_err)?;
        }
        Ok(SqliteConn { conn, failure: None })
    }

    fn record<T>(&mut self, r: rusqlite::Result<T>) -> Result<T, DbError> {
        r.map_err(|e| {
            let e = map_err(e);
            self.failure.get_or_insert_with(|| e.clone());
            e
        })
    }

    /// Bookkeeping statement of the driver itself (not recorded as a failure).
    fn exec_raw(&self, sql: &str) -> Result<(), DbError> {
        self.conn.prepare_cached(sql).and_then(|mut s| s.raw_execute()).map(drop).map_err(map_err)
    }
}

fn map_err(e: rusqlite::Error) -> DbError {
    let kind = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.extended_code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => DbErrorKind::Unique,
            _ if matches!(f.code, ErrorCode::CannotOpen | ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbErrorKind::Unavailable,
            _ => DbErrorKind::Other,
        },
        _ => DbErrorKind::Other,
    };
    DbError::new(kind, e.to_string())
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Float(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Bool(b) => ValueRef::Integer(*b as i64),
            Value::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

fn from_ref(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        // `from_utf8` has the fast (ASCII) validation; lossy conversion only for invalid text.
        ValueRef::Text(t) => Value::Text(match std::str::from_utf8(t) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(t).into_owned(),
        }),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

/// Steps a statement to completion, collecting rows (also used by `execute`,
/// so `INSERT … RETURNING` works there too).
fn run(conn: &Connection, sql: &str, params: &[Value], collect: bool) -> rusqlite::Result<Vec<Row>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        if collect {
            out.push(Row((0..n).map(|i| r.get_ref(i).map(from_ref)).collect::<Result<_, _>>()?));
        }
    }
    Ok(out)
}

impl Conn for SqliteConn {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let r = run(&self.conn, sql, params, true);
        self.record(r)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let before = self.conn.total_changes();
        let r = run(&self.conn, sql, params, false);
        self.record(r)?;
        // total_changes counts only rows changed by this statement (triggers aside).
        Ok(self.conn.total_changes() - before)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let r = self.conn.execute_batch(sql);
        self.record(r)
    }

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }
}

impl DriverConn for SqliteConn {
    fn take_failure(&mut self) -> Option<DbError> {
        self.failure.take()
    }
}

/// A queued write: runs inside the batch transaction, then learns the
/// commit outcome. Type-erases the caller's `T`/`E`.
trait WriteJob: Send {
    /// Runs the closure; false means its savepoint must be rolled back.
    fn run(&mut self, conn: &mut SqliteConn) -> bool;
    fn finish(self: Box<Self>, commit: Result<(), DbError>);
}

struct Job<F, T, E> {
    f: Option<F>,
    result: Option<Result<T, E>>,
    tx: oneshot::Sender<Result<T, E>>,
}

impl<F, T, E> WriteJob for Job<F, T, E>
where
    F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send,
    T: Send,
    E: From<DbError> + Send,
{
    fn run(&mut self, conn: &mut SqliteConn) -> bool {
        let f = self.f.take().expect("write job run twice");
        let r = run_guarded(conn, f);
        let ok = r.is_ok();
        self.result = Some(r);
        ok
    }

    fn finish(self: Box<Self>, commit: Result<(), DbError>) {
        let out = match (self.result, commit) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (_, Err(e)) => Err(e.into()),
            (None, Ok(())) => Err(DbError::other("write job was not run").into()),
        };
        let _ = self.tx.send(out);
    }
}

type Exclusive = Box<dyn FnOnce(&mut SqliteConn) + Send>;

enum Msg {
    Job(Box<dyn WriteJob>),
    /// Runs between batches, outside any transaction (migrations).
    Exclusive(Exclusive),
}

fn writer_loop(mut conn: SqliteConn, rx: mpsc::Receiver<Msg>) {
    let mut next = rx.recv().ok();
    while let Some(msg) = next.take() {
        let mut jobs = match msg {
            Msg::Exclusive(f) => {
                run_exclusive(&mut conn, f);
                next = rx.recv().ok();
                continue;
            }
            Msg::Job(j) => vec![j],
        };
        // Take everything already waiting: one fsync covers them all.
        while jobs.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(Msg::Job(j)) => jobs.push(j),
                Ok(other) => {
                    next = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        run_batch(&mut conn, jobs);
        if next.is_none() {
            next = rx.recv().ok();
        }
    }
    tracing::debug!("sqlite writer stopped");
}

fn run_exclusive(conn: &mut SqliteConn, f: Exclusive) {
    if catch_unwind(AssertUnwindSafe(|| f(conn))).is_err() {
        tracing::error!("sqlite exclusive task panicked");
    }
    if !conn.conn.is_autocommit() {
        let _ = conn.conn.execute_batch("ROLLBACK");
    }
}

fn run_batch(conn: &mut SqliteConn, mut jobs: Vec<Box<dyn WriteJob>>) {
    let outcome = (|| {
        conn.exec_raw("BEGIN IMMEDIATE")?;
        for job in jobs.iter_mut() {
            conn.exec_raw("SAVEPOINT job")?;
            let ok = job.run(conn);
            if conn.conn.is_autocommit() {
                // SQLite rolled back the whole transaction (I/O error, disk full,
                // or the closure ended it): nothing of this batch survives.
                return Err(DbError::other("transaction aborted during write batch"));
            }
            if !ok {
                conn.exec_raw("ROLLBACK TO job")?;
            }
            conn.exec_raw("RELEASE job")?;
        }
        conn.exec_raw("COMMIT")
    })();
    if outcome.is_err() && !conn.conn.is_autocommit() {
        let _ = conn.conn.execute_batch("ROLLBACK");
    }
    if let Err(e) = &outcome {
        tracing::error!(error = %e, jobs = jobs.len(), "sqlite write batch failed");
    }
    for job in jobs {
        job.finish(outcome.clone());
    }
}

struct ReadPool {
    idle: Vec<SqliteConn>,
    open: usize,
}

pub(crate) struct SqliteStore {
    path: PathBuf,
    pool_size: usize,
    readers: Mutex<ReadPool>,
    reader_freed: Condvar,
    writer: Mutex<Option<mpsc::Sender<Msg>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Returns a read connection to the pool even if the closure panics.
struct ReadGuard<'a> {
    store: &'a SqliteStore,
    conn: Option<SqliteConn>,
}

impl Drop for ReadGuard<'_> {
    fn drop(&mut self) {
        let mut conn = self.conn.take().expect("read guard emptied");
        if !conn.conn.is_autocommit() {
            let _ = conn.conn.execute_batch("ROLLBACK");
        }
        conn.failure = None;
        self.store.readers.lock().unwrap().idle.push(conn);
        self.store.reader_freed.notify_one();
    }
}

pub(crate) fn parse_url(url: &str) -> PathBuf {
    let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    PathBuf::from(path)
}

impl SqliteStore {
    pub(crate) async fn open(path: PathBuf, sync_full: bool, pool_size: usize) -> Result<SqliteStore, DbError> {
        let p = path.clone();
        let conn = tokio::task::spawn_blocking(move || {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| DbError::unavailable(format!("cannot create {}: {e}", dir.display())))?;
            }
            SqliteConn::open(&p, true, sync_full)
        })
        .await
        .map_err(|e| DbError::other(format!("sqlite open task failed: {e}")))??;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || writer_loop(conn, rx))
            .map_err(|e| DbError::other(format!("cannot start sqlite writer: {e}")))?;
        Ok(SqliteStore {
            path,
            pool_size: pool_size.max(1),
            readers: Mutex::new(ReadPool { idle: Vec::new(), open: 0 }),
            reader_freed: Condvar::new(),
            writer: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn checkout(&self) -> Result<ReadGuard<'_>, DbError> {
        let mut pool = self.readers.lock().unwrap();
        loop {
            if let Some(conn) = pool.idle.pop() {
                return Ok(ReadGuard { store: self, conn: Some(conn) });
            }
            if pool.open < self.pool_size {
                pool.open += 1;
                drop(pool);
                return match SqliteConn::open(&self.path, false, false) {
                    Ok(conn) => Ok(ReadGuard { store: self, conn: Some(conn) }),
                    Err(e) => {
                        self.readers.lock().unwrap().open -= 1;
                        self.reader_freed.notify_one();
                        Err(e)
                    }
                };
            }
            // Reads are short and synchronous, so this wait is brief.
            pool = self.reader_freed.wait(pool).unwrap();
        }
    }

    /// Runs inline on the calling thread: a point read costs ~10 µs, less
    /// than a hop to a blocking thread.
    pub(crate) fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<DbError>,
        F: FnOnce(&mut dyn Conn) -> Result<T, E>,
    {
        let mut guard = self.checkout()?;
        let conn = guard.conn.as_mut().expect("read guard emptied");
        match catch_unwind(AssertUnwindSafe(|| f(conn))) {
            Ok(r) => r,
            Err(panic) => Err(panic_error(panic).into()),
        }
    }

    fn send(&self, msg: Msg) -> Result<(), DbError> {
        let closed = || DbError::unavailable("store is closed");
        let writer = self.writer.lock().unwrap();
        writer.as_ref().ok_or_else(closed)?.send(msg).map_err(|_| closed())
    }

    pub(crate) async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.send(Msg::Job(Box::new(Job { f: Some(f), result: None, tx })))?;
        rx.await.unwrap_or_else(|_| Err(DbError::unavailable("sqlite writer stopped").into()))
    }

    async fn exclusive<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqliteConn) -> Result<T, DbError> + Send + 'static,
    ) -> Result<T, DbError> {
        let (tx, rx) = oneshot::channel();
        self.send(Msg::Exclusive(Box::new(move |c| {
            let _ = tx.send(f(c));
        })))?;
        rx.await.unwrap_or_else(|_| Err(DbError::other("sqlite exclusive task failed")))
    }

    pub(crate) async fn migrate(&self) -> Result<Vec<String>, DbError> {
        self.exclusive(|c| migrate::apply(c)).await
    }

    /// VACUUM rebuilds the file from live rows only (every page rewritten, the rest cut off), and
    /// the checkpoint empties the write-ahead log that held the old pages.
    pub(crate) async fn scrub(&self) -> Result<(), DbError> {
        self.exclusive(|c| c.conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);").map_err(map_err)).await
    }

    pub(crate) fn ping(&self) -> Result<(), DbError> {
        if self.writer.lock().unwrap().is_none() {
            return Err(DbError::unavailable("store is closed"));
        }
        self.read(migrate::check_applied)
    }

    pub(crate) async fn reset(&self) -> Result<(), DbError> {
        self.write(|c| {
            let tables = c.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite_%' AND name <> ?",
                &[Value::from(migrate::TABLE)],
            )?;
            let mut sql: String = tables.iter().map(|t| format!("DELETE FROM \"{}\";", t.str(0))).collect();
            if c.query_opt("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'", &[])?.is_some() {
                sql.push_str("DELETE FROM sqlite_sequence;");
            }
            c.batch(&sql)
        })
        .await
    }

    pub(crate) async fn close(&self) {
        drop(self.writer.lock().unwrap().take());
        let thread = self.thread.lock().unwrap().take();
        if let Some(t) = thread {
            // The writer drains queued jobs, then exits when the channel closes.
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
        let mut pool = self.readers.lock().unwrap();
        pool.open -= pool.idle.len();
        pool.idle.clear();
    }
}
