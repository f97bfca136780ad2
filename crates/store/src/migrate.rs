//! Embedded schema migrations, one SQL file per dialect with the same name.

use crate::sql::{Backend, Conn, DbError, Value};

pub(crate) const TABLE: &str = "schema_migrations";

/// Arbitrary constant key for `pg_advisory_xact_lock`: serializes nodes
/// migrating the same database at once.
const PG_LOCK_KEY: i64 = 0x0070_6c61_746d_6967; // "platmig"

pub(crate) struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

impl Migration {
    fn sql(&self, backend: Backend) -> &'static str {
        match backend {
            Backend::Sqlite => self.sqlite,
            Backend::Postgres => self.postgres,
        }
    }
}

/// Leading decimal digits of a migration name (`0001_x` -> 1).
const fn version_of(name: &str) -> i64 {
    let b = name.as_bytes();
    let mut i = 0;
    let mut v = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v * 10 + (b[i] - b'0') as i64;
        i += 1;
    }
    assert!(i > 0 && i < b.len() && b[i] == b'_', "migration name must look like NNNN_name");
    v
}

/// Each name is listed once; a file missing from either dialect's folder
/// is a compile error.
macro_rules! migrations {
    ($($name:literal),* $(,)?) => {
        &[$(Migration {
            version: version_of($name),
            name: $name,
            sqlite: include_str!(concat!("../migrations/sqlite/", $name, ".sql")),
            postgres: include_str!(concat!("../migrations/postgres/", $name, ".sql")),
        }),*]
    };
}

pub(crate) static MIGRATIONS: &[Migration] = migrations![
    "0001_foundation",
    "0002_commits",
    "0003_outbox",
    "0004_feeds",
    "0005_webhooks",
    "0006_notifications",
    "0007_runs",
    "0008_orgsec",
    "0009_rulesets",
    "0010_depbot",
    "0011_imports",
    "0012_insights",
    "0013_outbox_order",
    "0014_generation",
    "0015_status_count",
    "0016_repo_homepage",
    "0017_public_event_feeds",
    "0018_git_hosting",
    "0019_rule_suites",
    "0020_delete_event_feeds",
    "0021_hook_tombstones",
    "0022_deployment_statuses",
    "0023_planned_duration"
];

/// Did `applied` (what [`apply`] returned) upgrade a database made before (not create one)?
pub(crate) fn upgraded(applied: &[String]) -> bool {
    !applied.is_empty() && applied.len() < MIGRATIONS.len()
}

/// Applies every pending migration, each in its own transaction.
/// `conn` must not be inside a transaction.
pub(crate) fn apply(conn: &mut dyn Conn) -> Result<Vec<String>, DbError> {
    let backend = conn.backend();
    in_tx(conn, |c| {
        c.batch(&format!(
            "CREATE TABLE IF NOT EXISTS {TABLE} (version BIGINT PRIMARY KEY, \
             name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
        ))
    })?;
    let mut applied = Vec::new();
    for m in MIGRATIONS {
        let done = in_tx(conn, |c| {
            // Re-check under the lock: another node may have just applied it.
            let sql = format!("SELECT 1 FROM {TABLE} WHERE version = ?");
            if c.query_opt(&sql, &[Value::Int(m.version)])?.is_some() {
                return Ok(false);
            }
            c.batch(m.sql(backend))?;
            c.execute(
                &format!("INSERT INTO {TABLE} (version, name, applied_at) VALUES (?, ?, ?)"),
                &[Value::Int(m.version), Value::from(m.name), Value::Int(now())],
            )?;
            Ok(true)
        })
        .map_err(|e| DbError::new(e.kind, format!("migration {} failed: {}", m.name, e.message)))?;
        if done {
            tracing::info!(migration = m.name, "applied migration");
            applied.push(m.name.to_string());
        }
    }
    Ok(applied)
}

fn in_tx<T>(conn: &mut dyn Conn, f: impl FnOnce(&mut dyn Conn) -> Result<T, DbError>) -> Result<T, DbError> {
    let backend = conn.backend();
    conn.batch(match backend {
        Backend::Sqlite => "BEGIN IMMEDIATE",
        Backend::Postgres => "BEGIN",
    })?;
    let r = (|| {
        if backend == Backend::Postgres {
            conn.query("SELECT pg_advisory_xact_lock(?)", &[Value::Int(PG_LOCK_KEY)])?;
        }
        f(conn)
    })();
    match r {
        Ok(v) => conn.batch("COMMIT").map(|_| v),
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Readiness check: every embedded migration is recorded as applied.
pub(crate) fn check_applied(conn: &mut dyn Conn) -> Result<(), DbError> {
    let latest = MIGRATIONS.iter().map(|m| m.version).max().unwrap_or(0);
    let n = conn.query_i64(&format!("SELECT COUNT(*) FROM {TABLE} WHERE version <= ?"), &[Value::Int(latest)])?;
    if n < MIGRATIONS.len() as i64 {
        return Err(DbError::unavailable(format!("{} of {} migrations applied", n, MIGRATIONS.len())));
    }
    Ok(())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn names_on_disk(dialect: &str) -> BTreeSet<String> {
        let dir = format!("{}/migrations/{dialect}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .map(|f| f.strip_suffix(".sql").unwrap_or_else(|| panic!("stray file {f} in {dir}")).to_string())
            .collect()
    }

    #[test]
    fn folders_match_embedded_list() {
        let listed: BTreeSet<String> = MIGRATIONS.iter().map(|m| m.name.to_string()).collect();
        assert_eq!(names_on_disk("sqlite"), listed, "migrations/sqlite differs from the migrations! list");
        assert_eq!(names_on_disk("postgres"), listed, "migrations/postgres differs from the migrations! list");
    }

    #[test]
    fn versions_strictly_increase() {
        for w in MIGRATIONS.windows(2) {
            assert!(w[0].version < w[1].version, "{} must come before {}", w[0].name, w[1].name);
        }
        assert_eq!(MIGRATIONS[0].version, 1);
    }
}
