//! Connecting to MySQL and MariaDB as their clients do (TLS as ssl-mode says), and their
//! errors in a DBA's words.

use super::*;
use crate::db::connect::this_host;

/// Connects as `ssl-mode` says: DISABLED in clear text, PREFERRED with TLS when the server
/// offers it (unverified), REQUIRED with TLS or not at all (the chain checked when `ssl-ca`
/// is given), VERIFY_CA the chain, VERIFY_IDENTITY the chain and the host name.
pub(super) fn connect(target: &Target) -> Result<Conn> {
    let tls = &target.settings().tls;
    match tls.mode.value {
        TlsMode::Disable => connect_with(target, None),
        TlsMode::Allow | TlsMode::Prefer => match connect_with(target, Some(ssl_options(tls)?)) {
            Err(error) if error.is::<NoTlsOffered>() => connect_with(target, None),
            outcome => outcome,
        },
        TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => {
            connect_with(target, Some(ssl_options(tls)?))
        }
    }
}

/// Whether the server `connection` reaches runs on this host: through a socket, or over TCP
/// from one of this process's own sockets (not a tunnel's or a proxy's).
pub(super) fn on_this_host(connection: &mut Conn, target: &Target) -> Result<bool> {
    this_host::serves_here(target, || {
        // The process list names a TCP client as host:port, the port it came from.
        let host: Option<String> = connection
            .query_first(
                "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
            )
            .map_err(|error| describe(error, target))?;
        Ok(host.as_deref().and_then(this_host::port_in_host))
    })
}

/// The server offers no TLS: PREFERRED then connects in clear text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct NoTlsOffered(String);

pub(super) fn ssl_options(tls: &TlsSettings) -> Result<SslOpts> {
    let mode = tls.mode.value;
    let root = match &tls.root {
        Some(Setting {
            value: RootCertificates::File(path),
            ..
        }) => Some(path.clone()),
        Some(_) => bail!("ssl-ca=system is not supported for MySQL: give the CA's PEM file"),
        None if mode.verifies_certificate() => bail!(
            "{} checks the server's certificate but no ssl-ca is given: add ?ssl-ca=/path/to/ca.pem (or ssl-ca in ~/.my.cnf)",
            tls.shown()
        ),
        None => None,
    };
    // As the mysql client: REQUIRED with a CA given checks the chain, as VERIFY_CA.
    let check_chain = mode.verifies_certificate() || (mode == TlsMode::Require && root.is_some());
    let identity = match (&tls.client_certificate, &tls.client_key) {
        (Some(certificate), Some(key)) => Some(ClientIdentity::new(
            certificate.value.clone(),
            key.value.clone(),
        )),
        (None, None) => None,
        _ => bail!("ssl-cert and ssl-key go together: give both or neither"),
    };
    Ok(SslOpts::default()
        .with_root_cert_path(root)
        .with_client_identity(identity)
        .with_danger_accept_invalid_certs(!check_chain)
        .with_danger_skip_domain_validation(mode != TlsMode::VerifyFull))
}

/// The most statements one session prepares (`DbSession::execute`'s indexes).
pub(super) const MOST_STATEMENTS: usize = 1024;

pub(super) fn connect_with(target: &Target, ssl: Option<SslOpts>) -> Result<Conn> {
    let encrypted = ssl.is_some();
    let mut options = OptsBuilder::new()
        .user(Some(target.user()))
        .pass(target.password())
        .db_name(Some(target.database()).filter(|name| !name.is_empty()))
        .tcp_connect_timeout(Some(target.connect_timeout))
        .read_timeout(target.answer_timeout)
        .write_timeout(target.answer_timeout)
        // The crate would otherwise move a loopback connection to the server's Unix socket,
        // where it drops TLS without a word.
        .prefer_socket(false)
        // A session keeps its workload's statements by number for the whole run; the crate
        // closes the statement its cache evicts, under the session's feet (order entry
        // prepares 49). Its cache holds as many as a session may prepare.
        .stmt_cache_size(Some(MOST_STATEMENTS))
        .ssl_opts(ssl);
    options = match target.endpoint() {
        Endpoint::Socket(path) => options.socket(Some(path.display().to_string())),
        Endpoint::Tcp { host, port } => options.ip_or_hostname(Some(host.clone())).tcp_port(*port),
    };
    let shown = target.clone();
    // The handshake waits on the server's greeting, which the connect timeout does not cover.
    within(target, move || {
        Conn::new(Opts::from(options)).map_err(|error| connect_error(error, &shown, encrypted))
    })
}

