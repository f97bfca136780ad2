//! Reading another repository (source imports): is there a git repository at a URL, mirror it,
//! and read the mirror (its commits, authors, refs, default branch, large files). Credentials
//! reach git only through the child's environment and an inline credential helper, never the
//! command line or the URL; the address the caller checked is pinned for the transfer (no
//! rebinding); redirects are not followed; only the transports the source needs are allowed.
use std::path::Path;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::command::{last_error, Cmd, Error, Git, Group};
use crate::repo::Repo;

/// An import may run this long (a large history over a slow link).
const IMPORT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Where an import reads from.
#[derive(Clone, Debug)]
pub struct Remote {
    /// A URL the caller approved (`http(s)://…`, or a local path when `local`).
    pub url: String,
    /// A path on this machine (git's file transport), not a remote URL.
    pub local: bool,
    pub username: Option<String>,
    pub password: Option<String>,
    /// `host:port:address` pinned for HTTP(S) sources.
    pub pin: Option<String>,
}

/// Why reading a remote failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteError {
    /// The source needs (other) credentials.
    Auth,
    /// Anything else, with a short message.
    Failed(String),
}

fn classify(stderr: &[u8]) -> RemoteError {
    let text = String::from_utf8_lossy(stderr);
    let auth =
        ["Authentication failed", "could not read Username", "could not read Password", "terminal prompts disabled", "401 Unauthorized"];
    if auth.iter().any(|a| text.contains(a)) {
        RemoteError::Auth
    } else {
        RemoteError::Failed(last_error(stderr))
    }
}

fn failed(e: Error) -> RemoteError {
    RemoteError::Failed(e.to_string())
}

impl Git {
    /// A git command reading `src`, with its credentials and pinned address.
    fn remote_cmd(&self, src: &Remote, dir: Option<&Path>) -> Cmd {
        let mut c = self.cmd(dir).timeout(IMPORT_TIMEOUT);
        if src.local {
            c = c.args(["-c", "protocol.file.allow=always"]);
        } else {
            c = c.env("GIT_ALLOW_PROTOCOL", "http:https").args(["-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always"]);
        }
        if let Some(pin) = &src.pin {
            c = c.arg("-c").arg(format!("http.curloptResolve={pin}"));
        }
        if let (Some(u), Some(p)) = (&src.username, &src.password) {
            c = c.env("PLATFORM_IMPORT_USERNAME", u).env("PLATFORM_IMPORT_PASSWORD", p).args([
                "-c",
                "credential.helper=!f() { test \"$1\" = get && printf 'username=%s\\npassword=%s\\n' \"$PLATFORM_IMPORT_USERNAME\" \"$PLATFORM_IMPORT_PASSWORD\"; }; f",
            ]);
        }
        c
    }

    /// Is there a git repository at the source?
    pub async fn ls_remote(&self, src: &Remote) -> Result<(), RemoteError> {
        let (ok, _, err) = self.remote_cmd(src, None).args(["ls-remote", "--", &src.url]).run().await.map_err(failed)?;
        if ok {
            Ok(())
        } else {
            Err(classify(&err))
        }
    }

    /// Mirrors the source into `dir` (replacing what a crashed attempt left), reporting the
    /// percentage git prints while receiving objects.
    pub async fn clone_mirror(&self, src: &Remote, dir: &Path, progress: &mut (dyn FnMut(i64) + Send)) -> Result<(), RemoteError> {
        if tokio::fs::try_exists(dir).await.unwrap_or(false) {
            let _ = tokio::fs::remove_dir_all(dir).await;
        }
        if let Some(parent) = dir.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| RemoteError::Failed(format!("data directory: {e}")))?;
        }
        let mut c =
            self.remote_cmd(src, None).args(["clone", "--mirror", "--no-hardlinks", "--progress", "--", &src.url]).arg(dir).into_inner();
        c.stdout(std::process::Stdio::null());
        let mut child = c.spawn().map_err(|e| RemoteError::Failed(format!("git could not be run: {e}")))?;
        let group = Group::new(child.id());
        let mut stderr = child.stderr.take().expect("piped");
        let work = async {
            let (mut all, mut line, mut buf) = (Vec::new(), Vec::new(), [0u8; 4096]);
            loop {
                let n = stderr.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                for &b in &buf[..n] {
                    if all.len() < 64 * 1024 {
                        all.push(b);
                    }
                    if b == b'\r' || b == b'\n' {
                        let text = String::from_utf8_lossy(&line);
                        if let Some(rest) = text.strip_prefix("Receiving objects:") {
                            if let Some(p) = rest.trim().split('%').next().and_then(|p| p.trim().parse::<i64>().ok()) {
                                progress(p.clamp(0, 100));
                            }
                        }
                        line.clear();
                    } else if line.len() < 1024 {
                        line.push(b);
                    }
                }
            }
            (child.wait().await, all)
        };
        let Ok((status, all)) = tokio::time::timeout(IMPORT_TIMEOUT, work).await else {
            drop(group);
            let _ = tokio::fs::remove_dir_all(dir).await;
            return Err(RemoteError::Failed("timed out".into()));
        };
        group.forget();
        if status.is_ok_and(|s| s.success()) {
            Ok(())
        } else {
            let _ = tokio::fs::remove_dir_all(dir).await;
            Err(classify(&all))
        }
    }
}

