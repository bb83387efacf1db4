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

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
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
use crate::db::session_error::{ServerCode, SessionError, SqlState};
use crate::db::{Answer, BoundValue};

/// SQLSTATE of pg_hba.conf's refusals ("no pg_hba.conf entry ... no encryption").
const INVALID_AUTHORIZATION: &str = "28000";
const READ_CHUNK: usize = 16 * 1024;

mod auth;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use stream::{HandshakeFailed, Stream, Transport};

/// A value sent as text (the server infers its type), written straight into the outgoing
/// buffer.
trait TextValue {
    fn write_text(&self, buffer: &mut BytesMut) -> IsNull;
}

impl TextValue for &str {
    fn write_text(&self, buffer: &mut BytesMut) -> IsNull {
        buffer.put_slice(self.as_bytes());
        IsNull::No
    }
}

impl TextValue for BoundValue {
    fn write_text(&self, buffer: &mut BytesMut) -> IsNull {
        match self {
            // The workloads' keys: no formatting machinery on the statement's path.
            BoundValue::Int(value) => {
                buffer.put_slice(itoa::Buffer::new().format(*value).as_bytes())
            }
            BoundValue::Text(text) => buffer.put_slice(text.as_bytes()),
            BoundValue::Double(_) => {
                use std::io::Write as _;
                // Writing into a BytesMut cannot fail.
                let _ = write!(buffer.writer(), "{self}");
            }
            BoundValue::Null => return IsNull::Yes,
        }
        IsNull::No
    }
}

/// Bind (the unnamed portal of `statement`, each value as text), Execute and Sync, encoded
/// into `outgoing`.
fn bind_execute_sync<T: TextValue>(
    outgoing: &mut BytesMut,
    statement: &str,
    values: &[T],
) -> Result<()> {
    bind_execute(outgoing, statement, values)?;
    frontend::sync(outgoing);
    Ok(())
}

