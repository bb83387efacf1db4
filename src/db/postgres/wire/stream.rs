//! The byte stream to the server, and its opening: TCP or a Unix socket, TLS negotiated as
//! sslmode says, timeouts.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::db::connect::settings::{Endpoint, TlsMode};
use crate::db::connect::target::Target;
use crate::db::connect::tls::{self, TlsFacts};

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
    pub(super) fn open(target: &Target, mode: TlsMode) -> Result<(Self, Transport)> {
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

    pub(super) fn set_timeouts(&self, timeout: Option<Duration>) -> std::io::Result<()> {
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
