//! `report`'s merge of a campaign's parts, timed: 100 parts (client hosts) of 20 levels each,
//! every level with its response histogram (target: under 1 s)
//! (`cargo bench --bench campaign_merge`).

use std::time::{Duration, Instant};

use corescale::analysis::input::merge_campaigns;
use corescale::analysis::series::{Job, Measure, Point, PointInCampaign, Series};
use corescale::latency::{Latency, ResponseTimes};
use corescale::result::CampaignPart;

const PARTS: usize = 100;
const LEVELS: usize = 20;

/// One part's series: level k has 2k sessions of its own, 200k in the campaign, and a
/// histogram of a thousand responses spread over a few milliseconds.
fn part(number: usize) -> Series {
    let points = (1..=LEVELS)
        .map(|level| {
            let mut times = ResponseTimes::default();
            for response in 0..1000u64 {
                times.record(Duration::from_nanos(
                    200_000 + (response * 7919 + (number * level) as u64) % 5_000_000,
                ));
            }
            let response = times.percentiles().expect("recorded");
            let mut figures = std::collections::BTreeMap::new();
            figures.insert("statements".to_string(), 1000.0);
            figures.insert("client_cpu_s".to_string(), 0.5);
            Point {
                workers: 2 * level,
                raw: 1000.0 + level as f64,
                figures,
                latency: Some(Box::new(Latency {
                    histogram: Some(times.encode()),
                    ..Latency::closed("statement", response)
                })),
                campaign: Some(PointInCampaign {
                    workers: 2 * level * PARTS,
                    level: level - 1,
                    started_at: chrono::Utc::now(),
                    scheduled_start: None,
                    clock_offset_ms: Some(0.1),
                    elapsed_s: 10.0,
                    server_counted: false,
                }),
                ..Point::default()
            }
        })
        .collect();
    let mut series = Series::new(
        format!("client-{number}"),
        Measure::Rate {
            unit: "statements/s".to_string(),
        },
        points,
        Job::default(),
    );
    series.source = format!("client-{number}.json");
    series.client_cpus = Some(8);
    series.campaign = Some(CampaignPart {
        name: "bench".to_string(),
        part: number,
        parts: PARTS,
        start_at: None,
        level_period_s: None,
        max_clock_offset_ms: 50.0,
    });
    series
}

fn main() {
    let parts: Vec<Series> = (1..=PARTS).map(part).collect();
    let mut timings = Vec::new();
    for _ in 0..5 {
        let input = parts.clone();
        let began = Instant::now();
        let (merged, notes) = merge_campaigns(input).expect("the parts merge");
        timings.push(began.elapsed().as_secs_f64());
        assert_eq!(merged.len(), 1, "{notes:?}");
        assert_eq!(merged[0].points.len(), LEVELS);
        assert_eq!(
            merged[0].points[0].latency.as_ref().unwrap().response.count,
            (1000 * PARTS) as u64
        );
    }
    timings.sort_by(f64::total_cmp);
    let median = timings[timings.len() / 2];
    println!(
        "merging {PARTS} parts of {LEVELS} levels: median {median:.3} s of 5 (target under 1 s: {})",
        if median < 1.0 { "met" } else { "NOT met" }
    );
}
