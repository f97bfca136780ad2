//! The ruleset body (document 2's create table, api-facts §4.14–4.15): one declaration of every
//! rule type and parameter, from which both the validation and the published JSON Schema come.
//! Validation normalizes: known fields only, defaults filled in, so what is stored and returned
//! is exactly what was accepted.
use serde_json::{json, Map, Value};

use super::UpdateRuleset;
use crate::error::{ApiError, ApiResult};

pub const TARGETS: [&str; 3] = ["branch", "tag", "push"];
pub const ENFORCEMENTS: [&str; 3] = ["disabled", "active", "evaluate"];
const ACTOR_TYPES: [&str; 6] = ["Integration", "OrganizationAdmin", "RepositoryRole", "Team", "DeployKey", "User"];
/// Actor types whose `actor_id` is required.
const ID_ACTORS: [&str; 4] = ["Integration", "RepositoryRole", "Team", "User"];
const BYPASS_MODES: [&str; 3] = ["always", "pull_request", "exempt"];
const MAX_NAME: usize = 255;
const ID_MAX: i64 = i64::MAX;

#[derive(Clone, Copy)]
enum Kind {
    Bool,
    /// An integer within the inclusive range.
    Int(i64, i64),
    Str,
    Enum(&'static [&'static str]),
    StrArray,
    /// A non-empty array of values from the list.
    EnumArray(&'static [&'static str]),
    Object(&'static [P]),
    ObjArray(&'static [P]),
}

/// A parameter: name, kind, required.
#[derive(Clone, Copy)]
struct P(&'static str, Kind, bool);

const fn req(name: &'static str, kind: Kind) -> P {
    P(name, kind, true)
}
const fn opt(name: &'static str, kind: Kind) -> P {
    P(name, kind, false)
}

const ID: Kind = Kind::Int(1, ID_MAX);
const PATTERN: &[P] = &[
    opt("name", Kind::Str),
    opt("negate", Kind::Bool),
    req("operator", Kind::Enum(&["starts_with", "ends_with", "contains", "regex"])),
    req("pattern", Kind::Str),
];

/// Rule types and their parameters (`None`: the rule takes none).
const RULES: &[(&str, Option<&[P]>)] = &[
    ("creation", None),
    ("update", Some(&[req("update_allows_fetch_and_merge", Kind::Bool)])),
    ("deletion", None),
    ("required_linear_history", None),
    ("required_signatures", None),
    ("non_fast_forward", None),
    ("license_compliance_scanning", None),
    (
        "merge_queue",
        Some(&[
            req("check_response_timeout_minutes", Kind::Int(1, 360)),
            req("grouping_strategy", Kind::Enum(&["ALLGREEN", "HEADGREEN"])),
            req("max_entries_to_build", Kind::Int(0, 100)),
            req("max_entries_to_merge", Kind::Int(0, 100)),
            req("merge_method", Kind::Enum(&["MERGE", "SQUASH", "REBASE"])),
            req("min_entries_to_merge", Kind::Int(0, 100)),
            req("min_entries_to_merge_wait_minutes", Kind::Int(0, 360)),
        ]),
    ),
    ("required_deployments", Some(&[req("required_deployment_environments", Kind::StrArray)])),
    (
        "pull_request",
        Some(&[
            opt("allowed_merge_methods", Kind::EnumArray(&["merge", "squash", "rebase"])),
            req("dismiss_stale_reviews_on_push", Kind::Bool),
            opt(
                "dismissal_restriction",
                Kind::Object(&[
                    req("enabled", Kind::Bool),
                    opt(
                        "allowed_actors",
                        Kind::ObjArray(&[
                            req("id", ID),
                            req("type", Kind::Enum(&["User", "Team", "IntegrationInstallation", "RepositoryRole"])),
                        ]),
                    ),
                ]),
            ),
            req("require_code_owner_review", Kind::Bool),
            req("require_last_push_approval", Kind::Bool),
            req("required_approving_review_count", Kind::Int(0, 10)),
            req("required_review_thread_resolution", Kind::Bool),
            opt(
                "required_reviewers",
                Kind::ObjArray(&[
                    req("file_patterns", Kind::StrArray),
                    req("minimum_approvals", Kind::Int(0, ID_MAX)),
                    req("reviewer", Kind::Object(&[req("id", ID), req("type", Kind::Enum(&["Team"]))])),
                ]),
            ),
        ]),
    ),
    (
        "required_status_checks",
        Some(&[
            opt("do_not_enforce_on_create", Kind::Bool),
            req("required_status_checks", Kind::ObjArray(&[req("context", Kind::Str), opt("integration_id", ID)])),
            req("strict_required_status_checks_policy", Kind::Bool),
        ]),
    ),
    ("commit_message_pattern", Some(PATTERN)),
    ("commit_author_email_pattern", Some(PATTERN)),
    ("committer_email_pattern", Some(PATTERN)),
    ("branch_name_pattern", Some(PATTERN)),
    ("tag_name_pattern", Some(PATTERN)),
    (
        "workflows",
        Some(&[
            opt("do_not_enforce_on_create", Kind::Bool),
            req(
                "workflows",
                Kind::ObjArray(&[req("path", Kind::Str), req("repository_id", ID), opt("ref", Kind::Str), opt("sha", Kind::Str)]),
            ),
        ]),
    ),
    (
        "code_scanning",
        Some(&[req(
            "code_scanning_tools",
            Kind::ObjArray(&[
                req("tool", Kind::Str),
                req("alerts_threshold", Kind::Enum(&["none", "errors", "errors_and_warnings", "all"])),
                req("security_alerts_threshold", Kind::Enum(&["none", "critical", "high_or_higher", "medium_or_higher", "all"])),
            ]),
        )]),
    ),
    ("assistant_code_review", Some(&[opt("review_draft_pull_requests", Kind::Bool), opt("review_on_push", Kind::Bool)])),
    ("file_path_restriction", Some(&[req("restricted_file_paths", Kind::StrArray)])),
    ("max_file_path_length", Some(&[req("max_file_path_length", Kind::Int(1, 32767))])),
    ("file_extension_restriction", Some(&[req("restricted_file_extensions", Kind::StrArray)])),
    ("max_file_size", Some(&[req("max_file_size", Kind::Int(1, 100))])),
];

// ------------------------------------------------------------------ validation

/// 422 `Invalid request.` for a missing or mistyped value at `path`.
fn malformed(path: &str, detail: impl std::fmt::Display) -> ApiError {
    ApiError::invalid_request(format!("Invalid property {path}: {detail}"))
}

/// 422 `Validation Failed` for a well-typed value the rules refuse.
fn refused(path: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid_field("Ruleset", path, "invalid", Some(message.into()))
}

fn object<'a>(v: &'a Value, path: &str) -> ApiResult<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| malformed(path, format!("{v} is not an object.")))
}

