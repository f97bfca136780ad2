//! The application: every feature's operations (wired by [`Api`]), the contract in front of
//! them, the control plane, the API description and its reference page.

use axum::extract::State;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower::Layer;

use crate::contract::{contract, Routing};
use crate::error::ApiError;
use crate::operation::Operation;
use crate::registry::{Api, Registered};
use crate::state::Shared;

async fn not_found() -> Response {
    ApiError::not_found().into_response()
}

/// All operations of the spec areas implemented so far.
pub fn api() -> Api {
    crate::ops::register(Api::new())
}

/// Every registered operation with what its handler takes, registered once per process (for
/// lookups outside routing).
pub fn registered() -> &'static [Registered] {
    static REGISTERED: std::sync::OnceLock<Vec<Registered>> = std::sync::OnceLock::new();
    REGISTERED.get_or_init(|| api().ops)
}

/// Every registered operation's declaration.
pub fn operations() -> &'static [&'static Operation] {
    static OPS: std::sync::OnceLock<Vec<&'static Operation>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| registered().iter().map(|r| r.op).collect())
}

/// What the contract decides before routing, from the operations' declarations.
fn routing() -> &'static Routing {
    static ROUTING: std::sync::OnceLock<Routing> = std::sync::OnceLock::new();
    ROUTING.get_or_init(|| Routing::of(operations()))
}

/// The whole HTTP application: health and metrics, the API reference page (`/docs`), the
/// control plane, and the API (behind the contract layer, which runs before routing so it can
/// normalise paths).
pub fn app(state: Shared) -> Router {
    state.insights.serve(operations());
    let api = api();
    let openapi =
        axum::body::Bytes::from(serde_json::to_vec(&crate::openapi::document(&api.ops, &state.config.public_url)).unwrap_or_default());
    // GraphQL (the `viewer` query only) is no operation but answers behind the same contract.
    let api_router: Router =
        crate::ops::graphql::routes(api.router).fallback(not_found).method_not_allowed_fallback(not_found).with_state(state.clone());
    let api_service = middleware::from_fn_with_state((state.clone(), routing()), contract).layer(api_router);
    // The API description and its reference page, at the root and under the public URL's path
    // (like the API), so `/api/v3/docs` finds `/api/v3/openapi.json` next to it.
    let reference = || {
        let doc = openapi.clone();
        crate::docs::router()
            .route("/openapi.json", get(move || async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc) }))
    };
    let base = state.urls.base_path().to_string();
    let mut docs = reference();
    if !base.is_empty() {
        docs = docs.nest(&base, reference());
    }
    Router::new()
        .merge(docs)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route(crate::ops::workflow_runs::logs::ROUTE, get(crate::ops::workflow_runs::logs::download))
        .route(crate::ops::workflow_runs::logs::JOB_ROUTE, get(crate::ops::workflow_runs::logs::download_job))
        .nest("/_admin", crate::admin::router(state.clone()))
        // Git's smart HTTP, at the web root (outside the API's contract).
        .merge(crate::ops::git_hosting::http::routes())
        .fallback_service(api_service)
        .with_state(state)
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(app): State<Shared>) -> Response {
    match app.store.ping().await {
        Ok(()) => "ready\n".into_response(),
        Err(e) => {
            tracing::warn!(error = %e.message, "not ready");
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, "database unavailable\n").into_response()
        }
    }
}

async fn metrics(State(app): State<Shared>) -> Response {
    let mut body = app.metrics.render(&[(
        "platform_store_pending_writes",
        "Writes waiting for or inside a commit (the group-commit queue on SQLite).",
        app.store.pending_writes(),
    )]);
    if let Some(r) = &app.shared_limits {
        use std::fmt::Write;
        let _ = writeln!(
            body,
            "# HELP platform_limits_fallbacks_total Limit decisions made by this node alone because Redis did not answer.\n# TYPE platform_limits_fallbacks_total counter\nplatform_limits_fallbacks_total {}",
            r.fallbacks()
        );
        let _ = writeln!(
            body,
            "# HELP platform_limits_leased_total Requests admitted by this node's leases of their limits, without a Redis call.\n# TYPE platform_limits_leased_total counter\nplatform_limits_leased_total {}",
            r.leased()
        );
    }
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}
