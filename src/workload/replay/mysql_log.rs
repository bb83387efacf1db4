//! MySQL's and MariaDB's statement logs as capture entries: the slow query log written with
//! long_query_time = 0 (each statement with its duration) and the general query log (each
//! statement as it arrived), both read a line at a time. MariaDB times both logs to the
//! second: the statements of one second are spread over it evenly in the log's order, and
//! the capture says so.

use std::io::BufRead;

use anyhow::{Result, anyhow, bail};

use super::log_time::{Stamp, Zone, parse_time};
use super::pg_log::{Entry, read_lines, within_longest};

/// Which of the two logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MysqlLog {
    Slow,
    General,
}

/// The log a file's first bytes show: the slow log's "# Query_time:" or the general log's
/// "Id Command Argument" header or its tab-separated lines; None for neither.
pub fn detect(start: &str) -> Option<MysqlLog> {
    if start.contains("\n# Query_time:")
        || start.starts_with("# Query_time:")
        || start.contains("# User@Host:")
    {
        return Some(MysqlLog::Slow);
    }
    let general_line = start
        .lines()
        .take(20)
        .any(|line| general_fields(line).is_some());
    (start.contains("Id Command") || general_line).then_some(MysqlLog::General)
}

/// One statement or session event being read, before its time is placed.
struct Pending {
    /// The time as the log gives it, in microseconds, and whether it had a fraction.
    at_us: i64,
    precise: bool,
    entry: Entry,
}

/// Statements of one whole second (a log without fractions), held until the second ends
/// and then spread over it in order.
#[derive(Default)]
struct Second {
    start_us: i64,
    held: Vec<Entry>,
    /// Whether any second's statements were spread over it.
    spread: bool,
}

impl Second {
    fn place(&mut self, pending: Pending, take: &mut dyn FnMut(Entry) -> Result<()>) -> Result<()> {
        if pending.precise {
            self.flush(take)?;
            let mut entry = pending.entry;
            entry.at_us = pending.at_us;
            return take(entry);
        }
        if pending.at_us != self.start_us {
            self.flush(take)?;
            self.start_us = pending.at_us;
        }
        self.held.push(pending.entry);
        self.spread = true;
        Ok(())
    }

    fn flush(&mut self, take: &mut dyn FnMut(Entry) -> Result<()>) -> Result<()> {
        let count = self.held.len() as i64;
        for (index, mut entry) in self.held.drain(..).enumerate() {
            // SET timestamp is the second the statement ended in (MariaDB's slow_log_print):
            // the spread places its end, from which the capture takes its duration.
            entry.at_us = self.start_us + index as i64 * 1_000_000 / count.max(1);
            take(entry)?;
        }
        Ok(())
    }
}

/// Reads a MySQL or MariaDB log's entries in order, as `pg_log::read_entries` does;
/// answers whether the log timed them to the second only (MariaDB).
pub fn read_entries(
    reader: &mut dyn BufRead,
    log: MysqlLog,
    name: &str,
    bytes: &dyn Fn(u64),
    take: &mut dyn FnMut(Entry) -> Result<()>,
) -> Result<bool> {
    let mut second = Second::default();
    let outcome = match log {
        MysqlLog::Slow => read_slow(reader, bytes, &mut |pending| second.place(pending, take)),
        MysqlLog::General => {
            read_general(reader, bytes, &mut |pending| second.place(pending, take))
        }
    };
    outcome
        .and_then(|()| second.flush(take))
        .map_err(|error| anyhow!("{name}: {error:#}"))?;
    Ok(second.spread)
}

/// "241129  9:30:44" (MariaDB, local time) or "2024-11-29T09:30:44.123456Z" (MySQL).
fn parse_log_time(text: &str) -> Option<Stamp> {
    let text = text.trim();
    if let Some(parsed) = parse_time(text) {
        return Some(parsed);
    }
    let (date, clock) = text.split_once(char::is_whitespace)?;
    if date.len() != 6 || !date.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let clock = clock.trim();
    let clock = if clock.len() == 7 {
        format!("0{clock}")
    } else {
        clock.to_string()
    };
    let written = format!("20{}-{}-{} {clock}", &date[..2], &date[2..4], &date[4..6]);
    parse_time(&written)
}

