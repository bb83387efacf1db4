//! What a server must set for `corescale capture` to read its log: the settings read as a
//! session of this user in the database has them, each judged, and the statement that
//! fixes it named.
//! `db check --capture` prints these before the logs are written, so a week of logging is
//! not lost to one setting.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use super::pg_log::{PGREPLAY_PREFIX, Prefix};
use crate::db::Database;
use crate::db::product::Dialect;

/// How a setting stands for a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// As a capture needs it.
    Ready,
    /// A capture would be refused, or would miss statements or their values.
    Missing,
    /// A capture works; it would say more with another value.
    Advised,
}

/// One judged setting (or pair of settings), and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub standing: Standing,
    /// The settings as the server has them: "log_statement = 'none'".
    pub setting: String,
    /// What that means for a capture, and the fix where it needs one.
    pub meaning: String,
}

impl Finding {
    fn new(standing: Standing, setting: impl Into<String>, meaning: impl Into<String>) -> Self {
        Self {
            standing,
            setting: setting.into(),
            meaning: meaning.into(),
        }
    }
}

/// The settings PostgreSQL's log is judged by.
const POSTGRES: [&str; 12] = [
    "log_statement",
    "log_min_messages",
    "log_min_duration_statement",
    "log_duration",
    "log_destination",
    "logging_collector",
    "log_line_prefix",
    "log_connections",
    "log_disconnections",
    "log_parameter_max_length",
    "lc_messages",
    "log_timezone",
];

/// The variables MySQL's and MariaDB's logs are judged by (those a server lacks are left out).
const MYSQL: [&str; 8] = [
    "slow_query_log",
    "version",
    "long_query_time",
    "general_log",
    "log_output",
    "min_examined_row_limit",
    "log_slow_rate_limit",
    "log_timestamps",
];

/// Reads the logging settings of `database` as a session of the URL's user there has them
/// (ALTER DATABASE ... SET included; an application user's own ALTER ROLE ... SET applies
/// to its sessions only, and is not seen here) and judges them.
pub fn read(database: &dyn Database) -> Result<Vec<Finding>> {
    let target = database.target();
    let dialect = target.product.dialect;
    let mut session = database.open_script_session()?;
    let rows = match dialect {
        Dialect::PostgreSql => session.fetch_text(
            "SELECT name, setting FROM pg_catalog.pg_settings WHERE name = ANY ($1::pg_catalog.text[])",
            &[&format!("{{{}}}", POSTGRES.join(","))],
        ),
        Dialect::MySql => session.fetch_text(
            &format!(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
                MYSQL.map(|name| format!("'{name}'")).join(", ")
            ),
            &[],
        ),
        Dialect::Oracle => anyhow::bail!(
            "{target}: corescale captures PostgreSQL's and MySQL/MariaDB's logs; Oracle's workload is captured by Database Replay"
        ),
    }
    .with_context(|| format!("{target}: reading the logging settings"))?;
    let settings = rows
        .into_iter()
        .filter_map(|row| match row.as_slice() {
            [Some(name), value] => Some((name.to_lowercase(), value.clone().unwrap_or_default())),
            _ => None,
        })
        .collect();
    Ok(judge(dialect, &settings))
}

/// The findings for a server of `dialect` with these settings (name -> value as the server
/// writes it).
pub fn judge(dialect: Dialect, settings: &BTreeMap<String, String>) -> Vec<Finding> {
    match dialect {
        Dialect::PostgreSql => postgres(settings),
        Dialect::MySql => mysql(settings),
        Dialect::Oracle => Vec::new(),
    }
}

/// `name = 'value'` as the server has it, or that this user cannot read it.
fn shown(settings: &BTreeMap<String, String>, name: &str) -> String {
    settings.get(name).map_or_else(
        || format!("{name} (not readable by this user)"),
        |value| format!("{name} = '{value}'"),
    )
}

