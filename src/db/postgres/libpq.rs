//! PostgreSQL's connection settings the way libpq finds them, so a DBA's `.pgpass`, service
//! file and `PG*` variables work unchanged: the URL (and the service it or `PGSERVICE` names)
//! first, then the variables, then the files in the home directory, then libpq's defaults.
//! The keywords are libpq's; one it does not know, or one corescale does not implement, is a
//! usage error rather than a setting silently ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use url::Url;

use crate::db::connect::settings::{
    ChannelBindingMode, ConnectSettings, Endpoint, RootCertificates, Secret, Setting, Source,
    Surroundings, TlsMode, TlsSettings, TlsVocabulary, bad_value, contradiction, expand_home,
    load_ini, parse_url, port_setting, private_to_owner, url_password, url_settings,
};
use crate::error::UsageError;

pub(crate) const DEFAULT_PORT: u16 = 5432;
/// Where Debian's and upstream's servers put their sockets, libpq's default host.
const SOCKET_DIRECTORIES: [&str; 2] = ["/var/run/postgresql", "/tmp"];

/// libpq keywords corescale reads, with the variable that supplies each.
const KEYWORDS: [(&str, Option<&str>); 13] = [
    ("host", Some("PGHOST")),
    ("port", Some("PGPORT")),
    ("dbname", Some("PGDATABASE")),
    ("user", Some("PGUSER")),
    ("sslmode", Some("PGSSLMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("application_name", Some("PGAPPNAME")),
    ("passfile", Some("PGPASSFILE")),
    ("service", Some("PGSERVICE")),
];

/// Settings by keyword, each with its source, filled from the strongest source down.
type Found = BTreeMap<&'static str, Setting<String>>;

/// Resolves a postgres:// URL into the settings libpq would use.
pub(crate) fn resolve(
    text: &str,
    surroundings: &dyn Surroundings,
) -> Result<ConnectSettings, UsageError> {
    let (url, host_given) = parse_url(text)?;
    let url = &url;
    let mut found = Found::new();
    let mut service_password = None;
    let mut warnings = Vec::new();
    from_url(url, host_given, &mut found)?;
    // A service is part of the connection string: its settings come before the variables'.
    let service = found.get("service").cloned().or_else(|| {
        surroundings
            .var("PGSERVICE")
            .map(|name| Setting::new(name, Source::Variable("PGSERVICE")))
    });
    if let Some(service) = service {
        service_password = from_service(&service.value, surroundings, &mut found)?;
    }
    for (keyword, variable) in KEYWORDS {
        if let Some(variable) = variable
            && !found.contains_key(keyword)
            && let Some(value) = surroundings.var(variable)
        {
            found.insert(keyword, Setting::new(value, Source::Variable(variable)));
        }
    }
    let password_variable = surroundings
        .var("PGPASSWORD")
        .map(|password| Setting::new(Secret(password), Source::Variable("PGPASSWORD")));

    let port = port_setting(found.get("port"), DEFAULT_PORT)?;
    let host = found.get("host").cloned().unwrap_or_else(|| {
        let directory = SOCKET_DIRECTORIES
            .iter()
            .find(|directory| socket_in(directory, port.value).exists())
            .map_or("localhost", |directory| directory);
        Setting::new(directory.to_string(), Source::Default)
    });
    if host.value.contains(',') {
        return Err(UsageError::new(
            "--target: a host list in host= is not read: write the hosts in the URL (postgres://user@h1:5432,h2:5433/db), or give --target once per instance",
        ));
    }
    let endpoint = if host.value.starts_with('/') {
        Endpoint::Socket(socket_in(&host.value, port.value))
    } else {
        Endpoint::Tcp {
            host: host.value.clone(),
            port: port.value,
        }
    };
    let user = found.get("user").cloned().unwrap_or_else(|| {
        Setting::new(
            surroundings
                .os_user()
                .unwrap_or_else(|| "postgres".to_string()),
            Source::Default,
        )
    });
    let database = found
        .get("dbname")
        .cloned()
        .unwrap_or_else(|| Setting::new(user.value.clone(), Source::Default));
    let tls = tls_settings(&found, &endpoint, surroundings)?;
    let connect_timeout = found
        .get("connect_timeout")
        .map(|timeout| {
            timeout
                .value
                .trim()
                .parse::<u64>()
                .map(|seconds| Setting::new(Duration::from_secs(seconds), timeout.source.clone()))
                .map_err(|_| bad_value("connect_timeout", &timeout.value, "whole seconds"))
        })
        .transpose()?
        // libpq: 0 waits for ever; corescale keeps its own limit then.
        .filter(|timeout| !timeout.value.is_zero());
    let password_file = from_passfile(
        &found,
        &host.value,
        port.value,
        &database.value,
        &user.value,
        surroundings,
        &mut warnings,
    );
    Ok(ConnectSettings {
        host,
        port,
        endpoint,
        user,
        database,
        tls,
        connect_timeout,
        application_name: found.get("application_name").cloned(),
        // A service's password is part of the connection string, as libpq takes it.
        password_url: url_password(url).or(service_password),
        password_variable,
        password_file,
        external_auth: false,
        warnings,
    })
}

fn socket_in(directory: &str, port: u16) -> PathBuf {
    Path::new(directory).join(format!(".s.PGSQL.{port}"))
}

/// The URL's user, host, port and database, and its query keywords.
fn from_url(url: &Url, host_given: bool, found: &mut Found) -> Result<(), UsageError> {
    found.extend(url_settings(
        url,
        host_given,
        ["user", "host", "port", "dbname"],
    ));
    let mut given = BTreeMap::new();
    let mut put = |keyword: &'static str, value: String| {
        found.insert(keyword, Setting::new(value, Source::Url));
    };
    for (name, value) in url.query_pairs() {
        contradiction(&mut given, &name, &name, &value)?;
        let Some((keyword, _)) = KEYWORDS.iter().find(|(keyword, _)| *keyword == name) else {
            return Err(UsageError::new(format!(
                "--target: '{}' is not a connection parameter corescale reads: use {}",
                name.chars()
                    .flat_map(char::escape_debug)
                    .take(40)
                    .collect::<String>(),
                KEYWORDS.map(|(keyword, _)| keyword).join(", ")
            )));
        };
        put(keyword, value.into_owned());
    }
    Ok(())
}

/// The settings of a service in `pg_service.conf`: the user's file (PGSERVICEFILE or
/// ~/.pg_service.conf) first, then the system's (PGSYSCONFDIR). Fills what is not yet set;
/// returns a password the service gives.
fn from_service(
    name: &str,
    surroundings: &dyn Surroundings,
    found: &mut Found,
) -> Result<Option<Setting<Secret>>, UsageError> {
    let user_file = surroundings
        .var("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| {
            surroundings
                .home()
                .map(|home| home.join(".pg_service.conf"))
        });
    let system_file = match surroundings.var("PGSYSCONFDIR") {
        Some(directory) => Path::new(&directory).join("pg_service.conf"),
        None => surroundings.system_file("/etc/postgresql-common/pg_service.conf"),
    };
    for file in user_file.into_iter().chain([system_file]) {
        if !file.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|error| {
            UsageError::new(format!(
                "cannot read the service file {}: {error}",
                file.display()
            ))
        })?;
        let ini = load_ini(&text, &file, false, "libpq")?;
        let Some(section) = ini.section(Some(name)) else {
            continue;
        };
        let mut password = None;
        for (key, value) in section.iter() {
            let value = value.trim().to_string();
            if key == "password" {
                password = Some(Setting::new(Secret(value), Source::File(file.clone())));
                continue;
            }
            if key == "service" {
                return Err(UsageError::new(format!(
                    "service '{name}' in {} names another service (service={value}): libpq does not allow a service inside a service file; write that service's settings into '{name}'",
                    file.display()
                )));
            }
            let Some((keyword, _)) = KEYWORDS.iter().find(|(keyword, _)| *keyword == key) else {
                return Err(UsageError::new(format!(
                    "service '{name}' in {} sets '{key}', which corescale does not read: use {}",
                    file.display(),
                    KEYWORDS.map(|(keyword, _)| keyword).join(", ")
                )));
            };
            found
                .entry(keyword)
                .or_insert_with(|| Setting::new(value, Source::File(file.clone())));
        }
        return Ok(password);
    }
    Err(UsageError::new(format!(
        "service '{name}' is defined in no service file (looked in PGSERVICEFILE or ~/.pg_service.conf, and PGSYSCONFDIR/pg_service.conf): define it, or name the server in the URL"
    )))
}

