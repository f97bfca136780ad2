//! The machine's `git`, run as a child process (blocking: callers use `spawn_blocking`).
//! Credentials reach git only through the child's environment and an inline credential helper,
//! never the command line or the URL; prompts are disabled; user and system git configuration
//! are ignored. Remote hosts are checked against the outbound guard after resolution and the
//! checked address is pinned for the transfer (no rebinding); redirects are not followed.
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use platform_store::domain::source_imports::LargeFile;

use super::source::Kind;
use crate::ops::hooks::deliveries::AllowList;

/// Where an import reads from.
#[derive(Clone)]
pub struct Source {
    /// A URL [`super::source::classify`] approved.
    pub url: String,
    /// A local path (git may use its file transport), not a remote URL.
    pub local: bool,
    pub username: Option<String>,
    pub password: Option<String>,
    /// `host:port:address` pinned for HTTP(S) sources (see [`guard`]).
    pub pin: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum GitError {
    /// The source needs (other) credentials.
    Auth,
    /// Anything else, with a short message for `error_message`.
    Failed(String),
}

/// Host and port of an `http(s)://` URL; `None` when it is not one. Userinfo is refused by the
/// caller before this.
pub fn http_host(url: &str) -> Option<(String, u16)> {
    let (rest, default_port) = if let Some(r) = url.strip_prefix("https://") {
        (r, 443)
    } else if let Some(r) = url.strip_prefix("http://") {
        (r, 80)
    } else {
        return None;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h.to_string(), after.strip_prefix(':').map(str::to_string))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    (!host.is_empty()).then_some((host, port))
}

/// Resolves a remote source's host and refuses internal addresses unless allow-listed;
/// returns the `host:port:address` to pin. Local paths (allowed by configuration) need none.
pub async fn guard(kind: &Kind, allow: &AllowList) -> Result<Option<String>, String> {
    let Kind::Remote { host, port } = kind else { return Ok(None) };
    let (host, port) = (host.clone(), *port);
    let addrs: Vec<SocketAddr> =
        tokio::net::lookup_host((host.as_str(), port)).await.map_err(|_| format!("could not resolve host {host}"))?.collect();
    let Some(first) = addrs.first() else { return Err(format!("could not resolve host {host}")) };
    if !allow.host_allowed(&host) {
        if let Some(bad) = addrs.iter().find(|a| !allow.ip_allowed(a.ip())) {
            return Err(format!("refused: {host} resolves to {}, an internal address", bad.ip()));
        }
    }
    let ip = match first.ip() {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    Ok(Some(format!("{}:{port}:{ip}", host.trim_start_matches('[').trim_end_matches(']'))))
}

/// A git command with the safe environment, credentials and pinning of `src`: nothing of the
/// server's environment (no `GIT_*`, no proxies), only the transports the source needs.
fn git(src: Option<&Source>) -> Command {
    let mut c = Command::new("git");
    c.env_clear();
    for keep in ["PATH", "TMPDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            c.env(keep, v);
        }
    }
    let protocols = if src.is_some_and(|s| s.local) { "file" } else { "http:https" };
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ALLOW_PROTOCOL", protocols)
        .env("HOME", "/nonexistent")
        .env("LC_ALL", "C")
        .args(["-c", "http.followRedirects=false", "-c", "credential.helper=", "-c", "protocol.allow=never"])
        .args(["-c", &format!("protocol.{}.allow=always", if protocols == "file" { "file" } else { "https" })])
        .stdin(Stdio::null());
    if protocols != "file" {
        c.args(["-c", "protocol.http.allow=always"]);
    }
    if let Some(s) = src {
        if let Some(pin) = &s.pin {
            c.args(["-c", &format!("http.curloptResolve={pin}")]);
        }
        if let (Some(u), Some(p)) = (&s.username, &s.password) {
            c.env("PLATFORM_IMPORT_USERNAME", u).env("PLATFORM_IMPORT_PASSWORD", p).args([
                "-c",
                "credential.helper=!f() { test \"$1\" = get && printf 'username=%s\\npassword=%s\\n' \"$PLATFORM_IMPORT_USERNAME\" \"$PLATFORM_IMPORT_PASSWORD\"; }; f",
            ]);
        }
    }
    c
}

/// The message of a failed git run: its last `fatal:`/`error:` line, shortened.
fn message(stderr: &str) -> String {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("git failed");
    let line = line.trim_start_matches("fatal:").trim_start_matches("error:").trim();
    line.chars().take(300).collect()
}

fn classify(stderr: &str) -> GitError {
    let auth =
        ["Authentication failed", "could not read Username", "could not read Password", "terminal prompts disabled", "401 Unauthorized"];
    if auth.iter().any(|a| stderr.contains(a)) {
        GitError::Auth
    } else {
        GitError::Failed(message(stderr))
    }
}

fn run(mut c: Command) -> Result<String, GitError> {
    let out = c.output().map_err(|e| GitError::Failed(format!("git could not be run: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(classify(&String::from_utf8_lossy(&out.stderr)))
    }
}

/// Is there a Git repository at the source?
pub fn ls_remote(src: &Source) -> Result<(), GitError> {
    let mut c = git(Some(src));
    c.args(["ls-remote", "--", &src.url]);
    run(c).map(|_| ())
}

/// Is `tool` installed (`svn`, `hg`)?
pub fn tool_present(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Mirrors the source into `dir` (replacing what a crashed attempt left), reporting the
/// percentage git prints while receiving objects.
pub fn clone_mirror(src: &Source, dir: &Path, progress: &mut dyn FnMut(i64)) -> Result<(), GitError> {
    if dir.exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| GitError::Failed(format!("data directory: {e}")))?;
    }
    let mut c = git(Some(src));
    c.args(["clone", "--mirror", "--no-hardlinks", "--progress", "--", &src.url]).arg(dir).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| GitError::Failed(format!("git could not be run: {e}")))?;
    let mut stderr = child.stderr.take().expect("piped");
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let mut line = Vec::new();
    loop {
        let n = stderr.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            all.push(b);
            if b == b'\r' || b == b'\n' {
                let text = String::from_utf8_lossy(&line);
                if let Some(rest) = text.strip_prefix("Receiving objects:") {
                    if let Some(p) = rest.trim().split('%').next().and_then(|p| p.trim().parse::<i64>().ok()) {
                        progress(p.clamp(0, 100));
                    }
                }
                line.clear();
            } else {
                line.push(b);
            }
        }
    }
    let status = child.wait().map_err(|e| GitError::Failed(e.to_string()))?;
    if status.success() {
        Ok(())
    } else {
        let _ = std::fs::remove_dir_all(dir);
        Err(classify(&String::from_utf8_lossy(&all)))
    }
}

