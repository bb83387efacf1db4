//! A campaign of two parts (two corescale processes here, as two client hosts would run
//! them) loading a private PostgreSQL server of the test's own, started together at an agreed
//! time by the server's clock; `report` merges them exactly. A part killed mid-level leaves
//! that level incomplete, named, not summed short. (tests/release/ansible.rs runs a campaign through
//! the playbook over ssh.)

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use common::campaign::{check_merged, check_merged_open_loop, merged_analysis, set_up_tables};
use common::pg_cluster::PrivateCluster;
use common::{corescale, read_json, required};

/// A time `seconds` from now, as --start-at takes it (whole seconds, UTC).
fn start_in(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Part `part` of 2 as a process of its own, labelled as its client host.
fn spawn_part(
    url: &str,
    part: usize,
    start_at: &str,
    duration: &str,
    extra: &[&str],
    json: &Path,
) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .args([
            "run", "db", "--target", url, "--sweep", "2,4", "--repeat", "1",
        ])
        .args(extra)
        // A gap that leaves a busy host time to reconnect and warm up the next level's
        // sessions (a part that needs longer starts late, and the check below says so).
        .args(["--duration", duration, "--level-gap", "3s", "-q"])
        .args(["--campaign", "two-clients", "--part", &format!("{part}/2")])
        .args([
            "--start-at",
            start_at,
            "--label",
            &format!("client-{part}"),
            "-o",
        ])
        .arg(json)
        .spawn()
        .unwrap()
}

#[test]
#[cfg_attr(
    not(corescale_test_pg_bindir),
    ignore = "needs CORESCALE_TEST_PG_BINDIR, PostgreSQL's server binaries (see README)"
)]
fn two_parts_merge_exactly_and_a_killed_part_leaves_its_level_incomplete() {
    // A private server: the parts' load would push other tests' pages out of a shared
    // server's buffer cache while they measure.
    let server = PrivateCluster::start(
        &required("CORESCALE_TEST_PG_BINDIR"),
        "host all postgres 127.0.0.1/32 trust\n",
        &[],
        "-c max_connections=40",
        "",
    );
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    set_up_tables(&url, 4, 200);
    let dir = tempfile::tempdir().unwrap();

    // Both parts complete: the merged series is exact against the parts' own documents,
    // closed-loop levels and the open-loop ones at half of each part's closed-loop rate.
    let start_at = start_in(6);
    let files: Vec<PathBuf> = (1..=2)
        .map(|part| dir.path().join(format!("part{part}.json")))
        .collect();
    let mut parts: Vec<Child> = (1..=2)
        .map(|part| {
            spawn_part(
                &url,
                part,
                &start_at,
                "1s",
                &["--rate", "50%"],
                &files[part - 1],
            )
        })
        .collect();
    for part in &mut parts {
        assert!(part.wait().unwrap().success());
    }
    let documents: Vec<serde_json::Value> = files.iter().map(|file| read_json(file)).collect();
    for (index, document) in documents.iter().enumerate() {
        assert_eq!(document["campaign"]["part"], index + 1);
        let sessions: Vec<u64> = document["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|level| level["workers"].as_u64().unwrap())
            .collect();
        assert_eq!(
            sessions,
            [1, 1, 2, 2],
            "each part runs its half of 2 and 4 sessions, closed loop then at a set rate"
        );
        // Each judged level found the other part on this host and took its CPU out of the
        // other processes' load: the campaign's own load is no disturbance. A part that
        // ended before this one's last window closed is gone from /proc and counted as
        // nothing (seen in .ci/run: 0 CPUs at the last level), so its CPU shows at some
        // level, not necessarily at each.
        let mut judged_levels = 0;
        let mut counted_cpu = false;
        for level in document["levels"].as_array().unwrap() {
            let judged = &level["interference"];
            if judged.is_null() {
                continue;
            }
            judged_levels += 1;
            assert_eq!(judged["campaign_parts_here"], 1, "{judged}");
            let cpus = judged["campaign_parts_cpus"].as_f64().unwrap();
            assert!(cpus >= 0.0, "{judged}");
            counted_cpu |= cpus > 0.0;
        }
        assert!(
            judged_levels > 0 && counted_cpu,
            "no level of part {} was judged with the other part's CPU counted",
            index + 1
        );
    }
    let analysis = merged_analysis(&files, dir.path());
    assert_eq!(check_merged(&documents, &analysis, "two-clients"), [2, 4]);
    assert_eq!(
        check_merged_open_loop(&documents, &analysis, "two-clients"),
        [2, 4]
    );

    // Part 2 killed in the middle of the second level: that level is incomplete, named, and
    // left out; the first is merged.
    let start_at = start_in(6);
    let killed: Vec<PathBuf> = (1..=2)
        .map(|part| dir.path().join(format!("killed{part}.json")))
        .collect();
    let mut first = spawn_part(&url, 1, &start_at, "2s", &[], &killed[0]);
    let mut second = spawn_part(&url, 2, &start_at, "2s", &[], &killed[1]);
    // Level one runs 2 s from the start, the gap 3 s, then level two: kill one second in.
    let second_level = chrono::DateTime::parse_from_rfc3339(&start_at).unwrap()
        + chrono::Duration::milliseconds(6000);
    let wait = second_level.signed_duration_since(chrono::Utc::now());
    std::thread::sleep(Duration::from_millis(wait.num_milliseconds().max(0) as u64));
    second.kill().unwrap();
    second.wait().unwrap();
    assert!(first.wait().unwrap().success());
    assert_eq!(read_json(&killed[1])["levels"].as_array().unwrap().len(), 1);
    let analysis = merged_analysis(&killed, dir.path());
    let warnings = analysis["warnings"].to_string();
    assert!(
        warnings.contains("campaign 'two-clients' at 4 sessions is incomplete: part 2/2 (client-2) has no such level"),
        "{warnings}"
    );
    let merged: Vec<u64> = analysis["series"][0]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| level["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(merged, [2]);
    corescale()
        .args(["db", "teardown", "--target", &url])
        .assert()
        .success();
}
