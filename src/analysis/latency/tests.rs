use super::*;
use crate::analysis::series::{Measure, Series};
use crate::analysis::study::analyse;
use crate::analysis::synthetic::{point, series};
use crate::latency::{Percentiles, ResponseTimes};

/// Seeded uniform draws in [0, 1): each synthetic series is the same every run.
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A closed loop on a server that serves `servers` statements at once at `service_ms`
/// each, with seeded noise on every response: below saturation latency is the service
/// time, beyond it sessions queue (Little's law: latency = sessions / throughput).
fn closed_loop(name: &str, servers: f64, service_ms: f64, noise: f64, seed: u64) -> Series {
    let mut next = uniform(seed);
    let points = [1usize, 2, 4, 8, 16, 32]
        .iter()
        .map(|&workers| {
            let busy = (workers as f64).min(servers);
            let throughput = busy / service_ms * 1e3; // statements/s
            let mean_ms = workers as f64 / throughput * 1e3;
            let mut times = ResponseTimes::default();
            for _ in 0..5000 {
                // Exponential-ish tail around the mean, with multiplicative noise.
                let tail = -(1.0 - next()).ln();
                let jitter = 1.0 + noise * (next() - 0.5);
                times.record(std::time::Duration::from_secs_f64(
                    mean_ms * (0.5 + 0.5 * tail) * jitter / 1e3,
                ));
            }
            Point {
                cv: Some(0.01),
                latency: Some(Box::new(Latency {
                    unit: "statement".into(),
                    measured_from: MeasuredFrom::Send,
                    response: times.percentiles().unwrap(),
                    service: None,
                    schedule_lag: None,
                    rate: None,
                    limit_ms: None,
                    late: None,
                    histogram: None,
                })),
                ..point(workers, throughput * (1.0 + noise * (next() - 0.5)))
            }
        })
        .collect();
    Series {
        name: name.into(),
        ..series(
            Measure::Rate {
                unit: "statements/s".into(),
            },
            points,
            None,
        )
    }
}

/// An open loop on sessions that each serve like an M/M/1 queue at `service_ms`: at
/// `lambda` statements/s a session's response time is exponential with mean
/// 1/(mu - lambda), so p99 = ln(100)/(mu - lambda). Each worker count runs at 10%..100%
/// of its capacity; at 100% the sessions fall behind.
fn open_loop(service_ms: f64, counts: &[usize], noise: f64, seed: u64) -> OpenLoopSeries {
    let mut next = uniform(seed);
    let mu = 1e3 / service_ms;
    let mut levels = Vec::new();
    for &workers in counts {
        for tenth in 1..=10 {
            let lambda = mu * tenth as f64 / 10.0;
            let asked = lambda * workers as f64;
            let sustained = tenth < 10;
            let mut times = ResponseTimes::default();
            for _ in 0..5000 {
                let seconds = if sustained {
                    -(1.0 - next()).ln() / (mu - lambda)
                } else {
                    1.0 + next()
                };
                let jitter = 1.0 + noise * (next() - 0.5);
                times.record(std::time::Duration::from_secs_f64(seconds * jitter));
            }
            let sent = if sustained { asked } else { 0.9 * asked };
            let rate = crate::latency::RateFigures {
                target_per_s: asked,
                achieved_per_s: sent,
                arrivals: crate::latency::Arrivals::Poisson,
                due: 5000,
                sent: if sustained { 5000 } else { 4500 },
                sustained,
                share: Some(tenth as f64 / 10.0),
            };
            levels.push(PacedLevel {
                intervals: Vec::new(),
                classes: Vec::new(),
                disturbed: false,
                figures: Default::default(),
                logged: Vec::new(),
                workers,
                asked_per_s: asked,
                sent_per_s: sent,
                share: rate.share,
                sustained,
                speed: None,
                latency: Latency {
                    unit: "statement".into(),
                    measured_from: MeasuredFrom::Due,
                    response: times.percentiles().unwrap(),
                    service: None,
                    schedule_lag: None,
                    rate: Some(rate),
                    limit_ms: None,
                    late: None,
                    histogram: None,
                },
            });
        }
    }
    OpenLoopSeries {
        series: "db".into(),
        capture: None,
        levels,
        statements: Default::default(),
    }
}

