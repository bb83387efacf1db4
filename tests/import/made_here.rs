//! Other tools' results read by `report`: real pgbench and sysbench outputs made here, at
//! 1, 2 and 4 clients against databases of the test's own, and files written from the
//! layouts the tools' versions print (tests/fixtures/import: AWR, Statspack, HammerDB).

use crate::common;

use common::import_fixture as fixture;
use common::scratch::{MyScratch, PgScratch, scratch_name};
use common::{anchor, corescale, hold_server, read_json, required, run_tool};
use corescale::analysis::input::{InputFile, read_input, read_series};
use predicates::prelude::*;
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

/// pgbench, and a database of the test's own initialised by it (scale 1), the server held.
fn pgbench_database(test: &str) -> (String, PgScratch, std::sync::MutexGuard<'static, ()>) {
    let base = required("CORESCALE_TEST_PG");
    let pgbench = format!("{}/pgbench", required("CORESCALE_TEST_PG_BINDIR"));
    let held = hold_server("CORESCALE_TEST_PG");
    let scratch = PgScratch::new(&base, test);
    run_tool(&pgbench, &["-i", "-q", "-s", "1", &scratch.url], &[]);
    (pgbench, scratch, held)
}

/// A one-second select-only pgbench run at these clients and threads, its output saved
/// where a folder's report reads it; returns the tps it printed.
fn select_only(
    pgbench: &str,
    url: &str,
    [clients, threads]: [&str; 2],
    more: &[&str],
    saved: &std::path::Path,
) -> f64 {
    let mut args = vec!["-S", "-n", "-T", "1", "-c", clients, "-j", threads];
    args.extend(more);
    args.push(url);
    let output = run_tool(pgbench, &args, &[]);
    std::fs::write(saved, &output).unwrap();
    printed_tps(&output)
}

