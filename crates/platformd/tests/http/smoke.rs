use crate::both;
use crate::harness::*;
use serde_json::json;

both!(combined_status_round_trip, |s| {
    s.user("alice").await;
    s.repo("alice", "hello", false).await;
    let sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
    s.push("alice/hello", "refs/heads/main", sha).await;
    let t = s.classic("alice", &["repo"]).await;
    let (st, h, b) = parts(s.post("/repos/alice/hello/statuses/main", Some(&t), json!({"state": "success", "context": "ci"})).await).await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(header(&h, "location"), format!("{}/repos/alice/hello/statuses/{sha}", s.base));
    let (st, _, b) = parts(s.get("/repos/alice/hello/commits/main/status", None).await).await;
    assert_eq!(st, 200);
    assert_eq!(b["state"], "success");
    assert_eq!(b["total_count"], 1);
    assert!(b["statuses"][0].get("creator").is_none());
});
