//! Git hosting with the real `git` CLI over smart HTTP (protocol v0 and v2): clones, fetches and
//! pushes visible through the REST reads; credentials as hosted (anonymous, token as Basic
//! password or Bearer, a wrong token is 401 and counts toward the lockout); private repositories
//! invisible; pushes need write access and workflow files the `workflow` grant; objects checked;
//! no object of another repository reachable; renames, deletes and re-creation; a ref change a
//! crash interrupted reconciled at start, and a push cut off by `kill -9` of the binary; two
//! nodes on one database; HTTPS through the binary; the enterprise layout and gzip bodies.
use std::path::{Path, PathBuf};

use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;

/// A git client of its own: an empty home and configuration, no prompts, a fixed identity.
pub(crate) struct Client {
    home: tempfile::TempDir,
    /// `protocol.version` it speaks.
    pub(crate) protocol: u8,
    /// Extra environment (a CA file for HTTPS).
    pub(crate) env: Vec<(String, String)>,
}

impl Client {
    pub(crate) fn new(protocol: u8) -> Client {
        Client { home: tempfile::tempdir().unwrap(), protocol, env: Vec::new() }
    }

    /// A directory of this client's (removed with it).
    pub(crate) fn dir(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    /// Runs git in `dir`: whether it succeeded, and what it printed (stdout, then stderr).
    pub(crate) async fn git(&self, dir: &Path, args: &[&str]) -> (bool, String) {
        let mut c = std::process::Command::new("git");
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join("gitconfig"))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(dir)
            .args(["-c", "user.name=Test Pusher", "-c", "user.email=pusher@example.com", "-c", "init.defaultBranch=main"])
            .args(["-c", &format!("protocol.version={}", self.protocol)])
            .args(args);
        let out = tokio::task::spawn_blocking(move || c.output().unwrap()).await.unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    }

    /// [`Client::git`] that must succeed; its output.
    pub(crate) async fn ok(&self, dir: &Path, args: &[&str]) -> String {
        let (ok, out) = self.git(dir, args).await;
        assert!(ok, "git {args:?} failed:\n{out}");
        out
    }

    /// Clones `url` into a new directory `name`; the directory.
    pub(crate) async fn clone_repo(&self, url: &str, name: &str) -> PathBuf {
        self.ok(self.home.path(), &["clone", "--quiet", url, name]).await;
        self.dir(name)
    }

