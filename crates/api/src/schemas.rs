//! Component schemas of the OpenAPI document: the response shapes of api-facts §3–4, written
//! once here. `shapes.rs` builds the values; the HTTP suite and the fuzzer check that every
//! response matches these.
use serde_json::{json, Map, Value};

fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn nullable(v: Value) -> Value {
    json!({ "anyOf": [v, { "type": "null" }] })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn uri() -> Value {
    json!({ "type": "string", "format": "uri" })
}

fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" })
}

/// An object schema whose listed properties are all required.
fn object(props: &[(&str, Value)], optional: &[(&str, Value)]) -> Value {
    let mut p = Map::new();
    for (k, v) in props.iter().chain(optional) {
        p.insert(k.to_string(), v.clone());
    }
    json!({ "type": "object", "properties": p, "required": props.iter().map(|(k, _)| *k).collect::<Vec<_>>() })
}

fn authorization() -> Value {
    object(
        &[
            ("id", json!({"type": "integer"})),
            ("url", uri()),
            ("scopes", json!({"type": "array", "items": {"type": "string"}})),
            ("token", string()),
            ("token_last_eight", string()),
            ("hashed_token", string()),
            ("app", object(&[("client_id", string()), ("name", string()), ("url", uri())], &[])),
            ("note", nullable(string())),
            ("note_url", nullable(string())),
            ("updated_at", timestamp()),
            ("created_at", timestamp()),
            ("fingerprint", nullable(string())),
            ("expires_at", nullable(timestamp())),
            ("user", r("SimpleUser")),
        ],
        &[("installation", json!({"type": ["object", "null"]}))],
    )
}

fn rate_limit_overview() -> Value {
    let bucket = r("RateLimitBucket");
    let mut resources = object(&[("core", bucket.clone()), ("search", bucket.clone())], &[]);
    resources["additionalProperties"] = bucket.clone();
    object(
        &[("resources", resources)],
        &[(
            "rate",
            json!({ "$ref": "#/components/schemas/RateLimitBucket", "description": "Only in API version 2022-11-28: a copy of resources.core." }),
        )],
    )
}

fn root() -> Value {
    let required = [
        "current_user_url",
        "current_user_authorizations_html_url",
        "current_user_repositories_url",
        "code_search_url",
        "commit_search_url",
        "issue_search_url",
        "label_search_url",
        "repository_search_url",
        "user_search_url",
        "emails_url",
        "followers_url",
        "following_url",
        "keys_url",
        "starred_url",
        "user_url",
        "user_organizations_url",
        "user_repositories_url",
        "emojis_url",
        "events_url",
        "feeds_url",
        "gists_url",
        "public_gists_url",
        "starred_gists_url",
        "issues_url",
        "notifications_url",
        "organization_url",
        "organization_repositories_url",
        "organization_teams_url",
        "rate_limit_url",
        "repository_url",
    ];
    let props: Vec<(&str, Value)> = required.iter().map(|k| (*k, string())).collect();
    object(
        &props,
        &[
            ("topic_search_url", string()),
            ("authorizations_url", json!({"type": "string", "description": "Only in API version 2022-11-28."})),
            ("hub_url", json!({"type": "string", "description": "Only in API version 2022-11-28 (deprecated)."})),
        ],
    )
}

fn basic_error() -> Value {
    object(&[("message", string()), ("documentation_url", string())], &[("status", string()), ("url", string())])
}

fn validation_error() -> Value {
    let item = object(
        &[("code", string())],
        &[("resource", string()), ("field", string()), ("message", string()), ("index", json!({"type": "integer"})), ("value", json!({}))],
    );
    object(
        &[("message", string()), ("documentation_url", string())],
        &[
            ("status", string()),
            (
                "errors",
                json!({ "anyOf": [
                    { "type": "array", "items": item },
                    { "type": "array", "items": { "type": "string" } },
                    { "type": "string" }
                ]}),
            ),
        ],
    )
}

fn thread() -> Value {
    let subject = object(&[("title", string()), ("url", string()), ("latest_comment_url", string()), ("type", string())], &[]);
    object(
        &[
            ("id", string()),
            ("repository", r("MinimalRepository")),
            ("subject", subject),
            ("reason", string()),
            ("unread", json!({"type": "boolean"})),
            ("updated_at", timestamp()),
            ("last_read_at", nullable(timestamp())),
            ("url", uri()),
            ("subscription_url", uri()),
        ],
        &[],
    )
}

