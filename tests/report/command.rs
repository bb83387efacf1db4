//! `corescale report` on the anchor data and on files corescale writes.

use crate::common;

use common::{anchor, anchor_report_command, corescale, read_json};
use predicates::str::contains;
use serde_json::Value;

/// The three CPU sweeps named RAC52, RAC54, RAC55 with their core counts, plus `extra` args.
fn anchor_report(extra: &[&str]) -> assert_cmd::assert::Assert {
    anchor_report_command().args(extra).assert()
}

fn analysis_json(extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("analysis.json");
    let mut args = vec!["-q", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    anchor_report(&args).success().stdout("");
    read_json(&json)
}

fn close(actual: &Value, expected: f64) {
    let actual = actual.as_f64().unwrap();
    assert!((actual - expected).abs() < 1e-4, "{actual} != {expected}");
}

#[test]
fn anchor_ratios_match_the_hand_computation() {
    let analysis = analysis_json(&[]);
    let comparison = &analysis["comparisons"][0];
    assert_eq!(comparison["baseline"], "RAC52");
    let row = |name: &str| {
        comparison["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["name"] == name)
            .unwrap()
            .clone()
    };
    // Single thread: the median speed over the first levels that stay within the noise band
    // (the CV at one worker, and at least three jitters of per-worker speed) of the median of
    // those before them: levels 1 to 3 on RAC52 (band 2.1%; 68.71 s at 4 is 4.3% slower),
    // 1 to 6 on RAC54 and 1 to 8 on RAC55 (band 0.35%; 29.42 s at 9 is 0.6% slower).
    let speed = |times: &[f64]| {
        let mut speeds: Vec<f64> = times.iter().map(|time| 60.0 / time).collect();
        speeds.sort_by(f64::total_cmp);
        let middle = speeds.len() / 2;
        if speeds.len().is_multiple_of(2) {
            (speeds[middle - 1] + speeds[middle]) / 2.0
        } else {
            speeds[middle]
        }
    };
    let rac52_single = speed(&[65.77, 65.61, 66.92]);
    assert_eq!(
        row("RAC52")["single_thread_workers"],
        serde_json::json!([1, 2, 3])
    );
    assert_eq!(
        row("RAC55")["single_thread_workers"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8])
    );
    close(
        &row("RAC55")["single_thread_ratio"],
        speed(&[29.18, 29.25, 29.25, 29.25, 29.29, 29.26, 29.31, 29.32]) / rac52_single,
    );
    close(
        &row("RAC54")["single_thread_ratio"],
        speed(&[48.06, 48.10, 48.17, 48.21, 48.59, 48.30]) / rac52_single,
    );
    // Capacity at saturation is the plateau: the median capacity (60 n / t) of the levels
    // from the first whose 3-level running median lies within the band (the CV at the
    // largest capacity: RAC52 3.07% at 44, RAC54 3.11% at 20, RAC55 3.53% at 40) of the
    // largest running median. RAC52: levels 38..48, median 60*42/151.64; RAC54: 16..24,
    // median 60*19/94.35; RAC55: 18..40, median 60*22/39.37.
    let (rac52, rac54, rac55) = (
        60.0 * 42.0 / 151.64,
        60.0 * 19.0 / 94.35,
        60.0 * 22.0 / 39.37,
    );
    close(&row("RAC55")["capacity_ratio"], rac55 / rac52);
    close(&row("RAC54")["capacity_ratio"], rac54 / rac52);
    assert_eq!(row("RAC52")["saturation_workers"], 38);
    assert_eq!(row("RAC54")["saturation_workers"], 16);
    assert_eq!(row("RAC55")["saturation_workers"], 18);
    for name in ["RAC52", "RAC54", "RAC55"] {
        assert_eq!(row(name)["saturation_censored"], false);
    }
    // Per physical core: capacity / P.
    close(
        &row("RAC55")["per_core_ratio"],
        (rac55 / 16.0) / (rac52 / 20.0),
    );
    // Speed per worker at every load both measured, and its median over the bands: up to 16
    // workers (the smaller P) and from 20 (the larger P) to 32 (the smaller L).
    let by_load = row("RAC55")["by_load"].as_array().unwrap().clone();
    assert_eq!(by_load.len(), 40);
    close(&by_load[19]["speed_ratio"], 84.41 / 36.56);
    close(&by_load[19]["capacity_ratio"], 84.41 / 36.56);
    let low = &row("RAC55")["low_load"];
    assert_eq!(
        (low["from_workers"].as_u64(), low["to_workers"].as_u64()),
        (Some(1), Some(16))
    );
    let high = &row("RAC55")["high_load"];
    assert_eq!(
        (high["from_workers"].as_u64(), high["to_workers"].as_u64()),
        (Some(20), Some(32))
    );
    assert_eq!(high["levels"], 13);
    assert!(high["speed_ratio"].as_f64().unwrap() < low["speed_ratio"].as_f64().unwrap());
    assert_eq!(
        comparison["ranking"],
        serde_json::json!(["RAC55", "RAC52", "RAC54"])
    );
}

#[test]
fn knees_land_on_the_physical_core_counts() {
    let analysis = analysis_json(&[]);
    let series = analysis["series"].as_array().unwrap();
    for (index, cores) in [20, 8, 16].into_iter().enumerate() {
        assert_eq!(series[index]["knee"]["workers"], cores);
    }
    // RAC52 loses about a fifth of its per-worker speed before the knee: 65.77 / 84.41 - 1.
    close(&series[0]["knee"]["droop"], 65.77 / 84.41 - 1.0);
    // SMT yield of RAC52: capacity at 40 over capacity at 20 = (40/145.09) / (20/84.41).
    close(&series[0]["smt_yield"], (40.0 / 145.09) / (20.0 / 84.41));
}

#[test]
fn findings_say_it_in_sentences() {
    anchor_report(&["--wide", "--verbose"])
        .success()
        .stdout(contains(
            "RAC55 is 2.59x ± 0.04 faster per worker than RAC52 up to 16 workers (2.25x single-threaded); the gap narrows to 2.30x ± 0.04 at high load (20-32 workers); RAC55 has 2.02x ± 0.03 the capacity of RAC52 at saturation, despite 16 vs 20 physical cores.",
        ))
        // Droop as the fact it is: speed per worker at 20 workers against 1, as before.
        .stdout(contains("RAC52: speed per worker falls 22% from 1 to 20 workers, then drops faster past 20 workers (its physical core count)"))
        .stdout(contains("a single Amdahl/USL curve over 1..40 is misleading"));
}

#[test]
fn costs_give_capacity_per_cost() {
    let analysis = analysis_json(&["--cost", "RAC52=10", "--cost", "RAC55=20"]);
    let rows = analysis["comparisons"][0]["rows"].as_array().unwrap();
    let rac55 = rows.iter().find(|row| row["name"] == "RAC55").unwrap();
    // (rac55 / 20) / (rac52 / 10) = capacity ratio / 2
    let capacity_ratio = rac55["capacity_ratio"].as_f64().unwrap();
    close(&rac55["per_cost_ratio"], capacity_ratio / 2.0);
    assert!(
        analysis["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|finding| {
                finding
                    .as_str()
                    .unwrap()
                    .starts_with("Per unit of cost, RAC55 delivers the most capacity")
            })
    );
}