    /// Writes `files` and commits them in `dir`; the new commit's sha.
    pub(crate) async fn commit(&self, dir: &Path, files: &[(&str, &str)], message: &str) -> String {
        for (p, content) in files {
            let path = dir.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        self.ok(dir, &["add", "-A"]).await;
        self.ok(dir, &["commit", "--quiet", "-m", message]).await;
        self.ok(dir, &["rev-parse", "HEAD"]).await.trim().to_string()
    }
}

/// The clone URL of `full` on `s`, with `token` as the Basic password.
pub(crate) fn url(base: &str, full: &str, token: Option<&str>) -> String {
    let (scheme, rest) = base.split_once("://").unwrap();
    let host = rest.split('/').next().unwrap();
    match token {
        Some(t) => format!("{scheme}://x-access-token:{t}@{host}/{full}.git"),
        None => format!("{scheme}://{host}/{full}.git"),
    }
}

async fn json_ok(s: &Server, path: &str, token: Option<&str>) -> Value {
    let (st, _, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    b
}

/// alice (owner of org acme, bob a member) and carol (an outsider); `alice/site` (public, with
/// a first commit) and `alice/vault` (private, with a first commit). alice's `repo` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    let t = s.classic("alice", &["repo"]).await;
    for (name, private) in [("site", false), ("vault", true)] {
        let (st, _, b) =
            call(s, Method::POST, "/user/repos", Some(&t), Some(json!({"name": name, "private": private, "auto_init": true}))).await;
        assert_eq!(st, 201, "{b}");
    }
    t
}

both!(clone_fetch_and_push_through_both_protocols, |s| {
    let t = world(&s).await;
    // The repository shapes point at the smart HTTP URLs.
    let r = json_ok(&s, "/repos/alice/site", None).await;
    assert_eq!(r["clone_url"], url(&s.base, "alice/site", None));
    assert_eq!(r["html_url"], url(&s.base, "alice/site", None).trim_end_matches(".git"));
    assert!(r["git_url"].as_str().unwrap().starts_with("git://"), "{r}");

    for protocol in [0u8, 2] {
        let c = Client::new(protocol);
        let main = json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"].as_str().unwrap().to_string();
        // Anonymous clone of a public repository (first the commit auto_init made).
        let anon = c.clone_repo(&url(&s.base, "alice/site", None), "anon").await;
        assert_eq!(c.ok(&anon, &["rev-parse", "HEAD"]).await.trim(), main);
        assert_eq!(std::fs::read_to_string(anon.join("README.md")).unwrap(), "# site\n");

        // A push with the token as the Basic password; what the REST reads then show.
        let work = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "work").await;
        let message = format!("Add a page (protocol {protocol})");
        let page = format!("docs/page-{protocol}.md");
        let sha = c.commit(&work, &[(page.as_str(), "hello\n")], &message).await;
        c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
        let b = json_ok(&s, "/repos/alice/site/branches/main", None).await;
        assert_eq!(b["commit"]["sha"], sha.as_str());
        let k = json_ok(&s, &format!("/repos/alice/site/commits/{sha}"), None).await;
        assert_eq!(k["commit"]["message"], message.as_str());
        assert_eq!(k["commit"]["author"]["name"], "Test Pusher");
        assert_eq!(k["commit"]["author"]["email"], "pusher@example.com");
        let parent = k["parents"][0]["sha"].as_str().unwrap().to_string();
        assert_eq!(json_ok(&s, "/repos/alice/site/commits/main", None).await["sha"], sha.as_str());

        // A fetch elsewhere sees it.
        c.ok(&anon, &["fetch", "--quiet", "origin"]).await;
        assert_eq!(c.ok(&anon, &["rev-parse", "origin/main"]).await.trim(), sha);
        assert_eq!(c.ok(&anon, &["rev-parse", &format!("{sha}^")]).await.trim(), parent);

        // A branch and a tag; a deletion.
        c.ok(&work, &["push", "--quiet", "origin", &format!("HEAD:refs/heads/topic-{protocol}")]).await;
        c.ok(&work, &["tag", "-a", "-m", "release", &format!("v{protocol}")]).await;
        c.ok(&work, &["push", "--quiet", "origin", &format!("v{protocol}")]).await;
        let tag = json_ok(&s, &format!("/repos/alice/site/git/ref/tags/v{protocol}"), None).await;
        assert_eq!(tag["object"]["sha"], sha.as_str(), "annotated tags are kept as their commit: {tag}");
        let names: Vec<String> = json_ok(&s, "/repos/alice/site/branches", None)
            .await
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_string())
            .collect();
        assert!(names.contains(&format!("topic-{protocol}")), "{names:?}");
        c.ok(&work, &["push", "--quiet", "origin", &format!(":refs/heads/topic-{protocol}")]).await;
        let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/site/branches/topic-{protocol}"), None, None).await;
        assert_eq!(st, 404);

        // A stale push is refused by git and changes nothing.
        let behind = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "behind").await;
        c.ok(&behind, &["reset", "--quiet", "--hard", "HEAD~1"]).await;
        c.commit(&behind, &[("other.txt", "x\n")], "diverged").await;
        let (ok, out) = c.git(&behind, &["push", "origin", "main"]).await;
        assert!(!ok && out.contains("rejected"), "{out}");
        assert_eq!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], sha.as_str());
    }
    // Bearer credentials work too (an extra header, as CI systems send it).
    let c = Client::new(2);
    let header = format!("http.extraHeader=Authorization: Bearer {t}");
    c.ok(c.home.path(), &["-c", &header, "clone", "--quiet", &url(&s.base, "alice/vault", None), "vault"]).await;
    assert!(c.dir("vault").join("README.md").exists());
});