/// The tps pgbench printed (without connection time).
fn printed_tps(output: &str) -> f64 {
    output
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no tps line in pgbench's output:\n{output}"))
}

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
    let (pgbench, scratch, _held) = pgbench_database("pgbench");
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("this-server");
    std::fs::create_dir(&folder).unwrap();
    let mut printed = Vec::new();
    for clients in ["1", "2", "4"] {
        for repeat in 0..2 {
            let saved = folder.join(format!("c{clients}-{repeat}.txt"));
            let tps = select_only(&pgbench, &scratch.url, [clients, "2"], &[], &saved);
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

/// The value at a quantile (in thousandths) of sorted values, by nearest rank, in whole
/// numbers: `99.9 / 100.0` is a hair above 0.999, so a float rank lands one value high
/// whenever the count is a multiple of 1,000.
fn nearest_rank(sorted: &[f64], per_mille: usize) -> f64 {
    let rank = (per_mille * sorted.len()).div_ceil(1000);
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Within one HdrHistogram bucket (3 significant digits) of the exact value, or `rounding`
/// (what the tool printed to).
fn within_a_bucket(report: f64, exact: f64, rounding: f64) -> bool {
    (report - exact).abs() <= exact * 1e-3 + rounding
}

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_pg_bindir)),
    ignore = "needs CORESCALE_TEST_PG and CORESCALE_TEST_PG_BINDIR (pgbench; see README)"
)]
fn real_pgbench_logs_join_their_summaries_with_exact_percentiles() {
    let (pgbench, scratch, _held) = pgbench_database("pgbench_log");
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("logged");
    std::fs::create_dir(&folder).unwrap();
    let mut runs = Vec::new();
    for clients in ["1", "2"] {
        let prefix = folder.join(format!("c{clients}"));
        let saved = folder.join(format!("c{clients}.txt"));
        let log = ["-l", "--log-prefix", prefix.to_str().unwrap()];
        let tps = select_only(&pgbench, &scratch.url, [clients, clients], &log, &saved);
        // Every thread's log of this run: c1.PID, c2.PID and c2.PID.1.
        let mut times: Vec<f64> = Vec::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(&format!("c{clients}.")) && !name.ends_with(".txt") {
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    let time = line.split(' ').nth(2).unwrap();
                    times.extend(time.parse::<f64>().ok().map(|us| us / 1e3));
                }
            }
        }
        times.sort_by(f64::total_cmp);
        runs.push((clients.parse::<u64>().unwrap(), tps, times));
    }
    let analysis = report_json(&folder);
    let series = analysis["series"].as_array().unwrap();
    assert_eq!(
        series.len(),
        1,
        "logs joined to their summaries: {analysis}"
    );
    assert!(
        !analysis["warnings"]
            .to_string()
            .contains("mean and standard deviation only"),
        "{}",
        analysis["warnings"]
    );
    let levels = series[0]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{analysis}");
    for ((clients, tps, times), level) in runs.iter().zip(levels) {
        assert_eq!(level["workers"], *clients);
        assert!((level["raw"].as_f64().unwrap() - tps).abs() <= 1e-6 * tps);
        let latency = &level["latency"];
        assert_eq!(
            latency["count"].as_u64().unwrap(),
            times.len() as u64,
            "{latency}"
        );
        for (name, per_mille) in [("p50_ms", 500), ("p99_ms", 990), ("p999_ms", 999)] {
            let exact = nearest_rank(times, per_mille);
            let report = latency[name].as_f64().unwrap();
            assert!(
                within_a_bucket(report, exact, 0.0),
                "{clients} clients {name}: report {report} ms, the log's own {exact} ms"
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(all(corescale_test_mysql, corescale_test_sysbench)),
    ignore = "needs CORESCALE_TEST_MYSQL and sysbench (Debian's package; see README)"
)]
fn real_sysbench_outputs_give_its_rates_and_histogram_percentiles() {
    let base = required("CORESCALE_TEST_MYSQL");
    let _held = hold_server("CORESCALE_TEST_MYSQL");
    let scratch = MyScratch::new(&base, scratch_name("sysbench"));
    let url = url::Url::parse(&scratch.url).unwrap();
    let connection = [
        format!("--mysql-host={}", url.host_str().unwrap()),
        format!("--mysql-port={}", url.port().unwrap_or(3306)),
        format!("--mysql-user={}", url.username()),
        format!("--mysql-db={}", scratch.name),
    ];
    let sysbench = |test: &str, extra: &[&str]| {
        let mut args: Vec<&str> = vec![test];
        args.extend(connection.iter().map(String::as_str));
        args.extend(["--tables=1", "--table-size=1000"]);
        args.extend(extra);
        run_tool("sysbench", &args, &[])
    };
    sysbench("oltp_read_only", &["prepare"]);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("sysbench-here");
    std::fs::create_dir(&folder).unwrap();
    let mut printed = Vec::new();
    for threads in ["1", "2", "4"] {
        let output = sysbench(
            "oltp_read_only",
            &[
                &format!("--threads={threads}"),
                "--time=1",
                "--report-interval=1",
                "--histogram=on",
                "run",
            ],
        );
        std::fs::write(folder.join(format!("t{threads}.txt")), &output).unwrap();
        printed.push((threads.parse::<u64>().unwrap(), output));
    }
    sysbench("oltp_read_only", &["cleanup"]);
    assert_eq!(scratch.objects(), 0, "sysbench's cleanup left tables");
    let analysis = report_json(&folder);
    let series = &analysis["series"][0];
    assert_eq!(series["series"]["measure"]["unit"], "tps");
    assert!(
        series["series"]["job"]["workload"]
            .as_str()
            .unwrap()
            .starts_with("oltp_read_only"),
        "{}",
        series["series"]["job"]
    );
    let levels = series["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3, "{analysis}");
    for ((threads, output), level) in printed.iter().zip(levels) {
        assert_eq!(level["workers"], *threads);
        assert_level_reads_sysbench(output, level, &format!("{threads} threads"));
    }
    // One interval a --report-interval line (a busy host may print none in a 1 s run).
    let file = folder.join("t2.txt");
    let lines = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("[ "))
        .count();
    let one = read_series(&file).unwrap();
    assert_eq!(one.points[0].intervals.len(), lines, "{:?}", one.points[0]);
}

/// A level `report` read from one sysbench output: its rate, and percentiles from the
/// histogram sysbench printed.
fn assert_level_reads_sysbench(output: &str, level: &serde_json::Value, what: &str) {
    let tps: f64 = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("transactions:"))
        .and_then(|rest| rest.split('(').nth(1))
        .and_then(|rate| rate.split_whitespace().next())
        .and_then(|rate| rate.parse().ok())
        .unwrap();
    assert_eq!(level["raw"].as_f64().unwrap(), tps);
    // The histogram's own rows, each value as often as counted.
    let mut times = Vec::new();
    let rows = output
        .lines()
        .skip_while(|line| !line.starts_with("Latency histogram"))
        .skip(2)
        .take_while(|line| line.contains('|'));
    for row in rows {
        let (value, rest) = row.split_once('|').unwrap();
        let value: f64 = value.trim().parse().unwrap();
        let count: usize = rest.split_whitespace().last().unwrap().parse().unwrap();
        times.extend(std::iter::repeat_n(value, count));
    }
    let latency = &level["latency"];
    assert_eq!(latency["count"].as_u64().unwrap(), times.len() as u64);
    for (name, per_mille) in [("p50_ms", 500), ("p95_ms", 950), ("p99_ms", 990)] {
        let exact = nearest_rank(&times, per_mille);
        let report = latency[name].as_f64().unwrap();
        assert!(
            within_a_bucket(report, exact, 0.0),
            "{what} {name}: report {report} ms, the histogram's {exact} ms"
        );
    }
    // And sysbench's own 95th percentile, printed to 0.01 ms: at most one of the rows it
    // printed away (its own rank rule may land on a neighbouring bucket, and in a sparse
    // tail the next row with events may be a few buckets on).
    let own: f64 = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("95th percentile:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap();
    let p95 = latency["p95_ms"].as_f64().unwrap();
    let mut values = times;
    values.dedup();
    let row_of = |value: f64| {
        values
            .iter()
            .enumerate()
            .min_by(|a, b| (a.1 - value).abs().total_cmp(&(b.1 - value).abs()))
            .map(|(row, _)| row as i64)
            .unwrap()
    };
    assert!(
        (row_of(p95) - row_of(own)).abs() <= 1,
        "{what}: p95 {p95} against sysbench's {own}: rows {values:?}"
    );
}

#[test]
fn awr_and_statspack_reports_are_a_sweep_by_the_sessions_in_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("old-rac-node");
    std::fs::create_dir(&folder).unwrap();
    // One layout a level: 11.2.0.3 text, 11.2.0.4 HTML, 19c text; SLOB's harness name.
    let text = fixture("awr-11.2.txt");
    std::fs::write(
        folder.join("awr.1.txt"),
        text.replace("2,021.9", "1,000.0").replace("23.5", " 1.0"),
    )
    .unwrap();
    std::fs::write(folder.join("awr.24.txt"), &text).unwrap();
    // A cut-short RAC-wide report (no System Statistics table) is no AWR report: left alone.
    std::fs::write(
        folder.join("awr_rac.txt"),
        "WORKLOAD REPOSITORY REPORT (RAC)\nLoad Profile\n",
    )
    .unwrap();
    let analysis = report_json(&folder);
    let series = &analysis["series"][0];
    assert_eq!(series["series"]["name"], "old-rac-node");
    assert_eq!(series["series"]["measure"]["unit"], "LIO/s");
    assert_eq!(levels(&analysis), [(1, 1000.0), (24, 2021.9)]);
    let level = &series["levels"][1];
    assert_eq!(level["figures"]["db_time_per_s"], 23.5);
    assert_eq!(level["figures"]["physical_reads_per_s"], 130.9);
    assert_eq!(
        level["figures"]["top event % DB time: db file sequential read"],
        77.5
    );
    assert!(
        series["series"]["provenance"]["workload"]
            .as_str()
            .unwrap()
            .starts_with("imported from Oracle AWR 11.2.0.1.0 output"),
        "{}",
        series["series"]["provenance"]
    );
    // 23.5 active sessions at a load of 24: within 10%, nothing said; at 1, 1.0: nothing.
    assert!(!analysis["warnings"].to_string().contains("active sessions"));

    // The other layouts, each read alone with --level.
    for (name, lio, active) in [
        ("awr-11.2.0.4.html", 528_424.6, 7.8),
        ("awr-19c.txt", 2.1, 0.0),
        ("statspack-12.1.txt", 105.2, 0.0),
    ] {
        // 7.8 active sessions are within 10% of 8, not of 16.
        let file = dir.path().join(name);
        std::fs::write(&file, fixture(name)).unwrap();
        let json = dir.path().join(format!("{name}.json"));
        let output = corescale()
            .arg("report")
            .arg(&file)
            .arg("--level")
            .arg(format!("{}=16", file.display()))
            .args(["-q", "--json"])
            .arg(&json)
            .assert()
            .success();
        let _ = output;
        let analysis = read_json(&json);
        let level = &analysis["series"][0]["levels"][0];
        assert_eq!(level["workers"], 16, "{name}");
        assert_eq!(level["raw"], lio, "{name}");
        assert_eq!(level["figures"]["db_time_per_s"], active, "{name}");
        // Active sessions far from the 16 sessions the level ran: said, with why.
        assert!(
            analysis["warnings"]
                .to_string()
                .contains("average active sessions"),
            "{name}: {}",
            analysis["warnings"]
        );
    }
    // A version in a name is no load: awr-19c.txt holds no whole number.
    let release = dir.path().join("awr-19c.txt");
    std::fs::write(&release, fixture("awr-19c.txt")).unwrap();
    corescale()
        .arg("report")
        .arg(&release)
        .assert()
        .code(2)
        .stderr(contains("its name holds no number"));
    // A report with no number in its name and no --level: the fix is named.
    let file = dir.path().join("awr.txt");
    std::fs::write(&file, &text).unwrap();
    corescale()
        .arg("report")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(contains("its name holds no number"))
        .stderr(contains("--level"));
}

