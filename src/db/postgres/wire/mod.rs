//! corescale's one PostgreSQL client. It speaks the extended query protocol itself (messages
//! from the `postgres-protocol` crate), so statements can be pipelined the way libpq's
//! pipeline mode does: a batch of Bind/Execute pairs under one Sync, answered in one flush.
//! Drivers that put a Sync after every statement make the backend flush and wake the client
//! once per statement, which on a VM costs as much CPU as the statement itself. Setup, the
//! monitor and EXPLAIN use the same client through [`WireSession::query`], so one URL means
//! one thing everywhere (`?host=` included). The session is generic over its byte stream:
//! the unit tests below drive it with scripted server bytes.

use std::collections::VecDeque;
use std::io::{Read, Write};

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::IsNull;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{
    ChannelBinding, SCRAM_SHA_256, SCRAM_SHA_256_PLUS, ScramSha256,
};
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message};
use postgres_protocol::message::frontend;

use crate::db::connect::settings::{ChannelBindingMode, Endpoint, TlsMode};
use crate::db::connect::target::Target;
use crate::db::connect::tls::TlsFacts;
use crate::db::{Answered, PlannedStatement, PreparedStatements, quote_double};

/// The int8 type, for the statements' parameters.
const INT8_OID: u32 = 20;
/// Binary format for parameters and results.
const BINARY: i16 = 1;
/// SQLSTATE of pg_hba.conf's refusals ("no pg_hba.conf entry ... no encryption").
const INVALID_AUTHORIZATION: &str = "28000";
const READ_CHUNK: usize = 16 * 1024;

mod auth;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use stream::{HandshakeFailed, Stream, Transport};

/// Bind (the unnamed portal of `statement`, each value as text: the server infers its type),
/// Execute and Sync, encoded into `outgoing`; each value is written straight into the buffer.
fn bind_execute_sync<T: std::fmt::Display>(
    outgoing: &mut BytesMut,
    statement: &str,
    values: &[T],
) -> Result<()> {
    bind_execute(outgoing, statement, values)?;
    frontend::sync(outgoing);
    Ok(())
}

/// Bind (values as text) and Execute of a prepared statement, without a Sync.
fn bind_execute<T: std::fmt::Display>(
    outgoing: &mut BytesMut,
    statement: &str,
    values: &[T],
) -> Result<()> {
    frontend::bind(
        "",
        statement,
        std::iter::empty(),
        values.iter(),
        |value, buffer| {
            use std::io::Write as _;
            write!(buffer.writer(), "{value}")
                .map_err(|error| -> Box<dyn std::error::Error + Sync + Send> { Box::new(error) })?;
            Ok(IsNull::No)
        },
        std::iter::empty(),
        outgoing,
    )
    .map_err(|_| anyhow!("encoding a Bind message"))?;
    frontend::execute("", 0, outgoing)?;
    Ok(())
}

/// An error the server sent: its SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (SQLSTATE {code})")]
pub(crate) struct ServerError {
    pub code: String,
    pub message: String,
}

impl ServerError {
    fn from_body(body: &ErrorResponseBody) -> Self {
        let mut error = ServerError {
            code: String::new(),
            message: String::new(),
        };
        let mut fields = body.fields();
        while let Ok(Some(field)) = fields.next() {
            match field.type_() {
                b'C' => error.code = String::from_utf8_lossy(field.value_bytes()).into_owned(),
                b'M' => error.message = String::from_utf8_lossy(field.value_bytes()).into_owned(),
                _ => {}
            }
        }
        error
    }
}

/// One row of a text-format answer; NULL is None.
pub(crate) type TextRow = Vec<Option<String>>;

