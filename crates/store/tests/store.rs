//! Behaviour tests, run against both backends. PostgreSQL cases skip (loudly)
//! when no server answers; set PLATFORM_REQUIRE_POSTGRES=1 to make that fatal.

use std::collections::HashSet;

use platform_store::testing::{test_database, TestDatabase};
use platform_store::{params, Backend, Conn, DbError, DbErrorKind, Store, StoreOptions, Value};

async fn open(db: &TestDatabase) -> Store {
    Store::open(StoreOptions::new(&db.url)).await.expect("open store")
}

/// Declares one test per backend for an `async fn(Store, TestDatabase)`.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                let db = super::test_database(super::Backend::Sqlite).unwrap();
                let store = super::open(&db).await;
                super::$name(store, db).await;
            })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                let Some(db) = super::test_database(super::Backend::Postgres) else { return };
                let store = super::open(&db).await;
                super::$name(store, db).await;
            })*
        }
    };
}

both_backends!(
    value_roundtrip,
    unique_violation_maps_to_unique,
    write_rollback_on_err,
    swallowed_statement_failure_fails_write,
    panicking_write_does_not_kill_writer,
    group_commit_many_concurrent_writes,
    reset_empties_tables_and_restarts_ids,
    migrations_are_idempotent,
    reads_see_committed_writes,
    execute_counts_and_placeholders,
    close_is_idempotent,
    generations_follow_what_a_write_may_change,
    an_attempt_recorded_while_its_hook_is_deleted_waits_for_the_delete,
    concurrent_reads_each_get_their_own_answers,
    a_failing_or_panicking_read_fails_alone,
);

fn now() -> i64 {
    1_700_000_000
}

fn insert_account(c: &mut dyn Conn, login: &str) -> Result<i64, DbError> {
    c.query_i64(
        "INSERT INTO accounts (kind, login, login_lower, site_admin, created_at, updated_at) \
         VALUES ('User', ?, ?, ?, ?, ?) RETURNING id",
        params![login, login.to_lowercase(), false, now(), now()],
    )
}

async fn count_accounts(store: &Store) -> i64 {
    store.read(|c| c.query_i64("SELECT COUNT(*) FROM accounts", &[])).await.unwrap()
}

async fn value_roundtrip(store: Store, _db: TestDatabase) {
    let ddl = match store.backend() {
        Backend::Sqlite => "CREATE TABLE kinds (id INTEGER PRIMARY KEY, i BIGINT, f REAL, t TEXT, b INTEGER, y BLOB)",
        Backend::Postgres => "CREATE TABLE kinds (id BIGINT PRIMARY KEY, i BIGINT, f DOUBLE PRECISION, t TEXT, b BOOLEAN, y BYTEA)",
    };
    store.write(move |c| c.batch(ddl)).await.unwrap();
    let bytes: Vec<u8> = (0..=255).collect();
    let y = bytes.clone();
    store
        .write(move |c| {
            c.execute(
                "INSERT INTO kinds (id, i, f, t, b, y) VALUES (?, ?, ?, ?, ?, ?)",
                params![1, i64::MIN, 1.25, "héllo 'quoted' ?", true, y],
            )?;
            c.execute(
                "INSERT INTO kinds (id, i, f, t, b, y) VALUES (?, ?, ?, ?, ?, ?)",
                params![2, None::<i64>, None::<f64>, None::<String>, None::<bool>, None::<Vec<u8>>],
            )?;
            // Int 0/1 binds into a boolean column on both backends.
            c.execute("INSERT INTO kinds (id, i, f, t, b, y) VALUES (?, ?, ?, ?, ?, ?)", params![3, 42, 7, "", 0, Vec::<u8>::new()])
        })
        .await
        .unwrap();
    let rows = store.read(|c| c.query("SELECT i, f, t, b, y FROM kinds ORDER BY id", &[])).await.unwrap();
    let r = &rows[0];
    assert_eq!(r.i64(0), i64::MIN);
    assert_eq!(r.f64(1), 1.25);
    assert_eq!(r.str(2), "héllo 'quoted' ?");
    assert!(r.bool(3));
    assert_eq!(r.bytes(4), &bytes[..]);
    let r = &rows[1];
    assert!(r.0.iter().all(|v| *v == Value::Null), "{r:?}");
    assert_eq!((r.opt_i64(0), r.opt_f64(1), r.opt_str(2)), (None, None, None));
    let r = &rows[2];
    assert_eq!((r.i64(0), r.f64(1), r.str(2), r.bool(3), r.bytes(4)), (42, 7.0, "", false, &[][..]));
    // Aggregates read back as Int on both backends (SUM(bigint) is NUMERIC on PostgreSQL).
    let sum = store.read(|c| c.query_i64("SELECT SUM(i) FROM kinds WHERE id = ?", params![3])).await.unwrap();
    assert_eq!(sum, 42);
    let found = store.read(|c| c.query_opt("SELECT id FROM kinds WHERE b = ? AND t = ?", params![true, "héllo 'quoted' ?"])).await.unwrap();
    assert_eq!(found.unwrap().i64(0), 1);
}

