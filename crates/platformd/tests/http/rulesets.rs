//! Repository rulesets and rules for a branch (document 2): create with every validation rule,
//! get, update, delete, history and versions, lists with parents and targets, organization
//! rulesets from the control plane, branch matching, and the permission matrix.
use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;
use reqwest::Method;
use serde_json::{json, Value};

const SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";

/// alice owns org `acme` (bob is a member), carol is an outsider with a personal repository.
/// Repositories: `acme/widgets` (public), `acme/secret` (private), `acme/gadgets` (public),
/// `carol/notes` (public). Returns alice's `repo` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    for (o, n, p) in [("acme", "widgets", false), ("acme", "secret", true), ("acme", "gadgets", false), ("carol", "notes", false)] {
        s.repo(o, n, p).await;
        s.push(&format!("{o}/{n}"), "refs/heads/main", SHA).await;
    }
    s.classic("alice", &["repo"]).await
}

fn base() -> Value {
    json!({"name": "protect main", "enforcement": "active", "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
           "rules": [{"type": "deletion"}, {"type": "non_fast_forward"}]})
}

async fn create(s: &Server, repo: &str, token: Option<&str>, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.post(&format!("/repos/{repo}/rulesets"), token, body).await).await
}

async fn created(s: &Server, repo: &str, token: &str, body: Value) -> Value {
    let (st, _, b) = create(s, repo, Some(token), body).await;
    assert_eq!(st, 201, "{b}");
    b
}

async fn put(s: &Server, path: &str, token: Option<&str>, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.req(Method::PUT, path, token).json(&body).send().await.unwrap()).await
}

async fn get(s: &Server, path: &str, token: Option<&str>) -> (u16, reqwest::header::HeaderMap, Value) {
    parts(s.get(path, token).await).await
}

/// Rule types of a branch's rules, in order.
async fn rule_types(s: &Server, repo: &str, branch: &str, token: Option<&str>) -> Vec<String> {
    let (st, _, b) = get(s, &format!("/repos/{repo}/rules/branches/{branch}"), token).await;
    assert_eq!(st, 200, "{b}");
    b.as_array().unwrap().iter().for_each(|r| assert_conforms_to_snapshot("BranchRule", r));
    b.as_array().unwrap().iter().map(|r| r["type"].as_str().unwrap().to_string()).collect()
}

fn assert_summary(s: &Server, v: &Value, repo: &str, kind: &str) {
    assert_conforms_to_snapshot("RulesetSummary", v);
    assert!(v.get("target").is_none() && v.get("rules").is_none(), "a summary: {v}");
    let id = v["id"].as_i64().unwrap();
    assert_eq!(v["source_type"], kind);
    if kind == "Repository" {
        assert_eq!(v["source"], repo);
        assert_eq!(v["_links"]["self"]["href"], format!("{}/repos/{repo}/rulesets/{id}", s.base));
        assert!(v["_links"]["html"]["href"].as_str().unwrap().ends_with(&format!("/{repo}/rules/{id}")));
    } else {
        let org = repo.split('/').next().unwrap();
        assert_eq!(v["source"], org);
        assert_eq!(v["_links"]["self"]["href"], format!("{}/orgs/{org}/rulesets/{id}", s.base));
    }
    assert!(v["node_id"].as_str().is_some_and(|n| !n.is_empty()));
    assert!(is_ts(&v["created_at"]) && is_ts(&v["updated_at"]), "{v}");
}

