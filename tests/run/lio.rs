//! The SLOB-method engine: rows really read, no lost updates, hit ratios and reads that add
//! up, consistent latch counters — on the engine itself and through the binary.

use crate::common;

use common::{corescale, read_json};
use corescale::workload::lio::engine::{Engine, EngineOptions, PhysicalOptions, SessionIo};
use corescale::workload::lio::layout::Layout;
use corescale::workload::lio::storage::AlignedBlock;
use hdrhistogram::Histogram;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

const BLOCK: usize = 8192;

fn engine(rows: u64, schemas: u64, physical: Option<PhysicalOptions>) -> Engine {
    Engine::build(&EngineOptions {
        block_bytes: BLOCK,
        rows_per_schema: rows,
        schemas,
        physical,
    })
    .unwrap()
}

/// Runs one statement with a fresh private buffer.
fn run(
    engine: &Engine,
    schema: u64,
    key: u64,
    work_unit: u64,
    update: bool,
) -> (u64, u64, u64, u64) {
    let mut block = AlignedBlock::new(BLOCK);
    let mut histogram = Histogram::new(3).unwrap();
    let mut io = SessionIo {
        block: block.bytes(),
        read_ns: &mut histogram,
    };
    let counts = engine
        .statement(schema, key, work_unit, update, &mut io)
        .unwrap();
    (counts.scratch_sum, counts.lio, counts.misses, counts.reads)
}

fn loaded_sum(keys: std::ops::Range<u64>) -> u64 {
    keys.map(Layout::initial_scratch).sum()
}

#[test]
fn statements_read_the_rows_the_loader_wrote() {
    // 3000 rows: three index leaves under a root, so ranges cross leaves.
    let engine = engine(3000, 2, None);
    for (key, work_unit) in [(0, 64), (1000, 64), (1010, 64), (2990, 10), (0, 3000)] {
        let (sum, lio, misses, _) = run(&engine, 1, key, work_unit, false);
        assert_eq!(sum, loaded_sum(key..key + work_unit), "key {key}");
        // root + first leaf + each further leaf + one table block per key
        let leaves = (key + work_unit - 1) / engine.layout.fanout - key / engine.layout.fanout + 1;
        assert_eq!(lio, 1 + leaves + work_unit);
        assert_eq!(misses, 0, "everything is cached in lio");
    }
}

fn concurrent_updates(engine: &Engine, sessions: u64, statements: u64, work_unit: u64) {
    let rows = engine.layout.rows;
    std::thread::scope(|scope| {
        for session in 0..sessions {
            scope.spawn(move || {
                let mut block = AlignedBlock::new(BLOCK);
                let mut histogram = Histogram::new(3).unwrap();
                let mut io = SessionIo {
                    block: block.bytes(),
                    read_ns: &mut histogram,
                };
                for statement in 0..statements {
                    // Overlapping ranges from both sessions, to collide on the same rows.
                    let key = (statement * 37 + session * 11) % (rows - work_unit);
                    engine.statement(0, key, work_unit, true, &mut io).unwrap();
                }
            });
        }
    });
    let (total, ..) = run(engine, 0, 0, rows, false);
    assert_eq!(
        total,
        loaded_sum(0..rows) + sessions * statements * work_unit,
        "every update was kept"
    );
}

#[test]
fn concurrent_updates_are_never_lost() {
    concurrent_updates(&engine(500, 1, None), 2, 3000, 32);
}

#[test]
fn updates_survive_eviction_and_write_back() {
    let dir = tempfile::tempdir().unwrap();
    // A cache of 40 buffers over 600 blocks: updated rows are evicted, written back, re-read.
    let engine = engine(
        600,
        1,
        Some(PhysicalOptions {
            cache_blocks: 40,
            data_dir: dir.path().to_path_buf(),
            direct_path: false,
        }),
    );
    concurrent_updates(&engine, 2, 400, 16);
}

