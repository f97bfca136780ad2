//! Domain operations, written once as neutral SQL over [`crate::Conn`]; both backends run them.
pub mod accounts;
pub mod activity;
pub mod apps;
pub mod notifications;
pub mod feeds;
pub mod hooks;
pub mod repos;
pub mod statuses;
pub mod tokens;
pub mod workflow_runs;
