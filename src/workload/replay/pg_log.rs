//! PostgreSQL's server log as entries: csvlog, jsonlog and stderr (with a `log_line_prefix`
//! that names the time, the session and, ideally, the user and database, as pgreplay
//! documents), read a line at a time so a log of any size takes bounded memory. Each entry is
//! one message with its detail; what a message means for a capture is `capture.rs`'s.

use std::io::BufRead;

use super::log_time::{Zone, parse_time};
use anyhow::{Result, anyhow, bail};

/// The longest line (or csv record) read: a 10 MB statement fits, a file of binary junk
/// without newlines is refused at its first line.
pub const LONGEST_LINE: usize = 64 << 20;

/// One message of the log, as every format gives it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    /// Microseconds since the epoch: UTC's, or the log's wall clock when `zone` says so.
    pub at_us: i64,
    pub zone: Zone,
    pub session: String,
    pub user: String,
    pub database: String,
    /// LOG, ERROR, FATAL, DETAIL, ...
    pub severity: String,
    pub sqlstate: Option<String>,
    pub message: String,
    pub detail: Option<String>,
    /// Rows it returned or changed, where the log says (MySQL's slow log).
    pub rows: Option<u64>,
    /// Where the entry starts in its file (1-based).
    pub line: u64,
}

/// How a log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    /// stderr with this `log_line_prefix`.
    Stderr(Prefix),
}

/// How many lines of a log's start its format is told from: a rotated log may begin inside a
/// record (a multi-line statement's tail), and a statement's own lines may look like anything.
const LINES_LOOKED_AT: usize = 200;

impl Format {
    /// The format of a log from the records of its start (`start`): JSON objects, csvlog
    /// records or lines starting with the stderr prefix (`--log-line-prefix`; None:
    /// pgreplay's), whichever most of its lines are.
    pub fn detect(start: &str, prefix: Option<&str>) -> Result<Self> {
        let stderr = Prefix::parse(prefix.unwrap_or(PGREPLAY_PREFIX))?;
        let lines = || {
            (start.trim_start_matches('\u{feff}').lines())
                .take(LINES_LOOKED_AT)
                .filter(|line| !line.trim().is_empty())
        };
        let json = lines().filter(|line| is_json_record(line)).count();
        let csv = lines().filter(|line| looks_like_csvlog(line)).count();
        let prefixed = lines().filter(|line| stderr.split(line).is_some()).count();
        Ok(if json > csv.max(prefixed) {
            Self::Json
        } else if csv > prefixed {
            Self::Csv
        } else {
            Self::Stderr(stderr)
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Csv => "csvlog",
            Self::Json => "jsonlog",
            Self::Stderr(_) => "stderr",
        }
    }
}

/// A jsonlog record, or CloudNativePG's envelope of one: a JSON object a line.
fn is_json_record(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('{')
        && line.ends_with('}')
        && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(line)
            .is_ok_and(|object| object.contains_key("timestamp") || object.contains_key("record"))
}

/// A csvlog record starts with a timestamp and a quoted user name field (or an empty one).
fn looks_like_csvlog(line: &str) -> bool {
    let Some((time, rest)) = line.split_once(',') else {
        return false;
    };
    parse_time(time).is_some() && (rest.starts_with('"') || rest.starts_with(','))
}

/// A stderr log's `log_line_prefix`, as pieces to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    pieces: Vec<Piece>,
    /// As the server's setting has it.
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    /// An escape: its letter (%m -> 'm').
    Field(char),
}

/// pgreplay's documented prefix: time with milliseconds, user, database, session.
pub const PGREPLAY_PREFIX: &str = "%m|%u|%d|%c|";

