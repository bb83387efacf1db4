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
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
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

use super::settings::{ChannelBindingMode, Endpoint, TlsMode};
use super::target::Target;
use super::tls::{self, TlsFacts};
use super::{Answered, PlannedStatement, PreparedStatements, quote_double};

/// The int8 type, for the statements' parameters.
const INT8_OID: u32 = 20;
/// Binary format for parameters and results.
const BINARY: i16 = 1;
/// SQLSTATE of pg_hba.conf's refusals ("no pg_hba.conf entry ... no encryption").
const INVALID_AUTHORIZATION: &str = "28000";
const READ_CHUNK: usize = 16 * 1024;

/// The byte stream to the server: TCP, TLS over TCP, or a Unix socket.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

/// What a session runs over: whether TLS, with what, and the server certificate's hash for
/// SCRAM channel binding.
#[derive(Debug, Clone, Default)]
pub(crate) struct Transport {
    pub tls: Option<TlsFacts>,
    pub end_point: Option<Vec<u8>>,
}

/// The TLS handshake failed (not the server's refusal of TLS): `prefer` then tries clear text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HandshakeFailed(String);

impl Stream {
    /// Connects to the target's endpoint and, over TCP, negotiates TLS as `mode` says.
    fn open(target: &Target, mode: TlsMode) -> Result<(Self, Transport)> {
        let reached = target.reached();
        let timeout = Some(target.connect_timeout);
        match target.endpoint() {
            Endpoint::Socket(path) => {
                let stream = UnixStream::connect(path).map_err(|error| {
                    anyhow!(
                        "cannot connect to {reached}: socket {}: {error} (is the server running, and is this its socket directory and port?)",
                        path.display()
                    )
                })?;
                let stream = Stream::Unix(stream);
                // Until the server is ready, the connect timeout bounds every wait.
                stream.set_timeouts(timeout)?;
                Ok((stream, Transport::default()))
            }
            Endpoint::Tcp { host, port } => {
                let tcp = connect_tcp(host, *port, target.connect_timeout).map_err(|error| {
                    anyhow!(
                        "cannot connect to {reached}: {host}:{port}: {error} (is the server running and the URL right?)"
                    )
                })?;
                // Batches go out whole; Nagle would hold the next one back.
                tcp.set_nodelay(true)?;
                tcp.set_read_timeout(timeout)?;
                tcp.set_write_timeout(timeout)?;
                match mode {
                    TlsMode::Disable | TlsMode::Allow => {
                        Ok((Stream::Tcp(tcp), Transport::default()))
                    }
                    _ => Self::negotiate(tcp, target, host, mode),
                }
            }
        }
    }

    /// PostgreSQL's SSLRequest: the server answers S (TLS follows) or N (clear text only).
    fn negotiate(
        mut tcp: TcpStream,
        target: &Target,
        host: &str,
        mode: TlsMode,
    ) -> Result<(Self, Transport)> {
        let reached = target.reached();
        let tls = &target.settings().tls;
        let mut request = BytesMut::new();
        frontend::ssl_request(&mut request);
        let mut answer = [0u8; 1];
        tcp.write_all(&request)
            .and_then(|()| tcp.read_exact(&mut answer))
            .map_err(|error| match error.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => anyhow!(
                    "cannot connect to {reached}: no answer within {} (is the server running, and is this its port? --connect-timeout sets the limit)",
                    humantime::format_duration(target.connect_timeout)
                ),
                _ => anyhow!(
                    "cannot connect to {reached}: asking for TLS: {error} (is this a PostgreSQL port?)"
                ),
            })?;
        match answer[0] {
            b'S' => {}
            b'N' if !mode.demands_tls() => return Ok((Stream::Tcp(tcp), Transport::default())),
            b'N' => bail!(
                "cannot connect to {reached}: the server does not accept TLS (ssl = off), but {} asks for it: turn ssl on in the server, or use sslmode=prefer to allow clear text",
                tls.shown()
            ),
            other => bail!(
                "cannot connect to {reached}: the server answered the TLS request with {:?}, not S or N (is this a PostgreSQL port?)",
                char::from(other)
            ),
        }
        let (config, name) = tls::client_config(tls, host)
            .map_err(|error| anyhow!("cannot connect to {reached}: {error:#}"))?;
        let mut connection = rustls::ClientConnection::new(config, name)
            .map_err(|error| anyhow!("cannot connect to {reached}: starting TLS: {error}"))?;
        while connection.is_handshaking() {
            if let Err(error) = connection.complete_io(&mut tcp) {
                let reason = match error
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                {
                    Some(tls_error) => tls::explain_handshake(tls_error, tls, host),
                    None => format!("the TLS handshake failed: {error}"),
                };
                return Err(anyhow::Error::new(HandshakeFailed(format!(
                    "cannot connect to {reached}: {reason}"
                ))));
            }
        }
        let transport = Transport {
            tls: Some(TlsFacts::of(&connection)),
            end_point: connection
                .peer_certificates()
                .and_then(|certificates| certificates.first())
                .map(|certificate| tls::server_end_point(certificate)),
        };
        Ok((
            Stream::Tls(Box::new(rustls::StreamOwned::new(connection, tcp))),
            transport,
        ))
    }

    fn set_timeouts(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(stream) => {
                stream.set_read_timeout(timeout)?;
                stream.set_write_timeout(timeout)
            }
            Stream::Tls(stream) => {
                stream.sock.set_read_timeout(timeout)?;
                stream.sock.set_write_timeout(timeout)
            }
            Stream::Unix(stream) => {
                stream.set_read_timeout(timeout)?;
                stream.set_write_timeout(timeout)
            }
        }
    }
}

