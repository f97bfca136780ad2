//! The REST reads and writes around pushes, on real git: the commit list (filters, pages), a
//! commit's parents, stats and files, comparisons, contents (file, directory, raw, at a ref;
//! created, updated and deleted by commits, `sha` checks, workflow files), tags, git commits
//! and trees, and the reference writes through the one ref-change path (fast-forward rule,
//! `force`, the legacy list form).
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::git_hosting::{url, Client};
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

/// alice's public `alice/code`: "Initial commit" (README.md), "Add src" (2026-02-01),
/// "Edit lib" by Bob Dev (2026-03-01) on `main`; `feature` with "Feature work" on top of that;
/// the tag `v1` at main. alice's `repo` token and the shas (add src, edit lib, feature).
async fn world(s: &Server) -> (String, [String; 3]) {
    for u in ["alice", "bob"] {
        s.user(u).await;
    }
    let t = s.classic("alice", &["repo"]).await;
    let (st, _, b) = call(s, Method::POST, "/user/repos", Some(&t), Some(json!({"name": "code", "auto_init": true}))).await;
    assert_eq!(st, 201, "{b}");
    let push = |r: &'static str, message: &'static str, who: Value, files: Value| async move {
        let body = json!({"ref": r, "base": "main", "message": message, "author": who, "files": files});
        s.admin_post("/repos/alice/code/refs", body).await["sha"].as_str().unwrap().to_string()
    };
    let add = push(
        "refs/heads/main",
        "Add src",
        json!({"name": "Alice", "email": "alice@example.com", "date": "2026-02-01T00:00:00Z"}),
        json!({"src/lib.rs": "fn a() {}\n", "docs/guide.md": "Guide\n"}),
    )
    .await;
    let edit = push(
        "refs/heads/main",
        "Edit lib",
        json!({"name": "Bob Dev", "email": "bob@example.com", "date": "2026-03-01T12:00:00Z"}),
        json!({"src/lib.rs": "fn a() {}\nfn b() {}\n"}),
    )
    .await;
    let feature = push(
        "refs/heads/feature",
        "Feature work",
        json!({"name": "Alice", "email": "alice@example.com", "date": "2026-03-02T00:00:00Z"}),
        json!({"feature.txt": "f\n"}),
    )
    .await;
    s.admin_post("/repos/alice/code/refs", json!({"ref": "refs/tags/v1"})).await;
    (t, [add, edit, feature])
}

async fn ok(s: &Server, path: &str, token: Option<&str>) -> (reqwest::header::HeaderMap, Value) {
    let (st, h, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    (h, b)
}

fn messages(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|c| c["commit"]["message"].as_str().unwrap().to_string()).collect()
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn unb64(s: &Value) -> String {
    let compact: String = s.as_str().unwrap().split('\n').collect();
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(compact).unwrap()).unwrap()
}

