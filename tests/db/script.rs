//! `run script`: a DBA's own statements in pgbench's syntax against the real PostgreSQL and
//! MariaDB, in databases of the tests' own. Every transaction corescale counts is checked
//! against what it left in the database; failures are counted by SQLSTATE; nothing the
//! scripts' set-up created is dropped by corescale.

use crate::common;

use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{corescale, hold_server, read_json, required, run_tool};
use predicates::str::contains;

/// pgbench's TPC-B transaction, as its builtin script is written (also the fuzz target's
/// and the bench's).
const TPCB: &str = include_str!("../../fuzz/inputs/script/tpcb.sql");

const SELECT_ONLY: &str = "\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

/// A database of the test's own with pgbench's tables at scale 1.
fn pgbench_tables(test: &str) -> (PgScratch, std::sync::MutexGuard<'static, ()>) {
    let base = required("CORESCALE_TEST_PG");
    let pgbench = format!("{}/pgbench", required("CORESCALE_TEST_PG_BINDIR"));
    let held = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, test);
    run_tool(&pgbench, &["-i", "-q", "-s", "1", &scratch.url], &[]);
    (scratch, held)
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `run script` on `url` with these options, quiet, to a JSON document it returns.
fn run_to_document(dir: &std::path::Path, url: &str, options: &[&str]) -> serde_json::Value {
    let json = dir.join("run.json");
    corescale()
        .args(["run", "script", "--target", url, "--repeat", "1", "-q"])
        .args(options)
        .arg("-o")
        .arg(&json)
        .assert()
        .success();
    read_json(&json)
}

