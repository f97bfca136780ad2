//! Writing API insights: the recorder's buffers (`crate::usage_log`), aggregated, into the
//! store — every second by the flusher, and before every query so its answer includes every
//! request made before it.
use std::collections::HashMap;
use std::time::Duration;

use foldhash::quality::RandomState;
use platform_store::domain::accounts;
use platform_store::domain::insights as store;
use platform_store::DbError;

use crate::error::ApiError;
use crate::state::Shared;
use crate::usage_log::{Drained, Login};
use crate::worker::{Context, Next, Work, WorkError, Worker, Workers};

/// Writes every buffered record; returns how many it took. Safe to call at any
/// time (queries call it so their answers include every request made before them).
pub async fn flush(app: &Shared) -> Result<usize, ApiError> {
    let ins = &app.insights;
    let _one = ins.flushing.lock().await;
    let Some(Drained { entries: pending, requests: n }) = ins.drain() else { return Ok(0) };
    app.store
        .write_unobserved(move |c| -> Result<(), DbError> {
            // Logins resolve once per flush; those naming no organization are dropped.
            let mut orgs: HashMap<Login, Option<i64>, RandomState> = HashMap::default();
            let mut entries = Vec::with_capacity(pending.len());
            for (login, mut e) in pending {
                let id = match orgs.get(&login) {
                    Some(id) => *id,
                    None => {
                        let id = accounts::by_login(c, login.as_str())?.filter(|a| a.is_org()).map(|a| a.id);
                        orgs.insert(login, id);
                        id
                    }
                };
                if let Some(id) = id {
                    e.org_id = id;
                    entries.push(e);
                }
            }
            store::insert(c, &entries)
        })
        .await?;
    Ok(n)
}

/// Starts the flusher: flushes every second, sooner when a buffer fills. The server flushes
/// once more after the workers stop, before the store closes.
pub fn start_flusher(workers: &mut Workers, app: &Shared) {
    if app.insights.enabled {
        let worker = Worker { name: "insights flusher".into(), poll: Duration::from_secs(1), on_writes: false };
        workers.start(worker, Flusher { app: app.clone() });
    }
}

struct Flusher {
    app: Shared,
}

impl Work for Flusher {
    async fn pass(&mut self) -> Result<Next, WorkError> {
        flush(&self.app).await.context("flushing recorded requests (the batch is lost)")?;
        Ok(Next::Wait)
    }

    /// A buffer filled.
    fn woken(&mut self) -> impl std::future::Future<Output = ()> + Send {
        self.app.insights.wake.notified()
    }
}
