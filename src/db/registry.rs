//! How each database product's driver opens a target's database: the one place that knows
//! every driver. What a product is (its schemes, settings, capabilities) is `product`'s row;
//! adding a database is a row there, one here, its settings resolver in its folder and its
//! driver's folder.

use std::sync::Arc;

use anyhow::Result;

use super::connect::target::Target;
use super::driver::Database;
use super::product::{MYSQL, ORACLE, POSTGRESQL, Product};

/// How a driver opens a target's database.
type Open = fn(&Target) -> Result<Arc<dyn Database>>;

/// Each product's driver.
static DRIVERS: [(&Product, Open); 3] = [
    (&POSTGRESQL, |target| {
        Ok(Arc::new(super::postgres::Postgres::new(target.clone())?))
    }),
    (&MYSQL, |target| {
        Ok(Arc::new(super::mysql::MySql::new(target.clone())?))
    }),
    (&ORACLE, open_oracle),
];

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
    let (_, open) = DRIVERS
        .iter()
        .find(|(product, _)| std::ptr::eq(*product, target.product))
        .ok_or_else(|| anyhow::anyhow!("no driver for {}", target.product.name))?;
    open(target)
}

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
