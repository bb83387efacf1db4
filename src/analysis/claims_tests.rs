//! Known answers for the sentences a DBA copies into a proposal: each claim is said only
//! where the levels and their uncertainty carry it, and the answer is said once.

use super::series::Measure;
use super::series::Series;
use super::study::analyse;
use super::synthetic::{point, series};

/// A rate series of the given (workers, capacity, relative 95% uncertainty) levels.
fn levels(
    name: &str,
    levels: &[(usize, f64, Option<f64>)],
    cpus: Option<(usize, usize)>,
) -> Series {
    let points = levels
        .iter()
        .map(|&(workers, rate, uncertainty)| super::series::Point {
            capacity_uncertainty: uncertainty,
            ..point(workers, rate)
        })
        .collect();
    let mut series = series(
        Measure::Rate {
            unit: "LIO/s".to_string(),
        },
        points,
        cpus,
    );
    series.name = name.to_string();
    series
}

/// Speedup 1.72 at 2 and 1.76 at 4, each level known to ±5% from its batches: neither
/// linear nor still rising; the plateau is from 2 workers.
#[test]
fn a_flat_series_is_neither_linear_nor_still_rising() {
    let flat = levels(
        "flat",
        &[
            (1, 1.0e6, Some(0.05)),
            (2, 1.72e6, Some(0.05)),
            (4, 1.76e6, Some(0.05)),
        ],
        Some((2, 2)),
    );
    let analysis = analyse(vec![flat]);
    let said = analysis.findings.join(" ");
    assert!(!said.contains("linearly"), "{said}");
    assert!(!said.contains("still rising"), "{said}");
    let saturation = analysis.series[0].saturation.as_ref().unwrap();
    assert!(!saturation.censored, "{saturation:?}");
    assert_eq!(saturation.workers, 2, "{saturation:?}");
    assert!(
        said.contains("capacity reaches its plateau at 2 workers"),
        "{said}"
    );
}

/// Rising 30% a step with levels known to ±2%: still rising, said so.
#[test]
fn a_series_still_rising_is_said_to_be() {
    let rising = levels(
        "rising",
        &[
            (1, 1.0e6, Some(0.02)),
            (2, 1.9e6, Some(0.02)),
            (3, 2.7e6, Some(0.02)),
            (4, 3.5e6, Some(0.02)),
        ],
        Some((8, 8)),
    );
    let analysis = analyse(vec![rising]);
    let said = analysis.findings.join(" ");
    assert!(analysis.series[0].saturation.as_ref().unwrap().censored);
    assert!(
        said.contains("still rising at the last level measured (4)"),
        "{said}"
    );
}

/// The same last step of 3%, once between levels known to ±1% (a rise) and once between
/// levels known to ±4% (no rise the batches can tell).
#[test]
fn a_small_last_step_is_a_rise_only_beyond_its_uncertainty() {
    let with = |uncertainty: f64| {
        let series = levels(
            "s",
            &[
                (1, 1.0e6, Some(uncertainty)),
                (2, 1.5e6, Some(uncertainty)),
                (3, 1.6e6, Some(uncertainty)),
                (4, 1.648e6, Some(uncertainty)),
            ],
            Some((8, 8)),
        );
        let analysis = analyse(vec![series]);
        let saturation = analysis.series[0].saturation.clone().unwrap();
        (saturation, analysis.findings.join(" "))
    };
    let (sure, said) = with(0.005);
    assert!(sure.censored && !sure.rise_untold, "{sure:?}");
    assert!(
        said.contains("still rising at the last level measured (4)"),
        "{said}"
    );
    // Neither a rise nor a plateau: what cannot be told, and what to measure.
    let (unsure, said) = with(0.04);
    assert!(!unsure.censored && unsure.rise_untold, "{unsure:?}");
    assert!(
        said.contains("capacity is highest at the last level measured (4 workers, 1.65 M LIO/s), but its last step is within what the batches leave uncertain, so whether it still rises cannot be told"),
        "{said}"
    );
    assert!(
        !said.contains("plateau") && !said.contains("still rising at"),
        "{said}"
    );
}

