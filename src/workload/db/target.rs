//! Database targets as URLs, with passwords kept out of sight: taken from the URL, an
//! environment variable or a prompt, and redacted wherever a URL is shown or stored.

use std::fmt;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use url::Url;

use super::driver::Driver;
use crate::error::UsageError;
pub use crate::redact::{carries_password, hide_passwords_from_ps, redact, redact_argument};

/// Environment variable read for a password the URL does not carry.
pub const PASSWORD_VARIABLE: &str = "CORESCALE_DB_PASSWORD";

/// How long connecting may take before corescale gives up on a server, as `--connect-timeout`
/// writes it and as a duration (a unit test keeps the two equal).
pub const CONNECT_TIMEOUT_TEXT: &str = "10s";
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed target URL. Its Display never shows the password.
#[derive(Clone)]
pub struct Target {
    /// The driver the URL's scheme chose, with what it can do.
    pub driver: &'static Driver,
    url: Url,
    /// Decoded, from the URL, the environment or the prompt; never shown.
    password: Option<String>,
    /// Limit on establishing a connection, handshake and authentication included.
    pub connect_timeout: Duration,
    /// Limit on waiting for one answer once connected (None: wait as long as it takes, as
    /// setup's loads and index builds may).
    pub answer_timeout: Option<Duration>,
}

impl fmt::Display for Target {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.url.clone();
        if self.password.is_some() {
            // A URL with a user accepts any password text.
            let _ = shown.set_password(Some("***"));
        }
        formatter.write_str(shown.as_str())
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Target({self})")
    }
}

impl Target {
    /// Parses postgres://, postgresql://, mysql://, mariadb:// and oracle:// URLs.
    pub fn parse(text: &str) -> Result<Self, UsageError> {
        let url = Url::parse(text).map_err(|error| {
            UsageError::new(format!(
                "--target '{}' is not a URL ({error}): use e.g. postgres://user@127.0.0.1:5432/test, with special characters in the password written as %XX (or the password in {PASSWORD_VARIABLE})",
                redact_argument(text)
            ))
        })?;
        let Some(driver) = Driver::for_scheme(url.scheme()) else {
            return Err(UsageError::new(format!(
                "--target scheme '{}' is not supported: use {}",
                printable(url.scheme()),
                Driver::schemes()
            )));
        };
        if url
            .query_pairs()
            .any(|(name, _)| name.eq_ignore_ascii_case("password"))
        {
            return Err(UsageError::new(format!(
                "--target must not carry ?password=: set {PASSWORD_VARIABLE} or use --password-prompt"
            )));
        }
        if url.host_str().is_none_or(str::is_empty) && !driver.host_optional {
            return Err(UsageError::new(format!(
                "--target '{}' names no host: use e.g. mysql://root@127.0.0.1:3306/test",
                redact_argument(text)
            )));
        }
        let password = url.password().map(percent_decode);
        Ok(Self {
            driver,
            url,
            password,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            answer_timeout: None,
        })
    }

    /// Sets the limits on connecting and on waiting for an answer.
    pub fn with_timeouts(mut self, connect: Duration, answer: Option<Duration>) -> Self {
        self.connect_timeout = connect;
        self.answer_timeout = answer;
        self
    }

    /// Fills in a password from the environment or a prompt when the URL has none.
    pub fn with_password(mut self, prompt: bool) -> Result<Self> {
        if self.password.is_some() {
            return Ok(self);
        }
        let password = match std::env::var(PASSWORD_VARIABLE) {
            Ok(password) => Some(password),
            Err(_) if prompt => Some(
                rpassword::prompt_password(format!("password for {self}: "))
                    .context("reading the password")?,
            ),
            Err(_) => None,
        };
        self.password = password;
        crate::redact::register_secret(self.password.as_deref().unwrap_or_default());
        Ok(self)
    }

    pub fn user(&self) -> String {
        percent_decode(self.url.username())
    }

    pub fn password(&self) -> Option<String> {
        self.password.clone()
    }

    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or("localhost")
    }

    /// A Unix-socket directory given as `?host=/var/run/postgresql` (libpq's syntax).
    pub fn socket_directory(&self) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(name, value)| name == "host" && value.starts_with('/'))
            .map(|(_, value)| value.into_owned())
    }

    pub fn port(&self) -> Option<u16> {
        self.url.port()
    }

    /// The database (PostgreSQL, MySQL) or service (Oracle) name.
    pub fn database(&self) -> String {
        percent_decode(self.url.path().trim_start_matches('/'))
    }

    /// Whether the server runs on this host, so its processes' CPU time can be read.
    pub fn is_local(&self) -> bool {
        self.socket_directory().is_some()
            || matches!(self.host(), "localhost" | "127.0.0.1" | "[::1]" | "::1")
    }
}