fn array<'a>(v: &'a Value, path: &str) -> ApiResult<&'a Vec<Value>> {
    v.as_array().ok_or_else(|| malformed(path, format!("{v} is not an array.")))
}

fn string<'a>(v: &'a Value, path: &str) -> ApiResult<&'a str> {
    v.as_str().ok_or_else(|| malformed(path, format!("{v} is not a string.")))
}

fn one_of<'a>(v: &'a Value, path: &str, allowed: &[&str]) -> ApiResult<&'a str> {
    member(string(v, path)?, path, allowed)
}

fn member<'a>(s: &'a str, path: &str, allowed: &[&str]) -> ApiResult<&'a str> {
    if !allowed.contains(&s) {
        return Err(refused(path, format!("{path} must be one of {}, not {s:?}", allowed.join(", "))));
    }
    Ok(s)
}

fn string_array(v: &Value, path: &str) -> ApiResult<Vec<String>> {
    array(v, path)?.iter().enumerate().map(|(i, x)| string(x, &format!("{path}/{i}")).map(str::to_string)).collect()
}

fn check(kind: Kind, v: &Value, path: &str) -> ApiResult<Value> {
    match kind {
        Kind::Bool => v.as_bool().map(Value::Bool).ok_or_else(|| malformed(path, format!("{v} is not a boolean."))),
        Kind::Int(lo, hi) => {
            let n = v.as_i64().ok_or_else(|| malformed(path, format!("{v} is not an integer.")))?;
            if n < lo || n > hi {
                return Err(refused(path, format!("{path} must be between {lo} and {hi}, not {n}")));
            }
            Ok(json!(n))
        }
        Kind::Str => string(v, path).map(|s| json!(s)),
        Kind::Enum(allowed) => one_of(v, path, allowed).map(|s| json!(s)),
        Kind::StrArray => string_array(v, path).map(|a| json!(a)),
        Kind::EnumArray(allowed) => {
            let items = array(v, path)?;
            if items.is_empty() {
                return Err(refused(path, format!("{path} must name at least one of {}", allowed.join(", "))));
            }
            let out: ApiResult<Vec<&str>> = items.iter().enumerate().map(|(i, x)| one_of(x, &format!("{path}/{i}"), allowed)).collect();
            Ok(json!(out?))
        }
        Kind::Object(params) => fields(params, object(v, path)?, path).map(Value::Object),
        Kind::ObjArray(params) => {
            let items = array(v, path)?;
            let out: ApiResult<Vec<Value>> = items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let p = format!("{path}/{i}");
                    fields(params, object(x, &p)?, &p).map(Value::Object)
                })
                .collect();
            Ok(Value::Array(out?))
        }
    }
}

