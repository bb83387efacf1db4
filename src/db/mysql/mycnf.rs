//! MySQL's and MariaDB's connection settings the way their clients find them: the URL
//! (`?ssl-mode=`, `?ssl-ca=`, `?socket=`, `?defaults-file=`), then `MYSQL_*` variables, then
//! the option files (`/etc/my.cnf`, `/etc/mysql/my.cnf`, `~/.my.cnf`, or only the one
//! `defaults-file` names), groups `[client]`, `[mysql]` and `[mariadb-client]`, later files
//! overriding earlier ones; then the clients' defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use url::Url;

use crate::db::connect::settings::{
    ChannelBindingMode, ConnectSettings, Endpoint, RootCertificates, Secret, Setting, Source,
    Surroundings, TlsMode, TlsSettings, TlsVocabulary, bad_value, contradiction, expand_home,
    load_ini, parse_url, port_setting, url_password, url_settings,
};
use crate::error::UsageError;

pub(crate) const DEFAULT_PORT: u16 = 3306;
/// Option files read when no `defaults-file` is named, in MySQL's order.
const OPTION_FILES: [&str; 2] = ["/etc/my.cnf", "/etc/mysql/my.cnf"];
/// Groups of an option file that concern a client.
const GROUPS: [&str; 5] = [
    "client",
    "client-server",
    "mysql",
    "mariadb-client",
    "client-mariadb",
];
/// Options corescale reads, by their canonical (dashed) name.
const OPTIONS: [&str; 10] = [
    "user", "password", "host", "port", "socket", "database", "ssl-mode", "ssl-ca", "ssl-cert",
    "ssl-key",
];
/// Includes followed at most this deep (a file including itself must not loop).
const MAX_INCLUDE_DEPTH: usize = 8;

type Found = BTreeMap<&'static str, Setting<String>>;

/// Resolves a mysql:// or mariadb:// URL into the settings the MySQL client would use.
pub(crate) fn resolve(
    text: &str,
    surroundings: &dyn Surroundings,
) -> Result<ConnectSettings, UsageError> {
    let (url, host_given) = parse_url(text)?;
    let url = &url;
    let mut found = Found::new();
    let mut warnings = Vec::new();
    let defaults_file = from_url(url, host_given, &mut found)?;
    for (option, variable) in [
        ("host", "MYSQL_HOST"),
        ("port", "MYSQL_TCP_PORT"),
        ("socket", "MYSQL_UNIX_PORT"),
    ] {
        if !found.contains_key(option)
            && let Some(value) = surroundings.var(variable)
        {
            found.insert(option, Setting::new(value, Source::Variable(variable)));
        }
    }
    let mut from_files = Found::new();
    for file in option_files(defaults_file, surroundings)?
        .iter()
        .filter(|file| file.is_file())
    {
        read_option_file(file, 0, &mut from_files, &mut warnings)?;
    }
    let password_file = from_files
        .remove("password")
        .map(|setting| Setting::new(Secret(setting.value), setting.source));
    for (option, setting) in from_files {
        found.entry(option).or_insert(setting);
    }
    let password_variable = surroundings
        .var("MYSQL_PWD")
        .map(|password| Setting::new(Secret(password), Source::Variable("MYSQL_PWD")));

    let port = port_setting(found.get("port"), DEFAULT_PORT)?;
    let (host, endpoint) = endpoint(&found, &port, surroundings)?;
    let user = found.get("user").cloned().unwrap_or_else(|| {
        Setting::new(
            surroundings.os_user().unwrap_or_else(|| "root".to_string()),
            Source::Default,
        )
    });
    let database = found
        .get("database")
        .cloned()
        .unwrap_or_else(|| Setting::new(String::new(), Source::Default));
    let tls = tls_settings(&found, (&host, &endpoint), surroundings, &mut warnings)?;
    Ok(ConnectSettings {
        host,
        port,
        endpoint,
        user,
        database,
        tls,
        connect_timeout: None,
        application_name: None,
        password_url: url_password(url),
        password_variable,
        password_file,
        external_auth: false,
        warnings,
    })
}