#[test]
fn slob_harness_names_give_sessions_and_update_share() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("harness");
    std::fs::create_dir(&folder).unwrap();
    let text = fixture("awr-11.2.txt");
    for (update, sessions) in [(20, 4), (20, 8), (0, 8)] {
        std::fs::write(folder.join(format!("awr.{update}.{sessions}.txt")), &text).unwrap();
    }
    let analysis = report_json(&folder);
    let series = analysis["series"].as_array().unwrap();
    // Two update shares, two jobs: compared by speedup only.
    assert_eq!(series.len(), 2, "{analysis}");
    let workloads: Vec<String> = series
        .iter()
        .map(|one| {
            one["series"]["job"]["workload"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        workloads
            .iter()
            .any(|workload| workload.ends_with("SLOB at 20% updates")),
        "{workloads:?}"
    );
    assert!(
        workloads
            .iter()
            .any(|workload| workload.ends_with("SLOB at 0% updates")),
        "{workloads:?}"
    );
}

#[test]
fn hammerdb_results_and_their_time_profile_are_one_level() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("hammerdb");
    std::fs::create_dir(&folder).unwrap();
    // An autopilot log: 2 and 4 virtual users, 4 twice.
    let log = fixture("hammerdb.log");
    let autopilot = format!(
        "{}\n{}\n{log}",
        log.replace("4 Active Virtual", "2 Active Virtual")
            .replace("48213", "25000"),
        log.replace("48213", "50213")
    );
    std::fs::write(folder.join("hammerdb.log"), autopilot).unwrap();
    std::fs::write(folder.join("hdbxtprofile.log"), fixture("hdbxtprofile.log")).unwrap();
    let analysis = report_json(&folder);
    let series = analysis["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "the profile joins its results: {analysis}");
    assert_eq!(series[0]["series"]["measure"]["unit"], "NOPM");
    assert_eq!(
        series[0]["series"]["job"]["workload"],
        "TPROC-C on PostgreSQL"
    );
    assert_eq!(levels(&analysis), [(2, 25000.0), (4, 49213.0)]);
    let four = &series[0]["levels"][1];
    assert_eq!(four["figures"]["repeats"], 2.0);
    assert_eq!(four["figures"]["NEWORD p99 ms"], 0.542);
    assert_eq!(four["figures"]["NEWORD calls"], 2_638_503.0);
    assert_eq!(series[0]["levels"][0]["figures"]["tpm"], 110947.0);
}

/// Repeats weigh as the runs they are: an autopilot log's two results at 4 virtual users
/// (already their mean) and another file's one count three times, not two.
#[test]
fn repeats_in_a_file_and_across_files_weigh_each_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("hammerdb");
    std::fs::create_dir(&folder).unwrap();
    let log = fixture("hammerdb.log");
    let result = |nopm: &str| log.replace("48213 NOPM", &format!("{nopm} NOPM"));
    std::fs::write(
        folder.join("a.log"),
        format!("{}\n{}", result("100"), result("200")),
    )
    .unwrap();
    std::fs::write(folder.join("b.log"), result("300")).unwrap();
    let analysis = report_json(&folder);
    assert_eq!(levels(&analysis), [(4, 200.0)]);
    let level = &analysis["series"][0]["levels"][0];
    assert_eq!(level["figures"]["repeats"], 3.0);
    assert_eq!(
        level["raw_spread"],
        serde_json::json!([100.0, 300.0]),
        "{level}"
    );
}

