//! The authorization matrix of every write operation × every credential kind, with the exact
//! outcome of each cell (issue: a `public_repo` token could change private repositories it
//! could not read). One rule decides what a credential reaches, for reads and writes alike:
//! private repositories need a scope that reaches them (`repo`; never `public_repo` or
//! `delete_repo`), and a token that cannot see a repository changes nothing in it.
//!
//! Each cell runs on a resource made fresh for it (a run, a hook, a secret, …) by the control
//! plane or the owner's full token, so a cell that succeeds leaves nothing the next one needs.
//! Cells: a status code, with a letter for which 403 it is (`p` personal access token, `i`
//! integration, `w` push access, `a` admin rights, `e` enterprise owner, `x` any other message).
use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::depbot::alert;
use crate::harness::*;

/// The credential columns, in the order of every expected row.
const CREDENTIALS: [&str; 14] = [
    "anonymous",
    "classic: all scopes",
    "classic: public_repo (and every non-repository scope)",
    "classic: no scopes",
    "oauth: all scopes",
    "oauth: public_repo (and every non-repository scope)",
    "fine-grained: write (owner acme)",
    "fine-grained: read (owner acme)",
    "user-to-server: write",
    "installation on acme: write",
    "workflow token of acme/private",
    "member bob, classic all scopes",
    "outsider carol, classic all scopes",
    "application basic credentials",
];

const ALL_SCOPES: [&str; 8] =
    ["repo", "delete_repo", "admin:org", "admin:org_hook", "admin:enterprise", "assistant", "notifications", "workflow"];
const PUBLIC_SCOPES: [&str; 7] =
    ["public_repo", "delete_repo", "admin:org", "admin:org_hook", "admin:enterprise", "assistant", "notifications"];
const PERMISSIONS: [&str; 12] = [
    "statuses",
    "administration",
    "vulnerability_alerts",
    "devenv_secrets",
    "actions",
    "deployments",
    "contents",
    "organization_hooks",
    "organization_administration",
    "organization_private_registries",
    "assistant_content_exclusion",
    "enterprise_teams",
];

enum Cred {
    None,
    Token(String),
    Basic(String, String),
}

struct World {
    creds: Vec<Cred>,
    /// alice's classic token with every scope: sets up what a cell acts on.
    owner: String,
    /// The OAuth application whose credentials are the last column.
    oauth_app: (String, String),
}

fn permissions(level: &str) -> Value {
    Value::Object(PERMISSIONS.iter().map(|p| (p.to_string(), json!(level))).collect())
}

/// alice owns organization acme (in enterprise corp, with team `Platform`) with repositories
/// `private` and `public`; bob is a member, carol an outsider. Both repositories have `main`
/// at [`SHA`].
async fn world(s: &Server) -> World {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/enterprises", json!({"slug": "corp", "name": "Corp", "owners": ["alice"], "members": ["bob"]})).await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"], "enterprise": "corp"})).await;
    s.admin_post("/orgs/acme/teams", json!({"name": "Security", "members": ["bob"]})).await;
    s.admin_post("/enterprises/corp/teams", json!({"name": "Platform", "members": ["alice"]})).await;
    for (name, private) in [("private", true), ("public", false)] {
        s.repo("acme", name, private).await;
        s.push(&format!("acme/{name}"), "refs/heads/main", SHA).await;
    }
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    let oa = s.admin_post("/apps", json!({"name": "OA", "owner": "acme", "kind": "oauth"})).await;
    let oa = oa["client_id"].as_str().unwrap().to_string();
    // The application of the authorization operations: another one, since deleting its grant
    // deletes alice's tokens of it.
    let auth = s.admin_post("/apps", json!({"name": "Auth", "owner": "acme", "kind": "oauth"})).await;
    let oauth_app = (auth["client_id"].as_str().unwrap().to_string(), auth["client_secret"].as_str().unwrap().to_string());

    let owner = s.classic("alice", &ALL_SCOPES).await;
    let tok = |v: Value| async move { Cred::Token(s.token(v).await) };
    let fine = |level: &str| json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": permissions(level)});
    let creds = vec![
        Cred::None,
        Cred::Token(owner.clone()),
        Cred::Token(s.classic("alice", &PUBLIC_SCOPES).await),
        Cred::Token(s.classic("alice", &[]).await),
        tok(json!({"kind": "oauth", "login": "alice", "client_id": oa, "scopes": ALL_SCOPES})).await,
        tok(json!({"kind": "oauth", "login": "alice", "client_id": oa, "scopes": PUBLIC_SCOPES})).await,
        tok(fine("write")).await,
        tok(fine("read")).await,
        tok(json!({"kind": "user_to_server", "login": "alice", "client_id": cid, "permissions": permissions("write")})).await,
        tok(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": permissions("write")})).await,
        Cred::Token(
            s.admin_post("/tokens", json!({"kind": "workflow", "repo": "acme/private"})).await["token"].as_str().unwrap().to_string(),
        ),
        Cred::Token(s.classic("bob", &ALL_SCOPES).await),
        Cred::Token(s.classic("carol", &ALL_SCOPES).await),
        Cred::Basic(oauth_app.0.clone(), oauth_app.1.clone()),
    ];
    World { creds, owner, oauth_app }
}

