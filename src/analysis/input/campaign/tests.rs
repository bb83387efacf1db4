//! Campaign merges on parts built here: plans, rates, timelines, copies and bounds.
use super::*;
use crate::analysis::series::PointInCampaign;
use crate::latency::{Arrivals, Latency};
use std::time::Duration;

/// A part's level: `sessions` of the campaign's `workers`, `times` answered (in
/// microseconds), at place `level` of the plan; open loop when `asked` is given.
fn level(
    sessions: usize,
    workers: usize,
    level: usize,
    times: &[u64],
    asked: Option<(f64, bool)>,
) -> Point {
    let mut recorded = ResponseTimes::default();
    for time in times {
        recorded.record(Duration::from_micros(*time));
    }
    let mut latency = Latency {
        histogram: Some(recorded.encode()),
        ..Latency::closed("statement", recorded.percentiles().unwrap())
    };
    latency.rate = asked.map(|(target_per_s, sustained)| RateFigures {
        target_per_s,
        achieved_per_s: if sustained {
            target_per_s
        } else {
            target_per_s / 2.0
        },
        arrivals: Arrivals::Poisson,
        due: 1000,
        sent: if sustained { 1000 } else { 500 },
        sustained,
        share: Some(0.5),
    });
    let mut figures = BTreeMap::new();
    figures.insert("statements".to_string(), times.len() as f64);
    Point {
        workers: sessions,
        raw: times.len() as f64,
        figures,
        latency: Some(Box::new(latency)),
        campaign: Some(PointInCampaign {
            workers,
            level,
            started_at: chrono::Utc::now(),
            scheduled_start: None,
            clock_offset_ms: None,
            elapsed_s: 1.0,
            server_counted: false,
        }),
        ..Point::default()
    }
}

fn part(number: usize, points: Vec<Point>, paced: Vec<Point>) -> Series {
    let mut series = Series::new(
        format!("client-{number}"),
        Measure::Rate {
            unit: "statements/s".to_string(),
        },
        points,
        Job::default(),
    );
    series.paced = paced;
    series.source = format!("client-{number}.json");
    series.campaign = Some(CampaignPart {
        name: "pair".to_string(),
        part: number,
        parts: 2,
        start_at: None,
        level_period_s: None,
        max_clock_offset_ms: 50.0,
    });
    series
}

#[test]
fn open_loop_levels_merge_by_their_place_in_the_plan() {
    // Each part ran 2 of 4 sessions closed, then at half its own closed-loop rate (its
    // own share of the campaign's), then at full rate, which part 2 could not keep.
    let one = part(
        1,
        vec![level(2, 4, 0, &[100, 200, 300, 400], None)],
        vec![
            level(2, 4, 1, &[110, 120], Some((300.0, true))),
            level(2, 4, 2, &[900, 950], Some((600.0, true))),
        ],
    );
    let two = part(
        2,
        vec![level(2, 4, 0, &[500, 600, 700, 800], None)],
        vec![
            level(2, 4, 1, &[130, 5000], Some((290.0, true))),
            level(2, 4, 2, &[990, 8000], Some((580.0, false))),
        ],
    );
    let (merged, notes) = merge_campaigns(vec![two, one]).unwrap();
    let [series] = merged.as_slice() else {
        panic!("{merged:?}")
    };
    assert_eq!(series.points.len(), 1);
    assert_eq!(series.paced.len(), 2);
    let half = &series.paced[0];
    assert_eq!(half.workers, 4);
    let rate = half.latency.as_ref().unwrap().rate.unwrap();
    assert_eq!(rate.target_per_s, 590.0);
    assert_eq!((rate.due, rate.sent), (2000, 2000));
    assert!(rate.sustained);
    // The merged p99 is the largest of the four responses, not an average of the
    // parts' p99s.
    let response = &half.latency.as_ref().unwrap().response;
    assert_eq!(response.count, 4);
    assert!((response.p99_ms - 5.0).abs() < 0.01, "{response:?}");
    let full = series.paced[1].latency.as_ref().unwrap().rate.unwrap();
    assert_eq!((full.target_per_s, full.sent), (1180.0, 1500));
    assert!(!full.sustained, "a part that fell behind: the campaign did");
    assert!(
        notes
            .iter()
            .any(|note| note.contains("client-2 did not keep its rate")),
        "{notes:?}"
    );
}

