//! Oracle targets as Oracle DBAs write them, turned into what the client library is handed:
//! `oracle://user@host:port/service` (EZConnect; `?protocol=tcps` and `?wallet_location=`
//! make it EZConnect Plus over TLS), `oracle://user@alias` (a TNS alias the client resolves
//! with `TNS_ADMIN`), `oracle://user@(DESCRIPTION=...)` (a full descriptor), and
//! `oracle:///alias` with no user: external authentication (a wallet or the OS account).
//! Compiled without the `oracle` feature too, so these strings are tested everywhere.

use std::time::Duration;

use crate::db::connect::settings::{
    ChannelBindingMode, ConnectSettings, Endpoint, Secret, Setting, Source, Surroundings, TlsMode,
    TlsSettings, TlsVocabulary, bad_value,
};
use crate::error::UsageError;

pub(crate) const DEFAULT_PORT: u16 = 1521;

/// What the client library is given: user, password and connect string, or external
/// authentication with a connect string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OracleConnect {
    pub user: String,
    pub password: Option<Secret>,
    pub connect_string: String,
    /// `/@alias`: the wallet or the OS account authenticates; no user, no password.
    pub external_auth: bool,
    /// Whether the connect string asks for TCPS.
    pub tcps: bool,
    /// The host and port when the connect string names them.
    pub host: Option<(String, u16)>,
}

fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Parses the text of an oracle:// target.
pub(crate) fn parse(text: &str) -> Result<OracleConnect, UsageError> {
    let Some(rest) = text.strip_prefix("oracle://") else {
        return Err(UsageError::new(
            "--target: an Oracle target starts with oracle://",
        ));
    };
    // External authentication: nothing before the connect string.
    if let Some(connect_string) = rest.strip_prefix('/') {
        return external(connect_string);
    }
    // A descriptor: user[:password]@(DESCRIPTION=...), split at the last "@(".
    if let Some(at) = rest
        .rfind("@(")
        .or_else(|| rest.starts_with('(').then_some(usize::MAX))
    {
        return descriptor(rest, at);
    }
    ezconnect(text)
}

/// oracle:///ALIAS: authenticated by wallet or OS account.
fn external(connect_string: &str) -> Result<OracleConnect, UsageError> {
    let connect_string = decode(connect_string);
    if connect_string.is_empty() {
        return Err(UsageError::new(
            "--target oracle:/// needs a TNS alias or descriptor after it: oracle:///ALIAS authenticates by wallet or OS account",
        ));
    }
    Ok(OracleConnect {
        user: String::new(),
        password: None,
        tcps: connect_string
            .to_ascii_lowercase()
            .replace(' ', "")
            .contains("(protocol=tcps)"),
        host: descriptor_address(&connect_string),
        connect_string,
        external_auth: true,
    })
}

/// USER[:PASSWORD]@(DESCRIPTION=...), the descriptor starting at `at` (usize::MAX: no user).
fn descriptor(rest: &str, at: usize) -> Result<OracleConnect, UsageError> {
    let (userinfo, descriptor) = if at == usize::MAX {
        ("", rest)
    } else {
        (&rest[..at], &rest[at + 1..])
    };
    let (user, password) = split_userinfo(userinfo);
    if user.is_empty() {
        return Err(UsageError::new(
            "--target: a descriptor needs a user (oracle://USER@(DESCRIPTION=...)), or oracle:///(DESCRIPTION=...) for external authentication",
        ));
    }
    Ok(OracleConnect {
        user,
        password,
        tcps: descriptor.to_ascii_lowercase().contains("(protocol=tcps)"),
        host: descriptor_address(descriptor),
        connect_string: descriptor.to_string(),
        external_auth: false,
    })
}

/// oracle://user@host:port/service?..., or oracle://user@ALIAS.
fn ezconnect(text: &str) -> Result<OracleConnect, UsageError> {
    let url = url::Url::parse(text).map_err(|error| {
        UsageError::new(format!(
            "--target is not an Oracle URL ({error}): use oracle://user@host:1521/service, oracle://user@ALIAS or oracle:///ALIAS"
        ))
    })?;
    let user = decode(url.username());
    if user.is_empty() {
        return Err(UsageError::new(
            "--target names no Oracle user: use oracle://user@host:1521/service, or oracle:///ALIAS for external authentication",
        ));
    }
    let password = url.password().map(|password| Secret(decode(password)));
    let host = decode(url.host_str().unwrap_or_default());
    let service = decode(url.path().trim_start_matches('/'));
    let (tcps, plus) = ezconnect_options(&url)?;
    // No service and no port: the host part is a TNS alias.
    if service.is_empty() && url.port().is_none() && plus.is_empty() && !tcps {
        return Ok(OracleConnect {
            user,
            password,
            connect_string: host,
            external_auth: false,
            tcps: false,
            host: None,
        });
    }
    if host.is_empty() || service.is_empty() {
        return Err(UsageError::new(
            "--target: an EZConnect target needs a host and a service: oracle://user@host:1521/service",
        ));
    }
    let port = url.port().unwrap_or(DEFAULT_PORT);
    let mut connect_string = format!(
        "{}//{host}:{port}/{service}",
        if tcps { "tcps:" } else { "" }
    );
    if !plus.is_empty() {
        connect_string.push('?');
        connect_string.push_str(&plus.join("&"));
    }
    Ok(OracleConnect {
        user,
        password,
        connect_string,
        external_auth: false,
        tcps,
        host: Some((host, port)),
    })
}

