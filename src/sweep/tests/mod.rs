//! The sweep without a database: a mock workload of known job times drives the runner, the
//! workers' release, a level's end, a stop request and the warm-up. The tests assert what
//! ran and in which order (batches, barriers, counts, levels kept), never how fast: they hold
//! on a busy host.

mod mock;

use std::time::Duration;

use anyhow::Result;

use self::mock::{Event, MockWorkload, OPS_PER_JOB, Script};
use super::levels::{SweepObserver, run_sweep};
use super::progress::Progress;
use super::runner::{LevelOutcome, LevelSettings, measure_level};
use super::steps::level_steps;
use crate::host::pinning::Pin;
use crate::latency::OfferedRate;
use crate::result::{Level, RunDocument, RunMode};
use crate::workload::{LevelLength, LevelPlan, Workload};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Fixed-work levels of `repeat` batches, nothing else asked.
fn batches(repeat: u32) -> LevelSettings {
    LevelSettings {
        repeat,
        precision: None,
        max_repeat: repeat,
        duration: None,
        warmup: None,
        interval: Duration::from_secs(1),
        interval_histograms: false,
        start_at: None,
        sessions: None,
        campaign: None,
        length: LevelLength::Run,
        cpu_bound: true,
    }
}

/// A script whose workers' jobs take these many milliseconds.
fn jobs_of(millis: &[u64]) -> Script {
    Script {
        job_times: millis.iter().copied().map(ms).collect(),
        ..Script::default()
    }
}

/// One level of `workers` on the mock, unpinned and quiet.
fn level(
    workload: &MockWorkload,
    workers: usize,
    settings: &LevelSettings,
) -> Result<Option<LevelOutcome>> {
    measure_level(
        workload,
        workers,
        None,
        &vec![None; workers],
        settings,
        &Progress::new(0, true, None),
        None,
    )
}

/// The samples of `batch`, by worker.
fn batch_of(level: &Level, batch: u32) -> Vec<&crate::result::Sample> {
    let mut samples: Vec<_> = level
        .samples
        .iter()
        .filter(|sample| sample.batch == batch)
        .collect();
    samples.sort_by_key(|sample| sample.worker);
    samples
}

/// Where `event` first is in `log`.
fn position(log: &[Event], event: impl Fn(&Event) -> bool) -> usize {
    log.iter().position(event).expect("the event is in the log")
}

