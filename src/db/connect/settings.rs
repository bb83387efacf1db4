//! A connection's settings as the drivers resolve them, each with where it came from (the URL,
//! a variable, a file, a default), so `db check` can say why corescale connected where it
//! did. TLS modes are one type for every driver: libpq's and MySQL's names map onto it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::UsageError;

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Url,
    /// An environment variable, by name.
    Variable(&'static str),
    /// A file: a service file, a password file, an option file.
    File(PathBuf),
    /// Typed at the password prompt.
    Prompt,
    /// Built into corescale (as into libpq or the MySQL client).
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Url => formatter.write_str("the URL"),
            Source::Variable(name) => write!(formatter, "${name}"),
            Source::File(path) => write!(formatter, "{}", path.display()),
            Source::Prompt => formatter.write_str("the prompt"),
            Source::Default => formatter.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

/// A password: never shown, not even by Debug.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("***")
    }
}

/// Whether and how a connection is encrypted: libpq's `sslmode` values, which MySQL's
/// `ssl-mode` values map onto (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Never TLS.
    Disable,
    /// Clear text first; TLS only if the server refuses it (libpq only).
    Allow,
    /// TLS when the server offers it, unverified; clear text otherwise.
    Prefer,
    /// TLS or no connection; the certificate is not checked (unless a root is given).
    Require,
    /// TLS with a certificate signed by a trusted CA, any host name.
    VerifyCa,
    /// TLS with a trusted certificate for the host name connected to.
    VerifyFull,
}

impl TlsMode {
    pub const LIBPQ: &'static str = "disable, allow, prefer, require, verify-ca or verify-full";
    pub const MYSQL: &'static str = "DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY";

    pub fn parse_libpq(text: &str) -> Option<Self> {
        Some(match text {
            "disable" => TlsMode::Disable,
            "allow" => TlsMode::Allow,
            "prefer" => TlsMode::Prefer,
            "require" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn parse_mysql(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => TlsMode::Disable,
            "PREFERRED" => TlsMode::Prefer,
            "REQUIRED" => TlsMode::Require,
            "VERIFY_CA" => TlsMode::VerifyCa,
            "VERIFY_IDENTITY" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn libpq_name(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Allow => "allow",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }

    pub fn mysql_name(self) -> &'static str {
        match self {
            TlsMode::Disable => "DISABLED",
            TlsMode::Allow | TlsMode::Prefer => "PREFERRED",
            TlsMode::Require => "REQUIRED",
            TlsMode::VerifyCa => "VERIFY_CA",
            TlsMode::VerifyFull => "VERIFY_IDENTITY",
        }
    }

    /// Whether a connection without TLS must fail.
    pub fn demands_tls(self) -> bool {
        matches!(
            self,
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull
        )
    }

    /// Whether the server's certificate must chain to a trusted root.
    pub fn verifies_certificate(self) -> bool {
        matches!(self, TlsMode::VerifyCa | TlsMode::VerifyFull)
    }
}

/// The roots a server certificate is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCertificates {
    /// PEM certificates in a file.
    File(PathBuf),
    /// The operating system's trusted roots (libpq's `sslrootcert=system`).
    System,
}

impl RootCertificates {
    pub fn parse(text: &str) -> Self {
        if text == "system" {
            RootCertificates::System
        } else {
            RootCertificates::File(PathBuf::from(text))
        }
    }
}

impl fmt::Display for RootCertificates {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootCertificates::File(path) => write!(formatter, "{}", path.display()),
            RootCertificates::System => formatter.write_str("system"),
        }
    }
}

/// SCRAM channel binding (libpq's `channel_binding`): ties the password exchange to the TLS
/// connection, so a man in the middle holding a trusted certificate cannot relay it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelBindingMode {
    Disable,
    Prefer,
    Require,
}