fn figures(document: &serde_json::Value, level: usize) -> &serde_json::Value {
    &document["levels"][level]["workload_figures"]
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_pg_bindir)),
    ignore = "needs CORESCALE_TEST_PG and CORESCALE_TEST_PG_BINDIR (pgbench; see README)"
)]
fn every_transaction_counted_is_in_the_database_and_weights_pick_scripts() {
    let (scratch, _held) = pgbench_tables("script_tpcb");
    let dir = tempfile::tempdir().unwrap();
    let tpcb = write(dir.path(), "tpcb.sql", TPCB);
    let select = write(dir.path(), "select.sql", SELECT_ONLY);
    // Fixed work: 300 transactions a session, two sessions; no warm-up, so every
    // transaction run is a counted one.
    let files = [
        format!("{}@3", tpcb.display()),
        format!("{}@1", select.display()),
    ];
    let document = run_to_document(
        dir.path(),
        &scratch.url,
        &[
            "--set",
            "scale=1",
            "--file",
            &files[0],
            "--file",
            &files[1],
            "-w",
            "2",
            "--job-size",
            "300",
        ],
    );
    let level = figures(&document, 0);
    let transactions = level["transactions"].as_f64().unwrap();
    assert_eq!(transactions, 600.0, "{level}");
    // Each TPC-B transaction wrote one history row: about 3 of 4 transactions by weight.
    let history = scratch.count("SELECT count(*) FROM pgbench_history") as f64;
    assert!((380.0..=520.0).contains(&history), "{history} of 600");
    // 7 statements a TPC-B transaction, 1 a select-only one.
    assert_eq!(
        level["statements"].as_f64().unwrap(),
        7.0 * history + (600.0 - history)
    );
    // The balances moved by exactly the deltas recorded.
    let moved = scratch.count("SELECT sum(abalance)::bigint FROM pgbench_accounts");
    let recorded = scratch.count("SELECT coalesce(sum(delta), 0)::bigint FROM pgbench_history");
    assert_eq!(moved, recorded);
    // Every statement's response times; the job names both scripts and their hashes.
    assert!(
        level["statement 6 p99_ms"].as_f64().unwrap() > 0.0,
        "{level}"
    );
    assert!(
        level["statement 6 p999_ms"].as_f64().unwrap()
            >= level["statement 6 p99_ms"].as_f64().unwrap(),
        "{level}"
    );
    let shape = document["workload"]["shape"]["statement"].as_str().unwrap();
    assert!(
        shape.starts_with("script tpcb.sql@3 (sha256 ")
            && shape.contains(" + select.sql@1 (sha256 "),
        "{shape}"
    );
    assert_eq!(level["failed_transactions"], 0.0);
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_pg_bindir)),
    ignore = "needs CORESCALE_TEST_PG and CORESCALE_TEST_PG_BINDIR (pgbench; see README)"
)]
fn failures_are_counted_by_sqlstate_or_end_the_level_with_the_statement() {
    let (scratch, _held) = pgbench_tables("script_failures");
    let dir = tempfile::tempdir().unwrap();
    let init = write(
        dir.path(),
        "init.sql",
        "CREATE TABLE orders (id int PRIMARY KEY, note text);\n",
    );
    // Keys from 1 to 20: most inserts after the first few collide (SQLSTATE 23505).
    let insert = write(
        dir.path(),
        "insert.sql",
        "\\set id random(1, 20)\nBEGIN;\nINSERT INTO orders (id, note) VALUES (:id, 'x');\nCOMMIT;\n",
    );
    let document = run_to_document(
        dir.path(),
        &scratch.url,
        &[
            "--max-failures",
            "100000",
            "--init",
            init.to_str().unwrap(),
            "--file",
            insert.to_str().unwrap(),
            "-w",
            "1",
            "--job-size",
            "200",
        ],
    );
    let level = figures(&document, 0);
    let done = level["transactions"].as_f64().unwrap();
    let failed = level["failed_transactions"].as_f64().unwrap();
    // Every key once: the rest failed on the unique key, and were rolled back.
    assert_eq!(done, scratch.count("SELECT count(*) FROM orders") as f64);
    assert_eq!(done + failed, 200.0, "{level}");
    assert_eq!(level["failures SQLSTATE 23505"].as_f64().unwrap(), failed);
    assert_eq!(level["statement 2 failures"].as_f64().unwrap(), failed);
    let warnings = document["levels"][0]["warnings"].to_string();
    assert!(warnings.contains("with SQLSTATE 23505"), "{warnings}");
    // The set-up's table is the DBA's: still there after the run.
    assert_eq!(
        scratch.count("SELECT count(*) FROM pg_tables WHERE tablename = 'orders'"),
        1
    );

    // --max-failures counts the level's failures over all its sessions.
    corescale()
        .args([
            "run",
            "script",
            "--target",
            &scratch.url,
            "--max-failures",
            "5",
        ])
        .arg("--file")
        .arg(&insert)
        .args(["-w", "2", "--repeat", "1", "--job-size", "100", "-q"])
        .assert()
        .code(1)
        .stderr(contains("more than --max-failures 5 failed in the level"));
    // Without --max-failures the first failure ends the run, naming the statement.
    corescale()
        .args(["run", "script", "--target", &scratch.url])
        .arg("--file")
        .arg(&insert)
        .args(["-w", "1", "--repeat", "1", "--job-size", "50", "-q"])
        .assert()
        .code(1)
        .stderr(contains(
            "insert.sql:3:1: INSERT INTO orders (id, note) VALUES (:id, 'x') failed",
        ))
        .stderr(contains("SQLSTATE 23505"));
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_pg_bindir)),
    ignore = "needs CORESCALE_TEST_PG and CORESCALE_TEST_PG_BINDIR (pgbench; see README)"
)]
fn a_script_that_writes_is_refused_on_a_read_only_target() {
    let (scratch, _held) = pgbench_tables("script_read_only");
    let dir = tempfile::tempdir().unwrap();
    scratch
        .client()
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET default_transaction_read_only = on",
            scratch.name
        ))
        .unwrap();
    // `db check` says so.
    corescale()
        .args(["db", "check", "--target", &scratch.url])
        .assert()
        .success()
        .stdout(contains("refused: read-only"));
    let run = |file: &std::path::Path| {
        corescale()
            .args([
                "run",
                "script",
                "--target",
                &scratch.url,
                "--set",
                "scale=1",
                "--file",
            ])
            .arg(file)
            .args(["-w", "1", "--repeat", "1", "--job-size", "10", "-q"])
            .assert()
    };
    run(&write(dir.path(), "tpcb.sql", TPCB))
        .code(2)
        .stderr(contains("is read-only"))
        .stderr(contains("tpcb.sql:6:1"));
    // Reading is fine there.
    run(&write(dir.path(), "select.sql", SELECT_ONLY)).success();
}

