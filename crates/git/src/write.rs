//! Writing through plumbing: blobs (`hash-object`), trees edited from a base (`mktree`, one
//! level at a time, only the directories that change), commits (`commit-tree`) and ref updates
//! (`update-ref --stdin`: all or none, each checked against the value the caller expects). The
//! ref update is the one way the server moves refs outside a push.
use std::collections::BTreeMap;

use crate::command::Error;
use crate::objects::{Kind, Person};
use crate::repo::{is_oid, RefUpdate, Repo, ZERO};

/// A file to write at a path: its contents and whether it is executable; `None` removes it.
pub type FileChange = Option<(Vec<u8>, bool)>;

/// What a new commit says of itself.
#[derive(Clone, Debug)]
pub struct NewCommit<'a> {
    pub tree: &'a str,
    pub parents: &'a [String],
    pub message: &'a str,
    pub author: &'a Person,
    pub committer: &'a Person,
}

/// What a new annotated tag says of itself.
#[derive(Clone, Debug)]
pub struct NewTag<'a> {
    /// The object it names, which must exist and be of type `kind`.
    pub object: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub tagger: &'a Person,
    pub message: &'a str,
}

/// A name or email git would refuse or silently alter.
fn bad_ident(s: &str) -> bool {
    s.contains(['<', '>', '\n', '\0'])
}

fn oid_of(out: Vec<u8>) -> Result<String, Error> {
    let s = String::from_utf8_lossy(&out).trim().to_string();
    if is_oid(&s) {
        Ok(s)
    } else {
        Err(Error::Failed(format!("unexpected output {s:?}")))
    }
}

impl Repo {
    /// Stores `bytes` as a blob.
    pub async fn write_blob(&self, bytes: Vec<u8>) -> Result<String, Error> {
        oid_of(self.cmd().args(["hash-object", "-w", "--stdin"]).input(bytes).output().await?)
    }

    /// A new tree: `base` (a tree, or none for empty) with `changes` applied at their
    /// slash-separated paths; directories left empty disappear. Only the changed directories are
    /// read and written.
    pub async fn edit_tree(&self, base: Option<&str>, changes: &BTreeMap<String, FileChange>) -> Result<String, Error> {
        for path in changes.keys() {
            let bad = path.is_empty()
                || path.starts_with('/')
                || path.ends_with('/')
                || path.contains('\0')
                || path.split('/').any(|s| s.is_empty() || s == "." || s == ".." || s.eq_ignore_ascii_case(".git"));
            if bad {
                return Err(Error::Invalid(format!("bad path {path:?}")));
            }
        }
        let changes: Vec<(&str, &FileChange)> = changes.iter().map(|(p, c)| (p.as_str(), c)).collect();
        Ok(Box::pin(self.edit_level(base.map(str::to_string), &changes)).await?.unwrap_or_else(|| crate::repo::EMPTY_TREE.to_string()))
    }

