//! Order entry derived from TPC-C: its nine tables, their initial population, and the
//! consistency conditions a loaded or run database must meet. Its SQL is its own; the
//! database layer creates and records the tables (ownership, teardown) and bulk-loads rows.
//! Not an audited TPC-C result, as HammerDB says of its own.

pub mod consistency;
pub mod load;
pub mod objects;
pub mod random;
pub mod run;
pub mod schema;
mod session;
pub mod statements;
pub mod transactions;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::db::catalog::{self, ObjectKind, Owned, SetupStamp};
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
    let per_table: [AtomicU64; 9] = Default::default();
    let counted = |table: &schema::Table, count: u64| {
        let index = schema::TABLES
            .iter()
            .position(|known| known.name == table.name)
            .unwrap_or(0);
        per_table[index].fetch_add(count, Ordering::Relaxed);
        loaded(count);
    };
    let claims = crate::workload::CLAIMS;
    let previous = catalog::setup_owned(
        database,
        claims,
        &objects::OrderEntryTables,
        &wanted,
        |stamp| {
            let recorded = TpccSetup {
                workload: Workload::Tpcc,
                warehouses,
                nurand: NurandConstants::draw(&mut Random::new(0, stamp_salt(stamp))),
            };
            create_tables(database, dialect, stamp, &recorded)?;
            load_rows(database, &recorded, loaders, &counted)?;
            let rows = per_table
                .each_ref()
                .map(|count| count.load(Ordering::Relaxed));
            finish_tables(database, dialect, rows)
        },
    )?;
    Ok(Loaded {
        previous,
        rows: per_table
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
            .sum(),
    })
}

/// A finished order-entry setup, its tables checked and locked for the run.
pub struct Verified {
    pub setup: TpccSetup,
    /// The tables as setup recorded them, to check again before each level.
    pub tables: Vec<Owned>,
    /// The lock on them, from a connection of its own, held for as long as this lives.
    pub held: Option<Box<dyn crate::db::TablesHeld>>,
}

/// Refuses to read tables that are not the ones a finished order-entry setup created (a
/// view or another role's table under one of their names would run its code as this
/// user), or that another role could drop, replace or put triggers on; locks them, then
/// checks them, and answers what the setup recorded.
pub fn verify(database: &dyn Database) -> Result<Verified> {
    let target = database.target();
    let upper_case = database.upper_case_names();
    let names: Vec<String> = schema::TABLES
        .iter()
        .map(|table| table.stored_name())
        .collect();
    catalog::refuse_others_in_control(database, &names)?;
    let owned: Vec<Owned> = database
        .catalogue()?
        .into_iter()
        .filter(|object| object.claimed_by(&objects::OrderEntryTables, upper_case))
        .collect();
    if owned.is_empty() {
        bail!(
            "{target} has no order-entry tables of corescale's: run `corescale db setup tpcc --target {target}` first"
        );
    }
    let mut listed = Vec::with_capacity(schema::TABLES.len());
    for table in schema::TABLES {
        let name = table.stored_name();
        let Some(object) = owned
            .iter()
            .find(|object| object.name.eq_ignore_ascii_case(&name))
        else {
            bail!(
                "{target}: corescale's catalogue does not list {name}: run `corescale db setup tpcc` again"
            );
        };
        if object.state != catalog::READY {
            bail!(
                "{target}: {name} was not fully loaded (an interrupted setup?): run `corescale db setup tpcc` again"
            );
        }
        listed.push(object.clone());
    }
    // Locked first, then checked: what is checked stays for the whole run.
    let held = catalog::hold_tables(database, &listed)?;
    check_tables(database, &listed, "")?;
    let setup: TpccSetup = serde_json::from_str(&listed[0].parameters).map_err(|error| {
        anyhow!(
            "{target}: corescale's catalogue has unreadable parameters for {}: {error}",
            listed[0].name
        )
    })?;
    // Each C within its NURand's A (clause 2.1.6), and a warehouse at least: values a
    // session's arithmetic takes as they are.
    let nurand = setup.nurand;
    if setup.warehouses == 0 || nurand.c_last > 255 || nurand.c_id > 1023 || nurand.ol_i_id > 8191 {
        bail!(
            "{target}: corescale's catalogue records {} warehouses and C constants {}/{}/{} (at most 255/1023/8191): not a setup of corescale's; run `corescale db setup tpcc` again",
            setup.warehouses,
            nurand.c_last,
            nurand.c_id,
            nurand.ol_i_id
        );
    }
    Ok(Verified {
        setup,
        tables: listed,
        held,
    })
}

