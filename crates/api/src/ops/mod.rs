//! One module per spec area; each declares its operations and registers them.
pub mod authorizations;
pub mod depbot_alerts;
pub mod events;
pub mod hooks;
pub mod meta;
pub mod notifications;
pub mod security_managers;
pub mod statuses;

use crate::router::Api;

pub fn register(api: Api) -> Api {
    let api = meta::routes(api);
    let api = statuses::routes(api);
    let api = notifications::routes(api);
    let api = events::routes(api);
    let api = hooks::routes(api);
    let api = security_managers::routes(api);
    let api = depbot_alerts::routes(api);
    authorizations::routes(api)
}
