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
use crate::worker::{Context, Next, Work, WorkError, Worker, Workers, GATHER};

/// Records handled per transaction.
const BATCH: i64 = 256;

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
        #[allow(clippy::disallowed_methods)] // see `Consumer::drain`: no access changes
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

/// Runs a consumer as a worker: drains whenever woken (by a write, or the poll for writes of
/// other nodes); records held by a running transaction are retried after [`GATHER`], then ever
/// less often (a long transaction may hold them), up to the poll.
pub fn start(workers: &mut Workers, state: &Shared, consumer: Arc<dyn Consumer>) {
    // The poll finds the writes of other nodes sharing a PostgreSQL database.
    let worker = Worker { name: format!("{} consumer", consumer.name()).into(), poll: Duration::from_secs(1), on_writes: true };
    let max_retry = worker.poll;
    workers.start(worker, Consuming { state: state.clone(), consumer, retry: GATHER, max_retry });
}

struct Consuming {
    state: Shared,
    consumer: Arc<dyn Consumer>,
    retry: Duration,
    max_retry: Duration,
}

impl Work for Consuming {
    async fn pass(&mut self) -> Result<Next, WorkError> {
        if drain(&self.state, &self.consumer).await.context("handing activity to its consumer")?.held {
            let retry = self.retry;
            self.retry = (retry * 2).min(self.max_retry);
            return Ok(Next::After(retry));
        }
        self.retry = GATHER;
        Ok(Next::Wait)
    }
}