#[test]
fn the_slob_file_is_a_rate_series() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("slob.json");
    corescale()
        .arg("report")
        .arg(anchor("RAC55_SLOB_Oracle_LIO.csv"))
        .args(["--cores", "RAC55_SLOB_Oracle_LIO=16/32", "-q", "--json"])
        .arg(&json)
        .assert()
        .success();
    let analysis = read_json(&json);
    let series = &analysis["series"][0];
    assert_eq!(series["series"]["measure"]["kind"], "rate");
    assert_eq!(series["series"]["measure"]["unit"], "Oracle_Logical_IOPS");
    let levels = series["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 19);
    // Values carry trailing spaces in the file: "2,1.3  " is read as 1.3.
    close(&levels[1]["raw"], 1.3);
    // Capacity is the rate itself; speed is rate per worker; speedup R(n)/R(1).
    close(&levels[2]["speed"], 3.2 / 4.0);
    close(&levels[2]["speedup"], 3.2 / 0.75);
    assert_eq!(series["saturation"]["workers"], 32);
    close(&series["smt_yield"], 16.6 / 11.2);
}

#[test]
fn every_input_format_is_detected_from_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let v12 = dir.path().join("v12.csv");
    std::fs::write(&v12, "Num_Threads,Median_Runtime,Mean_Runtime,StdDev_Runtime\n1,10.0,10.1,0.1\n2,10.0,10.0,0.2\n4,20.0,20.0,0.3\n").unwrap();
    let json = dir.path().join("run.json");
    let csv = dir.path().join("run.csv");
    corescale()
        .args([
            "run",
            "--sweep",
            "1,2",
            "--repeat",
            "1",
            "--job-size",
            "5M",
            "-q",
            "--label",
            "box",
        ])
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let out = dir.path().join("analysis.json");
    corescale()
        .arg("report")
        .args([&v12, &json, &csv])
        // The run shares the machine with other tests: its levels are kept whatever the verdict.
        .args(["-q", "--include-disturbed"])
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let analysis = read_json(&out);
    let names: Vec<&str> = analysis["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|series| series["series"]["name"].as_str().unwrap())
        .collect();
    // The JSON and the CSV come from one host labelled "box"; the CSV has no label.
    assert_eq!(names, ["v12", "box", "run"]);
    let v12 = &analysis["series"][0];
    close(&v12["levels"][2]["speedup"], 4.0 * 10.0 / 20.0);
    close(&v12["levels"][0]["cv"], 0.1 / 10.1);
    let from_json = &analysis["series"][1];
    assert!(from_json["series"]["physical_cores"].as_u64().unwrap() >= 1);
    assert_eq!(from_json["levels"].as_array().unwrap().len(), 2);
    // The CSV and the JSON of one run give the same figures.
    close(
        &analysis["series"][2]["levels"][1]["raw"],
        from_json["levels"][1]["raw"].as_f64().unwrap(),
    );
}

