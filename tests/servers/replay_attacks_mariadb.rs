//! The replay attacks of issue 74 on MariaDB, done as the attacker does them: `mallory`, an
//! account with grants on its own databases only, plants routines, runs its workload (the
//! statements that fail for it included), the operator captures the server's logs and root
//! replays them on a clone. The harm is looked for at the server afterwards: root's
//! password, global settings, replication, another database's rows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mysql::prelude::Queryable;

use crate::common;

use common::corescale;
use common::mariadb::PrivateMariaDb;

/// Mallory's schema, in `shop` and in its clone: routines that do harm only where their
/// caller may. `lift()` (DEFINER, so mallory) makes its session's transactions writable;
/// `reach()` and `harm()` run as their caller and swallow every refusal, so production
/// logged no error for them.
const PLANTED: &[&str] = &[
    "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)",
    "INSERT INTO orders (note) VALUES ('kept')",
    "CREATE FUNCTION lift() RETURNS TEXT SQL SECURITY DEFINER \
     BEGIN SET SESSION tx_read_only = 0; RETURN CURRENT_USER(); END",
    "CREATE FUNCTION reach() RETURNS TEXT SQL SECURITY INVOKER \
     BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; \
     SET SESSION tx_read_only = 0; SET GLOBAL max_connections = 17; \
     RETURN CURRENT_USER(); END",
    "CREATE PROCEDURE harm() SQL SECURITY INVOKER \
     BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; \
     SET SESSION tx_read_only = 0; SET GLOBAL wait_timeout = 7; \
     SET PASSWORD FOR 'root'@'127.0.0.1' = PASSWORD('owned'); \
     SET PASSWORD FOR 'root'@'localhost' = PASSWORD('owned'); \
     CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 1, MASTER_USER = 'mallory'; \
     END",
];

/// Mallory's session that reads: its functions, then what it may not do (each refused in
/// production, the server's logs keep no outcome), as the issue found them.
const READS: &[(&str, bool)] = &[
    ("SELECT CURRENT_USER()", true),
    ("SELECT lift()", true),
    (
        "/*!SET PASSWORD FOR 'root'@'127.0.0.1' = PASSWORD('owned')*/",
        false,
    ),
    ("SELECT reach()", true),
    ("SET GLOBAL max_connections = 17", false),
    ("/*!SET GLOBAL wait_timeout = 7*/", false),
    (
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 1, MASTER_USER = 'mallory'",
        false,
    ),
    ("START SLAVE", false),
    ("SELECT note FROM orders", true),
];

/// Mallory's session that writes: into its own database, then into `shop` by name after a
/// `USE shop` that would move a replay meant for the clone there, and a call of `harm()`.
const WRITES: &[(&str, bool)] = &[
    ("USE shop", true),
    (
        "INSERT INTO orders (note) VALUES ('into the session''s database')",
        true,
    ),
    ("INSERT INTO shop.orders (note) VALUES ('into shop')", true),
    ("CALL harm()", true),
];

fn connect(
    server: &PrivateMariaDb,
    user: &str,
    database: Option<&str>,
) -> mysql::Result<mysql::Conn> {
    mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(server.port)
            .prefer_socket(false)
            .user(Some(user))
            .db_name(database),
    )
}

/// One session of mallory's on `shop`: each statement succeeds or fails as `statements`
/// say it does in production.
fn mallory_session(server: &PrivateMariaDb, statements: &[(&str, bool)]) {
    let mut mallory = connect(server, "mallory", Some("shop")).unwrap();
    for (sql, succeeds) in statements {
        let done = mallory.query_drop(*sql);
        assert_eq!(done.is_ok(), *succeeds, "{sql} as mallory: {done:?}");
    }
}

/// A pause for the logs: a session's last entries reach them (the slow log writes a
/// statement after its answer, the general log a Quit after the client has gone), and the
/// next entry begins a new second (MariaDB writes an entry's time only where it differs
/// from the last entry's, in any file, so a log switched to within the second would begin
/// with an entry without time).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(1100));
}