#[test]
fn in_pio_every_miss_is_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(
        2000,
        1,
        Some(PhysicalOptions {
            cache_blocks: 100,
            data_dir: dir.path().to_path_buf(),
            direct_path: false,
        }),
    );
    let (mut misses, mut reads, mut lio) = (0, 0, 0);
    for key in (0..1900).step_by(97) {
        let (sum, visits, missed, read) = run(&engine, 0, key, 64, false);
        assert_eq!(sum, loaded_sum(key..key + 64));
        misses += missed;
        reads += read;
        lio += visits;
    }
    assert_eq!(misses, reads);
    assert!(
        misses > 0 && misses < lio,
        "{misses} misses of {lio} visits"
    );
}

#[test]
fn direct_path_reads_the_same_rows_without_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(
        3000,
        2,
        Some(PhysicalOptions {
            cache_blocks: 16,
            data_dir: dir.path().to_path_buf(),
            direct_path: true,
        }),
    );
    let (sum, lio, misses, reads) = run(&engine, 1, 990, 64, false);
    assert_eq!(sum, loaded_sum(990..1054));
    assert_eq!((lio, misses), (0, 0), "no cache visits on the direct path");
    // root + two leaves + 64 table blocks
    assert_eq!(reads, 1 + 2 + 64);
}

fn figures(path: &std::path::Path) -> Vec<Value> {
    let document = read_json(path);
    document["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| level["workload_figures"].clone())
        .collect()
}

#[test]
fn a_lio_run_reports_consistent_figures() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lio.json");
    corescale()
        .args([
            "run",
            "lio",
            "--sweep",
            "1,2",
            "--scale",
            "2000",
            "--duration",
            "300ms",
        ])
        .args([
            "--repeat",
            "1",
            "--single-schema",
            "--hotspot",
            "90%",
            "--update-pct",
            "10%",
        ])
        .args(["-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    for level in figures(&json) {
        let get = |name: &str| level[name].as_f64().unwrap_or_else(|| panic!("no {name}"));
        assert_eq!(get("cache_hit_ratio"), 1.0);
        assert!(get("lio") > 0.0 && get("lio_per_s") > 0.0 && get("lio_per_cpu_s") > 0.0);
        assert_eq!(
            get("latch_gets"),
            get("lio"),
            "one chain latch get per visit"
        );
        assert!(get("latch_misses") <= get("latch_gets"));
        assert!(get("latch_sleeps") <= get("latch_misses"));
        assert!(get("updates") > 0.0 && get("updates") < get("statements"));
    }
}

#[test]
fn a_pio_run_counts_reads_and_their_latency() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pio.json");
    corescale()
        .args([
            "run",
            "pio",
            "-w",
            "2",
            "--scale",
            "4M",
            "--cache-size",
            "512K",
        ])
        .args(["--duration", "300ms", "--repeat", "1", "--data-dir"])
        .arg(dir.path())
        .arg("-o")
        .arg(&json)
        .assert()
        .success()
        // The run table shows SLOB's figures beside the rate: hit ratio, PIO/s, read p99 (in
        // us or ms, whichever gives the column 1 to 4 digits).
        .stdout(
            contains("hit %")
                .and(contains("PIO/s"))
                .and(contains("p99 us").or(contains("p99 ms"))),
        );
    let level = &figures(&json)[0];
    let get = |name: &str| level[name].as_f64().unwrap_or_else(|| panic!("no {name}"));
    assert_eq!(get("pio"), get("cache_misses"));
    assert!(get("cache_hit_ratio") < 1.0);
    assert!(get("read_us_p50") > 0.0 && get("read_us_p50") <= get("read_us_p99"));
    // `report` tables them per level and draws PIO/s and the hit ratio against workers.
    let markdown = dir.path().join("pio.md");
    let html = dir.path().join("pio.html");
    corescale()
        .arg("report")
        .arg(&json)
        .args(["--include-disturbed", "-q", "--markdown"])
        .arg(&markdown)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    let row = markdown
        .lines()
        .skip_while(|line| !line.ends_with(": buffer cache"))
        .find(|line| line.starts_with("| 2 |"))
        .unwrap_or_else(|| panic!("no buffer cache table: {markdown}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    // workers, hit ratio, latch misses per 1k gets, PIO/s, read p99: all measured.
    assert_eq!(cells.len(), 5, "{row}");
    assert!(cells.iter().all(|cell| *cell != "-"), "{row}");
    assert!(cells[1].ends_with('%') && cells[1] != "100.0000%", "{row}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Physical reads per second") && page.contains("Buffer cache hit ratio"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".dat"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the data file is removed: {leftovers:?}"
    );
}

#[test]
fn slob_flags_belong_to_lio_and_pio() {
    corescale()
        .args(["run", "cpu", "--single-schema"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--single-schema applies to the lio and pio workloads",
        ));
    corescale()
        .args(["run", "lio", "--work-unit", "100", "--scale", "50"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--work-unit must be between 1 and the rows per schema (50)",
        ));
}

#[test]
fn a_lio_level_whose_data_fits_in_the_cpu_cache_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("small.json");
    corescale()
        .args([
            "run",
            "lio",
            "-w",
            "1",
            "--scale",
            "256",
            "--duration",
            "100ms",
        ])
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    let document = read_json(&json);
    let last_level_cache = document["host"]["topology"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|cache| cache["name"] != "L1i")
        .max_by_key(|cache| cache["name"].as_str().unwrap().to_string())
        .map(|cache| cache["size_bytes"].as_f64().unwrap());
    let level = &document["levels"][0];
    let data_mib = level["workload_figures"]["data_read_mib"].as_f64().unwrap();
    assert!(
        (2.0..2.1).contains(&data_mib),
        "256 rows + 1 index block of 8 KiB: {data_mib}"
    );
    let warned = level["warnings"].as_array().is_some_and(|warnings| {
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("last-level cache"))
    });
    match last_level_cache {
        Some(bytes) => assert_eq!(warned, data_mib * 1048576.0 <= bytes, "cache {bytes} B"),
        None => assert!(!warned, "no cache size is known, so nothing can be said"),
    }
}

