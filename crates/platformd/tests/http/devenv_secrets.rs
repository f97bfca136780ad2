//! Repository development-environment secrets: the public key, sealed boxes opened on write
//! (and refused when they are not sealed for the current key), 201/204, metadata only in
//! responses, the stored value checked through the control plane, and the permission matrix.
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// alice owns org acme (public acme/widgets, private acme/secret), bob is a member (push),
/// carol an outsider. Returns alice's `repo` token.
async fn world(s: &Server) -> String {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    s.repo("acme", "widgets", false).await;
    s.repo("acme", "secret", true).await;
    s.classic("alice", &["repo"]).await
}

const BASE: &str = "/repos/acme/widgets/devenvs/secrets";

/// `(key_id, key)` of a repository.
async fn key(s: &Server, t: &str, repo: &str) -> (String, String) {
    let (st, _, b) = call(s, Method::GET, &format!("/repos/{repo}/devenvs/secrets/public-key"), Some(t), None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("PublicKey", &b);
    (b["key_id"].as_str().unwrap().to_string(), b["key"].as_str().unwrap().to_string())
}

fn seal(key: &str, plain: &str) -> String {
    platform_api::secrets::seal_for(key, plain.as_bytes()).unwrap()
}

async fn verify(s: &Server, repo: &str, name: &str, value: &str) -> bool {
    s.admin_post(&format!("/repos/{repo}/devenvs/secrets/{name}/verify"), json!({"value": value})).await["matches"].as_bool().unwrap()
}

both!(public_key_is_stable_per_repository, |s| {
    let t = world(&s).await;
    let (id1, k1) = key(&s, &t, "acme/widgets").await;
    assert_eq!(B64.decode(&k1).unwrap().len(), 32, "a base64 X25519 key");
    assert!(!id1.is_empty());
    assert_eq!(key(&s, &t, "acme/widgets").await, (id1.clone(), k1.clone()));
    let (id2, k2) = key(&s, &t, "acme/secret").await;
    assert_ne!((id2, k2), (id1, k1));
});

both!(create_update_get_list_delete, |s| {
    let t = world(&s).await;
    let (key_id, k) = key(&s, &t, "acme/widgets").await;
    let (st, _, b) = call(
        &s,
        Method::PUT,
        &format!("{BASE}/my_token"),
        Some(&t),
        Some(json!({"encrypted_value": seal(&k, "hunter2"), "key_id": key_id})),
    )
    .await;
    assert_eq!((st, b), (201, json!({})));
    assert!(verify(&s, "acme/widgets", "MY_TOKEN", "hunter2").await);
    assert!(!verify(&s, "acme/widgets", "MY_TOKEN", "hunter3").await);
    // Names are case-insensitive, kept upper case; metadata only.
    let (st, _, b) = call(&s, Method::GET, &format!("{BASE}/My_Token"), Some(&t), None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("DevenvSecret", &b);
    assert_eq!(b["name"], "MY_TOKEN");
    assert_eq!(b["visibility"], "all");
    assert!(!b.to_string().contains("hunter2") && b.get("encrypted_value").is_none());
    // Replace: 204, the new value stored.
    s.advance(60).await;
    let r = s
        .req(Method::PUT, &format!("{BASE}/MY_TOKEN"), Some(&t))
        .json(&json!({"encrypted_value": seal(&k, "s3cond"), "key_id": key_id}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.text().await.unwrap().is_empty());
    assert!(verify(&s, "acme/widgets", "MY_TOKEN", "s3cond").await);
    let (_, _, b2) = call(&s, Method::GET, &format!("{BASE}/MY_TOKEN"), Some(&t), None).await;
    assert_eq!(b2["created_at"], b["created_at"]);
    assert_ne!(b2["updated_at"], b["updated_at"]);
    // List with total_count and pages.
    for n in ["A_ONE", "B_TWO"] {
        let (st, _, _) =
            call(&s, Method::PUT, &format!("{BASE}/{n}"), Some(&t), Some(json!({"encrypted_value": seal(&k, n), "key_id": key_id}))).await;
        assert_eq!(st, 201);
    }
    let (st, h, b) = call(&s, Method::GET, &format!("{BASE}?per_page=2"), Some(&t), None).await;
    assert_eq!(st, 200);
    assert_eq!(b["total_count"], 3);
    let names: Vec<&str> = b["secrets"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["A_ONE", "B_TWO"]);
    assert_conforms_to_snapshot("DevenvSecretList", &b);
    assert!(header(&h, "link").contains(&format!("<{}{BASE}?per_page=2&page=2>; rel=\"next\"", s.base)));
    // Delete: 204, then 404.
    let (st, _, _) = call(&s, Method::DELETE, &format!("{BASE}/a_one"), Some(&t), None).await;
    assert_eq!(st, 204);
    let (st, h, b) = call(&s, Method::GET, &format!("{BASE}/A_ONE"), Some(&t), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(call(&s, Method::DELETE, &format!("{BASE}/A_ONE"), Some(&t), None).await.0, 404);
});

async fn refused(s: &Server, t: &str, body: Value, field: &str, message_part: &str) {
    let (st, h, b) = call(s, Method::PUT, &format!("{BASE}/BAD"), Some(t), Some(body)).await;
    assert_error(st, &h, &b, 422, "Validation Failed");
    assert_eq!(b["errors"][0]["field"], field, "{b}");
    assert!(b["errors"][0]["message"].as_str().unwrap().contains(message_part), "{b}");
    // Nothing was stored.
    assert_eq!(call(s, Method::GET, &format!("{BASE}/BAD"), Some(t), None).await.0, 404);
}

both!(invalid_base64_is_422, |s| {
    let t = world(&s).await;
    let (key_id, _) = key(&s, &t, "acme/widgets").await;
    refused(&s, &t, json!({"encrypted_value": "not base64!!", "key_id": key_id}), "encrypted_value", "not valid base64").await;
});

both!(stale_key_id_is_422, |s| {
    let t = world(&s).await;
    let (_, k) = key(&s, &t, "acme/widgets").await;
    refused(&s, &t, json!({"encrypted_value": seal(&k, "x"), "key_id": "012345678912345678"}), "key_id", "current public key").await;
});

both!(box_that_does_not_open_is_422, |s| {
    let t = world(&s).await;
    let (key_id, _) = key(&s, &t, "acme/widgets").await;
    // Plaintext in base64 (what careless clients send), and a box sealed for another key.
    refused(
        &s,
        &t,
        json!({"encrypted_value": B64.encode("plain text, not a box"), "key_id": key_id}),
        "encrypted_value",
        "could not be decrypted",
    )
    .await;
    let (_, other) = key(&s, &t, "acme/secret").await;
    refused(&s, &t, json!({"encrypted_value": seal(&other, "x"), "key_id": key_id}), "encrypted_value", "could not be decrypted").await;
    // A tampered box.
    let (_, k) = key(&s, &t, "acme/widgets").await;
    let mut raw = B64.decode(seal(&k, "secret")).unwrap();
    let last = raw.len() - 1;
    raw[last] ^= 1;
    refused(&s, &t, json!({"encrypted_value": B64.encode(raw), "key_id": key_id}), "encrypted_value", "could not be decrypted").await;
});

both!(body_and_name_validation, |s| {
    let t = world(&s).await;
    let (key_id, k) = key(&s, &t, "acme/widgets").await;
    let (st, _, b) = call(&s, Method::PUT, &format!("{BASE}/X"), Some(&t), Some(json!({"key_id": key_id}))).await;
    assert_eq!(st, 422);
    assert_eq!(b["message"], "Invalid request.\n\n\"encrypted_value\" wasn't supplied.");
    let (st, _, _) = call(&s, Method::PUT, &format!("{BASE}/X"), Some(&t), Some(json!({"encrypted_value": seal(&k, "v")}))).await;
    assert_eq!(st, 422);
    let (st, _, b) =
        call(&s, Method::PUT, &format!("{BASE}/1BAD"), Some(&t), Some(json!({"encrypted_value": seal(&k, "v"), "key_id": key_id}))).await;
    assert_eq!((st, b["errors"][0]["field"].as_str()), (422, Some("name")), "{b}");
    let (st, _, _) =
        call(&s, Method::PUT, &format!("{BASE}/BAD-NAME"), Some(&t), Some(json!({"encrypted_value": seal(&k, "v"), "key_id": key_id})))
            .await;
    assert_eq!(st, 422);
    let (st, _, b) = call(&s, Method::GET, BASE, Some(&t), None).await;
    assert_eq!((st, b["total_count"].as_i64()), (200, Some(0)));
});

both!(permissions, |s| {
    let alice = world(&s).await;
    let (key_id, k) = key(&s, &alice, "acme/widgets").await;
    let put = |v: &str| json!({"encrypted_value": seal(&k, v), "key_id": key_id});
    // Push access reads, only admins change.
    let bob = s.classic("bob", &["repo"]).await;
    let (st, h, _) = call(&s, Method::GET, BASE, Some(&bob), None).await;
    assert_eq!(st, 200);
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "repo");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "devenv_secrets=write");
    let (st, h, b) = call(&s, Method::PUT, &format!("{BASE}/X"), Some(&bob), Some(put("v"))).await;
    assert_error(st, &h, &b, 403, "Must have admin rights to Repository.");
    assert_eq!(call(&s, Method::PUT, &format!("{BASE}/X"), Some(&alice), Some(put("v"))).await.0, 201);
    let (st, h, b) = call(&s, Method::DELETE, &format!("{BASE}/X"), Some(&bob), None).await;
    assert_error(st, &h, &b, 403, "Must have admin rights to Repository.");
    // Outsiders: 403 on a public repository, 404 on a private one.
    let carol = s.classic("carol", &["repo"]).await;
    let (st, h, b) = call(&s, Method::GET, BASE, Some(&carol), None).await;
    assert_error(st, &h, &b, 403, "Must have push access to this repository.");
    let (st, h, b) = call(&s, Method::GET, "/repos/acme/secret/devenvs/secrets", Some(&carol), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    // Classic tokens need `repo`.
    let no_repo = s.classic("alice", &["read:org"]).await;
    let (st, h, b) = call(&s, Method::GET, BASE, Some(&no_repo), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    assert_eq!(call(&s, Method::GET, "/repos/acme/secret/devenvs/secrets", Some(&no_repo), None).await.0, 404);
    // No credentials.
    let (st, h, b) = call(&s, Method::GET, BASE, None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // Fine-grained: the Devenv secrets permission at write, for every operation.
    let fg = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"devenv_secrets": "write"}}))
        .await;
    assert_eq!(call(&s, Method::PUT, &format!("{BASE}/Y"), Some(&fg), Some(put("w"))).await.0, 201);
    assert_eq!(call(&s, Method::GET, &format!("{BASE}/Y"), Some(&fg), None).await.0, 200);
    let fg_read = s
        .token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"devenv_secrets": "read"}}))
        .await;
    let (st, h, b) = call(&s, Method::GET, BASE, Some(&fg_read), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    // The public key is not for app tokens.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s.token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"devenv_secrets": "write"}})).await;
    let (st, h, b) = call(&s, Method::GET, &format!("{BASE}/public-key"), Some(&inst), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
    assert_eq!(call(&s, Method::GET, BASE, Some(&inst), None).await.0, 200);
});

both!(values_survive_a_restart_encrypted, |s| {
    let t = world(&s).await;
    let (key_id, k) = key(&s, &t, "acme/widgets").await;
    assert_eq!(
        call(&s, Method::PUT, &format!("{BASE}/KEEP"), Some(&t), Some(json!({"encrypted_value": seal(&k, "durable"), "key_id": key_id})))
            .await
            .0,
        201
    );
    let s = s.restart().await;
    assert!(verify(&s, "acme/widgets", "KEEP", "durable").await);
    assert_eq!(key(&s, &t, "acme/widgets").await, (key_id, k));
});
