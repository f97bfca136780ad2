//! The connection layer from a raw socket: silent, slow and idle clients are cut off by their
//! timeouts, a flood of silent connections cannot lock out `/healthz`, and protocol errors hyper
//! answers itself carry the platform's JSON error body.
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::both;
use crate::harness::*;

fn quick() -> Options {
    let conns = platform_api::listener::ConnSettings {
        header_read: Duration::from_millis(800),
        idle: Duration::from_millis(1500),
        max_connections: 8,
        proxy_protocol: None,
        tls: None,
    };
    Options { conns, ..Options::with(|c| c.body_read_timeout = Duration::from_millis(800)) }
}

/// Everything the server sends until it closes the connection (or `limit` passes), and how long that took.
async fn until_closed(sock: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(start.elapsed()), sock.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => panic!("still open after {limit:?}: {}", String::from_utf8_lossy(&out)),
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), start.elapsed())
}

/// Status and JSON body of a raw response.
fn json_error(raw: &str) -> (u16, Value) {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head: {raw:?}"));
    let status = head[9..12].parse().unwrap();
    assert!(head.to_ascii_lowercase().contains("content-type: application/json; charset=utf-8"), "{head}");
    let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    assert!(body["message"].is_string() && body["documentation_url"].is_string(), "{body}");
    (status, body)
}

both!(silent_partial_and_idle_connections_are_closed, quick(), |s| {
    // Silent from the start: the header-read timeout.
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    let (_, took) = until_closed(&mut silent, Duration::from_secs(5)).await;
    assert!(took >= Duration::from_millis(700), "{took:?}");
    // Half a request head, then nothing.
    let mut partial = TcpStream::connect(s.addr).await.unwrap();
    partial.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    until_closed(&mut partial, Duration::from_secs(5)).await;
    // Kept alive after a response: the idle timeout, longer than the header timeout.
    let mut kept = TcpStream::connect(s.addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let (_, took) = until_closed(&mut kept, Duration::from_secs(5)).await;
    assert!(took >= Duration::from_millis(1300), "idle for {took:?}");
});

both!(slow_bodies_get_408, quick(), |s| {
    let mut sock = TcpStream::connect(s.addr).await.unwrap();
    let head = "POST /repos/alice/hello/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"st";
    sock.write_all(head.as_bytes()).await.unwrap();
    let (raw, _) = until_closed(&mut sock, Duration::from_secs(5)).await;
    let (status, body) = json_error(&raw);
    assert_eq!((status, body["message"].as_str()), (408, Some("Request Timeout")), "{raw}");
});

both!(silent_floods_do_not_lock_out_health_checks, quick(), |s| {
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(s.addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = s.client.get(format!("http://{}/healthz", s.addr)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(s.get("/", None).await.status().as_u16(), 200);
});

both!(protocol_errors_have_json_bodies, quick(), |s| {
    let long_line = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(20_000));
    let many_headers = format!("GET / HTTP/1.1\r\nHost: x\r\n{}\r\n", (0..500).map(|i| format!("X-H{i}: v\r\n")).collect::<String>());
    let big_headers = format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(100_000));
    let huge_line = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let too_large = "POST /repos/alice/hello/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n".to_string();
    for (request, want) in [
        (long_line, 414),
        (huge_line, 431),
        (many_headers, 431),
        (big_headers, 431),
        ("GARBAGE\r\n\r\n".to_string(), 400),
        ("GET / HTTP/1.1\r\nHo st: x\r\n\r\n".to_string(), 400),
        (too_large, 413),
    ] {
        let mut sock = TcpStream::connect(s.addr).await.unwrap();
        let _ = sock.write_all(request.as_bytes()).await;
        let (raw, _) = until_closed(&mut sock, Duration::from_secs(5)).await;
        let (status, _) = json_error(&raw);
        assert_eq!(status, want, "{}", &request[..request.len().min(60)]);
    }
});

fn behind_layer4_balancer() -> Options {
    let mut o = Options::default();
    o.conns.proxy_protocol = Some(platform_api::forwarded::TrustedProxies::parse("127.0.0.1").unwrap());
    o
}

/// One request on a new connection that opens with `header`; the raw response.
async fn through_balancer(addr: std::net::SocketAddr, header: &[u8], path: &str) -> String {
    let mut sock = TcpStream::connect(addr).await.unwrap();
    let mut bytes = header.to_vec();
    bytes.extend(format!("GET {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nConnection: close\r\n\r\n").as_bytes());
    sock.write_all(&bytes).await.unwrap();
    until_closed(&mut sock, Duration::from_secs(5)).await.0
}

fn used(raw: &str) -> Option<u32> {
    raw.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("x-ratelimit-used: ").map(|v| v.trim().parse().unwrap()))
}

both!(a_layer4_balancer_names_the_caller_with_the_proxy_protocol, behind_layer4_balancer(), |s| {
    // Anonymous requests are limited by address: the one the header names, not the balancer's.
    let v1 = b"PROXY TCP4 192.0.2.1 127.0.0.1 40000 80\r\n";
    assert_eq!(used(&through_balancer(s.addr, v1, "/users/alice").await), Some(1));
    assert_eq!(used(&through_balancer(s.addr, v1, "/users/alice").await), Some(2));
    // Version 2 (what HAProxy's send-proxy-v2 sends), another caller: a window of its own.
    let mut v2 = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x0c".to_vec();
    v2.extend([192, 0, 2, 2, 127, 0, 0, 1, 0x9c, 0x40, 0, 80]);
    assert_eq!(used(&through_balancer(s.addr, &v2, "/users/alice").await), Some(1));
    // The balancer's health check (LOCAL) is answered as the balancer's own.
    let local = b"\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00";
    assert!(through_balancer(s.addr, local, "/healthz").await.starts_with("HTTP/1.1 200"));
    // The balancer's host calling without a header (an operator, a health check) is itself.
    assert_eq!(used(&through_balancer(s.addr, b"", "/users/alice").await), Some(1));
    // A header that is not one: closed unanswered.
    assert_eq!(through_balancer(s.addr, b"PROXY TCP4 junk\r\n", "/users/alice").await, "");
    let mut v2_short = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x03".to_vec();
    v2_short.extend([1, 2, 3]);
    assert_eq!(through_balancer(s.addr, &v2_short, "/users/alice").await, "");
});
