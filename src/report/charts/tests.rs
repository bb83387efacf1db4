use super::*;
use crate::analysis::study::analyse;
use crate::latency::IntervalFigures;

/// A level's timeline: 1 s intervals at `rate`, one of them (`stall`) at a tenth.
fn timeline(rate: f64, intervals: usize, stall: usize) -> Vec<IntervalFigures> {
    (0..intervals)
        .map(|index| {
            let rate = if index == stall { rate / 10.0 } else { rate };
            IntervalFigures {
                start_s: index as f64,
                length_s: 1.0,
                responses: rate as u64,
                rate_per_s: rate,
                p50_ms: Some(1.0),
                p99_ms: Some(if index == stall { 900.0 } else { 2.0 }),
                server_lio_per_s: None,
                server_pio_per_s: None,
                histogram: None,
            }
        })
        .collect()
}

#[test]
fn the_largest_level_gets_a_timeline_and_its_stall_a_warning() {
    let mut series =
        crate::analysis::synthetic::measured_job_times(&[10.0, 10.0, 10.5, 14.0], None);
    series.points[3].intervals = timeline(400.0, 12, 7);
    series.points[1].intervals = timeline(200.0, 12, 99);
    let analysis = analyse(vec![series]);
    let warnings = analysis.series[0].warnings.join("\n");
    assert!(
        warnings.contains("4 workers: a stall at 7-8 s"),
        "{warnings}"
    );
    assert!(!warnings.contains("2 workers: a stall"), "{warnings}");
    let figures = figures(&analysis);
    let rate = figures
        .iter()
        .find(|figure| figure.slug == "fig_timeline_rate_1")
        .expect("a rate timeline");
    assert_eq!(rate.lines[0].label, "4 workers (largest)");
    assert_eq!(rate.lines[0].points.len(), 12);
    assert!((rate.lines[0].points[7].1 - 40.0).abs() < 1e-9);
    assert_eq!(rate.x_decimals, 0);
    let p99 = figures
        .iter()
        .find(|figure| figure.slug == "fig_timeline_p99_1")
        .expect("a p99 timeline");
    assert_eq!(p99.lines[0].points[7].1, 900.0);
    assert!(render_svg(rate).unwrap().contains("4 workers (largest)"));
    // A series without timelines (a CSV, another tool's file) gets none.
    let plain = analyse(vec![crate::analysis::synthetic::measured_job_times(
        &[10.0, 10.0],
        None,
    )]);
    assert!(
        figures_of(&plain)
            .iter()
            .all(|slug| !slug.starts_with("fig_timeline"))
    );
}

fn figures_of(analysis: &Analysis) -> Vec<String> {
    figures(analysis)
        .into_iter()
        .map(|figure| figure.slug)
        .collect()
}

#[test]
fn lines_leaving_the_top_end_on_the_border() {
    assert_eq!(
        clip_to_height(&[(1.0, 1.0), (48.0, 48.0)], 20.0),
        vec![(1.0, 1.0), (20.0, 20.0)]
    );
    assert_eq!(
        clip_to_height(&[(1.0, 1.0), (2.0, 2.0)], 20.0),
        vec![(1.0, 1.0), (2.0, 2.0)]
    );
}

/// A replay's p99 is drawn against its speed over the captured pace, not its rate sent
/// (another capture's rate would say nothing beside it); its points in speed order.
#[test]
fn a_replay_is_drawn_against_its_speed() {
    let mut analysis = analyse(vec![crate::analysis::synthetic::measured_job_times(
        &[10.0, 10.0],
        None,
    )]);
    analysis.open_loop = vec![crate::analysis::latency::tests::replay(
        "new-server",
        8.0,
        &[4.0, 1.0, 2.0],
    )];
    let figures = figures(&analysis);
    assert!(
        figures
            .iter()
            .all(|figure| figure.slug != "fig_latency_rate")
    );
    let speed = figures
        .iter()
        .find(|figure| figure.slug == "fig_latency_speed")
        .expect("a figure on the speed axis");
    let xs: Vec<f64> = speed.lines[0].points.iter().map(|point| point.0).collect();
    assert_eq!(xs, [1.0, 2.0, 4.0]);
    // M/M/1 at 8 captured paces: p99 = ln(100) / (8 - s) paces, 10 ms a pace.
    let p99_at_4 = speed.lines[0].points[2].1;
    let expected = 1000.0 * 100f64.ln() / 4.0 / 100.0;
    assert!(
        (p99_at_4 / expected - 1.0).abs() < 0.05,
        "{p99_at_4} against {expected}"
    );
    assert!(
        render_svg(speed)
            .unwrap()
            .contains("speed over the captured pace")
    );
}