/// One session: the connection, its prepared statements and the batches in flight.
pub(crate) struct WireSession<S: Read + Write = Stream> {
    stream: S,
    /// TLS or not, for the record and for channel binding.
    transport: Transport,
    target: Target,
    incoming: BytesMut,
    /// Where the stream reads into before `incoming`: made once, so no read clears 16 KiB
    /// of the session thread's stack (4 pages of every session's stack held for good).
    read_chunk: ReadChunk,
    outgoing: BytesMut,
    backend_pid: u32,
    /// The server's major version, from its `server_version` at startup.
    server_major: Option<u32>,
    statements: PreparedStatements<String>,
    /// A script's statements by index: their names on the server ("cs_script_<index>"),
    /// and whether the server has prepared them.
    script_statements: Vec<(String, bool)>,
    /// Script statements queued for the next Sync, by index, and their answers (reused).
    queued_script: Vec<usize>,
    script_answers: Vec<(u64, std::time::Instant)>,
    /// Statements encoded into `outgoing` but not yet sent.
    unsent: usize,
    /// Batches sent and not yet answered, oldest first, with their statement counts.
    in_flight: VecDeque<usize>,
    /// Answers read early (before a statement outside the pipeline), not yet returned.
    unclaimed: Answered,
    /// The limit on one wait for the server.
    timeout: Option<Duration>,
    /// Until the server is ready, failures are failures to connect.
    connected: bool,
    /// The schema corescale's objects live in, once the session is pinned (`pin`): its own
    /// statements name their tables there. None: a session for a DBA's script.
    own_schema: Option<String>,
}

impl WireSession<Stream> {
    /// Connects, negotiates TLS as `sslmode` says, authenticates (trust, password, MD5 or
    /// SCRAM-SHA-256, with channel binding over TLS) and waits until the server is ready, each
    /// wait bounded by the connect timeout; then answers are bounded by the answer timeout.
    /// As libpq: `prefer` falls back to clear text when the handshake fails, and `allow`
    /// tries TLS when the server refuses clear text.
    pub(crate) fn connect(target: &Target) -> Result<Self> {
        let mode = target.settings().tls.mode.value;
        match Self::attempt(target, mode) {
            Err(error) if mode == TlsMode::Prefer && error.is::<HandshakeFailed>() => {
                // With a root certificate given the chain was checked: a failed check is
                // said, once, not passed over as libpq passes over it.
                if target.settings().tls.root.is_some() {
                    static SAID: std::sync::Once = std::sync::Once::new();
                    SAID.call_once(|| {
                        say!(
                            "corescale: warning: {error:#}; connecting in clear text, as libpq does for sslmode=prefer (sslmode=verify-full refuses instead)"
                        );
                    });
                }
                Self::attempt(target, TlsMode::Disable)
            }
            Err(error) if mode == TlsMode::Allow && error.is::<RefusedWithoutTls>() => {
                Self::attempt(target, TlsMode::Require)
            }
            outcome => outcome,
        }
    }

    fn attempt(target: &Target, mode: TlsMode) -> Result<Self> {
        let (stream, transport) = Stream::open(target, mode)?;
        let mut session = Self::start(stream, target, transport)?;
        session.stream.set_timeouts(target.answer_timeout)?;
        session.timeout = target.answer_timeout;
        Ok(session)
    }
}

/// A session's read buffer, mapped: its pages become resident only where the kernel writes
/// answers (a heap block would be cleared whole by `calloc`).
enum ReadChunk {
    Mapped(memmap2::MmapMut),
    Heap(Box<[u8]>),
}

impl ReadChunk {
    fn new() -> Self {
        match memmap2::MmapMut::map_anon(READ_CHUNK) {
            Ok(mapped) => Self::Mapped(mapped),
            Err(_) => Self::Heap(vec![0; READ_CHUNK].into_boxed_slice()),
        }
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            Self::Mapped(mapped) => mapped,
            Self::Heap(bytes) => bytes,
        }
    }
}

/// The server refused a connection made without TLS (pg_hba.conf's `hostssl` only).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct RefusedWithoutTls(String);