/// Bind (values as text) and Execute of a prepared statement, without a Sync.
fn bind_execute<T: TextValue>(
    outgoing: &mut BytesMut,
    statement: &str,
    values: &[T],
) -> Result<()> {
    frontend::bind(
        "",
        statement,
        std::iter::empty(),
        values.iter(),
        |value, buffer| Ok(value.write_text(buffer)),
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

/// How far the server has prepared one of a session's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prepared {
    No,
    /// Its Parse is on its way, in the batch of this number, not yet answered.
    Sent(u64),
    Yes,
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
    /// A workload's statements by its index for them: their names on the server
    /// ("cs_<index>") and how far the server has prepared them.
    statements: Vec<(String, Prepared)>,
    /// Statements queued or in flight, oldest first, by index.
    pending: VecDeque<usize>,
    /// Statements encoded into `outgoing` but not yet sent.
    unsent: usize,
    /// Batches sent and not yet answered, oldest first, with their statement counts.
    in_flight: VecDeque<usize>,
    /// Answers read early (before a statement outside the pipeline), not yet handed out;
    /// and the buffer one statement's answer is read into (both reused).
    early: Vec<(Answer, Instant)>,
    one: Vec<(Answer, Instant)>,
    /// A refusal met while reading answers early: handed out with them.
    early_failure: Option<SessionError>,
    /// Batches sent so far: the number of the one being queued.
    batches_sent: u64,
    /// The limit on one wait for the server.
    timeout: Option<Duration>,
    /// Until the server is ready, failures are failures to connect.
    connected: bool,
    /// When the last bytes came from the server: when the answers in them were read (one
    /// clock read per read from the socket, not one per statement).
    last_read: Instant,
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
            statements: Vec::new(),
            pending: VecDeque::new(),
            unsent: 0,
            in_flight: VecDeque::new(),
            early: Vec::new(),
            one: Vec::new(),
            early_failure: None,
            batches_sent: 0,
            timeout: Some(target.connect_timeout),
            connected: false,
            last_read: Instant::now(),
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

    /// [`WireSession::simple`], answering the rows its statements returned and changed
    /// (summed over a string of several).
    pub(crate) fn simple_answered(&mut self, sql: &str) -> Result<Answer> {
        self.settle()?;
        frontend::query(sql, &mut self.outgoing)?;
        self.send()?;
        let (mut answer, mut returned) = (Answer::default(), 0);
        self.read_until_ready(|message| {
            match message {
                Message::DataRow(_) => returned += 1,
                Message::CommandComplete(body) => {
                    answer.changed += changed_rows(body.tag()?, returned);
                    answer.returned += std::mem::take(&mut returned);
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(answer)
    }

    /// Runs `copy` (a `COPY ... FROM STDIN`) with `data` in COPY's text format, all in one
    /// round trip: a server that refuses the COPY ignores the data that follows, as the
    /// protocol says. Answers the rows the server copied.
    pub(crate) fn copy_in(&mut self, copy: &str, data: &[u8]) -> Result<u64> {
        self.settle()?;
        frontend::query(copy, &mut self.outgoing)?;
        // CopyData messages of at most 1 MiB each: the server reads each whole.
        for chunk in data.chunks(1 << 20) {
            frontend::CopyData::new(chunk)?.write(&mut self.outgoing);
        }
        frontend::copy_done(&mut self.outgoing);
        self.send()?;
        let mut copied = 0;
        self.read_until_ready(|message| {
            if let Message::CommandComplete(body) = message {
                copied = changed_rows(body.tag()?, 0);
            }
            Ok(())
        })?;
        Ok(copied)
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

    /// Runs statement `index`: Parse (named, first use only), Bind with the values as text
    /// (the server infers their types), Execute and Sync in one round trip. The values are
    /// written straight into the outgoing buffer: nothing is allocated.
    pub(crate) fn execute(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<Answer, SessionError> {
        self.settle()?;
        self.queue(index, sql, values)?;
        self.send_batch()?;
        let mut answered = std::mem::take(&mut self.one);
        answered.clear();
        let result = self.answer_oldest(&mut answered);
        let answer = answered
            .first()
            .map(|(answer, _)| *answer)
            .unwrap_or_default();
        self.one = answered;
        result.map(|()| answer)
    }

    /// Encodes statement `index` (Parse on first use, Bind, Execute) without a Sync: sent
    /// with whatever else is queued by [`WireSession::send_batch`].
    pub(crate) fn queue(
        &mut self,
        index: usize,
        sql: &str,
        values: &[BoundValue],
    ) -> Result<(), SessionError> {
        while self.statements.len() <= index {
            let name = format!("cs_{}", self.statements.len());
            self.statements.push((name, Prepared::No));
        }
        // Its Parse is in a batch already sent: should that batch fail before it, this Bind
        // would name a statement the server never prepared. Its answer comes first (once per
        // statement and session).
        if let Prepared::Sent(batch) = self.statements[index].1
            && batch < self.batches_sent
        {
            self.settle()?;
        }
        let batch = self.batches_sent;
        let (name, prepared) = &mut self.statements[index];
        if *prepared == Prepared::No {
            frontend::parse(name, sql, std::iter::empty(), &mut self.outgoing)
                .map_err(|error| anyhow!("encoding a Parse message: {error}"))?;
            *prepared = Prepared::Sent(batch);
        }
        bind_execute(&mut self.outgoing, name, values)?;
        self.pending.push_back(index);
        self.unsent += 1;
        Ok(())
    }

    /// Sends the queued statements under one Sync (one implicit transaction), without
    /// waiting for their answers.
    pub(crate) fn send_batch(&mut self) -> Result<(), SessionError> {
        frontend::sync(&mut self.outgoing);
        self.send().map_err(session_error)?;
        self.in_flight.push_back(self.unsent);
        self.unsent = 0;
        self.batches_sent += 1;
        Ok(())
    }

    /// Statements queued for the next batch, not yet sent.
    pub(crate) fn queued(&self) -> usize {
        self.unsent
    }

    /// Batches sent and not yet handed out, the answers read early counted as one.
    pub(crate) fn batches_in_flight(&self) -> usize {
        self.in_flight.len() + usize::from(self.has_early())
    }

    fn has_early(&self) -> bool {
        !self.early.is_empty() || self.early_failure.is_some()
    }

    /// Hands out the answers read early (with the refusal met among them, if any), else
    /// reads the oldest batch's: each statement's answer and when it was read. A server's
    /// refusal is [`SessionError::Refused`]; the statements before it are in `answered`, the
    /// ones after it in its batch were skipped.
    pub(crate) fn answer_batch(
        &mut self,
        answered: &mut Vec<(Answer, Instant)>,
    ) -> Result<(), SessionError> {
        if self.has_early() {
            answered.append(&mut self.early);
            return self.early_failure.take().map_or(Ok(()), Err);
        }
        self.answer_oldest(answered)
    }

    /// Reads the oldest batch's answers up to its ReadyForQuery.
    fn answer_oldest(&mut self, answered: &mut Vec<(Answer, Instant)>) -> Result<(), SessionError> {
        let Some(size) = self.in_flight.pop_front() else {
            return Ok(());
        };
        // Taken out while the answers are read, put back after (no allocation).
        let mut pending = std::mem::take(&mut self.pending);
        let mut statements = std::mem::take(&mut self.statements);
        let mut answer = Answer::default();
        let mut done = 0;
        let result = self.read_until_ready_at(|message, read_at| {
            match message {
                // The Parse of the statement being answered (each comes before its Bind).
                Message::ParseComplete => {
                    if let Some(index) = pending.front() {
                        statements[*index].1 = Prepared::Yes;
                    }
                }
                Message::DataRow(row) => {
                    answer.returned += 1;
                    answer.value = last_integer(&row);
                }
                Message::CommandComplete(body) => {
                    answer.changed = changed_rows(body.tag()?, answer.returned);
                    answered.push((std::mem::take(&mut answer), read_at));
                    pending.pop_front();
                    done += 1;
                }
                Message::EmptyQueryResponse => {
                    answered.push((Answer::default(), read_at));
                    pending.pop_front();
                    done += 1;
                }
                _ => {}
            }
            Ok(())
        });
        // The server skipped the rest of a batch that failed: their Parses too.
        for _ in done..size {
            if let Some(index) = pending.pop_front()
                && matches!(statements[index].1, Prepared::Sent(_))
            {
                statements[index].1 = Prepared::No;
            }
        }
        self.statements = statements;
        self.pending = pending;
        result.map_err(session_error)
    }

    /// Finishes the pipeline before a statement outside it, keeping its answers, and a
    /// refusal among them, for [`WireSession::answer_batch`]; a connection that failed fails
    /// the statement outside it.
    fn settle(&mut self) -> Result<(), SessionError> {
        if self.unsent > 0 {
            self.send_batch()?;
        }
        let mut early = std::mem::take(&mut self.early);
        let mut after_refusal = Vec::new();
        let mut result = Ok(());
        while !self.in_flight.is_empty() {
            // After a refusal, later batches are read and not handed out: the answers before
            // it, then the refusal, are what the caller gets, as from one batch.
            let into = if self.early_failure.is_some() {
                &mut after_refusal
            } else {
                &mut early
            };
            match self.answer_oldest(into) {
                Ok(()) => {}
                Err(refused @ SessionError::Refused { .. }) => {
                    self.early_failure.get_or_insert(refused);
                }
                Err(failed) => {
                    result = Err(failed);
                    break;
                }
            }
        }
        self.early = early;
        result
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
    /// name corescale's objects qualified by their schema (`Catalogue::own_name`). The
    /// statement that pins is itself qualified.
    pub(crate) fn pin(&mut self) -> Result<()> {
        self.query(
            "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)",
            &[],
        )
        .map(drop)
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
        self.read_until_ready_at(|message, _| handle(message))
    }

    /// [`WireSession::read_until_ready`], handing each message with when it was read.
    fn read_until_ready_at(
        &mut self,
        mut handle: impl FnMut(Message, Instant) -> Result<()>,
    ) -> Result<()> {
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
                    if let Err(error) = handle(message, self.last_read)
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

    /// An I/O failure in words: a wait that hit its limit says so. Once connected, a lost
    /// connection or a timeout, typed for the session (see [`session_error`]).
    fn failure(&self, error: std::io::Error) -> anyhow::Error {
        match error.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut if !self.connected => {
                anyhow!(
                    "cannot connect to {}: no answer within {} (is the server running, and is this its port? --connect-timeout sets the limit)",
                    self.target,
                    humantime::format_duration(self.target.connect_timeout)
                )
            }
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                SessionError::TimedOut(anyhow!(
                    "{}: the server did not answer within {} (stalled or overloaded?)",
                    self.target,
                    self.timeout.map_or_else(
                        || "its limit".to_string(),
                        |limit| humantime::format_duration(limit).to_string()
                    )
                ))
                .into()
            }
            _ if !self.connected => anyhow!("{}: the connection failed: {error}", self.target),
            _ => SessionError::ConnectionLost(anyhow!(
                "{}: the connection failed: {error}",
                self.target
            ))
            .into(),
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
                    return Err(SessionError::ConnectionLost(anyhow!(
                        "{}: the server closed the connection",
                        self.target
                    ))
                    .into());
                }
                bail!(
                    "cannot connect to {}: the server closed the connection during the handshake (is this a PostgreSQL port?)",
                    self.target
                );
            }
            self.last_read = Instant::now();
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

/// A failure of the client as a session meets it: the server's refusal, which the session
/// outlives; a lost connection or a timeout, as [`WireSession::failure`] typed them, or a
/// server that said why and then hung up; anything else as it is.
pub(crate) fn session_error(error: anyhow::Error) -> SessionError {
    let error = match error.downcast::<SessionError>() {
        Ok(typed) => return typed,
        Err(error) => error,
    };
    let Some(server) = error.downcast_ref::<ServerError>() else {
        return SessionError::Other(error);
    };
    match SqlState::new(&server.code) {
        Some(state) if error.chain().count() == 1 => {
            SessionError::refused(ServerCode::SqlState(state), server.message.clone())
        }
        _ if error.chain().count() > 1 => SessionError::ConnectionLost(error),
        _ => SessionError::Other(error),
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

/// The last column of a text-format row, where it is an integer; read in place.
fn last_integer(row: &DataRowBody) -> Option<i64> {
    let mut ranges = row.ranges();
    let mut last = None;
    while let Ok(Some(range)) = ranges.next() {
        last = Some(range);
    }
    let range = last.flatten()?;
    std::str::from_utf8(&row.buffer()[range]).ok()?.parse().ok()
}

/// The rows a command tag says its command changed ("UPDATE 3", "INSERT 0 3"); a query's
/// "SELECT 3" counts rows it returned, not changed, unless it returned none to the client
/// (SELECT INTO, CREATE TABLE AS).
fn changed_rows(tag: &str, returned: u64) -> u64 {
    if tag.starts_with("SELECT ") && returned > 0 {
        return 0;
    }
    tag.rsplit(' ')
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or(0)
}

/// The major version in a `server_version` ("15.4 (Debian 15.4-1)", "9.6.24", "17devel").
fn major_version(server_version: &str) -> Option<u32> {
    let digits = server_version
        .find(|c: char| !c.is_ascii_digit())
        .map_or(server_version, |end| &server_version[..end]);
    digits.parse().ok()
}
