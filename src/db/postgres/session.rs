//! One PostgreSQL session of a workload: corescale's statements (pipelined) and a DBA's
//! script statements on corescale's own protocol client.

use anyhow::{Context, Result, bail};

use super::explain;
use super::wire::WireSession;
use crate::db::connect::target::Target;
use crate::db::{Answered, DbSession, PlannedStatement, loop_function, quote_double};

/// A session on corescale's own protocol client, which can pipeline (see `wire`).
pub(super) struct PostgresSession {
    pub(super) wire: WireSession,
    pub(super) target: Target,
    /// Whether its backend is a process of this host's (`Database::on_this_host`).
    pub(super) on_this_host: bool,
}

impl PostgresSession {
    fn one(&mut self, schema: u64, update: bool, first_key: u64, last_key: u64) -> Result<u64> {
        let statement = PlannedStatement {
            schema,
            update,
            first_key,
            last_key,
        };
        Ok(self.submit(statement, 1)?.rows)
    }
}

impl DbSession for PostgresSession {
    fn tls(&self) -> Option<crate::db::connect::tls::TlsFacts> {
        self.wire.tls().cloned()
    }

    fn select(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        self.one(schema, false, first_key, last_key)
    }

    fn update(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64> {
        self.one(schema, true, first_key, last_key)
    }

    fn submit(&mut self, statement: PlannedStatement, batch: usize) -> Result<Answered> {
        self.wire
            .submit(statement, batch)
            .map_err(|error| explain(error, &self.target))
    }

    fn drain(&mut self) -> Result<Answered> {
        self.wire
            .drain()
            .map_err(|error| explain(error, &self.target))
    }

    fn server_loop(
        &mut self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        statements: u64,
    ) -> Result<u64> {
        let visited = self
            .wire
            .call(
                &format!(
                    "SELECT {}.{}($1, $2, $3)",
                    quote_double(self.wire.own_schema().unwrap_or_default()),
                    quote_double(&loop_function(schema))
                ),
                &[rows as i64, work_unit as i64, statements as i64],
            )
            .map_err(|error| explain(error, &self.target))
            .context("calling the server-side loop (was it created by `corescale db setup`?)")?;
        Ok(visited.unwrap_or(0) as u64)
    }

    fn backend_pid(&self) -> Option<u32> {
        // A server elsewhere: its backend's pid is another host's.
        self.on_this_host.then(|| self.wire.backend_pid())
    }

    fn publish_statistics(&mut self) -> Result<()> {
        publish_statistics(&mut self.wire).map_err(|error| explain(error, &self.target))
    }

    fn run_script_statement(
        &mut self,
        index: usize,
        sql: &str,
        values: &[crate::db::driver::BoundValue],
    ) -> Result<u64> {
        // A server's refusal stays a StatementFailure (its SQLSTATE is counted), unexplained.
        self.wire.run_script_statement(index, sql, values)
    }

    fn queue_script_statement(
        &mut self,
        index: usize,
        sql: &str,
        values: &[crate::db::driver::BoundValue],
    ) -> Result<()> {
        self.wire.queue_script_statement(index, sql, values)
    }

    fn end_script_pipeline(&mut self, answered: &mut Vec<(u64, std::time::Instant)>) -> Result<()> {
        self.wire.answer_script_statements(answered)
    }

    fn missing_privilege(&mut self, sql: &str, parameters: usize) -> Result<Option<String>> {
        // PostgreSQL checks privileges as a plan starts, which EXPLAIN does without running
        // it: the statement is prepared under a name of corescale's and explained with NULL
        // for each value. Statements PREPARE does not take (utility commands) are not checked.
        let plannable = [
            "select", "insert", "update", "delete", "merge", "with", "values", "table",
        ];
        let first = sql
            .split(|c: char| !c.is_ascii_alphabetic())
            .find(|word| !word.is_empty())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !plannable.contains(&first.as_str()) {
            return Ok(None);
        }
        let nulls = vec!["NULL"; parameters].join(", ");
        // The extended protocol: one statement only, whatever the text holds.
        let checked = self
            .wire
            .query(&format!("PREPARE corescale_privilege_check AS {sql}"), &[])
            .and_then(|_| {
                let explained = if parameters == 0 {
                    self.wire
                        .query("EXPLAIN EXECUTE corescale_privilege_check", &[])
                } else {
                    self.wire.query(
                        &format!("EXPLAIN EXECUTE corescale_privilege_check({nulls})"),
                        &[],
                    )
                };
                let _ = self.wire.simple("DEALLOCATE corescale_privilege_check");
                explained.map(drop)
            });
        match checked {
            Err(error) => Ok(error
                .downcast_ref::<super::wire::ServerError>()
                .filter(|server| server.code == "42501")
                .map(|server| server.message.clone())),
            Ok(()) => Ok(None),
        }
    }

    fn hold_read_only(&mut self) -> Result<bool> {
        // A statement of the session can change it back only by naming the setting, which
        // the script's check refuses (`SET`, `set_config`, `RESET`, `DISCARD`).
        self.wire
            .simple("SET default_transaction_read_only = on")
            .map_err(|error| explain(error, &self.target))?;
        Ok(true)
    }

    fn run_plain(&mut self, sql: &str) -> Result<()> {
        self.wire
            .simple(sql)
            .map_err(|error| explain(error, &self.target))
    }
}

/// Has the backend publish its statistics as this statement ends, not at its next flush, up
/// to a second later or as it exits. Outside a transaction. PostgreSQL 15 and later: older
/// servers are not asked (each call would write an error to their log); their backends
/// publish on their own every half second, and a level counts the sessions that could not.
pub(super) fn publish_statistics(session: &mut WireSession) -> Result<()> {
    if session.server_major().is_some_and(|major| major >= 15) {
        session.simple("SELECT pg_catalog.pg_stat_force_next_flush()")
    } else {
        bail!("the server cannot publish its statistics on demand (PostgreSQL 15 and later can)")
    }
}