impl<S: Read + Write> WireSession<S> {
    /// The startup handshake over an open stream.
    pub(crate) fn start(stream: S, target: &Target, transport: Transport) -> Result<Self> {
        let mut session = Self {
            stream,
            transport,
            target: target.clone(),
            incoming: BytesMut::with_capacity(READ_CHUNK),
            read_chunk: ReadChunk::new(),
            outgoing: BytesMut::with_capacity(READ_CHUNK),
            backend_pid: 0,
            server_major: None,
            statements: PreparedStatements::default(),
            script_statements: Vec::new(),
            queued_script: Vec::new(),
            script_answers: Vec::new(),
            unsent: 0,
            in_flight: VecDeque::new(),
            unclaimed: Answered::default(),
            timeout: Some(target.connect_timeout),
            connected: false,
            own_schema: None,
        };
        let (user, database) = (target.user(), target.database());
        let application = target
            .settings()
            .application_name
            .as_ref()
            .map_or("corescale", |name| name.value.as_str())
            .to_string();
        let parameters = [
            ("user", user.as_str()),
            ("database", database.as_str()),
            ("application_name", application.as_str()),
            // Text answers are read as UTF-8, whatever the database's own encoding.
            ("client_encoding", "UTF8"),
        ];
        frontend::startup_message(parameters, &mut session.outgoing)?;
        session.send()?;
        session.authenticate()?;
        session.until_ready()?;
        session.connected = true;
        Ok(session)
    }

    pub(crate) fn backend_pid(&self) -> u32 {
        self.backend_pid
    }

    /// The server's major version (15 for "15.4 (Debian 15.4-1)"), as it reported at startup.
    pub(crate) fn server_major(&self) -> Option<u32> {
        self.server_major
    }

    /// Whether the session runs over TLS, and with what.
    pub(crate) fn tls(&self) -> Option<&TlsFacts> {
        self.transport.tls.as_ref()
    }

    /// Runs SQL through the simple protocol and discards any rows.
    pub(crate) fn simple(&mut self, sql: &str) -> Result<()> {
        self.simple_tagged(sql).map(drop)
    }

    /// [`WireSession::simple`], returning the last command's tag ("COMMIT", "ROLLBACK", ...).
    fn simple_tagged(&mut self, sql: &str) -> Result<String> {
        self.settle()?;
        frontend::query(sql, &mut self.outgoing)?;
        self.send()?;
        let mut tag = String::new();
        self.read_until_ready(|message| {
            if let Message::CommandComplete(body) = message {
                tag = body.tag()?.to_string();
            }
            Ok(())
        })?;
        Ok(tag)
    }

    /// Runs one statement with its values bound as text parameters (the server infers their
    /// types, as psql's `\bind` does) and returns its rows in text format.
    pub(crate) fn query(&mut self, sql: &str, parameters: &[&str]) -> Result<Vec<TextRow>> {
        self.settle()?;
        frontend::parse("", sql, std::iter::empty(), &mut self.outgoing)?;
        bind_execute_sync(&mut self.outgoing, "", parameters)?;
        self.send()?;
        let mut rows = Vec::new();
        self.read_until_ready(|message| {
            if let Message::DataRow(row) = message {
                rows.push(text_columns(&row)?);
            }
            Ok(())
        })?;
        Ok(rows)
    }

    /// Runs statement `index` of a script: Parse (named, first use only), Bind with the values
    /// as text (the server infers their types), Execute and Sync in one round trip. Returns
    /// the rows it returned, else the rows its command tag says it changed. The values are
    /// written straight into the outgoing buffer: nothing is allocated.
    pub(crate) fn run_script_statement(
        &mut self,
        index: usize,
        sql: &str,
        values: &[crate::db::driver::BoundValue],
    ) -> Result<u64> {
        self.queue_script_statement(index, sql, values)?;
        let mut answered = std::mem::take(&mut self.script_answers);
        answered.clear();
        let result = self.answer_script_statements(&mut answered);
        let rows = answered.first().map_or(0, |(rows, _)| *rows);
        self.script_answers = answered;
        result.map(|()| rows)
    }

