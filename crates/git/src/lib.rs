//! Git for the platform: every repository a real bare repository on disk, served over smart
//! HTTP, read and written through git's plumbing. Nothing here knows the API: the server decides
//! who may do what and records what happened; this crate runs git.
//!
//! Why the `git` binary rather than a library: the server side of a push (receive-pack: pack
//! indexing with object checks, quarantine, atomic ref transactions, hooks, every protocol
//! capability clients negotiate) exists complete only in git itself — gitoxide has none, and
//! libgit2 has no server side at all. Running the binary also keeps reads (log, diff, rev-list)
//! identical to what clients compute. It is run with a cleared environment and a fixed
//! configuration on its command line, bounded in time and output ([`command`]).
//!
//! - [`storage`]: where repositories live (by repository id) and their creation and removal.
//! - [`repo`]: one repository, its refs and `HEAD`; a push's quarantine view.
//! - [`objects`]: commits, trees, blobs, diffs, ancestry, what ref updates introduce.
//! - [`history`]: the paths each pushed commit added, removed and modified.
//! - [`write`]: blobs, trees, commits and the ref updates every non-push change goes through.
//! - [`transport`]: smart HTTP (upload-pack, receive-pack) streamed, with the push [`Gate`].
//! - [`hook`]: the server's `pre-receive` hook and its channel back to the server.
//! - [`remote`]: reading other repositories (source imports).
pub mod command;
pub mod history;
pub mod hook;
pub mod objects;
pub mod remote;
pub mod repo;
pub mod storage;
pub mod transport;
pub mod write;

pub use command::{Error, Git, Limits};
pub use history::Touched;
pub use hook::Decision;
pub use objects::{Change, ChangedFile, Commit, Entry, Kind, LogQuery, Person, Status, Tag};
pub use remote::{LargeBlob, Remote, RemoteError};
pub use repo::{is_oid, Ref, RefUpdate, Repo, EMPTY_TREE, ZERO};
pub use storage::Storage;
pub use transport::{Gate, Options, Proposal, Service};
pub use write::{FileChange, NewCommit, NewTag};
