//! SLOB's tables, written for each database: one row per block, the rows in a random key
//! order (so a key range visits random blocks), a b-tree on the key, and on PostgreSQL the
//! server-side loop function (pgio's). The database layer creates, records, loads and checks
//! them (`SetupWindow::create_owned`, `DbSession::load_rows`). Oracle's is compiled, not
//! tested: no Oracle database can run here.

use anyhow::{Context, Result};

use serde::{Deserialize, Serialize};

use crate::db::catalog::{ObjectKind, PREFIX, SetupStamp};
use crate::db::product::Dialect;
use crate::db::{Database, Field, Rows};
use crate::rng::permutation;

/// SLOB's table of schema N: `corescale_tN`.
pub fn table_name(schema: u64) -> String {
    format!("{PREFIX}t{schema}")
}

/// The server-side loop over table corescale_tN is the function corescale_loop_tN.
pub fn loop_function(schema: u64) -> String {
    format!("{PREFIX}loop_t{schema}")
}

/// The setup parameters stored with each object, as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupRecord {
    pub schema: u64,
    pub schemas: u64,
    pub rows: u64,
}

impl SetupRecord {
    pub fn to_json(self) -> String {
        serde_json::to_string(&self).expect("three integers serialise")
    }
}

/// PostgreSQL and Oracle: a 1000-byte filler and fillfactor 10 (PCTFREE 99) leave one row
/// per 8 KiB block (pgio, SLOB).
const BLOCK_FILLER_BYTES: usize = 1000;
/// MySQL/MariaDB: a 7600-byte filler, so two rows fill a 16 KiB InnoDB page (InnoDB keeps
/// at least two rows per page; longer rows would move off-page).
const MYSQL_FILLER_BYTES: usize = 7600;
/// Rows per bulk load.
const LOAD_BATCH: usize = 2000;

/// Bytes one row takes in the table: a whole block, or half an InnoDB page plus its index
/// entry.
pub fn bytes_per_row(dialect: Dialect) -> u64 {
    match dialect {
        Dialect::MySql => 8192 + 32,
        Dialect::PostgreSql | Dialect::Oracle => 8192,
    }
}

/// Creates `schemas` tables of `rows` one-row blocks, each marked with `stamp` (its setup
/// runs under the setup lock: `objects.rs`), loaded in parallel, one session each.
pub fn load(
    database: &dyn Database,
    schemas: u64,
    rows: u64,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    std::thread::scope(|scope| -> Result<()> {
        let loaders: Vec<_> = (0..schemas)
            .map(|schema| {
                let record = SetupRecord {
                    schema,
                    schemas,
                    rows,
                };
                scope.spawn(move || load_table(database, record, stamp, loaded))
            })
            .collect();
        for loader in loaders {
            loader
                .join()
                .map_err(|_| anyhow::anyhow!("a loader thread panicked"))??;
        }
        Ok(())
    })
}

/// One table: created and recorded as loading, its rows in the key order of its schema's
/// permutation, its index (and loop function), then ready.
fn load_table(
    database: &dyn Database,
    record: SetupRecord,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let dialect = database.target().product.dialect;
    let name = table_name(record.schema);
    let table = database.own_name(&name);
    let parameters = record.to_json();
    database.create_owned(
        ObjectKind::Table,
        &name,
        &create_table(dialect, &table),
        stamp,
        &parameters,
    )?;
    let mut session = database.open_session()?;
    // PostgreSQL and Oracle fill each row's filler themselves: the column's default during
    // the load.
    let (columns, filler): (&[&str], _) = match dialect {
        Dialect::MySql => (
            &["id", "key", "scratch", "filler"],
            "x".repeat(MYSQL_FILLER_BYTES),
        ),
        _ => (&["key", "scratch"], String::new()),
    };
    let order = permutation(record.rows, record.schema + 1);
    let mut rows = Rows::new(columns.len());
    for (chunk, keys) in order.chunks(LOAD_BATCH).enumerate() {
        rows.clear();
        for (offset, key) in keys.iter().enumerate() {
            let scratch = Field::Int((key % 1000) as i64);
            let key = Field::Int(*key as i64);
            match dialect {
                // InnoDB keeps rows in primary-key order: `id` is the physical order.
                Dialect::MySql => rows.push([
                    Field::Int((chunk * LOAD_BATCH + offset) as i64),
                    key,
                    scratch,
                    Field::Text(filler.clone()),
                ]),
                _ => rows.push([key, scratch]),
            }
        }
        session
            .load_rows(&table, columns, &rows)
            .with_context(|| format!("loading {name}"))?;
        loaded(keys.len() as u64);
    }
    session
        .run_plain(&create_index(dialect, &name, &table))
        .with_context(|| format!("indexing {name}"))?;
    if dialect == Dialect::PostgreSql {
        session
            .run_plain(&format!(
                "ALTER TABLE {table} ALTER COLUMN filler DROP DEFAULT"
            ))
            .with_context(|| format!("ending the load of {name}"))?;
    }
    // A session publishes what it did to the server's statistics when it ends (PostgreSQL
    // at most once a second while it lives): the table is ready once they count its rows.
    drop(session);
    if dialect == Dialect::PostgreSql {
        let function = loop_function(record.schema);
        database.create_owned(
            ObjectKind::Function,
            &function,
            &loop_function_sql(&database.own_name(&function), &table),
            stamp,
            &parameters,
        )?;
    }
    database.owned_table_ready(&name, record.rows)
}