    /// Encodes statement `index` of a script (Parse on first use, Bind, Execute) without a
    /// Sync: sent by [`WireSession::answer_script_statements`], with whatever else is queued.
    pub(crate) fn queue_script_statement(
        &mut self,
        index: usize,
        sql: &str,
        values: &[crate::db::driver::BoundValue],
    ) -> Result<()> {
        if self.queued_script.is_empty() {
            self.settle()?;
        }
        while self.script_statements.len() <= index {
            let name = format!("cs_script_{}", self.script_statements.len());
            self.script_statements.push((name, false));
        }
        let (name, prepared) = &self.script_statements[index];
        if !prepared {
            frontend::parse(name, sql, std::iter::empty(), &mut self.outgoing)?;
        }
        bind_execute(&mut self.outgoing, name, values)?;
        self.queued_script.push(index);
        Ok(())
    }

    /// Sends the queued script statements under one Sync and reads their answers in order:
    /// for each, the rows it returned (else the rows its tag says it changed) and when its
    /// answer was read. A server's refusal is a [`crate::db::driver::StatementFailure`]; the
    /// statements before it are in `answered`, the ones after it were skipped.
    pub(crate) fn answer_script_statements(
        &mut self,
        answered: &mut Vec<(u64, std::time::Instant)>,
    ) -> Result<()> {
        frontend::sync(&mut self.outgoing);
        self.send()?;
        // Taken out while the answers are read, put back after (no allocation).
        let mut queued = std::mem::take(&mut self.queued_script);
        let mut statements = std::mem::take(&mut self.script_statements);
        let mut rows = 0u64;
        let result = self.read_until_ready(|message| {
            match message {
                // The Parse of the statement being answered (each comes before its Bind).
                Message::ParseComplete => {
                    if let Some(index) = queued.get(answered.len()) {
                        statements[*index].1 = true;
                    }
                }
                Message::DataRow(_) => rows += 1,
                Message::CommandComplete(body) => {
                    // "UPDATE 3", "INSERT 0 3", "SELECT 3": the last word counts rows.
                    let changed = body
                        .tag()?
                        .rsplit(' ')
                        .next()
                        .and_then(|count| count.parse().ok())
                        .unwrap_or(0);
                    answered.push((
                        if rows > 0 { rows } else { changed },
                        std::time::Instant::now(),
                    ));
                    rows = 0;
                }
                Message::EmptyQueryResponse => {
                    answered.push((0, std::time::Instant::now()));
                }
                _ => {}
            }
            Ok(())
        });
        self.script_statements = statements;
        queued.clear();
        self.queued_script = queued;
        result.map_err(|error| match error.downcast::<ServerError>() {
            Ok(server) => anyhow::Error::new(crate::db::driver::StatementFailure {
                sqlstate: server.code,
                message: server.message,
            }),
            Err(other) => other,
        })
    }

    /// The first column of the one row a statement returns, parsed.
    pub(crate) fn query_value<T: std::str::FromStr>(
        &mut self,
        sql: &str,
        parameters: &[&str],
    ) -> Result<T> {
        let rows = self.query(sql, parameters)?;
        let text = rows
            .first()
            .and_then(|row| row.first().cloned().flatten())
            .ok_or_else(|| anyhow!("{}: no value from `{sql}`", self.target))?;
        text.parse()
            .map_err(|_| anyhow!("{}: unexpected value '{text}' from `{sql}`", self.target))
    }

