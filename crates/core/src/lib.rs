//! Pure domain rules of the platform: no I/O, no storage, no HTTP.
pub mod clock;
pub mod daterange;
pub mod fuzz;
pub mod ids;
pub mod pagination;
pub mod status;
pub mod time;
pub mod token;
pub mod version;

pub use clock::Clock;
pub use token::TokenKind;
pub use version::ApiVersion;
