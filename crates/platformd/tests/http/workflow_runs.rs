//! Workflow runs and deployment review (document 3): the run lifecycle on the manual clock, every
//! operation and its codes, the list filters (the `created` grammar, the 1,000 cap), re-runs,
//! cancels, signed log downloads, deployment reviews, usage, permissions and the completion
//! activity (webhook and notification).
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

/// alice owns organization acme (bob a member, carol an outsider); `acme/widgets` is public,
/// `acme/secret` private; team `deployers` holds dave. Returns alice's classic `repo` token.
pub async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob", "dave"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Deployers", "members": ["dave"]})).await;
    s.repo("acme", "widgets", false).await;
    s.repo("acme", "secret", true).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;
    s.push("acme/widgets", "refs/heads/dev", SHA2).await;
    s.push("acme/secret", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo"]).await
}

pub async fn plan(s: &Server, repo: &str, body: Value) -> Value {
    s.admin_post(&format!("/repos/{repo}/runs"), body).await
}

/// build (60 s) → test (30 s, fails) → deploy (10 s).
pub fn three_jobs() -> Value {
    json!([
        {"name": "build", "duration_seconds": 60, "log": "compiling\nbuilt"},
        {"name": "test", "needs": ["build"], "duration_seconds": 30, "outcome": "failure", "runs_on": "macos", "log": "1 failed"},
        {"name": "deploy", "needs": ["test"], "duration_seconds": 10},
    ])
}

async fn get_ok(s: &Server, path: &str, token: Option<&str>) -> Value {
    let (st, _, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    b
}

fn run_path(id: &Value) -> String {
    format!("/repos/acme/widgets/actions/runs/{id}")
}

fn job_states(jobs: &Value) -> Vec<(String, String, Value)> {
    jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap().to_string(), j["status"].as_str().unwrap().to_string(), j["conclusion"].clone()))
        .collect()
}

fn st(name: &str, status: &str, conclusion: Value) -> (String, String, Value) {
    (name.to_string(), status.to_string(), conclusion)
}

both!(lifecycle_on_the_platform_clock, |s| {
    let t = world(&s).await;
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": three_jobs()})).await;
    let id = run["id"].clone();
    // A newly queued run.
    assert_eq!(run["status"], "queued");
    assert_eq!(run["conclusion"], Value::Null);
    assert_eq!(run["run_number"], 1);
    assert_eq!(run["run_attempt"], 1);
    assert_eq!(run["previous_attempt_url"], Value::Null);
    let r = get_ok(&s, &run_path(&id), Some(&t)).await;
    assert_conforms_to_snapshot("WorkflowRun", &r);
    assert_eq!(r["name"], "ci");
    assert_eq!(r["path"], ".workflows/ci.yml");
    assert_eq!(r["event"], "push");
    assert_eq!(r["head_branch"], "main");
    assert_eq!(r["head_sha"], SHA);
    assert_eq!(r["head_commit"]["id"], SHA);
    assert!(is_ts(&r["head_commit"]["timestamp"]) && is_ts(&r["created_at"]) && is_ts(&r["run_started_at"]));
    assert_eq!(r["check_suite_id"].as_i64().unwrap() - r["id"].as_i64().unwrap(), 1_000_000_000);
    let api = format!("{}{}", s.base, run_path(&id));
    assert_eq!(r["url"], api.as_str());
    for (k, suffix) in
        [("jobs_url", "/jobs"), ("logs_url", "/logs"), ("cancel_url", "/cancel"), ("rerun_url", "/rerun"), ("artifacts_url", "/artifacts")]
    {
        assert_eq!(r[k], format!("{api}{suffix}"), "{k}");
    }
    assert_eq!(r["workflow_url"], format!("{}/repos/acme/widgets/actions/workflows/{}", s.base, r["workflow_id"]));
    assert_simple_user(&s, &r["actor"], "alice", "User");
    assert_simple_user(&s, &r["triggering_actor"], "alice", "User");
    assert_minimal_repository(&s, &r["repository"], "acme", "widgets", false);
    assert_minimal_repository(&s, &r["head_repository"], "acme", "widgets", false);
    let jobs_path = format!("{}/attempts/1/jobs", run_path(&id));
    let jobs = get_ok(&s, &jobs_path, Some(&t)).await;
    assert_conforms_to_snapshot("JobList", &jobs);
    assert_eq!(jobs["total_count"], 3);
    assert_eq!(
        job_states(&jobs),
        [st("build", "queued", Value::Null), st("test", "queued", Value::Null), st("deploy", "queued", Value::Null)]
    );

    // Queued for 5 seconds, then build runs for 60, test for 30 and fails; deploy is skipped.
    s.advance(4).await;
    assert_eq!(get_ok(&s, &run_path(&id), Some(&t)).await["status"], "queued");
    s.advance(1).await;
    assert_eq!(get_ok(&s, &run_path(&id), Some(&t)).await["status"], "in_progress");
    let jobs = get_ok(&s, &jobs_path, Some(&t)).await;
    assert_eq!(
        job_states(&jobs),
        [st("build", "in_progress", Value::Null), st("test", "queued", Value::Null), st("deploy", "queued", Value::Null)]
    );
    assert_conforms_to_snapshot("JobList", &jobs);
    assert_eq!(jobs["jobs"][0]["steps"][0]["status"], "in_progress");
    assert_eq!(jobs["jobs"][0]["labels"], json!(["ubuntu-latest"]));
    s.advance(60).await;
    let jobs = get_ok(&s, &jobs_path, Some(&t)).await;
    assert_eq!(
        job_states(&jobs),
        [st("build", "completed", json!("success")), st("test", "in_progress", Value::Null), st("deploy", "queued", Value::Null)]
    );
    s.advance(30).await;
    let r = get_ok(&s, &run_path(&id), Some(&t)).await;
    assert_eq!((r["status"].as_str(), r["conclusion"].as_str()), (Some("completed"), Some("failure")));
    let jobs = get_ok(&s, &jobs_path, Some(&t)).await;
    assert_eq!(
        job_states(&jobs),
        [
            st("build", "completed", json!("success")),
            st("test", "completed", json!("failure")),
            st("deploy", "completed", json!("skipped"))
        ]
    );
    assert_conforms_to_snapshot("JobList", &jobs);
    let test = &jobs["jobs"][1];
    // As hosted: the run step fails, set-up and completion succeed.
    let conclusions: Vec<&str> = test["steps"].as_array().unwrap().iter().map(|st| st["conclusion"].as_str().unwrap()).collect();
    assert_eq!(conclusions, ["success", "failure", "success"]);
    assert!(is_ts(&test["completed_at"]));
    assert_eq!(test["run_url"], api.as_str());

    // Usage: a public repository has no billable time; the run took 90 s.
    let (code, h, u) = call(&s, Method::GET, &format!("{}/timing", run_path(&id)), Some(&t), None).await;
    assert_eq!(code, 200);
    assert_eq!(u, json!({"billable": {}, "run_duration_ms": 90_000}));
    assert!(header(&h, "deprecation").ends_with(" GMT") && header(&h, "sunset").ends_with(" GMT"), "{h:?}");

    // Run numbers count per workflow.
    let second = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    assert_eq!(second["run_number"], 2);
    let other = plan(&s, "acme/widgets", json!({"workflow": ".workflows/lint.yml", "actor": "alice", "name": "Lint"})).await;
    assert_eq!(other["run_number"], 1);
    assert_eq!(other["name"], "Lint");
    let list = get_ok(&s, "/repos/acme/widgets/actions/runs", None).await;
    assert_conforms_to_snapshot("WorkflowRunList", &list);
    assert_eq!(list["total_count"], 3);
    let ids: Vec<&Value> = list["workflow_runs"].as_array().unwrap().iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&other["id"], &second["id"], &id], "newest first");
});

