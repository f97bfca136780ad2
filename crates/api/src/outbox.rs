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
    /// tried again later, so it must not have side effects outside `c`. The transaction commits
    /// as a content write (`Store::write_content`): it must not change who may reach what.
    fn handle(&self, c: &mut dyn Conn, batch: &[Activity], now: i64) -> Result<(), ApiError>;
}

/// What a drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    pub handled: usize,
    /// Records are waiting and none could be handled: they are behind a transaction still
    /// running (whose records may come before them). Try again soon: no write may say when.
    pub held: bool,
}

/// Handles every record waiting for `consumer` that can be handled now.
pub async fn drain(state: &Shared, consumer: &Arc<dyn Consumer>) -> Result<Drained, ApiError> {
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
            return Ok(Drained { handled: total, held: false });
        }
        let now = state.clock.now();
        let consumer2 = consumer.clone();
        let n = state
            .store
            .write_content(move |c| -> Result<usize, ApiError> {
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
        if n == 0 {
            return Ok(Drained { handled: total, held: true });
        }
        total += n;
        // A short batch: the rest waits for the next pass (the next write, or a retry if held).
        if (n as i64) < BATCH {
            return Ok(Drained { handled: total, held: false });
        }
    }
}

/// A busy worker's passes are at least this far apart, so one pass serves the writes made
/// meanwhile: under a thousand writes a second, a pass per write would cost each worker's
/// queries a thousand times a second (and each pass's own write wakes the others).
pub const GATHER: Duration = Duration::from_millis(10);

/// The wake-ups of a background worker: after every write of this process (or `poll`, for
/// writes of other nodes), never sooner than [`GATHER`] after the previous pass began.
pub struct Wakeups {
    writes: tokio::sync::watch::Receiver<u64>,
    poll: Duration,
    last: tokio::time::Instant,
}

impl Wakeups {
    pub fn new(state: &Shared, poll: Duration) -> Wakeups {
        Wakeups { writes: state.store.subscribe_writes(), poll, last: tokio::time::Instant::now() }
    }

    /// Marks the start of a pass: writes from now on wake the next one.
    pub fn begin(&mut self) {
        self.writes.borrow_and_update();
        self.last = tokio::time::Instant::now();
    }

    /// Waits for a write, `poll`, or `also`; false when the store is gone.
    pub async fn wait(&mut self, also: impl std::future::Future<Output = ()>) -> bool {
        tokio::select! {
            r = self.writes.changed() => if r.is_err() { return false },
            _ = also => {}
            _ = tokio::time::sleep(self.poll) => {}
        }
        tokio::time::sleep_until(self.last + GATHER).await;
        true
    }
}

/// Runs a consumer until the process ends: drains, then sleeps until the next write.
pub fn spawn(state: Shared, consumer: Arc<dyn Consumer>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut wake = Wakeups::new(&state, POLL);
        // Held records are retried after GATHER, then ever less often (a long transaction may
        // hold them), up to POLL.
        let mut retry = GATHER;
        loop {
            wake.begin();
            match drain(&state, &consumer).await {
                Ok(d) if d.held => {
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(POLL);
                    continue;
                }
                Ok(_) => retry = GATHER,
                Err(e) => {
                    tracing::warn!(consumer = consumer.name(), error = %e.message, "activity consumer failed; retrying");
                    tokio::time::sleep(POLL).await;
                }
            }
            if !wake.wait(std::future::pending()).await {
                return;
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