async fn unique_violation_maps_to_unique(store: Store, _db: TestDatabase) {
    store.write(|c| insert_account(c, "Octo")).await.unwrap();
    let err = store.write(|c| insert_account(c, "octo")).await.unwrap_err();
    assert_eq!(err.kind, DbErrorKind::Unique, "{err}");
    // Composite primary keys too.
    let err = store
        .write(|c| {
            for _ in 0..2 {
                c.execute("INSERT INTO org_members (org_id, user_id, role) VALUES (?, ?, ?)", params![1, 2, "member"])?;
            }
            Ok::<_, DbError>(())
        })
        .await
        .unwrap_err();
    assert_eq!(err.kind, DbErrorKind::Unique, "{err}");
    assert_eq!(count_accounts(&store).await, 1);
}

#[derive(Debug)]
#[allow(dead_code)] // Db's payload is only shown by Debug
enum AppError {
    Db(DbError),
    Rejected,
}

impl From<DbError> for AppError {
    fn from(e: DbError) -> Self {
        AppError::Db(e)
    }
}

async fn write_rollback_on_err(store: Store, _db: TestDatabase) {
    let r: Result<(), AppError> = store
        .write(|c| {
            insert_account(c, "a")?;
            insert_account(c, "b")?;
            Err(AppError::Rejected)
        })
        .await;
    assert!(matches!(r, Err(AppError::Rejected)));
    assert_eq!(count_accounts(&store).await, 0);
}

async fn swallowed_statement_failure_fails_write(store: Store, _db: TestDatabase) {
    store.write(|c| insert_account(c, "taken")).await.unwrap();
    let r = store
        .write(|c| {
            insert_account(c, "fresh")?;
            let _ = insert_account(c, "taken"); // error ignored by buggy code
            Ok::<_, DbError>(())
        })
        .await;
    assert_eq!(r.unwrap_err().kind, DbErrorKind::Unique);
    assert_eq!(count_accounts(&store).await, 1, "the whole closure must be rolled back");
}

async fn panicking_write_does_not_kill_writer(store: Store, _db: TestDatabase) {
    let r: Result<(), DbError> = store
        .write(|c| {
            insert_account(c, "ghost")?;
            panic!("boom");
        })
        .await;
    let err = r.unwrap_err();
    assert_eq!(err.kind, DbErrorKind::Other);
    assert!(err.message.contains("boom"), "{err}");
    let r: Result<(), DbError> = store.read(|_| panic!("read boom")).await;
    assert!(r.unwrap_err().message.contains("read boom"));
    store.write(|c| insert_account(c, "alive")).await.unwrap();
    let logins = store.read(|c| c.query("SELECT login FROM accounts", &[])).await.unwrap();
    assert_eq!(logins.len(), 1);
    assert_eq!(logins[0].str(0), "alive");
}

