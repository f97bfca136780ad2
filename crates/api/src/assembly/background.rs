//! The server's background workers, started together and stopped together: the binary and the
//! test harness call [`spawn_workers`], and shut the handle down before the store closes.
use std::sync::Arc;

use crate::ops::outbox::{self, Consumer};
use crate::state::Shared;
use crate::worker::Workers;

/// Starts every background worker of the server; requests' jobs on `state` run with them.
pub fn spawn_workers(state: &Shared) -> Workers {
    let mut workers = Workers::new(state.store.subscribe_writes());
    workers.adopt(&state.jobs);
    let consumers: [Arc<dyn Consumer>; 2] = [
        Arc::new(crate::ops::notifications::produce::Notifications { urls: state.urls.clone() }),
        Arc::new(crate::ops::hooks::deliveries::WebhookConsumer { urls: state.urls.clone() }),
    ];
    for c in consumers {
        outbox::start(&mut workers, state, c);
    }
    crate::ops::hooks::deliveries::start_sender(&mut workers, state);
    crate::ops::workflow_runs::engine::start_ticker(&mut workers, state);
    crate::ops::source_imports::worker::start(&mut workers, state);
    crate::ops::insights::flush::start_flusher(&mut workers, state);
    crate::ops::git_hosting::refs::start_reconciler(&mut workers, state);
    workers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn shutdown_stops_every_worker_before_the_store_closes() {
        let db = platform_store::testing::test_database(platform_store::Backend::Sqlite).unwrap();
        let store = platform_store::Store::open(platform_store::StoreOptions::new(&db.url)).await.unwrap();
        let state = crate::AppState::new(store.clone(), Arc::new(platform_core::Clock::manual()), crate::ApiConfig::for_tests());
        let workers = spawn_workers(&state);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        let stopped = workers.shutdown().await;
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "idle workers stop at once");
        let mut names: Vec<_> = stopped.finished.iter().map(|n| n.as_ref()).collect();
        names.sort();
        let want = [
            "git reconciler",
            "import worker",
            "insights flusher",
            "notifications consumer",
            "webhook sender",
            "webhooks consumer",
            "workflow run engine",
        ];
        assert_eq!(names, want);
        assert!(stopped.aborted.is_empty(), "{:?}", stopped.aborted);
        store.close().await;
    }
}