/// RFC 3986 percent-decoding: `%2B` is `+`, and `+` stays `+` (URLs are not form fields).
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Runs `connect` on a thread of its own and gives up after `timeout`: drivers whose
/// handshake has no time limit of its own would otherwise hang on a server that accepts and
/// never answers. The abandoned thread ends with the process.
pub fn within<T: Send + 'static>(
    target: &Target,
    connect: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("corescale-connect".to_string())
        .spawn(move || {
            let _ = sender.send(connect());
        })
        .context("starting a thread to connect")?;
    match receiver.recv_timeout(target.connect_timeout) {
        Ok(outcome) => outcome,
        Err(_) => bail!(
            "cannot connect to {target}: no answer within {} (is the server running, and is this its port? --connect-timeout sets the limit)",
            humantime::format_duration(target.connect_timeout)
        ),
    }
}

/// Text with control characters shown as escapes, for quoting input in messages.
fn printable(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("--target=postgres://bob:s3cret@db:5432/test and mysql://root@h/x"),
            "--target=postgres://bob:***@db:5432/test and mysql://root@h/x"
        );
        assert_eq!(
            redact("oracle://u:p%40ss@host:1521/svc"),
            "oracle://u:***@host:1521/svc"
        );
        // Raw characters that end a URL's authority still hide: everything up to the last @.
        for raw in ["a/b", "a?b", "a#b", "a@b", "a:b"] {
            let text = format!("error: 'postgres://u:{raw}@h:5432/db' is bad");
            assert_eq!(redact(&text), "error: 'postgres://u:***@h:5432/db' is bad");
            assert_eq!(
                redact_argument(&format!("postgres://u:{raw} x@h/db")),
                "postgres://u:***@h/db"
            );
        }
        assert_eq!(
            redact("postgres://u@h/db?sslmode=require&password=hunter2&x=1"),
            "postgres://u@h/db?sslmode=require&password=***&x=1"
        );
        let target = Target::parse("mariadb://root:pw@127.0.0.1:3306/test").unwrap();
        assert_eq!(target.driver.name, "MySQL/MariaDB");
        assert_eq!(target.to_string(), "mariadb://root:***@127.0.0.1:3306/test");
        assert_eq!(
            format!("{target:?}"),
            "Target(mariadb://root:***@127.0.0.1:3306/test)"
        );
        assert_eq!(target.password().as_deref(), Some("pw"));
        assert!(target.is_local());
        assert!(Target::parse("redis://x").is_err());
    }

    #[test]
    fn user_password_and_database_are_percent_decoded_as_urls_are() {
        let target = Target::parse("postgres://b%C3%B6b:a+b%2Bc%25d%26e@h/my%20db").unwrap();
        assert_eq!(target.user(), "b\u{f6}b");
        assert_eq!(target.password().as_deref(), Some("a+b+c%d&e"));
        assert_eq!(target.database(), "my db");
        // A password from the environment or prompt is kept as it is and never shown.
        let mut target = Target::parse("postgres://u@h/db").unwrap();
        target.password = Some("p/?#&+%2F @:x".to_string());
        assert_eq!(target.password().as_deref(), Some("p/?#&+%2F @:x"));
        assert_eq!(target.to_string(), "postgres://u:***@h/db");
    }

    #[test]
    fn the_connect_timeout_default_is_one_value() {
        assert_eq!(
            crate::values::parse_duration(CONNECT_TIMEOUT_TEXT),
            Ok(DEFAULT_CONNECT_TIMEOUT)
        );
    }

    #[test]
    fn a_password_parameter_is_refused_without_showing_it() {
        let error = Target::parse("postgres://u@h/db?password=hunter2")
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains(PASSWORD_VARIABLE), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        for text in ["mysql://u:se/cret@h:33x06/db", "mysql://u:se cret@/db"] {
            let error = Target::parse(text).err().unwrap().to_string();
            assert!(!error.contains("cret"), "{error}");
        }
    }
}