#[test]
fn unreadable_inputs_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("unknown.csv");
    std::fs::write(&unknown, "a,b,c\n1,2,3\n").unwrap();
    corescale()
        .arg("report")
        .arg(&unknown)
        .assert()
        .code(1)
        .stderr(contains("unknown.csv' line 1: unknown header 'a,b,c'"));

    // An empty file is said to be empty, not to have an unknown header ''.
    let empty = dir.path().join("empty.csv");
    std::fs::write(&empty, "\n").unwrap();
    corescale()
        .arg("report")
        .arg(&empty)
        .assert()
        .code(1)
        .stderr(contains("empty.csv' is empty: no header and no levels"));

    // An output in a directory that does not exist names it, not a temporary file.
    let rac55 = anchor("test_cpu_parallel_rust_RAC55.csv");
    let output = corescale()
        .arg("report")
        .arg(&rac55)
        .args(["-q", "--html", "/nonexistent-corescale-dir/x.html"])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&output);
    assert!(
        stderr.contains("there is no directory '/nonexistent-corescale-dir'")
            && !stderr.contains(".corescale-"),
        "{stderr}"
    );
    // What was written is said, after the analysis.
    let page = dir.path().join("page.html");
    let output = corescale()
        .arg("report")
        .arg(&rac55)
        .arg("--html")
        .arg(&page)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&output);
    assert!(
        stderr.contains(&format!("corescale: wrote {}", page.display())),
        "{stderr}"
    );

    let bad_number = dir.path().join("bad.csv");
    std::fs::write(&bad_number, "Num_concurrent_workers,LIO\n1,0.7\n2,fast\n").unwrap();
    corescale()
        .arg("report")
        .arg(&bad_number)
        .assert()
        .code(1)
        .stderr(contains("bad.csv' line 3 column 2: 'fast' is not a number"));

    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{\"schema\": \"corescale/1\",\n \"levels\": [").unwrap();
    corescale()
        .arg("report")
        .arg(&corrupt)
        .assert()
        .code(1)
        .stderr(contains("corrupt.json' line 2 column 12: not JSON"));

    // report's own analysis is named as such, not taken for a broken run.
    let analysis = dir.path().join("analysis.json");
    std::fs::write(
        &analysis,
        "{\"schema\": \"corescale-report/1\", \"series\": []}",
    )
    .unwrap();
    corescale()
        .arg("report")
        .arg(&analysis)
        .assert()
        .code(1)
        .stderr(contains(
            "is an analysis written by `corescale report --json`, not a run",
        ));

    corescale()
        .args(["report", "/no/such/file.csv"])
        .assert()
        .code(2)
        .stderr(contains(
            "'/no/such/file.csv' does not exist: check the path",
        ));
    corescale()
        .arg("report")
        .arg(anchor("RAC55_SLOB_Oracle_LIO.csv"))
        .args(["--cores", "RAC99=4/8"])
        .assert()
        .code(2)
        .stderr(contains(
            "--cores names 'RAC99', which is none of the series",
        ));
    corescale()
        .args(["report", "x.csv", "--cores", "a=8/4"])
        .assert()
        .code(2)
        .stderr(contains("not P/L"));
}

#[test]
fn the_html_page_is_self_contained_and_holds_the_four_figures() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    anchor_report(&["-q", "--html", html.to_str().unwrap()]).success();
    let text = std::fs::read_to_string(&html).unwrap();
    let page = scraper::Html::parse_document(&text);
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    let select = |css: &str| scraper::Selector::parse(css).unwrap();
    let figures: Vec<String> = page
        .select(&select("figure"))
        .map(|figure| figure.value().attr("id").unwrap().to_string())
        .collect();
    // The four figures of CERN's test_cpu_parallel study, and the speed ratio of the servers compared.
    assert_eq!(
        figures,
        [
            "fig1_raw",
            "fig2_speed",
            "fig3_capacity",
            "fig4_speedup",
            "fig5_ratio"
        ]
    );
    assert_eq!(page.select(&select("figure svg")).count(), 5);
    // Scaled by the page, not fixed in pixels.
    for svg in page.select(&select("figure svg")) {
        assert_eq!(svg.value().attr("width"), Some("100%"));
        assert!(svg.value().attr("viewBox").is_some());
    }
    assert_eq!(page.select(&select("script, link, img, iframe")).count(), 0);
    assert!(!text.contains("http://") || text.matches("http://").all(|_| text.contains("xmlns")));
    assert!(!text.contains("https://"));
    // Dashed P and L markers named after their series, and the recommended fits (over the
    // range fitted); RAC52 has no fit that describes its levels, so none is drawn for it.
    let speedup = page.select(&select("#fig4_speedup")).next().unwrap();
    let labels: Vec<String> = speedup
        .select(&select("text"))
        .map(|text| text.text().collect::<String>().trim().to_string())
        .collect();
    assert!(
        !labels
            .iter()
            .any(|text| text.starts_with("RAC52 ") && text.contains("fit"))
    );
    for label in [
        "RAC55 Amdahl fit, 1..16",
        "RAC54 USL fit, 1..8",
        "ideal (linear)",
        "RAC52 P=20",
        "RAC52 L=40",
        "RAC54 P=8",
        // Two series' marks at one worker count share a label.
        "RAC54 L=16; RAC55 P=16",
        "RAC55 L=32",
    ] {
        assert!(
            labels.iter().any(|text| text == label),
            "no '{label}' in {labels:?}"
        );
    }
    // The provenance of each series, and the headline under the title.
    let provenance: Vec<String> = page
        .select(&select("table"))
        .next()
        .unwrap()
        .select(&select("td:first-child"))
        .map(|cell| cell.text().collect())
        .collect();
    assert_eq!(provenance, ["RAC52", "RAC54", "RAC55"]);
    let summary: String = page
        .select(&select("p.summary"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(summary.starts_with("RAC55 is 2.59x ± 0.04 faster per worker than RAC52"));
}

#[test]
fn png_and_markdown_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("figures");
    let markdown = dir.path().join("report.md");
    // Without -q, report names what it wrote, with the number of figures.
    anchor_report(&[
        "--png",
        png.to_str().unwrap(),
        "--markdown",
        markdown.to_str().unwrap(),
    ])
    .success()
    .stderr(contains(format!(
        "corescale: wrote {} (5 PNG), {}",
        png.display(),
        markdown.display()
    )));
    assert_eq!(std::fs::read_dir(&png).unwrap().count(), 5);
    for figure in ["fig1_raw", "fig2_speed", "fig3_capacity", "fig4_speedup"] {
        let bytes = std::fs::read(png.join(format!("{figure}.png"))).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{figure} is a PNG");
        assert!(bytes.len() > 10_000, "{figure} has content");
        // 1600 x 900, from the IHDR chunk.
        let dimension = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!((dimension(16), dimension(20)), (1600, 900), "{figure}");
    }
    let text = std::fs::read_to_string(&markdown).unwrap();
    assert!(text.contains("## Findings"));
    // The PNGs are linked from the Markdown, relative to it.
    for figure in [
        "fig1_raw",
        "fig2_speed",
        "fig3_capacity",
        "fig4_speedup",
        "fig5_ratio",
    ] {
        assert!(
            text.contains(&format!("](figures/{figure}.png)")),
            "{figure}: {text}"
        );
    }
    assert!(text.contains("| RAC52 | "), "provenance: {text}");
    assert!(
        text.contains("| RAC55 | 2.05 | 2.25x ± 0.04 | 2.59x (2.24-2.81x) (1..16) |"),
        "{text}"
    );
}

