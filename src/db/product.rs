//! What a database product is, as a row of sysbench's driver table: the URL schemes that
//! name it, how its settings are resolved, and what its driver can do (pipelining, its SQL
//! dialect). Each product's folder holds its row; `registry` lists them with their drivers.
//! A target is read with its row alone, so reading a URL needs no driver.

use super::connect::settings::{ConnectSettings, Surroundings};
use crate::error::UsageError;

/// The SQL a product speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    PostgreSql,
    MySql,
    Oracle,
}

/// A database product: how its URLs are read and what its driver can do.
pub struct Product {
    /// The product, for messages.
    pub name: &'static str,
    /// URL schemes that name it.
    pub schemes: &'static [&'static str],
    /// Resolves a target's text into connection settings, as the product's own clients do.
    pub resolve: fn(&str, &dyn Surroundings) -> Result<ConnectSettings, UsageError>,
    /// Statements one session may have in flight (1: one round trip per statement).
    pub(crate) max_pipeline: usize,
    /// Statements per batch unless --pipeline says otherwise.
    pub(crate) default_pipeline: usize,
    /// The SQL it speaks, so a workload can write its statements for it (as sysbench's
    /// scripts look at the driver's name).
    pub dialect: Dialect,
    /// The n-th (1-based) bound value's placeholder in a statement: `$1`, `?`, `:1`.
    pub placeholder: fn(usize) -> String,
}

impl std::fmt::Debug for Product {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name)
    }
}
