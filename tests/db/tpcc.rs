//! The order-entry tables derived from TPC-C (`db setup tpcc`) on the real
//! PostgreSQL and MariaDB: the row counts of clause 4.3 exactly, the consistency conditions,
//! the specification's table and column names after corescale's prefix, a setup that
//! replaces only its own workload's earlier tables, and a teardown that leaves nothing and
//! drops nothing else. Each test works in a database of its own, dropped when it ends.

use crate::common;

use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{corescale, hold_server, required as server};

/// Rows per table of one warehouse, as clause 4.3.3.1 gives them (order lines aside: their
/// count is the orders' o_ol_cnt summed).
const ONE_WAREHOUSE: [(&str, i64); 8] = [
    ("item", 100_000),
    ("warehouse", 1),
    ("stock", 100_000),
    ("district", 10),
    ("customer", 30_000),
    ("history", 30_000),
    ("orders", 30_000),
    ("new_order", 9_000),
];

/// Runs `db setup tpcc` of one warehouse by two loaders; answers what it printed.
fn setup_tpcc(url: &str) -> String {
    let output = corescale()
        .args(["db", "setup", "tpcc", "--warehouses", "1"])
        .args(["--loaders", "2", "--target", url])
        .assert()
        .success();
    String::from_utf8_lossy(&output.get_output().stdout).into_owned()
}

/// Runs corescale with `args`, which must fail at run time (exit 1); answers its standard
/// error.
fn failing(args: &[&str]) -> String {
    let output = corescale().args(args).assert().code(1);
    String::from_utf8_lossy(&output.get_output().stderr).into_owned()
}

/// `db teardown`, which must succeed; answers what it printed.
fn teardown(url: &str) -> String {
    let output = corescale()
        .args(["db", "teardown", "--target", url])
        .assert()
        .success();
    String::from_utf8_lossy(&output.get_output().stdout).into_owned()
}

/// `db check --workload tpcc`, which must fail; answers its standard error.
fn failing_check(url: &str) -> String {
    failing(&["db", "check", "--workload", "tpcc", "--target", url])
}

/// Checks a loaded database by `count` (one integer from a query), on either server.
fn check_loaded(printed: &str, count: impl Fn(&str) -> i64) {
    assert!(
        printed.contains("consistency conditions 1, 2, 3, 4 hold")
            && printed.contains("not an audited TPC-C"),
        "{printed}"
    );
    for (table, rows) in ONE_WAREHOUSE {
        assert_eq!(
            count(&format!("SELECT COUNT(*) FROM corescale_tpcc_{table}")),
            rows,
            "{table}"
        );
    }
    let lines = count("SELECT COUNT(*) FROM corescale_tpcc_order_line");
    assert_eq!(
        lines,
        count("SELECT SUM(o_ol_cnt) FROM corescale_tpcc_orders"),
        "order lines against the orders' o_ol_cnt"
    );
    assert!((250_000..=350_000).contains(&lines), "{lines} order lines");
    // Clause 4.3.3.1's values, by the specification's column names.
    assert_eq!(
        count("SELECT COUNT(*) FROM corescale_tpcc_orders WHERE o_carrier_id IS NULL"),
        9_000
    );
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM corescale_tpcc_customer WHERE c_last = 'BARBARBAR' AND c_id = 1"
        ),
        10
    );
    assert_eq!(
        count("SELECT MIN(d_next_o_id) FROM corescale_tpcc_district"),
        3001
    );
    let original = count("SELECT COUNT(*) FROM corescale_tpcc_item WHERE i_data LIKE '%ORIGINAL%'");
    assert!(
        (9_000..=11_000).contains(&original),
        "{original} items ORIGINAL"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_pg),
    ignore = "needs CORESCALE_TEST_PG, a PostgreSQL URL (see README)"
)]
fn order_entry_tables_on_postgresql() {
    let base = server("CORESCALE_TEST_PG");
    let _server = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "tpcc");
    // A SLOB setup before it stays: each setup replaces only its own workload's tables.
    corescale()
        .args(["db", "setup", "--scale", "256", "--schemas", "1"])
        .args(["--target", &scratch.url])
        .assert()
        .success();
    let printed = setup_tpcc(&scratch.url);
    // Sums and integer columns as the bigint the client reads.
    let count = |sql: &str| scratch.count(&format!("SELECT ({sql})::bigint"));
    check_loaded(&printed, count);
    assert_eq!(count("SELECT COUNT(*) FROM corescale_t0"), 256);
    // The load's NURand constants are recorded with every table.
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM corescale_catalog WHERE name LIKE 'corescale\\_tpcc\\_%' AND state = 'ready' AND parameters LIKE '%\"nurand\":{\"c_last\":%'"
        ),
        9
    );
    // Again: the first load's tables are dropped, SLOB's kept.
    let again = setup_tpcc(&scratch.url);
    assert!(
        again.contains("dropped the earlier setup's objects: corescale_tpcc_")
            && !again.contains("corescale_t0"),
        "{again}"
    );
    check_loaded(&again, count);
    broken_conditions_are_errors(&scratch);
    // A user's table under a name of the workload's is refused, never replaced.
    let torn = teardown(&scratch.url);
    assert!(
        torn.contains("corescale_tpcc_order_line") && torn.contains("corescale_t0"),
        "{torn}"
    );
    scratch
        .client()
        .batch_execute("CREATE TABLE corescale_tpcc_orders (mine int); INSERT INTO corescale_tpcc_orders VALUES (7)")
        .unwrap();
    let stderr = failing(&["db", "setup", "tpcc", "--target", &scratch.url]);
    assert!(
        stderr.contains("corescale_tpcc_orders already exist")
            && stderr.contains("does not overwrite"),
        "{stderr}"
    );
    assert_eq!(
        count("SELECT SUM(mine)::bigint FROM corescale_tpcc_orders"),
        7
    );
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ),
        1,
        "only the user's table is left"
    );
}