/// The option files to read: the one `defaults-file` names (which must exist), else the
/// system's and the user's, in MySQL's order.
fn option_files(
    defaults_file: Option<String>,
    surroundings: &dyn Surroundings,
) -> Result<Vec<PathBuf>, UsageError> {
    Ok(match defaults_file {
        Some(file) => {
            let file = expand_home(&file, surroundings);
            if !file.is_file() {
                return Err(UsageError::new(format!(
                    "--target: defaults-file {} does not exist",
                    file.display()
                )));
            }
            vec![file]
        }
        None => OPTION_FILES
            .iter()
            .map(|file| surroundings.system_file(file))
            .chain(surroundings.home().map(|home| home.join(".my.cnf")))
            .collect(),
    })
}

/// The host as the settings name it, and where to connect.
///
/// As the mysql client: no host, or "localhost", means the Unix socket when one is named;
/// but a port written in the URL means TCP to that port, unless the URL names a socket too
/// (MariaDB's client treats an explicit --port so since 10.6, MDEV-14974).
fn endpoint(
    found: &Found,
    port: &Setting<u16>,
    surroundings: &dyn Surroundings,
) -> Result<(Setting<String>, Endpoint), UsageError> {
    let socket = found.get("socket").cloned();
    let host = found.get("host").cloned();
    let port_in_url = port.source == Source::Url;
    let socket_in_url = socket
        .as_ref()
        .is_some_and(|socket| socket.source == Source::Url);
    let tcp = |host: Setting<String>| {
        let endpoint = Endpoint::Tcp {
            host: host.value.clone(),
            port: port.value,
        };
        (host, endpoint)
    };
    Ok(match (host, socket) {
        (Some(host), _) if host.value != "localhost" => tcp(host),
        (host, _) if port_in_url && !socket_in_url => {
            tcp(host.unwrap_or_else(|| Setting::new("localhost".to_string(), Source::Default)))
        }
        (_, Some(socket)) => {
            let path = expand_home(&socket.value, surroundings);
            (
                Setting::new(path.display().to_string(), socket.source),
                Endpoint::Socket(path),
            )
        }
        (Some(host), None) => tcp(host),
        (None, None) => {
            return Err(UsageError::new(
                "--target names no host and no socket: use e.g. mysql://root@127.0.0.1:3306/test, ?socket=/run/mysqld/mysqld.sock, or host= in ~/.my.cnf",
            ));
        }
    })
}

/// TLS as `ssl-mode` and the `ssl-*` files ask, refused over a socket when it is demanded.
fn tls_settings(
    found: &Found,
    (host, endpoint): (&Setting<String>, &Endpoint),
    surroundings: &dyn Surroundings,
    warnings: &mut Vec<String>,
) -> Result<TlsSettings, UsageError> {
    let mode = match found.get("ssl-mode") {
        Some(mode) => Setting::new(
            TlsMode::parse_mysql(&mode.value)
                .ok_or_else(|| bad_value("ssl-mode", &mode.value, TlsMode::MYSQL))?,
            mode.source.clone(),
        ),
        None => Setting::new(TlsMode::Prefer, Source::Default),
    };
    let path = |option: &str| {
        found.get(option).map(|setting| {
            Setting::new(
                expand_home(&setting.value, surroundings),
                setting.source.clone(),
            )
        })
    };
    if let Endpoint::Socket(path) = endpoint
        && mode.value.demands_tls()
    {
        return Err(UsageError::new(format!(
            "ssl-mode={} (from {}) cannot be met over the Unix socket {} (from {}), which carries no TLS: name a host and port (mysql://user@HOST:3306/db) or drop ssl-mode",
            mode.value.mysql_name(),
            mode.source,
            path.display(),
            host.source
        )));
    }
    // The mysql crate adds the public web roots to ssl-ca: without the host-name check, any
    // publicly signed certificate passes. Said, so nobody takes VERIFY_CA for more than it is.
    if mode.value == TlsMode::VerifyCa
        || (mode.value == TlsMode::Require && found.contains_key("ssl-ca"))
    {
        warnings.push(format!(
            "ssl-mode={} with the MySQL driver trusts the public web CAs as well as ssl-ca, and does not check the host name: any publicly signed certificate passes; use ssl-mode=VERIFY_IDENTITY",
            mode.value.mysql_name()
        ));
    }
    Ok(TlsSettings {
        mode,
        root: path("ssl-ca")
            .map(|path| Setting::new(RootCertificates::File(path.value), path.source)),
        client_certificate: path("ssl-cert"),
        client_key: path("ssl-key"),
        channel_binding: Setting::new(ChannelBindingMode::Disable, Source::Default),
        vocabulary: TlsVocabulary::MySql,
    })
}