#[test]
fn at_set_rates_the_objective_names_the_largest_rate_sent_within_it() {
    // 1 ms service, p99 <= 20 ms: lambda <= 1000 - ln(100)/0.020 = 770/s a session, so
    // 70% of capacity is the last tenth kept: 1,400/s with 2 workers (p99 15.4 ms at
    // 70%, 23 ms at 80%).
    let objective: Objective = "p99<=20ms".parse().unwrap();
    for noise in [0.0, 0.05, 0.15] {
        for seed in 1..=5 {
            let open = open_loop(1.0, &[1, 2], noise, seed);
            let verdict = open.verdict(&objective);
            let context = format!("noise {noise} seed {seed}: {verdict:?}");
            assert_eq!(verdict.workers, Some(2), "{context}");
            assert!(
                (verdict.throughput.unwrap() - 1400.0).abs() < 1e-6,
                "{context}"
            );
            assert_eq!(verdict.asked_per_s, Some(1400.0), "{context}");
            assert_eq!(verdict.measured_from, Some(MeasuredFrom::Due));
            assert!(!verdict.beyond_largest, "{context}");
            assert!(verdict.broken_at_rates.is_empty(), "{context}");
            let sentence = verdict.sentence(&objective);
            assert!(
                sentence.starts_with(
                    "db (at set rates) sustains 1.40 K statements/s at p99 <= 20 ms with 2 workers"
                ),
                "{sentence}"
            );
            let finding = open.finding().unwrap();
            assert!(
                finding.starts_with("db at set rates, 2 workers: p99 goes from")
                    && finding.contains("the sessions fell behind from 2.00 K/s"),
                "{finding}"
            );
        }
    }
}

#[test]
fn at_set_rates_thin_or_unsustained_levels_decide_nothing() {
    let objective: Objective = "p99<=20ms".parse().unwrap();
    // No rate keeps 1 ms: the lowest p99 is ln(100)/900 = 5.1 ms.
    let strict: Objective = "p99<=1ms".parse().unwrap();
    let verdict = open_loop(1.0, &[1], 0.0, 1).verdict(&strict);
    assert_eq!(verdict.throughput, None);
    assert!(
        verdict
            .reason
            .as_deref()
            .unwrap()
            .starts_with("no rate kept p99 <= 1 ms"),
        "{verdict:?}"
    );
    // A level too thin to read p99 (50 statements) is no evidence either way, even
    // when it looks best.
    let mut open = open_loop(1.0, &[1], 0.0, 1);
    let mut thin = open.levels[0].clone();
    thin.asked_per_s = 5000.0;
    thin.sent_per_s = 5000.0;
    thin.latency.response.count = 50;
    open.levels.push(thin);
    assert_eq!(open.verdict(&objective).throughput, Some(700.0));
    // A low rate that broke the objective (a stall) is named.
    let mut noisy = open_loop(1.0, &[1], 0.0, 1);
    noisy.levels[1].latency.response.p99_ms = 50.0;
    let verdict = noisy.verdict(&objective);
    assert_eq!(verdict.broken_at_rates, vec![200.0], "{verdict:?}");
    assert!(
        verdict
            .sentence(&objective)
            .contains("it was broken at lower rates: 200/s")
    );
    // Every rate the sessions kept up with kept it: the limit lies beyond.
    let lenient: Objective = "p99<=10s".parse().unwrap();
    let mut kept_all = open_loop(1.0, &[1], 0.0, 1);
    kept_all.levels.pop();
    let verdict = kept_all.verdict(&lenient);
    assert!(verdict.beyond_largest, "{verdict:?}");
    assert!(verdict.sentence(&lenient).contains("ask higher rates"));
}

