//! Response time: what each statement (or job) waited for its answer, recorded by each
//! session in its own HdrHistogram and merged after the level, and the pacing of an open
//! loop (`--rate`), where latency is counted from when a statement was due, not from when a
//! late client got round to sending it (wrk2's correction of coordinated omission).
//!
//! In parts: `histogram` (recording), `pacing` (the open-loop schedule), `clock` (a
//! database session's windows and schedule), `session` (what a
//! session records), `interval` (a percentile's confidence interval), `timeline` (intervals), `summary` (the result's figures) and `values`
//! (what the command line gives); the analysis of latency is `analysis::latency`.

mod clock;
mod counts;
mod histogram;
mod interval;
mod live;
mod options;
mod pacing;
mod session;
mod statements;
mod summary;
mod timeline;
mod values;

pub use clock::*;
pub use histogram::*;
pub use interval::*;
pub use live::{LiveCounts, LiveResponses, LiveSlot, classic_buckets, interval_percentiles};
pub use options::*;
pub use pacing::*;
pub use session::*;
pub use statements::StatementTimes;
pub use summary::*;
pub use timeline::*;
pub use values::*;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::values::MOST_RATE_STEPS;
    use super::*;

    #[test]
    fn rates_are_numbers_lists_or_shares_of_the_closed_loop() {
        let steps = |text: &str| text.parse::<RateSteps>().map(|steps| steps.0);
        assert_eq!(steps("2000"), Ok(vec![OfferedRate::PerSecond(2000.0)]));
        assert_eq!(steps("12.5/s"), Ok(vec![OfferedRate::PerSecond(12.5)]));
        assert_eq!(
            steps("1000, 2000/s,5000"),
            Ok(vec![
                OfferedRate::PerSecond(1000.0),
                OfferedRate::PerSecond(2000.0),
                OfferedRate::PerSecond(5000.0)
            ])
        );
        assert_eq!(
            steps("20%,90%, 120%"),
            Ok(vec![
                OfferedRate::Share(0.2),
                OfferedRate::Share(0.9),
                OfferedRate::Share(1.2)
            ])
        );
        for bad in [
            "0", "-5", "nan", "inf", "1e8", "fast", "", "1000,", "0%", "2000%", "x%", "50%,50%",
        ] {
            assert!(steps(bad).is_err(), "{bad}");
        }
        let many = vec!["10"; MOST_RATE_STEPS + 1].join(",");
        assert!(steps(&many).unwrap_err().contains("too many"));
        assert_eq!(share_text(0.5), "50%");
        assert_eq!(share_text(0.125), "12.5%");
    }

    fn ms(value: f64) -> Duration {
        Duration::from_secs_f64(value / 1e3)
    }

    #[test]
    fn objectives_are_parsed_with_any_percentile_and_unit() {
        let objective: Objective = "p99<=5ms".parse().unwrap();
        assert_eq!(objective.percentile, Percentile::P99);
        assert!((objective.limit_ms - 5.0).abs() < 1e-12);
        let objective: Objective = "p99.9 <= 500us".parse().unwrap();
        assert_eq!(objective.percentile, Percentile::P999);
        assert!((objective.limit_ms - 0.5).abs() < 1e-12);
        assert_eq!(objective.to_string(), "p99.9 <= 0.5 ms");
        assert_eq!(objective.class, None);
        let objective: Objective = "new_order: p90<=5s".parse().unwrap();
        assert_eq!(objective.class.as_deref(), Some("new_order"));
        assert_eq!(objective.percentile, Percentile::P90);
        assert_eq!(objective.to_string(), "new_order p90 <= 5000 ms");
        for bad in [
            "p99<5ms",
            "p42<=5ms",
            "p99<=",
            "p99<=fast",
            "p99<=0ms",
            "",
            ":p99<=5ms",
            "new order:p99<=5ms",
            "a:b:p99<=5ms",
        ] {
            assert!(bad.parse::<Objective>().is_err(), "{bad}");
        }
    }

    #[test]
    fn uniform_arrivals_are_evenly_spaced_and_offset_by_phase() {
        let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.5, 7);
        let mut due = Vec::new();
        for _ in 0..5 {
            due.push(pacer.due_s());
            pacer.advance();
        }
        let expected = [0.005, 0.015, 0.025, 0.035, 0.045];
        for (got, want) in due.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{due:?}");
        }
        // 1,000 s on: no drift from adding gaps.
        for _ in 5..100_000 {
            pacer.advance();
        }
        assert!((pacer.due_s() - 1000.005).abs() < 1e-9, "{}", pacer.due_s());
        pacer.restart();
        assert_eq!(pacer.due_s(), 0.005);
    }

    fn timeline(rates: &[f64]) -> Vec<IntervalFigures> {
        rates
            .iter()
            .enumerate()
            .map(|(index, &rate)| IntervalFigures {
                start_s: index as f64,
                length_s: 1.0,
                responses: rate as u64,
                rate_per_s: rate,
                p50_ms: Some(1.0),
                p99_ms: Some(2.0),
                server_lio_per_s: None,
                server_pio_per_s: None,
                histogram: None,
            })
            .collect()
    }

    #[test]
    fn a_timeline_names_its_warm_up_and_its_stalls_and_nothing_in_its_noise() {
        // Fixed seeds of 3% noise around 1,000/s: nothing said.
        let mut state = 7u64;
        let mut noisy = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            1000.0 * (1.0 + 0.06 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5))
        };
        let calm: Vec<f64> = (0..20).map(|_| noisy()).collect();
        assert!(timeline_warnings(&timeline(&calm), "statements").is_empty());
        // Two slow first seconds and a checkpoint-like dip at 12 s.
        let mut rates = calm.clone();
        rates[0] = 400.0;
        rates[1] = 600.0;
        rates[12] = 150.0;
        let said = timeline_warnings(&timeline(&rates), "statements");
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].starts_with("warm-up: the first 2 s ran at 50%"),
            "{said:?}"
        );
        assert!(said[0].contains("--warmup 2s"), "{said:?}");
        assert!(
            said[1].starts_with("a stall at 12-13 s: 150 statements/s"),
            "{said:?}"
        );
        // Too short a timeline to judge.
        assert!(timeline_warnings(&timeline(&rates[..4]), "statements").is_empty());
    }

    #[test]
    fn intervals_count_each_response_in_its_own_slot() {
        let mut intervals = Intervals::new(Duration::from_millis(100), Duration::from_millis(250));
        assert_eq!(intervals.slots(), 3);
        for at in [10, 20, 150, 240, 260] {
            intervals.record(Duration::from_millis(at), Duration::from_micros(100));
        }
        let figures = intervals.figures(2, false);
        let counts: Vec<u64> = figures.iter().map(|f| f.responses).collect();
        // 260 ms: an answer drained just after the window's end counts in its last interval.
        assert_eq!(counts, [2, 1, 2]);
        // The last interval is 50 ms long; two batches: 2 responses over 0.1 s.
        assert!((figures[2].length_s - 0.05).abs() < 1e-12);
        assert!((figures[2].rate_per_s - 20.0).abs() < 1e-9);
        assert!((figures[0].rate_per_s - 10.0).abs() < 1e-9);
        // A long window gets wider intervals, never more than 600.
        let long = Intervals::new(Duration::from_secs(1), Duration::from_secs(7200));
        assert_eq!(long.slots(), 600);
    }

    #[test]
    fn the_backlog_is_counted_without_walking_it() {
        let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.5, 1);
        // Due at 5, 15, 25, ... ms: 3 sent, then at 100 ms the ones due at 35..95 are behind.
        for _ in 0..3 {
            pacer.advance();
        }
        assert_eq!(pacer.behind_at(0.030), 0);
        assert_eq!(pacer.behind_at(0.035), 1);
        assert_eq!(pacer.behind_at(0.1), 7);
        // A week at ten million a second is tallied at once.
        let fresh = Pacer::new(1e7, Arrivals::Poisson, 0.0, 3);
        let week = 7.0 * 86_400.0;
        let behind = fresh.behind_at(week) as f64;
        assert!((behind / (week * 1e7) - 1.0).abs() < 1e-6, "{behind}");
    }

    /// One run seed gives each session the same arrivals again; another run seed, or
    /// another session, other arrivals.
    #[test]
    fn a_run_seed_repeats_every_sessions_arrivals() {
        let arrivals = |run_seed: u64, worker: usize| -> Vec<f64> {
            let mut pacer = Pacer::new(
                100.0,
                Arrivals::Poisson,
                0.0,
                session_seed(run_seed, worker),
            );
            (0..50)
                .map(|_| {
                    let due = pacer.due_s();
                    pacer.advance();
                    due
                })
                .collect()
        };
        assert_eq!(arrivals(42, 3), arrivals(42, 3));
        assert_ne!(arrivals(42, 3), arrivals(43, 3));
        assert_ne!(arrivals(42, 3), arrivals(42, 4));
    }

    #[test]
    fn poisson_arrivals_have_the_asked_rate_and_exponential_gaps() {
        for seed in [1, 2, 3] {
            let rate = 250.0;
            let mut pacer = Pacer::new(rate, Arrivals::Poisson, 0.0, seed);
            let mut gaps = Vec::new();
            let mut last = 0.0;
            for _ in 0..40_000 {
                gaps.push(pacer.due_s() - last);
                last = pacer.due_s();
                pacer.advance();
            }
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            assert!((mean * rate - 1.0).abs() < 0.02, "mean gap {mean}");
            // Exponential: the standard deviation equals the mean, and e^-1 of the gaps
            // exceed it.
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
            assert!(
                (var.sqrt() / mean - 1.0).abs() < 0.03,
                "cv {}",
                var.sqrt() / mean
            );
            let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
            assert!((above - (-1.0f64).exp()).abs() < 0.01, "{above}");
            // Each window draws its own arrivals: batches are independent.
            pacer.restart();
            assert!((pacer.due_s() - gaps[0]).abs() > 1e-12);
        }
    }

    /// A fake clock drives a session that serves each statement in 1 ms at 100/s, with one
    /// stall of 500 ms: the closed loop's histogram sees one slow statement; the open loop,
    /// measuring from when each was due, sees every statement the stall delayed.
    #[test]
    fn corrected_latency_counts_what_a_stall_delayed() {
        let run = |open: bool| {
            let mut recorder = if open {
                SessionLatency::open("statement", Some(ms(50.0)), 100.0, Arrivals::Uniform)
            } else {
                SessionLatency::closed("statement", Some(ms(50.0)))
            };
            let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.0, 1);
            let mut now = 0.0f64; // ms
            let window = 2000.0;
            let mut sent = 0;
            while now < window {
                if open {
                    // Wait until due, as the session loop sleeps.
                    now = now.max(pacer.due_s() * 1e3);
                }
                let due = pacer.due_s() * 1e3;
                let service = if sent == 50 { 500.0 } else { 1.0 };
                let send = now;
                now += service;
                recorder.answered(open.then(|| ms(due)), ms(send), ms(now));
                pacer.advance();
                sent += 1;
                if !open {
                    // A closed loop thinks 9 ms: the same 100/s when nothing stalls.
                    now += 9.0;
                }
            }
            recorder.window_ended(
                sent,
                pacer.behind_at(window / 1e3),
                ms(pacer.due_s() * 1e3),
                ms(window),
            );
            recorder.figures(window / 1e3).unwrap()
        };
        let closed = run(false);
        let open = run(true);
        // Closed: one statement in ~150 took 500 ms; p99 stays at the 1 ms service.
        assert_eq!(closed.late, Some(1));
        assert!(closed.response.p99_ms < 1.1, "{closed:?}");
        assert!(closed.response.max_ms > 499.0);
        // Open: the 50 statements due during the stall each waited for it.
        assert!(open.late.unwrap() >= 45, "{open:?}");
        assert!(open.response.p90_ms > 50.0, "{open:?}");
        let service = open.service.unwrap();
        assert!(service.p90_ms < 1.1, "{service:?}");
        assert!(open.schedule_lag.unwrap().max_ms > 490.0);
        let rate = open.rate.unwrap();
        assert!(rate.sustained, "{rate:?}");
        assert_eq!(open.measured_from, MeasuredFrom::Due);
    }

    #[test]
    fn a_rate_the_session_cannot_keep_is_said() {
        // 1,000/s asked; each statement takes 2 ms: half are sent.
        let mut recorder = SessionLatency::open("statement", None, 1000.0, Arrivals::Uniform);
        let mut pacer = Pacer::new(1000.0, Arrivals::Uniform, 0.0, 1);
        let (mut now, mut sent) = (0.0f64, 0);
        while now < 1.0 {
            let due = pacer.due_s();
            now = now.max(due);
            let send = now;
            now += 0.002;
            recorder.answered(
                Some(Duration::from_secs_f64(due)),
                Duration::from_secs_f64(send),
                Duration::from_secs_f64(now),
            );
            pacer.advance();
            sent += 1;
        }
        recorder.window_ended(
            sent,
            pacer.behind_at(now),
            Duration::from_secs_f64(pacer.due_s()),
            Duration::from_secs_f64(now),
        );
        let figures = recorder.figures(now).unwrap();
        let rate = figures.rate.unwrap();
        assert!(!rate.sustained);
        assert!((rate.achieved_per_s - 500.0).abs() < 5.0, "{rate:?}");
        assert!(rate.due >= 999, "{rate:?}");
        let said = figures.shortfall().unwrap();
        assert!(said.starts_with("sustained 500/s of 1.00 K/s"), "{said}");
        // The backlog grows linearly: the last statement waited about half the window.
        assert!(figures.response.max_ms > 450.0, "{figures:?}");
    }

    #[test]
    fn merged_sessions_add_their_counts_and_rates() {
        let mut one = SessionLatency::open("statement", None, 50.0, Arrivals::Poisson);
        let mut two = one.clone();
        one.answered(Some(ms(1.0)), ms(1.0), ms(3.0));
        two.answered(Some(ms(1.0)), ms(2.0), ms(11.0));
        one.window_ended(1, 0, Duration::ZERO, Duration::from_secs(1));
        two.window_ended(1, 0, Duration::ZERO, Duration::from_secs(1));
        one.merge(&two);
        let figures = one.figures(1.0).unwrap();
        assert_eq!(figures.response.count, 2);
        assert_eq!(figures.rate.unwrap().target_per_s, 100.0);
        assert!((figures.response.max_ms - 10.0).abs() < 0.01);
        assert!((figures.service.unwrap().max_ms - 9.0).abs() < 0.01);
        assert!((figures.schedule_lag.unwrap().max_ms - 1.0).abs() < 0.01);
    }

    #[test]
    fn job_time_percentiles_are_nearest_rank() {
        let times: Vec<f64> = (1..=100).map(|i| i as f64 / 1000.0).collect();
        let figures = Percentiles::of_seconds(&times).unwrap();
        assert_eq!(figures.p50_ms, 50.0);
        assert_eq!(figures.p99_ms, 99.0);
        assert_eq!(figures.max_ms, 100.0);
        assert!((figures.mean_ms - 50.5).abs() < 1e-9);
        assert!(Percentiles::of_seconds(&[]).is_none());
    }

    #[test]
    fn histogram_percentiles_are_within_its_resolution() {
        let mut times = ResponseTimes::default();
        for us in 1..=10_000u64 {
            times.record(Duration::from_micros(us));
        }
        let figures = times.percentiles().unwrap();
        for (got, want) in [
            (figures.p50_ms, 5.0),
            (figures.p99_ms, 9.9),
            (figures.max_ms, 10.0),
        ] {
            assert!((got / want - 1.0).abs() < 0.001, "{got} vs {want}");
        }
    }
}
