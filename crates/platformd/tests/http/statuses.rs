//! Commit statuses (document 2): create, list, combined status, refs, limits, permissions.
use crate::both;
use crate::harness::*;
use serde_json::{json, Value};

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().cloned().collect();
    k.sort();
    k
}

const STATUS_KEYS: [&str; 10] =
    ["avatar_url", "context", "created_at", "description", "id", "node_id", "state", "target_url", "updated_at", "url"];

/// A Status of api-facts §4.3 (with `creator`) or a SimpleStatus of §4.4 (without).
pub fn assert_status(s: &Server, st: &Value, full_name: &str, sha: &str, with_creator: Option<&str>) {
    let mut want: Vec<String> = STATUS_KEYS.iter().map(|k| k.to_string()).collect();
    if with_creator.is_some() {
        want.push("creator".into());
    }
    want.sort();
    assert_eq!(keys(st), want, "{st}");
    assert_eq!(st["url"], format!("{}/repos/{full_name}/statuses/{sha}", s.base));
    assert!(st["avatar_url"].is_string() || st["avatar_url"].is_null());
    assert!(st["id"].as_i64().is_some_and(|i| i > 0));
    assert!(st["node_id"].as_str().is_some_and(|n| !n.is_empty()));
    assert!(["error", "failure", "pending", "success"].contains(&st["state"].as_str().unwrap()));
    assert!(st["description"].is_string() || st["description"].is_null());
    assert!(st["target_url"].is_string() || st["target_url"].is_null());
    assert!(st["context"].is_string());
    assert!(is_ts(&st["created_at"]) && is_ts(&st["updated_at"]), "{st}");
    if let Some(login) = with_creator {
        assert_simple_user(s, &st["creator"], login, "User");
    }
}

/// alice with public `alice/hello` (main → SHA) and a `repo` token.
pub async fn world(s: &Server) -> String {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    s.push("alice/hello", "refs/heads/main", SHA).await;
    s.classic("alice", &["repo"]).await
}

pub async fn create(s: &Server, full: &str, r: &str, t: &str, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.post(&format!("/repos/{full}/statuses/{r}"), Some(t), body).await).await
}

both!(create_returns_full_status_with_location, |s| {
    let t = world(&s).await;
    let (st, h, b) = create(
        &s,
        "alice/hello",
        SHA,
        &t,
        json!({"state": "success", "target_url": "https://ci.example/1", "description": "Build passed", "context": "ci/build"}),
    )
    .await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(header(&h, "location"), format!("{}/repos/alice/hello/statuses/{SHA}", s.base));
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_status(&s, &b, "alice/hello", SHA, Some("alice"));
    assert_eq!(b["state"], "success");
    assert_eq!(b["target_url"], "https://ci.example/1");
    assert_eq!(b["description"], "Build passed");
    assert_eq!(b["context"], "ci/build");
    assert_eq!(b["created_at"], b["updated_at"]);
    assert_eq!(b["avatar_url"], b["creator"]["avatar_url"]);

    // Defaults: context `default`, nullable fields null.
    let (st, _, b) = create(&s, "alice/hello", "main", &t, json!({"state": "pending"})).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(b["context"], "default");
    assert_eq!(b["description"], Value::Null);
    assert_eq!(b["target_url"], Value::Null);
    assert_status(&s, &b, "alice/hello", SHA, Some("alice"));
    // Explicit nulls are accepted.
    let (st, _, b) =
        create(&s, "alice/hello", SHA, &t, json!({"state": "error", "description": null, "target_url": null, "context": null})).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(b["context"], "default");
});

