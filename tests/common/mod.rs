//! Helpers shared by the integration tests: fixture sysfs/procfs trees and the binary.

#![allow(dead_code)]

pub mod campaign;
pub mod hog;
pub mod layout;
pub mod mariadb;
pub mod pg_cluster;
pub mod quota_group;
pub mod scratch;

use std::fs;
use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// A file of tests/fixtures/import (their sources in SOURCES.md there).
pub fn import_fixture(name: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/import")
            .join(name),
    )
    .unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// A JSON document the binary wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// `corescale report RUNS --include-disturbed --json`: its terminal text (each wrapped
/// sentence on one line) and its analysis; it must succeed.
pub fn reported(runs: &[&Path]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let analysis = dir.path().join("analysis.json");
    let output = corescale()
        .arg("report")
        .args(runs)
        .args(["--include-disturbed", "--json"])
        .arg(&analysis)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(output.status.success(), "{text}");
    (text, read_json(&analysis))
}

/// The statement-by-statement comparison of the replay labelled `candidate` (against the
/// first replay of its capture) in a report's analysis.
pub fn comparison_of<'a>(analysis: &'a Value, candidate: &str) -> &'a Value {
    (analysis["statements"].as_array().unwrap().iter())
        .find(|one| one["candidate"].as_str().unwrap().contains(candidate))
        .unwrap_or_else(|| panic!("no comparison of {candidate}: {analysis:#}"))
}

/// The corescale binary built by cargo for this test run, its 1 s look at the host before
/// a run shortened to 100 ms (`CORESCALE_TEST_PREFLIGHT`: a hundred runs need not wait a
/// hundred seconds; the interference tests that judge the host use their own command).
pub fn corescale() -> Command {
    let mut command = Command::cargo_bin("corescale").expect("the corescale binary is built");
    command.env("CORESCALE_TEST_PREFLIGHT", "100ms");
    command
}

/// Holds the shared test server a variable names (`CORESCALE_TEST_PG` or
/// `CORESCALE_TEST_MYSQL`) for a test's length: tests time statements on that server, and
/// another test's load there would be in their figures, so those on one server run one at a
/// time, while PostgreSQL's and MariaDB's run side by side. This serializes a process's
/// threads (`cargo test`); across nextest's processes a mutex holds nothing, so there the
/// server's lane in `.config/nextest.toml` does it, and a test outside it fails here, naming
/// the lane, rather than load the server beside a measuring test now and then.
pub fn hold_server(variable: &str) -> std::sync::MutexGuard<'static, ()> {
    static POSTGRESQL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static MARIADB: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let (server, lanes): (_, &[&str]) = match variable {
        "CORESCALE_TEST_PG" => (&POSTGRESQL, &["postgresql", "postgresql-catalogue"]),
        "CORESCALE_TEST_MYSQL" => (&MARIADB, &["mariadb"]),
        other => panic!("{other} names no shared test server"),
    };
    // nextest names the test group a test runs in (`@global` for none).
    if let Ok(group) = std::env::var("NEXTEST_TEST_GROUP") {
        assert!(
            lanes.contains(&group.as_str()),
            "this test holds the server {variable} names but runs in nextest's test group \
             '{group}': add it to the '{}' group in .config/nextest.toml",
            lanes[0]
        );
    }
    server
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The value of an environment variable naming a test server or its binaries. Tests that
/// need one are ignored where it is not set (build.rs sets a cfg per variable; see README),
/// so a test that runs without it was asked for by name or with `--include-ignored`, or runs
/// in CI: it fails, naming the variable, rather than pass without running.
pub fn required(variable: &str) -> String {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{variable} is not set: this database test cannot run without it (see README)"),
    }
}

