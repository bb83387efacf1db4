//! The SLOB/pgio method against the real PostgreSQL and MariaDB servers named by
//! CORESCALE_TEST_PG and CORESCALE_TEST_MYSQL (`.ci/run` sets both); without them these tests
//! are ignored. Each test works in a database of its own there, dropped when it ends.

use crate::common;

use std::time::{Duration, Instant};

use common::scratch::Scratch;
use common::{
    corescale, hold_server, read_json, required as server, spawn_until_first_level,
    the_csv_reports_as_the_json_does,
};
use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;

/// A test's own database on the server a variable names, with that server held for the
/// test's length (`hold_server`). Dropped, it drops the database and everything corescale
/// made in it, passed or failed, so nothing is left in the configured database.
pub(crate) struct OwnDatabase {
    // Dropped first, while the server is still held.
    scratch: Scratch,
    _server: std::sync::MutexGuard<'static, ()>,
}

impl OwnDatabase {
    pub(crate) fn url(&self) -> String {
        self.scratch.url().to_string()
    }
}

pub(crate) fn own_database(variable: &str) -> OwnDatabase {
    let base = server(variable);
    let held = hold_server(variable);
    OwnDatabase {
        scratch: Scratch::new(&base, "db"),
        _server: held,
    }
}

/// Runs `check` with a database of its own on the server `variable` names, and the variable.
fn on_server(variable: &str, check: &dyn Fn(&str, &str)) {
    let own = own_database(variable);
    check(&own.url(), variable);
}

/// A module `$name` of two tests, `postgresql` and `mariadb`, each running `$check` on that
/// server (`on_server`): one test per server, so the two servers' tests run side by side.
macro_rules! on_each_server {
    ($name:ident, $check:expr) => {
        mod $name {
            use super::*;

            #[test]
            #[cfg_attr(
                not(corescale_test_pg),
                ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
            )]
            fn postgresql() {
                on_server("CORESCALE_TEST_PG", &$check);
            }

            #[test]
            #[cfg_attr(
                not(corescale_test_mysql),
                ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
            )]
            fn mariadb() {
                on_server("CORESCALE_TEST_MYSQL", &$check);
            }
        }
    };
}

const ROWS: &str = "1024";
const WORK_UNIT: u64 = 64;

pub(crate) fn setup(url: &str) {
    setup_of(url, ROWS);
}

/// Two tables of `scale` rows' worth each, set up afresh.
fn setup_of(url: &str, scale: &str) {
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            url,
            "--schemas",
            "2",
            "--scale",
            scale,
        ])
        .assert()
        .success()
        .stdout(contains("created 2 table(s)"));
}

/// Runs a short sweep (levels of 400 ms unless `extra` gives a --job-size) and returns the
/// document, the levels' workload figures and the CSV written beside the JSON.
fn sweep(url: &str, extra: &[&str]) -> (Value, Vec<Value>, String) {
    sweep_by(corescale(), url, extra)
}