/// A file above the large-file threshold in a mirror's history, with a ref that reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LargeBlob {
    pub ref_name: String,
    pub path: String,
    pub oid: String,
    pub size: i64,
}

impl Repo {
    /// Commits reachable from branches and tags.
    pub async fn all_commits(&self) -> Result<Vec<String>, Error> {
        Ok(self.cmd().args(["rev-list", "--branches", "--tags"]).text().await?.lines().map(str::to_string).collect())
    }

    /// Distinct commit authors, oldest first, as `(email, name)`.
    pub async fn authors(&self) -> Result<Vec<(String, String)>, Error> {
        let out = self.cmd().args(["log", "--branches", "--tags", "--topo-order", "--reverse", "--format=%ae%x00%an"]).text().await?;
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
    pub async fn peeled_refs(&self) -> Result<Vec<(String, String)>, Error> {
        let out = self
            .cmd()
            .args([
                "for-each-ref",
                "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)",
                "refs/heads",
                "refs/tags",
            ])
            .text()
            .await?;
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

    /// The branch `HEAD` names, if any.
    pub async fn head_branch(&self) -> Option<String> {
        let out = self.cmd().args(["symbolic-ref", "--quiet", "HEAD"]).text().await.ok()?;
        out.trim().strip_prefix("refs/heads/").map(str::to_string)
    }

    /// Blobs above `threshold` bytes in the history of branches and tags, with a ref that reaches
    /// each (the default branch first).
    pub async fn large_blobs(&self, threshold: i64, default_branch: Option<&str>) -> Result<Vec<LargeBlob>, Error> {
        let objects = self.cmd().args(["rev-list", "--objects", "--branches", "--tags"]).output().await?;
        let sized =
            self.cmd().args(["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize) %(rest)"]).input(objects).text().await?;
        let mut found: Vec<LargeBlob> = sized
            .lines()
            .filter_map(|l| {
                let mut it = l.splitn(4, ' ');
                let (oid, kind, size, path) = (it.next()?, it.next()?, it.next()?, it.next().unwrap_or(""));
                let size: i64 = size.parse().ok()?;
                (kind == "blob" && size > threshold && !path.is_empty()).then(|| LargeBlob {
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
        let mut order = self.peeled_refs().await?.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        if let Some(b) = default_branch {
            let main = format!("refs/heads/{b}");
            order.sort_by_key(|n| *n != main);
        }
        for r in order {
            if found.iter().all(|f| !f.ref_name.is_empty()) {
                break;
            }
            let reach = self.cmd().args(["rev-list", "--objects", &r]).text().await?;
            for f in found.iter_mut().filter(|f| f.ref_name.is_empty()) {
                if reach.lines().any(|l| l.starts_with(&f.oid)) {
                    f.ref_name = r.clone();
                }
            }
        }
        found.retain(|f| !f.ref_name.is_empty());
        Ok(found)
    }

    /// Copies into this repository the objects `src` has at `tips` (no ref moves: the caller
    /// moves them through [`Repo::update_refs`]).
    pub async fn fetch_objects(&self, src: &Path, tips: &[String]) -> Result<(), Error> {
        let mut input = String::new();
        for t in tips.iter().filter(|t| crate::repo::is_oid(t)) {
            input.push_str(t);
            input.push('\n');
        }
        if input.is_empty() {
            return Ok(());
        }
        self.cmd()
            .args(["fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--stdin", "--"])
            .arg(src)
            .input(input.into_bytes())
            .timeout(IMPORT_TIMEOUT)
            .output()
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn classifies() {
        assert_eq!(classify(b"fatal: could not read Username for 'http://h': terminal prompts disabled"), RemoteError::Auth);
        assert_eq!(
            classify(b"fatal: repository 'http://h/x/' not found\n"),
            RemoteError::Failed("repository 'http://h/x/' not found".into())
        );
    }
}
