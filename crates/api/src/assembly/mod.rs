//! The assembly layer: everything served, in one place.
pub mod admin;
pub mod background;
pub mod openapi;
pub mod router;
pub mod seed;
