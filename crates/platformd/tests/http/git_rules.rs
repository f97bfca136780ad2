//! Rulesets judging real pushes (the `git` CLI over smart HTTP) and control-plane ref pushes:
//! every rule type refuses its violation (the ref rejected, `remote:` lines naming the rule and
//! the ruleset, nothing moved) and lets its bypass actor through; `evaluate` rulesets never block;
//! exempt actors are not judged; a refused push moves no ref, `--atomic` or not (git's
//! pre-receive hook answers for the whole push); every judged change is a rule suite, listed and
//! read at repository and organization level with the hosted filters.
use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::git_hosting::{url, Client};
use crate::harness::*;

async fn json_ok(s: &Server, path: &str, token: Option<&str>) -> Value {
    let (st, _, b) = call(s, Method::GET, path, token, None).await;
    assert_eq!(st, 200, "{path}: {b}");
    b
}

/// alice owns org acme (bob a member); `acme/app` with a first commit; alice's token (`repo`,
/// `workflow`, `admin:org`) and the repository's id.
async fn world(s: &Server) -> (String, i64) {
    for u in ["alice", "bob"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    let t = s.classic("alice", &["repo", "workflow", "admin:org"]).await;
    let (st, _, b) = call(s, Method::POST, "/orgs/acme/repos", Some(&t), Some(json!({"name": "app", "auto_init": true}))).await;
    assert_eq!(st, 201, "{b}");
    (t, b["id"].as_i64().unwrap())
}

async fn head(s: &Server, t: &str, name: &str) -> Option<String> {
    let (st, _, b) = call(s, Method::GET, &format!("/repos/acme/app/git/ref/{name}"), Some(t), None).await;
    (st == 200).then(|| b["object"]["sha"].as_str().unwrap().to_string())
}

async fn ruleset(s: &Server, t: &str, body: Value) -> i64 {
    let (st, _, b) = call(s, Method::POST, "/repos/acme/app/rulesets", Some(t), Some(body)).await;
    assert_eq!(st, 201, "{b}");
    b["id"].as_i64().unwrap()
}

/// What a case pushes: the git arguments after `push`, and what it prepares first (with the
/// ruleset not there yet) and just before the push.
struct Case {
    rule: Value,
    target: &'static str,
    include: &'static str,
    /// The message git must show.
    says: &'static str,
}

fn case(rule: Value, target: &'static str, include: &'static str, says: &'static str) -> Case {
    Case { rule, target, include, says }
}

/// Makes the change case `i` (numbered by its rule) pushes; the refspecs to push.
async fn change(c: &Client, dir: &Path, kind: &str, i: usize) -> Vec<String> {
    let file = |n: &str| format!("f{i}-{n}.txt");
    match kind {
        "creation" => vec![format!("HEAD:refs/heads/new-{i}")],
        "deletion" => {
            c.ok(dir, &["push", "--quiet", "origin", &format!("HEAD:refs/heads/doomed-{i}")]).await;
            vec![format!(":refs/heads/doomed-{i}")]
        }
        "non_fast_forward" => {
            c.commit(dir, &[(&file("a"), "a\n")], "JIRA-1 first").await;
            c.ok(dir, &["push", "--quiet", "origin", "HEAD:main"]).await;
            c.ok(dir, &["reset", "--quiet", "--hard", "HEAD~1"]).await;
            c.commit(dir, &[(&file("b"), "b\n")], "JIRA-2 instead").await;
            vec!["+HEAD:main".into()]
        }
        "required_linear_history" => {
            c.ok(dir, &["checkout", "--quiet", "-b", &format!("side-{i}")]).await;
            c.commit(dir, &[(&file("side"), "s\n")], "side").await;
            c.ok(dir, &["checkout", "--quiet", "main"]).await;
            c.commit(dir, &[(&file("main"), "m\n")], "main").await;
            c.ok(dir, &["merge", "--quiet", "--no-ff", "-m", "Merge side", &format!("side-{i}")]).await;
            vec!["HEAD:main".into()]
        }
        "branch_name_pattern" => vec![format!("HEAD:refs/heads/misc-{i}")],
        "tag_name_pattern" => {
            c.ok(dir, &["tag", &format!("release-{i}")]).await;
            vec![format!("refs/tags/release-{i}")]
        }
        "file_path_restriction" => {
            c.commit(dir, &[(&format!("secrets/key-{i}"), "k\n")], "add a key").await;
            vec!["HEAD:main".into()]
        }
        "max_file_path_length" => {
            c.commit(dir, &[(&format!("a/rather/long/directory/name-{i}.txt"), "x\n")], "deep").await;
            vec!["HEAD:main".into()]
        }
        "file_extension_restriction" => {
            c.commit(dir, &[(&format!("tool-{i}.exe"), "MZ\n")], "a tool").await;
            vec!["HEAD:main".into()]
        }
        "max_file_size" => {
            let big = "0123456789abcdef".repeat(100_000);
            c.commit(dir, &[(&format!("big-{i}.bin"), &big)], "big").await;
            vec!["HEAD:main".into()]
        }
        _ => {
            c.commit(dir, &[(&file("x"), "x\n")], "plain change").await;
            vec!["HEAD:main".into()]
        }
    }
}

both!(every_rule_refuses_its_violation_and_lets_its_bypass_through, |s| {
    let (t, repo_id) = world(&s).await;
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&s.base, "acme/app", Some(&t)), "app").await;
    let pattern = |op: &str, p: &str, negate: bool| json!({"operator": op, "pattern": p, "negate": negate});
    let cases = [
        case(json!({"type": "creation"}), "branch", "refs/heads/new-*", "Cannot create ref due to creations being restricted."),
        case(
            json!({"type": "update", "parameters": {"update_allows_fetch_and_merge": true}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Cannot update this protected ref.",
        ),
        case(json!({"type": "deletion"}), "branch", "refs/heads/doomed-*", "Cannot delete this protected ref."),
        case(json!({"type": "non_fast_forward"}), "branch", "~DEFAULT_BRANCH", "Cannot force-push to this ref."),
        case(json!({"type": "required_linear_history"}), "branch", "~DEFAULT_BRANCH", "This ref must not contain merge commits."),
        case(json!({"type": "required_signatures"}), "branch", "~DEFAULT_BRANCH", "Commits must have verified signatures."),
        case(
            json!({"type": "required_status_checks", "parameters": {"required_status_checks": [{"context": "ci/build"}], "strict_required_status_checks_policy": false}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Required status check \"ci/build\" is expected.",
        ),
        case(
            json!({"type": "commit_message_pattern", "parameters": pattern("starts_with", "JIRA-", false)}),
            "branch",
            "~DEFAULT_BRANCH",
            "Commit message must start with \"JIRA-\".",
        ),
        case(
            json!({"type": "commit_author_email_pattern", "parameters": pattern("ends_with", "@acme.example", false)}),
            "branch",
            "~DEFAULT_BRANCH",
            "Author email must end with \"@acme.example\".",
        ),
        case(
            json!({"type": "committer_email_pattern", "parameters": pattern("contains", "example.com", true)}),
            "branch",
            "~DEFAULT_BRANCH",
            "Committer email must not contain \"example.com\".",
        ),
        case(
            json!({"type": "branch_name_pattern", "parameters": pattern("regex", "^feat/", false)}),
            "branch",
            "~ALL",
            "Branch name must match \"^feat/\".",
        ),
        case(
            json!({"type": "tag_name_pattern", "parameters": pattern("starts_with", "v", false)}),
            "tag",
            "~ALL",
            "Tag name must start with \"v\".",
        ),
        case(
            json!({"type": "pull_request", "parameters": {"dismiss_stale_reviews_on_push": false, "require_code_owner_review": false,
                "require_last_push_approval": false, "required_approving_review_count": 1, "required_review_thread_resolution": false}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Changes must be made through a pull request.",
        ),
        case(
            json!({"type": "merge_queue", "parameters": {"check_response_timeout_minutes": 60, "grouping_strategy": "ALLGREEN",
                "max_entries_to_build": 5, "max_entries_to_merge": 5, "merge_method": "MERGE", "min_entries_to_merge": 1,
                "min_entries_to_merge_wait_minutes": 5}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Changes must be made through the merge queue.",
        ),
        case(
            json!({"type": "required_deployments", "parameters": {"required_deployment_environments": ["production"]}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Changes must be successfully deployed to \"production\" first.",
        ),
        case(
            json!({"type": "workflows", "parameters": {"workflows": [{"path": ".workflows/ci.yml", "repository_id": repo_id}]}}),
            "branch",
            "~DEFAULT_BRANCH",
            "Required workflow \".workflows/ci.yml\" must pass.",
        ),
        case(
            json!({"type": "file_path_restriction", "parameters": {"restricted_file_paths": ["secrets/**"]}}),
            "push",
            "",
            "Cannot change restricted file paths.",
        ),
        case(
            json!({"type": "max_file_path_length", "parameters": {"max_file_path_length": 30}}),
            "push",
            "",
            "File paths must be at most 30 characters long.",
        ),
        case(
            json!({"type": "file_extension_restriction", "parameters": {"restricted_file_extensions": ["*.exe"]}}),
            "push",
            "",
            "Cannot push files with restricted extensions.",
        ),
        case(json!({"type": "max_file_size", "parameters": {"max_file_size": 1}}), "push", "", "Files must be at most 1 MB."),
    ];
    for (i, k) in cases.iter().enumerate() {
        let kind = k.rule["type"].as_str().unwrap().to_string();
        let name = format!("rule {kind}");
        let mut body = json!({"name": name, "target": k.target, "enforcement": "active", "rules": [k.rule]});
        if k.target != "push" {
            body["conditions"] = json!({"ref_name": {"include": [k.include], "exclude": []}});
        }
        // Prepared before the ruleset exists (a branch to delete), then the ruleset.
        let specs = change(&c, &dir, &kind, i).await;
        let id = ruleset(&s, &t, body).await;
        let refs: Vec<String> = specs.iter().map(|r| r.rsplit(':').next().unwrap().to_string()).collect();
        let target_ref = if refs[0].starts_with("refs/") { refs[0].clone() } else { format!("refs/heads/{}", refs[0]) };
        let before = head(&s, &t, target_ref.trim_start_matches("refs/")).await;

        let mut args = vec!["push", "origin"];
        args.extend(specs.iter().map(String::as_str));
        let (ok, out) = c.git(&dir, &args).await;
        assert!(!ok, "{kind}: the push went through:\n{out}");
        assert!(out.contains(&format!("remote: error: PD013: Repository rule violations found for {target_ref}.")), "{kind}:\n{out}");
        assert!(out.contains(&format!("remote: - {}", k.says)), "{kind}:\n{out}");
        assert!(out.contains(&format!("remote:   (rule `{kind}` of ruleset \"{name}\")")), "{kind}:\n{out}");
        assert!(out.contains("[remote rejected]") && out.contains("pre-receive hook declined"), "{kind}:\n{out}");
        assert_eq!(head(&s, &t, target_ref.trim_start_matches("refs/")).await, before, "{kind}: nothing moved");

        // The repository's admins may bypass it: the same push goes through.
        let bypass = json!({"bypass_actors": [{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}]});
        let (st, _, b) = call(&s, Method::PUT, &format!("/repos/acme/app/rulesets/{id}"), Some(&t), Some(bypass)).await;
        assert_eq!(st, 200, "{b}");
        let (ok, out) = c.git(&dir, &args).await;
        assert!(ok, "{kind}: the bypass was refused:\n{out}");
        assert_ne!(head(&s, &t, target_ref.trim_start_matches("refs/")).await, before, "{kind}: moved");
        let (st, _, _) = call(&s, Method::DELETE, &format!("/repos/acme/app/rulesets/{id}"), Some(&t), None).await;
        assert_eq!(st, 204);
        // Back on main for the next case.
        c.ok(&dir, &["fetch", "--quiet", "origin"]).await;
        c.ok(&dir, &["reset", "--quiet", "--hard", "origin/main"]).await;
    }
    // Every judged push is a rule suite: one refused, one bypassed per case.
    let suites = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?per_page=100", Some(&t)).await;
    let results: Vec<&str> = suites.as_array().unwrap().iter().map(|x| x["result"].as_str().unwrap()).collect();
    assert_eq!(results.iter().filter(|r| **r == "fail").count(), cases.len(), "{suites}");
    assert_eq!(results.iter().filter(|r| **r == "bypass").count(), cases.len(), "{suites}");
});

both!(what_the_rules_need_lets_a_push_through, |s| {
    let (t, _) = world(&s).await;
    let c = Client::new(0);
    let dir = c.clone_repo(&url(&s.base, "acme/app", Some(&t)), "app").await;
    ruleset(
        &s,
        &t,
        json!({"name": "green and signed", "enforcement": "active",
            "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
            "rules": [{"type": "required_status_checks", "parameters": {"do_not_enforce_on_create": true,
                "required_status_checks": [{"context": "ci"}], "strict_required_status_checks_policy": false}},
                {"type": "required_signatures"}]}),
    )
    .await;
    // A signed commit (a signature header: what is verified), pushed to a topic branch first and
    // given a `success` status, may then go to main.
    let tree = c.ok(&dir, &["rev-parse", "HEAD^{tree}"]).await.trim().to_string();
    let parent = c.ok(&dir, &["rev-parse", "HEAD"]).await.trim().to_string();
    let raw = format!(
        "tree {tree}\nparent {parent}\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\
         gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nSigned\n"
    );
    std::fs::write(dir.join("raw"), raw).unwrap();
    let signed = c.ok(&dir, &["hash-object", "-t", "commit", "-w", "raw"]).await.trim().to_string();
    let (ok, out) = c.git(&dir, &["push", "origin", &format!("{signed}:refs/heads/main")]).await;
    assert!(!ok && out.contains("Required status check \"ci\" is expected."), "{out}");
    assert!(!out.contains("verified signatures"), "{out}");
    c.ok(&dir, &["push", "--quiet", "origin", &format!("{signed}:refs/heads/topic")]).await;
    let (st, _, b) =
        call(&s, Method::POST, &format!("/repos/acme/app/statuses/{signed}"), Some(&t), Some(json!({"state": "success", "context": "ci"})))
            .await;
    assert_eq!(st, 201, "{b}");
    c.ok(&dir, &["push", "--quiet", "origin", &format!("{signed}:refs/heads/main")]).await;
    assert_eq!(head(&s, &t, "heads/main").await.as_deref(), Some(signed.as_str()));
});

both!(evaluate_never_blocks_exempt_is_not_judged_and_suites_are_listed, |s| {
    let (t, repo_id) = world(&s).await;
    let bob = s.classic("bob", &["repo"]).await;
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&s.base, "acme/app", Some(&bob)), "app").await;
    // An organization ruleset in evaluate mode: judged, recorded, never blocking.
    let org = s
        .admin_post(
            "/orgs/acme/rulesets",
            json!({"name": "org evaluate", "enforcement": "evaluate",
                "conditions": {"ref_name": {"include": ["~ALL"], "exclude": []}, "repository_name": {"include": ["app"], "exclude": []}},
                "rules": [{"type": "commit_message_pattern", "parameters": {"operator": "starts_with", "pattern": "JIRA-"}}]}),
        )
        .await;
    let sha = c.commit(&dir, &[("a.txt", "a\n")], "no ticket").await;
    c.ok(&dir, &["push", "--quiet", "origin", "main"]).await;
    assert_eq!(head(&s, &t, "heads/main").await.as_deref(), Some(sha.as_str()));

    // An active one the organization's admins are exempt from: bob is refused, alice not judged.
    let exempt = s
        .admin_post(
            "/orgs/acme/rulesets",
            json!({"name": "no deletes", "enforcement": "active",
                "bypass_actors": [{"actor_type": "OrganizationAdmin", "bypass_mode": "exempt"}],
                "conditions": {"ref_name": {"include": ["refs/heads/keep-*"], "exclude": []}, "repository_name": {"include": ["*"], "exclude": []}},
                "rules": [{"type": "deletion"}]}),
        )
        .await;
    c.ok(&dir, &["push", "--quiet", "origin", "HEAD:refs/heads/keep-1", "HEAD:refs/heads/other"]).await;
    // Two refs, one violating: the whole push is refused (pre-receive), with `--atomic` or not.
    for atomic in [false, true] {
        let mut args = vec!["push", "origin"];
        if atomic {
            args.push("--atomic");
        }
        args.extend([":refs/heads/keep-1", ":refs/heads/other"]);
        let (ok, out) = c.git(&dir, &args).await;
        assert!(!ok && out.contains("Cannot delete this protected ref."), "{out}");
        assert!(out.contains("ruleset \"no deletes\""), "{out}");
        assert!(head(&s, &t, "heads/keep-1").await.is_some() && head(&s, &t, "heads/other").await.is_some(), "nothing moved");
    }
    let ca = Client::new(2);
    let alice_dir = ca.clone_repo(&url(&s.base, "acme/app", Some(&t)), "alice").await;
    ca.ok(&alice_dir, &["push", "--quiet", "origin", ":refs/heads/keep-1"]).await;
    assert!(head(&s, &t, "heads/keep-1").await.is_none());

    // The control plane is judged as its pusher unless it asks to bypass.
    let r = s
        .client
        .post(format!("http://{}/_admin/repos/acme/app/refs", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"ref": "refs/heads/keep-2", "pusher": "bob"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    s.admin_post("/repos/acme/app/refs", json!({"ref": "refs/heads/keep-3", "pusher": "bob", "bypass_rules": true})).await;
    let rs = s
        .admin_post(
            "/repos/acme/app/rulesets",
            json!({"name": "pr only", "enforcement": "active",
                "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
                "rules": [{"type": "update", "parameters": {"update_allows_fetch_and_merge": false}}]}),
        )
        .await;
    let (st, _, b) = parts(
        s.client
            .post(format!("http://{}/_admin/repos/acme/app/refs", s.addr))
            .bearer_auth(ADMIN)
            .json(&json!({"ref": "refs/heads/main", "pusher": "bob", "message": "JIRA-9 from the control plane"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(st, 422, "{b}");
    assert!(b.to_string().contains("Cannot update this protected ref.") && b.to_string().contains("pr only"), "{b}");
    assert_eq!(head(&s, &t, "heads/main").await.as_deref(), Some(sha.as_str()));
    s.admin_post("/repos/acme/app/refs", json!({"ref": "refs/heads/main", "pusher": "bob", "bypass_rules": true})).await;
    assert_eq!(rs["name"], "pr only");

    // The suites: newest first, filtered as hosted.
    let all = json_ok(&s, "/repos/acme/app/rulesets/rule-suites", Some(&t)).await;
    let all = all.as_array().unwrap();
    assert!(!all.is_empty());
    for x in all {
        assert_eq!(x["repository_id"], repo_id);
        assert_eq!(x["repository_name"], "app");
        assert!(is_ts(&x["pushed_at"]), "{x}");
    }
    let first = all.iter().find(|x| x["after_sha"] == sha.as_str() && x["ref"] == "refs/heads/main").expect("the evaluated push");
    assert_eq!((first["result"].as_str(), first["evaluation_result"].as_str()), (Some("pass"), Some("fail")));
    assert_eq!(first["actor_name"], "bob");
    let one = json_ok(&s, &format!("/repos/acme/app/rulesets/rule-suites/{}", first["id"]), Some(&t)).await;
    assert_eq!(one["id"], first["id"]);
    let ev = &one["rule_evaluations"][0];
    assert_eq!(ev["rule_source"], json!({"type": "ruleset", "id": org["id"], "name": "org evaluate"}));
    assert_eq!((ev["enforcement"].as_str(), ev["result"].as_str()), (Some("evaluate"), Some("fail")));
    assert_eq!(ev["rule_type"], "commit_message_pattern");
    assert!(ev["details"].as_str().unwrap().contains(&sha), "{ev}");

    let failed = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?rule_suite_result=fail", Some(&t)).await;
    assert!(failed.as_array().unwrap().iter().all(|x| x["result"] == "fail") && !failed.as_array().unwrap().is_empty(), "{failed}");
    let keep = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?ref=keep-1", Some(&t)).await;
    assert!(keep.as_array().unwrap().iter().all(|x| x["ref"] == "refs/heads/keep-1") && !keep.as_array().unwrap().is_empty(), "{keep}");
    let by_alice = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?actor_name=alice", Some(&t)).await;
    assert!(by_alice.as_array().unwrap().iter().all(|x| x["actor_name"] == "alice"), "{by_alice}");
    // alice's deletion: judged by the evaluate ruleset only (she is exempt from the other).
    let deleted = by_alice
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["ref"] == "refs/heads/keep-1" && x["after_sha"] == "0000000000000000000000000000000000000000")
        .expect("alice's deletion");
    let d = json_ok(&s, &format!("/repos/acme/app/rulesets/rule-suites/{}", deleted["id"]), Some(&t)).await;
    assert!(d["rule_evaluations"].as_array().unwrap().iter().all(|e| e["rule_source"]["name"] == "org evaluate"), "{d}");
    let paged = s.get("/repos/acme/app/rulesets/rule-suites?per_page=1", Some(&t)).await;
    assert!(header(paged.headers(), "link").contains("rel=\"next\""), "{:?}", paged.headers());
    // Older than the period: gone from the list.
    s.advance(2 * 3600).await;
    let hour = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?time_period=hour", Some(&t)).await;
    assert_eq!(hour, json!([]));
    assert_eq!(json_ok(&s, "/repos/acme/app/rulesets/rule-suites?time_period=day", Some(&t)).await.as_array().unwrap().len(), all.len());
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/app/rulesets/rule-suites?time_period=year", Some(&t), None).await;
    assert_eq!(st, 422);

    // The organization's view.
    let orgs = json_ok(&s, "/orgs/acme/rulesets/rule-suites?repository_name=app", Some(&t)).await;
    assert_eq!(orgs.as_array().unwrap().len(), all.len());
    let o = json_ok(&s, &format!("/orgs/acme/rulesets/rule-suites/{}", first["id"]), Some(&t)).await;
    assert_eq!(o["rule_evaluations"], one["rule_evaluations"]);
    assert_eq!(json_ok(&s, "/orgs/acme/rulesets/rule-suites?repository_name=nope", Some(&t)).await, json!([]));
    // Who may read them: push access (bob) yes, an outsider no; a deleted ruleset says so.
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/app/rulesets/rule-suites", Some(&bob), None).await;
    assert_eq!(st, 200);
    let (st, _, _) = call(&s, Method::GET, "/orgs/acme/rulesets/rule-suites", Some(&bob), None).await;
    assert!(st == 403 || st == 404, "{st}");
    let (st, _, _) = call(&s, Method::GET, "/repos/acme/app/rulesets/rule-suites/999999", Some(&t), None).await;
    assert_eq!(st, 404);
    s.admin(Method::DELETE, &format!("/orgs/acme/rulesets/{}", org["id"]), json!({})).await;
    let gone = json_ok(&s, &format!("/repos/acme/app/rulesets/rule-suites/{}", first["id"]), Some(&t)).await;
    assert_eq!(gone["rule_evaluations"][0]["enforcement"], "deleted ruleset");
    assert_eq!(exempt["enforcement"], "active");
});

both!(bypass_actors_by_user_team_and_mode, |s| {
    let (t, _) = world(&s).await;
    let bob_user = json_ok(&s, "/users/bob", None).await["id"].as_i64().unwrap();
    let team = s.admin_post("/orgs/acme/teams", json!({"name": "releasers", "members": ["bob"]})).await["id"].as_i64().unwrap();
    let bob = s.classic("bob", &["repo"]).await;
    let c = Client::new(2);
    let dir = c.clone_repo(&url(&s.base, "acme/app", Some(&bob)), "app").await;
    let id = ruleset(
        &s,
        &t,
        json!({"name": "frozen", "enforcement": "active",
            "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
            "rules": [{"type": "update", "parameters": {"update_allows_fetch_and_merge": false}}]}),
    )
    .await;
    // (bypass actors, whether bob's direct push goes through)
    let cases = [
        (json!([]), false),
        // Admins only: bob writes.
        (json!([{"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}]), false),
        // Through pull requests only: a push is judged.
        (json!([{"actor_id": bob_user, "actor_type": "User", "bypass_mode": "pull_request"}]), false),
        (json!([{"actor_id": bob_user, "actor_type": "User", "bypass_mode": "always"}]), true),
        (json!([{"actor_id": team, "actor_type": "Team", "bypass_mode": "always"}]), true),
        (json!([{"actor_id": 4, "actor_type": "RepositoryRole", "bypass_mode": "exempt"}]), true),
    ];
    for (i, (actors, passes)) in cases.iter().enumerate() {
        let (st, _, b) =
            call(&s, Method::PUT, &format!("/repos/acme/app/rulesets/{id}"), Some(&t), Some(json!({"bypass_actors": actors}))).await;
        assert_eq!(st, 200, "{b}");
        let sha = c.commit(&dir, &[(&format!("b{i}.txt"), "b\n")], "change").await;
        let (ok, out) = c.git(&dir, &["push", "origin", "HEAD:main"]).await;
        assert_eq!(ok, *passes, "{actors}:\n{out}");
        if !passes {
            assert!(out.contains("Cannot update this protected ref."), "{out}");
            c.ok(&dir, &["reset", "--quiet", "--hard", "HEAD~1"]).await;
        } else {
            assert_eq!(head(&s, &t, "heads/main").await.as_deref(), Some(sha.as_str()));
        }
    }
    // Bypassed suites say so; the exempt push was not judged at all.
    let suites = json_ok(&s, "/repos/acme/app/rulesets/rule-suites?actor_name=bob", Some(&t)).await;
    let results: Vec<&str> = suites.as_array().unwrap().iter().rev().map(|x| x["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["fail", "fail", "fail", "bypass", "bypass"], "{suites}");
});