#[test]
fn renderers_are_stable() {
    let terminal = anchor_report(&[]).success().get_output().stdout.clone();
    insta::assert_snapshot!("terminal", String::from_utf8(terminal).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let markdown = dir.path().join("report.md");
    anchor_report(&["-q", "--markdown", markdown.to_str().unwrap()]).success();
    insta::assert_snapshot!("markdown", std::fs::read_to_string(&markdown).unwrap());
}

/// Series that ran different jobs (another tool's loop, another job size, another workload)
/// are not compared by speed or capacity: they land in separate comparison groups and a
/// warning names the difference. README's own example (`report old.csv new.json`) included.
#[test]
fn series_of_different_jobs_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, args: &[&str]| {
        let json = dir.path().join(format!("{name}.json"));
        corescale()
            .args(["run", "-w", "1", "--repeat", "1", "-q", "--label", name])
            .args(args)
            .arg("-o")
            .arg(&json)
            .assert()
            .success();
        json
    };
    let big = run("big", &["cpu", "--job-size", "6M"]);
    let small = run("small", &["cpu", "--job-size", "2M"]);
    let memory = run(
        "mem",
        &["memory", "--array-size", "4M", "--job-size", "100K"],
    );
    let old = anchor("test_cpu_parallel_rust_RAC52.csv");
    let out = dir.path().join("analysis.json");
    let assert = corescale()
        .arg("report")
        .arg(&old)
        .args([&big, &small, &memory])
        .args(["--include-disturbed", "--json"])
        .arg(&out)
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let analysis = read_json(&out);
    assert!(
        analysis["comparisons"].as_array().unwrap().is_empty(),
        "nothing here ran the same job: {}",
        analysis["comparisons"]
    );
    let warnings: Vec<&str> = analysis["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|warning| warning.as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(
            |warning| warning.contains("test_cpu_parallel, its own loop")
                && warning.contains("corescale cpu, 6000000 iterations per job")
                && warning.contains("compare their speedup and efficiency, not their speed")
        ),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|warning| warning.contains("6000000") && warning.contains("2000000")),
        "different job sizes are named: {warnings:?}"
    );
    for finding in analysis["findings"].as_array().unwrap() {
        let finding = finding.as_str().unwrap();
        assert!(!finding.contains("faster than"), "{finding}");
    }
    assert!(!printed.contains("faster than"), "{printed}");
    // The same job from a JSON and its CSV still compares.
    let csv = dir.path().join("big.csv");
    corescale()
        .args([
            "run", "-w", "1", "--repeat", "1", "-q", "--label", "big2", "cpu",
        ])
        .args(["--job-size", "6M", "-o"])
        .arg(&csv)
        .assert()
        .success();
    corescale()
        .arg("report")
        .args([&big, &csv])
        .args(["--include-disturbed", "--json"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(read_json(&out)["comparisons"].as_array().unwrap().len(), 1);
}

/// A negative SMT yield is said as no gain, never as "SMT adds -33%".
#[test]
fn smt_that_loses_capacity_is_called_no_gain() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("smt.csv");
    // 2 cores, 4 threads: 60*2/10 = 12 jobs/min at 2 workers, 60*4/30 = 8 at 4.
    std::fs::write(
        &csv,
        "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n1,10,10,0.1\n2,10,10,0.1\n3,25,25,0.2\n4,30,30,0.3\n",
    )
    .unwrap();
    corescale()
        .arg("report")
        .arg(&csv)
        .args(["--cores", "smt=2/4", "--wide"])
        .assert()
        .success()
        .stdout(contains(
            "SMT brings no gain: capacity at 4 workers is 33% below capacity at 2",
        ))
        .stdout(predicates::prelude::PredicateBooleanExt::not(contains(
            "SMT adds -",
        )));
}

#[test]
fn the_terminal_summary_fits_80_columns_unless_wide() {
    let narrow = anchor_report(&[]).success().get_output().stdout.clone();
    let narrow = String::from_utf8(narrow).unwrap();
    for line in narrow.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // Sentences wrap at spaces, never inside a word or number.
    assert!(narrow.contains("(2.25x single-threaded)") || narrow.contains("single-threaded);"));
    let wide = anchor_report(&["--wide"])
        .success()
        .get_output()
        .stdout
        .clone();
    let wide = String::from_utf8(wide).unwrap();
    assert!(wide.lines().any(|line| line.chars().count() > 80));
    assert!(wide.contains("per cost"));
}