both!(commits_history_and_compare, |s| {
    let (t, [add, edit, feature]) = world(&s).await;
    let (_, list) = ok(&s, "/repos/alice/code/commits", None).await;
    assert_eq!(messages(&list), ["Edit lib", "Add src", "Initial commit"]);
    for c in list.as_array().unwrap() {
        assert_conforms_to_snapshot("Commit", c);
        assert!(c.get("files").is_none() && c.get("stats").is_none(), "{c}");
    }
    assert_eq!(list[0]["sha"], edit.as_str());
    assert_eq!(list[0]["parents"][0]["sha"], add.as_str());
    assert_eq!(list[0]["commit"]["author"], json!({"name": "Bob Dev", "email": "bob@example.com", "date": "2026-03-01T12:00:00Z"}));
    // Pages with Link.
    let (h, one) = ok(&s, "/repos/alice/code/commits?per_page=1", Some(&t)).await;
    assert_eq!(messages(&one), ["Edit lib"]);
    let link = header(&h, "link");
    assert!(link.contains("rel=\"next\"") && link.contains("page=3>; rel=\"last\""), "{link}");
    assert_eq!(messages(&ok(&s, "/repos/alice/code/commits?per_page=1&page=2", None).await.1), ["Add src"]);
    // Filters: path, author, time, starting point.
    assert_eq!(messages(&ok(&s, "/repos/alice/code/commits?path=src/lib.rs", None).await.1), ["Edit lib", "Add src"]);
    assert_eq!(messages(&ok(&s, "/repos/alice/code/commits?path=docs", None).await.1), ["Add src"]);
    assert_eq!(messages(&ok(&s, "/repos/alice/code/commits?author=bob@example.com", None).await.1), ["Edit lib"]);
    let window = "/repos/alice/code/commits?since=2026-02-15T00:00:00Z&until=2026-03-15T00:00:00Z";
    assert_eq!(messages(&ok(&s, window, None).await.1), ["Edit lib"]);
    assert_eq!(messages(&ok(&s, "/repos/alice/code/commits?sha=feature&per_page=2", None).await.1), ["Feature work", "Edit lib"]);
    assert_eq!(messages(&ok(&s, &format!("/repos/alice/code/commits?sha={add}"), None).await.1), ["Add src", "Initial commit"]);
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/code/commits?sha=nope", None, None).await;
    assert_error(st, &h, &e, 404, "No commit found for SHA: nope");
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/code/commits?since=yesterday", None, None).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\nFor 'since', \"yesterday\" is not a timestamp.");
    s.repo("alice", "empty", false).await;
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/empty/commits", None, None).await;
    assert_error(st, &h, &e, 409, "Git Repository is empty.");
    // One commit: its parents, stats and files against its first parent.
    let (_, c) = ok(&s, &format!("/repos/alice/code/commits/{edit}"), None).await;
    assert_conforms_to_snapshot("Commit", &c);
    assert_eq!(c["parents"][0]["sha"], add.as_str());
    assert_eq!(c["stats"], json!({"total": 1, "additions": 1, "deletions": 0}));
    assert_eq!(c["files"].as_array().unwrap().len(), 1);
    let f = &c["files"][0];
    assert_eq!(
        (f["filename"].as_str(), f["status"].as_str(), f["additions"].as_i64(), f["changes"].as_i64()),
        (Some("src/lib.rs"), Some("modified"), Some(1), Some(1))
    );
    let (_, lib) = ok(&s, &format!("/repos/alice/code/contents/src/lib.rs?ref={edit}"), None).await;
    assert_eq!(f["sha"], lib["sha"]);
    let (_, root) = ok(&s, &format!("/repos/alice/code/commits/{add}"), None).await;
    assert_eq!(root["stats"]["additions"], 2);
    let statuses: Vec<&str> = root["files"].as_array().unwrap().iter().map(|f| f["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["added", "added"]);
    // Comparisons.
    let (_, cmp) = ok(&s, "/repos/alice/code/compare/main...feature", None).await;
    assert_conforms_to_snapshot("CommitComparison", &cmp);
    assert_eq!((cmp["status"].as_str(), cmp["ahead_by"].as_i64(), cmp["behind_by"].as_i64()), (Some("ahead"), Some(1), Some(0)));
    assert_eq!(cmp["total_commits"], 1);
    assert_eq!(messages(&cmp["commits"]), ["Feature work"]);
    assert_eq!(cmp["commits"][0]["sha"], feature.as_str());
    assert_eq!(cmp["merge_base_commit"]["sha"], edit.as_str());
    assert_eq!(cmp["base_commit"]["sha"], edit.as_str());
    assert_eq!(cmp["files"][0]["filename"], "feature.txt");
    assert_eq!(cmp["files"][0]["status"], "added");
    let (_, back) = ok(&s, "/repos/alice/code/compare/feature...main", None).await;
    assert_eq!(
        (back["status"].as_str(), back["behind_by"].as_i64(), back["commits"].as_array().unwrap().len()),
        (Some("behind"), Some(1), 0)
    );
    assert_eq!(ok(&s, "/repos/alice/code/compare/main...v1", None).await.1["status"], "identical");
    s.admin_post("/repos/alice/code/refs", json!({"ref": "refs/heads/main", "message": "More", "files": {"more.txt": "m\n"}})).await;
    let (_, div) = ok(&s, &format!("/repos/alice/code/compare/main...{feature}"), None).await;
    assert_eq!((div["status"].as_str(), div["ahead_by"].as_i64(), div["behind_by"].as_i64()), (Some("diverged"), Some(1), Some(1)));
    for bad in ["main...nope", "main"] {
        let (st, h, e) = call(&s, Method::GET, &format!("/repos/alice/code/compare/{bad}"), None, None).await;
        assert_error(st, &h, &e, 404, "Not Found");
    }
});

both!(contents_read_and_written_by_commits, |s| {
    let (t, [add, _, _]) = world(&s).await;
    // A file, base64 in lines; a directory; at a ref; raw.
    let (_, f) = ok(&s, "/repos/alice/code/contents/src/lib.rs", None).await;
    assert_conforms_to_snapshot("Content", &f);
    assert_eq!(
        (f["type"].as_str(), f["encoding"].as_str(), f["name"].as_str(), f["path"].as_str()),
        (Some("file"), Some("base64"), Some("lib.rs"), Some("src/lib.rs"))
    );
    assert_eq!(unb64(&f["content"]), "fn a() {}\nfn b() {}\n");
    assert_eq!(f["size"], 20);
    assert_eq!(f["url"], format!("{}/repos/alice/code/contents/src/lib.rs?ref=main", s.base));
    let (_, dir) = ok(&s, "/repos/alice/code/contents/src", None).await;
    assert_eq!(dir.as_array().unwrap().len(), 1);
    assert_conforms_to_snapshot("Content", &dir[0]);
    assert_eq!((dir[0]["type"].as_str(), dir[0]["path"].as_str()), (Some("file"), Some("src/lib.rs")));
    let (_, top) = ok(&s, "/repos/alice/code/contents?ref=feature", None).await;
    let names: Vec<&str> = top.as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(names, ["README.md", "docs", "feature.txt", "src"]);
    assert_eq!(top[1]["type"], "dir");
    let (_, old) = ok(&s, &format!("/repos/alice/code/contents/src/lib.rs?ref={add}"), None).await;
    assert_eq!(unb64(&old["content"]), "fn a() {}\n");
    assert_eq!(ok(&s, "/repos/alice/code/contents/feature.txt?ref=feature", None).await.1["type"], "file");
    for (path, msg) in [("feature.txt", "Not Found"), ("nope/x", "Not Found"), ("src/lib.rs?ref=nope", "No commit found for the ref nope")]
    {
        let (st, h, e) = call(&s, Method::GET, &format!("/repos/alice/code/contents/{path}"), None, None).await;
        assert_error(st, &h, &e, 404, msg);
    }
    let r = s
        .req(Method::GET, "/repos/alice/code/contents/src/lib.rs", None)
        .header("accept", "application/vnd.service.raw")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(header(r.headers(), "content-type").starts_with("text/plain"));
    assert_eq!(r.text().await.unwrap(), "fn a() {}\nfn b() {}\n");
    // Created by a commit on the default branch.
    let main = ok(&s, "/repos/alice/code/branches/main", None).await.1["commit"]["sha"].as_str().unwrap().to_string();
    let put = |path: &'static str, body: Value, token: String| {
        let s = &s;
        async move { call(s, Method::PUT, &format!("/repos/alice/code/contents/{path}"), Some(&token), Some(body)).await }
    };
    let (st, _, made) = put("notes/new.txt", json!({"message": "Add notes", "content": b64("hello\n")}), t.clone()).await;
    assert_eq!(st, 201, "{made}");
    assert_conforms_to_snapshot("FileCommit", &made);
    assert_eq!(made["content"]["path"], "notes/new.txt");
    assert_eq!(made["commit"]["message"], "Add notes");
    assert_eq!(made["commit"]["parents"][0]["sha"], main.as_str());
    assert_eq!(made["commit"]["author"]["name"], "alice");
    let new_sha = made["commit"]["sha"].as_str().unwrap().to_string();
    assert_eq!(ok(&s, "/repos/alice/code/branches/main", None).await.1["commit"]["sha"], new_sha.as_str());
    let (_, c) = ok(&s, "/repos/alice/code/commits?per_page=1", None).await;
    assert_eq!(c[0]["sha"], new_sha.as_str());
    let blob = made["content"]["sha"].as_str().unwrap().to_string();
    // Replacing needs the blob's sha: missing 422, another 409.
    let (st, h, e) = put("notes/new.txt", json!({"message": "x", "content": b64("2\n")}), t.clone()).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\n\"sha\" wasn't supplied.");
    let (st, h, e) = put("notes/new.txt", json!({"message": "x", "content": b64("2\n"), "sha": add}), t.clone()).await;
    assert_error(st, &h, &e, 409, &format!("notes/new.txt does not match {add}"));
    let body = json!({"message": "Update notes", "content": b64("2\n"), "sha": blob,
                      "committer": {"name": "Robo", "email": "robo@example.com", "date": "2026-04-01T00:00:00Z"}});
    let (st, _, upd) = put("notes/new.txt", body, t.clone()).await;
    assert_eq!(st, 200, "{upd}");
    assert_eq!(upd["commit"]["committer"], json!({"name": "Robo", "email": "robo@example.com", "date": "2026-04-01T00:00:00Z"}));
    assert_eq!(upd["commit"]["author"]["name"], "Robo");
    assert_eq!(unb64(&ok(&s, "/repos/alice/code/contents/notes/new.txt", None).await.1["content"]), "2\n");
    // Another branch; an unknown one; bad base64.
    let (st, _, b) = put("notes/new.txt", json!({"message": "On feature", "content": b64("f\n"), "branch": "feature"}), t.clone()).await;
    assert_eq!(st, 201, "{b}");
    let (st, h, e) = put("x.txt", json!({"message": "x", "content": b64("x"), "branch": "nope"}), t.clone()).await;
    assert_error(st, &h, &e, 404, "Branch nope not found");
    let (st, h, e) = put("x.txt", json!({"message": "x", "content": "***"}), t.clone()).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\ncontent is not valid Base64");
    // Workflow files need the `workflow` scope.
    let (st, h, e) = put(".workflows/ci.yml", json!({"message": "CI", "content": b64("on: push\n")}), t.clone()).await;
    assert_error(
        st,
        &h,
        &e,
        403,
        "refusing to allow a Personal Access Token to create or update workflow `.workflows/ci.yml` without `workflow` scope",
    );
    let wf = s.classic("alice", &["repo", "workflow"]).await;
    let (st, _, b) = put(".workflows/ci.yml", json!({"message": "CI", "content": b64("on: push\n")}), wf).await;
    assert_eq!(st, 201, "{b}");
    // Deleted by a commit: the sha must match; then it is gone.
    let cur = ok(&s, "/repos/alice/code/contents/notes/new.txt", None).await.1["sha"].as_str().unwrap().to_string();
    let del = |body: Value| call(&s, Method::DELETE, "/repos/alice/code/contents/notes/new.txt", Some(&t), Some(body));
    let (st, h, e) = del(json!({"message": "rm", "sha": blob})).await;
    assert_error(st, &h, &e, 409, &format!("notes/new.txt does not match {blob}"));
    let (st, _, gone) = del(json!({"message": "Remove notes", "sha": cur})).await;
    assert_eq!(st, 200, "{gone}");
    assert_conforms_to_snapshot("FileCommit", &gone);
    assert_eq!(gone["content"], Value::Null);
    assert_eq!(gone["commit"]["message"], "Remove notes");
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/contents/notes/new.txt", None, None).await;
    assert_eq!(st, 404);
    let (st, h, e) = del(json!({"message": "rm", "sha": cur})).await;
    assert_error(st, &h, &e, 404, "Not Found");
    let (st, h, e) = del(json!({"message": "rm"})).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\n\"sha\" wasn't supplied.");
});