both!(usage_of_private_runs_counts_reruns, |s| {
    let t = world(&s).await;
    let jobs = json!([{"name": "linux", "duration_seconds": 120}, {"name": "mac", "duration_seconds": 60, "runs_on": "macos-latest", "outcome": ["failure", "success"]}]);
    let run = plan(&s, "acme/secret", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    let p = format!("/repos/acme/secret/actions/runs/{}", run["id"]);
    s.advance(120).await;
    assert_eq!(get_ok(&s, &p, Some(&t)).await["conclusion"], "failure");
    let (code, _, _) = call(&s, Method::POST, &format!("{p}/rerun-failed-jobs"), Some(&t), None).await;
    assert_eq!(code, 201);
    s.advance(5 + 60).await;
    let r = get_ok(&s, &p, Some(&t)).await;
    assert_eq!((r["conclusion"].as_str(), r["run_attempt"].as_i64()), (Some("success"), Some(2)));
    let u = get_ok(&s, &format!("{p}/timing"), Some(&t)).await;
    assert_conforms_to_snapshot("WorkflowRunUsage", &u);
    assert_eq!(u["billable"]["UBUNTU"]["total_ms"], 120_000);
    assert_eq!(u["billable"]["UBUNTU"]["jobs"], 1, "the linux job was not re-run: {u}");
    assert_eq!(u["billable"]["MACOS"]["total_ms"], 120_000);
    assert_eq!(u["billable"]["MACOS"]["jobs"], 2);
    assert_eq!(u["billable"]["MACOS"]["job_runs"].as_array().unwrap().len(), 2);
    assert!(u["billable"].get("WINDOWS").is_none());
    assert_eq!(u["run_duration_ms"], 120_000 + 60_000);
    // Not for app tokens (noapp).
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"actions": "read"}})).await;
    let (code, h, b) = call(&s, Method::GET, &format!("{p}/timing"), Some(&inst), None).await;
    assert_error(code, &h, &b, 403, "Resource not accessible by integration");
    assert_eq!(get_ok(&s, &p, Some(&inst)).await["id"], run["id"], "installations read runs");
});

both!(advance_moves_one_step, |s| {
    let t = world(&s).await;
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": three_jobs()})).await;
    let adv = format!("/runs/{}/advance", run["id"]);
    assert_eq!(s.admin_post(&adv, json!({})).await["status"], "in_progress");
    s.admin_post(&adv, json!({})).await; // build finishes now
    let jobs = get_ok(&s, &format!("{}/attempts/1/jobs", run_path(&run["id"])), Some(&t)).await;
    assert_eq!(job_states(&jobs)[0], st("build", "completed", json!("success")));
    assert_eq!(job_states(&jobs)[1], st("test", "in_progress", Value::Null));
    let done = s.admin_post(&adv, json!({})).await;
    assert_eq!((done["status"].as_str(), done["conclusion"].as_str()), (Some("completed"), Some("failure")));
    let r = s.client.post(format!("http://{}/_admin{adv}", s.addr)).bearer_auth(ADMIN).json(&json!({})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 409);
    let r = s.client.post(format!("http://{}/_admin/runs/999/advance", s.addr)).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    // A re-run plans its jobs as the workflow did, not as advanced (test ended at once): test
    // runs its 30 s again.
    let p = run_path(&run["id"]);
    let (code, _, b) = call(&s, Method::POST, &format!("{p}/rerun-failed-jobs"), Some(&t), None).await;
    assert_eq!(code, 201, "{b}");
    s.advance(5 + 29).await;
    let jobs = get_ok(&s, &format!("{p}/attempts/2/jobs"), Some(&t)).await;
    assert_eq!(job_states(&jobs)[1], st("test", "in_progress", Value::Null));
    s.advance(1).await;
    let jobs = get_ok(&s, &format!("{p}/attempts/2/jobs"), Some(&t)).await;
    assert_eq!(job_states(&jobs)[1], st("test", "completed", json!("failure")));
    // Plans are validated.
    for bad in [
        json!({"workflow": "ci.txt", "actor": "alice"}),
        json!({"workflow": ".workflows/ci.yml"}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": [{"name": "a", "needs": ["b"]}]}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": [{"name": "a", "needs": ["b"]}, {"name": "b", "needs": ["a"]}]}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": [{"name": "a", "outcome": "great"}]}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": [{"name": "a", "runs_on": "solaris"}]}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "branch": "nope"}),
        json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": [{"name": "a", "environment": {"name": "prod", "reviewers": [{"type": "Team", "slug": "nope"}]}}]}),
    ] {
        let r =
            s.client.post(format!("http://{}/_admin/repos/acme/widgets/runs", s.addr)).bearer_auth(ADMIN).json(&bad).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 422, "{bad}");
    }
});

both!(list_filters, |s| {
    let t = world(&s).await;
    let start = 1_773_100_800; // 2026-03-10T00:00:00Z
    s.admin_post("/clock", json!({"now": start})).await;
    let a = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "pull_requests": [7]}))
        .await;
    s.advance(86_400).await; // 2026-03-11
    let b = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "bob", "branch": "dev", "event": "pull_request", "jobs": [{"name": "x", "outcome": "failure", "duration_seconds": 1}], "queue_seconds": 0})).await;
    s.advance(86_400).await; // 2026-03-12
    let c = plan(&s, "acme/widgets", json!({"workflow": ".workflows/deploy.yml", "actor": "alice", "queue_seconds": 100})).await;
    let ids = |v: &Value| -> Vec<i64> { v["workflow_runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect() };
    let (a, b, c) = (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap(), c["id"].as_i64().unwrap());
    let q = |query: &str| format!("/repos/acme/widgets/actions/runs?{query}");
    for (query, want) in [
        ("", vec![c, b, a]),
        ("actor=bob", vec![b]),
        ("actor=nobody", vec![]),
        ("branch=dev", vec![b]),
        ("branch=main", vec![c, a]),
        ("event=pull_request", vec![b]),
        ("status=completed", vec![b, a]),
        ("status=success", vec![a]),
        ("status=failure", vec![b]),
        ("status=queued", vec![c]),
        ("status=in_progress", vec![]),
        ("branch=main&status=success", vec![a]),
        (&format!("head_sha={SHA2}"), vec![b]),
        (&format!("check_suite_id={}", b + 1_000_000_000), vec![b]),
        ("created=2026-03-11", vec![b]),
        ("created=>=2026-03-11", vec![c, b]),
        ("created=>2026-03-11", vec![c]),
        ("created=<2026-03-11", vec![a]),
        ("created=<=2026-03-11", vec![b, a]),
        ("created=2026-03-10..2026-03-11", vec![b, a]),
        ("created=2026-03-11..*", vec![c, b]),
        ("created=*..2026-03-10", vec![a]),
        ("created=>2026-03-10T00:00:00Z", vec![c, b]),
        ("created=2026-03-10T00:00:00Z..2026-03-10T00:00:00Z", vec![a]),
        ("created=%3E%3D2026-03-12T00:00:00%2B00:00", vec![c]),
    ] {
        let v = get_ok(&s, &q(query), Some(&t)).await;
        assert_eq!(ids(&v), want, "{query}");
        assert_eq!(v["total_count"], want.len(), "{query}");
    }
    // Pull requests, unless excluded.
    let v = get_ok(&s, &q("branch=main"), Some(&t)).await;
    assert_conforms_to_snapshot("WorkflowRunList", &v);
    let pr = &v["workflow_runs"][1]["pull_requests"][0];
    assert_eq!(pr["number"], 7);
    assert_eq!(pr["head"]["ref"], "main");
    assert_eq!(pr["url"], format!("{}/repos/acme/widgets/pulls/7", s.base));
    let v = get_ok(&s, &q("branch=main&exclude_pull_requests=true"), Some(&t)).await;
    assert_eq!(v["workflow_runs"][1]["pull_requests"], json!([]));
    let one = get_ok(&s, &format!("{}?exclude_pull_requests=true", run_path(&json!(a))), Some(&t)).await;
    assert_eq!(one["pull_requests"], json!([]));
    // The workflow list: by id or file name.
    let wid = get_ok(&s, &run_path(&json!(a)), Some(&t)).await["workflow_id"].clone();
    for w in [wid.to_string(), "ci.yml".to_string(), ".workflows%2Fci.yml".to_string()] {
        let v = get_ok(&s, &format!("/repos/acme/widgets/actions/workflows/{w}/runs"), Some(&t)).await;
        assert_eq!(ids(&v), vec![b, a], "{w}");
    }
    let v = get_ok(&s, "/repos/acme/widgets/actions/workflows/deploy.yml/runs?status=queued", Some(&t)).await;
    assert_eq!(ids(&v), vec![c]);
    for w in ["nope.yml", "999999"] {
        let (code, h, body) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/workflows/{w}/runs"), Some(&t), None).await;
        assert_error(code, &h, &body, 404, "Not Found");
    }
    // Malformed filters: 422 with the validation body.
    for (query, field) in [
        ("created=yesterday", "created"),
        ("created=2026-13-01", "created"),
        ("created=>=", "created"),
        ("created=*..*", "created"),
        ("created=2026-03-10...2026-03-11", "created"),
        ("status=done", "status"),
    ] {
        let (code, h, body) = call(&s, Method::GET, &q(query), Some(&t), None).await;
        assert_error(code, &h, &body, 422, "Validation Failed");
        assert_eq!(body["errors"][0]["field"], field, "{query}: {body}");
        assert_eq!(body["errors"][0]["code"], "invalid");
    }
    for query in ["check_suite_id=abc", "exclude_pull_requests=maybe", "per_page=x"] {
        let (code, _, body) = call(&s, Method::GET, &q(query), Some(&t), None).await;
        assert_eq!(code, 422, "{query}");
        assert!(body["message"].as_str().unwrap().starts_with("Invalid request."), "{body}");
    }
    // A queued run becomes in_progress when its time comes, list answers included.
    assert_eq!(ids(&get_ok(&s, &q("status=queued"), Some(&t)).await), vec![c]);
    s.advance(100).await;
    assert_eq!(ids(&get_ok(&s, &q("status=queued"), Some(&t)).await), Vec::<i64>::new());
    assert_eq!(ids(&get_ok(&s, &q("status=in_progress"), Some(&t)).await), vec![c]);
});