both!(
    credentials_and_invisibility,
    Options::with(|c| {
        c.limits.secondary.enabled = true;
        c.limits.secondary.login_attempts = 3;
    }),
    |s| {
        let t = world(&s).await;
        let carol = s.classic("carol", &["repo"]).await;
        let http = reqwest::Client::new();
        let refs = |full: &str, service: &str| format!("{}/{full}.git/info/refs?service={service}", s.base);

        // Anonymous: a private or unknown repository asks for credentials (never says which).
        for full in ["alice/vault", "alice/nothing-here"] {
            let r = http.get(refs(full, "git-upload-pack")).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 401, "{full}");
            assert!(header(r.headers(), "www-authenticate").starts_with("Basic realm="), "{:?}", r.headers());
        }
        // Anonymous push to a public repository: credentials first.
        let r = http.get(refs("alice/site", "git-receive-pack")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401);

        // An authenticated caller who may not see it: 404 "Repository not found." (for git's remote: line).
        for full in ["alice/vault", "alice/nothing-here"] {
            let r = http.get(refs(full, "git-upload-pack")).basic_auth("x-access-token", Some(&carol)).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 404, "{full}");
            assert_eq!(r.text().await.unwrap(), "Repository not found.\n");
        }
        let c = Client::new(2);
        let (ok, out) = c.git(c.home.path(), &["clone", &url(&s.base, "alice/vault", Some(&carol)), "x"]).await;
        assert!(!ok && out.contains("remote: Repository not found."), "{out}");
        // May see, may not push: 403 naming the caller.
        let r = http.get(refs("alice/site", "git-receive-pack")).basic_auth("anyone", Some(&carol)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 403);
        assert_eq!(r.text().await.unwrap(), "Permission to alice/site.git denied to carol.\n");
        // The owner's token reaches the private repository, as Basic password under any user name.
        let r = http.get(refs("alice/vault", "git-upload-pack")).basic_auth("whoever", Some(&t)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(header(r.headers(), "content-type"), "application/x-git-upload-pack-advertisement");
        assert!(r.text().await.unwrap().starts_with("001e# service=git-upload-pack\n0000"));

        // Wrong credentials: 401 with the challenge, each counting toward the lockout. (git sends
        // credentials once challenged: a private repository's 401 first.)
        let (ok, out) =
            c.git(c.home.path(), &["clone", &url(&s.base, "alice/vault", Some("svp_not_a_real_token_000000000000000000")), "y"]).await;
        assert!(!ok && out.contains("Authentication failed"), "{out}");
        for _ in 0..2 {
            let r = http.get(refs("alice/site", "git-upload-pack")).basic_auth("x", Some("wrong")).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 401);
        }
        // Locked out now: even the right token is refused for a while.
        let r = http.get(refs("alice/site", "git-upload-pack")).basic_auth("x", Some(&t)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 403);
        assert!(r.text().await.unwrap().contains("Maximum number of login attempts exceeded"));
        // Anonymous reads of public repositories go on.
        let r = http.get(refs("alice/site", "git-upload-pack")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        s.advance(301).await;
        let r = http.get(refs("alice/site", "git-upload-pack")).basic_auth("x", Some(&t)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
);

both!(pushes_need_write_access_and_workflows_their_grant, |s| {
    let t = world(&s).await;
    s.admin_post("/repos", json!({"owner": "acme", "name": "tools"})).await;
    s.admin_post("/repos/acme/tools/refs", json!({"ref": "refs/heads/main", "message": "Start", "files": {"README.md": "tools\n"}})).await;
    let app = s.admin_post("/apps", json!({"name": "Builder", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let tokens = [
        ("no scopes", s.classic("alice", &[]).await, "alice/site", false),
        ("public_repo on public", s.classic("alice", &["public_repo"]).await, "alice/site", true),
        ("public_repo on private", s.classic("alice", &["public_repo"]).await, "alice/vault", false),
        (
            "contents read",
            s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"contents": "read"}})).await,
            "alice/site",
            false,
        ),
        (
            "contents write",
            s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"contents": "write"}})).await,
            "alice/vault",
            true,
        ),
        ("member", s.classic("bob", &["repo"]).await, "acme/tools", true),
        (
            "installation",
            s.token(json!({"kind": "installation", "app": "Builder", "org": "acme", "permissions": {"contents": "write"}})).await,
            "acme/tools",
            true,
        ),
        ("workflow token", s.token(json!({"kind": "workflow", "repo": "acme/tools"})).await, "acme/tools", true),
    ];
    let c = Client::new(2);
    for (i, (what, token, full, may)) in tokens.iter().enumerate() {
        // Cloned with the owner's token (every one of these may read; not all may push).
        let dir = c.clone_repo(&url(&s.base, full, Some(&t)), &format!("w{i}")).await;
        c.ok(&dir, &["remote", "set-url", "origin", &url(&s.base, full, Some(token))]).await;
        let sha = c.commit(&dir, &[(&format!("f{i}.txt"), what)], what).await;
        let (ok, out) = c.git(&dir, &["push", "origin", "HEAD:main"]).await;
        assert_eq!(ok, *may, "{what}: {out}");
        let head = json_ok(&s, &format!("/repos/{full}/branches/main"), Some(&t)).await["commit"]["sha"].clone();
        assert_eq!(head == sha.as_str(), *may, "{what}");
        if !may {
            assert!(out.contains("403") || out.contains("denied") || out.contains("not found"), "{what}: {out}");
        }
    }

    // Workflow files: refused without the `workflow` scope (nothing moves), accepted with it.
    let dir = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "wf").await;
    let sha = c.commit(&dir, &[(".workflows/ci.yml", "on: push\n")], "Add CI").await;
    let (ok, out) = c.git(&dir, &["push", "origin", "HEAD:main"]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("remote: error: refusing to allow a Personal Access Token to create or update workflow `.workflows/ci.yml` without `workflow` scope"),
        "{out}"
    );
    assert_ne!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], sha.as_str());
    let fine = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"contents": "write"}})).await;
    c.ok(&dir, &["remote", "set-url", "origin", &url(&s.base, "alice/site", Some(&fine))]).await;
    let (ok, out) = c.git(&dir, &["push", "origin", "HEAD:main"]).await;
    assert!(!ok && out.contains("without `workflows` permission"), "{out}");
    // A new branch of commits the repository has needs no grant; the scope lets the change in.
    c.ok(&dir, &["push", "--quiet", "origin", "HEAD~1:refs/heads/old"]).await;
    let wf = s.classic("alice", &["repo", "workflow"]).await;
    c.ok(&dir, &["remote", "set-url", "origin", &url(&s.base, "alice/site", Some(&wf))]).await;
    c.ok(&dir, &["push", "--quiet", "origin", "HEAD:main"]).await;
    assert_eq!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], sha.as_str());
    // Refs other than branches and tags are not kept.
    let (ok, out) = c.git(&dir, &["push", "origin", "HEAD:refs/notes/x"]).await;
    assert!(!ok && out.contains("only branches"), "{out}");
});