/// The state of the slow log's entry being read.
#[derive(Default)]
struct SlowEntry {
    time: Option<Stamp>,
    timestamp_s: Option<i64>,
    user: String,
    session: String,
    database: String,
    took_us: Option<u64>,
    /// `Rows_sent` and, where the server logs it, `Rows_affected`.
    rows_sent: Option<u64>,
    rows_affected: Option<u64>,
    sql: String,
    line: u64,
}

impl SlowEntry {
    /// The rows the statement returned, else changed, as a replay counts them: known when
    /// it returned some, or when the log gives the rows it changed.
    fn rows(&self) -> Option<u64> {
        match (self.rows_sent, self.rows_affected) {
            (Some(sent), _) if sent > 0 => Some(sent),
            (Some(_), Some(affected)) => Some(affected),
            _ => None,
        }
    }

    /// Reads `Rows_sent: N` and `Rows_affected: N` from a header line's fields.
    fn read_rows(&mut self, fields: &str) {
        let mut words = fields.split_whitespace();
        while let Some(word) = words.next() {
            let slot = match word {
                "Rows_sent:" => &mut self.rows_sent,
                "Rows_affected:" => &mut self.rows_affected,
                _ => continue,
            };
            *slot = words.next().and_then(|count| count.parse().ok());
        }
    }
}

/// Hands on the slow log's entry just read (a statement, a session's end, or a `use` that
/// changes its database) and starts the next one at the same time.
fn finish_slow(
    current: &mut SlowEntry,
    logged: &mut String,
    place: &mut dyn FnMut(Pending) -> Result<()>,
) -> Result<()> {
    let sql = current.sql.trim().trim_end_matches(';').trim().to_string();
    let rows = current.rows();
    let entry = std::mem::take(current);
    current.time.clone_from(&entry.time);
    if sql.is_empty() || entry.session.is_empty() {
        return Ok(());
    }
    if let Some(database) = sql
        .strip_prefix("use ")
        .or_else(|| sql.strip_prefix("USE "))
        .filter(|rest| !rest.contains(char::is_whitespace))
    {
        *logged = database.trim_matches('`').to_string();
        return Ok(());
    }
    // The server writes `use db;` only when the database differs from the one it last
    // wrote, whatever the thread: every later entry ran there until the next `use`.
    if !entry.database.is_empty() {
        logged.clone_from(&entry.database);
    }
    let database = logged.clone();
    // The statement started at SET timestamp (whole seconds), or at its logged end
    // less its duration.
    let (at_us, precise, zone) = match (entry.time, entry.timestamp_s) {
        (Some(end), _) if end.precise => (end.at_us, true, end.zone),
        (_, Some(seconds)) => (
            seconds.checked_mul(1_000_000).ok_or_else(|| {
                anyhow!("line {}: SET timestamp={seconds} is not a time", entry.line)
            })?,
            false,
            Zone::Utc,
        ),
        (Some(end), None) => (end.at_us, false, end.zone),
        (None, None) => bail!("line {}: a statement with no time before it", entry.line),
    };
    let message = if sql.starts_with("administrator command: Quit") {
        "disconnection: session ended".to_string()
    } else if sql.starts_with("administrator command:") {
        return Ok(());
    } else {
        match entry.took_us {
            Some(took) => format!("duration: {:.3} ms  statement: {sql}", took as f64 / 1e3),
            None => format!("statement: {sql}"),
        }
    };
    place(Pending {
        at_us,
        precise,
        entry: Entry {
            at_us,
            zone,
            session: entry.session,
            user: entry.user,
            database,
            severity: "LOG".into(),
            sqlstate: None,
            message,
            detail: None,
            rows,
            line: entry.line,
        },
    })
}

