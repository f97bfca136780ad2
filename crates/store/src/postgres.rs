//! PostgreSQL driver. Reads run as coroutines on a few threads, their statements pipelined on
//! shared connections (`reads`); a write holds a connection of a small lazily-filled pool for its
//! transaction, on a fixed set of database threads. Each connection keeps its prepared
//! statements.
//!
//! Why a write's connection is on a thread of its own rather than async domain code: the domain
//! code is one sync code base for both backends (SQLite is sync by nature), and a connection
//! serves one transaction at a time either way. What an async path buys is kept: a request
//! waiting for the database waits as a future (a permit per connection), never as a thread; the
//! thread count is fixed (one database thread per pool connection, started with the store); each
//! statement is prepared once per connection; a transaction's BEGIN is pipelined with its first
//! statement; and a request's round trips are merged where they are independent (the commit and
//! the generation bumps in one batch, reference resolution in one statement, the generation read
//! shared by concurrent requests).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::private::BytesMut;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};

mod reads;

use crate::migrate;
use crate::sql::{panic_error, run_guarded, type_error, Backend, Conn, DbError, DbErrorKind, DriverConn, Row, Value};
use crate::Changes;

const POOL_WAIT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Domain SQL is a fixed set; the cap only guards against generated SQL.
const STATEMENT_CACHE: usize = 1024;

pub(crate) struct PgConn {
    client: Client,
    /// Drives the connection: its task runs while a call on this connection's database thread
    /// waits in `block_on` (what the sync `postgres` client does too, here in reach).
    rt: tokio::runtime::Runtime,
    stmts: HashMap<String, Statement>,
    failure: Option<DbError>,
    /// A transaction was begun and BEGIN not sent yet: it goes out with the first statement,
    /// pipelined, so a transaction costs no round trip of its own.
    begin: bool,
}

impl PgConn {
    fn connect(config: &Config) -> Result<PgConn, tokio_postgres::Error> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("connection runtime");
        let (client, connection) = rt.block_on(config.connect(NoTls))?;
        rt.spawn(connection);
        Ok(PgConn { client, rt, stmts: HashMap::new(), failure: None, begin: false })
    }

    /// Runs one request on the connection, after a pending BEGIN: BEGIN's first poll queues it
    /// to the connection before the request is queued, and both go out before either answer is
    /// read. (BEGIN cannot fail while the statement after it succeeds: both need the connection.)
    fn call<'a, T, F>(&'a mut self, f: impl FnOnce(&'a Client) -> F) -> Result<T, tokio_postgres::Error>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>> + 'a,
    {
        let begin = std::mem::take(&mut self.begin);
        let client = &self.client;
        self.rt.block_on(async move {
            if !begin {
                return f(client).await;
            }
            let mut begun = pin!(client.batch_execute("BEGIN"));
            let early = std::future::poll_fn(|cx| Poll::Ready(begun.as_mut().poll(cx))).await;
            let r = f(client).await;
            match early {
                Poll::Ready(b) => b?,
                Poll::Pending => begun.await?,
            }
            r
        })
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.stmts.get(sql) {
            return Ok(s.clone());
        }
        let stmt = self.rt.block_on(prepare(&self.client, sql))?;
        if self.stmts.len() >= STATEMENT_CACHE {
            self.stmts.clear();
        }
        self.stmts.insert(sql.to_owned(), stmt.clone());
        Ok(stmt)
    }

    fn record<T>(&mut self, r: Result<T, tokio_postgres::Error>) -> Result<T, DbError> {
        r.map_err(|e| {
            let e = map_err(&e);
            self.failure.get_or_insert_with(|| e.clone());
            e
        })
    }

    fn run(&mut self, sql: &str, params: &[Value]) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        self.call(|c| async move { c.query(&stmt, &refs).await })
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), tokio_postgres::Error> {
        self.call(|c| c.batch_execute(sql))
    }
}

/// Prepares domain SQL (`?` placeholders) on `client`.
async fn prepare(client: &Client, sql: &str) -> Result<Statement, tokio_postgres::Error> {
    client.prepare(&translate_placeholders(sql)).await
}