impl ChannelBindingMode {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "disable" => ChannelBindingMode::Disable,
            "prefer" => ChannelBindingMode::Prefer,
            "require" => ChannelBindingMode::Require,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ChannelBindingMode::Disable => "disable",
            ChannelBindingMode::Prefer => "prefer",
            ChannelBindingMode::Require => "require",
        }
    }
}

/// Whose words a connection's TLS settings are spoken in, for messages and `db check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVocabulary {
    /// libpq's `sslmode`, `sslrootcert`.
    Libpq,
    /// MySQL's `ssl-mode`, `ssl-ca`.
    MySql,
    /// Oracle's connect string: `protocol=tcps`, decided by the client library.
    Oracle,
}

impl TlsVocabulary {
    /// The option that sets the mode.
    pub fn mode_option(self) -> &'static str {
        match self {
            TlsVocabulary::Libpq => "sslmode",
            TlsVocabulary::MySql => "ssl-mode",
            TlsVocabulary::Oracle => "protocol",
        }
    }

    /// The option naming root certificates.
    pub fn root_option(self) -> &'static str {
        match self {
            TlsVocabulary::Libpq => "sslrootcert",
            TlsVocabulary::MySql | TlsVocabulary::Oracle => "ssl-ca",
        }
    }

    /// A mode's name in these words.
    pub fn mode_name(self, mode: TlsMode) -> &'static str {
        match self {
            TlsVocabulary::Libpq => mode.libpq_name(),
            TlsVocabulary::MySql => mode.mysql_name(),
            // The client library decides, by the connect string or tnsnames.ora.
            TlsVocabulary::Oracle => match mode {
                TlsMode::Disable => "tcp",
                TlsMode::Prefer | TlsMode::Allow => "as the alias says (tnsnames.ora)",
                _ => "tcps (checked by the Oracle client and its wallet)",
            },
        }
    }

    /// `sslmode=verify-ca`, `ssl-mode=VERIFY_CA`: a mode as the user would write it.
    pub fn called(self, mode: TlsMode) -> String {
        format!("{}={}", self.mode_option(), self.mode_name(mode))
    }
}

/// What TLS a connection asks for, and with which certificates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: Setting<TlsMode>,
    pub root: Option<Setting<RootCertificates>>,
    pub client_certificate: Option<Setting<PathBuf>>,
    pub client_key: Option<Setting<PathBuf>>,
    pub channel_binding: Setting<ChannelBindingMode>,
    /// Whose option names messages use.
    pub vocabulary: TlsVocabulary,
}

impl TlsSettings {
    /// The mode's name in this driver's vocabulary.
    pub fn mode_name(&self) -> &'static str {
        self.vocabulary.mode_name(self.mode.value)
    }

    /// `sslmode=verify-full`, for messages.
    pub fn shown(&self) -> String {
        self.vocabulary.called(self.mode.value)
    }
}

/// Where the server is: a host and port, or a Unix socket file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Socket(PathBuf),
}

impl ConnectSettings {
    /// Where a connection goes and where each part of that came from (the URL, a variable,
    /// an option or service file, a default), for messages about connecting.
    pub fn origin(&self) -> String {
        match &self.endpoint {
            Endpoint::Tcp { host, port } if self.host.source == self.port.source => format!(
                "via TCP to {host}:{port}, host and port from {}",
                self.host.source
            ),
            Endpoint::Tcp { host, port } => format!(
                "via TCP to {host}:{port}, host from {}, port from {}",
                self.host.source, self.port.source
            ),
            Endpoint::Socket(path) => format!(
                "via Unix socket {}, from {}",
                path.display(),
                self.host.source
            ),
        }
    }
}

