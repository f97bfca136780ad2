//! Dependency alerts outside the operations: the alert shape, and their creation through the
//! control plane (`POST /_admin/repos/{owner}/{repo}/depbot/alerts`, seed files), one at a time
//! as platform activity, or in bulk for large worlds (benchmarks).
use axum::body::Bytes;
use axum::extract::{Path, State};
use platform_core::time::{format_ts, parse_ts};
use platform_core::ApiVersion;
use platform_store::domain::depbot::{self, Advisory, Alert, NewAlert};
use platform_store::domain::repos::Repo;
use platform_store::Conn;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::ops::hooks::activity::{self, DepbotAlertActivity, Record, Scope};
use crate::ops::provision;
use crate::reply::Reply;
use crate::request::JsonBody;
use crate::shapes::{self, MinimalRepository, SimpleUser, Urls};
use crate::state::{AppState, Shared};
use crate::typed::{Timestamp, Uri};
use crate::versions;

pub const STATES: [&str; 4] = ["auto_dismissed", "dismissed", "fixed", "open"];
pub const SEVERITIES: [&str; 4] = ["low", "medium", "high", "critical"];
pub const ECOSYSTEMS: [&str; 9] = ["composer", "go", "maven", "npm", "nuget", "pip", "pub", "rubygems", "rust"];
pub const CLASSIFICATIONS: [&str; 2] = ["malware", "general"];
pub const SCOPES: [&str; 2] = ["development", "runtime"];
pub const RELATIONSHIPS: [&str; 4] = ["unknown", "direct", "transitive", "inconclusive"];
pub const DISMISSED_REASONS: [&str; 5] = ["fix_started", "inaccurate", "no_bandwidth", "not_used", "tolerable_risk"];

/// DepbotAlert: the Alert of api-facts §4.7. The advisory and vulnerability are stored as JSON
/// (written from these same types, so they read back whole, in their order); the advisory's
/// version-dependent fields are those of `versions`.
#[derive(Serialize, JsonSchema)]
pub struct DepbotAlert {
    pub number: i64,
    #[schemars(extend("enum" = ["auto_dismissed", "dismissed", "fixed", "open"]))]
    pub state: String,
    pub dependency: Dependency,
    pub security_advisory: SecurityAdvisory,
    pub security_vulnerability: SecurityVulnerability,
    pub url: Uri,
    pub html_url: Uri,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub dismissed_at: Option<Timestamp>,
    pub dismissed_by: Option<SimpleUser>,
    #[schemars(extend("enum" = ["fix_started", "inaccurate", "no_bandwidth", "not_used", "tolerable_risk", null]))]
    pub dismissed_reason: Option<String>,
    #[schemars(length(max = 280))]
    pub dismissed_comment: Option<String>,
    pub fixed_at: Option<Timestamp>,
    pub auto_dismissed_at: Option<Timestamp>,
    pub assignees: Vec<SimpleUser>,
}

/// DepbotAlertWithRepository: an alert of the organization and enterprise lists.
#[derive(Serialize, JsonSchema)]
pub struct DepbotAlertWithRepository {
    #[serde(flatten)]
    pub alert: DepbotAlert,
    pub repository: MinimalRepository,
}

/// The vulnerable dependency.
#[derive(Serialize, JsonSchema)]
#[schemars(inline)]
pub struct Dependency {
    pub package: Package,
    pub manifest_path: String,
    #[schemars(extend("enum" = ["development", "runtime", null]))]
    pub scope: Option<String>,
    #[schemars(extend("enum" = ["unknown", "direct", "transitive", "inconclusive", null]))]
    pub relationship: Option<String>,
}

#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Package {
    pub ecosystem: String,
    pub name: String,
}

