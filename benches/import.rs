//! A pgbench per-transaction log of 1 GB read by `report`'s importer: under 10 s on this
//! machine, streamed, its memory bounded and not proportional to the file
//! (`cargo bench --bench import`; CORESCALE_BENCH_LOG_MB sets the size, default 1024).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use corescale::analysis::input::{InputFile, read_input};

/// The process's peak resident memory so far (VmHWM), in MiB.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// A log as pgbench 15 writes it: 64 clients, latencies of 100 us to 30 ms, one second's
/// transactions after another.
fn write_log(path: &Path, bytes: u64) -> u64 {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let (mut written, mut lines) = (0u64, 0u64);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    while written < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let client = state % 64;
        let latency = 100 + (state >> 8) % 30_000;
        let second = 1_795_663_133 + lines / 50_000;
        let micros = (lines * 20) % 1_000_000;
        let line = format!("{client} {} {latency} 0 {second} {micros}\n", lines / 64);
        file.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        lines += 1;
    }
    file.flush().unwrap();
    lines
}

fn main() {
    let megabytes: u64 = std::env::var("CORESCALE_BENCH_LOG_MB")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1024);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("pgbench_log.4242");
    let lines = write_log(&path, megabytes << 20);
    let before = peak_mib();
    let started = Instant::now();
    let series = read_input(&InputFile::new(&path, None)).expect("the log reads");
    let seconds = started.elapsed().as_secs_f64();
    let after = peak_mib();
    let level = &series[0].points[0];
    assert_eq!(
        level.latency.as_ref().map(|latency| latency.response.count),
        Some(lines),
        "every transaction counted"
    );
    assert_eq!(level.workers, 64);
    println!(
        "pgbench log of {megabytes} MiB ({lines} transactions): read in {seconds:.2} s ({:.0} MiB/s); peak memory {before:.0} MiB before, {after:.0} MiB after (target: under 10 s, memory not growing with the file)",
        megabytes as f64 / seconds,
    );
}
