//! Accounts: users, organizations and their teams, as the store's `accounts` domain holds them
//! (one id space for users and organizations, teams belonging to an organization). One folder
//! because the three share their shapes (`shapes.rs`: a user's profile is also an
//! organization's, a full team carries its full organization).
pub mod control;
pub mod orgs;
pub mod shapes;
pub mod teams;
pub mod users;

use crate::registry::Api;

pub fn routes(api: Api) -> Api {
    let api = users::routes(api);
    let api = orgs::routes(api);
    teams::routes(api)
}
