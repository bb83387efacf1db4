//! A run that knows when it is disturbed: a CPU-bound helper process beside a sweep marks
//! the levels it shares, `report` leaves them out, and a quiet machine gives clean levels.
//! Signals end a run the way Ctrl-C does. The tests here take turns: each needs the machine
//! to itself.

mod common;

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::hog::Hog;
use common::{corescale, read_json, spawn_until_first_level};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use predicates::str::contains;
use serde_json::Value;

static MACHINE: Mutex<()> = Mutex::new(());

fn machine() -> std::sync::MutexGuard<'static, ()> {
    MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits (as `--wait-idle` does, up to a minute) until the host is idle, for the tests that
/// judge a clean level; on a host that stays busy, ends the test binary with one line naming
/// the busiest processes: the host, not corescale, failed the test, and a backtrace would
/// say nothing more.
fn wait_for_an_idle_host() {
    let output = corescale()
        .args(["run", "-w", "1", "--job-size", "1M", "-q"])
        .args(["--wait-idle", "60s", "--require-idle"])
        .output()
        .unwrap();
    if !output.status.success() {
        use std::io::Write;
        let said = String::from_utf8_lossy(&output.stderr);
        let line = said
            .lines()
            .find(|line| line.contains("not idle"))
            .unwrap_or("the host did not become idle");
        let _ = writeln!(
            std::io::stderr(),
            "FAILED: this test needs an idle host and it stayed busy for 60 s: {line}"
        );
        std::process::exit(1);
    }
    wait_for_little_steal();
}

/// The share of CPU time the hypervisor stole over the host's CPUs, from /proc/stat's
/// `cpu` line: (steal, total) jiffies so far.
fn steal_and_total() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|field| field.parse().unwrap())
        .collect();
    (fields[7], fields.iter().sum())
}

/// Waits (60 s at most) for a second in which the hypervisor stole under 1% of the CPUs: a
/// VM's neighbours come and go, and a level measured while they take its CPUs is rightly
/// called disturbed, which is not what these tests look at. On a host that stays stolen,
/// goes on: the level's own verdict then says why.
fn wait_for_little_steal() {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let (steal, total) = steal_and_total();
        std::thread::sleep(Duration::from_secs(1));
        let (steal_after, total_after) = steal_and_total();
        let share = (steal_after - steal) as f64 / (total_after - total).max(1) as f64;
        if share < 0.01 {
            return;
        }
    }
    eprintln!("NOTICE: the hypervisor kept stealing 1% or more of the CPUs for 60 s");
}