both!(filtered_lists_stop_at_1000, |s| {
    let t = world(&s).await;
    let made = s.admin_post("/repos/acme/widgets/run_batches", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "count": 1050, "branches": ["main", "dev"], "conclusions": ["success"]})).await;
    assert_eq!(made["count"], 1050);
    let all = get_ok(&s, "/repos/acme/widgets/actions/runs?per_page=100", Some(&t)).await;
    assert_eq!(all["total_count"], 1050, "unfiltered lists are not capped");
    let (code, h, v) = call(&s, Method::GET, "/repos/acme/widgets/actions/runs?status=success&per_page=100", Some(&t), None).await;
    assert_eq!(code, 200);
    assert_eq!(v["total_count"], 1000);
    assert!(header(&h, "link").contains("page=10>; rel=\"last\""), "{}", header(&h, "link"));
    let last = get_ok(&s, "/repos/acme/widgets/actions/runs?status=success&per_page=100&page=10", Some(&t)).await;
    assert_eq!(last["workflow_runs"].as_array().unwrap().len(), 100);
    let past = get_ok(&s, "/repos/acme/widgets/actions/runs?status=success&per_page=100&page=11", Some(&t)).await;
    assert_eq!(past["workflow_runs"], json!([]));
    let v = get_ok(&s, "/repos/acme/widgets/actions/runs?branch=main&per_page=7&page=2", Some(&t)).await;
    assert_eq!(v["total_count"], 525);
    assert_eq!(v["workflow_runs"].as_array().unwrap().len(), 7);
    assert!(v["workflow_runs"].as_array().unwrap().iter().all(|r| r["head_branch"] == "main"));
    // Newest first: ids descend.
    let ids: Vec<i64> = all["workflow_runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    assert_eq!(all["workflow_runs"][0]["run_number"], 1050);
});

both!(reruns, |s| {
    let t = world(&s).await;
    let jobs = json!([
        {"name": "build", "duration_seconds": 10},
        {"name": "unit", "needs": ["build"], "duration_seconds": 10, "outcome": ["failure", "success"]},
        {"name": "lint", "needs": ["build"], "duration_seconds": 10},
        {"name": "package", "needs": ["unit"], "duration_seconds": 10},
    ]);
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    let p = run_path(&run["id"]);
    // Not completed yet: 403 with a message.
    for what in ["rerun", "rerun-failed-jobs"] {
        let (code, h, b) = call(&s, Method::POST, &format!("{p}/{what}"), Some(&t), None).await;
        assert_eq!(code, 403, "{what}: {b}");
        assert!(b["message"].as_str().unwrap().contains("not completed"), "{b}");
        assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    }
    s.advance(20).await;
    let r = get_ok(&s, &p, Some(&t)).await;
    assert_eq!(r["conclusion"], "failure");
    let first = get_ok(&s, &format!("{p}/attempts/1/jobs"), Some(&t)).await;
    assert_eq!(job_states(&first)[3], st("package", "completed", json!("skipped")));

    // Re-run failed jobs: unit and package again, build and lint keep their results.
    let bob = s.classic("bob", &["repo"]).await;
    let (code, _, b) =
        call(&s, Method::POST, &format!("{p}/rerun-failed-jobs"), Some(&bob), Some(json!({"enable_debug_logging": true}))).await;
    assert_eq!((code, b), (201, json!({})));
    let r = get_ok(&s, &p, Some(&t)).await;
    assert_eq!((r["status"].as_str(), r["conclusion"].clone(), r["run_attempt"].as_i64()), (Some("queued"), Value::Null, Some(2)));
    assert_eq!(r["previous_attempt_url"], format!("{}{p}/attempts/1", s.base));
    assert_simple_user(&s, &r["triggering_actor"], "bob", "User");
    assert_simple_user(&s, &r["actor"], "alice", "User");
    let second = get_ok(&s, &format!("{p}/attempts/2/jobs"), Some(&t)).await;
    assert_eq!(
        job_states(&second),
        [
            st("build", "completed", json!("success")),
            st("unit", "queued", Value::Null),
            st("lint", "completed", json!("success")),
            st("package", "queued", Value::Null)
        ]
    );
    assert_eq!(second["jobs"][0]["run_attempt"], 2);
    assert_ne!(second["jobs"][0]["id"], first["jobs"][0]["id"]);
    // The earlier attempt is kept as it was.
    let a1 = get_ok(&s, &format!("{p}/attempts/1"), Some(&t)).await;
    assert_eq!(
        (a1["run_attempt"].as_i64(), a1["status"].as_str(), a1["conclusion"].as_str()),
        (Some(1), Some("completed"), Some("failure"))
    );
    assert_eq!(a1["previous_attempt_url"], Value::Null);
    assert_simple_user(&s, &a1["triggering_actor"], "alice", "User");
    for n in ["3", "0", "x"] {
        let (code, h, b) = call(&s, Method::GET, &format!("{p}/attempts/{n}"), Some(&t), None).await;
        assert_error(code, &h, &b, 404, "Not Found");
    }
    s.advance(5 + 20).await;
    let r = get_ok(&s, &p, Some(&t)).await;
    assert_eq!(r["conclusion"], "success");
    // Debug logging was recorded for attempt 2: its logs carry debug lines.
    let debug = |files: Vec<(String, String)>| files.iter().any(|(_, text)| text.contains("##[debug]"));
    assert!(debug(fetch_logs(&s, &format!("{p}/attempts/2/logs"), &t).await));
    assert!(!debug(fetch_logs(&s, &format!("{p}/attempts/1/logs"), &t).await));

    // Nothing failed now.
    let (code, _, b) = call(&s, Method::POST, &format!("{p}/rerun-failed-jobs"), Some(&t), None).await;
    assert_eq!(code, 403, "{b}");
    // Re-run one job and its dependents.
    let jobs = get_ok(&s, &format!("{p}/attempts/2/jobs"), Some(&t)).await;
    let unit = jobs["jobs"][1]["id"].clone();
    let (code, _, b) = call(
        &s,
        Method::POST,
        &format!("/repos/acme/widgets/actions/jobs/{unit}/rerun"),
        Some(&t),
        Some(json!({"enable_debugger": false})),
    )
    .await;
    assert_eq!((code, b), (201, json!({})));
    let third = get_ok(&s, &format!("{p}/attempts/3/jobs"), Some(&t)).await;
    assert_eq!(
        job_states(&third),
        [
            st("build", "completed", json!("success")),
            st("unit", "queued", Value::Null),
            st("lint", "completed", json!("success")),
            st("package", "queued", Value::Null)
        ]
    );
    let (code, _, _) = call(&s, Method::POST, &format!("/repos/acme/widgets/actions/jobs/{unit}/rerun"), Some(&t), None).await;
    assert_eq!(code, 403, "the run is not completed");
    for bad in ["999999", "x"] {
        let (code, h, b) = call(&s, Method::POST, &format!("/repos/acme/widgets/actions/jobs/{bad}/rerun"), Some(&t), None).await;
        assert_error(code, &h, &b, 404, "Not Found");
    }
    // Re-run everything.
    s.advance(30).await;
    let (code, _, _) = call(&s, Method::POST, &format!("{p}/rerun"), Some(&t), Some(json!({}))).await;
    assert_eq!(code, 201);
    let fourth = get_ok(&s, &format!("{p}/attempts/4/jobs"), Some(&t)).await;
    assert!(job_states(&fourth).iter().all(|(_, status, _)| status == "queued"));
    // Bodies are validated.
    let (code, _, b) = call(&s, Method::POST, &format!("{p}/rerun"), Some(&t), Some(json!({"enable_debug_logging": "yes"}))).await;
    assert_eq!(code, 422, "{b}");
});