fn tls_settings(
    found: &Found,
    endpoint: &Endpoint,
    surroundings: &dyn Surroundings,
) -> Result<TlsSettings, UsageError> {
    let mode = match found.get("sslmode") {
        Some(mode) => Setting::new(
            TlsMode::parse_libpq(&mode.value)
                .ok_or_else(|| bad_value("sslmode", &mode.value, TlsMode::LIBPQ))?,
            mode.source.clone(),
        ),
        None => Setting::new(TlsMode::Prefer, Source::Default),
    };
    if matches!(endpoint, Endpoint::Socket(_))
        && mode.value.demands_tls()
        && mode.source != Source::Default
    {
        return Err(UsageError::new(format!(
            "sslmode={} (from {}) cannot be met over a Unix socket, which carries no TLS: connect over TCP (host=NAME) or drop sslmode",
            mode.value.libpq_name(),
            mode.source
        )));
    }
    let channel_binding = match found.get("channel_binding") {
        Some(binding) => Setting::new(
            ChannelBindingMode::parse(&binding.value).ok_or_else(|| {
                bad_value(
                    "channel_binding",
                    &binding.value,
                    "disable, prefer or require",
                )
            })?,
            binding.source.clone(),
        ),
        None => Setting::new(ChannelBindingMode::Prefer, Source::Default),
    };
    // libpq's files in ~/.postgresql are used when present.
    let home_file = |name: &str| {
        surroundings
            .home()
            .map(|home| home.join(".postgresql").join(name))
            .filter(|path| path.exists())
    };
    let path = |keyword: &str, default: &str| {
        found
            .get(keyword)
            .map(|setting| {
                Setting::new(
                    expand_home(&setting.value, surroundings),
                    setting.source.clone(),
                )
            })
            .or_else(|| home_file(default).map(|path| Setting::new(path, Source::Default)))
    };
    let root = path("sslrootcert", "root.crt").map(|path| {
        Setting::new(
            RootCertificates::parse(&path.value.to_string_lossy()),
            path.source,
        )
    });
    // libpq 16: the system's roots hold every public CA, so only the host name tells the
    // server apart; sslrootcert=system means verify-full, and a weaker mode is refused.
    let mode = match &root {
        Some(Setting {
            value: RootCertificates::System,
            source,
        }) => match mode.source {
            Source::Default => Setting::new(TlsMode::VerifyFull, source.clone()),
            _ if mode.value == TlsMode::VerifyFull => mode,
            _ => {
                return Err(UsageError::new(format!(
                    "sslmode={} (from {}) is too weak for sslrootcert=system, which trusts every public CA: use sslmode=verify-full, or give your CA's file in sslrootcert",
                    mode.value.libpq_name(),
                    mode.source
                )));
            }
        },
        _ => mode,
    };
    Ok(TlsSettings {
        mode,
        root,
        client_certificate: path("sslcert", "postgresql.crt"),
        client_key: path("sslkey", "postgresql.key"),
        channel_binding,
        vocabulary: TlsVocabulary::Libpq,
    })
}

