//! Dependency alerts: creation through the control plane (and its notification), the shape and
//! its version difference, get, update with every rule and code, every list filter, ordering,
//! cursor pagination, and the permission matrix of the repository, organization and enterprise
//! lists.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

type Parts = (u16, reqwest::header::HeaderMap, Value);

/// Enterprise `corp` (members alice, bob, erin, frank, carol) owns organizations `acme` (owner
/// alice, members bob and erin; team `security` with erin) and `beta` (owner frank); `gamma`
/// (owner alice) is outside it. Repositories: acme/widgets (public), acme/secret (private),
/// beta/app (private), gamma/tool (public).
async fn world(s: &Server) {
    for u in ["alice", "bob", "carol", "erin", "frank"] {
        s.user(u).await;
    }
    s.admin_post(
        "/enterprises",
        json!({"slug": "corp", "name": "Corp", "owners": ["alice"], "members": ["bob", "carol", "erin", "frank"]}),
    )
    .await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob", "erin"], "enterprise": "corp"})).await;
    s.admin_post("/orgs", json!({"login": "beta", "owners": ["frank"], "enterprise": "corp"})).await;
    s.admin_post("/orgs", json!({"login": "gamma", "owners": ["alice"]})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "security", "members": ["erin"]})).await;
    s.repo("acme", "widgets", false).await;
    s.repo("acme", "secret", true).await;
    s.repo("beta", "app", true).await;
    s.repo("gamma", "tool", false).await;
}

/// A control-plane alert body.
pub fn alert(eco: &str, pkg: &str, severity: &str) -> Value {
    json!({
        "package": {"ecosystem": eco, "name": pkg},
        "manifest_path": "path/to/manifest",
        "scope": "runtime",
        "relationship": "direct",
        "vulnerable_version_range": ">= 2.0.0, < 2.0.2",
        "first_patched_version": "2.0.2",
        "advisory": {"summary": format!("{pkg} is vulnerable"), "severity": severity, "cve_id": "CVE-2018-6188",
                     "cvss_severities": {"cvss_v3": {"vector_string": "CVSS:3.0/AV:N", "score": 7.5}, "cvss_v4": null},
                     "epss": {"percentage": 0.5, "percentile": 0.9},
                     "cwes": [{"cwe_id": "CWE-200", "name": "Exposure"}], "references": ["https://example.com/a"]},
    })
}

async fn create(s: &Server, repo: &str, body: Value) -> Value {
    s.admin_post(&format!("/repos/{repo}/depbot/alerts"), body).await
}

async fn get(s: &Server, path: &str, t: Option<&str>) -> Parts {
    parts(s.get(path, t).await).await
}

async fn patch(s: &Server, path: &str, t: &str, body: Value) -> Parts {
    parts(s.req(Method::PATCH, path, Some(t)).json(&body).send().await.unwrap()).await
}

fn numbers(v: &Value) -> Vec<i64> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().map(|a| a["number"].as_i64().unwrap()).collect()
}

/// `errors` of ValidationErrorSimple: an array of strings.
fn simple_422(p: &Parts) {
    assert_error(p.0, &p.1, &p.2, 422, "Validation Failed");
    let errs = p.2["errors"].as_array().unwrap_or_else(|| panic!("{}", p.2));
    assert!(!errs.is_empty() && errs.iter().all(Value::is_string), "{}", p.2);
}

