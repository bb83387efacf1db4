//! One database behind several instances: a private PostgreSQL primary with two streaming
//! replicas (`pg_basebackup -R`, each on its own port and socket directory under a temporary
//! directory), loaded through a libpq host list. `db check` says which is which, setup on the
//! primary is waited for on the replicas, the routes place sessions where they say, each
//! instance's counts agree with its own counters, a writing session is refused on a replica
//! before the run, a replica restarted mid-level is recorded while the run completes, and
//! teardown leaves nothing on any instance.

mod common;

use common::pg_cluster::PrivateCluster;
use common::{corescale, read_json, required};
use predicates::str::contains;
use serde_json::Value;

/// A primary that lets its replicas stream over its socket, and two replicas of it.
fn start_primary_and_replicas(bindir: &str) -> (PrivateCluster, [PrivateCluster; 2]) {
    let primary = PrivateCluster::start(
        bindir,
        "local replication postgres trust\nhost all postgres 127.0.0.1/32 trust\n",
        &[],
        "-c max_connections=40",
        "",
    );
    let replicas = [
        primary.replica("-c max_connections=40"),
        primary.replica("-c max_connections=40"),
    ];
    (primary, replicas)
}

/// The instances as one libpq host list, primary first.
fn host_list(primary: &PrivateCluster, replicas: &[PrivateCluster]) -> String {
    let hosts: Vec<String> = std::iter::once(primary)
        .chain(replicas)
        .map(|cluster| format!("127.0.0.1:{}", cluster.port))
        .collect();
    format!("postgres://postgres@{}/postgres", hosts.join(","))
}

/// A count the instance answers, over its socket.
fn count_on(cluster: &PrivateCluster, sql: &str) -> i64 {
    let mut client = postgres::Client::connect(
        &format!(
            "host={} port={} user=postgres dbname=postgres",
            cluster.dir.path().display(),
            cluster.port
        ),
        postgres::NoTls,
    )
    .unwrap();
    client.query_one(sql, &[]).unwrap().get(0)
}

/// One fixed level of `workers` sessions over the cluster; returns the result document.
fn run_level(url: &str, workers: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cluster.json");
    corescale()
        .args(["run", "db", "--target", url, "-w", workers])
        .args(["--duration", "1s", "--repeat", "1", "-q", "-o"])
        .arg(&json)
        .args(extra)
        .assert()
        .success();
    read_json(&json)
}

fn instances(level: &Value) -> &Vec<Value> {
    level["instances"]
        .as_array()
        .unwrap_or_else(|| panic!("no instances in {level}"))
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn a_primary_and_two_replicas_are_loaded_routed_and_counted_per_instance() {
    let bindir = required("CORESCALE_TEST_PG_BINDIR");
    let (primary, replicas) = start_primary_and_replicas(&bindir);
    let url = host_list(&primary, &replicas);

    // db check: every instance, the primary named once, the replicas twice.
    let checked = corescale()
        .args(["db", "check", "--target", &url])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&checked.get_output().stdout).to_string();
    assert_eq!(said.matches("role      primary").count(), 1, "{said}");
    assert_eq!(said.matches("role      replica").count(), 2, "{said}");

    // Setup writes on the primary and waits for both replicas to replay it.
    corescale()
        .args([
            "db",
            "setup",
            "--target",
            &url,
            "--schemas",
            "3",
            "--scale",
            "400",
        ])
        .assert()
        .success()
        .stdout(contains("replayed on 2 replica(s)"));
    for replica in &replicas {
        assert_eq!(
            count_on(replica, "SELECT count(*) FROM corescale_t2"),
            400,
            "the replica holds the primary's tables as soon as setup returns"
        );
    }

    // A writing session would land on a replica: refused before the run, as a usage error.
    corescale()
        .args([
            "run",
            "db",
            "--target",
            &url,
            "-w",
            "3",
            "--update-pct",
            "10",
        ])
        .args(["--duration", "1s", "--repeat", "1", "-q"])
        .assert()
        .code(2)
        .stderr(contains("take no writes"));

    // Round robin: one session per instance; each instance's LIO is its own sessions' blocks.
    let document = run_level(&url, "3", &[]);
    let level = &document["levels"][0];
    let blocks_per_statement = level["workload_figures"]["blocks_per_statement"]
        .as_f64()
        .unwrap();
    let placed = instances(level);
    assert_eq!(placed.len(), 3);
    let roles: Vec<&str> = placed
        .iter()
        .map(|instance| instance["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["primary", "replica", "replica"]);
    let mut statements = 0.0;
    for instance in placed {
        assert_eq!(instance["sessions"], 1, "{instance}");
        let own = instance["statements"].as_f64().unwrap();
        let lio = instance["db_lio"].as_f64().unwrap();
        assert!(own > 0.0, "{instance}");
        let ratio = lio / (own * blocks_per_statement);
        assert!(
            (0.95..=1.05).contains(&ratio),
            "{}: its own counter says {lio} blocks for {own} statements of {blocks_per_statement}: {ratio}",
            instance["instance"]
        );
        assert!(instance["latency"]["p99_ms"].as_f64().unwrap() > 0.0);
        statements += own;
    }
    assert_eq!(level["workload_figures"]["statements"], statements);
    let total_lio: f64 = placed
        .iter()
        .map(|instance| instance["db_lio"].as_f64().unwrap())
        .sum();
    assert_eq!(
        level["workload_figures"]["db_lio"].as_f64().unwrap(),
        total_lio
    );

    // Reads on the replicas only: the primary gets no session.
    let document = run_level(&url, "4", &["--route", "reads=replicas"]);
    let sessions: Vec<u64> = instances(&document["levels"][0])
        .iter()
        .map(|instance| instance["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [0, 2, 2]);

    // A replica restarted mid-level: its sessions end with the reason recorded, the level is
    // kept, the other instances' figures stand, and the run completes.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("restart.json");
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args(["run", "db", "--target", &url, "-w", "3", "--duration", "4s"])
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    replicas[1].restart("-c max_connections=40");
    let status = run.wait().unwrap();
    assert!(status.success(), "the run completes: {status}");
    let document = read_json(&json);
    assert_eq!(document["complete"], true);
    let level = &document["levels"][0];
    let placed = instances(level);
    assert!(
        placed[2]["failed"].as_str().is_some(),
        "the restarted replica's sessions are recorded as ended: {}",
        placed[2]
    );
    assert!(placed[0]["failed"].is_null() && placed[1]["failed"].is_null());
    assert!(placed[0]["statements"].as_f64().unwrap() > 0.0);
    let warnings = level["warnings"].to_string();
    assert!(warnings.contains("ended early"), "{warnings}");

    // Teardown on the primary, replayed on the replicas: nothing left anywhere.
    corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .success()
        .stdout(contains("replayed on 2 replica(s)"));
    for instance in std::iter::once(&primary).chain(&replicas) {
        assert_eq!(
            count_on(
                instance,
                "SELECT count(*) FROM pg_class WHERE relname LIKE 'corescale%'"
            ),
            0
        );
    }
}
