//! What a real `git push` causes: the `create`, `push` and `delete` webhooks in the hosted shapes
//! (commits with the paths each added, removed and modified, the head commit, `forced`,
//! `compare`, the pusher), and the feed's `CreateEvent`, `PushEvent` and `DeleteEvent` with the
//! Events API payloads.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::git_hosting::{url, Client};
use crate::harness::*;
use crate::hooks::{Hit, Recv};

/// The deliveries of `event` among `hits`, as payloads.
fn of(hits: &[Hit], event: &str) -> Vec<Value> {
    hits.iter().filter(|h| h.h("x-service-event") == event).map(Hit::payload).collect()
}

both!(a_push_sends_its_webhooks_and_feed_events, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", false).await;
    let hooks = s.classic("alice", &["admin:org_hook"]).await;
    let (recv_url, recv) = Recv::start().await;
    let body = json!({"name": "web", "events": ["push", "create", "delete"], "config": {"url": recv_url, "content_type": "json"}});
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&hooks), Some(body)).await;
    assert_eq!(st, 201, "{b}");
    let ping = recv.wait(1, 20).await.len();
    let t = s.classic("alice", &["repo"]).await;
    let c = Client::new(2);
    let work = c.dir("work");
    c.ok(&c.dir(""), &["init", "--quiet", work.to_str().unwrap()]).await;
    c.ok(&work, &["remote", "add", "origin", &url(&s.base, "acme/widgets", Some(&t))]).await;

    // A new branch: `create`, then `push` with `created`.
    let first = c.commit(&work, &[("a.txt", "one\n"), ("gone.txt", "x\n")], "First").await;
    c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
    let hits = recv.wait(ping + 2, 20).await;
    let create = &of(&hits, "create")[0];
    assert_eq!(
        (create["ref"].as_str(), create["ref_type"].as_str(), create["pusher_type"].as_str()),
        (Some("main"), Some("branch"), Some("user"))
    );
    let push = &of(&hits, "push")[0];
    assert_eq!((push["created"].clone(), push["deleted"].clone(), push["forced"].clone()), (json!(true), json!(false), json!(false)));
    assert_eq!((push["ref"].as_str(), push["after"].as_str()), (Some("refs/heads/main"), Some(first.as_str())));
    assert_eq!(push["before"], "0".repeat(40));
    assert_eq!(push["commits"].as_array().unwrap().len(), 1);
    assert_eq!(push["head_commit"]["id"], first);
    assert_eq!(push["head_commit"]["added"], json!(["a.txt", "gone.txt"]));
    assert_eq!(push["pusher"]["name"], "alice");
    assert_eq!(push["repository"]["full_name"], "acme/widgets");
    assert_eq!(push["sender"]["login"], "alice");

    // Two commits on top: each with its own paths, oldest first; the compare names both ends.
    let second = c.commit(&work, &[("a.txt", "two\n"), ("b.txt", "new\n")], "Second").await;
    c.ok(&work, &["rm", "--quiet", "gone.txt"]).await;
    c.ok(&work, &["commit", "--quiet", "-m", "Third\n\nWith a body."]).await;
    let third = c.ok(&work, &["rev-parse", "HEAD"]).await.trim().to_string();
    c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
    let hits = recv.wait(ping + 3, 20).await;
    let push = of(&hits, "push").pop().unwrap();
    assert_eq!(
        (push["created"].clone(), push["forced"].clone(), push["before"].as_str()),
        (json!(false), json!(false), Some(first.as_str()))
    );
    let commits = push["commits"].as_array().unwrap();
    assert_eq!(commits.iter().map(|k| k["id"].as_str().unwrap()).collect::<Vec<_>>(), [second.as_str(), third.as_str()]);
    assert_eq!((commits[0]["added"].clone(), commits[0]["modified"].clone()), (json!(["b.txt"]), json!(["a.txt"])));
    assert_eq!((commits[1]["removed"].clone(), commits[1]["message"].as_str()), (json!(["gone.txt"]), Some("Third\n\nWith a body.")));
    assert_eq!(commits[0]["distinct"], true);
    assert_eq!(commits[0]["author"]["email"], "pusher@example.com");
    assert!(is_timestamp(commits[0]["timestamp"].as_str().unwrap()), "{}", commits[0]["timestamp"]);
    assert!(commits[0]["url"].as_str().unwrap().ends_with(&format!("/acme/widgets/commit/{second}")));
    assert_eq!(push["head_commit"]["id"], third);
    assert!(push["compare"].as_str().unwrap().ends_with(&format!("/acme/widgets/compare/{}...{}", &first[..12], &third[..12])));

    // A forced push.
    c.ok(&work, &["reset", "--quiet", "--hard", &first]).await;
    let rewritten = c.commit(&work, &[("c.txt", "c\n")], "Rewritten").await;
    c.ok(&work, &["push", "--quiet", "--force", "origin", "main"]).await;
    let hits = recv.wait(ping + 4, 20).await;
    let push = of(&hits, "push").pop().unwrap();
    assert_eq!((push["forced"].clone(), push["after"].as_str()), (json!(true), Some(rewritten.as_str())));

    // A branch of commits the repository has: no commits of its own; then deleted.
    c.ok(&work, &["push", "--quiet", "origin", "HEAD:refs/heads/topic"]).await;
    let hits = recv.wait(ping + 6, 20).await;
    let push = of(&hits, "push").pop().unwrap();
    assert_eq!(
        (push["ref"].as_str(), push["commits"].clone(), push["head_commit"]["distinct"].clone()),
        (Some("refs/heads/topic"), json!([]), json!(false))
    );
    c.ok(&work, &["push", "--quiet", "origin", ":refs/heads/topic"]).await;
    let hits = recv.wait(ping + 8, 20).await;
    let delete = of(&hits, "delete").pop().unwrap();
    assert_eq!((delete["ref"].as_str(), delete["ref_type"].as_str()), (Some("topic"), Some("branch")));
    let push = of(&hits, "push").pop().unwrap();
    assert_eq!(
        (push["deleted"].clone(), push["before"].as_str(), push["after"].clone()),
        (json!(true), Some(rewritten.as_str()), json!("0".repeat(40)))
    );
    assert_eq!((push["commits"].clone(), push["head_commit"].clone()), (json!([]), Value::Null));

    // The feed: the Events API payloads, nothing the webhooks alone show.
    let (st, _, feed) = call(&s, Method::GET, "/repos/acme/widgets/events", None, None).await;
    assert_eq!(st, 200, "{feed}");
    let kinds: Vec<&str> = feed.as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[..3], ["DeleteEvent", "PushEvent", "CreateEvent"], "{kinds:?}");
    assert_eq!(feed[0]["payload"], json!({"ref": "topic", "ref_type": "branch", "pusher_type": "user"}));
    let mut keys: Vec<&String> = feed[1]["payload"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["before", "head", "push_id", "ref", "repository_id"]);
    assert_eq!(feed[0]["actor"]["login"], "alice");
});