/// Everything a driver needs to connect, resolved from the URL, the environment and the
/// files DBAs keep, with where each came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectSettings {
    /// The host name, or the socket directory or file.
    pub host: Setting<String>,
    pub port: Setting<u16>,
    pub endpoint: Endpoint,
    pub user: Setting<String>,
    /// The database (PostgreSQL, MySQL), service or connect string (Oracle).
    pub database: Setting<String>,
    pub tls: TlsSettings,
    pub connect_timeout: Option<Setting<Duration>>,
    pub application_name: Option<Setting<String>>,
    /// A password written in the URL (PostgreSQL: or in the service it names).
    pub password_url: Option<Setting<Secret>>,
    /// A password from a variable (PGPASSWORD, MYSQL_PWD).
    pub password_variable: Option<Setting<Secret>>,
    /// A password from a file (.pgpass, a service file, an option file).
    pub password_file: Option<Setting<Secret>>,
    /// Oracle: external authentication (wallet or OS), no password asked.
    pub external_auth: bool,
    /// Files that were skipped, and why (a group-readable .pgpass), for the user to hear.
    pub warnings: Vec<String>,
}

impl ConnectSettings {
    /// The settings as `name: value (from where)` lines, never a password's value.
    pub fn describe(&self) -> Vec<(String, String, String)> {
        let mut lines = vec![
            row("host", &self.host.value, &self.host.source),
            row("port", self.port.value, &self.port.source),
            row("user", &self.user.value, &self.user.source),
            row("database", &self.database.value, &self.database.source),
            row(
                self.tls.vocabulary.mode_option(),
                self.tls.mode_name(),
                &self.tls.mode.source,
            ),
        ];
        if let Some(root) = &self.tls.root {
            lines.push(row("root certificates", &root.value, &root.source));
        }
        if let Some(certificate) = &self.tls.client_certificate {
            lines.push(row(
                "client certificate",
                certificate.value.display(),
                &certificate.source,
            ));
        }
        if let Some(key) = &self.tls.client_key {
            lines.push(row("client key", key.value.display(), &key.source));
        }
        if self.tls.vocabulary == TlsVocabulary::Libpq {
            lines.push(row(
                "channel_binding",
                self.tls.channel_binding.value.name(),
                &self.tls.channel_binding.source,
            ));
        }
        if let Some(timeout) = &self.connect_timeout {
            lines.push(row(
                "connect timeout",
                humantime::format_duration(timeout.value),
                &timeout.source,
            ));
        }
        if let Some(name) = &self.application_name {
            lines.push(row("application name", &name.value, &name.source));
        }
        lines
    }
}

fn row(name: &str, value: impl fmt::Display, source: &Source) -> (String, String, String) {
    (name.to_string(), value.to_string(), source.to_string())
}

/// What the resolvers read of the process's surroundings: variables and the home directory.
/// Tests hand in their own.
pub trait Surroundings {
    fn var(&self, name: &str) -> Option<String>;
    fn home(&self) -> Option<PathBuf>;
    /// The operating-system user name, libpq's and MySQL's default user.
    fn os_user(&self) -> Option<String>;
    /// A system-wide file (`/etc/my.cnf`), where the tests keep their own.
    fn system_file(&self, path: &str) -> PathBuf {
        PathBuf::from(path)
    }
}

/// The real process environment.
pub struct ProcessSurroundings;

impl Surroundings for ProcessSurroundings {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    }

    fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from).or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|user| user.dir)
        })
    }

    fn os_user(&self) -> Option<String> {
        nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|user| user.name)
            .or_else(|| self.var("USER"))
    }
}

/// A usage error about a URL parameter, naming the accepted values.
pub fn bad_value(option: &str, value: &str, accepted: &str) -> UsageError {
    UsageError::new(format!(
        "--target: {option}='{}' is not a value corescale knows: use {accepted}",
        value
            .chars()
            .flat_map(char::escape_debug)
            .take(60)
            .collect::<String>()
    ))
}

