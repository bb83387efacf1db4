//! The tables against the analysis they show: one answer, whichever is read.

use crate::analysis::series::{Measure, Point};
use crate::analysis::synthetic::{point, series};

/// A series whose highest level is known only to ±58% from its two batches: the table
/// says the plateau is untold, as the findings do, not where it begins.
#[test]
fn an_untold_saturation_is_not_placed_in_the_table() {
    let level = |workers: usize, batches: [f64; 2]| Point {
        capacity_uncertainty: crate::stats::relative_half_width_95(&batches),
        ..point(workers, (batches[0] + batches[1]) / 2.0)
    };
    let measured = series(
        Measure::Rate {
            unit: "LIO/s".to_string(),
        },
        vec![
            level(1, [2.920e6, 2.958e6]),
            level(2, [4.717e6, 4.308e6]),
            level(3, [3.788e6, 3.972e6]),
        ],
        Some((2, 2)),
    );
    let analysis = crate::analysis::study::analyse(vec![measured]);
    let findings = analysis.findings.join(" ");
    assert!(findings.contains("cannot be told"), "{findings}");
    let table = super::tables::series_table(&analysis);
    let column = table
        .headers
        .iter()
        .position(|header| header == "saturation")
        .unwrap();
    assert_eq!(table.rows[0][column], "untold (max 4.51 M at n=2 ±58%)");
}

/// The untold series beside two whose plateaus are placed: the comparison neither places
/// the untold plateau nor divides capacities at saturation; the findings say why, and the
/// capacities compare at the largest load both measured.
#[test]
fn an_untold_saturation_is_not_compared_at_saturation() {
    let level = |workers: usize, batches: [f64; 2]| Point {
        capacity_uncertainty: crate::stats::relative_half_width_95(&batches),
        ..point(workers, (batches[0] + batches[1]) / 2.0)
    };
    let rate = || Measure::Rate {
        unit: "LIO/s".to_string(),
    };
    let mut cluster = series(
        rate(),
        vec![
            level(1, [2.920e6, 2.958e6]),
            level(2, [4.717e6, 4.308e6]),
            level(3, [3.788e6, 3.972e6]),
        ],
        Some((2, 2)),
    );
    cluster.name = "cluster".into();
    let mut server = series(
        rate(),
        vec![
            level(1, [2.0e6, 2.01e6]),
            level(2, [3.0e6, 3.01e6]),
            level(3, [3.02e6, 3.0e6]),
        ],
        Some((2, 2)),
    );
    server.name = "server".into();
    let mut third = series(
        rate(),
        vec![
            level(1, [1.0e6, 1.01e6]),
            level(2, [1.5e6, 1.51e6]),
            level(3, [1.52e6, 1.5e6]),
        ],
        Some((2, 2)),
    );
    third.name = "third".into();
    let analysis = crate::analysis::study::analyse(vec![cluster, server, third]);
    let findings = analysis.findings.join(" ");
    assert!(
        findings.contains("where cluster saturates cannot be told from its batches, so capacities at saturation are not compared"),
        "{findings}"
    );
    assert!(
        !findings.contains("the capacity of server at saturation"),
        "{findings}"
    );
    let table = super::tables::comparison_table(&analysis.comparisons[0]);
    let column = table
        .headers
        .iter()
        .position(|header| header == "saturation")
        .unwrap();
    let cluster_row = table.rows.iter().find(|row| row[0] == "cluster").unwrap();
    assert_eq!(cluster_row[column], "untold", "{cluster_row:?}");
}

/// Two engines that trade places per worker (0.87x at 1 worker, 1.13x at 2): the low-load
/// cell shows the range its levels span, not a ± that covers neither.
#[test]
fn a_band_wider_than_its_noise_shows_its_range() {
    let mut first =
        crate::analysis::synthetic::rate_series(|_| 1.0, &[1, 2, 4], 0.0, 1, Some((2, 4)));
    let rates = [0.87e6, 2.26e6, 3.0e6];
    for (point, rate) in first.points.iter_mut().zip(rates) {
        point.raw = rate;
    }
    first.name = "postgresql".into();
    let mut second = crate::analysis::synthetic::rate_series(
        |workers| workers * 1.0e6,
        &[1, 2, 4],
        0.0,
        1,
        Some((2, 4)),
    );
    second.points[2].raw = 3.0e6;
    second.name = "mariadb".into();
    let analysis = crate::analysis::study::analyse(vec![second, first]);
    let comparison = analysis.comparisons.first().expect("two series compared");
    let table = super::tables::comparison_table(comparison);
    let row = table
        .rows
        .iter()
        .find(|row| row[0] == "postgresql")
        .expect("a row for postgresql");
    assert_eq!(row[3], "1.00x (0.87-1.13x) (1..2)", "{row:?}");
}
