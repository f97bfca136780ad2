//! `platformd` as a library: the command line, the settings' one declaration and the server's
//! wiring, so the binary and the HTTP test suite build the API's configuration the same way.
pub mod cli;
pub mod config;
pub mod server;
pub mod tls;