both!(objects_are_checked_and_stay_in_their_repository, |s| {
    let t = world(&s).await;
    let c = Client::new(2);
    // A commit git's object checks refuse (an author without an email's closing bracket).
    let dir = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "bad").await;
    let tree = c.ok(&dir, &["rev-parse", "HEAD^{tree}"]).await.trim().to_string();
    let parent = c.ok(&dir, &["rev-parse", "HEAD"]).await.trim().to_string();
    let raw = format!("tree {tree}\nparent {parent}\nauthor Bad <bad@example.com 1700000000 +0000\ncommitter Bad <bad@example.com> 1700000000 +0000\n\nbad\n");
    std::fs::write(dir.join("raw"), raw).unwrap();
    let bad = c.ok(&dir, &["hash-object", "-t", "commit", "-w", "--literally", "raw"]).await.trim().to_string();
    let (ok, out) = c.git(&dir, &["push", "origin", &format!("{bad}:refs/heads/main")]).await;
    assert!(!ok, "{out}");
    assert_eq!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], parent.as_str());

    // The private repository's commit cannot be fetched through the public one.
    let secret = json_ok(&s, "/repos/alice/vault/branches/main", Some(&t)).await["commit"]["sha"].as_str().unwrap().to_string();
    let (ok, out) = c.git(&dir, &["fetch", "origin", &secret]).await;
    assert!(!ok, "{out}");
    let (ok, _) = c.git(&dir, &["cat-file", "-e", &secret]).await;
    assert!(!ok);
});

// Bounded: a push body over the limit is refused and moves nothing.
both!(push_size_is_bounded, Options::with(|c| c.git.max_push_bytes = 2_000), |s| {
    let t = world(&s).await;
    let c = Client::new(0);
    let dir = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "big").await;
    let noise: String = (0..2_500).map(|_| format!("{:016x}", rand::random::<u64>())).collect();
    let sha = c.commit(&dir, &[("noise.txt", &noise)], "Too much").await;
    let (ok, out) = c.git(&dir, &["push", "origin", "main"]).await;
    assert!(!ok, "{out}");
    assert_ne!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], sha.as_str());
    // A small one goes through.
    c.ok(&dir, &["reset", "--quiet", "--hard", "HEAD~1"]).await;
    let small = c.commit(&dir, &[("s.txt", "s\n")], "Small").await;
    c.ok(&dir, &["push", "--quiet", "origin", "main"]).await;
    assert_eq!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], small.as_str());
});