both!(shape_get_and_versions, |s| {
    world(&s).await;
    let made = create(&s, "acme/widgets", alert("pip", "django", "high")).await;
    assert_eq!(made["number"], 1);
    assert_eq!(create(&s, "acme/widgets", alert("npm", "lodash", "low")).await["number"], 2);
    assert_eq!(create(&s, "acme/secret", alert("npm", "lodash", "low")).await["number"], 1, "numbers are per repository");
    let alice = s.classic("alice", &["repo"]).await;
    let (st, h, a) = get(&s, "/repos/acme/widgets/depbot/alerts/1", Some(&alice)).await;
    assert_eq!(st, 200, "{a}");
    assert_conforms_to_snapshot("DepbotAlert", &a);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, security_events");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "vulnerability_alerts=read");
    assert_eq!(a["number"], 1);
    assert_eq!(a["state"], "open");
    assert_eq!(
        a["dependency"],
        json!({"package": {"ecosystem": "pip", "name": "django"}, "manifest_path": "path/to/manifest", "scope": "runtime", "relationship": "direct"})
    );
    assert_eq!(a["url"], format!("{}/repos/acme/widgets/depbot/alerts/1", s.base));
    assert_eq!(a["html_url"], format!("http://{}/acme/widgets/security/depbot/1", s.addr));
    assert!(is_ts(&a["created_at"]) && is_ts(&a["updated_at"]));
    for k in ["dismissed_at", "dismissed_by", "dismissed_reason", "dismissed_comment", "fixed_at"] {
        assert!(a[k].is_null(), "{k}: {a}");
    }
    assert_eq!(a["assignees"], json!([]));
    assert!(a.get("repository").is_none());
    let v = &a["security_vulnerability"];
    assert_eq!(
        v,
        &json!({"package": {"ecosystem": "pip", "name": "django"}, "severity": "high",
                          "vulnerable_version_range": ">= 2.0.0, < 2.0.2", "first_patched_version": {"identifier": "2.0.2"}})
    );
    let adv = &a["security_advisory"];
    assert!(adv["advisory_id"].as_str().unwrap().starts_with("SSA-"));
    assert_eq!(adv["cve_id"], "CVE-2018-6188");
    assert_eq!(adv["severity"], "high");
    assert_eq!(adv["classification"], "general");
    assert_eq!(adv["vulnerabilities"], json!([v]));
    assert_eq!(adv["epss"], json!({"percentage": 0.5, "percentile": "0.9"}));
    assert_eq!(adv["identifiers"][0]["type"], "SSA");
    assert_eq!(adv["identifiers"][1], json!({"type": "CVE", "value": "CVE-2018-6188"}));
    assert_eq!(adv["references"], json!([{"url": "https://example.com/a"}]));
    assert_eq!(adv["cwes"], json!([{"cwe_id": "CWE-200", "name": "Exposure"}]));
    assert!(adv["withdrawn_at"].is_null() && is_ts(&adv["published_at"]));
    // 2022-11-28 (the default) has `cvss`, from the CVSS v3 score; 2026-03-10 drops it.
    assert_eq!(adv["cvss"], json!({"vector_string": "CVSS:3.0/AV:N", "score": 7.5}));
    let r = s
        .req(Method::GET, "/repos/acme/widgets/depbot/alerts/1", Some(&alice))
        .header("x-service-api-version", "2026-03-10")
        .send()
        .await
        .unwrap();
    let (_, _, new) = parts(r).await;
    assert_conforms_to_snapshot("DepbotAlert", &new);
    assert!(new["security_advisory"].get("cvss").is_none(), "{new}");
    assert_eq!(new["security_advisory"]["cvss_severities"]["cvss_v3"]["score"], 7.5);
    // Unknown numbers, non-numbers and unknown repositories: 404.
    for p in ["/repos/acme/widgets/depbot/alerts/99", "/repos/acme/widgets/depbot/alerts/x", "/repos/acme/nope/depbot/alerts/1"] {
        let (st, h, b) = get(&s, p, Some(&alice)).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    // An existing advisory id is reused.
    let id = adv["advisory_id"].as_str().unwrap().to_string();
    let again = create(
        &s,
        "gamma/tool",
        json!({"package": {"ecosystem": "pip", "name": "django"}, "manifest_path": "r.txt",
                                                 "advisory": {"advisory_id": id}}),
    )
    .await;
    assert_eq!(again["security_advisory"]["summary"], "django is vulnerable");
    assert!(again["dependency"]["scope"].is_null());
    // Control-plane validation.
    for bad in [
        json!({"package": {"ecosystem": "cobol", "name": "x"}, "manifest_path": "m", "advisory": {"summary": "s", "severity": "low"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "advisory": {"summary": "s", "severity": "urgent"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "advisory": {"summary": "s"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "scope": "test", "advisory": {"summary": "s", "severity": "low"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "state": "dismissed", "advisory": {"summary": "s", "severity": "low"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "assignees": ["carol"], "advisory": {"summary": "s", "severity": "low"}}),
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "advisory": {"summary": "s", "severity": "low", "epss": {"percentage": 2.0}}}),
        json!({"manifest_path": "m", "advisory": {"summary": "s", "severity": "low"}}),
    ] {
        let r = s
            .client
            .post(format!("http://{}/_admin/repos/acme/widgets/depbot/alerts", s.addr))
            .bearer_auth(ADMIN)
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 422, "{bad}");
    }
});

both!(repository_permissions, |s| {
    world(&s).await;
    create(&s, "acme/widgets", alert("npm", "a", "low")).await;
    create(&s, "acme/secret", alert("npm", "a", "low")).await;
    let paths = ["/repos/acme/widgets/depbot/alerts", "/repos/acme/widgets/depbot/alerts/1"];
    // Anonymous: 401 even on a public repository (alerts are never public).
    for p in paths {
        let (st, h, b) = get(&s, p, None).await;
        assert_error(st, &h, &b, 401, "Requires authentication");
    }
    // Push access (owner, members) sees them; a reader of the public repository gets 403; a
    // private repository is 404 to outsiders.
    for who in ["alice", "bob"] {
        let t = s.classic(who, &["repo"]).await;
        assert_eq!(get(&s, paths[1], Some(&t)).await.0, 200, "{who}");
        assert_eq!(get(&s, "/repos/acme/secret/depbot/alerts/1", Some(&t)).await.0, 200, "{who}");
    }
    let carol = s.classic("carol", &["repo"]).await;
    for p in paths {
        let (st, h, b) = get(&s, p, Some(&carol)).await;
        assert_error(st, &h, &b, 403, "Must have push access to this repository.");
    }
    assert_eq!(get(&s, "/repos/acme/secret/depbot/alerts/1", Some(&carol)).await.0, 404);
    let r = patch(&s, paths[1], &carol, json!({"state": "dismissed", "dismissed_reason": "inaccurate"})).await;
    assert_eq!(r.0, 403);
    // Scopes: security_events suffices; a scope without alert access does not.
    let sec = s.classic("alice", &["security_events"]).await;
    assert_eq!(get(&s, paths[1], Some(&sec)).await.0, 200);
    let other = s.classic("alice", &["read:org"]).await;
    assert_eq!(get(&s, paths[1], Some(&other)).await.0, 403);
    assert_eq!(get(&s, "/repos/acme/secret/depbot/alerts/1", Some(&other)).await.0, 404);
    // Fine-grained: vulnerability_alerts read for reads, write for updates.
    let fg = |level: &'static str| json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"vulnerability_alerts": level}});
    let read = s.token(fg("read")).await;
    assert_eq!(get(&s, paths[0], Some(&read)).await.0, 200);
    let (st, h, b) = patch(&s, paths[1], &read, json!({"assignees": []})).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let write = s.token(fg("write")).await;
    let (st, h, _) = patch(&s, paths[1], &write, json!({"assignees": []})).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-accepted-service-permissions"), "vulnerability_alerts=write");
    let none =
        s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"statuses": "write"}})).await;
    assert_eq!(get(&s, paths[1], Some(&none)).await.0, 403);
    // Installation tokens of the organization with the permission.
    let app = s.admin_post("/apps", json!({"name": "scanner", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst =
        s.token(json!({"kind": "installation", "app": "scanner", "org": "acme", "permissions": {"vulnerability_alerts": "read"}})).await;
    assert_eq!(get(&s, "/repos/acme/secret/depbot/alerts/1", Some(&inst)).await.0, 200);
});

both!(update_rules_and_codes, |s| {
    world(&s).await;
    create(&s, "acme/widgets", alert("npm", "a", "low")).await;
    let p = "/repos/acme/widgets/depbot/alerts/1";
    let alice = s.classic("alice", &["repo"]).await;
    // Every refusal is a 422 with string errors.
    for body in [
        json!({}),
        json!({"dismissed_reason": "inaccurate"}),
        json!({"state": "dismissed"}),
        json!({"state": "dismissed", "dismissed_reason": "because"}),
        json!({"state": "closed"}),
        json!({"state": "fixed"}),
        json!({"state": 1}),
        // null is a value, and not a string: never "absent".
        json!({"state": null}),
        json!({"state": "open", "dismissed_comment": null}),
        json!({"state": "dismissed", "dismissed_reason": "inaccurate", "dismissed_comment": "x".repeat(281)}),
        json!({"state": "open", "dismissed_reason": "inaccurate"}),
        json!({"state": "open", "extra": true}),
        json!({"assignees": "alice"}),
        json!({"assignees": [1]}),
        json!({"assignees": ["nobody"]}),
        json!({"assignees": ["carol"]}),
        json!({"assignees": ["acme"]}),
        json!({"assignees": ["bob"], "agent_assignment": {"model": "x", "colour": "red"}}),
        json!({"assignees": ["bob"], "agent_assignment": "fast"}),
        json!({"assignees": ["bob"], "agent_assignment": null}),
    ] {
        simple_422(&patch(&s, p, &alice, body.clone()).await);
    }
    let (_, _, a) = get(&s, p, Some(&alice)).await;
    assert_eq!((a["state"].clone(), a["assignees"].clone()), (json!("open"), json!([])), "nothing was written");
    // 400: not JSON, or not an object.
    let r = s.req(Method::PATCH, p, Some(&alice)).body("{").send().await.unwrap();
    let (st, h, b) = parts(r).await;
    assert_error(st, &h, &b, 400, "Problems parsing JSON");
    let r = s.req(Method::PATCH, p, Some(&alice)).body("[1]").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);

    // Dismiss with a 280-character comment.
    s.advance(60).await;
    let comment = "c".repeat(280);
    let (st, _, a) =
        patch(&s, p, &alice, json!({"state": "dismissed", "dismissed_reason": "tolerable_risk", "dismissed_comment": comment})).await;
    assert_eq!(st, 200, "{a}");
    assert_eq!(a["state"], "dismissed");
    assert_eq!(a["dismissed_reason"], "tolerable_risk");
    assert_eq!(a["dismissed_comment"], comment);
    assert_eq!(a["dismissed_by"]["login"], "alice");
    assert!(is_ts(&a["dismissed_at"]));
    assert_eq!(a["updated_at"], a["dismissed_at"]);
    assert_ne!(a["updated_at"], a["created_at"]);
    assert!(a.get("repository").is_none());
    // Reopen clears the dismissal.
    let (_, _, a) = patch(&s, p, &alice, json!({"state": "open"})).await;
    assert_eq!(a["state"], "open");
    for k in ["dismissed_at", "dismissed_by", "dismissed_reason", "dismissed_comment"] {
        assert!(a[k].is_null(), "{k}");
    }
    // Assignees replace the set; [] clears it. Assignees need access to the alerts.
    let (_, _, a) = patch(&s, p, &alice, json!({"assignees": ["bob", "erin"]})).await;
    assert_eq!(
        a["assignees"].as_array().unwrap().iter().map(|u| u["login"].clone()).collect::<Vec<_>>(),
        vec![json!("bob"), json!("erin")]
    );
    assert_eq!(a["assignees"][0]["type"], "User");
    let (_, _, a) =
        patch(&s, p, &alice, json!({"assignees": ["alice"], "agent_assignment": {"custom_instructions": "fix it", "model": "m1"}})).await;
    assert_eq!(a["assignees"][0]["login"], "alice");
    assert_eq!(a["assignees"].as_array().unwrap().len(), 1);
    let (_, _, a) = patch(&s, p, &alice, json!({"assignees": []})).await;
    assert_eq!(a["assignees"], json!([]));

    // 409: a fixed or auto-dismissed alert's state cannot change (its assignees can).
    create(&s, "acme/widgets", json!({"state": "fixed", "package": {"ecosystem": "npm", "name": "f"}, "manifest_path": "m", "advisory": {"summary": "s", "severity": "low"}})).await;
    let fixed = "/repos/acme/widgets/depbot/alerts/2";
    let (_, _, f) = get(&s, fixed, Some(&alice)).await;
    assert_eq!(f["state"], "fixed");
    assert!(is_ts(&f["fixed_at"]));
    let (st, h, b) = patch(&s, fixed, &alice, json!({"state": "dismissed", "dismissed_reason": "inaccurate"})).await;
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["status"], "409");
    assert!(header(&h, "content-type").starts_with("application/json"));
    assert_eq!(patch(&s, fixed, &alice, json!({"assignees": ["bob"]})).await.0, 200);
    create(&s, "acme/widgets", json!({"state": "auto_dismissed", "package": {"ecosystem": "npm", "name": "f"}, "manifest_path": "m", "advisory": {"summary": "s", "severity": "low"}})).await;
    let (_, _, ad) = get(&s, "/repos/acme/widgets/depbot/alerts/3", Some(&alice)).await;
    assert!(is_ts(&ad["auto_dismissed_at"]));
    assert_eq!(patch(&s, "/repos/acme/widgets/depbot/alerts/3", &alice, json!({"state": "open"})).await.0, 409);
    // 410: an alert whose advisory was withdrawn.
    create(
        &s,
        "acme/widgets",
        json!({"package": {"ecosystem": "npm", "name": "w"}, "manifest_path": "m",
        "advisory": {"summary": "s", "severity": "low", "withdrawn_at": "2024-01-01T00:00:00Z"}}),
    )
    .await;
    let (st, h, b) = patch(&s, "/repos/acme/widgets/depbot/alerts/4", &alice, json!({"assignees": []})).await;
    assert_eq!(st, 410, "{b}");
    assert_eq!(b["status"], "410");
    assert!(b["documentation_url"].as_str().unwrap().contains("update-a-depbot-alert"), "{h:?}");
    // 404 for an unknown alert.
    assert_eq!(patch(&s, "/repos/acme/widgets/depbot/alerts/77", &alice, json!({"state": "open"})).await.0, 404);
});