#[test]
fn a_single_batch_gets_its_uncertainty_from_its_intervals() {
    let mut series = closed_loop("one batch", 8.0, 2.0, 0.0, 1);
    let rates = [900.0, 1000.0, 1100.0, 1000.0, 600.0];
    for point in &mut series.points {
        point.spread = None;
        point.intervals = rates
            .iter()
            .enumerate()
            .map(|(index, &rate)| crate::latency::IntervalFigures {
                start_s: index as f64,
                length_s: if index == 4 { 0.5 } else { 1.0 },
                responses: rate as u64,
                rate_per_s: rate,
                p50_ms: None,
                p99_ms: None,
                server_lio_per_s: None,
                server_pio_per_s: None,
                histogram: None,
            })
            .collect();
    }
    let objective: Objective = "p99<=7ms".parse().unwrap();
    let verdict = slo_verdict(&series, &objective);
    let throughput = verdict.throughput.unwrap();
    // The last, half-length interval is left out: 900 to 1,100 around a mean of 1,000.
    let (low, high) = verdict.throughput_spread.unwrap();
    assert!((low / throughput - 0.9).abs() < 1e-9, "{verdict:?}");
    assert!((high / throughput - 1.1).abs() < 1e-9, "{verdict:?}");
    assert!(verdict.sentence(&objective).contains(" ("), "{verdict:?}");
    // Fewer than 3 full intervals give none.
    for point in &mut series.points {
        point.intervals.truncate(2);
    }
    assert_eq!(slo_verdict(&series, &objective).throughput_spread, None);
}

#[test]
fn p99_is_compared_at_the_loads_both_series_measured() {
    for (noise, seed) in [(0.0, 1), (0.05, 2), (0.15, 3)] {
        let small = closed_loop("small", 8.0, 2.0, noise, seed);
        let mut large = closed_loop("large", 16.0, 2.0, noise, seed + 10);
        // A level the other did not measure is no common load.
        large.points.retain(|point| point.workers != 4);
        let loads = p99_at_common_loads(&[&small, &large]).unwrap();
        assert_eq!(loads.series, vec!["small", "large"]);
        let counts: Vec<usize> = loads.rows.iter().map(|(workers, _)| *workers).collect();
        assert_eq!(counts, vec![1, 2, 8, 16, 32]);
        // At 32 sessions: mean 32 x 2 ms / 8 = 8 ms against 4 ms, so p99 twice as long.
        let (_, at_32) = loads.rows.last().unwrap();
        let ratio = at_32[0] / at_32[1];
        assert!((ratio - 2.0).abs() < 0.2, "noise {noise}: {ratio}");
        let sentences = loads.sentences();
        assert_eq!(sentences.len(), 1);
        assert!(
            sentences[0].starts_with("At 32 workers, the largest load all measured, p99 is"),
            "{}",
            sentences[0]
        );
        // One timed series compares with nothing.
        let mut untimed = closed_loop("untimed", 8.0, 2.0, noise, seed);
        untimed
            .points
            .iter_mut()
            .for_each(|point| point.latency = None);
        assert_eq!(p99_at_common_loads(&[&small, &untimed]), None);
    }
    let analysis = analyse(vec![
        closed_loop("small", 8.0, 2.0, 0.0, 1),
        closed_loop("large", 16.0, 2.0, 0.0, 1),
    ]);
    let findings = analysis.findings.join("\n");
    assert!(
        findings.contains("At 32 workers, the largest load all measured, p99 is"),
        "{findings}"
    );
}