/// `db check --workload tpcc` passes a loaded database, and names each condition broken on
/// purpose (1 and 3, not 2) in one line, exit 1.
fn broken_conditions_are_errors(scratch: &PgScratch) {
    corescale()
        .args([
            "db",
            "check",
            "--workload",
            "tpcc",
            "--target",
            &scratch.url,
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "consistency conditions 1, 2, 3, 4 hold",
        ));
    scratch
        .client()
        .batch_execute(
            "UPDATE corescale_tpcc_district SET d_ytd = d_ytd + 1 WHERE d_id = 3;
             DELETE FROM corescale_tpcc_new_order WHERE no_d_id = 2 AND no_o_id = 2500",
        )
        .unwrap();
    let stderr = failing_check(&scratch.url);
    assert!(
        stderr.contains("condition 1 (each warehouse's W_YTD is the sum of its districts' D_YTD) fails in 1 place")
            && stderr.contains("condition 3")
            && !stderr.contains("condition 2")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
#[cfg_attr(
    not(corescale_test_mysql),
    ignore = "needs CORESCALE_TEST_MYSQL, a MariaDB/MySQL URL (see README)"
)]
fn order_entry_tables_on_mariadb() {
    let base = server("CORESCALE_TEST_MYSQL");
    let _server = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("tpcc"));
    let stderr = failing_check(&scratch.url);
    assert!(
        stderr.contains("has no order-entry tables") && stderr.contains("db setup tpcc"),
        "{stderr}"
    );
    let printed = setup_tpcc(&scratch.url);
    check_loaded(&printed, |sql| {
        scratch.count(&format!("SELECT CAST(({sql}) AS SIGNED)"))
    });
    // A view put in a table's place is never read as corescale's, nor dropped.
    scratch.execute(
        "DROP TABLE corescale_tpcc_item; CREATE VIEW corescale_tpcc_item AS SELECT 1 AS i_id",
    );
    let stderr = failing_check(&scratch.url);
    assert!(
        stderr.contains("corescale_tpcc_item is not the table corescale's setup created"),
        "{stderr}"
    );
    let torn = teardown(&scratch.url);
    assert!(
        torn.contains("left alone") && torn.contains("corescale_tpcc_item"),
        "{torn}"
    );
    assert_eq!(
        scratch.count("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'corescale_tpcc%'"),
        1,
        "teardown dropped the view, or left a table of corescale's"
    );
}

#[test]
fn setup_options_of_the_other_workload_are_refused() {
    for (args, says) in [
        (&["--warehouses", "2"][..], "run `db setup tpcc`"),
        (
            &["tpcc", "--scale", "10"][..],
            "--scale is an option of `db setup slob`",
        ),
        (
            &["tpcc", "--schemas", "3"][..],
            "--schemas is an option of `db setup slob`",
        ),
        (&["tpcc", "--warehouses", "0"][..], "--warehouses"),
    ] {
        let output = corescale()
            .args(["db", "setup"])
            .args(args)
            .args(["--target", "postgres://nobody@127.0.0.1:1/none"])
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&output.get_output().stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `--workload NAME` became `db setup NAME`: the old form is refused in one line naming the
/// new one, before anything connects.
#[test]
fn setup_workload_flag_names_the_subcommand() {
    for (flag, named) in [
        (&["--workload", "tpcc"][..], "`corescale db setup tpcc"),
        (&["--workload=slob"][..], "`corescale db setup slob"),
    ] {
        let output = corescale()
            .args(["db", "setup"])
            .args(flag)
            .args(["--target", "postgres://nobody@127.0.0.1:1/none"])
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&output.get_output().stderr);
        assert!(
            stderr.contains(named) && stderr.trim_end().lines().count() == 1,
            "{flag:?}: {stderr}"
        );
    }
}