/// Six alerts on acme/widgets with distinct attributes, created a minute apart (numbers 1–6).
async fn filter_world(s: &Server) -> String {
    world(s).await;
    let specs = [
        ("npm", "lodash", "low", "general", "runtime", "direct", Some(0.1), true, "package-lock.json", "open"),
        ("pip", "django", "high", "general", "development", "transitive", Some(0.5), false, "requirements.txt", "open"),
        ("npm", "left-pad", "critical", "malware", "runtime", "unknown", None, true, "package-lock.json", "fixed"),
        ("rust", "openssl", "medium", "general", "runtime", "inconclusive", Some(0.9), true, "Cargo.lock", "open"),
        ("go", "net", "high", "general", "development", "direct", Some(0.05), false, "go.sum", "auto_dismissed"),
        ("maven", "log4j", "critical", "general", "runtime", "direct", Some(1.0), true, "pom.xml", "open"),
    ];
    for (eco, pkg, sev, class, scope, rel, epss, patched, manifest, state) in specs {
        let mut adv = json!({"summary": format!("{pkg} advisory"), "severity": sev, "classification": class});
        if let Some(e) = epss {
            adv["epss"] = json!({"percentage": e, "percentile": e});
        }
        let mut body = json!({"package": {"ecosystem": eco, "name": pkg}, "manifest_path": manifest, "scope": scope,
                              "relationship": rel, "state": state, "advisory": adv});
        if patched {
            body["first_patched_version"] = json!("9.9.9");
        }
        create(s, "acme/widgets", body).await;
        s.advance(60).await;
    }
    s.classic("alice", &["repo"]).await
}