/// What the server holds that a replay must leave alone.
#[derive(Debug, PartialEq)]
struct State {
    max_connections: u64,
    wait_timeout: u64,
    replicating_from: Vec<String>,
    shop: Vec<(i64, String)>,
}

/// The server's state, read as root over TCP without a password: a replay that changed
/// root's password fails here.
fn state(server: &PrivateMariaDb) -> State {
    let mut root = connect(server, "root", None)
        .unwrap_or_else(|error| panic!("root cannot connect without its password: {error}"));
    let (max_connections, wait_timeout): (u64, u64) = root
        .query_first("SELECT @@global.max_connections, @@global.wait_timeout")
        .unwrap()
        .unwrap();
    let replicating_from = root
        .query_map("SHOW ALL SLAVES STATUS", |row: mysql::Row| {
            row.get::<String, _>("Master_Host").unwrap_or_default()
        })
        .unwrap();
    let shop = root
        .query("SELECT id, note FROM shop.orders ORDER BY id")
        .unwrap();
    State {
        max_connections,
        wait_timeout,
        replicating_from,
        shop,
    }
}

fn capture(log: &str, dir: &Path, name: &str) -> PathBuf {
    let capture = dir.join(name);
    common::capture_log(log, &capture);
    capture
}

/// `run replay` of `capture` on the clone as root, with `flags`: it ends well, says that
/// `left_out` (in full) was left out, and sends `sent` statements.
fn replayed_as_mallory(
    server: &PrivateMariaDb,
    capture: &Path,
    flags: &[&str],
    left_out: &str,
    sent: u32,
) {
    let url = format!("mysql://root@127.0.0.1:{}/shopclone", server.port);
    let json = capture.with_extension(format!("{}.json", flags.join("")));
    let replayed = corescale()
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args(["run", "replay", "--target", &url, "--capture"])
        .arg(capture)
        .args(flags)
        .arg("-o")
        .arg(&json)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replayed.stderr);
    assert!(replayed.status.success(), "{said}");
    let note = format!("corescale: note: left out of the replay: {left_out}\n");
    assert!(said.contains(&note), "{note} not in {said}");
    let level = &common::read_json(&json)["levels"][0];
    assert_eq!(
        level["workload_figures"]["statements_sent"].as_f64(),
        Some(f64::from(sent)),
        "{said}\n{level}"
    );
}

/// The general log's sessions: each thread's connecting user, and the statements it sent.
fn general_log(text: &str) -> BTreeMap<u64, (String, Vec<String>)> {
    let mut threads: BTreeMap<u64, (String, Vec<String>)> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let Some(at) = fields.iter().position(|field| {
            let mut words = field.split_whitespace();
            words
                .next()
                .is_some_and(|id| id.bytes().all(|byte| byte.is_ascii_digit()))
                // A command, not the time ("261207 13:02:38") before the id.
                && words
                    .next()
                    .is_some_and(|command| command.starts_with(|c: char| c.is_ascii_alphabetic()))
        }) else {
            continue;
        };
        let mut words = fields[at].split_whitespace();
        let id: u64 = words.next().unwrap().parse().unwrap();
        let command = words.collect::<Vec<_>>().join(" ");
        let argument = fields[at + 1..].join("\t");
        let thread = threads.entry(id).or_default();
        match command.as_str() {
            "Connect" => thread.0 = argument.split('@').next().unwrap_or_default().to_string(),
            "Query" => thread.1.push(argument),
            _ => {}
        }
    }
    threads
}

/// Who sent each of the statements starting `start` in the general log.
fn sent_by(text: &str, start: &str) -> Vec<String> {
    general_log(text)
        .into_values()
        .flat_map(|(user, statements)| {
            statements
                .into_iter()
                .filter(|sql| sql.starts_with(start))
                .map(move |_| user.clone())
        })
        .collect()
}

