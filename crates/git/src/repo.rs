//! One bare repository: its refs and `HEAD`, and the view of a push's quarantine (the new
//! objects of a push not yet accepted, readable beside the repository's own).
use std::path::{Path, PathBuf};

use crate::command::{Cmd, Error, Git};

/// The object name git writes for "no object" (a ref created or deleted).
pub const ZERO: &str = "0000000000000000000000000000000000000000";
/// The empty tree's name (the base a root commit's changes are read against).
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Is `s` a full object name (40 lower-case hexadecimal digits)?
pub fn is_oid(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A ref and the object it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    pub name: String,
    pub oid: String,
}

/// A change of one ref: from `old` to `new` ([`ZERO`] for none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefUpdate {
    pub name: String,
    pub old: String,
    pub new: String,
}

impl RefUpdate {
    pub fn is_create(&self) -> bool {
        self.old == ZERO
    }
    pub fn is_delete(&self) -> bool {
        self.new == ZERO
    }
}

/// A repository on disk and how to run git on it.
#[derive(Clone, Debug)]
pub struct Repo {
    dir: PathBuf,
    pub(crate) git: Git,
    pub(crate) runtime: std::sync::Arc<crate::storage::Runtime>,
    /// A push's quarantine: new objects read from there, the repository's as alternates.
    quarantine: Option<PathBuf>,
}

impl Repo {
    pub(crate) fn new(dir: PathBuf, git: Git, runtime: std::sync::Arc<crate::storage::Runtime>) -> Repo {
        Repo { dir, git, runtime, quarantine: None }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This repository as a push in quarantine sees it: the objects git received (not yet
    /// accepted) beside the repository's own. `path` must be a quarantine directory inside it.
    pub fn quarantined(&self, path: &Path) -> Result<Repo, Error> {
        let objects = self.dir.join("objects");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.parent() != Some(objects.as_path()) || !name.starts_with("tmp_objdir-incoming-") {
            return Err(Error::Invalid("not a quarantine of this repository".into()));
        }
        Ok(Repo { quarantine: Some(path.to_path_buf()), ..self.clone() })
    }

    /// A git command on this repository (in its quarantine, when it is a push's view).
    pub fn cmd(&self) -> Cmd {
        let c = self.git.cmd(Some(&self.dir));
        match &self.quarantine {
            Some(q) => c.env("GIT_OBJECT_DIRECTORY", q).env("GIT_ALTERNATE_OBJECT_DIRECTORIES", self.dir.join("objects")),
            None => c,
        }
    }

    /// Points `HEAD` at `branch` unless it already does (written aside and renamed into
    /// place: readers see the old or the new `HEAD`, never a partial one).
    pub async fn set_head(&self, branch: &str) -> Result<(), Error> {
        if branch.is_empty() || branch.starts_with('-') || branch.contains(['\n', '\0']) || branch.contains("..") {
            return Err(Error::Invalid(format!("bad branch name {branch:?}")));
        }
        let want = format!("ref: refs/heads/{branch}\n");
        let path = self.dir.join("HEAD");
        if tokio::fs::read_to_string(&path).await.ok().as_deref() == Some(want.as_str()) {
            return Ok(());
        }
        let tmp = self.dir.join(format!("HEAD.new-{}", crate::storage::random_suffix()));
        tokio::fs::write(&tmp, want).await?;
        tokio::fs::rename(&tmp, &path).await?;
        Ok(())
    }

    /// Every branch and tag with the object it names (annotated tags not peeled).
    pub async fn refs(&self) -> Result<Vec<Ref>, Error> {
        let out = self.cmd().args(["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags"]).text().await?;
        Ok(out.lines().filter_map(|l| l.split_once(' ')).map(|(oid, name)| Ref { name: name.to_string(), oid: oid.to_string() }).collect())
    }

    /// The object a ref names now (`None`: no such ref).
    pub async fn ref_value(&self, name: &str) -> Result<Option<String>, Error> {
        let out = self.cmd().args(["for-each-ref", "--format=%(objectname)", "--", name]).text().await?;
        Ok(out.lines().next().map(str::to_string))
    }

    /// The commit `rev` names (a ref, a full or abbreviated name, a tag peeled to its commit).
    pub async fn resolve_commit(&self, rev: &str) -> Result<Option<String>, Error> {
        if rev.starts_with('-') || rev.contains(['\n', '\0']) {
            return Ok(None);
        }
        let (ok, out, _) =
            self.cmd().args(["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")]).run().await?;
        Ok(ok.then(|| String::from_utf8_lossy(&out).trim().to_string()).filter(|s| is_oid(s)))
    }

    /// The type of object `oid` (`commit`, `tree`, `blob`, `tag`), `None` when absent.
    pub async fn object_type(&self, oid: &str) -> Result<Option<String>, Error> {
        if !is_oid(oid) {
            return Ok(None);
        }
        let (ok, out, _) = self.cmd().args(["cat-file", "-t", oid]).run().await?;
        Ok(ok.then(|| String::from_utf8_lossy(&out).trim().to_string()))
    }
}
