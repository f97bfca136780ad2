//! The plumbing on real repositories: creation, commits written and read back, trees edited,
//! diffs, ancestry, what updates introduce, and ref updates that check their old values.
use std::collections::BTreeMap;

use platform_git::{Error, Limits, NewCommit, Person, RefUpdate, Status, Storage, ZERO};

fn person(name: &str, time: i64) -> Person {
    Person { name: name.into(), email: format!("{}@example.com", name.to_lowercase()), time, offset_minutes: 60 }
}

fn files(list: &[(&str, Option<&str>)]) -> BTreeMap<String, platform_git::FileChange> {
    list.iter().map(|(p, c)| (p.to_string(), c.map(|c| (c.as_bytes().to_vec(), false)))).collect()
}

#[tokio::test]
async fn commits_trees_diffs_and_ref_updates() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(&dir.path().join("data"), "ns1", Limits::default()).unwrap();
    let repo = storage.repo(7, "main").await.unwrap();
    assert!(storage.path(7).join("HEAD").exists());
    assert_eq!(std::fs::read_to_string(storage.path(7).join("HEAD")).unwrap(), "ref: refs/heads/main\n");
    assert!(repo.refs().await.unwrap().is_empty());

    let t1 = repo.edit_tree(None, &files(&[("README.md", Some("hello\n")), ("src/lib.rs", Some("fn a() {}\n"))])).await.unwrap();
    let ann = person("Ann", 1_700_000_000);
    let c1 = repo.write_commit(&NewCommit { tree: &t1, parents: &[], message: "First\n", author: &ann, committer: &ann }).await.unwrap();
    repo.update_refs(&[RefUpdate { name: "refs/heads/main".into(), old: ZERO.into(), new: c1.clone() }]).await.unwrap();

    let t2 = repo
        .edit_tree(Some(&t1), &files(&[("src/lib.rs", None), ("src/deep/x.txt", Some("x\ny\n")), ("README.md", Some("hello\nworld\n"))]))
        .await
        .unwrap();
    let bob = person("Bob", 1_700_000_100);
    let c2 = repo
        .write_commit(&NewCommit { tree: &t2, parents: std::slice::from_ref(&c1), message: "Second", author: &bob, committer: &ann })
        .await
        .unwrap();

    // A stale old value moves nothing.
    let stale = repo.update_refs(&[RefUpdate { name: "refs/heads/main".into(), old: c2.clone(), new: c2.clone() }]).await;
    assert!(matches!(stale, Err(Error::Invalid(_))), "{stale:?}");
    assert_eq!(repo.ref_value("refs/heads/main").await.unwrap().as_deref(), Some(c1.as_str()));
    repo.update_refs(&[RefUpdate { name: "refs/heads/main".into(), old: c1.clone(), new: c2.clone() }]).await.unwrap();

    let read = repo.commit(&c2).await.unwrap().unwrap();
    assert_eq!((read.tree.as_str(), read.parents.clone(), read.message.as_str()), (t2.as_str(), vec![c1.clone()], "Second"));
    assert_eq!(read.author, bob);
    assert_eq!(read.committer, ann);

    let tree = repo.tree(&t2, true).await.unwrap();
    let paths: Vec<&str> = tree.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["README.md", "src", "src/deep", "src/deep/x.txt"]);
    let readme = tree.iter().find(|e| e.path == "README.md").unwrap();
    assert_eq!(readme.size, Some(12));
    assert_eq!(repo.blob(&readme.oid, 100).await.unwrap().unwrap(), b"hello\nworld\n");
    assert_eq!(repo.blob(&readme.oid, 5).await, Err(Error::TooLarge));

    let mut diff = repo.diff(Some(&c1), &c2).await.unwrap();
    diff.sort_by(|a, b| a.path.cmp(&b.path));
    let summary: Vec<(&str, Status, u64, u64)> = diff.iter().map(|c| (c.path.as_str(), c.status, c.additions, c.deletions)).collect();
    assert_eq!(
        summary,
        [("README.md", Status::Modified, 1, 0), ("src/deep/x.txt", Status::Added, 2, 0), ("src/lib.rs", Status::Removed, 0, 1)]
    );
    assert_eq!(repo.diff(None, &c1).await.unwrap().len(), 2, "a root commit against the empty tree");

    assert!(repo.is_ancestor(&c1, &c2).await.unwrap());
    assert!(!repo.is_ancestor(&c2, &c1).await.unwrap());
    assert_eq!(repo.merge_base(&c1, &c2).await.unwrap().as_deref(), Some(c1.as_str()));
    assert_eq!(repo.rev_list(std::slice::from_ref(&c2), std::slice::from_ref(&c1)).await.unwrap(), vec![c2.clone()]);
    assert_eq!(repo.paths_changed(std::slice::from_ref(&c2), &[], "src/deep").await.unwrap(), vec!["src/deep/x.txt".to_string()]);
    assert_eq!(repo.resolve_commit("main").await.unwrap().as_deref(), Some(c2.as_str()));
    assert_eq!(repo.resolve_commit(&c1[..10]).await.unwrap().as_deref(), Some(c1.as_str()));
    assert_eq!(repo.resolve_commit("--all").await.unwrap(), None);

    // Deleting checks the old value too; then the repository goes.
    repo.update_refs(&[RefUpdate { name: "refs/heads/main".into(), old: c2.clone(), new: ZERO.into() }]).await.unwrap();
    assert!(repo.refs().await.unwrap().is_empty());
    assert!(repo.edit_tree(None, &files(&[("../x", Some("a"))])).await.is_err());
    storage.delete(7).await.unwrap();
    assert!(!storage.path(7).exists());
    assert!(storage.existing(7).await.unwrap().is_none());
}

#[tokio::test]
async fn a_repository_configuration_cannot_name_what_git_runs() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(&dir.path().join("data"), "ns2", Limits::default()).unwrap();
    let repo = storage.repo(1, "main").await.unwrap();
    // What a hostile configuration would say (a push cannot write it; this checks the precedence).
    let evil = "[core]\n\thooksPath = /nonexistent/evil\n\tfsmonitor = /nonexistent/evil\n[receive]\n\tfsckObjects = false\n";
    std::fs::write(storage.path(1).join("config"), format!("[core]\n\tbare = true\n{evil}")).unwrap();
    let get = |key: &'static str| {
        let repo = repo.clone();
        async move { repo.cmd().args(["config", "--get", key]).text().await.unwrap().trim().to_string() }
    };
    assert_eq!(get("core.hooksPath").await, storage.git().hooks().display().to_string());
    assert_eq!(get("core.fsmonitor").await, "false");
    assert_eq!(get("receive.fsckObjects").await, "true");
    let hooks: Vec<_> = std::fs::read_dir(storage.git().hooks()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(hooks, ["pre-receive"]);
}