/// A postgres:// or mysql:// target as a URL, and whether it names a host: `user@/db` (a
/// user, no host: the local socket) is valid to libpq and the MySQL client though not to the
/// URL standard, so it is read with a placeholder host. A password parameter is refused (it
/// would show in `ps` more plainly than the URL's own password field).
pub fn parse_url(text: &str) -> Result<(url::Url, bool), UsageError> {
    let not_a_url = |error: url::ParseError| {
        UsageError::new(format!(
            "--target '{}' is not a URL ({error}): use e.g. postgres://user@127.0.0.1:5432/test, with special characters in the password written as %XX (or the password in CORESCALE_DB_PASSWORD)",
            crate::redact::redact_argument(text)
        ))
    };
    let (url, host_given) = match url::Url::parse(text) {
        Ok(url) => {
            let given = url.host_str().is_some_and(|host| !host.is_empty());
            (url, given)
        }
        Err(url::ParseError::EmptyHost) => {
            let authority = text.find("://").map_or(0, |start| start + 3);
            let end = text[authority..]
                .find(['/', '?', '#'])
                .map_or(text.len(), |end| authority + end);
            if !text[authority..end].ends_with('@') {
                return Err(not_a_url(url::ParseError::EmptyHost));
            }
            let placeholder = format!("{}localhost{}", &text[..end], &text[end..]);
            (url::Url::parse(&placeholder).map_err(not_a_url)?, false)
        }
        Err(error) => return Err(not_a_url(error)),
    };
    if url
        .query_pairs()
        .any(|(name, _)| name.eq_ignore_ascii_case("password"))
    {
        return Err(UsageError::new(
            "--target must not carry ?password=: set CORESCALE_DB_PASSWORD, use --password-prompt or a password file",
        ));
    }
    Ok((url, host_given))
}

/// Percent-decoding as URLs do it: `%2B` is `+`, and `+` stays `+`.
pub fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// The URL's user, host (when it names one), port and database, decoded, each only when
/// given, filed under the driver's own `keywords` for them.
pub fn url_settings(
    url: &url::Url,
    host_given: bool,
    keywords: [&'static str; 4],
) -> impl Iterator<Item = (&'static str, Setting<String>)> {
    let given = |value: String| Some(value).filter(|value| !value.is_empty());
    let parts = [
        given(decode(url.username())),
        given(
            decode(url.host_str().unwrap_or_default())
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
        )
        .filter(|_| host_given),
        url.port().map(|port| port.to_string()),
        given(decode(url.path().trim_start_matches('/'))),
    ];
    keywords
        .into_iter()
        .zip(parts)
        .filter_map(|(keyword, value)| Some((keyword, Setting::new(value?, Source::Url))))
}

/// Records that the URL's parameter `name` set `setting` to `value`, and refuses a setting
/// the URL gives twice with different values (`sslmode=verify-full&sslmode=disable`): which
/// one a client takes differs from client to client, and a DBA meant one of them.
pub fn contradiction(
    given: &mut std::collections::BTreeMap<String, (String, String)>,
    setting: &str,
    name: &str,
    value: &str,
) -> Result<(), UsageError> {
    let shown = |text: &str| {
        text.chars()
            .flat_map(char::escape_debug)
            .take(60)
            .collect::<String>()
    };
    match given.get(setting) {
        Some((earlier_name, earlier)) if !earlier.eq_ignore_ascii_case(value) => {
            Err(UsageError::new(format!(
                "--target gives {}={} and {}={}, which contradict each other: keep one",
                shown(earlier_name),
                shown(earlier),
                shown(name),
                shown(value)
            )))
        }
        Some(_) => Ok(()),
        None => {
            given.insert(setting.to_string(), (name.to_string(), value.to_string()));
            Ok(())
        }
    }
}

/// A port setting, checked (1 to 65535), or the default.
pub fn port_setting(
    port: Option<&Setting<String>>,
    default: u16,
) -> Result<Setting<u16>, UsageError> {
    match port {
        Some(port) => Ok(Setting::new(
            port.value
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|port| *port > 0)
                .ok_or_else(|| bad_value("port", &port.value, "a TCP port, 1 to 65535"))?,
            port.source.clone(),
        )),
        None => Ok(Setting::new(default, Source::Default)),
    }
}