/// The pio data files in `dir`.
fn pio_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("corescale-pio-")
        })
        .collect()
}

/// A run killed with SIGKILL (no handler can remove its data file) leaves the file behind,
/// named with its pid; the next pio run removes it and says so, in that directory or any
/// other (the list of live files in the state directory names it).
#[test]
fn the_next_run_removes_the_data_file_of_a_killed_one() {
    for same_directory in [true, false] {
        next_run_removes_a_killed_runs_file(same_directory);
    }
}

fn next_run_removes_a_killed_runs_file(same_directory: bool) {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut first = StdCommand::new(assert_cmd::cargo::cargo_bin("corescale"))
        .env("XDG_STATE_HOME", state.path())
        .args([
            "run",
            "pio",
            "-w",
            "1",
            "--scale",
            "1024",
            "--cache-size",
            "1M",
        ])
        .args(["--duration", "60s", "--repeat", "1", "-q", "--data-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id();
    // A safety net only: the file appears as soon as the run's setup starts.
    let deadline = Instant::now() + Duration::from_secs(120);
    while pio_files(dir.path()).is_empty() {
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first run ended before it created its data file"
        );
        assert!(Instant::now() < deadline, "no data file after 120 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
    first.wait().unwrap();
    let left = pio_files(dir.path());
    assert_eq!(left.len(), 1, "SIGKILL leaves the data file: {left:?}");
    let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("corescale-pio-{pid}-")),
        "the file is named after its run: {name}"
    );
    corescale()
        .env("XDG_STATE_HOME", state.path())
        .args([
            "run",
            "pio",
            "-w",
            "1",
            "--scale",
            "1024",
            "--cache-size",
            "1M",
        ])
        .args(["--duration", "100ms", "--repeat", "1", "-q", "--data-dir"])
        .arg(if same_directory {
            dir.path()
        } else {
            elsewhere.path()
        })
        .assert()
        .success()
        .stderr(contains(format!(
            "removed a data file left by an earlier corescale run (pid {pid}, killed?): {}, ",
            left[0].display()
        )));
    let leftovers = pio_files(dir.path());
    assert!(leftovers.is_empty(), "no data file is left: {leftovers:?}");
    let listed =
        std::fs::read_to_string(state.path().join("corescale/pio-data-files")).unwrap_or_default();
    assert!(
        listed.trim().is_empty(),
        "live files still listed: {listed}"
    );
}

/// A data file larger than the data directory's free space is refused with a usage error
/// that names the directory, before anything is written there.
#[test]
fn a_data_dir_too_small_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let stats = nix::sys::statvfs::statvfs(dir.path()).unwrap();
    // The field types differ by platform (u32 or u64).
    let free = (stats.blocks_available() as u64).saturating_mul(stats.fragment_size() as u64);
    // Twice the free space, so space freed by others meanwhile cannot make it fit.
    let rows = (free / BLOCK as u64).saturating_mul(2).max(1024);
    let max_rows = 1u64 << 32;
    let schemas = rows.div_ceil(max_rows);
    let rows = rows.div_ceil(schemas).to_string();
    let schemas = schemas.to_string();
    corescale()
        .args([
            "run",
            "pio",
            "-w",
            "1",
            "--scale",
            &rows,
            "--schemas",
            &schemas,
        ])
        .args(["--cache-size", "1M", "--duration", "100ms", "--repeat", "1"])
        .args(["-q", "--data-dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(contains(format!(
            "not enough free space in {} for the pio data file",
            dir.path().display()
        )))
        .stderr(contains(
            "give a smaller --scale or fewer --schemas, or another --data-dir",
        ));
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(written.is_empty(), "nothing was written: {written:?}");
}

