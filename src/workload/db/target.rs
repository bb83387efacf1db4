//! Database targets as URLs, with passwords kept out of sight: taken from the URL, an
//! environment variable or a prompt, and redacted wherever a URL is shown or stored.

use std::fmt;

use anyhow::{Context, Result, bail};
use url::Url;

use crate::error::UsageError;

/// Environment variable read for a password the URL does not carry.
pub const PASSWORD_VARIABLE: &str = "CORESCALE_DB_PASSWORD";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Postgres,
    MySql,
    Oracle,
}

/// A parsed target URL. Its Display never shows the password.
#[derive(Clone)]
pub struct Target {
    pub flavour: Flavour,
    url: Url,
}

impl fmt::Display for Target {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&redact(self.url.as_str()))
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
                "--target '{}' is not a URL ({error}): use e.g. postgres://user@127.0.0.1:5432/test",
                redact(text)
            ))
        })?;
        let flavour = match url.scheme() {
            "postgres" | "postgresql" => Flavour::Postgres,
            "mysql" | "mariadb" => Flavour::MySql,
            "oracle" => Flavour::Oracle,
            other => {
                return Err(UsageError::new(format!(
                    "--target scheme '{other}' is not supported: use postgres://, mysql://, mariadb:// or oracle://"
                )));
            }
        };
        Ok(Self { flavour, url })
    }

    /// Fills in a password from the environment or a prompt when the URL has none.
    pub fn with_password(mut self, prompt: bool) -> Result<Self> {
        if self.url.password().is_some() {
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
        if let Some(password) = password
            && self.url.set_password(Some(&password)).is_err()
        {
            bail!("{self} cannot carry a password");
        }
        Ok(self)
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    pub fn user(&self) -> &str {
        self.url.username()
    }

    pub fn password(&self) -> Option<String> {
        self.url.password().map(percent_decode)
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
    pub fn database(&self) -> &str {
        self.url.path().trim_start_matches('/')
    }

    /// Whether the server runs on this host, so its processes' CPU time can be read.
    pub fn is_local(&self) -> bool {
        self.socket_directory().is_some()
            || matches!(self.host(), "localhost" | "127.0.0.1" | "[::1]" | "::1")
    }
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("p={text}").as_bytes())
        .next()
        .map_or_else(|| text.to_string(), |(_, value)| value.into_owned())
}

/// Replaces the password of every `scheme://user:password@` in `text` with `***`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("://") {
        let (before, after) = rest.split_at(start + 3);
        out.push_str(before);
        let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let authority = &after[..authority_end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
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
        let target = Target::parse("mariadb://root:pw@127.0.0.1:3306/test").unwrap();
        assert_eq!(target.flavour, Flavour::MySql);
        assert_eq!(target.to_string(), "mariadb://root:***@127.0.0.1:3306/test");
        assert_eq!(
            format!("{target:?}"),
            "Target(mariadb://root:***@127.0.0.1:3306/test)"
        );
        assert_eq!(target.password().as_deref(), Some("pw"));
        assert!(target.is_local());
        assert!(Target::parse("redis://x").is_err());
    }
}
