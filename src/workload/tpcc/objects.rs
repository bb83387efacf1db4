//! The order-entry tables as a workload's database objects: `db setup tpcc`'s options, its
//! claim on the `corescale_tpcc_*` names (the only ones of its that teardown drops), the
//! setup (created, loaded in parallel, indexed, then checked against the specification's
//! consistency conditions) and `db check --workload tpcc`.

use anyhow::{Context, Result};
use clap::Args;

use super::consistency;
use super::schema::TPCC_PREFIX;
use crate::db::Database;
use crate::db::catalog::{Claim, ObjectKind};
use crate::db::connect::options::DbTargetArgs;
use crate::workload::objects::{DatabaseObjects, Progress, SetupDone};

/// `db setup tpcc`: the nine order-entry tables derived from TPC-C, loaded as its clause 4.3
/// says (not an audited TPC-C). Replaces only its own earlier setup.
#[derive(Debug, Args)]
pub struct TpccSetupArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// Warehouses of the order-entry tables (about 100 MB each on disk); default 1.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub warehouses: Option<u64>,

    /// Sessions loading the tables in parallel. Default: this host's CPUs, at most one per
    /// warehouse.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub loaders: Option<u64>,
}

/// The nine order-entry tables.
pub struct OrderEntryTables;

impl Claim for OrderEntryTables {
    /// Tables `corescale_tpcc_<name>`, the name of lower-case letters and underscores, as
    /// the specification's are.
    fn claims(&self, kind: ObjectKind, name: &str) -> bool {
        kind == ObjectKind::Table
            && name.strip_prefix(TPCC_PREFIX).is_some_and(|rest| {
                (1..=16).contains(&rest.len())
                    && rest.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            })
    }
}

impl DatabaseObjects for OrderEntryTables {
    type Options = TpccSetupArgs;

    fn target<'a>(&self, options: &'a TpccSetupArgs) -> &'a DbTargetArgs {
        &options.target
    }

    fn setup(
        &self,
        options: &TpccSetupArgs,
        database: &dyn Database,
        progress: &Progress,
    ) -> Result<SetupDone> {
        let warehouses = options.warehouses.unwrap_or(1);
        let loaders = options.loaders.map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            |loaders| loaders as usize,
        );
        let loaders = loaders.min(warehouses as usize).max(1);
        (progress.total)(super::load::ITEMS + warehouses * super::load::ROWS_PER_WAREHOUSE);
        let started = std::time::Instant::now();
        let loaded = super::setup(database, warehouses, loaders, progress.loaded)
            .context("setting up the order-entry tables")?;
        let took = started.elapsed();
        let mut session = database.open_session()?;
        let conditions = consistency::check(database, session.as_mut())?;
        Ok(SetupDone {
            previous: loaded.previous,
            summary: format!(
                "created the nine order-entry tables corescale_tpcc_* (derived from TPC-C, not an audited TPC-C) of {warehouses} warehouse(s) in {}: {} rows by {loaders} session(s) in {:.1} s; consistency conditions {} hold",
                database.target(),
                loaded.rows,
                took.as_secs_f64(),
                numbered(&conditions)
            ),
        })
    }

    /// The tables are the ones setup created, and meet the consistency conditions 1-4 of
    /// clause 3.3.2.
    fn check(&self, database: &dyn Database) -> Result<Option<String>> {
        super::verify(database)?;
        let mut session = database.open_session()?;
        let conditions = consistency::check(database, session.as_mut())?;
        Ok(Some(format!(
            "order-entry tables: consistency conditions {} hold",
            numbered(&conditions)
        )))
    }
}

/// "1, 2, 3, 4".
fn numbered(conditions: &[u8]) -> String {
    conditions
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