/// Why a connection failed, in one line: the server's refusal, TLS, or the network.
pub(super) fn connect_error(
    error: mysql::Error,
    target: &Target,
    encrypted: bool,
) -> anyhow::Error {
    let reached = target.reached();
    let tls = &target.settings().tls;
    if let Some(handshake) = handshake_error(&error) {
        return anyhow!(
            "cannot connect to {reached}: {}",
            tls::explain_handshake(handshake, tls, target.host())
        );
    }
    let without_tls = || {
        if encrypted {
            String::new()
        } else {
            format!(
                ". corescale connected without TLS ({}): if the server requires secure transport, use ssl-mode=REQUIRED, or VERIFY_IDENTITY with ssl-ca",
                tls.shown()
            )
        }
    };
    match &error {
        mysql::Error::DriverError(mysql::DriverError::TlsNotSupported) => {
            let text = format!(
                "cannot connect to {reached}: the server does not offer TLS, but {} asks for it: configure TLS on the server (ssl_cert, ssl_key), or use ssl-mode=PREFERRED to allow clear text",
                tls.shown()
            );
            if tls.mode.value.demands_tls() {
                anyhow!(text)
            } else {
                anyhow::Error::new(NoTlsOffered(text))
            }
        }
        mysql::Error::TlsError(tls_error) => anyhow!(
            "cannot connect to {reached}: the TLS handshake failed: {}",
            one_line(&tls_error.to_string())
        ),
        mysql::Error::MySqlError(server) if server.code == 1045 => anyhow!(
            "cannot connect to {reached}: access denied for this user and password (MySQL error 1045: {}){}",
            one_line(&server.message),
            without_tls()
        ),
        mysql::Error::MySqlError(server) => anyhow!(
            "cannot connect to {reached}: the server refused (MySQL error {}: {}){}",
            server.code,
            one_line(&server.message),
            if server
                .message
                .to_ascii_lowercase()
                .contains("secure transport")
                || server
                    .message
                    .to_ascii_lowercase()
                    .contains("insecure transport")
            {
                without_tls()
            } else {
                String::new()
            }
        ),
        _ => anyhow!(
            "cannot connect to {reached}: {} (is the server running and the URL right?)",
            readable(&error)
        ),
    }
}

/// The rustls error that ended a handshake. The driver runs the handshake on its first write
/// or read, so the error comes back inside an I/O error, not as the driver's TLS error.
pub(super) fn handshake_error(error: &mysql::Error) -> Option<&rustls::Error> {
    let io = match error {
        mysql::Error::IoError(io)
        | mysql::Error::CodecError(mysql_common::proto::codec::error::PacketCodecError::Io(io)) => {
            io
        }
        _ => return None,
    };
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

/// The driver's error as one readable line: the server's message and code, or the I/O
/// error's own words, never the crate's Debug dump.
pub(super) fn readable(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(server) => {
            format!(
                "{} (MySQL error {})",
                one_line(&server.message),
                server.code
            )
        }
        mysql::Error::IoError(io) => io_words(io),
        mysql::Error::CodecError(codec) => match codec {
            mysql_common::proto::codec::error::PacketCodecError::Io(io) => io_words(io),
            other => one_line(&other.to_string()),
        },
        mysql::Error::DriverError(driver) => one_line(&driver.to_string()),
        other => one_line(&other.to_string()),
    }
}

pub(super) fn io_words(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe
        | std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionAborted => {
            format!("the server closed the connection ({error})")
        }
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            "the server did not answer in time (stalled or overloaded?)".to_string()
        }
        _ => one_line(&error.to_string()),
    }
}

/// Text on one line.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn describe(error: mysql::Error, target: &Target) -> anyhow::Error {
    let text = readable(&error);
    match &error {
        mysql::Error::MySqlError(server) => advice(server.code, &text, target),
        _ => None,
    }
    .unwrap_or_else(|| anyhow!("{target}: {text}"))
}

/// A refusal (`text`, as `readable` words it) with what to do about it, for the error
/// numbers corescale has advice for.
pub(super) fn advice(code: u16, text: &str, target: &Target) -> Option<anyhow::Error> {
    match code {
        1146 => Some(anyhow!(
            "{text} in {target}: run `corescale db setup --target {target}` first"
        )),
        1142 | 1044 | 1045 => Some(anyhow!(
            "{text} in {target}: the user needs CREATE, SELECT and UPDATE on the database"
        )),
        _ => None,
    }
}
