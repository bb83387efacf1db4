//! `report`'s inputs are bounded: only regular files are opened (a FIFO, a device or a link to
//! one ends at once, also inside a folder), and a file too large, a line too long or a string
//! too long is refused in one line naming the file. Each command that could hang runs under
//! a deadline, so a regression fails instead of waiting.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{anchor, corescale, read_json};
use predicates::str::contains;

/// Longer than any of these commands takes; a command still running then is killed.
const DEADLINE: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

/// `corescale report ARGS -q` under the deadline.
fn report(args: &[&std::ffi::OsStr]) -> assert_cmd::assert::Assert {
    corescale()
        .arg("report")
        .args(args)
        .arg("-q")
        .timeout(DEADLINE)
        .assert()
}

/// A corescale result document (a run's JSON), as a value to change.
fn run_document() -> serde_json::Value {
    read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/pg.json"))
}

#[test]
fn a_fifo_or_a_device_given_to_report_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("sweep.csv");
    mkfifo(&fifo);
    // No writer ever opens the pipe: reading it would wait for ever.
    report(&[fifo.as_os_str()]).code(2).stderr(contains(format!(
        "error: '{}' is a FIFO (named pipe), not a regular file: give a regular file",
        fifo.display()
    )));
    // A device that never ends, and a link to it.
    let link = dir.path().join("random.json");
    std::os::unix::fs::symlink("/dev/urandom", &link).unwrap();
    for device in [Path::new("/dev/urandom"), &link] {
        report(&[device.as_os_str()])
            .code(2)
            .stderr(contains("is a character device, not a regular file"));
    }
    report(&["/dev/null".as_ref()])
        .code(2)
        .stderr(contains("'/dev/null' is a character device"));
}

#[test]
fn a_fifo_given_to_nodes_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("node1.json");
    mkfifo(&fifo);
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/pg.json");
    let nodes = format!("vm={}", fifo.display());
    report(&[run.as_os_str(), "--nodes".as_ref(), nodes.as_ref()])
        .code(2)
        .stderr(contains(format!(
            "'{}' is a FIFO (named pipe), not a regular file",
            fifo.display()
        )));
}

/// A folder is walked: its FIFO, and links to a FIFO and to devices, are left out with a
/// note, and its results read.
#[test]
fn a_folder_with_fifos_and_links_to_devices_reads_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep");
    std::fs::create_dir(&sweep).unwrap();
    std::fs::copy(
        anchor("test_cpu_parallel_rust_RAC55.csv"),
        sweep.join("rac55.csv"),
    )
    .unwrap();
    mkfifo(&sweep.join("pipe.csv"));
    std::os::unix::fs::symlink(sweep.join("pipe.csv"), sweep.join("to-pipe.json")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", sweep.join("random.json")).unwrap();
    // Not ours by name: sniffed by content if it were a file, a device never is.
    std::os::unix::fs::symlink("/dev/zero", sweep.join("zero.log")).unwrap();
    let json = dir.path().join("analysis.json");
    let assert = report(&[sweep.as_os_str(), "--json".as_ref(), json.as_os_str()]).success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for left_out in ["pipe.csv", "to-pipe.json", "random.json"] {
        assert!(
            stderr.contains(&format!(
                "left out '{}': not a regular file",
                sweep.join(left_out).display()
            )),
            "{left_out}: {stderr}"
        );
    }
    let analysis = read_json(&json);
    assert_eq!(
        analysis["series"].as_array().unwrap().len(),
        1,
        "{analysis}"
    );
}

/// A 150 MB label once took `report` 4 GB: a string past 64 KiB is refused before the
/// document is parsed; one of 64 KiB reads.
#[test]
fn a_string_longer_than_64_kib_in_a_result_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("long.json");
    let mut document = run_document();
    document["host"]["label"] = "x".repeat(64 * 1024 + 1).into();
    let text = serde_json::to_string_pretty(&document).unwrap();
    std::fs::write(&json, &text).unwrap();
    let line = 1 + text
        .lines()
        .position(|line| line.contains("\"label\": \"xxx"))
        .unwrap();
    report(&[json.as_os_str()]).code(2).stderr(contains(format!(
        "error: '{}' line {line}: a string longer than 64 KiB, the longest corescale reads in a document",
        json.display()
    )));
    // Also where a node's host file holds it.
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/pg.json");
    let nodes = format!("vm={}", json.display());
    report(&[run.as_os_str(), "--nodes".as_ref(), nodes.as_ref()])
        .code(2)
        .stderr(contains("a string longer than 64 KiB"));
    document["host"]["label"] = "x".repeat(64 * 1024).into();
    std::fs::write(&json, serde_json::to_string_pretty(&document).unwrap()).unwrap();
    report(&[json.as_os_str()]).success();
}

