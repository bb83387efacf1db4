//! What `report` says it understood of other tools' files as DBAs keep them: several jobs
//! in a folder, a name that disagrees with its content, a run at a rate limit, a file no
//! reader claims (fixtures in tests/fixtures/import, sources in SOURCES.md there).

use crate::common;

use common::{corescale, read_json};
use predicates::prelude::*;
use predicates::str::contains;

use common::import_fixture as fixture;

/// What `report FILE --verbose` prints, the file read.
fn verbose_report(file: &std::path::Path) -> String {
    let output = corescale()
        .arg("report")
        .arg(file)
        .arg("--verbose")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(output).unwrap()
}

fn series_names(analysis: &serde_json::Value) -> Vec<String> {
    analysis["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|one| one["series"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_jobs_in_one_folder_are_told_apart_by_their_workload() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("runs");
    std::fs::create_dir(&folder).unwrap();
    // TPC-B at 1, 2, 4 clients and select only at 2 in one folder, then select only at 4
    // in a file of its own: two sweeps of one folder, each named after it at first.
    std::fs::write(folder.join("a.txt"), fixture("pgbench-15-two-jobs.txt")).unwrap();
    std::fs::write(folder.join("b.txt"), fixture("pgbench-15-sweep.txt")).unwrap();
    let two_jobs = fixture("pgbench-15-two-jobs.txt");
    let select_only = &two_jobs[two_jobs.rfind("pgbench (").unwrap()..];
    std::fs::write(
        folder.join("c.txt"),
        select_only.replace("number of clients: 2", "number of clients: 4"),
    )
    .unwrap();
    let json = dir.path().join("report.json");
    corescale()
        .arg("report")
        .arg(&folder)
        .args(["-q", "--json"])
        .arg(&json)
        .assert()
        .success();
    let analysis = read_json(&json);
    let mut names = series_names(&analysis);
    names.sort();
    assert_eq!(
        names,
        ["runs (TPC-B (sort of))", "runs (select only)"],
        "two jobs' sweeps, each of every file's runs of it"
    );
    let select = analysis["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|one| one["series"]["name"] == "runs (select only)")
        .unwrap();
    let clients: Vec<u64> = select["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| point["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [2, 4]);
}

#[test]
fn a_name_that_disagrees_with_the_content_is_said() {
    let dir = tempfile::tempdir().unwrap();
    // A version in the name is no load.
    for (name, said) in [("clients-8.txt", true), ("pgbench-15.txt", false)] {
        let file = dir.path().join(name);
        std::fs::write(&file, fixture("pgbench-15-r.txt")).unwrap();
        let text = verbose_report(&file);
        assert_eq!(
            text.contains("its name says a load of 8 and its content 4"),
            said,
            "{name}: {text}"
        );
        assert_eq!(text.contains("its name says"), said, "{name}: {text}");
    }
}

#[test]
fn a_rate_limited_run_is_never_capacity() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("runs");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("limited.txt"),
        fixture("pgbench-15-throttled.txt"),
    )
    .unwrap();
    corescale()
        .arg("report")
        .arg(folder.join("limited.txt"))
        .assert()
        .code(1)
        .stderr(contains("ran to a schedule (pgbench -R)"))
        .stderr(contains("measure without a rate limit"));
    // Beside a sweep it is said, and the sweep's capacity is the unlimited runs'.
    std::fs::write(folder.join("sweep.txt"), fixture("pgbench-15-sweep.txt")).unwrap();
    let json = dir.path().join("report.json");
    corescale()
        .arg("report")
        .arg(&folder)
        .args(["--verbose", "--json"])
        .arg(&json)
        .assert()
        .success()
        .stdout(contains("rates are the rates asked, not capacity"));
    let analysis = read_json(&json);
    let levels = analysis["series"][0]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3, "1, 2 and 4 clients");
}

