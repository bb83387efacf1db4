//! `-o run.hlog`: a db run's HdrHistogram interval log, read back by an independent reader
//! (the `hdrhistogram` Python package's log reader), gives each level's responses exactly as
//! the run's JSON does: the same count, percentiles and maximum; and `report` reads it back
//! with the same figures.

use crate::common;

use crate::sessions::{own_database, setup};
use common::{corescale, read_json};

/// Each interval histogram of an .hlog as Python's hdrh reads it: its tag, start and end
/// (ms since the epoch), count and p50/p99/max in ms, one line each. The percentiles are
/// counted from the histogram's buckets by the rule the JSON's are (the response at
/// ceil(q x count)).
const READ_BACK: &str = r#"
import math, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

def at(histogram, quantile):
    # The value below which ceil(quantile * count) responses fall, as HdrHistogram's Rust and
    # Java readers count it (the Python package's own rounds to the nearest response).
    wanted = max(1, math.ceil(quantile * histogram.get_total_count()))
    seen = 0
    for item in histogram.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        if seen >= wanted:
            return histogram.get_highest_equivalent_value(item.value_iterated_to)

reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
while True:
    histogram = reader.get_next_interval_histogram()
    if histogram is None:
        break
    print(histogram.get_tag(), histogram.get_start_time_stamp(), histogram.get_end_time_stamp(),
          histogram.get_total_count(), at(histogram, 0.5) / 1e6, at(histogram, 0.99) / 1e6,
          histogram.get_max_value() / 1e6)
"#;

#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_hdrh)),
    ignore = "needs CORESCALE_TEST_PG (a PostgreSQL URL, see README) and Python's hdrhistogram package (pip install hdrhistogram)"
)]
fn an_hlog_read_by_hdrhistograms_own_reader_gives_each_levels_responses() {
    let own = own_database("CORESCALE_TEST_PG");
    let url = own.url();
    setup(&url);
    let dir = tempfile::tempdir().unwrap();
    let (json, hlog) = (dir.path().join("run.json"), dir.path().join("run.hlog"));
    corescale()
        .args([
            "run",
            "db",
            "--target",
            &url,
            "--sweep",
            "1,2",
            "--duration",
            "300ms",
        ])
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .arg("-o")
        .arg(&hlog)
        .assert()
        .success();
    let document = read_json(&json);
    let levels = document["levels"].as_array().unwrap();
    let lines = read_back(&hlog);
    assert_eq!(lines.len(), levels.len(), "one interval line per level");
    let started = chrono::DateTime::parse_from_rfc3339(document["started_at"].as_str().unwrap())
        .unwrap()
        .timestamp_millis() as f64;
    for (index, (line, level)) in lines.iter().zip(levels).enumerate() {
        let number = |column: usize| line[column].parse::<f64>().unwrap();
        let latency = &level["latency"];
        assert_eq!(line[0], format!("level-{}", index + 1));
        assert_eq!(
            number(3),
            latency["count"].as_f64().unwrap(),
            "level {index}"
        );
        assert!(number(3) > 100.0, "level {index}: {} responses", number(3));
        for (column, figure) in [(4, "p50_ms"), (5, "p99_ms"), (6, "max_ms")] {
            let expected = latency[figure].as_f64().unwrap();
            assert!(
                (number(column) - expected).abs() <= expected * 1e-9,
                "level {index} {figure}: {} read back, {expected} in the JSON",
                number(column)
            );
        }
        // The interval is the level's measured window, placed from the run's start.
        let level_start =
            chrono::DateTime::parse_from_rfc3339(level["started_at"].as_str().unwrap())
                .unwrap()
                .timestamp_millis() as f64;
        assert!(
            (number(1) - level_start).abs() <= 2.0,
            "level {index}: starts {} not {level_start}",
            number(1)
        );
        let length_ms = level["elapsed_s"].as_f64().unwrap() * 1e3;
        assert!(
            ((number(2) - number(1)) - length_ms).abs() <= 2.0,
            "level {index}"
        );
        assert!(number(1) >= started - 1.0);
    }
    report_reads_it_back(&hlog, levels, 1e-9);
}

