//! Order entry derived from TPC-C: its nine tables, their initial population, and the
//! consistency conditions a loaded or run database must meet. Its SQL is its own; the
//! database layer creates and records the tables (ownership, teardown) and bulk-loads rows.
//! Not an audited TPC-C result, as HammerDB says of its own.

pub mod consistency;
pub mod load;
pub mod random;
pub mod schema;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::db::catalog::{self, SetupOf, SetupStamp};
use crate::db::product::Dialect;
use crate::db::{Database, DbSession};
use load::Batch;
use random::{NurandConstants, Random};

/// What a setup records with each of its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TpccSetup {
    pub workload: Workload,
    pub warehouses: u64,
    /// The load's NURand constants: a run's C for last names must differ from the load's.
    pub nurand: NurandConstants,
}

/// The workload a catalogue row's parameters name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    Tpcc,
}

/// What a finished setup did.
#[derive(Debug)]
pub struct Loaded {
    /// Objects the earlier order-entry setup left, now dropped.
    pub previous: Vec<String>,
    pub rows: u64,
}

/// Creates the nine tables under the setup lock, loads `warehouses` warehouses with
/// `loaders` sessions in parallel (`loaded` counts rows as they go in), then builds the
/// indexes, gathers statistics and marks each table ready. An earlier order-entry setup's
/// tables are dropped first; SLOB's stay.
pub fn setup(
    database: &dyn Database,
    warehouses: u64,
    loaders: usize,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<Loaded> {
    let dialect = database.target().product.dialect;
    if dialect == Dialect::Oracle {
        bail!(
            "{}: the order-entry tables are built on PostgreSQL and MySQL/MariaDB; Oracle's are not yet",
            database.target()
        );
    }
    let wanted: Vec<String> = schema::TABLES
        .iter()
        .map(|table| table.stored_name())
        .collect();
    let rows = AtomicU64::new(0);
    let counted = |count: u64| {
        rows.fetch_add(count, Ordering::Relaxed);
        loaded(count);
    };
    let previous = catalog::setup_owned(database, SetupOf::Tpcc, &wanted, |stamp| {
        let recorded = TpccSetup {
            workload: Workload::Tpcc,
            warehouses,
            nurand: NurandConstants::draw(&mut Random::new(0, stamp_salt(stamp))),
        };
        create_tables(database, dialect, stamp, &recorded)?;
        load_rows(database, &recorded, loaders, &counted)?;
        finish_tables(database, dialect)
    })?;
    Ok(Loaded {
        previous,
        rows: rows.into_inner(),
    })
}

/// Each load draws its own values.
fn stamp_salt(stamp: &SetupStamp) -> u64 {
    stamp
        .mark
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
        })
}

fn create_tables(
    database: &dyn Database,
    dialect: Dialect,
    stamp: &SetupStamp,
    recorded: &TpccSetup,
) -> Result<()> {
    let parameters = serde_json::to_string(recorded).context("recording the setup")?;
    for table in schema::TABLES {
        let name = table.stored_name();
        database.create_owned_table(
            &name,
            &table.create(dialect, &database.own_name(&name)),
            stamp,
            &parameters,
        )?;
    }
    Ok(())
}

/// The item table by one loader, the warehouses shared among all of them (each takes the
/// next not yet taken), each on a session of its own.
fn load_rows(
    database: &dyn Database,
    recorded: &TpccSetup,
    loaders: usize,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string();
    let next = Mutex::new(1..=recorded.warehouses);
    let items_left = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|scope| -> Result<()> {
        let workers: Vec<_> = (0..loaders.max(1))
            .map(|loader| {
                let (next, items_left, now) = (&next, &items_left, &now);
                scope.spawn(move || -> Result<()> {
                    let mut session = database.open_session()?;
                    let mut random = Random::new(
                        loader + 1,
                        recorded.nurand.c_id ^ recorded.nurand.ol_i_id << 10,
                    );
                    let mut send =
                        |batch: Batch| send_batch(database, session.as_mut(), &batch, loaded);
                    if items_left.swap(false, Ordering::Relaxed) {
                        load::items(&mut random, &mut send)?;
                    }
                    loop {
                        let taken = next
                            .lock()
                            .map_err(|_| anyhow!("a loader panicked"))?
                            .next();
                        let Some(w) = taken else { return Ok(()) };
                        load::warehouse(&mut random, w, recorded.nurand, now, &mut send)
                            .with_context(|| format!("loading warehouse {w}"))?;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker
                .join()
                .map_err(|_| anyhow!("a loader thread panicked"))??;
        }
        Ok(())
    })
}

fn send_batch(
    database: &dyn Database,
    session: &mut dyn DbSession,
    batch: &Batch,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let name = batch.table.stored_name();
    session
        .load_rows(
            &database.own_name(&name),
            &batch.table.column_names(),
            &batch.rows,
        )
        .with_context(|| format!("loading {name}"))?;
    loaded(batch.rows.len() as u64);
    Ok(())
}

/// Secondary indexes, statistics, then each table marked ready.
fn finish_tables(database: &dyn Database, dialect: Dialect) -> Result<()> {
    let mut session = database.open_session()?;
    for table in schema::TABLES {
        let name = table.stored_name();
        let named = database.own_name(&name);
        if let Some(index) = table.create_index(dialect, &named) {
            session
                .run_plain(&index)
                .with_context(|| format!("indexing {name}"))?;
        }
        let analyze = match dialect {
            Dialect::MySql => format!("ANALYZE TABLE {named}"),
            _ => format!("ANALYZE {named}"),
        };
        session
            .run_plain(&analyze)
            .with_context(|| format!("analysing {name}"))?;
        database.owned_table_ready(&name)?;
    }
    Ok(())
}