/// The files of a run's log archive, following the redirect to the signed download.
async fn fetch_logs(s: &Server, path: &str, t: &str) -> Vec<(String, String)> {
    let r = s.get(path, Some(t)).await;
    assert_eq!(r.status().as_u16(), 302, "{path}");
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    let r = s.client.get(&loc).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "{loc}");
    unzip(&r.bytes().await.unwrap())
}

/// Opens an archive with a real zip reader (Python's `zipfile`: central directory, offsets,
/// sizes and CRCs checked) and returns its `(name, text)` entries in order.
fn unzip(zip: &[u8]) -> Vec<(String, String)> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let script = "import sys, io, json, zipfile\n\
        z = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))\n\
        assert z.testzip() is None\n\
        json.dump([[i.filename, z.read(i).decode()] for i in z.infolist()], sys.stdout)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().unwrap().write_all(zip).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "zipfile refused the archive: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

both!(cancel_and_force_cancel, |s| {
    let t = world(&s).await;
    for what in ["cancel", "force-cancel"] {
        let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": three_jobs()})).await;
        let p = run_path(&run["id"]);
        s.advance(10).await;
        let (code, _, b) = call(&s, Method::POST, &format!("{p}/{what}"), Some(&t), None).await;
        assert_eq!((code, b), (202, json!({})), "{what}");
        let r = get_ok(&s, &p, Some(&t)).await;
        assert_eq!((r["status"].as_str(), r["conclusion"].as_str()), (Some("completed"), Some("cancelled")));
        let jobs = get_ok(&s, &format!("{p}/attempts/1/jobs"), Some(&t)).await;
        assert!(job_states(&jobs).iter().all(|(_, status, c)| status == "completed" && c == "cancelled"), "{jobs}");
        // Time passing changes nothing now.
        s.advance(600).await;
        assert_eq!(get_ok(&s, &p, Some(&t)).await["conclusion"], "cancelled");
        let (code, h, b) = call(&s, Method::POST, &format!("{p}/{what}"), Some(&t), None).await;
        assert_eq!(code, 409, "{b}");
        assert!(b["documentation_url"].is_string() && header(&h, "content-type").starts_with("application/json"));
    }
    // A queued run can be cancelled too.
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let (code, _, _) = call(&s, Method::POST, &format!("{}/cancel", run_path(&run["id"])), Some(&t), None).await;
    assert_eq!(code, 202);
    assert_eq!(get_ok(&s, &run_path(&run["id"]), Some(&t)).await["conclusion"], "cancelled");
    // Delete a run.
    let (code, _, _) = call(&s, Method::DELETE, &run_path(&run["id"]), Some(&t), None).await;
    assert_eq!(code, 204);
    let (code, h, b) = call(&s, Method::GET, &run_path(&run["id"]), Some(&t), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    let (code, h, b) = call(&s, Method::DELETE, &run_path(&run["id"]), Some(&t), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
});

both!(signed_log_downloads, |s| {
    let t = world(&s).await;
    let run =
        plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": three_jobs()}))
            .await;
    let p = run_path(&run["id"]);
    s.advance(100).await;
    // Public: no credentials needed.
    let r = s.get(&format!("{p}/logs"), None).await;
    assert_eq!(r.status().as_u16(), 302);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert!(loc.starts_with(&format!("http://{}/", s.addr)), "{loc}");
    let r = s.client.get(&loc).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], "application/zip");
    let files = unzip(&r.bytes().await.unwrap());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    // One file per job that ran (deploy was skipped), then a folder per job with a file per step
    // (what `gh run view --log` reads): the job's log is the output of its run step.
    assert_eq!(
        names,
        [
            "0_build.txt",
            "1_test.txt",
            "build/1_Set up job.txt",
            "build/2_Run build.txt",
            "build/3_Complete job.txt",
            "test/1_Set up job.txt",
            "test/2_Run test.txt",
            "test/3_Complete job.txt"
        ]
    );
    assert!(files[0].1.contains("compiling") && files[1].1.contains("1 failed"), "{files:?}");
    assert!(files[3].1.contains("compiling") && files[6].1.contains("1 failed") && !files[2].1.contains("compiling"), "{files:?}");
    // Valid for one minute of the platform clock.
    s.advance(59).await;
    assert_eq!(s.client.get(&loc).send().await.unwrap().status().as_u16(), 200);
    s.advance(1).await;
    let r = s.client.get(&loc).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let b: Value = r.json().await.unwrap();
    assert!(b["message"].as_str().unwrap().contains("expired"));
    // Tampered URLs are refused.
    let fresh = s.get(&format!("{p}/logs"), None).await.headers()["location"].to_str().unwrap().to_string();
    let other_run = fresh.replace(&format!("/_runlogs/{}/", run["id"]), "/_runlogs/999/");
    let later = {
        let (head, exp) = fresh.split_once("expires=").unwrap();
        let (e, rest) = exp.split_once('&').unwrap();
        format!("{head}expires={}&{rest}", e.parse::<i64>().unwrap() + 3600)
    };
    for bad in [other_run, later, format!("{fresh}x"), fresh.split('?').next().unwrap().to_string()] {
        assert_eq!(s.client.get(&bad).send().await.unwrap().status().as_u16(), 403, "{bad}");
    }
    assert_eq!(s.client.get(&fresh).send().await.unwrap().status().as_u16(), 200);
    // Attempt logs; an unknown attempt is 404.
    assert_eq!(fetch_logs(&s, &format!("{p}/attempts/1/logs"), &t).await[0].0, "0_build.txt");
    let (code, h, b) = call(&s, Method::GET, &format!("{p}/attempts/2/logs"), Some(&t), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    // Deleting needs write access and a completed run; then downloads are 404.
    let (code, _, _) = call(&s, Method::DELETE, &format!("{p}/logs"), None, None).await;
    assert_eq!(code, 401);
    let running = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let (code, _, b) = call(&s, Method::DELETE, &format!("{}/logs", run_path(&running["id"])), Some(&t), None).await;
    assert_eq!(code, 403, "{b}");
    let (code, _, _) = call(&s, Method::DELETE, &format!("{p}/logs"), Some(&t), None).await;
    assert_eq!(code, 204);
    for path in [format!("{p}/logs"), format!("{p}/attempts/1/logs")] {
        let (code, h, b) = call(&s, Method::GET, &path, Some(&t), None).await;
        assert_error(code, &h, &b, 404, "Not Found");
    }
    assert_eq!(s.client.get(&fresh).send().await.unwrap().status().as_u16(), 404);
    // Private repositories: invisible without access.
    let private = plan(&s, "acme/secret", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0})).await;
    let pp = format!("/repos/acme/secret/actions/runs/{}/logs", private["id"]);
    let (code, h, b) = call(&s, Method::GET, &pp, None, None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    assert_eq!(s.get(&pp, Some(&t)).await.status().as_u16(), 302);
});

