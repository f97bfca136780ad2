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

/// Makes the world of the tests above: a hook with a secret and a development-environment
/// secret `hunter2`, both under the in-database key; returns alice's token and that key.
async fn world(s: &Server) -> (String, Vec<u8>) {
    s.user("alice").await;
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"]})).await;
    s.repo("acme", "widgets", false).await;
    let t = s.classic("alice", &["repo", "admin:org_hook"]).await;
    let body = json!({"name": "web", "config": {"url": "http://127.0.0.1:9/a", "secret": "hook-s3cret"}});
    let r = s.req(Method::POST, "/orgs/acme/hooks", Some(&t)).json(&body).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    put_secret(s, &t, "hunter2").await;
    let db_key = keys(s).await.into_iter().find(|(n, _)| n == "secret-encryption").expect("in-database key").1;
    (t, hex::decode(db_key).unwrap())
}

/// The bytes of the files the database keeps `tables` in (SQLite: the file and its log;
/// PostgreSQL: each table's heap file, after a checkpoint wrote it out).
async fn database_files(s: &Server) -> Vec<u8> {
    match s.backend {
        platform_store::Backend::Sqlite => {
            let path = s.url.trim_start_matches("sqlite://").trim_start_matches("sqlite:").to_string();
            let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            bytes.extend(std::fs::read(format!("{path}-wal")).unwrap_or_default());
            bytes
        }
        platform_store::Backend::Postgres => {
            let files = s
                .store
                .write(|c| {
                    c.batch("CHECKPOINT")?;
                    let dir = c.query("SELECT setting FROM pg_settings WHERE name = 'data_directory'", &[])?[0].string(0);
                    let mut files = Vec::new();
                    for t in secrets::TABLES {
                        let q = format!("SELECT pg_relation_filepath('{t}')");
                        files.push(format!("{dir}/{}", c.query(&q, &[])?[0].string(0)));
                    }
                    Ok::<_, platform_store::DbError>(files)
                })
                .await
                .unwrap();
            files.iter().flat_map(|f| std::fs::read(f).unwrap_or_else(|e| panic!("{f}: {e} (the test reads PostgreSQL's files)"))).collect()
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

both!(moving_to_an_external_key_leaves_nothing_recoverable_in_the_files, |s| {
    let (_, db_key) = world(&s).await;
    let db_key_hex = hex::encode(&db_key);
    // Several versions of each secret, so the files hold old row versions too.
    let old: Vec<String> = ciphertexts(&s).await;
    let before = database_files(&s).await;
    assert!(contains(&before, &db_key_hex), "the scan finds the key while it is in the database");
    assert!(old.iter().all(|c| contains(&before, c)), "the scan finds the ciphertexts while they are live");

    let s = s.restart_with(Options::with(|c| c.secret_key = KEY)).await;
    let after = database_files(&s).await;
    assert!(!contains(&after, &db_key_hex), "the old in-database key is still in the files");
    for c in &old {
        assert!(!contains(&after, c), "an old ciphertext is still in the files: {c}");
    }
    assert!(verify(&s, "hunter2").await, "secrets still work");
});

both!(an_old_database_is_read_and_upgraded_at_start, |s| {
    let (t, db_key) = world(&s).await;
    // Rewrite every stored value as earlier versions wrote them (the old `v1` format).
    s.store
        .write(move |c| {
            for (table, col) in [("hooks", "secret_enc"), ("devenv_secrets", "value_enc"), ("box_keys", "secret_key_enc")] {
                for r in c.query(&format!("SELECT {col} FROM {table}"), &[])? {
                    let now = r.string(0);
                    let plain = secrets::decrypt(&db_key, &now).expect("current value opens");
                    let old = secrets::legacy::encrypt(&db_key, &plain);
                    c.execute(&format!("UPDATE {table} SET {col} = ? WHERE {col} = ?"), platform_store::params![old, now])?;
                }
            }
            Ok::<_, platform_store::DbError>(())
        })
        .await
        .unwrap();
    assert!(ciphertexts(&s).await.iter().all(|c| c.starts_with("v1:")));
    // Restarted: every value is in the current format, and every secret still opens.
    let s = s.restart().await;
    let now = ciphertexts(&s).await;
    assert_eq!(now.len(), 3);
    assert!(now.iter().all(|c| c.starts_with("v2:")), "{now:?}");
    assert!(verify(&s, "hunter2").await && !verify(&s, "nope").await);
    // The sealed-box key still opens new secrets, and the hook's secret still signs.
    put_secret(&s, &t, "s3cond").await;
    assert!(verify(&s, "s3cond").await);
    let cfg: Value = s.get("/orgs/acme/hooks", Some(&t)).await.json().await.unwrap();
    assert_eq!(cfg[0]["config"]["secret"], "********", "{cfg}");
});