/// Ten servers of a hundred levels each still make a page under 1 MB (sizes do not depend on
/// the machine, so this is a test, not a bench).
#[test]
fn the_page_for_ten_series_of_a_hundred_levels_stays_under_a_megabyte() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = corescale();
    command.arg("report");
    for index in 0..10 {
        let (sigma, kappa) = (0.01 + 0.004 * index as f64, 0.00005 * (index + 1) as f64);
        let mut text = String::from(
            "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n",
        );
        for workers in 1..=100 {
            let n = workers as f64;
            let time = 30.0
                * (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
                * (1.0 + 0.005 * ((workers * 7 + index) % 5) as f64);
            text.push_str(&format!(
                "{workers},{time:.3},{time:.3},{:.3}\n",
                time * 0.01
            ));
        }
        let path = dir.path().join(format!("server{index:02}.csv"));
        std::fs::write(&path, text).unwrap();
        command
            .arg(&path)
            .args(["--cores", &format!("server{index:02}=32/64")]);
    }
    let html = dir.path().join("report.html");
    command.args(["-q", "--html"]).arg(&html).assert().success();
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size < 1_000_000, "{size} bytes");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(!text.contains("https://") && !text.contains("<script"));
}

/// A corescale run carries its provenance into the report: host, CPU, layout, tool version,
/// workload, pinning, verdict and command line.
#[test]
fn a_corescale_run_brings_its_provenance_to_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    corescale()
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
        .args(["--label", "box", "-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    let (html, markdown) = (dir.path().join("r.html"), dir.path().join("r.md"));
    // Kept if this busy host disturbed the level: the provenance is what is checked.
    corescale()
        .args(["report", "-q", "--include-disturbed", "--html"])
        .arg(&html)
        .arg("--markdown")
        .arg(&markdown)
        .arg(&json)
        .assert()
        .success();
    let page = scraper::Html::parse_document(&std::fs::read_to_string(&html).unwrap());
    let select = |css: &str| scraper::Selector::parse(css).unwrap();
    // The provenance tables, the hosts' and the runs': where the series came from (after the
    // results on the page), each row named by its series.
    let mut headers: Vec<String> = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    for table in page.select(&select("table")).filter(|table| {
        table
            .select(&select("th"))
            .any(|cell| ["file", "tool"].contains(&cell.text().collect::<String>().as_str()))
    }) {
        headers.extend(
            table
                .select(&select("th"))
                .map(|cell| cell.text().collect()),
        );
        cells.extend(
            table
                .select(&select("td"))
                .map(|cell| cell.text().collect()),
        );
    }
    assert_eq!(
        headers.iter().filter(|header| *header == "series").count(),
        2
    );
    let cell = |header: &str| {
        let column = headers.iter().position(|name| name == header).unwrap();
        cells[column].clone()
    };
    assert_eq!(cell("series"), "box");
    assert_eq!(cell("file"), "run.json");
    assert!(cell("tool").starts_with("corescale "), "{cells:?}");
    assert!(
        cell("workload").starts_with("corescale cpu, 20000000 "),
        "{cells:?}"
    );
    assert!(
        cell("sockets x cores x threads").contains(" x "),
        "{cells:?}"
    );
    assert!(cell("run started").ends_with(" UTC"), "{cells:?}");
    // A corescale run judges every level: clean, or disturbed at some of them.
    let verdict = cell("verdict");
    assert!(
        verdict == "clean" || verdict.starts_with("disturbed at "),
        "{verdict}"
    );
    assert_ne!(cell("hypervisor"), "-");
    let command: String = page
        .select(&select("details code"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(command.contains("run cpu -w 1"), "{command}");
    let text = std::fs::read_to_string(&markdown).unwrap();
    assert!(text.contains("- box ran `"), "{text}");
}

/// `-o` picks each output's format by its name, as `run -o` does; the format flags stay as
/// aliases and give the same files.
#[test]
fn outputs_are_chosen_by_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let folder = format!("{}/", path("figures").display());
    anchor_report_command()
        .args(["-q", "-o"])
        .arg(path("report.html"))
        .arg("-o")
        .arg(path("report.md"))
        .arg("-o")
        .arg(path("analysis.json"))
        .args(["-o", &folder])
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(path("report.html"))
            .unwrap()
            .contains("<svg")
    );
    let markdown = std::fs::read_to_string(path("report.md")).unwrap();
    assert!(
        markdown.contains("](figures/"),
        "the Markdown links the PNG folder"
    );
    let pngs = std::fs::read_dir(path("figures")).unwrap().count();
    assert!(pngs >= 4, "{pngs} PNG files");
    let by_name = read_json(&path("analysis.json"));
    anchor_report_command()
        .args(["-q", "--json"])
        .arg(path("alias.json"))
        .assert()
        .success();
    assert_eq!(by_name["series"], read_json(&path("alias.json"))["series"]);
    anchor_report_command()
        .args(["-q", "-o"])
        .arg(path("report.pdf"))
        .assert()
        .code(2)
        .stderr(contains(
            "name it *.html, *.md or *.json, or end it with / for a folder",
        ));
}

/// A db document written before `workload_rate` and `summary.merit` existed keeps the
/// database's rate only in `workload_figures.db_lio_per_s`: `report` still draws that rate,
/// and an error about it names the field it was read from.
#[test]
fn older_documents_are_read_by_their_own_field_names() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    corescale()
        .args([
            "run",
            "cpu",
            "--duration",
            "100ms",
            "--sweep",
            "1",
            "--repeat",
            "1",
            "-q",
            "-o",
        ])
        .arg(&json)
        .assert()
        .success();
    let mut document = read_json(&json);
    let level = &mut document["levels"][0];
    level["summary"].as_object_mut().unwrap().remove("merit");
    assert!(level.get("workload_rate").is_none());
    level["workload_figures"] = serde_json::json!({ "db_lio_per_s": 5000.0 });
    std::fs::write(&json, document.to_string()).unwrap();
    let analysis = dir.path().join("analysis.json");
    corescale()
        .arg("report")
        .arg(&json)
        .args(["-q", "--include-disturbed", "--json"])
        .arg(&analysis)
        .assert()
        .success();
    assert_eq!(
        read_json(&analysis)["series"][0]["levels"][0]["raw"],
        5000.0
    );
    document["levels"][0]["workload_figures"]["db_lio_per_s"] = serde_json::json!(-1.0);
    std::fs::write(&json, document.to_string()).unwrap();
    corescale()
        .arg("report")
        .arg(&json)
        .assert()
        .code(1)
        .stderr(contains(
            "levels[0].workload_figures.db_lio_per_s: the measurement -1",
        ));
}

