//! SLOB's tables on MySQL/MariaDB: their load (multi-row INSERTs in the physical order, keys
//! in a random permutation), kept apart from the driver's client parts.

use anyhow::{Result, anyhow, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

use super::identity::current_identity;
use super::{MySql, connect, describe};
use crate::db::catalog::{
    CATALOG_TABLE, Identity, LOADING, ObjectKind, READY, SetupRecord, SetupStamp,
};
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
