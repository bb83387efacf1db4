//! The drivers corescale has, one row each: what each can do (pipelining, a server-side
//! loop) and how it opens a target's database. Adding a database is a row here, its
//! product in `target.rs` and its driver's file. The registry knows the drivers; no driver
//! and not the target know it.

use std::sync::Arc;

use anyhow::Result;

use super::driver::Database;
use super::target::{Product, Target};

/// What a driver can do, and how it connects.
#[derive(Debug)]
pub(crate) struct Driver {
    /// Statements one session may have in flight (1: one round trip per statement).
    pub(crate) max_pipeline: usize,
    /// Statements per batch unless --pipeline says otherwise.
    pub(crate) default_pipeline: usize,
    /// Whether `--server-loop` can run the statements in the server (pgio's PL/pgSQL loop).
    pub(crate) server_loop: bool,
    open: fn(&Target) -> Result<Arc<dyn Database>>,
}

/// The driver of a product.
pub(crate) fn driver(product: Product) -> &'static Driver {
    match product {
        Product::PostgreSql => &POSTGRESQL,
        Product::MySql => &MYSQL,
        Product::Oracle => &ORACLE,
    }
}

/// Opens the database a target names.
pub fn connect(target: &Target) -> Result<Arc<dyn Database>> {
    (driver(target.product).open)(target)
}

static POSTGRESQL: Driver = Driver {
    // Enough that the backend's flush and the client's wake-up are paid once per batch
    // (see docs/db.md).
    max_pipeline: 64,
    default_pipeline: 32,
    server_loop: true,
    open: |target| Ok(Arc::new(super::postgres::Postgres::new(target.clone())?)),
};

static MYSQL: Driver = Driver {
    max_pipeline: 1,
    default_pipeline: 1,
    server_loop: false,
    open: |target| Ok(Arc::new(super::mysql::MySql::new(target.clone())?)),
};

static ORACLE: Driver = Driver {
    max_pipeline: 1,
    default_pipeline: 1,
    server_loop: false,
    open: open_oracle,
};

#[cfg(feature = "oracle")]
fn open_oracle(target: &Target) -> Result<Arc<dyn Database>> {
    Ok(Arc::new(super::oracle::Oracle::new(target.clone())?))
}

#[cfg(not(feature = "oracle"))]
fn open_oracle(_target: &Target) -> Result<Arc<dyn Database>> {
    anyhow::bail!(
        "this corescale was built without Oracle support: rebuild with `cargo build --release --features oracle` (needs Oracle Instant Client at run time)"
    )
}
