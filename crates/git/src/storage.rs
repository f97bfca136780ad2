//! Where repositories live: one bare repository per platform repository, named by its id under
//! the data directory (`<data>/git/<namespace>/<id>.git`; the namespace is the database's, so
//! databases sharing a data directory never share a repository). A rename moves nothing; a
//! delete removes the directory; a re-created name is a new id and starts empty. Every node of a
//! cluster serves every repository from the shared directory.
//!
//! A repository is laid out by the server itself (no `git init`, so no template hooks or
//! configuration): `HEAD`, a minimal `config`, `objects/`, `refs/`. It is created on first use,
//! atomically (built aside, then renamed into place), so nodes racing to create it agree.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::command::{Error, Git, Limits};
use crate::repo::Repo;

/// The repositories of one database, and how git runs on them on this node.
#[derive(Clone, Debug)]
pub struct Storage {
    root: PathBuf,
    namespace: String,
    runtime: Arc<Runtime>,
    git: Git,
}

/// This node's own directory (the hooks, the push channels): in the temporary directory, private
/// to the server, removed when the last handle on it goes.
#[derive(Debug)]
pub(crate) struct Runtime(PathBuf);

impl Runtime {
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tlogallrefupdates = false\n";

impl Storage {
    /// Repositories under `<data_dir>/git/<namespace>/`.
    pub fn open(data_dir: &Path, namespace: &str, limits: Limits) -> Result<Storage, Error> {
        if namespace.is_empty() || !namespace.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::Invalid("storage namespace must be alphanumeric".into()));
        }
        let root = data_dir.join("git").join(namespace);
        std::fs::create_dir_all(&root)?;
        let runtime = std::env::temp_dir().join(format!("platformd-git-{}-{}", std::process::id(), random_suffix()));
        private_dir(&runtime)?;
        let runtime = Arc::new(Runtime(runtime));
        let hooks = runtime.path().join("hooks");
        crate::hook::install(&hooks)?;
        Ok(Storage { root, namespace: namespace.to_string(), runtime, git: Git::new(hooks, limits) })
    }

    pub fn git(&self) -> &Git {
        &self.git
    }

    /// The database's namespace these repositories live under.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// A repository that is not one of the server's own (an import's mirror), to read.
    pub fn open_mirror(&self, dir: PathBuf) -> Repo {
        Repo::new(dir, self.git.clone(), self.runtime.clone())
    }

    /// The directory of repository `id` (which may not exist yet).
    pub fn path(&self, id: i64) -> PathBuf {
        self.root.join(format!("{id}.git"))
    }

    /// Repository `id`, created (empty) if it does not exist yet, its `HEAD` naming
    /// `default_branch`.
    pub async fn repo(&self, id: i64, default_branch: &str) -> Result<Repo, Error> {
        let dir = self.path(id);
        if !tokio::fs::try_exists(dir.join("HEAD")).await? {
            let (root, id) = (self.root.clone(), id);
            tokio::task::spawn_blocking(move || create(&root, id)).await.map_err(|e| Error::Io(e.to_string()))??;
        }
        let repo = Repo::new(dir, self.git.clone(), self.runtime.clone());
        repo.set_head(default_branch).await?;
        Ok(repo)
    }

    /// Repository `id` if it exists.
    pub async fn existing(&self, id: i64) -> Result<Option<Repo>, Error> {
        let dir = self.path(id);
        Ok(tokio::fs::try_exists(dir.join("HEAD")).await?.then(|| Repo::new(dir, self.git.clone(), self.runtime.clone())))
    }

    /// Removes repository `id` (nothing when it does not exist). Moved aside first, so a
    /// half-removed directory is never mistaken for a repository.
    pub async fn delete(&self, id: i64) -> Result<(), Error> {
        let dir = self.path(id);
        let aside = self.root.join(format!(".deleted-{id}-{}", random_suffix()));
        match tokio::fs::rename(&dir, &aside).await {
            Ok(()) => Ok(tokio::fs::remove_dir_all(&aside).await?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes every repository of this namespace (the database was emptied).
    pub async fn clear(&self) -> Result<(), Error> {
        let aside = self.root.with_file_name(format!(".cleared-{}", random_suffix()));
        match tokio::fs::rename(&self.root, &aside).await {
            Ok(()) => tokio::fs::remove_dir_all(&aside).await?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        tokio::fs::create_dir_all(&self.root).await?;
        Ok(())
    }
}

/// A directory only the server's user may enter.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

pub(crate) fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Lays out an empty bare repository aside and renames it into place; another node (or task)
/// that got there first wins, and this copy is dropped.
fn create(root: &Path, id: i64) -> Result<(), Error> {
    let target = root.join(format!("{id}.git"));
    let tmp = root.join(format!(".new-{id}-{}", random_suffix()));
    let made = (|| -> std::io::Result<()> {
        for d in ["objects/info", "objects/pack", "refs/heads", "refs/tags"] {
            std::fs::create_dir_all(tmp.join(d))?;
        }
        std::fs::write(tmp.join("config"), CONFIG)?;
        std::fs::write(tmp.join("HEAD"), "ref: refs/heads/main\n")?;
        Ok(())
    })();
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e.into());
    }
    if std::fs::rename(&tmp, &target).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !target.join("HEAD").exists() {
            return Err(Error::Io(format!("could not create repository {id}")));
        }
    }
    Ok(())
}