both!(create_returns_the_full_normalized_ruleset, |s| {
    let t = world(&s).await;
    let mut body = base();
    body["bypass_actors"] = json!([{"actor_type": "OrganizationAdmin", "actor_id": 99}, {"actor_type": "DeployKey"},
                                   {"actor_type": "RepositoryRole", "actor_id": 4, "bypass_mode": "pull_request"}]);
    body["rules"] = json!([{"type": "update", "parameters": {"update_allows_fetch_and_merge": true, "unknown": 1}}, {"type": "creation", "parameters": {}}]);
    let (st, h, b) = create(&s, "acme/widgets", Some(&t), body).await;
    assert_eq!(st, 201, "{b}");
    assert_conforms_to_snapshot("Ruleset", &b);
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    assert_eq!(b["name"], "protect main");
    assert_eq!(b["target"], "branch", "target defaults to branch");
    assert_eq!(b["enforcement"], "active");
    assert_eq!(b["source_type"], "Repository");
    assert_eq!(b["source"], "acme/widgets");
    assert_eq!(
        b["bypass_actors"],
        json!([
        {"actor_id": 1, "actor_type": "OrganizationAdmin", "bypass_mode": "always"},
        {"actor_id": null, "actor_type": "DeployKey", "bypass_mode": "always"},
        {"actor_id": 4, "actor_type": "RepositoryRole", "bypass_mode": "pull_request"}])
    );
    assert_eq!(b["conditions"], json!({"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}}));
    assert_eq!(b["rules"], json!([{"type": "update", "parameters": {"update_allows_fetch_and_merge": true}}, {"type": "creation"}]));
    assert_eq!(b["current_user_can_bypass"], "always", "alice owns the organization");
    let id = b["id"].as_i64().unwrap();
    assert_eq!(b["_links"]["self"]["href"], format!("{}/repos/acme/widgets/rulesets/{id}", s.base));
    assert!(is_ts(&b["created_at"]) && b["created_at"] == b["updated_at"]);
    // Without conditions, conditions are null.
    let b = created(&s, "acme/widgets", &t, json!({"name": "bare", "enforcement": "disabled", "target": "push"})).await;
    assert!(b["conditions"].is_null(), "{b}");
    assert_eq!(b["rules"], json!([]));
    assert_eq!(b["bypass_actors"], json!([]));
    assert_eq!(b["target"], "push");
});

both!(every_rule_type_with_its_parameters_is_accepted, |s| {
    let t = world(&s).await;
    let pattern = json!({"name": "p", "negate": true, "operator": "regex", "pattern": "^(fix|feat): .+"});
    let rules = json!([
        {"type": "creation"}, {"type": "deletion"}, {"type": "required_linear_history"}, {"type": "required_signatures"},
        {"type": "non_fast_forward"}, {"type": "license_compliance_scanning"},
        {"type": "update", "parameters": {"update_allows_fetch_and_merge": false}},
        {"type": "merge_queue", "parameters": {"check_response_timeout_minutes": 360, "grouping_strategy": "HEADGREEN", "max_entries_to_build": 100,
            "max_entries_to_merge": 0, "merge_method": "SQUASH", "min_entries_to_merge": 1, "min_entries_to_merge_wait_minutes": 360}},
        {"type": "required_deployments", "parameters": {"required_deployment_environments": ["staging"]}},
        {"type": "pull_request", "parameters": {"allowed_merge_methods": ["merge", "rebase"], "dismiss_stale_reviews_on_push": true,
            "dismissal_restriction": {"enabled": true, "allowed_actors": [{"id": 7, "type": "IntegrationInstallation"}]},
            "require_code_owner_review": false, "require_last_push_approval": true, "required_approving_review_count": 10,
            "required_review_thread_resolution": true,
            "required_reviewers": [{"file_patterns": ["*.rs"], "minimum_approvals": 0, "reviewer": {"id": 3, "type": "Team"}}]}},
        {"type": "required_status_checks", "parameters": {"do_not_enforce_on_create": true,
            "required_status_checks": [{"context": "ci/build", "integration_id": 5}, {"context": "lint"}], "strict_required_status_checks_policy": false}},
        {"type": "commit_message_pattern", "parameters": pattern}, {"type": "commit_author_email_pattern", "parameters": {"operator": "ends_with", "pattern": "@acme.example"}},
        {"type": "committer_email_pattern", "parameters": {"operator": "contains", "pattern": "acme"}},
        {"type": "branch_name_pattern", "parameters": {"operator": "starts_with", "pattern": "feature/"}},
        {"type": "tag_name_pattern", "parameters": {"operator": "starts_with", "pattern": "v"}},
        {"type": "workflows", "parameters": {"do_not_enforce_on_create": false, "workflows": [{"path": ".ci/build.yml", "repository_id": 1, "ref": "main", "sha": SHA}]}},
        {"type": "code_scanning", "parameters": {"code_scanning_tools": [{"tool": "scanner", "alerts_threshold": "errors", "security_alerts_threshold": "high_or_higher"}]}},
        {"type": "assistant_code_review", "parameters": {"review_draft_pull_requests": true}},
        {"type": "file_path_restriction", "parameters": {"restricted_file_paths": ["secrets/"]}},
        {"type": "max_file_path_length", "parameters": {"max_file_path_length": 32767}},
        {"type": "file_extension_restriction", "parameters": {"restricted_file_extensions": [".exe"]}},
        {"type": "max_file_size", "parameters": {"max_file_size": 100}},
    ]);
    let b = created(&s, "acme/widgets", &t, json!({"name": "all", "enforcement": "evaluate", "rules": rules})).await;
    assert_eq!(b["rules"], rules, "every parameter is kept as given");
});

/// One validation rule: the create body (over `base()`) and the answer's status and message.
macro_rules! refused {
    ($name:ident, $repo:expr, $patch:expr, $message:expr) => {
        both!($name, |s| {
            let alice = world(&s).await;
            // The repository's admin: alice for acme's, carol for her own.
            let t = if $repo.starts_with("carol/") { s.classic("carol", &["repo"]).await } else { alice };
            let mut body = base();
            let patch: Value = $patch;
            for (k, v) in patch.as_object().unwrap() {
                if v.is_null() {
                    body.as_object_mut().unwrap().remove(k);
                } else {
                    body[k] = v.clone();
                }
            }
            let (st, h, b) = create(&s, $repo, Some(&t), body).await;
            let want: &str = $message;
            assert_error(st, &h, &b, 422, if want == "Validation Failed" { want } else { b["message"].as_str().unwrap_or("") });
            assert!(b["message"].as_str().unwrap().starts_with(if want == "Validation Failed" { want } else { "Invalid request." }), "{b}");
            if want != "Validation Failed" {
                assert!(b["message"].as_str().unwrap().contains(want), "want {want:?} in {b}");
            }
            // Nothing was written.
            let (_, _, list) = get(&s, &format!("/repos/{}/rulesets", $repo), Some(&t)).await;
            assert_eq!(list, json!([]), "a refused body must not create anything");
        });
    };
}

/// A body whose only rule is `rule`.
fn rule(rule: Value) -> Value {
    json!({"rules": [rule]})
}

const W: &str = "acme/widgets";
const VF: &str = "Validation Failed";

// Top-level fields.
refused!(name_is_required, W, json!({"name": null}), "\"name\"");
refused!(name_must_be_a_string, W, json!({"name": 5}), "/name");
refused!(name_must_not_be_blank, W, json!({"name": "  "}), VF);
refused!(name_at_most_255_characters, W, json!({"name": "x".repeat(256)}), VF);
refused!(enforcement_is_required, W, json!({"enforcement": null}), "\"enforcement\"");
refused!(enforcement_from_the_enum, W, json!({"enforcement": "enabled"}), VF);
refused!(target_from_the_enum, W, json!({"target": "repository"}), VF);
refused!(rules_must_be_an_array, W, json!({"rules": {"type": "deletion"}}), "/rules");
refused!(conditions_must_be_an_object, W, json!({"conditions": ["refs/heads/main"]}), "/conditions");
refused!(ref_name_include_holds_strings, W, json!({"conditions": {"ref_name": {"include": [1]}}}), "/conditions/ref_name/include/0");
refused!(ref_name_exclude_is_an_array, W, json!({"conditions": {"ref_name": {"exclude": "refs/heads/x"}}}), "/conditions/ref_name/exclude");
// Rules.
refused!(rule_type_is_required, W, rule(json!({"parameters": {}})), "/rules/0/type");
refused!(rule_type_must_be_known, W, rule(json!({"type": "no_force_push"})), VF);
refused!(rule_parameters_required_where_listed, W, rule(json!({"type": "update"})), "/rules/0/parameters");
refused!(update_allows_fetch_and_merge_required, W, rule(json!({"type": "update", "parameters": {}})), "update_allows_fetch_and_merge");
refused!(
    update_allows_fetch_and_merge_boolean,
    W,
    rule(json!({"type": "update", "parameters": {"update_allows_fetch_and_merge": "yes"}})),
    "is not a boolean"
);
fn mq(k: &str, v: Value) -> Value {
    let mut p = json!({"check_response_timeout_minutes": 5, "grouping_strategy": "ALLGREEN", "max_entries_to_build": 5, "max_entries_to_merge": 5,
                       "merge_method": "MERGE", "min_entries_to_merge": 1, "min_entries_to_merge_wait_minutes": 5});
    if v.is_null() {
        p.as_object_mut().unwrap().remove(k);
    } else {
        p[k] = v;
    }
    rule(json!({"type": "merge_queue", "parameters": p}))
}
refused!(merge_queue_timeout_at_least_1, W, mq("check_response_timeout_minutes", json!(0)), VF);
refused!(merge_queue_timeout_at_most_360, W, mq("check_response_timeout_minutes", json!(361)), VF);
refused!(merge_queue_grouping_strategy_enum, W, mq("grouping_strategy", json!("SOMEGREEN")), VF);
refused!(merge_queue_max_entries_to_build_range, W, mq("max_entries_to_build", json!(101)), VF);
refused!(merge_queue_max_entries_to_merge_range, W, mq("max_entries_to_merge", json!(-1)), VF);
refused!(merge_queue_merge_method_enum, W, mq("merge_method", json!("merge")), VF);
refused!(merge_queue_min_entries_to_merge_range, W, mq("min_entries_to_merge", json!(101)), VF);
refused!(merge_queue_wait_minutes_range, W, mq("min_entries_to_merge_wait_minutes", json!(361)), VF);
refused!(merge_queue_every_parameter_required, W, mq("merge_method", Value::Null), "merge_method");
refused!(merge_queue_integers_only, W, mq("max_entries_to_build", json!(1.5)), "is not an integer");
refused!(
    required_deployments_environments_required,
    W,
    rule(json!({"type": "required_deployments", "parameters": {}})),
    "required_deployment_environments"
);
refused!(
    required_deployments_environments_strings,
    W,
    rule(json!({"type": "required_deployments", "parameters": {"required_deployment_environments": [1]}})),
    "is not a string"
);
fn pr(k: &str, v: Value) -> Value {
    let mut p = json!({"dismiss_stale_reviews_on_push": true, "require_code_owner_review": true, "require_last_push_approval": false,
                       "required_approving_review_count": 1, "required_review_thread_resolution": false});
    if v.is_null() {
        p.as_object_mut().unwrap().remove(k);
    } else {
        p[k] = v;
    }
    rule(json!({"type": "pull_request", "parameters": p}))
}
refused!(pull_request_allowed_merge_methods_at_least_one, W, pr("allowed_merge_methods", json!([])), VF);
refused!(pull_request_allowed_merge_methods_enum, W, pr("allowed_merge_methods", json!(["fast-forward"])), VF);
refused!(pull_request_dismiss_stale_required, W, pr("dismiss_stale_reviews_on_push", Value::Null), "dismiss_stale_reviews_on_push");
refused!(pull_request_code_owner_review_required, W, pr("require_code_owner_review", Value::Null), "require_code_owner_review");
refused!(pull_request_last_push_approval_required, W, pr("require_last_push_approval", Value::Null), "require_last_push_approval");
refused!(
    pull_request_thread_resolution_required,
    W,
    pr("required_review_thread_resolution", Value::Null),
    "required_review_thread_resolution"
);
refused!(pull_request_review_count_required, W, pr("required_approving_review_count", Value::Null), "required_approving_review_count");
refused!(pull_request_review_count_at_most_10, W, pr("required_approving_review_count", json!(11)), VF);
refused!(
    pull_request_dismissal_restriction_enabled_required,
    W,
    pr("dismissal_restriction", json!({"allowed_actors": []})),
    "dismissal_restriction/enabled"
);
refused!(
    pull_request_dismissal_actor_type_enum,
    W,
    pr("dismissal_restriction", json!({"enabled": true, "allowed_actors": [{"id": 1, "type": "Organization"}]})),
    VF
);
refused!(
    pull_request_dismissal_actor_id_required,
    W,
    pr("dismissal_restriction", json!({"enabled": true, "allowed_actors": [{"type": "User"}]})),
    "allowed_actors/0/id"
);
refused!(
    pull_request_reviewers_file_patterns_required,
    W,
    pr("required_reviewers", json!([{"minimum_approvals": 1, "reviewer": {"id": 1, "type": "Team"}}])),
    "file_patterns"
);
refused!(
    pull_request_reviewers_minimum_approvals_not_negative,
    W,
    pr("required_reviewers", json!([{"file_patterns": ["*"], "minimum_approvals": -1, "reviewer": {"id": 1, "type": "Team"}}])),
    VF
);
refused!(
    pull_request_reviewer_is_a_team,
    W,
    pr("required_reviewers", json!([{"file_patterns": ["*"], "minimum_approvals": 1, "reviewer": {"id": 1, "type": "User"}}])),
    VF
);
refused!(
    pull_request_reviewer_required,
    W,
    pr("required_reviewers", json!([{"file_patterns": ["*"], "minimum_approvals": 1}])),
    "reviewer"
);
fn rsc(p: Value) -> Value {
    rule(json!({"type": "required_status_checks", "parameters": p}))
}
refused!(status_checks_list_required, W, rsc(json!({"strict_required_status_checks_policy": true})), "/required_status_checks");
refused!(
    status_checks_context_required,
    W,
    rsc(json!({"strict_required_status_checks_policy": true, "required_status_checks": [{"integration_id": 1}]})),
    "context"
);
refused!(
    status_checks_integration_id_integer,
    W,
    rsc(json!({"strict_required_status_checks_policy": true, "required_status_checks": [{"context": "ci", "integration_id": "x"}]})),
    "is not an integer"
);
refused!(status_checks_strict_policy_required, W, rsc(json!({"required_status_checks": []})), "strict_required_status_checks_policy");
refused!(
    status_checks_do_not_enforce_boolean,
    W,
    rsc(json!({"strict_required_status_checks_policy": true, "required_status_checks": [], "do_not_enforce_on_create": 1})),
    "is not a boolean"
);
refused!(pattern_operator_required, W, rule(json!({"type": "commit_message_pattern", "parameters": {"pattern": "x"}})), "operator");
refused!(
    pattern_operator_enum,
    W,
    rule(json!({"type": "commit_author_email_pattern", "parameters": {"operator": "equals", "pattern": "x"}})),
    VF
);
refused!(pattern_pattern_required, W, rule(json!({"type": "committer_email_pattern", "parameters": {"operator": "contains"}})), "pattern");
refused!(
    pattern_regex_must_compile,
    W,
    rule(json!({"type": "branch_name_pattern", "parameters": {"operator": "regex", "pattern": "feat(ure"}})),
    VF
);
refused!(
    pattern_negate_boolean,
    W,
    rule(json!({"type": "tag_name_pattern", "parameters": {"operator": "contains", "pattern": "x", "negate": "no"}})),
    "is not a boolean"
);
refused!(workflows_list_required, W, rule(json!({"type": "workflows", "parameters": {}})), "workflows");
refused!(workflows_path_required, W, rule(json!({"type": "workflows", "parameters": {"workflows": [{"repository_id": 1}]}})), "path");
refused!(
    workflows_repository_id_required,
    W,
    rule(json!({"type": "workflows", "parameters": {"workflows": [{"path": "a.yml"}]}})),
    "repository_id"
);
refused!(code_scanning_tools_required, W, rule(json!({"type": "code_scanning", "parameters": {}})), "code_scanning_tools");
refused!(
    code_scanning_alerts_threshold_enum,
    W,
    rule(
        json!({"type": "code_scanning", "parameters": {"code_scanning_tools": [{"tool": "t", "alerts_threshold": "some", "security_alerts_threshold": "all"}]}})
    ),
    VF
);
refused!(
    code_scanning_security_threshold_enum,
    W,
    rule(
        json!({"type": "code_scanning", "parameters": {"code_scanning_tools": [{"tool": "t", "alerts_threshold": "all", "security_alerts_threshold": "low"}]}})
    ),
    VF
);
refused!(
    code_scanning_tool_required,
    W,
    rule(
        json!({"type": "code_scanning", "parameters": {"code_scanning_tools": [{"alerts_threshold": "all", "security_alerts_threshold": "all"}]}})
    ),
    "tool"
);
refused!(
    assistant_review_flags_boolean,
    W,
    rule(json!({"type": "assistant_code_review", "parameters": {"review_on_push": "true"}})),
    "is not a boolean"
);
refused!(
    file_path_restriction_paths_required,
    W,
    rule(json!({"type": "file_path_restriction", "parameters": {}})),
    "restricted_file_paths"
);
refused!(max_file_path_length_at_least_1, W, rule(json!({"type": "max_file_path_length", "parameters": {"max_file_path_length": 0}})), VF);
refused!(
    max_file_path_length_at_most_32767,
    W,
    rule(json!({"type": "max_file_path_length", "parameters": {"max_file_path_length": 32768}})),
    VF
);
refused!(
    file_extension_restriction_required,
    W,
    rule(json!({"type": "file_extension_restriction", "parameters": {"restricted_file_extensions": "exe"}})),
    "restricted_file_extensions"
);
refused!(max_file_size_at_least_1, W, rule(json!({"type": "max_file_size", "parameters": {"max_file_size": 0}})), VF);
refused!(max_file_size_at_most_100, W, rule(json!({"type": "max_file_size", "parameters": {"max_file_size": 101}})), VF);
// Bypass actors.
refused!(bypass_actors_must_be_an_array, W, json!({"bypass_actors": {"actor_type": "User", "actor_id": 1}}), "/bypass_actors");
refused!(bypass_actor_type_required, W, json!({"bypass_actors": [{"actor_id": 1}]}), "actor_type");
refused!(bypass_actor_type_enum, W, json!({"bypass_actors": [{"actor_type": "Organization", "actor_id": 1}]}), VF);
refused!(bypass_actor_id_required_for_users, W, json!({"bypass_actors": [{"actor_type": "User"}]}), "actor_id");
refused!(bypass_actor_id_required_for_teams, W, json!({"bypass_actors": [{"actor_type": "Team", "actor_id": null}]}), "actor_id");
refused!(bypass_actor_id_required_for_integrations, W, json!({"bypass_actors": [{"actor_type": "Integration"}]}), "actor_id");
refused!(bypass_actor_id_required_for_repository_roles, W, json!({"bypass_actors": [{"actor_type": "RepositoryRole"}]}), "actor_id");
refused!(bypass_actor_id_integer, W, json!({"bypass_actors": [{"actor_type": "User", "actor_id": "alice"}]}), "actor_id");
refused!(bypass_deploy_key_id_is_null, W, json!({"bypass_actors": [{"actor_type": "DeployKey", "actor_id": 3}]}), VF);
refused!(
    optional_parameters_are_not_null,
    W,
    rule(json!({"type": "assistant_code_review", "parameters": {"review_on_push": null}})),
    "is not a boolean"
);
refused!(bypass_mode_enum, W, json!({"bypass_actors": [{"actor_type": "User", "actor_id": 1, "bypass_mode": "sometimes"}]}), VF);
refused!(
    bypass_pull_request_not_for_deploy_keys,
    W,
    json!({"bypass_actors": [{"actor_type": "DeployKey", "bypass_mode": "pull_request"}]}),
    VF
);
refused!(
    bypass_pull_request_only_for_branch_rulesets,
    W,
    json!({"target": "tag", "bypass_actors": [{"actor_type": "User", "actor_id": 1, "bypass_mode": "pull_request"}]}),
    VF
);
refused!(
    bypass_organization_admin_not_for_personal_repositories,
    "carol/notes",
    json!({"bypass_actors": [{"actor_type": "OrganizationAdmin", "actor_id": 1}]}),
    VF
);

both!(refusals_name_the_field_and_bodies_must_be_json_objects, |s| {
    let t = world(&s).await;
    let (st, h, b) = create(&s, W, Some(&t), json!({"name": "x", "enforcement": "on"})).await;
    assert_error(st, &h, &b, 422, VF);
    assert_eq!(b["errors"][0]["resource"], "Ruleset");
    assert_eq!(b["errors"][0]["field"], "enforcement");
    let (st, _, b) = create(
        &s,
        W,
        Some(&t),
        json!({"name": "x", "enforcement": "active", "rules": [{"type": "max_file_size", "parameters": {"max_file_size": 101}}]}),
    )
    .await;
    assert_eq!(st, 422);
    assert_eq!(b["errors"][0]["field"], "/rules/0/parameters/max_file_size", "{b}");
    let r = s.req(Method::POST, "/repos/acme/widgets/rulesets", Some(&t)).body("[1]").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Body should be a JSON object");
    let r = s.req(Method::POST, "/repos/acme/widgets/rulesets", Some(&t)).body("{").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
});

both!(get_update_delete_and_history, |s| {
    let t = world(&s).await;
    let b = created(&s, W, &t, base()).await;
    let id = b["id"].as_i64().unwrap();
    let path = format!("/repos/acme/widgets/rulesets/{id}");
    let (st, _, got) = get(&s, &path, Some(&t)).await;
    assert_eq!(st, 200);
    assert_eq!(got, b, "get answers what create answered");
    // Update: fields not sent keep their value; the version is recorded.
    s.advance(60).await;
    let (st, _, up) = put(&s, &path, Some(&t), json!({"enforcement": "disabled", "rules": [{"type": "required_signatures"}]})).await;
    assert_eq!(st, 200, "{up}");
    assert_eq!(up["name"], "protect main");
    assert_eq!(up["enforcement"], "disabled");
    assert_eq!(up["conditions"], b["conditions"]);
    assert_eq!(up["rules"], json!([{"type": "required_signatures"}]));
    assert_ne!(up["updated_at"], b["updated_at"]);
    assert_eq!(up["created_at"], b["created_at"]);
    // A refused update changes nothing.
    let (st, _, _) = put(
        &s,
        &path,
        Some(&t),
        json!({"target": "tag", "bypass_actors": [{"actor_type": "User", "actor_id": 1, "bypass_mode": "pull_request"}]}),
    )
    .await;
    assert_eq!(st, 422);
    let (_, _, again) = get(&s, &path, Some(&t)).await;
    assert_eq!(again, up);
    // The target is kept when not sent, and pull_request bypass is then checked against it.
    let (st, _, tag) = put(&s, &path, Some(&t), json!({"target": "tag"})).await;
    assert_eq!((st, tag["target"].as_str()), (200, Some("tag")));
    let (st, _, _) =
        put(&s, &path, Some(&t), json!({"bypass_actors": [{"actor_type": "User", "actor_id": 1, "bypass_mode": "pull_request"}]})).await;
    assert_eq!(st, 422, "pull_request bypass on what is now a tag ruleset");
    // History: newest first, with the actor.
    let (st, _, hist) = get(&s, &format!("{path}/history"), Some(&t)).await;
    assert_eq!(st, 200);
    let hist = hist.as_array().unwrap().clone();
    assert_eq!(hist.len(), 3, "create and two updates: {hist:?}");
    for v in &hist {
        assert_conforms_to_snapshot("RulesetVersion", v);
        assert_eq!(v["actor"]["type"], "User");
        assert!(v["actor"]["id"].as_i64().is_some());
        assert!(is_ts(&v["updated_at"]));
    }
    assert!(hist[0]["version_id"].as_i64() > hist[2]["version_id"].as_i64());
    // Paginated history.
    let (_, h, page) = get(&s, &format!("{path}/history?per_page=1&page=2"), Some(&t)).await;
    assert_eq!(page.as_array().unwrap().len(), 1);
    assert_eq!(page[0]["version_id"], hist[1]["version_id"]);
    assert!(header(&h, "link").contains("rel=\"next\""), "{h:?}");
    // A version keeps the ruleset as it was.
    let first = hist[2]["version_id"].as_i64().unwrap();
    let (st, _, v) = get(&s, &format!("{path}/history/{first}"), Some(&t)).await;
    assert_eq!(st, 200, "{v}");
    assert_conforms_to_snapshot("RulesetVersionWithState", &v);
    assert_eq!(v["version_id"], first);
    assert_eq!(v["state"]["enforcement"], "active");
    assert_eq!(v["state"]["rules"], b["rules"]);
    assert_eq!(v["state"]["target"], "branch");
    assert_eq!(v["state"]["id"], id);
    let (st, _, _) = get(&s, &format!("{path}/history/999999"), Some(&t)).await;
    assert_eq!(st, 404);
    // Delete: 204, then 404 everywhere.
    let r = s.req(Method::DELETE, &path, Some(&t)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    for p in [path.clone(), format!("{path}/history"), format!("{path}/history/{first}")] {
        let (st, h, b) = get(&s, &p, Some(&t)).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    let (st, _, _) = put(&s, &path, Some(&t), json!({"name": "x"})).await;
    assert_eq!(st, 404);
    let r = s.req(Method::DELETE, &path, Some(&t)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    // Ids that are not numbers, and rulesets of another repository, are 404.
    let other = created(&s, "acme/gadgets", &t, base()).await["id"].as_i64().unwrap();
    for p in ["/repos/acme/widgets/rulesets/abc".to_string(), format!("/repos/acme/widgets/rulesets/{other}")] {
        let (st, _, _) = get(&s, &p, Some(&t)).await;
        assert_eq!(st, 404, "{p}");
    }
});

/// An organization ruleset through the control plane.
async fn org_ruleset(s: &Server, body: Value) -> Value {
    s.admin_post("/orgs/acme/rulesets", body).await
}

both!(list_with_parents_and_targets, |s| {
    let t = world(&s).await;
    let a = created(&s, W, &t, base()).await;
    let mut tag = base();
    tag["target"] = json!("tag");
    tag["name"] = json!("tags");
    let b = created(&s, W, &t, tag).await;
    let mut push = base();
    push["target"] = json!("push");
    push["name"] = json!("pushes");
    push.as_object_mut().unwrap().remove("conditions");
    let c = created(&s, W, &t, push).await;
    let o = org_ruleset(&s, json!({"name": "org wide", "enforcement": "active",
        "conditions": {"ref_name": {"include": ["~ALL"]}, "repository_name": {"include": ["wid*"], "exclude": []}}, "rules": [{"type": "deletion"}]})).await;
    assert_eq!(o["source_type"], "Organization");
    assert_eq!(o["source"], "acme");
    assert_eq!(o["conditions"]["repository_name"], json!({"include": ["wid*"], "exclude": [], "protected": false}));
    // Not for gadgets: its name does not match.
    let other = org_ruleset(
        &s,
        json!({"name": "gadgets only", "enforcement": "active",
        "conditions": {"repository_id": {"repository_ids": [999]}}}),
    )
    .await;
    let ids = |v: &Value| v.as_array().unwrap().iter().map(|x| x["id"].as_i64().unwrap()).collect::<Vec<_>>();
    let (st, h, all) = get(&s, "/repos/acme/widgets/rulesets", None).await;
    assert_eq!(st, 200, "public repositories list without credentials");
    assert_eq!(header(&h, "link"), "");
    assert_eq!(ids(&all), [a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap(), c["id"].as_i64().unwrap(), o["id"].as_i64().unwrap()]);
    assert!(!ids(&all).contains(&other["id"].as_i64().unwrap()));
    for (i, v) in all.as_array().unwrap().iter().enumerate() {
        assert_summary(&s, v, W, if i == 3 { "Organization" } else { "Repository" });
    }
    let (_, _, own) = get(&s, "/repos/acme/widgets/rulesets?includes_parents=false", None).await;
    assert_eq!(ids(&own).len(), 3);
    let (_, _, t1) = get(&s, "/repos/acme/widgets/rulesets?targets=tag,push", None).await;
    assert_eq!(ids(&t1), [b["id"].as_i64().unwrap(), c["id"].as_i64().unwrap()]);
    let (_, _, t2) = get(&s, "/repos/acme/widgets/rulesets?targets=branch&includes_parents=false", None).await;
    assert_eq!(ids(&t2), [a["id"].as_i64().unwrap()]);
    let (st, h, e) = get(&s, "/repos/acme/widgets/rulesets?targets=branch,leaf", None).await;
    assert_error(st, &h, &e, 422, e["message"].as_str().unwrap_or(""));
    assert!(e["message"].as_str().unwrap().starts_with("Invalid request."));
    let (st, _, _) = get(&s, "/repos/acme/widgets/rulesets?includes_parents=maybe", None).await;
    assert_eq!(st, 422);
    // Pages with absolute Links that keep the query.
    let (_, h, p) = get(&s, "/repos/acme/widgets/rulesets?per_page=2&targets=branch,tag,push", None).await;
    assert_eq!(ids(&p).len(), 2);
    let link = header(&h, "link");
    assert!(
        link.contains(&format!("<{}/repos/acme/widgets/rulesets?per_page=2&targets=branch%2Ctag%2Cpush&page=2>; rel=\"next\"", s.base)),
        "{link}"
    );
    // The organization ruleset is readable through the repository (with parents), not without.
    let oid = o["id"].as_i64().unwrap();
    let (st, _, got) = get(&s, &format!("/repos/acme/widgets/rulesets/{oid}"), Some(&t)).await;
    assert_eq!(st, 200, "{got}");
    assert_eq!(got["source_type"], "Organization");
    assert_eq!(got["current_user_can_bypass"], "never");
    let (st, _, _) = get(&s, &format!("/repos/acme/widgets/rulesets/{oid}?includes_parents=false"), Some(&t)).await;
    assert_eq!(st, 404);
    let (st, _, _) = get(&s, &format!("/repos/acme/gadgets/rulesets/{oid}"), Some(&t)).await;
    assert_eq!(st, 404, "the organization ruleset does not apply to gadgets");
    // ... and not changed or deleted there (it belongs to the organization).
    let (st, _, _) = put(&s, &format!("/repos/acme/widgets/rulesets/{oid}"), Some(&t), json!({"name": "x"})).await;
    assert_eq!(st, 404);
    // The control plane changes and deletes it.
    let changed = s.admin(Method::PUT, &format!("/orgs/acme/rulesets/{oid}"), json!({"enforcement": "disabled"})).await;
    assert_eq!(changed["enforcement"], "disabled");
    assert_eq!(changed["name"], "org wide");
    s.admin(Method::DELETE, &format!("/orgs/acme/rulesets/{oid}"), Value::Null).await;
    let (_, _, after) = get(&s, "/repos/acme/widgets/rulesets", None).await;
    assert_eq!(ids(&after).len(), 3);
});

both!(control_plane_validates_organization_rulesets, |s| {
    world(&s).await;
    let post = |body: Value| {
        let s = &s;
        async move {
            let r =
                s.client.post(format!("http://{}/_admin/orgs/acme/rulesets", s.addr)).bearer_auth(ADMIN).json(&body).send().await.unwrap();
            parts(r).await
        }
    };
    let (st, _, b) = post(json!({"name": "x", "enforcement": "active"})).await;
    assert_eq!(st, 422, "an organization ruleset needs a repository condition: {b}");
    let (st, _, _) = post(json!({"name": "x", "enforcement": "active", "conditions": {"repository_name": {"include": ["~ALL"]}, "repository_id": {"repository_ids": [1]}}})).await;
    assert_eq!(st, 422, "only one repository condition");
    let (st, _, _) = post(json!({"name": "x", "enforcement": "active", "conditions": {"repository_id": {"repository_ids": ["a"]}}})).await;
    assert_eq!(st, 422);
    let (st, _, _) = post(json!({"name": "x", "enforcement": "active", "conditions": {"repository_name": {"include": ["~ALL"]}}, "rules": [{"type": "bogus"}]})).await;
    assert_eq!(st, 422);
    let r = s
        .client
        .post(format!("http://{}/_admin/orgs/nope/rulesets", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({"name": "x", "enforcement": "active", "conditions": {"repository_name": {"include": ["~ALL"]}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422, "unknown organization");
    let r = s
        .client
        .put(format!("http://{}/_admin/orgs/acme/rulesets/12345", s.addr))
        .bearer_auth(ADMIN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let r = s.client.post(format!("http://{}/_admin/orgs/acme/rulesets", s.addr)).json(&json!({})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401, "the control plane needs the admin token");
});

both!(rules_for_a_branch_match_conditions, |s| {
    let t = world(&s).await;
    let mk = |name: &str, include: Value, exclude: Value, rules: Value| json!({"name": name, "enforcement": "active", "conditions": {"ref_name": {"include": include, "exclude": exclude}}, "rules": rules});
    let r = |ty: &str| json!({"type": ty});
    created(&s, W, &t, mk("default", json!(["~DEFAULT_BRANCH"]), json!([]), json!([r("deletion")]))).await;
    created(&s, W, &t, mk("features", json!(["refs/heads/feature/*"]), json!(["refs/heads/feature/tmp*"]), json!([r("creation")]))).await;
    created(&s, W, &t, mk("deep", json!(["refs/heads/release/**/*"]), json!([]), json!([r("required_signatures")]))).await;
    created(
        &s,
        W,
        &t,
        mk(
            "all",
            json!(["~ALL"]),
            json!(["refs/heads/main", "refs/heads/feature/**"]),
            json!([r("non_fast_forward"), r("required_linear_history")]),
        ),
    )
    .await;
    created(
        &s,
        W,
        &t,
        mk(
            "braces",
            json!(["refs/heads/{dev,stage}"]),
            json!([]),
            json!([{"type": "update", "parameters": {"update_allows_fetch_and_merge": true}}]),
        ),
    )
    .await;
    // Not applied: evaluate, disabled, tag rulesets, and rulesets without ref conditions.
    let mut e = mk("evaluate", json!(["~ALL"]), json!([]), json!([{"type": "max_file_size", "parameters": {"max_file_size": 5}}]));
    e["enforcement"] = json!("evaluate");
    created(&s, W, &t, e.clone()).await;
    e["enforcement"] = json!("disabled");
    created(&s, W, &t, e.clone()).await;
    e["enforcement"] = json!("active");
    e["target"] = json!("tag");
    created(&s, W, &t, e).await;
    created(&s, W, &t, json!({"name": "no conditions", "enforcement": "active", "rules": [r("deletion")]})).await;

    assert_eq!(rule_types(&s, W, "main", None).await, ["deletion"]);
    assert_eq!(rule_types(&s, W, "feature/login", None).await, ["creation"], "slashes raw");
    assert_eq!(rule_types(&s, W, "feature%2Flogin", None).await, ["creation"], "slashes encoded");
    assert_eq!(rule_types(&s, W, "feature/tmp1", None).await, Vec::<String>::new(), "exclusions win");
    assert_eq!(rule_types(&s, W, "feature/a/b", None).await, Vec::<String>::new(), "* stops at /, ** excluded");
    assert_eq!(rule_types(&s, W, "release/v1", None).await, ["required_signatures", "non_fast_forward", "required_linear_history"]);
    assert_eq!(rule_types(&s, W, "release/2024/v1", None).await, ["required_signatures", "non_fast_forward", "required_linear_history"]);
    assert_eq!(rule_types(&s, W, "dev", None).await, ["non_fast_forward", "required_linear_history", "update"]);
    assert_eq!(rule_types(&s, W, "never-pushed", None).await, ["non_fast_forward", "required_linear_history"], "the branch need not exist");
    // Each rule names its ruleset.
    let (_, _, rules) = get(&s, "/repos/acme/widgets/rules/branches/main", None).await;
    assert_eq!(rules[0]["ruleset_source_type"], "Repository");
    assert_eq!(rules[0]["ruleset_source"], "acme/widgets");
    assert!(rules[0]["ruleset_id"].as_i64().is_some());
    assert!(rules[0].get("parameters").is_none(), "rules without parameters have none: {rules}");
    // Changes apply at once (the compiled set is rebuilt after writes).
    let id = created(
        &s,
        W,
        &t,
        mk("later", json!(["refs/heads/main"]), json!([]), json!([{"type": "max_file_size", "parameters": {"max_file_size": 1}}])),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let (_, _, rules) = get(&s, "/repos/acme/widgets/rules/branches/main", None).await;
    assert_eq!(
        rules[1],
        json!({"type": "max_file_size", "ruleset_source_type": "Repository", "ruleset_source": "acme/widgets", "ruleset_id": id, "parameters": {"max_file_size": 1}})
    );
    put(&s, &format!("/repos/acme/widgets/rulesets/{id}"), Some(&t), json!({"enforcement": "evaluate"})).await;
    assert_eq!(rule_types(&s, W, "main", None).await, ["deletion"]);
    // Pagination over the rules.
    let (_, h, p) = get(&s, "/repos/acme/widgets/rules/branches/release/v1?per_page=2&page=2", None).await;
    assert_eq!(p.as_array().unwrap().len(), 1);
    assert!(header(&h, "link").contains("rel=\"prev\""));
});

both!(organization_rulesets_apply_to_matching_repositories, |s| {
    let t = world(&s).await;
    created(&s, W, &t, base()).await;
    org_ruleset(
        &s,
        json!({"name": "by name", "enforcement": "active",
        "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"]}, "repository_name": {"include": ["~ALL"], "exclude": ["gadg*"]}},
        "rules": [{"type": "commit_message_pattern", "parameters": {"operator": "starts_with", "pattern": "issue"}}]}),
    )
    .await;
    let gadgets_id = s.admin_post("/repos", json!({"owner": "acme", "name": "tools"})).await["id"].as_i64().unwrap();
    org_ruleset(
        &s,
        json!({"name": "by id", "enforcement": "active",
        "conditions": {"ref_name": {"include": ["~ALL"]}, "repository_id": {"repository_ids": [gadgets_id]}},
        "rules": [{"type": "required_signatures"}]}),
    )
    .await;
    org_ruleset(
        &s,
        json!({"name": "evaluating", "enforcement": "evaluate",
        "conditions": {"ref_name": {"include": ["~ALL"]}, "repository_name": {"include": ["~ALL"]}}, "rules": [{"type": "creation"}]}),
    )
    .await;
    let (_, _, rules) = get(&s, "/repos/acme/widgets/rules/branches/main", None).await;
    let kinds: Vec<(&str, &str)> =
        rules.as_array().unwrap().iter().map(|r| (r["type"].as_str().unwrap(), r["ruleset_source_type"].as_str().unwrap())).collect();
    assert_eq!(kinds, [("deletion", "Repository"), ("non_fast_forward", "Repository"), ("commit_message_pattern", "Organization")]);
    assert_eq!(rules[2]["ruleset_source"], "acme");
    assert_eq!(rules[2]["parameters"], json!({"operator": "starts_with", "pattern": "issue"}));
    assert_eq!(rule_types(&s, "acme/gadgets", "main", None).await, Vec::<String>::new(), "excluded by name");
    assert_eq!(rule_types(&s, "acme/tools", "anything", Some(&t)).await, ["required_signatures"]);
    // Another organization's rulesets never apply; personal repositories have no parents.
    assert_eq!(rule_types(&s, "carol/notes", "main", None).await, Vec::<String>::new());
});

both!(bypass_visibility_and_current_user_can_bypass, |s| {
    let t = world(&s).await;
    let team = s.admin_post("/orgs/acme/teams", json!({"name": "releasers", "members": ["bob"]})).await;
    let mut body = base();
    body["bypass_actors"] = json!([{"actor_type": "Team", "actor_id": team["id"], "bypass_mode": "pull_request"}]);
    let id = created(&s, W, &t, body).await["id"].as_i64().unwrap();
    let path = format!("/repos/acme/widgets/rulesets/{id}");
    let bob = s.classic("bob", &["repo"]).await;
    let (st, _, as_bob) = get(&s, &path, Some(&bob)).await;
    assert_eq!(st, 200);
    assert_eq!(as_bob["current_user_can_bypass"], "pull_requests_only", "bob is in the team");
    assert!(as_bob.get("bypass_actors").is_none(), "bypass actors are for repository admins: {as_bob}");
    let (_, _, as_alice) = get(&s, &path, Some(&t)).await;
    assert_eq!(as_alice["current_user_can_bypass"], "never");
    assert_eq!(as_alice["bypass_actors"][0]["actor_type"], "Team");
    let (_, _, anon) = get(&s, &path, None).await;
    assert_eq!(anon["current_user_can_bypass"], "never");
    assert!(anon.get("bypass_actors").is_none());
    // A repository role (admin is 5) and a user actor.
    let (_, _, up) =
        put(&s, &path, Some(&t), json!({"bypass_actors": [{"actor_type": "RepositoryRole", "actor_id": 5, "bypass_mode": "exempt"}]}))
            .await;
    assert_eq!(up["current_user_can_bypass"], "exempt");
    let (_, _, as_bob) = get(&s, &path, Some(&bob)).await;
    assert_eq!(as_bob["current_user_can_bypass"], "never");
});

both!(permission_matrix, |s| {
    let alice = world(&s).await;
    let bob = s.classic("bob", &["repo"]).await;
    let carol = s.classic("carol", &["repo"]).await;
    let no_scope = s.classic("alice", &["read:org"]).await;
    let fg_admin = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"administration": "write"}}))
        .await;
    let fg_read = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"administration": "read"}}))
        .await;
    let fg_none =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"statuses": "write"}})).await;
    let app = s.admin_post("/apps", json!({"name": "Rules", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "Rules", "org": "acme", "permissions": {"administration": "write"}})).await;
    let inst_read = s.token(json!({"kind": "installation", "app": "Rules", "org": "acme", "permissions": {"metadata": "read"}})).await;
    let wf = s.token(json!({"kind": "workflow", "repo": "acme/secret"})).await;
    let seeded = created(&s, "acme/secret", &alice, base()).await["id"].as_i64().unwrap();
    let public = created(&s, W, &alice, base()).await["id"].as_i64().unwrap();
    const PAT: &str = "Resource not accessible by personal access token";
    const INT: &str = "Resource not accessible by integration";
    const ADMIN_RIGHTS: &str = "Must have admin rights to Repository.";
    const PUSH: &str = "Must have push access to this repository.";
    // [read private, write private, read public, write public]; reads cover list, get, history,
    // rules for a branch; writes cover create, update and delete (delete only when allowed).
    // (caller, its token, then the status and message of each of the four kinds of request)
    type Case<'a> = (&'a str, Option<&'a str>, [(u16, &'a str); 4]);
    let cases: Vec<Case> = vec![
        ("anonymous", None, [(404, "Not Found"), (404, "Not Found"), (200, ""), (401, "Requires authentication")]),
        ("owner", Some(&alice), [(200, ""), (201, ""), (200, ""), (201, "")]),
        ("member", Some(&bob), [(200, ""), (403, ADMIN_RIGHTS), (200, ""), (403, ADMIN_RIGHTS)]),
        ("outsider", Some(&carol), [(404, "Not Found"), (404, "Not Found"), (200, ""), (403, PUSH)]),
        ("classic without repo", Some(&no_scope), [(404, "Not Found"), (404, "Not Found"), (200, ""), (403, PAT)]),
        ("fine-grained administration write", Some(&fg_admin), [(200, ""), (201, ""), (200, ""), (201, "")]),
        ("fine-grained administration read", Some(&fg_read), [(200, ""), (403, PAT), (200, ""), (403, PAT)]),
        ("fine-grained without administration", Some(&fg_none), [(200, ""), (403, PAT), (200, ""), (403, PAT)]),
        ("installation administration write", Some(&inst), [(200, ""), (201, ""), (200, ""), (201, "")]),
        ("installation metadata", Some(&inst_read), [(200, ""), (403, INT), (200, ""), (403, INT)]),
        ("workflow", Some(&wf), [(200, ""), (403, INT), (200, ""), (403, INT)]),
    ];
    for (who, token, want) in cases {
        for (i, (repo, id)) in [("acme/secret", seeded), ("acme/secret", seeded), (W, public), (W, public)].iter().enumerate() {
            let (want_st, want_msg) = want[i];
            let (st, h, b) = if i % 2 == 0 {
                // Every read operation answers alike.
                let mut last = None;
                for p in [
                    format!("/repos/{repo}/rulesets"),
                    format!("/repos/{repo}/rulesets/{id}"),
                    format!("/repos/{repo}/rulesets/{id}/history"),
                    format!("/repos/{repo}/rules/branches/main"),
                ] {
                    let got = get(&s, &p, token).await;
                    assert_eq!(got.0, want_st, "{who} GET {p}: {}", got.2);
                    last = Some(got);
                }
                last.unwrap()
            } else {
                let got = create(&s, repo, token, base()).await;
                let up = put(&s, &format!("/repos/{repo}/rulesets/{id}"), token, json!({"name": "renamed"})).await;
                let want_up = if want_st == 201 { 200 } else { want_st };
                assert_eq!(up.0, want_up, "{who} PUT {repo}: {}", up.2);
                if want_st == 201 {
                    let new_id = got.2["id"].as_i64().unwrap();
                    let r = s.req(Method::DELETE, &format!("/repos/{repo}/rulesets/{new_id}"), token).send().await.unwrap();
                    assert_eq!(r.status().as_u16(), 204, "{who} DELETE");
                } else {
                    let r = s.req(Method::DELETE, &format!("/repos/{repo}/rulesets/{id}"), token).send().await.unwrap();
                    assert_eq!(r.status().as_u16(), want_st, "{who} DELETE");
                }
                got
            };
            assert_eq!(st, want_st, "{who} [{i}]: {b}");
            if st >= 400 {
                assert_error(st, &h, &b, want_st, want_msg);
            }
        }
    }
});

