//! Property tests of the importers and the analysis over arbitrary input: any file either
//! gives a clean error, or a series whose every capacity is finite and positive and whose
//! outputs render without NaN, infinity or raw control characters. The fuzz target in
//! `fuzz/` runs the same check over bytes (README, "Fuzzing").

use std::io::Write;
use std::path::Path;

use corescale::analysis::input::{parse_series, read_series};
use corescale::analysis::study::analyse;
use corescale::report::{analysis_text, html, markdown};
use proptest::prelude::*;

/// Numbers as hostile files write them.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u64..200).prop_map(|n| n.to_string()),
        (-1e3f64..1e3).prop_map(|x| x.to_string()),
        prop::num::f64::ANY.prop_map(|x| x.to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-0.05".to_string()),
        Just("1e-320".to_string()),
        Just("1e19".to_string()),
        Just("18446744073709551616".to_string()),
        Just(String::new()),
        Just("\"unclosed".to_string()),
        "[\\x00-\\x7f]{0,6}",
    ]
}

fn header() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec),cv,cpu_fraction,steal_pct".to_string()),
        Just("Num_Threads,Median_Runtime,Mean_Runtime,StdDev_Runtime".to_string()),
        Just("Num_concurrent_workers,LIO/s".to_string()),
        "Num_concurrent_workers,[\\x00-\\x7f]{1,12}".prop_map(|name| name.replace(['\n', '\r', ',', '"'], "")),
    ]
}

fn csv_file() -> impl Strategy<Value = String> {
    (
        header(),
        prop::collection::vec(prop::collection::vec(cell(), 2..8), 0..40),
        any::<bool>(),
    )
        .prop_map(|(header, rows, bom)| {
            let mut text = if bom {
                "\u{feff}".to_string()
            } else {
                String::new()
            };
            text.push_str(&header);
            text.push('\n');
            for row in rows {
                text.push_str(&row.join(","));
                text.push('\n');
            }
            text
        })
}

/// pgbench summaries with hostile values in the fields `report` reads, and any header text.
fn pgbench_file() -> impl Strategy<Value = String> {
    (cell(), cell(), cell(), cell(), "[\\x00-\\x7f]{0,12}").prop_map(
        |(clients, tps, latency, scale, script)| {
            format!(
                "pgbench ({script})\ntransaction type: <builtin: {script}>\nscaling factor: {scale}\nnumber of clients: {clients}\nnumber of transactions actually processed: {clients}/{scale}\nlatency average = {latency} ms\ntps = {tps} (without initial connection time)\n"
            )
        },
    )
}

/// Every other tool's layout `report` reads, as tests/fixtures/import holds it.
const OTHER_TOOLS: &[&str] = &[
    include_str!("../fixtures/import/awr-11.2.txt"),
    include_str!("../fixtures/import/awr-19c.txt"),
    include_str!("../fixtures/import/awr-11.2.0.4.html"),
    include_str!("../fixtures/import/statspack-12.1.txt"),
    include_str!("../fixtures/import/hammerdb.log"),
    include_str!("../fixtures/import/hdbxtprofile.log"),
    include_str!("../fixtures/import/sysbench-1.0.20-cpu.txt"),
    include_str!("../fixtures/import/sysbench-1.0.20-oltp-histogram.txt"),
    include_str!("../fixtures/import/pgbench-12-r.txt"),
    include_str!("../fixtures/import/pgbench-15-r.txt"),
    include_str!("../fixtures/import/pgbench_log.15"),
    include_str!("../fixtures/import/pgbench_agg.15"),
];

/// Hostile values for a figure: out of range, not numbers, huge, tiny, negative, cut.
const HOSTILE: &[&str] = &[
    // Spelled so that the output checks below still see any NaN or infinity the readers
    // made: the input's own words never spell "NaN", "inf%", "infx" or "-inf".
    "nan",
    "Infinity",
    "-Infinity",
    "-1",
    "0",
    "1e308",
    "1e-320",
    "18446744073709551616",
    "9999999999",
    "",
    "1,2,3",
    "x",
    "\u{1b}[31m",
    "0.0.0",
    "-0",
    "1e18",
    "4294967296",
];

