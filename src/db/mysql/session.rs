//! A MySQL/MariaDB session: a workload's statements prepared on first use, their refusals
//! counted by SQLSTATE.

use anyhow::{Result, anyhow};
use mysql::prelude::Queryable;
use mysql::{Conn, Statement};

use super::{advice, describe, readable};
use crate::db::connect::target::Target;
use crate::db::connect::tls::TlsFacts;
use crate::db::session_error::{MySqlCode, ServerCode, SessionError, SqlState};
use crate::db::{Answer, BoundValue, DbSession, Field, Rows, quote_backtick};

pub(super) struct MySqlSession {
    pub(super) connection: Conn,
    pub(super) target: Target,
    /// A workload's statements by its index for them, prepared on first use.
    pub(super) statements: Vec<Option<Statement>>,
    pub(super) tls: Option<TlsFacts>,
}

/// A statement's values as the mysql crate binds them.
pub(super) fn parameters(values: &[BoundValue]) -> mysql::Params {
    mysql::Params::Positional(
        values
            .iter()
            .map(|value| match value {
                BoundValue::Int(value) => mysql::Value::Int(*value),
                BoundValue::Double(value) => mysql::Value::Double(*value),
                BoundValue::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
                BoundValue::Null => mysql::Value::NULL,
            })
            .collect(),
    )
}

/// A column's value as an integer, where it is one.
fn integer(value: &mysql::Value) -> Option<i64> {
    match value {
        mysql::Value::Int(value) => Some(*value),
        mysql::Value::UInt(value) => i64::try_from(*value).ok(),
        mysql::Value::Bytes(bytes) => std::str::from_utf8(bytes).ok()?.parse().ok(),
        _ => None,
    }
}

/// The server's refusal as a workload counts it (by its error number and SQLSTATE); a lost
/// connection or a timeout as such; other errors as they are.
fn statement_failure(error: mysql::Error, target: &Target) -> SessionError {
    match &error {
        // Its words as every MySQL error's, the error number kept: many errors share
        // SQLSTATE HY000.
        mysql::Error::MySqlError(refused) => match SqlState::new(&refused.state) {
            Some(state) => SessionError::refused(
                ServerCode::MySql(MySqlCode(refused.code), state),
                readable(&error),
            ),
            None => SessionError::Other(describe(error, target)),
        },
        _ => broken(error, target),
    }
}

/// A failure of the connection itself: lost, or no answer in time, where the I/O error says
/// which.
fn broken(error: mysql::Error, target: &Target) -> SessionError {
    let io = match &error {
        mysql::Error::IoError(io)
        | mysql::Error::CodecError(mysql_common::proto::codec::error::PacketCodecError::Io(io)) => {
            Some(io.kind())
        }
        _ => None,
    };
    let described = describe(error, target);
    match io {
        Some(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            SessionError::TimedOut(described)
        }
        Some(
            std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionAborted,
        ) => SessionError::ConnectionLost(described),
        _ => SessionError::Other(described),
    }
}

impl MySqlSession {
    /// Runs `sql` in the text protocol, counting the rows each of its result sets returned
    /// and changed (a string of several statements answers one set each).
    fn answered_text(&mut self, sql: &str) -> Result<Answer, mysql::Error> {
        let mut answer = Answer::default();
        let mut result = self.connection.query_iter(sql)?;
        while let Some(mut set) = result.iter() {
            answer.changed += set.affected_rows();
            for row in set.by_ref() {
                row?;
                answer.returned += 1;
            }
        }
        Ok(answer)
    }
}

impl DbSession for MySqlSession {
    fn tls(&self) -> Option<TlsFacts> {
        self.tls.clone()
    }