#[test]
fn an_open_loop_level_a_part_lacks_is_left_out_and_said() {
    let one = part(
        1,
        vec![level(2, 4, 0, &[100, 200], None)],
        vec![level(2, 4, 1, &[110, 120], Some((300.0, true)))],
    );
    let two = part(2, vec![level(2, 4, 0, &[500, 600], None)], Vec::new());
    let (merged, notes) = merge_campaigns(vec![one, two]).unwrap();
    assert_eq!(merged[0].points.len(), 1);
    assert!(merged[0].paced.is_empty());
    assert!(
        notes.iter().any(|note| note.contains(
            "at 4 sessions at a set rate, 50% of the closed loop's rate, is incomplete: part 2/2"
        )),
        "{notes:?}"
    );
}

#[test]
fn the_parts_timelines_add_up_when_they_line_up() {
    let interval = |start_s: f64, responses: u64| IntervalFigures {
        start_s,
        length_s: 1.0,
        responses,
        rate_per_s: responses as f64,
        p50_ms: Some(0.1),
        p99_ms: Some(0.2),
        server_lio_per_s: Some(5000.0),
        server_pio_per_s: None,
        histogram: None,
    };
    let mut first = level(2, 4, 0, &[100], None);
    first.intervals = vec![interval(0.0, 10), interval(1.0, 20)];
    let mut second = level(2, 4, 0, &[100], None);
    second.intervals = vec![interval(0.0, 1), interval(1.0, 2)];
    let (merged, _) = merge_campaigns(vec![
        part(1, vec![first.clone()], Vec::new()),
        part(2, vec![second], Vec::new()),
    ])
    .unwrap();
    let timeline = &merged[0].points[0].intervals;
    let summed: Vec<(u64, Option<f64>, Option<f64>)> = timeline
        .iter()
        .map(|interval| {
            (
                interval.responses,
                interval.p99_ms,
                interval.server_lio_per_s,
            )
        })
        .collect();
    assert_eq!(summed, [(11, None, Some(5000.0)), (22, None, Some(5000.0))]);
    // A part whose intervals do not line up leaves the merged level without a timeline.
    let mut shifted = level(2, 4, 0, &[100], None);
    shifted.intervals = vec![interval(0.5, 1)];
    let (merged, _) = merge_campaigns(vec![
        part(1, vec![first], Vec::new()),
        part(2, vec![shifted], Vec::new()),
    ])
    .unwrap();
    assert!(merged[0].points[0].intervals.is_empty());
}

/// Order entry's parts each count their own warehouses' orders, so their NOPM adds up even
/// though the count is the server's; a part whose districts counted more orders than its
/// sessions committed (others' too) is summed by its sessions' count, and said.
#[test]
fn order_entry_parts_add_their_own_orders_and_a_shared_count_is_not_summed() {
    let nopm = |districts: f64, committed: f64| {
        let mut point = level(2, 4, 0, &[100], None);
        point.raw = districts;
        point.figures.insert("nopm".to_string(), districts);
        point.figures.insert("client_nopm".to_string(), committed);
        if let Some(campaign) = point.campaign.as_mut() {
            campaign.server_counted = true;
            campaign.elapsed_s = 60.0;
        }
        point
    };
    let on_nopm_axis = |mut series: Series| {
        series.measure = Measure::Rate {
            unit: "NOPM".to_string(),
        };
        series
    };
    let merge = |first: Point, second: Point| {
        merge_campaigns(vec![
            on_nopm_axis(part(1, vec![first], Vec::new())),
            on_nopm_axis(part(2, vec![second], Vec::new())),
        ])
        .unwrap()
    };
    let (merged, notes) = merge(nopm(600.0, 600.0), nopm(400.0, 400.5));
    assert_eq!(merged[0].points[0].raw, 1000.0);
    assert_eq!(merged[0].points[0].figures["nopm"], 1000.0);
    assert!(
        !notes.iter().any(|note| note.contains("districts")),
        "{notes:?}"
    );
    // Each part read every district: 1,000 NOPM in each, 600 and 400 committed.
    let (merged, notes) = merge(nopm(1000.0, 600.0), nopm(1000.0, 400.0));
    assert_eq!(merged[0].points[0].raw, 1000.0);
    assert_eq!(merged[0].points[0].figures["nopm"], 1000.0);
    assert!(
        notes
            .iter()
            .any(|note| note.contains("'client-1.json' counted 1.00 K NOPM in the districts")),
        "{notes:?}"
    );
}

