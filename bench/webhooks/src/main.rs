//! Webhook throughput and latency benchmark (see bench/README.md, "Webhooks").
//!
//! Starts a local receiver and the release `platformd` (fresh SQLite database, loopback allowed),
//! creates an organization hook to the receiver, then pushes N commits through the control plane
//! (C at a time). Each push's wall-clock start (ms) is recorded against its sha; the receiver
//! records the arrival of each `push` delivery (the payload's `after`). Reports deliveries/s
//! (N / first push → last receipt) and p50/p99/max latency from push to receipt, which bounds
//! activity → delivery from above. PASS needs ≥ 1000 deliveries/s and p99 < 100 ms.
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use serde_json::{json, Value};

const ADMIN: &str = "svadmin_bench_webhooks_0123456789abcdef";
const UA: &str = "platformd-bench";

#[derive(Clone)]
struct Recv {
    start: Instant,
    /// sha → arrival (µs since start).
    arrivals: Arc<Mutex<HashMap<String, u64>>>,
}

async fn receive(State(r): State<Recv>, body: Bytes) -> &'static str {
    let at = r.start.elapsed().as_micros() as u64;
    if let Ok(v) = serde_json::from_slice::<Value>(&body) {
        if let Some(sha) = v["after"].as_str() {
            r.arrivals.lock().unwrap().insert(sha.to_string(), at);
        }
    }
    "ok"
}

fn env_or<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d)
}

#[tokio::main]
async fn main() {
    let n: usize = env_or("BENCH_WEBHOOK_N", 5000);
    let conc: usize = env_or("BENCH_WEBHOOK_CONCURRENCY", 32);
    let bin = std::env::var("PLATFORMD_BIN").expect("PLATFORMD_BIN (the release platformd)");
    let start = Instant::now();

    // Receiver.
    let recv = Recv { start, arrivals: Arc::new(Mutex::new(HashMap::new())) };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/hook", axum::routing::post(receive)).with_state(recv.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // platformd.
    let dir = std::env::temp_dir().join(format!("platformd-bench-webhooks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(&bin)
        .arg("serve")
        .env("PLATFORM_LISTEN", "127.0.0.1:0")
        .env("PLATFORM_DATABASE_URL", dir.join("bench.db"))
        .env("PLATFORM_ADMIN_TOKEN", ADMIN)
        .env("PLATFORM_WEBHOOK_ALLOWED_HOSTS", "loopback")
        .env("PLATFORM_RATE_LIMIT_FACTOR", "1000")
        .env("PLATFORM_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start platformd");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(a) = line.strip_prefix("listening on ") {
                let _ = tx.send(a.to_string());
            }
        }
    });
    let base = rx.recv_timeout(Duration::from_secs(60)).expect("platformd listening");
    let http = reqwest::Client::builder().pool_max_idle_per_host(conc * 2).build().unwrap();
    let admin = |path: &str, body: Value| {
        let req = http.post(format!("{base}/_admin{path}")).bearer_auth(ADMIN).json(&body).send();
        async move {
            let r = req.await.expect("admin call");
            assert!(r.status().is_success(), "admin call failed: {}", r.status());
            r.json::<Value>().await.unwrap_or(Value::Null)
        }
    };
    admin("/users", json!({"login": "owner"})).await;
    admin("/orgs", json!({"login": "benchorg", "owners": ["owner"]})).await;
    admin("/repos", json!({"owner": "benchorg", "name": "hot", "private": false})).await;
    let token = admin("/tokens", json!({"kind": "classic", "login": "owner", "scopes": ["admin:org_hook"]})).await["token"]
        .as_str()
        .unwrap()
        .to_string();
    let r = http
        .post(format!("{base}/orgs/benchorg/hooks"))
        .header("user-agent", UA)
        .bearer_auth(&token)
        .json(&json!({"name": "web", "events": ["push"], "config": {"url": hook_url, "content_type": "json", "secret": "bench"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201, "create hook");
    // Warm up: one push on every branch used (creates the refs), then wait for the deliveries.
    let branches = conc;
    for b in 0..branches {
        admin("/repos/benchorg/hot/refs", json!({"ref": format!("refs/heads/b{b}"), "sha": format!("{:040x}", b + 1)})).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while recv.arrivals.lock().unwrap().len() < branches {
        assert!(Instant::now() < deadline, "warm-up deliveries did not arrive");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    recv.arrivals.lock().unwrap().clear();

    // Measure.
    eprintln!("bench/webhooks: {n} pushes, {conc} at a time, to {hook_url}");
    let sent: Arc<Mutex<HashMap<String, u64>>> = Arc::new(Mutex::new(HashMap::new()));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t0 = start.elapsed().as_micros() as u64;
    let mut tasks = Vec::new();
    for w in 0..conc {
        let (http, base, sent, next) = (http.clone(), base.clone(), sent.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let sha = format!("{:040x}", 0x1000_0000u64 + i as u64);
                sent.lock().unwrap().insert(sha.clone(), start.elapsed().as_micros() as u64);
                let r = http
                    .post(format!("{base}/_admin/repos/benchorg/hot/refs"))
                    .bearer_auth(ADMIN)
                    .json(&json!({"ref": format!("refs/heads/b{w}"), "sha": sha}))
                    .send()
                    .await
                    .expect("push");
                assert!(r.status().is_success(), "push failed: {}", r.status());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let pushed_at = start.elapsed().as_micros() as u64;
    let deadline = Instant::now() + Duration::from_secs(120);
    while recv.arrivals.lock().unwrap().len() < n {
        if Instant::now() > deadline {
            eprintln!("bench/webhooks: only {} of {n} deliveries arrived", recv.arrivals.lock().unwrap().len());
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let arrivals = recv.arrivals.lock().unwrap().clone();
    let sent = sent.lock().unwrap().clone();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let last = arrivals.values().copied().max().unwrap_or(t0);
    let mut lat: Vec<f64> = sent.iter().filter_map(|(sha, s)| arrivals.get(sha).map(|a| (*a as f64 - *s as f64) / 1000.0)).collect();
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| if lat.is_empty() { f64::NAN } else { lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1] };
    let secs = (last - t0) as f64 / 1e6;
    let rate = arrivals.len() as f64 / secs;
    let push_rate = n as f64 / ((pushed_at - t0) as f64 / 1e6);
    println!("pushes: {n} ({push_rate:.0}/s)   delivered: {}   elapsed {secs:.2} s", arrivals.len());
    println!("deliveries/s: {rate:.0}");
    println!("latency push -> receipt ms: p50 {:.1}  p99 {:.1}  max {:.1}", pct(0.50), pct(0.99), pct(1.0));
    let ok_rate = rate >= 1000.0 && arrivals.len() == n;
    let ok_p99 = pct(0.99) < 100.0;
    println!("{}  webhook deliveries >= 1000/s  (got {rate:.0})", if ok_rate { "PASS" } else { "FAIL" });
    println!("{}  p99 activity -> delivery < 100 ms  (got {:.1} ms)", if ok_p99 { "PASS" } else { "FAIL" }, pct(0.99));
    std::process::exit(if ok_rate && ok_p99 { 0 } else { 1 });
}