both!(list_filters, |s| {
    let alice = filter_world(&s).await;
    let t = Some(alice.as_str());
    let list = |q: &'static str| {
        let s = &s;
        async move {
            let (st, _, b) = get(s, &format!("/repos/acme/widgets/depbot/alerts{q}"), t).await;
            assert_eq!(st, 200, "{q}: {b}");
            numbers(&b)
        }
    };
    assert_eq!(list("").await, vec![6, 5, 4, 3, 2, 1], "newest first by default");
    assert_eq!(list("?state=open").await, vec![6, 4, 2, 1]);
    assert_eq!(list("?state=fixed,auto_dismissed").await, vec![5, 3]);
    assert_eq!(list("?severity=critical,low").await, vec![6, 3, 1]);
    assert_eq!(list("?ecosystem=npm").await, vec![3, 1]);
    assert_eq!(list("?ecosystem=pip,rust").await, vec![4, 2]);
    assert_eq!(list("?package=lodash,log4j").await, vec![6, 1]);
    assert_eq!(list("?manifest=go.sum").await, vec![5]);
    assert_eq!(list("?classification=malware").await, vec![3]);
    assert_eq!(list("?scope=development").await, vec![5, 2]);
    assert_eq!(list("?relationship=direct").await, vec![6, 5, 1]);
    assert_eq!(list("?relationship=unknown,inconclusive").await, vec![4, 3]);
    assert_eq!(list("?has=patch").await, vec![6, 4, 3, 1]);
    assert_eq!(list("?has[]=patch&has[]=patch").await, vec![6, 4, 3, 1]);
    // EPSS comparisons and ranges (alerts without a score never match).
    assert_eq!(list("?epss_percentage=0.5").await, vec![2]);
    assert_eq!(list("?epss_percentage=%3E0.5").await, vec![6, 4]);
    assert_eq!(list("?epss_percentage=%3E%3D0.5").await, vec![6, 4, 2]);
    assert_eq!(list("?epss_percentage=%3C0.5").await, vec![5, 1]);
    assert_eq!(list("?epss_percentage=%3C%3D0.1").await, vec![5, 1]);
    assert_eq!(list("?epss_percentage=0.1..0.9").await, vec![4, 2, 1]);
    assert_eq!(list("?epss_percentage=0.9..0.1").await, Vec::<i64>::new(), "a reversed range matches nothing");
    // Several filters together.
    assert_eq!(list("?state=open&severity=critical,high&ecosystem=maven,pip").await, vec![6, 2]);
    // Assignees: logins, `*` (any), `none`.
    patch(&s, "/repos/acme/widgets/depbot/alerts/2", &alice, json!({"assignees": ["bob"]})).await;
    patch(&s, "/repos/acme/widgets/depbot/alerts/4", &alice, json!({"assignees": ["erin", "bob"]})).await;
    patch(&s, "/repos/acme/widgets/depbot/alerts/6", &alice, json!({"assignees": ["erin"]})).await;
    assert_eq!(list("?assignee=bob").await, vec![4, 2]);
    assert_eq!(list("?assignee=erin,bob").await, vec![6, 4, 2]);
    assert_eq!(list("?assignee=*").await, vec![6, 4, 2]);
    assert_eq!(list("?assignee=none").await, vec![5, 3, 1]);
    assert_eq!(list("?assignee=bob,none").await, vec![5, 4, 3, 2, 1]);
    assert_eq!(list("?assignee=nobody").await, Vec::<i64>::new());
    // Sort and direction (updated moved for the assigned ones, epss orders by score).
    assert_eq!(list("?direction=asc").await, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(list("?sort=epss_percentage").await, vec![6, 4, 2, 1, 5, 3]);
    assert_eq!(list("?sort=epss_percentage&direction=asc").await, vec![3, 5, 1, 2, 4, 6]);
    s.advance(60).await;
    patch(&s, "/repos/acme/widgets/depbot/alerts/3", &alice, json!({"assignees": []})).await;
    assert_eq!(list("?sort=updated").await[0], 3);
    // Invalid values: 422 with string errors.
    for q in [
        "?state=closed",
        "?severity=urgent",
        "?ecosystem=cobol",
        "?classification=odd",
        "?scope=test",
        "?epss_percentage=2",
        "?epss_percentage=%3E",
        "?epss_percentage=abc",
        "?epss_percentage=0.1..x",
        "?has=fix",
        "?sort=name",
        "?direction=up",
        "?per_page=x",
    ] {
        let p = get(&s, &format!("/repos/acme/widgets/depbot/alerts{q}"), t).await;
        assert_eq!(p.0, 422, "{q}: {}", p.2);
        assert_eq!(p.2["message"], if q == "?per_page=x" { p.2["message"].clone() } else { json!("Validation Failed") }, "{q}");
    }
});