impl Prefix {
    /// Refuses a prefix a capture cannot be read from: one without the time (%m, %n; %t
    /// has whole seconds) or the session (%c; %p when pids are not reused).
    pub fn parse(prefix: &str) -> Result<Self> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = prefix.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                literal.push(c);
                continue;
            }
            // %-10u and the like: the padding is read as the field.
            let mut letter = chars.next();
            while letter.is_some_and(|c| c == '-' || c.is_ascii_digit()) {
                letter = chars.next();
            }
            match letter {
                Some('%') => literal.push('%'),
                // %q ends the prefix of non-session processes: their lines are skipped.
                Some('q') => {}
                Some(letter) => {
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Field(letter));
                }
                None => literal.push('%'),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        let has = |letter: char| pieces.contains(&Piece::Field(letter));
        if !has('m') && !has('n') {
            if has('t') {
                bail!(
                    "log_line_prefix '{prefix}' times lines with %t, in whole seconds: a replay needs milliseconds; set log_line_prefix to use %m (pgreplay's '{PGREPLAY_PREFIX}') and capture again"
                );
            }
            bail!(
                "log_line_prefix '{prefix}' has no time (%m): set it to name the time, user, database and session, e.g. '{PGREPLAY_PREFIX}', and capture again (or give the server's with --log-line-prefix)"
            );
        }
        if !has('c') && !has('p') {
            bail!(
                "log_line_prefix '{prefix}' names no session (%c): set it to name the time, user, database and session, e.g. '{PGREPLAY_PREFIX}', and capture again (or give the server's with --log-line-prefix)"
            );
        }
        for (index, piece) in pieces.iter().enumerate() {
            if matches!(piece, Piece::Field(_))
                && matches!(pieces.get(index + 1), Some(Piece::Field(_)))
            {
                bail!(
                    "log_line_prefix '{prefix}' has two escapes with nothing between them: the fields cannot be told apart; give a separator, as in '{PGREPLAY_PREFIX}'"
                );
            }
        }
        Ok(Self {
            pieces,
            text: prefix.to_string(),
        })
    }

    /// Whether it names a session by its process id alone (%p without %c).
    pub fn sessions_by_process(&self) -> bool {
        let has = |letter: char| self.pieces.contains(&Piece::Field(letter));
        has('p') && !has('c')
    }

    /// The fields of a line that starts with this prefix, and the rest of the line; None
    /// when it does not (a continuation, or another process's line).
    fn split<'a>(&self, line: &'a str) -> Option<(Vec<(char, &'a str)>, &'a str)> {
        let mut rest = line;
        let mut fields = Vec::new();
        for (index, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Piece::Field(letter) => {
                    let value = match self.pieces.get(index + 1) {
                        Some(Piece::Literal(next)) => {
                            let end = field_end(*letter, rest, next)?;
                            &rest[..end]
                        }
                        // Last: up to the severity's "LOG:  ".
                        _ => {
                            let end = rest.find(": ")?;
                            let start = rest[..end].rfind(' ').map_or(0, |at| at + 1);
                            &rest[..start]
                        }
                    };
                    fields.push((*letter, value.trim_end()));
                    rest = &rest[value.len()..];
                }
            }
        }
        Some((fields, rest))
    }
}

/// Where field `letter` ends before the literal `next`: times contain spaces and colons,
/// so they end where their fixed shape does.
fn field_end(letter: char, rest: &str, next: &str) -> Option<usize> {
    if matches!(letter, 'm' | 't') {
        // "2026-11-29 08:45:19.404 UTC": date, time, zone, then the literal.
        let after_clock = rest.get(19..)?;
        let fraction = after_clock.strip_prefix('.').map_or(0, |tail| {
            1 + tail.bytes().take_while(u8::is_ascii_digit).count()
        });
        let zone_start = 19 + fraction;
        let zone_len = rest[zone_start..].find(next)?;
        return Some(zone_start + zone_len);
    }
    rest.find(next)
}

/// Reads `reader`'s entries in order, handing each to `take`; `bytes` counts what was read
/// (for progress). `name` names the file in errors, which say its line.
pub fn read_entries(
    reader: &mut dyn BufRead,
    format: &Format,
    name: &str,
    bytes: &dyn Fn(u64),
    take: &mut dyn FnMut(Entry) -> Result<()>,
) -> Result<()> {
    read_format(reader, format, bytes, take).map_err(|error| anyhow!("{name}: {error:#}"))
}

fn read_format(
    reader: &mut dyn BufRead,
    format: &Format,
    bytes: &dyn Fn(u64),
    take: &mut dyn FnMut(Entry) -> Result<()>,
) -> Result<()> {
    match format {
        Format::Csv => read_csv(reader, bytes, take),
        Format::Json => read_lines(reader, bytes, &mut |line, number| {
            if line.trim().is_empty() {
                return Ok(());
            }
            match json_entry(line, number)? {
                Some(entry) => take(entry),
                None => Ok(()),
            }
        }),
        Format::Stderr(prefix) => {
            let mut pending: Option<Entry> = None;
            let mut lines = 0;
            read_lines(reader, bytes, &mut |line, number| {
                lines = number;
                stderr_line(prefix, line, number, &mut pending, take)
            })?;
            if pending.is_none() && lines > 0 {
                bail!(
                    "none of its {lines} lines starts with the log_line_prefix given ('{}'): give the server's with --log-line-prefix (SHOW log_line_prefix)",
                    prefix.text
                );
            }
            match pending {
                Some(entry) => take(entry),
                None => Ok(()),
            }
        }
    }
}

