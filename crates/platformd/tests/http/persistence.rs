//! Durability: a restarted server (in process, both backends) and the real binary (SQLite and
//! PostgreSQL): graceful shutdown, restart on the same database, `migrate`, `seed`, and logs
//! free of secrets.
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::both;
use crate::harness::*;
use platform_store::testing::test_database;
use platform_store::Backend;
use serde_json::{json, Value};

both!(restart_keeps_everything, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", true).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    s.push("acme/widgets", "refs/heads/feature/x", SHA2).await;
    let t = s.classic("alice", &["repo"]).await;
    let app = s.admin_post("/apps", json!({"owner": "acme", "name": "OA", "kind": "oauth"})).await;
    let (cid, secret) = (app["client_id"].as_str().unwrap().to_string(), app["client_secret"].as_str().unwrap().to_string());
    let ot = s.token(json!({"kind": "oauth", "login": "alice", "client_id": cid, "scopes": ["repo"]})).await;
    for (ctx, state) in [("ci", "failure"), ("CI", "success"), ("lint", "pending")] {
        let (st, _, _) =
            parts(s.post(&format!("/repos/acme/widgets/statuses/{SHA}"), Some(&t), json!({"state": state, "context": ctx})).await).await;
        assert_eq!(st, 201);
    }
    s.admin_post("/repos/acme/widgets/rename", json!({"name": "gadgets"})).await;
    let (_, _, before_list) = parts(s.get("/repos/acme/gadgets/commits/main/statuses", Some(&t)).await).await;
    let (_, _, before_combined) = parts(s.get("/repos/acme/gadgets/commits/main/status", Some(&t)).await).await;

    let s = s.restart().await;
    let (st, _, list) = parts(s.get("/repos/acme/gadgets/commits/main/statuses", Some(&t)).await).await;
    assert_eq!(st, 200, "{list}");
    // The port changed; compare everything but URLs.
    let strip = |v: &Value| -> Value {
        let text = v.to_string();
        let re_host = |t: &str| {
            let mut out = String::new();
            let mut rest = t;
            while let Some(i) = rest.find("127.0.0.1:") {
                out.push_str(&rest[..i]);
                let after = &rest[i + "127.0.0.1:".len()..];
                let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                out.push_str("HOST");
                rest = &after[digits..];
            }
            out.push_str(rest);
            out
        };
        serde_json::from_str(&re_host(&text)).unwrap()
    };
    assert_eq!(strip(&list), strip(&before_list));
    let (_, _, combined) = parts(s.get("/repos/acme/gadgets/commits/main/status", Some(&t)).await).await;
    assert_eq!(strip(&combined), strip(&before_combined));
    assert_eq!(combined["state"], "pending");
    assert_eq!(combined["total_count"], 2);
    // The rename, refs, tokens and app credentials survived.
    let (st, _, _) = parts(s.get("/repos/acme/widgets/commits/feature/x/status", Some(&t)).await).await;
    assert_eq!(st, 301);
    let (st, _, b) = parts(s.get("/repos/acme/gadgets/commits/feature/x/status", Some(&ot)).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["sha"], SHA2);
    let r = s
        .req(reqwest::Method::POST, &format!("/applications/{cid}/token"), None)
        .basic_auth(&cid, Some(&secret))
        .json(&json!({"access_token": ot}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // And it keeps working: new writes, and the 1000-cap count continues from the stored rows.
    let (st, _, b) =
        parts(s.post(&format!("/repos/acme/gadgets/statuses/{SHA}"), Some(&t), json!({"state": "success", "context": "lint"})).await).await;
    assert_eq!(st, 201, "{b}");
    assert!(b["id"].as_i64().unwrap() > before_list[0]["id"].as_i64().unwrap());
    let (_, _, c) = parts(s.get("/repos/acme/gadgets/commits/main/status", None).await).await;
    assert_eq!(c["message"], "Not Found", "private repository must stay private after restart");
    let (_, _, c) = parts(s.get("/repos/acme/gadgets/commits/main/status", Some(&t)).await).await;
    assert_eq!(c["state"], "success");
});

pub(crate) const ADMIN_TOKEN: &str = "svadmin_persistence_test_secret_0123456789";

/// A `platformd serve` child process; its stdout and stderr are drained by threads. Dropped
/// without `terminate` (a failed assertion), it is killed: no server outlives its test.
pub(crate) struct Proc {
    pub(crate) child: Child,
    pub(crate) base: String,
    stderr: Option<std::thread::JoinHandle<String>>,
    stdout: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        // A child already waited for is not signalled again.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn platformd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_platformd"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PLATFORM_LISTEN", "127.0.0.1:0")
        .env("PLATFORM_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("PLATFORM_LOG", "debug")
        .stdin(Stdio::null());
    c
}

fn spawn(db: &str, extra: &[&str]) -> Proc {
    spawn_with_env(db, extra, &[])
}

pub(crate) fn spawn_with_env(db: &str, extra: &[&str], env: &[(&str, &str)]) -> Proc {
    let mut child = platformd()
        .arg("serve")
        .args(extra)
        .env("PLATFORM_DATABASE_URL", db)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn platformd");
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut all = String::new();
        let mut sent = false;
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let (false, Some(addr)) = (sent, line.strip_prefix("listening on ")) {
                let _ = tx.send(addr.to_string());
                sent = true;
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let base = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(b) => b,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("platformd did not start: stdout {:?} stderr {:?}", stdout.join(), stderr.join());
        }
    };
    assert!(base.starts_with("http://127.0.0.1:") || base.starts_with("https://127.0.0.1:"), "{base}");
    Proc { child, base, stderr: Some(stderr), stdout: Some(stdout) }
}

impl Proc {
    /// SIGTERM, then the exit status (must be graceful within 20 s), stdout and stderr.
    pub(crate) fn terminate(mut self) -> (std::process::ExitStatus, String, String) {
        let st = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill");
        assert!(st.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("platformd did not stop after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let (stdout, stderr) = (self.stdout.take().unwrap(), self.stderr.take().unwrap());
        (status, stdout.join().unwrap(), stderr.join().unwrap())
    }
}

/// HTTP to a spawned binary: the control plane and API calls.
pub(crate) struct Http {
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
}

impl Http {
    pub(crate) fn new(base: &str) -> Http {
        Http { base: base.to_string(), client: reqwest::Client::new() }
    }
    pub(crate) async fn admin(&self, path: &str, body: Value) -> Value {
        let r = self.client.post(format!("{}/_admin{path}", self.base)).bearer_auth(ADMIN_TOKEN).json(&body).send().await.unwrap();
        let st = r.status();
        let text = r.text().await.unwrap();
        assert!(st.is_success(), "{path}: {st} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
    pub(crate) async fn call(&self, method: reqwest::Method, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let mut r = self.client.request(method, format!("{}{path}", self.base)).header("user-agent", UA);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        let r = r.send().await.unwrap();
        let st = r.status().as_u16();
        (st, serde_json::from_str(&r.text().await.unwrap()).unwrap_or(Value::Null))
    }
}

/// Creates alice, a private repository and a status through the binary; returns the token.
pub(crate) async fn populate(h: &Http) -> String {
    h.admin("/users", json!({"login": "alice"})).await;
    h.admin("/repos", json!({"owner": "alice", "name": "durable", "private": true})).await;
    h.admin("/repos/alice/durable/refs", json!({"ref": "refs/heads/main", "sha": SHA})).await;
    let t =
        h.admin("/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["repo"]})).await["token"].as_str().unwrap().to_string();
    let (st, b) = h
        .call(
            reqwest::Method::POST,
            &format!("/repos/alice/durable/statuses/{SHA}"),
            Some(&t),
            Some(json!({"state": "success", "context": "durable", "description": "survives restarts"})),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    t
}

pub(crate) async fn check_populated(h: &Http, t: &str) {
    let (st, b) = h.call(reqwest::Method::GET, "/repos/alice/durable/commits/main/status", Some(t), None).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["state"], "success");
    assert_eq!(b["total_count"], 1);
    assert_eq!(b["statuses"][0]["description"], "survives restarts");
    assert_eq!(b["statuses"][0]["url"], format!("{}/repos/alice/durable/statuses/{SHA}", h.base));
    let (st, _) = h.call(reqwest::Method::GET, "/repos/alice/durable/commits/main/status", None, None).await;
    assert_eq!(st, 404);
}

fn assert_no_secrets(logs: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!s.is_empty());
        assert!(!logs.contains(s), "a secret appears in the logs: {s}\n{logs}");
    }
}

// Multi-threaded: these tests block on the child process while their HTTP client's
// connections must still be driven (and closed) by the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_sqlite_graceful_shutdown_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db").display().to_string();
    let p = spawn(&db, &[]);
    let h = Http::new(&p.base);
    let (st, _) = h.call(reqwest::Method::GET, "/healthz", None, None).await;
    assert_eq!(st, 200);
    let t = populate(&h).await;
    check_populated(&h, &t).await;
    // A wrong admin token is refused by the binary too.
    let r = h.client.post(format!("{}/_admin/users", h.base)).bearer_auth("nope").json(&json!({"login": "x"})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let (status, stdout, stderr) = p.terminate();
    assert!(status.success(), "exit {status:?}; stderr:\n{stderr}");
    assert!(stderr.contains("starting"), "logs: {stderr}");
    assert!(stderr.contains("shutting down") && stderr.contains("stopped"), "no graceful shutdown in logs: {stderr}");
    // The workers stop, none cut off, before the store closes (the last line).
    let line = stderr.lines().find(|l| l.contains("background workers stopped")).unwrap_or_else(|| panic!("no workers shutdown: {stderr}"));
    assert!(line.contains("aborted=0"), "{line}");
    let after = stderr.split_once(line).unwrap().1;
    assert!(after.lines().any(|l| l.trim_end().ends_with("stopped")), "the store closed before the workers stopped: {stderr}");
    assert_no_secrets(&stderr, &[ADMIN_TOKEN, &t]);
    assert_no_secrets(&stdout, &[ADMIN_TOKEN, &t]);
    assert!(stdout.contains("listening on http://127.0.0.1:"), "{stdout}");

    // Again on the same database: the data is there.
    let p = spawn(&db, &[]);
    let h = Http::new(&p.base);
    check_populated(&h, &t).await;
    let (st, b) = h
        .call(
            reqwest::Method::POST,
            &format!("/repos/alice/durable/statuses/{SHA}"),
            Some(&t),
            Some(json!({"state": "failure", "context": "after"})),
        )
        .await;
    assert_eq!(st, 201, "{b}");
    let (status, _, stderr) = p.terminate();
    assert!(status.success(), "{stderr}");
    assert_no_secrets(&stderr, &[ADMIN_TOKEN, &t]);
}

// Multi-threaded: these tests block on the child process while their HTTP client's
// connections must still be driven (and closed) by the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_generates_an_admin_token_when_none_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db").display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_platformd"))
        .env_clear()
        .env("PLATFORM_LISTEN", "127.0.0.1:0")
        .env("PLATFORM_DATABASE_URL", &db)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut admin = None;
    let mut base = None;
    while let Some(Ok(line)) = lines.next() {
        if let Some((_, t)) = line.split_once("PLATFORM_ADMIN_TOKEN to choose one): ") {
            admin = Some(t.to_string());
        }
        if let Some(b) = line.strip_prefix("listening on ") {
            base = Some(b.to_string());
            break;
        }
    }
    let (admin, base) = (admin.expect("generated admin token printed"), base.expect("listening line"));
    let r = reqwest::Client::new()
        .post(format!("{base}/_admin/users"))
        .bearer_auth(&admin)
        .json(&json!({"login": "alice"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_secrets(&stderr, &[&admin]);
}

// Multi-threaded: these tests block on the child process while their HTTP client's
// connections must still be driven (and closed) by the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_migrate_and_seed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db").display().to_string();
    let out = platformd().arg("migrate").env("PLATFORM_DATABASE_URL", &db).output().unwrap();
    assert!(out.status.success(), "migrate: {out:?}");
    // Idempotent.
    let out = platformd().arg("migrate").env("PLATFORM_DATABASE_URL", &db).output().unwrap();
    assert!(out.status.success(), "second migrate: {out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("(0 applied now)"), "{out:?}");

    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../../demo/seed.toml");
    let tokens_out = dir.path().join("tokens.json");
    let out = platformd().arg("seed").arg(seed).arg("--tokens-out").arg(&tokens_out).env("PLATFORM_DATABASE_URL", &db).output().unwrap();
    assert!(out.status.success(), "seed: {out:?}");
    let map: serde_json::Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(&tokens_out).unwrap()).unwrap();
    assert_eq!(map.len(), 8, "{map:?}");
    let logs = String::from_utf8_lossy(&out.stderr).to_string();
    let secrets: Vec<&str> = map.values().map(|v| v.as_str().unwrap()).collect();
    assert_no_secrets(&logs, &secrets);
    // The seed again: fresh tokens.
    let tokens_out2 = dir.path().join("tokens2.json");
    let out = platformd().arg("seed").arg(seed).arg("--tokens-out").arg(&tokens_out2).env("PLATFORM_DATABASE_URL", &db).output().unwrap();
    assert!(out.status.success(), "second seed: {out:?}");
    let map2: serde_json::Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(&tokens_out2).unwrap()).unwrap();
    assert_eq!(map2.len(), 8);
    for (k, v) in &map {
        assert_ne!(&map2[k], v, "{k}");
    }
    // A bad seed file fails with a non-zero exit.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[users]]\nlogn = 1\n").unwrap();
    let out = platformd().arg("seed").arg(&bad).env("PLATFORM_DATABASE_URL", &db).output().unwrap();
    assert!(!out.status.success());
    let out = platformd().arg("bogus").output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).to_lowercase().contains("usage:"), "{out:?}");

    // Serve the seeded database: tokens of both runs work.
    let p = spawn(&db, &[]);
    let h = Http::new(&p.base);
    for m in [&map, &map2] {
        let t = m["alice-classic"].as_str().unwrap();
        let (st, b) = h.call(reqwest::Method::GET, "/repos/acme/secret-plans/commits/main/status", Some(t), None).await;
        assert_eq!(st, 200, "{b}");
        for name in ["bob-status-only", "ci-installation", "widgets-workflow", "alice-fine-grained"] {
            let (st, b) = h
                .call(
                    reqwest::Method::POST,
                    "/repos/acme/widgets/statuses/main",
                    Some(m[name].as_str().unwrap()),
                    Some(json!({"state": "success", "context": name})),
                )
                .await;
            assert_eq!(st, 201, "{name}: {b}");
        }
    }
    let (status, _, stderr) = p.terminate();
    assert!(status.success());
    assert_no_secrets(&stderr, &secrets);
}

// Multi-threaded: these tests block on the child process while their HTTP client's
// connections must still be driven (and closed) by the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_serves_postgres() {
    let Some(db) = test_database(Backend::Postgres) else { return };
    let p = spawn(&db.url, &[]);
    let h = Http::new(&p.base);
    let (st, _) = h.call(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(st, 200);
    let t = populate(&h).await;
    check_populated(&h, &t).await;
    let (status, _, stderr) = p.terminate();
    assert!(status.success(), "{stderr}");
    assert_no_secrets(&stderr, &[ADMIN_TOKEN, &t]);
    // The database URL carries no password here, but the schema option must not break logging.
    let p = spawn(&db.url, &[]);
    let h = Http::new(&p.base);
    check_populated(&h, &t).await;
    let (status, _, _) = p.terminate();
    assert!(status.success());
}

/// A client holding a half-sent request cannot keep the process alive past the grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_shutdown_grace_is_bounded() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db").display().to_string();
    let p = spawn_with_env(&db, &[], &[("PLATFORM_SHUTDOWN_GRACE_SECONDS", "1")]);
    let addr = p.base.trim_start_matches("http://").to_string();
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    sock.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").unwrap(); // headers never end
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    let (status, _, _) = p.terminate();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(8), "took {:?}", started.elapsed());
}