/// A private MariaDB where mallory has planted its routines and run its two workloads:
/// the one that reads logged in `reads.log` (general log) and `slow.log`, the one that
/// writes in `writes.log`; the general log goes on in `replay.log`. With the operator's
/// connection, whose statements are not logged.
fn mallory_s_workloads() -> (PrivateMariaDb, mysql::Conn) {
    let mut server = PrivateMariaDb::start("corescale-replay-attacks-", |dir| {
        vec![
            "--general-log=1".into(),
            "--log-output=FILE".into(),
            format!("--general-log-file={}/setup.log", dir.display()),
            "--slow-query-log=0".into(),
            "--long-query-time=0".into(),
            format!("--slow-query-log-file={}/slow.log", dir.display()),
        ]
    });
    // The operator's connection: none of its statements is logged.
    let mut admin = server.admin();
    admin.query_drop("SET SESSION sql_log_off = 1").unwrap();
    for sql in [
        "CREATE DATABASE shop",
        "CREATE DATABASE shopclone",
        "CREATE USER mallory@'%'",
        "GRANT ALL ON shop.* TO mallory@'%'",
        "GRANT ALL ON shopclone.* TO mallory@'%'",
        // An operator's account with powers but no read of `mysql`'s tables.
        "CREATE USER ops@'127.0.0.1'",
        "GRANT SUPER, PROCESS ON *.* TO ops@'127.0.0.1'",
        "GRANT ALL ON shopclone.* TO ops@'127.0.0.1'",
    ] {
        admin.query_drop(sql).unwrap();
    }
    // Mallory plants its routines, in shop and in the clone (as a dump would copy them).
    for database in ["shop", "shopclone"] {
        let mut mallory = connect(&server, "mallory", Some(database)).unwrap();
        for sql in PLANTED {
            mallory.query_drop(*sql).unwrap();
        }
    }
    let logged = |name: &str| server.path(name);
    let mut switch_to = |name: &str, slow: bool| {
        settle();
        admin
            .query_drop(format!(
                "SET GLOBAL general_log_file = '{}', GLOBAL slow_query_log = {}",
                logged(name),
                u8::from(slow)
            ))
            .unwrap();
        settle();
    };
    switch_to("reads.log", true);
    mallory_session(&server, READS);
    switch_to("writes.log", false);
    mallory_session(&server, WRITES);
    switch_to("replay.log", false);
    (server, admin)
}

