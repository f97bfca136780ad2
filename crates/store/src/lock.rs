//! Exclusive locks by key, across every node sharing the database: a session-level advisory
//! lock on a connection of its own on PostgreSQL (released when the guard drops, or by the
//! server when the node dies: its connection closes), an in-process lock on SQLite (one node).
//! For work that spans more than a transaction, such as a push: the lock is held while git runs,
//! without holding a pooled connection.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::{Backend, Conn, DbError, Value};

/// Takes the row locks of `table`'s rows matching `filter` (to the end of the caller's
/// transaction); returns how many rows matched. A change decided from rows read after this is
/// not lost to, nor recorded again by, one made meanwhile on another node. PostgreSQL: `FOR NO
/// KEY UPDATE`, the lock an update takes, without writing a row version; SQLite: its single
/// writer serializes write transactions already, so the rows are only counted. Every writer
/// takes a row's lock before its children's (a hook before its deliveries, a run before its
/// jobs, a repository before its runs): two writers taking them in opposite orders deadlock, and
/// PostgreSQL rolls one back.
pub fn rows(c: &mut dyn Conn, table: &str, filter: &str, params: &[Value]) -> Result<u64, DbError> {
    let lock = if c.backend() == Backend::Postgres { " FOR NO KEY UPDATE" } else { "" };
    let n = c.query_i64(&format!("SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE {filter}{lock}) AS locked"), params)?;
    Ok(n as u64)
}

/// The in-process locks of one store (SQLite).
#[derive(Default)]
pub(crate) struct Local {
    keys: Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>,
}

impl Local {
    fn entry(&self, key: i64) -> Arc<tokio::sync::Mutex<()>> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        // Forget locks nobody holds or waits for, so the map stays as small as the work in flight.
        if keys.len() > 1024 {
            keys.retain(|_, m| Arc::strong_count(m) > 1);
        }
        keys.entry(key).or_default().clone()
    }

    pub(crate) async fn lock(&self, key: i64) -> Exclusive {
        Exclusive(Held::Local(self.entry(key).lock_owned().await))
    }

    pub(crate) fn try_lock(&self, key: i64) -> Option<Exclusive> {
        self.entry(key).try_lock_owned().ok().map(|g| Exclusive(Held::Local(g)))
    }
}

/// A held lock; dropping it releases the lock.
pub struct Exclusive(#[allow(dead_code)] Held);

enum Held {
    Local(#[allow(dead_code)] tokio::sync::OwnedMutexGuard<()>),
    /// The connection holding the advisory lock: dropping the client closes it (its driver task
    /// ends), which releases the lock.
    Shared(#[allow(dead_code)] tokio_postgres::Client),
}

/// Opens a connection of its own and takes the advisory lock `key` on it (`wait`: until it is
/// free; otherwise `None` when another session holds it).
pub(crate) async fn advisory(config: &tokio_postgres::Config, key: i64, wait: bool) -> Result<Option<Exclusive>, DbError> {
    let (client, connection) =
        config.connect(tokio_postgres::NoTls).await.map_err(|e| DbError::unavailable(format!("cannot connect to PostgreSQL: {e}")))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let held = if wait {
        client.execute("SELECT pg_advisory_lock($1)", &[&key]).await.map(|_| true)
    } else {
        client.query_one("SELECT pg_try_advisory_lock($1)", &[&key]).await.map(|r| r.get::<_, bool>(0))
    };
    match held {
        Ok(true) => Ok(Some(Exclusive(Held::Shared(client)))),
        Ok(false) => Ok(None),
        Err(e) => Err(DbError::unavailable(format!("advisory lock: {e}"))),
    }
}
