//! The accept loop, shared by the binary and the test harness: HTTP/1.1 connections that a
//! silent or slow client cannot hold (header-read and idle keep-alive timeouts; the body-read
//! timeout is the JSON body extractor's), a cap on open connections that evicts the longest
//! waiting ones first so health checks stay answerable, and the platform's JSON error body on
//! the protocol errors hyper answers itself (400, 431; request targets over 8 KiB are 414 here).
//! With a TLS configuration every connection is TLS (HTTP/1.1; the handshake counts as reading
//! the first head); a plain-HTTP request to it gets a 400 saying to use https.
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use crate::error::{ApiError, GENERIC_DOCS};

/// Longest request target (path and query) served; longer is 414.
const MAX_URI_BYTES: usize = 8 * 1024;
/// Most bytes of request line and headers together; more is 431 (hyper's check).
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Built from the settings' declaration (`platformd::config::Config::conn_settings`), so without
/// defaults of its own.
#[derive(Clone, Debug)]
pub struct ConnSettings {
    /// From a connection's first byte of a request head (or its opening) to the whole head.
    pub header_read: Duration,
    /// Between requests on a kept-alive connection.
    pub idle: Duration,
    /// Open connections at most; at the cap the longest-waiting one is closed for a new one.
    pub max_connections: usize,
    /// Connections from these proxies may open with a PROXY protocol header (`proxy_protocol`);
    /// `None`: no header is read.
    pub proxy_protocol: Option<crate::forwarded::TrustedProxies>,
    /// Serve HTTPS with this configuration (`None`: plain HTTP).
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
}

/// What the watchdog and the cap know of one connection (milliseconds since `epoch`).
struct Conn {
    id: u64,
    accepted_ms: u64,
    /// First byte of the request head being read; 0 when none is.
    head_ms: AtomicU64,
    /// End of the last response; 0 before the first.
    idle_ms: AtomicU64,
    in_flight: AtomicUsize,
    close: Notify,
}

struct Shared {
    epoch: Instant,
    settings: ConnSettings,
    open: Mutex<Vec<Arc<Conn>>>,
    next_id: AtomicU64,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// Since when the connection waits for a request (`None`: a request is being served).
    fn waiting_since(&self, c: &Conn) -> Option<u64> {
        if c.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        match (c.head_ms.load(Ordering::Acquire), c.idle_ms.load(Ordering::Acquire)) {
            (0, 0) => Some(c.accepted_ms),
            (0, idle) => Some(idle),
            (head, _) => Some(head),
        }
    }

    /// Registers a connection; at the cap, closes the one waiting longest (or refuses this one
    /// when every connection is busy serving).
    fn admit(&self) -> Option<Arc<Conn>> {
        let mut open = self.open.lock().unwrap();
        if open.len() >= self.settings.max_connections {
            let victim = open.iter().filter_map(|c| self.waiting_since(c).map(|w| (w, c))).min_by_key(|(w, _)| *w).map(|(_, c)| c.clone());
            let victim = victim?;
            victim.close.notify_one();
            open.retain(|c| c.id != victim.id);
        }
        let c = Arc::new(Conn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            accepted_ms: self.now_ms(),
            head_ms: AtomicU64::new(0),
            idle_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            close: Notify::new(),
        });
        open.push(c.clone());
        Some(c)
    }

    fn leave(&self, c: &Conn) {
        self.open.lock().unwrap().retain(|o| o.id != c.id);
    }

    /// Resolves when the connection has waited too long: for its head (`header_read`), or idle
    /// after a response (`idle`).
    async fn expired(&self, c: &Conn) {
        loop {
            let now = self.now_ms();
            let deadline = match self.waiting_since(c) {
                None => now + 1_000,
                Some(since) => {
                    let idle = c.head_ms.load(Ordering::Acquire) == 0 && c.idle_ms.load(Ordering::Acquire) != 0;
                    let limit = if idle { self.settings.idle } else { self.settings.header_read };
                    let at = since + limit.as_millis() as u64;
                    if now >= at {
                        return;
                    }
                    at.min(now + 1_000)
                }
            };
            tokio::time::sleep(Duration::from_millis(deadline - now)).await;
        }
    }
}