/// The page opens with its results (summary, findings, figures, tables); the notes on the
/// fits sit under the fits table, where the series came from follows, and the warnings come
/// last, collapsed under their count. The terminal lists a few warnings and counts the rest.
#[test]
fn the_page_puts_results_before_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    anchor_report(&["-q", "--html", page.to_str().unwrap()]).success();
    let html = std::fs::read_to_string(&page).unwrap();
    let at = |html: &str, needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("no {needle} in the page"))
    };
    assert!(at(&html, "class=\"summary\"") < at(&html, "<h2>Findings"));
    assert!(at(&html, "<h2>Findings") < at(&html, "<figure"));
    assert!(at(&html, "<figure") < at(&html, "<h2>Scalability fits"));
    // Each rejected fit says why, and the notes under the table say what that means.
    assert!(html.contains("<td>no: not its shape</td>"));
    assert!(!html.contains("poor fit"));
    let notes = at(&html, "<ul class=\"notes\">");
    assert!(at(&html, "<h2>Scalability fits") < notes);
    assert!(html[notes..].starts_with(
        "<ul class=\"notes\"><li>no: not its shape: residuals of one sign run in long streaks"
    ));
    assert!(at(&html, "RAC52: scaling bends at 20 workers") > notes);
    assert!(notes < at(&html, "<th>file</th>"));
    // The anchors' only diagnostics are on their fits: no warnings section.
    assert!(!html.contains("<h2>Warnings"), "{html}");

    // Two series of two levels each have warnings, last, under their count.
    let header = "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n";
    let mut files = Vec::new();
    for (server, time) in [("a", 30.0), ("b", 40.0), ("c", 50.0), ("d", 60.0)] {
        let file = dir.path().join(format!("{server}.csv"));
        std::fs::write(
            &file,
            format!("{header}1,{time},{time},0.1\n2,{time},{time},0.1\n"),
        )
        .unwrap();
        files.push(file);
    }
    let small = dir.path().join("small.html");
    let terminal = corescale()
        .arg("report")
        .args(&files)
        .arg("--html")
        .arg(&small)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let html = std::fs::read_to_string(&small).unwrap();
    assert!(at(&html, "<th>file</th>") < at(&html, "<h2>Warnings"));
    assert!(
        html[at(&html, "<h2>Warnings")..]
            .starts_with("<h2>Warnings</h2><details><summary>12 warnings"),
        "{}",
        &html[at(&html, "<h2>Warnings")..][..120]
    );
    let terminal = String::from_utf8(terminal).unwrap();
    assert_eq!(
        terminal.matches("\n- ").count() - findings(&terminal),
        5,
        "{terminal}"
    );
    assert!(
        terminal.contains("... and 7 more warnings: --verbose prints all 12"),
        "{terminal}"
    );
    let verbose = corescale()
        .arg("report")
        .args(&files)
        .arg("--verbose")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let verbose = String::from_utf8(verbose).unwrap();
    assert_eq!(
        verbose.matches("\n- ").count() - findings(&verbose),
        12,
        "{verbose}"
    );
}

/// How many findings a terminal summary lists.
fn findings(terminal: &str) -> usize {
    terminal.split("\nFindings\n").nth(1).map_or(0, |rest| {
        rest.split("\n\n")
            .next()
            .unwrap_or("")
            .lines()
            .filter(|line| line.starts_with("- "))
            .count()
    })
}

/// Every figure lays itself out: no label over another, over the legend or off the figure,
/// and no point under the legend, on the anchor page and on runs of one, two and three levels
/// (one series and two).
#[test]
fn figures_lay_out_their_labels_without_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let page = |name: &str, command: &mut assert_cmd::Command| {
        let html = dir.path().join(format!("{name}.html"));
        command.args(["-q", "--html"]).arg(&html).assert().success();
        std::fs::read_to_string(&html).unwrap()
    };
    let anchors = page("anchor", &mut anchor_report_command());
    assert_eq!(
        common::layout::assert_figures_lay_out(&anchors, "anchors"),
        5
    );
    // A database run at set rates: latency, rate and over-time figures.
    let rates = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/inputs/importers/db-rates.json");
    let db = page("db", corescale().arg("report").arg(rates));
    assert!(common::layout::assert_figures_lay_out(&db, "a db run at set rates") >= 8);
    let header = "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n";
    for levels in 1..=3 {
        let mut files = Vec::new();
        for (server, time) in [("small", 30.0), ("large", 45.0)] {
            let rows: String = (1..=levels)
                .map(|workers| {
                    let time = time * (1.0 + 0.1 * (workers - 1) as f64);
                    format!("{workers},{time:.2},{time:.2},0.50\n")
                })
                .collect();
            let file = dir.path().join(format!("{server}{levels}.csv"));
            std::fs::write(&file, format!("{header}{rows}")).unwrap();
            files.push(file);
        }
        let one = page(
            &format!("one{levels}"),
            corescale().arg("report").arg(&files[0]),
        );
        let what = format!("one series of {levels} level(s)");
        assert!(common::layout::assert_figures_lay_out(&one, &what) >= 4);
        let two = page(
            &format!("two{levels}"),
            corescale()
                .arg("report")
                .args(&files)
                .args(["--cores", &format!("small{levels}=2/4")]),
        );
        let what = format!("two series of {levels} level(s)");
        assert!(common::layout::assert_figures_lay_out(&two, &what) >= 4);
    }
}

