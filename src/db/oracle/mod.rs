//! Oracle: its connect descriptors and settings (`connect`, always built, so a target is read
//! and checked without the client library), the client library's presence (`client`), and
//! the driver on Oracle Instant Client (`driver`, in every build but `--no-default-features`).

pub mod client;
pub(crate) mod connect;
#[cfg(feature = "oracle")]
mod driver;

#[cfg(feature = "oracle")]
pub use driver::Oracle;

use std::sync::Arc;

use anyhow::Result;

use crate::db::connect::target::Target;
use crate::db::driver::Database;
use crate::db::product::{Dialect, Product};

/// Oracle's row of the registry.
pub(crate) static PRODUCT: Product = Product {
    name: "Oracle",
    schemes: &["oracle"],
    resolve: connect::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    dialect: Dialect::Oracle,
    placeholder: |n| format!(":{n}"),
};

/// Opens an Oracle target's database, once Oracle's client library is found.
#[cfg(feature = "oracle")]
pub(crate) fn open(target: &Target) -> Result<Arc<dyn Database>> {
    client::require()?;
    Ok(Arc::new(Oracle::new(target.clone())?))
}

#[cfg(not(feature = "oracle"))]
pub(crate) fn open(_target: &Target) -> Result<Arc<dyn Database>> {
    client::require()?;
    anyhow::bail!("this corescale was built without Oracle support")
}