both!(a_push_starts_the_workflows_whose_on_push_matches, |s| {
    s.user("alice").await;
    s.repo("alice", "app", false).await;
    let t = s.classic("alice", &["repo", "workflow"]).await;
    let c = Client::new(2);
    let work = c.dir("work");
    c.ok(&c.dir(""), &["init", "--quiet", work.to_str().unwrap()]).await;
    c.ok(&work, &["remote", "add", "origin", &url(&s.base, "alice/app", Some(&t))]).await;
    let ci = "name: CI\non:\n  push:\n    branches: [main]\n    paths-ignore: ['docs/**']\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make\n  test:\n    needs: build\n    runs-on: windows-latest\n    env:\n      PLATFORM_OUTCOME: failure\n    steps:\n      - name: Tests\n        run: make test\n";
    let manual = "name: Manual\non: workflow_dispatch\njobs:\n  x:\n    runs-on: ubuntu-latest\n";
    let sha = c
        .commit(
            &work,
            &[(".workflows/ci.yml", ci), (".workflows/manual.yml", manual), ("src/a.rs", "fn main() {}\n")],
            "Add CI\n\nDetails.",
        )
        .await;
    c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
    let (st, _, runs) = call(&s, Method::GET, "/repos/alice/app/actions/runs", None, None).await;
    assert_eq!(st, 200, "{runs}");
    assert_eq!(runs["total_count"], 1, "only the workflow on push: {runs}");
    let run = &runs["workflow_runs"][0];
    assert_eq!((run["name"].as_str(), run["path"].as_str(), run["event"].as_str()), (Some("CI"), Some(".workflows/ci.yml"), Some("push")));
    assert_eq!((run["head_sha"].as_str(), run["head_branch"].as_str()), (Some(sha.as_str()), Some("main")));
    assert_eq!((run["display_title"].as_str(), run["actor"]["login"].as_str()), (Some("Add CI"), Some("alice")));
    let (st, _, jobs) = call(&s, Method::GET, &format!("/repos/alice/app/actions/runs/{}/jobs", run["id"]), None, None).await;
    assert_eq!(st, 200, "{jobs}");
    let names: Vec<&str> = jobs["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["build", "test"]);

    // Filtered out: another branch, and a change of ignored paths only.
    c.ok(&work, &["push", "--quiet", "origin", "HEAD:refs/heads/feature"]).await;
    c.commit(&work, &[("docs/guide.md", "# Guide\n")], "Docs").await;
    c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
    let (_, _, runs) = call(&s, Method::GET, "/repos/alice/app/actions/runs", None, None).await;
    assert_eq!(runs["total_count"], 1, "{runs}");
    // A change that matches runs again, on its own commit.
    let next = c.commit(&work, &[("src/b.rs", "\n")], "Code").await;
    c.ok(&work, &["push", "--quiet", "origin", "main"]).await;
    let (_, _, runs) = call(&s, Method::GET, "/repos/alice/app/actions/runs", None, None).await;
    assert_eq!((runs["total_count"].clone(), runs["workflow_runs"][0]["head_sha"].as_str()), (json!(2), Some(next.as_str())));
});