/// Speedup 3.09 at 2 workers on 2 CPUs: flagged with its likely causes.
#[test]
fn a_speedup_above_the_cpus_is_flagged() {
    let mut cold = levels(
        "mariadb",
        &[(1, 1.0e5, Some(0.02)), (2, 3.09e5, Some(0.02))],
        Some((2, 2)),
    );
    cold.provenance.connection = Some("mysql://root@127.0.0.1:3306/test".to_string());
    // Workers that wait: bounded by their number only.
    let said = analyse(vec![cold.clone()]).findings.join(" ");
    assert!(
        said.contains("mariadb: speedup 3.09 at 2 workers is more than its 2 workers can give")
            && said.contains("a cold first level"),
        "{said}"
    );
    // A CPU-bound first level: the CPUs, shared by client and server, bound it.
    cold.points[0].cpu_fraction = Some(0.95);
    let said = analyse(vec![cold]).findings.join(" ");
    assert!(
        said.contains("mariadb: speedup 3.09 at 2 workers is more than the 2 logical CPUs that client and server shared on one host can give"),
        "{said}"
    );
    // Linear within the noise is no finding.
    let linear = levels(
        "cpu",
        &[(1, 1.0e5, Some(0.02)), (2, 2.04e5, Some(0.02))],
        Some((2, 2)),
    );
    let said = analyse(vec![linear]).findings.join(" ");
    assert!(!said.contains("more than"), "{said}");
}

