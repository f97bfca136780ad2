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
    // Named by the error responses and by operations of other features.
    crate::shape::schema_of::<crate::error::BasicError>(g);
    crate::shape::schema_of::<crate::error::ValidationError>(g);
    crate::shape::schema_of::<crate::shapes::Empty>(g);
    // Pairs, not one `json!` map: that many entries exceed the macro's recursion limit.
    let schemas: Vec<(&str, Value)> = vec![
        ("OrgHook", org_hook()),
        ("WebhookConfig", webhook_config()),
        ("HookDeliveryItem", hook_delivery_item()),
        ("HookDelivery", hook_delivery()),
        ("DepbotAlert", depbot_alert(false)),
        ("DepbotAlertWithRepository", depbot_alert(true)),
        ("RulesetSummary", object(&ruleset_summary_fields(), &[])),
        ("Ruleset", ruleset()),
        ("BranchRule", branch_rule()),
        ("RulesetVersion", object(&ruleset_version_fields(), &[])),
        ("RulesetVersionWithState", ruleset_version_with_state()),
        ("PublicKey", object(&[("key_id", string()), ("key", string())], &[])),
        ("DevenvSecret", devenv_secret()),
        ("DevenvSecretList", wrapped("secrets", "DevenvSecret")),
        ("RegistryConfig", registry_config()),
        ("RegistryConfigList", wrapped("configurations", "RegistryConfig")),
    ];
    Value::Object(schemas.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