#[test]
fn the_bend_is_where_sessions_start_to_queue() {
    for noise in [0.0, 0.05, 0.15] {
        for seed in 1..=5 {
            let analysis = analyse(vec![closed_loop("db", 8.0, 2.0, noise, seed)]);
            let bend =
                bend(&analysis.series[0].series).expect("a closed loop past saturation bends");
            // Flat up to 8 servers; from 8 to 16 sessions p99 doubles, capacity does not.
            assert_eq!(bend.from_workers, 8, "noise {noise} seed {seed}: {bend:?}");
            assert!(bend.capacity_growth < 1.2, "{bend:?}");
            assert!(
                bend.sentence().starts_with("p99 rises"),
                "{}",
                bend.sentence()
            );
        }
    }
}

#[test]
fn a_server_that_never_saturates_has_no_bend() {
    let analysis = analyse(vec![closed_loop("big", 64.0, 2.0, 0.05, 3)]);
    assert_eq!(bend(&analysis.series[0].series), None);
}

#[test]
fn the_objective_names_the_largest_throughput_that_kept_it() {
    // 8 servers at 2 ms: 4,000 statements/s at saturation; p99 of the tail model is
    // about 0.5 + 0.5 * ln(100) = 2.8x the mean.
    let small = closed_loop("small", 8.0, 2.0, 0.0, 1);
    let large = closed_loop("large", 16.0, 2.0, 0.0, 1);
    let analysis = analyse(vec![small, large]);
    let objective: Objective = "p99<=7ms".parse().unwrap();
    let small = slo_verdict(&analysis.series[0].series, &objective);
    let large = slo_verdict(&analysis.series[1].series, &objective);
    // p99 <= 7 ms means mean <= 2.5 ms: sessions <= 1.25 x servers.
    assert_eq!(small.workers, Some(8), "{small:?}");
    assert_eq!(large.workers, Some(16), "{large:?}");
    assert!(!small.beyond_largest && !large.beyond_largest);
    let compared = slo_comparison(&[&small, &large], &objective);
    assert_eq!(compared.len(), 1);
    assert!(
        compared[0].sentence.starts_with(
            "large sustains 2.00x small's throughput at p99 <= 7 ms, among the levels measured"
        ),
        "{compared:?}"
    );
    // Too tight for any level: said, with the lowest value seen.
    let tight: Objective = "p99<=1ms".parse().unwrap();
    let none = slo_verdict(&analysis.series[0].series, &tight);
    assert_eq!(none.throughput, None);
    assert!(
        none.sentence(&tight).contains("no level kept p99 <= 1 ms"),
        "{}",
        none.sentence(&tight)
    );
    // Loose enough for every level: the throughput is a lower bound, said.
    let loose: Objective = "p99<=10s".parse().unwrap();
    let every = slo_verdict(&analysis.series[0].series, &loose);
    assert!(every.beyond_largest);
    assert!(every.sentence(&loose).contains("limit lies beyond"));
}

#[test]
fn a_file_without_response_times_says_so() {
    let mut series = closed_loop("old", 12.0, 2.0, 0.0, 1);
    for point in &mut series.points {
        point.latency = None;
    }
    let analysis = analyse(vec![series]);
    let verdict = slo_verdict(&analysis.series[0].series, &"p99<=5ms".parse().unwrap());
    assert!(
        verdict
            .reason
            .unwrap()
            .contains("no response times recorded")
    );
    // Too few responses for p99: said, not read from a handful.
    let mut few = closed_loop("few", 12.0, 2.0, 0.0, 1);
    for point in &mut few.points {
        if let Some(latency) = point.latency.as_mut() {
            latency.response = Percentiles {
                count: 50,
                ..latency.response
            };
        }
    }
    let analysis = analyse(vec![few]);
    let verdict = slo_verdict(&analysis.series[0].series, &"p99<=5ms".parse().unwrap());
    assert!(
        verdict
            .reason
            .as_deref()
            .unwrap()
            .contains("too few responses"),
        "{verdict:?}"
    );
}

