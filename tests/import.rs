//! Other tools' results read by `report`: real pgbench outputs made here, at 1, 2 and 4
//! clients against a database of the test's own, and summaries written from the layouts the
//! PostgreSQL versions print.

mod common;

use common::scratch::PgScratch;
use common::{corescale, hold_server, read_json, required, run_tool};
use predicates::str::contains;

/// A pgbench summary as PostgreSQL 12 and 13 print it: two tps lines, the second without
/// connection time.
const PGBENCH_13: &str = "starting vacuum...end.
transaction type: <builtin: select only>
scaling factor: 1
query mode: prepared
number of clients: 8
number of threads: 2
duration: 10 s
number of transactions actually processed: 123456
latency average = 0.648 ms
tps = 12339.861802 (including connections establishing)
tps = 12345.678901 (excluding connections establishing)
";

/// As PostgreSQL 15 prints it, with -P (stddev) and failures.
const PGBENCH_15: &str = "pgbench (15.20 (Debian 15.20-0+deb12u1))
starting vacuum...end.
transaction type: <builtin: select only>
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 80000
number of failed transactions: 0 (0.000%)
latency average = 0.500 ms
latency stddev = 0.120 ms
initial connection time = 4.321 ms
tps = 8000.123456 (without initial connection time)
";

fn report_json(folder: &std::path::Path) -> serde_json::Value {
    let analysis = folder.parent().unwrap().join("analysis.json");
    corescale()
        .arg("report")
        .arg(folder)
        .args(["-q", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    read_json(&analysis)
}

fn levels(analysis: &serde_json::Value) -> Vec<(u64, f64)> {
    analysis["series"][0]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| {
            (
                level["workers"].as_u64().unwrap(),
                level["raw"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn pgbench_summaries_of_each_version_are_a_sweep_by_client_count() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("old-server");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("run-a.txt"), PGBENCH_13).unwrap();
    std::fs::write(folder.join("run-b.log"), PGBENCH_15).unwrap();
    // Not pgbench's: left alone in a folder.
    std::fs::write(folder.join("notes.txt"), "bought in 2019\n").unwrap();
    let analysis = report_json(&folder);
    let series = &analysis["series"][0];
    assert_eq!(series["series"]["name"], "old-server");
    assert_eq!(series["series"]["measure"]["unit"], "tps");
    // The tps without connection time, at each file's client count.
    assert_eq!(levels(&analysis), [(4, 8000.123456), (8, 12345.678901)]);
    let job = &series["series"]["job"];
    assert_eq!(job["tool"], "pgbench");
    assert_eq!(
        job["shape"],
        "pgbench select only, scale 1, prepared query mode"
    );
    // From a summary only the mean and stddev are known: no percentile is made up.
    let level = &series["levels"][0];
    assert!(level["latency"].is_null(), "{level}");
}

#[test]
fn a_pgbench_summary_cut_short_names_the_file_and_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cut.txt");
    let cut: String = PGBENCH_15.lines().take(8).collect::<Vec<_>>().join("\n");
    std::fs::write(&file, cut).unwrap();
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains("cut.txt"))
        .stderr(contains("'tps ='"));
    std::fs::write(&file, PGBENCH_15.replace("clients: 4", "clients: four")).unwrap();
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains(
            "cut.txt' line 6: number of clients 'four' is not a number",
        ));
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_pg_bindir)),
    ignore = "needs CORESCALE_TEST_PG and CORESCALE_TEST_PG_BINDIR (pgbench; see README)"
)]
fn real_pgbench_outputs_give_the_tps_pgbench_printed() {
    let base = required("CORESCALE_TEST_PG");
    let pgbench = format!("{}/pgbench", required("CORESCALE_TEST_PG_BINDIR"));
    let _held = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, "pgbench");
    run_tool(&pgbench, &["-i", "-q", "-s", "1", &scratch.url], &[]);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("this-server");
    std::fs::create_dir(&folder).unwrap();
    let mut printed = Vec::new();
    for clients in ["1", "2", "4"] {
        for repeat in 0..2 {
            let output = run_tool(
                &pgbench,
                &[
                    "-S",
                    "-n",
                    "-T",
                    "1",
                    "-c",
                    clients,
                    "-j",
                    "2",
                    &scratch.url,
                ],
                &[],
            );
            std::fs::write(folder.join(format!("c{clients}-{repeat}.txt")), &output).unwrap();
            let tps: f64 = output
                .lines()
                .find_map(|line| line.strip_prefix("tps = "))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|value| value.parse().ok())
                .unwrap_or_else(|| panic!("no tps line in pgbench's output:\n{output}"));
            printed.push((clients.parse::<u64>().unwrap(), tps));
        }
    }
    let analysis = report_json(&folder);
    assert_eq!(
        analysis["series"].as_array().unwrap().len(),
        1,
        "{analysis}"
    );
    // Two runs a level: their mean, and their range as its spread.
    for (workers, raw) in levels(&analysis) {
        let runs: Vec<f64> = printed
            .iter()
            .filter(|(clients, _)| *clients == workers)
            .map(|(_, tps)| *tps)
            .collect();
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        assert!(
            (raw - mean).abs() <= 1e-6 * mean,
            "{workers} clients: report {raw}, pgbench {runs:?}"
        );
    }
    assert_eq!(
        levels(&analysis)
            .iter()
            .map(|(workers, _)| *workers)
            .collect::<Vec<_>>(),
        [1, 2, 4]
    );
}