/// Mallory's two workloads on a private MariaDB, logged in its general log (and the one
/// that reads in its slow log too) and captured; root replays them on `shopclone`, the
/// clone, with no flags, with every flag that sends more, and with `--allow-writes` for
/// the one that writes. Mallory's sessions connect as mallory: root's password, the
/// global settings and replication stay as they were, `shop` gets no row, the statements
/// left out are counted. Where mallory cannot connect, the replay refuses, naming --map.
#[test]
#[cfg_attr(
    not(corescale_test_mariadbd),
    ignore = "needs mariadbd and mariadb-install-db (Debian's packages; see README)"
)]
fn a_replay_by_root_gives_mallory_no_more_power_on_mariadb() {
    let (server, mut admin) = mallory_s_workloads();
    let logged = |name: &str| server.path(name);
    let before = state(&server);
    assert_eq!(
        (before.max_connections, before.wait_timeout),
        (151, 28800),
        "{before:?}"
    );
    assert_eq!(before.shop.len(), 3, "{before:?}");
    assert!(before.replicating_from.is_empty(), "{before:?}");

    let dir = tempfile::tempdir().unwrap();
    let reads = capture(&logged("reads.log"), dir.path(), "reads.capture");
    let slow = capture(&logged("slow.log"), dir.path(), "slow.capture");
    let writes = capture(&logged("writes.log"), dir.path(), "writes.capture");

    // The slow log, with no flags: the password and server-wide statements are left out
    // and counted; the functions run as mallory, so reach() changes nothing.
    replayed_as_mallory(
        &server,
        &slow,
        &[],
        "4 reaching beyond the data (--include-server-wide sends them); 1 setting or holding a password",
        5,
    );
    assert_eq!(state(&server), before);
    // The general log also lists the statements run inside a function as the session's
    // own (MariaDB writes them there), `SET tx_read_only = 0` among them: that capture
    // writes, and is refused without --allow-writes.
    let url = format!("mysql://root@127.0.0.1:{}/shopclone", server.port);
    corescale()
        .args(["run", "replay", "--target", &url, "--capture"])
        .arg(&reads)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the captured workload writes (2 statements, the first: SET TX_READ_ONLY = ?)",
        ));
    assert_eq!(state(&server), before);
    replayed_as_mallory(
        &server,
        &reads,
        &["--allow-writes"],
        "5 reaching beyond the data (--include-server-wide sends them); 1 setting or holding a password",
        7,
    );
    assert_eq!(state(&server), before);
    // Every flag that sends more: the server-wide statements are sent, as mallory, and
    // refused.
    replayed_as_mallory(
        &server,
        &reads,
        &["--include-server-wide", "--allow-writes"],
        "1 setting or holding a password",
        12,
    );
    assert_eq!(state(&server), before);
    // The capture that writes: `USE shop` and the insert naming shop are left out; the
    // other insert reaches the clone; harm() runs as mallory.
    replayed_as_mallory(
        &server,
        &writes,
        &["--allow-writes"],
        "1 in or naming another database; 1 USE (the replay stays in the URL's database)",
        3,
    );
    assert_eq!(state(&server), before);
    let clone: Vec<(i64, String)> = admin
        .query("SELECT id, note FROM shopclone.orders ORDER BY id")
        .unwrap();
    assert_eq!(
        clone,
        [
            (1, "kept".to_string()),
            (2, "into the session's database".to_string())
        ]
    );

    // At the server: each replayed statement of mallory's came from a session of
    // mallory's, on the clone.
    let replay_log = std::fs::read_to_string(logged("replay.log")).unwrap();
    for start in [
        "SELECT lift()",
        "SELECT reach()",
        "SET GLOBAL max_connections",
        "/*!SET GLOBAL wait_timeout",
        "CHANGE MASTER",
        "START SLAVE",
        "CALL harm()",
        "INSERT INTO orders",
    ] {
        let users = sent_by(&replay_log, start);
        assert!(
            !users.is_empty() && users.iter().all(|user| user == "mallory"),
            "{start}: sent by {users:?}:\n{replay_log}"
        );
    }
    assert_eq!(sent_by(&replay_log, "SELECT reach()").len(), 3);
    assert!(
        sent_by(&replay_log, "USE").is_empty()
            && sent_by(&replay_log, "INSERT INTO shop").is_empty(),
        "{replay_log}"
    );
    assert!(
        replay_log.contains("Connect\tmallory@127.0.0.1 on shopclone"),
        "{replay_log}"
    );

    // An account the replay cannot connect as: refused before the first level, naming --map.
    admin
        .query_drop("ALTER USER mallory@'%' ACCOUNT LOCK")
        .unwrap();
    corescale()
        .args(["run", "replay", "--target", &url, "--capture"])
        .arg(&reads)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the captured user 'mallory' cannot be replayed as 'root', which holds every privilege (a superuser) that 'mallory' does not",
        ))
        .stderr(predicates::str::contains("--map mallory=USER"));
    assert_eq!(state(&server), before);
    // Replayed by `ops`, which may read neither mallory's grants nor its own in `mysql`:
    // its own are read still, and refused as they are.
    corescale()
        .args(["run", "replay", "--capture"])
        .arg(&slow)
        .args([
            "--target",
            &format!("mysql://ops@127.0.0.1:{}/shopclone", server.port),
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the captured user 'mallory' cannot be replayed as 'ops', which holds PROCESS, SUPER that 'mallory' does not",
        ));
    assert_eq!(state(&server), before);
}