/// The declared fields of an object, checked; unknown fields are dropped.
fn fields(params: &[P], o: &Map<String, Value>, path: &str) -> ApiResult<Map<String, Value>> {
    let mut out = Map::new();
    for P(name, kind, required) in params {
        let p = format!("{path}/{name}");
        match o.get(*name) {
            None if *required => return Err(malformed(&p, "required but not supplied.")),
            None => {}
            Some(v) => {
                out.insert(name.to_string(), check(*kind, v, &p)?);
            }
        }
    }
    Ok(out)
}

fn rule(v: &Value, path: &str) -> ApiResult<Value> {
    let o = object(v, path)?;
    let tp = format!("{path}/type");
    let ty = string(o.get("type").ok_or_else(|| malformed(&tp, "required but not supplied."))?, &tp)?;
    let Some((_, spec)) = RULES.iter().find(|(name, _)| *name == ty) else {
        return Err(refused(&tp, format!("{ty:?} is not a rule type")));
    };
    let Some(params) = spec else { return Ok(json!({ "type": ty })) };
    let pp = format!("{path}/parameters");
    let given = o.get("parameters").ok_or_else(|| malformed(&pp, "required but not supplied."))?;
    let params = fields(params, object(given, &pp)?, &pp)?;
    if params.get("operator").and_then(Value::as_str) == Some("regex") {
        let pattern = params.get("pattern").and_then(Value::as_str).unwrap_or_default();
        if let Err(e) = regex_syntax::Parser::new().parse(pattern) {
            return Err(refused(&format!("{pp}/pattern"), format!("{pattern:?} is not a valid regular expression: {e}")));
        }
    }
    Ok(json!({ "type": ty, "parameters": params }))
}

/// Where a ruleset lives: bypass actors and conditions differ.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// A repository owned by an organization.
    OrgRepository,
    /// A repository owned by a user (`OrganizationAdmin` does not apply).
    UserRepository,
    Organization,
}