/// The password `.pgpass` (or `passfile`, `PGPASSFILE`) gives for this host, port, database
/// and user, by libpq's rules: the first matching line wins, `*` matches anything, `\`
/// escapes `:` and `\`; a file others may read is ignored, with a warning.
fn from_passfile(
    found: &Found,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
    surroundings: &dyn Surroundings,
    warnings: &mut Vec<String>,
) -> Option<Setting<Secret>> {
    let file = match found.get("passfile") {
        Some(setting) => expand_home(&setting.value, surroundings),
        None => surroundings.home()?.join(".pgpass"),
    };
    if !file.is_file() {
        return None;
    }
    match private_to_owner(&file) {
        Ok(true) => {}
        Ok(false) => {
            warnings.push(format!(
                "password file {} has group or world access and is ignored (as libpq does): chmod 0600 it",
                file.display()
            ));
            return None;
        }
        Err(error) => {
            warnings.push(format!("cannot read {}: {error}", file.display()));
            return None;
        }
    }
    let text = std::fs::read_to_string(&file).ok()?;
    // libpq: a socket in the default directory matches the host name "localhost".
    let host = if host.starts_with('/') && SOCKET_DIRECTORIES.contains(&host) {
        "localhost"
    } else {
        host
    };
    let port = port.to_string();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = passfile_fields(line);
            let [f_host, f_port, f_database, f_user, password] = fields.as_slice() else {
                return None;
            };
            // libpq: a field that is exactly `*` matches anything; an escaped `\*` is a star.
            let matches = |(raw, text): &(String, String), value: &str| raw == "*" || text == value;
            (matches(f_host, host)
                && matches(f_port, &port)
                && matches(f_database, database)
                && matches(f_user, user))
            .then(|| Setting::new(Secret(password.1.clone()), Source::File(file.clone())))
        })
}

