//! Which other accounts could forge what teardown relies on, read from the server's grant
//! tables. On MariaDB a table's comment (setup's mark) is copied by whoever may CREATE a
//! table (`CREATE TABLE ... COMMENT`, `... LIKE`), and the catalogue is written by whoever
//! may INSERT into it: so ownership holds only while no account but corescale's may write
//! the catalogue without already being able to drop the tables, and, where table ids are
//! unreadable (no PROCESS), while no other account may create tables there at all (one that
//! can drop and recreate a table within a second is told apart by nothing else).

use std::collections::BTreeSet;

use anyhow::{Result, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

/// An account as the grant tables name it: user and host (a role or PUBLIC has host '').
type Account = (String, String);

/// A privilege as the three grant tables spell it: the `mysql.user` and `mysql.db` column,
/// and the `Table_priv` set member.
#[derive(Clone, Copy)]
pub(super) enum Privilege {
    Insert,
    Update,
    Create,
    Drop,
    Alter,
    CreateView,
    Trigger,
    Super,
}

impl Privilege {
    fn column(self) -> &'static str {
        match self {
            Self::Insert => "Insert_priv",
            Self::Update => "Update_priv",
            Self::Create => "Create_priv",
            Self::Drop => "Drop_priv",
            Self::Alter => "Alter_priv",
            Self::CreateView => "Create_view_priv",
            Self::Trigger => "Trigger_priv",
            Self::Super => "Super_priv",
        }
    }

    fn table_privilege(self) -> &'static str {
        match self {
            Self::Insert => "Insert",
            Self::Update => "Update",
            Self::Create => "Create",
            Self::Drop => "Drop",
            Self::Alter => "Alter",
            Self::CreateView => "Create View",
            Self::Trigger => "Trigger",
            // Global only: no table grant holds it.
            Self::Super => "",
        }
    }
}

/// Why teardown could not read the grant tables, with the grant that lets it.
pub(super) fn unreadable(error: &mysql::Error, user: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "teardown cannot read the grant tables ({error}): on MariaDB it proves that no other account could forge corescale's catalogue or marks from them, so it drops nothing; GRANT SELECT ON mysql.* TO {user} lets it prove ownership"
    )
}

/// The accounts other than the current one that hold any of `privileges` on `database`
/// (globally, on the database by a name pattern, or on one of `tables`), directly, through
/// a role, or as PUBLIC ("every account"); as `user@host`.
pub(super) fn others_holding(
    connection: &mut Conn,
    database: &str,
    tables: &[&str],
    privileges: &[Privilege],
) -> Result<Vec<String>, mysql::Error> {
    let holders = holding(connection, database, tables, privileges, true)?;
    shown_others(connection, holders)
}

/// The accounts other than corescale's, and other than accounts holding DROP, ALTER, CREATE
/// VIEW, TRIGGER or SUPER globally (administrators, as superusers are on PostgreSQL), that
/// hold DROP, ALTER, CREATE VIEW or TRIGGER on `database` or one of `tables`: they could drop
/// or replace corescale's tables, or put triggers on them, during a run.
pub(super) fn others_in_control(
    connection: &mut Conn,
    database: &str,
    tables: &[&str],
) -> Result<Vec<String>, mysql::Error> {
    let powers = [
        Privilege::Drop,
        Privilege::Alter,
        Privilege::CreateView,
        Privilege::Trigger,
    ];
    let local = holding(connection, database, tables, &powers, false)?;
    let mut global_powers = powers.to_vec();
    global_powers.push(Privilege::Super);
    let global = holding(connection, "", &[], &global_powers, true)?;
    let local = local
        .into_iter()
        .filter(|account| !global.contains(account))
        .collect();
    shown_others(connection, local)
}

