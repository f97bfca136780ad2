//! Source imports with real Git: a repository made here with `git`, served over dumb HTTP on
//! loopback (optionally behind Basic authentication), imported through detection, importing,
//! mapping and pushing to complete (paced on the manual clock), including a restart mid-import;
//! the imported branches, tags and commits then take statuses; authors, large files, LFS,
//! cancel, the errors, maintenance (503) and the `repository_import` webhook.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, Uri};
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::hooks::Recv;
use crate::schema_check::assert_conforms_to_snapshot;

// ---------------------------------------------------------------------------------------------
// A Git source.

fn git(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn commit(dir: &Path, file: &str, text: &str, who: (&str, &str)) {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", file], &[]);
    let env = [("GIT_AUTHOR_NAME", who.0), ("GIT_AUTHOR_EMAIL", who.1), ("GIT_COMMITTER_NAME", who.0), ("GIT_COMMITTER_EMAIL", who.1)];
    git(dir, &["commit", "-q", "-m", &format!("add {file}")], &env);
}

/// A source repository (bare, ready for dumb HTTP): `main` with three commits by two authors,
/// `feature` one commit ahead, an annotated tag `v1.0` on main's first commit.
struct Source {
    _tmp: TempDir,
    bare: PathBuf,
    main: String,
    feature: String,
    first: String,
}

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    let p = std::env::temp_dir().join(format!("imports-test-{}", platform_core::ids::random_hex(8)));
    std::fs::create_dir_all(&p).unwrap();
    TempDir(p)
}

fn source(large: bool) -> Source {
    let tmp = tempdir();
    let work = tmp.0.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"], &[]);
    commit(&work, "README", "hello\n", ("Ada", "ada@example.com"));
    let first = git(&work, &["rev-parse", "HEAD"], &[]);
    let env = [("GIT_COMMITTER_NAME", "Ada"), ("GIT_COMMITTER_EMAIL", "ada@example.com")];
    git(&work, &["tag", "-a", "v1.0", "-m", "one"], &env);
    commit(&work, "a.txt", "a\n", ("Bob", "bob@example.com"));
    if large {
        // 100 MB + 1 byte of zeros: sparse on disk, compressed to little by git.
        let f = std::fs::File::create(work.join("big.bin")).unwrap();
        f.set_len(100 * 1024 * 1024 + 1).unwrap();
        git(&work, &["add", "big.bin"], &[]);
        git(&work, &["commit", "-q", "-m", "big"], &[("GIT_AUTHOR_NAME", "Ada"), ("GIT_AUTHOR_EMAIL", "ada@example.com"), env[0], env[1]]);
    }
    commit(&work, "b.txt", "b\n", ("Ada", "ada@example.com"));
    let main = git(&work, &["rev-parse", "HEAD"], &[]);
    git(&work, &["checkout", "-q", "-b", "feature"], &[]);
    commit(&work, "c.txt", "c\n", ("Bob", "bob@example.com"));
    let feature = git(&work, &["rev-parse", "HEAD"], &[]);
    git(&work, &["checkout", "-q", "main"], &[]);
    let bare = tmp.0.join("served/project.git");
    git(&tmp.0, &["clone", "-q", "--bare", work.to_str().unwrap(), bare.to_str().unwrap()], &[]);
    git(&bare, &["update-server-info"], &[]);
    Source { _tmp: tmp, bare, main, feature, first }
}