fn thread_subscription() -> Value {
    object(
        &[
            ("subscribed", json!({"type": "boolean"})),
            ("ignored", json!({"type": "boolean"})),
            ("reason", nullable(string())),
            ("created_at", nullable(timestamp())),
            ("url", uri()),
        ],
        &[("thread_url", uri()), ("repository_url", uri())],
    )
}

/// Activity event of the feeds (api-facts §4.10) with the payloads platformd produces.
fn event() -> Value {
    let int = || json!({"type": "integer"});
    let actor = object(
        &[("id", int()), ("login", string()), ("gravatar_id", string()), ("url", uri()), ("avatar_url", uri())],
        &[("display_login", string())],
    );
    let repo = object(&[("id", int()), ("name", string()), ("url", uri())], &[]);
    let watch = object(&[("action", string())], &[]);
    let push = object(&[("repository_id", int()), ("push_id", int()), ("ref", string()), ("head", string()), ("before", string())], &[]);
    let create = object(
        &[("ref", string()), ("ref_type", string()), ("full_ref", string()), ("master_branch", string()), ("pusher_type", string())],
        &[("description", nullable(string()))],
    );
    object(
        &[
            ("id", string()),
            ("type", string()),
            ("actor", actor.clone()),
            ("repo", repo),
            ("payload", json!({ "description": "Shape by `type`: WatchEvent, PushEvent, CreateEvent.", "anyOf": [watch, push, create] })),
            ("public", json!({"type": "boolean"})),
            ("created_at", timestamp()),
        ],
        &[("org", actor)],
    )
}

/// TeamSimple (api-facts §4.6).
fn team_simple() -> Value {
    let int = || json!({"type": "integer"});
    object(
        &[
            ("id", int()),
            ("node_id", string()),
            ("url", uri()),
            ("members_url", string()),
            ("name", string()),
            ("description", nullable(string())),
            ("permission", string()),
            ("html_url", uri()),
            ("repositories_url", uri()),
            ("slug", string()),
            ("type", json!({"type": "string", "enum": ["enterprise", "organization"]})),
        ],
        &[
            ("privacy", string()),
            ("notification_setting", string()),
            ("ldap_dn", string()),
            ("organization_id", int()),
            ("enterprise_id", int()),
        ],
    )
}

fn enterprise_team() -> Value {
    let s = |n: &'static str| (n, string());
    object(
        &[
            ("id", json!({"type": "integer"})),
            s("name"),
            s("slug"),
            ("url", uri()),
            ("html_url", uri()),
            s("members_url"),
            ("group_id", nullable(string())),
            ("created_at", timestamp()),
            ("updated_at", timestamp()),
        ],
        &[
            s("description"),
            s("sync_to_organizations"),
            s("organization_selection_type"),
            ("group_name", nullable(string())),
            ("notification_setting", json!({"type": "string", "enum": ["notifications_enabled", "notifications_disabled"]})),
        ],
    )
}

fn int() -> Value {
    json!({"type": "integer"})
}

fn boolean() -> Value {
    json!({"type": "boolean"})
}

fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

fn workflow_run() -> Value {
    let person = object(&[("name", string()), ("email", string())], &[]);
    let pr_ref =
        object(&[("ref", string()), ("sha", string()), ("repo", object(&[("id", int()), ("url", uri()), ("name", string())], &[]))], &[]);
    let pull_request = object(&[("id", int()), ("number", int()), ("url", uri()), ("head", pr_ref.clone()), ("base", pr_ref)], &[]);
    let head_commit = object(
        &[
            ("id", string()),
            ("tree_id", string()),
            ("message", string()),
            ("timestamp", timestamp()),
            ("author", person.clone()),
            ("committer", person),
        ],
        &[],
    );
    let mut req: Vec<(&str, Value)> = vec![
        ("id", int()),
        ("name", string()),
        ("node_id", string()),
        ("head_branch", string()),
        ("head_sha", string()),
        ("path", string()),
        ("run_number", int()),
        ("event", string()),
        ("display_title", string()),
        ("status", string()),
        ("conclusion", nullable(string())),
        ("workflow_id", int()),
        ("pull_requests", array(pull_request)),
        ("created_at", timestamp()),
        ("updated_at", timestamp()),
        ("head_commit", head_commit),
        ("repository", r("MinimalRepository")),
        ("head_repository", r("MinimalRepository")),
    ];
    for k in ["url", "html_url", "jobs_url", "logs_url", "check_suite_url", "artifacts_url", "cancel_url", "rerun_url", "workflow_url"] {
        req.push((k, uri()));
    }
    let refs = nullable(array(object(&[("path", string()), ("sha", string())], &[("ref", string())])));
    object(
        &req,
        &[
            ("check_suite_id", int()),
            ("check_suite_node_id", string()),
            ("run_attempt", int()),
            ("referenced_workflows", refs),
            ("previous_attempt_url", nullable(uri())),
            ("run_started_at", timestamp()),
            ("actor", r("SimpleUser")),
            ("triggering_actor", r("SimpleUser")),
            ("head_repository_id", int()),
        ],
    )
}

