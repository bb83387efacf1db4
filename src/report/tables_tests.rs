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