#[test]
fn every_batch_releases_its_workers_together_after_the_last_ended() {
    // One slow worker: the others wait for it at the end of every batch.
    let workload = MockWorkload::new(jobs_of(&[40, 2, 2]), LevelPlan::default());
    let level = level(&workload, 3, &batches(3)).unwrap().unwrap().level;
    assert_eq!(level.batches, 3);
    assert_eq!(level.samples.len(), 9);
    for batch in 1..=3 {
        let samples = batch_of(&level, batch);
        assert_eq!(
            samples
                .iter()
                .map(|sample| sample.worker)
                .collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(samples.iter().all(|sample| sample.ops == OPS_PER_JOB));
        // Each job is at least as long as it sleeps.
        assert!(samples[0].wall_s >= 0.040);
    }
    // No job of a batch starts before every job of the batch before it ended.
    let started = |sample: &crate::result::Sample| sample.started_s.expect("dated");
    for batch in 1..3 {
        let ended = batch_of(&level, batch)
            .iter()
            .map(|sample| started(sample) + sample.wall_s)
            .fold(0.0, f64::max);
        for sample in batch_of(&level, batch + 1) {
            assert!(
                started(sample) >= ended - 1e-6,
                "batch {} began at {} before batch {batch} ended at {ended}",
                batch + 1,
                started(sample)
            );
        }
    }
}

#[test]
fn a_level_ends_with_every_sessions_counts_in_the_workloads_figures() {
    let workload = MockWorkload::new(jobs_of(&[2]), LevelPlan::default());
    let level = level(&workload, 2, &batches(2)).unwrap().unwrap().level;
    let log = workload.log();
    // Prepared on their own threads: in either order, after the level was announced.
    assert_eq!(log[0], Event::Preparing);
    let mut prepared: Vec<_> = log[1..3].to_vec();
    prepared.sort_by_key(|event| format!("{event:?}"));
    let each = |worker| Event::Prepared {
        worker,
        workers: 2,
        rate: None,
    };
    assert_eq!(prepared, vec![each(0), each(1)]);
    assert_eq!(log[3], Event::Started);
    for worker in 0..2 {
        let handed_in = position(&log, |event| {
            *event
                == Event::HandedIn {
                    worker,
                    jobs: 2,
                    slices: 0,
                }
        });
        assert!(handed_in > 3);
    }
    // The workload's figures come last, from both sessions' counts and the runner's totals.
    assert_eq!(
        log.last(),
        Some(&Event::Figures {
            sessions: 2,
            jobs: 4,
            totals: (2, 4 * OPS_PER_JOB)
        })
    );
    // Fixed work without a session clock: each job is a response.
    assert_eq!(level.latency.expect("job times").response.count, 4);
}

#[test]
fn a_failing_session_ends_the_level_and_leaves_nobody_waiting() {
    let script = Script {
        fails_at: Some((1, 2)),
        ..jobs_of(&[2])
    };
    let workload = MockWorkload::new(script, LevelPlan::default());
    let error = level(&workload, 3, &batches(5))
        .err()
        .expect("the level fails");
    assert!(
        format!("{error:#}").contains("worker 1: the mock's job 2 failed"),
        "{error:#}"
    );
    let log = workload.log();
    // The others took part in the batch in which it failed, then were sent home, and still
    // handed in what they did; no figures are made of a failed level.
    for worker in [0, 2] {
        assert!(log.contains(&Event::HandedIn {
            worker,
            jobs: 2,
            slices: 0
        }));
    }
    assert!(
        !log.iter()
            .any(|event| matches!(event, Event::HandedIn { worker: 1, .. }))
    );
    assert!(
        !log.iter()
            .any(|event| matches!(event, Event::Figures { .. }))
    );
}

#[test]
fn a_session_that_cannot_be_prepared_ends_the_level_before_it_starts() {
    let script = Script {
        prepare_fails: Some(1),
        ..jobs_of(&[2])
    };
    let workload = MockWorkload::new(script, LevelPlan::default());
    let error = level(&workload, 2, &batches(3))
        .err()
        .expect("the level fails");
    assert!(
        format!("{error:#}").contains("cannot be prepared"),
        "{error:#}"
    );
    let log = workload.log();
    assert!(!log.contains(&Event::Started));
    // The prepared session was sent home without a job.
    assert!(log.contains(&Event::HandedIn {
        worker: 0,
        jobs: 0,
        slices: 0
    }));
}

#[test]
fn a_warm_up_runs_before_the_level_starts_and_is_forgotten() {
    let workload = MockWorkload::new(jobs_of(&[2]), LevelPlan::default());
    let settings = LevelSettings {
        warmup: Some(ms(20)),
        ..batches(2)
    };
    let level = level(&workload, 2, &settings).unwrap().unwrap().level;
    // Only the measured batches are sampled.
    assert_eq!(level.samples.len(), 4);
    let log = workload.log();
    let started = position(&log, |event| *event == Event::Started);
    for worker in 0..2 {
        // A fixed-work level warms up in slices for its warm-up's length...
        let warmed = position(
            &log,
            |event| matches!(event, Event::WarmedUp { worker: w, jobs: 0, slices } if *w == worker && *slices > 0),
        );
        // ...before the level starts (its baseline read after), and forgets them.
        assert!(warmed < started);
        assert!(log.contains(&Event::HandedIn {
            worker,
            jobs: 2,
            slices: 0
        }));
    }
    assert!(log.contains(&Event::Figures {
        sessions: 2,
        jobs: 4,
        totals: (2, 4 * OPS_PER_JOB)
    }));
}

/// Keeps the worker counts of the document's levels each time the sweep hands it over.
#[derive(Default)]
pub(super) struct Kept(pub(super) Vec<Vec<usize>>);

impl SweepObserver for Kept {
    fn level_done(&mut self, document: &RunDocument) -> Result<()> {
        self.0
            .push(document.levels.iter().map(|level| level.workers).collect());
        Ok(())
    }
}

/// A document to sweep into: a fixture's host, no level yet.
fn empty_document(workload: &MockWorkload, mode: RunMode) -> RunDocument {
    let mut document: RunDocument =
        serde_json::from_str(include_str!("../../../tests/fixtures/engines/pg.json")).unwrap();
    document.levels.clear();
    document.workload = workload.info();
    document.settings.mode = mode;
    document
}

/// Sweeps `plan`'s steps over `counts` on `workload`, as the run command does with a plan.
fn sweep(
    workload: &MockWorkload,
    counts: &[usize],
    settings: &LevelSettings,
) -> (RunDocument, Kept, Result<()>) {
    let plan = workload.plan();
    let steps = level_steps(counts, &plan.rates);
    let mut document = empty_document(workload, settings.mode());
    let mut kept = Kept::default();
    let progress = Progress::new(steps.len() as u64, true, None);
    let swept = run_sweep(
        workload,
        &steps,
        settings,
        None,
        Pin::None,
        &progress,
        &mut document,
        &mut kept,
        None,
    );
    (document, kept, swept)
}

#[test]
fn a_sweep_runs_the_plans_rates_each_for_its_length() {
    // A pass of 40 ms at 100/s: 40 ms offered 100/s, about 13 ms offered 300/s.
    let plan = LevelPlan {
        rates: vec![OfferedRate::PerSecond(100.0), OfferedRate::PerSecond(300.0)],
        length: LevelLength::Pass {
            span: ms(40),
            rate_1x: 100.0,
            grace: Duration::ZERO,
        },
        ..LevelPlan::default()
    };
    let workload = MockWorkload::new(jobs_of(&[2]), plan.clone());
    let settings = LevelSettings {
        duration: Some(Duration::from_secs(1)),
        length: plan.length,
        ..batches(1)
    };
    let (document, kept, swept) = sweep(&workload, &[1, 2], &settings);
    swept.unwrap();
    assert_eq!(
        kept.0,
        vec![vec![1], vec![1, 1], vec![1, 1, 2], vec![1, 1, 2, 2]]
    );
    // Each level's sessions were told its rate, and its window was the plan's length.
    let rates: Vec<_> = workload
        .log()
        .into_iter()
        .filter_map(|event| match event {
            Event::Prepared {
                worker: 0, rate, ..
            } => rate,
            _ => None,
        })
        .collect();
    assert_eq!(rates, vec![100.0, 300.0, 100.0, 300.0]);
    for (level, rate) in document.levels.iter().zip(&rates) {
        let length = plan.length.at(Some(*rate)).unwrap().as_secs_f64();
        assert!(level.samples.iter().all(|sample| sample.wall_s >= length));
        // Shorter than the run's second: the plan's length was the window.
        assert!(level.samples.iter().all(|sample| sample.wall_s < 1.0));
    }
}

/// Runs `body` in a process of its own: a stop request is the whole process's, and `cargo
/// test` runs tests side by side in one (nextest gives each test its own already).
fn alone(test: &str, body: impl FnOnce()) {
    const ALONE: &str = "CORESCALE_SWEEP_TEST_ALONE";
    if std::env::var_os(ALONE).is_some() {
        body();
        return;
    }
    let module = module_path!().split_once("::").expect("a crate's module").1;
    let name = format!("{module}::{test}");
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && said.contains("1 passed"),
        "{name} alone: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_stop_ends_the_sweep_after_the_batch_keeping_what_was_measured() {
    alone(
        "a_stop_ends_the_sweep_after_the_batch_keeping_what_was_measured",
        || {
            // Asked for in the second batch of the level of 2.
            let script = Script {
                stop_after_job: Some((2, 2)),
                ..jobs_of(&[2])
            };
            let workload = MockWorkload::new(script, LevelPlan::default());
            let (document, kept, swept) = sweep(&workload, &[1, 2, 3], &batches(4));
            swept.unwrap();
            // The level under way is kept with the batches it ran; the next never begins.
            let levels: Vec<_> = document
                .levels
                .iter()
                .map(|level| (level.workers, level.batches, level.samples.len()))
                .collect();
            assert_eq!(levels, vec![(1, 4, 4), (2, 2, 4)]);
            assert!(
                !workload
                    .log()
                    .iter()
                    .any(|event| matches!(event, Event::Prepared { workers: 3, .. }))
            );
            // The observer keeps only the levels that ran to their end.
            assert_eq!(kept.0, vec![vec![1]]);
        },
    );
}

#[test]
fn a_stop_during_the_warm_up_measures_nothing() {
    alone("a_stop_during_the_warm_up_measures_nothing", || {
        let script = Script {
            stop_in_slice: true,
            ..jobs_of(&[2])
        };
        let workload = MockWorkload::new(script, LevelPlan::default());
        let settings = LevelSettings {
            warmup: Some(ms(20)),
            ..batches(2)
        };
        assert!(level(&workload, 2, &settings).unwrap().is_none());
        let log = workload.log();
        assert!(!log.contains(&Event::Started));
        assert!(
            !log.iter()
                .any(|event| matches!(event, Event::Figures { .. }))
        );
    });
}