both!(deployment_review, |s| {
    let alice = world(&s).await;
    let jobs = json!([
        {"name": "build", "duration_seconds": 10},
        {"name": "deploy", "needs": ["build"], "duration_seconds": 20,
         "environment": {"name": "production", "wait_timer": 1, "reviewers": [{"type": "User", "login": "bob"}, {"type": "Team", "slug": "deployers"}]}},
        {"name": "notify", "needs": ["deploy"], "duration_seconds": 5},
    ]);
    let run =
        plan(&s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs.clone()}))
            .await;
    let p = run_path(&run["id"]);
    let pending = format!("{p}/pending_deployments");
    assert_eq!(get_ok(&s, &pending, Some(&alice)).await, json!([]), "nothing waits yet");
    s.advance(10).await;
    let r = get_ok(&s, &p, Some(&alice)).await;
    assert_eq!(r["status"], "waiting");
    let list = get_ok(&s, &pending, Some(&alice)).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let pd = &list[0];
    assert_conforms_to_snapshot("PendingDeployment", pd);
    assert_eq!(pd["environment"]["name"], "production");
    assert_eq!(pd["environment"]["url"], format!("{}/repos/acme/widgets/environments/production", s.base));
    assert_eq!(pd["wait_timer"], 1);
    assert!(is_ts(&pd["wait_timer_started_at"]));
    assert_eq!(pd["current_user_can_approve"], false, "alice is not a reviewer");
    assert_eq!(pd["reviewers"][0]["type"], "User");
    assert_simple_user(&s, &pd["reviewers"][0]["reviewer"], "bob", "User");
    assert_eq!(pd["reviewers"][1]["type"], "Team");
    assert_eq!(pd["reviewers"][1]["reviewer"]["slug"], "deployers");
    assert_eq!(pd["reviewers"][1]["reviewer"]["parent"], Value::Null);
    let env_id = pd["environment"]["id"].clone();
    let bob = s.classic("bob", &["repo"]).await;
    let dave = s.classic("dave", &["repo"]).await;
    assert_eq!(get_ok(&s, &pending, Some(&bob)).await[0]["current_user_can_approve"], true);
    assert_eq!(get_ok(&s, &pending, Some(&dave)).await[0]["current_user_can_approve"], true, "through the team");
    assert_eq!(get_ok(&s, &pending, None).await[0]["current_user_can_approve"], false);

    // Reviewer rules.
    let review = |state: &str, ids: Value| json!({"environment_ids": ids, "state": state, "comment": "ship it"});
    let (code, h, b) = call(&s, Method::POST, &pending, Some(&alice), Some(review("approved", json!([env_id])))).await;
    assert_error(code, &h, &b, 422, "Validation Failed");
    assert!(b["errors"][0]["message"].as_str().unwrap().contains("not a required reviewer"));
    let (code, h, b) = call(&s, Method::POST, &pending, Some(&bob), Some(review("approved", json!([123456])))).await;
    assert_error(code, &h, &b, 422, "Validation Failed");
    let (code, _, b) =
        call(&s, Method::POST, &pending, Some(&bob), Some(json!({"environment_ids": [env_id], "state": "maybe", "comment": ""}))).await;
    assert_eq!((code, b["message"].as_str()), (422, Some("Validation Failed")));
    let (code, _, b) = call(&s, Method::POST, &pending, Some(&bob), Some(json!({"environment_ids": [env_id], "state": "approved"}))).await;
    assert_eq!(code, 422, "comment is required: {b}");
    let (code, h, b) = call(&s, Method::POST, &pending, None, Some(review("approved", json!([env_id])))).await;
    assert_error(code, &h, &b, 401, "Requires authentication");
    let fg = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"actions": "write"}})).await;
    let (code, h, b) = call(&s, Method::POST, &pending, Some(&fg), Some(review("approved", json!([env_id])))).await;
    assert_error(code, &h, &b, 403, "Resource not accessible by personal access token");
    let app = s.admin_post("/apps", json!({"name": "CD", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s
        .token(json!({"kind": "installation", "app": "CD", "org": "acme", "permissions": {"deployments": "write", "actions": "write"}}))
        .await;
    let (code, h, b) = call(&s, Method::POST, &pending, Some(&inst), Some(review("approved", json!([env_id])))).await;
    assert_error(code, &h, &b, 403, "Resource not accessible by integration");

    // Approval by a required reviewer with Deployments write: a deployment, then the wait timer.
    let fg =
        s.token(json!({"kind": "fine_grained", "login": "dave", "resource_owner": "acme", "permissions": {"deployments": "write"}})).await;
    let (code, _, b) = call(&s, Method::POST, &pending, Some(&fg), Some(review("approved", json!([env_id])))).await;
    assert_eq!(code, 200, "{b}");
    let d = &b[0];
    assert_conforms_to_snapshot("Deployment", d);
    assert_eq!(d["environment"], "production");
    assert_eq!(d["original_environment"], "production");
    assert_eq!(d["sha"], SHA);
    assert_eq!(d["ref"], "main");
    assert_eq!(d["task"], "deploy");
    assert_eq!(d["production_environment"], true);
    assert_eq!(d["url"], format!("{}/repos/acme/widgets/deployments/{}", s.base, d["id"]));
    assert_simple_user(&s, &d["creator"], "dave", "User");
    assert_eq!(get_ok(&s, &pending, Some(&bob)).await, json!([]));
    let jobs_path = format!("{p}/attempts/1/jobs");
    // The wait timer (1 minute from when the job reached the environment) still holds it.
    assert_eq!(job_states(&get_ok(&s, &jobs_path, Some(&alice)).await)[1].1, "waiting");
    s.advance(60).await;
    assert_eq!(job_states(&get_ok(&s, &jobs_path, Some(&alice)).await)[1].1, "in_progress");
    s.advance(25).await;
    let r = get_ok(&s, &p, Some(&alice)).await;
    assert_eq!((r["status"].as_str(), r["conclusion"].as_str()), (Some("completed"), Some("success")));
    // The review history.
    let h = get_ok(&s, &format!("{p}/approvals"), None).await;
    assert_eq!(h.as_array().unwrap().len(), 1);
    assert_conforms_to_snapshot("EnvironmentApproval", &h[0]);
    assert_eq!(h[0]["state"], "approved");
    assert_eq!(h[0]["comment"], "ship it");
    assert_simple_user(&s, &h[0]["user"], "dave", "User");
    assert_eq!(h[0]["environments"][0]["name"], "production");
    assert!(is_ts(&h[0]["environments"][0]["created_at"]));

    // Rejection fails the gated job; what needs it is skipped.
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    let p = run_path(&run["id"]);
    s.advance(10).await;
    let pending = format!("{p}/pending_deployments");
    let (code, _, b) = call(&s, Method::POST, &pending, Some(&bob), Some(review("rejected", json!([env_id])))).await;
    assert_eq!((code, b), (200, json!([])));
    let r = get_ok(&s, &p, Some(&alice)).await;
    assert_eq!((r["status"].as_str(), r["conclusion"].as_str()), (Some("completed"), Some("failure")));
    let jobs = get_ok(&s, &format!("{p}/attempts/1/jobs"), Some(&alice)).await;
    assert_eq!(job_states(&jobs)[1], st("deploy", "completed", json!("failure")));
    assert_eq!(job_states(&jobs)[2], st("notify", "completed", json!("skipped")));
    let h = get_ok(&s, &format!("{p}/approvals"), Some(&alice)).await;
    assert_eq!(h[0]["state"], "rejected");
    // Nothing waits any more.
    let (code, _, _) = call(&s, Method::POST, &pending, Some(&bob), Some(review("approved", json!([env_id])))).await;
    assert_eq!(code, 422);
});

both!(environments_without_reviewers_wait_for_their_timer, |s| {
    let t = world(&s).await;
    let jobs = json!([{"name": "deploy", "duration_seconds": 10, "environment": {"name": "staging", "wait_timer": 2}}]);
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    let p = run_path(&run["id"]);
    assert_eq!(get_ok(&s, &p, Some(&t)).await["status"], "waiting");
    assert_eq!(get_ok(&s, &format!("{p}/pending_deployments"), Some(&t)).await, json!([]), "approved by the platform");
    s.advance(119).await;
    assert_eq!(get_ok(&s, &p, Some(&t)).await["status"], "waiting");
    s.advance(1).await;
    assert_eq!(get_ok(&s, &p, Some(&t)).await["status"], "in_progress");
    s.advance(10).await;
    assert_eq!(get_ok(&s, &p, Some(&t)).await["conclusion"], "success");
});

both!(fork_runs_wait_for_approval, |s| {
    let t = world(&s).await;
    let run = plan(
        &s,
        "acme/widgets",
        json!({"workflow": ".workflows/ci.yml", "actor": "carol", "event": "pull_request", "fork": true, "queue_seconds": 0}),
    )
    .await;
    assert_eq!((run["status"].as_str(), run["conclusion"].as_str()), (Some("completed"), Some("action_required")));
    let p = run_path(&run["id"]);
    let carol = s.classic("carol", &["repo"]).await;
    let (code, h, b) = call(&s, Method::POST, &format!("{p}/approve"), Some(&carol), None).await;
    assert_error(code, &h, &b, 403, "Must have push access to this repository.");
    let (code, _, b) = call(&s, Method::POST, &format!("{p}/approve"), Some(&t), None).await;
    assert_eq!((code, b), (201, json!({})));
    assert_eq!(get_ok(&s, &p, Some(&t)).await["status"], "in_progress");
    let (code, _, _) = call(&s, Method::POST, &format!("{p}/approve"), Some(&t), None).await;
    assert_eq!(code, 403, "already approved");
    let (code, h, b) = call(&s, Method::POST, "/repos/acme/widgets/actions/runs/424242/approve", Some(&t), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
});

both!(permissions_and_visibility, |s| {
    let alice = world(&s).await;
    let public = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let private = plan(&s, "acme/secret", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let pubp = run_path(&public["id"]);
    let privp = format!("/repos/acme/secret/actions/runs/{}", private["id"]);
    // Public runs: readable by anyone, writable with push access.
    get_ok(&s, &pubp, None).await;
    get_ok(&s, "/repos/acme/widgets/actions/runs", None).await;
    let (code, h, b) = call(&s, Method::POST, &format!("{pubp}/cancel"), None, None).await;
    assert_error(code, &h, &b, 401, "Requires authentication");
    let carol = s.classic("carol", &["repo"]).await;
    let (code, h, b) = call(&s, Method::POST, &format!("{pubp}/cancel"), Some(&carol), None).await;
    assert_error(code, &h, &b, 403, "Must have push access to this repository.");
    // Private runs: 404 to those who may not see them, classic tokens need `repo`.
    for t in [None, Some(carol.clone())] {
        for path in
            [privp.clone(), "/repos/acme/secret/actions/runs".into(), format!("{privp}/attempts/1/jobs"), format!("{privp}/approvals")]
        {
            let (code, h, b) = call(&s, Method::GET, &path, t.as_deref(), None).await;
            assert_error(code, &h, &b, 404, "Not Found");
        }
    }
    let no_repo = s.classic("alice", &["read:org"]).await;
    let (code, h, b) = call(&s, Method::GET, &privp, Some(&no_repo), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    get_ok(&s, &privp, Some(&alice)).await;
    let bob = s.classic("bob", &["repo"]).await;
    get_ok(&s, &privp, Some(&bob)).await;
    // Fine-grained: Actions read for reads, write for writes.
    let read = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"actions": "read"}})).await;
    let none =
        s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"statuses": "read"}})).await;
    let write =
        s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"actions": "write"}})).await;
    get_ok(&s, &privp, Some(&read)).await;
    let (code, h, b) = call(&s, Method::GET, &privp, Some(&none), None).await;
    assert_error(code, &h, &b, 403, "Resource not accessible by personal access token");
    let (code, h, b) = call(&s, Method::POST, &format!("{privp}/cancel"), Some(&read), None).await;
    assert_error(code, &h, &b, 403, "Resource not accessible by personal access token");
    let (code, h, _) = call(&s, Method::POST, &format!("{privp}/cancel"), Some(&write), None).await;
    assert_eq!(code, 202);
    assert_eq!(header(&h, "x-accepted-service-permissions"), "actions=write");
    let (_, h, _) = call(&s, Method::GET, &privp, Some(&alice), None).await;
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo");
    // A workflow token acts on its own repository.
    let wf = s.token(json!({"kind": "workflow", "repo": "acme/widgets"})).await;
    get_ok(&s, &pubp, Some(&wf)).await;
    let (code, h, b) = call(&s, Method::GET, &privp, Some(&wf), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    // Runs of another repository are not found through this one.
    let (code, h, b) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/runs/{}", private["id"]), Some(&alice), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
});