fn postgres(settings: &BTreeMap<String, String>) -> Vec<Finding> {
    let get = |name: &str| settings.get(name).map(String::as_str);
    let on = |name: &str| matches!(get(name), Some("on" | "true"));
    let reload = "; then SELECT pg_catalog.pg_reload_conf()";
    let mut findings = Vec::new();
    let durations = get("log_min_duration_statement") == Some("0");
    findings.push(if get("log_statement") == Some("all") {
        Finding::new(
            Standing::Ready,
            shown(settings, "log_statement"),
            "every statement is logged",
        )
    } else if durations {
        Finding::new(
            Standing::Ready,
            shown(settings, "log_min_duration_statement"),
            "every statement is logged with its duration",
        )
    } else {
        Finding::new(
            Standing::Missing,
            format!(
                "{}, {}",
                shown(settings, "log_statement"),
                shown(settings, "log_min_duration_statement")
            ),
            format!(
                "not every statement is logged: ALTER SYSTEM SET log_statement = 'all' (or ALTER DATABASE ... SET, for one database's sessions){reload}"
            ),
        )
    });
    if !durations && !on("log_duration") {
        findings.push(Finding::new(
            Standing::Advised,
            shown(settings, "log_min_duration_statement"),
            "statements are logged without their duration: log_min_duration_statement = 0 adds it, so a replay's latencies are set beside the captured ones",
        ));
    }
    findings.extend(destination(settings));
    findings.push(connections(settings));
    match get("log_parameter_max_length") {
        None | Some("-1") => {}
        Some("0") => findings.push(Finding::new(
            Standing::Missing,
            shown(settings, "log_parameter_max_length"),
            format!(
                "the extended protocol's parameters are not logged, and a replay could not bind them: ALTER SYSTEM SET log_parameter_max_length = -1{reload}"
            ),
        )),
        Some(_) => findings.push(Finding::new(
            Standing::Missing,
            shown(settings, "log_parameter_max_length"),
            format!(
                "the extended protocol's parameters are logged cut short, and a replay would bind the cut values: ALTER SYSTEM SET log_parameter_max_length = -1{reload}"
            ),
        )),
    }
    if matches!(get("log_min_messages"), Some("fatal" | "panic")) {
        findings.push(Finding::new(
            Standing::Missing,
            shown(settings, "log_min_messages"),
            format!(
                "the LOG lines a capture reads (statements, durations, connections) are not written: ALTER SYSTEM SET log_min_messages = 'warning'{reload}"
            ),
        ));
    }
    findings.push(messages(settings));
    findings.push(time_zone(settings));
    findings
}

/// Where the log goes: a format corescale reads, written where it can be read.
fn destination(settings: &BTreeMap<String, String>) -> Vec<Finding> {
    let Some(destinations) = settings.get("log_destination") else {
        return vec![Finding::new(
            Standing::Missing,
            shown(settings, "log_destination"),
            "where the log goes is not known: run db check as a user who may read it",
        )];
    };
    let has = |name: &str| destinations.split(',').any(|one| one.trim() == name);
    let collector = settings.get("logging_collector").map(String::as_str) == Some("on");
    let mut findings = Vec::new();
    let structured = ["csvlog", "jsonlog"].into_iter().find(|name| has(name));
    match structured {
        Some(format) if collector => findings.push(Finding::new(
            Standing::Ready,
            shown(settings, "log_destination"),
            format!("the {format} file is read"),
        )),
        Some(format) if !has("stderr") => findings.push(Finding::new(
            Standing::Missing,
            format!("{}, logging_collector = off", shown(settings, "log_destination")),
            format!(
                "{format} is written only by the logging collector: ALTER SYSTEM SET logging_collector = on, then restart the server"
            ),
        )),
        _ if has("stderr") => findings.push(prefix(settings)),
        _ => findings.push(Finding::new(
            Standing::Missing,
            shown(settings, "log_destination"),
            "corescale reads csvlog, jsonlog or stderr: ALTER SYSTEM SET log_destination = 'csvlog' (with logging_collector = on)",
        )),
    }
    findings
}