/// A `.pgpass` line's fields as libpq reads them, each as written and unescaped: `:`
/// separates, `\` escapes the next character; the password, too, ends at an unescaped `:`.
fn passfile_fields(line: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let (mut raw, mut text) = (String::new(), String::new());
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => {
                raw.push('\\');
                if let Some(escaped) = characters.next() {
                    raw.push(escaped);
                    text.push(escaped);
                }
            }
            ':' => {
                fields.push((std::mem::take(&mut raw), std::mem::take(&mut text)));
                if fields.len() == 5 {
                    return fields;
                }
            }
            other => {
                raw.push(other);
                text.push(other);
            }
        }
    }
    fields.push((raw, text));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::connect::settings::FakeSurroundings;
    use std::os::unix::fs::PermissionsExt;

    fn fake(home: &Path, variables: &[(&'static str, &str)]) -> FakeSurroundings {
        FakeSurroundings::new(home, variables)
    }

    fn resolved(url: &str, surroundings: &FakeSurroundings) -> Result<ConnectSettings, UsageError> {
        resolve(url, surroundings)
    }

    #[test]
    fn the_url_beats_the_variables_which_beat_the_defaults() {
        let home = tempfile::tempdir().unwrap();
        let surroundings = fake(
            home.path(),
            &[
                ("PGHOST", "envhost"),
                ("PGPORT", "6000"),
                ("PGUSER", "envuser"),
                ("PGSSLMODE", "verify-full"),
                ("PGAPPNAME", "nightly"),
                ("PGCONNECT_TIMEOUT", "7"),
            ],
        );
        let settings = resolved(
            "postgres://urluser@urlhost/db1?sslmode=require",
            &surroundings,
        )
        .unwrap();
        assert_eq!(
            settings.host,
            Setting::new("urlhost".to_string(), Source::Url)
        );
        assert_eq!(
            settings.port,
            Setting::new(6000, Source::Variable("PGPORT"))
        );
        assert_eq!(settings.user.value, "urluser");
        assert_eq!(settings.database.value, "db1");
        assert_eq!(
            settings.tls.mode,
            Setting::new(TlsMode::Require, Source::Url)
        );
        assert_eq!(
            settings.connect_timeout.unwrap().value,
            Duration::from_secs(7)
        );
        assert_eq!(settings.application_name.unwrap().value, "nightly");
        // Everything from the environment: postgres:// alone.
        let settings = resolved("postgres://", &surroundings).unwrap();
        assert_eq!(
            settings.endpoint,
            Endpoint::Tcp {
                host: "envhost".to_string(),
                port: 6000
            }
        );
        assert_eq!(settings.user.source, Source::Variable("PGUSER"));
        assert_eq!(settings.database.value, "envuser");
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull);
        // Nothing anywhere: libpq's defaults.
        let settings = resolved("postgres://h", &fake(home.path(), &[])).unwrap();
        assert_eq!(
            settings.user,
            Setting::new("osuser".to_string(), Source::Default)
        );
        assert_eq!(settings.database.value, "osuser");
        assert_eq!(settings.port, Setting::new(5432, Source::Default));
        assert_eq!(
            settings.tls.mode,
            Setting::new(TlsMode::Prefer, Source::Default)
        );
        assert_eq!(
            settings.tls.channel_binding.value,
            ChannelBindingMode::Prefer
        );
    }

    #[test]
    fn unknown_keywords_and_values_are_usage_errors() {
        let home = tempfile::tempdir().unwrap();
        let surroundings = fake(home.path(), &[]);
        for url in [
            "postgres://h/db?sslmode=required",
            "postgres://h/db?ssl-mode=REQUIRED",
            "postgres://h/db?sslmod=require",
            "postgres://h/db?channel_binding=yes",
            "postgres://h/db?port=0",
            "postgres://h/db?connect_timeout=5s",
            "postgres://a,b/db",
            "postgres://h/db?host=/tmp&sslmode=require",
        ] {
            assert!(resolved(url, &surroundings).is_err(), "{url}");
        }
        let error = resolved("postgres://h/db?sslmode=on", &surroundings)
            .unwrap_err()
            .to_string();
        assert!(error.contains("verify-full"), "{error}");
    }

    #[test]
    fn a_service_gives_host_port_database_user_and_sslmode() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("services.conf");
        std::fs::write(
            &file,
            "# services\n[other]\nhost=wrong\n\n[prod]\nhost=db.example\nport=5433\ndbname=sales\nuser=dba\nsslmode=verify-full\n",
        )
        .unwrap();
        let surroundings = fake(
            home.path(),
            &[
                ("PGSERVICEFILE", file.to_str().unwrap()),
                ("PGHOST", "envhost"),
            ],
        );
        let settings = resolved("postgres:///?service=prod", &surroundings).unwrap();
        assert_eq!(settings.host.value, "db.example");
        assert_eq!(settings.host.source, Source::File(file.clone()));
        assert_eq!(settings.port.value, 5433);
        assert_eq!(settings.database.value, "sales");
        assert_eq!(settings.user.value, "dba");
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull);
        // The URL still wins over its service; PGSERVICE names one too.
        let surroundings = fake(
            home.path(),
            &[
                ("PGSERVICEFILE", file.to_str().unwrap()),
                ("PGSERVICE", "prod"),
            ],
        );
        let settings = resolved("postgres://other.example/", &surroundings).unwrap();
        assert_eq!(settings.host.value, "other.example");
        assert_eq!(settings.port.value, 5433);
        let error = resolved("postgres:///?service=nope", &surroundings)
            .unwrap_err()
            .to_string();
        assert!(error.contains("'nope'"), "{error}");
        // A service inside a service: libpq refuses it ("nested service specifications").
        std::fs::write(&file, "[prod]\nservice=other\n[other]\nhost=db.example\n").unwrap();
        let error = resolved("postgres:///?service=prod", &surroundings)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("service=other") && error.contains("inside a service file"),
            "{error}"
        );
    }

    #[test]
    fn contradictory_duplicates_are_refused() {
        let home = tempfile::tempdir().unwrap();
        let surroundings = fake(home.path(), &[]);
        let error = resolved(
            "postgres://h/db?sslmode=verify-full&sslmode=disable",
            &surroundings,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("sslmode=verify-full and sslmode=disable") && error.contains("keep one"),
            "{error}"
        );
        let settings = resolved(
            "postgres://h/db?sslmode=require&sslmode=require&sslrootcert=/ca.pem",
            &surroundings,
        )
        .unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::Require);
    }

    #[test]
    fn system_roots_mean_verify_full() {
        let home = tempfile::tempdir().unwrap();
        let surroundings = fake(home.path(), &[]);
        let settings = resolved("postgres://h/db?sslrootcert=system", &surroundings).unwrap();
        assert_eq!(settings.tls.mode.value, TlsMode::VerifyFull);
        for mode in ["require", "verify-ca", "prefer"] {
            let url = format!("postgres://h/db?sslrootcert=system&sslmode={mode}");
            assert!(resolved(&url, &surroundings).is_err(), "{mode}");
        }
    }

    #[test]
    fn pgpass_matches_as_libpq_does_and_must_be_private() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(".pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:dba:wrong\ndb.example:5432:sales:dba:first\\:colon\\\\slash\n*:*:*:dba:fallback\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let surroundings = fake(home.path(), &[]);
        let password = |url: &str| {
            resolved(url, &surroundings)
                .unwrap()
                .password_file
                .map(|setting| setting.value.0)
        };
        assert_eq!(
            password("postgres://dba@db.example/sales").as_deref(),
            Some("first:colon\\slash")
        );
        assert_eq!(
            password("postgres://dba@db.example/other").as_deref(),
            Some("fallback")
        );
        assert_eq!(password("postgres://nobody@db.example/sales"), None);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let settings = resolved("postgres://dba@db.example/sales", &surroundings).unwrap();
        assert_eq!(settings.password_file, None);
        assert!(
            settings.warnings[0].contains("group or world"),
            "{:?}",
            settings.warnings
        );
    }

    #[test]
    fn passfile_fields_unescape_as_libpq_does() {
        let texts = |line: &str| -> Vec<String> {
            passfile_fields(line)
                .into_iter()
                .map(|(_, text)| text)
                .collect()
        };
        // The password ends at an unescaped colon, as in libpq.
        assert_eq!(texts("h:1:d:u:pa:ss"), ["h", "1", "d", "u", "pa"]);
        assert_eq!(texts("h:1:d:u:pa\\:ss"), ["h", "1", "d", "u", "pa:ss"]);
        assert_eq!(texts("h\\:x:1"), ["h:x", "1"]);
        // An escaped star is a literal star, not a wildcard.
        let fields = passfile_fields("\\*:*:d:u:p");
        assert_eq!(fields[0], ("\\*".to_string(), "*".to_string()));
        assert_eq!(fields[1], ("*".to_string(), "*".to_string()));
    }
}
