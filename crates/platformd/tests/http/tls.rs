//! HTTPS through the real binary: a self-signed certificate generated at start and a configured
//! certificate and key, reached by a client that trusts only that certificate; URLs in bodies and
//! `Link` headers say https; plain HTTP to the TLS port is refused with a readable answer and the
//! server keeps serving; a stalled handshake is closed; unusable certificate settings stop the start with a clear error.
use std::process::{Command, Stdio};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::SHA;
use crate::harness::UA;
use crate::persistence::{check_populated, populate, spawn_with_env, Http, Proc, ADMIN_TOKEN};

/// A client trusting `pem` alone (not the system's roots).
fn trusting(pem: &[u8]) -> reqwest::Client {
    let cert = reqwest::Certificate::from_pem(pem).expect("a PEM certificate");
    reqwest::Client::builder().tls_built_in_root_certs(false).add_root_certificate(cert).build().unwrap()
}

fn port(base: &str) -> u16 {
    base.rsplit(':').next().unwrap().parse().unwrap()
}

/// Statuses, a paginated list and the API root through `h`: every URL the server writes is `h.base`'s.
async fn urls_say_https(h: &Http) {
    assert!(h.base.starts_with("https://"), "{}", h.base);
    let t = populate(h).await;
    check_populated(h, &t).await;
    let (st, _) =
        h.call(reqwest::Method::POST, &format!("/repos/alice/durable/statuses/{SHA}"), Some(&t), Some(json!({"state": "pending"}))).await;
    assert_eq!(st, 201);
    let r = h
        .client
        .get(format!("{}/repos/alice/durable/commits/main/statuses?per_page=1", h.base))
        .header("user-agent", UA)
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let link = r.headers()["link"].to_str().unwrap().to_string();
    assert!(link.starts_with(&format!("<{}/repositories/", h.base)) || link.starts_with(&format!("<{}/repos/", h.base)), "{link}");
    let (st, root) = h.call(reqwest::Method::GET, "/", None, None).await;
    assert_eq!(st, 200);
    assert_eq!(root["rate_limit_url"], format!("{}/rate_limit", h.base));
}