fn read_slow(
    reader: &mut dyn BufRead,
    bytes: &dyn Fn(u64),
    place: &mut dyn FnMut(Pending) -> Result<()>,
) -> Result<()> {
    let mut current = SlowEntry::default();
    // The database the log last named (`use`, a Schema field): the log's, not a session's.
    let mut logged = String::new();
    read_lines(reader, bytes, &mut |line, number| {
        if let Some(time) = line.strip_prefix("# Time:") {
            finish_slow(&mut current, &mut logged, place)?;
            current.time = Some(
                parse_log_time(time)
                    .ok_or_else(|| anyhow!("line {number}: '{}' is not a time", time.trim()))?,
            );
        } else if let Some(who) = line.strip_prefix("# User@Host:") {
            finish_slow(&mut current, &mut logged, place)?;
            current.line = number;
            current.user = who
                .trim()
                .split('[')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            if let Some(id) = who.split("Id:").nth(1) {
                current.session = id.trim().to_string();
            }
        } else if let Some(fields) = line.strip_prefix("# Thread_id:") {
            let mut words = fields.split_whitespace();
            current.session = words.next().unwrap_or_default().to_string();
            while let Some(word) = words.next() {
                if word == "Schema:" {
                    // MariaDB leaves it empty ("Schema:  QC_hit: No") outside a database.
                    current.database = words
                        .next()
                        .filter(|name| !name.ends_with(':'))
                        .unwrap_or_default()
                        .to_string();
                }
            }
        } else if let Some(fields) = line.strip_prefix("# Query_time:") {
            current.read_rows(fields);
            current.took_us = fields
                .split_whitespace()
                .next()
                .and_then(|seconds| seconds.parse::<f64>().ok())
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .map(|seconds| (seconds * 1e6).round() as u64);
        } else if line.starts_with('#') && current.sql.is_empty() {
            // Other fields of the entry's header: MariaDB's `Rows_affected` among them.
            current.read_rows(line);
        } else if let Some(seconds) = line
            .strip_prefix("SET timestamp=")
            .and_then(|rest| rest.trim_end_matches(';').parse::<i64>().ok())
            .filter(|_| current.sql.is_empty())
        {
            current.timestamp_s = Some(seconds);
        } else if let Some(database) = line
            .strip_prefix("use ")
            .and_then(|rest| rest.strip_suffix(';'))
            .filter(|_| current.sql.is_empty())
        {
            // MySQL names a session's new database before its statement.
            current.database = database.trim_matches('`').to_string();
        } else if is_header(line) {
            finish_slow(&mut current, &mut logged, place)?;
        } else {
            within_longest(
                current.sql.len(),
                line.len(),
                (number, current.line),
                ("statement", "slow query log"),
            )?;
            if !current.sql.is_empty() {
                current.sql.push('\n');
            }
            current.sql.push_str(line);
        }
        Ok(())
    })?;
    finish_slow(&mut current, &mut logged, place)
}

/// The lines a server writes when it opens a log (at start and after FLUSH LOGS).
fn is_header(line: &str) -> bool {
    line.contains(", Version: ") && line.contains("started with:")
        || line.starts_with("Tcp port:")
        || line.starts_with("Time ") && line.contains("Id Command")
}

/// The commands a general log line names after its session id.
const COMMANDS: [&str; 12] = [
    "Connect",
    "Query",
    "Quit",
    "Init DB",
    "Prepare",
    "Execute",
    "Close stmt",
    "Field List",
    "Statistics",
    "Ping",
    "Reset stmt",
    "Change user",
];

/// A general log line's time (when it has one), session, command and argument: as the server
/// writes it, tab-separated, or with its tabs turned to spaces (a log passed through an
/// editor or a ticket).
fn general_fields(line: &str) -> Option<(Option<&str>, &str, &str, &str)> {
    let (time, rest) = if line.contains('\t') {
        match line.split_once('\t') {
            Some((time, rest)) if !time.trim().is_empty() => (Some(time), rest),
            Some((_, rest)) => (None, rest.trim_start_matches('\t')),
            None => return None,
        }
    } else {
        spaced_time(line)?
    };
    let rest = rest.trim_start();
    let (id, rest) = rest.split_once(' ')?;
    if id.is_empty() || !id.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start();
    let command = COMMANDS.into_iter().find(|command| {
        rest.strip_prefix(command)
            .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
    })?;
    let argument = rest[command.len()..].strip_prefix('\t').unwrap_or_else(|| {
        // Spaces stand for the tab: the argument starts after them.
        rest[command.len()..].trim_start_matches(' ')
    });
    Some((time, id, command, argument))
}