both!(cursor_pagination, |s| {
    let alice = filter_world(&s).await;
    let t = Some(alice.as_str());
    // Page forward with `after` from the Link header.
    let (st, h, b) = get(&s, "/repos/acme/widgets/depbot/alerts?per_page=2&state=open,fixed", t).await;
    assert_eq!(st, 200);
    assert_eq!(numbers(&b), vec![6, 4]);
    let link = header(&h, "link").to_string();
    assert!(!link.contains("rel=\"prev\"") && !link.contains("rel=\"last\""), "{link}");
    let next = link.split(", ").find(|l| l.ends_with("rel=\"next\"")).unwrap();
    let next = next.trim_start_matches('<').split('>').next().unwrap().to_string();
    assert!(next.starts_with(&format!("{}/repos/acme/widgets/depbot/alerts?", s.base)), "{next}");
    assert!(next.contains("per_page=2") && next.contains("state=open%2Cfixed") && next.contains("after="), "{next}");
    let (_, h2, b2) = get(&s, &next, t).await;
    assert_eq!(numbers(&b2), vec![3, 2]);
    let link2 = header(&h2, "link").to_string();
    let rel = |l: &str, r: &str| {
        l.split(", ")
            .find(|x| x.ends_with(&format!("rel=\"{r}\"")))
            .map(|x| x.trim_start_matches('<').split('>').next().unwrap().to_string())
    };
    let (_, h3, b3) = get(&s, &rel(&link2, "next").unwrap(), t).await;
    assert_eq!(numbers(&b3), vec![1]);
    let link3 = header(&h3, "link").to_string();
    assert!(rel(&link3, "next").is_none(), "last page: {link3}");
    assert!(rel(&link3, "first").is_some());
    // And back with `before`.
    let (_, hb, bb) = get(&s, &rel(&link3, "prev").unwrap(), t).await;
    assert_eq!(numbers(&bb), vec![3, 2]);
    let (_, _, bf) = get(&s, &rel(header(&hb, "link"), "prev").unwrap(), t).await;
    assert_eq!(numbers(&bf), vec![6, 4]);
    assert_eq!(numbers(&get(&s, &rel(&link3, "first").unwrap(), t).await.2), vec![6, 4]);
    // Pagination by EPSS (float keys) walks every alert once.
    let mut url = "/repos/acme/widgets/depbot/alerts?per_page=1&sort=epss_percentage".to_string();
    let mut seen = Vec::new();
    for _ in 0..10 {
        let (_, h, b) = get(&s, &url, t).await;
        seen.extend(numbers(&b));
        match rel(header(&h, "link"), "next") {
            Some(n) => url = n,
            None => break,
        }
    }
    assert_eq!(seen, vec![6, 4, 2, 1, 5, 3]);
    // A single page has no Link header.
    assert!(get(&s, "/repos/acme/widgets/depbot/alerts", t).await.1.get("link").is_none());
    // Repository and organization lists: 400 for `page`, both cursors, or a foreign cursor.
    let after = next.split("after=").nth(1).unwrap().split('&').next().unwrap().to_string();
    for q in
        ["?page=2".to_string(), format!("?after={after}&before={after}"), "?after=garbage".into(), format!("?after={after}&sort=updated")]
    {
        for base in ["/repos/acme/widgets/depbot/alerts", "/orgs/acme/depbot/alerts"] {
            let (st, h, b) = get(&s, &format!("{base}{q}"), t).await;
            assert_eq!(st, 400, "{base}{q}: {b}");
            assert!(header(&h, "content-type").starts_with("application/json"));
        }
        // The enterprise list answers these with 422.
        simple_422(&get(&s, &format!("/enterprises/corp/depbot/alerts{q}"), t).await);
    }
});