both!(completion_is_platform_activity, |s| {
    let _ = world(&s).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let owner = s.classic("alice", &["admin:org_hook"]).await;
    let (code, _, b) = call(
        &s,
        Method::POST,
        "/orgs/acme/hooks",
        Some(&owner),
        Some(json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["workflow_run"]})),
    )
    .await;
    assert_eq!(code, 201, "{b}");
    recv.wait(1, 10).await; // the ping
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "triggering_actor": "bob", "queue_seconds": 0, "jobs": [{"name": "build", "duration_seconds": 30, "outcome": "failure"}]})).await;
    s.advance(30).await;
    // Nobody reads the run: the platform completes it on its own. Before: requested, in_progress.
    let hits = recv.wait(4, 15).await;
    let actions: Vec<Value> = hits[1..].iter().map(|h| serde_json::from_slice::<Value>(&h.body).unwrap()["action"].clone()).collect();
    assert_eq!(actions, [json!("requested"), json!("in_progress"), json!("completed")]);
    let hit = &hits[3];
    assert_eq!(hit.headers["x-service-event"], "workflow_run");
    let payload: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(payload["action"], "completed");
    assert_eq!(payload["workflow_run"]["id"], run["id"]);
    assert_eq!(payload["workflow_run"]["conclusion"], "failure");
    assert_eq!(payload["workflow"]["path"], ".workflows/ci.yml");
    assert_eq!(payload["repository"]["full_name"], "acme/widgets");
    assert_eq!(payload["sender"]["login"], "bob");
    // The triggering user is notified (ci_activity).
    let bob = s.classic("bob", &["notifications"]).await;
    let mut threads = Value::Null;
    for _ in 0..200 {
        threads = get_ok(&s, "/notifications?all=true", Some(&bob)).await;
        if threads.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(threads[0]["reason"], "ci_activity", "{threads}");
    assert_eq!(threads[0]["subject"]["type"], "CheckSuite");
    assert_eq!(threads[0]["subject"]["url"], format!("{}/repos/acme/widgets/actions/runs/{}", s.base, run["id"]));
    // Completion is recorded once, however many readers settle the run.
    get_ok(&s, &run_path(&run["id"]), None).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 4);
});

