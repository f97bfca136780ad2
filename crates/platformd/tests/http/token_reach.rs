//! The authorization matrix of lists that span many repositories: every such list with every
//! credential kind. The user may see every repository of the world; each TOKEN sees only the
//! repositories it reaches (classic scopes, fine-grained owner and selection, installation
//! repositories, the workflow token's repository, OAuth scopes). Public repositories are
//! readable by every credential.
use std::collections::BTreeSet;

use serde_json::json;

use crate::both;
use crate::depbot::alert;
use crate::harness::*;

const ALL_ACME: [&str; 3] = ["acme/pub", "acme/priv1", "acme/priv2"];

/// alice owns enterprise corp and its organization acme (public `pub`, private `priv1` and
/// `priv2`) and her own private `alice/mine`; every repository has an alert and a push by her.
async fn world(s: &Server) {
    s.user("alice").await;
    s.admin_post("/enterprises", json!({"slug": "corp", "name": "Corp", "owners": ["alice"], "members": []})).await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "enterprise": "corp"})).await;
    for (owner, name, private) in [("acme", "pub", false), ("acme", "priv1", true), ("acme", "priv2", true), ("alice", "mine", true)] {
        s.repo(owner, name, private).await;
        s.admin_post(
            &format!("/repos/{owner}/{name}/refs"),
            json!({"ref": "refs/heads/main", "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "pusher": "alice"}),
        )
        .await;
        s.admin_post(&format!("/repos/{owner}/{name}/depbot/alerts"), alert("npm", "left-pad", "high")).await;
    }
}

/// The repositories a list shows (`None`: refused with a 4xx).
async fn shown(s: &Server, path: &str, token: &str) -> Option<BTreeSet<String>> {
    let (st, _, b) = parts(s.get(path, Some(token)).await).await;
    if st != 200 {
        assert!((400..500).contains(&st) && b["message"].is_string(), "{path}: {st} {b}");
        return None;
    }
    let names = b.as_array().unwrap_or_else(|| panic!("{path}: {b}")).iter().map(|x| {
        let name = x["repository"]["full_name"].as_str().or(x["repo"]["name"].as_str());
        name.unwrap_or_else(|| panic!("{path}: {x}")).to_string()
    });
    Some(names.collect())
}

fn set(names: &[&str]) -> Option<BTreeSet<String>> {
    Some(names.iter().map(|n| n.to_string()).collect())
}

const LISTS: [&str; 7] = [
    "/orgs/acme/depbot/alerts",
    "/enterprises/corp/depbot/alerts",
    "/users/alice/events",
    "/users/alice/events/orgs/acme",
    "/users/alice/events/public",
    "/orgs/acme/events",
    "/events",
];

both!(every_list_with_every_credential, |s| {
    world(&s).await;
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    let cid = app["client_id"].as_str().unwrap().to_string();
    s.admin_post(&format!("/apps/{cid}/installations"), json!({"org": "acme"})).await;
    let oauth_app = s.admin_post("/apps", json!({"name": "Web", "owner": "acme", "kind": "oauth"})).await;
    let public = set(&["acme/pub"]);
    let pub_priv1 = set(&["acme/pub", "acme/priv1"]);
    let everything = set(&["acme/pub", "acme/priv1", "acme/priv2", "alice/mine"]);

    // (credential, expected per list in LISTS order; `None` = refused).
    let full = s.classic("alice", &["repo", "admin:org", "security_events"]).await;
    let security_only = s.classic("alice", &["security_events"]).await;
    let no_repo = s.classic("alice", &["read:org", "public_repo"]).await;
    let fg_one = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "repositories": ["acme/priv1"],
                               "permissions": {"vulnerability_alerts": "read", "events": "read"}}))
        .await;
    let fg_org = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"vulnerability_alerts": "read", "events": "read"}})).await;
    let fg_user = s.token(json!({"kind": "fine_grained", "login": "alice", "permissions": {"events": "read"}})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "repositories": ["acme/priv2"], "permissions": {"vulnerability_alerts": "read"}})).await;
    let workflow = s.admin_post("/tokens", json!({"kind": "workflow", "repo": "acme/priv1"})).await["token"].as_str().unwrap().to_string();
    let oauth = s.token(json!({"kind": "oauth", "login": "alice", "client_id": oauth_app["client_id"], "scopes": ["repo"]})).await;
    let oauth_public =
        s.token(json!({"kind": "oauth", "login": "alice", "client_id": oauth_app["client_id"], "scopes": ["read:org"]})).await;

    type Row<'a> = (&'a str, &'a str, [Option<BTreeSet<String>>; 7]);
    let matrix: Vec<Row> = vec![
        (
            "classic repo",
            &full,
            [set(&ALL_ACME), set(&ALL_ACME), everything.clone(), set(&ALL_ACME), public.clone(), public.clone(), public.clone()],
        ),
        (
            "classic security_events",
            &security_only,
            [set(&ALL_ACME), set(&ALL_ACME), public.clone(), public.clone(), public.clone(), public.clone(), public.clone()],
        ),
        ("classic without repo", &no_repo, [None, None, public.clone(), public.clone(), public.clone(), public.clone(), public.clone()]),
        (
            "fine-grained, one repository",
            &fg_one,
            [pub_priv1.clone(), None, pub_priv1.clone(), pub_priv1.clone(), public.clone(), public.clone(), public.clone()],
        ),
        (
            "fine-grained, the organization",
            &fg_org,
            [set(&ALL_ACME), None, set(&ALL_ACME), set(&ALL_ACME), public.clone(), public.clone(), public.clone()],
        ),
        (
            "fine-grained, the user",
            &fg_user,
            [None, None, set(&["acme/pub", "alice/mine"]), public.clone(), public.clone(), public.clone(), public.clone()],
        ),
        (
            "installation, one repository",
            &inst,
            [set(&["acme/pub", "acme/priv2"]), None, public.clone(), None, public.clone(), public.clone(), public.clone()],
        ),
        ("workflow", &workflow, [None, None, public.clone(), None, public.clone(), public.clone(), public.clone()]),
        (
            "oauth repo",
            &oauth,
            [set(&ALL_ACME), set(&ALL_ACME), everything.clone(), set(&ALL_ACME), public.clone(), public.clone(), public.clone()],
        ),
        ("oauth without repo", &oauth_public, [None, None, public.clone(), public.clone(), public.clone(), public.clone(), public.clone()]),
    ];
    let mut wrong = Vec::new();
    for (who, token, want) in &matrix {
        for (path, want) in LISTS.iter().zip(want) {
            let got = shown(&s, path, token).await;
            if &got != want {
                wrong.push(format!("{who}: {path}: got {got:?}, want {want:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
});

// Single repositories follow the same rule: what a list hides, its repository's own list and
// items refuse (404 for private repositories out of reach).
both!(single_repositories_agree_with_lists, |s| {
    world(&s).await;
    let fg_one = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "repositories": ["acme/priv1"],
                               "permissions": {"vulnerability_alerts": "read"}}))
        .await;
    let no_repo = s.classic("alice", &["read:org"]).await;
    for (token, repo, want) in [
        (&fg_one, "acme/priv1", 200),
        (&fg_one, "acme/priv2", 404),
        (&fg_one, "acme/pub", 200),
        (&no_repo, "acme/priv1", 404),
        (&no_repo, "acme/pub", 200),
    ] {
        for path in [format!("/repos/{repo}/depbot/alerts"), format!("/repos/{repo}/events")] {
            let (st, _, b) = parts(s.get(&path, Some(token)).await).await;
            if path.ends_with("/events") || want == 404 {
                assert_eq!(st, want, "{path}: {b}");
            } else {
                assert!(st == want || st == 403, "{path}: {st} {b}");
            }
        }
    }
});
