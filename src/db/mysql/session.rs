//! A MySQL/MariaDB session: the SLOB statements prepared per table, and a DBA's script
//! statements prepared on first use, their refusals counted by SQLSTATE.

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{Conn, Statement};

use super::{describe, statement_sql};
use crate::db::connect::target::Target;
use crate::db::connect::tls::TlsFacts;
use crate::db::{DbSession, PreparedStatements};

pub(super) struct MySqlSession {
    pub(super) connection: Conn,
    pub(super) target: Target,
    pub(super) statements: PreparedStatements<Statement>,
    /// A script's statements by index, prepared on first use.
    pub(super) script_statements: Vec<Option<Statement>>,
    pub(super) tls: Option<TlsFacts>,
}

/// The server's refusal as a script counts it (by SQLSTATE); other errors as they are.
fn script_failure(error: mysql::Error, target: &Target) -> anyhow::Error {
    match error {
        mysql::Error::MySqlError(refused) => {
            anyhow::Error::new(crate::db::driver::StatementFailure {
                sqlstate: refused.state,
                message: refused.message,
            })
        }
        other => describe(other, target),
    }
}

impl MySqlSession {
    fn prepared(&mut self, schema: u64, update: bool) -> Result<Statement> {
        let (connection, target) = (&mut self.connection, &self.target);
        let statement = self.statements.get(schema, update, |table, update| {
            connection
                .prep(statement_sql(table, update))
                .map_err(|error| describe(error, target))
        })?;
        Ok(statement.clone())
    }
}

impl DbSession for MySqlSession {
    fn tls(&self) -> Option<TlsFacts> {
        self.tls.clone()
    }

    fn select(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        let statement = self.prepared(schema, false)?;
        let row: Option<(Option<i64>, u64)> = self
            .connection
            .exec_first(&statement, (first_key, last_key))
            .map_err(|error| describe(error, &self.target))?;
        Ok(row.map_or(0, |(_sum, rows)| rows))
    }

    fn update(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        let statement = self.prepared(schema, true)?;
        self.connection
            .exec_drop(&statement, (first_key, last_key))
            .map_err(|error| describe(error, &self.target))?;
        Ok(self.connection.affected_rows())
    }

    fn run_script_statement(
        &mut self,
        index: usize,
        sql: &str,
        values: &[crate::db::driver::BoundValue],
    ) -> Result<u64> {
        if self.script_statements.len() <= index {
            self.script_statements.resize(index + 1, None);
        }
        let statement = match &mut self.script_statements[index] {
            Some(statement) => statement,
            unprepared => unprepared.insert(
                self.connection
                    .prep(sql)
                    .map_err(|error| script_failure(error, &self.target))?,
            ),
        };
        let parameters: Vec<mysql::Value> = values
            .iter()
            .map(|value| match value {
                crate::db::driver::BoundValue::Int(value) => mysql::Value::Int(*value),
                crate::db::driver::BoundValue::Double(value) => mysql::Value::Double(*value),
            })
            .collect();
        let mut result = self
            .connection
            .exec_iter(&*statement, mysql::Params::Positional(parameters))
            .map_err(|error| script_failure(error, &self.target))?;
        // Read before the rows: past them, the result set is gone.
        let changed = result.affected_rows();
        let mut rows = 0u64;
        for row in result.by_ref() {
            row.map_err(|error| script_failure(error, &self.target))?;
            rows += 1;
        }
        drop(result);
        Ok(if rows > 0 { rows } else { changed })
    }

    fn missing_privilege(&mut self, sql: &str, _parameters: usize) -> Result<Option<String>> {
        // MySQL and MariaDB check the privileges a statement needs when it is prepared.
        match self.connection.prep(sql) {
            Ok(statement) => {
                self.connection
                    .close(statement)
                    .map_err(|error| describe(error, &self.target))?;
                Ok(None)
            }
            Err(mysql::Error::MySqlError(server))
                if [1142, 1143, 1044, 1370].contains(&server.code) =>
            {
                Ok(Some(server.message))
            }
            Err(_) => Ok(None),
        }
    }

    fn hold_read_only(&mut self) -> Result<bool> {
        // Every later transaction of the session is read-only, for SUPER too; only SET
        // SESSION TRANSACTION READ WRITE (refused by the script's check) lifts it.
        self.connection
            .query_drop("SET SESSION TRANSACTION READ ONLY")
            .map_err(|error| describe(error, &self.target))?;
        Ok(true)
    }

    fn run_plain(&mut self, sql: &str) -> Result<()> {
        self.connection
            .query_drop(sql)
            .map_err(|error| describe(error, &self.target))
    }
}
