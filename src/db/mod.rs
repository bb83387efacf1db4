//! The databases corescale loads, below the workloads that use them: how a target is reached
//! (`connect`: URLs, libpq and MySQL settings, credential files, TLS), one driver per product
//! (`postgres`, `mysql`, `oracle`) behind the `driver` traits, the `product` row that names
//! each product's schemes, settings and capabilities, the `registry` of their drivers, and the `catalog` of what setup created
//! (ownership, teardown), and the `cluster` of instances one database may have. The `db` workload, and `db setup`, `check` and `teardown`, use it
//! alike.

pub mod catalog;
pub mod cluster;
pub mod connect;
pub mod driver;
pub(crate) mod mysql;
pub(crate) mod oracle;
pub(crate) mod postgres;
pub mod product;
pub mod read_replicas;
pub mod registry;
pub mod session_error;

pub use catalog::PREFIX;
pub use driver::{
    Answer, AtTarget, BoundValue, Catalogue, Database, DbCounters, DbSession, Field, Maintenance,
    Replication, Rows, SampledStatement, ServerCounters, ServerProcesses, SetupWindow, TablesHeld,
    mean_of_samples, quote_backtick, quote_double,
};
pub use session_error::{
    ErrorKind, MySqlCode, OraCode, Refusal, ServerCode, SessionError, SqlState,
};
