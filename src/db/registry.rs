//! Every database product corescale has, with how its driver opens a target: the one place
//! that knows every driver. A product's row (its schemes, settings, capabilities) and its
//! driver live in its folder; adding a database is that folder, one line here, its `mod`
//! line in `db/mod.rs` and its client crate in Cargo.toml.

use std::sync::Arc;

use anyhow::Result;

use super::connect::target::{Target, redact_argument};
use super::driver::Database;
use super::product::Product;
use crate::error::UsageError;

/// How a driver opens a target's database.
type Open = fn(&Target) -> Result<Arc<dyn Database>>;

/// Every product, in the order messages list them, and its driver's open.
static PRODUCTS: [(&Product, Open); 3] = [
    (&super::postgres::PRODUCT, super::postgres::open),
    (&super::mysql::PRODUCT, super::mysql::open),
    (&super::oracle::PRODUCT, super::oracle::open),
];

/// The product a URL scheme (lower case) names.
fn of_scheme(scheme: &str) -> Option<&'static Product> {
    PRODUCTS
        .iter()
        .map(|(product, _)| *product)
        .find(|product| product.schemes.contains(&scheme))
}

/// "postgres://, postgresql://, ...", for messages.
fn all_schemes() -> String {
    let schemes: Vec<String> = PRODUCTS
        .iter()
        .flat_map(|(product, _)| product.schemes)
        .map(|scheme| format!("{scheme}://"))
        .collect();
    schemes.join(", ")
}

/// Reads a postgres://, postgresql://, mysql://, mariadb:// or oracle:// target and resolves
/// its settings as the database's own clients would.
pub fn target(text: &str) -> Result<Target, UsageError> {
    let Some((scheme, _)) = text.split_once("://") else {
        return Err(UsageError::new(format!(
            "--target '{}' is not a URL: use e.g. postgres://user@127.0.0.1:5432/test, mysql://root@127.0.0.1:3306/test or oracle://user@host:1521/service",
            redact_argument(text)
        )));
    };
    let Some(product) = of_scheme(&scheme.to_ascii_lowercase()) else {
        return Err(UsageError::new(format!(
            "--target scheme '{}' is not supported: use {}",
            printable(scheme),
            all_schemes()
        )));
    };
    Target::resolve(product, text)
}

/// Opens the database a target names.
pub fn connect(target: &Target) -> Result<Arc<dyn Database>> {
    // Only PostgreSQL keeps corescale's objects in a schema of their own so far; elsewhere
    // the option would be passed over, and the objects made where the user did not ask.
    if target.in_schema.is_some() && !std::ptr::eq(target.product, &super::postgres::PRODUCT) {
        return Err(UsageError::new(format!(
            "--in-schema is for PostgreSQL targets; on {} corescale works in the URL's database (or the user's schema): name it there",
            target.product.name
        ))
        .into());
    }
    let (_, open) = PRODUCTS
        .iter()
        .find(|(product, _)| std::ptr::eq(*product, target.product))
        .ok_or_else(|| anyhow::anyhow!("no driver for {}", target.product.name))?;
    open(target)
}

/// At most 80 characters of a scheme as given, control characters escaped.
fn printable(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).take(80).collect()
}