/// The accounts (and roles) holding any of `privileges` on `database` by a name pattern, on
/// one of `tables`, and with `global` on every database, directly or through a role.
fn holding(
    connection: &mut Conn,
    database: &str,
    tables: &[&str],
    privileges: &[Privilege],
    global: bool,
) -> Result<BTreeSet<Account>, mysql::Error> {
    let any_column = |privileges: &[Privilege]| {
        privileges
            .iter()
            .map(|privilege| format!("{} = 'Y'", privilege.column()))
            .collect::<Vec<_>>()
            .join(" OR ")
    };
    let mut holders: BTreeSet<Account> = BTreeSet::new();
    if global {
        holders.extend(connection.query::<Account, _>(format!(
            "SELECT User, Host FROM mysql.user WHERE {}",
            any_column(privileges)
        ))?);
    }
    if !database.is_empty() {
        holders.extend(connection.exec::<Account, _, _>(
            format!(
                "SELECT User, Host FROM mysql.db WHERE ? LIKE Db AND ({})",
                any_column(privileges)
            ),
            (database,),
        )?);
    }
    // A grant on some columns (`GRANT INSERT (kind, name) ON ...`) writes rows as well.
    let members = privileges
        .iter()
        .filter(|privilege| !privilege.table_privilege().is_empty())
        .map(|privilege| {
            format!(
                "FIND_IN_SET('{0}', Table_priv) > 0 OR FIND_IN_SET('{0}', Column_priv) > 0",
                privilege.table_privilege()
            )
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    for table in tables {
        holders.extend(connection.exec::<Account, _, _>(
            format!(
                "SELECT User, Host FROM mysql.tables_priv WHERE Db = ? AND Table_name = ? AND ({members})"
            ),
            (database, table),
        )?);
    }
    // Roles pass their privileges to the accounts (and roles) granted them.
    let mapping = role_grants(connection)?;
    loop {
        let granted: Vec<Account> = mapping
            .iter()
            .filter(|(_, role)| holders.contains(role))
            .map(|(grantee, _)| grantee.clone())
            .filter(|account| !holders.contains(account))
            .collect();
        if granted.is_empty() {
            break;
        }
        holders.extend(granted);
    }
    Ok(holders)
}

/// `holders` as `user@host`, the current account and roles left out (a role is counted
/// through the accounts granted it; PUBLIC is every account).
fn shown_others(
    connection: &mut Conn,
    holders: BTreeSet<Account>,
) -> Result<Vec<String>, mysql::Error> {
    let mapping = role_grants(connection)?;
    let current: Option<String> = connection.query_first("SELECT CURRENT_USER()")?;
    let current = current.unwrap_or_default();
    let roles: BTreeSet<Account> = mapping.iter().map(|(_, role)| role.clone()).collect();
    Ok(holders
        .into_iter()
        // A role is counted through the accounts granted it; PUBLIC is every account.
        .filter(|account| !(roles.contains(account) && account.0 != "PUBLIC"))
        .map(|(user, host)| match (user.as_str(), host.as_str()) {
            ("PUBLIC", "") => "PUBLIC (every account)".to_string(),
            ("", host) => format!("any user@{host}"),
            _ => format!("{user}@{host}"),
        })
        .filter(|account| *account != current)
        .collect())
}

/// Each role grant as (grantee, role): MariaDB's `mysql.roles_mapping` (a role's host is
/// ''), else MySQL 8's `mysql.role_edges`; none where the server has neither (no roles).
fn role_grants(connection: &mut Conn) -> Result<Vec<(Account, Account)>, mysql::Error> {
    const NO_SUCH_TABLE: u16 = 1146;
    let mariadb = connection
        .query::<(String, String, String), _>("SELECT User, Host, Role FROM mysql.roles_mapping");
    match mariadb {
        Ok(rows) => Ok(rows
            .into_iter()
            .map(|(user, host, role)| ((user, host), (role, String::new())))
            .collect()),
        Err(mysql::Error::MySqlError(server)) if server.code == NO_SUCH_TABLE => {
            let mysql = connection.query::<(String, String, String, String), _>(
                "SELECT TO_USER, TO_HOST, FROM_USER, FROM_HOST FROM mysql.role_edges",
            );
            match mysql {
                Ok(rows) => Ok(rows
                    .into_iter()
                    .map(|(user, host, role, role_host)| ((user, host), (role, role_host)))
                    .collect()),
                Err(mysql::Error::MySqlError(server)) if server.code == NO_SUCH_TABLE => {
                    Ok(Vec::new())
                }
                Err(error) => Err(error),
            }
        }
        Err(error) => Err(error),
    }
}

/// The accounts that may write corescale's catalogue (INSERT or UPDATE) and could not drop
/// its tables anyway: a row they write could have corescale drop a table of their making.
pub(super) fn catalogue_forgers(
    connection: &mut Conn,
    database: &str,
    catalogue: &str,
) -> Result<Vec<String>, mysql::Error> {
    let writers = others_holding(
        connection,
        database,
        &[catalogue],
        &[Privilege::Insert, Privilege::Update],
    )?;
    let droppers = others_holding(connection, database, &[], &[Privilege::Drop])?;
    Ok(writers
        .into_iter()
        .filter(|writer| !droppers.contains(writer))
        .collect())
}

/// Refuses a teardown that knows tables by creation time alone (no PROCESS) while other
/// accounts may create tables in the database: one that drops and recreates a table within
/// the second would be taken for corescale's.
pub(super) fn refuse_by_creation_time(
    connection: &mut Conn,
    database: &str,
    tables: &[&str],
    user: &str,
) -> Result<()> {
    let creators = others_holding(connection, database, tables, &[Privilege::Create])
        .map_err(|error| unreadable(&error, user))?;
    if !creators.is_empty() {
        bail!(
            "without the PROCESS privilege teardown knows corescale's tables by their creation second alone, and {} may create tables in {database} (and so drop and recreate one within that second): GRANT PROCESS ON *.* TO {user} lets teardown read table ids and prove ownership; nothing was dropped",
            creators.join(", ")
        );
    }
    Ok(())
}