fn bypass_actor(v: &Value, path: &str, source: Source, target: &str) -> ApiResult<Value> {
    let o = object(v, path)?;
    let tp = format!("{path}/actor_type");
    let ty = one_of(o.get("actor_type").ok_or_else(|| malformed(&tp, "required but not supplied."))?, &tp, &ACTOR_TYPES)?;
    let mp = format!("{path}/bypass_mode");
    let mode = match o.get("bypass_mode") {
        None => "always",
        Some(m) => one_of(m, &mp, &BYPASS_MODES)?,
    };
    let ip = format!("{path}/actor_id");
    let id = match (ty, o.get("actor_id")) {
        (_, Some(v)) if !v.is_null() && !v.is_i64() => return Err(malformed(&ip, format!("{v} is not an integer or null."))),
        ("OrganizationAdmin", _) => json!(1), // the id is ignored; the platform shows 1
        ("DeployKey", None | Some(Value::Null)) => Value::Null,
        ("DeployKey", Some(_)) => return Err(refused(&ip, "actor_id must be null for DeployKey")),
        (_, None | Some(Value::Null)) => return Err(malformed(&ip, format!("required for actor_type {ty}."))),
        (_, Some(v)) => check(ID, v, &ip)?,
    };
    debug_assert!(ty == "OrganizationAdmin" || ty == "DeployKey" || ID_ACTORS.contains(&ty));
    if ty == "OrganizationAdmin" && source == Source::UserRepository {
        return Err(refused(&tp, "OrganizationAdmin does not apply to repositories owned by a user"));
    }
    if mode == "pull_request" && ty == "DeployKey" {
        return Err(refused(&mp, "bypass_mode pull_request does not apply to DeployKey"));
    }
    if mode == "pull_request" && target != "branch" {
        return Err(refused(&mp, format!("bypass_mode pull_request applies only to branch rulesets, not {target}")));
    }
    Ok(json!({ "actor_id": id, "actor_type": ty, "bypass_mode": mode }))
}

fn include_exclude(v: &Value, path: &str) -> ApiResult<Map<String, Value>> {
    let o = object(v, path)?;
    let mut out = Map::new();
    for key in ["include", "exclude"] {
        let list = match o.get(key) {
            None => Vec::new(),
            Some(a) => string_array(a, &format!("{path}/{key}"))?,
        };
        out.insert(key.into(), json!(list));
    }
    Ok(out)
}

fn conditions(v: &Value, source: Source) -> ApiResult<Value> {
    let o = object(v, "/conditions")?;
    let mut out = Map::new();
    if let Some(r) = o.get("ref_name") {
        out.insert("ref_name".into(), Value::Object(include_exclude(r, "/conditions/ref_name")?));
    }
    if source != Source::Organization {
        return Ok(Value::Object(out));
    }
    // Organization rulesets choose their repositories by name or by id.
    match (o.get("repository_name").filter(|x| !x.is_null()), o.get("repository_id").filter(|x| !x.is_null())) {
        (Some(n), None) => {
            let path = "/conditions/repository_name";
            let mut m = include_exclude(n, path)?;
            let protected = match object(n, path)?.get("protected") {
                None | Some(Value::Null) => false,
                Some(p) => p.as_bool().ok_or_else(|| malformed(&format!("{path}/protected"), format!("{p} is not a boolean.")))?,
            };
            m.insert("protected".into(), json!(protected));
            out.insert("repository_name".into(), Value::Object(m));
        }
        (None, Some(i)) => {
            let path = "/conditions/repository_id";
            let ids = match object(i, path)?.get("repository_ids") {
                None | Some(Value::Null) => json!([]),
                Some(a) => {
                    let items = array(a, &format!("{path}/repository_ids"))?;
                    let ids: ApiResult<Vec<Value>> =
                        items.iter().enumerate().map(|(k, x)| check(ID, x, &format!("{path}/repository_ids/{k}"))).collect();
                    Value::Array(ids?)
                }
            };
            out.insert("repository_id".into(), json!({ "repository_ids": ids }));
        }
        _ => return Err(refused("/conditions", "organization rulesets need exactly one of repository_name or repository_id")),
    }
    Ok(Value::Object(out))
}