/// An option's canonical name: MySQL treats `_` and `-` alike.
fn canonical(name: &str) -> Option<&'static str> {
    let dashed = name.trim().to_ascii_lowercase().replace('_', "-");
    OPTIONS.iter().copied().find(|option| *option == dashed)
}

/// The URL's user, host, port and database and its parameters; returns a `defaults-file`.
fn from_url(url: &Url, host_given: bool, found: &mut Found) -> Result<Option<String>, UsageError> {
    found.extend(url_settings(
        url,
        host_given,
        ["user", "host", "port", "database"],
    ));
    let put = |found: &mut Found, keyword: &'static str, value: String| {
        found.insert(keyword, Setting::new(value, Source::Url));
    };
    let mut defaults_file = None;
    let mut given = BTreeMap::new();
    // require_ssl=true asks for TLS: a mode given with it must demand TLS too.
    let mut required: Option<String> = None;
    let refuse_clear_text = |required: &Option<String>, name: &str, mode: &str| match (
        required,
        TlsMode::parse_mysql(mode),
    ) {
        (Some(asked), Some(mode)) if !mode.demands_tls() => Err(UsageError::new(format!(
            "--target gives {asked}=true and {name}={mode}, which contradict each other: keep one",
            mode = mode.mysql_name()
        ))),
        _ => Ok(()),
    };
    for (name, value) in url.query_pairs() {
        let dashed = name.to_ascii_lowercase().replace('_', "-");
        contradiction(&mut given, &dashed, &name, &value)?;
        match dashed.as_str() {
            "defaults-file" => defaults_file = Some(value.into_owned()),
            // The mysql crate's own spelling of REQUIRED.
            "require-ssl" => match value.as_ref() {
                "true" | "1" => {
                    required = Some(name.to_string());
                    match found.get("ssl-mode") {
                        Some(mode) => refuse_clear_text(&required, "ssl-mode", &mode.value)?,
                        None => put(found, "ssl-mode", "REQUIRED".to_string()),
                    }
                }
                "false" | "0" => {}
                other => return Err(bad_value("require_ssl", other, "true or false")),
            },
            "ssl-mode" => {
                refuse_clear_text(&required, &name, &value)?;
                put(found, "ssl-mode", value.into_owned());
            }
            "sslmode" | "ssl" => {
                return Err(UsageError::new(format!(
                    "--target: MySQL calls it ssl-mode, not {name}: use ?ssl-mode={}",
                    TlsMode::MYSQL
                )));
            }
            _ => match canonical(&dashed).filter(|option| *option != "password") {
                Some(option) => put(found, option, value.into_owned()),
                None => {
                    return Err(UsageError::new(format!(
                        "--target: '{}' is not a connection parameter corescale reads: use ssl-mode, ssl-ca, ssl-cert, ssl-key, socket, defaults-file",
                        name.chars()
                            .flat_map(char::escape_debug)
                            .take(40)
                            .collect::<String>()
                    )));
                }
            },
        }
    }
    Ok(defaults_file)
}