/// The layout check itself fails on what it looks for: a squeezed plot, two labels over each
/// other, and a point under the legend.
#[test]
fn the_layout_check_finds_overlaps() {
    let figure = |body: &str| {
        format!(
            "<html><body><figure id=\"f\"><svg viewBox=\"0 0 800 450\">{body}</svg></figure></body></html>"
        )
    };
    let text = |x: u32, y: u32, words: &str| {
        format!("<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" font-size=\"14\">{words}</text>")
    };
    // The y axis' labels, right-aligned: a plot from y = `top` to `bottom`.
    let axis = |top: u32, bottom: u32| {
        [top, bottom]
            .map(|y| {
                format!(
                    "<text x=\"80\" y=\"{y}\" dy=\"0.5ex\" text-anchor=\"end\" font-size=\"14\">{y}</text>"
                )
            })
            .concat()
    };
    let squeezed = figure(&axis(300, 400));
    let squeezing =
        std::panic::catch_unwind(|| common::layout::assert_figures_lay_out(&squeezed, "squeezed"));
    assert!(squeezing.is_err(), "a plot squeezed to a sliver passed");
    let figure = |body: &str| figure(&(axis(60, 400) + body));
    let apart = figure(&(text(100, 20, "RAC55 P=16") + &text(300, 20, "RAC52 P=20")));
    assert_eq!(common::layout::assert_figures_lay_out(&apart, "apart"), 1);
    let over = figure(&(text(100, 20, "RAC55 P=16") + &text(150, 25, "RAC52 P=20")));
    let overlapping =
        std::panic::catch_unwind(|| common::layout::assert_figures_lay_out(&over, "over"));
    assert!(overlapping.is_err(), "overlapping labels passed");
    let legend =
        "<rect x=\"600\" y=\"20\" width=\"150\" height=\"60\" fill=\"none\" stroke=\"#C8C8C8\"/>";
    let hidden =
        figure(&(text(100, 20, "RAC55") + legend + "<circle cx=\"700\" cy=\"50\" r=\"3\"/>"));
    let hiding =
        std::panic::catch_unwind(|| common::layout::assert_figures_lay_out(&hidden, "hidden"));
    assert!(hiding.is_err(), "a point under the legend passed");
}

/// Two database engines measured on one host (real runs of this machine, made as
/// tests/fixtures/engines/README.md says): PostgreSQL pipelined without updates, MariaDB one
/// statement at a time with 20% updates. They are different jobs: no speed, capacity or p99
/// comparison joins them, the warning names both engines, and the fleet keeps them apart as
/// two rows of host "vm", never one host's history; two runs of the one PostgreSQL job are
/// compared with each other and are that host's history.
#[test]
fn two_database_engines_on_one_host_are_two_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = |name: &str| format!("tests/fixtures/engines/{name}.json");
    let out = dir.path().join("analysis.json");
    let assert = corescale()
        .arg("report")
        .args([fixture("pg"), fixture("pg-again"), fixture("mariadb")])
        .args(["--include-disturbed", "--json"])
        .arg(&out)
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let analysis = read_json(&out);
    let comparisons = analysis["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 1, "{comparisons:?}");
    let compared: Vec<&str> = comparisons[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert_eq!(compared, ["vm (pg)", "vm (pg-again)"]);
    let warning = analysis["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|warning| warning.as_str())
        .find(|warning| warning.contains("ran different jobs"))
        .unwrap_or_else(|| panic!("no different-jobs warning: {}", analysis["warnings"]));
    for named in [
        "PostgreSQL 15",
        "MariaDB 10.11",
        "0% updates",
        "20% updates",
        "32 statements per round trip",
        "1 statement per round trip",
    ] {
        assert!(warning.contains(named), "{named} not in: {warning}");
    }
    assert!(!printed.contains("vm (mariadb) p99"), "{printed}");
    let hosts = analysis["fleet"]["hosts"].as_array().unwrap();
    let runs: Vec<u64> = hosts
        .iter()
        .map(|host| host["runs"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, [2, 1], "{hosts:?}");
    assert!(hosts[0]["host"].as_str().unwrap().contains("PostgreSQL"));
}

/// Series named after long file names (no --label) still give tables within 80 columns: the
/// names are shown by a key ([1], [2]) under each table that needs it, the fits table
/// included (it was 101 columns wide).
#[test]
fn long_series_names_keep_every_table_within_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "the_database_server_in_the_second_rack_measured_last_tuesday",
        "the_new_database_server_we_would_like_to_buy_next_quarter",
    ];
    for (name, anchor_file) in names.iter().zip([
        "test_cpu_parallel_rust_RAC52.csv",
        "test_cpu_parallel_rust_RAC55.csv",
    ]) {
        std::fs::copy(anchor(anchor_file), dir.path().join(format!("{name}.csv"))).unwrap();
    }
    let output = corescale()
        .arg("report")
        .args(names.map(|name| dir.path().join(format!("{name}.csv"))))
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&output.get_output().stdout).into_owned();
    for line in printed.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(
        printed.contains(&format!("  [1] {}", names[0])),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("  [2] {}", names[1])),
        "{printed}"
    );
    // The fits table keeps its coefficients, by the key.
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("[2]") && line.contains("Amdahl to knee")),
        "{printed}"
    );
}