fn job() -> Value {
    let step = object(
        &[("name", string()), ("status", string()), ("conclusion", nullable(string())), ("number", int())],
        &[("started_at", nullable(timestamp())), ("completed_at", nullable(timestamp()))],
    );
    object(
        &[
            ("id", int()),
            ("run_id", int()),
            ("run_url", uri()),
            ("node_id", string()),
            ("head_sha", string()),
            ("url", uri()),
            ("html_url", nullable(uri())),
            ("status", string()),
            ("conclusion", nullable(string())),
            ("created_at", timestamp()),
            ("started_at", timestamp()),
            ("completed_at", nullable(timestamp())),
            ("name", string()),
            ("check_run_url", uri()),
            ("labels", array(string())),
            ("runner_id", nullable(int())),
            ("runner_name", nullable(string())),
            ("runner_group_id", nullable(int())),
            ("runner_group_name", nullable(string())),
            ("workflow_name", nullable(string())),
            ("head_branch", nullable(string())),
        ],
        &[("run_attempt", int()), ("steps", array(step))],
    )
}

fn environment_ref(timestamps: bool) -> Value {
    let mut opt: Vec<(&str, Value)> = vec![("id", int()), ("node_id", string()), ("name", string()), ("url", uri()), ("html_url", uri())];
    if timestamps {
        opt.push(("created_at", timestamp()));
        opt.push(("updated_at", timestamp()));
    }
    object(&[], &opt)
}

fn deployment_team() -> Value {
    let mut req: Vec<(&str, Value)> =
        vec![("id", int()), ("node_id", string()), ("url", uri()), ("html_url", uri()), ("name", string()), ("slug", string())];
    req.push(("description", nullable(string())));
    req.push(("permission", string()));
    req.push(("members_url", string()));
    req.push(("repositories_url", uri()));
    req.push(("parent", json!({})));
    object(&req, &[("privacy", string()), ("notification_setting", string()), ("type", string())])
}

fn pending_deployment() -> Value {
    let reviewer = object(
        &[],
        &[
            ("type", json!({"type": "string", "enum": ["User", "Team"]})),
            ("reviewer", json!({"anyOf": [r("SimpleUser"), r("DeploymentTeam")]})),
        ],
    );
    object(
        &[
            ("environment", environment_ref(false)),
            ("wait_timer", int()),
            ("wait_timer_started_at", timestamp()),
            ("current_user_can_approve", boolean()),
            ("reviewers", array(reviewer)),
        ],
        &[],
    )
}

fn deployment() -> Value {
    object(
        &[
            ("url", uri()),
            ("id", int()),
            ("node_id", string()),
            ("sha", string()),
            ("ref", string()),
            ("task", string()),
            ("payload", json!({"anyOf": [{"type": "object"}, {"type": "string"}]})),
            ("environment", string()),
            ("description", string()),
            ("creator", r("SimpleUser")),
            ("created_at", timestamp()),
            ("updated_at", timestamp()),
            ("statuses_url", uri()),
            ("repository_url", uri()),
        ],
        &[("original_environment", string()), ("transient_environment", boolean()), ("production_environment", boolean())],
    )
}

fn environment_approval() -> Value {
    object(
        &[
            ("environments", array(environment_ref(true))),
            ("state", json!({"type": "string", "enum": ["approved", "rejected", "pending"]})),
            ("user", r("SimpleUser")),
            ("comment", string()),
        ],
        &[],
    )
}

fn workflow_run_usage() -> Value {
    let os =
        object(&[("total_ms", int()), ("jobs", int())], &[("job_runs", array(object(&[("job_id", int()), ("duration_ms", int())], &[])))]);
    let billable = object(&[], &[("UBUNTU", os.clone()), ("MACOS", os.clone()), ("WINDOWS", os)]);
    object(&[("billable", billable)], &[("run_duration_ms", int())])
}