/// The log's lines as Python's hdrh reads them: `READ_BACK`'s columns.
fn read_back(hlog: &std::path::Path) -> Vec<Vec<String>> {
    let read = std::process::Command::new("python3")
        .args(["-c", READ_BACK])
        .arg(hlog)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    String::from_utf8(read.stdout)
        .unwrap()
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn column(line: &[String], index: usize) -> f64 {
    line[index].parse().unwrap()
}

fn time_ms(text: &serde_json::Value) -> f64 {
    chrono::DateTime::parse_from_rfc3339(text.as_str().unwrap())
        .unwrap()
        .timestamp_millis() as f64
}

/// Two statements a transaction, of no table: what the classes' log tells apart.
const TWO_STATEMENTS: &str =
    "SELECT 1;\nSELECT pg_catalog.count(*) FROM pg_catalog.generate_series(1, 200);\n";

/// With `--interval`, `run.hlog` has a line per interval of each level, tagged with its
/// level: each line the interval's responses and percentiles as the JSON's `intervals[]`
/// has them, placed at the interval's start, the lines together every response of the
/// level; `run.classes.hlog` has each statement's responses per level, as its figures say;
/// `report` reads the first back as the levels and refuses the second by name.
#[test]
#[cfg_attr(
    not(all(corescale_test_pg, corescale_test_hdrh)),
    ignore = "needs CORESCALE_TEST_PG (a PostgreSQL URL, see README) and Python's hdrhistogram package (pip install hdrhistogram)"
)]
fn intervals_and_statement_classes_are_lines_of_their_own() {
    let url = common::required("CORESCALE_TEST_PG");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("two.sql");
    std::fs::write(&script, TWO_STATEMENTS).unwrap();
    let [json, hlog, classes] =
        ["run.json", "run.hlog", "run.classes.hlog"].map(|name| dir.path().join(name));
    corescale()
        .args(["run", "script", "--target", &url, "--file"])
        .arg(&script)
        .args([
            "--sweep",
            "1,2",
            "--duration",
            "900ms",
            "--interval",
            "300ms",
        ])
        .args(["--repeat", "1", "-q"])
        .args(["-o", json.to_str().unwrap(), "-o", hlog.to_str().unwrap()])
        .args(["-o", classes.to_str().unwrap()])
        .assert()
        .success();
    let document = read_json(&json);
    let levels = document["levels"].as_array().unwrap();
    let lines = read_back(&hlog);
    let mut line = lines.iter();
    for (index, level) in levels.iter().enumerate() {
        let intervals = level["intervals"].as_array().unwrap();
        assert_eq!(intervals.len(), 3, "level {index}");
        let mut responses = 0.0;
        for interval in intervals {
            let line = line.next().expect("a line per interval");
            assert_eq!(line[0], format!("level-{}", index + 1));
            assert_eq!(column(line, 3), interval["responses"].as_f64().unwrap());
            responses += column(line, 3);
            for (at, figure) in [(4, "p50_ms"), (5, "p99_ms")] {
                let expected = interval[figure].as_f64().unwrap();
                assert!(
                    (column(line, at) - expected).abs() <= expected * 1e-9,
                    "level {index} {figure}: {} read back, {expected} in the JSON",
                    column(line, at)
                );
            }
            let start = time_ms(&level["started_at"]) + 1e3 * interval["start_s"].as_f64().unwrap();
            assert!(
                (column(line, 1) - start).abs() <= 2.0,
                "{line:?} not at {start}"
            );
        }
        assert_eq!(responses, level["latency"]["count"].as_f64().unwrap());
        assert!(responses > 20.0, "level {index}: {responses} responses");
    }
    assert!(line.next().is_none(), "no line beyond the intervals'");
    let classes = read_back(&classes);
    assert_eq!(classes.len(), 2 * levels.len(), "{classes:?}");
    for (line, (level, statement)) in classes
        .iter()
        .zip((0..levels.len()).flat_map(|level| [(level, 1), (level, 2)]))
    {
        assert_eq!(
            line[0],
            format!("level-{}.statement-{statement}", level + 1)
        );
        let figures = &levels[level]["workload_figures"];
        for (at, figure) in [(4, "p50_ms"), (5, "p99_ms")] {
            let expected = figures[format!("statement {statement} {figure}")]
                .as_f64()
                .unwrap();
            assert!(
                (column(line, at) - expected).abs() <= expected * 1e-9,
                "{line:?}: {figure} {expected} in the JSON"
            );
        }
        // Each transaction ran both statements; one cut short by the window's end may have
        // run its first only.
        let transactions = levels[level]["latency"]["count"].as_f64().unwrap();
        let workers = levels[level]["workers"].as_f64().unwrap();
        assert!(
            (transactions..=transactions + workers).contains(&column(line, 3)),
            "{line:?}: {transactions} transactions"
        );
    }
    report_reads_it_back(&hlog, levels, 0.011);
    corescale()
        .arg("report")
        .arg(dir.path().join("run.classes.hlog"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("-o run.classes.hlog"));
}

/// `report` on the .hlog alone gives each level's workers and response times as the run's
/// JSON does: exactly from a line per level, within `within` (relative) from a line per
/// interval, whose histograms keep 2 significant digits where the level's keep 3.
fn report_reads_it_back(hlog: &std::path::Path, levels: &[serde_json::Value], within: f64) {
    let report = hlog.with_extension("report.json");
    corescale()
        .arg("report")
        .arg(hlog)
        .args(["--include-disturbed", "-o"])
        .arg(&report)
        .assert()
        .success();
    let report = read_json(&report);
    let points = report["series"][0]["series"]["points"].as_array().unwrap();
    assert_eq!(points.len(), levels.len());
    for (point, level) in points.iter().zip(levels) {
        assert_eq!(point["workers"], level["workers"]);
        assert_eq!(point["latency"]["count"], level["latency"]["count"]);
        for figure in ["p50_ms", "p99_ms", "p999_ms", "max_ms"] {
            let (read, recorded) = (
                point["latency"][figure].as_f64().unwrap(),
                level["latency"][figure].as_f64().unwrap(),
            );
            assert!(
                (read - recorded).abs() <= recorded * within,
                "{figure}: {read} read back, {recorded} in the JSON"
            );
        }
    }
}