#[test]
fn script_errors_are_usage_errors_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    // Checked before any connection: the target is never reached.
    let run = |file: &std::path::Path, more: &[&str]| {
        corescale()
            .args([
                "run",
                "script",
                "--target",
                "postgres://nobody@127.0.0.1:1/none",
                "--file",
            ])
            .arg(file)
            .args(more)
            .args(["-w", "1"])
            .assert()
    };
    let bad = write(dir.path(), "bad.sql", "\\set id random(1,\nSELECT 1;\n");
    run(&bad, &[]).code(2).stderr(contains("bad.sql:1:"));
    let unset = write(dir.path(), "unset.sql", "SELECT * FROM t WHERE id = :id;\n");
    run(&unset, &[])
        .code(2)
        .stderr(contains(":id, which no \\set sets"))
        .stderr(contains("--set id=VALUE"));
    run(&unset, &["--set", "id=1", "--set", "other=2"])
        .code(2)
        .stderr(contains("no script uses :other"));
    run(&dir.path().join("missing.sql"), &[])
        .code(2)
        .stderr(contains("missing.sql' does not exist: check the path"));
    // MySQL and MariaDB answer each statement before the next: no pipelines there.
    let pipelined = write(
        dir.path(),
        "pipelined.sql",
        "\\startpipeline\nSELECT 1;\nSELECT 2;\n\\endpipeline\n",
    );
    corescale()
        .args([
            "run",
            "script",
            "--target",
            "mysql://nobody@127.0.0.1:1/none",
            "--file",
        ])
        .arg(&pipelined)
        .args(["-w", "1"])
        .assert()
        .code(2)
        .stderr(contains("pipelined.sql:1:1: \\startpipeline"))
        .stderr(contains("pipelines need PostgreSQL"));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG (see README)"
)]
fn a_pipeline_is_one_round_trip_under_one_sync() {
    let base = required("CORESCALE_TEST_PG");
    let _held = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "script_pipeline");
    let dir = tempfile::tempdir().unwrap();
    let init = write(
        dir.path(),
        "init.sql",
        "CREATE TABLE items (id bigint NOT NULL, n int NOT NULL);\n",
    );
    // Even ids fail at the pipeline's second statement (division by zero), after its insert
    // was answered. Under one Sync the three are one implicit transaction: a failed one's
    // row is rolled back with it (sent one at a time, each would commit on its own).
    let pipeline = write(
        dir.path(),
        "pipeline.sql",
        "\\set id random(1, 1000000000)\n\\set n :id % 2\n\\startpipeline\nINSERT INTO items (id, n) VALUES (:id, :n);\nSELECT 1 / n FROM items WHERE id = :id;\nSELECT :id::bigint;\n\\endpipeline\n",
    );
    let document = run_to_document(
        dir.path(),
        &scratch.url,
        &[
            "--init",
            init.to_str().unwrap(),
            "--max-failures",
            "100000",
            "--file",
            pipeline.to_str().unwrap(),
            "-w",
            "2",
            "--job-size",
            "100",
        ],
    );
    let level = figures(&document, 0);
    let done = level["transactions"].as_f64().unwrap();
    let failed = level["failed_transactions"].as_f64().unwrap();
    assert_eq!(done + failed, 200.0, "{level}");
    assert!(done > 50.0 && failed > 50.0, "odd and even ids: {level}");
    assert_eq!(scratch.count("SELECT count(*) FROM items") as f64, done);
    assert_eq!(scratch.count("SELECT count(*) FROM items WHERE n = 0"), 0);
    // Every insert was answered; the select failed for even ids, and the last statement
    // was skipped by the server after it.
    assert_eq!(level["statements"].as_f64().unwrap(), 200.0 + 2.0 * done);
    assert_eq!(level["statement 2 failures"].as_f64().unwrap(), failed);
    assert_eq!(level["failures SQLSTATE 22012"].as_f64().unwrap(), failed);
    assert_eq!(level["statement 3 failures"].as_f64().unwrap(), 0.0);
    // Each answered statement has its response times.
    for statement in 1..=3 {
        let p50 = level[format!("statement {statement} p50_ms").as_str()].as_f64();
        assert!(p50.is_some_and(|p50| p50 > 0.0), "{level}");
    }
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL (see README)"
)]
fn a_mariadb_script_counts_what_it_wrote() {
    let base = required("CORESCALE_TEST_MYSQL");
    let _held = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("script"));
    let dir = tempfile::tempdir().unwrap();
    let init = write(
        dir.path(),
        "init.sql",
        "CREATE TABLE accounts (id int PRIMARY KEY, balance bigint) ENGINE=InnoDB;\nINSERT INTO accounts SELECT seq, 0 FROM seq_1_to_1000;\nCREATE TABLE history (id int, delta int) ENGINE=InnoDB;\n",
    );
    let script = write(
        dir.path(),
        "transfer.sql",
        "\\set id random(1, 1000)\n\\set delta random(1, 10)\nBEGIN;\nUPDATE accounts SET balance = balance + :delta WHERE id = :id;\nSELECT balance FROM accounts WHERE id = :id;\nINSERT INTO history (id, delta) VALUES (:id, :delta);\nCOMMIT;\n",
    );
    let document = run_to_document(
        dir.path(),
        &scratch.url,
        &[
            "--init",
            init.to_str().unwrap(),
            "--file",
            script.to_str().unwrap(),
            "--sweep",
            "1,2",
            "--job-size",
            "150",
        ],
    );
    let counted: f64 = (0..2)
        .map(|level| figures(&document, level)["transactions"].as_f64().unwrap())
        .sum();
    assert_eq!(counted, 150.0 * 3.0);
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM history") as f64,
        counted
    );
    assert_eq!(
        scratch.count("SELECT CAST(SUM(balance) AS SIGNED) FROM accounts"),
        scratch.count("SELECT CAST(SUM(delta) AS SIGNED) FROM history")
    );
    // Each update and insert changed a row, each select returned one: 3 rows a transaction.
    let rows: f64 = (0..2)
        .map(|level| figures(&document, level)["rows"].as_f64().unwrap())
        .sum();
    assert_eq!(rows, 3.0 * counted);
    assert_eq!(
        document["workload"]["shape"]["engine"]
            .as_str()
            .unwrap()
            .split(' ')
            .next(),
        Some("MariaDB")
    );
}