fn create_table(dialect: Dialect, table: &str) -> String {
    match dialect {
        Dialect::MySql => format!(
            "CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY, `key` BIGINT NOT NULL, scratch BIGINT NOT NULL, filler VARCHAR({MYSQL_FILLER_BYTES}) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC"
        ),
        // Kept from autovacuum: the rolled-back change of every page before updates are
        // sampled leaves a dead row on each, which would have it vacuum (and analyse) the
        // whole table a minute into a run, its reads counted with the statements' and the
        // pages' visibility-map bits set again. Updates change `scratch`, in no index, on
        // pages nine tenths empty: heap-only, pruned as pages are read.
        Dialect::PostgreSql => format!(
            "CREATE TABLE {table} (key pg_catalog.int8 NOT NULL, scratch pg_catalog.int8 NOT NULL, filler pg_catalog.text NOT NULL DEFAULT pg_catalog.repeat('x', {BLOCK_FILLER_BYTES})) WITH (fillfactor = 10, autovacuum_enabled = false)"
        ),
        // SLOB's layout: one row per block.
        Dialect::Oracle => format!(
            "CREATE TABLE {table} (key NUMBER NOT NULL, scratch NUMBER NOT NULL, filler VARCHAR2({BLOCK_FILLER_BYTES}) DEFAULT RPAD('x', {BLOCK_FILLER_BYTES}, 'x') NOT NULL) PCTFREE 99 PCTUSED 1"
        ),
    }
}

/// The b-tree on the key, named `<table>_key` (the one name teardown takes for corescale's
/// own index of a table; upper case on Oracle, as its unquoted names are).
fn create_index(dialect: Dialect, name: &str, table: &str) -> String {
    match dialect {
        Dialect::MySql => format!(
            "CREATE INDEX {} ON {table} (`key`)",
            crate::db::quote_backtick(&format!("{name}_key"))
        ),
        Dialect::PostgreSql => format!(
            "CREATE INDEX {} ON {table} (key)",
            crate::db::quote_double(&format!("{name}_key"))
        ),
        Dialect::Oracle => format!(
            "CREATE INDEX {} ON {table} (key)",
            crate::db::quote_double(&format!("{name}_KEY").to_uppercase())
        ),
    }
}

/// pgio's approach: the statements loop inside the server, with no client round trip. Static
/// SQL, so PL/pgSQL plans it once, as the client's prepared statement is. Its own search_path
/// is pinned and its table qualified: whoever calls it, it runs only built-ins and its table.
fn loop_function_sql(function: &str, table: &str) -> String {
    format!(
        "CREATE FUNCTION {function}(row_count pg_catalog.int8, work_unit pg_catalog.int8, statements pg_catalog.int8)
         RETURNS pg_catalog.int8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
         DECLARE
             first_key bigint;
             visited bigint := 0;
             total bigint;
             found_rows bigint;
         BEGIN
             FOR i IN 1..statements LOOP
                 first_key := pg_catalog.floor(pg_catalog.random() * (row_count - work_unit))::pg_catalog.int8;
                 SELECT pg_catalog.sum(scratch), pg_catalog.count(*) INTO total, found_rows
                   FROM {table} WHERE key BETWEEN first_key AND first_key + work_unit;
                 visited := visited + found_rows;
             END LOOP;
             RETURN visited;
         END $$"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_lays_out_one_row_per_block_and_names_its_index_as_teardown_knows() {
        let postgres = create_table(Dialect::PostgreSql, "\"s\".\"corescale_t0\"");
        assert!(
            postgres.contains("WITH (fillfactor = 10, autovacuum_enabled = false)")
                && postgres.contains("pg_catalog.repeat('x', 1000)")
        );
        assert!(create_table(Dialect::Oracle, "\"CORESCALE_T0\"").contains("PCTFREE 99 PCTUSED 1"));
        assert!(create_table(Dialect::MySql, "`corescale_t0`").contains("VARCHAR(7600)"));
        assert_eq!(
            create_index(Dialect::Oracle, "corescale_t0", "\"CORESCALE_T0\""),
            "CREATE INDEX \"CORESCALE_T0_KEY\" ON \"CORESCALE_T0\" (key)"
        );
        assert_eq!(
            create_index(Dialect::PostgreSql, "corescale_t0", "t"),
            "CREATE INDEX \"corescale_t0_key\" ON t (key)"
        );
        assert_eq!(bytes_per_row(Dialect::MySql), 8224);
    }
}
