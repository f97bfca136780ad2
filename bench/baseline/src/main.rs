//! Minimal axum baseline for `bench/run`.
//!
//! The cheapest possible server shaped like platformd's hot paths, on the same
//! stack (tokio multi-thread + axum + hyper): every platformd benchmark is
//! reported as a ratio to this.
//!
//! - `GET /combined`: a fixed JSON body comparable in size to a combined status
//!   with 10 statuses (~7 KB), serialized once at start-up and served as bytes.
//! - `POST /combined`: reads the request body and returns 201 with a small fixed JSON.
//!
//! Listen address: first argument or env `BASELINE_LISTEN`, either `PORT` or
//! `IP:PORT` (default `127.0.0.1:0`). Port 0 picks a free port. Prints exactly one
//! line `listening on http://ADDR` on stdout once bound.

use std::net::SocketAddr;

use axum::{
    body::Bytes,
    http::{header::CONTENT_TYPE, StatusCode},
    response::IntoResponse,
    routing::get,
    Router,
};
use serde_json::{json, Value};

const SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const API: &str = "http://127.0.0.1/api/v3";

fn user() -> Value {
    json!({
        "login": "bench",
        "id": 1,
        "node_id": "U_kgAAAAAAAAAB",
        "avatar_url": "https://avatars.example/u/1?v=4",
        "url": format!("{API}/users/bench"),
        "html_url": "http://127.0.0.1/bench",
        "type": "User",
        "site_admin": false
    })
}

/// A combined-status-shaped document with `n` statuses.
fn combined_status(n: u64) -> Value {
    let statuses: Vec<Value> = (1..=n)
        .map(|i| {
            json!({
                "url": format!("{API}/repos/bench/hot/statuses/{SHA}"),
                "avatar_url": "https://avatars.example/u/1?v=4",
                "id": i,
                "node_id": format!("SC_kwAAAAAAAAAAAA{i:02}"),
                "state": "success",
                "description": "ok",
                "target_url": format!("https://ci.example/{i}"),
                "context": format!("ci/{i}"),
                "created_at": "2025-01-01T00:00:00Z",
                "updated_at": "2025-01-01T00:00:00Z",
                "creator": user()
            })
        })
        .collect();
    json!({
        "state": "success",
        "statuses": statuses,
        "sha": SHA,
        "total_count": n,
        "repository": {
            "id": 1,
            "node_id": "R_kgAAAAAAAAAB",
            "name": "hot",
            "full_name": "bench/hot",
            "private": true,
            "owner": user(),
            "html_url": "http://127.0.0.1/bench/hot",
            "url": format!("{API}/repos/bench/hot")
        },
        "commit_url": format!("{API}/repos/bench/hot/commits/{SHA}"),
        "url": format!("{API}/repos/bench/hot/commits/{SHA}/status")
    })
}

fn listen_addr() -> SocketAddr {
    let raw = std::env::args().nth(1).or_else(|| std::env::var("BASELINE_LISTEN").ok()).unwrap_or_else(|| "127.0.0.1:0".to_owned());
    if let Ok(port) = raw.parse::<u16>() {
        return SocketAddr::from(([127, 0, 0, 1], port));
    }
    raw.parse().unwrap_or_else(|e| panic!("invalid listen address {raw:?}: {e}"))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let get_body = Bytes::from(serde_json::to_vec(&combined_status(10)).expect("serialize"));
    let post_body = Bytes::from(serde_json::to_vec(&json!({"id": 1, "state": "success", "context": "ci/1"})).expect("serialize"));

    let app = Router::new().route(
        "/combined",
        get(move || {
            let body = get_body.clone();
            async move { ([(CONTENT_TYPE, "application/json")], body) }
        })
        .post(move |_req: Bytes| {
            let body = post_body.clone();
            async move { (StatusCode::CREATED, [(CONTENT_TYPE, "application/json")], body).into_response() }
        }),
    );

    let listener = tokio::net::TcpListener::bind(listen_addr()).await.expect("bind");
    println!("listening on http://{}", listener.local_addr().expect("local_addr"));
    axum::serve(listener, app).await.expect("serve");
}
