//! Fields the spec types as strings (or SimpleUser, or objects) are never null, even when the
//! control plane left them out or no account stands behind them: every shape is checked
//! against the published schema, which follows the spec's types.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms;

async fn ok(s: &Server, method: Method, path: &str, token: &str, body: Option<Value>) -> Value {
    let mut r = s.req(method, path, Some(token));
    if let Some(b) = body {
        r = r.json(&b);
    }
    let (st, _, b) = parts(r.send().await.unwrap()).await;
    assert!((200..300).contains(&st), "{path}: {st} {b}");
    b
}

both!(left_out_by_the_control_plane, |s| {
    for u in ["alice", "bob", "dave"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", false).await;
    s.push("acme/widgets", "refs/heads/main", SHA).await;

    // An enterprise team created without a description.
    s.admin_post("/enterprises", json!({"slug": "acme-corp", "name": "Acme Corp", "owners": ["dave"], "members": ["alice"]})).await;
    s.admin_post("/enterprises/acme-corp/teams", json!({"name": "Quiet", "members": ["alice"]})).await;
    let dave = s.classic("dave", &["admin:enterprise"]).await;
    let teams = ok(&s, Method::GET, "/enterprises/acme-corp/members/alice/teams", &dave, None).await;
    assert_eq!(teams[0]["description"], "");
    assert_conforms(&s, "EnterpriseTeam", &teams[0]).await;

    // A notification whose subject has neither URL nor latest comment: both point somewhere.
    s.admin_post(
        "/notifications",
        json!({"login": "bob", "repo": "acme/widgets", "reason": "mention", "subject": {"title": "No links", "type": "Issue"}}),
    )
    .await;
    let bob = s.classic("bob", &["notifications"]).await;
    let threads = ok(&s, Method::GET, "/notifications", &bob, None).await;
    let subject = &threads[0]["subject"];
    assert_eq!(subject["url"], format!("{}/repos/acme/widgets", s.base));
    assert_eq!(subject["latest_comment_url"], subject["url"]);
    assert_conforms(&s, "Thread", &threads[0]).await;

    // A status created by an installation (no user behind it): creator and avatar are the ghost.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"statuses": "write"}})).await;
    let status =
        ok(&s, Method::POST, &format!("/repos/acme/widgets/statuses/{SHA}"), &inst, Some(json!({"state": "success", "context": "bot"})))
            .await;
    assert_eq!(status["creator"]["login"], "ghost");
    assert!(status["avatar_url"].is_string());
    assert_conforms(&s, "CommitStatus", &status).await;
    let alice = s.classic("alice", &["repo"]).await;
    let listed = ok(&s, Method::GET, &format!("/repos/acme/widgets/commits/{SHA}/statuses"), &alice, None).await;
    assert_conforms(&s, "CommitStatus", &listed[0]).await;
    let combined = ok(&s, Method::GET, &format!("/repos/acme/widgets/commits/{SHA}/status"), &alice, None).await;
    assert_conforms(&s, "CombinedStatus", &combined).await;

    // A run: head commit author filled from the actor, name and branch always strings.
    let run = s.admin_post("/repos/acme/widgets/runs", json!({"workflow": ".workflows/ci.yml", "actor": "alice"})).await;
    let got = ok(&s, Method::GET, &format!("/repos/acme/widgets/actions/runs/{}", run["id"]), &alice, None).await;
    assert!(got["head_commit"]["author"]["name"].is_string() && got["head_commit"]["author"]["email"].is_string(), "{got}");
    assert_conforms(&s, "WorkflowRun", &got).await;

    // Events of the repository: actor, type and timestamps typed as the spec says.
    let events = ok(&s, Method::GET, "/repos/acme/widgets/events", &alice, None).await;
    assert!(!events.as_array().unwrap().is_empty());
    for e in events.as_array().unwrap() {
        assert_conforms(&s, "Event", e).await;
    }
});
