//! Workflows, the jobs of a run (latest attempt or all), one job and its signed log, a run's
//! (empty) artifacts, and environments: the URLs a run advertises answer, shapes against the snapshot, pagination,
//! 304, private repositories and fine-grained permissions.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use crate::workflow_runs::{plan, three_jobs, world};

async fn get_ok(s: &Server, path: &str, token: Option<&str>) -> (reqwest::header::HeaderMap, Value) {
    let (st, h, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    (h, b)
}

/// An absolute URL of a response as a path for the test client.
fn path_of(s: &Server, url: &Value) -> String {
    url.as_str().unwrap().strip_prefix(&s.base).unwrap_or_else(|| panic!("{url} not under {}", s.base)).to_string()
}

both!(workflows, |s| {
    let t = world(&s).await;
    let ci = plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    plan(&s, "acme/widgets", json!({"workflow": ".workflows/release.yml", "name": "Release", "actor": "alice"})).await;
    // The run's workflow_url answers.
    let (_, run) = get_ok(&s, &format!("/repos/acme/widgets/actions/runs/{}", ci["id"]), None).await;
    let (_, w) = get_ok(&s, &path_of(&s, &run["workflow_url"]), None).await;
    assert_conforms_to_snapshot("Workflow", &w);
    assert_eq!(w["id"], run["workflow_id"]);
    assert_eq!(w["name"], "ci");
    assert_eq!(w["path"], ".workflows/ci.yml");
    assert_eq!(w["state"], "active");
    assert_eq!(w["url"], run["workflow_url"]);
    // By file name too; unknown ones are 404.
    let (_, by_name) = get_ok(&s, "/repos/acme/widgets/actions/workflows/ci.yml", Some(&t)).await;
    assert_eq!(by_name["id"], w["id"]);
    for p in ["nope.yml", "999999", "-1"] {
        let (st, h, e) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/workflows/{p}"), None, None).await;
        assert_error(st, &h, &e, 404, "Not Found");
    }
    // The list, oldest first, paginated.
    let (_, list) = get_ok(&s, "/repos/acme/widgets/actions/workflows", None).await;
    assert_conforms_to_snapshot("WorkflowList", &list);
    assert_eq!(list["total_count"], 2);
    let names: Vec<&str> = list["workflows"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ci", "Release"]);
    let (h, page) = get_ok(&s, "/repos/acme/widgets/actions/workflows?per_page=1&page=2", None).await;
    assert_eq!(page["total_count"], 2);
    assert_eq!(page["workflows"][0]["name"], "Release");
    assert!(header(&h, "link").contains("rel=\"first\""), "{h:?}");
    // The workflow's runs through its id.
    let (_, runs) = get_ok(&s, &format!("/repos/acme/widgets/actions/workflows/{}/runs", w["id"]), None).await;
    assert_eq!(runs["total_count"], 1);
    // 304 with the ETag until something is written.
    let (h, _) = get_ok(&s, "/repos/acme/widgets/actions/workflows", Some(&t)).await;
    let etag = header(&h, "etag").to_string();
    let r = s.req(Method::GET, "/repos/acme/widgets/actions/workflows", Some(&t)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    // A repository without workflows.
    let (_, none) = get_ok(&s, "/repos/acme/secret/actions/workflows", Some(&t)).await;
    assert_eq!(none, json!({"total_count": 0, "workflows": []}));
});

both!(jobs_of_runs, |s| {
    let t = world(&s).await;
    let run =
        plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": three_jobs()}))
            .await;
    s.advance(100).await;
    // The run's jobs_url answers: the latest attempt's jobs, in plan order, with steps.
    let (_, r) = get_ok(&s, &format!("/repos/acme/widgets/actions/runs/{}", run["id"]), None).await;
    let jobs_path = path_of(&s, &r["jobs_url"]);
    let (_, jobs) = get_ok(&s, &jobs_path, None).await;
    assert_conforms_to_snapshot("JobList", &jobs);
    assert_eq!(jobs["total_count"], 3);
    let first = &jobs["jobs"][0];
    assert_eq!(first["name"], "build");
    assert_eq!(first["status"], "completed");
    assert_eq!(first["conclusion"], "success");
    assert_eq!(first["run_id"], run["id"]);
    assert_eq!(first["steps"].as_array().unwrap().len(), 3);
    assert_eq!(jobs["jobs"][1]["conclusion"], "failure");
    assert_eq!(jobs["jobs"][2]["conclusion"], "skipped");
    // Re-run the failed jobs: latest shows attempt 2, all shows both attempts.
    let (st, _, b) = call(&s, Method::POST, &format!("{}/rerun-failed-jobs", path_of(&s, &r["url"])), Some(&t), Some(json!({}))).await;
    assert_eq!(st, 201, "{b}");
    s.advance(100).await;
    let (_, latest) = get_ok(&s, &format!("{jobs_path}?filter=latest"), None).await;
    assert_eq!(latest["total_count"], 3);
    assert!(latest["jobs"].as_array().unwrap().iter().all(|j| j["run_attempt"] == 2), "{latest}");
    let (_, all) = get_ok(&s, &format!("{jobs_path}?filter=all"), None).await;
    assert_eq!(all["total_count"], 6);
    let attempts: Vec<i64> = all["jobs"].as_array().unwrap().iter().map(|j| j["run_attempt"].as_i64().unwrap()).collect();
    assert_eq!(attempts, [1, 1, 1, 2, 2, 2]);
    let (h, page) = get_ok(&s, &format!("{jobs_path}?filter=all&per_page=4&page=2"), None).await;
    assert_eq!(page["jobs"].as_array().unwrap().len(), 2);
    assert!(header(&h, "link").contains("rel=\"prev\""), "{h:?}");
    let (st, h, e) = call(&s, Method::GET, &format!("{jobs_path}?filter=some"), None, None).await;
    assert_error(st, &h, &e, 422, "Validation Failed");
    assert_eq!(e["errors"][0]["field"], "filter");
    // An attempt's jobs.
    let (_, a1) = get_ok(&s, &format!("{}/attempts/1/jobs", path_of(&s, &r["url"])), None).await;
    assert_eq!(a1["jobs"][1]["conclusion"], "failure");
    // One job: its url answers with the same job.
    let job = &all["jobs"][1];
    let (_, one) = get_ok(&s, &path_of(&s, &job["url"]), None).await;
    assert_conforms_to_snapshot("Job", &one);
    assert_eq!(one["id"], job["id"]);
    assert_eq!(one["name"], "test");
    assert_eq!(one["run_attempt"], 1);
    for p in [format!("/repos/acme/widgets/actions/runs/{}/jobs", 999999), "/repos/acme/widgets/actions/jobs/999999".into()] {
        let (st, h, e) = call(&s, Method::GET, &p, None, None).await;
        assert_error(st, &h, &e, 404, "Not Found");
    }
    // The run's artifacts_url answers: runs here upload none.
    let (_, arts) = get_ok(&s, &path_of(&s, &r["artifacts_url"]), None).await;
    assert_conforms_to_snapshot("ArtifactList", &arts);
    assert_eq!(arts, json!({"total_count": 0, "artifacts": []}));
    let (st, h, e) = call(&s, Method::GET, "/repos/acme/widgets/actions/runs/999999/artifacts", None, None).await;
    assert_error(st, &h, &e, 404, "Not Found");
    // Another repository's job is not found through this one.
    let (st, _, _) = call(&s, Method::GET, &format!("/repos/acme/secret/actions/jobs/{}", job["id"]), Some(&t), None).await;
    assert_eq!(st, 404);
});

both!(job_logs, |s| {
    let t = world(&s).await;
    let run =
        plan(&s, "acme/widgets", json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0, "jobs": three_jobs()}))
            .await;
    s.advance(100).await;
    let (_, jobs) = get_ok(&s, &format!("/repos/acme/widgets/actions/runs/{}/jobs", run["id"]), None).await;
    let (test, deploy) = (&jobs["jobs"][1], &jobs["jobs"][2]);
    // 302 to a signed plain-text URL that needs no credentials.
    let r = s.get(&format!("/repos/acme/widgets/actions/jobs/{}/logs", test["id"]), None).await;
    assert_eq!(r.status().as_u16(), 302);
    let loc = r.headers()["location"].to_str().unwrap().to_string();
    assert!(loc.starts_with(&format!("http://{}/_joblogs/{}?", s.addr, test["id"])), "{loc}");
    let r = s.client.get(&loc).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    let text = r.text().await.unwrap();
    assert!(text.ends_with(" 1 failed\n") && text.contains("Z 1 failed"), "{text:?}");
    // Tampered: another job, or the run-log signature, is refused; expired after a minute.
    let other = loc.replace(&format!("/_joblogs/{}?", test["id"]), &format!("/_joblogs/{}?", jobs["jobs"][0]["id"]));
    assert_eq!(s.client.get(&other).send().await.unwrap().status().as_u16(), 403);
    let sig = loc.split("signature=").nth(1).unwrap();
    let run_loc = s.get(&format!("/repos/acme/widgets/actions/runs/{}/logs", run["id"]), None).await.headers()["location"]
        .to_str()
        .unwrap()
        .to_string();
    let swapped = format!("{}signature={sig}", run_loc.split("signature=").next().unwrap());
    assert_eq!(s.client.get(&swapped).send().await.unwrap().status().as_u16(), 403);
    s.advance(60).await;
    assert_eq!(s.client.get(&loc).send().await.unwrap().status().as_u16(), 403);
    // A skipped job never ran: no log.
    let (st, h, e) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/jobs/{}/logs", deploy["id"]), Some(&t), None).await;
    assert_error(st, &h, &e, 404, "Not Found");
    // Deleted run logs: job logs go too.
    let (st, _, _) = call(&s, Method::DELETE, &format!("/repos/acme/widgets/actions/runs/{}/logs", run["id"]), Some(&t), None).await;
    assert_eq!(st, 204);
    let (st, h, e) = call(&s, Method::GET, &format!("/repos/acme/widgets/actions/jobs/{}/logs", test["id"]), Some(&t), None).await;
    assert_error(st, &h, &e, 404, "Not Found");
});

both!(environments, |s| {
    let t = world(&s).await;
    let jobs = json!([
        {"name": "deploy", "duration_seconds": 5,
         "environment": {"name": "production", "wait_timer": 3, "reviewers": [{"type": "User", "login": "bob"}, {"type": "Team", "slug": "deployers"}]}},
        {"name": "preview", "duration_seconds": 5, "environment": {"name": "preview"}},
    ]);
    plan(&s, "acme/widgets", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "jobs": jobs})).await;
    let (_, list) = get_ok(&s, "/repos/acme/widgets/environments", None).await;
    assert_conforms_to_snapshot("EnvironmentList", &list);
    assert_eq!(list["total_count"], 2);
    let names: Vec<&str> = list["environments"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["preview", "production"]);
    assert_eq!(list["environments"][0]["protection_rules"], json!([]));
    // One environment: its url answers; rules as hosted.
    let url = list["environments"][1]["url"].clone();
    assert_eq!(url, format!("{}/repos/acme/widgets/environments/production", s.base));
    let (_, e) = get_ok(&s, &path_of(&s, &url), None).await;
    assert_conforms_to_snapshot("Environment", &e);
    assert_eq!(e["name"], "production");
    assert_eq!(e["deployment_branch_policy"], Value::Null);
    let rules = e["protection_rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{e}");
    assert_eq!(rules[0]["type"], "wait_timer");
    assert_eq!(rules[0]["wait_timer"], 3);
    assert_eq!(rules[1]["type"], "required_reviewers");
    assert_eq!(rules[1]["reviewers"][0]["type"], "User");
    assert_simple_user(&s, &rules[1]["reviewers"][0]["reviewer"], "bob", "User");
    assert_eq!(rules[1]["reviewers"][1]["reviewer"]["slug"], "deployers");
    // Names are case-insensitive; unknown ones are 404.
    let (_, same) = get_ok(&s, "/repos/acme/widgets/environments/PRODUCTION", Some(&t)).await;
    assert_eq!(same["id"], e["id"]);
    let (st, h, b) = call(&s, Method::GET, "/repos/acme/widgets/environments/staging", None, None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Pagination.
    let (h, page) = get_ok(&s, "/repos/acme/widgets/environments?per_page=1", None).await;
    assert_eq!(page["total_count"], 2);
    assert_eq!(page["environments"].as_array().unwrap().len(), 1);
    assert!(header(&h, "link").contains("rel=\"next\""), "{h:?}");
});

