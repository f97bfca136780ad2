//! The `git` binary as the server runs it: nothing of the server's environment (no `GIT_*`, no
//! proxies, no user or system configuration), a fixed configuration given on the command line
//! (which outranks anything a repository's own configuration could say), the server's own hooks
//! directory, and every run bounded in time and in the output kept. A run that outlives its bound
//! is killed with everything it started (its process group).
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Why a git run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// git could not be started, or a pipe or file failed.
    Io(String),
    /// The run outlived its time bound and was killed.
    Timeout,
    /// The run wrote more than may be kept and was killed.
    TooLarge,
    /// git exited unsuccessfully; its last error line.
    Failed(String),
    /// Input refused before or by git (an unknown object, a bad ref name, a stale old value).
    Invalid(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(m) => write!(f, "git: {m}"),
            Error::Timeout => f.write_str("git: timed out"),
            Error::TooLarge => f.write_str("git: output too large"),
            Error::Failed(m) | Error::Invalid(m) => write!(f, "git: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e.to_string())
    }
}

/// Bounds of git runs, from the server's settings.
#[derive(Clone, Debug)]
pub struct Limits {
    /// A clone, fetch or push (one HTTP request) and every other git run take at most this.
    pub timeout: Duration,
    /// Bytes of a push's request body (decompressed) at most; also git's `receive.maxInputSize`.
    pub max_push_bytes: u64,
    /// Output kept from a git run that is read whole (object reads, listings).
    pub max_output: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { timeout: Duration::from_secs(600), max_push_bytes: 2 << 30, max_output: 256 << 20 }
    }
}

/// The configuration every git run gets, on its command line: objects checked on the way in,
/// hooks only from the server's directory, no background garbage collection racing a delete,
/// nothing run that a repository could name.
const SAFE_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.quotePath=false",
    "receive.fsckObjects=true",
    "transfer.fsckObjects=true",
    "fetch.fsckObjects=true",
    "receive.autogc=false",
    "receive.advertisePushOptions=false",
    "gc.auto=0",
    "uploadpack.allowFilter=true",
    "uploadpack.allowRefInWant=true",
    "protocol.allow=never",
    "credential.helper=",
    "http.followRedirects=false",
    // The server owns every repository it points git at, whoever created the directory.
    "safe.directory=*",
];

/// How the server runs git: where its hooks are and how runs are bounded.
#[derive(Clone, Debug)]
pub struct Git {
    hooks: PathBuf,
    pub limits: Limits,
}

impl Git {
    pub fn new(hooks: PathBuf, limits: Limits) -> Git {
        Git { hooks, limits }
    }

    /// The server's hooks directory (the only one git runs hooks from).
    pub fn hooks(&self) -> &Path {
        &self.hooks
    }

    /// A git command on the repository at `git_dir` (or none), with the clean environment and
    /// the safe configuration; transports other than the local file system are not allowed.
    pub fn cmd(&self, git_dir: Option<&Path>) -> Cmd {
        let mut c = tokio::process::Command::new("git");
        c.env_clear();
        for keep in ["PATH", "TMPDIR"] {
            if let Some(v) = std::env::var_os(keep) {
                c.env(keep, v);
            }
        }
        c.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "")
            .env("SSH_ASKPASS", "")
            .env("GIT_ALLOW_PROTOCOL", "file")
            .env("HOME", "/nonexistent")
            .env("LC_ALL", "C");
        for setting in SAFE_CONFIG {
            c.arg("-c").arg(setting);
        }
        c.arg("-c").arg(format!("core.hooksPath={}", self.hooks.display()));
        c.arg("-c").arg(format!("receive.maxInputSize={}", self.limits.max_push_bytes));
        if let Some(dir) = git_dir {
            c.arg("--git-dir").arg(dir);
        }
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true).process_group(0);
        Cmd { inner: c, input: None, timeout: self.limits.timeout, max_output: self.limits.max_output }
    }
}