/// A replay on sessions that serve like M/M/1 queues `headroom` times faster than the
/// captured pace: at speed s a session's p99 is ln(100)/(mu - s) (mu = headroom, rates in
/// captured paces), its responses placed on the exponential's quantiles, and at a speed
/// at or past the headroom it falls behind.
pub(crate) fn replay(name: &str, headroom: f64, speeds: &[f64]) -> OpenLoopSeries {
    let levels = speeds
        .iter()
        .map(|&speed| {
            let sustained = speed < headroom;
            let mut times = ResponseTimes::default();
            for index in 0..10_000 {
                let quantile = (index as f64 + 0.5) / 10_000.0;
                let seconds = if sustained {
                    -(1.0 - quantile).ln() / (headroom - speed) / 100.0
                } else {
                    1.0 + quantile
                };
                times.record(std::time::Duration::from_secs_f64(seconds));
            }
            let asked = 100.0 * speed;
            let sent = if sustained { asked } else { 100.0 * headroom };
            PacedLevel {
                intervals: Vec::new(),
                classes: Vec::new(),
                disturbed: false,
                figures: Default::default(),
                logged: Vec::new(),
                workers: 4,
                asked_per_s: asked,
                sent_per_s: sent,
                share: None,
                sustained,
                speed: Some(speed),
                latency: Latency {
                    unit: "statement".into(),
                    measured_from: MeasuredFrom::Due,
                    response: times.percentiles().unwrap(),
                    service: None,
                    schedule_lag: None,
                    rate: Some(crate::latency::RateFigures {
                        target_per_s: asked,
                        achieved_per_s: sent,
                        arrivals: crate::latency::Arrivals::Captured,
                        due: 10_000,
                        sent: if sustained { 10_000 } else { 5_000 },
                        sustained,
                        share: None,
                    }),
                    limit_ms: None,
                    late: None,
                    histogram: None,
                },
            }
        })
        .collect();
    OpenLoopSeries {
        series: name.into(),
        capture: Some("replay of shop.capture (sha256 1a2b3c4d5e6f)".into()),
        levels,
        statements: Default::default(),
    }
}

#[test]
fn a_replay_says_up_to_which_speed_it_kept_the_schedule() {
    let new = replay("new-server", 5.0, &[1.0, 2.0, 4.0, 8.0]);
    let said = new.finding().unwrap();
    // p99 = ln(100) / (5 - s) / 100 s: 11.5 ms at 1x, 46.05 ms at 4x (46.0 in the
    // histogram's buckets).
    assert!(
        said.starts_with("new-server replaying its capture kept up with the captured schedule (at most 1% of statements unsent at a level's end) at every speed up to 4x (p99 11.5 ms at 1x to 46.0 ms at 4x); it fell behind at 8x (sent 500/s of 800/s asked)"),
        "{said}"
    );
    let behind = replay("old-server", 0.5, &[1.0, 2.0]);
    assert!(
        behind
            .finding()
            .unwrap()
            .starts_with("old-server replaying its capture fell behind at 1x"),
        "{:?}",
        behind.finding()
    );
    let old = replay("old-server", 1.5, &[1.0, 1.25, 2.0]);
    let compared = replay_comparisons(&[new.clone(), old, behind.clone()]);
    assert_eq!(compared.len(), 1, "{compared:?}");
    assert!(
        compared[0].starts_with("Replaying one capture (shop.capture): new-server kept up with the captured schedule up to 4x (p99 46.0 ms there); old-server kept up with the captured schedule up to 1.25x (p99 184 ms there); old-server fell behind already at 1x"),
        "{compared:?}"
    );
    // Alone, beside a series at set rates, or beside another capture's replay, a replay is
    // compared with nothing.
    assert!(replay_comparisons(&[new.clone(), open_loop(1.0, &[2], 0.0, 1)]).is_empty());
    let mut other = behind;
    other.capture = Some("replay of other.capture (sha256 0f0f0f0f0f0f)".into());
    assert!(replay_comparisons(&[new.clone(), other.clone()]).is_empty());
    // A cluster's captures replayed together are named as such.
    let together = "replay of a.capture + b.capture (sha256 0a0a0a0a0a0a + sha256 0b0b0b0b0b0b)";
    let [mut new, mut other] = [new, other];
    new.capture = Some(together.into());
    other.capture = Some(together.into());
    let compared = replay_comparisons(&[new, other]);
    assert!(
        compared[0].starts_with(
            "Replaying one cluster's captures together (a.capture + b.capture): new-server kept up"
        ),
        "{compared:?}"
    );
}

