//! The database products corescale has, one row each, as sysbench's driver table: the URL
//! schemes that name it, how its settings are resolved, and what its driver can do
//! (pipelining, its SQL dialect). A target is read with these alone; how a product's
//! driver opens a database is the registry's (`registry`), so reading a URL needs no driver.

use super::connect::settings::{ConnectSettings, Surroundings};
use crate::error::UsageError;

/// The SQL a product speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    PostgreSql,
    MySql,
    Oracle,
}

/// A database product: how its URLs are read, what its driver can do, and how it connects.
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

/// Every product, in the order messages list them.
static PRODUCTS: [&Product; 3] = [&POSTGRESQL, &MYSQL, &ORACLE];

/// The product a URL scheme (lower case) names.
pub fn of_scheme(scheme: &str) -> Option<&'static Product> {
    PRODUCTS
        .into_iter()
        .find(|product| product.schemes.contains(&scheme))
}

/// "postgres://, postgresql://, ...", for messages.
pub fn all_schemes() -> String {
    let schemes: Vec<String> = PRODUCTS
        .iter()
        .flat_map(|product| product.schemes)
        .map(|scheme| format!("{scheme}://"))
        .collect();
    schemes.join(", ")
}

pub(crate) static POSTGRESQL: Product = Product {
    name: "PostgreSQL",
    schemes: &["postgres", "postgresql"],
    resolve: super::postgres::libpq::resolve,
    // Enough that the backend's flush and the client's wake-up are paid once per batch
    // (see docs/db.md).
    max_pipeline: 64,
    default_pipeline: 32,
    dialect: Dialect::PostgreSql,
    placeholder: |n| format!("${n}"),
};

pub(crate) static MYSQL: Product = Product {
    name: "MySQL/MariaDB",
    schemes: &["mysql", "mariadb"],
    resolve: super::mysql::mycnf::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    dialect: Dialect::MySql,
    placeholder: |_| "?".to_string(),
};

pub(crate) static ORACLE: Product = Product {
    name: "Oracle",
    schemes: &["oracle"],
    resolve: super::oracle::connect::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    dialect: Dialect::Oracle,
    placeholder: |n| format!(":{n}"),
};