/// A stderr log is read by its `log_line_prefix`.
fn prefix(settings: &BTreeMap<String, String>) -> Finding {
    let Some(prefix) = settings.get("log_line_prefix") else {
        return Finding::new(
            Standing::Missing,
            shown(settings, "log_line_prefix"),
            "a stderr log is read by its log_line_prefix, which this user cannot read",
        );
    };
    // A session's user and database: named on each line, or on its connection's line.
    let named = prefix.contains("%u") && prefix.contains("%d") || connections_logged(settings);
    match Prefix::parse(prefix) {
        Ok(_) if !named => Finding::new(
            Standing::Advised,
            shown(settings, "log_line_prefix"),
            format!(
                "the stderr log is read with it (`capture --log-line-prefix '{prefix}'`), but it names no user (%u) or database (%d), and log_connections is off: a session's user and database are then not known; add them, as in '{PGREPLAY_PREFIX}'"
            ),
        ),
        Ok(_) => Finding::new(
            Standing::Ready,
            shown(settings, "log_line_prefix"),
            format!("the stderr log is read with it: give `capture --log-line-prefix '{prefix}'`"),
        ),
        Err(error) => Finding::new(
            Standing::Missing,
            shown(settings, "log_line_prefix"),
            format!(
                "{error:#}; ALTER SYSTEM SET log_line_prefix = '{PGREPLAY_PREFIX}', then SELECT pg_catalog.pg_reload_conf()"
            ),
        ),
    }
}

/// Whether each session's connection is logged with its user and database; PostgreSQL 18
/// lists the stages it logs, and keeps a boolean as it was written.
fn connections_logged(settings: &BTreeMap<String, String>) -> bool {
    settings.get("log_connections").is_some_and(|value| {
        matches!(
            value.to_ascii_lowercase().as_str(),
            "on" | "true" | "yes" | "1" | "all"
        ) || value
            .split(',')
            .any(|stage| stage.trim() == "authorization")
    })
}

/// Sessions' starts and ends, and their users.
fn connections(settings: &BTreeMap<String, String>) -> Finding {
    let connected = connections_logged(settings);
    let ended = settings.get("log_disconnections").map(String::as_str) == Some("on");
    let setting = format!(
        "{}, {}",
        shown(settings, "log_connections"),
        shown(settings, "log_disconnections")
    );
    if connected && ended {
        Finding::new(
            Standing::Ready,
            setting,
            "each session's connection and end are logged",
        )
    } else {
        Finding::new(
            Standing::Advised,
            setting,
            "without both, each session is taken from its first statement to its last: ALTER SYSTEM SET log_connections = on; ALTER SYSTEM SET log_disconnections = on; SELECT pg_catalog.pg_reload_conf() (for sessions that connect after)",
        )
    }
}

/// The log's words are read in English.
fn messages(settings: &BTreeMap<String, String>) -> Finding {
    let Some(language) = settings.get("lc_messages") else {
        return Finding::new(
            Standing::Advised,
            shown(settings, "lc_messages"),
            "the log's language is not known: corescale reads its words ('statement:', 'duration:') in English",
        );
    };
    let english = ["C", "POSIX", "en", "English"]
        .iter()
        .any(|start| language == start || language.starts_with(&format!("{start}_")));
    if english || language.starts_with("C.") {
        Finding::new(
            Standing::Ready,
            shown(settings, "lc_messages"),
            "the log's words are English, as corescale reads them",
        )
    } else if language.is_empty() {
        Finding::new(
            Standing::Advised,
            shown(settings, "lc_messages"),
            "the log's language is the server's environment's: corescale reads its words ('statement:', 'duration:') in English; ALTER SYSTEM SET lc_messages = 'C' makes sure",
        )
    } else {
        Finding::new(
            Standing::Missing,
            shown(settings, "lc_messages"),
            "the log's words ('statement:', 'duration:') are written in that language by a server built with translations (as the distributions' packages are), and corescale reads them in English: ALTER SYSTEM SET lc_messages = 'C'; then SELECT pg_catalog.pg_reload_conf()",
        )
    }
}

fn time_zone(settings: &BTreeMap<String, String>) -> Finding {
    let zone = settings.get("log_timezone").map_or("", String::as_str);
    if matches!(
        zone,
        "UTC" | "Etc/UTC" | "UCT" | "Etc/UCT" | "GMT" | "Etc/GMT" | "Zulu"
    ) {
        Finding::new(
            Standing::Ready,
            shown(settings, "log_timezone"),
            "times are on UTC",
        )
    } else {
        Finding::new(
            Standing::Advised,
            shown(settings, "log_timezone"),
            "times are placed on UTC where the zone's name has one meaning (CET, EST, ...), and a capture whose zone changes to one that cannot be placed is refused: log_timezone = 'UTC' is surest",
        )
    }
}