async fn group_commit_many_concurrent_writes(store: Store, _db: TestDatabase) {
    const TASKS: usize = 50;
    const PER_TASK: usize = 40; // 2,000 writes
    store.write(|c| insert_account(c, "dup")).await.unwrap();
    let mut handles = Vec::new();
    for t in 0..TASKS {
        let store = store.clone();
        handles.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for i in 0..PER_TASK {
                // One job in the stream collides and one panics after
                // inserting; each must fail alone.
                let login = match (t, i) {
                    (7, 20) => "dup".to_string(),
                    (3, 10) => "panic".to_string(),
                    _ => format!("u{t}_{i}"),
                };
                let l = login.clone();
                let r = store
                    .write(move |c| {
                        let id = insert_account(c, &l)?;
                        assert_ne!(l, "panic", "job panics mid-batch");
                        Ok::<_, DbError>(id)
                    })
                    .await;
                out.push((login, r));
            }
            out
        }));
    }
    let mut ids = HashSet::new();
    let mut failures = Vec::new();
    for h in handles {
        for (login, r) in h.await.unwrap() {
            match r {
                Ok(id) => {
                    assert!(ids.insert(id), "id {id} returned twice");
                    let stored = store.read(move |c| c.query_one("SELECT login FROM accounts WHERE id = ?", params![id])).await.unwrap();
                    assert_eq!(stored.str(0), login, "each job gets its own result");
                }
                Err(e) => failures.push((login, e.kind)),
            }
        }
    }
    failures.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(failures, [("dup".to_string(), DbErrorKind::Unique), ("panic".to_string(), DbErrorKind::Other)]);
    assert_eq!(ids.len(), TASKS * PER_TASK - 2);
    // The setup row plus every successful job; the panicked insert is gone.
    assert_eq!(count_accounts(&store).await, (TASKS * PER_TASK - 1) as i64);
}

async fn reset_empties_tables_and_restarts_ids(store: Store, _db: TestDatabase) {
    for l in ["a", "b", "c"] {
        store.write(move |c| insert_account(c, l)).await.unwrap();
    }
    store
        .write(|c| c.execute("INSERT INTO refs (repo_id, name, sha, updated_at) VALUES (1, 'refs/heads/main', 'abc', 0)", &[]))
        .await
        .unwrap();
    store.reset().await.unwrap();
    assert_eq!(count_accounts(&store).await, 0);
    assert_eq!(store.read(|c| c.query_i64("SELECT COUNT(*) FROM refs", &[])).await.unwrap(), 0);
    assert_eq!(store.write(|c| insert_account(c, "again")).await.unwrap(), 1);
    store.ping().await.unwrap();
}

async fn migrations_are_idempotent(store: Store, db: TestDatabase) {
    store.ping().await.unwrap();
    assert_eq!(store.migrate().await.unwrap(), Vec::<String>::new());
    let again = open(&db).await;
    assert_eq!(again.migrate().await.unwrap(), Vec::<String>::new());
    let applied = again.read(|c| c.query("SELECT version, name FROM schema_migrations ORDER BY version", &[])).await.unwrap();
    let names: Vec<(i64, String)> = applied.iter().map(|r| (r.i64(0), r.string(1))).collect();
    // Every migration file, in version order (each branch adds its own).
    let mut files: Vec<(i64, String)> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".sql").to_string())
        .map(|n| (n[..4].parse().unwrap(), n))
        .collect();
    files.sort();
    assert_eq!(&names[..3], &[(1, "0001_foundation".to_string()), (2, "0002_commits".into()), (3, "0003_outbox".into())]);
    assert_eq!(names, files);
    again.close().await;
    store.ping().await.unwrap();
}

