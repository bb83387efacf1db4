//! A PostgreSQL session that speaks the extended query protocol itself (messages from the
//! `postgres-protocol` crate), so statements can be pipelined the way libpq's pipeline mode
//! does: a batch of Bind/Execute pairs under one Sync, answered in one flush. Drivers that
//! put a Sync after every statement make the backend flush and wake the client once per
//! statement, which on a VM costs as much CPU as the statement itself.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::IsNull;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message};
use postgres_protocol::message::frontend;

use super::target::Target;
use super::{Answered, PlannedStatement, PreparedStatements, quote_double};

/// The int8 type, for the statements' parameters.
const INT8_OID: u32 = 20;
/// Binary format for parameters and results.
const BINARY: i16 = 1;
const DEFAULT_PORT: u16 = 5432;
const READ_CHUNK: usize = 16 * 1024;

/// The byte stream to the server: TCP, or a Unix socket in the directory `?host=` names.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn open(target: &Target) -> Result<Self> {
        let port = target.port().unwrap_or(DEFAULT_PORT);
        let stream = match target.socket_directory() {
            Some(directory) => {
                Stream::Unix(UnixStream::connect(format!("{directory}/.s.PGSQL.{port}"))?)
            }
            None => {
                let mut last_error = None;
                let mut connected = None;
                for address in (target.host(), port).to_socket_addrs()? {
                    match TcpStream::connect_timeout(&address, target.connect_timeout) {
                        Ok(stream) => {
                            connected = Some(stream);
                            break;
                        }
                        Err(error) => last_error = Some(error),
                    }
                }
                let stream = connected.ok_or_else(|| {
                    last_error.unwrap_or_else(|| {
                        std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
                    })
                })?;
                // Batches go out whole; Nagle would hold the next one back.
                stream.set_nodelay(true)?;
                Stream::Tcp(stream)
            }
        };
        // Until the server is ready, the connect timeout bounds every wait.
        stream.set_timeouts(Some(target.connect_timeout))?;
        Ok(stream)
    }

    fn set_timeouts(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(stream) => {
                stream.set_read_timeout(timeout)?;
                stream.set_write_timeout(timeout)
            }
            Stream::Unix(stream) => {
                stream.set_read_timeout(timeout)?;
                stream.set_write_timeout(timeout)
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.read(buffer),
            Stream::Unix(stream) => stream.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.write(buffer),
            Stream::Unix(stream) => stream.write(buffer),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(stream) => stream.flush(),
            Stream::Unix(stream) => stream.flush(),
        }
    }
}

/// An error the server sent: its SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (SQLSTATE {code})")]
pub struct ServerError {
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

/// One session: the connection, its prepared statements and the batches in flight.
pub struct WireSession {
    stream: Stream,
    target: Target,
    incoming: BytesMut,
    outgoing: BytesMut,
    backend_pid: u32,
    statements: PreparedStatements<String>,
    /// Statements encoded into `outgoing` but not yet sent.
    unsent: usize,
    /// Batches sent and not yet answered, oldest first, with their statement counts.
    in_flight: VecDeque<usize>,
    /// Answers read early (before a statement outside the pipeline), not yet returned.
    unclaimed: Answered,
    /// The limit on one wait for the server.
    timeout: Option<Duration>,
}

impl WireSession {
    /// Connects, authenticates (trust, password, MD5 or SCRAM-SHA-256) and waits until the
    /// server is ready.
    pub fn connect(target: &Target) -> Result<Self> {
        let stream = Stream::open(target).map_err(|error| {
            anyhow!(
                "cannot connect to {target}: {error} (is the server running and the URL right?)"
            )
        })?;
        let mut session = Self {
            stream,
            target: target.clone(),
            incoming: BytesMut::with_capacity(READ_CHUNK),
            outgoing: BytesMut::with_capacity(READ_CHUNK),
            backend_pid: 0,
            statements: PreparedStatements::default(),
            unsent: 0,
            in_flight: VecDeque::new(),
            unclaimed: Answered::default(),
            timeout: Some(target.connect_timeout),
        };
        let (user, database) = (target.user(), target.database());
        let parameters = [
            ("user", user.as_str()),
            ("database", database.as_str()),
            ("application_name", "corescale"),
        ];
        frontend::startup_message(parameters, &mut session.outgoing)?;
        session.send()?;
        session.authenticate()?;
        session.until_ready()?;
        session.stream.set_timeouts(target.answer_timeout)?;
        session.timeout = target.answer_timeout;
        Ok(session)
    }

    pub fn backend_pid(&self) -> u32 {
        self.backend_pid
    }