both!(create_validation, |s| {
    let t = world(&s).await;
    // Every state of the enum is accepted.
    for state in ["error", "failure", "pending", "success"] {
        let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": state})).await;
        assert_eq!(st, 201, "{b}");
        assert_eq!(b["state"], state);
    }
    // Outside the enum.
    let (st, h, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "done"})).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["resource"], "Status");
    assert_eq!(b["errors"][0]["field"], "state");
    assert_eq!(b["documentation_url"], "https://docs.service.example/rest/commits/statuses#create-a-commit-status");
    // Missing state.
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"context": "x"})).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["message"], "Invalid request.\n\n\"state\" wasn't supplied.");
    // Wrong type; the nullable fields say so, and take null as "not given".
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": 5})).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(b["message"], "Invalid request.\n\nFor 'properties/context', 5 is not a string or null.");
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": null, "description": null})).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!((&b["context"], &b["description"]), (&json!("default"), &Value::Null));
    // Description: 140 characters is fine (counted as characters, not bytes), 141 is not.
    let ok = "é".repeat(140);
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "description": ok})).await;
    assert_eq!(st, 201, "{b}");
    let (st, h, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "description": "x".repeat(141)})).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["field"], "description");
    // Not JSON / not an object.
    let r = s.req(reqwest::Method::POST, &format!("/repos/alice/hello/statuses/{SHA}"), Some(&t)).body("{nope").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    let r = s.req(reqwest::Method::POST, &format!("/repos/alice/hello/statuses/{SHA}"), Some(&t)).body("[1]").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Body should be a JSON object");
    // Nothing invalid was stored: 4 + 2 statuses.
    let (_, _, list) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), Some(&t)).await).await;
    assert_eq!(list.as_array().unwrap().len(), 6);
});

both!(create_on_unknown_commit_is_422, |s| {
    let t = world(&s).await;
    // Neither a ref nor a full sha.
    for r in ["0123abc", "no-such-branch"] {
        let (st, h, b) = create(&s, "alice/hello", r, &t, json!({"state": "success"})).await;
        assert_error(st, &h, &b, 422, &format!("No commit found for SHA: {r}"));
    }
    // Unknown repository: 404.
    let (st, h, b) = create(&s, "alice/nope", SHA, &t, json!({"state": "success"})).await;
    assert_error(st, &h, &b, 404, "Not Found");
});

both!(contexts_are_case_insensitive, |s| {
    let t = world(&s).await;
    let (st, _, _) = create(&s, "alice/hello", SHA, &t, json!({"state": "failure", "context": "CI"})).await;
    assert_eq!(st, 201);
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": "ci"})).await;
    assert_eq!(st, 201);
    let latest_id = b["id"].clone();
    let (st, _, c) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/status"), None).await).await;
    assert_eq!(st, 200, "{c}");
    assert_eq!(c["total_count"], 1, "{c}");
    assert_eq!(c["state"], "success");
    assert_eq!(c["statuses"].as_array().unwrap().len(), 1);
    assert_eq!(c["statuses"][0]["context"], "ci");
    assert_eq!(c["statuses"][0]["id"], latest_id);
    // Both records are in the list, newest first.
    let (_, _, l) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), None).await).await;
    let l = l.as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["context"], "ci");
    assert_eq!(l[1]["context"], "CI");
});

