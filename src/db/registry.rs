//! The database products corescale has, one row each, as sysbench's driver table: the URL
//! schemes that name it, how its settings are resolved, what its driver can do (pipelining,
//! a server-side loop) and how it opens a target's database. Adding a database is a row
//! here, its settings resolver in `connect/` and its driver's folder.

use std::sync::Arc;

use anyhow::Result;

use super::connect::settings::{ConnectSettings, Surroundings};
use super::connect::target::Target;
use super::driver::Database;
use crate::error::UsageError;

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
    /// Whether `--server-loop` can run the statements in the server (pgio's PL/pgSQL loop).
    pub(crate) server_loop: bool,
    /// The n-th (1-based) bound value's placeholder in a statement: `$1`, `?`, `:1`.
    pub placeholder: fn(usize) -> String,
    open: fn(&Target) -> Result<Arc<dyn Database>>,
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

/// Opens the database a target names.
pub fn connect(target: &Target) -> Result<Arc<dyn Database>> {
    // Only PostgreSQL keeps corescale's objects in a schema of their own so far; elsewhere
    // the option would be passed over, and the objects made where the user did not ask.
    if target.in_schema.is_some() && !std::ptr::eq(target.product, &POSTGRESQL) {
        return Err(crate::error::UsageError::new(format!(
            "--in-schema is for PostgreSQL targets; on {} corescale works in the URL's database (or the user's schema): name it there",
            target.product.name
        ))
        .into());
    }
    (target.product.open)(target)
}

static POSTGRESQL: Product = Product {
    name: "PostgreSQL",
    schemes: &["postgres", "postgresql"],
    resolve: super::postgres::libpq::resolve,
    // Enough that the backend's flush and the client's wake-up are paid once per batch
    // (see docs/db.md).
    max_pipeline: 64,
    default_pipeline: 32,
    server_loop: true,
    placeholder: |n| format!("${n}"),
    open: |target| Ok(Arc::new(super::postgres::Postgres::new(target.clone())?)),
};

static MYSQL: Product = Product {
    name: "MySQL/MariaDB",
    schemes: &["mysql", "mariadb"],
    resolve: super::mysql::mycnf::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    server_loop: false,
    placeholder: |_| "?".to_string(),
    open: |target| Ok(Arc::new(super::mysql::MySql::new(target.clone())?)),
};

static ORACLE: Product = Product {
    name: "Oracle",
    schemes: &["oracle"],
    resolve: super::oracle::connect::resolve,
    max_pipeline: 1,
    default_pipeline: 1,
    server_loop: false,
    placeholder: |n| format!(":{n}"),
    open: open_oracle,
};

#[cfg(feature = "oracle")]
fn open_oracle(target: &Target) -> Result<Arc<dyn Database>> {
    super::oracle::client::require()?;
    Ok(Arc::new(super::oracle::Oracle::new(target.clone())?))
}

#[cfg(not(feature = "oracle"))]
fn open_oracle(_target: &Target) -> Result<Arc<dyn Database>> {
    super::oracle::client::require()?;
    anyhow::bail!("this corescale was built without Oracle support")
}
