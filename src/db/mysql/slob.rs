//! SLOB's tables on MySQL/MariaDB: their load (multi-row INSERTs in the physical order, keys
//! in a random permutation), kept apart from the driver's client parts.

use anyhow::Result;
use mysql::prelude::Queryable;

use super::owned::{create_owned_table, owned_table_ready};
use super::{MySql, connect, describe};
use crate::db::catalog::{SetupRecord, SetupStamp};
use crate::db::connect::target::Target;
use crate::db::{SlobTables, quote_backtick, table_name};
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
}

/// MariaDB commits DDL at once: the table is created (never over an existing one), recorded
/// as `loading`, filled, then marked `ready`; an interrupted load stays recorded for teardown.
fn load_table(
    target: &Target,
    record: SetupRecord,
    stamp: &SetupStamp,
    loaded: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let name = table_name(record.schema);
    let (table, index) = (
        quote_backtick(&name),
        quote_backtick(&format!("{name}_key")),
    );
    create_owned_table(
        target,
        &name,
        &format!(
            "CREATE TABLE {table} (id BIGINT NOT NULL PRIMARY KEY, `key` BIGINT NOT NULL, scratch BIGINT NOT NULL, filler VARCHAR({FILLER_BYTES}) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC"
        ),
        stamp,
        &record.to_json(),
    )?;
    let mut connection = connect(target)?;
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
    owned_table_ready(target, &name)
}