/// A line without tabs: its time (MySQL 5.7's one word, 5.0-5.6's and MariaDB's
/// "YYMMDD HH:MM:SS", or none where the line starts with spaces) and the rest.
fn spaced_time(line: &str) -> Option<(Option<&str>, &str)> {
    if line.starts_with(' ') {
        return Some((None, line));
    }
    let (first, rest) = line.split_once(' ')?;
    if first.contains('T') && first.starts_with(|c: char| c.is_ascii_digit()) {
        return Some((Some(first), rest));
    }
    // MariaDB pads a one-digit hour with a space: "241129  9:30:44".
    let from_clock = rest.trim_start_matches(' ');
    let (clock, after) = from_clock.split_once(' ')?;
    let short_date = first.len() == 6 && first.bytes().all(|byte| byte.is_ascii_digit());
    let is_clock = clock.len() >= 7
        && clock
            .bytes()
            .all(|byte| byte.is_ascii_digit() || byte == b':');
    let time_ends = line.len() - from_clock.len() + clock.len();
    (short_date && is_clock).then(|| (Some(&line[..time_ends]), after))
}

fn read_general(
    reader: &mut dyn BufRead,
    bytes: &dyn Fn(u64),
    place: &mut dyn FnMut(Pending) -> Result<()>,
) -> Result<()> {
    let mut time: Option<Stamp> = None;
    let mut databases: std::collections::HashMap<String, (String, String)> =
        std::collections::HashMap::new();
    // The statement being read: its lines continue until the next entry.
    let mut pending: Option<Pending> = None;
    read_lines(reader, bytes, &mut |line, number| {
        let Some((stamp, id, command, argument)) = general_fields(line) else {
            if is_header(line) {
                if let Some(done) = pending.take() {
                    place(done)?;
                }
            } else if let Some(statement) = pending.as_mut() {
                within_longest(
                    statement.entry.message.len(),
                    line.len(),
                    (number, statement.entry.line),
                    ("statement", "general query log"),
                )?;
                statement.entry.message.push('\n');
                statement.entry.message.push_str(line);
            }
            return Ok(());
        };
        if let Some(done) = pending.take() {
            place(done)?;
        }
        if let Some(stamp) = stamp {
            time = Some(
                parse_log_time(stamp)
                    .ok_or_else(|| anyhow!("line {number}: '{}' is not a time", stamp.trim()))?,
            );
        }
        let Some(Stamp {
            at_us,
            precise,
            zone,
        }) = time.clone()
        else {
            bail!("line {number}: an entry with no time before it");
        };
        let (user, database) = databases.entry(id.to_string()).or_default();
        let message = match command {
            "Connect" => {
                // "app@host on shop using TCP/IP"
                let who = argument.split(" on ").next().unwrap_or_default();
                *user = who.split('@').next().unwrap_or_default().to_string();
                if let Some(named) = argument.split(" on ").nth(1) {
                    *database = named
                        .split(" using")
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                }
                format!("connection authorized: user={user} database={database}")
            }
            "Init DB" => {
                *database = argument.trim().to_string();
                return Ok(());
            }
            "Quit" => "disconnection: session ended".to_string(),
            "Query" | "Execute" => format!("statement: {argument}"),
            _ => return Ok(()),
        };
        pending = Some(Pending {
            at_us,
            precise,
            entry: Entry {
                at_us,
                zone,
                session: id.to_string(),
                user: user.clone(),
                database: database.clone(),
                severity: "LOG".into(),
                sqlstate: None,
                message,
                detail: None,
                rows: None,
                line: number,
            },
        });
        Ok(())
    })?;
    match pending {
        Some(done) => place(done),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str, log: MysqlLog) -> Result<Vec<Entry>> {
        let mut found = Vec::new();
        read_entries(
            &mut text.as_bytes(),
            log,
            "test.log",
            &|_| {},
            &mut |entry| {
                found.push(entry);
                Ok(())
            },
        )?;
        Ok(found)
    }

    #[test]
    fn mariadb_s_slow_log_spreads_a_second_and_keeps_durations() {
        let log = "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian 12). started with:\n\
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
Time\t\t    Id Command\tArgument\n\
# Time: 241129  9:30:44\n\
# User@Host: sbtest[sbtest] @ localhost []\n\
# Thread_id: 31  Schema: sbtest  QC_hit: No\n\
# Query_time: 0.000250  Lock_time: 0.000012  Rows_sent: 1  Rows_examined: 1\n\
# Rows_affected: 0  Bytes_sent: 67\n\
SET timestamp=1732872644;\n\
SELECT c FROM sbtest1 WHERE id=5;\n\
# User@Host: sbtest[sbtest] @ localhost []\n\
# Thread_id: 32  Schema: sbtest  QC_hit: No\n\
# Query_time: 0.001000  Lock_time: 0.000012  Rows_sent: 1  Rows_examined: 1\n\
SET timestamp=1732872644;\n\
UPDATE sbtest1\n  SET k=k+1 WHERE id=7;\n";
        assert_eq!(detect(log), Some(MysqlLog::Slow));
        let found = entries(log, MysqlLog::Slow).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].message,
            "duration: 0.250 ms  statement: SELECT c FROM sbtest1 WHERE id=5"
        );
        assert_eq!(found[0].database, "sbtest");
        assert_eq!(found[0].session, "31");
        assert_eq!(
            found[1].message,
            "duration: 1.000 ms  statement: UPDATE sbtest1\n  SET k=k+1 WHERE id=7"
        );
        // Two statements that ended in one second: at its start and half-way.
        assert_eq!(found[1].at_us - found[0].at_us, 500_000);
        // The first returned a row; the second's changed rows are not logged (Rows_sent
        // 1 of an UPDATE is the log's own oddity, kept as written).
        assert_eq!((found[0].rows, found[1].rows), (Some(1), Some(1)));
    }

    #[test]
    fn rows_are_those_sent_else_those_affected_where_the_log_gives_them() {
        let entry = |fields: &[&str]| {
            let mut entry = SlowEntry::default();
            for line in fields {
                entry.read_rows(line);
            }
            entry.rows()
        };
        let query = "0.000250  Lock_time: 0.000012  Rows_sent: 3  Rows_examined: 9";
        let write = "0.000250  Lock_time: 0.000012  Rows_sent: 0  Rows_examined: 1";
        assert_eq!(entry(&[query]), Some(3));
        assert_eq!(
            entry(&[write, "# Rows_affected: 2  Bytes_sent: 52"]),
            Some(2)
        );
        assert_eq!(entry(&[write]), None, "a write's rows are not in the log");
        assert_eq!(entry(&["0.1 Rows_sent: x"]), None);
    }

    #[test]
    fn mysql_s_use_holds_for_every_later_entry_whatever_its_thread() {
        // MySQL 8.0's slow log (sql/log.cc, File_query_log::write_slow): `use db;` is
        // written only when the thread's database differs from the one the log last
        // named, so thread 9 ran in shop and thread 8, later, in stock.
        let slow = "# Time: 2024-11-29T09:30:44.100000Z\n\
# User@Host: app[app] @ localhost []  Id:     8\n\
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n\
use shop;\n\
SET timestamp=1732872644;\n\
SELECT 1;\n\
# Time: 2024-11-29T09:30:44.200000Z\n\
# User@Host: app[app] @ localhost []  Id:     9\n\
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n\
SET timestamp=1732872644;\n\
SELECT 2;\n\
# Time: 2024-11-29T09:30:44.300000Z\n\
# User@Host: app[app] @ localhost []  Id:    10\n\
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n\
use stock;\n\
SET timestamp=1732872644;\n\
SELECT 3;\n\
# Time: 2024-11-29T09:30:44.400000Z\n\
# User@Host: app[app] @ localhost []  Id:     8\n\
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n\
SET timestamp=1732872644;\n\
SELECT 4;\n";
        let found = entries(slow, MysqlLog::Slow).unwrap();
        let databases: Vec<(&str, &str)> = found
            .iter()
            .map(|entry| (entry.session.as_str(), entry.database.as_str()))
            .collect();
        assert_eq!(
            databases,
            [
                ("8", "shop"),
                ("9", "shop"),
                ("10", "stock"),
                ("8", "stock")
            ]
        );
    }

    #[test]
    fn mariadb_s_empty_schema_names_no_database() {
        let slow = "# Time: 241129  9:30:44\n\
# User@Host: root[root] @ localhost []\n\
# Thread_id: 31  Schema:   QC_hit: No\n\
# Query_time: 0.000250  Lock_time: 0.000012  Rows_sent: 1  Rows_examined: 1\n\
SET timestamp=1732872644;\n\
SELECT 1;\n";
        let found = entries(slow, MysqlLog::Slow).unwrap();
        assert_eq!(found[0].database, "");
    }

    #[test]
    fn mysql_s_logs_keep_microseconds_and_sessions() {
        let slow = "# Time: 2024-11-29T09:30:44.123456Z\n\
# User@Host: app[app] @ localhost []  Id:     8\n\
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n\
use shop;\n\
SET timestamp=1732872644;\n\
SELECT 1;\n";
        let found = entries(slow, MysqlLog::Slow).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].session, "8");
        assert_eq!(found[0].database, "shop");
        assert_eq!(found[0].at_us % 1_000_000, 123_456);
        let general = "2024-11-29T09:30:44.100000Z\t    8 Connect\tapp@localhost on shop using Socket\n\
2024-11-29T09:30:44.200000Z\t    8 Query\tSELECT 'a\n\
b'\n\
2024-11-29T09:30:44.300000Z\t    8 Quit\t\n";
        assert_eq!(detect(general), Some(MysqlLog::General));
        let found = entries(general, MysqlLog::General).unwrap();
        assert_eq!(found.len(), 3);
        assert_eq!(
            found[0].message,
            "connection authorized: user=app database=shop"
        );
        assert_eq!(found[1].message, "statement: SELECT 'a\nb'");
        assert_eq!(found[1].at_us - found[0].at_us, 100_000);
        assert!(found[2].message.starts_with("disconnection"));
    }

    #[test]
    fn a_general_log_with_its_tabs_turned_to_spaces_reads_as_written() {
        // MySQL 8.0's and MariaDB's general logs as the servers write them (sql/log.cc:
        // time, tab, the id right-aligned, command, tab, argument), then with every tab
        // turned to spaces, as an editor or a ticket leaves them.
        let mysql = "/usr/sbin/mysqld, Version: 8.0.36. started with:\n\
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n\
Time                 Id Command    Argument\n\
2024-01-01T10:00:00.123456Z\t   12 Connect\tapp@localhost on shop using TCP/IP\n\
2024-01-01T10:00:00.223456Z\t   12 Query\tSELECT  1\n\
2024-01-01T10:00:01.123456Z\t   12 Init DB\tshop\n\
2024-01-01T10:00:01.323456Z\t   12 Quit\t\n";
        let mariadb = "241129  9:30:44\t    31 Connect\troot@localhost on test using Socket\n\
\t\t    31 Query\tSELECT 1\n\
241129  9:30:45\t    31 Quit\t\n";
        for (tabbed, kind) in [(mysql, "MySQL"), (mariadb, "MariaDB")] {
            let spaced = tabbed.replace('\t', "    ");
            assert_eq!(detect(&spaced), Some(MysqlLog::General), "{kind}");
            let read = entries(tabbed, MysqlLog::General).unwrap();
            assert!(read.len() >= 3, "{kind}: {read:?}");
            assert_eq!(entries(&spaced, MysqlLog::General).unwrap(), read, "{kind}");
        }
        // A statement's own text keeps its spaces; a line of it that is no entry stays its.
        let read = entries(&mysql.replace('\t', "    "), MysqlLog::General).unwrap();
        assert!(
            read.iter()
                .any(|entry| entry.message.ends_with("SELECT  1")),
            "{read:?}"
        );
    }

    #[test]
    fn mariadb_s_general_log_names_its_time_once_a_second() {
        let log = "241129  9:30:44\t    31 Connect\troot@localhost on test using Socket\n\
\t\t    31 Query\tSELECT 1\n\
\t\t    31 Quit\t\n";
        let found = entries(log, MysqlLog::General).unwrap();
        assert_eq!(found.len(), 3);
        assert_eq!(found[1].database, "test");
        assert!(found.windows(2).all(|pair| pair[0].at_us < pair[1].at_us));
        let error = entries("\t\t    31 Query\tSELECT 1\n", MysqlLog::General).unwrap_err();
        assert!(
            format!("{error:#}").contains("test.log: line 1"),
            "{error:#}"
        );
    }
}
