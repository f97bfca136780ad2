//! Smart HTTP (protocol v0 and v2), as `git http-backend` serves it: `git upload-pack` and
//! `git receive-pack` with `--stateless-rpc`, the request body (gzip-decoded as it arrives)
//! streamed into git and git's output streamed back, neither held whole in memory. Each request
//! is bounded in time (and a push in size, decompressed); at the bound git is killed.
//!
//! A push passes a [`Gate`]: git's `pre-receive` hook hands it the ref updates with their objects
//! in quarantine before any ref moves, and its [`Decision`] reaches the client as `remote:` lines
//! and the refs' acceptance or refusal. Once a gate has accepted, the end of git's answer (the
//! report that tells the client its refs were updated) is held back until git has exited and
//! [`Gate::finish`] has recorded what moved; if recording fails, the client never hears of
//! success.
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::command::{Error, Group};
use crate::hook::{Channel, Decision, CHANNEL_VAR};
use crate::repo::{RefUpdate, Repo};

/// The two services of smart HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// Clone and fetch.
    UploadPack,
    /// Push.
    ReceivePack,
}

impl Service {
    /// `git-upload-pack` / `git-receive-pack`, as URLs and `service=` name them.
    pub fn parse(s: &str) -> Option<Service> {
        match s {
            "git-upload-pack" => Some(Service::UploadPack),
            "git-receive-pack" => Some(Service::ReceivePack),
            _ => None,
        }
    }

    fn command(self) -> &'static str {
        match self {
            Service::UploadPack => "upload-pack",
            Service::ReceivePack => "receive-pack",
        }
    }

    /// The content type of the ref advertisement.
    pub fn advertisement_type(self) -> &'static str {
        match self {
            Service::UploadPack => "application/x-git-upload-pack-advertisement",
            Service::ReceivePack => "application/x-git-receive-pack-advertisement",
        }
    }

    /// The content type a client posts.
    pub fn request_type(self) -> &'static str {
        match self {
            Service::UploadPack => "application/x-git-upload-pack-request",
            Service::ReceivePack => "application/x-git-receive-pack-request",
        }
    }

    /// The content type of the answer.
    pub fn result_type(self) -> &'static str {
        match self {
            Service::UploadPack => "application/x-git-upload-pack-result",
            Service::ReceivePack => "application/x-git-receive-pack-result",
        }
    }
}

/// A push as its gate sees it: the ref updates asked for, and the repository with the pushed
/// objects readable (still in quarantine).
#[derive(Clone, Debug)]
pub struct Proposal {
    pub updates: Vec<RefUpdate>,
    pub quarantine: Repo,
}

/// What decides a push and records it.
pub trait Gate: Send + 'static {
    /// Before any ref moves: accept or refuse the updates (all of them: git refuses every ref
    /// of a push its hook refuses).
    fn decide(&mut self, proposal: Proposal) -> impl Future<Output = Decision> + Send;

    /// After git has exited, when [`Gate::decide`] accepted: record whatever git moved (maybe
    /// nothing: a ref's old value was stale, the push was cut off). `Err` keeps the report of
    /// success from the client.
    fn finish(&mut self) -> impl Future<Output = Result<(), String>> + Send;
}

/// The gate of services that never run the hook (fetches).
struct NoGate;

impl Gate for NoGate {
    async fn decide(&mut self, _: Proposal) -> Decision {
        Decision::refuse(vec!["error: pushes are not accepted here".into()])
    }
    async fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// A streamed answer body.
pub type Body = Pin<Box<dyn Stream<Item = std::io::Result<Bytes>> + Send>>;

/// A request body as the HTTP layer delivers it.
pub trait Input: Stream<Item = Result<Bytes, Self::Error>> + Send + Unpin + 'static {
    type Error: std::fmt::Display + Send;
}

impl<S, E> Input for S
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::fmt::Display + Send,
{
    type Error = E;
}

/// How a request arrived.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `Content-Encoding: gzip`.
    pub gzip: bool,
    /// The `Git-Protocol` header (`version=2`), already checked to be plain.
    pub protocol: Option<String>,
}

/// Is a `Git-Protocol` header value safe to hand to git (`key=value` items separated by `:`)?
pub fn plain_protocol(v: &str) -> bool {
    v.len() <= 256 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"=:._-".contains(&b))
}