async fn reads_see_committed_writes(store: Store, _db: TestDatabase) {
    for i in 0..200 {
        let id = store.write(move |c| insert_account(c, &format!("r{i}"))).await.unwrap();
        let row = store.read(move |c| c.query_opt("SELECT login FROM accounts WHERE id = ?", params![id])).await.unwrap();
        assert_eq!(row.expect("committed row visible").string(0), format!("r{i}"));
    }
}

/// Every write moves the write generation; only a write that may change access moves the access
/// one; unobserved writes move neither. On PostgreSQL a second store on the same database (a
/// second node) observes what the first wrote.
#[allow(clippy::disallowed_methods)]
async fn generations_follow_what_a_write_may_change(store: Store, db: TestDatabase) {
    let observe = |s: &Store| {
        let s = s.clone();
        async move { s.observe().await.unwrap() }
    };
    let g0 = observe(&store).await;
    store.write(|c| insert_account(c, "g1")).await.unwrap();
    let g1 = observe(&store).await;
    assert!(g1.writes > g0.writes && g1.access > g0.access, "{g0:?} -> {g1:?}");
    store.write_content(|c| insert_account(c, "g2")).await.unwrap();
    let g2 = observe(&store).await;
    assert!(g2.writes > g1.writes && g2.access == g1.access, "{g1:?} -> {g2:?}");
    store.write_unobserved(|c| insert_account(c, "g3")).await.unwrap();
    assert_eq!(observe(&store).await, g2);
    // A failed write is not acknowledged and changes nothing cached.
    let _ = store.write(|c| insert_account(c, "g1")).await;
    if store.backend() == Backend::Postgres {
        let other = open(&db).await;
        assert_eq!(observe(&other).await, observe(&store).await);
        other.write(|c| insert_account(c, "g4")).await.unwrap();
        let g4 = observe(&store).await;
        assert!(g4.writes > g2.writes && g4.access > g2.access, "{g2:?} -> {g4:?}");
        other.close().await;
    }
}

async fn execute_counts_and_placeholders(store: Store, _db: TestDatabase) {
    for l in ["x1", "x2", "x3"] {
        store.write(move |c| insert_account(c, l)).await.unwrap();
    }
    let n = store.write(|c| c.execute("UPDATE accounts SET name = '?' WHERE login <> ? AND id > ?", params!["x1", 0])).await.unwrap();
    assert_eq!(n, 2);
    let n = store.write(|c| c.execute("DELETE FROM accounts WHERE login = ?", params!["nobody"])).await.unwrap();
    assert_eq!(n, 0);
    let names = store.read(|c| c.query("SELECT name FROM accounts WHERE name IS NOT NULL", &[])).await.unwrap();
    assert!(names.iter().all(|r| r.str(0) == "?"));
    let err = store.read(|c| c.query_one("SELECT id FROM accounts WHERE id = ?", params![999])).await.unwrap_err();
    assert_eq!(err.kind, DbErrorKind::Other);
}

