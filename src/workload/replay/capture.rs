//! `corescale capture`: a server's log read as a workload. Each session's statements, in
//! order, with when they were sent, their parameters and the duration the log gave them,
//! written to a replay file; statements that set passwords are counted and never stored.

use std::collections::HashMap;

use anyhow::{Result, bail};

use super::class::{Class, classify, parameters_hold_password};
use super::file::{Line, Statement, Summary, Writer};
use super::fingerprint::Quoting;
use super::log_time::Zone;
use super::mysql_log::{self, MysqlLog};
use super::pg_log::{self, Entry};

/// A log's kind: PostgreSQL's (csvlog, jsonlog, stderr) or MySQL's and MariaDB's (slow or
/// general query log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Log {
    Postgres(pg_log::Format),
    Mysql(MysqlLog),
}

impl Log {
    /// The kind of a log from its first bytes (`start`); a stderr log is read with `prefix`
    /// (`--log-line-prefix`; None: pgreplay's).
    pub fn detect(start: &str, prefix: Option<&str>) -> Result<Self> {
        if let Some(log) = mysql_log::detect(start) {
            return Ok(Self::Mysql(log));
        }
        Ok(Self::Postgres(pg_log::Format::detect(start, prefix)?))
    }

    /// Whether it is read by a `log_line_prefix` (a PostgreSQL stderr log).
    pub fn has_prefix(&self) -> bool {
        matches!(self, Self::Postgres(pg_log::Format::Stderr(_)))
    }

    /// Whether sessions are told apart by their process id alone (a stderr prefix with %p
    /// and no %c): a later session may reuse an ended one's pid.
    pub fn sessions_by_process(&self) -> bool {
        matches!(self, Self::Postgres(pg_log::Format::Stderr(prefix)) if prefix.sessions_by_process())
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Postgres(format) => format.name(),
            Self::Mysql(MysqlLog::Slow) => "slow query log",
            Self::Mysql(MysqlLog::General) => "general query log",
        }
    }

    /// "postgresql" or "mysql", as the replay file's header names its product.
    pub fn product(&self) -> &'static str {
        match self {
            Self::Postgres(_) => "postgresql",
            Self::Mysql(_) => "mysql",
        }
    }

    /// Reads the log's entries in order (see `pg_log::read_entries`); answers whether the
    /// log timed them to the second only (MariaDB's), each second's spread over it.
    pub fn read_entries(
        &self,
        reader: &mut dyn std::io::BufRead,
        name: &str,
        bytes: &dyn Fn(u64),
        take: &mut dyn FnMut(Entry) -> Result<()>,
    ) -> Result<bool> {
        match self {
            Self::Postgres(format) => {
                pg_log::read_entries(reader, format, name, bytes, take).map(|()| false)
            }
            Self::Mysql(log) => mysql_log::read_entries(reader, *log, name, bytes, take),
        }
    }
}

/// What a capture read, for its closing line.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Captured {
    pub summary: Summary,
    /// Whether the log said when sessions connected and disconnected.
    pub connections_logged: bool,
    /// Statements of the extended protocol whose parameters the log did not give.
    pub without_parameters: u64,
    /// Entries dated more than [`BACKWARDS_US`] before the latest read before them: logs
    /// given out of order, or a clock that was set back.
    pub backwards: u64,
    /// From the first entry read to the latest, in microseconds.
    pub span_us: i64,
    /// Sessions by the database they began in: a replay runs its target database's alone.
    pub databases: std::collections::BTreeMap<String, u64>,
}

/// How far an entry may be dated before the latest one read (a log's lines are written a
/// little out of their time order by concurrent sessions).
pub const BACKWARDS_US: i64 = 5_000_000;

/// The sessions open in the log, and what is written of them.
pub struct Capturer<'a> {
    writer: &'a mut Writer,
    quoting: Quoting,
    sessions: HashMap<String, Open>,
    next_id: u32,
    origin_us: Option<i64>,
    /// The latest time read so far.
    latest_us: i64,
    /// The zone of the first entry's time.
    zone: Option<Zone>,
    captured: Captured,
    /// Sessions told apart by their process id alone: their connection lines must mark
    /// where one ends and a later one with the same pid begins.
    by_process: bool,
}

