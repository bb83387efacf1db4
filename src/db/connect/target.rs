//! Database targets as URLs, with passwords kept out of sight: taken from the URL, an
//! environment variable or a prompt, and redacted wherever a URL is shown or stored.

use std::fmt;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::settings::{ConnectSettings, Endpoint, ProcessSurroundings, Secret, Setting, Source};
use crate::db::product::Product;
use crate::error::UsageError;
pub use crate::redact::{carries_password, hide_passwords_from_ps, redact, redact_argument};

/// Environment variable read for a password the URL does not carry.
pub const PASSWORD_VARIABLE: &str = "CORESCALE_DB_PASSWORD";

/// How long connecting may take before corescale gives up on a server, unless
/// `--connect-timeout`, the URL's `connect_timeout` or PGCONNECT_TIMEOUT say otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A target: the URL as given (shown with its password hidden) and the settings its driver
/// resolved from it, the environment and the files DBAs keep. Its Display never shows the
/// password.
#[derive(Clone)]
pub struct Target {
    /// The product the URL's scheme names: its registry row.
    pub product: &'static Product,
    /// The URL as given, its password hidden.
    shown: String,
    settings: ConnectSettings,
    /// From the URL, a variable, the prompt or a file; never shown.
    password: Option<Setting<Secret>>,
    /// Limit on establishing a connection, handshake and authentication included.
    pub connect_timeout: Duration,
    /// Limit on waiting for one answer once connected (None: wait as long as it takes, as
    /// setup's loads and index builds may).
    pub answer_timeout: Option<Duration>,
    /// `--in-schema`: the schema (MySQL/MariaDB: the database) corescale's own objects live
    /// in, which setup creates and owns; None: the role's current schema (database).
    pub in_schema: Option<String>,
}

impl fmt::Display for Target {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.shown)
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Target({self})")
    }
}

impl Target {
    /// The target as messages about connecting name it: the URL, then where the connection
    /// goes and where that came from (`mysql://root@localhost/test (via Unix socket
    /// /run/mysqld/mysqld.sock, from /etc/mysql/my.cnf)`).
    pub fn reached(&self) -> String {
        format!("{self} ({})", self.settings().origin())
    }

    /// A target of `product` (the row its URL's scheme names, found by
    /// `registry::target`), its settings resolved as the database's own clients would.
    pub fn resolve(product: &'static Product, text: &str) -> Result<Self, UsageError> {
        let settings = (product.resolve)(text, &ProcessSurroundings)?;
        let connect_timeout = settings
            .connect_timeout
            .as_ref()
            .map_or(DEFAULT_CONNECT_TIMEOUT, |timeout| timeout.value);
        Ok(Self {
            product,
            shown: redact_argument(text),
            password: settings.password_url.clone(),
            settings,
            connect_timeout,
            answer_timeout: None,
            in_schema: None,
        })
    }

    /// Sets the limits on connecting (when given; else the URL's or the environment's, else
    /// the default) and on waiting for an answer.
    pub fn with_timeouts(mut self, connect: Option<Duration>, answer: Option<Duration>) -> Self {
        if let Some(connect) = connect {
            self.connect_timeout = connect;
        }
        self.answer_timeout = answer;
        self
    }

    /// Names the schema corescale's own objects live in (`--in-schema`).
    pub fn with_in_schema(mut self, schema: Option<String>) -> Self {
        self.in_schema = schema;
        self
    }

    /// Fills in a password the URL does not carry, in this order: the prompt when asked for,
    /// CORESCALE_DB_PASSWORD, the driver's own variable (PGPASSWORD, MYSQL_PWD), then a
    /// password file (.pgpass, an option file). An empty value is no password, as in libpq.
    /// With several instances the prompt asks once (`typed` keeps the answer): a cluster's
    /// instances share their users.
    pub fn with_password(mut self, prompt: bool, typed: &mut Option<String>) -> Result<Self> {
        if self.password.is_none() && !self.settings.external_auth {
            let variable = std::env::var(PASSWORD_VARIABLE)
                .ok()
                .filter(|password| !password.is_empty());
            self.password = if prompt {
                let password = match typed {
                    Some(password) => password.clone(),
                    None => typed
                        .insert(
                            rpassword::prompt_password(format!("password for {self}: "))
                                .context("reading the password")?,
                        )
                        .clone(),
                };
                Some(Setting::new(Secret(password), Source::Prompt))
            } else if let Some(password) = variable {
                Some(Setting::new(
                    Secret(password),
                    Source::Variable(PASSWORD_VARIABLE),
                ))
            } else {
                self.settings
                    .password_variable
                    .clone()
                    .or_else(|| self.settings.password_file.clone())
            }
            .filter(|password| !password.value.0.is_empty());
        }
        if let Some(password) = &self.password {
            crate::redact::register_secret(&password.value.0);
        }
        Ok(self)
    }