/// A row as domain code reads it.
fn row(r: &tokio_postgres::Row) -> Result<Row, tokio_postgres::Error> {
    (0..r.len()).map(|i| r.try_get::<_, PgValue>(i).map(|v| v.0)).collect::<Result<Vec<_>, _>>().map(Row)
}

impl Conn for PgConn {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let rows = self.run(sql, params).and_then(|rows| rows.iter().map(row).collect::<Result<Vec<_>, _>>());
        self.record(rows)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let r = self.statement(sql).and_then(|stmt| {
            let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            self.call(|c| async move { c.execute(&stmt, &refs).await })
        });
        self.record(r)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let r = self.batch_execute(sql);
        self.record(r)
    }

    fn backend(&self) -> Backend {
        Backend::Postgres
    }
}

impl DriverConn for PgConn {
    fn take_failure(&mut self) -> Option<DbError> {
        self.failure.take()
    }
}

fn map_err(e: &tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let kind = if *code == SqlState::UNIQUE_VIOLATION {
            DbErrorKind::Unique
        } else if *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::T_R_SERIALIZATION_FAILURE {
            DbErrorKind::Conflict
        } else if code.code().starts_with("08")
            || [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW].contains(code)
        {
            DbErrorKind::Unavailable
        } else {
            DbErrorKind::Other
        };
        return DbError::new(kind, format!("{db} (SQLSTATE {})", code.code()));
    }
    let mut msg = e.to_string();
    if let Some(src) = e.source() {
        let _ = write!(msg, ": {src}");
    }
    // No server error: either the socket is gone or a value failed to convert.
    let io = e.is_closed() || e.source().is_some_and(|s| s.is::<std::io::Error>());
    DbError::new(if io { DbErrorKind::Unavailable } else { DbErrorKind::Other }, msg)
}

