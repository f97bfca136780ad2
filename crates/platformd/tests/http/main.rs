//! The HTTP suite: every test drives a real server over loopback, on SQLite and PostgreSQL.
mod harness;

mod access;
mod admin;
mod authorizations;
mod contract;
mod docs;
mod events;
mod faults;
mod hooks;
mod meta;
mod notifications;
mod persistence;
mod rate_limits;
mod smoke;
mod statuses;
mod workflow_runs;
