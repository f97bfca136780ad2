//! What pushed commits changed and hold, for the records of a push: per commit, the paths it
//! added, removed and modified against its first parent (a root commit: everything added); and
//! the files of one directory at a commit (the workflow files a push may start).
use std::collections::HashMap;

use crate::command::Error;
use crate::objects::Status;
use crate::repo::{is_oid, Repo};

/// The paths one commit changed, each list sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
}

impl Repo {
    /// [`Touched`] of each of `commits` (one `diff-tree --stdin` for all of them).
    pub async fn touched(&self, commits: &[String]) -> Result<HashMap<String, Touched>, Error> {
        let input: String = commits.iter().filter(|c| is_oid(c)).map(|c| format!("{c}\n")).collect();
        if input.is_empty() {
            return Ok(HashMap::new());
        }
        let out = self
            .cmd()
            .args(["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--name-status", "--root", "-m", "--first-parent"])
            .input(input.into_bytes())
            .output()
            .await?;
        Ok(parse(&out))
    }
}

impl Repo {
    /// The files directly in `dir` (e.g. `.workflows/`) at `commit` whose names end with one of
    /// `suffixes`, each no larger than `max_bytes` (larger ones left out), by path.
    pub async fn files_in(&self, commit: &str, dir: &str, suffixes: &[&str], max_bytes: u64) -> Result<Vec<(String, Vec<u8>)>, Error> {
        if !is_oid(commit) {
            return Ok(Vec::new());
        }
        let listing = self.cmd().args(["ls-tree", "-z", "-l", commit, "--", dir]).output().await?;
        let mut wanted = Vec::new();
        for rec in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            let Some((meta, path)) = rec.split_once('\t') else { continue };
            let f: Vec<&str> = meta.split_whitespace().collect();
            let small = f.get(3).and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n <= max_bytes);
            if f.get(1) == Some(&"blob") && small && suffixes.iter().any(|s| path.ends_with(s)) {
                wanted.push((path.to_string(), f[2].to_string()));
            }
        }
        let mut files = Vec::new();
        for (path, oid) in wanted {
            if let Some(bytes) = self.blob(&oid, max_bytes).await? {
                files.push((path, bytes));
            }
        }
        Ok(files)
    }
}

/// `diff-tree --stdin -z --name-status`: each commit's name, then `status\0path\0` pairs (a
/// status is never a 40-hex name, so a name starts the next commit).
fn parse(out: &[u8]) -> HashMap<String, Touched> {
    let mut all: HashMap<String, Touched> = HashMap::new();
    let mut fields = out.split(|b| *b == 0).map(String::from_utf8_lossy);
    let mut current: Option<String> = None;
    while let Some(f) = fields.next() {
        if f.is_empty() {
            continue;
        }
        if is_oid(&f) {
            current = Some(f.into_owned());
            continue;
        }
        let (Some(c), Some(path)) = (current.as_ref(), fields.next()) else { break };
        let t = all.entry(c.clone()).or_default();
        let list = match Status::of_letter(&f) {
            Status::Added => &mut t.added,
            Status::Removed => &mut t.removed,
            Status::Modified => &mut t.modified,
        };
        list.push(path.into_owned());
    }
    for t in all.values_mut() {
        t.added.sort();
        t.removed.sort();
        t.modified.sort();
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_and_their_paths() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        // A path that looks like a name is still a path where a path is due.
        let out = format!("{a}\0M\0x.txt\0A\0{b}\0D\0old\0{b}\0A\0z\0A\0y\0");
        let t = parse(out.as_bytes());
        assert_eq!(t[&a], Touched { added: vec![b.clone()], removed: vec!["old".into()], modified: vec!["x.txt".into()] });
        assert_eq!(t[&b].added, ["y", "z"]);
    }
}