both!(list_newest_first_with_creator_and_pagination, |s| {
    let t = world(&s).await;
    s.user("bob").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "pending", "context": format!("c{i}")})).await;
        assert_eq!(st, 201);
        ids.push(b["id"].as_i64().unwrap());
        s.advance(1).await;
    }
    ids.reverse();
    let (st, h, b) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), None).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(header(&h, "link"), "");
    let got: Vec<i64> = b.as_array().unwrap().iter().map(|x| x["id"].as_i64().unwrap()).collect();
    assert_eq!(got, ids);
    for x in b.as_array().unwrap() {
        assert_status(&s, x, "alice/hello", SHA, Some("alice"));
    }
    // Timestamps follow the (manual) clock: newest first means latest created_at first.
    assert!(b[0]["created_at"].as_str() > b[4]["created_at"].as_str());
    // Paginated.
    let (st, h, p1) = parts(s.get("/repos/alice/hello/commits/main/statuses?per_page=2", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(p1.as_array().unwrap().len(), 2);
    assert_eq!(p1[0]["id"], ids[0]);
    let link = header(&h, "link");
    let base = format!("{}/repos/alice/hello/commits/main/statuses", s.base);
    assert_eq!(link, format!("<{base}?per_page=2&page=2>; rel=\"next\", <{base}?per_page=2&page=3>; rel=\"last\""));
    let (_, _, p3) = parts(s.get("/repos/alice/hello/commits/main/statuses?per_page=2&page=3", None).await).await;
    assert_eq!(p3.as_array().unwrap().len(), 1);
    assert_eq!(p3[0]["id"], ids[4]);
    // A sha with no statuses lists nothing.
    s.push("alice/hello", "refs/heads/empty", SHA2).await;
    let (st, _, e) = parts(s.get("/repos/alice/hello/commits/empty/statuses", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(e, json!([]));
});

both!(legacy_list_route_equals_list, |s| {
    let t = world(&s).await;
    for c in ["a", "b", "a"] {
        create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": c})).await;
    }
    let (st, _, modern) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses"), Some(&t)).await).await;
    assert_eq!(st, 200);
    for r in [SHA, "main"] {
        let (st, _, legacy) = parts(s.get(&format!("/repos/alice/hello/statuses/{r}"), Some(&t)).await).await;
        assert_eq!(st, 200, "{legacy}");
        assert_eq!(legacy, modern);
    }
    let (st, _, legacy) = parts(s.get(&format!("/repos/alice/hello/statuses/{SHA}?per_page=1&page=2"), Some(&t)).await).await;
    assert_eq!(st, 200);
    assert_eq!(legacy, json!([modern[1]]));
});

/// Posts the latest state of each context and returns the combined `state`.
async fn combined_after(s: &Server, t: &str, branch: &str, sha: &str, states: &[(&str, &str)]) -> Value {
    s.push("alice/hello", &format!("refs/heads/{branch}"), sha).await;
    for (ctx, state) in states {
        let (st, _, b) = create(s, "alice/hello", sha, t, json!({"state": state, "context": ctx})).await;
        assert_eq!(st, 201, "{b}");
    }
    let (st, _, b) = parts(s.get(&format!("/repos/alice/hello/commits/{branch}/status"), Some(t)).await).await;
    assert_eq!(st, 200, "{b}");
    b
}

both!(combined_state_derivation, |s| {
    let t = world(&s).await;
    #[allow(clippy::type_complexity)]
    let cases: Vec<(Vec<(&str, &str)>, &str, i64)> = vec![
        (vec![], "pending", 0),
        (vec![("a", "pending")], "pending", 1),
        (vec![("a", "success"), ("b", "pending")], "pending", 2),
        (vec![("a", "success")], "success", 1),
        (vec![("a", "success"), ("b", "success"), ("c", "success")], "success", 3),
        (vec![("a", "success"), ("b", "error")], "failure", 2),
        (vec![("a", "failure"), ("b", "pending")], "failure", 2),
        (vec![("a", "error"), ("b", "pending"), ("c", "success")], "failure", 3),
        // Only the latest status of a context counts.
        (vec![("a", "failure"), ("a", "success")], "success", 1),
        (vec![("a", "success"), ("A", "error")], "failure", 1),
        (vec![("a", "pending"), ("a", "success"), ("b", "success")], "success", 2),
    ];
    for (i, (states, want, contexts)) in cases.iter().enumerate() {
        let sha = format!("{:040x}", i + 1);
        let b = combined_after(&s, &t, &format!("case{i}"), &sha, states).await;
        assert_eq!(b["state"], *want, "case {i} {states:?}: {b}");
        assert_eq!(b["total_count"], *contexts, "case {i}: {b}");
        assert_eq!(b["sha"], sha.as_str());
        assert_eq!(b["statuses"].as_array().unwrap().len() as i64, *contexts);
    }
});

both!(combined_status_shape_and_pagination, |s| {
    let t = world(&s).await;
    for c in ["c1", "c2", "c3"] {
        create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": c, "description": c})).await;
    }
    // Replacing c1: still three contexts.
    let (_, _, newest) =
        create(&s, "alice/hello", SHA, &t, json!({"state": "pending", "context": "c1", "target_url": "https://ci/x"})).await;
    let (st, h, b) = parts(s.get("/repos/alice/hello/commits/main/status", None).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(keys(&b), ["commit_url", "repository", "sha", "state", "statuses", "total_count", "url"].map(String::from).to_vec());
    assert_eq!(b["state"], "pending");
    assert_eq!(b["sha"], SHA);
    assert_eq!(b["total_count"], 3);
    let base = format!("{}/repos/alice/hello", s.base);
    assert_eq!(b["commit_url"], format!("{base}/commits/{SHA}"));
    assert_eq!(b["url"], format!("{base}/commits/{SHA}/status"));
    assert_minimal_repository(&s, &b["repository"], "alice", "hello", false);
    let sts = b["statuses"].as_array().unwrap();
    assert_eq!(sts.len(), 3);
    for x in sts {
        assert_status(&s, x, "alice/hello", SHA, None);
        assert!(x.get("creator").is_none());
    }
    // The same records as in the list (without `creator`), the avatar of their creator included.
    let (_, _, list) = parts(s.get("/repos/alice/hello/commits/main/statuses", None).await).await;
    for x in sts {
        let mut full = list.as_array().unwrap().iter().find(|l| l["id"] == x["id"]).unwrap().clone();
        assert!(full["avatar_url"].is_string(), "{full}");
        full.as_object_mut().unwrap().remove("creator");
        assert_eq!(*x, full);
    }
    let c1 = sts.iter().find(|x| x["context"] == "c1").unwrap();
    assert_eq!(c1["id"], newest["id"]);
    assert_eq!(c1["state"], "pending");
    assert_eq!(c1["target_url"], "https://ci/x");
    // Pagination of `statuses`; total_count and state still cover every context.
    let (st, h, p1) = parts(s.get("/repos/alice/hello/commits/main/status?per_page=2", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(p1["statuses"].as_array().unwrap().len(), 2);
    assert_eq!(p1["total_count"], 3);
    assert_eq!(p1["state"], "pending");
    assert!(header(&h, "link").contains("rel=\"next\""), "{h:?}");
    let (_, _, p2) = parts(s.get("/repos/alice/hello/commits/main/status?per_page=2&page=2", None).await).await;
    assert_eq!(p2["statuses"].as_array().unwrap().len(), 1);
    assert_eq!(p2["total_count"], 3);
    let mut all: Vec<Value> =
        p1["statuses"].as_array().unwrap().iter().chain(p2["statuses"].as_array().unwrap()).map(|x| x["id"].clone()).collect();
    all.sort_by_key(|v| v.as_i64());
    let mut want: Vec<Value> = sts.iter().map(|x| x["id"].clone()).collect();
    want.sort_by_key(|v| v.as_i64());
    assert_eq!(all, want);
});

both!(refs_resolve_every_way, |s| {
    let t = world(&s).await;
    s.push("alice/hello", "refs/heads/feature/x", SHA2).await;
    s.push("alice/hello", "refs/tags/v1.0", SHA2).await;
    create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": "main-ci"})).await;
    let (st, _, b) = create(&s, "alice/hello", SHA2, &t, json!({"state": "failure", "context": "fx"})).await;
    assert_eq!(st, 201, "{b}");
    let cases = [
        (SHA.to_string(), SHA, "success"),
        (SHA.to_uppercase(), SHA, "success"),
        ("main".into(), SHA, "success"),
        ("heads/main".into(), SHA, "success"),
        ("tags/v1.0".into(), SHA2, "failure"),
        ("v1.0".into(), SHA2, "failure"),
        ("feature/x".into(), SHA2, "failure"),
        ("heads/feature/x".into(), SHA2, "failure"),
        ("feature%2Fx".into(), SHA2, "failure"),
        ("heads%2Ffeature%2Fx".into(), SHA2, "failure"),
        (SHA2.into(), SHA2, "failure"),
    ];
    for (r, sha, state) in &cases {
        let (st, _, b) = parts(s.get(&format!("/repos/alice/hello/commits/{r}/status"), None).await).await;
        assert_eq!(st, 200, "{r}: {b}");
        assert_eq!(b["sha"], *sha, "{r}");
        assert_eq!(b["state"], *state, "{r}");
        assert_eq!(b["total_count"], 1, "{r}");
        let (st, _, l) = parts(s.get(&format!("/repos/alice/hello/commits/{r}/statuses"), None).await).await;
        assert_eq!(st, 200, "{r}: {l}");
        assert_eq!(l[0]["state"], *state, "{r}");
        assert_eq!(l.as_array().unwrap().len(), 1, "{r}");
    }
    // Unknown refs.
    for r in ["nope", "heads/nope", "tags/nope", "heads/v1.0", "tags/main", "feature/y", "abc123"] {
        let (st, h, b) = parts(s.get(&format!("/repos/alice/hello/commits/{r}/status"), None).await).await;
        assert_error(st, &h, &b, 404, "Not Found");
        let (st, h, b) = parts(s.get(&format!("/repos/alice/hello/commits/{r}/statuses"), None).await).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    // Unknown repository and owner.
    let (st, h, b) = parts(s.get("/repos/alice/nope/commits/main/status", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, h, b) = parts(s.get("/repos/nobody/hello/commits/main/status", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Owner and repository names are case-insensitive; `.git` is accepted.
    let (st, _, b) = parts(s.get("/repos/ALICE/Hello.git/commits/main/status", None).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["repository"]["full_name"], "alice/hello");
});

both!(the_1000_cap_is_per_sha_and_context, |s| {
    let t = world(&s).await;
    // 1000 statuses for `ci`, 8 concurrent writers.
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (client, url, t) = (s.client.clone(), s.url(&format!("/repos/alice/hello/statuses/{SHA}")), t.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..125 {
                // Alternate the spelling: the cap counts the context case-insensitively.
                let ctx = if (w + i) % 2 == 0 { "ci" } else { "CI" };
                let r = client
                    .post(&url)
                    .header("user-agent", UA)
                    .bearer_auth(&t)
                    .json(&json!({"state": "pending", "context": ctx}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 201);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (st, h, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": "Ci"})).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(
        b,
        json!({
            "message": "Validation Failed",
            "errors": "Validation failed: This SHA and context has reached the maximum number of statuses.",
            "documentation_url": "https://docs.service.example/rest/commits/statuses#create-a-commit-status",
            "status": "422",
        })
    );
    // Still capped on a second try; the refused one was not stored.
    let (st, _, _) = create(&s, "alice/hello", "main", &t, json!({"state": "success", "context": "ci"})).await;
    assert_eq!(st, 422);
    let (_, _, c) = parts(s.get("/repos/alice/hello/commits/main/status", None).await).await;
    assert_eq!(c["state"], "pending");
    // Other contexts and other (pushed) shas still work.
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success", "context": "lint"})).await;
    assert_eq!(st, 201, "{b}");
    s.push("alice/hello", "refs/heads/other", SHA2).await;
    let (st, _, b) = create(&s, "alice/hello", SHA2, &t, json!({"state": "success", "context": "ci"})).await;
    assert_eq!(st, 201, "{b}");
    // The list pages through all of them (100 max per page).
    let (_, h, l) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses?per_page=500"), None).await).await;
    assert_eq!(l.as_array().unwrap().len(), 100);
    assert!(header(&h, "link").contains("page=11>; rel=\"last\""), "{}", header(&h, "link"));
    // Exactly 1000 + 1 were stored, even with concurrent writers.
    let (_, _, last) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses?per_page=100&page=11"), None).await).await;
    assert_eq!(last.as_array().unwrap().len(), 1, "more than 1000 statuses were stored for one sha and context");
    assert_eq!(last[0]["context"].as_str().unwrap().to_lowercase(), "ci");
    let (_, _, first) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses?per_page=1"), None).await).await;
    assert_eq!(first[0]["context"], "lint");
});

both!(renamed_repository_redirects, |s| {
    let t = world(&s).await;
    create(&s, "alice/hello", SHA, &t, json!({"state": "success"})).await;
    s.admin_post("/repos/alice/hello/rename", json!({"name": "world"})).await;
    for (path, moved) in [
        ("/repos/alice/hello/commits/main/statuses?per_page=5", "/repos/alice/world/commits/main/statuses?per_page=5"),
        ("/repos/alice/hello/commits/main/status", "/repos/alice/world/commits/main/status"),
        (&format!("/repos/alice/hello/statuses/{SHA}") as &str, &format!("/repos/alice/world/statuses/{SHA}") as &str),
    ] {
        let (st, h, b) = parts(s.get(path, None).await).await;
        assert_eq!(st, 301, "{path}: {b}");
        let want = format!("{}{moved}", s.base);
        assert_eq!(header(&h, "location"), want);
        assert_eq!(b["message"], "Moved Permanently");
        assert_eq!(b["url"], want.as_str());
        // Following it works.
        let (st, _, _) = parts(s.get(&want, None).await).await;
        assert_eq!(st, 200, "{want}");
    }
    // Creating on the new name works; the old name is permanently moved.
    let (st, _, _) = create(&s, "alice/world", SHA, &t, json!({"state": "success"})).await;
    assert_eq!(st, 201);
    let (st, _, l) = parts(s.get("/repos/alice/world/commits/main/statuses", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(l.as_array().unwrap().len(), 2);
    assert_eq!(l[0]["url"], format!("{}/repos/alice/world/statuses/{SHA}", s.base));
    // A renamed private repository does not reveal itself to strangers.
    s.repo("alice", "secret", true).await;
    s.admin_post("/repos/alice/secret/rename", json!({"name": "hidden"})).await;
    let (st, h, b) = parts(s.get("/repos/alice/secret/commits/main/status", None).await).await;
    assert_error(st, &h, &b, 404, "Not Found");
    let (st, _, _) = parts(s.get("/repos/alice/secret/commits/main/status", Some(&t)).await).await;
    assert_eq!(st, 301);
});

both!(public_repository_readable_without_credentials, |s| {
    let t = world(&s).await;
    create(&s, "alice/hello", SHA, &t, json!({"state": "success"})).await;
    for path in ["/repos/alice/hello/commits/main/status", "/repos/alice/hello/commits/main/statuses", "/repos/alice/hello/statuses/main"] {
        let (st, h, b) = parts(s.get(path, None).await).await;
        assert_eq!(st, 200, "{path}: {b}");
        assert_eq!(header(&h, "x-ratelimit-limit"), "60");
    }
    let (st, h, b) = parts(s.post(&format!("/repos/alice/hello/statuses/{SHA}"), None, json!({"state": "success"})).await).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
});

both!(scopes_and_permissions, |s| {
    s.user("alice").await;
    s.repo("alice", "private", true).await;
    s.push("alice/private", "refs/heads/main", SHA).await;
    let path = format!("/repos/alice/private/statuses/{SHA}");
    // Classic `repo` and `repo:status` both create.
    for scopes in [&["repo"][..], &["repo:status"][..], &["repo:status", "read:org"][..]] {
        let t = s.classic("alice", scopes).await;
        let (st, h, b) = parts(s.post(&path, Some(&t), json!({"state": "success", "context": scopes[0]})).await).await;
        assert_eq!(st, 201, "{scopes:?}: {b}");
        assert_eq!(header(&h, "x-oauth-scopes"), scopes.join(", "));
        assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, repo:status");
        assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=write");
        let (st, h, _) = parts(s.get("/repos/alice/private/commits/main/status", Some(&t)).await).await;
        assert_eq!(st, 200);
        assert_eq!(header(&h, "x-accepted-service-permissions"), "statuses=read");
    }
    // Fine-grained, statuses read: reads the private repository, cannot create.
    let read = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "read"}})).await;
    let (st, _, b) = parts(s.get("/repos/alice/private/commits/main/status", Some(&read)).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["total_count"], 2);
    let (st, _, b) = parts(s.get("/repos/alice/private/commits/main/statuses", Some(&read)).await).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b.as_array().unwrap().len(), 3);
    let (st, h, b) = parts(s.post(&path, Some(&read), json!({"state": "success"})).await).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    assert_eq!(b["documentation_url"], "https://docs.service.example/rest/commits/statuses#create-a-commit-status");
    // Fine-grained, statuses write: creates.
    let write = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"statuses": "write"}})).await;
    let (st, _, b) = parts(s.post(&path, Some(&write), json!({"state": "failure"})).await).await;
    assert_eq!(st, 201, "{b}");
    assert_simple_user(&s, &b["creator"], "alice", "User");
    let (_, _, c) = parts(s.get("/repos/alice/private/commits/main/status", Some(&write)).await).await;
    assert_eq!(c["state"], "failure");
    assert_minimal_repository(&s, &c["repository"], "alice", "private", true);
});

both!(the_1000_cap_holds_under_concurrent_creates, |s| {
    let t = world(&s).await;
    let url = s.url(&format!("/repos/alice/hello/statuses/{SHA}"));
    let post = |n: usize| {
        let (client, url, t) = (s.client.clone(), url.clone(), t.clone());
        tokio::spawn(async move {
            let mut codes = Vec::new();
            for _ in 0..n {
                let r = client
                    .post(&url)
                    .header("user-agent", UA)
                    .bearer_auth(&t)
                    .json(&json!({"state": "pending", "context": "race"}))
                    .send()
                    .await
                    .unwrap();
                codes.push(r.status().as_u16());
            }
            codes
        })
    };
    let mut fill = Vec::new();
    for _ in 0..6 {
        fill.push(post(165));
    }
    for f in fill {
        assert!(f.await.unwrap().iter().all(|c| *c == 201));
    }
    // 990 stored; 40 concurrent creates race for the last 10 places.
    let racers: Vec<_> = (0..40).map(|_| post(1)).collect();
    let mut created = 0;
    for r in racers {
        for c in r.await.unwrap() {
            assert!(c == 201 || c == 422, "{c}");
            created += (c == 201) as usize;
        }
    }
    assert_eq!(created, 10, "exactly the remaining 10 places may be taken");
    let (_, _, last) = parts(s.get(&format!("/repos/alice/hello/commits/{SHA}/statuses?per_page=100&page=11"), None).await).await;
    assert_eq!(last, json!([]), "more than 1000 statuses were stored for one sha and context");
});

// A well-formed sha that was never pushed is not a commit of the repository.
both!(create_on_a_never_pushed_full_sha, |s| {
    let t = world(&s).await;
    let (st, h, b) = create(&s, "alice/hello", SHA2, &t, json!({"state": "success"})).await;
    assert_error(st, &h, &b, 422, &format!("No commit found for SHA: {SHA2}"));
    // A commit pushed once stays a commit after its branch moves on.
    s.push("alice/hello", "refs/heads/main", SHA2).await;
    let (st, _, b) = create(&s, "alice/hello", SHA, &t, json!({"state": "success"})).await;
    assert_eq!(st, 201, "{b}");
});