/// The first address of `host` that accepts within the timeout.
fn connect_tcp(host: &str, port: u16, timeout: Duration) -> std::io::Result<TcpStream> {
    let mut last_error = None;
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => return Ok(stream),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error
        .unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address")))
}

impl Read for Stream {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.read(buffer),
            Stream::Tls(stream) => stream.read(buffer),
            Stream::Unix(stream) => stream.read(buffer),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(stream) => stream.write(buffer),
            Stream::Tls(stream) => stream.write(buffer),
            Stream::Unix(stream) => stream.write(buffer),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(stream) => stream.flush(),
            Stream::Tls(stream) => stream.flush(),
            Stream::Unix(stream) => stream.flush(),
        }
    }
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
    outgoing: BytesMut,
    backend_pid: u32,
    /// The server's major version, from its `server_version` at startup.
    server_major: Option<u32>,
    statements: PreparedStatements<String>,
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
            outgoing: BytesMut::with_capacity(READ_CHUNK),
            backend_pid: 0,
            server_major: None,
            statements: PreparedStatements::default(),
            unsent: 0,
            in_flight: VecDeque::new(),
            unclaimed: Answered::default(),
            timeout: Some(target.connect_timeout),
            connected: false,
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

    fn authenticate(&mut self) -> Result<()> {
        let binding = self.target.settings().tls.channel_binding.value;
        let mut scram: Option<ScramSha256> = None;
        let mut bound = false;
        // A SASL exchange is only done when the server's final message proved it knows the
        // password: an AuthenticationOk before that is a server (or a man in the middle)
        // skipping the proof, and is refused, as libpq refuses it.
        let mut sasl_started = false;
        let mut sasl_finished = false;
        loop {
            match self.next_message()? {
                Message::AuthenticationOk => {
                    if sasl_started && !sasl_finished {
                        bail!(
                            "cannot connect to {}: the server said authentication succeeded before completing SCRAM (it did not prove it knows the password): refusing the connection",
                            self.target
                        );
                    }
                    if binding == ChannelBindingMode::Require && !bound {
                        bail!(
                            "cannot connect to {}: channel_binding=require, but the server authenticated corescale without channel binding (it did not ask for SCRAM over TLS): use scram-sha-256 over TLS on the server, or channel_binding=prefer",
                            self.target
                        );
                    }
                    return Ok(());
                }
                Message::AuthenticationCleartextPassword => {
                    self.refuse_unbound("password")?;
                    let password = self.password()?;
                    frontend::password_message(password.as_bytes(), &mut self.outgoing)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    self.refuse_unbound("md5")?;
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
                    let (mut plain, mut plus) = (false, false);
                    while let Some(mechanism) = mechanisms.next()? {
                        plain |= mechanism == SCRAM_SHA_256;
                        plus |= mechanism == SCRAM_SHA_256_PLUS;
                    }
                    let end_point = self.transport.end_point.clone();
                    let (mechanism, channel) = match (end_point, plus, binding) {
                        (
                            Some(end_point),
                            true,
                            ChannelBindingMode::Prefer | ChannelBindingMode::Require,
                        ) => {
                            bound = true;
                            (
                                SCRAM_SHA_256_PLUS,
                                ChannelBinding::tls_server_end_point(end_point),
                            )
                        }
                        (_, _, ChannelBindingMode::Require) => bail!(
                            "cannot connect to {}: channel_binding=require, but {}: connect over TLS (sslmode=require or stricter) to a server that offers SCRAM-SHA-256-PLUS",
                            self.target,
                            if self.transport.tls.is_none() {
                                "this connection has no TLS"
                            } else {
                                "the server offers no SCRAM-SHA-256-PLUS"
                            }
                        ),
                        // Over TLS the client could bind: tell the server ("y"), so a man in the
                        // middle cannot strip the PLUS mechanism unnoticed.
                        (Some(_), false, ChannelBindingMode::Prefer) => {
                            (SCRAM_SHA_256, ChannelBinding::unrequested())
                        }
                        _ => (SCRAM_SHA_256, ChannelBinding::unsupported()),
                    };
                    if mechanism == SCRAM_SHA_256 && !plain {
                        if plus {
                            bail!(
                                "cannot connect to {}: the server offers only SCRAM-SHA-256-PLUS (channel binding), which {}: connect over TLS with channel_binding=prefer or require",
                                self.target,
                                if binding == ChannelBindingMode::Disable {
                                    "channel_binding=disable turns off"
                                } else {
                                    "needs TLS"
                                }
                            );
                        }
                        bail!(
                            "{}: the server offers no SASL mechanism corescale knows (it speaks SCRAM-SHA-256)",
                            self.target
                        );
                    }
                    let exchange = ScramSha256::new(self.password()?.as_bytes(), channel);
                    frontend::sasl_initial_response(
                        mechanism,
                        exchange.message(),
                        &mut self.outgoing,
                    )?;
                    scram = Some(exchange);
                    sasl_started = true;
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
                    sasl_finished = true;
                    continue;
                }
                Message::ErrorResponse(body) => {
                    let error = ServerError::from_body(&body);
                    if self.transport.tls.is_none() && error.code == INVALID_AUTHORIZATION {
                        let tls = &self.target.settings().tls;
                        let text = format!(
                            "cannot connect to {}: {error}. corescale connected without TLS ({}{}): if the server accepts this user only over TLS, use sslmode=require, or verify-full with sslrootcert",
                            self.target,
                            tls.shown(),
                            if matches!(self.target.endpoint(), Endpoint::Socket(_)) {
                                ", over a Unix socket"
                            } else {
                                ""
                            }
                        );
                        return Err(anyhow::Error::new(RefusedWithoutTls(text)));
                    }
                    return Err(anyhow::Error::new(error))
                        .with_context(|| format!("cannot connect to {}", self.target));
                }
                _ => bail!(
                    "{}: the server asks for an authentication method corescale does not speak (use password, md5 or scram-sha-256)",
                    self.target
                ),
            }
            self.send()?;
        }
    }

    /// With `channel_binding=require`, a password method that cannot bind is refused before
    /// the password is sent.
    fn refuse_unbound(&self, method: &str) -> Result<()> {
        if self.target.settings().tls.channel_binding.value == ChannelBindingMode::Require {
            bail!(
                "cannot connect to {}: channel_binding=require, but the server asks for the {method} method, which cannot bind: use scram-sha-256 over TLS on the server, or channel_binding=prefer",
                self.target
            );
        }
        Ok(())
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
        frontend::bind(
            "",
            "",
            std::iter::empty(),
            parameters.iter(),
            |value, buffer| {
                buffer.put_slice(value.as_bytes());
                Ok(IsNull::No)
            },
            std::iter::empty(),
            &mut self.outgoing,
        )
        .map_err(|_| anyhow!("encoding a Bind message"))?;
        frontend::execute("", 0, &mut self.outgoing)?;
        frontend::sync(&mut self.outgoing);
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
            let mut chunk = [0u8; READ_CHUNK];
            let read = match self.stream.read(&mut chunk) {
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
            self.incoming.extend_from_slice(&chunk[..read]);
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

#[cfg(test)]
mod tests {
    //! The client against scripted server bytes: no server needed, every branch reachable.
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Plays the server: answers from a script, records what the client sent.
    struct Scripted {
        answers: Cursor<Vec<u8>>,
        sent: Arc<Mutex<Vec<u8>>>,
    }

    impl Read for Scripted {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            self.answers.read(buffer)
        }
    }

    impl Write for Scripted {
        fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
            self.sent.lock().unwrap().extend_from_slice(buffer);
            Ok(buffer.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// One backend message: tag, length, body.
    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    fn auth(code: i32, extra: &[u8]) -> Vec<u8> {
        let mut body = code.to_be_bytes().to_vec();
        body.extend_from_slice(extra);
        message(b'R', &body)
    }

    fn ready() -> Vec<u8> {
        message(b'Z', b"I")
    }

    fn key_data(pid: i32) -> Vec<u8> {
        let mut body = pid.to_be_bytes().to_vec();
        body.extend_from_slice(&7i32.to_be_bytes());
        message(b'K', &body)
    }

    /// The server's greeting after trust authentication.
    fn greeting(pid: i32) -> Vec<u8> {
        [auth(0, &[]), key_data(pid), ready()].concat()
    }

    fn error(code: &str, text: &str) -> Vec<u8> {
        let body = format!("SERROR\0C{code}\0M{text}\0\0");
        message(b'E', body.as_bytes())
    }

    fn complete(tag: &str) -> Vec<u8> {
        message(b'C', format!("{tag}\0").as_bytes())
    }

    /// A row of columns, binary int8 or text; None is NULL.
    fn row(columns: &[Option<Vec<u8>>]) -> Vec<u8> {
        let mut body = (columns.len() as i16).to_be_bytes().to_vec();
        for column in columns {
            match column {
                Some(bytes) => {
                    body.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                    body.extend_from_slice(bytes);
                }
                None => body.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        message(b'D', &body)
    }

    fn int8(value: i64) -> Option<Vec<u8>> {
        Some(value.to_be_bytes().to_vec())
    }

    /// A select's answer in a pipelined batch: bind, row (sum, count), command complete.
    fn select_answer(count: i64) -> Vec<u8> {
        [
            message(b'2', &[]),
            row(&[int8(0), int8(count)]),
            complete("SELECT 1"),
        ]
        .concat()
    }

    fn target(url: &str) -> Target {
        Target::parse(url).unwrap()
    }

    fn session(url: &str, script: Vec<u8>) -> (Result<WireSession<Scripted>>, Arc<Mutex<Vec<u8>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let stream = Scripted {
            answers: Cursor::new(script),
            sent: Arc::clone(&sent),
        };
        (
            WireSession::start(stream, &target(url), Transport::default()),
            sent,
        )
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack
            .windows(needle.len())
            .any(|window| window == needle)
    }

    #[test]
    fn the_server_version_is_read_at_startup() {
        let status = message(
            b'S',
            b"server_version\x0015.4 (Debian 15.4-1.pgdg120+1)\x00",
        );
        let script = [auth(0, &[]), status, key_data(1), ready()].concat();
        let (session, _) = session("postgres://u@db/x", script);
        assert_eq!(session.unwrap().server_major(), Some(15));
        for (text, major) in [("9.6.24", Some(9)), ("17devel", Some(17)), ("x", None)] {
            assert_eq!(major_version(text), major, "{text}");
        }
    }

    /// A server (or a man in the middle) that answers the first SCRAM message with "ok",
    /// skipping the proof that it knows the password, is refused; so is one that does the same
    /// after offering channel binding.
    #[test]
    fn an_unproven_scram_success_is_refused() {
        let mechanisms = b"SCRAM-SHA-256\0\0";
        let script = [auth(10, mechanisms), greeting(1)].concat();
        let (outcome, _) = session("postgres://u:secret-pw@db/x", script);
        let error = outcome.err().unwrap().to_string();
        assert!(error.contains("before completing SCRAM"), "{error}");
        assert!(!error.contains("secret-pw"), "{error}");
        // Without a password method at all, channel_binding=require refuses "ok" outright.
        let (outcome, _) = session("postgres://u@db/x?channel_binding=require", greeting(1));
        let error = outcome.err().unwrap().to_string();
        assert!(error.contains("without channel binding"), "{error}");
    }

    #[test]
    fn trust_authentication_learns_the_backend() {
        let (session, sent) = session("postgres://alice@db/shop", greeting(4242));
        let session = session.unwrap();
        assert_eq!(session.backend_pid(), 4242);
        assert_eq!(session.server_major(), None, "no server_version was sent");
        let sent = sent.lock().unwrap();
        assert!(contains(&sent, b"user\0alice\0"));
        assert!(contains(&sent, b"database\0shop\0"));
        assert!(contains(&sent, b"application_name\0corescale\0"));
    }

    #[test]
    fn md5_authentication_sends_the_salted_hash_never_the_password() {
        let salt = [1, 2, 3, 4];
        let script = [auth(5, &salt), greeting(1)].concat();
        let (session, sent) = session("postgres://alice:s3cret@db/shop", script);
        session.unwrap();
        let expected = md5_hash(b"alice", b"s3cret", salt);
        let sent = sent.lock().unwrap();
        assert!(contains(&sent, expected.as_bytes()));
        assert!(!contains(&sent, b"s3cret"));
    }

    #[test]
    fn a_password_request_without_a_password_names_the_ways_to_give_one() {
        let (session, _) = session("postgres://alice@db/shop", auth(3, &[]));
        let text = format!("{:#}", session.err().unwrap());
        assert!(text.contains("CORESCALE_DB_PASSWORD"), "{text}");
    }

    #[test]
    fn a_refused_login_is_a_connect_failure_with_the_servers_words() {
        let script = [
            auth(5, &[0; 4]),
            error("28P01", "password authentication failed"),
        ]
        .concat();
        let (session, _) = session("postgres://alice:wrong@db/shop", script);
        let text = format!("{:#}", session.err().unwrap());
        assert!(
            text.starts_with("cannot connect to postgres://alice:***@db/shop"),
            "{text}"
        );
        assert!(
            text.contains("password authentication failed (SQLSTATE 28P01)"),
            "{text}"
        );
        assert!(!text.contains("wrong"), "{text}");
    }

    #[test]
    fn a_server_that_says_why_and_hangs_up_is_quoted() {
        let script = [
            auth(0, &[]),
            error("3D000", "database \"shop\" does not exist"),
        ]
        .concat();
        let (refused, _) = session("postgres://alice@db/shop", script);
        let text = format!("{:#}", refused.err().unwrap());
        assert_eq!(
            text,
            "cannot connect to postgres://alice@db/shop: database \"shop\" does not exist (SQLSTATE 3D000)"
        );
        // Mid-run, an administrator's shutdown keeps its SQLSTATE for the hints.
        let answers = [
            greeting(1),
            message(b'1', &[]),
            error(
                "57P01",
                "terminating connection due to administrator command",
            ),
        ]
        .concat();
        let (shut, _) = session("postgres://alice@db/shop", answers);
        let error = shut.unwrap().submit(planned(0), 1).unwrap_err();
        assert_eq!(error.downcast_ref::<ServerError>().unwrap().code, "57P01");
        assert!(
            format!("{error:#}").contains("closed the connection"),
            "{error:#}"
        );
    }

    #[test]
    fn a_server_that_hangs_up_during_the_handshake_is_named() {
        let (session, _) = session("postgres://alice@db/shop", auth(0, &[]));
        let text = format!("{:#}", session.err().unwrap());
        assert!(
            text.contains("closed the connection during the handshake"),
            "{text}"
        );
    }

    fn planned(first_key: u64) -> PlannedStatement {
        PlannedStatement {
            schema: 0,
            update: false,
            first_key,
            last_key: first_key + 9,
        }
    }

    #[test]
    fn a_pipelined_batch_is_answered_together_and_counted() {
        // Batch of 3: parse once, three bind/row/complete, one ReadyForQuery.
        let answers = [
            greeting(1),
            message(b'1', &[]),
            select_answer(10),
            select_answer(10),
            select_answer(9),
            ready(),
        ]
        .concat();
        let (session, sent) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        let start = sent.lock().unwrap().len();
        for key in 0..3 {
            assert_eq!(
                session.submit(planned(key), 3).unwrap(),
                Answered::default()
            );
        }
        // Sent as one write: one Parse, three Binds and Executes, one Sync.
        let batch = sent.lock().unwrap()[start..].to_vec();
        let syncs = batch
            .windows(5)
            .filter(|w| *w == [b'S', 0, 0, 0, 4])
            .count();
        let executes = batch.windows(1).filter(|w| w[0] == b'E').count();
        assert_eq!(syncs, 1);
        assert!(executes >= 3, "{executes}");
        assert!(contains(&batch, b"corescale_t0_select\0"));
        let answered = session.drain().unwrap();
        assert_eq!(
            answered,
            Answered {
                selects: 3,
                updates: 0,
                rows: 29
            }
        );
    }

    #[test]
    fn an_error_mid_batch_fails_the_batch_with_its_sqlstate_and_the_session_goes_on() {
        let answers = [
            greeting(1),
            message(b'1', &[]),
            select_answer(10),
            error("40P01", "deadlock detected"),
            ready(),
            // The next statement on the same session is answered normally.
            select_answer(10),
            ready(),
        ]
        .concat();
        let (session, _) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        session.submit(planned(0), 2).unwrap();
        session.submit(planned(1), 2).unwrap();
        let error = session.drain().unwrap_err();
        let server = error.downcast_ref::<ServerError>().unwrap();
        assert_eq!(server.code, "40P01");
        assert_eq!(format!("{error}"), "deadlock detected (SQLSTATE 40P01)");
        // One statement alone is answered before submit returns.
        assert_eq!(session.submit(planned(2), 1).unwrap().selects, 1);
    }

    #[test]
    fn a_server_that_closes_mid_answer_is_a_clear_failure() {
        let answers = [greeting(1), message(b'1', &[]), select_answer(10)].concat();
        let (session, _) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        // Alone, the statement waits for its ReadyForQuery and meets the closed socket.
        let text = format!("{:#}", session.submit(planned(0), 1).unwrap_err());
        assert_eq!(
            text,
            "postgres://alice@db/shop: the server closed the connection"
        );
    }

    #[test]
    fn text_queries_bind_values_and_read_nulls() {
        let answers = [
            greeting(1),
            message(b'1', &[]),
            message(b'2', &[]),
            row(&[Some(b"table".to_vec()), None]),
            row(&[Some(b"function".to_vec()), Some(b"x".to_vec())]),
            complete("SELECT 2"),
            ready(),
        ]
        .concat();
        let (session, sent) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        let rows = session
            .query(
                "SELECT kind, name FROM t WHERE name = $1",
                &["o'hara\"; DROP"],
            )
            .unwrap();
        assert_eq!(
            rows,
            vec![
                vec![Some("table".to_string()), None],
                vec![Some("function".to_string()), Some("x".to_string())]
            ]
        );
        // The value travels as a bound parameter, never inside the SQL text.
        let sent = sent.lock().unwrap();
        assert!(contains(
            &sent,
            b"SELECT kind, name FROM t WHERE name = $1\0"
        ));
        assert!(contains(&sent, b"o'hara\"; DROP"));
    }

    #[test]
    fn an_unreadable_answer_fails_its_call_and_the_next_call_reads_its_own() {
        let answers = [
            greeting(1),
            // A text column that is not UTF-8, then the rest of that answer.
            message(b'1', &[]),
            message(b'2', &[]),
            row(&[Some(vec![0xff, 0xfe])]),
            row(&[Some(b"stale".to_vec())]),
            complete("SELECT 2"),
            ready(),
            // The next call's own answer.
            message(b'1', &[]),
            message(b'2', &[]),
            row(&[Some(b"fresh".to_vec())]),
            complete("SELECT 1"),
            ready(),
        ]
        .concat();
        let (session, _) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        let error = session.query("SELECT name FROM t", &[]).unwrap_err();
        assert!(format!("{error}").contains("not UTF-8"), "{error}");
        let value: String = session.query_value("SELECT 'fresh'", &[]).unwrap();
        assert_eq!(value, "fresh");
    }

    #[test]
    fn a_commit_the_server_turned_into_a_rollback_is_an_error() {
        let answers = [
            greeting(1),
            complete("BEGIN"),
            ready(),
            complete("ROLLBACK"),
            ready(),
        ]
        .concat();
        let (session, _) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        let error = session.transaction(|_| Ok(())).unwrap_err();
        assert!(
            format!("{error}").contains("not committed (ROLLBACK)"),
            "{error}"
        );
    }

    #[test]
    fn a_failed_transaction_is_rolled_back() {
        let answers = [
            greeting(1),
            complete("BEGIN"),
            ready(),
            message(b'1', &[]),
            error("42P01", "relation \"corescale_t0\" does not exist"),
            message(b'Z', b"E"),
            complete("ROLLBACK"),
            ready(),
        ]
        .concat();
        let (session, sent) = session("postgres://alice@db/shop", answers);
        let mut session = session.unwrap();
        let outcome: Result<()> = session.transaction(|session| {
            session.query("DELETE FROM corescale_t0", &[])?;
            Ok(())
        });
        assert!(format!("{}", outcome.unwrap_err()).contains("SQLSTATE 42P01"));
        let sent = sent.lock().unwrap();
        assert!(contains(&sent, b"ROLLBACK\0"));
        assert!(!contains(&sent, b"COMMIT\0"));
    }
}
