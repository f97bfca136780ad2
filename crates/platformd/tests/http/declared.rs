//! What every operation declares is what the contract enforces, whatever its handler does: each
//! registered operation is called through a real server by callers its declared access refuses
//! (`operation::On`, `authorize::target`). A new operation joins these checks by being
//! registered; one that names a repository without declaring it does not start.
use platform_api::operation::{AuthKind, Operation};
use reqwest::Method;
use serde_json::json;

use crate::both;
use crate::harness::*;

/// A path of `op` with its parameters filled in: the repository, organization (login and id)
/// and enterprise given, `1` for the rest (authorization comes before anything reads them).
fn path_of(op: &Operation, repo: &str, org_id: i64) -> String {
    let (owner, name) = repo.split_once('/').unwrap();
    let value = |seg: &str| -> String {
        match seg {
            "{owner}" => owner.into(),
            "{repo}" => name.into(),
            "{org}" => "acme".into(),
            "{org_id}" => org_id.to_string(),
            "{enterprise}" => "acme-corp".into(),
            s if s.starts_with('{') => "1".into(),
            s => s.into(),
        }
    };
    op.path.split('/').map(value).collect::<Vec<_>>().join("/")
}

/// Every limit off: these tests call each operation several times.
fn unlimited() -> Options {
    Options::with(|c| c.limits.rate_limits = false)
}

/// `op` called by `token` (anonymous: `None`), with an empty JSON object as its body.
async fn call_op(s: &Server, op: &Operation, path: &str, token: Option<&str>) -> (u16, String) {
    let method = Method::from_bytes(op.method.as_str().as_bytes()).unwrap();
    let takes_body = platform_api::router::registered().iter().any(|r| std::ptr::eq(r.op, op) && r.input.body.is_some());
    let (st, h, b) = call(s, method, path, token, takes_body.then(|| json!({}))).await;
    if st >= 400 {
        assert_error(st, &h, &b, st, b["message"].as_str().unwrap_or_default());
    }
    (st, b["message"].as_str().unwrap_or_default().to_string())
}

/// alice owns organization acme (a private and a public repository) and is a member of
/// enterprise acme-corp; carol belongs to neither but holds every scope an operation accepts.
async fn world(s: &Server) -> (String, i64) {
    for u in ["alice", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/enterprises", json!({"slug": "acme-corp", "name": "Acme Corp", "owners": ["alice"], "members": ["alice"]})).await;
    let org = s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "enterprise": "acme-corp"})).await;
    s.repo("acme", "vault", true).await;
    s.repo("acme", "open", false).await;
    let mut scopes: Vec<&str> = platform_api::router::operations().iter().flat_map(|o| o.access.scopes.iter().copied()).collect();
    scopes.sort_unstable();
    scopes.dedup();
    let carol = s.classic("carol", &scopes).await;
    let (_, _, o) = call(s, Method::GET, "/orgs/acme", Some(&carol), None).await;
    (carol, org["id"].as_i64().or(o["id"].as_i64()).expect("the organization's id"))
}

both!(every_repository_operation_hides_private_repositories_and_wants_credentials_to_change, unlimited(), |s| {
    let (carol, org_id) = world(&s).await;
    let ops: Vec<&Operation> = platform_api::router::operations().iter().copied().filter(|o| o.on.names_repo()).collect();
    assert!(ops.len() > 50, "the repository operations are registered");
    for op in ops {
        let private = path_of(op, "acme/vault", org_id);
        // An outsider, whatever its scopes, finds no private repository; neither does an
        // anonymous caller (an operation for some kinds of token only asks who is calling).
        assert_eq!(call_op(&s, op, &private, Some(&carol)).await, (404, "Not Found".into()), "{} as an outsider", op.id);
        let anonymous = call_op(&s, op, &private, None).await;
        let who = if op.access.tokens.is_empty() { (404, "Not Found") } else { (401, "Requires authentication") };
        assert_eq!(anonymous, (who.0, who.1.into()), "{} anonymously", op.id);
        // Writes, and reads that are not public, want credentials on a public repository too.
        if op.method.as_str() != "GET" || !op.access.public {
            let public = path_of(op, "acme/open", org_id);
            assert_eq!(call_op(&s, op, &public, None).await, (401, "Requires authentication".into()), "{} anonymously", op.id);
        }
    }
});

both!(every_organization_and_enterprise_operation_is_for_its_own_people, unlimited(), |s| {
    let (carol, org_id) = world(&s).await;
    let ops: Vec<&Operation> = platform_api::router::operations()
        .iter()
        .copied()
        .filter(|o| o.on.names_org() || o.path.starts_with("/enterprises/{enterprise}"))
        .collect();
    assert!(ops.len() > 30, "the organization and enterprise operations are registered");
    for op in ops {
        let path = path_of(op, "acme/open", org_id);
        assert_eq!(call_op(&s, op, &path, Some(&carol)).await, (404, "Not Found".into()), "{} as an outsider", op.id);
        assert_eq!(call_op(&s, op, &path, None).await, (401, "Requires authentication".into()), "{} anonymously", op.id);
    }
});

both!(every_operation_of_the_caller_alone_wants_credentials, unlimited(), |s| {
    world(&s).await;
    for op in platform_api::router::operations().iter().filter(|o| !o.access.public && o.access.auth != AuthKind::Any) {
        if op.on.names_repo() {
            continue;
        }
        let path = path_of(op, "acme/open", 1);
        assert_eq!(call_op(&s, op, &path, None).await, (401, "Requires authentication".into()), "{} anonymously", op.id);
    }
});
