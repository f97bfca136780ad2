//! Consumers of the activity outbox. Every platform action writes an activity record in the
//! transaction of the change; each consumer (feeds, webhooks, notifications) handles the records
//! in commit-safe order ([`activity::Cursor`]: a record committed late by a slow transaction is
//! not passed over), and its effects and its cursor commit together: every record is handled
//! exactly once, and a consumer that stops (crash, `kill -9`, restart) resumes where it left off.
use std::sync::Arc;
use std::time::Duration;

use platform_store::domain::activity::{self, Activity};
use platform_store::{Conn, DbError};

use crate::error::ApiError;
use crate::state::Shared;

/// Records handled per transaction.
const BATCH: i64 = 256;
/// Fallback poll for writes made by other nodes sharing a PostgreSQL database.
const POLL: Duration = Duration::from_secs(1);

pub trait Consumer: Send + Sync + 'static {
    /// The cursor's name; never change it once records were handled under it.
    fn name(&self) -> &'static str;
    /// Handles a batch inside the consumer's transaction. An error rolls the batch back and it is
    /// tried again later, so it must not have side effects outside `c`.
    fn handle(&self, c: &mut dyn Conn, batch: &[Activity], now: i64) -> Result<(), ApiError>;
}

/// Handles every record waiting for `consumer`; returns how many it handled.
pub async fn drain(state: &Shared, consumer: &Arc<dyn Consumer>) -> Result<usize, ApiError> {
    let mut total = 0;
    loop {
        let name = consumer.name();
        let behind = state
            .store
            .read(move |c| -> Result<bool, DbError> {
                let at = activity::cursor(c, name)?;
                activity::pending(c, at)
            })
            .await?;
        if !behind {
            return Ok(total);
        }
        let now = state.clock.now();
        let consumer2 = consumer.clone();
        let n = state
            .store
            .write(move |c| -> Result<usize, ApiError> {
                let name = consumer2.name();
                let at = activity::lock_cursor(c, name)?;
                let rows = activity::after(c, at, BATCH)?;
                let Some(&(end, _)) = rows.last() else { return Ok(0) };
                let batch: Vec<Activity> = rows.into_iter().map(|(_, a)| a).collect();
                consumer2.handle(c, &batch, now)?;
                activity::set_cursor(c, name, end)?;
                Ok(batch.len())
            })
            .await?;
        total += n;
        if (n as i64) < BATCH {
            return Ok(total);
        }
    }
}

/// Runs a consumer until the process ends: drains, then sleeps until the next write.
pub fn spawn(state: Shared, consumer: Arc<dyn Consumer>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut writes = state.store.subscribe_writes();
        loop {
            writes.borrow_and_update();
            if let Err(e) = drain(&state, &consumer).await {
                tracing::warn!(consumer = consumer.name(), error = %e.message, "activity consumer failed; retrying");
                tokio::time::sleep(POLL).await;
            }
            tokio::select! {
                r = writes.changed() => if r.is_err() { return },
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    })
}

/// Starts every background worker of the server; the binary and the test harness call this.
#[allow(clippy::vec_init_then_push)]
pub fn spawn_workers(state: &Shared) -> Vec<tokio::task::JoinHandle<()>> {
    let consumers: Vec<Arc<dyn Consumer>> = vec![
        Arc::new(crate::notify::Notifications { urls: state.urls.clone() }),
        Arc::new(crate::webhooks::WebhookConsumer { urls: state.urls.clone() }),
    ];
    let mut workers: Vec<_> = consumers.into_iter().map(|c| spawn(state.clone(), c)).collect();
    workers.push(crate::webhooks::spawn_sender(state.clone()));
    workers.push(crate::runs::engine::spawn_ticker(state.clone()));
    workers.push(crate::imports::worker::spawn(state.clone()));
    workers.push(crate::insights::spawn_flusher(state.clone()));
    workers
}