both!(control_plane_commits_are_real_and_placeholders_still_work, |s| {
    let t = world(&s).await;
    let out = s
        .admin_post(
            "/repos/alice/site/refs",
            json!({"ref": "refs/heads/release", "base": "main", "message": "Cut the release",
                   "author": {"name": "Rel Eng", "email": "rel@example.com", "date": "2026-03-01T12:00:00Z"},
                   "files": {"VERSION": "1.0\n", "README.md": null}}),
        )
        .await;
    let sha = out["sha"].as_str().unwrap().to_string();
    assert_eq!(out["before"], Value::Null);
    let k = json_ok(&s, &format!("/repos/alice/site/commits/{sha}"), None).await;
    assert_eq!(k["commit"]["message"], "Cut the release");
    assert_eq!(k["commit"]["author"], json!({"name": "Rel Eng", "email": "rel@example.com", "date": "2026-03-01T12:00:00Z"}));
    let c = Client::new(2);
    let dir = c.dir("rel");
    c.ok(c.home.path(), &["clone", "--quiet", "--branch", "release", &url(&s.base, "alice/site", None), "rel"]).await;
    assert_eq!(c.ok(&dir, &["rev-parse", "HEAD"]).await.trim(), sha);
    assert_eq!(std::fs::read_to_string(dir.join("VERSION")).unwrap(), "1.0\n");
    assert!(!dir.join("README.md").exists());
    // A tag without a sha names the default branch's head; a sha git has is pointed at.
    let main = json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"].as_str().unwrap().to_string();
    assert_eq!(s.admin_post("/repos/alice/site/refs", json!({"ref": "refs/tags/v1"})).await["sha"], main.as_str());
    let moved = s.admin_post("/repos/alice/site/refs", json!({"ref": "refs/heads/main", "sha": sha})).await;
    assert_eq!((moved["sha"].as_str(), moved["before"].as_str()), (Some(sha.as_str()), Some(main.as_str())));
    c.ok(&dir, &["fetch", "--quiet", "origin"]).await;
    assert_eq!(c.ok(&dir, &["rev-parse", "origin/main"]).await.trim(), sha);
    // An invented sha is a placeholder: the store has it, git does not (tests and seeds).
    let invented = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
    s.push("alice/site", "refs/heads/legacy", invented).await;
    assert_eq!(json_ok(&s, "/repos/alice/site/branches/legacy", None).await["commit"]["sha"], invented);
    let (st, _, _) =
        call(&s, Method::POST, &format!("/repos/alice/site/statuses/{invented}"), Some(&t), Some(json!({"state": "success"}))).await;
    assert_eq!(st, 201);
    let (ok, _) = c.git(&dir, &["fetch", "origin", "legacy"]).await;
    assert!(!ok, "git has no such branch");
    // Bad bodies.
    for body in
        [json!({"ref": "refs/heads/x", "files": {"../evil": "x"}}), json!({"ref": "refs/heads/x", "base": "nope"}), json!({"ref": "HEAD"})]
    {
        let r =
            s.client.post(format!("http://{}/_admin/repos/alice/site/refs", s.addr)).bearer_auth(ADMIN).json(&body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 422, "{body}");
    }
});

both!(rename_delete_and_recreate, |s| {
    let t = world(&s).await;
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "site").await;
    let sha = c.commit(&dir, &[("a.txt", "a\n")], "Before the rename").await;
    c.ok(&dir, &["push", "--quiet", "origin", "main"]).await;
    let (st, _, b) = call(&s, Method::PATCH, "/repos/alice/site", Some(&t), Some(json!({"name": "homepage"}))).await;
    assert_eq!(st, 200, "{b}");
    // The old URL follows to the new name; the new one has the history.
    c.ok(&dir, &["fetch", "--quiet", "origin"]).await;
    let moved = c.clone_repo(&url(&s.base, "alice/homepage", None), "moved").await;
    assert_eq!(c.ok(&moved, &["rev-parse", "HEAD"]).await.trim(), sha);
    // Deleted: gone for git too; the name re-created starts empty.
    let del = s.classic("alice", &["repo", "delete_repo"]).await;
    let (st, _, _) = call(&s, Method::DELETE, "/repos/alice/homepage", Some(&del), None).await;
    assert_eq!(st, 204);
    let (ok, out) = c.git(c.home.path(), &["clone", &url(&s.base, "alice/homepage", Some(&t)), "gone"]).await;
    assert!(!ok && out.contains("Repository not found"), "{out}");
    let (st, _, _) = call(&s, Method::POST, "/user/repos", Some(&t), Some(json!({"name": "homepage"}))).await;
    assert_eq!(st, 201);
    let fresh = c.clone_repo(&url(&s.base, "alice/homepage", Some(&t)), "fresh").await;
    let (ok, _) = c.git(&fresh, &["rev-parse", "HEAD"]).await;
    assert!(!ok, "an empty repository");
    let (ok, _) = c.git(&fresh, &["cat-file", "-e", &sha]).await;
    assert!(!ok, "nothing of the deleted repository");
    // Pushing into the empty repository creates its default branch.
    let first = c.commit(&fresh, &[("x.txt", "x\n")], "First").await;
    c.ok(&fresh, &["push", "--quiet", "origin", "HEAD:main"]).await;
    assert_eq!(json_ok(&s, "/repos/alice/homepage/branches/main", None).await["commit"]["sha"], first.as_str());
});

