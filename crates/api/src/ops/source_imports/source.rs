//! What an import's `vcs_url` names, decided once for the API and the worker: a remote
//! `http(s)://` URL (host checked by the outbound guard when git runs), or — only when the
//! operator turned local sources on — an absolute path on the server, never inside another
//! import's mirror. Every other spelling (`file:` in any case or encoding, relative paths,
//! `ext::`, scp-like and option-like values, credentials in the URL) is refused, so git is only
//! ever given a URL this module approved.
use std::path::{Path, PathBuf};

use crate::state::ImportSettings;

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// `http://` or `https://` with a host and no userinfo.
    Remote { host: String, port: u16 },
    /// An absolute path on this machine (the `file://` form decoded as git decodes it).
    Local(PathBuf),
}

/// Classifies `url`, or says why it may not be imported.
pub fn classify(url: &str, settings: &ImportSettings) -> Result<Kind, String> {
    if url.is_empty() || url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("vcs_url must be a URL without spaces or control characters".into());
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        let authority = url.split("://").nth(1).unwrap_or("").split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            return Err("vcs_url must not contain credentials; send vcs_username and vcs_password".into());
        }
        if authority.contains(['%', '\\']) {
            return Err("vcs_url must name its host plainly (no percent-encoding)".into());
        }
        let (host, port) = super::git::http_host(url).ok_or("vcs_url must be an http(s) URL with a host")?;
        return Ok(Kind::Remote { host, port });
    }
    let path = if url.starts_with('/') {
        Some(PathBuf::from(url))
    } else {
        // git's own spelling of a local URL; its path is percent-decoded by git.
        url.strip_prefix("file://").map(|rest| PathBuf::from(crate::request::percent_decode_path(rest)))
    };
    let Some(path) = path.filter(|p| p.is_absolute()) else {
        let local = if settings.local_sources { " or an absolute local path" } else { "" };
        return Err(format!("vcs_url must be an http(s) URL{local}"));
    };
    if !settings.local_sources {
        return Err("vcs_url must be an http(s) URL: this server does not import from its own disk".into());
    }
    // Never the server's own data: other imports' mirrors, and repositories the caller may not read.
    if inside(&path, &settings.root()) {
        return Err("vcs_url names the server's own data".into());
    }
    Ok(Kind::Local(path))
}

/// Is `path` (as the file system resolves it, `..` and links included) inside `dir`?
fn inside(path: &Path, dir: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| normalise(p));
    canon(path).starts_with(canon(dir)) || normalise(path).starts_with(normalise(dir))
}

/// `.` and `..` removed lexically (for paths that do not exist yet).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(local: bool) -> ImportSettings {
        ImportSettings { data_dir: Some(std::env::temp_dir().join("platformd-source-test")), step_seconds: 0, local_sources: local }
    }

    #[test]
    fn remote_forms() {
        let s = settings(false);
        assert_eq!(classify("https://example.com/r.git", &s), Ok(Kind::Remote { host: "example.com".into(), port: 443 }));
        assert_eq!(classify("http://[::1]:81/r", &s), Ok(Kind::Remote { host: "::1".into(), port: 81 }));
        for bad in [
            "http://u:p@h/r",
            "http://h\\@127.0.0.1/r",
            "http://%31%32%37.0.0.1/r",
            "https://",
            "http:///etc",
            "http://h/r x",
            "http://h/\nr",
        ] {
            assert!(classify(bad, &s).is_err(), "{bad}");
        }
    }

    #[test]
    fn local_spellings_refused_by_default() {
        let s = settings(false);
        for bad in [
            "/etc",
            "file:///etc",
            "FILE:///etc",
            "file:/etc",
            "File://localhost/etc",
            "file%3A%2F%2F%2Fetc",
            "%2Fetc",
            "./x",
            "../x",
            "~/x",
            "relative/path",
            "ext::sh -c touch% /tmp/pwned",
            "fd::0",
            "-uhelp",
            "--upload-pack=touch /tmp/x",
            "ssh://h/r",
            "git://h/r",
            "h:r.git",
            "\\\\host\\share",
        ] {
            assert!(classify(bad, &s).is_err(), "{bad}");
        }
    }

    #[test]
    fn local_sources_when_turned_on() {
        let s = settings(true);
        assert_eq!(classify("/srv/git/r.git", &s), Ok(Kind::Local("/srv/git/r.git".into())));
        assert_eq!(classify("file:///srv/git/r%20x.git", &s), Ok(Kind::Local("/srv/git/r x.git".into())));
        let mirrors = s.mirrors();
        let m = mirrors.to_str().unwrap();
        for bad in [
            format!("{m}/1-abc.git"),
            format!("file://{m}/1-abc.git"),
            format!("{m}/../imports/1.git"),
            format!("file://{}", m.replace('/', "%2F")),
            format!("file://{m}/%2e%2e/imports/1.git"),
            "relative/path".into(),
            "ext::sh".into(),
        ] {
            assert!(classify(&bad, &s).is_err(), "{bad}");
        }
    }
}