both!(organization_list, |s| {
    world(&s).await;
    create(&s, "acme/widgets", alert("npm", "a", "low")).await;
    s.advance(1).await;
    create(&s, "acme/secret", alert("pip", "b", "high")).await;
    create(&s, "beta/app", alert("npm", "c", "low")).await;
    let alice = s.classic("alice", &["repo"]).await;
    let (st, h, b) = get(&s, "/orgs/acme/depbot/alerts", Some(&alice)).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "vulnerability_alerts=read");
    b.as_array().unwrap().iter().for_each(|a| assert_conforms_to_snapshot("DepbotAlertWithRepository", a));
    let names: Vec<&str> = b.as_array().unwrap().iter().map(|a| a["repository"]["full_name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["acme/secret", "acme/widgets"]);
    assert_eq!(b[0]["repository"]["private"], true);
    assert_eq!(b[0]["repository"]["owner"]["type"], "Organization");
    assert_eq!(numbers(&get(&s, "/orgs/acme/depbot/alerts?ecosystem=npm", Some(&alice)).await.2), vec![1]);
    // No alert has runtime-risk or artifact-registry data.
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts?runtime_risk=internet-exposed", Some(&alice)).await.2, json!([]));
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts?artifact_registry_url=https://r.example", Some(&alice)).await.2, json!([]));
    simple_422(&get(&s, "/orgs/acme/depbot/alerts?runtime_risk=everything", Some(&alice)).await);
    // Members who are not security managers, outsiders and unknown organizations: 404.
    let bob = s.classic("bob", &["repo"]).await;
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts", Some(&bob)).await.0, 404);
    assert_eq!(get(&s, "/orgs/nope/depbot/alerts", Some(&alice)).await.0, 404);
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts", None).await.0, 401);
    let scopeless = s.classic("alice", &["read:org"]).await;
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts", Some(&scopeless)).await.0, 403);
    // A security manager team member lists them.
    let erin = s.classic("erin", &["security_events"]).await;
    assert_eq!(get(&s, "/orgs/acme/depbot/alerts", Some(&erin)).await.0, 404);
    let admin = s.classic("alice", &["admin:org"]).await;
    assert_eq!(
        s.req(Method::PUT, "/orgs/acme/security-managers/teams/security", Some(&admin)).send().await.unwrap().status().as_u16(),
        204
    );
    assert_eq!(numbers(&get(&s, "/orgs/acme/depbot/alerts", Some(&erin)).await.2).len(), 2);
});

both!(enterprise_list, |s| {
    world(&s).await;
    create(&s, "acme/widgets", alert("npm", "a", "low")).await;
    s.advance(1).await;
    create(&s, "acme/secret", alert("pip", "b", "high")).await;
    s.advance(1).await;
    create(&s, "beta/app", alert("npm", "c", "critical")).await;
    s.advance(1).await;
    create(&s, "gamma/tool", alert("npm", "d", "low")).await;
    let path = "/enterprises/corp/depbot/alerts";
    let repos_of = |b: &Value| -> Vec<String> {
        b.as_array().unwrap().iter().map(|a| a["repository"]["full_name"].as_str().unwrap().to_string()).collect()
    };
    // alice owns acme (and gamma, outside the enterprise).
    let alice = s.classic("alice", &["repo"]).await;
    let (st, h, b) = get(&s, path, Some(&alice)).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(repos_of(&b), vec!["acme/secret", "acme/widgets"]);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo, security_events");
    assert!(h.get("x-accepted-service-permissions").is_none());
    assert!(b[0]["security_advisory"]["cvss"].is_object());
    // frank owns beta; security_events is enough.
    let frank = s.classic("frank", &["security_events"]).await;
    assert_eq!(repos_of(&get(&s, path, Some(&frank)).await.2), vec!["beta/app"]);
    // Members owning nothing see nothing; a security manager sees the organization's alerts.
    let erin = s.classic("erin", &["repo"]).await;
    assert_eq!(get(&s, path, Some(&erin)).await.2, json!([]));
    let admin = s.classic("alice", &["admin:org"]).await;
    s.req(Method::PUT, "/orgs/acme/security-managers/teams/security", Some(&admin)).send().await.unwrap();
    assert_eq!(repos_of(&get(&s, path, Some(&erin)).await.2), vec!["acme/secret", "acme/widgets"]);
    // Filters apply.
    assert_eq!(repos_of(&get(&s, &format!("{path}?severity=high"), Some(&alice)).await.2), vec!["acme/secret"]);
    simple_422(&get(&s, &format!("{path}?ecosystem=cobol"), Some(&alice)).await);
    // Cursor pagination.
    let (_, h, b) = get(&s, &format!("{path}?per_page=1"), Some(&alice)).await;
    assert_eq!(repos_of(&b), vec!["acme/secret"]);
    let link = header(&h, "link");
    let next = link.trim_start_matches('<').split('>').next().unwrap();
    assert!(link.ends_with("rel=\"next\"") && next.contains("after="), "{link}");
    assert_eq!(repos_of(&get(&s, next, Some(&alice)).await.2), vec!["acme/widgets"]);
    // Permission matrix: anonymous 401; no scope, fine-grained, app tokens 403; unknown
    // enterprise and non-members 404.
    let (st, h, b) = get(&s, path, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    let noscope = s.classic("alice", &["read:org"]).await;
    let (st, h, b) = get(&s, path, Some(&noscope)).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let fg = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"vulnerability_alerts": "read"}}))
        .await;
    assert_eq!(get(&s, path, Some(&fg)).await.0, 403);
    let app = s.admin_post("/apps", json!({"name": "scanner", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst =
        s.token(json!({"kind": "installation", "app": "scanner", "org": "acme", "permissions": {"vulnerability_alerts": "read"}})).await;
    let (st, h, b) = get(&s, path, Some(&inst)).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
    assert_eq!(get(&s, "/enterprises/nope/depbot/alerts", Some(&alice)).await.0, 404);
    s.user("zoe").await;
    s.admin_post("/orgs", json!({"login": "zorg", "owners": ["zoe"]})).await;
    let zoe = s.classic("zoe", &["repo"]).await;
    assert_eq!(get(&s, path, Some(&zoe)).await.0, 404, "not an enterprise member");
    // Conditional requests: the ETag answers 304.
    let (_, h, _) = get(&s, path, Some(&alice)).await;
    let etag = header(&h, "etag").to_string();
    let r = s.req(Method::GET, path, Some(&alice)).header("if-none-match", etag).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 304);
});

