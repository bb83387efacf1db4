//! SLOB's tables on MySQL/MariaDB: their load (multi-row INSERTs in the physical order, keys
//! in a random permutation), the sessions' statement, and the blocks one statement visits by
//! the buffer pool's own count. The workload's SQL, kept apart from the driver's client parts.

use anyhow::{Context, Result, anyhow, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

use super::identity::current_identity;
use super::{MySql, connect, describe};
use crate::db::catalog::{
    CATALOG_TABLE, Identity, LOADING, ObjectKind, READY, SetupRecord, SetupStamp,
};
use crate::db::connect::target::Target;
use crate::db::{SlobTables, mean_of_samples, quote_backtick, sample_keys, table_name};
use crate::rng::permutation;

const FILLER_BYTES: usize = 7600;
const INSERT_BATCH: usize = 500;

impl SlobTables for MySql {
    fn load_table(
        &self,
        record: SetupRecord,
        stamp: &SetupStamp,
        loaded: &(dyn Fn(u64) + Sync),
    ) -> Result<()> {
        load_table(&self.target, record, stamp, loaded)
    }

    /// Two rows fill a 16 KiB page, plus the secondary index.
    fn bytes_per_row(&self) -> u64 {
        8192 + 32
    }

    fn blocks_per_statement(
        &self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        update: bool,
    ) -> Result<f64> {
        // The buffer pool's own count around each sample statement, run as the sessions run
        // it (prepared, binary protocol): it holds what ANALYZE's pages_accessed leaves out
        // (the optimizer's index dives before each execution, 2 pages here), which the run's
        // counter sees too. Other sessions only add to a delta, so the least of a few repeats
        // is the statement's own; the status read's own count is measured and taken off.
        let mut connection = connect(&self.target)?;
        let target = &self.target;
        let statement = connection
            .prep(statement_sql(&table_name(schema), update))
            .map_err(|error| describe(error, target))?;
        let requests = |connection: &mut Conn| -> Result<f64> {
            let row: Option<(String, String)> = connection
                .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read_requests'")
                .map_err(|error| describe(error, target))?;
            let (_, value) =
                row.ok_or_else(|| anyhow!("{target}: no Innodb_buffer_pool_read_requests"))?;
            value
                .parse()
                .with_context(|| format!("{target}: Innodb_buffer_pool_read_requests = '{value}'"))
        };
        let mut reading = f64::MAX;
        for _ in 0..SAMPLE_REPEATS {
            let before = requests(&mut connection)?;
            reading = reading.min(requests(&mut connection)? - before);
        }
        // An update is measured as the sessions run it, committed, and undone by the same
        // update subtracting 1 (not measured): its commit's pages count as the run's do, and
        // the table's values end as they were.
        let undo = if update {
            let table = quote_backtick(&table_name(schema));
            Some(
                connection
                    .prep(format!(
                        "UPDATE {table} SET scratch = scratch - 1 WHERE `key` BETWEEN ? AND ?"
                    ))
                    .map_err(|error| describe(error, target))?,
            )
        } else {
            None
        };
        // InnoDB's purge reads pages in the background after every committed update (the
        // undo update's too), and other sessions may run: each execution waits until the
        // counter stands still for a moment, at most a second, so their reads are not its own.
        let settle = |connection: &mut Conn| -> Result<()> {
            let deadline = std::time::Instant::now() + SETTLE_AT_MOST;
            loop {
                let before = requests(connection)?;
                std::thread::sleep(SETTLE_QUIET);
                let quiet = requests(connection)? - before <= reading;
                if quiet || std::time::Instant::now() >= deadline {
                    return Ok(());
                }
            }
        };
        let mut samples = Vec::new();
        for first_key in sample_keys(rows, work_unit) {
            let last_key = first_key + work_unit;
            let mut least = f64::MAX;
            for _ in 0..SAMPLE_REPEATS {
                settle(&mut connection)?;
                let before = requests(&mut connection)?;
                connection
                    .exec_drop(&statement, (first_key, last_key))
                    .map_err(|error| describe(error, target))?;
                least = least.min(requests(&mut connection)? - before - reading);
                if let Some(undo) = &undo {
                    connection
                        .exec_drop(undo, (first_key, last_key))
                        .map_err(|error| describe(error, target))?;
                }
            }
            samples.push(least);
        }
        mean_of_samples(
            &samples,
            "Innodb_buffer_pool_read_requests around each statement",
        )
    }
}

/// MariaDB commits DDL at once: the table is created (never over an existing one), recorded
/// as `loading`, filled, then marked `ready`; an interrupted load stays recorded for teardown.
fn load_table(
    target: &Target,
    record: SetupRecord,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let mut connection = connect(target)?;
    let name = table_name(record.schema);
    let (table, index) = (
        quote_backtick(&name),
        quote_backtick(&format!("{name}_key")),
    );
    let catalogue = quote_backtick(CATALOG_TABLE);
    connection
        .query_drop(format!(
            "CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY, `key` BIGINT NOT NULL, scratch BIGINT NOT NULL, filler VARCHAR({FILLER_BYTES}) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC COMMENT={}",
            quote_literal(&stamp.mark)
        ))
        .map_err(|error| describe(error, target))?;
    let created = created_identity(&mut connection, target, &name)?;
    connection
        .exec_drop(
            format!("INSERT INTO {catalogue} (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CURRENT_USER(), ?, ?, ?)"),
            (
                ObjectKind::Table.as_str(),
                &name,
                LOADING,
                env!("CARGO_PKG_VERSION"),
                record.to_json(),
                &created.namespace,
                &created.object_id,
                &created.created,
                &created.mark,
                &created.engine,
                &stamp.started,
            ),
        )
        .map_err(|error| describe(error, target))?;
    // id is the physical order; the key at each id is a random permutation.
    let keys = permutation(record.rows, record.schema + 1);
    for (chunk_index, chunk) in keys.chunks(INSERT_BATCH).enumerate() {
        let first_id = chunk_index * INSERT_BATCH;
        let values: Vec<String> = chunk
            .iter()
            .enumerate()
            .map(|(offset, key)| {
                format!(
                    "({},{key},{},REPEAT('x',{FILLER_BYTES}))",
                    first_id + offset,
                    key % 1000
                )
            })
            .collect();
        connection
            .query_drop(format!(
                "INSERT INTO {table} (id, `key`, scratch, filler) VALUES {}",
                values.join(",")
            ))
            .map_err(|error| describe(error, target))?;
        loaded(chunk.len() as u64);
    }
    connection
        .query_drop(format!("CREATE INDEX {index} ON {table} (`key`)"))
        .map_err(|error| describe(error, target))?;
    connection
        .query_drop(format!("ANALYZE TABLE {table}"))
        .map_err(|error| describe(error, target))?;
    // CREATE INDEX rewrites the table's definition, and its CREATE_TIME with it; its TABLE_ID
    // stays, unless someone replaced the table meanwhile.
    let ready = created_identity(&mut connection, target, &name)?;
    if (&ready.namespace, &ready.object_id) != (&created.namespace, &created.object_id) {
        bail!("{target}: {name} was replaced by someone else while it was loaded");
    }
    connection
        .exec_drop(
            format!(
                "UPDATE {catalogue} SET state = ?, object_created = ? WHERE kind = ? AND name = ?"
            ),
            (READY, &ready.created, ObjectKind::Table.as_str(), &name),
        )
        .map_err(|error| describe(error, target))
}

/// A string literal by MariaDB's rules (DDL takes no bound values): quotes doubled,
/// backslashes escaped.
fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// The identity of the table setup just created, to record; the table must have a mark
/// (TABLE_ID or CREATE_TIME) teardown can check.
fn created_identity(connection: &mut Conn, target: &Target, name: &str) -> Result<Identity> {
    current_identity(connection, name)
        .map_err(|error| describe(error, target))?
        .filter(|identity| identity.object_id.is_some() || identity.created.is_some())
        .ok_or_else(|| {
            anyhow!("{target}: information_schema shows no TABLE_ID or CREATE_TIME for {name}, just created: teardown could not tell it is corescale's")
        })
}

/// The sessions' statement over a table's key range (two `?`: first and last key).
pub(super) fn statement_sql(table: &str, update: bool) -> String {
    let table = quote_backtick(table);
    if update {
        format!("UPDATE {table} SET scratch = scratch + 1 WHERE `key` BETWEEN ? AND ?")
    } else {
        format!(
            "SELECT CAST(SUM(scratch) AS SIGNED), COUNT(*) FROM {table} WHERE `key` BETWEEN ? AND ?"
        )
    }
}

/// Executions of each sample statement: the least count is its own.
const SAMPLE_REPEATS: usize = 3;
/// Before each, the buffer pool's counter must stand still this long (no purge, no other
/// session reading)...
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(20);
/// ...waiting at most this long.
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(1);