/// Refuses tables that are not the ones setup created, by oid (`when` says at which check).
pub fn check_tables(database: &dyn Database, tables: &[Owned], when: &str) -> Result<()> {
    for (object, verdict) in tables.iter().zip(database.verify_owned(tables)?) {
        if verdict != catalog::Verdict::Same {
            bail!(
                "{}: {} is not the table corescale's setup created ({}){when}: it is not read; check it, then run `corescale db setup tpcc` again",
                database.target(),
                object.name,
                verdict.reason()
            );
        }
    }
    Ok(())
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
        database.create_owned(
            ObjectKind::Table,
            &name,
            &table.create(dialect, &database.own_name(&name)),
            stamp,
            &parameters,
        )?;
    }
    Ok(())
}

/// The item table by one loader, the warehouses shared among all of them (each takes the
/// next not yet taken), each on a session of its own, all opened before any loads. The
/// first failure stops the others at their next batch, and is the one reported.
fn load_rows(
    database: &dyn Database,
    recorded: &TpccSetup,
    loaders: usize,
    loaded: &(dyn Fn(&schema::Table, u64) + Sync),
) -> Result<()> {
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string();
    let sessions = (0..loaders.max(1))
        .map(|loader| {
            database
                .open_session()
                .with_context(|| format!("opening loader session {} of {loaders}", loader + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    let next = Mutex::new(1..=recorded.warehouses);
    let items_left = AtomicBool::new(true);
    let failed = AtomicBool::new(false);
    let salt = recorded.nurand.c_id ^ (recorded.nurand.ol_i_id << 10);
    let outcomes: Vec<Result<()>> = std::thread::scope(|scope| {
        let workers: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(loader, mut session)| {
                let (next, items_left, failed, now) = (&next, &items_left, &failed, &now);
                scope.spawn(move || -> Result<()> {
                    let mut random = Random::new(loader + 1, salt);
                    let mut send = |batch: Batch| {
                        if failed.load(Ordering::Relaxed) {
                            bail!("another loader failed");
                        }
                        send_batch(database, session.as_mut(), &batch, loaded)
                    };
                    let done = (|| -> Result<()> {
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
                    })();
                    if done.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err(anyhow!("a loader thread panicked")))
            })
            .collect()
    });
    // The first real failure, not the others' "another loader failed".
    let mut errors: Vec<anyhow::Error> = outcomes.into_iter().filter_map(Result::err).collect();
    errors.sort_by_key(|error| format!("{error:#}").contains("another loader failed"));
    errors.into_iter().next().map_or(Ok(()), Err)
}

fn send_batch(
    database: &dyn Database,
    session: &mut dyn DbSession,
    batch: &Batch,
    loaded: &(dyn Fn(&schema::Table, u64) + Sync),
) -> Result<()> {
    let name = batch.table.stored_name();
    session
        .load_rows(
            &database.own_name(&name),
            &batch.table.column_names(),
            &batch.rows,
        )
        .with_context(|| format!("loading {name}"))?;
    loaded(batch.table, batch.rows.len() as u64);
    Ok(())
}

/// Secondary indexes, then each table marked ready (its statistics gathered) with the rows
/// it was loaded with.
fn finish_tables(database: &dyn Database, dialect: Dialect, rows: [u64; 9]) -> Result<()> {
    let mut session = database.open_session()?;
    for (table, rows) in schema::TABLES.iter().zip(rows) {
        let name = table.stored_name();
        if let Some(index) = table.create_index(dialect, &database.own_name(&name)) {
            session
                .run_plain(&index)
                .with_context(|| format!("indexing {name}"))?;
        }
        database.owned_table_ready(&name, rows)?;
    }
    Ok(())
}
