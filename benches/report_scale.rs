//! `report` on one corescale CSV of 10^3, 10^4 and 10^5 levels, as the release binary runs
//! it: CPU time (user + system), peak memory and output size for the terminal, `--json` and
//! `--html` (targets at 10^5 levels: under 1 s of CPU and 150 MB, the JSON at most 4x the
//! CSV). Rows are a real run's (tests/fixtures/run/cpu-sweep.csv), repeated with rising
//! worker counts. `cargo bench --bench report_scale`.

use std::path::Path;
use std::process::Command;

/// The fixture's header and its last row, the row repeated for `levels` worker counts with a
/// capacity that rises to 2 workers and stays.
fn write_csv(path: &Path, levels: usize) {
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run/cpu-sweep.csv"),
    )
    .expect("the fixture");
    let mut lines = fixture.lines();
    let header = lines.next().expect("a header");
    let row: Vec<&str> = lines.last().expect("a row").split(',').collect();
    let column = |name: &str| {
        header
            .split(',')
            .position(|cell| cell == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (workers_at, capacity_at, rate_at) = (
        column("Num_concurrent_jobs"),
        column("capacity_jobs_per_min"),
        column("rate_total"),
    );
    let mut text = format!("{header}\n");
    for workers in 1..=levels {
        let capacity = workers.min(2) as f64 * 60.0 * (1.0 + 0.001 * (workers % 7) as f64);
        let mut cells: Vec<String> = row.iter().map(|cell| cell.to_string()).collect();
        cells[workers_at] = workers.to_string();
        cells[capacity_at] = capacity.to_string();
        cells[rate_at] = (capacity * 8.3e6).to_string();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).expect("writing the CSV");
}

/// CPU seconds (user + system) and peak resident memory (MB) of one `report` run.
// The child is reaped by wait4, which std's Child cannot see.
#[allow(clippy::zombie_processes)]
fn measure(arguments: &[&std::ffi::OsStr]) -> (f64, f64) {
    let child = Command::new(env!("CARGO_BIN_EXE_corescale"))
        .args(arguments)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("running corescale");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child's, not yet waited for; both pointers are valid.
    let waited = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(waited > 0 && status == 0, "report failed: {status}");
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    (
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    println!("levels | CSV MB | output | CPU s | peak MB | output MB");
    for levels in [1_000, 10_000, 100_000] {
        let csv = dir.path().join(format!("levels{levels}.csv"));
        write_csv(&csv, levels);
        let csv_mb = std::fs::metadata(&csv).expect("the CSV").len() as f64 / 1e6;
        for (output, flag) in [
            ("terminal", None),
            ("--json", Some("--json")),
            ("--html", Some("--html")),
        ] {
            let written = dir.path().join(format!("out{levels}{output}"));
            let mut arguments = vec!["report".as_ref(), csv.as_os_str()];
            if let Some(flag) = flag {
                arguments.extend(["-q".as_ref(), flag.as_ref(), written.as_os_str()]);
            }
            let (cpu, peak) = measure(&arguments);
            let size = std::fs::metadata(&written).map_or(0.0, |meta| meta.len() as f64 / 1e6);
            println!("{levels} | {csv_mb:.1} | {output} | {cpu:.2} | {peak:.0} | {size:.1}");
        }
    }
}