both!(seeded_rulesets_and_openapi, |s| {
    world(&s).await;
    let made = s.admin_post("/repos/acme/widgets/rulesets", base()).await;
    assert_eq!(made["source_type"], "Repository");
    let (_, _, hist) = get(&s, &format!("/repos/acme/widgets/rulesets/{}/history", made["id"]), None).await;
    assert_eq!(hist[0]["actor"]["type"], "Organization", "control-plane versions name the owner: {hist}");
    let doc: Value = s.get("/openapi.json", None).await.json().await.unwrap();
    for (path, method) in [
        ("/repos/{owner}/{repo}/rules/branches/{branch}", "get"),
        ("/repos/{owner}/{repo}/rulesets", "post"),
        ("/repos/{owner}/{repo}/rulesets/{ruleset_id}/history/{version_id}", "get"),
    ] {
        assert!(doc["paths"][path][method]["operationId"].is_string(), "{path}");
    }
    let rules = &doc["paths"]["/repos/{owner}/{repo}/rulesets"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        ["properties"]["rules"];
    assert_eq!(rules["items"]["anyOf"].as_array().unwrap().len(), 23, "every rule type is published");
    assert_eq!(doc["paths"]["/repos/{owner}/{repo}/rulesets"]["post"]["x-accepted-service-permissions"], "administration=write");
});

both!(ruleset_changes_are_webhooks, |s| {
    let t = world(&s).await;
    let owner = s.classic("alice", &["admin:org_hook"]).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let hook = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["repository_ruleset"]});
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&owner), Some(hook)).await;
    assert_eq!(st, 201, "{b}");
    recv.wait(1, 10).await; // the ping
                            // A repository's ruleset through the API: created, edited, deleted.
    let made = created(&s, W, &t, base()).await;
    let path = format!("/repos/{W}/rulesets/{}", made["id"]);
    let change = json!({"name": "protect", "enforcement": "evaluate", "rules": [{"type": "deletion"}, {"type": "required_signatures"}],
        "conditions": {"ref_name": {"include": ["refs/heads/main"], "exclude": []}}});
    let (st, _, b) = put(&s, &path, Some(&t), change).await;
    assert_eq!(st, 200, "{b}");
    let (st, _, _) = parts(s.req(Method::DELETE, &path, Some(&t)).send().await.unwrap()).await;
    assert_eq!(st, 204);
    // An organization's ruleset through the control plane: the same, without a repository.
    let org = org_ruleset(
        &s,
        json!({"name": "org rules", "enforcement": "disabled", "conditions": {"ref_name": {"include": ["~ALL"], "exclude": []},
            "repository_name": {"include": ["none-*"], "exclude": []}}, "rules": [{"type": "deletion"}]}),
    )
    .await;
    s.admin(Method::PUT, &format!("/orgs/acme/rulesets/{}", org["id"]), json!({"name": "org rules 2"})).await;
    s.admin(Method::DELETE, &format!("/orgs/acme/rulesets/{}", org["id"]), json!({})).await;
    let mut hits = recv.wait(7, 15).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 7);
    hits.remove(0);
    let (rs_id, org_id) = (made["id"].as_i64().unwrap(), org["id"].as_i64().unwrap());
    let order = |h: &crate::hooks::Hit| {
        let p = h.payload();
        let id = p["repository_ruleset"]["id"].as_i64().unwrap();
        (id != rs_id, ["created", "edited", "deleted"].iter().position(|a| p["action"] == *a))
    };
    hits.sort_by_key(order);
    let seen: Vec<(String, String, i64, String)> = hits
        .iter()
        .map(|h| {
            let p = h.payload();
            let who = p["sender"]["login"].as_str().unwrap().to_string();
            (h.h("x-service-event"), p["action"].as_str().unwrap().to_string(), p["repository_ruleset"]["id"].as_i64().unwrap(), who)
        })
        .collect();
    let e = |a: &str, id: i64, who: &str| ("repository_ruleset".to_string(), a.to_string(), id, who.to_string());
    assert_eq!(
        seen,
        [
            e("created", rs_id, "alice"),
            e("edited", rs_id, "alice"),
            e("deleted", rs_id, "alice"),
            e("created", org_id, "acme"),
            e("edited", org_id, "acme"),
            e("deleted", org_id, "acme"),
        ]
    );
    let p = |i: usize| hits[i].payload();
    // The full ruleset as the API shows it to an admin (bypass actors, no caller-specific field).
    let rs = p(0)["repository_ruleset"].clone();
    assert_eq!(
        (rs["name"].clone(), rs["source_type"].clone(), rs["source"].clone()),
        (json!("protect main"), json!("Repository"), json!(W))
    );
    assert_eq!(rs["rules"], made["rules"]);
    assert!(rs["bypass_actors"].is_array() && rs.get("current_user_can_bypass").is_none(), "{rs}");
    assert_eq!(p(0)["repository"]["full_name"], W);
    assert_eq!(p(0)["organization"]["login"], "acme");
    assert_eq!(
        p(1)["changes"],
        json!({
            "name": {"from": "protect main"},
            "enforcement": {"from": "active"},
            "conditions": {"added": [], "deleted": [], "updated": [{
                "condition": {"ref_name": {"include": ["refs/heads/main"], "exclude": []}},
                "changes": {"include": {"from": ["~DEFAULT_BRANCH"]}}}]},
            "rules": {"added": [{"type": "required_signatures"}], "deleted": [{"type": "non_fast_forward"}], "updated": []},
        })
    );
    assert_eq!(p(1)["repository_ruleset"]["name"], "protect");
    assert_eq!(p(2)["repository_ruleset"]["name"], "protect", "deleted: the ruleset as it was");
    assert!(p(2).get("changes").is_none());
    // The organization's: no repository, its own source.
    let org_rs = p(3)["repository_ruleset"].clone();
    assert_eq!((org_rs["source_type"].clone(), org_rs["source"].clone()), (json!("Organization"), json!("acme")));
    assert!(p(3).get("repository").is_none(), "{}", p(3));
    assert_eq!(p(4)["changes"], json!({"name": {"from": "org rules"}}));
});