both!(refs_tags_and_git_objects, |s| {
    let (t, [add, edit, feature]) = world(&s).await;
    let post = |body: Value| call(&s, Method::POST, "/repos/alice/code/git/refs", Some(&t), Some(body));
    // Created at a commit; recorded as a push is; git has it.
    let (st, h, r) = post(json!({"ref": "refs/heads/topic", "sha": add})).await;
    assert_eq!(st, 201, "{r}");
    assert_conforms_to_snapshot("GitRef", &r);
    assert_eq!(r["ref"], "refs/heads/topic");
    assert_eq!(r["object"], json!({"type": "commit", "sha": add, "url": format!("{}/repos/alice/code/git/commits/{add}", s.base)}));
    assert_eq!(header(&h, "location"), format!("{}/repos/alice/code/git/refs/heads/topic", s.base));
    assert_eq!(ok(&s, "/repos/alice/code/branches/topic", None).await.1["commit"]["sha"], add.as_str());
    let c = Client::new(2);
    let remote = c.ok(c.dir("x").parent().unwrap(), &["ls-remote", &url(&s.base, "alice/code", None)]).await;
    assert!(remote.contains(&format!("{add}\trefs/heads/topic")), "{remote}");
    for (body, msg) in [
        (json!({"ref": "refs/heads/topic", "sha": edit}), "Reference already exists"),
        (json!({"ref": "heads/x", "sha": edit}), "Reference name must start with 'refs/' and have at least two slashes."),
        (json!({"ref": "refs/heads/x", "sha": "ffffffffffffffffffffffffffffffffffffffff"}), "Object does not exist"),
    ] {
        let (st, h, e) = post(body).await;
        assert_error(st, &h, &e, 422, msg);
    }
    // Moved: fast forwards, or with `force`.
    let patch = |r: &'static str, body: Value| {
        let (s, t) = (&s, &t);
        async move { call(s, Method::PATCH, &format!("/repos/alice/code/git/refs/{r}"), Some(t), Some(body)).await }
    };
    let (st, _, r) = patch("heads/topic", json!({"sha": feature})).await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["object"]["sha"], feature.as_str());
    let (st, h, e) = patch("heads/topic", json!({"sha": add})).await;
    assert_error(st, &h, &e, 422, "Update is not a fast forward");
    let (st, _, r) = patch("heads/topic", json!({"sha": add, "force": true})).await;
    assert_eq!((st, r["object"]["sha"].as_str()), (200, Some(add.as_str())));
    assert_eq!(ok(&s, "/repos/alice/code/branches/topic", None).await.1["commit"]["sha"], add.as_str());
    let (st, h, e) = patch("heads/nope", json!({"sha": add})).await;
    assert_error(st, &h, &e, 422, "Reference does not exist");
    // Deleted.
    let (st, _, _) = call(&s, Method::DELETE, "/repos/alice/code/git/refs/heads/topic", Some(&t), None).await;
    assert_eq!(st, 204);
    let (st, h, e) = call(&s, Method::DELETE, "/repos/alice/code/git/refs/heads/topic", Some(&t), None).await;
    assert_error(st, &h, &e, 422, "Reference does not exist");
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/branches/topic", None, None).await;
    assert_eq!(st, 404);
    // Writes need push access.
    let bob = s.classic("bob", &["repo"]).await;
    let (st, _, _) =
        call(&s, Method::POST, "/repos/alice/code/git/refs", Some(&bob), Some(json!({"ref": "refs/heads/b", "sha": add}))).await;
    assert_eq!(st, 403);
    // Tags, last name first.
    let (st, _, _) = post(json!({"ref": "refs/tags/v2", "sha": feature})).await;
    assert_eq!(st, 201);
    let (_, tags) = ok(&s, "/repos/alice/code/tags", None).await;
    let names: Vec<&str> = tags.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["v2", "v1"]);
    assert_conforms_to_snapshot("Tag", &tags[0]);
    assert_eq!(tags[0]["commit"]["sha"], feature.as_str());
    assert_eq!(tags[1]["commit"]["sha"], edit.as_str());
    assert_eq!(tags[0]["zipball_url"], format!("{}/repos/alice/code/zipball/refs/tags/v2", s.base));
    // The legacy list form of `…/git/refs`.
    let (_, heads) = ok(&s, "/repos/alice/code/git/refs/heads", None).await;
    let names: Vec<&str> = heads.as_array().unwrap().iter().map(|r| r["ref"].as_str().unwrap()).collect();
    assert_eq!(names, ["refs/heads/feature", "refs/heads/main"]);
    assert_eq!(ok(&s, "/repos/alice/code/git/refs/tags", None).await.1.as_array().unwrap().len(), 2);
    assert_eq!(ok(&s, "/repos/alice/code/git/refs", None).await.1.as_array().unwrap().len(), 4);
    assert_eq!(ok(&s, "/repos/alice/code/git/refs/heads/main", None).await.1["object"]["sha"], edit.as_str());
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/git/refs/heads/nope", None, None).await;
    assert_eq!(st, 404);
    // `…/git/ref/{ref}` (what client libraries call) names one reference exactly.
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/git/ref/heads", None, None).await;
    assert_eq!(st, 404);
    // Git commits and trees.
    let (_, k) = ok(&s, &format!("/repos/alice/code/git/commits/{edit}"), None).await;
    assert_conforms_to_snapshot("GitCommitObject", &k);
    assert_eq!((k["sha"].as_str(), k["message"].as_str()), (Some(edit.as_str()), Some("Edit lib")));
    assert_eq!(k["parents"][0]["sha"], add.as_str());
    assert_eq!(k["author"]["email"], "bob@example.com");
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/git/commits/ffffffffffffffffffffffffffffffffffffffff", None, None).await;
    assert_eq!(st, 404);
    let tree = k["tree"]["sha"].as_str().unwrap().to_string();
    let (_, top) = ok(&s, &format!("/repos/alice/code/git/trees/{tree}"), None).await;
    assert_conforms_to_snapshot("GitTree", &top);
    let paths: Vec<&str> = top["tree"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["README.md", "docs", "src"]);
    assert_eq!(top["truncated"], false);
    assert_eq!(top["tree"][1]["type"], "tree");
    assert!(top["tree"][1].get("size").is_none());
    let (_, all) = ok(&s, "/repos/alice/code/git/trees/main?recursive=1", None).await;
    let lib = all["tree"].as_array().unwrap().iter().find(|e| e["path"] == "src/lib.rs").unwrap().clone();
    assert_eq!((lib["type"].as_str(), lib["mode"].as_str(), lib["size"].as_i64()), (Some("blob"), Some("100644"), Some(20)));
    let (st, _, _) = call(&s, Method::GET, "/repos/alice/code/git/trees/nope", None, None).await;
    assert_eq!(st, 404);
});