/// A file of another tool with one of its numbers (the `index`-th, counted round) replaced
/// by a hostile value.
fn other_tool_file() -> impl Strategy<Value = String> {
    (
        0..OTHER_TOOLS.len(),
        any::<usize>(),
        0..HOSTILE.len(),
        any::<bool>(),
    )
        .prop_map(|(file, index, hostile, cut)| {
            let text = OTHER_TOOLS[file];
            let numbers: Vec<(usize, usize)> = text
                .char_indices()
                .filter(|(at, c)| {
                    c.is_ascii_digit()
                        && !text[..*at]
                            .ends_with(|c: char| c.is_ascii_digit() || c == '.' || c == ',')
                })
                .map(|(at, _)| {
                    let end = text[at..]
                        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                        .map_or(text.len(), |length| at + length);
                    (at, end)
                })
                .collect();
            let (start, end) = numbers[index % numbers.len()];
            let mut changed = format!("{}{}{}", &text[..start], HOSTILE[hostile], &text[end..]);
            if cut {
                // Cut short where the number was.
                changed.truncate(start);
            }
            changed
        })
}

/// Reads, analyses and renders; panics (fails the property) on any broken promise.
fn check(text: &[u8]) {
    check_named("input.csv", text);
}

/// As `check`, the file named `name` (a number in it gives a level to files without one).
fn check_named(name: &str, bytes: &[u8]) {
    let Ok(series) = parse_series(Path::new(name), bytes) else {
        return;
    };
    let analysis = analyse(vec![series]);
    for level in &analysis.series[0].levels {
        assert!(
            level.capacity.is_finite() && level.capacity > 0.0,
            "capacity {} at {} workers",
            level.capacity,
            level.workers
        );
        assert!(level.speed.is_finite() && level.speed > 0.0);
        assert!(level.speedup.is_finite() && level.speedup > 0.0);
    }
    let rendered = [
        analysis_text::render(&analysis, false, true),
        markdown::render(&analysis, Some("figures")),
        html::render(&analysis).unwrap(),
    ];
    for text in &rendered {
        for bad in ["NaN", "inf%", "infx", "-inf"] {
            assert!(!text.contains(bad), "{bad} in output:\n{text}");
        }
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "a control character reached the output"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_csv_errors_cleanly_or_gives_finite_positive_capacities(text in csv_file()) {
        check(text.as_bytes());
    }

    #[test]
    fn any_pgbench_summary_errors_cleanly_or_gives_finite_positive_capacities(text in pgbench_file()) {
        check(text.as_bytes());
    }

    #[test]
    fn any_other_tools_file_with_a_hostile_number_errors_cleanly_or_gives_finite_positive_capacities(text in other_tool_file()) {
        check_named("awr.4.txt", text.as_bytes());
    }

    #[test]
    fn any_bytes_error_cleanly_or_give_finite_positive_capacities(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check(&bytes);
    }

    /// A CSV file is streamed row by row; the same bytes given whole are read at once: both
    /// give the same series, or both an error, the same one.
    #[test]
    fn a_streamed_csv_reads_as_its_bytes_do(
        text in csv_file(),
        cut in any::<bool>(),
        not_text in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let text = if cut { text.trim_end().to_string() } else { text };
        let mut bytes = text.into_bytes();
        // A byte that is no UTF-8 anywhere: the same error from both.
        if let Some(at) = not_text {
            bytes.insert(at.index(bytes.len() + 1), 0xff);
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("input.csv");
        std::fs::write(&file, &bytes).unwrap();
        let streamed = read_series(&file).map_err(|error| format!("{error:#}"));
        let whole = parse_series(&file, &bytes).map_err(|error| format!("{error:#}"));
        prop_assert_eq!(streamed, whole);
    }
}

/// The header of test_cpu_parallel's CSV.
const TEST_CPU_PARALLEL_HEADER: &str = "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec),cv,cpu_fraction,steal_pct";

/// The cases found by hand and by the fuzzer, each an error naming file, line and column,
/// quoting at most 80 characters of the input.
#[test]
fn hostile_values_are_refused_with_their_place() {
    let header = TEST_CPU_PARALLEL_HEADER;
    let cases: &[(&str, &str)] = &[
        (
            "1,0,1,0.1,,,",
            "line 2 column 2: the measurement 0 is outside",
        ),
        ("1,-0.05,1,0.1,,,", "line 2 column 2: the measurement -0.05"),
        ("1,1e-320,1,0.1,,,", "line 2 column 2"),
        ("1,NaN,1,0.1,,,", "line 2 column 2"),
        ("1,1,1,0.1,NaN,,", "line 2 column 5: the CV NaN"),
        ("1,1,1,0.1,,-3,", "line 2 column 6: the on-CPU fraction -3"),
        ("1,1,1,0.1,,,inf", "line 2 column 7: steal % inf"),
        ("1,1,1,0.1,,,300", "line 2 column 7: steal % 300"),
        (
            "1e19,1,1,0.1,,,",
            "line 2 column 1: '10000000000000000000' is not a worker count",
        ),
        ("1.5,1,1,0.1,,,", "is not a worker count"),
        ("0,1,1,0.1,,,", "is not a worker count"),
    ];
    // Found by the fuzz target: a sent rate of 1.1e132/s in a db run's CSV overflowed the
    // latency figure's pixel arithmetic.
    let sent = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/inputs/importers/sent-rate-1e132.csv");
    let error = format!("{:#}", read_series(&sent).unwrap_err());
    assert!(
        error.contains("line 4: rate.achieved_per_s 1.1022222222222222e132 is outside 0 to 1e18"),
        "{error}"
    );
    // A db run's document tampered as a campaign part could be: a negative count, and a
    // count its histogram does not hold (made from a real run's JSON).
    for (input, message) in [
        (
            "negative-statements.json",
            "levels[0].workload_figures.statements: a count -78016 is outside",
        ),
        (
            "histogram-count-mismatch.json",
            "levels[0].latency: histogram holds",
        ),
        (
            "campaign-parts-max.json",
            "campaign: part 1 of 18446744073709551615 parts",
        ),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/inputs/importers")
            .join(input);
        let error = format!("{:#}", read_series(&path).unwrap_err());
        assert!(error.contains(message), "{input}: {error}");
    }
    for (row, message) in cases {
        let mut file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
        write!(file, "{header}\n{row}\n").unwrap();
        let error = format!("{:#}", read_series(file.path()).unwrap_err());
        assert!(error.contains(message), "{row}: {error}");
    }
}

/// An unclosed quote: the error quotes at most 80 characters, not the rest of the file.
#[test]
fn an_unclosed_quote_is_refused_in_a_short_error() {
    let header = TEST_CPU_PARALLEL_HEADER;
    let mut file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    write!(file, "{header}\n1,\"2").unwrap();
    for _ in 0..200_000 {
        write!(file, "\n3,4,5,6,,,").unwrap();
    }
    let error = format!("{:#}", read_series(file.path()).unwrap_err());
    assert!(error.len() < 400, "{} bytes of error", error.len());
}

#[test]
fn control_characters_in_a_column_name_reach_no_output_raw() {
    let mut file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    write!(
        file,
        "Num_concurrent_workers,\x1b[2J<b>LIO</b>\n1,100\n2,190\n"
    )
    .unwrap();
    let series = read_series(file.path()).unwrap();
    let analysis = analyse(vec![series]);
    let text = analysis_text::render(&analysis, false, true);
    assert!(
        !text.contains('\x1b') && text.contains("\\u{1b}[2J"),
        "{text}"
    );
    let page = markdown::render(&analysis, Some("figures"));
    assert!(
        page.contains("\\<b\\>") && !page.replace("\\<", "").contains("<b"),
        "{page}"
    );
}

#[test]
fn a_byte_order_mark_before_json_is_not_taken_for_csv() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let run = assert_cmd::Command::cargo_bin("corescale")
        .unwrap()
        .args([
            "run",
            "-w",
            "1",
            "--job-size",
            "1M",
            "--repeat",
            "1",
            "-q",
            "-o",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(run.status.success());
    let mut text = b"\xef\xbb\xbf".to_vec();
    text.extend(std::fs::read(&json).unwrap());
    std::fs::write(&json, text).unwrap();
    assert_eq!(read_series(&json).unwrap().points.len(), 1);
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()[3..]).unwrap();
    values_out_of_range_are_named_by_their_place(document, &json);
}

/// A JSON value out of range names its place in the document, and every output refuses it
/// at once; `json` is a scratch file beside which the outputs are written.
fn values_out_of_range_are_named_by_their_place(mut document: serde_json::Value, json: &Path) {
    let dir = json.parent().unwrap();
    document["levels"][0]["summary"]["job_time_s"]["median"] = serde_json::json!(-0.05);
    std::fs::write(json, document.to_string()).unwrap();
    let error = format!("{:#}", read_series(json).unwrap_err());
    assert!(
        error.contains("levels[0].summary.job_time_s.median: the measurement -0.05"),
        "{error}"
    );
    // Spreads are checked as the median is: f64::MAX once made the page's axis loop for
    // ever; 1e300 was drawn; a spread that does not hold the median is not one.
    document["levels"][0]["summary"]["job_time_s"]["median"] = serde_json::json!(0.5);
    for (field, value, message) in [
        (
            "max",
            f64::MAX,
            "summary.job_time_s.max: the spread's high end",
        ),
        (
            "max",
            1e300,
            "summary.job_time_s.max: the spread's high end 1",
        ),
        (
            "min",
            -1.0,
            "summary.job_time_s.min: the spread's low end -1",
        ),
        ("min", 0.9, "does not hold the median"),
        ("stdev", 1e300, "summary.job_time_s.stdev: the stdev"),
    ] {
        let mut edited = document.clone();
        edited["levels"][0]["summary"]["job_time_s"]["min"] = serde_json::json!(0.4);
        edited["levels"][0]["summary"]["job_time_s"]["max"] = serde_json::json!(0.6);
        edited["levels"][0]["summary"]["job_time_s"][field] = serde_json::json!(value);
        std::fs::write(json, edited.to_string()).unwrap();
        let error = format!("{:#}", read_series(json).unwrap_err());
        assert!(error.contains(message), "{field} = {value}: {error}");
    }
    // Every output refuses it at once, the page and the figures included.
    let mut edited = document.clone();
    edited["levels"][0]["summary"]["job_time_s"]["max"] = serde_json::json!(f64::MAX);
    std::fs::write(json, edited.to_string()).unwrap();
    for output in ["report.html", "figures/", "report.md", "analysis.json"] {
        let started = std::time::Instant::now();
        assert_cmd::Command::cargo_bin("corescale")
            .unwrap()
            .args(["report"])
            .arg(json)
            .args(["-o", &dir.join(output).display().to_string()])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(predicates::ord::ne(0))
            .stderr(predicates::str::contains("summary.job_time_s.max"));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{output}"
        );
    }
    // A timeline that is not one: a negative rate, time running backwards, p50 above p99,
    // a percentile of a million years.
    let interval = |start: f64, rate: f64, p50: f64, p99: f64| {
        serde_json::json!({"start_s": start, "length_s": 1.0, "responses": 10,
            "rate_per_s": rate, "p50_ms": p50, "p99_ms": p99})
    };
    for intervals in [
        vec![interval(0.0, -1.0, 1.0, 2.0)],
        vec![interval(1.0, 10.0, 1.0, 2.0), interval(0.0, 10.0, 1.0, 2.0)],
        vec![interval(0.0, 10.0, 3.0, 2.0)],
        vec![interval(0.0, 10.0, 1.0, 3e16)],
    ] {
        let mut edited = document.clone();
        edited["levels"][0]["intervals"] = serde_json::json!(intervals);
        std::fs::write(json, edited.to_string()).unwrap();
        let error = format!("{:#}", read_series(json).unwrap_err());
        assert!(
            error.contains("levels[0].intervals[") && error.contains("not an interval"),
            "{intervals:?}: {error}"
        );
    }
    document["levels"][0]["workers"] = serde_json::json!(10_000_000_000_000_000_000u64);
    std::fs::write(json, document.to_string()).unwrap();
    let error = format!("{:#}", read_series(json).unwrap_err());
    assert!(error.contains("is not a worker count"), "{error}");
}

/// A closed pipe on standard output or error (`| head -c1`, `2>&1 | true`) ends nothing in a
/// panic: `run` still writes its results and exits 0, `report` exits 0.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let binary = assert_cmd::cargo::cargo_bin("corescale");
    let dir = tempfile::tempdir().unwrap();
    let anchors = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/anchor");
    for (index, sink) in ["| true", "| head -c1", "2>&1 | head -c1", "2>&1 | true"]
        .into_iter()
        .enumerate()
    {
        let json = dir.path().join(format!("run{index}.json"));
        for command in [
            format!(
                "'{}' run cpu --sweep 1,2 --job-size 1M -o '{}'",
                binary.display(),
                json.display()
            ),
            format!("'{}' report '{}'", binary.display(), anchors.display()),
        ] {
            let output = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("{command} {sink}; exit ${{PIPESTATUS[0]}}"))
                .output()
                .unwrap();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{command} {sink}: {output:?}"
            );
        }
        assert!(json.exists(), "the run wrote its results despite {sink}");
    }
}