both!(private_and_permissions, |s| {
    let alice = world(&s).await;
    let jobs = json!([{"name": "deploy", "duration_seconds": 5, "environment": {"name": "production"}}]);
    let run = plan(&s, "acme/secret", json!({"workflow": ".workflows/cd.yml", "actor": "alice", "queue_seconds": 0, "jobs": jobs})).await;
    s.advance(10).await;
    let (_, list) = get_ok(&s, &format!("/repos/acme/secret/actions/runs/{}/jobs", run["id"]), Some(&alice)).await;
    let job = list["jobs"][0]["id"].clone();
    let paths = [
        "/repos/acme/secret/actions/workflows".to_string(),
        format!("/repos/acme/secret/actions/workflows/{}", run["workflow_id"]),
        format!("/repos/acme/secret/actions/runs/{}/jobs", run["id"]),
        format!("/repos/acme/secret/actions/runs/{}/artifacts", run["id"]),
        format!("/repos/acme/secret/actions/jobs/{job}"),
        format!("/repos/acme/secret/actions/jobs/{job}/logs"),
        "/repos/acme/secret/environments".to_string(),
        "/repos/acme/secret/environments/production".to_string(),
    ];
    let carol = s.classic("carol", &["repo"]).await;
    let no_repo = s.classic("alice", &["read:org"]).await;
    let read = s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"actions": "read"}})).await;
    let none =
        s.token(json!({"kind": "fine_grained", "login": "bob", "resource_owner": "acme", "permissions": {"statuses": "read"}})).await;
    for p in &paths {
        for t in [None, Some(carol.as_str()), Some(no_repo.as_str())] {
            let (st, h, e) = call(&s, Method::GET, p, t, None).await;
            assert_error(st, &h, &e, 404, "Not Found");
        }
        for t in [&alice, &read] {
            let (st, _, b) = call(&s, Method::GET, p, Some(t), None).await;
            assert!(st == 200 || st == 302, "{p}: {st} {b}");
        }
        let (st, h, e) = call(&s, Method::GET, p, Some(&none), None).await;
        assert_error(st, &h, &e, 403, "Resource not accessible by personal access token");
    }
    let (_, h, _) = call(&s, Method::GET, &paths[0], Some(&read), None).await;
    assert_eq!(header(&h, "x-accepted-service-permissions"), "actions=read");
});