/// Refuses an entry begun at line `from` that `adding` more bytes would grow past
/// [`LONGEST_LINE`]: a statement continued over many lines is capped as a line is. `what`
/// names the entry and the log ("statement", "slow query log").
pub(super) fn within_longest(
    held: usize,
    adding: usize,
    (number, from): (u64, u64),
    (what, log): (&str, &str),
) -> Result<()> {
    if held + adding > LONGEST_LINE {
        bail!(
            "line {number}: the {what} from line {from} is longer than {} MiB: not a {log}",
            LONGEST_LINE >> 20
        );
    }
    Ok(())
}

/// Each line, as UTF-8 text without its newline, with its number (MySQL's logs too).
pub(super) fn read_lines(
    reader: &mut dyn BufRead,
    bytes: &dyn Fn(u64),
    each: &mut dyn FnMut(&str, u64) -> Result<()>,
) -> Result<()> {
    let mut buffer = Vec::new();
    for number in 1.. {
        buffer.clear();
        let read = std::io::Read::take(&mut *reader, LONGEST_LINE as u64 + 1)
            .read_until(b'\n', &mut buffer)
            .map_err(|error| anyhow!("line {number}: {error}"))?;
        if read == 0 {
            return Ok(());
        }
        bytes(read as u64);
        if buffer.len() > LONGEST_LINE {
            bail!(
                "line {number} is longer than {} MiB: not a server log",
                LONGEST_LINE >> 20
            );
        }
        while buffer
            .last()
            .is_some_and(|byte| *byte == b'\n' || *byte == b'\r')
        {
            buffer.pop();
        }
        let line = std::str::from_utf8(&buffer).map_err(|_| {
            anyhow!("line {number} is not UTF-8 text: not a server log (or one in another encoding; convert it with iconv)")
        })?;
        each(line, number)?;
    }
    Ok(())
}

