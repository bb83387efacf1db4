//! Reaching a database as its DBAs do: the target URL (`target`), the product's own settings
//! resolved from it, the environment and the files DBAs keep (`libpq` for PostgreSQL, `mycnf`
//! for MySQL/MariaDB, `oracle`), their shared vocabulary (`settings`) and TLS (`tls`).

pub(crate) mod libpq;
pub(crate) mod mycnf;
pub(crate) mod oracle;
pub mod settings;
pub mod target;
pub(crate) mod tls;