both!(a_ref_change_a_crash_interrupted_is_reconciled_at_start, |s| {
    let t = world(&s).await;
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&s.base, "alice/site", Some(&t)), "site").await;
    let old = c.ok(&dir, &["rev-parse", "HEAD"]).await.trim().to_string();
    let new = c.commit(&dir, &[("late.txt", "late\n")], "Pushed as the node died").await;
    // What a node that died after git moved the ref leaves: the objects and the ref in git, the
    // intent in the store, nothing recorded.
    let ns = s.store.read(|c| c.query_opt("SELECT namespace FROM git_storage", &[])).await.unwrap().unwrap().string(0);
    let repo_id = json_ok(&s, "/repos/alice/site", None).await["id"].as_i64().unwrap();
    let bare = s.opts.api.imports.root().join("git").join(&ns).join(format!("{repo_id}.git"));
    let bare_s = bare.to_str().unwrap();
    c.ok(&dir, &["push", "--quiet", bare_s, "HEAD:refs/heads/elsewhere"]).await; // the objects
    c.ok(&dir, &["--git-dir", bare_s, "update-ref", "-d", "refs/heads/elsewhere"]).await;
    c.ok(&dir, &["--git-dir", bare_s, "update-ref", "refs/heads/main", &new, &old]).await;
    let updates = json!([{"name": "refs/heads/main", "old": old, "new": new}]).to_string();
    s.store
        .write(move |c| {
            c.execute(
                "INSERT INTO push_intents (repo_id, pusher_id, source, updates, created_at) VALUES (?, NULL, 'push', ?, 0)",
                platform_store::params![repo_id, updates],
            )
        })
        .await
        .unwrap();
    assert_eq!(json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"], old.as_str());
    let s = s.restart().await;
    let mut seen = String::new();
    for _ in 0..200 {
        seen = json_ok(&s, "/repos/alice/site/branches/main", None).await["commit"]["sha"].as_str().unwrap().to_string();
        if seen == new {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(seen, new, "reconciled at start");
    assert_eq!(json_ok(&s, &format!("/repos/alice/site/commits/{new}"), None).await["commit"]["message"], "Pushed as the node died");
    let left = s.store.read(|c| c.query_i64("SELECT COUNT(*) FROM push_intents", &[])).await.unwrap();
    assert_eq!(left, 0);
});

/// Two nodes on one PostgreSQL database and one data directory: a push on one is read at once
/// on the other, over git and REST; pushes racing on both nodes move the branch one at a time
/// (the loser is told to fetch first) and the store ends as git is.
#[tokio::test]
async fn two_nodes_serve_every_repository() {
    let Some((a, b)) = crate::cluster::pair(Options::default()).await else { return };
    let t = world(&a).await;
    let c = Client::new(2);
    let on_a = c.clone_repo(&url(&a.base, "alice/site", Some(&t)), "on-a").await;
    let sha = c.commit(&on_a, &[("a.txt", "a\n")], "On node A").await;
    c.ok(&on_a, &["push", "--quiet", "origin", "main"]).await;
    assert_eq!(json_ok(&b, "/repos/alice/site/branches/main", None).await["commit"]["sha"], sha.as_str());
    let on_b = c.clone_repo(&url(&b.base, "alice/site", Some(&t)), "on-b").await;
    assert_eq!(c.ok(&on_b, &["rev-parse", "HEAD"]).await.trim(), sha);

    // Racing pushes of diverging commits through both nodes: one wins, the other is refused.
    let (ca, cb) = (c.commit(&on_a, &[("race.txt", "a\n")], "A wins?").await, c.commit(&on_b, &[("race.txt", "b\n")], "B wins?").await);
    let c = std::sync::Arc::new(c);
    let (c1, c2) = (c.clone(), c.clone());
    let pa = tokio::spawn(async move { c1.git(&on_a, &["push", "origin", "main"]).await });
    let pb = tokio::spawn(async move { c2.git(&on_b, &["push", "origin", "main"]).await });
    let ((ok_a, out_a), (ok_b, out_b)) = (pa.await.unwrap(), pb.await.unwrap());
    assert!(ok_a ^ ok_b, "exactly one push wins:\n{out_a}\n{out_b}");
    let winner = if ok_a { ca } else { cb };
    for node in [&a, &b] {
        assert_eq!(json_ok(node, "/repos/alice/site/branches/main", None).await["commit"]["sha"], winner.as_str());
    }
    let check = c.clone_repo(&url(&b.base, "alice/site", None), "check").await;
    assert_eq!(c.ok(&check, &["rev-parse", "HEAD"]).await.trim(), winner);
}

/// A client trusting `pem` alone.
fn trusting(pem: &[u8]) -> reqwest::Client {
    let cert = reqwest::Certificate::from_pem(pem).unwrap();
    reqwest::Client::builder().tls_built_in_root_certs(false).add_root_certificate(cert).build().unwrap()
}

/// The binary serving HTTPS on `db`: clones and pushes over protocols v0 and v2, trusting the
/// certificate the server generated.
async fn over_https(db: &str, data: &Path, cert: &Path) {
    use crate::persistence::{spawn_with_env, Http};
    let p = spawn_with_env(db, &["--tls-self-signed", cert.to_str().unwrap()], &[("PLATFORM_DATA_DIR", data.to_str().unwrap())]);
    assert!(p.base.starts_with("https://"), "{}", p.base);
    let h = Http { base: p.base.clone(), client: trusting(&std::fs::read(cert).unwrap()) };
    h.admin("/users", json!({"login": "alice"})).await;
    h.admin("/repos", json!({"owner": "alice", "name": "tls", "private": true})).await;
    h.admin("/repos/alice/tls/refs", json!({"ref": "refs/heads/main", "message": "Start", "files": {"a.txt": "a\n"}})).await;
    let t =
        h.admin("/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["repo"]})).await["token"].as_str().unwrap().to_string();
    for protocol in [0u8, 2] {
        let mut c = Client::new(protocol);
        c.env.push(("GIT_SSL_CAINFO".into(), cert.to_str().unwrap().into()));
        let dir = c.clone_repo(&url(&p.base, "alice/tls", Some(&t)), "tls").await;
        let sha = c.commit(&dir, &[("b.txt", &format!("{protocol}\n"))], "Over TLS").await;
        c.ok(&dir, &["push", "--quiet", "origin", "main"]).await;
        let (st, b) = h.call(Method::GET, "/repos/alice/tls/branches/main", Some(&t), None).await;
        assert_eq!((st, b["commit"]["sha"].as_str()), (200, Some(sha.as_str())));
    }
    let (status, _, stderr) = p.terminate();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains(&t), "no token in the logs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    over_https(db.to_str().unwrap(), &dir.path().join("data"), &dir.path().join("cert.pem")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_postgres() {
    let Some(db) = platform_store::testing::test_database(platform_store::Backend::Postgres) else { return };
    let dir = tempfile::tempdir().unwrap();
    over_https(&db.url, &dir.path().join("data"), &dir.path().join("cert.pem")).await;
}

/// `kill -9` after git moved a pushed ref and before the store recorded it (held back by a lock
/// on the refs table): the client never hears of success, and the next start records the push
/// from what git has, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_cut_off_by_kill_9_is_reconciled_at_restart() {
    use crate::persistence::{spawn_with_env, Http};
    let Some(db) = platform_store::testing::test_database(platform_store::Backend::Postgres) else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let env = [("PLATFORM_DATA_DIR", data.to_str().unwrap())];
    let mut p = spawn_with_env(&db.url, &[], &env);
    let h = Http::new(&p.base);
    h.admin("/users", json!({"login": "alice"})).await;
    h.admin("/repos", json!({"owner": "alice", "name": "crash"})).await;
    h.admin("/repos/alice/crash/refs", json!({"ref": "refs/heads/main", "message": "Start", "files": {"a.txt": "a\n"}})).await;
    let t =
        h.admin("/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["repo"]})).await["token"].as_str().unwrap().to_string();
    let c = std::sync::Arc::new(Client::new(2));
    let work = c.clone_repo(&url(&p.base, "alice/crash", Some(&t)), "work").await;
    let new = c.commit(&work, &[("b.txt", "b\n")], "Cut off").await;

    // Hold the refs table: the push's record (after git moved the ref) waits for it.
    let store = platform_store::Store::open(platform_store::StoreOptions::new(&db.url)).await.unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (held_tx, held) = tokio::sync::oneshot::channel::<()>();
    let holder = tokio::spawn({
        let store = store.clone();
        async move {
            store
                .write(move |c| {
                    c.execute("LOCK TABLE refs IN ACCESS EXCLUSIVE MODE", &[])?;
                    let _ = held_tx.send(());
                    let _ = released.recv();
                    Ok::<_, platform_store::DbError>(())
                })
                .await
        }
    });
    held.await.unwrap();
    let (c2, w2) = (c.clone(), work.clone());
    let push = tokio::spawn(async move { c2.git(&w2, &["push", "origin", "main"]).await });
    let ns = store.read(|c| c.query_opt("SELECT namespace FROM git_storage", &[])).await.unwrap().unwrap().string(0);
    let bare = data.join("git").join(ns).join("1.git");
    let moved = async {
        loop {
            let (_, out) = c.git(dir.path(), &["--git-dir", bare.to_str().unwrap(), "rev-parse", "refs/heads/main"]).await;
            if out.trim() == new {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), moved).await.expect("git moved the ref");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!push.is_finished(), "the client waits for the record");
    p.child.kill().unwrap(); // SIGKILL
    let _ = p.child.wait();
    let (ok, out) = push.await.unwrap();
    assert!(!ok, "the client was not told the push succeeded:\n{out}");
    release.send(()).unwrap();
    holder.await.unwrap().unwrap();
    drop(p);

    let p = spawn_with_env(&db.url, &[], &env);
    let h = Http::new(&p.base);
    let mut seen = Value::Null;
    for _ in 0..300 {
        seen = h.call(Method::GET, "/repos/alice/crash/branches/main", None, None).await.1["commit"]["sha"].clone();
        if seen == new.as_str() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(seen, new.as_str(), "recorded at restart from what git has");
    let (_, k) = h.call(Method::GET, &format!("/repos/alice/crash/commits/{new}"), None, None).await;
    assert_eq!(k["commit"]["message"], "Cut off");
    let left = store.read(|c| c.query_i64("SELECT COUNT(*) FROM push_intents", &[])).await.unwrap();
    assert_eq!(left, 0, "the intent went with the record");
    let (status, _, _) = p.terminate();
    assert!(status.success());
    store.close().await;
}

// On the enterprise layout (the API under `/api/v3`) git is served at the web root, where the
// repository shapes point; a gzip-encoded request body (what git sends for long negotiations)
// is decoded as it streams in.
both!(enterprise_layout_and_gzip_bodies, Options { base_path: "/api/v3", ..Options::default() }, |s| {
    let t = world(&s).await;
    let root = s.base.trim_end_matches("/api/v3").to_string();
    let r = json_ok(&s, "/repos/alice/site", None).await;
    assert_eq!(r["clone_url"], format!("{root}/alice/site.git"));
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&root, "alice/site", Some(&t)), "site").await;
    let head = c.ok(&dir, &["rev-parse", "HEAD"]).await.trim().to_string();

    // A v0 fetch request, gzip-encoded: the pack comes back.
    let request = format!("0032want {head}\n00000009done\n");
    let mut gz = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(gz.stdin.as_mut().unwrap(), request.as_bytes()).unwrap();
    drop(gz.stdin.take());
    let body = gz.wait_with_output().unwrap().stdout;
    let r = reqwest::Client::new()
        .post(format!("{root}/alice/site.git/git-upload-pack"))
        .header("content-type", "application/x-git-upload-pack-request")
        .header("content-encoding", "gzip")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(header(r.headers(), "content-type"), "application/x-git-upload-pack-result");
    let out = r.bytes().await.unwrap();
    assert!(out.starts_with(b"0008NAK\n"), "{:?}", String::from_utf8_lossy(&out[..out.len().min(64)]));
    assert!(out.windows(4).any(|w| w == b"PACK"), "a pack follows");
    // A request of another type is refused before git runs.
    let r = reqwest::Client::new().post(format!("{root}/alice/site.git/git-upload-pack")).body("x").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 415);
});
