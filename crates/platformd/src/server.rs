//! Wiring: store, state, seeding, the listener and graceful shutdown.
use std::sync::Arc;

use platform_api::access_log;
use platform_api::seed::{self, SeedReport};
use platform_api::{AppState, Shared};
use platform_core::Clock;
use platform_store::{Store, StoreOptions};

use crate::cli::Seeding;
use crate::config::{ClockKind, Config, LogFormat, SqliteSynchronous};

/// The demo world of the README's run command.
const DEMO_SEED: &str = include_str!("../../../demo/seed.toml");

/// Logs go to stderr through a writer thread, so a request never waits on the write itself
/// (it blocks only if that thread falls behind: no line is dropped). The thread buffers what is
/// queued and flushes whenever the queue is empty: one write per burst, not per line. Access
/// lines have a cheaper path of their own (`access_log`). Keep the guards alive for the life of
/// the process; dropping them flushes.
pub fn init_logging(c: &Config) -> LogGuards {
    let filter = tracing_subscriber::EnvFilter::try_new(&c.log).unwrap_or_else(|_| "info".into());
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr()));
    let b = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    let json = c.log_format == LogFormat::Json;
    if json {
        b.json().init();
    } else {
        b.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init();
    }
    let access = tracing::enabled!(target: access_log::TARGET, tracing::Level::INFO);
    LogGuards { _access: access_log::install(json, access, std::io::stderr()), _other: guard }
}

/// Field order is drop order: access lines are flushed first.
pub struct LogGuards {
    _access: access_log::Guard,
    _other: tracing_appender::non_blocking::WorkerGuard,
}

async fn open_store(c: &Config) -> Result<Store, String> {
    let opts = StoreOptions {
        url: c.database_url.0.clone(),
        sqlite_synchronous_full: c.sqlite_synchronous == SqliteSynchronous::Full,
        pool_size: c.db_pool_size,
    };
    Store::open(opts).await.map_err(|e| format!("database: {}", e.message))
}

fn state(c: &Config, store: Store, public_url: String, admin_token: String) -> Shared {
    let clock = Arc::new(if c.clock == ClockKind::Manual { Clock::manual() } else { Clock::system() });
    AppState::new(store, clock, c.api_config(public_url, admin_token))
}

/// Re-encrypts secrets under an external key, upgrades values in an old at-rest format, or
/// refuses a key that does not fit the database.
async fn prepare_secret_key(app: &Shared) -> Result<(), String> {
    platform_api::secrets::prepare_at_start(&app.store, app.config.secret_key).await.map(drop)
}

fn seed_text(args: &Seeding) -> Result<Option<String>, String> {
    match (&args.seed, args.demo) {
        (Some(path), _) => std::fs::read_to_string(path).map(Some).map_err(|e| format!("{path}: {e}")),
        (None, true) => Ok(Some(DEMO_SEED.to_string())),
        (None, false) => Ok(None),
    }
}

async fn run_seed(app: &Shared, text: &str, tokens_out: Option<&str>) -> Result<SeedReport, String> {
    let parsed = seed::parse(text).map_err(|e| format!("seed: {e}"))?;
    let report = seed::load(app, parsed).await.map_err(|e| format!("seed: {}", e.body(None)))?;
    if let Some(path) = tokens_out {
        let map: serde_json::Map<String, serde_json::Value> =
            report.tokens.iter().map(|(name, _, _, t)| (name.clone(), t.clone().into())).collect();
        std::fs::write(path, serde_json::to_string_pretty(&map).unwrap_or_default()).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(report)
}

fn print_report(r: &SeedReport, api: &str) {
    if !r.apps.is_empty() {
        println!("Applications (secrets shown once):");
        for (name, kind, id, secret) in &r.apps {
            println!("  {name:<22} {kind:<6} client_id={id} client_secret={secret}");
        }
    }
    if !r.tokens.is_empty() {
        println!("Tokens (shown once):");
        for (name, kind, subject, token) in &r.tokens {
            println!("  {name:<22} {kind:<15} {subject:<14} {token}");
        }
        let first = &r.tokens[0];
        println!("Try:");
        println!("  curl -H 'Authorization: Bearer {}' {api}/rate_limit", first.3);
        println!("  curl -H 'Authorization: Bearer {}' {api}/repos/acme/widgets/commits/main/status", first.3);
        println!(
            "  curl -X POST -H 'Authorization: Bearer {}' -d '{{\"state\":\"success\",\"context\":\"ci/demo\"}}' {api}/repos/acme/widgets/statuses/main",
            first.3
        );
    }
}

/// Where the generated certificate is and how the usual clients are told to trust it.
fn print_trust(path: &str) {
    let path = std::fs::canonicalize(path).map_or_else(|_| path.to_string(), |p| p.display().to_string());
    println!("TLS certificate (self-signed, generated now): {path}");
    println!("  trust it: export SSL_CERT_FILE={path} NODE_EXTRA_CA_CERTS={path} REQUESTS_CA_BUNDLE={path}  (curl: --cacert {path})");
}

/// Raises the soft open-file limit to the hard one (every connection is a descriptor, and the
/// connection cap should be what bounds them, not a low default); returns the limit in force.
fn raise_open_files() -> Option<u64> {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
            return None;
        }
        if l.rlim_cur < l.rlim_max {
            let wanted = libc::rlimit { rlim_cur: l.rlim_max, rlim_max: l.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &wanted) == 0 {
                tracing::info!(from = l.rlim_cur, to = l.rlim_max, "raised the open-file limit");
                #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every target
                return Some(l.rlim_max as u64);
            }
        }
        #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every target
        Some(l.rlim_cur as u64)
    }
}

