//! Storage layer: one domain code base over SQLite (embedded default) and
//! PostgreSQL. Domain SQL is written once with `?` placeholders against
//! [`Conn`]; the drivers execute it.

pub mod domain;
mod lock;
mod migrate;
mod postgres;
mod sql;
mod sqlite;
pub mod testing;

use std::sync::Arc;

pub use crate::lock::Exclusive;
pub use crate::sql::{Backend, Conn, DbError, DbErrorKind, Row, Value};

use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;

pub struct StoreOptions {
    /// `postgres://…` / `postgresql://…`, or `sqlite://PATH`, `sqlite:PATH`, or a plain path.
    pub url: String,
    /// SQLite `synchronous=FULL`: every acknowledged write survives a power cut.
    pub sqlite_synchronous_full: bool,
    /// SQLite read connections / PostgreSQL connections.
    pub pool_size: usize,
}

impl StoreOptions {
    pub fn new(url: impl Into<String>) -> StoreOptions {
        StoreOptions { url: url.into(), ..StoreOptions::default() }
    }
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions { url: "platform.db".into(), sqlite_synchronous_full: true, pool_size: 8 }
    }
}

enum Driver {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

#[derive(Clone)]
pub struct Store {
    driver: Arc<Driver>,
    /// Bumped after every write (and reset) completes, before its caller resumes; see
    /// [`Store::generation`].
    generation: Arc<std::sync::atomic::AtomicU64>,
    /// The same, for writes that may change access ([`Store::access_generation`]).
    access: Arc<std::sync::atomic::AtomicU64>,
    /// Writes submitted and not yet answered (waiting for, or inside, a commit).
    pending_writes: Arc<std::sync::atomic::AtomicI64>,
    /// Publishes the generation after each write, for background workers to wake on.
    written: Arc<tokio::sync::watch::Sender<u64>>,
    /// Coalesces the reads of the shared generation (PostgreSQL).
    observer: Arc<Observer>,
    /// Exclusive locks of this process (SQLite: one node, so they are everyone's).
    locks: Arc<lock::Local>,
}

/// The shared generations as one read saw them (see [`Store::observe`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generations {
    /// Bumped by every observed write.
    pub writes: u64,
    /// Bumped by every write that may change access (all but [`Store::write_content`]).
    pub access: u64,
}

/// What a write may change, so which generations it bumps.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changes {
    /// Anything: both generations.
    Anything,
    /// Content only, never access: the write generation.
    Content,
    /// Rows nothing cached and no worker reads: neither.
    Unobserved,
}

/// One read of the shared generations in flight per process, serving every caller that arrived
/// before it started: callers take a ticket (reads started so far) and accept only the result of
/// a read numbered after it, so the value was read after they asked.
#[derive(Default)]
struct Observer {
    started: std::sync::atomic::AtomicU64,
    /// (number of the read, values) of the last finished read.
    latest: std::sync::Mutex<(u64, Generations)>,
    leader: tokio::sync::Mutex<()>,
}

impl Observer {
    fn after(&self, ticket: u64) -> Option<Generations> {
        let (n, v) = *self.latest.lock().unwrap_or_else(|e| e.into_inner());
        (n > ticket).then_some(v)
    }
}

impl Store {
    /// Opens (creating a SQLite file if absent) and applies pending migrations.
    pub async fn open(opts: StoreOptions) -> Result<Store, DbError> {
        let url = opts.url.trim();
        let driver = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Driver::Postgres(PgStore::new(url, opts.pool_size)?)
        } else {
            let path = sqlite::parse_url(url);
            Driver::Sqlite(SqliteStore::open(path, opts.sqlite_synchronous_full, opts.pool_size).await?)
        };
        let store = Store {
            driver: Arc::new(driver),
            generation: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            access: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            pending_writes: Arc::new(std::sync::atomic::AtomicI64::new(0)),
            written: Arc::new(tokio::sync::watch::channel(0).0),
            observer: Arc::default(),
            locks: Arc::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    pub fn backend(&self) -> Backend {
        match *self.driver {
            Driver::Sqlite(_) => Backend::Sqlite,
            Driver::Postgres(_) => Backend::Postgres,
        }
    }

    /// Runs read-only queries. Each statement sees every write that completed
    /// before it started. A panic in `f` becomes a `DbError` (Other).
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        match &*self.driver {
            Driver::Sqlite(s) => s.read(f),
            Driver::Postgres(p) => p.read(f).await,
        }
    }

