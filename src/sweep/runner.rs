//! Measures one load level: N worker threads, each with private (cache-line padded) state,
//! released together by a barrier for every batch. The timed window holds only the job:
//! no allocation, no locks, no shared writes; samples are handed over after it closes.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::Utc;
use crossbeam_channel::{Sender, bounded};
use nix::time::{ClockId, clock_gettime};

use super::progress::Progress;
use super::stop;
use crate::analysis::summary::job_variation;
use crate::host::counters::{CounterReading, ThreadCounters};
use crate::host::os_stats::{RunQueueSampler, StatSnapshot};
use crate::host::pinning::{current_cpu, pin_current_thread};
use crate::host::sysfs::FsRoot;
use crate::result::{Level, LevelSummary, RunMode, Sample};
use crate::workload::{WorkerJob, Workload};

/// How each level is measured.
#[derive(Debug, Clone)]
pub struct LevelSettings {
    /// Batches per level (each worker runs one job per batch).
    pub repeat: u32,
    /// Keep adding batches until the CV of job times (rates, for fixed-time) is at most this...
    pub precision: Option<f64>,
    /// ...but never more than this many batches.
    pub max_repeat: u32,
    /// Fixed-time jobs of this length instead of fixed-work jobs.
    pub duration: Option<Duration>,
}

impl LevelSettings {
    pub fn mode(&self) -> RunMode {
        if self.duration.is_some() {
            RunMode::FixedTime
        } else {
            RunMode::FixedWork
        }
    }
}

/// A measured level and what went wrong on its workers without stopping them.
pub struct LevelOutcome {
    pub level: Level,
    /// Why hardware counters could not be opened, as the first worker found.
    pub counter_problem: Option<String>,
    pub pin_problems: Vec<String>,
}

enum WorkerProblem {
    Counters(String),
    Pin(String),
}

/// Measures `workers` workers for at least one batch; after a stop request it ends with the
/// batch in progress, so the level may hold fewer batches than planned.
pub fn measure_level(
    workload: &dyn Workload,
    workers: usize,
    placement: &[Option<usize>],
    settings: &LevelSettings,
    progress: &Progress,
) -> Result<LevelOutcome> {
    let ready = Barrier::new(workers + 1);
    let start = Barrier::new(workers + 1);
    let end = Barrier::new(workers + 1);
    let finished = AtomicBool::new(false);
    let (sample_sender, samples_received) = bounded::<Sample>(workers);
    let (problem_sender, problems) = bounded::<WorkerProblem>(2 * workers);
    let proc_root = FsRoot::new("/");

    std::thread::scope(|scope| {
        for (worker, cpu) in placement.iter().copied().enumerate() {
            let context = WorkerContext {
                worker,
                cpu,
                duration: settings.duration,
                ready: &ready,
                start: &start,
                end: &end,
                finished: &finished,
                samples: sample_sender.clone(),
                problems: problem_sender.clone(),
            };
            std::thread::Builder::new()
                .name(format!("worker-{worker}"))
                .spawn_scoped(scope, move || run_worker(workload, context))
                .expect("spawning a worker thread");
        }

        ready.wait();
        let started_at = Utc::now();
        let before = StatSnapshot::read(&proc_root);
        let run_queue = RunQueueSampler::start(proc_root.clone());
        let began = Instant::now();
        let mut samples: Vec<Sample> = Vec::with_capacity(workers * settings.repeat as usize);
        let mut batches = 0u32;
        let mut precision_reached = None;
        loop {
            start.wait();
            end.wait();
            batches += 1;
            samples.extend(samples_received.try_iter());
            progress.batch_done(batches > settings.repeat);
            let cv = job_variation(&samples, settings.mode());
            if let Some(target) = settings.precision {
                precision_reached = Some(cv <= target);
            }
            let enough = batches >= settings.repeat
                && settings
                    .precision
                    .is_none_or(|target| cv <= target || batches >= settings.max_repeat);
            if enough || stop::stop_requested() {
                break;
            }
        }
        let elapsed_s = began.elapsed().as_secs_f64();
        finished.store(true, Ordering::SeqCst);
        start.wait();
        let run_queue = run_queue.finish();
        let after = StatSnapshot::read(&proc_root);

        let mut os = match (before, after) {
            (Some(before), Some(after)) => before.figures_until(&after),
            _ => Default::default(),
        };
        os.run_queue = run_queue;
        let mut counter_problem = None;
        let mut pin_problems = Vec::new();
        for problem in problems.try_iter() {
            match problem {
                WorkerProblem::Counters(reason) => {
                    counter_problem = counter_problem.or(Some(reason))
                }
                WorkerProblem::Pin(reason) => pin_problems.push(reason),
            }
        }
        if samples.len() != batches as usize * workers {
            bail!(
                "expected {} samples from {workers} workers, got {}",
                batches as usize * workers,
                samples.len()
            );
        }
        let level = Level {
            workers,
            batches,
            precision_reached,
            placement: placement.to_vec(),
            started_at,
            elapsed_s,
            os,
            samples,
            summary: LevelSummary::default(),
        };
        Ok(LevelOutcome {
            level,
            counter_problem,
            pin_problems,
        })
    })
}

