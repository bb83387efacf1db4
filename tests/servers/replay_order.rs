//! The capture's commit order kept at every speed: a private PostgreSQL logs a pgbench run
//! with its opening `TRUNCATE pgbench_history` (after history rows a run before it left),
//! `-M prepared`, four clients on one branch row. Replayed at 1x, 8x and 32x, each on a
//! fresh clone of the data as the run found it, the clone must end with the rows the
//! capture's server did: as many history rows, the same sums of deltas and balances. A
//! replay that sent the clients' first inserts before the TRUNCATE was answered loses them
//! (issue 79 saw 1-20 history rows lost at 16x and above).

use crate::common;
use crate::replay::{capture, pgbench, start_logging_cluster};

use common::pg_cluster::PrivateCluster;
use common::{corescale, read_json, required};

const SPEEDS: [&str; 3] = ["1", "8", "32"];

/// What pgbench's tables hold, summed: history rows, their deltas, and the three balances.
const STATE: &str = "SELECT (SELECT count(*) FROM pgbench_history)::text || ' ' || \
     (SELECT coalesce(sum(delta), 0) FROM pgbench_history)::text || ' ' || \
     (SELECT sum(abalance) FROM pgbench_accounts)::text || ' ' || \
     (SELECT sum(bbalance) FROM pgbench_branches)::text || ' ' || \
     (SELECT sum(tbalance) FROM pgbench_tellers)::text";

fn url(cluster: &PrivateCluster, database: &str) -> String {
    format!("postgres://postgres@127.0.0.1:{}/{database}", cluster.port)
}

fn state(cluster: &PrivateCluster, database: &str) -> String {
    let mut client = postgres::Client::connect(&url(cluster, database), postgres::NoTls).unwrap();
    client.query_one(STATE, &[]).unwrap().get(0)
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_replay_leaves_the_rows_the_captured_run_left_at_every_speed_it_keeps_up_with() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_logging_cluster(&bindir);
    cluster.psql("CREATE DATABASE bench");
    pgbench(&bindir, &cluster, &["-i", "-s", "1", "-q", "bench"]);
    // History rows for the logged run's TRUNCATE to take away.
    pgbench(&bindir, &cluster, &["-n", "-c", "2", "-t", "50", "bench"]);
    cluster.psql("CREATE DATABASE fresh TEMPLATE bench");
    cluster.psql("ALTER DATABASE bench SET log_statement = 'all'");
    pgbench(
        &bindir,
        &cluster,
        &["-c", "4", "-T", "3", "-R", "50", "-M", "prepared", "bench"],
    );
    // The collector writes what the server handed it: a moment for the last lines.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let captured = state(&cluster, "bench");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.capture");
    capture(
        &format!("{}/pglog/pg.csv", cluster.dir.path().display()),
        &file,
    );
    let mut kept_up = Vec::new();
    for speed in SPEEDS {
        let clone = format!("at_{speed}x");
        cluster.psql(&format!("CREATE DATABASE {clone} TEMPLATE fresh"));
        let json = dir.path().join(format!("{clone}.json"));
        let done = corescale()
            .env("CORESCALE_TEST_PREFLIGHT", "100ms")
            .args(["run", "replay", "--allow-writes", "--speed", speed])
            .args(["--target", &url(&cluster, &clone), "--capture"])
            .arg(&file)
            .arg("-o")
            .arg(&json)
            .output()
            .unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let level = read_json(&json)["levels"][0].clone();
        let rate = &level["latency"]["rate"];
        let figures = &level["workload_figures"];
        assert_eq!(figures["failed_statements"], 0.0, "at {speed}x: {figures}");
        if rate["sent"] != rate["due"] {
            eprintln!(
                "at {speed}x the replay fell behind on this host ({rate}): rows not compared"
            );
            continue;
        }
        assert_eq!(figures["statements_out_of_order"], 0.0, "at {speed}x");
        assert_eq!(
            state(&cluster, &clone),
            captured,
            "at {speed}x the clone's history rows, deltas and balances differ from the captured run's"
        );
        kept_up.push(speed);
    }
    assert!(
        kept_up.contains(&"1"),
        "the replay kept up at no speed but {kept_up:?}"
    );
}