fn pkt_line(s: &str) -> Vec<u8> {
    let mut v = format!("{:04x}", s.len() + 4).into_bytes();
    v.extend_from_slice(s.as_bytes());
    v
}

fn channel_body(rx: mpsc::Receiver<std::io::Result<Bytes>>) -> Body {
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) }))
}

/// `GET …/info/refs?service=…`: the ref advertisement (with the `# service=` preamble protocol
/// v0 expects; protocol v2 starts with its capabilities instead).
pub fn advertise(repo: &Repo, service: Service, opts: &Options) -> Body {
    let v2 = service == Service::UploadPack && opts.protocol.as_deref().is_some_and(|p| p.split(':').any(|i| i == "version=2"));
    let mut c = repo.cmd().args([service.command(), "--stateless-rpc", "--advertise-refs"]).arg(repo.dir());
    if let Some(p) = &opts.protocol {
        c = c.env("GIT_PROTOCOL", p);
    }
    let preamble = (!v2).then(|| {
        let mut p = pkt_line(&format!("# service=git-{}\n", service.command()));
        p.extend_from_slice(b"0000");
        Bytes::from(p)
    });
    let (tx, rx) = mpsc::channel(8);
    let timeout = repo.git.limits.timeout;
    tokio::spawn(async move {
        if let Some(p) = preamble {
            let _ = tx.send(Ok(p)).await;
        }
        let empty = futures_util::stream::empty::<Result<Bytes, std::convert::Infallible>>();
        drive(c.into_inner(), empty, Options::default(), u64::MAX, timeout, None::<(NoGate, Channel, Repo)>, tx).await;
    });
    channel_body(rx)
}

/// `POST …/git-upload-pack`: a fetch negotiation and its pack.
pub fn upload_pack(repo: &Repo, body: impl Input, opts: &Options) -> Body {
    let mut c = repo.cmd().args(["upload-pack", "--stateless-rpc"]).arg(repo.dir());
    if let Some(p) = &opts.protocol {
        c = c.env("GIT_PROTOCOL", p);
    }
    let (tx, rx) = mpsc::channel(8);
    let (timeout, opts) = (repo.git.limits.timeout, opts.clone());
    tokio::spawn(drive(c.into_inner(), body, opts, MAX_FETCH_REQUEST, timeout, None::<(NoGate, Channel, Repo)>, tx));
    channel_body(rx)
}

/// A fetch request (wants and haves) is small; this bounds a hostile one.
const MAX_FETCH_REQUEST: u64 = 64 << 20;

/// `POST …/git-receive-pack`: a push, decided by `gate` before refs move.
pub fn receive_pack<G: Gate>(repo: &Repo, body: impl Input, opts: &Options, gate: G) -> Result<Body, Error> {
    let channel = Channel::open(repo.runtime.path())?;
    let mut c = repo.cmd().args(["receive-pack", "--stateless-rpc"]).arg(repo.dir()).env(CHANNEL_VAR, channel.dir());
    if let Some(p) = &opts.protocol {
        c = c.env("GIT_PROTOCOL", p);
    }
    let (tx, rx) = mpsc::channel(8);
    let limits = repo.git.limits.clone();
    tokio::spawn(drive(c.into_inner(), body, opts.clone(), limits.max_push_bytes, limits.timeout, Some((gate, channel, repo.clone())), tx));
    Ok(channel_body(rx))
}