/// A plain-HTTP request to the TLS port: a 400 with the JSON error body saying to use https.
async fn plain_http_is_refused(base: &str) {
    let mut sock = tokio::net::TcpStream::connect(("127.0.0.1", port(base))).await.unwrap();
    sock.write_all(b"GET /rate_limit HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(std::time::Duration::from_secs(10), sock.read_to_string(&mut answer)).await.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
    assert!(
        answer.contains("connection: close") && answer.contains("\"message\":\"This port speaks HTTPS: use an https:// URL\""),
        "{answer}"
    );
}

fn stop(p: Proc) -> String {
    let (status, stdout, stderr) = p.terminate();
    assert!(status.success(), "exit {status:?}; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_signed_certificate_is_written_and_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let db = dir.path().join("p.db").display().to_string();
    let p = spawn_with_env(&db, &["--tls-self-signed", cert.to_str().unwrap()], &[]);
    assert!(p.base.starts_with("https://127.0.0.1:"), "{}", p.base);
    let pem = std::fs::read(&cert).expect("the certificate is written before the server listens");

    // A client that does not trust the certificate is refused: this is TLS, verified.
    let untrusted = reqwest::Client::new().get(format!("{}/healthz", p.base)).send().await;
    assert!(untrusted.is_err(), "{untrusted:?}");

    let h = Http { base: p.base.clone(), client: trusting(&pem) };
    urls_say_https(&h).await;
    // The certificate names localhost too.
    let r = h.client.get(format!("https://localhost:{}/healthz", port(&p.base))).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);

    plain_http_is_refused(&p.base).await;
    // The server is still serving, over TLS.
    let (st, _) = h.call(reqwest::Method::GET, "/healthz", None, None).await;
    assert_eq!(st, 200);

    let stdout = stop(p);
    let path = std::fs::canonicalize(&cert).unwrap().display().to_string();
    assert!(stdout.contains(&format!("TLS certificate (self-signed, generated now): {path}")), "{stdout}");
    for var in ["SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE"] {
        assert!(stdout.contains(&format!("{var}={path}")), "{stdout}");
    }
}

/// A certificate for `localhost` and its key, as PEM.
fn certificate(names: &[&str]) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap().self_signed(&key).unwrap();
    (cert.pem(), key.serialize_pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_certificate_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(&["localhost"]);
    let (cert_path, key_path) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    std::fs::write(&cert_path, &cert).unwrap();
    std::fs::write(&key_path, &key).unwrap();
    let db = dir.path().join("p.db").display().to_string();
    // The certificate names localhost only, so the public URL does (on a port picked here).
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (listen, base) = (format!("127.0.0.1:{free}"), format!("https://localhost:{free}"));
    let env = [
        ("PLATFORM_TLS_CERT", cert_path.to_str().unwrap()),
        ("PLATFORM_TLS_KEY", key_path.to_str().unwrap()),
        ("PLATFORM_LISTEN", &listen),
        ("PLATFORM_PUBLIC_URL", &base),
        ("PLATFORM_HEADER_READ_TIMEOUT_SECONDS", "1"),
    ];
    let p = spawn_with_env(&db, &[], &env);
    let h = Http { base, client: trusting(cert.as_bytes()) };
    urls_say_https(&h).await;
    plain_http_is_refused(&p.base).await;
    // A handshake never started, or never finished, is closed like a request head never sent.
    for opening in [&b""[..], &[0x16, 0x03, 0x01][..]] {
        let mut sock = tokio::net::TcpStream::connect(("127.0.0.1", free)).await.unwrap();
        sock.write_all(opening).await.unwrap();
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(std::time::Duration::from_secs(10), sock.read_to_end(&mut rest)).await;
        assert!(matches!(closed, Ok(Ok(0))), "{closed:?}");
    }
    let stdout = stop(p);
    assert!(!stdout.contains("self-signed"), "{stdout}");
}

/// `platformd serve` with `args`: its exit code and stderr (it must not start).
fn refused(args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_platformd"))
        .env_clear()
        .env("PLATFORM_LISTEN", "127.0.0.1:0")
        .env("PLATFORM_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("PLATFORM_DATABASE_URL", dir.path().join("p.db"))
        .arg("serve")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn unusable_certificate_settings_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (cert, _) = certificate(&["localhost"]);
    let (_, other_key) = certificate(&["localhost"]);
    std::fs::write(path("c.pem"), &cert).unwrap();
    std::fs::write(path("other.key"), &other_key).unwrap();
    std::fs::write(path("empty.pem"), "not PEM\n").unwrap();

    let (code, e) = refused(&["--tls-cert", &path("missing.pem"), "--tls-key", &path("other.key")]);
    assert_eq!(code, 1);
    assert!(e.contains(&format!("platformd: tls_cert: {}: ", path("missing.pem"))), "{e}");
    let (code, e) = refused(&["--tls-cert", &path("empty.pem"), "--tls-key", &path("other.key")]);
    assert_eq!(code, 1);
    assert!(e.contains("no PEM certificate in the file"), "{e}");
    let (code, e) = refused(&["--tls-cert", &path("c.pem"), "--tls-key", &path("c.pem")]);
    assert_eq!(code, 1);
    assert!(e.contains(&format!("platformd: tls_key: {}: ", path("c.pem"))), "a certificate is no key: {e}");
    let (code, e) = refused(&["--tls-cert", &path("c.pem"), "--tls-key", &path("other.key")]);
    assert_eq!(code, 1);
    assert!(e.contains(&format!("platformd: tls_cert {} with tls_key {}: ", path("c.pem"), path("other.key"))), "{e}");
    let (code, e) = refused(&["--tls-cert", &path("c.pem")]);
    assert_eq!(code, 2);
    assert!(e.contains("tls_cert and tls_key go together"), "{e}");
    let (code, e) = refused(&["--tls-self-signed", &path("s.pem"), "--tls-cert", &path("c.pem"), "--tls-key", &path("other.key")]);
    assert_eq!(code, 2);
    assert!(e.contains("exclude each other"), "{e}");
    let (code, e) = refused(&["--tls-self-signed", &path("no/such/dir/s.pem")]);
    assert_eq!(code, 1);
    assert!(e.contains("platformd: tls_self_signed: "), "{e}");
}
