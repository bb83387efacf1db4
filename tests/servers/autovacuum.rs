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
    let mut client = postgres::Client::connect(
        &format!(
            "host={} port={} user=postgres dbname=postgres",
            cluster.dir.path().display(),
            cluster.port
        ),
        postgres::NoTls,
    )
    .unwrap();
    // A table of the test's own, every row changed twice: autovacuum's due there. Once it
    // has been, it has looked at corescale's tables too.
    client
        .batch_execute(
            "CREATE TABLE churn AS SELECT g AS id, 0 AS v FROM generate_series(1, 1000) g;
             UPDATE churn SET v = 1; UPDATE churn SET v = 2;",
        )
        .unwrap();
    let started = std::time::Instant::now();
    while maintained(&mut client, "churn") == 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(90),
            "autovacuum never came for a table of 1,000 rows changed twice"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let row = client
        .query_one(
            "SELECT count(*), coalesce(sum(n_tup_upd), 0)::bigint FROM pg_stat_user_tables WHERE relname LIKE 'corescale_t%'",
            &[],
        )
        .unwrap();
    let (tables, updated): (i64, i64) = (row.get(0), row.get(1));
    assert!(tables >= 1, "no corescale table in the statistics");
    assert!(
        updated >= 300 * tables,
        "{updated} rows updated in {tables} tables of 300"
    );
    let corescale_s = maintained(&mut client, "corescale_t%");
    assert_eq!(
        corescale_s, 0,
        "autovacuum vacuumed or analysed corescale's tables {corescale_s} times"
    );
}

/// How often autovacuum vacuumed or analysed the tables whose names are `LIKE` `tables`.
fn maintained(client: &mut postgres::Client, tables: &str) -> i64 {
    client
        .query_one(
            "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint FROM pg_stat_user_tables WHERE relname LIKE $1",
            &[&tables],
        )
        .unwrap()
        .get(0)
}