/// SecurityVulnerability: the vulnerable versions of a package (an alert's, and each of its
/// advisory's).
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SecurityVulnerability {
    pub package: Package,
    pub severity: String,
    pub vulnerable_version_range: String,
    pub first_patched_version: Option<PatchedVersion>,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct PatchedVersion {
    pub identifier: String,
}

/// SecurityAdvisory: an alert's advisory; `cvss` only in version 2022-11-28.
#[derive(Default, Serialize, Deserialize, JsonSchema)]
pub struct SecurityAdvisory {
    pub advisory_id: String,
    pub cve_id: Option<String>,
    #[schemars(length(max = 1024))]
    pub summary: String,
    pub description: String,
    pub vulnerabilities: Vec<SecurityVulnerability>,
    #[schemars(extend("enum" = SEVERITIES))]
    pub severity: String,
    #[schemars(extend("enum" = ["general", "malware"]))]
    pub classification: String,
    /// Only in API version 2022-11-28.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Cvss")]
    pub cvss: Option<Cvss>,
    pub cvss_severities: Option<CvssSeverities>,
    pub epss: Option<Epss>,
    pub cwes: Vec<Cwe>,
    pub identifiers: Vec<Identifier>,
    pub references: Vec<Reference>,
    #[schemars(with = "Timestamp")]
    pub published_at: String,
    #[schemars(with = "Timestamp")]
    pub updated_at: String,
    #[schemars(with = "Option<Timestamp>")]
    pub withdrawn_at: Option<String>,
}

/// The score of version 2022-11-28's `cvss`.
#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Cvss {
    pub vector_string: Option<String>,
    pub score: f64,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct CvssSeverities {
    pub cvss_v3: Option<CvssScore>,
    pub cvss_v4: Option<CvssScore>,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct CvssScore {
    pub vector_string: Option<String>,
    pub score: Option<f64>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Epss {
    pub percentage: f64,
    /// A string, as the spec gives it.
    pub percentile: String,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Cwe {
    pub cwe_id: String,
    pub name: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Identifier {
    #[serde(rename = "type")]
    pub kind: String,
    pub value: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Reference {
    #[schemars(extend("format" = "uri"))]
    pub url: String,
}

pub fn depbot_alert(u: &Urls, v: ApiVersion, repo: &Repo, a: &Alert) -> DepbotAlert {
    // Written by `advisory` and `create_alert` below from these types; a row that does not
    // read (none is written) renders empty rather than failing the list it is in.
    let mut advisory: SecurityAdvisory = serde_json::from_str(&a.advisory).unwrap_or_default();
    if !versions::advisory_has_cvss(v) {
        advisory.cvss = None;
    }
    DepbotAlert {
        number: a.number,
        state: a.state.clone(),
        dependency: Dependency {
            package: Package { ecosystem: a.ecosystem.clone(), name: a.package.clone() },
            manifest_path: a.manifest_path.clone(),
            scope: a.scope.clone(),
            relationship: a.relationship.clone(),
        },
        security_advisory: advisory,
        security_vulnerability: serde_json::from_str(&a.vulnerability).unwrap_or_default(),
        url: Uri(format!("{}/depbot/alerts/{}", shapes::repo_api_url(u, repo), a.number)),
        html_url: Uri(format!("{}/{}/security/depbot/{}", u.web, repo.full_name(), a.number)),
        created_at: Timestamp(a.created_at),
        updated_at: Timestamp(a.updated_at),
        dismissed_at: a.dismissed_at.map(Timestamp),
        dismissed_by: a.dismissed_by.as_ref().map(|d| shapes::simple_user(u, d)),
        dismissed_reason: a.dismissed_reason.clone(),
        dismissed_comment: a.dismissed_comment.clone(),
        fixed_at: a.fixed_at.map(Timestamp),
        auto_dismissed_at: a.auto_dismissed_at.map(Timestamp),
        assignees: a.assignees.iter().map(|x| shapes::simple_user(u, x)).collect(),
    }
}

/// An alert as the lists render it: with its repository for the organization and enterprise.
fn rendered(u: &Urls, v: ApiVersion, repo: &Repo, a: &Alert, with_repository: bool) -> Vec<u8> {
    let alert = depbot_alert(u, v, repo, a);
    let bytes = if with_repository {
        serde_json::to_vec(&DepbotAlertWithRepository { alert, repository: shapes::minimal_repository(u, v, repo) })
    } else {
        serde_json::to_vec(&alert)
    };
    bytes.unwrap_or_default()
}

/// A JSON array of alerts (those whose repository `repo_of` finds). Each alert is rendered once
/// per store generation (taken before the alerts were read) and reused by every list, filter
/// and page that shows it: rendering, not the query, was most of the cost of a page.
pub fn render_list<'a>(
    app: &AppState,
    generation: Option<u64>,
    v: ApiVersion,
    rows: &[Alert],
    repo_of: impl Fn(&Alert) -> Option<&'a Repo>,
    with_repository: bool,
) -> Vec<u8> {
    let rendered = rows.iter().filter_map(|a| {
        let repo = repo_of(a)?;
        let key = (a.id, v, with_repository);
        Some(match generation.and_then(|g| app.caches.alerts.get(&key, g)) {
            Some(b) => b,
            None => {
                let b = Bytes::from(rendered(&app.urls, v, repo, a, with_repository));
                if let Some(g) = generation {
                    app.caches.alerts.put(key, g, b.clone());
                }
                b
            }
        })
    });
    crate::reply::json_array(rendered, 2 + rows.len() * 6 * 1024)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageIn {
    pub ecosystem: String,
    pub name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpssIn {
    pub percentage: f64,
    pub percentile: Option<f64>,
}

/// The advisory of a new alert: an existing `advisory_id` reuses that advisory (the other fields
/// are then ignored); otherwise `summary` and `severity` are required.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AdvisoryIn {
    pub advisory_id: Option<String>,
    pub cve_id: Option<String>,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub severity: Option<String>,
    pub classification: Option<String>,
    pub cvss: Option<Cvss>,
    pub cvss_severities: Option<CvssSeverities>,
    pub epss: Option<EpssIn>,
    #[serde(default)]
    pub cwes: Vec<Cwe>,
    #[serde(default)]
    pub references: Vec<String>,
    pub published_at: Option<String>,
    pub withdrawn_at: Option<String>,
}

/// `POST /_admin/repos/{owner}/{repo}/depbot/alerts`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertIn {
    pub package: PackageIn,
    pub manifest_path: String,
    pub scope: Option<String>,
    pub relationship: Option<String>,
    /// `open` (default), `fixed` or `auto_dismissed`; alerts are dismissed through the API.
    pub state: Option<String>,
    pub vulnerable_version_range: Option<String>,
    pub first_patched_version: Option<String>,
    #[serde(default)]
    pub assignees: Vec<String>,
    pub advisory: AdvisoryIn,
}

fn invalid(field: &str, message: String) -> ApiError {
    ApiError::invalid_field("DepbotAlert", field, "invalid", Some(message))
}

fn one_of(field: &str, value: &str, allowed: &[&str]) -> ApiResult<()> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(invalid(field, format!("{value:?} is not one of {}", allowed.join(", "))))
    }
}

fn ts_field(field: &str, v: &Option<String>) -> ApiResult<Option<i64>> {
    v.as_deref().map(|s| parse_ts(s).ok_or_else(|| invalid(field, format!("{s:?} is not a timestamp")))).transpose()
}

/// The `cvss` of version 2022-11-28: given, else the CVSS v3 score, else none (score 0).
fn cvss_of(a: &AdvisoryIn) -> Cvss {
    if let Some(c) = &a.cvss {
        return c.clone();
    }
    match a.cvss_severities.as_ref().and_then(|s| s.cvss_v3.as_ref()) {
        Some(v3) => Cvss { vector_string: v3.vector_string.clone(), score: v3.score.unwrap_or(0.0) },
        None => Cvss { vector_string: None, score: 0.0 },
    }
}

/// Finds or creates the advisory of a new alert.
fn advisory(c: &mut dyn Conn, a: &AdvisoryIn, vulnerability: SecurityVulnerability, now: i64) -> ApiResult<Advisory> {
    if let Some(id) = &a.advisory_id {
        if let Some(found) = depbot::find_advisory(c, id)? {
            return Ok(found);
        }
    }
    let severity =
        a.severity.as_deref().ok_or_else(|| ApiError::invalid_field("DepbotAlert", "advisory.severity", "missing_field", None))?;
    one_of("advisory.severity", severity, &SEVERITIES)?;
    let classification = a.classification.as_deref().unwrap_or("general");
    one_of("advisory.classification", classification, &CLASSIFICATIONS)?;
    let summary = a.summary.as_deref().ok_or_else(|| ApiError::invalid_field("DepbotAlert", "advisory.summary", "missing_field", None))?;
    if summary.is_empty() || summary.chars().count() > 1024 {
        return Err(invalid("advisory.summary", "summary must have 1 to 1024 characters".into()));
    }
    let epss = match &a.epss {
        Some(e) if !(0.0..=1.0).contains(&e.percentage) || e.percentile.is_some_and(|p| !(0.0..=1.0).contains(&p)) => {
            return Err(invalid("advisory.epss", "percentage and percentile are between 0 and 1".into()))
        }
        // The spec gives `percentile` as a string.
        Some(e) => Some(Epss { percentage: e.percentage, percentile: e.percentile.unwrap_or(e.percentage).to_string() }),
        None => None,
    };
    let published = ts_field("advisory.published_at", &a.published_at)?.unwrap_or(now);
    let withdrawn = ts_field("advisory.withdrawn_at", &a.withdrawn_at)?;
    let advisory_id = a.advisory_id.clone().unwrap_or_else(|| {
        let r = platform_core::ids::random_alnum(12).to_lowercase();
        format!("SSA-{}-{}-{}", &r[..4], &r[4..8], &r[8..])
    });
    let mut identifiers = vec![Identifier { kind: "SSA".into(), value: advisory_id.clone() }];
    if let Some(cve) = &a.cve_id {
        identifiers.push(Identifier { kind: "CVE".into(), value: cve.clone() });
    }
    let body = SecurityAdvisory {
        advisory_id: advisory_id.clone(),
        cve_id: a.cve_id.clone(),
        summary: summary.to_string(),
        description: a.description.clone().unwrap_or_else(|| summary.to_string()),
        vulnerabilities: vec![vulnerability],
        severity: severity.to_string(),
        classification: classification.to_string(),
        cvss: Some(cvss_of(a)),
        cvss_severities: a.cvss_severities.clone(),
        epss,
        cwes: a.cwes.clone(),
        identifiers,
        references: a.references.iter().map(|u| Reference { url: u.clone() }).collect(),
        published_at: format_ts(published),
        updated_at: format_ts(published.max(withdrawn.unwrap_or(0))),
        withdrawn_at: withdrawn.map(format_ts),
    };
    let body = serde_json::to_value(&body).map_err(|_| ApiError::internal())?;
    Ok(depbot::create_advisory(c, &advisory_id, &body, withdrawn, now)?)
}

fn str_of<'a>(v: &'a Value, k: &str, default: &'a str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or(default)
}

/// EPSS percentage of an advisory body; -1 without a score (the store's sort key).
fn epss_of(body: &Value) -> f64 {
    body.get("epss").and_then(|e| e.get("percentage")).and_then(Value::as_f64).unwrap_or(-1.0)
}

/// Creates an alert and records its opening as platform activity (the notifications consumer
/// tells the watchers who may see it), in the caller's transaction.
pub fn create_alert(c: &mut dyn Conn, u: &Urls, repo: &Repo, a: &AlertIn, now: i64) -> ApiResult<Alert> {
    one_of("package.ecosystem", &a.package.ecosystem, &ECOSYSTEMS)?;
    if a.package.name.is_empty() || a.manifest_path.is_empty() {
        return Err(invalid("package.name", "package.name and manifest_path must not be empty".into()));
    }
    if let Some(s) = &a.scope {
        one_of("scope", s, &SCOPES)?;
    }
    if let Some(r) = &a.relationship {
        one_of("relationship", r, &RELATIONSHIPS)?;
    }
    let state = a.state.as_deref().unwrap_or("open");
    one_of("state", state, &["open", "fixed", "auto_dismissed"])?;
    let mut assignees = Vec::new();
    for login in &a.assignees {
        let u = provision::user(c, login)?;
        if !depbot::may_see(c, repo.id, u.id)? {
            return Err(invalid("assignees", format!("{login} cannot see alerts of {}", repo.full_name())));
        }
        assignees.push(u.id);
    }
    let severity_hint = a.advisory.severity.clone().unwrap_or_else(|| "medium".into());
    let mut vulnerability = SecurityVulnerability {
        package: Package { ecosystem: a.package.ecosystem.clone(), name: a.package.name.clone() },
        severity: severity_hint,
        vulnerable_version_range: a.vulnerable_version_range.clone().unwrap_or_else(|| ">= 0".into()),
        first_patched_version: a.first_patched_version.as_ref().map(|v| PatchedVersion { identifier: v.clone() }),
    };
    let adv = advisory(c, &a.advisory, vulnerability.clone(), now)?;
    let severity = str_of(&adv.body, "severity", "medium").to_string();
    vulnerability.severity = severity.clone();
    let vulnerability = serde_json::to_value(&vulnerability).map_err(|_| ApiError::internal())?;
    let n = NewAlert {
        repo_id: repo.id,
        org_id: repo.owner.is_org().then_some(repo.owner.id),
        advisory_id: adv.id,
        state,
        ecosystem: &a.package.ecosystem,
        package: &a.package.name,
        manifest_path: &a.manifest_path,
        scope: a.scope.as_deref(),
        relationship: a.relationship.as_deref(),
        severity: &severity,
        classification: str_of(&adv.body, "classification", "general"),
        epss_percentage: epss_of(&adv.body),
        has_patch: a.first_patched_version.is_some(),
        vulnerability: &vulnerability,
        created_at: now,
    };
    let (_, number) = depbot::create(c, &n)?;
    if !assignees.is_empty() {
        let alert = depbot::get(c, repo.id, number)?.ok_or_else(ApiError::internal)?;
        let ch = depbot::Change { state: None, assignees: Some(&assignees), agent_assignment: None };
        depbot::update(c, &alert, None, &ch, now)?;
    }
    let alert = depbot::get(c, repo.id, number)?.ok_or_else(ApiError::internal)?;
    record(c, u, repo, &alert, "created", None, now)?;
    Ok(alert)
}

/// Records a change of an alert (`created`, `dismissed`, `reopened`) as platform activity, with
/// the alert as it is now (webhook form), by `actor` (none: the platform).
pub fn record(c: &mut dyn Conn, u: &Urls, repo: &Repo, alert: &Alert, action: &str, actor: Option<i64>, now: i64) -> ApiResult<()> {
    let shown = crate::ops::hooks::payloads::WebhookDepbotAlert::from(depbot_alert(u, ApiVersion::DEFAULT, repo, alert));
    let r = Record::DepbotAlert(DepbotAlertActivity { action: action.into(), state: alert.state.clone(), alert: activity::stored(&shown) });
    // Alerts are never public activity.
    activity::record(c, Scope::repo(actor, repo).private(), &r, now)?;
    Ok(())
}

/// Admin handler: 201 the alert (current API version shape, without `repository`).
pub async fn admin_create(
    State(app): State<Shared>,
    Path((owner, name)): Path<(String, String)>,
    JsonBody(b): JsonBody,
) -> ApiResult<Reply> {
    let a: AlertIn = serde_json::from_value(b).map_err(ApiError::invalid_request)?;
    let (now, u) = (app.clock.now(), app.urls.clone());
    let (repo, alert) = app
        .store
        .write(move |c| -> ApiResult<(Repo, Alert)> {
            let repo = provision::repo(c, &format!("{owner}/{name}"))?;
            let alert = create_alert(c, &u, &repo, &a, now)?;
            Ok((repo, alert))
        })
        .await?;
    Ok(Reply::created(depbot_alert(&app.urls, ApiVersion::DEFAULT, &repo, &alert)))
}

/// A seed file's bulk section: `count` varied alerts spread over `repos`, drawn from
/// `advisories` generated advisories, inserted in the seed's one transaction without activity
/// (they are history, not news). Deterministic, so benchmarks are repeatable.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkIn {
    /// `owner/name` of each repository.
    pub repos: Vec<String>,
    pub count: usize,
    #[serde(default = "default_advisories")]
    pub advisories: usize,
}

fn default_advisories() -> usize {
    50
}

const MANIFESTS: [&str; 9] = [
    "composer.lock",
    "go.sum",
    "pom.xml",
    "package-lock.json",
    "packages.lock.json",
    "requirements.txt",
    "pubspec.lock",
    "Gemfile.lock",
    "Cargo.lock",
];

pub fn create_bulk(c: &mut dyn Conn, b: &BulkIn, now: i64) -> ApiResult<()> {
    if b.repos.is_empty() || b.advisories == 0 {
        return Err(invalid("repos", "bulk alerts need repos and advisories".into()));
    }
    let repos: Vec<Repo> = b.repos.iter().map(|r| provision::repo(c, r)).collect::<ApiResult<_>>()?;
    let mut advisories = Vec::with_capacity(b.advisories);
    for k in 0..b.advisories {
        let id = format!("SSA-bulk-{k:04}-0000");
        let a = AdvisoryIn {
            advisory_id: Some(id),
            summary: Some(format!("Bulk advisory {k}")),
            severity: Some(SEVERITIES[k % 4].into()),
            classification: Some(if k % 25 == 0 { "malware" } else { "general" }.into()),
            epss: (k % 10 != 0).then(|| EpssIn { percentage: ((k * 7919) % 1000) as f64 / 1000.0, percentile: None }),
            ..Default::default()
        };
        let vuln = SecurityVulnerability {
            package: Package { ecosystem: "npm".into(), name: format!("pkg-{k}") },
            severity: SEVERITIES[k % 4].into(),
            vulnerable_version_range: "< 1.0.0".into(),
            first_patched_version: Some(PatchedVersion { identifier: "1.0.0".into() }),
        };
        advisories.push(advisory(c, &a, vuln, now)?);
    }
    let mut rows: Vec<(usize, &Advisory, Value, u64)> = Vec::with_capacity(b.count);
    for i in 0..b.count {
        // A multiplicative hash spreads the fields independently of each other.
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let adv = &advisories[(h >> 40) as usize % advisories.len()];
        let eco = (h >> 8) as usize % ECOSYSTEMS.len();
        let patched = !(h >> 20).is_multiple_of(3);
        let vuln = SecurityVulnerability {
            package: Package { ecosystem: ECOSYSTEMS[eco].into(), name: format!("pkg-{}", (h >> 24) % 500) },
            severity: str_of(&adv.body, "severity", "medium").into(),
            vulnerable_version_range: "< 1.0.0".into(),
            first_patched_version: patched.then(|| PatchedVersion { identifier: "1.0.0".into() }),
        };
        let vuln = serde_json::to_value(&vuln).map_err(|_| ApiError::internal())?;
        rows.push((i, adv, vuln, h));
    }
    let states = ["open", "open", "open", "fixed", "auto_dismissed"];
    let alerts: Vec<NewAlert> = rows
        .iter()
        .map(|(i, adv, vuln, h)| {
            let repo = &repos[i % repos.len()];
            let eco = (h >> 8) as usize % ECOSYSTEMS.len();
            NewAlert {
                repo_id: repo.id,
                org_id: repo.owner.is_org().then_some(repo.owner.id),
                advisory_id: adv.id,
                state: states[(h >> 12) as usize % states.len()],
                ecosystem: ECOSYSTEMS[eco],
                package: vuln["package"]["name"].as_str().unwrap_or("pkg"),
                manifest_path: MANIFESTS[eco],
                scope: Some(SCOPES[(h >> 16) as usize % 2]),
                relationship: Some(RELATIONSHIPS[(h >> 18) as usize % 4]),
                severity: str_of(&adv.body, "severity", "medium"),
                classification: str_of(&adv.body, "classification", "general"),
                epss_percentage: epss_of(&adv.body),
                has_patch: !vuln["first_patched_version"].is_null(),
                vulnerability: vuln,
                // One second apart, oldest first, ending now.
                created_at: now - (b.count - i) as i64,
            }
        })
        .collect();
    depbot::create_many(c, &alerts)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored advisories and vulnerabilities read back into their types and render byte for
    /// byte as stored (key order included): rows written before they were typed show unchanged.
    #[test]
    fn stored_json_renders_as_stored() {
        let vulnerability = r#"{"package":{"ecosystem":"npm","name":"left-pad"},"severity":"high","vulnerable_version_range":"< 1.3.0","first_patched_version":{"identifier":"1.3.0"}}"#;
        let advisory = format!(
            concat!(
                r#"{{"advisory_id":"SSA-abcd-efgh-ijkl","cve_id":"CVE-2026-0001","summary":"s","description":"d","vulnerabilities":[{v}],"#,
                r#""severity":"high","classification":"general","cvss":{{"vector_string":"CVSS:3.0/AV:N","score":7.5}},"#,
                r#""cvss_severities":{{"cvss_v3":{{"vector_string":"CVSS:3.0/AV:N","score":7.5}},"cvss_v4":null}},"#,
                r#""epss":{{"percentage":0.123,"percentile":"0.123"}},"cwes":[{{"cwe_id":"CWE-79","name":"XSS"}}],"#,
                r#""identifiers":[{{"type":"SSA","value":"SSA-abcd-efgh-ijkl"}},{{"type":"CVE","value":"CVE-2026-0001"}}],"#,
                r#""references":[{{"url":"https://example.com/a"}}],"published_at":"2026-01-02T03:04:05Z","#,
                r#""updated_at":"2026-01-02T03:04:05Z","withdrawn_at":null}}"#
            ),
            v = vulnerability
        );
        let a: SecurityAdvisory = serde_json::from_str(&advisory).unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), advisory);
        let v: SecurityVulnerability = serde_json::from_str(vulnerability).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), vulnerability);
        // Without a score or an EPSS, as `advisory` writes them.
        let bare = advisory.replace(
            r#""cvss_severities":{"cvss_v3":{"vector_string":"CVSS:3.0/AV:N","score":7.5},"cvss_v4":null}"#,
            r#""cvss_severities":null"#,
        );
        let bare = bare.replace(r#""epss":{"percentage":0.123,"percentile":"0.123"}"#, r#""epss":null"#);
        let a: SecurityAdvisory = serde_json::from_str(&bare).unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), bare);
    }
}
