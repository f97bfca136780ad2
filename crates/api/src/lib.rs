//! The HTTP API of `platformd`: the request contract of document 1, the spec areas, and the
//! control plane.
//!
//! ## Layers
//!
//! A module imports only modules of its own layer or a lower one, and the modules of one layer
//! import each other without cycles; `scripts/api-layers --check` (run by `scripts/test`)
//! enforces this, and `scripts/api-layers` prints the graph. Lowest first:
//!
//! - **foundations** (`foundations/`): `access_log`, `cache`, `docs`, `error`, `etag`, `forwarded`, `headers`, `listener`, `metrics`, `outbound`, `proxy_protocol`, `reply`, `secrets`, `settings`, `sharded`, `typed`, `shapes`, `input`, `versions`
//! - **http** (`http/`; the contract and what it needs, never an operation): `operation`, `ratelimit`, `shared_limits`, `leases`, `secondary`, `admission`, `principal`, `authenticate`, `authorize`, `request`, `registry`, `not_modified`, `faults`, `usage_log`, `worker`, `state`, `contract`
//! - **features** (`ops/`; operations, their workers and control-plane parts): one module per spec area, `outbox`, `provision`
//! - **assembly** (`assembly/`; everything served, in one place): `router`, `openapi`, `background`, `admin`, `seed`
//!
//! A layer is a folder; its modules are also re-exported at the crate root (`crate::error`).
// `ApiError` is large (message, errors, headers) but only built on the cold path.
#![allow(clippy::result_large_err)]
pub mod assembly;
pub mod foundations;
pub mod http;
pub mod ops;

// Each layer's modules at the crate root as well: `crate::error`, `platform_api::state`.
pub use self::assembly::{admin, background, openapi, router, seed};
pub use self::foundations::{
    access_log, cache, docs, error, etag, forwarded, headers, input, listener, metrics, outbound, proxy_protocol, reply, secrets, settings,
    shapes, sharded, typed, versions,
};
pub use self::http::{
    admission, authenticate, authorize, contract, faults, leases, not_modified, operation, principal, ratelimit, registry, request,
    secondary, shared_limits, state, usage_log, worker,
};

pub use background::spawn_workers;
pub use router::app;
pub use state::{ApiConfig, AppState, Shared};