/// An EZConnect URL's parameters: whether it asks for TCPS, and the ones passed on.
fn ezconnect_options(url: &url::Url) -> Result<(bool, Vec<String>), UsageError> {
    let mut tcps = false;
    let mut plus = Vec::new();
    for (name, value) in url.query_pairs() {
        match name.as_ref() {
            "protocol" => match value.to_ascii_lowercase().as_str() {
                "tcps" => tcps = true,
                "tcp" => tcps = false,
                other => return Err(bad_value("protocol", other, "tcp or tcps")),
            },
            "wallet_location" | "ssl_server_dn_match" | "ssl_server_cert_dn" => {
                plus.push(format!("{name}={value}"));
            }
            other => {
                return Err(UsageError::new(format!(
                    "--target: '{}' is not an Oracle parameter corescale reads: use protocol, wallet_location, ssl_server_dn_match, ssl_server_cert_dn",
                    other
                        .chars()
                        .flat_map(char::escape_debug)
                        .take(40)
                        .collect::<String>()
                )));
            }
        }
    }
    Ok((tcps, plus))
}

/// user and password of `user:password`, percent-decoded.
fn split_userinfo(userinfo: &str) -> (String, Option<Secret>) {
    match userinfo.split_once(':') {
        Some((user, password)) => (decode(user), Some(Secret(decode(password)))),
        None => (decode(userinfo), None),
    }
}

/// HOST= and PORT= of a descriptor, where it has them.
fn descriptor_address(descriptor: &str) -> Option<(String, u16)> {
    let upper = descriptor.to_ascii_uppercase().replace(' ', "");
    let value = |key: &str| {
        let start = upper.find(&format!("({key}="))? + key.len() + 2;
        let end = upper[start..].find(')')? + start;
        Some(descriptor.replace(' ', "")[start..end].to_string())
    };
    let host = value("HOST")?;
    let port = value("PORT")
        .and_then(|port| port.parse().ok())
        .unwrap_or(DEFAULT_PORT);
    Some((host, port))
}

/// The settings of an Oracle target, for `db check` and the connection.
pub(crate) fn resolve(
    text: &str,
    _surroundings: &dyn Surroundings,
) -> Result<ConnectSettings, UsageError> {
    let connect = parse(text)?;
    let (host, port) = connect
        .host
        .clone()
        .unwrap_or_else(|| (connect.connect_string.clone(), DEFAULT_PORT));
    let source = |known: bool| if known { Source::Url } else { Source::Default };
    Ok(ConnectSettings {
        host: Setting::new(host.clone(), Source::Url),
        port: Setting::new(port, source(connect.host.is_some())),
        endpoint: Endpoint::Tcp { host, port },
        user: Setting::new(
            if connect.external_auth {
                "(external authentication)".to_string()
            } else {
                connect.user.clone()
            },
            Source::Url,
        ),
        database: Setting::new(connect.connect_string.clone(), Source::Url),
        tls: TlsSettings {
            mode: Setting::new(
                if connect.tcps {
                    TlsMode::Require
                } else if connect.host.is_some() {
                    TlsMode::Disable
                } else {
                    // A TNS alias: tnsnames.ora decides.
                    TlsMode::Prefer
                },
                Source::Url,
            ),
            root: None,
            client_certificate: None,
            client_key: None,
            channel_binding: Setting::new(ChannelBindingMode::Disable, Source::Default),
            vocabulary: TlsVocabulary::Oracle,
        },
        connect_timeout: None::<Setting<Duration>>,
        application_name: None,
        password_url: connect
            .password
            .clone()
            .map(|password| Setting::new(password, Source::Url)),
        password_variable: None,
        password_file: None,
        external_auth: connect.external_auth,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect_string(text: &str) -> String {
        parse(text).unwrap().connect_string
    }

    #[test]
    fn ezconnect_alias_descriptor_and_external_auth() {
        let ez = parse("oracle://scott:ti%40ger@db.example:1522/sales").unwrap();
        assert_eq!(ez.user, "scott");
        assert_eq!(ez.password, Some(Secret("ti@ger".to_string())));
        assert_eq!(ez.connect_string, "//db.example:1522/sales");
        assert!(!ez.external_auth && !ez.tcps);
        assert_eq!(
            connect_string("oracle://scott@db.example/sales"),
            "//db.example:1521/sales"
        );
        assert_eq!(
            connect_string(
                "oracle://scott@db.example:2484/sales?protocol=tcps&wallet_location=/etc/wallet"
            ),
            "tcps://db.example:2484/sales?wallet_location=/etc/wallet"
        );
        let alias = parse("oracle://scott@PRODDB").unwrap();
        assert_eq!(
            (alias.connect_string.as_str(), alias.host),
            ("PRODDB", None)
        );
        let descriptor = "(DESCRIPTION=(ADDRESS=(PROTOCOL=tcps)(HOST=db1.example)(PORT=2484))(CONNECT_DATA=(SERVICE_NAME=sales)))";
        let full = parse(&format!("oracle://scott:p@ss@{descriptor}")).unwrap();
        assert_eq!(full.connect_string, descriptor);
        assert_eq!(full.password, Some(Secret("p@ss".to_string())));
        assert!(full.tcps);
        assert_eq!(full.host, Some(("db1.example".to_string(), 2484)));
        let external = parse("oracle:///PRODDB").unwrap();
        assert!(external.external_auth);
        assert_eq!(
            (external.user.as_str(), external.connect_string.as_str()),
            ("", "PRODDB")
        );
        assert!(
            parse(&format!("oracle:///{descriptor}"))
                .unwrap()
                .external_auth
        );
    }

    #[test]
    fn bad_oracle_targets_are_usage_errors() {
        for text in [
            "oracle:///",
            "oracle://@(DESCRIPTION=(x))",
            "oracle://db.example:1521/sales",
            "oracle://u@h:1521/s?protocol=udp",
            "oracle://u@h:1521/s?sslmode=require",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