fn mysql(settings: &BTreeMap<String, String>) -> Vec<Finding> {
    let get = |name: &str| settings.get(name).map(String::as_str);
    let on = |name: &str| matches!(get(name), Some("ON" | "1"));
    let zero = |name: &str| get(name).and_then(|value| value.parse::<f64>().ok()) == Some(0.0);
    let mut findings = Vec::new();
    let slow = on("slow_query_log") && zero("long_query_time");
    findings.push(if slow {
        Finding::new(
            Standing::Ready,
            format!(
                "{}, {}",
                shown(settings, "slow_query_log"),
                shown(settings, "long_query_time")
            ),
            "every statement is logged in the slow query log, with its duration (administrative ones, ALTER, OPTIMIZE, ANALYZE ..., only with log_slow_admin_statements = ON)",
        )
    } else if on("general_log") {
        Finding::new(
            Standing::Ready,
            shown(settings, "general_log"),
            "every statement is logged in the general query log (without durations: the slow log with long_query_time = 0 has them)",
        )
    } else {
        Finding::new(
            Standing::Missing,
            format!(
                "{}, {}, {}",
                shown(settings, "slow_query_log"),
                shown(settings, "long_query_time"),
                shown(settings, "general_log")
            ),
            "not every statement is logged: SET GLOBAL long_query_time = 0, GLOBAL slow_query_log = ON (sessions connected before keep their long_query_time: reconnect them), and in the option file to outlive a restart",
        )
    });
    if slow {
        if get("min_examined_row_limit").is_some_and(|value| value != "0") {
            findings.push(Finding::new(
                Standing::Missing,
                shown(settings, "min_examined_row_limit"),
                "statements that examine fewer rows are left out of the slow log: SET GLOBAL min_examined_row_limit = 0 (sessions connected before keep theirs: reconnect them)",
            ));
        }
        if get("log_slow_rate_limit").is_some_and(|value| value != "1") {
            findings.push(Finding::new(
                Standing::Missing,
                shown(settings, "log_slow_rate_limit"),
                "only one statement (or session) in that many is logged: SET GLOBAL log_slow_rate_limit = 1",
            ));
        }
    }
    let to_file = get("log_output").is_some_and(|output| {
        output
            .split(',')
            .any(|one| one.trim().eq_ignore_ascii_case("FILE"))
    });
    findings.push(Finding::new(
        if to_file {
            Standing::Ready
        } else {
            Standing::Missing
        },
        shown(settings, "log_output"),
        if to_file {
            "the log is written to a file, which corescale reads"
        } else {
            "corescale reads the log's file, not its table: SET GLOBAL log_output = 'FILE'"
        },
    ));
    match get("log_timestamps") {
        Some("UTC") => findings.push(Finding::new(
            Standing::Ready,
            shown(settings, "log_timestamps"),
            "times are on UTC",
        )),
        Some(_) => findings.push(Finding::new(
            Standing::Advised,
            shown(settings, "log_timestamps"),
            "times are the server's local time with its offset: SET GLOBAL log_timestamps = 'UTC' is surest",
        )),
        // MariaDB has no log_timestamps (nor had MySQL before 5.7).
        None if get("version").is_some_and(|version| version.contains("MariaDB")) => {
            findings.push(Finding::new(
                Standing::Advised,
                shown(settings, "version"),
                "MariaDB times its logs to the second, and a capture spreads each second's statements over it evenly; the slow log's times are placed on UTC (its SET timestamp), the general log's are local time without a zone: a general log must not cross a change of daylight saving time",
            ));
        }
        None => findings.push(Finding::new(
            Standing::Advised,
            shown(settings, "version"),
            "this server writes its logs' times in local time without a zone (log_timestamps came with MySQL 5.7): a capture must not cross a change of daylight saving time",
        )),
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_string(), (*value).to_string()))
            .collect()
    }

    fn missing(findings: &[Finding]) -> Vec<&str> {
        findings
            .iter()
            .filter(|finding| finding.standing == Standing::Missing)
            .map(|finding| finding.setting.as_str())
            .collect()
    }

    /// PostgreSQL 15's defaults, as `initdb` writes them on Debian.
    fn postgres_defaults() -> BTreeMap<String, String> {
        settings(&[
            ("log_statement", "none"),
            ("log_min_duration_statement", "-1"),
            ("log_duration", "off"),
            ("log_destination", "stderr"),
            ("logging_collector", "off"),
            ("log_line_prefix", "%m [%p] %q%u@%d "),
            ("log_connections", "off"),
            ("log_disconnections", "off"),
            ("log_parameter_max_length", "-1"),
            ("lc_messages", "C.UTF-8"),
            ("log_timezone", "Etc/UTC"),
        ])
    }

    #[test]
    fn a_default_server_is_told_what_to_set_and_how() {
        let findings = judge(Dialect::PostgreSql, &postgres_defaults());
        assert_eq!(
            missing(&findings),
            ["log_statement = 'none', log_min_duration_statement = '-1'"],
            "{findings:#?}"
        );
        // Debian's prefix names the session by its process (%p): it is read with it.
        let prefix = findings
            .iter()
            .find(|finding| finding.setting.starts_with("log_line_prefix"))
            .unwrap();
        assert_eq!(prefix.standing, Standing::Ready);
        assert!(
            prefix
                .meaning
                .contains("--log-line-prefix '%m [%p] %q%u@%d '"),
            "{prefix:?}"
        );
        let mut whole_seconds = postgres_defaults();
        whole_seconds.insert("log_line_prefix".into(), "%t [%p] ".into());
        let refused = missing(&judge(Dialect::PostgreSql, &whole_seconds))[1].to_string();
        assert_eq!(refused, "log_line_prefix = '%t [%p] '");
        let meaning = &judge(Dialect::PostgreSql, &whole_seconds)
            .into_iter()
            .find(|finding| finding.setting == refused)
            .unwrap()
            .meaning;
        assert!(
            meaning.contains("whole seconds") && meaning.contains(PGREPLAY_PREFIX),
            "{meaning}"
        );
        let statements = &findings[0].meaning;
        assert!(
            statements.contains("ALTER SYSTEM SET log_statement = 'all'"),
            "{statements}"
        );
    }

    #[test]
    fn a_server_logging_as_pgreplay_documents_is_ready() {
        let mut ready = postgres_defaults();
        for (name, value) in [
            ("log_min_duration_statement", "0"),
            ("log_line_prefix", PGREPLAY_PREFIX),
            ("log_connections", "on"),
            ("log_disconnections", "on"),
        ] {
            ready.insert(name.into(), value.into());
        }
        let findings = judge(Dialect::PostgreSql, &ready);
        assert!(
            findings
                .iter()
                .all(|finding| finding.standing == Standing::Ready),
            "{findings:#?}"
        );
        // PostgreSQL 18 lists the stages of a connection it logs.
        ready.insert("log_connections".into(), "receipt,authorization".into());
        assert_eq!(connections(&ready).standing, Standing::Ready);
        ready.insert("log_connections".into(), "receipt".into());
        assert_eq!(connections(&ready).standing, Standing::Advised);
    }

    #[test]
    fn csvlog_needs_the_collector_and_parameters_their_whole_length() {
        let mut server = postgres_defaults();
        server.insert("log_statement".into(), "all".into());
        server.insert("log_destination".into(), "csvlog".into());
        server.insert("log_parameter_max_length".into(), "64".into());
        server.insert("lc_messages".into(), "de_DE.UTF-8".into());
        let findings = judge(Dialect::PostgreSql, &server);
        assert_eq!(
            missing(&findings),
            [
                "log_destination = 'csvlog', logging_collector = off",
                "log_parameter_max_length = '64'",
                "lc_messages = 'de_DE.UTF-8'"
            ]
        );
        server.insert("logging_collector".into(), "on".into());
        assert_eq!(destination(&server)[0].standing, Standing::Ready);
        // A statement logged without its duration is advised, not refused.
        assert!(
            findings
                .iter()
                .any(|finding| finding.standing == Standing::Advised
                    && finding.meaning.contains("log_min_duration_statement = 0"))
        );
    }

    #[test]
    fn what_silences_the_log_or_its_parameters_is_missing() {
        let mut server = postgres_defaults();
        server.insert("log_statement".into(), "all".into());
        server.insert("log_parameter_max_length".into(), "0".into());
        server.insert("log_min_messages".into(), "fatal".into());
        let findings = judge(Dialect::PostgreSql, &server);
        assert_eq!(
            missing(&findings),
            [
                "log_parameter_max_length = '0'",
                "log_min_messages = 'fatal'"
            ]
        );
        assert!(
            findings[findings.len() - 3]
                .meaning
                .contains("are not written")
        );
        // A prefix without user and database, and no connection lines to name them.
        server.insert("log_line_prefix".into(), "%m [%p] ".into());
        let prefix = prefix(&server);
        assert_eq!(prefix.standing, Standing::Advised);
        assert!(prefix.meaning.contains("names no user (%u)"), "{prefix:?}");
        server.insert("log_connections".into(), "yes".into());
        assert_eq!(super::prefix(&server).standing, Standing::Ready);
        // Windows names its languages in words.
        server.insert("lc_messages".into(), "English_United States.1252".into());
        assert_eq!(messages(&server).standing, Standing::Ready);
    }

    #[test]
    fn a_mysql_before_5_7_is_told_its_times_have_no_zone() {
        let old = settings(&[
            ("slow_query_log", "ON"),
            ("long_query_time", "0.000000"),
            ("log_output", "FILE"),
            ("version", "5.6.51-log"),
        ]);
        let findings = judge(Dialect::MySql, &old);
        let last = findings.last().unwrap();
        assert_eq!(last.standing, Standing::Advised);
        assert!(
            last.meaning.contains("log_timestamps came with MySQL 5.7"),
            "{last:?}"
        );
    }

    #[test]
    fn settings_this_user_cannot_read_are_said_so() {
        let findings = judge(Dialect::PostgreSql, &BTreeMap::new());
        assert!(
            missing(&findings).contains(&"log_destination (not readable by this user)"),
            "{findings:#?}"
        );
    }

    #[test]
    fn mysql_needs_every_statement_in_a_file() {
        let defaults = settings(&[
            ("slow_query_log", "OFF"),
            ("long_query_time", "10.000000"),
            ("general_log", "OFF"),
            ("log_output", "FILE"),
            ("min_examined_row_limit", "0"),
            ("log_timestamps", "UTC"),
        ]);
        let findings = judge(Dialect::MySql, &defaults);
        assert_eq!(
            missing(&findings),
            ["slow_query_log = 'OFF', long_query_time = '10.000000', general_log = 'OFF'"]
        );
        let mut slow = defaults.clone();
        slow.insert("slow_query_log".into(), "ON".into());
        slow.insert("long_query_time".into(), "0.000000".into());
        assert!(missing(&judge(Dialect::MySql, &slow)).is_empty());
        // The slow log with long_query_time left at 1 s misses the fast statements.
        slow.insert("long_query_time".into(), "1.000000".into());
        slow.insert("general_log".into(), "ON".into());
        slow.insert("log_output".into(), "TABLE".into());
        assert_eq!(
            missing(&judge(Dialect::MySql, &slow)),
            ["log_output = 'TABLE'"],
            "the general log has every statement, in a table corescale does not read"
        );
    }

    #[test]
    fn a_sampled_slow_log_misses_statements() {
        let mariadb = settings(&[
            ("slow_query_log", "ON"),
            ("long_query_time", "0.000000"),
            ("log_output", "FILE"),
            ("min_examined_row_limit", "10"),
            ("log_slow_rate_limit", "100"),
            ("version", "10.11.6-MariaDB-0+deb12u1"),
        ]);
        assert_eq!(
            missing(&judge(Dialect::MySql, &mariadb)),
            [
                "min_examined_row_limit = '10'",
                "log_slow_rate_limit = '100'"
            ]
        );
    }
}