/// Parts whose intervals kept their responses (`--interval`) merge into each interval's
/// exact percentiles: those of all the parts' responses together.
#[test]
fn the_parts_interval_histograms_merge_into_exact_percentiles() {
    let interval = |start_s: f64, times_us: &[u64]| {
        let mut times = ResponseTimes::coarse();
        for time in times_us {
            times.record(Duration::from_micros(*time));
        }
        IntervalFigures {
            start_s,
            length_s: 1.0,
            responses: times.count(),
            rate_per_s: times.count() as f64,
            p50_ms: times.percentiles().map(|p| p.p50_ms),
            p99_ms: times.percentiles().map(|p| p.p99_ms),
            server_lio_per_s: None,
            server_pio_per_s: None,
            histogram: Some(times.encode()),
        }
    };
    // Part 1 answers fast, part 2 slowly: together, 40 of the 100 responses are slow.
    let fast: Vec<u64> = vec![100; 60];
    let slow: Vec<u64> = vec![5000; 40];
    let mut first = level(2, 4, 0, &[100], None);
    first.intervals = vec![interval(0.0, &fast)];
    let mut second = level(2, 4, 0, &[100], None);
    second.intervals = vec![interval(0.0, &slow)];
    let (merged, _) = merge_campaigns(vec![
        part(1, vec![first], Vec::new()),
        part(2, vec![second], Vec::new()),
    ])
    .unwrap();
    let merged = &merged[0].points[0].intervals[0];
    let all = interval(0.0, &[fast, slow].concat());
    assert_eq!(merged.responses, 100);
    assert_eq!((merged.p50_ms, merged.p99_ms), (all.p50_ms, all.p99_ms));
    assert_eq!(merged.p50_ms.map(|p50| p50 < 0.2), Some(true));
    assert_eq!(merged.p99_ms.map(|p99| p99 > 4.9), Some(true));
    let decoded = |interval: &IntervalFigures| {
        ResponseTimes::decode(interval.histogram.as_deref().unwrap()).unwrap()
    };
    assert_eq!(
        decoded(merged),
        decoded(&all),
        "the same responses in the same buckets"
    );
}

#[test]
fn open_loop_levels_asked_different_rates_are_not_summed() {
    let with_share = |share: Option<f64>, target: f64| {
        let mut point = level(2, 4, 0, &[110], Some((target, true)));
        if let Some(rate) = point
            .latency
            .as_mut()
            .and_then(|latency| latency.rate.as_mut())
        {
            rate.share = share;
        }
        point
    };
    for (one, two) in [
        // --rate 50% on one part, 90% on the other.
        (with_share(Some(0.5), 300.0), with_share(Some(0.9), 500.0)),
        // --rate 1000 on one, 2000 on the other (each its half).
        (with_share(None, 500.0), with_share(None, 1000.0)),
    ] {
        let problem = merge_campaigns(vec![
            part(1, Vec::new(), vec![one]),
            part(2, Vec::new(), vec![two]),
        ])
        .unwrap_err()
        .to_string();
        assert!(problem.contains("asked different rates"), "{problem}");
    }
    // The same fixed rate split in proportion to the sessions is one plan.
    let (merged, _) = merge_campaigns(vec![
        part(1, Vec::new(), vec![with_share(None, 500.0)]),
        part(2, Vec::new(), vec![with_share(None, 500.0)]),
    ])
    .unwrap();
    assert_eq!(
        merged[0].paced[0]
            .latency
            .as_ref()
            .unwrap()
            .rate
            .unwrap()
            .target_per_s,
        1000.0
    );
}

#[test]
fn parts_of_different_plans_are_refused() {
    let one = part(
        1,
        Vec::new(),
        vec![level(2, 4, 0, &[110], Some((300.0, true)))],
    );
    let two = part(
        2,
        Vec::new(),
        vec![level(3, 6, 0, &[120], Some((300.0, true)))],
    );
    let problem = merge_campaigns(vec![one, two]).unwrap_err().to_string();
    assert!(problem.contains("ran different plans"), "{problem}");
}

#[test]
fn a_part_given_twice_or_copied_is_refused_naming_both_files() {
    let times: Vec<u64> = (0..150).map(|index| 100 + index * 37 % 900).collect();
    let twice = part(1, vec![level(2, 4, 0, &times, None)], Vec::new());
    let mut again = twice.clone();
    again.source = "elsewhere/client-1.json".to_string();
    let problem = merge_campaigns(vec![twice, again]).unwrap_err().to_string();
    assert!(
        problem.contains("'client-1.json' and 'elsewhere/client-1.json' are both part 1/2"),
        "{problem}"
    );
    // Part 2 holds part 1's very responses.
    let one = part(1, vec![level(2, 4, 0, &times, None)], Vec::new());
    let two = part(2, vec![level(2, 4, 0, &times, None)], Vec::new());
    let problem = merge_campaigns(vec![one, two]).unwrap_err().to_string();
    assert!(
        problem.contains("'client-1.json' and 'client-2.json' hold the same responses at level 1"),
        "{problem}"
    );
}

