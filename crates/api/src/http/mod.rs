//! The http layer: the contract and what it needs (declarations, callers, authorization, limits,
//! state, workers); never an operation.
pub mod admission;
pub mod authenticate;
pub mod authorize;
pub mod contract;
pub mod faults;
pub mod leases;
pub mod not_modified;
pub mod operation;
pub mod principal;
pub mod ratelimit;
pub mod registry;
pub mod request;
pub mod secondary;
pub mod shared_limits;
pub mod state;
pub mod usage_log;
pub mod worker;