    /// The settings the driver resolved, with their sources.
    pub fn settings(&self) -> &ConnectSettings {
        &self.settings
    }

    /// Where the password came from, never what it is.
    pub fn password_source(&self) -> Option<&Source> {
        self.password.as_ref().map(|password| &password.source)
    }

    pub fn user(&self) -> String {
        self.settings.user.value.clone()
    }

    pub fn password(&self) -> Option<String> {
        self.password
            .as_ref()
            .map(|password| password.value.0.clone())
    }

    /// The host name, or the socket's directory or file.
    pub fn host(&self) -> &str {
        &self.settings.host.value
    }

    pub fn port(&self) -> u16 {
        self.settings.port.value
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.settings.endpoint
    }

    /// The database (PostgreSQL, MySQL) or connect string (Oracle).
    pub fn database(&self) -> String {
        self.settings.database.value.clone()
    }

    /// Whether the target names this host (a socket, or a loopback address). The server may
    /// still run elsewhere, behind a tunnel or a proxy listening here: a driver proves it
    /// (`Database::on_this_host`).
    pub fn is_local(&self) -> bool {
        match &self.settings.endpoint {
            Endpoint::Socket(_) => true,
            Endpoint::Tcp { host, .. } => {
                matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1")
            }
        }
    }
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
            "cannot connect to {}: no answer within {} (is the server running, and is this its port? --connect-timeout sets the limit)",
            target.reached(),
            humantime::format_duration(target.connect_timeout)
        ),
    }
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
        let target = crate::db::registry::target("mariadb://root:pw@127.0.0.1:3306/test").unwrap();
        assert_eq!(target.product.name, "MySQL/MariaDB");
        assert_eq!(target.to_string(), "mariadb://root:***@127.0.0.1:3306/test");
        assert_eq!(
            format!("{target:?}"),
            "Target(mariadb://root:***@127.0.0.1:3306/test)"
        );
        assert_eq!(target.password().as_deref(), Some("pw"));
        assert!(target.is_local());
        assert!(crate::db::registry::target("redis://x").is_err());
        assert!(crate::db::registry::target("no url at all").is_err());
    }

    #[test]
    fn user_password_and_database_are_percent_decoded_as_urls_are() {
        let target =
            crate::db::registry::target("postgres://b%C3%B6b:a+b%2Bc%25d%26e@h/my%20db").unwrap();
        assert_eq!(target.user(), "b\u{f6}b");
        assert_eq!(target.password().as_deref(), Some("a+b+c%d&e"));
        assert_eq!(target.database(), "my db");
        // A password from the environment or prompt is kept as it is and never shown.
        let mut target = crate::db::registry::target("postgres://u@h/db").unwrap();
        target.password = Some(Setting::new(
            Secret("p/?#&+%2F @:x".to_string()),
            Source::Prompt,
        ));
        assert_eq!(target.password().as_deref(), Some("p/?#&+%2F @:x"));
        assert_eq!(target.to_string(), "postgres://u@h/db");
    }

    #[test]
    fn a_password_parameter_is_refused_without_showing_it() {
        let error = crate::db::registry::target("postgres://u@h/db?password=hunter2")
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains(PASSWORD_VARIABLE), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        for text in ["mysql://u:se/cret@h:33x06/db", "mysql://u:se cret@h:x/db"] {
            let error = crate::db::registry::target(text).err().unwrap().to_string();
            assert!(!error.contains("cret"), "{error}");
        }
    }
}
