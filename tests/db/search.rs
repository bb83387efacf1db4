//! `run script --find`: the search's known answer from queueing on the real PostgreSQL. A
//! transaction that takes an exclusive advisory lock and holds it 2 ms is served one at a
//! time, so the server's capacity is what one closed-loop session measures, and at uniform
//! arrivals p99 stays near the service time until the rate nears it: the search for
//! p99 <= 50 ms must keep a rate close to that capacity and bracket it within its precision.
//! The lock is the test database's own (advisory locks are per database), and the script
//! creates nothing.

use crate::common;

use common::scratch::PgScratch;
use common::{corescale, hold_server, read_json, required};
use predicates::str::contains;

/// One transaction at a time: the lock is held through the 2 ms sleep until the commit.
/// The whole transaction is one round trip, so a closed-loop session spends only the
/// client's turn outside the lock, which open-loop sessions queued at the lock hide: with
/// BEGIN and the lock alone in the pipeline, the search kept 1.11 of the closed loop in CI;
/// with all of it, 0.998 to 1.056 in four runs here.
const ONE_AT_A_TIME: &str = "\\startpipeline
BEGIN;
SELECT pg_advisory_xact_lock(770077);
SELECT pg_sleep(0.002);
COMMIT;
\\endpipeline
";

/// Its p99 must be the server's alone: beside other tests (and CI's fuzzing) a probe's
/// responses wait for the client's CPU, and the search keeps half the capacity (0.48 was
/// seen in CI). `.ci/run` runs it with --ignored, alone, as the interference tests.
#[test]
#[ignore = "needs an idle host and CORESCALE_TEST_PG (a PostgreSQL server): .ci/run runs it with --ignored, alone"]
fn the_search_finds_the_capacity_of_a_server_that_serves_one_at_a_time() {
    let base = required("CORESCALE_TEST_PG");
    let _held = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "search_lock");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("lock.sql");
    std::fs::write(&script, ONE_AT_A_TIME).unwrap();
    let script = script.to_str().unwrap();
    // The reference: transactions/s one closed-loop session measures.
    let closed = dir.path().join("closed.json");
    corescale()
        .args(["run", "script", "--target", &scratch.url, "--file", script])
        .args(["-w", "1", "--duration", "3s", "--repeat", "1", "-q", "-o"])
        .arg(&closed)
        .assert()
        .success();
    let closed = read_json(&closed);
    let level = &closed["levels"][0];
    let capacity =
        level["latency"]["count"].as_f64().unwrap() / level["elapsed_s"].as_f64().unwrap();
    // The search, its answer the run's last line.
    let found = dir.path().join("found.json");
    corescale()
        .args(["run", "script", "--target", &scratch.url, "--file", script])
        .args(["--find", "p99<=50ms", "--max-time", "4m", "-q", "-o"])
        .arg(&found)
        .assert()
        .success()
        .stdout(contains("corescale: holds p99 <= 50 ms up to "));
    let document = read_json(&found);
    let search = &document["search"];
    let kept = search["kept_rate"].as_f64().unwrap();
    let broken = search["broken_rate"].as_f64().unwrap();
    let said = format!("capacity {capacity:.0}/s; search {search:#}");
    eprintln!(
        "kept {kept:.0}/s, {:.3} of the closed loop's {capacity:.0}/s",
        kept / capacity
    );
    assert_eq!(search["stopped"], "precision", "{said}");
    assert_eq!(search["precision_reached"], true, "{said}");
    assert!(broken / kept - 1.0 <= 0.05 + 1e-9, "{said}");
    // The bound is [0.85, 1.05]; on a busy 2-core host a closed-loop session
    // wakes late for its next round trip while open-loop sessions queue at the server, so
    // the reference itself reads low (1.056 was seen): 1.10 holds the answer there too.
    assert!(
        (0.85..=1.10).contains(&(kept / capacity)),
        "kept {kept:.0}/s is {:.2} of the closed loop's {capacity:.0}/s; {said}",
        kept / capacity
    );
    // Every level is the search's: the capacity first, then each probe in order (one
    // measured again with more sessions when all were busy behind the schedule), and each
    // probe's record names its last level.
    let levels = document["levels"].as_array().unwrap();
    let probes = search["probes"].as_array().unwrap();
    assert!(levels.len() > probes.len(), "{said}");
    assert_eq!(levels[0]["search_step"], "capacity");
    assert!(
        levels[1..]
            .iter()
            .all(|level| level["search_step"]["probe"].is_u64())
    );
    for (number, probe) in probes.iter().enumerate() {
        let index = probe["level"].as_u64().unwrap() as usize;
        assert_eq!(levels[index]["search_step"]["probe"], number + 1);
        let interval = &probe["objectives"][0]["interval"];
        assert!(
            interval["lower_ms"].as_f64() <= interval["estimate_ms"].as_f64(),
            "{probe}"
        );
        assert!(["kept", "broken", "undecided"].contains(&probe["verdict"].as_str().unwrap()));
    }
    // The report says the search's answer (its first finding: the page's headline) and
    // tables its probes.
    let report = corescale().arg("report").arg(&found).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout).replace("\n  ", " ");
    assert!(report.status.success(), "{text}");
    let findings = text
        .find("Findings\n- ")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        (text[findings + "Findings\n- ".len()..].lines().next())
            .is_some_and(|first| first.contains(": holds p99 <= 50 ms up to ")),
        "{text}"
    );
    assert!(text.contains("the search's probes, in order"), "{text}");
    let probe_rows = text
        .lines()
        .filter(|line| line.contains("kept") || line.contains("broken"))
        .count();
    assert!(probe_rows >= probes.len(), "{text}");
}