both!(blobs_and_tag_objects, |s| {
    let (t, [_, edit, _]) = world(&s).await;
    let api = format!("{}/repos/alice/code", s.base);
    let post = |path: &'static str, body: Value| call(&s, Method::POST, path, Some(&t), Some(body));
    // A blob from UTF-8 text and the same bytes as base64: one object, git's sha.
    let (st, h, b) = post("/repos/alice/code/git/blobs", json!({"content": "hello\n"})).await;
    assert_eq!(st, 201, "{b}");
    assert_conforms_to_snapshot("ShortBlob", &b);
    let sha = b["sha"].as_str().unwrap().to_string();
    assert_eq!(sha, "ce013625030ba8dba906f756967f9e9ca394464a");
    assert_eq!(b["url"], format!("{api}/git/blobs/{sha}"));
    assert_eq!(header(&h, "location"), format!("{api}/git/blobs/{sha}"));
    let (st, _, again) = post("/repos/alice/code/git/blobs", json!({"content": b64("hello\n"), "encoding": "base64"})).await;
    assert_eq!((st, again["sha"].as_str()), (201, Some(sha.as_str())));
    // Read back (public: anonymously too), base64 with its size.
    let (_, blob) = ok(&s, &format!("/repos/alice/code/git/blobs/{sha}"), None).await;
    assert_conforms_to_snapshot("Blob", &blob);
    assert_eq!((blob["encoding"].as_str(), blob["size"].as_i64(), blob["sha"].as_str()), (Some("base64"), Some(6), Some(sha.as_str())));
    assert_eq!(unb64(&blob["content"]), "hello\n");
    // A file's blob is the one its contents and trees name.
    let (_, lib) = ok(&s, &format!("/repos/alice/code/contents/src/lib.rs?ref={edit}"), None).await;
    let (_, lib_blob) = ok(&s, &format!("/repos/alice/code/git/blobs/{}", lib["sha"].as_str().unwrap()), None).await;
    assert_eq!(unb64(&lib_blob["content"]), "fn a() {}\nfn b() {}\n");
    // Not a blob, or nothing: 404.
    for missing in [edit.as_str(), "ffffffffffffffffffffffffffffffffffffffff", "nope"] {
        let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/code/git/blobs/{missing}"), None, None).await;
        assert_eq!(st, 404, "{missing}");
    }
    let (st, h, e) = post("/repos/alice/code/git/blobs", json!({"content": "x", "encoding": "latin-1"})).await;
    assert_error(st, &h, &e, 422, "Validation Failed");
    let (st, h, e) = post("/repos/alice/code/git/blobs", json!({"content": "***", "encoding": "base64"})).await;
    assert_error(st, &h, &e, 422, "Validation Failed");

    // An annotated tag object of a commit, by a given tagger.
    let tagger = json!({"name": "Rel Eng", "email": "rel@example.com", "date": "2026-04-01T10:00:00Z"});
    let body = json!({"tag": "v2.0", "message": "Release 2.0\n", "object": edit, "type": "commit", "tagger": tagger});
    let (st, h, tag) = post("/repos/alice/code/git/tags", body).await;
    assert_eq!(st, 201, "{tag}");
    assert_conforms_to_snapshot("GitTag", &tag);
    let tag_sha = tag["sha"].as_str().unwrap().to_string();
    assert_eq!(header(&h, "location"), format!("{api}/git/tags/{tag_sha}"));
    assert_eq!((tag["tag"].as_str(), tag["message"].as_str()), (Some("v2.0"), Some("Release 2.0\n")));
    assert_eq!(tag["tagger"], tagger);
    assert_eq!(tag["object"], json!({"sha": edit, "type": "commit", "url": format!("{api}/git/commits/{edit}")}));
    assert_eq!((tag["verification"]["verified"].as_bool(), tag["verification"]["reason"].as_str()), (Some(false), Some("unsigned")));
    let (_, read) = ok(&s, &format!("/repos/alice/code/git/tags/{tag_sha}"), None).await;
    assert_eq!(read, tag);
    // It becomes a tag once a ref names it: the ref names the tag object, the tag list its commit.
    let (st, _, r) = post("/repos/alice/code/git/refs", json!({"ref": "refs/tags/v2.0", "sha": tag_sha})).await;
    assert_eq!(st, 201, "{r}");
    assert_eq!((r["object"]["type"].as_str(), r["object"]["sha"].as_str()), (Some("tag"), Some(tag_sha.as_str())));
    let (_, tags) = ok(&s, "/repos/alice/code/tags", None).await;
    let v2 = tags.as_array().unwrap().iter().find(|t| t["name"] == "v2.0").cloned().unwrap_or_default();
    assert_eq!(v2["commit"]["sha"], edit.as_str(), "{tags}");
    // Of a blob, with the caller as the tagger by default.
    let (st, _, blob_tag) = post("/repos/alice/code/git/tags", json!({"tag": "data", "message": "m", "object": sha, "type": "blob"})).await;
    assert_eq!(st, 201, "{blob_tag}");
    assert_eq!(blob_tag["object"]["url"], format!("{api}/git/blobs/{sha}"));
    assert_eq!(blob_tag["tagger"]["name"], "alice");
    // What is not there, or not of the type given, is refused.
    for (body, msg) in [
        (
            json!({"tag": "x", "message": "m", "object": "ffffffffffffffffffffffffffffffffffffffff", "type": "commit"}),
            "Object does not exist",
        ),
        (json!({"tag": "x", "message": "m", "object": sha, "type": "commit"}), "Object is not a commit"),
        (json!({"tag": "x", "message": "m", "object": edit, "type": "tag"}), "Validation Failed"),
    ] {
        let (st, h, e) = post("/repos/alice/code/git/tags", body).await;
        assert_error(st, &h, &e, 422, msg);
    }
    for missing in [edit.as_str(), "ffffffffffffffffffffffffffffffffffffffff"] {
        let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/code/git/tags/{missing}"), None, None).await;
        assert_eq!(st, 404, "{missing}");
    }
    // Writing needs push access; a private repository's objects are hidden from outsiders.
    let bob = s.classic("bob", &["repo"]).await;
    let (st, _, _) = call(&s, Method::POST, "/repos/alice/code/git/blobs", Some(&bob), Some(json!({"content": "x"}))).await;
    assert_eq!(st, 403);
    let (st, _, _) = call(&s, Method::POST, "/repos/alice/code/git/blobs", None, Some(json!({"content": "x"}))).await;
    assert_eq!(st, 401);
    let (st, _, _) = call(&s, Method::PATCH, "/repos/alice/code", Some(&t), Some(json!({"private": true}))).await;
    assert_eq!(st, 200);
    let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/code/git/blobs/{sha}"), Some(&bob), None).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/code/git/tags/{tag_sha}"), Some(&bob), None).await;
    assert_eq!(st, 404);
    let (st, _, _) = call(&s, Method::GET, &format!("/repos/alice/code/git/blobs/{sha}"), Some(&t), None).await;
    assert_eq!(st, 200);
});