/// A server against a 2-node cluster whose levels come from two batches each: the answer
/// carries the uncertainty those batches leave (never ± 0.0), first and once.
#[test]
fn the_answer_from_two_batches_is_never_certain() {
    // Two batches of 2.2 M and 2.4 M: t = 12.7, half-width 12.7 x 0.141 M / sqrt 2 / 2.3 M.
    let two_batches = crate::stats::relative_half_width_95(&[2.2e6, 2.4e6]).unwrap();
    assert!((two_batches - 0.5524).abs() < 1e-3, "{two_batches}");
    let server = levels(
        "new-server",
        &[
            (1, 1.2e6, Some(two_batches)),
            (2, 2.3e6, Some(two_batches)),
            (3, 2.3e6, Some(two_batches)),
        ],
        Some((2, 2)),
    );
    let mut cluster = levels(
        "cluster",
        &[
            (1, 0.6e6, Some(0.01)),
            (2, 1.1e6, Some(0.01)),
            (3, 1.1e6, Some(0.01)),
        ],
        Some((4, 4)),
    );
    cluster.nodes = Some(2);
    let analysis = analyse(vec![cluster, server]);
    let answer = analysis.answer.as_ref().expect("an answer");
    assert_eq!(analysis.findings[0], answer.sentence);
    let nodes = answer.equivalent.unwrap();
    assert!((nodes - 2.0 * 2.3 / 1.1).abs() < 0.01, "{answer:?}");
    let uncertainty = answer.uncertainty.unwrap();
    assert!(
        (uncertainty / nodes - two_batches.hypot(0.01)).abs() < 0.02,
        "{answer:?}"
    );
    assert!(
        answer.sentence.starts_with(
            "new-server replaces 4.2 ± 2.3 of cluster's 2 nodes at 3 workers, the largest load both measured: 2.30 M LIO/s at 3 workers against 1.10 M at 3 workers on cluster (where new-server saturates cannot be told from its batches: no plateau to compare)"
        ),
        "{}",
        answer.sentence
    );
    // No uncertainty anywhere reads as zero ("± 0.0", "± 0.00" and the like).
    let said = analysis.findings.join(" ");
    for (at, _) in said.match_indices("± ") {
        let number: String = said[at + "± ".len()..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        assert!(number.parse::<f64>().is_ok_and(|u| u > 0.0), "{said}");
    }
}

/// A run with no --sweep, -w or --full swept automatically (1, 2, 3 on a 2-CPU host): it is
/// told to give a longer list, never to use the --sweep auto it already used.
#[test]
fn a_run_that_swept_automatically_is_not_told_to() {
    let warnings = |line: &str| {
        let mut short = levels(
            "db",
            &[(1, 1.0e5, None), (2, 1.9e5, None), (3, 2.0e5, None)],
            Some((2, 2)),
        );
        short.provenance.command_line = Some(line.to_string());
        analyse(vec![short]).series[0].warnings.join(" ")
    };
    let default = warnings("corescale run db --target postgres://x/test -o db.json");
    assert!(
        default.contains("a longer list") && !default.contains("--sweep auto"),
        "{default}"
    );
    let listed = warnings("corescale run db --target postgres://x/test --sweep 1,2,3");
    assert!(
        listed.contains("measure with --full or --sweep auto"),
        "{listed}"
    );
}

/// The PostgreSQL sweep of this host with two batches a level (batches of 2.92/2.96,
/// 4.72/4.31 and 3.79/3.97 M LIO/s): the top level is known only to ±58%, so no plateau is
/// placed; the sentence says so and what to measure.
#[test]
fn a_plateau_is_not_placed_from_levels_two_batches_cannot_tell_apart() {
    let level = |workers: usize, batches: [f64; 2]| {
        let mean = (batches[0] + batches[1]) / 2.0;
        (
            workers,
            mean,
            crate::stats::relative_half_width_95(&batches),
        )
    };
    let series = levels(
        "vm",
        &[
            level(1, [2.920e6, 2.958e6]),
            level(2, [4.717e6, 4.308e6]),
            level(3, [3.788e6, 3.972e6]),
        ],
        Some((2, 2)),
    );
    let analysis = analyse(vec![series]);
    let saturation = analysis.series[0].saturation.as_ref().unwrap();
    let untold = saturation.untold.expect("too wide to tell");
    assert!((untold - 0.577).abs() < 0.01, "{saturation:?}");
    let said = analysis.findings.join(" ");
    assert!(
        said.contains("capacity is highest at 2 workers (4.51 M LIO/s), but that level is known only to ±58% from its batches, so where capacity saturates cannot be told: measure with --repeat 5 or more"),
        "{said}"
    );
    assert!(!said.contains("plateau"), "{said}");
}

/// A noisy level within the cores is one where jobs should not spread; past them, a level
/// is noisy only by a jump over the levels beside it, and the warning says that instead.
#[test]
fn a_noisy_level_is_said_for_what_makes_it_noisy() {
    let noisy = |cvs: [f64; 3]| {
        let mut series = levels(
            "host",
            &[(1, 1.0e6, None), (2, 2.0e6, None), (3, 2.0e6, None)],
            Some((2, 2)),
        );
        for (point, cv) in series.points.iter_mut().zip(cvs) {
            point.cv = Some(cv);
        }
        analyse(vec![series]).series[0].warnings.join(" ")
    };
    let within = noisy([0.01, 0.09, 0.02]);
    assert!(
        within.contains("CV above 5% at 2 workers, where jobs should not spread"),
        "{within}"
    );
    let past = noisy([0.01, 0.02, 0.09]);
    assert!(
        past.contains("CV above 5% at 3 workers, more than twice that of the levels beside them (past the cores, where jobs spread anyway)"),
        "{past}"
    );
    assert!(!past.contains("should not spread"), "{past}");
    // Past the cores, a CV like its neighbour's is the spread expected there.
    assert!(!noisy([0.01, 0.06, 0.09]).contains("3 workers"));
}

/// Two series that both measured 2, 4 and 8 workers, neither one worker: the comparison
/// names the loads they share, never "no load level in common"; the per-worker figure is
/// the median of the shared levels' ratios (1.10 at 2, 1.20 at 4, 1.30 at 8: 1.20).
#[test]
fn series_sharing_levels_without_one_worker_are_compared_at_them() {
    let cluster = levels(
        "cluster",
        &[
            (2, 2.2e6, Some(0.01)),
            (4, 4.8e6, Some(0.01)),
            (8, 10.4e6, Some(0.01)),
        ],
        None,
    );
    let server = levels(
        "server",
        &[
            (2, 2.0e6, Some(0.01)),
            (4, 4.0e6, Some(0.01)),
            (8, 8.0e6, Some(0.01)),
        ],
        None,
    );
    let analysis = analyse(vec![cluster, server]);
    let said = analysis.findings.join(" ");
    assert!(!said.contains("no load level in common"), "{said}");
    assert!(
        said.contains("at the loads both measured (2, 4 and 8 workers)"),
        "{said}"
    );
    assert!(said.contains("1.20x"), "{said}");
}