/// The level a replay fell behind at, with its sessions' waiting and the client's CPU.
fn behind_with(busiest: f64, average: f64, cores: f64, cpus: f64) -> String {
    let mut series = replay("new-server", 5.0, &[1.0, 8.0]);
    series.levels[1].figures = [
        ("busiest_session_waiting_share", busiest),
        ("sessions_waiting_share", average),
        ("client_cpu_cores", cores),
        ("client_cpus", cpus),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    series.replay_finding().unwrap()
}

#[test]
fn a_replay_that_fell_behind_says_whether_the_server_or_the_client_held_it() {
    let server = behind_with(0.97, 0.4, 0.3, 2.0);
    assert!(
        server.ends_with("fell behind at 8x (sent 500/s of 800/s asked), so latency there counts a growing backlog; the server was the limit: its answers kept the busiest session waiting 97% of the level (40% on average)."),
        "{server}"
    );
    // Short of CPU, a client reads its answers late: its waits look long.
    let client = behind_with(0.9, 0.7, 0.98, 1.0);
    assert!(
        client.ends_with(
            "; the client was the limit: its CPU was busy 0.98 of the 1 CPU it may use."
        ),
        "{client}"
    );
    // A cgroup's quota of a fifth of a CPU, not the one CPU it rounds up to.
    let quota = behind_with(0.9, 0.7, 0.19, 0.2);
    assert!(
        quota.ends_with(
            "; the client was the limit: its CPU was busy 0.19 of the 0.2 CPU it may use."
        ),
        "{quota}"
    );
    let sending = behind_with(0.2, 0.1, 0.3, 2.0);
    assert!(
        sending.contains(
            "; the client was the limit (its CPU 0.30 of the 2 CPUs it may use): no session waited"
        ),
        "{sending}"
    );
    // Sessions that waited for a CPU: the client, whatever its waits on answers say.
    let mut series = replay("new-server", 5.0, &[1.0, 8.0]);
    series.levels[1].figures = [
        ("busiest_session_waiting_share", 0.95),
        ("sessions_waiting_share", 0.9),
        ("sessions_starved_share", 0.45),
        ("client_cpu_cores", 0.5),
        ("client_cpus", 1.0),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    let starved = series.replay_finding().unwrap();
    assert!(
        starved.ends_with("; the client was the limit: its sessions waited for a CPU 45% of the level, its CPU time 0.50 of the 1 CPU it may use."),
        "{starved}"
    );
    // A result without the figures says nothing of the limit.
    let before = replay("new-server", 5.0, &[1.0, 8.0])
        .replay_finding()
        .unwrap();
    assert!(!before.contains("limit"), "{before}");
}

/// A closed loop of two classes at 1, 2, 4 and 8 workers: 398,000 payments of 0.5 ms a
/// level, and 2,000 new orders of `workers` ms each (p99 of all responses stays 0.5 ms).
fn two_classes() -> Series {
    let record = |times: &mut ResponseTimes, ms: f64, count: u64| {
        times.record_n(std::time::Duration::from_secs_f64(ms / 1e3), count);
    };
    let points = [1usize, 2, 4, 8]
        .iter()
        .map(|&workers| {
            let mut payment = ResponseTimes::default();
            let mut new_order = ResponseTimes::default();
            record(&mut payment, 0.5, 398_000);
            record(&mut new_order, workers as f64, 2_000);
            let mut all = payment.clone();
            all.merge(&new_order);
            let class = |name: &str, times: &ResponseTimes| crate::latency::ClassTimes {
                class: name.to_string(),
                measured_from: Some(MeasuredFrom::Send),
                histogram: times.encode(),
            };
            Point {
                cv: Some(0.01),
                latency: Some(Box::new(Latency {
                    unit: "transaction".into(),
                    measured_from: MeasuredFrom::Send,
                    response: all.percentiles().unwrap(),
                    service: None,
                    schedule_lag: None,
                    rate: None,
                    limit_ms: None,
                    late: None,
                    histogram: Some(all.encode()),
                })),
                classes: vec![class("payment", &payment), class("new_order", &new_order)],
                ..point(workers, 1000.0 * workers as f64)
            }
        })
        .collect();
    Series {
        name: "orders".into(),
        ..series(
            Measure::Rate {
                unit: "transactions/s".into(),
            },
            points,
            None,
        )
    }
}

#[test]
fn an_objective_on_one_class_reads_that_class_alone() {
    use crate::analysis::study::apply_objective;
    let verdict_of = |objective: &str| {
        let mut analysis = analyse(vec![two_classes()]);
        let objective: Objective = objective.parse().unwrap();
        apply_objective(&mut analysis, &objective).map(|()| analysis)
    };
    // All responses: p99 is a payment's 0.5 ms at every level, so 8 workers kept 1 ms.
    let all = verdict_of("p99<=1ms").unwrap();
    let verdict = &all.slo.as_ref().unwrap().verdicts[0];
    assert_eq!(verdict.workers, Some(8), "{verdict:?}");
    // New orders take `workers` ms: 3 ms holds up to 2 workers, at 2 ms.
    let new_order = verdict_of("new_order:p99<=3ms").unwrap();
    let report = new_order.slo.as_ref().unwrap();
    let verdict = &report.verdicts[0];
    assert_eq!(verdict.workers, Some(2), "{verdict:?}");
    assert!(
        (verdict.value_ms.unwrap() - 2.0).abs() < 0.01,
        "{verdict:?}"
    );
    assert_eq!(report.objective, "new_order p99 <= 3 ms");
    assert!(
        new_order.findings.iter().any(|finding| finding
            == "orders sustains 2.00 K transactions/s at new_order p99 <= 3 ms with 2 workers (p99 2.00 ms)."),
        "{:?}",
        new_order.findings
    );
    // Too few of the class's responses to read p99.9 (2,000 a level, 10,000 needed): said of
    // the class.
    let thin = verdict_of("new_order:p99.9<=3ms").unwrap();
    let reason = thin.slo.unwrap().verdicts[0].reason.clone().unwrap();
    assert!(
        reason.starts_with("too few new_order responses at each clean level to read p99.9"),
        "{reason}"
    );
    // A class not recorded: an error naming the ones there are.
    let missing = verdict_of("stock_level:p99<=3ms").unwrap_err().to_string();
    assert!(
        missing.contains(
            "no series recorded class 'stock_level' (the classes recorded: new_order, payment)"
        ),
        "{missing}"
    );
    // A series without classes beside one with: its verdict says why it has none.
    let mut plain = closed_loop("plain", 8.0, 2.0, 0.0, 1);
    plain.measure = two_classes().measure;
    let mut analysis = analyse(vec![two_classes(), plain]);
    apply_objective(&mut analysis, &"new_order:p99<=3ms".parse().unwrap()).unwrap();
    let reason = analysis.slo.unwrap().verdicts[1].reason.clone().unwrap();
    assert!(
        reason.contains("recorded no classes of responses"),
        "{reason}"
    );
    // Nothing with classes at all: an error.
    let mut analysis = analyse(vec![closed_loop("plain", 8.0, 2.0, 0.0, 1)]);
    let none = apply_objective(&mut analysis, &"new_order:p99<=3ms".parse().unwrap());
    assert!(
        none.unwrap_err()
            .to_string()
            .contains("no series recorded classes"),
        "a report without classes"
    );
}

#[test]
fn an_open_loop_class_is_not_said_to_hold_at_a_rate_where_it_was_not_answered() {
    // Two rates: the class answered fast at the lower, and not at all at the higher.
    let mut series = open_loop(1.0, &[1], 0.0, 3);
    series.levels.retain(|level| level.sustained);
    let mut times = ResponseTimes::default();
    times.record_n(std::time::Duration::from_micros(200), 2_000);
    let class = crate::latency::ClassTimes {
        class: "fingerprint-1".to_string(),
        measured_from: None,
        histogram: times.encode(),
    };
    series.levels[0].classes = vec![class];
    let objective: Objective = "fingerprint-1:p99<=1ms".parse().unwrap();
    let viewed = series.of_class("fingerprint-1");
    assert_eq!(viewed.levels.len(), series.levels.len(), "no level dropped");
    let verdict = viewed.verdict(&objective);
    assert_eq!(
        verdict.throughput,
        Some(series.levels[0].sent_per_s),
        "{verdict:?}"
    );
    assert!(
        !verdict.beyond_largest,
        "higher rates were asked: {verdict:?}"
    );
    // A fingerprint is timed from the send, whatever the level's responses are.
    assert_eq!(verdict.measured_from, Some(MeasuredFrom::Send));
}

/// Capacity that peaks at 8 workers and falls after, every level within a lenient
/// objective: the limit at the objective is the peak, not beyond the last level, and no
/// sentence advises more workers past the fall.
#[test]
fn past_a_fall_in_capacity_the_limit_is_the_peak() {
    let mut series = closed_loop("falls", 8.0, 2.0, 0.0, 1);
    // 16 and 32 workers deliver less than 8 did.
    let peak = series.points[3].raw;
    series.points[4].raw = peak * 0.8;
    series.points[5].raw = peak * 0.7;
    let lenient: Objective = "p99<=10s".parse().unwrap();
    let verdict = slo_verdict(&series, &lenient);
    assert_eq!(verdict.workers, Some(8), "{verdict:?}");
    assert!(!verdict.beyond_largest, "{verdict:?}");
    let sentence = verdict.sentence(&lenient);
    assert!(!sentence.contains("measure more workers"), "{sentence}");
    // Still rising at its last level, it lies beyond, and is said so.
    let rising = closed_loop("rises", 64.0, 2.0, 0.0, 1);
    let verdict = slo_verdict(&rising, &lenient);
    assert!(verdict.beyond_largest, "{verdict:?}");
    assert!(verdict.sentence(&lenient).contains("measure more workers"));
}

/// Two series whose closed-loop levels all kept the objective but whose open-loop levels
/// (the rates sent, timed from when due) all broke it: the answer is taken from the open
/// loop, as each series' own verdict is, and never says both kept it.
#[test]
fn the_answer_judges_a_series_on_its_open_loop_levels() {
    let mut analysis = crate::analysis::study::analyse(vec![
        closed_loop("cluster", 64.0, 2.0, 0.0, 1),
        closed_loop("server", 64.0, 2.0, 0.0, 2),
    ]);
    let mut cluster = open_loop(2.0, &[1, 2], 0.0, 3);
    cluster.series = "cluster".into();
    let mut server = open_loop(2.0, &[1, 2], 0.0, 4);
    server.series = "server".into();
    analysis.open_loop = vec![cluster, server];
    let objective: Objective = "p99<=8ms".parse().unwrap();
    crate::analysis::study::apply_objective(&mut analysis, &objective).unwrap();
    let answer = analysis.answer.as_ref().expect("two series answer");
    assert!(
        !answer.sentence.contains("both kept"),
        "{}",
        answer.sentence
    );
    assert!(
        answer.sentence.contains("no rate kept p99 <= 8 ms"),
        "{}",
        answer.sentence
    );
}