fn local(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let mut c = git(None);
    c.arg("--git-dir").arg(dir).args(args);
    run(c)
}

/// Commits reachable from branches and tags.
pub fn commits(dir: &Path) -> Result<Vec<String>, GitError> {
    Ok(local(dir, &["rev-list", "--branches", "--tags"])?.lines().map(str::to_string).collect())
}

/// Distinct commit authors, oldest first, as `(email, name)`.
pub fn authors(dir: &Path) -> Result<Vec<(String, String)>, GitError> {
    let out = local(dir, &["log", "--branches", "--tags", "--topo-order", "--reverse", "--format=%ae%x00%an"])?;
    let mut seen = std::collections::HashSet::new();
    let mut list = Vec::new();
    for l in out.lines() {
        if let Some((email, name)) = l.split_once('\0') {
            if seen.insert(email.to_string()) {
                list.push((email.to_string(), name.to_string()));
            }
        }
    }
    Ok(list)
}

/// Branches and tags with the commit each points at (annotated tags peeled; refs to other
/// objects left out).
pub fn refs(dir: &Path) -> Result<Vec<(String, String)>, GitError> {
    let out = local(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)",
            "refs/heads",
            "refs/tags",
        ],
    )?;
    let mut list = Vec::new();
    for l in out.lines() {
        let f: Vec<&str> = l.split('\0').collect();
        if f.len() != 5 {
            continue;
        }
        match (f[1], f[3]) {
            ("commit", _) => list.push((f[0].to_string(), f[2].to_string())),
            ("tag", "commit") => list.push((f[0].to_string(), f[4].to_string())),
            _ => {}
        }
    }
    Ok(list)
}

/// The source's default branch name, if its HEAD names one.
pub fn head_branch(dir: &Path) -> Option<String> {
    local(dir, &["symbolic-ref", "--quiet", "HEAD"]).ok()?.trim().strip_prefix("refs/heads/").map(str::to_string)
}

/// Blobs above `threshold` bytes in the history of branches and tags, with a ref that reaches
/// each (the default branch first).
pub fn large_files(dir: &Path, threshold: i64, default_branch: Option<&str>) -> Result<Vec<LargeFile>, GitError> {
    let objects = local(dir, &["rev-list", "--objects", "--branches", "--tags"])?;
    let sized = batch_check(dir, &objects)?;
    let mut found: Vec<LargeFile> = sized
        .lines()
        .filter_map(|l| {
            let mut it = l.splitn(4, ' ');
            let (oid, kind, size, path) = (it.next()?, it.next()?, it.next()?, it.next().unwrap_or(""));
            let size: i64 = size.parse().ok()?;
            (kind == "blob" && size > threshold && !path.is_empty()).then(|| LargeFile {
                ref_name: String::new(),
                path: path.to_string(),
                oid: oid.to_string(),
                size,
            })
        })
        .collect();
    if found.is_empty() {
        return Ok(found);
    }
    let mut order = refs(dir)?.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    if let Some(b) = default_branch {
        let main = format!("refs/heads/{b}");
        order.sort_by_key(|n| *n != main);
    }
    for r in order {
        if found.iter().all(|f| !f.ref_name.is_empty()) {
            break;
        }
        let reach = local(dir, &["rev-list", "--objects", &r])?;
        for f in found.iter_mut().filter(|f| f.ref_name.is_empty()) {
            if reach.lines().any(|l| l.starts_with(&f.oid)) {
                f.ref_name = r.clone();
            }
        }
    }
    found.retain(|f| !f.ref_name.is_empty());
    Ok(found)
}

/// `git cat-file --batch-check` over `rev-list --objects` output: `oid type size path`.
fn batch_check(dir: &Path, objects: &str) -> Result<String, GitError> {
    let mut c = git(None);
    c.arg("--git-dir").arg(dir).args(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize) %(rest)"]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| GitError::Failed(format!("git could not be run: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = objects.to_string();
    // Written from another thread: git's output would otherwise fill its pipe and block both.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().map_err(|e| GitError::Failed(e.to_string()))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(classify(&String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hosts() {
        assert_eq!(http_host("https://example.com/x.git"), Some(("example.com".into(), 443)));
        assert_eq!(http_host("http://127.0.0.1:8080/r"), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(http_host("http://[::1]:81/r"), Some(("::1".into(), 81)));
        assert_eq!(http_host("http://u:p@h/r"), None);
        assert_eq!(http_host("ssh://h/r"), None);
        assert_eq!(classify("fatal: could not read Username for 'http://h': terminal prompts disabled"), GitError::Auth);
        assert_eq!(classify("fatal: repository 'http://h/x/' not found\n"), GitError::Failed("repository 'http://h/x/' not found".into()));
    }
}