#[test]
fn parts_scheduled_apart_are_refused_and_names_are_escaped() {
    let one = part(1, vec![level(2, 4, 0, &[100], None)], Vec::new());
    let mut two = part(2, vec![level(2, 4, 0, &[300], None)], Vec::new());
    two.campaign.as_mut().unwrap().level_period_s = Some(12.0);
    let problem = merge_campaigns(vec![one, two]).unwrap_err().to_string();
    assert!(problem.contains("were scheduled apart"), "{problem}");
    let mut one = part(1, vec![level(2, 4, 0, &[100], None)], Vec::new());
    let mut two = part(2, vec![level(2, 4, 0, &[300], None)], Vec::new());
    for part in [&mut one, &mut two] {
        part.campaign.as_mut().unwrap().name = "evil\u{1b}[2J\u{202e}".to_string();
    }
    let (merged, _) = merge_campaigns(vec![one, two]).unwrap();
    assert_eq!(merged[0].name, "evil\\u{1b}[2J\\u{202e}");
}

#[test]
fn histograms_past_what_their_encoding_holds_are_refused() {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let forged = |count: u64| {
        let mut histogram =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        histogram.record_n(2_840_000, count).unwrap();
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&histogram, &mut bytes)
            .unwrap();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    for count in [1 << 62, (1 << 62) + 7] {
        let problem = ResponseTimes::decode(&forged(count)).unwrap_err();
        assert!(problem.contains("more than"), "{problem}");
    }
    let mut half = ResponseTimes::decode(&forged(1 << 47)).unwrap();
    let other = ResponseTimes::decode(&forged((1 << 47) + 1)).unwrap();
    assert!(half.try_merge(&other).is_err());
    assert_eq!(half.count(), 1 << 47, "a refused merge changes nothing");
}

#[test]
fn the_parts_classes_merge_into_exact_histograms_and_a_missing_class_counts_none() {
    let class = |name: &str, times_us: &[u64]| {
        let mut times = ResponseTimes::default();
        for time in times_us {
            times.record(Duration::from_micros(*time));
        }
        ClassTimes {
            class: name.to_string(),
            measured_from: None,
            histogram: times.encode(),
        }
    };
    // Part 1 answered both classes, part 2 only new orders (it drew no delivery).
    let mut first = level(2, 4, 0, &[100], None);
    first.classes = vec![
        class("new_order", &[100; 30]),
        class("delivery", &[9000; 3]),
    ];
    let mut second = level(2, 4, 0, &[100], None);
    second.classes = vec![class("new_order", &[5000; 20])];
    let (merged, _) = merge_campaigns(vec![
        part(1, vec![first], Vec::new()),
        part(2, vec![second], Vec::new()),
    ])
    .unwrap();
    let classes = &merged[0].points[0].classes;
    let decoded = |name: &str| {
        let found = classes.iter().find(|one| one.class == name).unwrap();
        ResponseTimes::decode(&found.histogram).unwrap()
    };
    assert_eq!(classes.len(), 2, "{classes:?}");
    let all = [vec![100; 30], vec![5000; 20]].concat();
    assert_eq!(
        decoded("new_order"),
        ResponseTimes::decode(&class("new_order", &all).histogram).unwrap()
    );
    assert_eq!(decoded("delivery").count(), 3);
}

#[test]
fn classes_are_not_merged_when_a_part_recorded_none() {
    let mut times = ResponseTimes::default();
    times.record(Duration::from_micros(100));
    let mut first = level(2, 4, 0, &[100], None);
    first.classes = vec![ClassTimes {
        class: "new_order".to_string(),
        measured_from: None,
        histogram: times.encode(),
    }];
    // The second part's document is from before classes: it says nothing of new orders.
    let second = level(2, 4, 0, &[100], None);
    let (merged, notes) = merge_campaigns(vec![
        part(1, vec![first], Vec::new()),
        part(2, vec![second], Vec::new()),
    ])
    .unwrap();
    assert!(merged[0].points[0].classes.is_empty());
    assert!(
        notes
            .iter()
            .any(|note| note.contains("a part recorded no classes")),
        "{notes:?}"
    );
}
