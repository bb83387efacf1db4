//! What timing every statement costs a database run, measured side by side
//! (`cargo bench --bench db_latency`): the release binary runs `run db -w 1` against the same
//! server and tables with and without its per-statement clock reads and histogram (the hidden
//! `--no-response-times`), alternating over `DB_LATENCY_ROUNDS` rounds (default 7), at the
//! default pipelining and at `--pipeline 1`; the median LIO/s of each and their ratio are
//! printed (target: within 1%). The server is CORESCALE_TEST_PG (default
//! postgres://postgres@127.0.0.1:5432/test); the tables are set up before and torn down after.

mod common;

use common::{corescale, db_level, median};

/// The database's LIO/s of one 3 s level, and the client's CPU microseconds per statement
/// (steadier than a rate on a shared host: what recording adds is CPU on the client).
fn lio_per_s(target: &str, extra: &[&str], json: &std::path::Path) -> (f64, f64) {
    let level = &db_level(target, "1", extra, json);
    // The run without recording must really have recorded nothing.
    assert_eq!(
        level["latency"].is_null(),
        extra.contains(&"--no-response-times"),
        "{level}"
    );
    let figure = |name: &str| {
        level["workload_figures"][name]
            .as_f64()
            .unwrap_or_else(|| panic!("no {name}: {level}"))
    };
    (
        figure("db_lio_per_s"),
        1e6 * figure("client_cpu_s") / figure("statements"),
    )
}

fn main() {
    let target = std::env::var("CORESCALE_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let rounds: usize = std::env::var("DB_LATENCY_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(7);
    corescale(&[
        "db",
        "setup",
        "--target",
        &target,
        "--schemas",
        "1",
        "--scale",
        "4096",
    ]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("run.json");
    println!("db, 1 session, 3 s levels, {rounds} rounds alternating");
    for (name, pipeline) in [
        ("default pipelining", &[][..]),
        ("--pipeline 1", &["--pipeline", "1"][..]),
    ] {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        let (mut ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
        let (mut cpu_with, mut cpu_without) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let mut off = pipeline.to_vec();
            off.push("--no-response-times");
            // Alternate which goes first, so a drift over the round favours neither.
            let (a, b) = if round % 2 == 0 {
                let a = lio_per_s(&target, pipeline, &json);
                (a, lio_per_s(&target, &off, &json))
            } else {
                let b = lio_per_s(&target, &off, &json);
                (lio_per_s(&target, pipeline, &json), b)
            };
            with.push(a.0);
            without.push(b.0);
            ratios.push(a.0 / b.0);
            cpu_with.push(a.1);
            cpu_without.push(b.1);
            cpu_ratios.push(a.1 / b.1);
        }
        println!(
            "{name}: recorded {:.0} LIO/s, not recorded {:.0} LIO/s; median ratio recorded/not {:.4} (rounds {:.3} to {:.3})",
            median(with.clone()),
            median(without.clone()),
            median(ratios.clone()),
            ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratios.iter().copied().fold(0.0, f64::max)
        );
        println!(
            "{name}: client CPU per statement recorded {:.2} us, not recorded {:.2} us; median ratio {:.4}",
            median(cpu_with),
            median(cpu_without),
            median(cpu_ratios)
        );
    }
    corescale(&["db", "teardown", "--target", &target]);
}
