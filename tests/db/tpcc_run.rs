//! `run tpcc` on the real PostgreSQL and MariaDB: NOPM from the districts equal to the
//! New-Orders the sessions committed, the mix within a percent of its shares, TPM from the
//! server's counters, the consistency conditions true after a run and after a run killed
//! at a random moment, and a teardown that leaves nothing. Each test works in a database of
//! its own, dropped when it ends.

use std::time::Duration;

use crate::common;

use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{corescale, hold_server, required as server};

const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Sets up one warehouse, runs two levels of `run tpcc`, checks their figures, kills a
/// third run at a random moment, and checks the tables after each and the teardown.
fn runs_and_stays_consistent(url: &str) {
    corescale()
        .args(["db", "setup", "--workload", "tpcc", "--warehouses", "2"])
        .args(["--target", url])
        .assert()
        .success();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tpcc.json");
    let output = corescale()
        .args(["run", "tpcc", "--target", url, "--sweep", "1,2"])
        .args(["--duration", "3s", "--mix", "40,40,8,6,6", "-o"])
        .arg(&json)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(
        said.contains("consistency conditions 1, 2, 3, 4 of clause 3.3.2 after the run"),
        "{said}"
    );
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        document["checked_after_run"]
            .as_str()
            .is_some_and(|text| text.contains("conditions 1, 2, 3, 4")),
        "{}",
        document["checked_after_run"]
    );
    assert!(
        document["workload"]["description"]
            .as_str()
            .unwrap()
            .contains("not an audited TPC-C result")
    );
    for level in document["levels"].as_array().unwrap() {
        check_level(level, [40.0, 40.0, 8.0, 6.0, 6.0]);
    }
    killed_run_leaves_consistent_tables(url);
    let torn = corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success();
    let torn = String::from_utf8_lossy(&torn.get_output().stdout).into_owned();
    assert!(torn.contains("corescale_tpcc_order_line"), "{torn}");
}

/// One level's figures: NOPM from the districts within one order of the sessions' own
/// count, each type's share within a percent of the mix, TPM at least the transactions.
fn check_level(level: &serde_json::Value, mix: [f64; 5]) {
    let figures = &level["workload_figures"];
    let figure = |name: &str| {
        figures[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} missing: {figures}"))
    };
    let elapsed_min = level["elapsed_s"].as_f64().unwrap() / 60.0;
    let (nopm, client_nopm) = (figure("nopm"), figure("client_nopm"));
    assert!(nopm > 0.0, "{figures}");
    assert!(
        ((nopm - client_nopm) * elapsed_min).abs() <= 1.0 + 1e-6,
        "NOPM {nopm} from the districts, {client_nopm} by the sessions"
    );
    for (kind, share) in KINDS.iter().zip(mix) {
        let measured = figure(&format!("{kind} share_percent"));
        assert!(
            (measured - share).abs() <= 1.0,
            "{kind}: {measured}% for {share}%"
        );
        assert!(figure(&format!("{kind} p90_ms")) > 0.0, "{kind}");
    }
    let transactions = figure("transactions");
    assert!(transactions > 0.0 && figure("transactions_per_s") > 0.0);
    // The server counts at least the run's own commits and rollbacks (PostgreSQL counts
    // the monitor's reads too); the figure is a rate, times the minutes to a float's
    // precision.
    assert!(
        figure("tpm") * elapsed_min >= transactions - 0.01,
        "TPM {} over {elapsed_min} min for {transactions} transactions",
        figure("tpm")
    );
    // A hundredth of New-Orders is rolled back by its unused item.
    let new_orders = figure("new_order transactions");
    assert!(figure("rollbacks") <= new_orders * 0.05 + 5.0, "{figures}");
}

/// A run killed (SIGKILL) at a random moment leaves every transaction whole: the
/// consistency conditions hold.
fn killed_run_leaves_consistent_tables(url: &str) {
    let binary = assert_cmd::cargo::cargo_bin("corescale");
    let mut child = std::process::Command::new(binary)
        .args(["run", "tpcc", "--target", url, "--sweep", "2"])
        .args(["--duration", "30s", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::thread::sleep(Duration::from_millis(1_500 + u64::from(nanos % 2_500)));
    child.kill().unwrap();
    child.wait().unwrap();
    corescale()
        .args(["db", "check", "--workload", "tpcc", "--target", url])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "consistency conditions 1, 2, 3, 4 hold",
        ));
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn order_entry_runs_on_postgresql() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "tpccrun");
    runs_and_stays_consistent(&scratch.url);
    assert_eq!(
        scratch.count(
            "SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"
        ),
        0,
        "teardown left nothing"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn order_entry_runs_on_mariadb() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("tpccrun"));
    runs_and_stays_consistent(&scratch.url);
    assert_eq!(
        scratch.count(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
        ),
        0,
        "teardown left nothing"
    );
}

#[test]
fn bad_options_are_usage_errors() {
    for (args, says) in [
        (&["--mix", "45,43,4,4"][..], "gives 4 shares"),
        (&["--mix", "45,43,4,4,5"][..], "sum to 101"),
        (&["--replay-limit", "5s"][..], "leave --replay-limit out"),
    ] {
        let output = corescale()
            .args([
                "run",
                "tpcc",
                "--target",
                "postgres://nobody@127.0.0.1:1/none",
            ])
            .args(args)
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&output.get_output().stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
