//! A workload's own tables on MySQL/MariaDB: created with the setup's mark, recorded as
//! loading (DDL commits at once: an interrupted load stays recorded for teardown), then
//! ready once loaded and checked to be the table created.

use anyhow::{Result, anyhow, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

use super::identity::current_identity;
use super::{connect, describe};
use crate::db::catalog::{CATALOG_TABLE, Identity, LOADING, ObjectKind, READY, SetupStamp};
use crate::db::connect::target::Target;
use crate::db::quote_backtick;

/// Runs `create` (a CREATE TABLE naming `name`, never over an existing table) with the
/// setup's mark as the table's comment, and records it as loading.
pub(super) fn create_owned_table(
    target: &Target,
    name: &str,
    create: &str,
    stamp: &SetupStamp,
    parameters: &str,
) -> Result<()> {
    let mut connection = connect(target)?;
    connection
        .query_drop(format!("{create} COMMENT={}", quote_literal(&stamp.mark)))
        .map_err(|error| describe(error, target))?;
    let created = created_identity(&mut connection, target, name)?;
    if created.mark.as_deref() != Some(stamp.mark.as_str()) {
        bail!(
            "{target}: {name}, just created, does not carry this setup's mark: another table took its place"
        );
    }
    connection
        .exec_drop(
            format!("INSERT INTO {} (kind, name, state, corescale_version, parameters, object_namespace, object_id, object_created, object_owner, object_mark, object_engine, setup_started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CURRENT_USER(), ?, ?, ?)", quote_backtick(CATALOG_TABLE)),
            (
                ObjectKind::Table.as_str(),
                name,
                LOADING,
                env!("CARGO_PKG_VERSION"),
                parameters,
                &created.namespace,
                &created.object_id,
                &created.created,
                &created.mark,
                &created.engine,
                &stamp.started,
            ),
        )
        .map_err(|error| describe(error, target))
}

/// Gathers table `name`'s statistics, then marks it ready once it still is the table created. CREATE INDEX rewrites a
/// table's definition, and its CREATE_TIME with it; its TABLE_ID stays, unless someone
/// replaced the table meanwhile: the new time is recorded.
pub(super) fn owned_table_ready(target: &Target, name: &str) -> Result<()> {
    let mut connection = connect(target)?;
    connection
        .query_drop(format!("ANALYZE TABLE {}", quote_backtick(name)))
        .map_err(|error| describe(error, target))?;
    type Recorded = (Option<String>, Option<String>, Option<String>);
    let recorded: Option<Recorded> = connection
        .exec_first(
            format!(
                "SELECT object_namespace, object_id, object_mark FROM {} WHERE kind = ? AND name = ?",
                quote_backtick(CATALOG_TABLE)
            ),
            (ObjectKind::Table.as_str(), name),
        )
        .map_err(|error| describe(error, target))?;
    let ready = created_identity(&mut connection, target, name)?;
    // Its id where readable, and always its mark: only who may alter the table can write it.
    if recorded
        != Some((
            Some(ready.namespace.clone()),
            ready.object_id.clone(),
            ready.mark.clone(),
        ))
    {
        bail!("{target}: {name} was replaced by someone else while it was loaded");
    }
    connection
        .exec_drop(
            format!(
                "UPDATE {} SET state = ?, object_created = ? WHERE kind = ? AND name = ?",
                quote_backtick(CATALOG_TABLE)
            ),
            (READY, &ready.created, ObjectKind::Table.as_str(), name),
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