/// A session seen in the log: its number, and its last statement, kept until the entries
/// that complete it (its duration, its error) have been read.
struct Open {
    id: u32,
    /// The database the session began in: a statement run in another says so.
    database: String,
    /// When it began, from the origin: none of its statements starts before.
    started_us: i64,
    pending: Option<Statement>,
}

impl<'a> Capturer<'a> {
    pub fn new(writer: &'a mut Writer, quoting: Quoting) -> Self {
        Self {
            writer,
            quoting,
            sessions: HashMap::new(),
            next_id: 0,
            origin_us: None,
            latest_us: i64::MIN,
            zone: None,
            captured: Captured::default(),
            by_process: false,
        }
    }

    /// The logs name sessions by their process id alone (a stderr prefix with %p, no %c).
    pub fn sessions_by_process(&mut self, by_process: bool) {
        self.by_process = by_process;
    }

    /// Takes one entry of the log.
    pub fn take(&mut self, entry: Entry) -> Result<()> {
        self.same_clock(&entry)?;
        let origin = *self.origin_us.get_or_insert(entry.at_us);
        if entry.at_us < self.latest_us.saturating_sub(BACKWARDS_US) {
            self.captured.backwards += 1;
        }
        self.latest_us = self.latest_us.max(entry.at_us);
        if self.captured.summary.origin.is_empty() {
            let zone = match &entry.zone {
                Zone::Utc => "UTC",
                Zone::Wall(name) => name,
            };
            self.captured.summary.origin = chrono::DateTime::from_timestamp_micros(entry.at_us)
                .map(|time| {
                    format!("{} {zone}", time.naive_utc())
                        .trim_end()
                        .to_string()
                })
                .unwrap_or_default();
        }
        if entry.session.is_empty() {
            return Ok(());
        }
        let at_us = entry.at_us.saturating_sub(origin);
        if matches!(entry.severity.as_str(), "ERROR" | "FATAL" | "PANIC") {
            let sqlstate = entry.sqlstate.clone().unwrap_or_else(|| "unknown".into());
            *self
                .captured
                .summary
                .errors
                .entry(sqlstate.clone())
                .or_default() += 1;
            if let Some(open) = self.sessions.get_mut(&entry.session)
                && let Some(pending) = open.pending.as_mut()
            {
                pending.failed = Some(sqlstate);
            }
            return Ok(());
        }
        if entry.severity != "LOG" {
            return Ok(());
        }
        let message = entry.message.as_str();
        if let Some(authorized) = message.strip_prefix("connection authorized: ") {
            self.captured.connections_logged = true;
            let database = word_after(authorized, "database=").unwrap_or(&entry.database);
            let user = word_after(authorized, "user=").unwrap_or(&entry.user);
            let entry = Entry {
                database: database.to_string(),
                user: user.to_string(),
                ..entry
            };
            self.open(&entry, at_us)?;
            return Ok(());
        }
        if message.starts_with("disconnection: ") {
            self.captured.connections_logged = true;
            if let Some(mut open) = self.sessions.remove(&entry.session) {
                self.flush(&mut open)?;
                self.writer.write(&Line::End { id: open.id, at_us })?;
            }
            return Ok(());
        }
        let (took_us, rest) = match message.strip_prefix("duration: ") {
            Some(duration) => {
                let (number, rest) = duration.split_once(" ms").unwrap_or((duration, ""));
                let took = number
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|ms| ms.is_finite() && (0.0..=crate::latency::A_DAY_MS).contains(ms))
                    .map(|ms| (ms * 1e3).round() as u64);
                (took, rest.trim_start())
            }
            None => (None, message),
        };
        let (sql, parameters) = if let Some(sql) = rest.strip_prefix("statement: ") {
            (sql, None)
        } else if let Some(named) = rest.strip_prefix("execute ") {
            let Some((_, sql)) = named.split_once(": ") else {
                return Ok(());
            };
            let parameters = entry
                .detail
                .as_deref()
                .and_then(|detail| detail.strip_prefix("parameters: "))
                .map(parse_parameters);
            (sql, Some(parameters.unwrap_or_default()))
        } else {
            // A duration alone (log_duration) completes the statement before it.
            if rest.is_empty()
                && let Some(took) = took_us
                && let Some(open) = self.sessions.get_mut(&entry.session)
                && let Some(pending) = open.pending.as_mut()
                && pending.took_us.is_none()
            {
                pending.took_us = Some(took);
            }
            return Ok(());
        };
        self.statement(&entry, at_us, sql, parameters, took_us)
    }

    /// Refuses an entry whose time cannot be set beside the first one's: a wall clock in a
    /// zone corescale cannot place, where the zone changes (a log that crossed a change of
    /// daylight saving time written with a zone name it does not know, or two files).
    fn same_clock(&mut self, entry: &Entry) -> Result<()> {
        let first = self.zone.get_or_insert_with(|| entry.zone.clone());
        if *first == entry.zone {
            return Ok(());
        }
        bail!(
            "line {}: the log's times change from {first} to {}, which corescale cannot place on one clock: set log_timezone = 'UTC' (PostgreSQL) or log_timestamps = UTC (MySQL), or capture each part on its own",
            entry.line,
            entry.zone
        );
    }

    fn statement(
        &mut self,
        entry: &Entry,
        at_us: i64,
        sql: &str,
        parameters: Option<Vec<Option<String>>>,
        took_us: Option<u64>,
    ) -> Result<()> {
        let class = classify(sql, self.quoting);
        if class == Class::Password || parameters_hold_password(parameters.as_deref()) {
            self.captured.summary.passwords_left_out += 1;
            return Ok(());
        }
        // A duration's entry is written when the statement ended: it started that long
        // before, but never before the log's origin (the first entry's time, perhaps itself
        // an end) nor its session's start.
        let mut start_us = at_us
            .saturating_sub(took_us.map_or(0, |took| took as i64))
            .max(0);
        if !self.sessions.contains_key(&entry.session) {
            self.open(entry, start_us)?;
        }
        let Some(mut open) = self.sessions.remove(&entry.session) else {
            return Ok(());
        };
        start_us = start_us.max(open.started_us);
        // log_statement and log_min_duration_statement both on: the duration's entry is the
        // statement logged before it, now complete.
        let same = open.pending.as_ref().is_some_and(|pending| {
            took_us.is_some() && pending.took_us.is_none() && pending.sql == sql
        });
        if same {
            if let Some(pending) = open.pending.as_mut() {
                pending.took_us = took_us;
            }
        } else {
            self.flush(&mut open)?;
            if parameters.as_ref().is_some_and(Vec::is_empty) && takes_parameters(sql) {
                self.captured.without_parameters += 1;
            }
            open.pending = Some(Statement {
                session: open.id,
                at_us: start_us,
                sql: sql.to_string(),
                parameters: parameters.filter(|values| !values.is_empty()),
                took_us,
                class,
                failed: None,
                database: (entry.database != open.database).then(|| entry.database.clone()),
                rows: entry.rows,
                ends_within_us: None,
            });
        }
        self.sessions.insert(entry.session.clone(), open);
        Ok(())
    }

    fn open(&mut self, entry: &Entry, at_us: i64) -> Result<()> {
        if let Some(mut earlier) = self.sessions.remove(&entry.session) {
            // A session key seen again (a pid reused, with %p): the earlier one ended.
            self.flush(&mut earlier)?;
            self.writer.write(&Line::End {
                id: earlier.id,
                at_us,
            })?;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.captured.summary.sessions += 1;
        *(self.captured.databases)
            .entry(entry.database.clone())
            .or_default() += 1;
        self.writer.write(&Line::Session {
            id,
            at_us,
            user: entry.user.clone(),
            database: entry.database.clone(),
        })?;
        self.sessions.insert(
            entry.session.clone(),
            Open {
                id,
                database: entry.database.clone(),
                started_us: at_us,
                pending: None,
            },
        );
        Ok(())
    }

    fn flush(&mut self, open: &mut Open) -> Result<()> {
        if let Some(statement) = open.pending.take() {
            self.captured.summary.statements += 1;
            if statement.took_us.is_some() {
                self.captured.summary.with_duration += 1;
            }
            self.writer.write(&Line::Statement(statement))?;
        }
        Ok(())
    }

    /// Writes what sessions still hold and the summary; refuses a log the server wrote
    /// without the settings a capture needs, naming them.
    pub fn finish(mut self, logs: &str) -> Result<Captured> {
        let mut open: Vec<Open> = self.sessions.drain().map(|(_, open)| open).collect();
        open.sort_by_key(|open| open.id);
        for mut session in open {
            self.flush(&mut session)?;
        }
        self.captured.span_us = self.latest_us - self.origin_us.unwrap_or(self.latest_us);
        let captured = self.captured;
        if captured.summary.statements == 0 {
            let settings = match self.quoting {
                Quoting::Postgres => {
                    "set log_statement = 'all' (or log_min_duration_statement = 0), log_connections = on and log_disconnections = on"
                }
                Quoting::Mysql => {
                    "set general_log = ON (or slow_query_log = ON with long_query_time = 0), with log_output = FILE; a general log whose tabs were turned to spaces is read too"
                }
            };
            bail!(
                "{logs}: the log has no statement of any session: {settings}, reload the server, and capture the log written after"
            );
        }
        if self.by_process && !captured.connections_logged {
            bail!(
                "{logs}: sessions are named by their process id alone (%p, no %c, in log_line_prefix) and the log has no connection lines: a later session reusing an ended one's pid would be read as the same session; set log_connections = on and log_disconnections = on, or add %c to log_line_prefix, reload the server, and capture the log written after"
            );
        }
        if captured.without_parameters > 0 {
            bail!(
                "{logs}: {} statements of the extended protocol were logged without their parameters: set log_parameter_max_length = -1 (PostgreSQL 13 and later log them in full by default), and capture again",
                captured.without_parameters
            );
        }
        self.writer
            .write(&Line::Summary(captured.summary.clone()))?;
        Ok(captured)
    }
}

