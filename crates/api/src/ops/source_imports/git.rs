//! Where an import's git reads from: the source's host, checked against the outbound guard after
//! resolution and pinned for the transfer (no rebinding). Git itself runs in `platform_git`
//! (`remote`): credentials only through the child's environment, prompts disabled, no user or
//! system configuration, redirects not followed.
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use super::source::Kind;
use crate::outbound::AllowList;

pub use platform_git::{Remote as Source, RemoteError as GitError};

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

/// Is `tool` installed (`svn`, `hg`)?
pub fn tool_present(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
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
    }
}