/// A CSV cut in its last number ("18,1" where the file had "18,11.7") is not read as a rate
/// of 1: the line is left out with a warning naming it, unless --accept-truncated.
#[test]
fn a_csv_cut_in_its_last_line_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anchor/RAC55_SLOB_Oracle_LIO.csv");
    let whole = std::fs::read_to_string(&anchor).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    let kept = lines.len() - 2; // the data lines left whole
    let cut = format!("{}\n36,1", lines[..lines.len() - 1].join("\n"));
    let file = dir.path().join("slob.csv");
    std::fs::write(&file, &cut).unwrap();
    let json = dir.path().join("analysis.json");
    let binary = assert_cmd::cargo::cargo_bin("corescale");
    let output = std::process::Command::new(&binary)
        .arg("report")
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "line {}: left out: the last line may be cut",
            lines.len()
        )),
        "{text}"
    );
    let analysis: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let levels = analysis["series"][0]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), kept);
    assert!(levels.iter().all(|level| level["workers"] != 36));
    // Asked for, it is kept; and a whole file ending without a line end is not suspected.
    let output = std::process::Command::new(&binary)
        .arg("report")
        .arg(&file)
        .args(["--accept-truncated", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(output.status.success());
    let analysis: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        analysis["series"][0]["levels"].as_array().unwrap().len(),
        kept + 1
    );
    std::fs::write(&file, whole.trim_end()).unwrap();
    let output = std::process::Command::new(&binary)
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("may be cut"));
}

