//! Helpers for test suites: a fresh database per test on either backend.

use std::hash::{BuildHasher, Hasher};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::sql::Backend;

const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// These helpers are sync and called from `#[tokio::test]`s (and from drops), where no runtime
/// may be blocked on: each runs on a plain thread with a runtime of its own.
fn on_plain_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().expect("helper thread panicked")
}

/// Connects to `url` and runs `sql` (one or more statements); call on a plain thread.
fn pg_batch(url: &str, sql: &str) -> Result<(), tokio_postgres::Error> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let mut config: tokio_postgres::Config = url.parse()?;
        config.connect_timeout(Duration::from_secs(3));
        let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        client.batch_execute(sql).await
    })
}

/// `PLATFORM_TEST_POSTGRES_URL`, or the local default, if it answers.
/// Unreachable: panics when `PLATFORM_REQUIRE_POSTGRES=1`, else warns loudly
/// and returns None (PostgreSQL tests skip).
pub fn postgres_base_url() -> Option<String> {
    static PROBE: OnceLock<Option<String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let url = std::env::var("PLATFORM_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
            let probe_url = url.clone();
            let probe = on_plain_thread(move || {
                pg_batch(&probe_url, "SELECT 1").map_err(|e| match std::error::Error::source(&e) {
                    Some(cause) => format!("{e}: {cause}"),
                    None => e.to_string(),
                })
            });
            match probe {
                Ok(_) => Some(url),
                Err(e) if std::env::var("PLATFORM_REQUIRE_POSTGRES").as_deref() == Ok("1") => {
                    panic!("PostgreSQL not reachable at {url} ({e}) and PLATFORM_REQUIRE_POSTGRES=1")
                }
                Err(e) => {
                    // Straight to the stderr handle: libtest captures `eprintln!`
                    // of passing tests, and this must be seen.
                    let _ = writeln!(std::io::stderr(), "!!! PostgreSQL not reachable at {url} ({e}): PostgreSQL tests SKIPPED !!!");
                    None
                }
            }
        })
        .clone()
}

enum Guard {
    Dir(PathBuf),
    Schema { base_url: String, schema: String },
}

/// A throwaway database; removed (best effort) on drop.
pub struct TestDatabase {
    pub url: String,
    guard: Guard,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        match &self.guard {
            Guard::Dir(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Guard::Schema { base_url, schema } => {
                let (base_url, sql) = (base_url.clone(), format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
                on_plain_thread(move || {
                    let _ = pg_batch(&base_url, &sql);
                });
            }
        }
    }
}

/// Unique per process run: pid, a counter, and a random salt.
fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let salt = std::collections::hash_map::RandomState::new().build_hasher().finish() & 0xff_ffff;
    format!("{prefix}_{}_{n}_{salt:06x}", std::process::id())
}

/// SQLite: a fresh file in a new temporary directory. PostgreSQL: a fresh
/// schema, selected through the URL's `search_path` option; None when
/// PostgreSQL tests are skipped.
pub fn test_database(backend: Backend) -> Option<TestDatabase> {
    match backend {
        Backend::Sqlite => {
            let dir = std::env::temp_dir().join(unique_name("platform-test"));
            std::fs::create_dir_all(&dir).expect("create test database dir");
            let url = format!("sqlite://{}", dir.join("test.db").display());
            Some(TestDatabase { url, guard: Guard::Dir(dir) })
        }
        Backend::Postgres => {
            let base_url = postgres_base_url()?;
            let schema = unique_name("t");
            let (create_url, sql) = (base_url.clone(), format!("CREATE SCHEMA \"{schema}\""));
            on_plain_thread(move || pg_batch(&create_url, &sql)).unwrap_or_else(|e| panic!("cannot create test schema: {e}"));
            let sep = if base_url.contains('?') { '&' } else { '?' };
            let url = format!("{base_url}{sep}options=-c%20search_path%3D{schema}");
            Some(TestDatabase { url, guard: Guard::Schema { base_url, schema } })
        }
    }
}