both!(opening_notifies_watchers_who_may_see, |s| {
    world(&s).await;
    for who in ["bob", "carol", "erin"] {
        s.admin_post("/repos/acme/widgets/watchers", json!({"login": who})).await;
    }
    s.admin_post("/users", json!({"login": "olga"})).await;
    s.repo("olga", "lib", false).await;
    create(&s, "acme/widgets", alert("npm", "a", "high")).await;
    create(&s, "olga/lib", alert("npm", "a", "high")).await;
    let bob = s.classic("bob", &["notifications"]).await;
    let mut threads = Value::Null;
    for _ in 0..200 {
        threads = get(&s, "/notifications?all=true", Some(&bob)).await.2;
        if threads.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(threads[0]["reason"], "security_alert", "{threads}");
    assert_eq!(threads[0]["subject"]["type"], "RepositoryVulnerabilityAlert");
    assert_eq!(threads[0]["subject"]["url"], format!("{}/repos/acme/widgets/depbot/alerts/1", s.base));
    // The owner of a user repository is told too; carol watches a public repository but may
    // not see its alerts: nothing for her.
    let olga = s.classic("olga", &["notifications"]).await;
    for _ in 0..200 {
        if get(&s, "/notifications?all=true", Some(&olga)).await.2.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(get(&s, "/notifications?all=true", Some(&olga)).await.2[0]["reason"], "security_alert");
    let carol = s.classic("carol", &["notifications"]).await;
    assert_eq!(get(&s, "/notifications?all=true", Some(&carol)).await.2, json!([]));
    // Alert activity never reaches public feeds.
    let events = get(&s, "/repos/acme/widgets/events", None).await.2;
    assert!(events.as_array().unwrap().iter().all(|e| !e["type"].as_str().unwrap_or("").contains("Depbot")), "{events}");
});

both!(alert_changes_are_webhooks, |s| {
    world(&s).await;
    let alice = s.classic("alice", &["repo", "admin:org_hook"]).await;
    let (url, recv) = crate::hooks::Recv::start().await;
    let hook = json!({"name": "web", "config": {"url": url, "content_type": "json"}, "events": ["depbot_alert"]});
    let (st, _, b) = call(&s, Method::POST, "/orgs/acme/hooks", Some(&alice), Some(hook)).await;
    assert_eq!(st, 201, "{b}");
    recv.wait(1, 10).await; // the ping
    create(&s, "acme/widgets", alert("npm", "lodash", "high")).await;
    // An alert the control plane creates already fixed is history: no webhook.
    create(
        &s,
        "acme/widgets",
        json!({"package": {"ecosystem": "npm", "name": "x"}, "manifest_path": "m", "state": "fixed",
        "advisory": {"summary": "s", "severity": "low"}}),
    )
    .await;
    let p = "/repos/acme/widgets/depbot/alerts/1";
    let r = patch(&s, p, &alice, json!({"state": "dismissed", "dismissed_reason": "tolerable_risk", "dismissed_comment": "fine"})).await;
    assert_eq!(r.0, 200, "{}", r.2);
    let r = patch(&s, p, &alice, json!({"state": "open"})).await;
    assert_eq!(r.0, 200, "{}", r.2);
    // Assignees alone change no state: no webhook.
    let r = patch(&s, p, &alice, json!({"assignees": ["alice"]})).await;
    assert_eq!(r.0, 200, "{}", r.2);
    let mut hits = recv.wait(4, 10).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(recv.count(), 4);
    hits.sort_by_key(|h| h.payload()["alert"]["updated_at"].as_str().map(str::to_string));
    let mut seen: Vec<(String, String, String, String)> = hits[1..]
        .iter()
        .map(|h| {
            let p = h.payload();
            let state = p["alert"]["state"].as_str().unwrap().to_string();
            (h.h("x-service-event"), p["action"].as_str().unwrap().to_string(), state, p["sender"]["login"].as_str().unwrap().to_string())
        })
        .collect();
    seen.sort_by_key(|(_, a, _, _)| ["created", "dismissed", "reopened"].iter().position(|x| x == a));
    let e = |a: &str, st: &str, who: &str| ("depbot_alert".to_string(), a.to_string(), st.to_string(), who.to_string());
    assert_eq!(seen, [e("created", "open", "acme"), e("dismissed", "dismissed", "alice"), e("reopened", "open", "alice")]);
    let dismissed = hits[1..].iter().map(|h| h.payload()).find(|p| p["action"] == "dismissed").unwrap();
    let a = &dismissed["alert"];
    assert_eq!(
        (a["number"].clone(), a["dismissed_reason"].clone(), a["dismissed_comment"].clone()),
        (json!(1), json!("tolerable_risk"), json!("fine"))
    );
    assert_eq!(a["dismissed_by"]["login"], "alice");
    assert_eq!(a["dependency"]["package"]["name"], "lodash");
    assert!(a["dependency"].get("relationship").is_none() && a.get("assignees").is_none(), "{a}");
    assert!(a["security_advisory"]["cvss"]["score"].is_number(), "{a}");
    assert_eq!(dismissed["repository"]["full_name"], "acme/widgets");
    // Only what the published payload has: no record-keeping fields at the top.
    let mut keys: Vec<&str> = dismissed.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["action", "alert", "organization", "repository", "sender"]);
});