/// `sweep`, by `command`.
fn sweep_by(
    mut command: assert_cmd::Command,
    url: &str,
    extra: &[&str],
) -> (Value, Vec<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("db.json");
    let csv = dir.path().join("db.csv");
    let length: &[&str] = if extra.contains(&"--job-size") {
        &[]
    } else {
        &["--duration", "400ms"]
    };
    command
        .args(["run", "db", "--target", url, "--sweep", "1,2"])
        .args(length)
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .args(extra)
        .assert()
        .success();
    let document = read_json(&json);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let figures = document["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| level["workload_figures"].clone())
        .collect();
    (document, figures, csv_text)
}

/// A figure summed over the levels of a run.
fn summed(levels: &[Value], name: &str) -> f64 {
    levels.iter().map(|figures| number(figures, name)).sum()
}

fn number(figures: &Value, name: &str) -> f64 {
    figures[name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {figures}"))
}

/// A select-only sweep whose blocks agree (`blocks_agree`); `report` draws it as an LIO/s
/// series.
fn select_sweep_agrees(url: &str, extra: &[&str]) {
    let (document, levels, csv) = sweep(url, extra);
    assert_eq!(document["complete"], true);
    reported_as_database_rates(&document, &levels);
    let dir = tempfile::tempdir().unwrap();
    let (json_in, csv_in) = (dir.path().join("db.json"), dir.path().join("db.csv"));
    std::fs::write(&json_in, document.to_string()).unwrap();
    std::fs::write(&csv_in, &csv).unwrap();
    // The database's own LIO/s and its sessions' on-CPU fraction, not the client's estimates.
    the_csv_reports_as_the_json_does(&json_in, &csv_in);
    blocks_agree(&levels);
    for figures in &levels {
        assert!(
            number(figures, "db_cpu_s") > 0.0,
            "the local server's CPU time is read: {figures}"
        );
    }
}

/// Levels of 40 statements (2,700 blocks), where blocks the run got outside its sessions
/// would show: the catalogue, the EXPLAIN samples, a first counters reading's plan. With the
/// host check a user's run has (not the tests' shortened one), as PostgreSQL once published
/// those 2,400 blocks in the first level.
fn small_levels_agree(url: &str) {
    let mut command = corescale();
    command.env_remove("CORESCALE_TEST_PREFLIGHT");
    let (_, levels, _) = sweep_by(command, url, &["--job-size", "40"]);
    blocks_agree(&levels);
}

/// The database's LIO count matches the client's within 5%, the test ran cached, and every
/// statement visited WORK_UNIT + 1 rows.
fn blocks_agree(levels: &[Value]) {
    for figures in levels {
        let agreement = number(figures, "db_lio_over_client_blocks");
        assert!(
            (0.95..=1.05).contains(&agreement),
            "db/client = {agreement}: {figures}"
        );
        assert!(number(figures, "db_hit_ratio") >= 0.99, "{figures}");
        let statements = number(figures, "statements");
        assert!(statements > 0.0);
        assert_eq!(
            number(figures, "rows_visited"),
            statements * (WORK_UNIT + 1) as f64
        );
        assert!(number(figures, "db_lio_per_s") > 0.0);
    }
}

fn reported_as_database_rates(document: &Value, levels: &[Value]) {
    let dir = tempfile::tempdir().unwrap();
    let (input, analysis) = (dir.path().join("db.json"), dir.path().join("analysis.json"));
    std::fs::write(&input, document.to_string()).unwrap();
    corescale()
        .arg("report")
        .arg(&input)
        // Every level is compared with the run's own figures, disturbed or not.
        .args(["-q", "--include-disturbed", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    let series = &read_json(&analysis)["series"][0];
    assert_eq!(series["series"]["measure"]["unit"], "LIO/s");
    for (level, figures) in series["levels"].as_array().unwrap().iter().zip(levels) {
        assert_eq!(
            level["raw"].as_f64().unwrap(),
            number(figures, "db_lio_per_s")
        );
        let on_cpu = level["cpu_fraction"].as_f64().unwrap();
        assert!(
            on_cpu > 0.0 && on_cpu <= 1.05,
            "DB sessions on CPU {on_cpu}"
        );
    }
}

/// With a fifth of the statements updating, the database's block count still agrees with the
/// client's within 5%: updates are counted at their own blocks per statement, measured by the
/// database's instrumentation in a transaction rolled back.
fn update_mix_agrees(url: &str) {
    update_mix_agrees_with(url, &[]);
}

/// `update_mix_agrees`, the run given `extra` options too.
fn update_mix_agrees_with(url: &str, extra: &[&str]) {
    let mut args = vec!["--update-pct", "20%"];
    args.extend(extra);
    let (document, levels, _) = sweep(url, &args);
    let description = document["workload"]["description"].as_str().unwrap();
    assert!(description.contains("per update"), "{description}");
    for (level, figures) in document["levels"].as_array().unwrap().iter().zip(&levels) {
        let agreement = number(figures, "db_lio_over_client_blocks");
        // Autovacuum leaves corescale's tables alone, but may come for this database's
        // catalogue after the setup's changes; its reads are in the database's count, and
        // the level says so.
        let said = |text: &str| level["warnings"].to_string().contains(text);
        let autovacuum = said("autovacuum ran");
        assert!(
            (0.95..=1.05).contains(&agreement) || autovacuum,
            "db/client = {agreement} at 20% updates: {figures} {}",
            level["warnings"]
        );
        // No warning that the counts disagree, unless autovacuum explains it. Whether the
        // level was a cached test is the shared server's: the other lane's setups load tables
        // through the same buffer cache (once 110 of 118,892 blocks were read from storage,
        // and the level rightly said so), so that warning is not this test's to forbid.
        assert!(
            autovacuum || !said("the blocks the client visited"),
            "no agreement warning: {level}"
        );
        assert!(number(figures, "blocks_per_update") > number(figures, "blocks_per_statement"));
        assert!(number(figures, "updates") > 0.0);
    }
}

fn update_sweep_changes_rows(url: &str, total_scratch: &dyn Fn() -> i64) {
    let before = total_scratch();
    let (_, levels, _) = sweep(url, &["--update-pct", "50%", "--update-work-unit", "8"]);
    let updates = summed(&levels, "updates");
    assert!(updates > 0.0);
    // Each update adds one to the 9 rows of key BETWEEN k AND k + 8.
    assert_eq!(total_scratch() - before, updates as i64 * 9);
}

fn teardown_keeps_other_tables(
    url: &str,
    create_bystander: &dyn Fn(),
    bystander_exists: &dyn Fn() -> bool,
) {
    create_bystander();
    corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success()
        .stdout(contains("corescale_t0"))
        .stdout(contains("corescale_t1"));
    assert!(
        bystander_exists(),
        "teardown touched a table that is not corescale's"
    );
    a_run_asks_for_setup(url);
}

/// A run where corescale has no tables says to set them up first, as a runtime error.
fn a_run_asks_for_setup(url: &str) {
    corescale()
        .args(["run", "db", "--target", url, "-w", "1"])
        .args(["--duration", "100ms", "-q"])
        .assert()
        .code(1)
        .stderr(contains("no corescale tables in").and(contains("corescale db setup")));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_end_to_end() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    setup(&url);
    // Pipelined batches (the default) and one round trip per statement.
    select_sweep_agrees(&url, &[]);
    select_sweep_agrees(&url, &["--pipeline", "1"]);
    // A warm-up's statements are left out of the client's count and the server's alike.
    select_sweep_agrees(&url, &["--warmup", "300ms"]);
    small_levels_agree(&url);
    let (_, loop_levels, _) = sweep(&url, &["--server-loop"]);
    for figures in &loop_levels {
        let agreement = number(figures, "db_lio_over_client_blocks");
        assert!(
            (0.95..=1.05).contains(&agreement),
            "server loop db/client = {agreement}"
        );
    }
    let total = || -> i64 {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        client
            .query_one("SELECT ((SELECT sum(scratch) FROM corescale_t0) + (SELECT sum(scratch) FROM corescale_t1))::bigint", &[])
            .unwrap()
            .get::<_, i64>(0)
    };
    update_sweep_changes_rows(&url, &total);
    update_mix_agrees(&url);
    every_statement_is_counted_once(&url);
    // A think time paces single statements: they are not batched.
    let (paced, _, _) = sweep(&url, &["--think-time", "1ms"]);
    let description = paced["workload"]["description"].as_str().unwrap();
    assert!(
        description.contains("one round trip per statement"),
        "{description}"
    );
    client
        .batch_execute("DROP TABLE IF EXISTS bystander; CREATE TABLE bystander (x int)")
        .unwrap();
    let exists = || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        client
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE tablename = 'bystander'",
                &[],
            )
            .unwrap()
            .get::<_, i64>(0)
            == 1
    };
    teardown_keeps_other_tables(&url, &|| {}, &exists);
    client.batch_execute("DROP TABLE bystander").unwrap();
}

/// Each select and update is one index scan in pg_stat_user_tables, so the server's count
/// checks the client's: pipelined answers are neither lost nor counted twice, also when a
/// statement is first prepared while others are in flight (the first update of a run).
fn every_statement_is_counted_once(url: &str) {
    let index_scans = || -> i64 {
        let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
        client
            .query_one(
                "SELECT coalesce(sum(idx_scan), 0)::bigint FROM pg_stat_user_tables WHERE relname LIKE 'corescale_t%'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    let before = index_scans();
    let (_, levels, _) = sweep(url, &["--update-pct", "30%", "--update-work-unit", "8"]);
    let counted = summed(&levels, "statements");
    // Sessions of levels 1 and 2 each run 50 warm-up selects; the run samples 16 selects and
    // 16 updates on each of the 2 tables with EXPLAIN ANALYZE, each update twice (the first
    // clears the pages' visibility-map bits): 80; before them one update a table changes
    // every page: 2. The rest are the planner's: it reads the key index for a range's true
    // end when a key lies at a histogram's end: 19 here. One lost batch would leave 32
    // scans uncounted on top of those; one counted twice, 32 fewer.
    let uncounted = (index_scans() - before) as f64 - counted - 3.0 * 50.0 - 5.0 * 16.0 - 2.0;
    assert!(
        (0.0..=30.0).contains(&uncounted),
        "the server ran {uncounted} index scans more than the client counted"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_end_to_end() {
    let own = own_database("CORESCALE_TEST_MYSQL");
    let url = own.url();
    use mysql::prelude::Queryable;
    let pool = mysql::Pool::new(url.as_str()).unwrap();
    setup(&url);
    select_sweep_agrees(&url, &[]);
    small_levels_agree(&url);
    let total = || -> i64 {
        let mut connection = pool.get_conn().unwrap();
        connection
            .query_first("SELECT CAST((SELECT SUM(scratch) FROM corescale_t0) + (SELECT SUM(scratch) FROM corescale_t1) AS SIGNED)")
            .unwrap()
            .unwrap()
    };
    update_sweep_changes_rows(&url, &total);
    update_mix_agrees(&url);
    let create = || {
        let mut connection = pool.get_conn().unwrap();
        connection
            .query_drop("DROP TABLE IF EXISTS bystander")
            .unwrap();
        connection
            .query_drop("CREATE TABLE bystander (x INT)")
            .unwrap();
    };
    let exists = || {
        let mut connection = pool.get_conn().unwrap();
        let count: Option<u64> = connection
            .query_first("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'bystander'")
            .unwrap();
        count == Some(1)
    };
    teardown_keeps_other_tables(&url, &create, &exists);
    pool.get_conn()
        .unwrap()
        .query_drop("DROP TABLE bystander")
        .unwrap();
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_session_killed_mid_run_keeps_the_levels_done() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("killed.json");
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &url,
            "--schemas",
            "2",
            "--scale",
            ROWS,
        ])
        .assert()
        .success();
    let sweep = [
        "run",
        "db",
        "--target",
        &url,
        "--sweep",
        "1,2",
        "--duration",
        "1s",
        "--repeat",
        "5",
        "-q",
    ];
    let child = spawn_until_first_level(&sweep, &json);
    // The 2-worker level's sessions, once both have connected (the level runs 5 s).
    let level_two = "application_name = 'corescale' AND client_port IS NOT NULL AND backend_start > now() - interval '3 seconds'";
    await_backends(&url, level_two, 2, Duration::from_secs(3));
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let ended = client
        .execute(
            &format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND {level_two} AND pid <> pg_backend_pid()"
            ),
            &[],
        )
        .unwrap();
    assert!(ended >= 2, "{ended} sessions ended");
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document = read_json(&json);
    assert_eq!(document["complete"], false);
    assert_eq!(
        document["levels"].as_array().unwrap().len(),
        1,
        "the 1-worker level is kept"
    );
    assert!(
        document["stop_reason"]
            .as_str()
            .unwrap()
            .contains("failed at 2 workers")
    );
}

/// Targets and options refused before anything connects: these need no server.
#[test]
fn bad_targets_and_options_are_refused_before_connecting() {
    corescale()
        .args([
            "run",
            "db",
            "--target",
            "postgres://corescale:topsecret@127.0.0.1:1/test",
            "-w",
            "1",
        ])
        .assert()
        .code(1)
        .stderr(contains(
            "cannot connect to postgres://corescale:***@127.0.0.1:1/test",
        ))
        .stderr(predicates::str::contains("topsecret").not());
    // A URL where clap expects something else: clap's own error hides the password too.
    corescale()
        .args(["run", "db", "postgres://u:topsecret@127.0.0.1/db"])
        .assert()
        .code(2)
        .stderr(contains("u:***@"))
        .stderr(predicates::str::contains("topsecret").not());
    corescale()
        .args(["run", "db", "--target", "redis://127.0.0.1:6379", "-w", "1"])
        .assert()
        .code(2)
        .stderr(contains("not supported"));
    corescale()
        .args(["run", "db", "-w", "1"])
        .assert()
        .code(2)
        .stderr(contains(
            "required arguments were not provided: --target <URL>: see `corescale run db --help`",
        ));
    corescale()
        .args(["run", "db", "--target", "mysql://root@127.0.0.1:1/test"])
        .args(["--pipeline", "4", "-w", "1"])
        .assert()
        .code(2)
        .stderr(contains(
            "--pipeline above 1 needs a driver that sends statements before their answers come back: the MySQL/MariaDB driver waits",
        ));
    corescale()
        .args(["run", "cpu", "--pipeline", "4", "-w", "1"])
        .assert()
        .code(2)
        .stderr(contains("--pipeline applies to the db workload, not cpu"));
    corescale()
        .args(["run", "db", "--target", "mysql://root@127.0.0.1:1/test"])
        .args(["--server-loop", "-w", "1"])
        .assert()
        .code(2)
        .stderr(contains(
            "--server-loop needs a driver that runs the statements in a server-side loop (PostgreSQL's PL/pgSQL, as pgio does): the MySQL/MariaDB driver sends each from the client",
        ));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn unreachable_servers_and_passwords_are_handled() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    // Trust authentication ignores the password; it must still never reach the results.
    let with_password = url.replacen("://postgres@", "://postgres:topsecret@", 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("redacted.json");
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &with_password,
            "--scale",
            "256",
            "--schemas",
            "1",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains("topsecret").not());
    corescale()
        .args([
            "run",
            "db",
            "--target",
            &with_password,
            "-w",
            "1",
            "--duration",
            "100ms",
            "--repeat",
            "1",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success();
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(!text.contains("topsecret"));
    assert!(text.contains("postgres:***@"));
}

/// What `db teardown` must leave: a user's tables and functions that merely look like
/// corescale's, and tables whose names carry SQL meant to run inside teardown's DROP.
struct Bystanders {
    execute: Box<dyn Fn(&str)>,
    count: Box<dyn Fn(&str) -> i64>,
    /// A table name that would close the quoting of a naive DROP and drop `victim`.
    hostile: &'static str,
    create_function: &'static str,
}

fn teardown_touches_only_what_setup_recorded(url: &str, bystanders: &Bystanders) {
    let run = &bystanders.execute;
    run("DROP TABLE IF EXISTS victim");
    run("DROP TABLE IF EXISTS corescale_orders");
    run("CREATE TABLE victim (x INT)");
    run("CREATE TABLE corescale_orders (x INT)");
    run(bystanders.create_function);
    run(&format!("CREATE TABLE {} (x INT)", bystanders.hostile));
    setup(url);
    let teardown = corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success()
        .stdout(contains("corescale_t0"))
        .stdout(contains("left alone"))
        .stdout(contains("corescale_orders"));
    let printed = String::from_utf8_lossy(&teardown.get_output().stdout).to_string();
    assert!(printed.contains("corescale_user_fn"), "{printed}");
    for table in ["victim", "corescale_orders"] {
        assert_eq!((bystanders.count)(table), 1, "teardown dropped {table}");
    }
    assert_eq!((bystanders.count)("corescale_t0"), 0);
    assert_eq!((bystanders.count)("corescale_catalog"), 0);
    // A second teardown finds nothing of corescale's and still leaves the bystanders.
    corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success()
        .stdout(contains("no objects of corescale's catalogue"));
    assert_eq!((bystanders.count)("victim"), 1);
    // An object corescale did not create is never overwritten by setup.
    run("CREATE TABLE corescale_t0 (mine INT)");
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            url,
            "--schemas",
            "1",
            "--scale",
            ROWS,
        ])
        .assert()
        .code(1)
        .stderr(contains("corescale_t0 already exist"))
        .stderr(contains("does not overwrite"));
    assert_eq!((bystanders.count)("corescale_t0"), 1);
    run("DROP TABLE corescale_t0");
    run(&format!("DROP TABLE {}", bystanders.hostile));
    run("DROP TABLE victim");
    run("DROP TABLE corescale_orders");
}

/// Two setups started together: the lock is taken within milliseconds of the start and the
/// load takes far longer, so one fails with a clear message and the other loads every key once.
fn concurrent_setups_do_not_interleave(url: &str, keys: &dyn Fn() -> (i64, i64)) {
    let start = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
            .args([
                "db",
                "setup",
                "--target",
                url,
                "--schemas",
                "2",
                "--scale",
                "6000",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (start(), start());
    let outputs = [
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    ];
    let succeeded = outputs
        .iter()
        .filter(|output| output.status.success())
        .count();
    assert_eq!(succeeded, 1, "exactly one setup may run: {outputs:?}");
    for output in outputs.iter().filter(|output| !output.status.success()) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1));
        assert!(stderr.contains("another `corescale db setup`"), "{stderr}");
    }
    let (rows, distinct) = keys();
    assert_eq!(
        (rows, distinct),
        (6000, 6000),
        "every key once in corescale_t0"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn postgresql_teardown_by_ownership() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    let connect = {
        let url = url.clone();
        move || postgres::Client::connect(&url, postgres::NoTls).unwrap()
    };
    let count = {
        let connect = connect.clone();
        move |name: &str| -> i64 {
            connect()
                .query_one(
                    "SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1) + (SELECT count(*) FROM pg_proc WHERE proname = $1)",
                    &[&name],
                )
                .unwrap()
                .get(0)
        }
    };
    let execute = {
        let connect = connect.clone();
        move |sql: &str| connect().batch_execute(sql).unwrap()
    };
    execute("DROP FUNCTION IF EXISTS corescale_user_fn()");
    execute(r#"DROP TABLE IF EXISTS "corescale_x""; DROP TABLE victim; --""#);
    let bystanders = Bystanders {
        execute: Box::new(execute.clone()),
        count: Box::new(count.clone()),
        hostile: r#""corescale_x""; DROP TABLE victim; --""#,
        create_function: "CREATE FUNCTION corescale_user_fn() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    };
    teardown_touches_only_what_setup_recorded(&url, &bystanders);
    assert_eq!(
        count("corescale_user_fn"),
        1,
        "teardown dropped a user's function"
    );
    execute("DROP FUNCTION corescale_user_fn()");
    let keys = || -> (i64, i64) {
        let row = connect()
            .query_one(
                "SELECT count(*), count(DISTINCT key) FROM corescale_t0",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    concurrent_setups_do_not_interleave(&url, &keys);
    corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .success();
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_teardown_by_ownership() {
    let own = own_database("CORESCALE_TEST_MYSQL");
    let url = own.url();
    use mysql::prelude::Queryable;
    let pool = mysql::Pool::new(url.as_str()).unwrap();
    let execute = {
        let pool = pool.clone();
        move |sql: &str| pool.get_conn().unwrap().query_drop(sql).unwrap()
    };
    let count = {
        let pool = pool.clone();
        move |name: &str| -> i64 {
            pool.get_conn()
                .unwrap()
                .exec_first(
                    "SELECT (SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?) + (SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?)",
                    (name, name),
                )
                .unwrap()
                .unwrap()
        }
    };
    execute("DROP FUNCTION IF EXISTS corescale_user_fn");
    execute("DROP TABLE IF EXISTS `corescale_x``; DROP TABLE victim; --`");
    let bystanders = Bystanders {
        execute: Box::new(execute.clone()),
        count: Box::new(count.clone()),
        hostile: "`corescale_x``; DROP TABLE victim; --`",
        create_function: "CREATE FUNCTION corescale_user_fn() RETURNS INT DETERMINISTIC RETURN 1",
    };
    teardown_touches_only_what_setup_recorded(&url, &bystanders);
    assert_eq!(
        count("corescale_user_fn"),
        1,
        "teardown dropped a user's function"
    );
    execute("DROP FUNCTION corescale_user_fn");
    let keys = || -> (i64, i64) {
        pool.get_conn()
            .unwrap()
            .query_first("SELECT COUNT(*), COUNT(DISTINCT `key`) FROM corescale_t0")
            .unwrap()
            .unwrap()
    };
    concurrent_setups_do_not_interleave(&url, &keys);
    corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .success();
}

/// A listener that accepts connections (the kernel does, into its backlog) and never says a
/// word: connecting gives up after --connect-timeout with a clear message, for every flavour
/// and for setup as for runs.
#[test]
fn a_server_that_never_answers_ends_the_command() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for scheme in ["postgres", "mysql"] {
        let url = format!("{scheme}://root@127.0.0.1:{port}/test");
        for command in [
            vec!["run", "db", "-w", "1", "--target", &url],
            vec!["db", "setup", "--target", &url],
            vec!["db", "teardown", "--target", &url],
        ] {
            let started = std::time::Instant::now();
            corescale()
                .args(&command)
                .args(["--connect-timeout", "1s"])
                .timeout(Duration::from_secs(30))
                .assert()
                .code(1)
                .stderr(contains("within 1s"));
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{command:?} took {:?}",
                started.elapsed()
            );
        }
    }
    drop(listener);
}

/// A MariaDB user of its own whose password holds URL characters: percent-encoded in the URL
/// it connects, and neither the URL nor the error ever shows it.
#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn mariadb_passwords_with_url_characters() {
    let own = own_database("CORESCALE_TEST_MYSQL");
    let url = own.url();
    use mysql::prelude::Queryable;
    let password = "Pl+us%2F/sl?q#h&a:c@t 5";
    let pool = mysql::Pool::new(url.as_str()).unwrap();
    let mut admin = pool.get_conn().unwrap();
    admin
        .query_drop("DROP USER IF EXISTS 'corescale_pw'@'127.0.0.1'")
        .unwrap();
    admin
        // CREATE USER takes no bound values; the constant holds no quote or backslash.
        .query_drop(format!(
            "CREATE USER 'corescale_pw'@'127.0.0.1' IDENTIFIED BY '{password}'"
        ))
        .unwrap();
    admin
        .query_drop("GRANT ALL ON test.* TO 'corescale_pw'@'127.0.0.1'")
        .unwrap();
    // What teardown needs to prove ownership on MariaDB: table ids and the grant tables.
    admin
        .query_drop("GRANT PROCESS ON *.* TO 'corescale_pw'@'127.0.0.1'")
        .unwrap();
    admin
        .query_drop("GRANT SELECT ON mysql.* TO 'corescale_pw'@'127.0.0.1'")
        .unwrap();
    let encoded =
        percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC);
    let with_password = format!("mysql://corescale_pw:{encoded}@127.0.0.1:3306/test");
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &with_password,
            "--schemas",
            "1",
            "--scale",
            "256",
        ])
        .assert()
        .success()
        .stdout(contains("Pl%2Bus").not());
    let bare = "mysql://corescale_pw@127.0.0.1:3306/test";
    corescale()
        .args([
            "run",
            "db",
            "-w",
            "1",
            "--duration",
            "200ms",
            "--repeat",
            "1",
            "-q",
        ])
        .args(["--target", bare])
        .env("CORESCALE_DB_PASSWORD", password)
        .assert()
        .success();
    corescale()
        .args(["run", "db", "-w", "1", "--target", bare])
        .env("CORESCALE_DB_PASSWORD", "Wrong-Guess-9")
        .assert()
        .code(1)
        .stderr(contains("access denied"))
        .stderr(contains("Wrong-Guess-9").not());
    corescale()
        .args(["db", "teardown", "--target", bare])
        .env("CORESCALE_DB_PASSWORD", password)
        .assert()
        .success()
        .stdout(contains("corescale_t0"));
    admin
        .query_drop("DROP USER 'corescale_pw'@'127.0.0.1'")
        .unwrap();
}

/// A backend that stops answering mid-run (SIGSTOP, as a hung server would): the session
/// gives up after the job's duration plus its margin, and the run ends with exit 1, keeping
/// the level done before, instead of hanging past its duration.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_stalled_backend_ends_the_run_keeping_the_levels_done() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    setup(&url);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stalled.json");
    let args = [
        "run",
        "db",
        "--target",
        &url,
        "--sweep",
        "1,2",
        "--duration",
        "1s",
        "--repeat",
        "4",
        "-q",
    ];
    let child = spawn_until_first_level(&args, &json);
    std::thread::sleep(Duration::from_millis(1500));
    let backends = backend_pids(
        &url,
        "application_name = 'corescale' AND backend_start > now() - interval '3 seconds'",
    );
    assert!(!backends.is_empty(), "no session backend found");
    for pid in &backends {
        kill(Pid::from_raw(*pid), Signal::SIGSTOP).unwrap();
    }
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    for pid in &backends {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGCONT);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not answer within 3s"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let document = read_json(&json);
    assert_eq!(document["complete"], false);
    assert_eq!(document["levels"].as_array().unwrap().len(), 1);
}

/// Setup says, before it loads anything, when the tables will not fit the buffer cache, and
/// what to change. (The load is then interrupted: the tables are not needed.)
fn setup_warns_when_the_data_outgrows(url: &str, setting: &str) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args([
            "db",
            "setup",
            "--target",
            url,
            "--schemas",
            "8",
            "--scale",
            "8G",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        line.contains(&format!("more than fits in {setting}")),
        "{line}"
    );
    assert!(
        line.contains(&format!("Raise {setting} to at least")),
        "{line}"
    );
    common::teardown_after_a_killed_setup(url);
}

on_each_server!(
    setup_warns_when_the_data_outgrows_the_buffer_cache_on,
    |url, variable| {
        let setting = if variable == "CORESCALE_TEST_PG" {
            "shared_buffers"
        } else {
            "innodb_buffer_pool_size"
        };
        setup_warns_when_the_data_outgrows(url, setting)
    }
);

/// A second setup with other --schemas and --scale replaces the first one's tables, and a run
/// describes the new ones.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_new_setup_replaces_the_old_tables() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    setup(&url);
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &url,
            "--schemas",
            "1",
            "--scale",
            "512",
        ])
        .assert()
        .success()
        .stdout(contains("dropped the earlier setup's objects"))
        .stdout(contains("corescale_t1"));
    let (document, _, _) = sweep(&url, &[]);
    let description = document["workload"]["description"].as_str().unwrap();
    assert!(
        description.contains("1 table(s) of 512 one-row blocks"),
        "{description}"
    );
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let left: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE tablename = 'corescale_t1'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the first setup's second table is gone");
}

