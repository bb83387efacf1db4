//! corescale's own tables on PostgreSQL are kept from autovacuum: the rolled-back change of
//! every page before a run samples its updates leaves a dead row on each, and a vacuum or
//! analyse of the whole table mid-run would be counted with the statements' blocks.

use crate::common;

use common::pg_cluster::PrivateCluster;
use common::{corescale, required};

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn autovacuum_leaves_the_tables_alone_after_a_run_with_updates() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    // autovacuum looks at the database every second, not every minute.
    let cluster = PrivateCluster::start(
        &bindir,
        "host all postgres 127.0.0.1/32 trust\n",
        &[],
        "-c autovacuum_naptime=1",
        "",
    );
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    corescale()
        .args(["db", "setup", "--target", &url, "--scale", "300"])
        .assert()
        .success();
    corescale()
        .args([
            "run",
            "db",
            "--target",
            &url,
            "-w",
            "1",
            "--update-pct",
            "50%",
        ])
        .args(["--duration", "1s", "--repeat", "1", "-q"])
        .assert()
        .success();
    // The statistics reach the server within a second of a session's last transaction;
    // autovacuum then has three more looks.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let mut client = postgres::Client::connect(
        &format!(
            "host={} port={} user=postgres dbname=postgres",
            cluster.dir.path().display(),
            cluster.port
        ),
        postgres::NoTls,
    )
    .unwrap();
    let row = client
        .query_one(
            "SELECT count(*), coalesce(sum(n_tup_upd), 0)::bigint, coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint FROM pg_stat_user_tables WHERE relname LIKE 'corescale_t%'",
            &[],
        )
        .unwrap();
    let (tables, updated, maintained): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert!(tables >= 1, "no corescale table in the statistics");
    // Each table's every row changed once (rolled back), and the level's updates.
    assert!(
        updated >= 300 * tables,
        "{updated} rows updated in {tables} tables of 300"
    );
    assert_eq!(
        maintained, 0,
        "autovacuum vacuumed or analysed corescale's tables {maintained} times"
    );
}