/// The connection cap, below the open-file limit: descriptors stay for the database, webhook
/// deliveries, imports and the log, so the cap is what refuses, never `accept`.
fn connection_cap(configured: usize, open_files: Option<u64>) -> usize {
    const RESERVED: u64 = 256;
    match open_files {
        Some(limit) if (configured as u64) + RESERVED > limit => {
            let cap = limit.saturating_sub(RESERVED).max(16) as usize;
            tracing::warn!(configured, cap, limit, "PLATFORM_MAX_CONNECTIONS lowered to fit the open-file limit");
            cap
        }
        _ => configured,
    }
}

pub async fn serve(c: Config, args: &Seeding) -> Result<(), String> {
    let open_files = raise_open_files();
    let store = open_store(&c).await?;
    let listener = tokio::net::TcpListener::bind(&c.listen).await.map_err(|e| format!("listen on {}: {e}", c.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tls = crate::tls::configure(&c, addr)?;
    let public_url = c.public_url_for(addr);
    if tls.is_some() && public_url.starts_with("http://") {
        tracing::warn!(public_url, "serving TLS, but PLATFORM_PUBLIC_URL says http: the URLs in responses will too");
    }
    let admin_token = match &c.admin_token {
        Some(t) => t.0.clone(),
        None => {
            let t = format!("svadmin_{}", platform_core::ids::random_alnum(32));
            println!("admin token (generated; set PLATFORM_ADMIN_TOKEN to choose one): {t}");
            t
        }
    };
    // The demo world delivers webhooks to local receivers: loopback is allowed unless the
    // allow-list is configured explicitly.
    let mut c = c;
    if args.demo && c.webhooks.allowed_hosts.is_none() {
        c.webhooks.allowed_hosts = Some("loopback".into());
    }
    let app = state(&c, store.clone(), public_url.clone(), admin_token);
    prepare_secret_key(&app).await?;
    if let Some(text) = seed_text(args)? {
        let report = run_seed(&app, &text, args.tokens_out.as_deref()).await?;
        print_report(&report, &public_url);
    }
    tracing::info!(config = ?c, "starting");
    let stop = shutdown_signal();
    if let Some(path) = tls.as_ref().and_then(|t| t.self_signed.as_deref()) {
        print_trust(path);
    }
    println!("listening on {}://{addr}", if tls.is_some() { "https" } else { "http" });
    let workers = platform_api::spawn_workers(&app);
    let on_exit = app.clone();
    let router = platform_api::app(app);
    let conns = platform_api::listener::ConnSettings {
        max_connections: connection_cap(c.max_connections, open_files),
        tls: tls.map(|t| t.config),
        ..c.conn_settings()
    };
    // Graceful: stop accepting, let requests in flight finish — but not forever, so a client that
    // keeps a connection open cannot hold the process past its grace period.
    let (stopping_tx, mut stopping) = tokio::sync::watch::channel(false);
    let server = platform_api::listener::serve(listener, router, conns, async move {
        stop.await;
        let _ = stopping_tx.send(true);
    });
    let grace_period = std::time::Duration::from_secs(c.shutdown_grace_seconds);
    let grace = async move {
        let _ = stopping.wait_for(|s| *s).await;
        tokio::time::sleep(grace_period).await;
    };
    tokio::select! {
        _ = server => {}
        _ = grace => tracing::warn!("connections still open after {grace_period:?}; closing them"),
    }
    // The workers finish their passes (or are aborted) before the store closes under them.
    let stopped = workers.shutdown().await;
    tracing::info!(finished = stopped.finished.len(), aborted = stopped.aborted.len(), "background workers stopped");
    // Requests recorded since the last flush are written before the store closes.
    if let Err(e) = platform_api::ops::insights::flush::flush(&on_exit).await {
        tracing::warn!(error = %e.message, "insights: final flush failed");
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT. The handlers are installed when this is called, not when the
/// future is first polled: a signal sent right after the address is announced is graceful too.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (term, int) = {
        use tokio::signal::unix::{signal, SignalKind};
        (signal(SignalKind::terminate()).ok(), signal(SignalKind::interrupt()).ok())
    };
    async move {
        #[cfg(unix)]
        tokio::select! { _ = received(term) => {}, _ = received(int) => {} }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
    }
}

#[cfg(unix)]
async fn received(s: Option<tokio::signal::unix::Signal>) {
    match s {
        Some(mut s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

pub async fn migrate(c: Config) -> Result<(), String> {
    let store = open_store(&c).await?;
    let applied = store.migrate().await.map_err(|e| e.message)?;
    println!("migrations up to date ({} applied now)", applied.len());
    store.close().await;
    Ok(())
}

pub async fn seed_only(c: Config, file: &str, tokens_out: Option<&str>) -> Result<(), String> {
    let store = open_store(&c).await?;
    let public_url = c.public_url_for(&c.listen);
    let app = state(&c, store.clone(), public_url.clone(), String::new());
    prepare_secret_key(&app).await?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let report = run_seed(&app, &text, tokens_out).await?;
    print_report(&report, &public_url);
    store.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::connection_cap;

    #[test]
    fn connection_cap_fits_the_open_file_limit() {
        assert_eq!(connection_cap(4096, Some(1_048_576)), 4096);
        assert_eq!(connection_cap(4096, None), 4096);
        assert_eq!(connection_cap(4096, Some(1024)), 768);
        assert_eq!(connection_cap(4096, Some(100)), 16);
    }
}