/// Runs one service request: feeds the body in, sends the output on (holding back what follows
/// an accepted push's decision until it is recorded), all within `timeout`.
async fn drive<G: Gate>(
    mut cmd: tokio::process::Command,
    body: impl Input,
    opts: Options,
    max_in: u64,
    timeout: std::time::Duration,
    gate: Option<(G, Channel, Repo)>,
    tx: mpsc::Sender<std::io::Result<Bytes>>,
) {
    cmd.stdin(std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.send(Err(std::io::Error::other(format!("git could not be run: {e}")))).await;
            return;
        }
    };
    let group = Group::new(child.id());
    let (stdin, mut stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());

    // The hook's side: one request, decided by the gate.
    let held = Arc::new(AtomicBool::new(false));
    let (exited, exited_rx) = oneshot::channel::<()>();
    let decider = gate.map(|(mut gate, mut channel, repo)| {
        let held = held.clone();
        tokio::spawn(async move {
            let request = tokio::select! {
                r = channel.request() => r,
                _ = exited_rx => return (gate, false),
            };
            // A push of deletions alone brings no objects, so no quarantine.
            let view = |r: &crate::hook::HookRequest| {
                if r.quarantine.as_os_str().is_empty() {
                    Ok(repo.clone())
                } else {
                    repo.quarantined(&r.quarantine)
                }
            };
            let decision = match request.and_then(|r| Ok((view(&r)?, r.updates))) {
                Ok((quarantine, updates)) => gate.decide(Proposal { updates, quarantine }).await,
                Err(e) => Decision::refuse(vec![format!("error: {e}")]),
            };
            // Before the hook hears it: whatever git writes from here on waits for `finish`.
            if decision.accept {
                held.store(true, Ordering::SeqCst);
            }
            let _ = channel.answer(&decision).await;
            (gate, decision.accept)
        })
    });

    let mut withheld: Vec<u8> = Vec::new();
    let run = async {
        let feeding = async {
            let r = feed(body, opts.gzip, max_in, stdin).await;
            if r.is_err() {
                group.kill();
            }
            r
        };
        let forwarding = async {
            let mut buf = vec![0u8; 64 * 1024];
            let Some(out) = stdout.as_mut() else { return };
            loop {
                let n = match out.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                if held.load(Ordering::SeqCst) {
                    withheld.extend_from_slice(&buf[..n]);
                } else {
                    // A client gone is no reason to stop: an accepted push must finish.
                    let _ = tx.send(Ok(Bytes::copy_from_slice(&buf[..n]))).await;
                }
            }
        };
        let draining = drain(stderr);
        let (fed, (), errors) = tokio::join!(feeding, forwarding, draining);
        let status = child.wait().await;
        (fed, status, errors)
    };
    let failure = match tokio::time::timeout(timeout, run).await {
        // Cut off: what git started goes with it.
        Err(_) => {
            drop(group);
            Some("timed out".to_string())
        }
        Ok((fed, status, errors)) => {
            // The run ended and git was reaped: its group is no longer ours to signal.
            group.forget();
            if !status.as_ref().is_ok_and(|s| s.success()) {
                tracing::debug!(stderr = %errors, "git service failed");
            }
            fed.err()
        }
    };
    let _ = exited.send(());
    if let Some(task) = decider {
        if let Ok((mut gate, true)) = task.await {
            if let Err(m) = gate.finish().await {
                let _ = tx.send(Err(std::io::Error::other(m))).await;
                return;
            }
        }
    }
    if let Some(f) = failure {
        let _ = tx.send(Err(std::io::Error::other(f))).await;
        return;
    }
    if !withheld.is_empty() {
        let _ = tx.send(Ok(Bytes::from(withheld))).await;
    }
}

/// Reads git's standard error to its end, keeping the tail (for the log).
async fn drain(pipe: Option<tokio::process::ChildStderr>) -> String {
    let Some(mut pipe) = pipe else { return String::new() };
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 8192 {
            tail.drain(..tail.len() - 8192);
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// Copies the request body into git, gzip-decoded when it says so, refusing more than `max`
/// bytes (decoded). Decoding goes in small steps, so a small hostile chunk cannot expand far
/// beyond the bound in memory.
async fn feed(mut body: impl Input, gzip: bool, max: u64, stdin: Option<tokio::process::ChildStdin>) -> Result<(), String> {
    let Some(mut stdin) = stdin else { return Ok(()) };
    let mut decoder = gzip.then(|| flate2::write::GzDecoder::new(Vec::new()));
    let mut total = 0u64;
    let mut git_gone = false;
    let mut write = async |bytes: &[u8], total: &mut u64| -> Result<(), String> {
        *total += bytes.len() as u64;
        if *total > max {
            return Err(format!("request body over {max} bytes"));
        }
        // git stopping early (an error it reports itself) is not the client's fault.
        if !git_gone && stdin.write_all(bytes).await.is_err() {
            git_gone = true;
        }
        Ok(())
    };
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| format!("request body: {e}"))?;
        match decoder.as_mut() {
            None => write(&chunk, &mut total).await?,
            Some(d) => {
                for piece in chunk.chunks(4096) {
                    d.write_all(piece).map_err(|e| format!("request body: {e}"))?;
                    let out = std::mem::take(d.get_mut());
                    write(&out, &mut total).await?;
                }
            }
        }
    }
    if let Some(d) = decoder {
        let rest = d.finish().map_err(|e| format!("request body: {e}"))?;
        write(&rest, &mut total).await?;
    }
    Ok(())
}
