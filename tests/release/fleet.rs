//! `report DIR` over many results: a fleet of hosts against their siblings, and one host's
//! runs over time; `run -o -` into `report -`.

use crate::common;

use std::path::Path;

use common::{corescale, read_json, template, variant};
use predicates::str::contains;
use serde_json::Value;

fn write(dir: &Path, name: &str, document: &Value) {
    std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
    std::fs::write(dir.join(name), document.to_string()).unwrap();
}

#[test]
fn a_fleet_names_the_host_that_underperforms_its_siblings() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // Twelve identical servers within ±1%, and db07 with 18% less capacity (jobs 1/0.82 as long).
    for index in 1..=12 {
        let host = format!("db{index:02}");
        let slower = if index == 7 {
            1.0 / 0.82
        } else {
            1.0 + 0.002 * ((index * 7) % 5) as f64
        };
        let document = variant(&host, "2026-11-20T10:00:00Z", slower);
        write(
            &results,
            &format!("{host}/2026-11-20T1000-cpu.json"),
            &document,
        );
    }
    let analysis = dir.path().join("analysis.json");
    let html = dir.path().join("fleet.html");
    corescale()
        .arg("report")
        .arg(&results)
        .args(["--include-disturbed", "--wide", "--json"])
        .arg(&analysis)
        .arg("--html")
        .arg(&html)
        .assert()
        .success()
        .stdout(contains(
            "db07 has 18% less capacity than the median of its 11 siblings",
        ));
    let analysis = read_json(&analysis);
    let fleet = &analysis["fleet"];
    let hosts = fleet["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 12);
    let outliers: Vec<&str> = hosts
        .iter()
        .filter(|host| host["outlier"] == true)
        .map(|host| host["host"].as_str().unwrap())
        .collect();
    assert_eq!(outliers, ["db07"]);
    let db07 = hosts.iter().find(|host| host["host"] == "db07").unwrap();
    let ratio = db07["capacity_vs_group"].as_f64().unwrap();
    assert!((ratio - 0.82).abs() < 0.005, "{ratio}");
    assert_eq!(fleet["groups"].as_array().unwrap().len(), 1);
    // The campaign tag of each run is shown.
    assert_eq!(
        analysis["series"][0]["series"]["provenance"]["tags"]["campaign"],
        "fixture"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(common::layout::assert_figures_lay_out(&page, "a fleet of twelve") >= 1);
}

#[test]
fn a_run_that_departs_from_its_hosts_history_is_called_out() {
    let dir = tempfile::tempdir().unwrap();
    // A week of runs of one VM, every 15 minutes in the Oracle cloud OCPU study; here eight, one 15% short.
    for run in 0..8 {
        let slower = if run == 5 {
            1.0 / 0.85
        } else {
            1.0 + 0.003 * (run % 3) as f64
        };
        let started = format!("2026-11-2{run}T09:00:00Z");
        let document = variant("vm1", &started, slower);
        write(dir.path(), &format!("vm1/run{run}.json"), &document);
        // The CSV beside a JSON is the same run and is not read twice.
        std::fs::write(dir.path().join(format!("vm1/run{run}.csv")), "not read").unwrap();
    }
    let analysis = dir.path().join("analysis.json");
    let html = dir.path().join("fleet.html");
    corescale()
        .arg("report")
        .arg(dir.path().join("vm1"))
        .args(["--include-disturbed", "--wide", "--json"])
        .arg(&analysis)
        .arg("--html")
        .arg(&html)
        .assert()
        .success()
        .stdout(contains(
            "vm1: the run started 2026-11-25T09:00:00Z delivered 15% less capacity than the host's median over 8 runs",
        ));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(common::layout::assert_figures_lay_out(&page, "a host's history") >= 1);
    let analysis = read_json(&analysis);
    let history = &analysis["fleet"]["histories"][0];
    assert_eq!(history["runs"].as_array().unwrap().len(), 8);
    let departing: Vec<bool> = history["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["departs"].as_bool().unwrap())
        .collect();
    assert_eq!(
        departing,
        [false, false, false, false, false, true, false, false]
    );
    // The OCPU study's table: every level over the runs.
    let levels = history["levels"].as_array().unwrap();
    assert_eq!(levels[0]["workers"], 1);
    assert_eq!(levels[0]["runs"], 8);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("id=\"fleet_over_time\""),
        "the over-time chart is drawn"
    );
}

#[test]
fn a_result_on_standard_output_feeds_report_on_standard_input() {
    let output = corescale()
        .args([
            "run",
            "cpu",
            "-w",
            "1",
            "--repeat",
            "1",
            "--job-size",
            "20M",
        ])
        .args(["--tag", "campaign=pipe", "-o", "-"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let document: Value = serde_json::from_slice(&output.stdout).expect("stdout is the JSON");
    assert_eq!(document["schema"], "corescale/1");
    assert_eq!(document["tags"]["campaign"], "pipe");
    // The table went to standard error.
    assert!(String::from_utf8_lossy(&output.stderr).contains("workers"));
    corescale()
        .args(["report", "-", "--include-disturbed"])
        .write_stdin(output.stdout)
        .assert()
        .success()
        .stdout(contains("Series"));
}

#[test]
fn bad_tags_and_empty_folders_are_usage_errors() {
    corescale()
        .args(["run", "cpu", "-w", "1", "--tag", "no-equals-sign"])
        .assert()
        .code(2)
        .stderr(contains("is not KEY=VALUE"));
    let dir = tempfile::tempdir().unwrap();
    corescale()
        .arg("report")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(contains(
            "no .json or .csv results, and no other tool's output corescale reads",
        ));
}

/// The review's cases: a host without a capacity estimate, hosts of unknown hardware, a
/// 7.7% departure among steady runs, and a document wrapped in `kubectl logs` notes.
#[test]
fn hosts_without_estimates_or_known_hardware_are_not_called_outliers() {
    let dir = tempfile::tempdir().unwrap();
    for (index, slower) in [1.0, 1.003, 0.998].into_iter().enumerate() {
        let mut document = variant(&format!("h{index}"), "2026-11-20T10:00:00Z", slower);
        if index == 1 {
            // Interrupted after one level: no capacity estimate.
            document["levels"].as_array_mut().unwrap().truncate(1);
            document["complete"] = Value::from(false);
        }
        write(dir.path(), &format!("h{index}.json"), &document);
    }
    let analysis = dir.path().join("analysis.json");
    corescale()
        .arg("report")
        .arg(dir.path())
        .args(["--include-disturbed", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    let text = std::fs::read_to_string(&analysis).unwrap();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    let analysis = read_json(&analysis);
    for host in analysis["fleet"]["hosts"].as_array().unwrap() {
        assert_eq!(host["outlier"], false, "{host}");
    }
    for finding in analysis["findings"].as_array().unwrap() {
        assert!(!finding.as_str().unwrap().contains("siblings"), "{finding}");
    }

    // With h1 measured at one worker only, the hosts are compared where all of them
    // measured: at 1 worker, which is single-thread speed, and every label says so. A fourth
    // host 20% slower is named, on that figure; h1 has no capacity: "-", never 0 or ranked.
    let mut slow = variant("h3", "2026-11-20T10:00:00Z", 1.2);
    slow["levels"][0]["summary"]["job_time_s"]["stdev"] = Value::from(0.0);
    write(dir.path(), "h3.json", &slow);
    let html = dir.path().join("fleet.html");
    let analysis = dir.path().join("fleet.json");
    let assert = corescale()
        .arg("report")
        .arg(dir.path().join("h0.json"))
        .arg(dir.path().join("h1.json"))
        .arg(dir.path().join("h2.json"))
        .arg(dir.path().join("h3.json"))
        .args(["--include-disturbed", "--wide", "--json"])
        .arg(&analysis)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        text.contains("Fleet (single-thread speed against the median of the host's siblings"),
        "{text}"
    );
    assert!(
        text.contains("h3 has 17% less single-thread speed than the median of its 3 siblings"),
        "{text}"
    );
    assert!(
        !text.contains("0.00x") && !text.contains("from n=0"),
        "{text}"
    );
    let h1_row = text
        .lines()
        .skip_while(|line| !line.starts_with("Comparison"))
        .find(|line| line.starts_with("h1 "))
        .unwrap();
    assert!(
        h1_row.trim_end().ends_with('-'),
        "h1 is not ranked: {h1_row}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("single-thread speed / sibling median"));
    assert!(common::layout::assert_figures_lay_out(&page, "the fleet page") >= 1);
    let analysis = read_json(&analysis);
    let comparison = &analysis["comparisons"][0];
    assert_eq!(
        comparison["ranking"].as_array().unwrap().len(),
        3,
        "only the estimated are ranked"
    );
    let h1 = comparison["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == "h1")
        .unwrap();
    assert!(h1["capacity_at_saturation"].is_null() && h1["capacity_ratio"].is_null());

    // Published CSVs of three different servers (no CPU model) are not siblings.
    let anchors = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/anchor");
    let out = dir.path().join("anchors.json");
    corescale()
        .arg("report")
        .arg(&anchors)
        .args(["-q", "--json"])
        .arg(&out)
        .assert()
        .success();
    assert!(read_json(&out).get("fleet").is_none());
}

#[test]
fn a_small_departure_among_steady_runs_is_called_out() {
    let dir = tempfile::tempdir().unwrap();
    for run in 0..9 {
        let slower = if run == 4 {
            1.0 / 0.923
        } else {
            1.0 + 0.001 * (run % 3) as f64
        };
        let document = variant("vm2", &format!("2026-11-1{run}T09:00:00Z"), slower);
        write(dir.path(), &format!("run{run}.json"), &document);
    }
    corescale()
        .arg("report")
        .arg(dir.path())
        .args(["--include-disturbed", "--wide"])
        .assert()
        .success()
        .stdout(contains(
            "vm2: the run started 2026-11-14T09:00:00Z delivered 8% less capacity",
        ));
}

#[test]
fn a_document_in_kubectl_logs_is_read() {
    let mut text =
        String::from("corescale: warning: 1 worker: disturbed: other processes used 0.25 CPUs\n");
    text.push_str(&serde_json::to_string_pretty(&template()).unwrap());
    text.push_str("\ncorescale: note: hardware counters unavailable: no PMU\n");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("node-1.json");
    std::fs::write(&log, text).unwrap();
    corescale()
        .arg("report")
        .arg(&log)
        .arg("--include-disturbed")
        .assert()
        .success()
        .stdout(contains("Series"));
}

/// A run whose every level was disturbed describes its disturbance: it is neither analysed
/// nor compared with a clean run of the same job, and the report says so.
#[test]
fn a_run_disturbed_at_every_level_is_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "clean.json",
        &variant("rac", "2026-11-20T10:00:00Z", 1.0),
    );
    let mut busy = variant("rac55", "2026-11-20T11:00:00Z", 0.5);
    for level in busy["levels"].as_array_mut().unwrap() {
        level["interference"]["verdict"] = Value::from("disturbed");
        level["interference"]["reasons"] =
            Value::from(vec!["other processes used 1.20 CPUs (limit 0.2)"]);
    }
    write(dir.path(), "busy.json", &busy);
    let analysis = dir.path().join("analysis.json");
    let assert = corescale()
        .arg("report")
        .arg(dir.path().join("clean.json"))
        .arg(dir.path().join("busy.json"))
        .args(["--wide", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        text.contains("every level of rac55") && text.contains("not analysed, not compared"),
        "{text}"
    );
    let analysis = read_json(&analysis);
    assert_eq!(analysis["series"].as_array().unwrap().len(), 1);
    assert!(analysis["comparisons"].as_array().unwrap().is_empty());
    for finding in analysis["findings"].as_array().unwrap() {
        assert!(!finding.as_str().unwrap().contains("rac55"), "{finding}");
    }
    // Alone, it gives no analysis at all: a one-line error, not a report of the disturbance.
    corescale()
        .arg("report")
        .arg(dir.path().join("busy.json"))
        .assert()
        .code(1)
        .stderr(contains("every level of every series was disturbed"));
    // --include-disturbed keeps it, as the user asked.
    corescale()
        .arg("report")
        .arg(dir.path().join("busy.json"))
        .arg("--include-disturbed")
        .assert()
        .success();
}