/// Validates a create body (`current`: none) or an update body over the current definition
/// (every field optional; the ones not given keep their value). Returns the normalized
/// definition: `{name, target, enforcement, bypass_actors, conditions, rules}`.
pub(super) fn definition(body: &UpdateRuleset, current: Option<&Value>, source: Source) -> ApiResult<Value> {
    // Explicit nulls are not values of any of these fields (the published schema says so too;
    // the body's checks refuse them for `target` and `enforcement`).
    let sent = [("name", &body.name), ("bypass_actors", &body.bypass_actors), ("conditions", &body.conditions), ("rules", &body.rules)];
    if let Some((k, _)) = sent.iter().find(|(_, v)| v.as_ref().is_some_and(Value::is_null)) {
        return Err(malformed(&format!("/{k}"), "null is not allowed."));
    }
    // A field not sent keeps its current value.
    let current = |k: &str| current.and_then(|c| c.get(k)).filter(|v| !v.is_null());
    let name = match body.name.as_ref().or_else(|| current("name")) {
        Some(n) => string(n, "/name")?,
        None => return Err(ApiError::invalid_request("\"name\" wasn't supplied.")),
    };
    if name.trim().is_empty() || name.chars().count() > MAX_NAME {
        return Err(refused("/name", format!("name must be 1 to {MAX_NAME} characters and not blank")));
    }
    let target = body.target.as_deref().map(Ok).or_else(|| current("target").map(|v| string(v, "/target")));
    let target = match target.transpose()? {
        Some(t) => member(t, "/target", &TARGETS)?,
        None => "branch",
    };
    let enforcement = body.enforcement.as_deref().map(Ok).or_else(|| current("enforcement").map(|v| string(v, "/enforcement")));
    let enforcement = match enforcement.transpose()? {
        Some(e) => member(e, "/enforcement", &ENFORCEMENTS)?,
        None => return Err(ApiError::invalid_request("\"enforcement\" wasn't supplied.")),
    };
    // Bypass actors are checked against the resulting target, also when only the target changes.
    let bypass_actors = match body.bypass_actors.as_ref().or_else(|| current("bypass_actors")) {
        Some(a) => {
            let items = array(a, "/bypass_actors")?;
            let out: ApiResult<Vec<Value>> =
                items.iter().enumerate().map(|(i, x)| bypass_actor(x, &format!("/bypass_actors/{i}"), source, target)).collect();
            Value::Array(out?)
        }
        None => json!([]),
    };
    let conditions = match body.conditions.as_ref().or_else(|| current("conditions")) {
        Some(c) => conditions(c, source)?,
        None if source == Source::Organization => conditions(&json!({}), source)?,
        None => Value::Null,
    };
    let rules = match body.rules.as_ref().or_else(|| current("rules")) {
        Some(r) => {
            let items = array(r, "/rules")?;
            let out: ApiResult<Vec<Value>> = items.iter().enumerate().map(|(i, x)| rule(x, &format!("/rules/{i}"))).collect();
            Value::Array(out?)
        }
        None => json!([]),
    };
    Ok(json!({
        "name": name, "target": target, "enforcement": enforcement,
        "bypass_actors": bypass_actors, "conditions": conditions, "rules": rules,
    }))
}

// ------------------------------------------------------------------ published schemas

fn kind_schema(kind: Kind) -> Value {
    match kind {
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Int(lo, hi) => json!({"type": "integer", "minimum": lo, "maximum": hi}),
        Kind::Str => json!({"type": "string"}),
        Kind::Enum(values) => json!({"type": "string", "enum": values}),
        Kind::StrArray => json!({"type": "array", "items": {"type": "string"}}),
        Kind::EnumArray(values) => json!({"type": "array", "minItems": 1, "items": {"type": "string", "enum": values}}),
        Kind::Object(params) => object_schema(params),
        Kind::ObjArray(params) => json!({"type": "array", "items": object_schema(params)}),
    }
}

