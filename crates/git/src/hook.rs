//! The server's `pre-receive` hook and the channel it talks to the server over.
//!
//! Git runs the hook (from the server's hooks directory, never a repository's) after a push's
//! objects arrived in quarantine and before any ref moves. The hook is POSIX `sh` only, so the
//! server need not be a program git can start (the HTTP suite runs the server inside the test
//! binary): it writes what git gave it to a FIFO the server created for this push, reads the
//! server's answer from a second FIFO, prints the answer's lines (git shows them to the client as
//! `remote:` lines) and exits 0 to let the refs move or 1 to refuse. If the server is gone, the
//! hook reads end-of-file and refuses: no ref moves without the server's word.
//!
//! Request (hook → server), one item a line: `quarantine <path>`, then git's `<old> <new> <ref>`
//! lines, then `end`. Answer (server → hook): `say <text>` lines, then `accept` or `refuse`.
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use crate::command::Error;
use crate::repo::RefUpdate;

/// The variable naming the push's channel directory in the hook's environment.
pub const CHANNEL_VAR: &str = "PLATFORM_PUSH_CHANNEL";

const PRE_RECEIVE: &str = r#"#!/bin/sh
# platformd: hands a push's ref updates to the server and relays its answer.
dir="$PLATFORM_PUSH_CHANNEL"
if [ -z "$dir" ] || [ ! -p "$dir/request" ] || [ ! -p "$dir/reply" ]; then
  echo "error: pushes are not accepted here" >&2
  exit 1
fi
# The reply end is opened first: an answer written before the hook reads it stays in the pipe.
exec 3< "$dir/reply" || exit 1
{ printf 'quarantine %s\n' "$GIT_QUARANTINE_PATH"; cat; printf 'end\n'; } > "$dir/request" || exit 1
while IFS= read -r line <&3; do
  case "$line" in
    accept) exit 0 ;;
    refuse) exit 1 ;;
    "say "*) printf '%s\n' "${line#say }" >&2 ;;
  esac
done
echo "error: the server did not answer" >&2
exit 1
"#;

/// Writes the hooks directory: the `pre-receive` hook and nothing else.
pub(crate) fn install(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("pre-receive");
    let tmp = dir.join(format!(".pre-receive-{}", crate::storage::random_suffix()));
    std::fs::write(&tmp, PRE_RECEIVE)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700))?;
    std::fs::rename(&tmp, &path)
}

/// What the hook asks: the ref updates and where their objects wait.
#[derive(Clone, Debug)]
pub struct HookRequest {
    pub quarantine: PathBuf,
    pub updates: Vec<RefUpdate>,
}

/// The server's answer to the hook.
#[derive(Clone, Debug, Default)]
pub struct Decision {
    pub accept: bool,
    /// Shown to the client as `remote:` lines.
    pub messages: Vec<String>,
}

impl Decision {
    pub fn accept() -> Decision {
        Decision { accept: true, messages: Vec::new() }
    }

    pub fn refuse(messages: Vec<String>) -> Decision {
        Decision { accept: false, messages }
    }
}

/// A push's FIFO pair in a directory of its own (removed when dropped). Both ends are held open
/// read-write by the server from the start, so the hook never waits for the server to open them.
pub(crate) struct Channel {
    dir: PathBuf,
    request: BufReader<pipe::Receiver>,
    reply: Option<pipe::Sender>,
}

/// Request lines read at most (one per ref update, and a few).
const MAX_REQUEST_LINES: usize = 100_000;

fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::other("NUL in path"))?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Channel {
    pub(crate) fn open(runtime: &Path) -> Result<Channel, Error> {
        let dir = runtime.join(format!("push-{}", crate::storage::random_suffix()));
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let opened = (|| -> std::io::Result<(pipe::Receiver, pipe::Sender)> {
            mkfifo(&dir.join("request"))?;
            mkfifo(&dir.join("reply"))?;
            let request = pipe::OpenOptions::new().read_write(true).open_receiver(dir.join("request"))?;
            let reply = pipe::OpenOptions::new().read_write(true).open_sender(dir.join("reply"))?;
            Ok((request, reply))
        })();
        match opened {
            Ok((request, reply)) => Ok(Channel { dir, request: BufReader::new(request), reply: Some(reply) }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e.into())
            }
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The hook's request (waits for the hook to run).
    pub(crate) async fn request(&mut self) -> Result<HookRequest, Error> {
        let mut quarantine = None;
        let mut updates = Vec::new();
        let mut line = String::new();
        for _ in 0..MAX_REQUEST_LINES {
            line.clear();
            if self.request.read_line(&mut line).await? == 0 {
                break;
            }
            let l = line.trim_end_matches('\n');
            if l == "end" {
                let quarantine = quarantine.ok_or_else(|| Error::Invalid("the hook named no quarantine".into()))?;
                return Ok(HookRequest { quarantine, updates });
            }
            if let Some(q) = l.strip_prefix("quarantine ") {
                quarantine = Some(PathBuf::from(q));
                continue;
            }
            let f: Vec<&str> = l.splitn(3, ' ').collect();
            if let [old, new, name] = f[..] {
                updates.push(RefUpdate { name: name.to_string(), old: old.to_string(), new: new.to_string() });
            }
        }
        Err(Error::Invalid("the hook's request ended early".into()))
    }

    /// Sends the answer; the hook then exits (and the channel is done).
    pub(crate) async fn answer(&mut self, d: &Decision) -> Result<(), Error> {
        let mut text = String::new();
        for m in &d.messages {
            if m.is_empty() {
                text.push_str("say \n");
            }
            for l in m.lines() {
                text.push_str("say ");
                text.push_str(l);
                text.push('\n');
            }
        }
        text.push_str(if d.accept { "accept\n" } else { "refuse\n" });
        if let Some(mut w) = self.reply.take() {
            w.write_all(text.as_bytes()).await?;
            // Dropped: with no writer left, the hook reads the end after the answer.
        }
        Ok(())
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
