//! Domain operations, written once as neutral SQL over [`crate::Conn`]; both backends run them.
pub mod accounts;
pub mod activity;
pub mod apps;
pub mod depbot;
pub mod box_keys;
pub mod content_exclusions;
pub mod devenv_secrets;
pub mod enterprise_teams;
pub mod notifications;
pub mod private_registries;
pub mod feeds;
pub mod hooks;
pub mod repos;
pub mod security_managers;
pub mod rulesets;
pub mod statuses;
pub mod tokens;