#[test]
fn a_file_no_reader_claims_names_the_formats_and_the_nearest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(
        &file,
        "transaction type: <builtin: select only>\nscaling factor: 1\ntps = 5\n",
    )
    .unwrap();
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(contains(
            "not a format corescale reads (tried corescale JSON and CSV",
        ))
        .stderr(contains(
            "nearest is pgbench's output, but it has no 'number of clients:'",
        ));
    std::fs::write(&file, "hello\nworld\n").unwrap();
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(contains("not a format corescale reads").and(contains("nearest").not()));
}

#[test]
fn verbose_traces_every_number_read_to_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.txt");
    std::fs::write(&file, fixture("pgbench-15-r.txt")).unwrap();
    let text = verbose_report(&file);
    let (_, trace) = text
        .split_once("Numbers read from other tools' outputs, by line\n")
        .expect("a trace under --verbose");
    let at = |line: usize| format!("'{}' line {line}: ", file.display());
    for (line, figure) in [
        (5, "number of clients 4"),
        (11, "latency average 3.958"),
        (14, "tps 1009.648474"),
        (22, "statement latency 0.124"),
    ] {
        assert!(
            trace.contains(&format!("{}{figure}", at(line))),
            "{line} {figure}: {trace}"
        );
    }
    // Without --verbose, none; the run's own rate and latency are stated all the same.
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .success()
        .stdout(contains("Numbers read").not())
        .stdout(contains(
            "run has one level only (4 workers, 1.01 K tps, latency average 3.96 ms)",
        ));
}

#[test]
fn a_hammerdb_folder_reads_its_counter_log_at_the_results_users() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("hammerdb-run");
    std::fs::create_dir(&folder).unwrap();
    for name in ["hammerdb.log", "hdbxtprofile.log", "hdbtcount.log"] {
        std::fs::write(folder.join(name), fixture(name)).unwrap();
    }
    let json = dir.path().join("report.json");
    corescale()
        .arg("report")
        .arg(&folder)
        .args(["-q", "--json"])
        .arg(&json)
        .assert()
        .success();
    let analysis = read_json(&json);
    assert!(
        analysis["warnings"]
            .to_string()
            .contains("its virtual users, 4, are those of the HammerDB results beside it"),
        "{}",
        analysis["warnings"]
    );
    let counter = analysis["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|one| one["series"]["measure"]["unit"] == "tpm")
        .expect("the counter's series");
    assert_eq!(counter["series"]["points"][0]["workers"], 4);
    // Alone, its level is asked for.
    std::fs::remove_file(folder.join("hammerdb.log")).unwrap();
    std::fs::remove_file(folder.join("hdbxtprofile.log")).unwrap();
    corescale()
        .arg("report")
        .arg(&folder)
        .assert()
        .code(2)
        .stderr(contains("--level"));
}

#[test]
fn a_sweep_kept_one_level_a_folder_is_one_series_and_other_files_are_noted() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/sysbench-sweep-folders");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let output = corescale()
        .arg("report")
        .arg(&folder)
        .args(["--verbose", "--json"])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // Words as said, whatever the terminal's wrapping (which moves with the folder's path).
    let output = String::from_utf8(output)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let analysis = read_json(&json);
    assert_eq!(series_names(&analysis), ["sysbench-sweep-folders"]);
    let levels: Vec<u64> = analysis["series"][0]["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| point["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [1, 2, 4]);
    assert!(
        output.contains("thr1, thr2, thr4 each hold one level"),
        "{output}"
    );
    for left_out in ["params.json", "samples.csv"] {
        let note = format!(
            "left out, not a result: '{}",
            folder.join(left_out).display()
        );
        assert!(output.contains(&note), "{left_out} not named: {output}");
    }
}

#[test]
fn a_non_result_json_named_alone_is_still_refused() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/sysbench-sweep-folders");
    corescale()
        .arg("report")
        .arg(folder.join("params.json"))
        .assert()
        .failure()
        .stderr(contains("not a corescale result document"));
}