    /// Runs `f` in one transaction, durably committed before this returns Ok.
    /// If `f` returns Err, panics, or any statement in it failed, everything
    /// it did is rolled back.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        self.commit(f, Changes::Anything).await
    }

    /// [`Store::write`] for a write that changes no row deciding who a credential is or what it
    /// may reach — no account, membership, team, token, app, installation, grant or repository
    /// (statuses, say) — so the caches of credentials and repository access stay valid across
    /// it (they are keyed by [`Store::access_generation`]); every other cache is not.
    pub async fn write_content<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        self.commit(f, Changes::Content).await
    }

    /// [`Store::write`] for rows no cached answer and no worker reads (request statistics): it
    /// leaves the generations alone, so recording requests every second does not empty the caches.
    pub async fn write_unobserved<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        self.commit(f, Changes::Unobserved).await
    }

    async fn commit<T, E, F>(&self, f: F, changes: Changes) -> Result<T, E>
    where
        F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        use std::sync::atomic::Ordering::Relaxed;
        self.pending_writes.fetch_add(1, Relaxed);
        let out = match &*self.driver {
            Driver::Sqlite(s) => s.write(f).await,
            Driver::Postgres(p) => p.write(f, changes).await,
        };
        self.pending_writes.fetch_sub(1, Relaxed);
        self.bump(changes);
        out
    }

    /// The write queue depth: writes submitted and not yet committed and answered.
    pub fn pending_writes(&self) -> i64 {
        self.pending_writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// After a write (acknowledged or not), before its caller resumes: the generations `changes`
    /// calls for.
    fn bump(&self, changes: Changes) {
        if changes == Changes::Unobserved {
            return;
        }
        if changes == Changes::Anything {
            self.access.fetch_add(1, std::sync::atomic::Ordering::Release);
        }
        let g = self.generation.fetch_add(1, std::sync::atomic::Ordering::Release) + 1;
        self.written.send_replace(g);
    }

    /// A receiver that wakes after every write this process makes (workers wait on it instead
    /// of polling; writes by other nodes sharing PostgreSQL are not seen, so they poll too).
    pub fn subscribe_writes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.written.subscribe()
    }

    /// A counter that changes after every write this process makes, before the write is
    /// acknowledged. A value computed from reads that started at generation `g` is current for
    /// as long as the generation is still `g` — provided this process is the only writer, which
    /// [`Store::single_writer`] tells.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// [`Store::generation`] for the writes that may change access (all but
    /// [`Store::write_content`]): what caches of credentials and repository access are keyed by.
    pub fn access_generation(&self) -> u64 {
        self.access.load(std::sync::atomic::Ordering::Acquire)
    }

    /// True when every write goes through this process (SQLite), so in-process caches keyed by
    /// [`Store::generation`] are coherent. PostgreSQL may be shared by several nodes: see
    /// [`Store::observe`].
    pub fn single_writer(&self) -> bool {
        self.backend() == Backend::Sqlite
    }

    /// The shared write generations (PostgreSQL), read after this call began: sequences every
    /// node bumps after each write commits and before acknowledging it (`write_unobserved`
    /// excepted; `write_content` bumps only the write generation, not the access one). So if a
    /// write was acknowledged — on any node — before this call, the value is above the one any
    /// read that missed the write observed, and a value cached under an observed generation `g`
    /// is exact for every later caller that observes `g` too. (A
    /// bump inside the transaction would not do: a reader could observe it, read before the
    /// commit and cache the old rows under the new value.) Concurrent callers share one read
    /// (see `Observer`), so this costs at most one round trip per round trip, however many
    /// requests wait. SQLite: the in-process generations.
    pub async fn observe(&self) -> Result<Generations, DbError> {
        if self.single_writer() {
            return Ok(Generations { writes: self.generation(), access: self.access_generation() });
        }
        let o = &self.observer;
        let ticket = o.started.load(std::sync::atomic::Ordering::SeqCst);
        if let Some(v) = o.after(ticket) {
            return Ok(v);
        }
        let _leader = o.leader.lock().await;
        if let Some(v) = o.after(ticket) {
            return Ok(v);
        }
        let n = o.started.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let v = self
            .read(|c| {
                // A new sequence's last_value is already 1 before its first nextval: count from 0.
                let r = c.query(
                    "SELECT CASE WHEN w.is_called THEN w.last_value ELSE 0 END, CASE WHEN a.is_called THEN a.last_value ELSE 0 END \
                     FROM write_generation w, access_generation a",
                    &[],
                )?;
                Ok::<_, DbError>(
                    r.first().map_or_else(Generations::default, |r| Generations { writes: r.i64(0) as u64, access: r.i64(1) as u64 }),
                )
            })
            .await?;
        *o.latest.lock().unwrap_or_else(|e| e.into_inner()) = (n, v);
        Ok(v)
    }

    /// Takes the exclusive lock `key`, waiting while another holder (on any node) has it; the
    /// guard releases it when dropped, and a node that dies releases its locks with it.
    pub async fn exclusive(&self, key: i64) -> Result<Exclusive, DbError> {
        match &*self.driver {
            Driver::Sqlite(_) => Ok(self.locks.lock(key).await),
            Driver::Postgres(p) => lock::advisory(p.config(), key, true).await?.ok_or_else(|| DbError::other("advisory lock not taken")),
        }
    }

    /// [`Store::exclusive`] if nobody holds the lock now.
    pub async fn try_exclusive(&self, key: i64) -> Result<Option<Exclusive>, DbError> {
        match &*self.driver {
            Driver::Sqlite(_) => Ok(self.locks.try_lock(key)),
            Driver::Postgres(p) => lock::advisory(p.config(), key, false).await,
        }
    }

    /// Readiness: the database answers and every migration is applied.
    pub async fn ping(&self) -> Result<(), DbError> {
        match &*self.driver {
            Driver::Sqlite(s) => s.ping(),
            Driver::Postgres(p) => p.ping().await,
        }
    }

    /// Deletes every row (migrations excepted) and restarts id sequences.
    /// Meant for tests.
    pub async fn reset(&self) -> Result<(), DbError> {
        let out = match &*self.driver {
            Driver::Sqlite(s) => s.reset().await,
            Driver::Postgres(p) => p.reset().await,
        };
        self.bump(Changes::Anything);
        out
    }

    /// Rewrites the database's files so that nothing deleted from `tables` can be read back from
    /// them: not from free pages, old row versions or the write-ahead log. For rare moments such
    /// as moving secrets to another key (it takes locks and, on SQLite, rewrites the whole file).
    pub async fn scrub(&self, tables: &[&'static str]) -> Result<(), DbError> {
        match &*self.driver {
            Driver::Sqlite(s) => s.scrub().await,
            Driver::Postgres(p) => p.scrub(tables).await,
        }
    }

    /// Applies pending migrations; returns the names applied.
    pub async fn migrate(&self) -> Result<Vec<String>, DbError> {
        match &*self.driver {
            Driver::Sqlite(s) => s.migrate().await,
            Driver::Postgres(p) => p.migrate().await,
        }
    }

    /// Drains queued writes and stops the SQLite writer (later writes fail
    /// with Unavailable); releases idle connections. Idempotent.
    pub async fn close(&self) {
        match &*self.driver {
            Driver::Sqlite(s) => s.close().await,
            Driver::Postgres(p) => p.close().await,
        }
    }
}