/// A cell's outcome: the status, and for a 403 which one.
fn outcome(status: u16, body: &Value) -> String {
    if status != 403 {
        return status.to_string();
    }
    let m = body["message"].as_str().unwrap_or("");
    let letter = match m {
        "Resource not accessible by personal access token" => "p",
        "Resource not accessible by integration" => "i",
        "Must have push access to this repository." => "w",
        "Must have admin rights to Repository." => "a",
        "Must be an enterprise owner to change enterprise team memberships." => "e",
        _ => "x",
    };
    format!("403{letter}")
}

fn id(v: &Value) -> String {
    v["id"].as_i64().map(|i| i.to_string()).or_else(|| v["id"].as_str().map(String::from)).unwrap_or_else(|| panic!("no id: {v}"))
}

/// A run of `repo` by alice, settled at once: `jobs` with the plan's other fields.
async fn run(s: &Server, repo: &str, extra: Value) -> Value {
    let mut plan = json!({"workflow": ".workflows/ci.yml", "actor": "alice", "queue_seconds": 0,
                          "jobs": [{"name": "build", "duration_seconds": 1}]});
    for (k, v) in extra.as_object().unwrap() {
        plan[k] = v.clone();
    }
    s.admin_post(&format!("/repos/{repo}/runs"), plan).await
}

/// A completed run (its job `build` failed).
async fn completed(s: &Server, repo: &str) -> Value {
    let r = run(s, repo, json!({"jobs": [{"name": "build", "duration_seconds": 1, "outcome": "failure"}]})).await;
    let mut r = r;
    while r["status"] != "completed" {
        r = s.admin_post(&format!("/runs/{}/advance", r["id"]), json!({})).await;
    }
    r
}

