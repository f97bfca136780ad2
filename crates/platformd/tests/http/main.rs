//! The HTTP suite: every test drives a real server over loopback, on SQLite and PostgreSQL.
mod harness;

mod access;
mod admin;
mod authorizations;
mod content_exclusion;
mod contract;
mod depbot;
mod devenv_secrets;
mod docs;
mod enterprise_teams;
mod events;
mod faults;
mod hooks;
mod insights;
mod meta;
mod notifications;
mod persistence;
mod private_registries;
mod rate_limits;
mod secondary_limits;
mod security_managers;
mod rulesets;
mod smoke;
mod source_imports;
mod statuses;
mod workflow_runs;