    fn authenticate(&mut self) -> Result<()> {
        let mut scram: Option<ScramSha256> = None;
        loop {
            match self.next_message()? {
                Message::AuthenticationOk => return Ok(()),
                Message::AuthenticationCleartextPassword => {
                    let password = self.password()?;
                    frontend::password_message(password.as_bytes(), &mut self.outgoing)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = self.password()?;
                    let hash = md5_hash(
                        self.target.user().as_bytes(),
                        password.as_bytes(),
                        body.salt(),
                    );
                    frontend::password_message(hash.as_bytes(), &mut self.outgoing)?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let mut offered = false;
                    while let Some(mechanism) = mechanisms.next()? {
                        offered |= mechanism == SCRAM_SHA_256;
                    }
                    if !offered {
                        bail!(
                            "{}: the server offers no SASL mechanism corescale knows (it speaks SCRAM-SHA-256)",
                            self.target
                        );
                    }
                    let exchange = ScramSha256::new(
                        self.password()?.as_bytes(),
                        ChannelBinding::unsupported(),
                    );
                    frontend::sasl_initial_response(
                        SCRAM_SHA_256,
                        exchange.message(),
                        &mut self.outgoing,
                    )?;
                    scram = Some(exchange);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let exchange = scram
                        .as_mut()
                        .ok_or_else(|| anyhow!("{}: SASL step before its start", self.target))?;
                    exchange.update(body.data())?;
                    frontend::sasl_response(exchange.message(), &mut self.outgoing)?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let exchange = scram
                        .as_mut()
                        .ok_or_else(|| anyhow!("{}: SASL end before its start", self.target))?;
                    exchange.finish(body.data())?;
                    continue;
                }
                Message::ErrorResponse(body) => {
                    let error = ServerError::from_body(&body);
                    bail!("cannot connect to {}: {error}", self.target);
                }
                _ => bail!(
                    "{}: the server asks for an authentication method corescale does not speak (use password, md5 or scram-sha-256)",
                    self.target
                ),
            }
            self.send()?;
        }
    }

    fn password(&self) -> Result<String> {
        self.target.password().ok_or_else(|| {
            anyhow!(
                "{} asks for a password: give it in the URL, in CORESCALE_DB_PASSWORD or with --password-prompt",
                self.target
            )
        })
    }

    /// Runs SQL through the simple protocol and discards any rows.
    pub fn simple(&mut self, sql: &str) -> Result<()> {
        self.settle()?;
        frontend::query(sql, &mut self.outgoing)?;
        self.send()?;
        self.until_ready()
    }

    /// The name of the prepared statement for a table and kind. The first use puts its Parse
    /// in the outgoing batch, ahead of the Bind: no wait, and its answer (ParseComplete, or
    /// the error) comes back with the batch's.
    fn prepared(&mut self, schema: u64, update: bool) -> Result<String> {
        let outgoing = &mut self.outgoing;
        let name = self.statements.get(schema, update, |table, update| {
            let quoted = quote_double(table);
            let (name, sql) = if update {
                (
                    format!("{table}_update"),
                    format!("UPDATE {quoted} SET scratch = scratch + 1 WHERE key BETWEEN $1 AND $2"),
                )
            } else {
                (
                    format!("{table}_select"),
                    format!(
                        "SELECT sum(scratch)::bigint, count(*) FROM {quoted} WHERE key BETWEEN $1 AND $2"
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
    pub fn submit(&mut self, planned: PlannedStatement, batch: usize) -> Result<Answered> {
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
    pub fn drain(&mut self) -> Result<Answered> {
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

    /// Runs one prepared call alone and returns the first column of its row.
    pub fn call(&mut self, name: &str, sql: &str, parameters: &[i64]) -> Result<Option<i64>> {
        self.settle()?;
        frontend::parse(
            name,
            sql,
            parameters.iter().map(|_| INT8_OID),
            &mut self.outgoing,
        )?;
        self.encode_call(name, parameters)?;
        frontend::close(b'S', name, &mut self.outgoing)?;
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

    /// Reads messages up to ReadyForQuery, learning the backend's process id on the way.
    fn until_ready(&mut self) -> Result<()> {
        let mut backend_pid = None;
        self.read_until_ready(|message| {
            if let Message::BackendKeyData(body) = message {
                backend_pid = Some(body.process_id() as u32);
            }
            Ok(())
        })?;
        if let Some(pid) = backend_pid {
            self.backend_pid = pid;
        }
        Ok(())
    }

    /// Hands every message up to ReadyForQuery to `handle`; then fails with the server's error
    /// if one came (the server skips the rest of a batch after an error, up to its Sync).
    fn read_until_ready(&mut self, mut handle: impl FnMut(Message) -> Result<()>) -> Result<()> {
        let mut failure = None;
        loop {
            match self.next_message()? {
                Message::ErrorResponse(body) => failure = Some(ServerError::from_body(&body)),
                Message::ReadyForQuery(_) => break,
                message => handle(message)?,
            }
        }
        match failure {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    }

    /// An I/O failure in words: a wait that hit its limit says so.
    fn failure(&self, error: std::io::Error) -> anyhow::Error {
        match error.kind() {
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
        if let Err(error) = self.stream.write_all(&self.outgoing) {
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
            let mut chunk = [0u8; READ_CHUNK];
            let read = match self.stream.read(&mut chunk) {
                Ok(read) => read,
                Err(error) => return Err(self.failure(error)),
            };
            if read == 0 {
                bail!("{}: the server closed the connection", self.target);
            }
            self.incoming.extend_from_slice(&chunk[..read]);
        }
    }
}

impl Drop for WireSession {
    fn drop(&mut self) {
        self.outgoing.clear();
        frontend::terminate(&mut self.outgoing);
        let _ = self.stream.write_all(&self.outgoing);
    }
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