fn object_schema(params: &[P]) -> Value {
    let props: Map<String, Value> = params.iter().map(|P(n, k, _)| (n.to_string(), kind_schema(*k))).collect();
    let required: Vec<&str> = params.iter().filter(|p| p.2).map(|p| p.0).collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// One rule: an object whose `type` selects its parameters.
pub fn rule_schema() -> Value {
    let variants: Vec<Value> = RULES
        .iter()
        .map(|(name, params)| match params {
            None => json!({"type": "object", "properties": {"type": {"const": name}}, "required": ["type"]}),
            Some(p) => json!({"type": "object", "properties": {"type": {"const": name}, "parameters": object_schema(p)}, "required": ["type", "parameters"]}),
        })
        .collect();
    json!({"anyOf": variants})
}

pub fn rules_schema() -> Value {
    json!({"type": "array", "items": rule_schema()})
}

pub fn bypass_actors_schema() -> Value {
    let with_id: Vec<&str> = ID_ACTORS.to_vec();
    json!({"type": "array", "items": {"anyOf": [
        {"type": "object", "required": ["actor_type", "actor_id"], "properties": {
            "actor_type": {"type": "string", "enum": with_id}, "actor_id": kind_schema(ID),
            "bypass_mode": {"type": "string", "enum": BYPASS_MODES}}},
        {"type": "object", "required": ["actor_type"], "properties": {
            "actor_type": {"const": "OrganizationAdmin"}, "actor_id": {"type": ["integer", "null"]},
            "bypass_mode": {"type": "string", "enum": BYPASS_MODES}}},
        {"type": "object", "required": ["actor_type"], "properties": {
            "actor_type": {"const": "DeployKey"}, "actor_id": {"type": "null"},
            "bypass_mode": {"type": "string", "enum": ["always", "exempt"]}}},
    ]}})
}

fn include_exclude_schema() -> Value {
    let list = json!({"type": "array", "items": {"type": "string"}});
    json!({"type": "object", "properties": {"include": list, "exclude": list}})
}

pub fn conditions_schema() -> Value {
    json!({"type": "object", "properties": {"ref_name": include_exclude_schema()}})
}

pub fn name_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_NAME, "pattern": "\\S"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_refuses() {
        let d = definition(
            &serde_json::from_value(json!({"name": "n", "enforcement": "active", "extra": 1,
                    "bypass_actors": [{"actor_type": "OrganizationAdmin"}],
                    "rules": [{"type": "deletion", "parameters": {"x": 1}}, {"type": "update", "parameters": {"update_allows_fetch_and_merge": true, "y": 2}}]}))
            .unwrap(),
            None,
            Source::OrgRepository,
        )
        .unwrap();
        assert_eq!(d["target"], "branch");
        assert_eq!(d["bypass_actors"][0], json!({"actor_id": 1, "actor_type": "OrganizationAdmin", "bypass_mode": "always"}));
        assert_eq!(d["rules"], json!([{"type": "deletion"}, {"type": "update", "parameters": {"update_allows_fetch_and_merge": true}}]));
        assert!(d["conditions"].is_null());
        let bad = |b: Value| definition(&serde_json::from_value(b).unwrap(), None, Source::UserRepository).unwrap_err().message.to_string();
        assert!(bad(json!({"enforcement": "active"})).contains("\"name\""));
        assert_eq!(bad(json!({"name": "n", "enforcement": "on"})), "Validation Failed");
        assert_eq!(
            bad(json!({"name": "n", "enforcement": "active", "bypass_actors": [{"actor_type": "OrganizationAdmin"}]})),
            "Validation Failed"
        );
        let regex = json!({"name": "n", "enforcement": "active", "rules": [{"type": "commit_message_pattern", "parameters": {"operator": "regex", "pattern": "("}}]});
        assert_eq!(bad(regex), "Validation Failed");
    }

    #[test]
    fn schemas_cover_every_rule() {
        assert_eq!(rule_schema()["anyOf"].as_array().unwrap().len(), RULES.len());
    }
}
