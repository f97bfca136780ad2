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

fn webhook_config() -> Value {
    let insecure = json!({"anyOf": [{"type": "string"}, {"type": "number"}]});
    object(&[], &[("url", uri()), ("content_type", string()), ("secret", string()), ("insecure_ssl", insecure)])
}

fn org_hook() -> Value {
    object(
        &[
            ("id", json!({"type": "integer"})),
            ("url", uri()),
            ("ping_url", uri()),
            ("name", string()),
            ("events", json!({"type": "array", "items": string()})),
            ("active", json!({"type": "boolean"})),
            ("config", r("WebhookConfig")),
            ("updated_at", timestamp()),
            ("created_at", timestamp()),
            ("type", string()),
        ],
        &[("deliveries_url", uri())],
    )
}

fn delivery_item_fields() -> Vec<(&'static str, Value)> {
    let int_or_null = nullable(json!({"type": "integer"}));
    vec![
        ("id", json!({"type": "integer"})),
        ("guid", string()),
        ("delivered_at", timestamp()),
        ("redelivery", json!({"type": "boolean"})),
        ("duration", json!({"type": "number"})),
        ("status", string()),
        ("status_code", json!({"type": "integer"})),
        ("event", string()),
        ("action", nullable(string())),
        ("installation_id", int_or_null.clone()),
        ("repository_id", int_or_null),
    ]
}

fn hook_delivery_item() -> Value {
    object(&delivery_item_fields(), &[("throttled_at", nullable(timestamp()))])
}

