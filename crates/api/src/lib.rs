//! The HTTP API of `platformd`: the request contract of document 1, the spec areas, and the
//! control plane.
//!
//! ## Layers
//!
//! A module imports only modules of its own layer or a lower one, and the modules of one layer
//! import each other without cycles; `scripts/api-layers --check` (run by `scripts/test`)
//! enforces this, and `scripts/api-layers` prints the graph. Lowest first:
//!
//! - **foundations**: `access_log`, `cache`, `docs`, `error`, `etag`, `forwarded`, `headers`, `listener`, `metrics`, `outbound`, `reply`, `secrets`, `settings`, `sharded`, `shape`, `shapes`, `validate`, `versions`
//! - **http** (the contract and what it needs; never an operation): `operation`, `ratelimit`, `shared_limits`, `secondary`, `admission`, `principal`, `authenticate`, `authorize`, `request`, `routes`, `not_modified`, `faults`, `insights`, `worker`, `state`, `contract`
//! - **features** (operations, their workers and control-plane parts): `control`, `outbox`, `ops`
//! - **assembly** (everything served, in one place): `router`, `openapi`, `background`, `admin`, `seed`
// `ApiError` is large (message, errors, headers) but only built on the cold path.
#![allow(clippy::result_large_err)]
pub mod access_log;
pub mod admin;
pub mod admission;
pub mod authenticate;
pub mod authorize;
pub mod background;
pub mod cache;
pub mod contract;
pub mod control;
pub mod docs;
pub mod error;
pub mod etag;
pub mod faults;
pub mod forwarded;
pub mod headers;
pub mod insights;
pub mod listener;
pub mod metrics;
pub mod not_modified;
pub mod openapi;
pub mod operation;
pub mod ops;
pub mod outbound;
pub mod outbox;
pub mod principal;
pub mod ratelimit;
pub mod reply;
pub mod request;
pub mod router;
pub mod routes;
pub mod secondary;
pub mod secrets;
pub mod seed;
pub mod settings;
pub mod shape;
pub mod shapes;
pub mod sharded;
pub mod shared_limits;
pub mod state;
pub mod validate;
pub mod versions;
pub mod worker;

pub use background::spawn_workers;
pub use router::app;
pub use state::{ApiConfig, AppState, Shared};