fn import() -> Value {
    let status = [
        "auth",
        "error",
        "none",
        "detecting",
        "choose",
        "auth_failed",
        "importing",
        "mapping",
        "waiting_to_push",
        "pushing",
        "complete",
        "setup",
        "unknown",
        "detection_found_multiple",
        "detection_found_nothing",
        "detection_needs_auth",
    ];
    let choice = object(&[], &[("vcs", string()), ("tfvc_project", string()), ("human_name", string())]);
    object(
        &[
            ("vcs", nullable(string())),
            ("vcs_url", string()),
            ("status", json!({"type": "string", "enum": status})),
            ("url", uri()),
            ("html_url", uri()),
            ("authors_url", uri()),
            ("repository_url", uri()),
        ],
        &[
            ("use_lfs", boolean()),
            ("svc_root", string()),
            ("svn_root", string()),
            ("tfvc_project", string()),
            ("status_text", string()),
            ("failed_step", string()),
            ("error_message", string()),
            ("import_percent", int()),
            ("commit_count", int()),
            ("push_percent", int()),
            ("has_large_files", boolean()),
            ("large_files_size", int()),
            ("large_files_count", int()),
            ("project_choices", array(choice)),
            ("message", string()),
            ("authors_count", int()),
        ],
    )
}

fn porter_author() -> Value {
    object(
        &[
            ("id", int()),
            ("remote_id", string()),
            ("remote_name", string()),
            ("email", string()),
            ("name", string()),
            ("url", uri()),
            ("import_url", uri()),
        ],
        &[],
    )
}

/// Insights rows with the two counts and the two times (api-facts §4.17): no field is marked
/// required.
fn insights_row(fields: &[(&str, Value)]) -> Value {
    let mut all = fields.to_vec();
    all.extend([
        ("total_request_count", int()),
        ("rate_limited_request_count", int()),
        ("last_request_timestamp", timestamp()),
        ("last_rate_limited_timestamp", nullable(timestamp())),
    ]);
    object(&[], &all)
}

/// `components.schemas`.
/// The hand-written components (the shapes not typed yet); the typed ones they name are
/// registered in `g`.
pub fn components(g: &mut schemars::SchemaGenerator) -> Value {
    crate::shape::schema_of::<crate::shapes::SimpleUser>(g);
    crate::shape::schema_of::<crate::shapes::MinimalRepository>(g);
    let bucket = object(
        &[
            ("limit", json!({"type": "integer"})),
            ("remaining", json!({"type": "integer"})),
            ("reset", json!({"type": "integer"})),
            ("used", json!({"type": "integer"})),
        ],
        &[],
    );
    // Pairs, not one `json!` map: that many entries exceed the macro's recursion limit.
    let schemas: Vec<(&str, Value)> = vec![
        ("Authorization", authorization()),
        ("RateLimitBucket", bucket),
        ("RateLimitOverview", rate_limit_overview()),
        ("Root", root()),
        ("Thread", thread()),
        ("ThreadSubscription", thread_subscription()),
        ("NotificationsMarkAccepted", object(&[("message", string())], &[])),
        ("Event", event()),
        ("BasicError", basic_error()),
        ("ValidationError", validation_error()),
        ("TeamSimple", team_simple()),
        ("Empty", json!({"type": "object"})),
        ("EnterpriseTeam", enterprise_team()),
        ("ContentExclusionRules", json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}})),
        ("ContentExclusionSet", object(&[("message", string())], &[])),
        ("WorkflowRun", workflow_run()),
        ("WorkflowRunList", object(&[("total_count", int()), ("workflow_runs", array(r("WorkflowRun")))], &[])),
        ("Job", job()),
        ("JobList", object(&[("total_count", int()), ("jobs", array(r("Job")))], &[])),
        ("DeploymentTeam", deployment_team()),
        ("PendingDeployment", pending_deployment()),
        ("Deployment", deployment()),
        ("EnvironmentApproval", environment_approval()),
        ("WorkflowRunUsage", workflow_run_usage()),
        ("Import", import()),
        ("PorterAuthor", porter_author()),
        ("LargeFile", object(&[("ref_name", string()), ("path", string()), ("oid", string()), ("size", int())], &[])),
        ("ApiInsightsRouteStats", insights_row(&[("http_method", string()), ("api_route", string())])),
        ("ApiInsightsSubjectStats", insights_row(&[("subject_type", string()), ("subject_name", string()), ("subject_id", int())])),
        ("ApiInsightsSummaryStats", object(&[], &[("total_request_count", int()), ("rate_limited_request_count", int())])),
        (
            "ApiInsightsTimeStats",
            object(&[], &[("timestamp", timestamp()), ("total_request_count", int()), ("rate_limited_request_count", int())]),
        ),
        (
            "ApiInsightsUserStats",
            insights_row(&[
                ("actor_type", string()),
                ("actor_name", string()),
                ("actor_id", int()),
                ("integration_id", nullable(int())),
                ("oauth_application_id", nullable(int())),
            ]),
        ),
    ];
    Value::Object(schemas.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