#[test]
fn the_wide_run_table_shows_every_figure_the_workload_recorded() {
    let table = |wide: bool| {
        let mut command = corescale();
        command.args(["run", "lio", "--sweep", "1", "--scale", "200"]);
        command.args(["--duration", "200ms", "--repeat", "1"]);
        if wide {
            command.arg("--wide");
        }
        let output = command.assert().success().get_output().stdout.clone();
        String::from_utf8(output).unwrap()
    };
    let header = |table: &str| {
        table
            .lines()
            .find(|line| line.trim_start().starts_with("workers"))
            .unwrap_or_else(|| panic!("no header in\n{table}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let wide = header(&table(true));
    // Figures no column of its own shows, under their recorded names.
    for name in ["ns_per_lio", "lio_per_cpu_s", "statements"] {
        assert!(wide.contains(&name.to_string()), "{name} not in {wide:?}");
    }
    // Shown already as "hit %": not twice.
    assert!(!wide.contains(&"cache_hit_ratio".to_string()), "{wide:?}");
    let narrow = header(&table(false));
    assert!(!narrow.contains(&"ns_per_lio".to_string()), "{narrow:?}");
}

/// A pio run stopped (SIGTERM) before its first level, while it writes its data file, still
/// writes a CSV with test_cpu_parallel's header, not an empty file: the header of a finished
/// run's CSV, up to its per-level workload figures.
#[test]
fn a_run_stopped_before_its_first_level_writes_the_csv_header() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let csv = dir.path().join("stopped.csv");
    let run = StdCommand::new(assert_cmd::cargo::cargo_bin("corescale"))
        .env("XDG_STATE_HOME", state.path())
        .args([
            "run",
            "pio",
            "-w",
            "1",
            "--scale",
            "1G",
            "--cache-size",
            "1M",
        ])
        .args(["--duration", "1s", "-q", "-o"])
        .arg(&csv)
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while pio_files(dir.path()).is_empty() {
        assert!(Instant::now() < deadline, "no data file after 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(Pid::from_raw(run.id() as i32), Signal::SIGTERM).unwrap();
    let output = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    let stopped = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(stopped.lines().count(), 1, "the header alone: {stopped}");
    let finished = dir.path().join("finished.csv");
    corescale()
        .env("XDG_STATE_HOME", state.path())
        .args([
            "run",
            "pio",
            "-w",
            "1",
            "--scale",
            "1024",
            "--cache-size",
            "1M",
        ])
        .args(["--duration", "100ms", "--repeat", "1", "-q", "-o"])
        .arg(&finished)
        .arg("--data-dir")
        .arg(dir.path())
        .assert()
        .success();
    let finished = std::fs::read_to_string(&finished).unwrap();
    let header = stopped.trim_end();
    assert!(header.starts_with("Num_concurrent_jobs,job_median_run_time (sec),"));
    assert!(
        finished.lines().next().unwrap().starts_with(header),
        "{header}\n{finished}"
    );
}
