//! Two replays of one capture compared statement by statement, on a known regression: a
//! private PostgreSQL logs corescale's own open loop of a lookup by an indexed column and a
//! trivial statement; the capture is replayed on three clones of the data: as it was, with a
//! different `work_mem` (no change expected) and with the lookup's index dropped. `report`
//! must name exactly the lookup as regressed against the first, and nothing against the
//! second.

use std::path::{Path, PathBuf};

use crate::common;
use crate::replay::{capture, start_logging_cluster};

use common::pg_cluster::PrivateCluster;
use common::{corescale, read_json, required};

/// The lookup (by `v`, indexed in the data as captured) and a statement no index changes.
const SCRIPT: &str = "\\set v random(1, 10000)\nSELECT pad FROM items WHERE v = :v;\nSELECT 1;\n";
const CLONES: [&str; 3] = ["before", "same", "slow"];

fn url(cluster: &PrivateCluster, database: &str) -> String {
    format!("postgres://postgres@127.0.0.1:{}/{database}", cluster.port)
}

fn execute(cluster: &PrivateCluster, database: &str, sql: &str) {
    let mut client = postgres::Client::connect(&url(cluster, database), postgres::NoTls).unwrap();
    client.batch_execute(sql).unwrap();
}

/// Database `shop` with its indexed table, logging every statement from now on, and its
/// three clones: as it is, another `work_mem`, the index dropped.
fn shop_and_clones(cluster: &PrivateCluster) {
    cluster.psql("CREATE DATABASE shop");
    execute(
        cluster,
        "shop",
        "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL);
         INSERT INTO items SELECT i, i, repeat('x', 100) FROM generate_series(1, 10000) i;
         CREATE INDEX items_v ON items (v);
         ANALYZE items;",
    );
    for clone in CLONES {
        cluster.psql(&format!("CREATE DATABASE {clone} TEMPLATE shop"));
    }
    cluster.psql("ALTER DATABASE same SET work_mem = '64MB'");
    execute(cluster, "slow", "DROP INDEX items_v");
    cluster.psql("ALTER DATABASE shop SET log_statement = 'all'");
}

/// 1,200 of each statement sent to `shop` (enough answers for p99), captured from its log.
fn captured_lookups(cluster: &PrivateCluster, dir: &Path) -> PathBuf {
    let script = dir.join("lookup.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    corescale()
        .args(["run", "script", "--target", &url(cluster, "shop"), "--file"])
        .arg(&script)
        .args(["-w", "2", "--rate", "100", "--duration", "12s"])
        .args(["--repeat", "1", "-q"])
        .assert()
        .success();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let captured = dir.join("shop.capture");
    capture(
        &format!("{}/pglog/pg.csv", cluster.dir.path().display()),
        &captured,
    );
    captured
}

/// The capture replayed at 1x on `database`, labelled by its name; the result's path. Its
/// table and index are read once before, so the first replay does not pay for the buffer
/// cache the later ones find filled.
fn replayed(cluster: &PrivateCluster, captured: &Path, database: &str, dir: &Path) -> PathBuf {
    execute(
        cluster,
        database,
        "SELECT sum(length(pad)) FROM items;
         SET enable_seqscan = off;
         SELECT count(*) FROM items WHERE v > 0;",
    );
    let json = dir.join(format!("{database}.json"));
    // The sessions' own settings (set_config) count as writes: they change nothing here.
    corescale()
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        .args([
            "run",
            "replay",
            "--target",
            &url(cluster, database),
            "--capture",
        ])
        .arg(captured)
        .args(["--allow-writes", "--label", database, "-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    json
}

/// Each statement's (verdict, text) in the comparison of `candidate` against `before`.
fn verdicts(analysis: &serde_json::Value, candidate: &str) -> Vec<(String, String)> {
    let comparison = common::comparison_of(analysis, candidate);
    assert!(comparison["baseline"].as_str().unwrap().contains("before"));
    (comparison["statements"].as_array().unwrap().iter())
        .map(|one| {
            let text = |field: &str| one[field].as_str().unwrap().to_string();
            (text("verdict"), text("text"))
        })
        .collect()
}

fn regressed(verdicts: &[(String, String)]) -> Vec<&str> {
    (verdicts.iter())
        .filter(|(verdict, _)| verdict == "regressed")
        .map(|(_, text)| text.as_str())
        .collect()
}

/// Its response times must be the server's alone: beside other tests a busy client's
/// scheduling delays are in them, and the trivial statement's p99 read 3.4x on a clone of
/// the same data (0.15 to 0.50 ms), beyond the noise of its own answers. The table is small
/// enough that its scans without the index leave the two CPUs mostly idle: with 40,000 rows
/// they took half a CPU, and the trivial statement's p99, queued behind them, regressed too.
#[test]
#[ignore = "needs an idle host and CORESCALE_TEST_PG_BINDIR: .ci/run runs it with --ignored, alone"]
fn a_dropped_index_is_the_one_regression_named() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_logging_cluster(&bindir);
    shop_and_clones(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let captured = captured_lookups(&cluster, dir.path());
    let runs = CLONES.map(|clone| replayed(&cluster, &captured, clone, dir.path()));
    let (text, analysis) = common::reported(&runs.each_ref().map(PathBuf::as_path));
    // Each level's interference and the server's CPU time around it, for a failure's
    // account: a level's server time (its backends' included) read 0.01 s once in CI where
    // 0.7 to 0.9 s are read here, unexplained (the note), so it is not asserted.
    for run in &runs {
        let level = &read_json(run)["levels"][0];
        eprintln!(
            "{}: server_cpu_s {} {}",
            run.display(),
            level["server_cpu_s"],
            level["interference"]
        );
    }
    // The findings, for the docs' figures (--nocapture).
    if let Some(finding) = text
        .lines()
        .find(|line| line.contains("slow against before, replaying"))
    {
        eprintln!("{finding}");
    }
    assert_eq!(
        analysis["statements"].as_array().unwrap().len(),
        2,
        "{text}"
    );
    let slow = verdicts(&analysis, "slow");
    assert_eq!(
        regressed(&slow),
        ["SELECT pad FROM items WHERE v = ?"],
        "{slow:?}\n{text}"
    );
    assert_eq!(slow[0].0, "regressed", "regressions first: {slow:?}");
    let same = verdicts(&analysis, "same");
    assert!(regressed(&same).is_empty(), "{same:?}\n{text}");
    // The trivial statement answered often enough to be judged, and was not changed.
    let trivial = (same.iter().chain(&slow))
        .filter(|(_, text)| text == "SELECT ?")
        .map(|(verdict, _)| verdict.as_str())
        .collect::<Vec<_>>();
    assert_eq!(trivial, ["unchanged", "unchanged"], "{text}");
    // The finding says it, with the statement's text.
    assert!(
        text.contains("slow against before, replaying one capture at 1x: 1 of "),
        "{text}"
    );
    assert!(
        text.contains("statements regressed beyond the noise (the worst: fingerprint-"),
        "{text}"
    );
}