both!(commit_patches_and_people_by_email, |s| {
    let (t, [add, edit, _]) = world(&s).await;
    // The patch of each text file, hunks only; none for a binary file.
    let (_, c) = ok(&s, &format!("/repos/alice/code/commits/{edit}"), None).await;
    assert_conforms_to_snapshot("Commit", &c);
    assert_eq!(c["files"][0]["patch"], "@@ -1 +1,2 @@\n fn a() {}\n+fn b() {}");
    let (_, root) = ok(&s, &format!("/repos/alice/code/commits/{add}"), None).await;
    let guide = root["files"].as_array().unwrap().iter().find(|f| f["filename"] == "docs/guide.md").cloned().unwrap();
    assert_eq!(guide["patch"], "@@ -0,0 +1 @@\n+Guide");
    let bytes = base64::engine::general_purpose::STANDARD.encode([0u8, 159, 146, 150, 0, 1]);
    let (st, _, put) =
        call(&s, Method::PUT, "/repos/alice/code/contents/data.bin", Some(&t), Some(json!({"message": "Binary", "content": bytes}))).await;
    assert_eq!(st, 201, "{put}");
    let bin = put["commit"]["sha"].as_str().unwrap().to_string();
    let (_, c) = ok(&s, &format!("/repos/alice/code/commits/{bin}"), None).await;
    assert_eq!(c["files"][0]["filename"], "data.bin");
    assert!(c["files"][0].get("patch").is_none(), "{c}");
    // Lists carry no files, so no patches.
    let (_, list) = ok(&s, "/repos/alice/code/commits", None).await;
    assert!(list[0].get("files").is_none());

    // Author and committer are the accounts of their emails: a user's email, a no-reply
    // address naming a login; none (null) for an email no account has.
    s.admin_post("/users", json!({"login": "dana", "email": "Dana@Example.com"})).await;
    let dana = s.classic("dana", &["repo"]).await;
    let push = |who: Value| {
        let s = &s;
        async move {
            let body = json!({"ref": "refs/heads/main", "message": "By someone", "author": who, "files": {"who.txt": who.to_string()}});
            s.admin_post("/repos/alice/code/refs", body).await["sha"].as_str().unwrap().to_string()
        }
    };
    let by_email = push(json!({"name": "D", "email": "dana@example.com"})).await;
    let by_noreply = push(json!({"name": "A", "email": "alice@users.noreply.service.example"})).await;
    let by_id_noreply = push(json!({"name": "A", "email": "12345+dana@users.noreply.service.example"})).await;
    let by_nobody = push(json!({"name": "N", "email": "nobody@example.com"})).await;
    for (sha, login) in [(&by_email, Some("dana")), (&by_noreply, Some("alice")), (&by_id_noreply, Some("dana")), (&by_nobody, None)] {
        let (_, c) = ok(&s, &format!("/repos/alice/code/commits/{sha}"), Some(&dana)).await;
        assert_eq!(c["author"]["login"].as_str(), login, "{c}");
        assert_eq!(c["committer"]["login"].as_str(), login, "{c}");
        if login.is_none() {
            assert!(c["author"].is_null() && c["committer"].is_null(), "{c}");
        }
    }
    // The same in lists (commits the store recorded, and those only git has).
    let (_, list) = ok(&s, "/repos/alice/code/commits?per_page=4", None).await;
    let logins: Vec<Option<&str>> = list.as_array().unwrap().iter().map(|c| c["author"]["login"].as_str()).collect();
    assert_eq!(logins, [None, Some("dana"), Some("alice"), Some("dana")]);
    // A contents write by dana: her account as author and committer.
    s.admin_post("/repos", json!({"owner": "dana", "name": "notes"})).await;
    let (st, _, put) =
        call(&s, Method::PUT, "/repos/dana/notes/contents/n.txt", Some(&dana), Some(json!({"message": "Note", "content": b64("n\n")})))
            .await;
    assert_eq!(st, 201, "{put}");
    let (_, c) = ok(&s, &format!("/repos/dana/notes/commits/{}", put["commit"]["sha"].as_str().unwrap()), None).await;
    assert_eq!((c["author"]["login"].as_str(), c["committer"]["login"].as_str()), (Some("dana"), Some("dana")), "{c}");
});