#[test]
fn fixtures_of_every_layout_read_alone() {
    let dir = tempfile::tempdir().unwrap();
    for (name, workers, raw) in [
        ("pgbench-12-r.txt", 4, 1010.742061),
        ("pgbench-15-r.txt", 4, 1009.648474),
        ("sysbench-1.0.20-cpu.txt", 2, 3273.49),
        ("sysbench-1.0.20-oltp-histogram.txt", 2, 1657.35),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, fixture(name)).unwrap();
        let json = dir.path().join(format!("{name}.json"));
        corescale()
            .arg("report")
            .arg(&file)
            .args(["-q", "--json"])
            .arg(&json)
            .assert()
            .success();
        let analysis = read_json(&json);
        assert_eq!(levels(&analysis), [(workers, raw)], "{name}");
    }
    // A file that states its own load keeps it, and a --level given it is said left out.
    let sysbench = dir.path().join("sysbench-1.0.20-cpu.txt");
    corescale()
        .arg("report")
        .arg(&sysbench)
        .arg("--level")
        .arg(format!("{}=8", sysbench.display()))
        .assert()
        .success()
        .stdout(contains("--level 8 left out"));
    // -r's statements, in order, as figures of the level.
    let analysis = read_json(&dir.path().join("pgbench-15-r.txt.json"));
    let figures = &analysis["series"][0]["levels"][0]["figures"];
    assert_eq!(
        figures["statement 07 ms: SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"], 0.124,
        "{figures}"
    );
    // The aggregated logs: intervals, and the clients from --level.
    for (name, intervals) in [("pgbench_agg.15", 5), ("pgbench_agg.12", 5)] {
        let file = dir.path().join(name);
        std::fs::write(&file, fixture(name)).unwrap();
        let series = read_input(&InputFile::new(&file, Some(4))).unwrap();
        let level = &series[0].points[0];
        assert_eq!(level.workers, 4);
        assert_eq!(level.intervals.len(), intervals, "{name}: {level:?}");
        assert!(
            level.latency.is_none(),
            "no percentile from sums: {level:?}"
        );
        // Without a level, the fix is named.
        let error = format!("{:#}", read_series(&file).unwrap_err());
        assert!(error.contains("--level"), "{error}");
    }
    // One line says nothing of its interval's length: no rate is taken from it alone.
    let single = dir.path().join("one-line.log");
    let first_line = fixture("pgbench_agg.15")
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&single, first_line + "\n").unwrap();
    let error = read_input(&InputFile::new(&single, Some(4))).unwrap_err();
    assert!(
        format!("{error:#}").contains("has one interval"),
        "{error:#}"
    );
}