/// The deliveries in the order they were queued (the sender sends them concurrently, so they may
/// arrive in another): by their ids in the hook's deliveries list.
async fn queued_order(s: &Server, owner: &str, hits: Vec<crate::hooks::Hit>) -> Vec<crate::hooks::Hit> {
    let hook = hits[0].h("x-service-hook-id");
    let (code, _, list) = call(s, Method::GET, &format!("/orgs/acme/hooks/{hook}/deliveries?per_page=100"), Some(owner), None).await;
    assert_eq!(code, 200, "{list}");
    let id_of = |h: &crate::hooks::Hit| {
        let guid = h.h("x-service-delivery");
        list.as_array().unwrap().iter().find(|d| d["guid"] == guid.as_str()).map(|d| d["id"].as_i64().unwrap()).unwrap_or(i64::MAX)
    };
    let mut hits = hits;
    hits.sort_by_key(|h| id_of(h));
    hits
}

/// The event and action of each delivery (after the ping), `workflow_job`s with their job's name.
fn sequence(hits: &[crate::hooks::Hit]) -> Vec<String> {
    hits.iter()
        .skip(1)
        .map(|h| {
            let p = h.payload();
            match h.h("x-service-event").as_str() {
                "workflow_job" => format!("job {} {}", p["action"].as_str().unwrap(), p["workflow_job"]["name"].as_str().unwrap()),
                e => format!("{e} {}", p["action"].as_str().unwrap()),
            }
        })
        .collect()
}

both!(workflow_jobs_are_sent_in_hosted_order, |s| {
    let _ = world(&s).await;
    let owner = s.classic("alice", &["admin:org_hook"]).await;
    let recv = hook_for(&s, &owner, json!(["workflow_run", "workflow_job"])).await;
    let (run, _, hits) = reviewed_deploy(&s, &recv, [6, 8, 9, 11]).await;
    let hits = queued_order(&s, &owner, hits).await;
    assert_eq!(
        sequence(&hits),
        [
            "workflow_run requested",
            "job queued build",
            "job queued deploy",
            "workflow_run in_progress",
            "job in_progress build",
            "job completed build",
            "job waiting deploy",
            "job in_progress deploy",
            "job completed deploy",
            "workflow_run completed",
        ]
    );
    // Each job as it was at its transition, in the webhook's `workflow_job` form.
    let job = |i: usize| hits[i].payload()["workflow_job"].clone();
    let queued = job(2);
    assert_eq!(
        (queued["status"].clone(), queued["runner_id"].clone(), queued["conclusion"].clone()),
        (json!("queued"), Value::Null, Value::Null)
    );
    assert_eq!(queued["run_id"], run["id"]);
    assert_eq!(queued["workflow_name"], run["name"]);
    let started = job(5);
    assert_eq!((started["status"].clone(), started["completed_at"].clone()), (json!("in_progress"), Value::Null));
    assert!(started["runner_name"].is_string(), "{started}");
    assert_eq!(job(7)["status"], "waiting");
    let done = job(9);
    assert_eq!((done["status"].clone(), done["conclusion"].clone()), (json!("completed"), json!("success")));
    assert!(done["steps"].as_array().unwrap().iter().all(|st| st["status"] == "completed"), "{done}");
    let p = hits[9].payload();
    assert_eq!(p["repository"]["full_name"], "acme/widgets");
    assert_eq!(p["organization"]["login"], "acme");
    assert_eq!(hits[9].h("x-service-event"), "workflow_job");
});

both!(cancelled_jobs_complete_before_their_run, |s| {
    let _ = world(&s).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let owner = s.classic("alice", &["admin:org_hook", "repo"]).await;
    let body = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["workflow_run", "workflow_job"]});
    let (code, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&owner), Some(body)).await;
    assert_eq!(code, 201, "{b}");
    recv.wait(1, 10).await; // the ping
    let jobs = json!([{"name": "build", "duration_seconds": 600}, {"name": "test", "needs": ["build"]}]);
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    recv.wait(6, 10).await;
    let (code, _, b) = call(&s, Method::POST, &format!("{}/cancel", run_path(&run["id"])), Some(&owner), None).await;
    assert_eq!(code, 202, "{b}");
    let hits = queued_order(&s, &owner, recv.wait(9, 15).await).await;
    assert_eq!(sequence(&hits)[5..], ["job completed build", "job completed test", "workflow_run completed"]);
    assert_eq!(hits[6].payload()["workflow_job"]["conclusion"], "cancelled");
    // The queued job never started: no runner.
    assert_eq!(hits[7].payload()["workflow_job"]["runner_id"], Value::Null);
});

both!(cancelled_run_sends_completed, |s| {
    let _ = world(&s).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let owner = s.classic("alice", &["admin:org_hook", "repo"]).await;
    let body = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["workflow_run"]});
    let (code, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&owner), Some(body)).await;
    assert_eq!(code, 201, "{b}");
    recv.wait(1, 10).await; // the ping
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": [{"name": "build", "duration_seconds": 600}]})).await;
    let (code, _, b) = call(&s, Method::POST, &format!("{}/cancel", run_path(&run["id"])), Some(&owner), None).await;
    assert_eq!(code, 202, "{b}");
    // The cancellation completes the run: `workflow_run` `completed`, concluded cancelled, once
    // (after the run's requested and in_progress).
    let hits = recv.wait(4, 15).await;
    let payload: Value = serde_json::from_slice(&hits[3].body).unwrap();
    assert_eq!((payload["action"].clone(), payload["workflow_run"]["id"].clone()), (json!("completed"), run["id"].clone()));
    assert_eq!(payload["workflow_run"]["conclusion"], "cancelled");
    // The workflow in full, as the webhook schema has it.
    let w = &payload["workflow"];
    for k in ["id", "node_id", "name", "path", "state", "created_at", "updated_at", "url", "html_url", "badge_url"] {
        assert!(!w[k].is_null(), "{k} in {w}");
    }
    assert_eq!(payload["repository"]["license"], Value::Null);
    assert!(payload["workflow_run"].get("head_repository_id").is_none(), "{payload}");
    get_ok(&s, &run_path(&run["id"]), None).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 4);
});

