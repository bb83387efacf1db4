//! What TLS costs a PostgreSQL LIO test, measured side by side (`cargo bench --bench db_tls`):
//! the release binary runs `run db` against the same server and tables with `sslmode=disable`
//! and `sslmode=require`, alternating over `TLS_ROUNDS` rounds (default 7), at the default
//! pipelining; the median LIO/s of each, and their ratio, are printed. The server is
//! CORESCALE_TEST_PG (default postgres://postgres@127.0.0.1:5432/test), which must offer TLS
//! (Debian's PostgreSQL does, with its snakeoil certificate). `TLS_WORKERS` sets the sessions
//! (default 1). The tables are set up before and torn down after.

mod common;

use common::{corescale, db_level, median};

/// The median database LIO/s of one `run db` level.
fn lio_per_s(target: &str, workers: &str, json: &std::path::Path) -> f64 {
    db_level(target, workers, &[], json)["workload_figures"]["db_lio_per_s"]
        .as_f64()
        .expect("db_lio_per_s")
}

fn main() {
    let base = std::env::var("CORESCALE_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let rounds: usize = std::env::var("TLS_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(7);
    let workers = std::env::var("TLS_WORKERS").unwrap_or_else(|_| "1".to_string());
    let with = |mode: &str| {
        let separator = if base.contains('?') { '&' } else { '?' };
        format!("{base}{separator}sslmode={mode}")
    };
    let (clear, tls) = (with("disable"), with("require"));
    corescale(&[
        "db",
        "setup",
        "--target",
        &clear,
        "--schemas",
        "2",
        "--scale",
        "4096",
    ]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("level.json");
    let (mut clear_rates, mut tls_rates) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so a drift of the host favours neither.
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for encrypted in order {
            if encrypted {
                tls_rates.push(lio_per_s(&tls, &workers, &json));
            } else {
                clear_rates.push(lio_per_s(&clear, &workers, &json));
            }
        }
    }
    corescale(&["db", "teardown", "--target", &clear]);
    let (clear_median, tls_median) = (median(clear_rates.clone()), median(tls_rates.clone()));
    println!(
        "PostgreSQL LIO/s, {workers} session(s), default pipelining, {rounds} alternating rounds of 3 s"
    );
    println!("  clear text (sslmode=disable): median {clear_median:.0}  rounds {clear_rates:.0?}");
    println!("  TLS (sslmode=require):        median {tls_median:.0}  rounds {tls_rates:.0?}");
    println!(
        "  TLS / clear: {:.3} ({:+.1}%)",
        tls_median / clear_median,
        100.0 * (tls_median / clear_median - 1.0)
    );
}