/// What one worker thread needs; everything it writes in the timed window is its own.
struct WorkerContext<'a> {
    worker: usize,
    cpu: Option<usize>,
    duration: Option<Duration>,
    ready: &'a Barrier,
    start: &'a Barrier,
    end: &'a Barrier,
    finished: &'a AtomicBool,
    samples: Sender<Sample>,
    problems: Sender<WorkerProblem>,
}

fn run_worker(workload: &dyn Workload, context: WorkerContext<'_>) {
    if let Some(cpu) = context.cpu
        && let Err(error) = pin_current_thread(cpu)
    {
        let _ = context.problems.send(WorkerProblem::Pin(format!(
            "pinning worker {} to CPU {cpu}: {error}",
            context.worker
        )));
    }
    let mut job = workload.prepare(context.worker);
    let mut counters = match ThreadCounters::open() {
        Ok(counters) => Some(counters),
        Err(reason) => {
            let _ = context.problems.send(WorkerProblem::Counters(reason));
            None
        }
    };
    context.ready.wait();
    for batch in 1.. {
        context.start.wait();
        if context.finished.load(Ordering::SeqCst) {
            break;
        }
        let measured = timed_job(job.as_mut(), counters.as_mut(), context.duration);
        let sample = Sample {
            batch,
            worker: context.worker,
            cpu: current_cpu(),
            wall_s: measured.wall_s,
            cpu_s: measured.cpu_s,
            ops: measured.ops,
            cycles: measured.counters.map(|reading| reading.cycles),
            instructions: measured.counters.map(|reading| reading.instructions),
        };
        let _ = context.samples.send(sample);
        context.end.wait();
    }
}

struct Measured {
    wall_s: f64,
    cpu_s: f64,
    ops: u64,
    counters: Option<CounterReading>,
}

/// The timed window: counters on, clocks read, the job, clocks read, counters off.
fn timed_job(
    job: &mut dyn WorkerJob,
    mut counters: Option<&mut ThreadCounters>,
    duration: Option<Duration>,
) -> Measured {
    if let Some(counters) = counters.as_deref_mut() {
        counters.start();
    }
    let cpu_before = thread_cpu_seconds();
    let began = Instant::now();
    let ops = match duration {
        None => job.run_job(),
        Some(duration) => {
            let mut ops = 0;
            while began.elapsed() < duration {
                ops += job.run_slice();
            }
            ops
        }
    };
    let wall_s = began.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_seconds() - cpu_before;
    let counters = counters.and_then(|counters| {
        counters.stop();
        counters.read()
    });
    Measured {
        wall_s,
        cpu_s,
        ops,
        counters,
    }
}

/// CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_seconds() -> f64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|time| time.tv_sec() as f64 + time.tv_nsec() as f64 * 1e-9)
        .unwrap_or(0.0)
}