    fn execute(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<Answer, SessionError> {
        if index >= super::connection::MOST_STATEMENTS {
            return Err(anyhow!(
                "a session prepares at most {} statements on MySQL/MariaDB: give fewer",
                super::connection::MOST_STATEMENTS
            )
            .into());
        }
        if self.statements.len() <= index {
            self.statements.resize(index + 1, None);
        }
        let statement = match &mut self.statements[index] {
            Some(statement) => statement,
            unprepared => unprepared.insert(
                self.connection
                    .prep(sql)
                    .map_err(|error| statement_failure(error, &self.target))?,
            ),
        };
        // The mysql crate takes its parameters by value (it did so for SLOB's tuple too).
        let parameters = parameters(values);
        let mut result = self
            .connection
            .exec_iter(&*statement, parameters)
            .map_err(|error| statement_failure(error, &self.target))?;
        // Read before the rows: past them, the result set is gone.
        let mut answer = Answer {
            changed: result.affected_rows(),
            ..Answer::default()
        };
        for row in result.by_ref() {
            let row = row.map_err(|error| statement_failure(error, &self.target))?;
            answer.returned += 1;
            answer.value = row
                .len()
                .checked_sub(1)
                .and_then(|last| row.as_ref(last))
                .and_then(integer);
        }
        Ok(answer)
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
            Err(mysql::Error::MySqlError(server)) if MySqlCode(server.code).is_privilege() => {
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

    fn run_plain(&mut self, sql: &str) -> Result<Answer, SessionError> {
        self.answered_text(sql).map_err(|error| {
            // A refusal the session outlives stays one (a COMMIT's deadlock is retried), named
            // with its target; one corescale has advice for gets the advice.
            let advised = match &error {
                mysql::Error::MySqlError(refused) => {
                    advice(refused.code, &readable(&error), &self.target)
                }
                _ => None,
            };
            match (advised, error) {
                (Some(advised), _) => SessionError::Other(advised),
                (None, refused @ mysql::Error::MySqlError(_)) => {
                    statement_failure(refused, &self.target).at(&self.target)
                }
                (None, other) => broken(other, &self.target),
            }
        })
    }

    fn fetch_text(&mut self, sql: &str, values: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        let rows: Vec<mysql::Row> = if values.is_empty() {
            // The text protocol: SHOW, which a server may refuse to prepare, is read so.
            self.connection.query(sql)
        } else {
            let values: Vec<mysql::Value> = values
                .iter()
                .map(|value| mysql::Value::Bytes(value.as_bytes().to_vec()))
                .collect();
            self.connection.exec(sql, mysql::Params::Positional(values))
        }
        .map_err(|error| describe(error, &self.target))?;
        Ok(rows
            .into_iter()
            .map(|row| row.unwrap().iter().map(text).collect())
            .collect())
    }

    fn load_rows(&mut self, table: &str, columns: &[&str], rows: &Rows) -> Result<()> {
        let names: Vec<String> = columns.iter().map(|name| quote_backtick(name)).collect();
        let one_row = format!("({})", vec!["?"; rows.width()].join(","));
        let mut transaction = self
            .connection
            .start_transaction(mysql::TxOpts::default())
            .map_err(|error| describe(error, &self.target))?;
        let mut values: Vec<mysql::Value> = Vec::new();
        let (mut batch_rows, mut batch_bytes) = (0, 0);
        let mut rows_left = rows.rows().peekable();
        while let Some(row) = rows_left.next() {
            values.extend(row.iter().map(field_value));
            batch_bytes += values[values.len() - row.len()..]
                .iter()
                .map(value_bytes)
                .sum::<usize>();
            batch_rows += 1;
            // A prepared statement binds at most 65,535 values; MySQL 5.7's packets are at
            // most 4 MiB by default.
            let full = values.len() + rows.width() > 60_000 || batch_bytes > 1 << 20;
            if full || rows_left.peek().is_none() {
                let insert = format!(
                    "INSERT INTO {table} ({}) VALUES {}",
                    names.join(","),
                    vec![one_row.as_str(); batch_rows].join(",")
                );
                transaction
                    .exec_drop(
                        insert,
                        mysql::Params::Positional(std::mem::take(&mut values)),
                    )
                    .map_err(|error| describe(error, &self.target))?;
                (batch_rows, batch_bytes) = (0, 0);
            }
        }
        transaction
            .commit()
            .map_err(|error| describe(error, &self.target))
    }
}

/// A column's value as text, as the mysql client prints it; NULL as None.
fn text(value: &mysql::Value) -> Option<String> {
    match value {
        mysql::Value::NULL => None,
        mysql::Value::Bytes(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        mysql::Value::Int(value) => Some(value.to_string()),
        mysql::Value::UInt(value) => Some(value.to_string()),
        mysql::Value::Float(value) => Some(value.to_string()),
        mysql::Value::Double(value) => Some(value.to_string()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

/// Bytes a bound value takes in the packet, about.
fn value_bytes(value: &mysql::Value) -> usize {
    match value {
        mysql::Value::Bytes(bytes) => bytes.len() + 3,
        _ => 9,
    }
}

/// A loaded field as the mysql crate binds it.
fn field_value(field: &Field) -> mysql::Value {
    match field {
        Field::Int(value) => mysql::Value::Int(*value),
        Field::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
        Field::Null => mysql::Value::NULL,
    }
}