#[test]
fn a_pgbench_folder_beside_the_anchor_sweeps_compares_by_speedup_only() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("pgbench-runs");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("run-a.txt"),
        PGBENCH_13.replace("clients: 8", "clients: 1"),
    )
    .unwrap();
    std::fs::write(folder.join("run-b.txt"), PGBENCH_15).unwrap();
    let json = dir.path().join("analysis.json");
    corescale()
        .arg("report")
        .arg(anchor("test_cpu_parallel_rust_RAC52.csv"))
        .arg(&folder)
        .args(["-q", "--json"])
        .arg(&json)
        .assert()
        .success();
    let analysis = read_json(&json);
    let warnings = analysis["warnings"].to_string();
    assert!(
        warnings.contains("test_cpu_parallel, its own loop")
            && warnings.contains("pgbench select only, scale 1, prepared query mode")
            && warnings
                .contains("compare their speedup and efficiency, not their speed or capacity"),
        "the warning names both jobs: {warnings}"
    );
    assert!(
        analysis["series"].as_array().unwrap().len() == 2,
        "{analysis}"
    );
}

/// SLOB's RAC-wide report (awrgrpt's text layout) beside the instances' own: a series of its
/// own, the cluster's logical reads summed over its instances, its nodes the instances, so a
/// single server is counted in them.
#[test]
fn a_rac_wide_awr_report_is_the_clusters_level_with_its_instances() {
    let dir = tempfile::tempdir().unwrap();
    let text = fixture("awr_rac-11.2.txt");
    let folder = dir.path().join("rac");
    std::fs::create_dir(&folder).unwrap();
    // SLOB's harness names: awr_rac.<update %>.<sessions>.txt, at 24 and 48 sessions.
    std::fs::write(folder.join("awr_rac.0.24.txt"), &text).unwrap();
    std::fs::write(
        folder.join("awr_rac.0.48.txt"),
        text.replace("1,204,511.30", "2,204,511.30"),
    )
    .unwrap();
    let analysis = report_json(&folder);
    let series = &analysis["series"][0];
    assert_eq!(series["series"]["job"]["tool"], "Oracle AWR (RAC)");
    assert_eq!(series["series"]["nodes"], 3);
    // The instances' rows summed (the report's own Sum row says 3,590,000.20).
    let sum = 1_204_511.30 + 1_188_020.85 + 1_197_468.05;
    let measured = levels(&analysis);
    assert_eq!(measured[0].0, 24);
    assert!((measured[0].1 - sum).abs() < 1e-6, "{measured:?}");
    assert!(
        (measured[1].1 - (sum + 1_000_000.0)).abs() < 1e-6,
        "{measured:?}"
    );
    let figures = &series["levels"][0]["figures"];
    assert_eq!(figures["instance 2 lio_per_s"], 1_188_020.85);
    assert!((figures["physical_reads_per_s"].as_f64().unwrap() - 37.0).abs() < 1e-9);
    assert!((figures["db_time_per_s"].as_f64().unwrap() - 23.91).abs() < 1e-9);
    assert!(
        series["series"]["provenance"]["workload"]
            .as_str()
            .unwrap()
            .starts_with("imported from Oracle AWR (RAC) 11.2.0.4.0 output"),
        "{}",
        series["series"]["provenance"]
    );
    // A report cut before its instance rows names the file and what is missing.
    let cut = dir.path().join("awr_rac.0.8.txt");
    let end = text.find("   1    1,204,511.30").unwrap();
    std::fs::write(&cut, &text[..end]).unwrap();
    corescale()
        .arg("report")
        .arg(&cut)
        .assert()
        .code(1)
        .stderr(contains("awr_rac.0.8.txt").and(contains("instance rows")));
}