/// One git run being set up.
pub struct Cmd {
    inner: tokio::process::Command,
    input: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
}

/// Standard error kept of a failed run.
const MAX_STDERR: usize = 64 * 1024;

impl Cmd {
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Cmd {
        self.inner.arg(a);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.inner.args(args);
        self
    }

    pub fn env(mut self, k: impl AsRef<std::ffi::OsStr>, v: impl AsRef<std::ffi::OsStr>) -> Cmd {
        self.inner.env(k, v);
        self
    }

    /// Bytes written to git's standard input (then closed).
    pub fn input(mut self, bytes: Vec<u8>) -> Cmd {
        self.input = Some(bytes);
        self
    }

    pub fn timeout(mut self, d: Duration) -> Cmd {
        self.timeout = d;
        self
    }

    /// The underlying command, for runs that stream (the transports).
    pub(crate) fn into_inner(self) -> tokio::process::Command {
        self.inner
    }

    /// Runs git to the end; its standard output on success.
    pub async fn output(self) -> Result<Vec<u8>, Error> {
        let (ok, out, err) = self.run().await?;
        if ok {
            Ok(out)
        } else {
            Err(Error::Failed(last_error(&err)))
        }
    }

    /// [`Cmd::output`] as text (lossy UTF-8).
    pub async fn text(self) -> Result<String, Error> {
        Ok(String::from_utf8_lossy(&self.output().await?).into_owned())
    }

    /// Runs git to the end: whether it succeeded (for commands whose failure is an answer,
    /// `merge-base --is-ancestor`), its output and its standard error.
    pub async fn run(mut self) -> Result<(bool, Vec<u8>, Vec<u8>), Error> {
        if self.input.is_some() {
            self.inner.stdin(Stdio::piped());
        }
        let mut child = self.inner.spawn().map_err(|e| Error::Io(format!("git could not be run: {e}")))?;
        let group = Group::new(child.id());
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let input = self.input.take();
        let max = self.max_output;
        let work = async move {
            // Written while the output is read, so neither pipe can fill and stall both sides.
            let write = async move {
                if let (Some(mut w), Some(bytes)) = (stdin, input) {
                    // git may stop reading early (an error): that shows in its status.
                    let _ = w.write_all(&bytes).await;
                }
            };
            let (_, out, err) = tokio::join!(write, read_bounded(stdout, max), read_bounded(stderr, MAX_STDERR));
            let status = child.wait().await?;
            Ok::<_, Error>((status.success(), out?, err.unwrap_or_default()))
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => {
                group.forget();
                r
            }
            Err(_) => Err(Error::Timeout),
        }
    }
}

/// Reads a pipe to its end, keeping at most `max` bytes; more is [`Error::TooLarge`].
async fn read_bounded(pipe: Option<impl AsyncRead + Unpin>, max: usize) -> Result<Vec<u8>, Error> {
    let Some(mut pipe) = pipe else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > max {
            return Err(Error::TooLarge);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// The last `fatal:`/`error:` line of git's standard error, shortened.
pub fn last_error(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| text.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("git failed");
    let line = line.trim_start_matches("fatal:").trim_start_matches("error:").trim();
    line.chars().take(300).collect()
}

/// A git process group, killed when dropped unless [`Group::forget`] says it ended: a run cut off
/// by its bound takes what it started with it (index-pack, pack-objects, hooks).
pub(crate) struct Group(Option<u32>);

impl Group {
    pub(crate) fn new(pid: Option<u32>) -> Group {
        Group(pid)
    }

    /// The run ended by itself (and was reaped): nothing to kill.
    pub(crate) fn forget(mut self) {
        self.0 = None;
    }

    /// Kills the group now. Only while its leader is not yet reaped (or the id could be another's).
    pub(crate) fn kill(&self) {
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals the process group the child leads
            // (`process_group(0)`); it touches no memory.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}