/// A database server on another host than the client: the client's cores are not the
/// server's, so the series has none until --nodes (each node's `corescale host --json`)
/// or --cores gives them; --nodes sums a cluster's nodes and counts them.
#[test]
fn a_remote_servers_cores_come_from_its_nodes_host_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut document = read_json(std::path::Path::new("tests/fixtures/engines/pg.json"));
    document["workload"]["server_on_this_host"] = Value::Bool(false);
    let run = dir.path().join("pg-remote.json");
    std::fs::write(&run, document.to_string()).unwrap();
    let series = |analysis: &Value| analysis["series"][0]["series"].clone();

    let alone = analysis_of(&[run.as_os_str()], dir.path());
    assert!(
        series(&alone)["physical_cores"].is_null(),
        "{}",
        series(&alone)
    );
    assert!(
        alone["warnings"]
            .to_string()
            .contains("core counts unknown"),
        "{}",
        alone["warnings"]
    );

    // Two nodes: this host as `corescale host --json` writes it, and a run's JSON from a
    // node with one core more than this host and two CPUs a core.
    let here = corescale().args(["host", "--json"]).output().unwrap();
    assert!(here.status.success());
    let node1 = dir.path().join("node1.json");
    std::fs::write(&node1, &here.stdout).unwrap();
    let mut bigger = document.clone();
    bigger["host"]["label"] = Value::from("node2");
    let this_host: Value = serde_json::from_slice(&here.stdout).unwrap();
    let cores = this_host["topology"]["physical_cores"].as_u64().unwrap() + 1;
    bigger["host"]["topology"]["physical_cores"] = Value::from(cores);
    bigger["host"]["topology"]["logical_cpus"] = Value::from(2 * cores);
    let node2 = dir.path().join("node2.json");
    std::fs::write(&node2, bigger.to_string()).unwrap();
    let name = document["host"]["label"].as_str().unwrap().to_string();
    let nodes = format!("{name}={},{}", node1.display(), node2.display());
    let summed = analysis_of(
        &[run.as_os_str(), "--nodes".as_ref(), nodes.as_ref()],
        dir.path(),
    );
    let topology = &this_host["topology"];
    assert_eq!(
        series(&summed)["physical_cores"].as_u64(),
        Some(topology["physical_cores"].as_u64().unwrap() + cores)
    );
    assert_eq!(
        series(&summed)["logical_cpus"].as_u64(),
        Some(topology["logical_cpus"].as_u64().unwrap() + 2 * cores)
    );
    assert_eq!(series(&summed)["nodes"].as_u64(), Some(2));
    assert!(
        summed["warnings"]
            .to_string()
            .contains(&format!("node2 {cores}/{}", 2 * cores)),
        "{}",
        summed["warnings"]
    );

    // Both --cores and --nodes for one series, an unknown series, a file that is no host.
    corescale()
        .args(["report", "-q"])
        .arg(&run)
        .args(["--nodes", &nodes, "--cores", &format!("{name}=4/8")])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("give one"));
    corescale()
        .args(["report", "-q"])
        .arg(&run)
        .args(["--nodes", &format!("elsewhere={}", node1.display())])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("none of the series"));
    corescale()
        .args(["report", "-q"])
        .arg(&run)
        .args([
            "--nodes",
            &format!("{name}=tests/fixtures/engines/missing.json"),
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "'tests/fixtures/engines/missing.json' does not exist: check the path",
        ));
}

/// `report`'s analysis of `args`, written in `dir`.
fn analysis_of(args: &[&std::ffi::OsStr], dir: &std::path::Path) -> Value {
    let analysis = dir.join("analysis.json");
    corescale()
        .args(["report", "-q", "--json"])
        .arg(&analysis)
        .args(args)
        .assert()
        .success();
    read_json(&analysis)
}

/// Capacity that peaks at 2 workers and falls 27% at 3 (issue 49's short real sweep): the
/// sentence says the peak and the fall, never a plateau at the lower level.
#[test]
fn a_fall_past_the_peak_is_said_and_never_called_a_plateau() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("peak.csv");
    std::fs::write(
        &sweep,
        "Num_concurrent_workers,LIO\n1,1250000\n2,2320000\n3,1700000\n",
    )
    .unwrap();
    let output = corescale()
        .args(["report", "--wide"])
        .arg(&sweep)
        .args(["-o"])
        .arg(dir.path().join("analysis.json"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&output.get_output().stdout).into_owned();
    assert!(
        stdout.contains("capacity peaks at 2 workers") && stdout.contains("falls 27% by 3 workers"),
        "{stdout}"
    );
    assert!(!stdout.contains("plateau at 3 workers"), "{stdout}");
    let analysis: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("analysis.json")).unwrap())
            .unwrap();
    let saturation = &analysis["series"][0]["saturation"];
    assert_eq!(saturation["workers"], 2, "{saturation}");
    assert_eq!(saturation["fall"]["to_workers"], 3, "{saturation}");
}
