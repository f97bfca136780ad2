//! The HTTP suite: every test drives a real server over loopback, on SQLite and PostgreSQL.
mod harness;

mod smoke;
mod contract;
mod meta;
mod rate_limits;
