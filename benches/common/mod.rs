//! What the database benches share: the release binary run as a user runs it, and the
//! median of their rounds.

use std::process::Command;

/// Runs the corescale binary built for the bench; panics with its standard error when it
/// fails (a bench has no other way to say so).
pub fn corescale(args: &[&str]) -> std::process::Output {
    let output = Command::new(env!("CARGO_BIN_EXE_corescale"))
        .args(args)
        .output()
        .expect("the corescale binary runs");
    assert!(
        output.status.success(),
        "corescale {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The median of a bench's rounds (an even count: the mean of the middle two).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// One 3 s `run db` level of `workers` sessions against `target` (with `extra` options),
/// written to `json`: the level as the document records it.
pub fn db_level(
    target: &str,
    workers: &str,
    extra: &[&str],
    json: &std::path::Path,
) -> serde_json::Value {
    let mut args = vec![
        "run",
        "db",
        "--target",
        target,
        "-w",
        workers,
        "--duration",
        "3s",
        "--repeat",
        "1",
        "-q",
        "-o",
        json.to_str().expect("a UTF-8 path"),
    ];
    args.extend(extra);
    corescale(&args);
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("the run's JSON"))
            .expect("JSON");
    document["levels"][0].clone()
}