both!(attempt_jobs_pagination, |s| {
    let t = world(&s).await;
    let jobs: Vec<Value> = (0..5).map(|i| json!({"name": format!("job{i}"), "duration_seconds": 1})).collect();
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "jobs": jobs})).await;
    let path = format!("{}/attempts/1/jobs", run_path(&run["id"]));
    let (code, h, b) = call(&s, Method::GET, &format!("{path}?per_page=2&page=2"), Some(&t), None).await;
    assert_eq!(code, 200);
    assert_eq!(b["total_count"], 5);
    let names: Vec<&str> = b["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["job2", "job3"]);
    assert!(header(&h, "link").contains("rel=\"next\"") && header(&h, "link").contains("rel=\"prev\""));
    let (code, h, b) = call(&s, Method::GET, &format!("{}/attempts/2/jobs", run_path(&run["id"])), Some(&t), None).await;
    assert_error(code, &h, &b, 404, "Not Found");
    for bad in ["x", "0", "-1"] {
        let (code, h, b) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/runs/{bad}"), Some(&t), None).await;
        assert_error(code, &h, &b, 404, "Not Found");
    }
});

/// A hook for `events`, and its ping received.
async fn hook_for(s: &Server, owner: &str, events: Value) -> crate::hooks::Recv {
    let (url, recv) = crate::hooks::Recv::start().await;
    let body = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": events});
    let (code, _, b) = call(s, Method::POST, "/orgs/acme/hooks", Some(owner), Some(body)).await;
    assert_eq!(code, 201, "{b}");
    recv.wait(1, 10).await;
    recv
}

/// A reviewed deployment, start to end: `build` (10 s), then `deploy` to `production`, which
/// waits for bob's review; bob approves it and it runs 20 s. `waits`: how many deliveries `recv`
/// holds after the plan, after `build`, after the approval and at the end. Returns the run, the
/// deployments the approval made, and every delivery.
async fn reviewed_deploy(s: &Server, recv: &crate::hooks::Recv, waits: [usize; 4]) -> (Value, Value, Vec<crate::hooks::Hit>) {
    let jobs = json!([
        {"name": "build", "duration_seconds": 10},
        {"name": "deploy", "needs": ["build"], "duration_seconds": 20,
         "environment": {"name": "production", "reviewers": [{"type": "User", "login": "bob"}]}},
    ]);
    let run = plan(s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    recv.wait(waits[0], 10).await;
    s.advance(10).await;
    recv.wait(waits[1], 10).await;
    let pending = format!("{}/pending_deployments", run_path(&run["id"]));
    let bob = s.classic("bob", &["repo"]).await;
    let env_id = get_ok(s, &pending, Some(&bob)).await[0]["environment"]["id"].clone();
    let review = json!({"environment_ids": [env_id], "state": "approved", "comment": "ship it"});
    let (code, _, made) = call(s, Method::POST, &pending, Some(&bob), Some(review)).await;
    assert_eq!(code, 200, "{made}");
    recv.wait(waits[2], 10).await;
    s.advance(20).await;
    (run, made, recv.wait(waits[3], 15).await)
}

/// The `deployment_status` deliveries' states, in order.
fn deployment_states(hits: &[crate::hooks::Hit]) -> Vec<String> {
    let statuses = hits.iter().filter(|h| h.h("x-service-event") == "deployment_status");
    statuses.map(|h| h.payload()["deployment_status"]["state"].as_str().unwrap().to_string()).collect()
}

both!(approved_deployments_are_sent_with_their_statuses_in_hosted_order, |s| {
    let _ = world(&s).await;
    let owner = s.classic("alice", &["admin:org_hook"]).await;
    let recv = hook_for(&s, &owner, json!(["workflow_run", "workflow_job", "deployment", "deployment_status"])).await;
    let (run, made, hits) = reviewed_deploy(&s, &recv, [6, 8, 12, 15]).await;
    let hits = queued_order(&s, &owner, hits).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 15);
    let seq: Vec<String> = sequence(&hits)
        .into_iter()
        .zip(&hits[1..])
        .map(|(e, h)| match h.h("x-service-event").as_str() {
            "deployment_status" => format!("deployment_status {}", h.payload()["deployment_status"]["state"].as_str().unwrap()),
            _ => e,
        })
        .collect();
    assert_eq!(
        seq,
        [
            "workflow_run requested",
            "job queued build",
            "job queued deploy",
            "workflow_run in_progress",
            "job in_progress build",
            "job completed build",
            "job waiting deploy",
            "deployment created",
            "deployment_status queued",
            "job in_progress deploy",
            "deployment_status in_progress",
            "job completed deploy",
            "deployment_status success",
            "workflow_run completed",
        ]
    );
    // The deployment is the one the approval answered, with the run and workflow that made it.
    let created = hits[8].payload();
    let d = &created["deployment"];
    assert_eq!(d["id"], made[0]["id"]);
    assert_eq!(
        (d["environment"].clone(), d["sha"].clone(), d["ref"].clone()),
        (json!("production"), made[0]["sha"].clone(), json!("main"))
    );
    assert_eq!(d["creator"]["login"], "bob");
    assert_eq!(created["sender"]["login"], "bob");
    assert_eq!(created["workflow_run"]["id"], run["id"]);
    assert_eq!(created["workflow_run"]["status"], "waiting");
    assert_eq!(created["workflow_run"]["head_commit"], Value::Null);
    assert_eq!(created["workflow_run"]["repository"]["full_name"], "acme/widgets");
    assert_eq!(created["workflow"]["path"], ".workflows/cd.yml");
    assert_eq!(created["repository"]["full_name"], "acme/widgets");
    // Each status its own, of that deployment.
    let statuses: Vec<Value> =
        hits.iter().filter(|h| h.h("x-service-event") == "deployment_status").map(|h| h.payload()["deployment_status"].clone()).collect();
    let ids: std::collections::HashSet<i64> = statuses.iter().map(|x| x["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    let st = &statuses[2];
    assert_eq!(st["deployment_url"], d["url"]);
    assert_eq!(st["url"], format!("{}/statuses/{}", d["url"].as_str().unwrap(), st["id"]));
    assert_eq!((st["environment"].clone(), st["creator"]["login"].clone()), (json!("production"), json!("bob")));
    assert_eq!(st["target_url"], run["html_url"]);
    assert_eq!(st["log_url"], run["html_url"]);
    assert_eq!(hits[13].payload()["deployment"]["id"], d["id"]);
});

both!(a_deployment_held_by_its_wait_timer_waits_and_a_failed_job_fails_it, |s| {
    let _ = world(&s).await;
    let owner = s.classic("alice", &["admin:org_hook"]).await;
    let recv = hook_for(&s, &owner, json!(["deployment", "deployment_status"])).await;
    let env = json!({"name": "staging", "wait_timer": 1, "reviewers": [{"type": "User", "login": "bob"}]});
    let jobs = json!([{"name": "deploy", "duration_seconds": 20, "outcome": "failure", "environment": env}]);
    let run = plan(&s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    let pending = format!("{}/pending_deployments", run_path(&run["id"]));
    let bob = s.classic("bob", &["repo"]).await;
    let env_id = get_ok(&s, &pending, Some(&bob)).await[0]["environment"]["id"].clone();
    let review = json!({"environment_ids": [env_id], "state": "approved", "comment": "ok"});
    let (code, _, b) = call(&s, Method::POST, &pending, Some(&bob), Some(review)).await;
    assert_eq!(code, 200, "{b}");
    s.advance(60).await;
    s.advance(20).await;
    let hits = queued_order(&s, &owner, recv.wait(5, 15).await).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 5);
    assert_eq!(hits[1].h("x-service-event"), "deployment");
    assert_eq!(deployment_states(&hits), ["waiting", "in_progress", "failure"]);
});