/// `--report-interval` lines carry each interval's p50 and p99, as pgbench's `-P` lines carry
/// latency: read from each session's own response counts while the level runs.
#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn interval_lines_carry_the_intervals_p50_and_p99() {
    let url = required("CORESCALE_TEST_PG");
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "one.sql", "SELECT 1;\n");
    let json = dir.path().join("run.json");
    let output = corescale()
        .args(["run", "script", "--target", &url, "--file"])
        .arg(&script)
        .args(["-w", "2", "--duration", "2s", "--repeat", "1"])
        .args(["--report-interval", "300ms", "-o"])
        .arg(&json)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).to_string();
    // "[0.6s] n=2: 15.7 K transactions/s, 7.85 K/worker, p50 0.0579 ms, p99 0.116 ms, ..."
    let number_after = |line: &str, label: &str| -> Option<f64> {
        let rest = &line[line.find(label)? + label.len()..];
        let (value, unit) = rest.split_once(' ')?;
        unit.starts_with("ms").then_some(())?;
        value.parse().ok()
    };
    let percentiles: Vec<(f64, f64)> = stderr
        .lines()
        .filter(|line| line.starts_with('['))
        .filter_map(|line| Some((number_after(line, "p50 ")?, number_after(line, "p99 ")?)))
        .collect();
    assert!(
        !percentiles.is_empty(),
        "no interval line with p50 and p99:\n{stderr}"
    );
    // The level's slowest response bounds every interval's p50 (bucket width aside).
    let recorded = read_json(&json)["levels"][0]["latency"]["max_ms"]
        .as_f64()
        .unwrap();
    for (p50, p99) in percentiles {
        assert!(0.0 < p50 && p50 <= p99, "{p50} {p99}\n{stderr}");
        assert!(
            p50 <= recorded * 1.04,
            "{p50} above the level's max {recorded}"
        );
    }
}
