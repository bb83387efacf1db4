//! Reaching a database as its DBAs do: the target URL (`target`), the vocabulary every
//! product's settings share (`settings`: endpoints, credentials, where each value came from)
//! and TLS (`tls`); `options` are the command-line options that name targets, and `instances`
//! turns them into one URL per instance. Each product resolves its own settings in its folder
//! (`postgres::libpq`, `mysql::mycnf`, `oracle::connect`), as its own clients do.

pub mod instances;
pub mod options;
pub mod settings;
pub mod target;
pub mod this_host;
pub(crate) mod tls;