#[test]
fn a_line_or_a_field_too_long_in_a_csv_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("long-line.csv");
    let mut text = std::fs::read_to_string(anchor("test_cpu_parallel_rust_RAC55.csv")).unwrap();
    let lines = text.lines().count();
    text.push_str(&"9".repeat((1 << 20) + 1));
    std::fs::write(&csv, &text).unwrap();
    report(&[csv.as_os_str()]).code(2).stderr(contains(format!(
        "error: cannot read '{}': line {} is longer than 1 MiB, the longest line corescale reads",
        csv.display(),
        lines + 1
    )));
    let csv = dir.path().join("long-field.csv");
    let text = std::fs::read_to_string(anchor("test_cpu_parallel_rust_RAC55.csv")).unwrap();
    let mut rows = text.lines();
    let header = rows.next().unwrap();
    let fields = header.split(',').count();
    let long = format!(
        "\"{}\"{}\n",
        "1".repeat(64 * 1024 + 1),
        ",1".repeat(fields - 1)
    );
    std::fs::write(&csv, format!("{header}\n{long}")).unwrap();
    report(&[csv.as_os_str()]).code(2).stderr(contains(format!(
        "error: '{}' line 2: a field longer than 64 KiB",
        csv.display()
    )));
}

#[test]
fn a_log_line_too_long_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pgbench_log.15");
    let mut text = common::import_fixture("pgbench_log.15");
    text.push_str(&"1 ".repeat(600 * 1024));
    std::fs::write(&log, &text).unwrap();
    report(&[log.as_os_str()])
        .code(2)
        .stderr(contains(format!(
            "error: cannot read '{}': line ",
            log.display()
        )))
        .stderr(contains("is longer than 1 MiB"));
}

/// Files past the bounds are refused from their size, before any of them is read (sparse
/// files: no disk is used).
#[test]
fn files_past_the_size_bounds_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("huge.json");
    std::fs::write(&json, "{\"schema\": \"corescale/1\"").unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&json).unwrap();
    file.set_len((256 << 20) + 1).unwrap();
    report(&[json.as_os_str()]).code(2).stderr(contains(format!(
        "error: '{}' is larger than 256 MiB, the most corescale reads of such a file",
        json.display()
    )));
    let csv = dir.path().join("huge.csv");
    std::fs::copy(anchor("test_cpu_parallel_rust_RAC55.csv"), &csv).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&csv).unwrap();
    file.set_len((64 << 30) + 1).unwrap();
    report(&[csv.as_os_str()]).code(2).stderr(contains(format!(
        "error: '{}' is larger than 64 GiB",
        csv.display()
    )));
}

/// An output folder that is a link another user owns is not written through, whether it is
/// `-o DIR/` (the figures) or the folder of an output file. Making one takes root: elsewhere
/// the test is skipped, and says so.
#[test]
#[cfg_attr(
    not(corescale_test_root),
    ignore = "needs root, to plant a link another user owns (.ci/run runs as root)"
)]
fn an_output_folder_linked_by_another_owner_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let planted = dir.path().join("planted");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534))
        .expect("giving the link to nobody (this test needs root)");
    let csv = anchor("test_cpu_parallel_rust_RAC55.csv");
    let refused = format!(
        "the output folder '{}' is a symbolic link owned by another user: corescale does not write through it",
        planted.display()
    );
    let figures = format!("{}/", planted.display());
    let page = planted.join("page.html");
    for output in [figures.as_ref(), page.as_os_str()] {
        report(&[csv.as_os_str(), "-o".as_ref(), output])
            .code(1)
            .stderr(contains(refused.as_str()));
    }
    // A run's results too, before it measures.
    corescale()
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
        .arg(planted.join("run.json"))
        .timeout(DEADLINE)
        .assert()
        .code(1)
        .stderr(contains(refused.as_str()));
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    // The same link, this user's own, is followed.
    std::os::unix::fs::lchown(&planted, Some(0), Some(0)).unwrap();
    report(&[csv.as_os_str(), "-o".as_ref(), figures.as_ref()]).success();
    assert!(std::fs::read_dir(&victim).unwrap().count() > 0);
}
