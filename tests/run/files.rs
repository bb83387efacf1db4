//! Result and report files as other tools and users meet them: a second run on the same
//! files, devices, FIFOs and symlinks as report outputs, and the umask.

use crate::common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::{corescale, read_json, spawn_until_first_level};
use predicates::str::contains;

const ANCHOR: &str = "tests/fixtures/anchor/test_cpu_parallel_rust_RAC55.csv";

#[test]
fn a_second_run_on_the_same_outputs_is_refused_and_the_first_keeps_its_levels() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("run.json"), dir.path().join("run.csv"));
    let first = spawn_until_first_level(
        &[
            "run",
            "--sweep",
            "1,2",
            "--repeat",
            "4",
            "--job-size",
            "100M",
            "-q",
        ],
        &json,
    );
    // The second names the same JSON through another spelling of the path.
    let same = dir.path().join(".").join("run.json");
    corescale()
        .args(["run", "-w", "1", "--job-size", "1M", "-q", "-o"])
        .arg(&csv)
        .arg("-o")
        .arg(&same)
        .assert()
        .code(1)
        .stderr(contains("is being written by another corescale run"));
    let output = first.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document = read_json(&json);
    assert_eq!(document["complete"], true);
    assert_eq!(document["levels"].as_array().unwrap().len(), 2);
    assert!(!csv.exists(), "the refused run wrote nothing");
    // The lock files are gone with the run, and a later run may use the files.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn report_to(flag: &str, path: &Path) {
    corescale()
        .args(["report", ANCHOR, "-q", flag])
        .arg(path)
        .assert()
        .success();
}

#[test]
fn report_outputs_write_through_devices_and_fifos_and_follow_symlinks() {
    report_to("--json", Path::new("/dev/null"));
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null was replaced");
    // A full device: the JSON, encoded straight to it, names the file and the OS's words.
    for flag in ["--json", "--html"] {
        corescale()
            .args(["report", ANCHOR, "-q", flag, "/dev/full"])
            .assert()
            .code(1)
            .stderr(contains(
                "cannot write '/dev/full': No space left on device",
            ));
    }

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.md");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    report_to("--markdown", &fifo);
    let text = reader.join().unwrap();
    assert!(text.contains("RAC55"), "{text}");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("analysis.json");
    std::os::unix::fs::symlink("real/target.json", &link).unwrap();
    report_to("--json", &link);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let analysis = read_json(&real.join("target.json"));
    assert_eq!(analysis["schema"], "corescale-report/1");
}

/// A link someone else owns (planted in a shared directory) is not followed. Making one
/// takes root: elsewhere the test is skipped, and says so.
#[test]
#[cfg_attr(
    not(corescale_test_root),
    ignore = "needs root, to plant a link another user owns (.ci/run runs as root)"
)]
fn a_link_of_another_owner_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let planted = dir.path().join("planted.json");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534))
        .expect("giving the link to nobody (this test needs root)");
    corescale()
        .args(["report", ANCHOR, "-q", "--json"])
        .arg(&planted)
        .assert()
        .code(1)
        .stderr(contains("owned by another user"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn results_keep_the_umask() {
    let binary = assert_cmd::cargo::cargo_bin("corescale");
    let dir = tempfile::tempdir().unwrap();
    for (umask, mode) in [("077", 0o600), ("022", 0o644), ("002", 0o664)] {
        let (json, analysis) = (
            dir.path().join(format!("run-{umask}.json")),
            dir.path().join(format!("analysis-{umask}.json")),
        );
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && '{0}' run -w 1 --job-size 1M --repeat 1 -q -o '{1}' && '{0}' report '{1}' -q --json '{2}'",
                binary.display(),
                json.display(),
                analysis.display()
            ))
            .status()
            .unwrap();
        assert!(status.success());
        for path in [&json, &analysis] {
            let actual = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(actual, mode, "umask {umask}: {}", path.display());
        }
    }
}

/// `report` ended by SIGTERM or SIGINT at any moment of its writing leaves no hidden
/// `.corescale-*` temporary file beside its outputs (the audit found 4 in 250 trials): 80
/// trials, each killed after a delay spread over the report's own duration.
#[test]
fn a_report_ended_by_a_signal_leaves_no_temporary_files() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let anchors = [52, 54, 55]
        .map(|server| format!("tests/fixtures/anchor/test_cpu_parallel_rust_RAC{server}.csv"));
    let dir = tempfile::tempdir().unwrap();
    let outputs = |trial: usize| {
        let base = dir.path().join(trial.to_string());
        [
            "-o".to_string(),
            base.join("report.html").display().to_string(),
            "-o".to_string(),
            format!("{}/", base.join("figures").display()),
            "-o".to_string(),
            base.join("analysis.json").display().to_string(),
            "-q".to_string(),
        ]
    };
    // The report's own duration here, the span the kills are spread over.
    let started = std::time::Instant::now();
    let whole = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
        .arg("report")
        .args(&anchors)
        .args(outputs(0).iter())
        .status()
        .unwrap();
    assert!(whole.success());
    let span = started.elapsed().as_micros().max(20_000) as u64;
    let mut ended_early = 0;
    for trial in 1..=80 {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescale"))
            .arg("report")
            .args(&anchors)
            .args(outputs(trial).iter())
            .spawn()
            .unwrap();
        // A delay spread over the span by a fixed sequence (Weyl's, by the golden ratio).
        let fraction = (trial as f64 * 0.618_033_988_75).fract();
        std::thread::sleep(std::time::Duration::from_micros(
            (fraction * span as f64) as u64,
        ));
        let signal = if trial % 2 == 0 {
            Signal::SIGTERM
        } else {
            Signal::SIGINT
        };
        let _ = kill(Pid::from_raw(child.id() as i32), signal);
        let status = child.wait().unwrap();
        if !status.success() {
            ended_early += 1;
        }
        let base = dir.path().join(trial.to_string());
        for folder in [base.clone(), base.join("figures")] {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                assert!(
                    !name.starts_with(".corescale-") || name.ends_with("corescale-lock"),
                    "trial {trial} ({signal:?}) left {name} in {}",
                    folder.display()
                );
            }
        }
    }
    assert!(
        ended_early > 10,
        "only {ended_early} of 80 reports were ended by the signal"
    );
}

/// A job workload keeps no histogram of response times, nor any per statement class: its
/// .hlog and .classes.hlog hold the header only, and the run says so rather than leave an
/// empty log unexplained.
#[test]
fn an_hlog_of_a_run_without_histograms_is_said_to_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    let hlog = dir.path().join("cpu.hlog");
    let classes = dir.path().join("cpu.classes.hlog");
    corescale()
        .args(["run", "-w", "1", "--job-size", "1M", "-q", "-o"])
        .arg(&hlog)
        .arg("-o")
        .arg(&classes)
        .assert()
        .success()
        .stderr(contains("cpu.hlog holds no interval line"))
        .stderr(contains(
            "cpu.classes.hlog holds no interval line: this workload's levels keep no response times per statement class",
        ));
    for log in [hlog, classes] {
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("#[StartTime: "), "{text}");
        assert!(!text.contains("Tag="), "{text}");
    }
}