/// The URL's own password, decoded.
pub fn url_password(url: &url::Url) -> Option<Setting<Secret>> {
    // An empty password is no password, as libpq takes it.
    url.password()
        .filter(|password| !password.is_empty())
        .map(|password| {
            Setting::new(
                Secret(
                    percent_encoding::percent_decode_str(password)
                        .decode_utf8_lossy()
                        .into_owned(),
                ),
                Source::Url,
            )
        })
}

/// An INI file's text as a client reads it: with quotes and backslash escapes (MySQL's option
/// files) or without (libpq's service file); a file it cannot read is named with `reader`.
pub fn load_ini(
    text: &str,
    file: &Path,
    quoted: bool,
    reader: &str,
) -> Result<ini::Ini, UsageError> {
    ini::Ini::load_from_str_opt(
        text,
        ini::ParseOption {
            enabled_quote: quoted,
            enabled_escape: quoted,
            ..ini::ParseOption::default()
        },
    )
    .map_err(|error| {
        UsageError::new(format!(
            "{} is not readable as {reader} reads it: {error}",
            file.display()
        ))
    })
}

/// A path with `~/` expanded to the home directory.
pub fn expand_home(path: &str, surroundings: &dyn Surroundings) -> PathBuf {
    match (path.strip_prefix("~/"), surroundings.home()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// Whether a file may hold secrets by libpq's rule: readable by its owner only.
pub fn private_to_owner(path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o077 == 0)
}

/// Surroundings of the tests' own making: variables, a home directory, and system files
/// kept under `home/etc`.
#[cfg(test)]
pub struct FakeSurroundings {
    pub variables: std::collections::HashMap<&'static str, String>,
    pub home: PathBuf,
}

#[cfg(test)]
impl FakeSurroundings {
    pub fn new(home: &Path, variables: &[(&'static str, &str)]) -> Self {
        Self {
            variables: variables
                .iter()
                .map(|(name, value)| (*name, value.to_string()))
                .collect(),
            home: home.to_path_buf(),
        }
    }
}

#[cfg(test)]
impl Surroundings for FakeSurroundings {
    fn var(&self, name: &str) -> Option<String> {
        self.variables.get(name).cloned()
    }
    fn home(&self) -> Option<PathBuf> {
        Some(self.home.clone())
    }
    fn os_user(&self) -> Option<String> {
        Some("osuser".to_string())
    }
    fn system_file(&self, path: &str) -> PathBuf {
        self.home.join("etc").join(path.trim_start_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_modes_have_both_vocabularies() {
        for text in [
            "disable",
            "allow",
            "prefer",
            "require",
            "verify-ca",
            "verify-full",
        ] {
            assert_eq!(TlsMode::parse_libpq(text).unwrap().libpq_name(), text);
        }
        for text in [
            "DISABLED",
            "PREFERRED",
            "REQUIRED",
            "VERIFY_CA",
            "VERIFY_IDENTITY",
        ] {
            assert_eq!(TlsMode::parse_mysql(text).unwrap().mysql_name(), text);
        }
        assert_eq!(TlsMode::parse_mysql("verify-ca"), Some(TlsMode::VerifyCa));
        assert_eq!(TlsMode::parse_libpq("REQUIRE"), None);
        assert_eq!(TlsMode::parse_mysql("yes"), None);
        assert!(TlsMode::Require.demands_tls() && !TlsMode::Prefer.demands_tls());
        assert!(
            TlsMode::VerifyCa.verifies_certificate() && !TlsMode::Require.verifies_certificate()
        );
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let setting = Setting::new(Secret("hunter2".to_string()), Source::Url);
        assert!(!format!("{setting:?}").contains("hunter2"));
    }
}