/// A jsonlog record, or CloudNativePG's envelope of one (each PostgreSQL record in its
/// `record` field, named as csvlog's columns); `None` for the envelope's other lines (its
/// instance manager's own, with a `logger` and no record).
fn json_entry(line: &str, number: u64) -> Result<Option<Entry>> {
    #[derive(serde::Deserialize)]
    struct Json {
        #[serde(default)]
        timestamp: Option<String>,
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        dbname: Option<String>,
        #[serde(default)]
        session_id: Option<String>,
        #[serde(default)]
        error_severity: Option<String>,
        #[serde(default)]
        state_code: Option<String>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        detail: Option<String>,
        /// CloudNativePG: the PostgreSQL record, and the logger that wrote the line.
        #[serde(default)]
        record: Option<Record>,
        #[serde(default)]
        logger: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Record {
        log_time: String,
        #[serde(default)]
        user_name: Option<String>,
        #[serde(default)]
        database_name: Option<String>,
        #[serde(default)]
        session_id: Option<String>,
        #[serde(default)]
        error_severity: Option<String>,
        #[serde(default)]
        sql_state_code: Option<String>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        detail: Option<String>,
    }
    let json: Json = serde_json::from_str(line)
        .map_err(|error| anyhow!("line {number} is not a jsonlog record: {error}"))?;
    let (timestamp, session, user, database, severity, sqlstate, message, detail) = match (
        json.record,
        json.timestamp,
    ) {
        (Some(record), _) => (
            record.log_time,
            record.session_id,
            record.user_name,
            record.database_name,
            record.error_severity,
            record.sql_state_code,
            record.message,
            record.detail,
        ),
        (None, Some(timestamp)) => (
            timestamp,
            json.session_id,
            json.user,
            json.dbname,
            json.error_severity,
            json.state_code,
            json.message,
            json.detail,
        ),
        (None, None) if json.logger.is_some() => return Ok(None),
        (None, None) => bail!(
            "line {number} is not a jsonlog record: no \"timestamp\" (nor CloudNativePG's \"record\")"
        ),
    };
    let stamp = parse_time(&timestamp).ok_or_else(|| {
        anyhow!(
            "line {number}: '{}' is not a time",
            crate::format::printable(&timestamp)
        )
    })?;
    Ok(Some(Entry {
        at_us: stamp.at_us,
        zone: stamp.zone,
        session: session.unwrap_or_default(),
        user: user.unwrap_or_default(),
        database: database.unwrap_or_default(),
        severity: severity.unwrap_or_default(),
        sqlstate,
        message: message.unwrap_or_default(),
        detail,
        rows: None,
        line: number,
    }))
}

/// csvlog's columns, as PostgreSQL 9.0 to 17 write them.
const CSV_TIME: usize = 0;
const CSV_USER: usize = 1;
const CSV_DATABASE: usize = 2;
const CSV_SESSION: usize = 5;
const CSV_SEVERITY: usize = 11;
const CSV_SQLSTATE: usize = 12;
const CSV_MESSAGE: usize = 13;
const CSV_DETAIL: usize = 14;

fn read_csv(
    reader: &mut dyn BufRead,
    bytes: &dyn Fn(u64),
    take: &mut dyn FnMut(Entry) -> Result<()>,
) -> Result<()> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(reader);
    let mut record = csv::ByteRecord::new();
    let mut offset = 0;
    loop {
        let line = csv.position().line();
        let more = csv
            .read_byte_record(&mut record)
            .map_err(|error| anyhow!("line {line} is not a csvlog record: {error}"))?;
        if !more {
            return Ok(());
        }
        let at = csv.position().byte();
        bytes(at - offset);
        offset = at;
        if record.as_slice().len() > LONGEST_LINE {
            bail!(
                "the record at line {line} is longer than {} MiB",
                LONGEST_LINE >> 20
            );
        }
        if record.len() <= CSV_DETAIL {
            bail!(
                "line {line} has {} fields, not csvlog's 23 or more",
                record.len()
            );
        }
        let field = |index: usize| -> Result<&str> {
            std::str::from_utf8(record.get(index).unwrap_or_default()).map_err(|_| {
                anyhow!(
                    "line {line} is not UTF-8 text (or in another encoding; convert it with iconv)"
                )
            })
        };
        let stamp = parse_time(field(CSV_TIME)?).ok_or_else(|| {
            anyhow!(
                "line {line}: '{}' is not a time",
                crate::format::printable(field(CSV_TIME).unwrap_or_default())
            )
        })?;
        let detail = field(CSV_DETAIL)?;
        let sqlstate = field(CSV_SQLSTATE)?;
        take(Entry {
            at_us: stamp.at_us,
            zone: stamp.zone,
            session: field(CSV_SESSION)?.to_string(),
            user: field(CSV_USER)?.to_string(),
            database: field(CSV_DATABASE)?.to_string(),
            severity: field(CSV_SEVERITY)?.to_string(),
            sqlstate: (!sqlstate.is_empty()).then(|| sqlstate.to_string()),
            message: field(CSV_MESSAGE)?.to_string(),
            detail: (!detail.is_empty()).then(|| detail.to_string()),
            rows: None,
            line,
        })?;
    }
}

/// The severities a stderr line may carry after the prefix.
const SEVERITIES: [&str; 14] = [
    "DEBUG1",
    "DEBUG2",
    "DEBUG3",
    "DEBUG4",
    "DEBUG5",
    "LOG",
    "INFO",
    "NOTICE",
    "WARNING",
    "ERROR",
    "FATAL",
    "PANIC",
    "DETAIL",
    "STATEMENT",
];
/// Lines that add to the entry before them.
const ADDENDA: [&str; 5] = ["HINT", "CONTEXT", "QUERY", "LOCATION", "STATEMENT"];