async fn close_is_idempotent(store: Store, _db: TestDatabase) {
    store.write(|c| insert_account(c, "before")).await.unwrap();
    store.close().await;
    store.close().await;
    if store.backend() == Backend::Sqlite {
        let err = store.write(|c| insert_account(c, "after")).await.unwrap_err();
        assert_eq!(err.kind, DbErrorKind::Unavailable);
        assert!(store.ping().await.is_err());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_schema_isolation() {
    let (Some(a), Some(b)) = (test_database(Backend::Postgres), test_database(Backend::Postgres)) else {
        return;
    };
    assert_ne!(a.url, b.url);
    let (sa, sb) = (open(&a).await, open(&b).await);
    sa.write(|c| insert_account(c, "only-in-a")).await.unwrap();
    assert_eq!(count_accounts(&sa).await, 1);
    assert_eq!(count_accounts(&sb).await, 0);
    let schema = sa.read(|c| c.query_one("SELECT current_schema()", &[])).await.unwrap().string(0);
    assert!(a.url.contains(&schema), "search_path option honoured: {schema}");
    // Several nodes migrating a fresh database at once must not race.
    let fresh = test_database(Backend::Postgres).unwrap();
    let opens = (0..4).map(|_| Store::open(StoreOptions::new(&fresh.url)));
    for s in futures_join_all(opens).await {
        s.unwrap().ping().await.unwrap();
    }
}

/// A delivery's attempt recorded while its hook is being deleted takes the rows in the order the
/// delete does (the hook, then its deliveries), so it waits for the delete instead of deadlocking
/// with it (PostgreSQL would roll one of them back: a 500 for the delete's request).
async fn an_attempt_recorded_while_its_hook_is_deleted_waits_for_the_delete(store: Store, _db: TestDatabase) {
    use platform_store::domain::hooks;
    let (hook, delivery) = store
        .write(|c| {
            let org = insert_account(c, "acme")?;
            let events = vec!["*".to_string()];
            let fields = hooks::HookFields {
                events: &events,
                active: true,
                url: "http://receiver.test/",
                content_type: "json",
                insecure_ssl: "0",
                secret_enc: None,
            };
            let hook = hooks::create(c, org, None, &fields, now())?;
            let ping = hooks::NewDelivery {
                guid: "guid",
                hook_id: hook.id,
                event: "ping",
                action: None,
                payload: "{}",
                redelivery: false,
                installation_id: None,
                repository_id: None,
                activity_at_ms: None,
            };
            hooks::enqueue(c, &ping, now())?;
            let (delivery, _) = hooks::claim(c, now(), now() + 60, 1)?.remove(0);
            Ok::<_, DbError>((hook, delivery))
        })
        .await
        .unwrap();
    let (locked, hook_locked) = tokio::sync::oneshot::channel();
    let deleter = store.clone();
    let delete = tokio::spawn(async move {
        deleter
            .write(move |c| {
                hooks::locked(c, hook.org_id, hook.id)?.expect("the hook");
                let _ = locked.send(());
                // The attempt is recorded meanwhile, on another connection.
                std::thread::sleep(std::time::Duration::from_millis(300));
                hooks::delete(c, hook.id, false, now())
            })
            .await
    });
    hook_locked.await.unwrap();
    let recorded = store
        .write(move |c| {
            let attempt = hooks::Attempt {
                state: "delivered",
                next_attempt_at: now(),
                url: "http://receiver.test/",
                status: "OK",
                status_code: 200,
                duration_ms: 1,
                request_headers: "{}",
                request_body: None,
                response_headers: "{}",
                response_body: None,
                delivered_at: now(),
            };
            hooks::record_attempt(c, &delivery, &attempt, true, 0)
        })
        .await;
    assert!(recorded.is_ok(), "{recorded:?}");
    let deleted = delete.await.unwrap();
    assert!(deleted.is_ok(), "{deleted:?}");
    assert!(store.read(move |c| hooks::get(c, hook.id)).await.unwrap().is_none());
}

/// Many reads at once, each of several statements (on PostgreSQL they share connections,
/// pipelined): every read gets the answers to its own statements, in its own order.
async fn concurrent_reads_each_get_their_own_answers(store: Store, _db: TestDatabase) {
    for l in ["a", "b", "c"] {
        store.write(move |c| insert_account(c, l)).await.unwrap();
    }
    let answers = futures_join_all((0..300i64).map(|i| {
        let store = store.clone();
        async move {
            store
                .read(move |c| {
                    let mut got = Vec::new();
                    for k in 0..3i64 {
                        got.push(c.query_i64("SELECT ? * 10 + ?", params![i, k])?);
                    }
                    got.push(c.query_i64("SELECT COUNT(*) FROM accounts WHERE id > ?", params![i % 3])?);
                    Ok::<_, DbError>(got)
                })
                .await
                .unwrap()
        }
    }))
    .await;
    for (i, got) in answers.into_iter().enumerate() {
        let i = i as i64;
        assert_eq!(got, vec![i * 10, i * 10 + 1, i * 10 + 2, 3 - i % 3]);
    }
}

/// A read whose statement fails, or whose closure panics, answers an error; the reads in flight
/// beside it and after it are answered as if it had not been.
async fn a_failing_or_panicking_read_fails_alone(store: Store, _db: TestDatabase) {
    let answers = futures_join_all((0..60i64).map(|i| {
        let store = store.clone();
        async move {
            store
                .read(move |c| match i % 3 {
                    0 => c.query_i64("SELECT no_such_column FROM accounts", &[]),
                    1 if i == 31 => panic!("read {i} panics"),
                    _ => c.query_i64("SELECT ? + 1", params![i]),
                })
                .await
        }
    }))
    .await;
    for (i, got) in answers.into_iter().enumerate() {
        let i = i as i64;
        match i % 3 {
            0 => assert_eq!(got.unwrap_err().kind, DbErrorKind::Other, "read {i}"),
            1 if i == 31 => assert!(got.unwrap_err().message.contains("read 31 panics")),
            _ => assert_eq!(got.unwrap(), i + 1, "read {i}"),
        }
    }
    assert_eq!(store.read(|c| c.query_i64("SELECT 41 + 1", &[])).await.unwrap(), 42);
}

/// PostgreSQL: reads share connections, but a slow statement does not hold up the reads that
/// come while it runs: they go to another connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_slow_read_does_not_hold_up_the_others() {
    let Some(db) = test_database(Backend::Postgres) else { return };
    let store = open(&db).await;
    let slow = {
        let store = store.clone();
        tokio::spawn(async move { store.read(|c| c.query("SELECT pg_sleep(3)::text", &[])).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    for i in 0..20i64 {
        let got = futures_join_all((0..5i64).map(|k| {
            let store = store.clone();
            async move { store.read(move |c| c.query_i64("SELECT ?::bigint + ?", params![i, k])).await.unwrap() }
        }))
        .await;
        assert_eq!(got, (0..5).map(|k| i + k).collect::<Vec<_>>());
    }
    assert!(!slow.is_finished(), "the quick reads waited for the slow one");
    assert_eq!(slow.await.unwrap().unwrap().len(), 1);
}

async fn futures_join_all<F: std::future::Future + Send + 'static>(fs: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = fs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn sqlite_url_forms() {
    let dir = test_database(Backend::Sqlite).unwrap();
    let path = dir.url.strip_prefix("sqlite://").unwrap().to_string();
    for url in [format!("sqlite:{path}"), path.clone(), format!("sqlite://{path}")] {
        let s = Store::open(StoreOptions::new(url)).await.unwrap();
        assert_eq!(s.backend(), Backend::Sqlite);
        s.close().await;
    }
    let nested = format!("{}/sub/dir/x.db", path.trim_end_matches("/test.db"));
    Store::open(StoreOptions::new(nested)).await.unwrap().ping().await.unwrap();
}

#[tokio::test]
async fn sqlite_pragmas() {
    for (full, expected) in [(true, 2), (false, 1)] {
        let db = test_database(Backend::Sqlite).unwrap();
        let opts = StoreOptions { sqlite_synchronous_full: full, ..StoreOptions::new(&db.url) };
        let store = Store::open(opts).await.unwrap();
        // The writer connection is the one whose durability matters.
        let (sync, mode) = store
            .write(|c| {
                let sync = c.query_i64("PRAGMA synchronous", &[])?;
                let mode = c.query_one("PRAGMA journal_mode", &[])?.string(0);
                Ok::<_, DbError>((sync, mode))
            })
            .await
            .unwrap();
        assert_eq!((sync, mode.as_str()), (expected, "wal"));
        // Read connections are read-only: writes must go through `write`.
        let err = store.read(|c| insert_account(c, "sneaky")).await.unwrap_err();
        assert!(err.message.contains("readonly"), "{err}");
    }
}