/// Serves `app` until `shutdown` resolves, then lets open requests finish.
pub async fn serve(listener: TcpListener, app: Router, settings: ConnSettings, shutdown: impl Future<Output = ()>) {
    let tls = settings.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let shared = Arc::new(Shared { epoch: Instant::now(), settings, open: Mutex::new(Vec::new()), next_id: AtomicU64::new(1) });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors or a reset before accept: keep serving the others.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        let Some(conn) = shared.admit() else { continue };
        let _ = stream.set_nodelay(true);
        let (shared, app, stop, tls) = (shared.clone(), app.clone(), stop_rx.clone(), tls.clone());
        tasks.spawn(accepted(tls, shared, conn, stream, peer, app, stop));
    }
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
}

/// A new connection: past its PROXY protocol header when it comes from a balancer that sends
/// one (read within the header-read time, like a request head; the address it names is the
/// peer from then on), then TLS or plain HTTP.
async fn accepted(
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    mut stream: TcpStream,
    mut peer: SocketAddr,
    app: Router,
    stop: watch::Receiver<bool>,
) {
    let mut named = false;
    if shared.settings.proxy_protocol.as_ref().is_some_and(|p| p.trusts(peer.ip())) {
        let header = tokio::select! {
            h = proxy_header(&mut stream) => h,
            _ = shared.expired(&conn) => Err(crate::proxy_protocol::Invalid("timed out")),
            _ = conn.close.notified() => Err(crate::proxy_protocol::Invalid("closed")),
        };
        match header {
            Ok(Some(client)) => (peer, named) = (client, true),
            Ok(None) => {}
            // A header that is not one: nothing on the connection can be trusted.
            Err(_) => return shared.leave(&conn),
        }
    }
    match tls {
        None => connection(shared, conn, stream, (peer, named), app, stop).await,
        Some(tls) => tls_connection(tls, shared, conn, stream, (peer, named), app, stop).await,
    }
}

/// The PROXY protocol header a connection opens with, if it does (see `proxy_protocol`).
async fn proxy_header(stream: &mut TcpStream) -> Result<Option<SocketAddr>, crate::proxy_protocol::Invalid> {
    let mut first = [0u8; 8];
    loop {
        let n = stream.peek(&mut first).await.map_err(|_| crate::proxy_protocol::Invalid("closed"))?;
        if n == 0 {
            return Err(crate::proxy_protocol::Invalid("closed"));
        }
        match crate::proxy_protocol::opens_with_header(&first[..n]) {
            Some(false) => return Ok(None),
            Some(true) => return crate::proxy_protocol::read_header(stream).await,
            // A signature's first bytes alone so far (peek would answer them again at once).
            None => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

/// The client's address, and whether a balancer's PROXY protocol header named it.
type Peer = (SocketAddr, bool);

/// The TLS handshake, bounded like a request head (a client that never finishes it is closed by
/// the header-read timeout, evicted at the cap, or closed at shutdown), then HTTP over the
/// encrypted stream.
async fn tls_connection(
    tls: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    stream: TcpStream,
    peer: Peer,
    app: Router,
    stop: watch::Receiver<bool>,
) {
    let handshake = async {
        // A TLS connection opens with a handshake record (content type 22); anything else is most
        // likely plain HTTP, answered in plain HTTP so the client sees why.
        let mut first = [0u8; 1];
        match stream.peek(&mut first).await {
            Ok(1) if first[0] == 0x16 => tls.accept(stream).await.ok(),
            Ok(1) => {
                let mut stream = stream;
                // Read what came (the request head, usually whole): closing with it unread
                // would reset the connection before the client reads the answer.
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut [0u8; 8192]).await;
                let reply = error_response(400, "Bad Request", "This port speaks HTTPS: use an https:// URL");
                let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, &reply).await;
                let _ = tokio::io::AsyncWriteExt::shutdown(&mut stream).await;
                None
            }
            _ => None,
        }
    };
    let mut stopping = stop.clone();
    let stream = tokio::select! {
        s = handshake => s,
        _ = shared.expired(&conn) => None,
        _ = conn.close.notified() => None,
        // Shutting down: a connection without a request yet is closed, as idle ones are.
        _ = stopping.wait_for(|s| *s) => None,
    };
    match stream {
        Some(stream) => connection(shared, conn, stream, peer, app, stop).await,
        None => shared.leave(&conn),
    }
}

async fn connection<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    stream: S,
    (peer, named): Peer,
    app: Router,
    mut stop: watch::Receiver<bool>,
) {
    let io = Watched { inner: stream, conn: conn.clone(), shared: shared.clone(), replacing: None };
    let c2 = conn.clone();
    let s2 = shared.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        let (app, conn, shared) = (app.clone(), c2.clone(), s2.clone());
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        conn.head_ms.store(0, Ordering::Release);
        req.extensions_mut().insert(ConnectInfo(peer));
        if named {
            req.extensions_mut().insert(crate::proxy_protocol::NamedByBalancer);
        }
        let too_long = req.uri().path_and_query().map_or(0, |p| p.as_str().len()) > MAX_URI_BYTES;
        async move {
            let resp = if too_long {
                let mut r =
                    axum::response::IntoResponse::into_response(ApiError::new(axum::http::StatusCode::URI_TOO_LONG, "URI Too Long"));
                r.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
                Ok(r)
            } else {
                app.oneshot(req.map(axum::body::Body::new)).await
            };
            conn.head_ms.store(0, Ordering::Release);
            conn.idle_ms.store(shared.now_ms(), Ordering::Release);
            conn.in_flight.fetch_sub(1, Ordering::AcqRel);
            resp
        }
    });
    // No hyper timer: the watchdog below tells header-read from idle time.
    let served = hyper::server::conn::http1::Builder::new().max_header_size(MAX_HEAD_BYTES).serve_connection(TokioIo::new(io), service);
    tokio::pin!(served);
    let stopping = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    let graceful = tokio::select! {
        _ = &mut served => false,
        _ = shared.expired(&conn) => false,
        _ = conn.close.notified() => false,
        _ = stopping => true,
    };
    if graceful {
        served.as_mut().graceful_shutdown();
        let _ = served.await;
    }
    shared.leave(&conn);
}