/// `?` -> `$1, $2, …`, leaving string literals, quoted identifiers and
/// `--` comments alone.
pub(crate) fn translate_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut until: Option<char> = None; // closing char of the literal/comment we are in
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match until {
            Some(end) if c == end => until = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => until = Some(c),
                '-' if chars.peek() == Some(&'-') => until = Some('\n'),
                '?' => {
                    out.pop();
                    n += 1;
                    let _ = write!(out, "${n}");
                }
                _ => {}
            },
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT4) => (*i as f32).to_sql(ty, out),
            (Value::Int(i), &Type::NUMERIC) => {
                encode_numeric(*i, out);
                Ok(IsNull::No)
            }
            (Value::Int(i @ (0 | 1)), &Type::BOOL) => (*i == 1).to_sql(ty, out),
            (Value::Bool(b), &Type::BOOL) => b.to_sql(ty, out),
            (Value::Bool(b), &Type::INT8 | &Type::INT4 | &Type::INT2) => Value::Int(*b as i64).to_sql(ty, out),
            (Value::Float(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Float(f), &Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Text(s), _) if <&str as ToSql>::accepts(ty) => s.as_str().to_sql(ty, out),
            (Value::Text(s), &Type::JSON | &Type::JSONB) => {
                if *ty == Type::JSONB {
                    out.extend_from_slice(&[1]); // jsonb binary format version
                }
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Bytes(b), &Type::BYTEA) => b.as_slice().to_sql(ty, out),
            _ => Err(Box::new(type_error(self, ty.name()))),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Integer as a NUMERIC in binary form: base-10000 digits, most significant first.
fn encode_numeric(v: i64, out: &mut BytesMut) {
    let mut rest = (v as i128).unsigned_abs();
    let mut digits = Vec::new();
    while rest > 0 {
        digits.push((rest % 10_000) as i16);
        rest /= 10_000;
    }
    digits.reverse();
    let weight = digits.len() as i16 - 1;
    let sign: u16 = if v < 0 { 0x4000 } else { 0 };
    for h in [digits.len() as i16, weight.max(0), sign as i16, 0] {
        out.extend_from_slice(&h.to_be_bytes());
    }
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// NUMERIC -> Int when it has no fractional part and fits (so `SUM(bigint)`
/// reads like on SQLite), else Float.
fn decode_numeric(raw: &[u8]) -> Result<Value, Box<dyn StdError + Sync + Send>> {
    let word = |i: usize| -> Result<u16, Box<dyn StdError + Sync + Send>> {
        let b = raw.get(i * 2..i * 2 + 2).ok_or("truncated numeric")?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    };
    let (ndigits, weight, sign, dscale) = (word(0)? as usize, word(1)? as i16 as i64, word(2)?, word(3)?);
    match sign {
        0xC000 => return Ok(Value::Float(f64::NAN)),
        0xD000 => return Ok(Value::Float(f64::INFINITY)),
        0xF000 => return Ok(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    let mut mantissa = String::from(if sign == 0x4000 { "-" } else { "" });
    for i in 0..ndigits {
        let _ = write!(mantissa, "{:04}", word(4 + i)?);
    }
    if ndigits == 0 {
        mantissa.push('0');
    }
    let exp = (weight + 1 - ndigits as i64) * 4;
    if dscale == 0 && exp >= 0 {
        let int = format!("{mantissa}{}", "0".repeat(exp as usize));
        if let Ok(i) = int.parse::<i64>() {
            return Ok(Value::Int(i));
        }
    }
    Ok(Value::Float(format!("{mantissa}e{exp}").parse()?))
}

/// Reads any column into a `Value`, choosing by the column's type.
struct PgValue(Value);

impl<'a> FromSql<'a> for PgValue {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(PgValue(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Bool(bool::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::BYTEA => Value::Bytes(raw.to_vec()),
            Type::NUMERIC => decode_numeric(raw)?,
            Type::VOID => Value::Null, // e.g. SELECT pg_advisory_xact_lock(…)
            Type::JSON => Value::Text(std::str::from_utf8(raw)?.to_owned()),
            Type::JSONB => Value::Text(std::str::from_utf8(raw.get(1..).unwrap_or_default())?.to_owned()),
            _ if <&str as FromSql>::accepts(ty) => Value::Text(String::from_sql(ty, raw)?),
            _ => return Err(format!("unsupported column type {ty}; cast it in SQL (e.g. ::text or ::bigint)").into()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(PgValue(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

struct PoolState {
    idle: Vec<PgConn>,
    open: usize,
}

struct Pool {
    config: Config,
    max: usize,
    state: Mutex<PoolState>,
    freed: Condvar,
}

impl Drop for Pool {
    fn drop(&mut self) {
        close_conns(std::mem::take(&mut self.state.get_mut().unwrap().idle));
    }
}

/// A sync `Client` drives its own runtime and panics when dropped on an
/// async worker thread, so connections are always closed on a plain thread.
fn close_conns(conns: Vec<PgConn>) {
    if !conns.is_empty() {
        let _ = std::thread::Builder::new().name("pg-close".into()).spawn(move || drop(conns));
    }
}

/// Borrowed pool connection; returned on drop unless marked broken.
struct Pooled {
    pool: Arc<Pool>,
    conn: Option<PgConn>,
    broken: bool,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let conn = self.conn.take().expect("pooled connection emptied");
        let mut state = self.pool.state.lock().unwrap();
        if self.broken || conn.client.is_closed() {
            state.open -= 1;
            drop(state);
            drop(conn); // we are on a database thread
        } else {
            state.idle.push(conn);
        }
        self.pool.freed.notify_one();
    }
}

impl std::ops::Deref for Pooled {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.conn.as_ref().unwrap()
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut PgConn {
        self.conn.as_mut().unwrap()
    }
}

impl Pool {
    /// Blocking: call from a database thread only.
    fn get(self: &Arc<Self>) -> Result<Pooled, DbError> {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(mut conn) = state.idle.pop() {
                conn.failure = None;
                return Ok(Pooled { pool: self.clone(), conn: Some(conn), broken: false });
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match PgConn::connect(&self.config) {
                    Ok(conn) => Ok(Pooled { pool: self.clone(), conn: Some(conn), broken: false }),
                    Err(e) => {
                        self.state.lock().unwrap().open -= 1;
                        self.freed.notify_one();
                        Err(DbError::unavailable(format!("cannot connect to PostgreSQL: {}", map_err(&e).message)))
                    }
                };
            }
            let (s, timeout) = self.freed.wait_timeout(state, POOL_WAIT).unwrap();
            if timeout.timed_out() && s.idle.is_empty() && s.open >= self.max {
                return Err(DbError::unavailable("timed out waiting for a PostgreSQL connection"));
            }
            state = s;
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The database threads: as many as pool connections, started with the store, ended when it
/// is dropped (the queue's sender goes). A job runs only after its permit was taken, so a
/// thread is always free for it and the queue never holds more than the threads can take.
struct Threads {
    queue: std::sync::mpsc::Sender<Job>,
}

impl Threads {
    fn start(n: usize) -> Threads {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..n {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("pg-{i}"))
                .spawn(move || loop {
                    let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
                        Ok(job) => job,
                        Err(_) => return, // the store is gone
                    };
                    // A panic is the job's answer (its sender drops); the thread carries on.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                })
                .expect("database thread");
        }
        Threads { queue: tx }
    }

    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        self.queue.send(job).ok()?;
        rx.await.ok()
    }
}

pub(crate) struct PgStore {
    /// Reads: coroutines on a few threads, their statements pipelined (see `reads`).
    reads: reads::Reads,
    /// Writes, migrations and maintenance: a transaction holds a connection of this pool.
    pool: Arc<Pool>,
    /// One permit per pool connection, taken before a database thread is: requests waiting for
    /// a connection wait as futures, not as threads (bounded threads and memory under many
    /// connections).
    permits: Arc<tokio::sync::Semaphore>,
    threads: Threads,
}

impl PgStore {
    pub(crate) fn new(url: &str, pool_size: usize) -> Result<PgStore, DbError> {
        let mut config: Config = url.parse().map_err(|e| DbError::other(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("platformd");
        }
        // Half the cores: a reads thread only runs the reads' own code; the rest is the database's.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(PgStore {
            reads: reads::Reads::start(&config, pool_size.max(1), cores / 2),
            permits: Arc::new(tokio::sync::Semaphore::new(pool_size.max(1))),
            threads: Threads::start(pool_size.max(1)),
            pool: Arc::new(Pool {
                config,
                max: pool_size.max(1),
                state: Mutex::new(PoolState { idle: Vec::new(), open: 0 }),
                freed: Condvar::new(),
            }),
        })
    }

    /// How this store connects (locks take connections of their own).
    pub(crate) fn config(&self) -> &Config {
        &self.pool.config
    }

    /// Runs `f` with a pooled connection on a database thread (a connection's `block_on` must
    /// never run on an async worker).
    async fn with_conn<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut Pooled) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let waited = tokio::time::timeout(POOL_WAIT, self.permits.clone().acquire_owned()).await;
        let Ok(Ok(permit)) = waited else {
            return Err(DbError::unavailable("timed out waiting for a PostgreSQL connection").into());
        };
        let pool = self.pool.clone();
        self.threads
            .run(move || {
                let r = f(&mut pool.get()?);
                drop(permit);
                r
            })
            .await
            .unwrap_or_else(|| Err(DbError::other("database task failed").into()))
    }

    pub(crate) async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        self.reads
            .run(|c| catch_unwind(AssertUnwindSafe(|| f(c))).unwrap_or_else(|panic| Err(panic_error(panic).into())))
            .await
            .unwrap_or_else(|| {
                Err(DbError::unavailable("the read could not run: the store is closing, or no stack could be mapped for it").into())
            })
    }

    /// Commits with the bumps of the shared generations `changes` calls for (see
    /// `Store::observe`) in the same round trip; an error there leaves the write unacknowledged.
    pub(crate) async fn write<T, E, F>(&self, f: F, changes: Changes) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        self.with_conn(move |c| {
            c.begin = true;
            let r = run_guarded(&mut **c, f);
            let bump = match changes {
                Changes::Anything => "SELECT nextval('write_generation'), nextval('access_generation')",
                Changes::Content => "SELECT nextval('write_generation')",
                Changes::Unobserved => "",
            };
            // Nothing sent (BEGIN still pending): nothing to commit or roll back.
            let idle = std::mem::take(&mut c.begin);
            let end = match (r.is_ok(), idle) {
                (true, false) => c.batch_execute(&format!("COMMIT; {bump}")),
                (true, true) => c.batch_execute(bump),
                (false, false) => c.batch_execute("ROLLBACK"),
                (false, true) => Ok(()),
            };
            if end.is_err() {
                c.broken = true;
            }
            let end = end.map_err(|e| map_err(&e));
            match r {
                Ok(v) => end.map(|_| v).map_err(E::from),
                Err(e) => Err(e),
            }
        })
        .await
    }

    pub(crate) async fn migrate(&self) -> Result<Vec<String>, DbError> {
        self.with_conn(|c| {
            let r = migrate::apply(&mut **c);
            // Schema changed: cached plans may be stale.
            c.stmts.clear();
            // An upgrade of a database that holds data: new columns and indexes have no
            // statistics until autovacuum gets to them, and the planner would guess (a feed fell
            // to a bitmap scan and a sort on stale ones). A new database's tables are empty.
            if r.as_ref().is_ok_and(|applied| migrate::upgraded(applied)) {
                c.batch("ANALYZE")?;
            }
            r
        })
        .await
    }

    /// Each table's live rows are copied aside, the table truncated and the rows put back, in one
    /// transaction (statements of one simple query are one). TRUNCATE gives the table new files
    /// and drops the old ones, with every old row version, at commit; unlike `VACUUM FULL`, which
    /// keeps row versions another session's snapshot may still see (on a busy server, some).
    pub(crate) async fn scrub(&self, tables: &[&'static str]) -> Result<(), DbError> {
        let sql: String = tables
            .iter()
            .map(|t| {
                format!(
                    "CREATE TEMP TABLE scrub_copy AS SELECT * FROM {t}; TRUNCATE {t}; \
                     INSERT INTO {t} OVERRIDING SYSTEM VALUE SELECT * FROM scrub_copy; DROP TABLE scrub_copy;"
                )
            })
            .collect();
        self.with_conn(move |c| c.batch(&sql)).await
    }

    pub(crate) async fn ping(&self) -> Result<(), DbError> {
        self.read(migrate::check_applied).await
    }

    pub(crate) async fn reset(&self) -> Result<(), DbError> {
        // TRUNCATE locks every table, one after another, while background writers (insights,
        // deliveries) may hold one and wait for another: PostgreSQL then breaks the deadlock by
        // rolling one side back. Nothing was truncated, so the reset is tried again.
        let mut attempt = 0;
        loop {
            let r = self
                .write(
                    |c| {
                        let tables = c.query(
                            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> ?",
                            &[Value::from(migrate::TABLE)],
                        )?;
                        if tables.is_empty() {
                            return Ok(());
                        }
                        let list: Vec<String> = tables.iter().map(|t| format!("\"{}\"", t.str(0))).collect();
                        c.batch(&format!("TRUNCATE {} RESTART IDENTITY", list.join(", ")))
                    },
                    Changes::Anything,
                )
                .await;
            match r {
                Err(e) if e.kind == DbErrorKind::Conflict && attempt < 5 => {
                    attempt += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt)).await;
                }
                r => return r,
            }
        }
    }

    pub(crate) async fn close(&self) {
        let idle = {
            let mut state = self.pool.state.lock().unwrap();
            let idle = std::mem::take(&mut state.idle);
            state.open -= idle.len();
            idle
        };
        close_conns(idle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(translate_placeholders("SELECT ?, ?"), "SELECT $1, $2");
        assert_eq!(
            translate_placeholders("SELECT '?', 'it''s ?', \"a?\" , ? -- what?\n, ?"),
            "SELECT '?', 'it''s ?', \"a?\" , $1 -- what?\n, $2"
        );
        assert_eq!(translate_placeholders("a - ? -b"), "a - $1 -b");
    }

    #[test]
    fn numeric_codec() {
        for v in [0i64, 1, -1, 9999, 10_000, 123_456_789, i64::MAX, i64::MIN] {
            let mut buf = BytesMut::new();
            encode_numeric(v, &mut buf);
            assert_eq!(decode_numeric(&buf).unwrap(), Value::Int(v), "{v}");
        }
        // 12.5 = digits [12, 5000], weight 0, dscale 1
        let raw = [0, 2, 0, 0, 0, 0, 0, 1, 0, 12, 0x13, 0x88];
        assert_eq!(decode_numeric(&raw).unwrap(), Value::Float(12.5));
    }
}