/// Reads one option file's client groups into `found`, later values replacing earlier ones;
/// follows `!include` and `!includedir`. A world-writable file is skipped, as MySQL does.
fn read_option_file(
    file: &Path,
    depth: usize,
    found: &mut Found,
    warnings: &mut Vec<String>,
) -> Result<(), UsageError> {
    use std::os::unix::fs::PermissionsExt;
    if depth > MAX_INCLUDE_DEPTH {
        return Err(UsageError::new(format!(
            "option file {} includes files more than {MAX_INCLUDE_DEPTH} deep (a loop?)",
            file.display()
        )));
    }
    let cannot = |error: std::io::Error| {
        UsageError::new(format!(
            "cannot read option file {}: {error}",
            file.display()
        ))
    };
    if std::fs::metadata(file)
        .map_err(cannot)?
        .permissions()
        .mode()
        & 0o002
        != 0
    {
        warnings.push(format!(
            "option file {} is world-writable and is ignored (as MySQL does): chmod o-w it",
            file.display()
        ));
        return Ok(());
    }
    let text = std::fs::read_to_string(file).map_err(cannot)?;
    // rust-ini reads the sections and values; MySQL's directives and bare options (`quick`,
    // `skip-ssl`) are taken out first. An `!include` takes effect where it stands: what came
    // before it is applied first, and the group goes on after it.
    let mut kept = String::new();
    let mut group = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let included: Vec<PathBuf> = if let Some(directory) = trimmed.strip_prefix("!includedir") {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(directory.trim())
                .map(|entries| {
                    entries
                        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                        .collect()
                })
                .unwrap_or_default();
            entries.retain(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "cnf" || extension == "ini")
            });
            entries.sort();
            entries
        } else if let Some(included) = trimmed.strip_prefix("!include") {
            vec![PathBuf::from(included.trim())]
        } else {
            if trimmed.starts_with('[') {
                // What follows a group's `]` (a comment) is ignored, as MySQL does.
                let end = trimmed.find(']').map_or(trimmed.len(), |end| end + 1);
                group = trimmed[..end].to_string();
                kept.push_str(&group);
                kept.push('\n');
            } else if !trimmed.starts_with(';') {
                // An option, or a comment: without_end_comment leaves nothing of a `#` line.
                let option = without_end_comment(trimmed).trim_end();
                if option.contains('=') {
                    kept.push_str(option);
                    kept.push('\n');
                } else if !option.is_empty() {
                    // A bare option: `ssl`, `skip-ssl`, `ssl-verify-server-cert`, `quick`.
                    let dashed = option.to_ascii_lowercase().replace('_', "-");
                    match dashed.strip_prefix("skip-") {
                        Some(name) => kept.push_str(&format!("{name}=0\n")),
                        None => kept.push_str(&format!("{dashed}=1\n")),
                    }
                }
            }
            continue;
        };
        apply_options(file, &kept, found)?;
        kept = format!("{group}\n");
        for entry in included {
            read_option_file(&entry, depth + 1, found, warnings)?;
        }
    }
    apply_options(file, &kept, found)
}

/// Applies the client groups of option-file text to `found`, later values replacing earlier
/// ones. MySQL's TLS switches (`ssl`, `ssl-verify-server-cert`) become `ssl-mode`; a TLS
/// option corescale cannot honour is an error, never dropped.
fn apply_options(file: &Path, text: &str, found: &mut Found) -> Result<(), UsageError> {
    let ini = load_ini(text, file, true, "MySQL")?;
    let truthy = |value: &str| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "1" | "on" | "true" | "yes" | ""
        )
    };
    for (section, properties) in ini.iter() {
        if !section.is_some_and(|section| GROUPS.contains(&section.trim())) {
            continue;
        }
        for (key, value) in properties.iter() {
            let dashed = key.trim().to_ascii_lowercase().replace('_', "-");
            let source = Source::File(file.to_path_buf());
            let mode = |mode: &str| Setting::new(mode.to_string(), source.clone());
            match dashed.as_str() {
                "ssl" => {
                    let next = if truthy(value) {
                        "REQUIRED"
                    } else {
                        "DISABLED"
                    };
                    found.insert("ssl-mode", mode(next));
                }
                "ssl-verify-server-cert" => {
                    if truthy(value) {
                        found.insert("ssl-mode", mode("VERIFY_IDENTITY"));
                    }
                }
                _ => match canonical(&dashed) {
                    Some(option) => {
                        found.insert(option, Setting::new(value.trim().to_string(), source));
                    }
                    // rustls speaks TLS 1.2 and 1.3 only, which any tls-version allows.
                    None if dashed == "tls-version" => {}
                    None if dashed.starts_with("ssl-") => {
                        return Err(UsageError::new(format!(
                            "option file {} sets {dashed}, which corescale cannot honour: it reads ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl and ssl-verify-server-cert (remove it from the client groups, or point ?defaults-file= at a file without it)",
                            file.display()
                        )));
                    }
                    None => {}
                },
            }
        }
    }
    Ok(())
}