/// Starts corescale with `args` plus `-o json` in the background and returns once its first
/// level has been written to `json` (within 60 s). Its standard output (the run's table) and
/// error are piped, for `wait_with_output`.
pub fn spawn_until_first_level(args: &[&str], json: &Path) -> Child {
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("corescale"))
        .env("CORESCALE_TEST_PREFLIGHT", "100ms")
        // A stalled server ends the run 2 s after a job's duration, not 30 s.
        .env("CORESCALE_TEST_STATEMENT_MARGIN", "2s")
        .args(args)
        .arg("-o")
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !json.exists() {
        assert!(Instant::now() < deadline, "no level was written in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// A cache level of a fixture machine and who shares one instance of it.
pub struct FixtureCache {
    pub level: u32,
    pub kind: &'static str,
    pub size: &'static str,
    pub per_socket: bool,
}

/// A machine to lay out as a sysfs/procfs tree, numbered the way Linux numbers x86 CPUs:
/// first thread of every core of every socket, then the second threads.
pub struct FixtureMachine {
    pub sockets: usize,
    pub cores_per_socket: usize,
    pub threads_per_core: usize,
    pub model_name: &'static str,
    pub caches: Vec<FixtureCache>,
    /// Extra cpuinfo flags, e.g. "hypervisor".
    pub flags: &'static str,
    pub dmi_vendor: Option<&'static str>,
    pub mem_total_kb: u64,
    pub mem_available_kb: u64,
}

impl FixtureMachine {
    fn cpu_number(&self, socket: usize, core: usize, thread: usize) -> usize {
        thread * self.sockets * self.cores_per_socket + socket * self.cores_per_socket + core
    }

    pub fn logical_cpus(&self) -> usize {
        self.sockets * self.cores_per_socket * self.threads_per_core
    }

    /// Writes the tree below `root`.
    pub fn write(&self, root: &Path) {
        let write = |relative: &str, text: &str| {
            let path = root.join(relative);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, format!("{text}\n")).unwrap();
        };
        let total = self.logical_cpus();
        write("sys/devices/system/cpu/online", &format!("0-{}", total - 1));
        let mut cpuinfo = String::new();
        for socket in 0..self.sockets {
            let mut node_cpus = Vec::new();
            for core in 0..self.cores_per_socket {
                let siblings: Vec<usize> = (0..self.threads_per_core)
                    .map(|thread| self.cpu_number(socket, core, thread))
                    .collect();
                let socket_cpus: Vec<usize> = (0..self.cores_per_socket)
                    .flat_map(|other| (0..self.threads_per_core).map(move |thread| (other, thread)))
                    .map(|(other, thread)| self.cpu_number(socket, other, thread))
                    .collect();
                for &cpu in &siblings {
                    node_cpus.push(cpu);
                    let base = format!("sys/devices/system/cpu/cpu{cpu}");
                    write(
                        &format!("{base}/topology/physical_package_id"),
                        &socket.to_string(),
                    );
                    write(&format!("{base}/topology/core_id"), &core.to_string());
                    for (index, cache) in self.caches.iter().enumerate() {
                        let dir = format!("{base}/cache/index{index}");
                        let shared = if cache.per_socket {
                            &socket_cpus
                        } else {
                            &siblings
                        };
                        write(&format!("{dir}/level"), &cache.level.to_string());
                        write(&format!("{dir}/type"), cache.kind);
                        write(&format!("{dir}/size"), cache.size);
                        write(&format!("{dir}/shared_cpu_list"), &list(shared));
                    }
                    cpuinfo.push_str(&format!(
                        "processor\t: {cpu}\nvendor_id\t: GenuineIntel\nmodel name\t: {}\nphysical id\t: {socket}\ncore id\t\t: {core}\nflags\t\t: fpu sse2 {}\n\n",
                        self.model_name, self.flags
                    ));
                }
            }
            node_cpus.sort_unstable();
            write(
                &format!("sys/devices/system/node/node{socket}/cpulist"),
                &list(&node_cpus),
            );
        }
        write("proc/cpuinfo", cpuinfo.trim_end());
        write("proc/meminfo", &self.meminfo());
        write("proc/sys/kernel/osrelease", "3.10.0-1160.el7.x86_64");
        write("proc/sys/kernel/hostname", "fixture-host");
        if let Some(vendor) = self.dmi_vendor {
            write("sys/class/dmi/id/sys_vendor", vendor);
        }
    }
}

impl FixtureMachine {
    /// A /proc/meminfo with every field a 3.10+ kernel prints; only the first three matter.
    fn meminfo(&self) -> String {
        let mut text = format!(
            "MemTotal:       {} kB\nMemFree:        {} kB\nMemAvailable:   {} kB\n",
            self.mem_total_kb, self.mem_available_kb, self.mem_available_kb
        );
        for field in [
            "Buffers",
            "Cached",
            "SwapCached",
            "Active",
            "Inactive",
            "SwapTotal",
            "SwapFree",
            "Dirty",
            "Writeback",
            "AnonPages",
            "Mapped",
            "Shmem",
            "Slab",
            "SReclaimable",
            "SUnreclaim",
            "KernelStack",
            "PageTables",
            "NFS_Unstable",
            "Bounce",
            "WritebackTmp",
            "CommitLimit",
            "Committed_AS",
            "VmallocTotal",
            "VmallocUsed",
            "VmallocChunk",
        ] {
            text.push_str(&format!("{field}: 0 kB\n"));
        }
        text
    }
}

fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Like RAC52 of the anchor data: 2 sockets x 10 cores x 2 threads, 2.2 GHz, 25 MiB L3.
pub fn rac52_like() -> FixtureMachine {
    FixtureMachine {
        sockets: 2,
        cores_per_socket: 10,
        threads_per_core: 2,
        model_name: "Intel(R) Xeon(R) CPU E5-2630 v4 @ 2.20GHz",
        caches: vec![
            FixtureCache {
                level: 1,
                kind: "Data",
                size: "32K",
                per_socket: false,
            },
            FixtureCache {
                level: 1,
                kind: "Instruction",
                size: "32K",
                per_socket: false,
            },
            FixtureCache {
                level: 2,
                kind: "Unified",
                size: "256K",
                per_socket: false,
            },
            FixtureCache {
                level: 3,
                kind: "Unified",
                size: "25600K",
                per_socket: true,
            },
        ],
        flags: "ht",
        dmi_vendor: None,
        mem_total_kb: 512 * 1024 * 1024,
        mem_available_kb: 500 * 1024 * 1024,
    }
}

/// A 1-socket 4-core guest without SMT, under a hypervisor that DMI names.
pub fn four_core_guest() -> FixtureMachine {
    FixtureMachine {
        sockets: 1,
        cores_per_socket: 4,
        threads_per_core: 1,
        model_name: "AMD EPYC 7B13",
        caches: vec![
            FixtureCache {
                level: 1,
                kind: "Data",
                size: "32K",
                per_socket: false,
            },
            FixtureCache {
                level: 2,
                kind: "Unified",
                size: "512K",
                per_socket: false,
            },
            FixtureCache {
                level: 3,
                kind: "Unified",
                size: "32768K",
                per_socket: true,
            },
        ],
        flags: "hypervisor",
        dmi_vendor: Some("QEMU"),
        mem_total_kb: 16 * 1024 * 1024,
        mem_available_kb: 15 * 1024 * 1024,
    }
}

/// Runs a tool from the repository's root, failing the test with its output when it fails;
/// returns what it printed.
pub fn run_tool(program: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    let output = StdCommand::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|error| panic!("running {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A published sweep in tests/fixtures/anchor.
pub fn anchor(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anchor")
        .join(name)
}

/// `corescale report` over the three published CPU sweeps, named RAC52, RAC54 and RAC55 and
/// given their core counts; add outputs and flags to it.
pub fn anchor_report_command() -> Command {
    let mut command = corescale();
    command.arg("report");
    for server in ["RAC52", "RAC54", "RAC55"] {
        let file = anchor(&format!("test_cpu_parallel_rust_{server}.csv"));
        command
            .arg(&file)
            .arg("--label")
            .arg(format!("{}={server}", file.display()));
    }
    command.args([
        "--cores",
        "RAC52=20/40",
        "--cores",
        "RAC54=8/16",
        "--cores",
        "RAC55=16/32",
    ]);
    command
}

/// One run, one curve: `report` on a run's CSV gives the series it gives on its JSON (raw,
/// capacity, speed and on-CPU fraction of every level, to 1e-6, and the same error bars),
/// whichever workload wrote it.
pub fn the_csv_reports_as_the_json_does(json: &Path, csv: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let series = |input: &Path| {
        let out = dir.path().join("analysis.json");
        corescale()
            .arg("report")
            .arg(input)
            .args(["-q", "--include-disturbed", "--json"])
            .arg(&out)
            .assert()
            .success();
        read_json(&out)["series"][0].clone()
    };
    let (json_series, csv_series) = (series(json), series(csv));
    let what = json.display().to_string();
    let spreads = |series: &serde_json::Value| -> Vec<Option<(f64, f64)>> {
        series["series"]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|point| {
                let spread = point["spread"].as_array()?;
                Some((spread[0].as_f64()?, spread[1].as_f64()?))
            })
            .collect()
    };
    for (a, b) in spreads(&json_series).into_iter().zip(spreads(&csv_series)) {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!(
                (a.0 / b.0 - 1.0).abs() < 1e-6 && (a.1 / b.1 - 1.0).abs() < 1e-6,
                "{what}: spread: JSON {a:?}, CSV {b:?}"
            ),
            _ => panic!("{what}: spread: JSON {a:?}, CSV {b:?}"),
        }
    }
    let (from_json, from_csv) = (json_series["levels"].clone(), csv_series["levels"].clone());
    let (from_json, from_csv) = (from_json.as_array().unwrap(), from_csv.as_array().unwrap());
    assert!(!from_json.is_empty());
    assert_eq!(from_json.len(), from_csv.len());
    for (a, b) in from_json.iter().zip(from_csv) {
        assert_level_reads_alike(a, b, &what);
    }
}

/// One level's figures, as `report` read them from the JSON (`a`) and from the CSV (`b`).
fn assert_level_reads_alike(a: &Value, b: &Value, what: &str) {
    // The workload's own figures and the buffer cache's read back alike: the CSV's
    // `workload_figures.*` columns hold what the JSON's `workload_figures` does.
    assert_eq!(a["cache"], b["cache"], "{what}: cache figures");
    let figures = |level: &Value| -> Vec<(String, f64)> {
        level["figures"]
            .as_object()
            .map(|figures| {
                figures
                    .iter()
                    .map(|(name, value)| (name.clone(), value.as_f64().unwrap()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (x, y) = (figures(a), figures(b));
    assert_eq!(x.len(), y.len(), "{what}: figures: JSON {x:?}, CSV {y:?}");
    for ((name, x), (other, y)) in x.iter().zip(&y) {
        assert_eq!(name, other);
        assert!(
            (x - y).abs() <= 1e-9 * x.abs().max(1.0),
            "{what}: {name}: JSON {x}, CSV {y}"
        );
    }
    for field in ["raw", "capacity", "speed", "cpu_fraction"] {
        let (x, y) = (a[field].as_f64().unwrap(), b[field].as_f64().unwrap());
        assert!(
            (x / y - 1.0).abs() < 1e-6,
            "{what}: {field}: JSON {x}, CSV {y}"
        );
    }
    // The response times, where the run recorded them, read the same from either file.
    let (x, y) = (&a["latency"], &b["latency"]);
    assert_eq!(
        x.is_null(),
        y.is_null(),
        "{what}: latency: JSON {x}, CSV {y}"
    );
    if x.is_null() {
        return;
    }
    assert_eq!(x["unit"], y["unit"]);
    assert_eq!(x["measured_from"], y["measured_from"]);
    assert_eq!(x["count"], y["count"]);
    for field in [
        "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
    ] {
        let (x, y) = (x[field].as_f64().unwrap(), y[field].as_f64().unwrap());
        assert!(
            (x - y).abs() <= 1e-9 * x.abs().max(1.0),
            "{what}: latency {field}: JSON {x}, CSV {y}"
        );
    }
    assert_eq!(x["rate"]["sustained"], y["rate"]["sustained"]);
    assert_eq!(x["late"], y["late"]);
}

/// A real corescale result (cpu, 1 and 2 workers) that the fleet's files are made from.
pub fn template() -> Value {
    read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run/cpu-template.json"))
}

/// The template as measured on `host`, started at `started`, every job `slower` times as long.
pub fn variant(host: &str, started: &str, slower: f64) -> Value {
    let mut document = template();
    document["host"]["label"] = Value::from(host);
    document["host"]["hostname"] = Value::from(host);
    document["started_at"] = Value::from(started);
    for level in document["levels"].as_array_mut().unwrap() {
        let times = &mut level["summary"]["job_time_s"];
        for field in ["median", "mean", "min", "max"] {
            times[field] = Value::from(times[field].as_f64().unwrap() * slower);
        }
    }
    document
}

/// A fleet of `hosts` results of the template in `dir`/fleet, one folder per host (db01,
/// db02, ...), each host's jobs `step` longer than the one before; returns the folder.
pub fn write_fleet(dir: &Path, hosts: usize, step: f64) -> std::path::PathBuf {
    let fleet = dir.join("fleet");
    for index in 1..=hosts {
        let host = format!("db{index:02}");
        let document = variant(&host, "2026-11-20T10:00:00Z", 1.0 + step * index as f64);
        fs::create_dir_all(fleet.join(&host)).unwrap();
        fs::write(fleet.join(&host).join("cpu.json"), document.to_string()).unwrap();
    }
    fleet
}

/// `db teardown` after a setup that was killed: the killed setup's connection holds the setup
/// lock until its server sees it closed, which on a busy host can be after the teardown
/// asks; such a teardown is refused, and asked again (for 10 s at most).
pub fn teardown_after_a_killed_setup(url: &str) {
    let asked = Instant::now();
    loop {
        let output = corescale()
            .args(["db", "teardown", "--target", url])
            .output()
            .unwrap();
        if output.status.success() {
            return;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("another `corescale db setup`")
                && asked.elapsed() < Duration::from_secs(10),
            "{stderr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A count the server publishes late (a backend's statistics as it exits, after its client
/// has gone), read until it reaches `wanted` or 5 s have passed; the last one read.
pub fn count_reaching<T: PartialOrd>(wanted: T, mut read: impl FnMut() -> T) -> T {
    let asked = Instant::now();
    loop {
        let count = read();
        if count >= wanted || asked.elapsed() >= Duration::from_secs(5) {
            return count;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A one-level db run on `url` (one session for 300 ms): the document and what the run said
/// on standard error.
pub fn one_db_level(url: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let output = corescale()
        .args([
            "run",
            "db",
            "--target",
            url,
            "-w",
            "1",
            "--duration",
            "300ms",
        ])
        .args(["--repeat", "1", "-q", "-o"])
        .arg(&json)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    (read_json(&json), said)
}

/// A port no one listens on now (for a server a test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `corescale capture LOG -o OUTPUT`, which must succeed; what it printed.
pub fn capture_log(log: &str, output: &Path) -> String {
    let captured = corescale()
        .args(["capture", log, "-o"])
        .arg(output)
        .output()
        .unwrap();
    assert!(
        captured.status.success(),
        "{}",
        String::from_utf8_lossy(&captured.stderr)
    );
    String::from_utf8_lossy(&captured.stdout).into_owned()
}