/// A CSV breaking at its third line is refused at that line before the rest is read: the
/// file goes on for 8 GiB (sparse: zeros, on no disk), which reading to the end would take
/// long over and refuse as a line past 1 MiB. (A named pipe, which showed this before, is
/// now refused unopened: `report`'s inputs are regular files.)
#[test]
fn a_malformed_csv_is_refused_before_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    // Past the 64 KiB head `report` reads first to tell the format: the head is read whole.
    let mut text = String::from(
        "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n1,10,10,0.1\n2,10,10\n",
    );
    for workers in 3..6000 {
        text.push_str(&format!("{workers},10,10,0.1\n"));
    }
    std::fs::write(&csv, &text).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&csv)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let output = assert_cmd::Command::cargo_bin("corescale")
        .unwrap()
        .arg("report")
        .arg(&csv)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("sweep.csv' line 3: malformed CSV"),
        "{stderr}"
    );
}

/// The hostile-number property starts from files that read: each fixture as it is gives a
/// series (the aggregated log only with a level, which a name cannot give it).
#[test]
fn every_other_tools_fixture_reads_as_it_is() {
    for (index, text) in OTHER_TOOLS.iter().enumerate() {
        let read = parse_series(Path::new("awr.4.txt"), text.as_bytes());
        if text.starts_with("1795663133 ") {
            assert!(read.is_err(), "the aggregated log has no level of its own");
        } else {
            let series = read.unwrap_or_else(|error| panic!("fixture {index}: {error:#}"));
            assert!(!series.points.is_empty());
        }
    }
}
