//! What MariaDB says a table of corescale's is now (its database, InnoDB's TABLE_ID,
//! CREATE_TIME and comment), for teardown and a run to compare with what setup recorded.

use anyhow::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

use super::{CATALOG_TABLE, current_database};
use crate::db::catalog::Identity;
use crate::db::connect::target::Target;

/// InnoDB's TABLE_ID of `database`/`table`, which changes whenever a table is recreated
/// (CREATE_TIME has one-second steps). None where the user may not read it (it takes the
/// PROCESS privilege) or the server has no such view.
fn table_id(connection: &mut Conn, database: &str, table: &str) -> Option<String> {
    let name = format!("{}/{}", innodb_name(database), innodb_name(table));
    // MariaDB's view, then MySQL 8's.
    for view in ["INNODB_SYS_TABLES", "INNODB_TABLES"] {
        let id: Result<Option<u64>, _> = connection.exec_first(
            format!("SELECT TABLE_ID FROM information_schema.{view} WHERE NAME = ?"),
            (&name,),
        );
        if let Ok(id) = id {
            return id.map(|id| id.to_string());
        }
    }
    None
}

/// A name as InnoDB keeps it in its dictionary: MySQL's filename encoding, where a character
/// other than a letter, digit or `_` is `@` and its code in four hex digits (`my-db` is
/// `my@002ddb`). Only ASCII is encoded so; other names are looked up as written (and, not
/// found, read as unreadable ids: teardown then refuses rather than guesses).
fn innodb_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
                c.to_string()
            } else {
                format!("@{:04x}", u32::from(c))
            }
        })
        .collect()
}

/// Whether this user may read InnoDB's table ids at all (PROCESS), whatever tables exist.
pub(super) fn table_ids_visible(connection: &mut Conn) -> bool {
    ["INNODB_SYS_TABLES", "INNODB_TABLES"].iter().any(|view| {
        connection
            .query_drop(format!("SELECT 1 FROM information_schema.{view} LIMIT 1"))
            .is_ok()
    })
}

/// What the server says table `name` of the current database is, if it exists: its
/// database, TABLE_ID where readable and CREATE_TIME (as Unix seconds, whatever the
/// session's time zone). MariaDB tables have no owner.
pub(super) fn current_identity(
    connection: &mut Conn,
    name: &str,
) -> Result<Option<Identity>, mysql::Error> {
    type Row = (
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = connection.exec(
        "SELECT table_schema, table_name, CAST(UNIX_TIMESTAMP(create_time) AS CHAR), table_comment, engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ? AND table_type = 'BASE TABLE'",
        (name,),
    )?;
    // information_schema compares names without case; the table is the one spelled so.
    let Some((namespace, _, created, comment, engine)) =
        rows.into_iter().find(|(_, table, ..)| table == name)
    else {
        return Ok(None);
    };
    let object_id = table_id(connection, &namespace, name);
    Ok(Some(Identity {
        namespace,
        object_id,
        created,
        owner: None,
        mark: comment.filter(|comment| !comment.is_empty()),
        engine,
        setup_window: None,
    }))
}

/// Whether this user may read InnoDB's table ids (the PROCESS privilege).
pub(super) fn table_ids_readable(connection: &mut Conn, target: &Target) -> Result<bool> {
    let database = current_database(connection, target)?;
    Ok(table_id(connection, &database, CATALOG_TABLE).is_some())
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_spelled_as_innodb_keeps_them() {
        assert_eq!(super::innodb_name("cs_test_1"), "cs_test_1");
        assert_eq!(super::innodb_name("my-db"), "my@002ddb");
        assert_eq!(super::innodb_name("a.b c"), "a@002eb@0020c");
    }
}