    /// Runs `work` in a transaction: committed when it succeeds, rolled back when it fails,
    /// so a failure leaves the session usable and the database unchanged.
    pub(crate) fn transaction<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.simple("BEGIN")?;
        match work(self) {
            // An aborted transaction answers COMMIT with ROLLBACK, and no error.
            Ok(value) => match self.simple_tagged("COMMIT")?.as_str() {
                "COMMIT" => Ok(value),
                tag => bail!("{}: the transaction was not committed ({tag})", self.target),
            },
            Err(error) => {
                // The error says what went wrong; a failed rollback adds nothing to it.
                let _ = self.simple("ROLLBACK");
                Err(error)
            }
        }
    }

    /// Makes this a session of corescale's own statements: its search_path becomes
    /// pg_catalog and the session's temporary schema only, so no name in them can resolve to
    /// another role's function, operator or table (a role with CREATE on the database can
    /// make a schema named after the user, first in the default `"$user", public`); they
    /// name corescale's objects in `schema`. The statement that pins is itself qualified.
    pub(crate) fn pin(&mut self, schema: &str) -> Result<()> {
        self.query(
            "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)",
            &[],
        )?;
        self.own_schema = Some(schema.to_string());
        Ok(())
    }

    /// The schema a pinned session names corescale's objects in.
    pub(crate) fn own_schema(&self) -> Option<&str> {
        self.own_schema.as_deref()
    }

    /// The name of the prepared statement for a table and kind. The first use puts its Parse
    /// in the outgoing batch, ahead of the Bind: no wait, and its answer (ParseComplete, or
    /// the error) comes back with the batch's.
    fn prepared(&mut self, schema: u64, update: bool) -> Result<String> {
        let outgoing = &mut self.outgoing;
        let Some(own_schema) = self.own_schema.as_deref() else {
            bail!("corescale's statements run only in a session pinned to its schema");
        };
        let name = self.statements.get(schema, update, |table, update| {
            let quoted = format!("{}.{}", quote_double(own_schema), quote_double(table));
            let (name, sql) = if update {
                (
                    format!("{table}_update"),
                    format!("UPDATE {quoted} SET scratch = scratch + 1 WHERE key BETWEEN $1 AND $2"),
                )
            } else {
                (
                    format!("{table}_select"),
                    format!(
                        "SELECT pg_catalog.sum(scratch)::pg_catalog.int8, pg_catalog.count(*) FROM {quoted} WHERE key BETWEEN $1 AND $2"
                    ),
                )
            };
            frontend::parse(&name, &sql, [INT8_OID, INT8_OID], outgoing)?;
            Ok(name)
        })?;
        Ok(name.clone())
    }

    /// Encodes Bind and Execute of a prepared statement with int8 parameters.
    fn encode_call(&mut self, statement: &str, parameters: &[i64]) -> Result<()> {
        frontend::bind(
            "",
            statement,
            [BINARY],
            parameters.iter(),
            |value, buffer| {
                buffer.put_i64(*value);
                Ok(IsNull::No)
            },
            [BINARY],
            &mut self.outgoing,
        )
        .map_err(|_| anyhow!("encoding a Bind message"))?;
        frontend::execute("", 0, &mut self.outgoing)?;
        Ok(())
    }

    /// Queues one statement of the client loop; with `batch` queued, sends them under one
    /// Sync (one implicit transaction). Keeps up to two batches in flight (one when `batch` is
    /// 1, the classic round trip) and returns what the oldest batch answered once that limit
    /// is reached. An update ends its batch, so its row locks are held no longer than in
    /// autocommit and sessions sharing a table cannot deadlock.
    pub(crate) fn submit(&mut self, planned: PlannedStatement, batch: usize) -> Result<Answered> {
        let name = self.prepared(planned.schema, planned.update)?;
        self.encode_call(&name, &[planned.first_key as i64, planned.last_key as i64])?;
        self.unsent += 1;
        if self.unsent < batch.max(1) && !planned.update {
            return Ok(Answered::default());
        }
        self.send_batch()?;
        let limit = if batch <= 1 { 1 } else { 2 };
        let mut answered = std::mem::take(&mut self.unclaimed);
        if self.in_flight.len() >= limit {
            answered += self.answer_oldest()?;
        }
        Ok(answered)
    }

    /// Sends what is queued and waits for every batch in flight.
    pub(crate) fn drain(&mut self) -> Result<Answered> {
        if self.unsent > 0 {
            self.send_batch()?;
        }
        let mut answered = std::mem::take(&mut self.unclaimed);
        while !self.in_flight.is_empty() {
            answered += self.answer_oldest()?;
        }
        Ok(answered)
    }

    /// Finishes the pipeline before a statement outside it, keeping its answers for later.
    fn settle(&mut self) -> Result<()> {
        let answered = self.drain()?;
        self.unclaimed = answered;
        Ok(())
    }

    fn send_batch(&mut self) -> Result<()> {
        frontend::sync(&mut self.outgoing);
        self.send()?;
        self.in_flight.push_back(self.unsent);
        self.unsent = 0;
        Ok(())
    }

    /// Reads the oldest batch's answers up to its ReadyForQuery.
    fn answer_oldest(&mut self) -> Result<Answered> {
        let Some(_) = self.in_flight.pop_front() else {
            return Ok(Answered::default());
        };
        let mut answered = Answered::default();
        self.read_until_ready(|message| {
            match message {
                Message::DataRow(row) => {
                    answered.selects += 1;
                    answered.rows += int8_column(&row, 1)?.unwrap_or(0) as u64;
                }
                Message::CommandComplete(body) => {
                    if let Some(changed) = body.tag()?.strip_prefix("UPDATE ") {
                        answered.updates += 1;
                        answered.rows += changed.parse::<u64>().unwrap_or(0);
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(answered)
    }

    /// Runs one statement alone with int8 parameters and returns the first column of its
    /// row. The unnamed statement: nothing is left prepared when it fails.
    pub(crate) fn call(&mut self, sql: &str, parameters: &[i64]) -> Result<Option<i64>> {
        self.settle()?;
        frontend::parse(
            "",
            sql,
            parameters.iter().map(|_| INT8_OID),
            &mut self.outgoing,
        )?;
        self.encode_call("", parameters)?;
        frontend::sync(&mut self.outgoing);
        self.send()?;
        let mut first = None;
        self.read_until_ready(|message| {
            if let Message::DataRow(row) = message {
                first = int8_column(&row, 0)?;
            }
            Ok(())
        })?;
        Ok(first)
    }

    /// Reads messages up to ReadyForQuery, learning the backend's process id and the server's
    /// version on the way.
    fn until_ready(&mut self) -> Result<()> {
        let (mut backend_pid, mut server_major) = (None, None);
        self.read_until_ready(|message| {
            match message {
                Message::BackendKeyData(body) => backend_pid = Some(body.process_id() as u32),
                Message::ParameterStatus(body) if body.name()? == "server_version" => {
                    server_major = major_version(body.value()?);
                }
                _ => {}
            }
            Ok(())
        })?;
        if let Some(pid) = backend_pid {
            self.backend_pid = pid;
        }
        self.server_major = server_major;
        Ok(())
    }

    /// Hands every message up to ReadyForQuery to `handle`; then fails with the server's error
    /// if one came (the server skips the rest of a batch after an error, up to its Sync).
    fn read_until_ready(&mut self, mut handle: impl FnMut(Message) -> Result<()>) -> Result<()> {
        let mut failure = None;
        let mut unreadable = None;
        loop {
            let message = match self.next_message() {
                Ok(message) => message,
                // A server that says why and then hangs up (FATAL: no such database, admin
                // shutdown): its words are the reason, not the closed socket.
                Err(closed) => {
                    return Err(match failure {
                        Some(error) if !self.connected => {
                            anyhow!("cannot connect to {}: {error}", self.target)
                        }
                        Some(error) => anyhow::Error::new(error).context(closed.to_string()),
                        None => closed,
                    });
                }
            };
            match message {
                Message::ErrorResponse(body) => failure = Some(ServerError::from_body(&body)),
                Message::ReadyForQuery(_) => break,
                // A message the handler cannot read fails the call, but the rest of the answer
                // is still read: the next call must not find this one's leftovers.
                message => {
                    if let Err(error) = handle(message)
                        && unreadable.is_none()
                    {
                        unreadable = Some(error);
                    }
                }
            }
        }
        match (failure, unreadable) {
            (Some(error), _) => Err(error.into()),
            (None, Some(error)) => Err(error),
            (None, None) => Ok(()),
        }
    }

    /// An I/O failure in words: a wait that hit its limit says so.
    fn failure(&self, error: std::io::Error) -> anyhow::Error {
        match error.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut if !self.connected => {
                anyhow!(
                    "cannot connect to {}: no answer within {} (is the server running, and is this its port? --connect-timeout sets the limit)",
                    self.target,
                    humantime::format_duration(self.target.connect_timeout)
                )
            }
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => anyhow!(
                "{}: the server did not answer within {} (stalled or overloaded?)",
                self.target,
                self.timeout.map_or_else(
                    || "its limit".to_string(),
                    |limit| humantime::format_duration(limit).to_string()
                )
            ),
            _ => anyhow!("{}: the connection failed: {error}", self.target),
        }
    }

    fn send(&mut self) -> Result<()> {
        if let Err(error) = self
            .stream
            .write_all(&self.outgoing)
            .and_then(|()| self.stream.flush())
        {
            return Err(self.failure(error));
        }
        self.outgoing.clear();
        Ok(())
    }

    fn next_message(&mut self) -> Result<Message> {
        loop {
            if let Some(message) = Message::parse(&mut self.incoming)? {
                return Ok(message);
            }
            if self.incoming.is_empty() {
                // Back to the front of its block (the answers read from it are dropped by
                // now): otherwise each answer is put after the last, and the whole 16 KiB
                // of every session's block is written in turn.
                self.incoming.reserve(READ_CHUNK);
            }
            let read = match self.stream.read(self.read_chunk.bytes()) {
                Ok(read) => read,
                Err(error) => return Err(self.failure(error)),
            };
            if read == 0 {
                if self.connected {
                    bail!("{}: the server closed the connection", self.target);
                }
                bail!(
                    "cannot connect to {}: the server closed the connection during the handshake (is this a PostgreSQL port?)",
                    self.target
                );
            }
            self.incoming
                .extend_from_slice(&self.read_chunk.bytes()[..read]);
        }
    }
}

impl<S: Read + Write> Drop for WireSession<S> {
    fn drop(&mut self) {
        self.outgoing.clear();
        frontend::terminate(&mut self.outgoing);
        let _ = self.stream.write_all(&self.outgoing);
    }
}

/// Every column of a text-format row; NULL is None.
fn text_columns(row: &DataRowBody) -> Result<TextRow> {
    let mut columns = Vec::new();
    let mut ranges = row.ranges();
    while let Some(range) = ranges.next()? {
        columns.push(match range {
            Some(range) => Some(
                std::str::from_utf8(&row.buffer()[range])
                    .map_err(|_| anyhow!("the server sent a column that is not UTF-8"))?
                    .to_string(),
            ),
            None => None,
        });
    }
    Ok(columns)
}

/// Column `index` of a binary row of int8 columns; NULL is None.
fn int8_column(row: &DataRowBody, index: usize) -> Result<Option<i64>> {
    let Some(range) = row.ranges().nth(index)? else {
        bail!("the server sent a row without column {}", index + 1);
    };
    let Some(range) = range else {
        return Ok(None);
    };
    let bytes: [u8; 8] = row.buffer()[range]
        .try_into()
        .map_err(|_| anyhow!("the server sent a column that is not int8"))?;
    Ok(Some(i64::from_be_bytes(bytes)))
}

/// The major version in a `server_version` ("15.4 (Debian 15.4-1)", "9.6.24", "17devel").
fn major_version(server_version: &str) -> Option<u32> {
    let digits = server_version
        .find(|c: char| !c.is_ascii_digit())
        .map_or(server_version, |end| &server_version[..end]);
    digits.parse().ok()
}
