//! The server's counters read while a level's window runs, from a sampler thread of its
//! own (never a worker): one reading at each interval's edge, dated mid round trip, turned
//! into the server's LIO and PIO per second of each interval.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::export::ServerReadsSeen;
use crate::latency::IntervalFigures;
use crate::workload::{ServerCounts, Workload};

/// The server's counts at each interval's edge of one window (0, width, 2 width, ...,
/// window), read from the sampler's own thread; cut short with one last reading when the
/// batch ends early. Empty for a workload without a server. Each reading is also `seen` by
/// the metrics endpoint, when one serves the run.
pub(super) fn sample_server(
    workload: &dyn Workload,
    width: Duration,
    window: Duration,
    began: Instant,
    stop: &AtomicBool,
    seen: Option<&ServerReadsSeen>,
) -> Vec<Option<ServerReading>> {
    let edges = (window.as_secs_f64() / width.as_secs_f64()).ceil() as u32;
    let mut readings = Vec::with_capacity(edges as usize + 1);
    for edge in 0..=edges {
        let due = (width * edge).min(window);
        let ended = loop {
            let ended = stop.load(Ordering::SeqCst);
            let now = began.elapsed();
            if ended || now >= due {
                break ended;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(20)));
        };
        let asked = began.elapsed();
        match workload.server().and_then(|server| server.server_counts()) {
            None => return Vec::new(),
            Some(reading) => readings.push(reading.ok().map(|counts| {
                if let Some(seen) = seen {
                    seen.set(counts.lio, counts.pio);
                }
                ServerReading {
                    at_s: reading_time(asked, began.elapsed(), window),
                    counts,
                }
            })),
        }
        if ended {
            break;
        }
    }
    readings
}

/// When a reading of the server's counters counts as taken, in seconds from the workers'
/// release: the middle of its round trip, and no later than the window's end, when the
/// workers stopped (a last reading late by a busy host's scheduling adds no reads, so its
/// interval is not made to look slower).
fn reading_time(asked: Duration, answered: Duration, window: Duration) -> f64 {
    ((asked.as_secs_f64() + answered.as_secs_f64()) / 2.0).min(window.as_secs_f64())
}

/// The server's counts read at an interval's edge, and when: seconds from the workers'
/// release.
#[derive(Debug, Clone, Copy)]
pub(super) struct ServerReading {
    at_s: f64,
    counts: ServerCounts,
}

/// Each interval's server reads per second, from the readings at its edges in every window
/// (`sample_server`), over the time between them (a reading late by a busy host's
/// scheduling shortens or lengthens its intervals, not their rates); left out where a
/// reading failed or a window ended before the edge.
pub(super) fn add_server_rates(
    intervals: &mut [IntervalFigures],
    windows: &[Vec<Option<ServerReading>>],
) {
    for (index, interval) in intervals.iter_mut().enumerate() {
        let deltas: Option<Vec<(f64, f64, f64)>> = windows
            .iter()
            .map(|readings| {
                let (start, end) = (
                    readings.get(index)?.as_ref()?,
                    readings.get(index + 1)?.as_ref()?,
                );
                Some((
                    end.counts.lio - start.counts.lio,
                    end.counts.pio - start.counts.pio,
                    end.at_s - start.at_s,
                ))
            })
            .collect();
        let Some(deltas) = deltas.filter(|deltas| !deltas.is_empty()) else {
            continue;
        };
        let seconds: f64 = deltas.iter().map(|d| d.2).sum();
        if seconds > 0.0 {
            interval.server_lio_per_s = Some(deltas.iter().map(|d| d.0).sum::<f64>() / seconds);
            interval.server_pio_per_s = Some(deltas.iter().map(|d| d.1).sum::<f64>() / seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: f64) -> IntervalFigures {
        IntervalFigures {
            start_s,
            length_s: 1.0,
            responses: 0,
            rate_per_s: 0.0,
            p50_ms: None,
            p99_ms: None,
            server_lio_per_s: None,
            server_pio_per_s: None,
            histogram: None,
        }
    }

    fn reading(at_s: f64, lio: f64) -> Option<ServerReading> {
        Some(ServerReading {
            at_s,
            counts: ServerCounts {
                lio,
                pio: lio / 10.0,
            },
        })
    }

    #[test]
    fn a_late_reading_moves_reads_between_intervals_not_their_rates() {
        // The server reads 1,000 blocks a second; the reading due at 1 s came at 1.3 s and
        // the last at 2.0 s, so the second interval's reads span 0.7 s.
        let windows = vec![vec![
            reading(0.0, 0.0),
            reading(1.3, 1300.0),
            reading(2.0, 2000.0),
        ]];
        let mut intervals = vec![interval(0.0), interval(1.0)];
        add_server_rates(&mut intervals, &windows);
        for interval in &intervals {
            assert!((interval.server_lio_per_s.unwrap() - 1000.0).abs() < 1e-9);
            assert!((interval.server_pio_per_s.unwrap() - 100.0).abs() < 1e-9);
        }
    }

    #[test]
    fn a_reading_is_dated_mid_round_trip_and_not_after_the_window() {
        let ms = Duration::from_millis;
        assert!((reading_time(ms(1000), ms(1010), ms(2000)) - 1.005).abs() < 1e-12);
        // The last reading, due at the window's end, came 300 ms late: the workers had
        // stopped at 2 s, so its interval's reads span 1 s, not 1.3.
        assert_eq!(reading_time(ms(2300), ms(2310), ms(2000)), 2.0);
    }

    #[test]
    fn rates_pool_the_windows_and_skip_a_failed_reading() {
        // Two windows over the same interval: 1,500 reads in 1.5 s of readings in all.
        let windows = vec![
            vec![reading(0.0, 0.0), reading(1.0, 1200.0), None],
            vec![reading(0.1, 0.0), reading(0.6, 300.0), reading(1.6, 900.0)],
        ];
        let mut intervals = vec![interval(0.0), interval(1.0)];
        add_server_rates(&mut intervals, &windows);
        assert!((intervals[0].server_lio_per_s.unwrap() - 1000.0).abs() < 1e-9);
        // A failed reading at an edge leaves that interval without the server's rate.
        assert_eq!(intervals[1].server_lio_per_s, None);
    }
}