/// An option line without its end comment, as MySQL reads it: `#` outside quotes starts a
/// comment (`port = 3307  # the replica`); a quote escaped by `\\` inside quotes does not end
/// them.
fn without_end_comment(line: &str) -> &str {
    let (mut quote, mut escaped) = (None, false);
    for (index, character) in line.char_indices() {
        if (character == '\'' || character == '"') && !escaped {
            match quote {
                None => quote = Some(character),
                Some(open) if open == character => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && character == '#' {
            return &line[..index];
        }
        escaped = quote.is_some() && character == '\\' && !escaped;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::connect::settings::FakeSurroundings;

    fn resolved(url: &str, home: &Path) -> Result<ConnectSettings, UsageError> {
        resolve(url, &FakeSurroundings::new(home, &[]))
    }

    #[test]
    fn the_option_file_gives_what_the_url_leaves_out() {
        let home = tempfile::tempdir().unwrap();
        let extra = home.path().join("extra.cnf");
        std::fs::write(&extra, "[client]\nssl_ca = /etc/ca.pem\n").unwrap();
        std::fs::write(
            home.path().join(".my.cnf"),
            format!(
                "[mysqld]\nport=1\n[client]\nuser = dba\npassword = \"p#ss w=rd\"\nquick\nport=3307\nssl-mode=VERIFY_IDENTITY\n!include {}\n[mysql]\nhost=db.example\n",
                extra.display()
            ),
        )
        .unwrap();
        let settings = resolved("mysql:///sales", home.path()).unwrap();
        assert_eq!(settings.user.value, "dba");
        assert_eq!(
            settings.password_file.as_ref().map(|p| p.value.0.as_str()),
            Some("p#ss w=rd")
        );
        assert_eq!(settings.port.value, 3307);
        assert_eq!(settings.host.value, "db.example");
        assert_eq!(settings.database.value, "sales");
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull);
        assert_eq!(
            settings.tls.root.unwrap().value,
            RootCertificates::File(PathBuf::from("/etc/ca.pem"))
        );
        // The URL wins.
        let settings =
            resolved("mysql://root@other:3306/x?ssl-mode=DISABLED", home.path()).unwrap();
        assert_eq!(
            (settings.user.value.as_str(), settings.port.value),
            ("root", 3306)
        );
        assert_eq!(
            settings.tls.mode,
            Setting::new(TlsMode::Disable, Source::Url)
        );
    }

    #[test]
    fn end_comments_are_not_values() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".my.cnf"),
            "[client]  # every client\nport = 3307  # the replica\npassword = \"a#b\\\"#c\" # quoted\nhost=db.example#no space\nskip-ssl # plain\n",
        )
        .unwrap();
        let settings = resolved("mysql:///sales", home.path()).unwrap();
        assert_eq!(settings.port.value, 3307);
        assert_eq!(
            settings.password_file.as_ref().map(|p| p.value.0.as_str()),
            Some("a#b\"#c")
        );
        assert_eq!(settings.host.value, "db.example");
        assert_eq!(settings.tls.mode.value, TlsMode::Disable);
    }

    #[test]
    fn a_socket_is_used_when_no_host_is_named() {
        let home = tempfile::tempdir().unwrap();
        let settings = resolved(
            "mysql://root@/test?socket=/run/mysqld/mysqld.sock",
            home.path(),
        )
        .unwrap();
        assert_eq!(
            settings.endpoint,
            Endpoint::Socket(PathBuf::from("/run/mysqld/mysqld.sock"))
        );
        assert!(resolved("mysql://root@/test", home.path()).is_err());
    }

    /// An explicit port in the URL means TCP to it, even for localhost, where an option
    /// file names a socket; a socket named in the URL still means the socket. Messages say
    /// where each part came from.
    #[test]
    fn a_port_in_the_url_means_tcp_even_for_localhost() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".my.cnf"),
            "[client]\nsocket=/run/mysqld/mysqld.sock\n",
        )
        .unwrap();
        let option_file = home.path().join(".my.cnf").display().to_string();
        let settings = resolved("mysql://root@localhost/test", home.path()).unwrap();
        assert_eq!(
            settings.endpoint,
            Endpoint::Socket(PathBuf::from("/run/mysqld/mysqld.sock"))
        );
        assert_eq!(
            settings.origin(),
            format!("via Unix socket /run/mysqld/mysqld.sock, from {option_file}")
        );
        let error = resolved(
            "mysql://root@localhost/test?ssl-mode=VERIFY_IDENTITY",
            home.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains(&format!(
                "Unix socket /run/mysqld/mysqld.sock (from {option_file})"
            )),
            "{error}"
        );
        let settings = resolved("mysql://root@localhost:53309/test", home.path()).unwrap();
        assert_eq!(
            settings.endpoint,
            Endpoint::Tcp {
                host: "localhost".into(),
                port: 53309
            }
        );
        assert_eq!(
            settings.origin(),
            "via TCP to localhost:53309, host and port from the URL"
        );
        let settings = resolved(
            "mysql://root@localhost:53309/test?socket=/tmp/private.sock",
            home.path(),
        )
        .unwrap();
        assert_eq!(
            settings.endpoint,
            Endpoint::Socket(PathBuf::from("/tmp/private.sock"))
        );
    }

    #[test]
    fn contradictory_duplicates_are_refused() {
        let home = tempfile::tempdir().unwrap();
        for (url, named) in [
            (
                "mysql://u@h/db?require_ssl=true&ssl-mode=DISABLED",
                ["require_ssl=true", "ssl-mode=DISABLED"],
            ),
            (
                "mysql://u@h/db?ssl-mode=PREFERRED&require_ssl=true",
                ["require_ssl=true", "ssl-mode=PREFERRED"],
            ),
            (
                "mysql://u@h/db?ssl-mode=VERIFY_IDENTITY&ssl_mode=DISABLED",
                ["ssl-mode=VERIFY_IDENTITY", "ssl_mode=DISABLED"],
            ),
        ] {
            let error = resolved(url, home.path()).unwrap_err().to_string();
            assert!(
                named.iter().all(|part| error.contains(part)) && error.contains("keep one"),
                "{url}: {error}"
            );
        }
        // Said twice alike, or TLS asked for twice: no contradiction, and never downgraded.
        for url in [
            "mysql://u@h/db?ssl-mode=VERIFY_IDENTITY&require_ssl=true",
            "mysql://u@h/db?require_ssl=true&ssl-mode=VERIFY_IDENTITY",
            "mysql://u@h/db?ssl-mode=VERIFY_IDENTITY&ssl-mode=verify_identity",
        ] {
            let settings = resolved(url, home.path()).unwrap();
            assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull, "{url}");
        }
    }

    #[test]
    fn modes_and_parameters_are_checked() {
        let home = tempfile::tempdir().unwrap();
        let settings = resolved("mysql://u@h/db?require_ssl=true", home.path()).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::Require);
        let settings = resolved("mysql://u@h/db?ssl_mode=verify_ca", home.path()).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyCa);
        for url in [
            "mysql://u@h/db?ssl-mode=ON",
            "mysql://u@h/db?sslmode=require",
            "mysql://u@h/db?tls=1",
            "mysql://u@h/db?defaults-file=/nonexistent/my.cnf",
        ] {
            assert!(resolved(url, home.path()).is_err(), "{url}");
        }
    }

    #[test]
    fn tls_switches_become_ssl_mode_and_includes_apply_where_they_stand() {
        let home = tempfile::tempdir().unwrap();
        let later = home.path().join("later.cnf");
        std::fs::write(&later, "[client]\nssl-mode=DISABLED\n").unwrap();
        std::fs::write(
            home.path().join(".my.cnf"),
            format!(
                "[client]\nhost=h\n!include {}\nssl-verify-server-cert\nssl-ca=/ca.pem\n",
                later.display()
            ),
        )
        .unwrap();
        // The include comes first, the switch after it wins.
        let settings = resolved("mysql:///db", home.path()).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull);
        std::fs::write(
            home.path().join(".my.cnf"),
            format!("[client]\nhost=h\nssl\n!include {}\n", later.display()),
        )
        .unwrap();
        let settings = resolved("mysql:///db", home.path()).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::Disable);
        std::fs::write(home.path().join(".my.cnf"), "[client]\nhost=h\nssl=1\n").unwrap();
        let settings = resolved("mysql:///db", home.path()).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::Require);
        std::fs::write(
            home.path().join(".my.cnf"),
            "[client]\nhost=h\nssl-capath=/etc/ssl/certs\n",
        )
        .unwrap();
        let error = resolved("mysql:///db", home.path())
            .unwrap_err()
            .to_string();
        assert!(error.contains("ssl-capath"), "{error}");
    }

    #[test]
    fn a_world_writable_option_file_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(".my.cnf");
        std::fs::write(&file, "[client]\nhost=evil.example\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let settings = resolved("mysql://u@good.example/db", home.path()).unwrap();
        assert_eq!(settings.host.value, "good.example");
        assert!(settings.warnings[0].contains("world-writable"));
    }
}