/// The TCP stream as hyper sees it: reads mark the start of a request head; an error response
/// hyper writes itself (a 4xx with an empty body, written before any request reached the
/// application) is replaced by the same status with the platform's JSON error body.
struct Watched<S> {
    inner: S,
    conn: Arc<Conn>,
    shared: Arc<Shared>,
    /// The replacement being written, and how much of it is out.
    replacing: Option<(Vec<u8>, usize)>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before && this.conn.in_flight.load(Ordering::Acquire) == 0 && this.conn.head_ms.load(Ordering::Acquire) == 0
        {
            this.conn.head_ms.store(this.shared.now_ms(), Ordering::Release);
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.replacing.is_none() {
            if let Some(body) = protocol_error(buf) {
                this.replacing = Some((body, 0));
            }
        }
        if let Some((bytes, done)) = &mut this.replacing {
            while *done < bytes.len() {
                match Pin::new(&mut this.inner).poll_write(cx, &bytes[*done..]) {
                    Poll::Ready(Ok(n)) => *done += n,
                    other => return other,
                }
            }
            // Hyper's whole (empty-bodied) response counts as written.
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A response hyper wrote for a request it could not parse: `HTTP/1.1 4xx` with
/// `content-length: 0` (the application never answers an error without a body). Returns the
/// replacement with the JSON error body.
fn protocol_error(buf: &[u8]) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(buf.get(..buf.len().min(512))?).ok()?;
    let rest = head.strip_prefix("HTTP/1.1 4")?;
    if !head.to_ascii_lowercase().contains("\r\ncontent-length: 0\r\n") {
        return None;
    }
    let code: u16 = format!("4{}", rest.get(..2)?).parse().ok()?;
    let message = match code {
        400 => "Bad Request",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        _ => return None,
    };
    Some(error_response(code, message, message))
}

/// A whole `connection: close` response with the platform's JSON error body.
fn error_response(code: u16, reason: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"message": message, "documentation_url": GENERIC_DOCS, "status": code.to_string()}).to_string();
    format!(
        "HTTP/1.1 {code} {reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_empty_protocol_errors() {
        let r = protocol_error(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n").unwrap();
        let text = String::from_utf8(r).unwrap();
        assert!(text.starts_with("HTTP/1.1 431 ") && text.ends_with("\"status\":\"431\"}"), "{text}");
        assert!(protocol_error(b"HTTP/1.1 404 Not Found\r\ncontent-length: 60\r\n\r\n").is_none());
        assert!(protocol_error(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(protocol_error(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
