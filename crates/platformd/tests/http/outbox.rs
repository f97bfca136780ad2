//! The activity outbox under concurrent writers whose transactions commit out of id order:
//! a consumer draining all the while handles every record exactly once.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use platform_api::ops::outbox::{drain, Consumer};
use platform_api::AppState;
use platform_core::Clock;
use platform_store::domain::activity::{self, Activity, NewActivity};
use platform_store::{Conn, DbError};

use crate::both;

/// Remembers the ids it handled.
struct Recorder(Arc<Mutex<Vec<i64>>>);

impl Consumer for Recorder {
    fn name(&self) -> &'static str {
        "test-recorder"
    }
    fn handle(&self, _c: &mut dyn Conn, batch: &[Activity], _now: i64) -> Result<(), platform_api::error::ApiError> {
        self.0.lock().unwrap().extend(batch.iter().map(|a| a.id));
        Ok(())
    }
}

/// 16 writers for 3 s spread over `stores` (nodes sharing one database), one consumer per node
/// draining all the while: every record handled exactly once.
async fn every_record_once(stores: Vec<platform_store::Store>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let consumers: Vec<(platform_api::Shared, Arc<dyn Consumer>)> = stores
        .iter()
        .map(|st| {
            (
                AppState::new(st.clone(), Arc::new(Clock::manual()), crate::harness::Options::default().api),
                Arc::new(Recorder(seen.clone())) as Arc<dyn Consumer>,
            )
        })
        .collect();
    let written = Arc::new(Mutex::new(Vec::new()));
    let until = Instant::now() + Duration::from_secs(3);
    // 16 writers; each transaction takes its id, then lingers a little before it commits, so
    // later ids often commit first.
    let writers: Vec<_> = (0..16u64)
        .map(|w| {
            let (store, written) = (stores[w as usize % stores.len()].clone(), written.clone());
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < until {
                    n += 1;
                    let linger = Duration::from_millis((w * 7 + n * 13) % 23);
                    let id = store
                        .write(move |c| -> Result<i64, DbError> {
                            let payload = serde_json::json!({"w": w});
                            let id = activity::record(
                                c,
                                &NewActivity {
                                    kind: "PushEvent",
                                    actor_id: None,
                                    repo_id: None,
                                    org_id: None,
                                    public: true,
                                    payload: &payload,
                                },
                                0,
                            )?;
                            std::thread::sleep(linger);
                            Ok(id)
                        })
                        .await
                        .unwrap();
                    written.lock().unwrap().push(id);
                }
            })
        })
        .collect();
    // Each node's consumer drains all the while.
    let drains: Vec<_> = consumers
        .iter()
        .cloned()
        .map(|(state, consumer)| {
            tokio::spawn(async move {
                while Instant::now() < until {
                    drain(&state, &consumer).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        })
        .collect();
    for w in writers.into_iter().chain(drains) {
        w.await.unwrap();
    }
    // Records may be held back a little longer by transactions still running elsewhere on the
    // server (other tests' included): drain until none is.
    for (state, consumer) in &consumers {
        let deadline = Instant::now() + Duration::from_secs(20);
        while drain(state, consumer).await.unwrap() != Default::default() {
            assert!(Instant::now() < deadline, "records held back for 20 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let mut seen = seen.lock().unwrap().clone();
    let written = written.lock().unwrap().clone();
    assert!(written.len() > 100, "{} records", written.len());
    let handled = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), handled, "a record was handled twice");
    let missing: Vec<i64> = written.iter().filter(|id| seen.binary_search(id).is_err()).copied().collect();
    assert!(
        missing.is_empty(),
        "{} of {} records never handled, e.g. {:?}",
        missing.len(),
        written.len(),
        &missing[..missing.len().min(10)]
    );
    assert_eq!(seen.len(), written.len(), "records handled that were not written");
}

both!(every_record_once_under_concurrent_writers, |s| {
    every_record_once(vec![s.store.clone()]).await;
});

/// Two nodes on one PostgreSQL database: writers on both, a consumer on each.
#[tokio::test]
async fn every_record_once_on_two_nodes() {
    let Some(a) = crate::harness::start(platform_store::Backend::Postgres, Default::default()).await else { return };
    let b = a.peer(a.opts.clone()).await;
    every_record_once(vec![a.store.clone(), b.store.clone()]).await;
}