fn hook_delivery() -> Value {
    let mut req = delivery_item_fields();
    req.push((
        "request",
        object(&[("headers", nullable(json!({"type": "object"}))), ("payload", nullable(json!({"type": "object"})))], &[]),
    ));
    req.push(("response", object(&[("headers", nullable(json!({"type": "object"}))), ("payload", nullable(string()))], &[])));
    object(&req, &[("throttled_at", nullable(timestamp())), ("url", string())])
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

/// Dependency alert (api-facts §4.7); `cvss` only in version 2022-11-28. With `repository`
/// for the organization and enterprise lists.
fn depbot_alert(with_repository: bool) -> Value {
    let number = || json!({"type": "number"});
    let package = object(&[("ecosystem", string()), ("name", string())], &[]);
    let vulnerability = object(
        &[
            ("package", package.clone()),
            ("severity", string()),
            ("vulnerable_version_range", string()),
            ("first_patched_version", nullable(object(&[("identifier", string())], &[]))),
        ],
        &[],
    );
    let score = object(&[("vector_string", nullable(string())), ("score", nullable(number()))], &[]);
    let advisory = object(
        &[
            ("advisory_id", string()),
            ("cve_id", nullable(string())),
            ("summary", json!({"type": "string", "maxLength": 1024})),
            ("description", string()),
            ("vulnerabilities", json!({"type": "array", "items": vulnerability.clone()})),
            ("severity", json!({"type": "string", "enum": ["low", "medium", "high", "critical"]})),
            ("cwes", json!({"type": "array", "items": object(&[("cwe_id", string()), ("name", string())], &[])})),
            ("identifiers", json!({"type": "array", "items": object(&[("type", string()), ("value", string())], &[])})),
            ("references", json!({"type": "array", "items": object(&[("url", uri())], &[])})),
            ("published_at", timestamp()),
            ("updated_at", timestamp()),
            ("withdrawn_at", nullable(timestamp())),
        ],
        &[
            ("classification", json!({"type": "string", "enum": ["general", "malware"]})),
            (
                "cvss",
                json!({"description": "Only in API version 2022-11-28.", "type": "object", "required": ["vector_string", "score"],
                            "properties": {"vector_string": nullable(string()), "score": number()}}),
            ),
            ("cvss_severities", nullable(object(&[], &[("cvss_v3", nullable(score.clone())), ("cvss_v4", nullable(score))]))),
            ("epss", nullable(object(&[], &[("percentage", number()), ("percentile", string())]))),
        ],
    );
    let mut req = vec![
        ("number", json!({"type": "integer"})),
        ("state", json!({"type": "string", "enum": ["auto_dismissed", "dismissed", "fixed", "open"]})),
        (
            "dependency",
            object(
                &[("package", package)],
                &[
                    ("manifest_path", string()),
                    ("scope", nullable(json!({"type": "string", "enum": ["development", "runtime"]}))),
                    ("relationship", nullable(json!({"type": "string", "enum": ["unknown", "direct", "transitive", "inconclusive"]}))),
                ],
            ),
        ),
        ("security_advisory", advisory),
        ("security_vulnerability", vulnerability),
        ("url", uri()),
        ("html_url", uri()),
        ("created_at", timestamp()),
        ("updated_at", timestamp()),
        ("dismissed_at", nullable(timestamp())),
        ("dismissed_by", nullable(r("SimpleUser"))),
        (
            "dismissed_reason",
            nullable(json!({"type": "string", "enum": ["fix_started", "inaccurate", "no_bandwidth", "not_used", "tolerable_risk"]})),
        ),
        ("dismissed_comment", nullable(json!({"type": "string", "maxLength": 280}))),
        ("fixed_at", nullable(timestamp())),
    ];
    if with_repository {
        req.push(("repository", r("MinimalRepository")));
    }
    object(&req, &[("auto_dismissed_at", nullable(timestamp())), ("assignees", json!({"type": "array", "items": r("SimpleUser")}))])
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

fn devenv_secret() -> Value {
    object(&[("name", string()), ("created_at", timestamp()), ("updated_at", timestamp())], &[("visibility", string())])
}

fn registry_config() -> Value {
    let mut optional: Vec<(&str, Value)> = vec![
        ("auth_type", string()),
        ("url", uri()),
        ("username", nullable(string())),
        ("replaces_base", json!({"type": "boolean"})),
        ("selected_repository_ids", json!({"type": "array", "items": {"type": "integer"}})),
    ];
    for k in [
        "tenant_id",
        "client_id",
        "cloud_b_region",
        "account_id",
        "role_name",
        "domain",
        "domain_owner",
        "audience",
        "artifact_a_oidc_provider_name",
        "identity_mapping_name",
        "namespace",
        "service_slug",
        "api_host",
        "workload_identity_provider",
        "service_account",
    ] {
        optional.push((k, string()));
    }
    object(
        &[
            ("name", string()),
            ("registry_type", string()),
            ("visibility", json!({"type": "string", "enum": ["all", "private", "selected"]})),
            ("created_at", timestamp()),
            ("updated_at", timestamp()),
        ],
        &optional,
    )
}

fn wrapped(key: &str, item: &str) -> Value {
    object(&[("total_count", json!({"type": "integer"})), (key, json!({"type": "array", "items": r(item)}))], &[])
}

fn ruleset_summary_fields() -> Vec<(&'static str, Value)> {
    let link = object(&[("href", uri())], &[]);
    vec![
        ("id", json!({"type": "integer"})),
        ("name", string()),
        ("source_type", json!({"type": "string", "enum": ["Repository", "Organization"]})),
        ("source", string()),
        ("enforcement", json!({"type": "string", "enum": ["disabled", "active", "evaluate"]})),
        ("node_id", string()),
        ("_links", object(&[("self", link.clone()), ("html", link)], &[])),
        ("created_at", timestamp()),
        ("updated_at", timestamp()),
    ]
}

/// The full ruleset (api-facts §4.14); rules as `crate::ops::rulesets::body` declares them.
fn ruleset() -> Value {
    use crate::ops::rulesets::body;
    let mut req = ruleset_summary_fields();
    req.push(("target", json!({"type": "string", "enum": ["branch", "tag", "push", "repository"]})));
    req.push(("conditions", json!({"type": ["object", "null"]})));
    req.push(("rules", body::rules_schema()));
    object(
        &req,
        &[
            ("bypass_actors", body::bypass_actors_schema()),
            ("current_user_can_bypass", json!({"type": "string", "enum": ["always", "pull_requests_only", "never", "exempt"]})),
        ],
    )
}

fn branch_rule() -> Value {
    let mut rule = crate::ops::rulesets::body::rule_schema();
    rule["type"] = json!("object");
    rule["properties"] = json!({
        "ruleset_source_type": {"type": "string", "enum": ["Repository", "Organization"]},
        "ruleset_source": {"type": "string"},
        "ruleset_id": {"type": "integer"},
    });
    rule["required"] = json!(["type", "ruleset_source_type", "ruleset_source", "ruleset_id"]);
    rule
}

fn ruleset_version_fields() -> Vec<(&'static str, Value)> {
    vec![
        ("version_id", json!({"type": "integer"})),
        ("actor", object(&[("id", json!({"type": "integer"})), ("type", string())], &[])),
        ("updated_at", timestamp()),
    ]
}

fn ruleset_version_with_state() -> Value {
    let mut f = ruleset_version_fields();
    f.push(("state", r("Ruleset")));
    object(&f, &[])
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
        ("OrgHook", org_hook()),
        ("WebhookConfig", webhook_config()),
        ("HookDeliveryItem", hook_delivery_item()),
        ("HookDelivery", hook_delivery()),
        ("TeamSimple", team_simple()),
        ("DepbotAlert", depbot_alert(false)),
        ("DepbotAlertWithRepository", depbot_alert(true)),
        ("RulesetSummary", object(&ruleset_summary_fields(), &[])),
        ("Ruleset", ruleset()),
        ("BranchRule", branch_rule()),
        ("RulesetVersion", object(&ruleset_version_fields(), &[])),
        ("RulesetVersionWithState", ruleset_version_with_state()),
        ("Empty", json!({"type": "object"})),
        ("EnterpriseTeam", enterprise_team()),
        ("PublicKey", object(&[("key_id", string()), ("key", string())], &[])),
        ("DevenvSecret", devenv_secret()),
        ("DevenvSecretList", wrapped("secrets", "DevenvSecret")),
        ("RegistryConfig", registry_config()),
        ("RegistryConfigList", wrapped("configurations", "RegistryConfig")),
        ("ContentExclusionRules", json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}})),
        ("ContentExclusionSet", object(&[("message", string())], &[])),
    ];
    Value::Object(schemas.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