fn verdicts(document: &Value) -> Vec<(u64, String, Vec<String>)> {
    document["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|level| {
            let interference = &level["interference"];
            (
                level["workers"].as_u64().unwrap(),
                interference["verdict"].as_str().unwrap().to_string(),
                interference["reasons"]
                    .as_array()
                    .map(|reasons| {
                        reasons
                            .iter()
                            .map(|reason| reason.as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// Runs 1 and 2 workers; with `hog`, a busy process starts once the 1-worker level is written.
/// Returns the document and the run's stderr and exit code.
/// The run's document, its standard error and output, and its exit code.
fn sweep(json: &Path, hog: bool) -> (Value, String, String, Option<i32>) {
    let args = [
        "run",
        "--sweep",
        "1,2",
        "--repeat",
        "3",
        "--job-size",
        "150M",
        "--strict",
    ];
    let child = spawn_until_first_level(&args, json);
    let busy = hog.then(Hog::start);
    let output = child.wait_with_output().unwrap();
    drop(busy);
    (
        read_json(json),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code(),
    )
}

#[test]
#[ignore = "needs an idle host (its clean level must be clean): .ci/run runs it with --ignored, alone"]
fn a_busy_helper_disturbs_the_level_and_report_leaves_it_out() {
    let _machine = machine();
    wait_for_an_idle_host();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("busy.json");
    let mut attempt = 0;
    let (document, stderr, stdout, code) = loop {
        attempt += 1;
        let _ = std::fs::remove_file(&json);
        let (document, stderr, stdout, code) = sweep(&json, true);
        let clean_first = verdicts(&document)[0].1 == "clean";
        // A VM's steal comes and goes with its neighbours: five tries, each after a calm
        // second, before the host is called busy (CI saw 2.0% to 8.6% steal in a row).
        if clean_first || attempt == 5 {
            if !clean_first {
                eprintln!(
                    "NOTICE: the machine itself is busy: its 1-worker level was disturbed {attempt} times"
                );
            }
            break (document, stderr, stdout, code);
        }
        eprintln!(
            "NOTICE: the 1-worker level was disturbed before the helper started: {:?}; trying again",
            verdicts(&document)[0]
        );
        wait_for_an_idle_host();
    };
    let levels = verdicts(&document);
    assert_eq!(levels[0].1, "clean", "{levels:?}");
    assert_eq!(levels[1].1, "disturbed", "{levels:?}");
    assert!(
        levels[1]
            .2
            .iter()
            .any(|reason| reason.contains("other processes used")),
        "{levels:?}"
    );
    let busy = document["levels"][1]["interference"]["other_busy_cpus"]
        .as_f64()
        .unwrap();
    assert!(busy > 0.3, "the helper's CPU was seen: {busy}");
    // Each level's warning once, as it ended; the table's footer sums them up in one line.
    assert_eq!(
        stderr.matches("warning: 2 workers: disturbed").count(),
        1,
        "{stderr}"
    );
    assert!(
        stdout.contains("! 1 of 2 levels disturbed: other processes used up to"),
        "{stdout}"
    );
    assert_eq!(code, Some(3), "--strict exits 3: {stderr}");
    // The CSV of the same run carries the verdict too.
    corescale()
        .args(["report", "-q", "--json"])
        .arg(dir.path().join("analysis.json"))
        .arg(&json)
        .assert()
        .success();
    let analysis = read_json(&dir.path().join("analysis.json"));
    let series = &analysis["series"][0];
    assert_eq!(series["levels"].as_array().unwrap().len(), 1, "{series}");
    assert_eq!(series["series"]["left_out"][0]["workers"], 2);
    corescale()
        .args(["report", "--wide"])
        .arg(&json)
        .assert()
        .success()
        .stdout(contains("left out 2 workers, disturbed while measured"))
        .stdout(contains("1 of 2 levels left out as disturbed"));
    // --include-disturbed keeps it, and says so.
    corescale()
        .args(["report", "--include-disturbed", "--wide"])
        .arg(&json)
        .assert()
        .success()
        .stdout(contains("disturbed while measured, and kept: 2 workers"));
}

#[test]
#[ignore = "needs an idle host: .ci/run runs it with --ignored, alone"]
fn a_quiet_machine_gives_clean_levels() {
    let _machine = machine();
    wait_for_an_idle_host();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("quiet.json");
    for attempt in 1..=2 {
        let _ = std::fs::remove_file(&json);
        let (document, stderr, _, code) = sweep(&json, false);
        let levels = verdicts(&document);
        if levels.iter().all(|(_, verdict, _)| verdict == "clean") {
            assert_eq!(code, Some(0), "{stderr}");
            assert!(!stderr.contains("disturbed"), "{stderr}");
            return;
        }
        let only_steal = levels
            .iter()
            .flat_map(|(_, _, reasons)| reasons)
            .all(|reason| reason.contains("hypervisor stole"));
        if attempt == 2 && only_steal {
            eprintln!(
                "SKIPPED: the hypervisor stole more than 2% in both attempts ({levels:?}): a clean verdict cannot be checked on this host now"
            );
            return;
        }
        assert!(attempt < 2, "the machine itself is busy: {levels:?}");
        eprintln!(
            "NOTICE: a level was disturbed on a machine meant to be quiet ({levels:?}); retrying once"
        );
        wait_for_an_idle_host();
    }
}

#[test]
fn require_idle_refuses_a_busy_host_and_names_the_load() {
    let _machine = machine();
    let hog = Hog::start();
    std::thread::sleep(Duration::from_millis(300));
    let output = corescale()
        .args(["run", "-w", "1", "--job-size", "1M", "--require-idle", "-q"])
        .assert()
        .code(1)
        .stderr(contains("the host is not idle: other processes use"))
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // "busiest: sh (pid 18655) 78%, ...": each named process is the one with that pid (where
    // it still runs), and the hog is among them unless three busier ones fill the list (a
    // host loaded by other work besides, as when two more hogs ran beside the suite).
    let busiest = stderr
        .split_once("busiest: ")
        .unwrap_or_else(|| panic!("no busiest processes named: {stderr}"))
        .1;
    let named: Vec<(&str, u32)> = busiest
        .split(", ")
        .map(|entry| {
            let (name, rest) = entry
                .split_once(" (pid ")
                .unwrap_or_else(|| panic!("not 'name (pid N) P%': {entry}"));
            let pid = rest.split_once(')').and_then(|(pid, _)| pid.parse().ok());
            (name, pid.unwrap_or_else(|| panic!("no pid in {entry}")))
        })
        .collect();
    for (name, pid) in &named {
        // A kernel worker renames itself with the work it takes (kworker/u8:0-flush-254:0,
        // then kworker/u8:0+ext4-rsv-conversion): its name is checked up to the work.
        let stable = |comm: &str| -> String {
            match comm.strip_prefix("kworker/") {
                Some(rest) => format!("kworker/{}", rest.split(['-', '+']).next().unwrap_or("")),
                None => comm.to_string(),
            }
        };
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            assert_eq!(stable(comm.trim()), stable(name), "pid {pid} in {stderr}");
        }
    }
    assert!(
        named.contains(&("sh", hog.0.id())) || named.len() == 3,
        "the hog (pid {}) is not among {named:?}: {stderr}",
        hog.0.id()
    );
    // Without --require-idle the quick look sees the hog, a second look confirms it while the
    // worker waits ready, and the run goes on, saying so.
    corescale()
        .args(["run", "-w", "1", "--job-size", "1M", "-q"])
        .assert()
        .success()
        .stderr(contains(
            "warning: the host is not idle: other processes use",
        ));
}

fn data_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".dat"))
        .collect()
}

/// SIGTERM and SIGHUP stop a run as Ctrl-C does: levels kept, the reason recorded, pio's data
/// file removed, exit 128 + the signal; a second signal exits at once and still removes it.
#[test]
fn termination_signals_keep_the_levels_and_remove_the_data_file() {
    let _machine = machine();
    for (signal, code, twice) in [
        (Signal::SIGTERM, 143, false),
        (Signal::SIGHUP, 129, false),
        (Signal::SIGTERM, 143, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("pio.json");
        let data_dir = dir.path().to_str().unwrap().to_string();
        // A cache that holds the data keeps the warm-up short; level 2 runs 4 s.
        let args = [
            "run",
            "pio",
            "--sweep",
            "1,2",
            "--duration",
            "200ms",
            "--repeat",
            "20",
            "--scale",
            "4096",
            "--cache-size",
            "64M",
            "--data-dir",
            &data_dir,
            "-q",
        ];
        let child = spawn_until_first_level(&args, &json);
        assert_eq!(
            data_files(dir.path()).len(),
            1,
            "the data file exists while running"
        );
        let pid = Pid::from_raw(child.id() as i32);
        kill(pid, signal).unwrap();
        if twice {
            std::thread::sleep(Duration::from_millis(50));
            kill(pid, signal).unwrap();
        }
        let started = Instant::now();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{signal}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            data_files(dir.path()).is_empty(),
            "{signal}: the data file was left"
        );
        let document = read_json(&json);
        assert_eq!(document["complete"], false);
        assert!(!document["levels"].as_array().unwrap().is_empty());
        if !twice {
            let reason = document["stop_reason"].as_str().unwrap();
            assert!(reason.contains(&signal.to_string()), "{reason}");
        }
    }
}
