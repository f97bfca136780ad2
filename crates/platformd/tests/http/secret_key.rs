//! The at-rest key outside the database: secrets written under the in-database key are
//! re-encrypted under the operator's key at start, the database then holds no key (a copy of
//! it reveals nothing), a wrong or missing key is refused, and secrets keep working.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use platform_api::secrets::{self, AtRestKey};

const KEY: AtRestKey = AtRestKey::External([7; 32]);

async fn keys(s: &Server) -> Vec<(String, String)> {
    s.store
        .read(|c| {
            Ok::<_, platform_store::DbError>(
                c.query("SELECT name, value FROM webhook_keys ORDER BY name", &[])?.iter().map(|r| (r.string(0), r.string(1))).collect(),
            )
        })
        .await
        .unwrap()
}

/// Every encrypted value of the database.
async fn ciphertexts(s: &Server) -> Vec<String> {
    s.store
        .read(|c| {
            let mut out = Vec::new();
            for q in ["SELECT secret_enc FROM hooks", "SELECT value_enc FROM devenv_secrets", "SELECT secret_key_enc FROM box_keys"] {
                out.extend(c.query(q, &[])?.iter().map(|r| r.string(0)));
            }
            Ok::<_, platform_store::DbError>(out)
        })
        .await
        .unwrap()
}

async fn verify(s: &Server, value: &str) -> bool {
    s.admin_post("/repos/acme/widgets/devenvs/secrets/MY_TOKEN/verify", json!({"value": value})).await["matches"].as_bool().unwrap()
}

async fn put_secret(s: &Server, t: &str, value: &str) {
    let b: Value = s.get("/repos/acme/widgets/devenvs/secrets/public-key", Some(t)).await.json().await.unwrap();
    let sealed = secrets::seal_for(b["key"].as_str().unwrap(), value.as_bytes()).unwrap();
    let r = s
        .req(Method::PUT, "/repos/acme/widgets/devenvs/secrets/MY_TOKEN", Some(t))
        .json(&json!({"encrypted_value": sealed, "key_id": b["key_id"]}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
}

both!(external_key_takes_over_and_the_database_holds_none, |s| {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", false).await;
    let t = s.classic("alice", &["repo", "admin:org_hook"]).await;
    let r = s
        .req(Method::POST, "/orgs/acme/hooks", Some(&t))
        .json(&json!({"name": "web", "config": {"url": "http://127.0.0.1:9/a", "secret": "hook-s3cret"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    put_secret(&s, &t, "hunter2").await;
    // Zero configuration: the key is in the database, and opens every secret there.
    let db_key = keys(&s).await.into_iter().find(|(n, _)| n == "secret-encryption").expect("in-database key").1;
    let db_key = hex::decode(db_key).unwrap();
    let before = ciphertexts(&s).await;
    assert_eq!(before.len(), 3);
    assert!(before.iter().all(|c| secrets::decrypt(&db_key, c).is_some()));

    // With the operator's key: re-encrypted, no key left in the database, only a check value.
    let s = s.restart_with(Options::with(|c| c.secret_key = KEY)).await;
    let names: Vec<String> = keys(&s).await.into_iter().map(|(n, _)| n).collect();
    assert!(!names.contains(&"secret-encryption".to_string()), "{names:?}");
    let after = ciphertexts(&s).await;
    assert_eq!(after.len(), 3);
    let AtRestKey::External(k) = KEY else { unreachable!() };
    assert!(after.iter().all(|c| secrets::decrypt(&db_key, c).is_none() && secrets::decrypt(&k, c).is_some()));
    // Secrets still work: the stored value, a new one, the hook's masked secret.
    assert!(verify(&s, "hunter2").await && !verify(&s, "hunter3").await);
    put_secret(&s, &t, "s3cond").await;
    assert!(verify(&s, "s3cond").await);

    // A wrong key, or none, is refused rather than garbling or losing secrets.
    let wrong = s.store.write(|c| secrets::prepare(c, &AtRestKey::External([8; 32]))).await.unwrap();
    assert!(wrong.unwrap_err().contains("not the key"));
    let none = s.store.write(|c| secrets::prepare(c, &AtRestKey::InDatabase)).await.unwrap();
    assert!(none.unwrap_err().contains("external key"));
    // The right key again: nothing to do, idempotent.
    let s = s.restart_with(Options::with(|c| c.secret_key = KEY)).await;
    assert!(verify(&s, "s3cond").await);
    // A reset keeps the database tied to the key.
    s.admin_post("/reset", json!({})).await;
    let names: Vec<String> = keys(&s).await.into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["secret-key-check"]);
});
