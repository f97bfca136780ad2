//! One module per spec area; each declares its operations and registers them.
pub mod authorizations;
pub mod events;
pub mod hooks;
pub mod meta;
pub mod notifications;
pub mod statuses;
pub mod workflow_runs;

use crate::router::Api;

pub fn register(api: Api) -> Api {
    let api = meta::routes(api);
    let api = statuses::routes(api);
    let api = notifications::routes(api);
    let api = events::routes(api);
    let api = hooks::routes(api);
    let api = workflow_runs::routes(api);
    authorizations::routes(api)
}