/// libpq's `?host=/socket/dir` reaches the server through its Unix socket for every
/// connection corescale makes (setup, monitor, sessions, teardown), whatever the URL's host
/// says: psql connects to this URL, and so does corescale (issue 13, item 4 in part).
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_socket_directory_in_the_url_serves_setup_run_and_teardown() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    let directory = "/var/run/postgresql";
    if !std::path::Path::new(directory)
        .join(".s.PGSQL.5432")
        .exists()
    {
        panic!("no PostgreSQL socket in {directory}: the local server should have one");
    }
    let database = url.rsplit('/').next().unwrap();
    let socket_url = format!("postgres://postgres@nonexistent.invalid/{database}?host={directory}");
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &socket_url,
            "--schemas",
            "1",
            "--scale",
            ROWS,
        ])
        .assert()
        .success();
    assert_eq!(common::one_db_level(&socket_url).0["complete"], true);
    corescale()
        .args(["db", "teardown", "--target", &socket_url])
        .assert()
        .success()
        .stdout(contains("corescale_t0"));
}

/// The server processes of the backends `condition` selects in the database `url` names (a
/// test's own), other than this query's.
fn backend_pids(url: &str, condition: &str) -> Vec<i32> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query(
            &format!(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND {condition} AND pid <> pg_backend_pid()"
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Waits until at least `count` backends of the test database meet `condition` (a command
/// started on a busy host connects late), failing after `within`.
fn await_backends(url: &str, condition: &str, count: usize, within: Duration) {
    let waited = Instant::now();
    while backend_pids(url, condition).len() < count {
        assert!(
            waited.elapsed() < within,
            "fewer than {count} backends with {condition} within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `run db` at one session, stops every backend of the test database for 1 s, a second
/// into its 6 s window (SIGSTOP, SIGCONT), and returns the level's latency.
fn stalled_latency(url: &str, extra: &[&str]) -> Value {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stall.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args(["run", "db", "--target", url, "-w", "1", "--pipeline", "1"])
        .args(["--duration", "6s", "--repeat", "1", "-q", "-o"])
        .arg(&json)
        .args(extra)
        // The look at the host, which a busy host makes a second long, comes after the
        // session's first statements: 100 ms at most here, so the stall lands in the window.
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The window opens once the session has connected and the host was looked at: wait for
    // its first statement (a busy host may start it late), then stall a second into the
    // window.
    await_backends(
        url,
        "query LIKE 'SELECT pg_catalog.sum(scratch)%'",
        1,
        Duration::from_secs(15),
    );
    std::thread::sleep(Duration::from_secs(1));
    let backends = backend_pids(url, "backend_type = 'client backend'");
    assert!(!backends.is_empty(), "no backend to stall");
    for pid in &backends {
        kill(Pid::from_raw(*pid), Signal::SIGSTOP).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    for pid in &backends {
        kill(Pid::from_raw(*pid), Signal::SIGCONT).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document = read_json(&json);
    document["levels"][0]["latency"].clone()
}

/// The difference between a corrected histogram and a coordinated-omission one, measured on
/// a real server: a 1 s stall delays every statement due during it in an open loop (p99 at
/// least 0.4 s), while a closed loop sends nothing during the stall and counts one slow
/// statement (p99 well below 0.4 s).
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn a_stall_is_counted_by_every_statement_it_delayed() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    setup(&url);
    let open = stalled_latency(&url, &["--rate", "200", "--latency-limit", "100ms"]);
    assert_eq!(open["measured_from"], "due", "{open}");
    assert!(
        open["max_ms"].as_f64().unwrap() >= 900.0,
        "the stall fell outside the window: {open}"
    );
    assert!(open["p99_ms"].as_f64().unwrap() >= 400.0, "{open}");
    // About 200 statements were due during the stall; each waited past the limit.
    assert!(open["late"].as_u64().unwrap() >= 100, "{open}");
    // The server's own time stayed short: the wait was in the schedule.
    assert!(
        open["service"]["p90_ms"].as_f64().unwrap() < 100.0,
        "{open}"
    );
    assert!(
        open["schedule_lag"]["max_ms"].as_f64().unwrap() >= 500.0,
        "{open}"
    );
    assert_eq!(open["rate"]["target_per_s"], 200.0);
    let closed = stalled_latency(&url, &[]);
    assert_eq!(closed["measured_from"], "send", "{closed}");
    assert!(
        closed["max_ms"].as_f64().unwrap() >= 900.0,
        "the stall fell outside the window: {closed}"
    );
    assert!(closed["p99_ms"].as_f64().unwrap() < 400.0, "{closed}");
    // A rate no session can keep: said, marked, and --strict exits 3.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("behind.json");
    let output = corescale()
        .args([
            "run", "db", "--target", &url, "-w", "1", "--rate", "1000000",
        ])
        .args(["--duration", "500ms", "--repeat", "1", "--strict", "-o"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("of 1.00 M/s"), "{stderr}");
    let rate = &read_json(&json)["levels"][0]["latency"]["rate"];
    assert_eq!(rate["sustained"], false, "{rate}");
    assert!(
        rate["achieved_per_s"].as_f64().unwrap() < 500_000.0,
        "{rate}"
    );
}

/// Sixteen times as many sessions as this host has CPUs queue: the mean response time rises
/// with load (20 to 29 times at 32 sessions on this 2-CPU host beside two CPU hogs, 7.6 to 16
/// times at 16 sessions, where a suite beside two hogs once failed this test), the report
/// names the throughput that kept an objective set between the lightest and heaviest load's
/// means, and the CSV gives the same figures. The mean, not p99: by Little's law it must rise (the
/// sessions' throughput cannot grow with them), where p99 at 1 session is a few statements
/// that a busy host's stalls lift (2.25 ms at 1 session, 1.86 ms at 8, once beside the
/// PostgreSQL tests).
fn latency_rises_and_an_objective_names_a_throughput(url: &str) {
    setup(url);
    let heavy_sessions =
        (16 * std::thread::available_parallelism().map_or(2, usize::from)).clamp(32, 64);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("curve.json"), dir.path().join("curve.csv"));
    corescale()
        .args([
            "run",
            "db",
            "--target",
            url,
            "--sweep",
            &format!("1,{heavy_sessions}"),
            "--pipeline",
            "1",
            // More than 8 sessions per CPU, on purpose.
            "--force",
        ])
        .args(["--duration", "1s", "--repeat", "1", "-q", "-o"])
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let document = read_json(&json);
    let mean = |index: usize| {
        document["levels"][index]["latency"]["mean_ms"]
            .as_f64()
            .unwrap_or_else(|| panic!("no latency at level {index}: {}", document["levels"][index]))
    };
    let (light, heavy) = (mean(0), mean(1));
    assert!(
        heavy > 1.5 * light,
        "mean {light} ms at 1 session, {heavy} ms at {heavy_sessions}"
    );
    the_csv_reports_as_the_json_does(&json, &csv);
    let limit = (light * heavy).sqrt();
    let out = dir.path().join("analysis.json");
    corescale()
        .arg("report")
        .arg(&json)
        .args(["-q", "--include-disturbed", "--slo"])
        .arg(format!("mean<={limit:.4}ms"))
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let analysis = read_json(&out);
    let verdict = &analysis["slo"]["verdicts"][0];
    assert_eq!(verdict["workers"], 1, "{verdict}");
    assert!(verdict["throughput"].as_f64().unwrap() > 0.0, "{verdict}");
    let findings = analysis["findings"].to_string();
    assert!(findings.contains("sustains"), "{findings}");
}

on_each_server!(response_times_rise_with_load_on, |url, _| {
    latency_rises_and_an_objective_names_a_throughput(url)
});

/// `--rate 25%,1000000`: a closed-loop level first, then open-loop levels asked a quarter of
/// its statement rate and more than a session can send; `report` keeps them off the capacity
/// curve, tabulates and draws them, and names the rate sent within an objective; the CSV
/// reports them as the JSON does. A run at set rates only (`--rate 100,200`) gets no capacity
/// verdict at all.
fn rate_steps_give_a_latency_throughput_curve(url: &str) {
    setup(url);
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("rates.json"), dir.path().join("rates.csv"));
    corescale()
        .args(["run", "db", "--target", url, "-w", "1"])
        .args(["--rate", "25%,1000000"])
        // Short statements over 5 s: a server answering over 800 a second answers at a
        // quarter of its rate the 1,000 statements p99 needs. This guest gave 3,500 a second
        // with the hypervisor stealing 10%, and 1,256 beside four CPU hogs (3 s then gave 942).
        .args([
            "--work-unit",
            "8",
            "--duration",
            "5s",
            "--repeat",
            "1",
            "-q",
            "-o",
        ])
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let document = read_json(&json);
    let levels = document["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3, "{document}");
    assert!(levels[0]["latency"]["rate"].is_null(), "{}", levels[0]);
    let closed_rate =
        levels[0]["latency"]["count"].as_f64().unwrap() / levels[0]["elapsed_s"].as_f64().unwrap();
    let quarter = &levels[1]["latency"]["rate"];
    assert_eq!(quarter["share"].as_f64(), Some(0.25), "{}", levels[1]);
    let asked = quarter["target_per_s"].as_f64().unwrap();
    assert!(
        (asked / (0.25 * closed_rate) - 1.0).abs() < 1e-9,
        "asked {asked}/s, closed loop {closed_rate}/s"
    );
    let flood = &levels[2]["latency"]["rate"];
    assert!(flood["share"].is_null(), "{}", levels[2]);
    assert_eq!(flood["target_per_s"].as_f64(), Some(1e6), "{}", levels[2]);
    assert_eq!(flood["sustained"], false, "{}", levels[2]);
    // An open loop's throughput is the rate asked: no speedup.
    for level in &levels[1..] {
        assert!(level["summary"]["speedup"].is_null(), "{level}");
    }
    // Asked a million statements a second, more than one session can send, it falls behind,
    // and each statement is timed from when it was due: the curve rises. Not a share of the
    // closed loop's rate: when the closed-loop level shared the host with other work, its rate
    // was what a freer host then answered with room to spare (p50 0.20 ms at 25%, 0.15 ms at
    // 100%, and 0.17 ms at 25%, 0.10 ms at 300%, in .ci/run). The median, not p99: a second's
    // stall on a busy host lifts p99 at 25% (1.16 s once, in .ci/run) but delays only a
    // third of its statements.
    let at = |level: &Value, percentile: &str| level["latency"][percentile].as_f64().unwrap();
    assert!(
        at(&levels[2], "p50_ms") > at(&levels[1], "p50_ms"),
        "p50 {} ms at 25%, {} ms at 1,000,000/s (p99 {} ms, {} ms)",
        at(&levels[1], "p50_ms"),
        at(&levels[2], "p50_ms"),
        at(&levels[1], "p99_ms"),
        at(&levels[2], "p99_ms")
    );
    let analysis_of = |input: &std::path::Path| {
        let out = dir.path().join("analysis.json");
        corescale()
            .arg("report")
            .arg(input)
            .args(["-q", "--include-disturbed", "--slo", "p90<=10s", "--json"])
            .arg(&out)
            .assert()
            .success();
        read_json(&out)
    };
    let (from_json, from_csv) = (analysis_of(&json), analysis_of(&csv));
    for analysis in [&from_json, &from_csv] {
        assert_open_loop_verdict(analysis, &levels[1]);
    }
    for (a, b) in from_json["open_loop"][0]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(from_csv["open_loop"][0]["levels"].as_array().unwrap())
    {
        for field in ["asked_per_s", "sent_per_s", "share"] {
            assert_eq!(a[field], b[field], "{field}: JSON {a}, CSV {b}");
        }
        assert_eq!(a["latency"]["p99_ms"], b["latency"]["p99_ms"]);
    }
    set_rates_only_get_no_capacity_verdict(url, dir.path());
}

on_each_server!(rate_steps_on, |url, _| {
    rate_steps_give_a_latency_throughput_curve(url)
});

/// An analysis of the rate steps: one closed-loop level, two open-loop ones, and an
/// objective judged on the rates the session kept up with (`quarter`, the level at 25%).
fn assert_open_loop_verdict(analysis: &Value, quarter: &Value) {
    assert_eq!(analysis["series"][0]["levels"].as_array().unwrap().len(), 1);
    let open = analysis["open_loop"][0]["levels"].as_array().unwrap();
    assert_eq!(open.len(), 2, "{analysis}");
    let verdict = analysis["slo"]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|verdict| {
            verdict["series"]
                .as_str()
                .unwrap()
                .ends_with("(at set rates)")
        })
        .unwrap_or_else(|| panic!("no open-loop verdict: {analysis}"));
    assert_eq!(verdict["measured_from"], "due", "{verdict}");
    let findings = analysis["findings"].to_string();
    assert!(
        findings.contains("at set rates, 1 worker: p99 goes from"),
        "{findings}"
    );
    // The objective is judged on the rates the session kept up with (and that answered
    // the 100 statements p90 needs, as any level here does): the quarter rate, unless a
    // busy host held the session back over 1% of its statements (seen once in .ci/run).
    if quarter["latency"]["rate"]["sustained"] == true {
        let sent = quarter["latency"]["rate"]["achieved_per_s"]
            .as_f64()
            .unwrap();
        let throughput = verdict["throughput"].as_f64();
        assert!(
            throughput.is_some_and(|throughput| (throughput / sent - 1.0).abs() < 1e-6),
            "{verdict}, sent {sent}/s"
        );
    } else {
        assert!(verdict["throughput"].is_null(), "{verdict}");
        assert!(
            verdict["reason"]
                .as_str()
                .unwrap()
                .starts_with("no rate the sessions kept up with"),
            "{verdict}"
        );
    }
}

/// A run at set rates only (`--rate 100,200`) gets no capacity verdict at all.
fn set_rates_only_get_no_capacity_verdict(url: &str, dir: &std::path::Path) {
    let fixed = dir.join("fixed.json");
    corescale()
        .args([
            "run", "db", "--target", url, "--sweep", "1,2", "--rate", "100,200",
        ])
        .args(["--duration", "500ms", "--repeat", "1", "-q", "-o"])
        .arg(&fixed)
        .assert()
        .success();
    assert_eq!(read_json(&fixed)["levels"].as_array().unwrap().len(), 4);
    let text = corescale()
        .arg("report")
        .arg(&fixed)
        .args(["--include-disturbed", "--wide"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("measured at set rates only"), "{text}");
    for capacity_verdict in ["plateau", "saturates", "no clear knee", "knee at"] {
        assert!(
            !text.contains(capacity_verdict),
            "{capacity_verdict}: {text}"
        );
    }
}

/// A fixed-time level's timeline holds the database's own block reads per interval, read at
/// each interval's edge: on MariaDB, whose counters are live, every interval's reads are its
/// statements times the blocks each visits; on PostgreSQL, whose backends publish their
/// counts at most once a second, 1 s intervals get none (they would swing by whole
/// publications).
fn the_timeline_has_the_servers_reads(url: &str, live: bool) {
    setup(url);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timeline.json");
    corescale()
        .args(["run", "db", "--target", url, "-w", "1", "--pipeline", "1"])
        .args([
            "--duration",
            "3s",
            "--interval",
            "1s",
            "--repeat",
            "1",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success();
    let document = read_json(&json);
    let level = &document["levels"][0];
    let intervals = level["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 3, "{level}");
    let blocks = number(&level["workload_figures"], "blocks_per_statement");
    for interval in intervals {
        if !live {
            assert!(interval["server_lio_per_s"].is_null(), "{interval}");
            continue;
        }
        let server = interval["server_lio_per_s"].as_f64().unwrap();
        let statements = interval["rate_per_s"].as_f64().unwrap();
        let agreement = server / (statements * blocks);
        assert!(
            (0.9..=1.1).contains(&agreement),
            "server {server} LIO/s against {statements} statements/s x {blocks}: {interval}"
        );
    }
}

// MariaDB's counters are live; PostgreSQL's backends publish theirs once a second.
on_each_server!(
    the_timeline_has_the_servers_reads_where_live_on,
    |url, variable| the_timeline_has_the_servers_reads(url, variable == "CORESCALE_TEST_MYSQL")
);

// What every driver must do, the same checks for each server, in a database of its own:
// the checklist a new driver passes (Oracle's, where an Oracle database exists).
on_each_server!(every_driver_passes_the_same_checks_on, |url, variable| {
    // Before setup: a run says what to do first, and fails as a runtime error.
    a_run_asks_for_setup(url);
    // `db check` connects and finds the privileges setup and runs need.
    corescale()
        .args(["db", "check", "--target", url])
        .assert()
        .success()
        .stdout(contains("connected to").and(contains("privileges")));
    setup(url);
    // Both levels measured; the database's count agrees with the client's; every
    // session's connection is recorded.
    let (document, levels, _) = sweep(url, &[]);
    assert_eq!(document["complete"], true, "{variable}");
    for (level, figures) in document["levels"].as_array().unwrap().iter().zip(&levels) {
        let agreement = number(figures, "db_lio_over_client_blocks");
        assert!(
            (0.95..=1.05).contains(&agreement),
            "{variable}: db/client = {agreement}"
        );
        assert_eq!(
            level["connections"].as_array().map(Vec::len),
            level["workers"].as_u64().map(|workers| workers as usize),
            "{variable}: {level}"
        );
    }
    // A server that is not there: a runtime error naming the target, promptly.
    let mut unreachable = url::Url::parse(url).unwrap();
    unreachable.set_port(Some(1)).unwrap();
    let began = std::time::Instant::now();
    corescale()
        .args(["db", "check", "--target", unreachable.as_str()])
        .args(["--connect-timeout", "5s"])
        .assert()
        .code(1)
        .stderr(contains("127.0.0.1:1"));
    assert!(began.elapsed() < Duration::from_secs(10), "{variable}");
    // Teardown leaves nothing of corescale's: a second one finds nothing to drop.
    corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success()
        .stdout(contains("dropped from"));
    corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success()
        .stdout(contains("no objects of corescale's catalogue"));
});

/// Random arrivals are drawn anew each run from a recorded seed, and `--seed` repeats one:
/// two runs without it record different seeds, one with it records the seed given.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn random_arrivals_are_drawn_anew_from_a_recorded_seed() {
    on_server("CORESCALE_TEST_PG", &|url: &str, _| {
        setup(url);
        let seed_of = |extra: &[&str]| {
            let mut args = vec!["--rate", "200", "--arrivals", "poisson"];
            args.extend(extra);
            let (document, _, _) = sweep(url, &args);
            document["workload"]["shape"]["arrivals_seed"].as_u64()
        };
        let (first, second) = (seed_of(&[]), seed_of(&[]));
        assert!(first.is_some() && second.is_some());
        assert_ne!(first, second, "two runs drew the same arrivals");
        assert_eq!(seed_of(&["--seed", "42"]), Some(42));
    });
}

/// README's `--update-pct 20%` example on freshly set-up tables (VACUUM has marked every page
/// all-visible, so a first update of a page also clears its visibility-map bit): the
/// database's block count agrees with the client's within 5%, and nothing is warned. A
/// per-update count sampled once, on the fresh pages, made PostgreSQL's 0.88. Levels of 100
/// statements a session, so the first updates of the tables' 2,048 pages weigh as on a
/// busy host: when only the samples' pages had been changed before the run, PostgreSQL's
/// first level counted 1.077x the client's blocks (1.066x once in CI at 400 ms).
fn fresh_tables_agree_with_updates(url: &str) {
    setup_of(url, "16M");
    if url.starts_with("mysql") {
        // InnoDB purged setup's history (its reads would be in the first level's count)
        // before setup returned.
        use mysql::prelude::Queryable;
        let mut connection = mysql::Conn::new(url).unwrap();
        let history: Option<(String, u64)> = connection
            .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")
            .unwrap();
        assert_eq!(history.map(|(_, length)| length), Some(0));
    }
    update_mix_agrees_with(url, &["--job-size", "100"]);
}

on_each_server!(readme_update_example_agrees_on, |url, _| {
    fresh_tables_agree_with_updates(url)
});
