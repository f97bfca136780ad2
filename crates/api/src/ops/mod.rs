//! One module per spec area; each declares its operations and registers them.
pub mod accounts;
pub mod authorizations;
pub mod content_exclusion;
pub mod depbot;
pub mod devenv_secrets;
pub mod enterprise_teams;
pub mod events;
pub mod git;
pub mod git_hosting;
pub mod git_rest;
pub mod graphql;
pub mod hooks;
pub mod insights;
pub mod meta;
pub mod notifications;
pub mod outbox;
pub mod private_registries;
pub mod provision;
pub mod repos;
pub mod rulesets;
pub mod security_managers;
pub mod source_imports;
pub mod statuses;
pub mod workflow_runs;

use axum::Router;

use crate::registry::Api;
use crate::state::Shared;

pub fn register(api: Api) -> Api {
    let api = meta::routes(api);
    let api = accounts::routes(api);
    let api = statuses::routes(api);
    let api = git::routes(api);
    // After `git`: its `…/git/refs/{ref}` read alias is tried before the ref writes' path.
    let api = git_rest::routes(api);
    let api = repos::routes(api);
    let api = notifications::routes(api);
    let api = events::routes(api);
    let api = hooks::routes(api);
    let api = security_managers::routes(api);
    let api = depbot::routes(api);
    let api = enterprise_teams::routes(api);
    let api = devenv_secrets::routes(api);
    let api = private_registries::routes(api);
    let api = insights::routes(api);
    let api = content_exclusion::routes(api);
    let api = rulesets::routes(api);
    let api = workflow_runs::routes(api);
    let api = source_imports::routes(api);
    authorizations::routes(api)
}

/// Every feature's part of the control plane (under `/_admin/`, behind its guard).
pub fn control(r: Router<Shared>) -> Router<Shared> {
    let r = notifications::control(r);
    let r = accounts::control::routes(r);
    let r = depbot::control(r);
    let r = enterprise_teams::control(r);
    let r = devenv_secrets::control(r);
    let r = rulesets::control::routes(r);
    workflow_runs::control(r)
}
