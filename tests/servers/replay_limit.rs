//! Who held back a replay that fell behind: a private PostgreSQL's logged pgbench run
//! (`replay_order`'s) replayed at 1x while another session holds the branch row every
//! transaction updates, so each waits on the server, must be said to be limited by the
//! server; a replay of many cheap statements by a client held to a fifth of a CPU (a cgroup
//! quota), at a speed it cannot send, must be said to be limited by the client.

use std::time::Duration;

use crate::common;
use crate::replay::{capture, run_replay, start_logging_cluster};
use crate::replay_order::{logged_pgbench, url};

use common::quota_group::QuotaGroup;
use common::{corescale, read_json, required};

/// The report's finding on a replay's result, its figures of who held it back shown.
fn finding(json: &std::path::Path) -> String {
    let level = &read_json(json)["levels"][0];
    let figures = &level["workload_figures"];
    eprintln!(
        "starved {} waiting {} cpu {}",
        figures["sessions_starved_share"],
        figures["busiest_session_waiting_share"],
        figures["client_cpu_cores"]
    );
    let (text, _) = common::reported(&[json]);
    let said = text
        .lines()
        .find(|line| line.contains("replaying its capture"))
        .unwrap_or_else(|| panic!("no replay finding in {text}"))
        .to_string();
    eprintln!("{said}");
    said
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_lock_held_elsewhere_is_said_to_be_the_server_s_limit() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let dir = tempfile::tempdir().unwrap();
    let (cluster, file) = logged_pgbench(&bindir, dir.path());
    cluster.psql("CREATE DATABASE locked TEMPLATE fresh");
    // The branch row, held from before the replay until well after its level's end.
    let target = url(&cluster, "locked");
    let holder = {
        let target = target.clone();
        std::thread::spawn(move || {
            let mut client = postgres::Client::connect(&target, postgres::NoTls).unwrap();
            let mut transaction = client.transaction().unwrap();
            transaction
                .execute(
                    "UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1",
                    &[],
                )
                .unwrap();
            std::thread::sleep(Duration::from_secs(8));
            transaction.commit().unwrap();
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let json = dir.path().join("locked.json");
    run_replay(&target, &file, &["--allow-writes"], &json);
    holder.join().unwrap();
    let said = finding(&json);
    assert!(said.contains("fell behind at 1x"), "{said}");
    assert!(
        said.contains("; the server was the limit: its answers kept the busiest session waiting"),
        "{said}"
    );
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg_bindir, corescale_test_cgroup)),
    ignore = "needs CORESCALE_TEST_PG_BINDIR and a writable cgroup cpu controller (see README)"
)]
fn a_client_held_to_a_fifth_of_a_cpu_is_said_to_be_the_limit() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let cluster = start_logging_cluster(&bindir);
    cluster.psql("CREATE DATABASE shop");
    cluster.psql("ALTER DATABASE shop SET log_statement = 'all'");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("cheap.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    corescale()
        .args([
            "run",
            "script",
            "--target",
            &url(&cluster, "shop"),
            "--file",
        ])
        .arg(&script)
        .args([
            "-w",
            "8",
            "--rate",
            "2000",
            "--duration",
            "4s",
            "--repeat",
            "1",
            "-q",
        ])
        .assert()
        .success();
    std::thread::sleep(Duration::from_millis(500));
    let file = dir.path().join("shop.capture");
    capture(
        &format!("{}/pglog/pg.csv", cluster.dir.path().display()),
        &file,
    );
    let json = dir.path().join("throttled.json");
    // A fifth of a CPU: a container's limit, below what 64 K statements a second take.
    let group = QuotaGroup::new(20_000, 100_000);
    let target = url(&cluster, "shop");
    let done = group.corescale(&[
        "run",
        "replay",
        "--allow-writes",
        "--speed",
        "32",
        "--target",
        &target,
        "--capture",
        file.to_str().unwrap(),
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let said = finding(&json);
    assert!(said.contains("fell behind at 32x"), "{said}");
    assert!(said.contains("; the client was the limit"), "{said}");
    // The quota is the CPU it may use, not the one CPU a thread count rounds it up to.
    let figures = &read_json(&json)["levels"][0]["workload_figures"];
    assert_eq!(figures["client_cpus"].as_f64(), Some(0.2), "{figures}");
}