/// Serves `root` as static files (Git's dumb HTTP protocol); with `auth`, only to requests with
/// those Basic credentials (401 and `WWW-Authenticate` otherwise). Returns the base URL.
async fn serve(root: PathBuf, auth: Option<(&'static str, &'static str)>) -> String {
    let want = auth.map(|(u, p)| format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))));
    let handler = move |uri: Uri, headers: HeaderMap| {
        let (root, want) = (root.clone(), want.clone());
        async move {
            if let Some(w) = want {
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(w.as_str()) {
                    return (StatusCode::UNAUTHORIZED, [("www-authenticate", "Basic realm=\"git\"")], Vec::new());
                }
            }
            let rel = uri.path().trim_start_matches('/');
            match std::fs::read(root.join(rel)) {
                Ok(b) if !rel.contains("..") => (StatusCode::OK, [("content-type", "application/octet-stream")], b),
                _ => (StatusCode::NOT_FOUND, [("content-type", "text/plain")], b"not found".to_vec()),
            }
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(handler);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

async fn served(src: &Source, auth: Option<(&'static str, &'static str)>) -> String {
    format!("{}/project.git", serve(src.bare.parent().unwrap().to_path_buf(), auth).await)
}

// ---------------------------------------------------------------------------------------------
// The platform side.

const IMPORT: &str = "/repos/acme/widgets/import";

/// alice owns org acme (private acme/widgets, public acme/gadgets), bob is a member. Returns
/// alice's classic `repo` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", true).await;
    s.repo("acme", "gadgets", false).await;
    s.classic("alice", &["repo"]).await
}

/// The import, in whatever status, always conforming to its published shape.
async fn status(s: &Server, t: &str) -> Value {
    let (st, _, b) = call(s, Method::GET, IMPORT, Some(t), None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("Import", &b);
    b
}

/// Polls the import until `done` holds (the worker runs in the background).
async fn until(s: &Server, t: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let b = status(s, t).await;
        if done(&b) {
            return b;
        }
        assert!(Instant::now() < deadline, "waiting for {what}: {b}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Local sources turned on (off by default): the tests import from repositories they make on disk.
fn local() -> Options {
    Options::with(|c| c.imports.local_sources = true)
}

fn paced() -> Options {
    Options::with(|c| (c.imports.step_seconds, c.imports.local_sources) = (10, true))
}

fn is_status(want: &'static str) -> impl Fn(&Value) -> bool {
    move |b: &Value| b["status"] == want
}

/// The imported branches, tags and commits are the repository's: statuses and refs work.
async fn check_content(s: &Server, t: &str, src: &Source) {
    for (r, sha) in [("main", &src.main), ("feature", &src.feature), ("v1.0", &src.first)] {
        let (st, _, b) = call(
            s,
            Method::POST,
            &format!("/repos/acme/widgets/statuses/{sha}"),
            Some(t),
            Some(json!({"state": "success", "context": "ci"})),
        )
        .await;
        assert_eq!(st, 201, "{r}: {b}");
        let (st, _, b) = call(s, Method::GET, &format!("/repos/acme/widgets/commits/{r}/status"), Some(t), None).await;
        assert_eq!(st, 200, "{r}: {b}");
        assert_eq!(b["sha"], sha.as_str(), "{r}");
        assert_eq!(b["state"], "success");
    }
    let (st, _, _) =
        call(s, Method::POST, &format!("/repos/acme/widgets/statuses/{}", "0".repeat(40)), Some(t), Some(json!({"state": "success"})))
            .await;
    assert_eq!(st, 422, "commits outside the import are unknown");
}

both!(git_import_moves_through_every_status_to_complete, paced(), |s| {
    let t = world(&s).await;
    let src = source(false);
    let url = served(&src, None).await;
    let (receiver, recv) = Recv::start().await;
    let hook_token = s.classic("alice", &["admin:org_hook"]).await;
    let (st, _, _) = call(
        &s,
        Method::POST,
        "/orgs/acme/hooks",
        Some(&hook_token),
        Some(json!({"name": "web", "events": ["repository_import"], "config": {"url": receiver, "content_type": "json"}})),
    )
    .await;
    assert_eq!(st, 201);

    let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": url}))).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(header(&h, "location"), format!("{}{IMPORT}", s.base));
    assert_eq!(header(&h, "sunset"), "Fri, 12 Apr 2024 00:00:00 GMT");
    assert!(!header(&h, "deprecation").is_empty());
    assert_conforms_to_snapshot("Import", &b);
    assert_eq!(b["status"], "detecting");
    assert_eq!(b["vcs"], Value::Null);
    assert_eq!(b["vcs_url"], url);
    assert_eq!(b["use_lfs"], false);
    assert_eq!(b["url"], format!("{}{IMPORT}", s.base));
    assert_eq!(b["authors_url"], format!("{}{IMPORT}/authors", s.base));
    assert_eq!(b["repository_url"], format!("{}/repos/acme/widgets", s.base));

    // Detection recognises Git; the status holds until the step's time is up.
    until(&s, &t, "detected", |b| b["vcs"] == "git").await;
    assert_eq!(status(&s, &t).await["status"], "detecting");
    s.advance(10).await;
    let b = until(&s, &t, "imported", |b| b["status"] == "importing" && b["commit_count"] == 4).await;
    assert_eq!(b["import_percent"], 100);
    assert_eq!(b["status_text"], "Importing...");
    s.advance(10).await;
    let b = until(&s, &t, "mapped", |b| b["status"] == "mapping" && b["authors_count"] == 2).await;
    assert_eq!(b["has_large_files"], false);
    s.advance(10).await;
    until(&s, &t, "pushed", |b| b["status"] == "pushing" && b["push_percent"] == 100).await;
    s.advance(10).await;
    let b = until(&s, &t, "complete", is_status("complete")).await;
    assert_eq!(b["status_text"], "Done");
    assert!(b.get("push_percent").is_none() && b.get("failed_step").is_none(), "{b}");
    check_content(&s, &t, &src).await;

    // Authors from the history, mappable.
    let (st, h, authors) = call(&s, Method::GET, &format!("{IMPORT}/authors"), Some(&t), None).await;
    assert_eq!(st, 200, "{authors}");
    assert!(!header(&h, "sunset").is_empty());
    let list = authors.as_array().unwrap();
    assert_eq!(list.len(), 2);
    list.iter().for_each(|a| assert_conforms_to_snapshot("PorterAuthor", a));
    assert_eq!(list[0]["remote_id"], "ada@example.com");
    assert_eq!(list[0]["remote_name"], "Ada");
    assert_eq!(list[0]["email"], "ada@example.com");
    assert_eq!(list[1]["name"], "Bob");
    assert_eq!(list[0]["import_url"], format!("{}{IMPORT}", s.base));
    let bob = list[1]["id"].as_i64().unwrap();
    let (st, _, since) = call(&s, Method::GET, &format!("{IMPORT}/authors?since={}", list[0]["id"]), Some(&t), None).await;
    assert_eq!(st, 200);
    assert_eq!(since.as_array().unwrap().len(), 1);
    let (st, _, a) = call(
        &s,
        Method::PATCH,
        &format!("{IMPORT}/authors/{bob}"),
        Some(&t),
        Some(json!({"email": "robert@acme.example", "name": "Robert"})),
    )
    .await;
    assert_eq!(st, 200, "{a}");
    assert_eq!(
        (a["email"].as_str(), a["name"].as_str(), a["remote_id"].as_str()),
        (Some("robert@acme.example"), Some("Robert"), Some("bob@example.com"))
    );
    assert_eq!(a["url"], format!("{}{IMPORT}/authors/{bob}", s.base));
    let (st, _, b) = call(&s, Method::PATCH, &format!("{IMPORT}/authors/{bob}"), Some(&t), Some(json!({"email": "not an email"}))).await;
    assert_eq!(st, 422, "{b}");
    let (st, _, _) = call(&s, Method::PATCH, &format!("{IMPORT}/authors/999999"), Some(&t), Some(json!({"name": "X"}))).await;
    assert_eq!(st, 404);
    let (st, _, files) = call(&s, Method::GET, &format!("{IMPORT}/large_files"), Some(&t), None).await;
    assert_eq!((st, files), (200, json!([])));

    // The webhook reports success.
    let hits = recv.wait(2, 20).await;
    let hit = hits
        .iter()
        .find(|h| h.headers.get("x-service-event").is_some_and(|v| v == "repository_import"))
        .expect("repository_import delivery");
    let p: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(p["status"], "success");
    assert_eq!(p["repository"]["full_name"], "acme/widgets");
    assert_eq!(p["organization"]["login"], "acme");
    assert_eq!(p["sender"]["login"], "alice");
});

both!(restart_mid_import_resumes, paced(), |s| {
    let t = world(&s).await;
    let src = source(false);
    let url = served(&src, None).await;
    let (st, _, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": url, "vcs": "git"}))).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(b["status"], "importing");
    assert_eq!(b["vcs"], "git");
    until(&s, &t, "imported", |b| b["commit_count"] == 4).await;
    // Stopped mid-import (the step's time is not up) and started again on the same database.
    let s = s.restart().await;
    let b = status(&s, &t).await;
    assert_eq!(b["status"], "importing", "{b}");
    // The manual clock restarts at the wall clock: move well past every step.
    for want in ["mapping", "pushing", "complete"] {
        s.advance(30).await;
        until(&s, &t, want, |b| b["status"] == want && (want != "pushing" || b["push_percent"] == 100)).await;
    }
    check_content(&s, &t, &src).await;
});

both!(detection_outcomes_and_credentials, local(), |s| {
    let t = world(&s).await;
    let src = source(false);
    let base = served(&src, None).await;

    // Nothing recognisable at the URL.
    let (st, _, _) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": format!("{base}/missing.git")}))).await;
    assert_eq!(st, 201);
    let b = until(&s, &t, "nothing found", |b| b["status"] != "detecting").await;
    assert_eq!(b["status"], "detection_found_nothing", "{b}");
    // A second start needs a cancel first.
    let (st, _, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": base}))).await;
    assert_eq!(st, 422, "{b}");
    let (st, h, _) = call(&s, Method::DELETE, IMPORT, Some(&t), None).await;
    assert_eq!(st, 204);
    assert!(!header(&h, "deprecation").is_empty());
    let (st, _, _) = call(&s, Method::GET, IMPORT, Some(&t), None).await;
    assert_eq!(st, 404);

    // Credentials needed: detection says so; an update with them starts over and completes.
    let locked = served(&src, Some(("git-user", "s3cret-pw"))).await;
    let (st, _, _) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": locked}))).await;
    assert_eq!(st, 201);
    let b = until(&s, &t, "needs auth", |b| b["status"] != "detecting").await;
    assert_eq!(b["status"], "detection_needs_auth", "{b}");
    let (st, _, b) = call(&s, Method::PATCH, IMPORT, Some(&t), Some(json!({"vcs_username": "git-user", "vcs_password": "wrong"}))).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["status"], "detecting");
    let b = until(&s, &t, "needs auth again", |b| b["status"] != "detecting").await;
    assert_eq!(b["status"], "detection_needs_auth", "{b}");
    let (st, _, b) = call(&s, Method::PATCH, IMPORT, Some(&t), Some(json!({"vcs_password": "s3cret-pw"}))).await;
    assert_eq!(st, 200, "{b}");
    let b = until(&s, &t, "complete", |b| !["detecting", "importing", "mapping", "pushing"].contains(&b["status"].as_str().unwrap())).await;
    assert_eq!(b["status"], "complete", "{b}");
    assert!(!b.to_string().contains("s3cret-pw"));
    check_content(&s, &t, &src).await;

    // With `vcs` given, wrong credentials fail the import step: auth_failed.
    s.repo("acme", "other", true).await;
    let other = "/repos/acme/other/import";
    let (st, _, _) = call(
        &s,
        Method::PUT,
        other,
        Some(&t),
        Some(json!({"vcs_url": locked, "vcs": "git", "vcs_username": "git-user", "vcs_password": "nope"})),
    )
    .await;
    assert_eq!(st, 201);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, _, b) = call(&s, Method::GET, other, Some(&t), None).await;
        if b["status"] != "importing" {
            assert_eq!(b["status"], "auth_failed", "{b}");
            break;
        }
        assert!(Instant::now() < deadline, "{b}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A restart with no body.
    let (st, _, b) = call(&s, Method::PATCH, other, Some(&t), None).await;
    assert_eq!((st, b["status"].as_str()), (200, Some("importing")));

    // Subversion is reported honestly.
    s.repo("acme", "svn", true).await;
    let (st, _, _) = call(&s, Method::PUT, "/repos/acme/svn/import", Some(&t), Some(json!({"vcs_url": base, "vcs": "subversion"}))).await;
    assert_eq!(st, 201);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, _, b) = call(&s, Method::GET, "/repos/acme/svn/import", Some(&t), None).await;
        if b["status"] == "error" {
            assert_eq!(b["failed_step"], "importing");
            assert!(b["error_message"].as_str().unwrap().contains("unsupported on this server"), "{b}");
            break;
        }
        assert!(Instant::now() < deadline, "{b}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
});

both!(local_path_with_large_file_and_lfs, local(), |s| {
    let t = world(&s).await;
    let src = source(true);
    let (st, _, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": src.bare.to_str().unwrap()}))).await;
    assert_eq!(st, 201, "{b}");
    let b = until(&s, &t, "complete", |b| b["status"] == "complete" || b["status"] == "error").await;
    assert_eq!(b["status"], "complete", "{b}");
    assert_eq!(b["has_large_files"], true);
    assert_eq!(b["large_files_count"], 1);
    assert_eq!(b["large_files_size"], 1, "gigabytes, rounded up");
    let (st, _, files) = call(&s, Method::GET, &format!("{IMPORT}/large_files"), Some(&t), None).await;
    assert_eq!(st, 200);
    assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
    assert_conforms_to_snapshot("LargeFile", &files[0]);
    assert_eq!(files[0]["path"], "big.bin");
    assert_eq!(files[0]["ref_name"], "refs/heads/main");
    assert_eq!(files[0]["size"], 100 * 1024 * 1024 + 1);
    assert_eq!(files[0]["oid"].as_str().unwrap().len(), 40);

    let (st, h, b) = call(&s, Method::PATCH, &format!("{IMPORT}/lfs"), Some(&t), Some(json!({"use_lfs": "opt_in"}))).await;
    assert_eq!(st, 200, "{b}");
    assert!(!header(&h, "sunset").is_empty());
    assert_eq!(b["use_lfs"], true);
    let (st, _, b) = call(&s, Method::PATCH, &format!("{IMPORT}/lfs"), Some(&t), Some(json!({"use_lfs": "maybe"}))).await;
    assert_eq!(st, 422, "{b}");
    let (st, _, b) = call(&s, Method::PATCH, &format!("{IMPORT}/lfs"), Some(&t), Some(json!({}))).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(status(&s, &t).await["use_lfs"], true);
});

both!(access_validation_maintenance, local(), |s| {
    let t = world(&s).await;
    let url = "http://127.0.0.1:9/x.git";
    // No import yet.
    for p in [IMPORT.to_string(), format!("{IMPORT}/authors"), format!("{IMPORT}/large_files")] {
        let (st, h, b) = call(&s, Method::GET, &p, Some(&t), None).await;
        assert_error(st, &h, &b, 404, "Not Found");
        assert!(!header(&h, "sunset").is_empty(), "{p}");
    }
    let (st, _, _) = call(&s, Method::DELETE, IMPORT, Some(&t), None).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::PATCH, IMPORT, Some(&t), None).await;
    assert_eq!(st, 404);

    // Credentials: classic tokens only; private repositories invisible to outsiders.
    let (st, h, b) = call(&s, Method::GET, IMPORT, None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    let fg =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"contents": "write"}})).await;
    let (st, h, b) = call(&s, Method::GET, IMPORT, Some(&fg), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    s.user("carol").await;
    let carol = s.classic("carol", &["repo"]).await;
    let (st, _, _) = call(&s, Method::GET, IMPORT, Some(&carol), None).await;
    assert_eq!(st, 404);
    let no_scope = s.classic("alice", &["read:org"]).await;
    let (st, _, _) = call(&s, Method::PUT, "/repos/acme/gadgets/import", Some(&no_scope), Some(json!({"vcs_url": url}))).await;
    assert_eq!(st, 403);
    let (_, h, _) = call(&s, Method::GET, IMPORT, Some(&t), None).await;
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo");

    // Bodies.
    for (body, want) in [
        (json!({}), "Invalid request.\n\n\"vcs_url\" wasn't supplied."),
        (json!({"vcs_url": 5}), "Invalid request.\n\nFor 'properties/vcs_url', 5 is not a string."),
        (json!({"vcs_url": url, "vcs": "cvs"}), "Validation Failed"),
        (json!({"vcs_url": "http://user:pw@127.0.0.1:9/x.git"}), "Validation Failed"),
        (json!({"vcs_url": "ssh://example.com/x.git"}), "Validation Failed"),
        (json!({"vcs_url": "relative/path"}), "Validation Failed"),
    ] {
        let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(body.clone())).await;
        assert_error(st, &h, &b, 422, want);
    }
    // Other imports' mirrors are not a source.
    let mirror = s.opts.api.imports.mirrors().join("1-0000.git");
    let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": mirror.to_str().unwrap()}))).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    let r = s.req(Method::PUT, IMPORT, Some(&t)).body("{nope").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");

    // Workflow automation refuses imports.
    s.push("acme/gadgets", "refs/heads/main", SHA).await;
    s.admin_post("/repos/acme/gadgets/runs", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let (st, _, b) = call(&s, Method::PUT, "/repos/acme/gadgets/import", Some(&t), Some(json!({"vcs_url": url}))).await;
    assert_eq!(st, 422, "{b}");
    assert!(b["errors"][0]["message"].as_str().unwrap().contains("workflow"), "{b}");

    // Under maintenance: 503 with the documented body, still deprecated.
    let f = s.admin_post("/faults", json!({"kind": "maintenance", "path": "/repos/*/*/import**"})).await;
    for (m, p) in [(Method::GET, IMPORT.to_string()), (Method::PUT, IMPORT.to_string()), (Method::GET, format!("{IMPORT}/authors"))] {
        let (st, h, b) = call(&s, m, &p, Some(&t), Some(json!({"vcs_url": url}))).await;
        assert_error(st, &h, &b, 503, "Unavailable due to service under maintenance.");
        assert!(b["documentation_url"].as_str().unwrap().contains("source-imports"), "{b}");
        assert!(!header(&h, "sunset").is_empty());
    }
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/widgets/commits/main/status", Some(&t), None).await;
    assert_ne!(st, 503, "other services are not in maintenance");
    s.admin(Method::DELETE, &format!("/faults/{}", f["id"]), json!({})).await;
    let (st, _, _) = call(&s, Method::GET, IMPORT, Some(&t), None).await;
    assert_eq!(st, 404);
});

both!(internal_hosts_refused_unless_allowed, Options::with(|c| c.webhooks.allowed_hosts = None), |s| {
    let t = world(&s).await;
    let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": "http://127.0.0.1:9/x.git"}))).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert!(b["errors"][0]["message"].as_str().unwrap().contains("internal address"), "{b}");
});

// ---------------------------------------------------------------------------------------------
// The real binary, killed (SIGKILL) mid-import and started again on the same database.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_killed_mid_import_resumes() {
    use crate::persistence::{spawn_with_env, Http};
    let dir = tempdir();
    let db = dir.0.join("p.db").display().to_string();
    let env = [("PLATFORM_CLOCK", "manual"), ("PLATFORM_IMPORT_STEP_SECONDS", "10"), ("PLATFORM_WEBHOOK_ALLOWED_HOSTS", "loopback")];
    let src = source(false);
    let url = served(&src, None).await;
    let mut p = spawn_with_env(&db, &[], &env);
    let h = Http::new(&p.base);
    h.admin("/users", json!({"login": "alice"})).await;
    h.admin("/repos", json!({"owner": "alice", "name": "widgets", "private": true})).await;
    let t =
        h.admin("/tokens", json!({"kind": "classic", "login": "alice", "scopes": ["repo"]})).await["token"].as_str().unwrap().to_string();
    let imp = "/repos/alice/widgets/import";
    let (st, b) = h.call(Method::PUT, imp, Some(&t), Some(json!({"vcs_url": url, "vcs": "git"}))).await;
    assert_eq!(st, 201, "{b}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, b) = h.call(Method::GET, imp, Some(&t), None).await;
        if b["commit_count"] == 4 {
            assert_eq!(b["status"], "importing");
            break;
        }
        assert!(Instant::now() < deadline, "{b}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mirrors = std::fs::read_dir(format!("{db}.data/imports")).unwrap().count();
    assert_eq!(mirrors, 1, "the mirror lives next to the database");
    p.child.kill().unwrap();
    p.child.wait().unwrap();

    let mut p = spawn_with_env(&db, &[], &env);
    let h = Http::new(&p.base);
    let (st, b) = h.call(Method::GET, imp, Some(&t), None).await;
    assert_eq!((st, b["status"].as_str()), (200, Some("importing")), "{b}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        h.admin("/clock", json!({"advance_seconds": 30})).await;
        let (_, b) = h.call(Method::GET, imp, Some(&t), None).await;
        if b["status"] == "complete" {
            break;
        }
        assert!(["importing", "mapping", "pushing"].contains(&b["status"].as_str().unwrap()), "{b}");
        assert!(Instant::now() < deadline, "{b}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (st, b) =
        h.call(Method::POST, &format!("/repos/alice/widgets/statuses/{}", src.feature), Some(&t), Some(json!({"state": "success"}))).await;
    assert_eq!(st, 201, "{b}");
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}

// API callers may not read the server's disk: every local spelling is refused by default, and
// with local sources turned on, other imports' mirrors stay out of reach however they are spelled.
both!(local_sources_refused_by_default, |s| {
    let t = world(&s).await;
    let src = source(false);
    let path = src.bare.to_str().unwrap().to_string();
    for url in [
        path.clone(),
        format!("file://{path}"),
        format!("FILE://{path}"),
        format!("file:{path}"),
        format!("file%3A%2F%2F{}", path.trim_start_matches('/')),
        path.replace('/', "%2F"),
        "../../etc".into(),
        "ext::sh -c id".into(),
        "-uhelp".into(),
        "fd::17".into(),
        "git://127.0.0.1/x".into(),
    ] {
        let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": url}))).await;
        assert_error(st, &h, &b, 422, "Validation Failed");
        assert_eq!(b["errors"][0]["field"], "vcs_url", "{url}: {b}");
    }
    let (st, _, _) = call(&s, Method::GET, IMPORT, Some(&t), None).await;
    assert_eq!(st, 404, "nothing was started");
});

both!(mirrors_unreachable_with_local_sources, local(), |s| {
    let t = world(&s).await;
    let mirrors = s.opts.api.imports.mirrors();
    let m = mirrors.to_str().unwrap();
    for url in [
        format!("{m}/1-0000.git"),
        format!("file://{m}/1-0000.git"),
        format!("file://{m}/%2e%2e/imports/1-0000.git"),
        format!("{m}/../imports/x.git"),
        format!("file://{}", m.replace('/', "%2F")),
    ] {
        let (st, h, b) = call(&s, Method::PUT, IMPORT, Some(&t), Some(json!({"vcs_url": url}))).await;
        assert_error(st, &h, &b, 422, "Validation Failed");
    }
});