    /// One directory level of [`Repo::edit_tree`]; `None` when it ends up empty.
    async fn edit_level(&self, base: Option<String>, changes: &[(&str, &FileChange)]) -> Result<Option<String>, Error> {
        // name -> (mode, type, oid)
        let mut entries: BTreeMap<String, (String, &'static str, String)> = BTreeMap::new();
        if let Some(b) = &base {
            for e in self.tree(b, false).await? {
                let kind = match e.kind {
                    Kind::Blob => "blob",
                    Kind::Tree => "tree",
                    Kind::Commit => "commit",
                };
                entries.insert(e.path, (e.mode, kind, e.oid));
            }
        }
        let mut below: BTreeMap<&str, Vec<(&str, &FileChange)>> = BTreeMap::new();
        for (path, change) in changes {
            match path.split_once('/') {
                Some((dir, rest)) => below.entry(dir).or_default().push((rest, change)),
                None => match change {
                    Some((bytes, exec)) => {
                        let oid = self.write_blob(bytes.clone()).await?;
                        entries.insert(path.to_string(), ((if *exec { "100755" } else { "100644" }).into(), "blob", oid));
                    }
                    None => {
                        entries.remove(*path);
                    }
                },
            }
        }
        for (dir, sub) in below {
            let current = entries.get(dir).filter(|e| e.1 == "tree").map(|e| e.2.clone());
            match Box::pin(self.edit_level(current, &sub)).await? {
                Some(oid) => {
                    entries.insert(dir.to_string(), ("040000".into(), "tree", oid));
                }
                None => {
                    entries.remove(dir);
                }
            }
        }
        if entries.is_empty() {
            return Ok(None);
        }
        let mut input = Vec::new();
        for (name, (mode, kind, oid)) in &entries {
            input.extend_from_slice(format!("{mode} {kind} {oid}\t{name}").as_bytes());
            input.push(0);
        }
        Ok(Some(oid_of(self.cmd().args(["mktree", "-z"]).input(input).output().await?)?))
    }

    /// Writes a commit object.
    pub async fn write_commit(&self, c: &NewCommit<'_>) -> Result<String, Error> {
        let people = [c.author, c.committer];
        if people.iter().any(|p| bad_ident(&p.name) || bad_ident(&p.email) || p.name.trim().is_empty()) {
            return Err(Error::Invalid("names and emails may not contain <, > or line breaks".into()));
        }
        if !is_oid(c.tree) || !c.parents.iter().all(|p| is_oid(p)) {
            return Err(Error::Invalid("not an object name".into()));
        }
        let mut cmd = self.cmd().args(["commit-tree", c.tree]);
        for p in c.parents {
            cmd = cmd.args(["-p", p]);
        }
        let cmd = cmd
            .env("GIT_AUTHOR_NAME", &c.author.name)
            .env("GIT_AUTHOR_EMAIL", &c.author.email)
            .env("GIT_AUTHOR_DATE", c.author.git_date())
            .env("GIT_COMMITTER_NAME", &c.committer.name)
            .env("GIT_COMMITTER_EMAIL", &c.committer.email)
            .env("GIT_COMMITTER_DATE", c.committer.git_date())
            .input(c.message.as_bytes().to_vec());
        oid_of(cmd.output().await.map_err(|e| match e {
            Error::Failed(m) => Error::Invalid(m),
            other => other,
        })?)
    }

    /// Writes an annotated tag object through `mktag`, which checks it as `fsck` would (the
    /// object exists with that type, the name and tagger are well formed).
    pub async fn write_tag(&self, t: &NewTag<'_>) -> Result<String, Error> {
        if bad_ident(&t.tagger.name) || bad_ident(&t.tagger.email) || t.tagger.name.trim().is_empty() {
            return Err(Error::Invalid("names and emails may not contain <, > or line breaks".into()));
        }
        if !is_oid(t.object) || !["commit", "tree", "blob", "tag"].contains(&t.kind) {
            return Err(Error::Invalid("not an object name".into()));
        }
        if t.name.is_empty() || t.name.contains(['\n', '\0']) {
            return Err(Error::Invalid("bad tag name".into()));
        }
        let mut message = t.message.to_string();
        if !message.is_empty() && !message.ends_with('\n') {
            message.push('\n');
        }
        let p = t.tagger;
        let date = p.git_date();
        let text = format!(
            "object {}\ntype {}\ntag {}\ntagger {} <{}> {}\n\n{message}",
            t.object,
            t.kind,
            t.name,
            p.name,
            p.email,
            date.trim_start_matches('@')
        );
        oid_of(self.cmd().arg("mktag").input(text.into_bytes()).output().await.map_err(|e| match e {
            Error::Failed(m) => Error::Invalid(m),
            other => other,
        })?)
    }

    /// Moves refs, all or none: each must still name its `old` object ([`ZERO`]: must not exist)
    /// or nothing changes and [`Error::Invalid`] says which did not.
    pub async fn update_refs(&self, updates: &[RefUpdate]) -> Result<(), Error> {
        let mut input = Vec::new();
        for u in updates {
            if !is_oid(&u.old) || !is_oid(&u.new) || u.name.contains('\0') {
                return Err(Error::Invalid(format!("bad update of {:?}", u.name)));
            }
            let line = if u.new == ZERO {
                format!("delete {}\0{}\0", u.name, u.old)
            } else {
                format!("update {}\0{}\0{}\0", u.name, u.new, u.old)
            };
            input.extend_from_slice(line.as_bytes());
        }
        if input.is_empty() {
            return Ok(());
        }
        self.cmd().args(["update-ref", "--stdin", "-z"]).input(input).output().await.map(|_| ()).map_err(|e| match e {
            Error::Failed(m) => Error::Invalid(m),
            other => other,
        })
    }
}
