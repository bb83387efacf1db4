//! One PostgreSQL session of a workload: the workload's statements, pipelined or not, on
//! corescale's own protocol client.

use anyhow::{Result, bail};

use super::explain;
use super::wire::{WireSession, session_error};
use crate::db::connect::target::Target;
use crate::db::session_error::SessionError;
use crate::db::{Answer, BoundValue, DbSession, Field, Rows, quote_double};

/// A session on corescale's own protocol client, which can pipeline (see `wire`).
pub(super) struct PostgresSession {
    pub(super) wire: WireSession,
    pub(super) target: Target,
    /// Whether its backend is a process of this host's (`Database::on_this_host`).
    pub(super) on_this_host: bool,
}

impl DbSession for PostgresSession {
    fn tls(&self) -> Option<crate::db::connect::tls::TlsFacts> {
        self.wire.tls().cloned()
    }

    // A server's refusal stays a refusal (its code is counted), unexplained.
    fn execute(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<Answer, SessionError> {
        self.wire.execute(index, sql, values)
    }

    fn queue(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<(), SessionError> {
        self.wire.queue(index, sql, values)
    }

    fn send_batch(&mut self) -> Result<(), SessionError> {
        self.wire.send_batch()
    }

    fn queued(&self) -> usize {
        self.wire.queued()
    }

    fn batches_in_flight(&self) -> usize {
        self.wire.batches_in_flight()
    }

    fn answer_batch(
        &mut self,
        answered: &mut Vec<(Answer, std::time::Instant)>,
    ) -> Result<(), SessionError> {
        self.wire.answer_batch(answered)
    }

    fn backend_pid(&self) -> Option<u32> {
        // A server elsewhere: its backend's pid is another host's.
        self.on_this_host.then(|| self.wire.backend_pid())
    }

    fn publish_statistics(&mut self) -> Result<()> {
        publish_statistics(&mut self.wire).map_err(|error| explain(error, &self.target))
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

    fn run_plain(&mut self, sql: &str) -> Result<Answer, SessionError> {
        self.wire
            .simple_answered(sql)
            .map_err(|error| session_error(explain(error, &self.target)))
    }

    fn fetch_text(&mut self, sql: &str, values: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        self.wire
            .query(sql, values)
            .map_err(|error| explain(error, &self.target))
    }

    fn load_rows(&mut self, table: &str, columns: &[&str], rows: &Rows) -> Result<()> {
        let names: Vec<String> = columns.iter().map(|name| quote_double(name)).collect();
        let copy = format!("COPY {table} ({}) FROM STDIN", names.join(", "));
        let copied = self
            .wire
            .copy_in(&copy, &copy_text(rows))
            .map_err(|error| explain(error, &self.target))?;
        if copied != rows.len() as u64 {
            bail!(
                "{}: COPY into {table} took {copied} of {} rows",
                self.target,
                rows.len()
            );
        }
        Ok(())
    }
}

/// Rows in COPY's text format: tab between fields, a newline after each row, `\N` for NULL,
/// and backslash, tab, newline and carriage return escaped.
fn copy_text(rows: &Rows) -> Vec<u8> {
    let mut text = Vec::with_capacity(rows.len() * rows.width() * 8);
    for row in rows.rows() {
        for (position, field) in row.iter().enumerate() {
            if position > 0 {
                text.push(b'\t');
            }
            match field {
                Field::Int(value) => {
                    text.extend_from_slice(itoa::Buffer::new().format(*value).as_bytes())
                }
                Field::Null => text.extend_from_slice(b"\\N"),
                Field::Text(value) => {
                    for byte in value.bytes() {
                        match byte {
                            b'\\' => text.extend_from_slice(b"\\\\"),
                            b'\t' => text.extend_from_slice(b"\\t"),
                            b'\n' => text.extend_from_slice(b"\\n"),
                            b'\r' => text.extend_from_slice(b"\\r"),
                            other => text.push(other),
                        }
                    }
                }
            }
        }
        text.push(b'\n');
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes_what_copy_reads_as_special_and_writes_null_as_backslash_n() {
        let mut rows = Rows::new(3);
        rows.push([
            Field::Int(-7),
            Field::Text("a\tb\\c\nd".into()),
            Field::Null,
        ]);
        rows.push([
            Field::Int(0),
            Field::Text(String::new()),
            Field::Text("\r".into()),
        ]);
        assert_eq!(
            String::from_utf8(copy_text(&rows)).unwrap(),
            "-7\ta\\tb\\\\c\\nd\t\\N\n0\t\t\\r\n"
        );
    }
}
