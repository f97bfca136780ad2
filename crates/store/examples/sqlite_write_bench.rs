//! Durable write throughput on SQLite (synchronous=FULL): 20,000 small
//! inserts from 64 concurrent tasks, group-committed by the writer thread.
//! `cargo run --release -p platform-store --example sqlite_write_bench [TASKS]`

use std::time::Instant;

use platform_store::testing::test_database;
use platform_store::{params, Backend, DbError, Store, StoreOptions};

const WRITES: usize = 20_000;

#[tokio::main]
async fn main() -> Result<(), DbError> {
    let tasks: usize = std::env::args().nth(1).map_or(64, |a| a.parse().expect("TASKS must be a number"));
    let db = test_database(Backend::Sqlite).expect("sqlite test database");
    let store = Store::open(StoreOptions::new(&db.url)).await?;
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (t..WRITES).step_by(tasks) {
                    store
                        .write(move |c| {
                            c.execute(
                                "INSERT INTO refs (repo_id, name, sha, updated_at) VALUES (?, ?, ?, ?)",
                                params![t as i64, format!("refs/heads/b{i}"), "0123456789abcdef0123456789abcdef01234567", 0],
                            )
                        })
                        .await?;
                }
                Ok::<_, DbError>(())
            })
        })
        .collect();
    for t in handles {
        t.await.expect("task")?;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = store.read(|c| c.query_i64("SELECT COUNT(*) FROM refs", &[])).await?;
    assert_eq!(n as usize, WRITES);
    println!("{WRITES} durable inserts from {tasks} tasks in {secs:.2}s: {:.0} writes/s", WRITES as f64 / secs);

    let start = Instant::now();
    for i in 0..WRITES {
        let name = format!("refs/heads/b{i}");
        store.read(move |c| c.query_one("SELECT sha FROM refs WHERE repo_id = ? AND name = ?", params![(i % tasks) as i64, name])).await?;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{WRITES} point reads in {secs:.2}s: {:.0} reads/s ({:.1} µs each)", WRITES as f64 / secs, secs * 1e6 / WRITES as f64);
    store.close().await;
    Ok(())
}