/// The value after `key` in "user=app database=shop application_name=x".
fn word_after<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.split(' ')
        .find_map(|word| word.strip_prefix(key))
        .filter(|value| !value.is_empty())
}

/// "$1 = '2', $2 = NULL, $3 = 'it''s'": the values in order (None a NULL).
pub fn parse_parameters(text: &str) -> Vec<Option<String>> {
    let mut values = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.trim_start_matches([',', ' ']).strip_prefix('$') {
        let Some((_, value)) = after.split_once(" = ") else {
            break;
        };
        if let Some(tail) = value.strip_prefix("NULL") {
            values.push(None);
            rest = tail;
            continue;
        }
        let Some(quoted) = value.strip_prefix('\'') else {
            break;
        };
        let mut text = String::new();
        let mut chars = quoted.char_indices();
        let mut end = quoted.len();
        while let Some((at, c)) = chars.next() {
            if c == '\'' {
                if quoted[at + 1..].starts_with('\'') {
                    text.push('\'');
                    chars.next();
                    continue;
                }
                end = at + 1;
                break;
            }
            text.push(c);
        }
        values.push(Some(text));
        rest = &quoted[end.min(quoted.len())..];
    }
    values
}

/// Whether a statement sent by the extended protocol binds parameters of its own: `$1` in
/// it, but not in the body of a PREPARE or of a CREATE (a function's), whose placeholders
/// are the body's.
fn takes_parameters(sql: &str) -> bool {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    let body_of_its_own = ["PREPARE", "CREATE"]
        .iter()
        .any(|keyword| first.eq_ignore_ascii_case(keyword));
    !body_of_its_own && sql.contains("$1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_ms: i64, session: &str, message: &str, detail: Option<&str>) -> Entry {
        Entry {
            at_us: at_ms * 1000,
            session: session.into(),
            user: "app".into(),
            database: "shop".into(),
            severity: "LOG".into(),
            message: message.into(),
            detail: detail.map(str::to_string),
            rows: None,
            ..Entry::default()
        }
    }

    /// The statements a capture of `entries` wrote.
    fn captured(entries: Vec<Entry>) -> (Captured, Vec<Statement>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.capture");
        let mut writer = Writer::create(&path).unwrap();
        writer
            .write(&Line::Header {
                format: super::super::file::FORMAT.into(),
                version: super::super::file::VERSION,
                product: "postgresql".into(),
                logs: vec!["test.log (csvlog)".into()],
            })
            .unwrap();
        let mut capturer = Capturer::new(&mut writer, Quoting::Postgres);
        for entry in entries {
            capturer.take(entry).unwrap();
        }
        let done = capturer.finish("test.log").unwrap();
        writer.finish().unwrap();
        let mut statements = Vec::new();
        super::super::file::read(&path, &mut |line| {
            if let Line::Statement(statement) = line {
                statements.push(statement);
            }
            Ok(())
        })
        .unwrap();
        (done, statements)
    }

    #[test]
    fn the_capture_counts_its_span_and_each_database_s_sessions() {
        let mut other = entry(
            900,
            "b",
            "connection authorized: user=app database=reports",
            None,
        );
        other.database = "reports".into();
        let (done, _) = captured(vec![
            entry(
                100,
                "a",
                "connection authorized: user=app database=shop",
                None,
            ),
            entry(200, "a", "statement: SELECT 1", None),
            other,
            entry(2_600, "a", "statement: SELECT 2", None),
        ]);
        assert_eq!(done.span_us, 2_500_000);
        let databases: Vec<(&str, u64)> = (done.databases.iter())
            .map(|(name, sessions)| (name.as_str(), *sessions))
            .collect();
        assert_eq!(databases, [("reports", 1), ("shop", 1)]);
    }

    #[test]
    fn sessions_named_by_their_pid_need_their_connection_lines() {
        let capture = |entries: Vec<Entry>| {
            let dir = tempfile::tempdir().unwrap();
            let mut writer = Writer::create(&dir.path().join("test.capture")).unwrap();
            let mut capturer = Capturer::new(&mut writer, Quoting::Postgres);
            capturer.sessions_by_process(true);
            for entry in entries {
                capturer.take(entry).unwrap();
            }
            capturer
                .finish("test.log")
                .map(|done| done.summary.sessions)
        };
        // Pid 7 ran two sessions, one after the other: without connection lines they would
        // be read as one.
        let statements = || {
            vec![
                entry(0, "7", "statement: SELECT 1", None),
                entry(500, "7", "statement: SELECT 2", None),
            ]
        };
        let refused = capture(statements()).unwrap_err().to_string();
        assert!(
            refused.contains("process id alone") && refused.contains("log_connections = on"),
            "{refused}"
        );
        let mut logged = statements();
        logged.insert(
            0,
            entry(
                0,
                "7",
                "connection authorized: user=app database=shop",
                None,
            ),
        );
        logged.insert(
            2,
            entry(400, "7", "disconnection: session time: 0:00:00.400", None),
        );
        logged.insert(
            3,
            entry(
                450,
                "7",
                "connection authorized: user=app database=shop",
                None,
            ),
        );
        assert_eq!(capture(logged).unwrap(), 2);
    }

    #[test]
    fn a_mysql_log_without_statements_is_told_mysql_s_settings() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::create(&dir.path().join("test.capture")).unwrap();
        let capturer = Capturer::new(&mut writer, Quoting::Mysql);
        let refused = capturer.finish("general.log").unwrap_err().to_string();
        assert!(
            refused.contains("general_log = ON") && !refused.contains("log_statement"),
            "{refused}"
        );
    }

    fn at(text: &str, session: &str, message: &str) -> Entry {
        let stamp = super::super::log_time::parse_time(text).unwrap();
        Entry {
            at_us: stamp.at_us,
            zone: stamp.zone,
            ..entry(0, session, message, None)
        }
    }

    /// Passwords in every form a log holds are left out and counted, never stored; a
    /// statement run after its session moved to another database says which.
    #[test]
    fn no_password_is_stored_and_a_moved_session_is_said() {
        let mut moved = entry(60, "s1", "statement: INSERT INTO orders VALUES (1)", None);
        moved.database = "other".into();
        let (done, statements) = captured(vec![
            entry(
                0,
                "s1",
                "connection authorized: user=app database=shop",
                None,
            ),
            entry(
                10,
                "s1",
                "execute P_1: SELECT dblink_connect($1)",
                Some("parameters: $1 = 'host=a password = s3cret'"),
            ),
            entry(
                20,
                "s1",
                "statement: DO $$BEGIN ALTER ROLE app PASSWORD 's3cret'; END$$",
                None,
            ),
            entry(
                30,
                "s1",
                "statement: CREATE SUBSCRIPTION s CONNECTION 'host=a password =s3cret' PUBLICATION p",
                None,
            ),
            entry(40, "s1", "statement: SELECT 1", None),
            moved,
        ]);
        assert_eq!(done.summary.passwords_left_out, 3);
        let kept: Vec<(&str, Option<&str>)> = statements
            .iter()
            .map(|statement| (statement.sql.as_str(), statement.database.as_deref()))
            .collect();
        assert_eq!(
            kept,
            [
                ("SELECT 1", None),
                ("INSERT INTO orders VALUES (1)", Some("other"))
            ]
        );
    }

    /// A slow log's entries are written at each statement's end: its start, that less its
    /// duration, is never before the log's origin nor its session's start.
    #[test]
    fn statements_start_neither_before_the_origin_nor_their_session() {
        let (_, statements) = captured(vec![
            entry(10, "s1", "duration: 50.000 ms  statement: SELECT 1", None),
            entry(
                20,
                "s2",
                "connection authorized: user=app database=shop",
                None,
            ),
            entry(40, "s2", "duration: 30.000 ms  statement: SELECT 2", None),
            entry(90, "s1", "duration: 5.000 ms  statement: SELECT 3", None),
        ]);
        let mut starts: Vec<(&str, i64)> = statements
            .iter()
            .map(|statement| (statement.sql.as_str(), statement.at_us))
            .collect();
        starts.sort_unstable();
        assert_eq!(
            starts,
            [("SELECT 1", 0), ("SELECT 2", 10_000), ("SELECT 3", 75_000)]
        );
    }

    #[test]
    fn a_log_across_a_change_of_daylight_saving_keeps_its_true_gaps() {
        let (done, statements) = captured(vec![
            at("2026-10-25 02:59:59.500 CEST", "s1", "statement: select 1"),
            at("2026-10-25 02:00:00.500 CET", "s1", "statement: select 2"),
        ]);
        assert_eq!(done.backwards, 0);
        let offsets: Vec<i64> = statements.iter().map(|statement| statement.at_us).collect();
        assert_eq!(offsets, [0, 1_000_000]);
    }

    #[test]
    fn a_change_of_zone_that_cannot_be_placed_is_refused_at_its_line() {
        for (first, then) in [
            ("2026-10-25 02:59:59.500 IST", "2026-10-25 02:00:00.500 XYZ"),
            (
                "2026-10-25 02:59:59.500 CEST",
                "2026-10-25 02:00:00.500 XYZ",
            ),
            ("2026-10-25 02:59:59.500 IST", "2026-10-25 02:00:00.500 CET"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut writer = Writer::create(&dir.path().join("test.capture")).unwrap();
            let mut capturer = Capturer::new(&mut writer, Quoting::Postgres);
            capturer
                .take(at(first, "s1", "statement: select 1"))
                .unwrap();
            let mut second = at(then, "s1", "statement: select 2");
            second.line = 7;
            let error = capturer.take(second).unwrap_err().to_string();
            assert!(
                error.starts_with("line 7: the log's times change from"),
                "{error}"
            );
            assert!(error.contains("log_timezone = 'UTC'"), "{error}");
        }
        // The same unplaced zone throughout is one clock: its gaps are true.
        let (_, statements) = captured(vec![
            at("2026-10-25 02:59:59.500 IST", "s1", "statement: select 1"),
            at("2026-10-25 03:00:00.000 IST", "s1", "statement: select 2"),
        ]);
        assert_eq!(statements[1].at_us - statements[0].at_us, 500_000);
    }

    #[test]
    fn durations_date_a_statement_from_its_start_and_complete_the_one_logged_before() {
        let (done, statements) = captured(vec![
            entry(
                0,
                "s1",
                "connection authorized: user=app database=shop",
                None,
            ),
            // log_min_duration_statement = 0: logged when it ended, 2.5 ms after it began.
            entry(10, "s1", "duration: 2.500 ms  statement: SELECT 1", None),
            // log_statement = all and log_min_duration_statement = 0 together.
            entry(20, "s1", "statement: SELECT 2", None),
            entry(21, "s1", "duration: 1.000 ms  statement: SELECT 2", None),
            // log_statement = all with log_duration = on.
            entry(
                30,
                "s1",
                "execute P_1: SELECT $1",
                Some("parameters: $1 = '7'"),
            ),
            entry(31, "s1", "duration: 0.250 ms", None),
            entry(40, "s1", "statement: ALTER ROLE app PASSWORD 'x'", None),
            entry(50, "s1", "disconnection: session time: 0:00:00.050", None),
        ]);
        let shown: Vec<(i64, &str, Option<u64>)> = statements
            .iter()
            .map(|statement| (statement.at_us, statement.sql.as_str(), statement.took_us))
            .collect();
        assert_eq!(
            shown,
            vec![
                (7_500, "SELECT 1", Some(2_500)),
                (20_000, "SELECT 2", Some(1_000)),
                (30_000, "SELECT $1", Some(250)),
            ]
        );
        assert_eq!(statements[2].parameters, Some(vec![Some("7".to_string())]));
        assert_eq!(done.summary.passwords_left_out, 1);
        assert_eq!(done.summary.with_duration, 3);
        assert_eq!(done.backwards, 0);
        // A log read after a later one: its entries go back in time, and are counted.
        let (done, _) = captured(vec![
            entry(60_000, "s1", "statement: SELECT 1", None),
            entry(1_000, "s2", "statement: SELECT 2", None),
            entry(1_001, "s2", "statement: SELECT 3", None),
        ]);
        assert_eq!(done.backwards, 2);
    }

    #[test]
    fn a_log_without_statements_or_parameters_is_refused_naming_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::create(&dir.path().join("x")).unwrap();
        let mut capturer = Capturer::new(&mut writer, Quoting::Postgres);
        capturer
            .take(entry(
                0,
                "s1",
                "connection authorized: user=app database=shop",
                None,
            ))
            .unwrap();
        let error = capturer.finish("empty.log").unwrap_err().to_string();
        assert!(error.contains("set log_statement = 'all'"), "{error}");
        let mut writer = Writer::create(&dir.path().join("y")).unwrap();
        let mut capturer = Capturer::new(&mut writer, Quoting::Postgres);
        capturer
            .take(entry(0, "s1", "execute <unnamed>: SELECT $1", None))
            .unwrap();
        let error = capturer.finish("bare.log").unwrap_err().to_string();
        assert!(error.contains("log_parameter_max_length = -1"), "{error}");
    }

    #[test]
    fn parameters_keep_quotes_nulls_and_commas() {
        assert_eq!(
            parse_parameters("$1 = '2', $2 = NULL, $3 = 'it''s, here', $4 = ''"),
            vec![
                Some("2".to_string()),
                None,
                Some("it's, here".to_string()),
                Some(String::new())
            ]
        );
        assert!(parse_parameters("nothing").is_empty());
        assert_eq!(
            parse_parameters("$1 = 'unterminated"),
            vec![Some("unterminated".into())]
        );
    }

    /// corescale's own privilege check, `PREPARE ... AS ... $1` sent unnamed, was taken for a
    /// statement logged without its parameters, and the capture refused.
    #[test]
    fn a_prepare_s_placeholders_are_its_body_s() {
        assert!(takes_parameters("SELECT 1 FROM t WHERE a = $1"));
        assert!(!takes_parameters(
            "PREPARE p AS SELECT 1 FROM t WHERE a = $1"
        ));
        assert!(!takes_parameters("  prepare p(int) AS SELECT $1"));
        assert!(!takes_parameters(
            "CREATE FUNCTION f(int) RETURNS int AS 'SELECT $1' LANGUAGE sql"
        ));
    }
}
