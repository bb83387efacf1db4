//! SLOB's objects in a database: the names `db setup` gives its tables and loop functions
//! (and so the only ones of its that teardown drops), what the catalogue records of each,
//! how large a setup is when no size is given, and the setup itself as [`DatabaseObjects`].

use anyhow::{Context, Result, bail};

use super::args::{DEFAULT_SETUP_ROWS, DbSetupArgs};
use super::tables::{self, SetupRecord, loop_function, table_name};
use crate::db::Database;
use crate::db::catalog::{self, CATALOG_TABLE, Claim, ObjectKind, PREFIX, READY};
use crate::db::connect::options::DbTargetArgs;
use crate::error::UsageError;
use crate::workload::objects::{DatabaseObjects, Progress, SetupDone};

/// SLOB's tables of one-row blocks, and on PostgreSQL their server-side loops.
pub struct SlobTables;

impl Claim for SlobTables {
    /// `corescale_tN` tables and `corescale_loop_tN` functions, N a number.
    fn claims(&self, kind: ObjectKind, name: &str) -> bool {
        let numbered = |prefix: &str| {
            name.strip_prefix(prefix).is_some_and(|digits| {
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            })
        };
        match kind {
            ObjectKind::Table => numbered(&format!("{PREFIX}t")),
            ObjectKind::Function => numbered(&format!("{PREFIX}loop_t")),
        }
    }
}

impl DatabaseObjects for SlobTables {
    type Options = DbSetupArgs;

    fn target<'a>(&self, options: &'a DbSetupArgs) -> &'a DbTargetArgs {
        &options.target
    }

    fn validate(&self, options: &DbSetupArgs) -> Result<(), UsageError> {
        options.rows().map(|_| ())
    }

    fn setup(
        &self,
        options: &DbSetupArgs,
        database: &dyn Database,
        progress: &Progress,
    ) -> Result<SetupDone> {
        let asked = options.rows()?;
        let schemas = options.schemas();
        let target = database.target();
        let cache = database.buffer_cache()?;
        let bytes_per_row = tables::bytes_per_row(target.product.dialect);
        let rows = match asked {
            Some(rows) => {
                warn_when_larger_than_the_cache(cache, bytes_per_row, schemas, rows);
                rows
            }
            None => rows_that_fit(cache, bytes_per_row, schemas),
        };
        (progress.total)(schemas.saturating_mul(rows));
        let previous = setup(database, schemas, rows, progress.loaded)
            .context("setting up corescale's tables")?;
        Ok(SetupDone {
            previous,
            summary: format!(
                "created {schemas} table(s) corescale_t0..corescale_t{} of {rows} one-row blocks in {target}",
                schemas - 1
            ),
        })
    }
}

/// Creates `schemas` tables of `rows` one-row blocks under the setup lock, loaded in
/// parallel: what an earlier SLOB setup created is dropped first, and nothing corescale did
/// not create is overwritten. Returns the objects the earlier setup left, now dropped.
pub fn setup(
    database: &dyn Database,
    schemas: u64,
    rows: u64,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<Vec<String>> {
    let wanted: Vec<String> = (0..schemas)
        .flat_map(|schema| [table_name(schema), loop_function(schema)])
        .collect();
    let claims = crate::workload::CLAIMS;
    catalog::setup_owned(database, claims, &SlobTables, &wanted, |stamp| {
        tables::load(database, schemas, rows, stamp, loaded)
    })
}

/// The tables a finished setup recorded: how many schemas, and rows per schema.
pub(crate) fn inventory(database: &dyn Database) -> Result<(u64, u64)> {
    let mut tables: Vec<(u64, SetupRecord)> = Vec::new();
    for object in database.catalogue()? {
        if object.kind != Some(ObjectKind::Table)
            || !object.claimed_by(&SlobTables, database.upper_case_names())
        {
            continue;
        }
        if object.state != READY {
            bail!(
                "{} in {} was not fully loaded (an interrupted `corescale db setup`?): run the setup again",
                object.name,
                database.target()
            );
        }
        let record: SetupRecord = serde_json::from_str(&object.parameters).map_err(|error| {
            anyhow::anyhow!(
                "{CATALOG_TABLE} in {} has unreadable parameters for {}: {error}",
                database.target(),
                object.name
            )
        })?;
        tables.push((record.schema, record));
    }
    tables.sort_by_key(|(schema, _)| *schema);
    let Some((_, first)) = tables.first() else {
        return Ok((0, 0));
    };
    let consistent = tables.iter().enumerate().all(|(index, (schema, record))| {
        *schema == index as u64 && record.rows == first.rows && record.schemas == first.schemas
    });
    if !consistent || first.schemas != tables.len() as u64 {
        bail!(
            "{CATALOG_TABLE} in {} lists an incomplete or mixed set of tables: run `corescale db setup` again",
            database.target()
        );
    }
    Ok((first.schemas, first.rows))
}

/// Rows per table that `schemas` tables may have to leave a fifth of the buffer cache free
/// (for indexes, catalogues and other tables).
fn rows_in_cache(cache: u64, bytes_per_row: u64, schemas: u64) -> u64 {
    cache * 4 / 5 / bytes_per_row.max(1) / schemas.max(1)
}

/// Rows per table for a setup without `--scale`: the default, or as many as leave a fifth of
/// the buffer cache (`cache`: its size and setting) free, so the default sweep is cached.
fn rows_that_fit(cache: Option<(u64, &str)>, bytes_per_row: u64, schemas: u64) -> u64 {
    let Some((bytes, setting)) = cache else {
        return DEFAULT_SETUP_ROWS;
    };
    let fit = rows_in_cache(bytes, bytes_per_row, schemas);
    if fit >= DEFAULT_SETUP_ROWS {
        return DEFAULT_SETUP_ROWS;
    }
    let rows = fit.max(128);
    say!(
        "corescale: note: {schemas} table(s) of {rows} rows, sized to fit {setting} = {} MiB with a fifth to spare (a cached test); --scale sets the size",
        bytes >> 20
    );
    if fit < 128 {
        warn_when_larger_than_the_cache(cache, bytes_per_row, schemas, rows);
    }
    rows
}

/// Says, before loading, when the tables will not fit the database's buffer cache (`cache`:
/// its size and setting): runs would then read from disk (the run warns on every level, too
/// late to change anything).
fn warn_when_larger_than_the_cache(
    cache: Option<(u64, &str)>,
    bytes_per_row: u64,
    schemas: u64,
    rows: u64,
) {
    let Some((cache, setting)) = cache else {
        return;
    };
    let data = schemas.saturating_mul(rows).saturating_mul(bytes_per_row);
    // The cache also holds indexes, catalogues and other tables: keep a fifth free.
    if data.saturating_mul(5) / 4 > cache {
        let mib = |bytes: u64| bytes as f64 / (1u64 << 20) as f64;
        let rows_that_fit = rows_in_cache(cache, bytes_per_row, schemas).max(1);
        say!(
            "corescale: warning: {schemas} table(s) of {rows} rows take about {:.0} MiB, more than fits in {setting} = {:.0} MiB with room to spare: runs will read from disk instead of measuring logical IO. Raise {setting} to at least {:.0} MiB, or use --scale {rows_that_fit} or fewer --schemas",
            mib(data),
            mib(cache),
            mib(data * 5 / 4)
        );
    }
}
