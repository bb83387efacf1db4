//! `report` timed end to end, rendering every output (terminal, JSON, Markdown, HTML, PNG):
//! 10 series of 100 and of 512 levels (target: under 1 s), and one series of 100,000 rows, as
//! a hostile or generated input may be (target: under 2 s) (`cargo bench --bench report`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use corescale::cli::ReportArgs;
use corescale::commands::report;

/// A USL-shaped job-time series with a little deterministic wobble.
fn write_series(dir: &Path, index: usize, levels: usize) -> PathBuf {
    let (sigma, kappa) = (0.01 + 0.004 * index as f64, 0.00005 * (index + 1) as f64);
    let mut text = String::from(
        "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)\n",
    );
    for workers in 1..=levels {
        let n = workers as f64;
        let time = 30.0
            * (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
            * (1.0 + 0.005 * ((workers * 7 + index) % 5) as f64);
        text.push_str(&format!(
            "{workers},{time:.3},{time:.3},{:.3}\n",
            time * 0.01
        ));
    }
    let path = dir.join(format!("server{index:02}.csv"));
    std::fs::write(&path, text).expect("writing a series");
    path
}

fn run(series: usize, levels: usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let files: Vec<PathBuf> = (0..series)
        .map(|index| write_series(dir.path(), index, levels))
        .collect();
    let args = ReportArgs {
        files,
        labels: Vec::new(),
        levels: Vec::new(),
        cores: (0..series)
            .map(|index| (format!("server{index:02}"), (32, 64)))
            .collect(),
        nodes: Vec::new(),
        costs: Vec::new(),
        warehouses: Vec::new(),
        outputs: Vec::new(),
        html: Some(dir.path().join("report.html")),
        png: Some(dir.path().join("png")),
        markdown: Some(dir.path().join("report.md")),
        json: Some(dir.path().join("analysis.json")),
        quiet: true,
        include_disturbed: false,
        accept_truncated: false,
        wide: false,
        verbose: false,
        slo: None,
    };
    let began = Instant::now();
    report::execute(&args).expect("report runs");
    let elapsed = began.elapsed().as_secs_f64();
    let size = |name: &str| std::fs::metadata(dir.path().join(name)).map_or(0, |meta| meta.len());
    let pngs = std::fs::read_dir(dir.path().join("png")).map_or(0, |entries| entries.count());
    println!(
        "report over {series} series x {levels} levels, all outputs: {elapsed:.3} s (target < {} s)",
        if levels <= 512 { 1 } else { 2 }
    );
    println!(
        "  wrote {pngs} PNG files, HTML {} bytes (target for 10 x 100: under 1 MB), JSON {} bytes, Markdown {} bytes",
        size("report.html"),
        size("analysis.json"),
        size("report.md")
    );
    // The four figures, the speed ratio when series are compared, and the fleet's chart when
    // they share core counts.
    assert!(
        pngs >= if series > 1 { 5 } else { 4 },
        "every figure was drawn: {pngs}"
    );
}

/// `report DIR` over `hosts` x `runs` corescale results made from a real run's document.
fn run_fleet(hosts: usize, runs: usize) {
    let template: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run/cpu-template.json"),
        )
        .expect("the template result"),
    )
    .expect("JSON");
    let dir = tempfile::tempdir().expect("a temporary directory");
    for host in 0..hosts {
        for run in 0..runs {
            let mut document = template.clone();
            let name = format!("db{host:02}");
            document["host"]["label"] = serde_json::Value::from(name.clone());
            document["started_at"] =
                serde_json::Value::from(format!("2026-11-{:02}T10:00:00Z", run + 1));
            let slower = 1.0 + 0.001 * ((host * 7 + run * 3) % 11) as f64;
            for level in document["levels"].as_array_mut().expect("levels") {
                let times = &mut level["summary"]["job_time_s"];
                for field in ["median", "mean", "min", "max"] {
                    let value = times[field].as_f64().expect("a time") * slower;
                    times[field] = serde_json::Value::from(value);
                }
            }
            let folder = dir.path().join("results").join(&name);
            std::fs::create_dir_all(&folder).expect("a folder");
            std::fs::write(folder.join(format!("run{run}.json")), document.to_string())
                .expect("a result");
        }
    }
    let args = ReportArgs {
        files: vec![dir.path().join("results")],
        labels: Vec::new(),
        levels: Vec::new(),
        cores: Vec::new(),
        nodes: Vec::new(),
        costs: Vec::new(),
        warehouses: Vec::new(),
        outputs: Vec::new(),
        html: Some(dir.path().join("report.html")),
        png: None,
        markdown: None,
        json: Some(dir.path().join("analysis.json")),
        quiet: true,
        include_disturbed: true,
        accept_truncated: false,
        wide: false,
        verbose: false,
        slo: None,
    };
    let began = Instant::now();
    report::execute(&args).expect("report runs");
    println!(
        "report DIR over {} results ({hosts} hosts x {runs} runs), HTML and JSON: {:.3} s (target < 2 s)",
        hosts * runs,
        began.elapsed().as_secs_f64()
    );
}

fn main() {
    run(10, 100);
    run(10, 512);
    run(1, 100_000);
    run_fleet(50, 10);
}
