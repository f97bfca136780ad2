//! Branches, commits and refs: shapes against the snapshot, branch names with slashes, the
//! `protected` flag from rulesets, ref forms of the commit endpoint and its 422, exact and
//! prefix ref lookups, pagination, ETag/304, private repositories and fine-grained tokens.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

const SHA3: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

/// alice owns `alice/hello` (public: main, feature/x, dev; tags v1.0, v1.1) and `alice/secret`
/// (private: main); bob is an outsider. Returns alice's `repo` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob"] {
        s.user(u).await;
    }
    s.repo("alice", "hello", false).await;
    s.repo("alice", "secret", true).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    s.push("alice/hello", "refs/heads/feature/x", SHA2).await;
    s.push("alice/hello", "refs/heads/dev", SHA3).await;
    s.push("alice/hello", "refs/tags/v1.0", SHA).await;
    s.push("alice/hello", "refs/tags/v1.1", SHA2).await;
    s.push("alice/secret", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo"]).await
}

async fn get_ok(s: &Server, path: &str, token: Option<&str>) -> (reqwest::header::HeaderMap, Value) {
    let (st, h, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    (h, b)
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array().unwrap().iter().map(|b| b[key].as_str().unwrap().to_string()).collect()
}

both!(branches, |s| {
    let t = world(&s).await;
    let api = format!("{}/repos/alice/hello", s.base);
    // Anonymous on a public repository; by name, byte order.
    let (_, list) = get_ok(&s, "/repos/alice/hello/branches", None).await;
    assert_eq!(names(&list, "name"), ["dev", "feature/x", "main"]);
    for b in list.as_array().unwrap() {
        assert_conforms_to_snapshot("ShortBranch", b);
        assert_eq!(b["protected"], false);
        assert!(b.get("protection_url").is_none(), "{b}");
    }
    assert_eq!(list[2]["commit"], json!({"sha": SHA, "url": format!("{api}/commits/{SHA}")}));
    // Pagination with Link.
    let (h, page) = get_ok(&s, "/repos/alice/hello/branches?per_page=2", Some(&t)).await;
    assert_eq!(names(&page, "name"), ["dev", "feature/x"]);
    assert!(header(&h, "link").contains("page=2") && header(&h, "link").contains("rel=\"next\""), "{h:?}");
    let (_, page) = get_ok(&s, "/repos/alice/hello/branches?per_page=2&page=2", Some(&t)).await;
    assert_eq!(names(&page, "name"), ["main"]);
    // One branch, its name with a slash.
    let (_, b) = get_ok(&s, "/repos/alice/hello/branches/feature/x", None).await;
    assert_conforms_to_snapshot("BranchWithProtection", &b);
    assert_eq!(b["name"], "feature/x");
    assert_eq!(b["commit"]["sha"], SHA2);
    assert_conforms_to_snapshot("Commit", &b["commit"]);
    assert_eq!(b["_links"]["self"], format!("{api}/branches/feature%2Fx"));
    assert_eq!(b["_links"]["html"], format!("http://{}/alice/hello/tree/feature/x", s.addr));
    assert_eq!(b["protected"], false);
    assert_eq!(b["protection"]["enabled"], false);
    assert_eq!(b["protection_url"], format!("{api}/branches/feature%2Fx/protection"));
    // An unknown branch.
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/hello/branches/nope", None, None).await;
    assert_error(st, &h, &e, 404, "Branch not found");
    // A ruleset on the default branch protects it; the filter follows.
    let rs = json!({"name": "protect main", "enforcement": "active",
                    "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}}, "rules": [{"type": "deletion"}]});
    let (st, _, body) = parts(s.post("/repos/alice/hello/rulesets", Some(&t), rs).await).await;
    assert_eq!(st, 201, "{body}");
    let (_, list) = get_ok(&s, "/repos/alice/hello/branches", None).await;
    assert_eq!(list[2]["protected"], true);
    assert_eq!(list[2]["protection_url"], format!("{api}/branches/main/protection"));
    let (_, only) = get_ok(&s, "/repos/alice/hello/branches?protected=true", None).await;
    assert_eq!(names(&only, "name"), ["main"]);
    let (_, not) = get_ok(&s, "/repos/alice/hello/branches?protected=false", None).await;
    assert_eq!(names(&not, "name"), ["dev", "feature/x"]);
    assert_eq!(get_ok(&s, "/repos/alice/hello/branches/main", None).await.1["protected"], true);
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/hello/branches?protected=maybe", None, None).await;
    assert_error(st, &h, &e, 422, "Invalid request.\n\nFor 'protected', \"maybe\" is not a boolean.");
});

both!(commits, |s| {
    let t = world(&s).await;
    let api = format!("{}/repos/alice/hello", s.base);
    // A sha, a branch (with a slash), heads/…, a tag: the same commit shape.
    let upper = SHA2[..12].to_uppercase();
    for (r, sha) in [
        (SHA, SHA),
        (&SHA[..7], SHA),
        (upper.as_str(), SHA2),
        ("main", SHA),
        ("feature/x", SHA2),
        ("heads/feature/x", SHA2),
        ("v1.1", SHA2),
        ("tags/v1.0", SHA),
    ] {
        let (_, c) = get_ok(&s, &format!("/repos/alice/hello/commits/{r}"), None).await;
        assert_conforms_to_snapshot("Commit", &c);
        assert_eq!(c["sha"], sha, "{r}");
        assert_eq!(c["url"], format!("{api}/commits/{sha}"));
        assert_eq!(c["commit"]["tree"]["sha"].as_str().unwrap().len(), 40);
        assert!(is_ts(&c["commit"]["author"]["date"]) && is_ts(&c["commit"]["committer"]["date"]), "{c}");
        assert_eq!(c["commit"]["verification"]["verified"], false);
        assert_eq!(c["author"]["login"], "alice");
        assert_eq!(c["parents"], json!([]));
    }
    // A run of a commit gives it its message and people (the run's actor as the author).
    s.admin_post(
        "/repos/alice/hello/runs",
        json!({"workflow": ".workflows/ci.yml", "actor": "bob", "branch": "dev", "message": "Fix the build"}),
    )
    .await;
    let (_, c) = get_ok(&s, "/repos/alice/hello/commits/dev", Some(&t)).await;
    assert_eq!(c["sha"], SHA3);
    assert_eq!(c["commit"]["message"], "Fix the build");
    assert_eq!(c["author"]["login"], "bob");
    assert_eq!(c["commit"]["committer"]["name"], "Service");
    let (_, r) = get_ok(&s, "/repos/alice/hello/actions/runs?branch=dev", Some(&t)).await;
    assert_eq!(r["workflow_runs"][0]["head_commit"]["author"]["name"], c["commit"]["author"]["name"]);
    // Nothing of that name: 422 as hosted.
    // An abbreviated sha shorter than 7 digits, or of no commit, names nothing either.
    for r in ["nope", "0123abc", &SHA[..6], "ffffffffffffffffffffffffffffffffffffffff", "heads/nope"] {
        let (st, h, e) = call(&s, Method::GET, &format!("/repos/alice/hello/commits/{r}"), None, None).await;
        assert_error(st, &h, &e, 422, &format!("No commit found for SHA: {r}"));
    }
    // ETag and 304.
    let (h, _) = get_ok(&s, "/repos/alice/hello/commits/main", Some(&t)).await;
    let etag = header(&h, "etag").to_string();
    assert!(!etag.is_empty());
    let r = s.req(Method::GET, "/repos/alice/hello/commits/main", Some(&t)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    // Pushing moves the branch: a new answer.
    s.push("alice/hello", "refs/heads/main", SHA2).await;
    let r = s.req(Method::GET, "/repos/alice/hello/commits/main", Some(&t)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 200);
});

both!(refs, |s| {
    let t = world(&s).await;
    let api = format!("{}/repos/alice/hello", s.base);
    let (_, r) = get_ok(&s, "/repos/alice/hello/git/ref/heads/feature/x", None).await;
    assert_conforms_to_snapshot("GitRef", &r);
    assert_eq!(r["ref"], "refs/heads/feature/x");
    assert_eq!(r["url"], format!("{api}/git/refs/heads/feature/x"));
    assert_eq!(r["object"], json!({"type": "commit", "sha": SHA2, "url": format!("{api}/git/commits/{SHA2}")}));
    let (_, tag) = get_ok(&s, "/repos/alice/hello/git/ref/tags/v1.0", None).await;
    assert_eq!(tag["object"]["sha"], SHA);
    // Exact names only: a short name, a prefix or an unknown ref is 404.
    for p in ["git/ref/main", "git/ref/heads/mai", "git/ref/heads/nope", "git/ref/tags/v1"] {
        let (st, h, e) = call(&s, Method::GET, &format!("/repos/alice/hello/{p}"), None, None).await;
        assert_error(st, &h, &e, 404, "Not Found");
    }
    // Matching: a text prefix of `refs/<ref>`, by name; none is an empty list.
    let (_, m) = get_ok(&s, "/repos/alice/hello/git/matching-refs/heads", Some(&t)).await;
    assert_eq!(names(&m, "ref"), ["refs/heads/dev", "refs/heads/feature/x", "refs/heads/main"]);
    m.as_array().unwrap().iter().for_each(|r| assert_conforms_to_snapshot("GitRef", r));
    let (_, m) = get_ok(&s, "/repos/alice/hello/git/matching-refs/tags/v1", None).await;
    assert_eq!(names(&m, "ref"), ["refs/tags/v1.0", "refs/tags/v1.1"]);
    let (_, m) = get_ok(&s, "/repos/alice/hello/git/matching-refs/heads/feature/", None).await;
    assert_eq!(names(&m, "ref"), ["refs/heads/feature/x"]);
    let (_, m) = get_ok(&s, "/repos/alice/hello/git/matching-refs/tags/v2", None).await;
    assert_eq!(m, json!([]));
    let (h, m) = get_ok(&s, "/repos/alice/hello/git/matching-refs/heads?per_page=1&page=2", None).await;
    assert_eq!(names(&m, "ref"), ["refs/heads/feature/x"]);
    assert!(header(&h, "link").contains("rel=\"prev\""), "{h:?}");
});

both!(private_and_permissions, |s| {
    let alice = world(&s).await;
    let paths = [
        "/repos/alice/secret/branches",
        "/repos/alice/secret/branches/main",
        "/repos/alice/secret/commits/main",
        "/repos/alice/secret/git/ref/heads/main",
        "/repos/alice/secret/git/matching-refs/heads",
    ];
    let bob = s.classic("bob", &["repo"]).await;
    let no_repo = s.classic("alice", &["read:org"]).await;
    for p in paths {
        for t in [None, Some(bob.as_str()), Some(no_repo.as_str())] {
            let (st, h, e) = call(&s, Method::GET, p, t, None).await;
            assert_error(st, &h, &e, 404, "Not Found");
        }
        get_ok(&s, p, Some(&alice)).await;
    }
    // Fine-grained: Contents read.
    let read =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "alice", "permissions": {"contents": "read"}})).await;
    let other =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "alice", "permissions": {"statuses": "read"}})).await;
    let (_, h, _) = call(&s, Method::GET, paths[0], Some(&read), None).await;
    assert_eq!(header(&h, "x-accepted-service-permissions"), "contents=read");
    for p in paths {
        get_ok(&s, p, Some(&read)).await;
        let (st, h, e) = call(&s, Method::GET, p, Some(&other), None).await;
        assert_error(st, &h, &e, 403, "Resource not accessible by personal access token");
    }
    // An unknown repository.
    let (st, h, e) = call(&s, Method::GET, "/repos/alice/nope/branches", Some(&alice), None).await;
    assert_error(st, &h, &e, 404, "Not Found");
});