/// `(method, path, body)` of one cell of operation `op` on repository `repo` (`n`: the cell's
/// number, for unique names), with what the cell acts on made fresh.
async fn prepare(s: &Server, w: &World, op: &str, repo: &str, n: usize) -> (Method, String, Option<Value>) {
    let owner = Some(w.owner.as_str());
    let private = repo.ends_with("private");
    let setup = |m: Method, path: String, body: Option<Value>| async move {
        let (st, _, b) = call(s, m, &path, owner, body).await;
        assert!(st < 300, "setup {path}: {st} {b}");
        b
    };
    match op {
        "POST /repos/{owner}/{repo}/statuses/{sha}" => {
            (Method::POST, format!("/repos/{repo}/statuses/{SHA}"), Some(json!({"state": "success", "context": format!("c{n}")})))
        }
        "PATCH /repos/{owner}/{repo}" => (Method::PATCH, format!("/repos/{repo}"), Some(json!({"description": format!("d{n}")}))),
        "DELETE /repos/{owner}/{repo}" => {
            // A repository of its own per cell (the workflow token reaches none of them).
            let name = format!("gone{n}{}", if private { "p" } else { "" });
            s.repo("acme", &name, private).await;
            (Method::DELETE, format!("/repos/acme/{name}"), None)
        }
        "POST /orgs/{org}/repos" => (Method::POST, "/orgs/acme/repos".into(), Some(json!({"name": format!("new{n}"), "private": private}))),
        "POST /user/repos" => (Method::POST, "/user/repos".into(), Some(json!({"name": format!("mine{n}"), "private": private}))),
        "PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}" => {
            let a = s.admin_post(&format!("/repos/{repo}/depbot/alerts"), alert("npm", "left-pad", "high")).await;
            let path = format!("/repos/{repo}/depbot/alerts/{}", a["number"]);
            (Method::PATCH, path, Some(json!({"state": "dismissed", "dismissed_reason": "tolerable_risk"})))
        }
        "PUT /repos/{owner}/{repo}/devenvs/secrets/{secret_name}" | "DELETE /repos/{owner}/{repo}/devenvs/secrets/{secret_name}" => {
            let key = setup(Method::GET, format!("/repos/{repo}/devenvs/secrets/public-key"), None).await;
            let sealed = platform_api::secrets::seal_for(key["key"].as_str().unwrap(), b"v").unwrap();
            let path = format!("/repos/{repo}/devenvs/secrets/S{n}");
            let body = json!({"encrypted_value": sealed, "key_id": key["key_id"]});
            if op.starts_with("DELETE") {
                setup(Method::PUT, path.clone(), Some(body)).await;
                (Method::DELETE, path, None)
            } else {
                (Method::PUT, path, Some(body))
            }
        }
        "POST /repos/{owner}/{repo}/rulesets" => {
            (Method::POST, format!("/repos/{repo}/rulesets"), Some(json!({"name": format!("r{n}"), "enforcement": "active"})))
        }
        "PUT /repos/{owner}/{repo}/rulesets/{ruleset_id}" | "DELETE /repos/{owner}/{repo}/rulesets/{ruleset_id}" => {
            let r = s.admin_post(&format!("/repos/{repo}/rulesets"), json!({"name": format!("r{n}"), "enforcement": "active"})).await;
            let path = format!("/repos/{repo}/rulesets/{}", id(&r));
            if op.starts_with("PUT") {
                (Method::PUT, path, Some(json!({"name": format!("renamed{n}")})))
            } else {
                (Method::DELETE, path, None)
            }
        }
        "DELETE /repos/{owner}/{repo}/actions/runs/{run_id}" => {
            (Method::DELETE, format!("/repos/{repo}/actions/runs/{}", id(&completed(s, repo).await)), None)
        }
        "DELETE /repos/{owner}/{repo}/actions/runs/{run_id}/logs" => {
            (Method::DELETE, format!("/repos/{repo}/actions/runs/{}/logs", id(&completed(s, repo).await)), None)
        }
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel" | "POST /repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel" => {
            let r = run(s, repo, json!({"jobs": [{"name": "build", "duration_seconds": 600}]})).await;
            let tail = op.rsplit('/').next().unwrap();
            (Method::POST, format!("/repos/{repo}/actions/runs/{}/{tail}", id(&r)), None)
        }
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun" | "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs" => {
            let tail = op.rsplit('/').next().unwrap();
            (Method::POST, format!("/repos/{repo}/actions/runs/{}/{tail}", id(&completed(s, repo).await)), Some(json!({})))
        }
        "POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun" => {
            let r = completed(s, repo).await;
            let jobs = setup(Method::GET, format!("/repos/{repo}/actions/runs/{}/jobs", id(&r)), None).await;
            (Method::POST, format!("/repos/{repo}/actions/jobs/{}/rerun", jobs["jobs"][0]["id"]), Some(json!({})))
        }
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/approve" => {
            let r = run(s, repo, json!({"fork": true})).await;
            (Method::POST, format!("/repos/{repo}/actions/runs/{}/approve", id(&r)), None)
        }
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments" => {
            let env =
                json!({"name": format!("prod{n}"), "reviewers": [{"type": "User", "login": "alice"}, {"type": "User", "login": "bob"}]});
            let r = run(s, repo, json!({"jobs": [{"name": "deploy", "environment": env}]})).await;
            let path = format!("/repos/{repo}/actions/runs/{}/pending_deployments", id(&r));
            let pending = setup(Method::GET, path.clone(), None).await;
            let env_id = pending[0]["environment"]["id"].clone();
            (Method::POST, path, Some(json!({"environment_ids": [env_id], "state": "approved", "comment": "ship it"})))
        }
        "PUT /repos/{owner}/{repo}/import" => {
            let _ = call(s, Method::DELETE, &format!("/repos/{repo}/import"), owner, None).await;
            (Method::PUT, format!("/repos/{repo}/import"), Some(json!({"vcs": "git", "vcs_url": "http://127.0.0.1:9/source.git"})))
        }
        "PATCH /repos/{owner}/{repo}/import"
        | "DELETE /repos/{owner}/{repo}/import"
        | "PATCH /repos/{owner}/{repo}/import/authors/{author_id}"
        | "PATCH /repos/{owner}/{repo}/import/lfs" => {
            let _ = call(s, Method::DELETE, &format!("/repos/{repo}/import"), owner, None).await;
            let start = json!({"vcs": "git", "vcs_url": "http://127.0.0.1:9/source.git"});
            setup(Method::PUT, format!("/repos/{repo}/import"), Some(start)).await;
            let path = op.split_once(' ').unwrap().1.replace("{owner}/{repo}", repo).replace("{author_id}", "1");
            let body = match op {
                "PATCH /repos/{owner}/{repo}/import/lfs" => Some(json!({"use_lfs": "opt_in"})),
                "PATCH /repos/{owner}/{repo}/import/authors/{author_id}" => Some(json!({"name": "A", "email": "a@example.com"})),
                "PATCH /repos/{owner}/{repo}/import" => Some(json!({})),
                _ => None,
            };
            (if op.starts_with("DELETE") { Method::DELETE } else { Method::PATCH }, path, body)
        }
        "POST /orgs/{org}/hooks" => {
            (Method::POST, "/orgs/acme/hooks".into(), Some(json!({"name": "web", "config": {"url": "http://127.0.0.1:9/h"}})))
        }
        "PATCH /orgs/{org}/hooks/{hook_id}"
        | "DELETE /orgs/{org}/hooks/{hook_id}"
        | "PATCH /orgs/{org}/hooks/{hook_id}/config"
        | "POST /orgs/{org}/hooks/{hook_id}/pings"
        | "POST /orgs/{org}/hooks/{hook_id}/deliveries/{delivery_id}/attempts" => {
            let h = setup(Method::POST, "/orgs/acme/hooks".into(), Some(json!({"name": "web", "config": {"url": "http://127.0.0.1:9/h"}})))
                .await;
            let path = op.split_once(' ').unwrap().1.replace("{org}", "acme").replace("{hook_id}", &id(&h)).replace("{delivery_id}", "1");
            let body = match op.split_once(' ').unwrap().0 {
                "PATCH" => Some(json!({"active": false})),
                _ => None,
            };
            let method = Method::from_bytes(op.split_once(' ').unwrap().0.as_bytes()).unwrap();
            (method, path, body)
        }
        "PUT /orgs/{org}/security-managers/teams/{team_slug}" => (Method::PUT, "/orgs/acme/security-managers/teams/security".into(), None),
        "DELETE /orgs/{org}/security-managers/teams/{team_slug}" => {
            setup(Method::PUT, "/orgs/acme/security-managers/teams/security".into(), None).await;
            (Method::DELETE, "/orgs/acme/security-managers/teams/security".into(), None)
        }
        "POST /orgs/{org}/private-registries"
        | "PATCH /orgs/{org}/private-registries/{secret_name}"
        | "DELETE /orgs/{org}/private-registries/{secret_name}" => {
            let key = setup(Method::GET, "/orgs/acme/private-registries/public-key".into(), None).await;
            let sealed = platform_api::secrets::seal_for(key["key"].as_str().unwrap(), b"tok").unwrap();
            let body = json!({"registry_type": "maven_repository", "url": format!("https://maven.example.com/{n}"), "visibility": "private",
                              "encrypted_value": sealed, "key_id": key["key_id"]});
            if op.starts_with("POST") {
                return (Method::POST, "/orgs/acme/private-registries".into(), Some(body));
            }
            let r = setup(Method::POST, "/orgs/acme/private-registries".into(), Some(body)).await;
            let path = format!("/orgs/acme/private-registries/{}", r["name"].as_str().unwrap());
            if op.starts_with("PATCH") {
                (Method::PATCH, path, Some(json!({"visibility": "all"})))
            } else {
                (Method::DELETE, path, None)
            }
        }
        "PUT /orgs/{org}/assistant/content_exclusion" => {
            (Method::PUT, "/orgs/acme/assistant/content_exclusion".into(), Some(json!({"acme/public": [format!("/p{n}")]})))
        }
        "POST /enterprises/{enterprise}/teams/{enterprise-team}/memberships/add"
        | "POST /enterprises/{enterprise}/teams/{enterprise-team}/memberships/remove" => {
            let path = op.split_once(' ').unwrap().1.replace("{enterprise}", "corp").replace("{enterprise-team}", "ent:platform");
            (Method::POST, path, Some(json!({"usernames": ["bob"]})))
        }
        "PUT /enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}" => {
            (Method::PUT, "/enterprises/corp/teams/ent:platform/memberships/bob".into(), None)
        }
        "DELETE /enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}" => {
            setup(Method::PUT, "/enterprises/corp/teams/ent:platform/memberships/bob".into(), None).await;
            (Method::DELETE, "/enterprises/corp/teams/ent:platform/memberships/bob".into(), None)
        }
        "PUT /notifications" => (Method::PUT, "/notifications".into(), Some(json!({"read": true}))),
        "PATCH /notifications/threads/{thread_id}"
        | "DELETE /notifications/threads/{thread_id}"
        | "PUT /notifications/threads/{thread_id}/subscription"
        | "DELETE /notifications/threads/{thread_id}/subscription" => {
            let t = s
                .admin_post(
                    "/notifications",
                    json!({"login": "alice", "repo": repo, "reason": "mention", "subject": {"title": format!("t{n}"), "type": "Issue"}}),
                )
                .await;
            let path = op.split_once(' ').unwrap().1.replace("{thread_id}", &id(&t));
            let method = Method::from_bytes(op.split_once(' ').unwrap().0.as_bytes()).unwrap();
            let body = (method == Method::PUT).then(|| json!({"ignored": true}));
            (method, path, body)
        }
        "DELETE /applications/{client_id}/grant"
        | "POST /applications/{client_id}/token"
        | "PATCH /applications/{client_id}/token"
        | "DELETE /applications/{client_id}/token" => {
            let t = s.token(json!({"kind": "oauth", "login": "alice", "client_id": w.oauth_app.0, "scopes": ["repo"]})).await;
            let path = op.split_once(' ').unwrap().1.replace("{client_id}", &w.oauth_app.0);
            let method = Method::from_bytes(op.split_once(' ').unwrap().0.as_bytes()).unwrap();
            (method, path, Some(json!({"access_token": t})))
        }
        "PUT /repos/{owner}/{repo}/contents/{path}" => {
            let b = format!("w{n}");
            s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/{b}"), "files": {"f.txt": "x"}})).await;
            let body = json!({"message": "m", "content": "eA==", "branch": b});
            (Method::PUT, format!("/repos/{repo}/contents/c{n}.txt"), Some(body))
        }
        "DELETE /repos/{owner}/{repo}/contents/{path}" => {
            let b = format!("w{n}");
            s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/{b}"), "files": {"f.txt": "x"}})).await;
            let file = setup(Method::GET, format!("/repos/{repo}/contents/f.txt?ref={b}"), None).await;
            (Method::DELETE, format!("/repos/{repo}/contents/f.txt"), Some(json!({"message": "m", "sha": file["sha"], "branch": b})))
        }
        "POST /repos/{owner}/{repo}/git/refs" => {
            let made =
                s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/w{n}"), "files": {"f.txt": "x"}})).await;
            (Method::POST, format!("/repos/{repo}/git/refs"), Some(json!({"ref": format!("refs/heads/n{n}"), "sha": made["sha"]})))
        }
        "PATCH /repos/{owner}/{repo}/git/refs/{ref}" => {
            s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/w{n}"), "files": {"f.txt": "x"}})).await;
            let next = s
                .admin_post(
                    &format!("/repos/{repo}/refs"),
                    json!({"ref": format!("refs/heads/v{n}"), "base": format!("refs/heads/w{n}"), "files": {"g.txt": "y"}}),
                )
                .await;
            (Method::PATCH, format!("/repos/{repo}/git/refs/heads/w{n}"), Some(json!({"sha": next["sha"]})))
        }
        "DELETE /repos/{owner}/{repo}/git/refs/{ref}" => {
            s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/w{n}"), "files": {"f.txt": "x"}})).await;
            (Method::DELETE, format!("/repos/{repo}/git/refs/heads/w{n}"), None)
        }
        "POST /repos/{owner}/{repo}/git/blobs" => {
            (Method::POST, format!("/repos/{repo}/git/blobs"), Some(json!({"content": format!("c{n}")})))
        }
        "POST /repos/{owner}/{repo}/git/tags" => {
            let made =
                s.admin_post(&format!("/repos/{repo}/refs"), json!({"ref": format!("refs/heads/w{n}"), "files": {"f.txt": "x"}})).await;
            let body = json!({"tag": format!("t{n}"), "message": "m", "object": made["sha"], "type": "commit"});
            (Method::POST, format!("/repos/{repo}/git/tags"), Some(body))
        }
        other => panic!("no cell preparation for {other}: add the operation to the matrix"),
    }
}

