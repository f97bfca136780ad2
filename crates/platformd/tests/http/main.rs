//! The HTTP suite: every test drives a real server over loopback, on SQLite and PostgreSQL.
mod harness;

mod smoke;
mod statuses;
mod authorizations;
mod access;
mod admin;
mod persistence;