/// awrgrpt's HTML layout of the same report gives every figure the text layout gives, each
/// traced to its own line; a contents link to the section is not taken for its table.
#[test]
fn a_rac_wide_awr_report_in_html_gives_the_texts_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut figures = Vec::new();
    for (name, fixture_name) in [
        ("awr_rac.0.24.txt", "awr_rac-11.2.txt"),
        ("awr_rac.0.24.html", "awr_rac-11.2.html"),
    ] {
        let folder = dir.path().join(name.replace('.', "-"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join(name), fixture(fixture_name)).unwrap();
        let analysis = report_json(&folder);
        let series = &analysis["series"][0];
        assert_eq!(
            series["series"]["job"]["tool"], "Oracle AWR (RAC)",
            "{name}"
        );
        assert_eq!(series["series"]["nodes"], 3, "{name}");
        assert_eq!(levels(&analysis)[0].0, 24, "{name}");
        figures.push(series["levels"][0]["figures"].clone());
    }
    assert_eq!(figures[0], figures[1]);
    assert_eq!(figures[1]["instance 3 lio_per_s"], 1_197_468.05);
    assert!((figures[1]["executes_per_s"].as_f64().unwrap() - 224_373.8).abs() < 1e-6);
    // --verbose names the HTML line each instance's logical reads came from.
    let html = dir.path().join("awr_rac-0-24-html/awr_rac.0.24.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let row = text
        .lines()
        .position(|line| line.contains(">1,188,020.85<"))
        .expect("instance 2's row")
        + 1;
    corescale()
        .args(["report", "--verbose"])
        .arg(&html)
        .assert()
        .success()
        .stdout(contains(format!("awr_rac.0.24.html' line {row}: ")));
}

/// A HammerDB TPROC-C result beside a `run tpcc` run of 2 warehouses: its log does not say
/// its warehouses, so the pair cannot be checked until `--warehouses` says them; at 2 they
/// are order entry at the same warehouses in two implementations, at 10 different jobs.
/// Either way they are compared by scaling, never by NOPM. A count that contradicts a
/// run's own record, or a series off the NOPM axis, is a usage error.
#[test]
fn a_hammerdb_result_is_checked_for_the_warehouses_of_a_tpcc_run() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let (tpcc, hammerdb) = (
        folder.join("corescale-tpcc-2w.json"),
        folder.join("hammerdb.log"),
    );
    let dir = tempfile::tempdir().unwrap();
    let warnings = |extra: &[&str]| {
        let out = dir.path().join("analysis.json");
        corescale()
            .arg("report")
            .args([&tpcc, &hammerdb])
            .args(extra)
            .args(["-q", "--json"])
            .arg(&out)
            .assert()
            .success();
        let analysis = read_json(&out);
        let pair: Vec<String> = analysis["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|warning| warning.as_str().unwrap().to_string())
            .filter(|warning| warning.starts_with("vm and hammerdb"))
            .collect();
        assert_eq!(pair.len(), 1, "{pair:?}");
        pair[0].clone()
    };
    let unknown = warnings(&[]);
    assert!(
        unknown.contains("cannot be checked for equal warehouses: vm ran on 2")
            && unknown.contains("--warehouses hammerdb=W"),
        "{unknown}"
    );
    let same = warnings(&["--warehouses", "hammerdb=2"]);
    assert!(
        same.contains("the same 2 warehouse(s) in different implementations (corescale tpcc and HammerDB TPROC-C")
            && same.ends_with("compare their speedup and efficiency, not their NOPM"),
        "{same}"
    );
    let other = warnings(&["--warehouses", "hammerdb=10"]);
    assert!(
        other.contains("different warehouse counts (2 and 10), so different jobs"),
        "{other}"
    );
    for (flag, said) in [
        ("vm=10", "vm ran on 2 warehouse(s), as its file says"),
        (
            "nobody=2",
            "--warehouses names 'nobody', which is none of the series",
        ),
        ("vm=0", "'0' is not a warehouse count"),
    ] {
        corescale()
            .arg("report")
            .args([&tpcc, &hammerdb])
            .args(["--warehouses", flag])
            .assert()
            .code(2)
            .stderr(contains(said));
    }
    corescale()
        .arg("report")
        .args([&tpcc, &hammerdb])
        .args(["--warehouses", "hammerdb=2", "--warehouses", "hammerdb=3"])
        .assert()
        .code(2)
        .stderr(contains("--warehouses names 'hammerdb' twice"));
    corescale()
        .args(["report", "--warehouses", "x=2"])
        .arg(anchor("test_cpu_parallel_rust_RAC52.csv"))
        .arg("--label")
        .arg(format!(
            "{}=x",
            anchor("test_cpu_parallel_rust_RAC52.csv").display()
        ))
        .assert()
        .code(2)
        .stderr(contains("x is not an order-entry result on the NOPM axis"));
}