/// Which repository a row acts on.
#[derive(Clone, Copy, Debug)]
enum On {
    Private,
    Public,
    /// No repository (organization, enterprise, user and application operations).
    Neither,
}

/// The expected outcomes: operation, repository, one cell per credential in [`CREDENTIALS`] order.
const MATRIX: &[(&str, On, &str)] = &[
    ("POST /repos/{owner}/{repo}/statuses/{sha}", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    ("POST /repos/{owner}/{repo}/statuses/{sha}", On::Public, "401 201 403p 403p 201 403i 201 403p 201 201 403w 201 403w 403i"),
    ("PATCH /repos/{owner}/{repo}", On::Private, "404 200 404 404 200 404 200 403p 200 200 403i 403a 404 404"),
    ("PATCH /repos/{owner}/{repo}", On::Public, "401 200 200 403p 200 200 200 403p 200 200 403i 403a 403w 403i"),
    ("DELETE /repos/{owner}/{repo}", On::Private, "404 204 404 404 204 404 204 403p 204 204 404 403a 404 404"),
    ("DELETE /repos/{owner}/{repo}", On::Public, "401 204 204 403a 204 204 204 403p 204 204 403i 403a 403a 403i"),
    ("POST /orgs/{org}/repos", On::Private, "401 201 403p 403p 201 403i 201 403p 201 201 404 201 404 404"),
    ("POST /orgs/{org}/repos", On::Public, "401 201 201 403p 201 201 201 403p 201 201 404 201 404 404"),
    ("POST /user/repos", On::Private, "401 201 403p 403p 201 403i 403p 403p 201 403i 403i 201 201 403i"),
    ("POST /user/repos", On::Public, "401 201 201 403p 201 201 403p 403p 201 403i 403i 201 201 403i"),
    ("PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}", On::Private, "404 200 404 404 200 404 200 403p 200 200 403i 200 404 404"),
    (
        "PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}",
        On::Public,
        "401 200 403p 403p 200 403i 200 403p 200 200 403i 200 403w 403i",
    ),
    ("PUT /repos/{owner}/{repo}/devenvs/secrets/{secret_name}", On::Private, "404 201 404 404 201 404 201 403p 201 201 403i 403a 404 404"),
    (
        "PUT /repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
        On::Public,
        "401 201 403p 403p 201 403i 201 403p 201 201 403i 403a 403w 403i",
    ),
    (
        "DELETE /repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
        On::Private,
        "404 204 404 404 204 404 204 403p 204 204 403i 403a 404 404",
    ),
    (
        "DELETE /repos/{owner}/{repo}/devenvs/secrets/{secret_name}",
        On::Public,
        "401 204 403p 403p 204 403i 204 403p 204 204 403i 403a 403w 403i",
    ),
    ("POST /repos/{owner}/{repo}/rulesets", On::Private, "404 201 404 404 201 404 201 403p 201 201 403i 403a 404 404"),
    ("POST /repos/{owner}/{repo}/rulesets", On::Public, "401 201 403p 403p 201 403i 201 403p 201 201 403i 403a 403w 403i"),
    ("PUT /repos/{owner}/{repo}/rulesets/{ruleset_id}", On::Private, "404 200 404 404 200 404 200 403p 200 200 403i 403a 404 404"),
    ("PUT /repos/{owner}/{repo}/rulesets/{ruleset_id}", On::Public, "401 200 403p 403p 200 403i 200 403p 200 200 403i 403a 403w 403i"),
    ("DELETE /repos/{owner}/{repo}/rulesets/{ruleset_id}", On::Private, "404 204 404 404 204 404 204 403p 204 204 403i 403a 404 404"),
    ("DELETE /repos/{owner}/{repo}/rulesets/{ruleset_id}", On::Public, "401 204 403p 403p 204 403i 204 403p 204 204 403i 403a 403w 403i"),
    // Imports before any run: a repository with workflow runs refuses imports.
    ("PUT /repos/{owner}/{repo}/import", On::Private, "401 201 404 404 403i 403i 403p 403p 403i 403i 403i 201 404 403i"),
    ("PUT /repos/{owner}/{repo}/import", On::Public, "401 201 403p 403p 403i 403i 403p 403p 403i 403i 403i 201 403w 403i"),
    ("PATCH /repos/{owner}/{repo}/import", On::Private, "401 200 404 404 403i 403i 403p 403p 403i 403i 403i 200 404 403i"),
    ("PATCH /repos/{owner}/{repo}/import", On::Public, "401 200 403p 403p 403i 403i 403p 403p 403i 403i 403i 200 403w 403i"),
    ("DELETE /repos/{owner}/{repo}/import", On::Private, "401 204 404 404 403i 403i 403p 403p 403i 403i 403i 204 404 403i"),
    ("DELETE /repos/{owner}/{repo}/import", On::Public, "401 204 403p 403p 403i 403i 403p 403p 403i 403i 403i 204 403w 403i"),
    (
        "PATCH /repos/{owner}/{repo}/import/authors/{author_id}",
        On::Private,
        "401 404 404 404 403i 403i 403p 403p 403i 403i 403i 404 404 403i",
    ),
    (
        "PATCH /repos/{owner}/{repo}/import/authors/{author_id}",
        On::Public,
        "401 404 403p 403p 403i 403i 403p 403p 403i 403i 403i 404 403w 403i",
    ),
    ("PATCH /repos/{owner}/{repo}/import/lfs", On::Private, "401 200 404 404 403i 403i 403p 403p 403i 403i 403i 200 404 403i"),
    ("PATCH /repos/{owner}/{repo}/import/lfs", On::Public, "401 200 403p 403p 403i 403i 403p 403p 403i 403i 403i 200 403w 403i"),
    ("DELETE /repos/{owner}/{repo}/actions/runs/{run_id}", On::Private, "404 204 404 404 204 404 204 403p 204 204 204 204 404 404"),
    ("DELETE /repos/{owner}/{repo}/actions/runs/{run_id}", On::Public, "401 204 403p 403p 204 403i 204 403p 204 204 403w 204 403w 403i"),
    ("POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", On::Private, "404 202 404 404 202 404 202 403p 202 202 202 202 404 404"),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
        On::Public,
        "401 202 403p 403p 202 403i 202 403p 202 202 403w 202 403w 403i",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel",
        On::Private,
        "404 202 404 404 202 404 202 403p 202 202 202 202 404 404",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel",
        On::Public,
        "401 202 403p 403p 202 403i 202 403p 202 202 403w 202 403w 403i",
    ),
    ("DELETE /repos/{owner}/{repo}/actions/runs/{run_id}/logs", On::Private, "404 204 404 404 204 404 204 403p 204 204 204 204 404 404"),
    (
        "DELETE /repos/{owner}/{repo}/actions/runs/{run_id}/logs",
        On::Public,
        "401 204 403p 403p 204 403i 204 403p 204 204 403w 204 403w 403i",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",
        On::Private,
        "404 200 404 404 200 404 200 403p 403i 403i 403i 200 404 404",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",
        On::Public,
        "401 200 403p 403p 200 403i 200 403p 403i 403i 403i 200 422 403i",
    ),
    ("POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun", On::Private, "404 201 404 404 201 404 201 403p 201 403i 403i 201 404 404"),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun",
        On::Public,
        "401 201 403p 403p 201 403i 201 403p 201 403i 403w 201 403w 403i",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
        On::Private,
        "404 201 404 404 201 404 201 403p 201 403i 403i 201 404 404",
    ),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
        On::Public,
        "401 201 403p 403p 201 403i 201 403p 201 403i 403w 201 403w 403i",
    ),
    ("POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun", On::Private, "404 201 404 404 201 404 201 403p 201 403i 403i 201 404 404"),
    (
        "POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun",
        On::Public,
        "401 201 403p 403p 201 403i 201 403p 201 403i 403w 201 403w 403i",
    ),
    ("POST /repos/{owner}/{repo}/actions/runs/{run_id}/approve", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    (
        "POST /repos/{owner}/{repo}/actions/runs/{run_id}/approve",
        On::Public,
        "401 201 403p 403p 201 403i 201 403p 201 201 403w 201 403w 403i",
    ),
    ("POST /orgs/{org}/hooks", On::Neither, "401 201 201 403p 201 201 201 403p 201 201 404 404 404 404"),
    ("PATCH /orgs/{org}/hooks/{hook_id}", On::Neither, "401 200 200 403p 404 404 200 403p 200 200 404 404 404 404"),
    ("DELETE /orgs/{org}/hooks/{hook_id}", On::Neither, "401 204 204 403p 404 404 204 403p 204 204 404 404 404 404"),
    ("PATCH /orgs/{org}/hooks/{hook_id}/config", On::Neither, "401 200 200 403p 404 404 200 403p 200 200 404 404 404 404"),
    (
        "POST /orgs/{org}/hooks/{hook_id}/deliveries/{delivery_id}/attempts",
        On::Neither,
        "401 404 404 403p 404 404 404 403p 404 404 404 404 404 404",
    ),
    ("POST /orgs/{org}/hooks/{hook_id}/pings", On::Neither, "401 204 204 403p 404 404 204 403p 204 204 404 404 404 404"),
    ("PUT /orgs/{org}/security-managers/teams/{team_slug}", On::Neither, "401 204 204 403p 204 204 204 403p 204 204 404 404 404 404"),
    ("DELETE /orgs/{org}/security-managers/teams/{team_slug}", On::Neither, "401 204 204 403p 204 204 204 403p 204 204 404 404 404 404"),
    ("POST /orgs/{org}/private-registries", On::Neither, "401 201 201 403p 201 201 201 403p 201 201 404 404 404 404"),
    ("PATCH /orgs/{org}/private-registries/{secret_name}", On::Neither, "401 204 204 403p 204 204 204 403p 204 204 404 404 404 404"),
    ("DELETE /orgs/{org}/private-registries/{secret_name}", On::Neither, "401 204 204 403p 204 204 204 403p 204 204 404 404 404 404"),
    ("PUT /orgs/{org}/assistant/content_exclusion", On::Neither, "401 200 200 403p 200 200 200 403p 200 200 404 404 404 404"),
    (
        "POST /enterprises/{enterprise}/teams/{enterprise-team}/memberships/add",
        On::Neither,
        "401 200 200 403p 200 200 200 403p 403i 403i 403i 403e 404 403i",
    ),
    (
        "POST /enterprises/{enterprise}/teams/{enterprise-team}/memberships/remove",
        On::Neither,
        "401 200 200 403p 200 200 200 403p 403i 403i 403i 403e 404 403i",
    ),
    (
        "PUT /enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}",
        On::Neither,
        "401 201 201 403p 201 201 201 403p 403i 403i 403i 403e 404 403i",
    ),
    (
        "DELETE /enterprises/{enterprise}/teams/{enterprise-team}/memberships/{username}",
        On::Neither,
        "401 204 204 403p 204 204 204 403p 403i 403i 403i 403e 404 403i",
    ),
    ("PUT /notifications", On::Neither, "401 205 205 403p 205 205 403p 403p 403i 403i 403i 205 205 403i"),
    ("PATCH /notifications/threads/{thread_id}", On::Private, "401 205 205 403p 205 205 403p 403p 403i 403i 403i 404 404 403i"),
    ("PATCH /notifications/threads/{thread_id}", On::Public, "401 205 205 403p 205 205 403p 403p 403i 403i 403i 404 404 403i"),
    ("DELETE /notifications/threads/{thread_id}", On::Private, "401 204 204 403p 204 204 403p 403p 403i 403i 403i 404 404 403i"),
    ("DELETE /notifications/threads/{thread_id}", On::Public, "401 204 204 403p 204 204 403p 403p 403i 403i 403i 404 404 403i"),
    ("PUT /notifications/threads/{thread_id}/subscription", On::Private, "401 200 200 403p 200 200 403p 403p 403i 403i 403i 404 404 403i"),
    ("PUT /notifications/threads/{thread_id}/subscription", On::Public, "401 200 200 403p 200 200 403p 403p 403i 403i 403i 404 404 403i"),
    (
        "DELETE /notifications/threads/{thread_id}/subscription",
        On::Private,
        "401 204 204 403p 204 204 403p 403p 403i 403i 403i 404 404 403i",
    ),
    (
        "DELETE /notifications/threads/{thread_id}/subscription",
        On::Public,
        "401 204 204 403p 204 204 403p 403p 403i 403i 403i 404 404 403i",
    ),
    ("DELETE /applications/{client_id}/grant", On::Neither, "401 404 404 404 404 404 404 404 404 404 404 404 404 204"),
    ("POST /applications/{client_id}/token", On::Neither, "401 404 404 404 404 404 404 404 404 404 404 404 404 200"),
    ("PATCH /applications/{client_id}/token", On::Neither, "401 404 404 404 404 404 404 404 404 404 404 404 404 200"),
    ("DELETE /applications/{client_id}/token", On::Neither, "401 404 404 404 404 404 404 404 404 404 404 404 404 204"),
    ("PUT /repos/{owner}/{repo}/contents/{path}", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    ("PUT /repos/{owner}/{repo}/contents/{path}", On::Public, "401 201 201 403p 201 201 201 403p 201 201 403w 201 403w 403i"),
    ("DELETE /repos/{owner}/{repo}/contents/{path}", On::Private, "404 200 404 404 200 404 200 403p 200 200 200 200 404 404"),
    ("DELETE /repos/{owner}/{repo}/contents/{path}", On::Public, "401 200 200 403p 200 200 200 403p 200 200 403w 200 403w 403i"),
    ("POST /repos/{owner}/{repo}/git/blobs", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    ("POST /repos/{owner}/{repo}/git/blobs", On::Public, "401 201 201 403p 201 201 201 403p 201 201 403w 201 403w 403i"),
    ("POST /repos/{owner}/{repo}/git/tags", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    ("POST /repos/{owner}/{repo}/git/tags", On::Public, "401 201 201 403p 201 201 201 403p 201 201 403w 201 403w 403i"),
    ("POST /repos/{owner}/{repo}/git/refs", On::Private, "404 201 404 404 201 404 201 403p 201 201 201 201 404 404"),
    ("POST /repos/{owner}/{repo}/git/refs", On::Public, "401 201 201 403p 201 201 201 403p 201 201 403w 201 403w 403i"),
    ("PATCH /repos/{owner}/{repo}/git/refs/{ref}", On::Private, "404 200 404 404 200 404 200 403p 200 200 200 200 404 404"),
    ("PATCH /repos/{owner}/{repo}/git/refs/{ref}", On::Public, "401 200 200 403p 200 200 200 403p 200 200 403w 200 403w 403i"),
    ("DELETE /repos/{owner}/{repo}/git/refs/{ref}", On::Private, "404 204 404 404 204 404 204 403p 204 204 204 204 404 404"),
    ("DELETE /repos/{owner}/{repo}/git/refs/{ref}", On::Public, "401 204 204 403p 204 204 204 403p 204 204 403w 204 403w 403i"),
];

/// Limits raised: anonymous cells alone exceed the 60 an hour of one address.
fn options() -> Options {
    Options::with(|a| a.limits.rate_limit_factor = 100.0)
}

both!(every_write_operation_with_every_credential, options(), |s| {
    let w = world(&s).await;
    // Every write operation the server publishes has its rows.
    let doc = s.client.get(s.url("/openapi.json")).send().await.unwrap().json::<Value>().await.unwrap();
    let published: BTreeSet<String> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .filter(|m| ["post", "put", "patch", "delete"].contains(&m.as_str()))
                .map(move |m| format!("{} {path}", m.to_uppercase()))
        })
        .collect();
    let covered: BTreeSet<String> = MATRIX.iter().map(|(op, _, _)| op.to_string()).collect();
    assert_eq!(published, covered, "write operations without rows in the matrix (or rows of operations that are gone)");

    let mut n = 0;
    let mut wrong = Vec::new();
    let mut table = String::new();
    for (op, on, want) in MATRIX {
        let repo = match on {
            On::Private | On::Neither => "acme/private",
            On::Public => "acme/public",
        };
        let mut got = Vec::new();
        for (col, cred) in w.creds.iter().enumerate() {
            n += 1;
            let (method, path, body) = prepare(&s, &w, op, repo, n).await;
            let mut r = s.req(method, &path, None);
            r = match cred {
                Cred::None => r,
                Cred::Token(t) => r.bearer_auth(t),
                Cred::Basic(id, secret) => r.basic_auth(id, Some(secret)),
            };
            if let Some(b) = body {
                r = r.json(&b);
            }
            let (st, h, b) = parts(r.send().await.unwrap()).await;
            if st >= 400 {
                assert_error(st, &h, &b, st, b["message"].as_str().unwrap_or_default());
            }
            let cell = outcome(st, &b);
            if cell.ends_with('x') || st >= 500 {
                wrong.push(format!("{op} {on:?} / {}: {st} {b}", CREDENTIALS[col]));
            }
            got.push(cell);
        }
        let got = got.join(" ");
        table.push_str(&format!("    (\"{op}\", On::{on:?}, \"{got}\"),\n"));
        if got != *want {
            wrong.push(format!("{op} {on:?}: want {want}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "cells differ ({:?}):\n{}\n\nthe matrix as served:\n{table}", CREDENTIALS, wrong.join("\n"));
});

both!(deleting_needs_delete_repo_whatever_the_visibility, |s| {
    // The admin's `repo` token sees the private repository, so a missing `delete_repo` is a 403
    // as on a public one, not a 404.
    s.user("alice").await;
    for (name, private) in [("secret", true), ("open", false)] {
        s.repo("alice", name, private).await;
        let repo_only = s.classic("alice", &["repo"]).await;
        let (st, h, b) = call(&s, Method::DELETE, &format!("/repos/alice/{name}"), Some(&repo_only), None).await;
        assert_error(st, &h, &b, 403, "Must have admin rights to Repository.");
        // `delete_repo` with `public_repo` reaches public repositories only.
        let public = s.classic("alice", &["public_repo", "delete_repo"]).await;
        let (st, _, b) = call(&s, Method::DELETE, &format!("/repos/alice/{name}"), Some(&public), None).await;
        assert_eq!(st, if private { 404 } else { 204 }, "{name}: {b}");
    }
});