/// One stderr line: a new entry (the pending one handed on), its DETAIL, another addendum
/// (skipped), or a continuation of a multi-line message (a tab, then the text).
fn stderr_line(
    prefix: &Prefix,
    line: &str,
    number: u64,
    pending: &mut Option<Entry>,
    take: &mut dyn FnMut(Entry) -> Result<()>,
) -> Result<()> {
    if let Some(continued) = line.strip_prefix('\t') {
        if let Some(entry) = pending.as_mut() {
            let held = entry.message.len() + entry.detail.as_ref().map_or(0, String::len);
            within_longest(
                held,
                continued.len(),
                (number, entry.line),
                ("entry", "server log"),
            )?;
            match entry.detail.as_mut() {
                Some(detail) => {
                    detail.push('\n');
                    detail.push_str(continued);
                }
                None => {
                    entry.message.push('\n');
                    entry.message.push_str(continued);
                }
            }
        }
        return Ok(());
    }
    // Not a session's line (another process's %q prefix), or not this prefix at all: a
    // log none of whose lines has it is refused once read.
    let Some((fields, rest)) = prefix.split(line) else {
        return Ok(());
    };
    let Some((severity, message)) = rest.split_once(":  ") else {
        return Ok(());
    };
    if !SEVERITIES.contains(&severity) && !ADDENDA.contains(&severity) {
        return Ok(());
    }
    let field = |letter: char| {
        fields
            .iter()
            .find(|(known, _)| *known == letter)
            .map(|(_, value)| *value)
    };
    let session = field('c').or(field('p')).unwrap_or_default().to_string();
    if severity == "DETAIL" || ADDENDA.contains(&severity) {
        if let Some(entry) = pending.as_mut()
            && entry.session == session
            && severity == "DETAIL"
        {
            entry.detail = Some(message.to_string());
        }
        return Ok(());
    }
    let (at_us, zone) = match (field('m'), field('n')) {
        (Some(time), _) => parse_time(time).map(|stamp| (stamp.at_us, stamp.zone)),
        (None, Some(epoch)) => epoch
            .parse::<f64>()
            .ok()
            .filter(|seconds| seconds.is_finite())
            .map(|seconds| ((seconds * 1e6) as i64, Zone::Utc)),
        (None, None) => None,
    }
    .ok_or_else(|| anyhow!("line {number}: the prefix's time is not a time"))?;
    let known = |value: Option<&str>| {
        value
            .filter(|value| *value != "[unknown]")
            .unwrap_or_default()
            .to_string()
    };
    let entry = Entry {
        at_us,
        zone,
        session,
        user: known(field('u')),
        database: known(field('d')),
        severity: severity.to_string(),
        sqlstate: field('e').map(str::to_string),
        message: message.to_string(),
        detail: None,
        rows: None,
        line: number,
    };
    if let Some(done) = pending.replace(entry) {
        take(done)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_continued_past_the_longest_line_is_refused_naming_both_lines() {
        let kind = ("statement", "slow query log");
        assert!(within_longest(LONGEST_LINE - 10, 10, (9, 3), kind).is_ok());
        let error = within_longest(LONGEST_LINE - 10, 11, (9, 3), kind).unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 9: the statement from line 3 is longer than 64 MiB: not a slow query log"
        );
    }

    fn entries(text: &str, format: &Format) -> Result<Vec<Entry>> {
        let mut found = Vec::new();
        read_entries(
            &mut text.as_bytes(),
            format,
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
    fn the_format_is_told_from_the_records_not_the_first_line() {
        // A rotated csvlog that begins inside a multi-line statement, of two records.
        let csv = "  FROM orders\n WHERE id = 1\",,,,,,,,,\"psql\",\"client backend\",,0\n\
2024-03-01 10:00:00.123 UTC,\"app\",\"shop\",1234,\"127.0.0.1:5000\",65e1a1a0.4d2,1,\"SELECT\",2024-03-01 10:00:00 UTC,3/4,0,LOG,00000,\"statement: SELECT 1\",,,,,,,,,\"psql\",\"client backend\",,0\n\
2024-03-01 10:00:01.123 UTC,\"app\",\"shop\",1234,\"127.0.0.1:5000\",65e1a1a0.4d2,2,\"idle\",2024-03-01 10:00:00 UTC,,0,LOG,00000,\"disconnection: session time: 0:00:01.000 user=app database=shop\",,,,,,,,,\"psql\",\"client backend\",,0\n";
        assert_eq!(Format::detect(csv, None).unwrap(), Format::Csv);
        assert_eq!(
            Format::detect(csv, Some("%m [%p] %c ")).unwrap(),
            Format::Csv
        );
        // A stderr log whose statement has a line that looks like a csvlog record: its
        // prefixed lines are more.
        let prefix = "%m [%p] %c ";
        let stderr = "2024-03-01 10:00:00.123 UTC [1234] 65e1a1a0.4d2 LOG:  statement: SELECT\n\
\t2024-03-01 10:00:00.123 UTC,\"a\"\n\
2024-03-01 10:00:00.223 UTC [1234] 65e1a1a0.4d2 LOG:  statement: SELECT 2\n";
        let read = Format::detect(stderr, Some(prefix)).unwrap();
        assert!(
            matches!(&read, Format::Stderr(found) if found.text == prefix),
            "{read:?}"
        );
        assert_eq!(entries(stderr, &read).unwrap().len(), 2);
    }

    #[test]
    fn cloudnative_pg_s_envelope_is_read_and_its_other_lines_left() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/capture/cloudnative-pg.json"),
        )
        .unwrap();
        let format = Format::detect(&text, None).unwrap();
        let found = entries(&text, &format).unwrap();
        let read: Vec<(&str, &str, &str, u64)> = found
            .iter()
            .map(|entry| {
                (
                    entry.session.as_str(),
                    entry.database.as_str(),
                    entry.message.as_str(),
                    entry.line,
                )
            })
            .collect();
        assert_eq!(read.len(), 3, "{read:?}");
        assert_eq!(
            read[1],
            (
                "6753f0ad.445",
                "app",
                "duration: 0.412 ms  statement: SELECT abalance FROM pgbench_accounts WHERE aid = 4711",
                3
            )
        );
        assert_eq!(found[1].at_us - found[0].at_us, 6_000);
        assert_eq!(found[0].user, "app");
        assert_eq!(found[0].severity, "LOG");
    }

    #[test]
    fn a_json_line_neither_jsonlog_nor_an_envelope_is_refused() {
        let error = entries("{\"level\":\"info\"}\n", &Format::Json)
            .unwrap_err()
            .to_string();
        assert!(error.contains("no \"timestamp\""), "{error}");
    }

    #[test]
    fn stderr_lines_join_their_detail_and_continuations() {
        let prefix = Prefix::parse("%m|%u|%d|%c: ").unwrap();
        let log = "2026-11-29 08:45:19.404 UTC|postgres|shop|6b0be61f.1832: LOG:  execute P_5: INSERT INTO h VALUES ($1, $2);\n\
2026-11-29 08:45:19.404 UTC|postgres|shop|6b0be61f.1832: DETAIL:  parameters: $1 = '2', $2 = NULL\n\
2026-11-29 08:45:19.455 UTC|postgres|shop|6b0be61f.1833: LOG:  statement: select 'multi\n\
\tline', 1\n\
2026-11-29 08:45:19.456 UTC|[unknown]|[unknown]|6b0be61f.1834: LOG:  connection received: host=[local]\n";
        let found = entries(log, &Format::Stderr(prefix)).unwrap();
        assert_eq!(found.len(), 3);
        assert_eq!(
            found[0].message,
            "execute P_5: INSERT INTO h VALUES ($1, $2);"
        );
        assert_eq!(
            found[0].detail.as_deref(),
            Some("parameters: $1 = '2', $2 = NULL")
        );
        assert_eq!(found[0].database, "shop");
        assert_eq!(found[1].message, "statement: select 'multi\nline', 1");
        assert_eq!(found[1].at_us - found[0].at_us, 51_000);
        assert_eq!(found[2].user, "");
    }

    #[test]
    fn prefixes_without_time_or_session_are_refused_naming_the_setting() {
        for (prefix, said) in [
            ("%t|%u|%d|%c|", "%t"),
            ("%u|%d|%c|", "no time"),
            ("%m|%u|%d|", "no session"),
            ("%m%c", "two escapes"),
        ] {
            let error = Prefix::parse(prefix).unwrap_err().to_string();
            assert!(error.contains(said), "{prefix}: {error}");
        }
        assert!(Prefix::parse("%m [%p] %q%u@%d ").is_ok());
    }

    #[test]
    fn hostile_lines_are_refused_with_their_number() {
        let prefix = Format::Stderr(Prefix::parse(PGREPLAY_PREFIX).unwrap());
        let error = entries("garbage\n", &prefix).unwrap_err().to_string();
        assert!(
            error.contains("test.log: none of its 1 lines starts with the log_line_prefix"),
            "{error}"
        );
        let mut binary = b"2026-11-29 08:45:19.404 UTC|u|d|s1|LOG:  statement: select 1\n".to_vec();
        binary.extend_from_slice(&[0xff, 0xfe, b'\n']);
        let error = entries(std::str::from_utf8(&binary).unwrap_or(""), &prefix);
        assert!(error.is_ok());
        let mut reader: &[u8] = &binary;
        let error = read_entries(&mut reader, &prefix, "bin.log", &|_| {}, &mut |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(error.contains("bin.log: line 2 is not UTF-8"), "{error}");
        let error = entries("{\"timestamp\": 3}\n", &Format::Json)
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 1 is not a jsonlog record"), "{error}");
        let error = entries("2026-11-29 08:45:19.404 UTC,\"u\",\"d\",1\n", &Format::Csv)
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 1 has 4 fields"), "{error}");
    }
}
