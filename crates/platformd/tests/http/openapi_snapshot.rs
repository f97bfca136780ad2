//! The served `/openapi.json` against the committed snapshot `docs/openapi.json`, so every change
//! to the API's shapes, parameters or responses is reviewed as a diff of that file. After an
//! intended change: `UPDATE_OPENAPI_SNAPSHOT=1 cargo nextest run -p platformd openapi_snapshot`.
use crate::harness::*;
use platform_store::Backend;
use serde_json::Value;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
/// The snapshot's server URL; each test server has its own port.
const SERVER: &str = "http://127.0.0.1:8080";

/// Paths (JSON pointers) where two documents differ, at most `limit`.
fn differences(a: &Value, b: &Value, at: String, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (p, q) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                differences(p, q, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out, limit);
            }
        }
        _ => out.push(at),
    }
}

#[tokio::test]
async fn served_document_matches_the_snapshot() {
    let s = start(Backend::Sqlite, Options::default()).await.expect("SQLite server");
    let r = s.get("/openapi.json", None).await;
    assert_eq!(r.status().as_u16(), 200);
    let mut served: Value = r.json().await.unwrap();
    served["servers"][0]["url"] = Value::String(SERVER.into());
    let text = serde_json::to_string_pretty(&served).unwrap() + "\n";
    if std::env::var_os("UPDATE_OPENAPI_SNAPSHOT").is_some() {
        std::fs::write(SNAPSHOT, &text).unwrap();
        return;
    }
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(SNAPSHOT).expect("docs/openapi.json")).expect("snapshot is JSON");
    let mut diff = Vec::new();
    differences(&committed, &served, String::new(), &mut diff, 20);
    assert!(
        diff.is_empty(),
        "/openapi.json differs from docs/openapi.json at {diff:#?}\nReview the change, then run with UPDATE_OPENAPI_SNAPSHOT=1 to record it."
    );
    // Byte for byte too: key order is part of what clients and reviewers see.
    assert_eq!(std::fs::read_to_string(SNAPSHOT).unwrap(), text, "same document, other order or format: update the snapshot");
}
