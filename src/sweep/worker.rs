//! A level's worker threads: each prepares its session, waits at the level's barriers and
//! runs its job in the timed window, where it allocates nothing, takes no lock and writes
//! only its own state; samples and notes are handed over after the window closes.
//!
//! A worker whose session fails keeps taking part in the barriers without working, so the
//! others are never left waiting.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Result;
use crossbeam_channel::Sender;
use nix::time::{ClockId, clock_gettime};

use crate::host::counters::{CounterReading, ThreadCounters};
use crate::host::pinning::{current_cpu, pin_current_thread};
use crate::latency::{LiveSlot, SessionLatency};
use crate::result::Sample;
use crate::workload::{PaddedJob, WorkerJob, Workload};

/// A campaign part's sessions among the campaign's: part I of N runs sessions I-1, I-1+N, ...
/// of `of`, so tables, routes, random streams and the open loop's phases interleave with the
/// other parts' instead of repeating them.
#[derive(Debug, Clone, Copy)]
pub struct SessionNumbers {
    pub first: usize,
    pub step: usize,
    pub of: usize,
}

/// What workers report besides their samples.
pub(super) enum WorkerNote {
    Counters(String),
    Pin(String),
    /// The session failed; the level cannot go on.
    Failed(String),
    /// The session's response times, sent after the last batch.
    Latency(Box<SessionLatency>),
}

/// A worker thread's stack (the standard library's default)...
const WORKER_STACK: usize = 2 << 20;
/// ...and the room beyond it a thread's start needs (its guard page and signal stack).
const STACK_HEADROOM: usize = 256 << 10;

/// Starts one thread per worker of `placement`, each with its `context`; a thread that cannot
/// start sends those already started home (they wait at `gate`) and says why.
pub(super) fn spawn_workers<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    workload: &'env dyn Workload,
    placement: &[Option<usize>],
    gate: &'env Gate,
    context: impl Fn(usize, Option<usize>) -> WorkerContext<'env>,
) -> Result<(), String> {
    // Under an address-space limit (`ulimit -v`) each thread starts once the last is
    // running, its room checked first: a thread whose signal stack cannot be mapped
    // aborts the process, and a started thread maps memory as it starts. Without one,
    // they start one after another (128 handshakes took 80 ms before the first connect).
    let checked = address_space_limited();
    for (worker, cpu) in placement.iter().copied().enumerate() {
        let context = context(worker, cpu);
        let spawn = || {
            std::thread::Builder::new()
                .name(format!("worker-{worker}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || run_worker(workload, context))
        };
        let spawned = if checked {
            memmap2::MmapMut::map_anon(WORKER_STACK + STACK_HEADROOM)
                .and_then(|room| {
                    drop(room);
                    spawn()
                })
                .map(|_| gate.reached_by(worker + 1))
        } else {
            spawn().map(drop)
        };
        if let Err(error) = spawned {
            // The workers started so far are held at the gate: send them home.
            gate.open(false);
            return Err(format!(
                "starting worker thread {} of {}: {error} (a thread or memory limit: ulimit -u, pids.max?)",
                worker + 1,
                placement.len()
            ));
        }
    }
    Ok(())
}

/// Holds started workers until every worker thread of the level exists, so a thread that
/// cannot be started leaves nobody waiting at a barrier sized for all of them.
#[derive(Default)]
pub(super) struct Gate {
    /// The decision, and how many workers have reached the gate.
    decision: Mutex<(Option<bool>, usize)>,
    decided: Condvar,
}

impl Gate {
    pub(super) fn open(&self, go: bool) {
        self.decision
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0 = Some(go);
        self.decided.notify_all();
    }

    /// Waits until `workers` have reached the gate: each is running, its thread's set-up by
    /// the runtime done.
    fn reached_by(&self, workers: usize) {
        let mut decision = self.decision.lock().unwrap_or_else(PoisonError::into_inner);
        while decision.1 < workers {
            decision = self
                .decided
                .wait(decision)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether the level goes ahead.
    fn wait(&self) -> bool {
        let mut decision = self.decision.lock().unwrap_or_else(PoisonError::into_inner);
        decision.1 += 1;
        self.decided.notify_all();
        loop {
            if let Some(go) = decision.0 {
                return go;
            }
            decision = self
                .decided
                .wait(decision)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Whether this process's address space is limited (`ulimit -v`).
fn address_space_limited() -> bool {
    use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit};
    getrlimit(Resource::RLIMIT_AS).is_ok_and(|(soft, _)| soft != RLIM_INFINITY)
}

/// What one worker thread needs; everything it writes in the timed window is its own.
pub(super) struct WorkerContext<'a> {
    pub(super) worker: usize,
    pub(super) workers: usize,
    /// The level's open-loop rate, statements per second for all workers.
    pub(super) rate: Option<f64>,
    pub(super) cpu: Option<usize>,
    /// The instant job starts are counted from (copied, never written).
    pub(super) epoch: Instant,
    pub(super) duration: Option<Duration>,
    pub(super) warmup: Option<Duration>,
    pub(super) interval: Duration,
    pub(super) gate: &'a Gate,
    pub(super) ready: &'a Barrier,
    pub(super) start: &'a Barrier,
    pub(super) end: &'a Barrier,
    pub(super) finished: &'a AtomicBool,
    pub(super) samples: Sender<Sample>,
    pub(super) notes: Sender<WorkerNote>,
    /// This worker's own padded slot for its running operation count, read once per
    /// `--report-interval` (None without interval lines).
    pub(super) live_ops: Option<&'a AtomicU64>,
    /// This worker's own block of response counts for the interval lines.
    pub(super) live_responses: Option<LiveSlot>,
    /// A campaign part's numbering of its sessions among all the parts'.
    pub(super) numbers: Option<SessionNumbers>,
}

/// The worker's session, prepared with its number among the campaign's sessions (or the
/// level's) and its share of the rate; None, and a note, when it could not be.
fn prepare_job(
    workload: &dyn Workload,
    context: &WorkerContext<'_>,
    note: &dyn Fn(WorkerNote),
) -> Option<PaddedJob> {
    // Numbered among a campaign's sessions, a session takes its share of the campaign's rate
    // (this part's rate is its sessions' share of it).
    let (session, sessions, rate) = match context.numbers {
        Some(numbers) => (
            numbers.first + context.worker * numbers.step,
            numbers.of,
            context
                .rate
                .map(|rate| rate * numbers.of as f64 / context.workers.max(1) as f64),
        ),
        None => (context.worker, context.workers, context.rate),
    };
    match workload.prepare(session, sessions, rate) {
        Ok(mut job) => {
            if let Some(window) = context.duration {
                job.job().keep_intervals(context.interval, window);
            }
            if let Some(live) = context.live_responses.clone() {
                job.job().report_responses(live);
            }
            Some(job)
        }
        Err(error) => {
            note(WorkerNote::Failed(format!(
                "worker {}: {error:#}",
                context.worker
            )));
            None
        }
    }
}

fn run_worker(workload: &dyn Workload, context: WorkerContext<'_>) {
    if !context.gate.wait() {
        return;
    }
    let note = |note| {
        let _ = context.notes.send(note);
    };
    if let Some(cpu) = context.cpu
        && let Err(error) = pin_current_thread(cpu)
    {
        note(WorkerNote::Pin(format!(
            "pinning worker {} to CPU {cpu}: {error}",
            context.worker
        )));
    }
    let mut job = prepare_job(workload, &context, &note);
    let mut counters = match ThreadCounters::open() {
        Ok(counters) => Some(counters),
        Err(reason) => {
            note(WorkerNote::Counters(reason));
            None
        }
    };
    context.ready.wait();
    if let Some(warmup) = context.warmup {
        context.start.wait();
        if context.finished.load(Ordering::SeqCst) {
            // Sent home before the warm-up (a stop request, or a session that failed).
            return;
        }
        if let Some(active) = job.as_mut().map(PaddedJob::job) {
            match timed_job(active, None, Some(warmup), None) {
                Ok(_) => active.warmed_up(),
                Err(error) => {
                    note(WorkerNote::Failed(format!(
                        "worker {} (warming up): {error:#}",
                        context.worker
                    )));
                    job = None;
                }
            }
        }
        context.end.wait();
    }
    // Operations of the finished batches, so the live count only ever grows.
    let mut level_ops = 0;
    for batch in 1.. {
        context.start.wait();
        if context.finished.load(Ordering::SeqCst) {
            break;
        }
        if let Some(active) = job.as_mut().map(PaddedJob::job) {
            let live = context.live_ops.map(|slot| (slot, level_ops));
            match timed_job(active, counters.as_mut(), context.duration, live) {
                Ok(measured) => {
                    level_ops += measured.ops;
                    let _ =
                        context
                            .samples
                            .send(measured.sample(batch, context.worker, context.epoch));
                }
                Err(error) => {
                    note(WorkerNote::Failed(format!(
                        "worker {}: {error:#}",
                        context.worker
                    )));
                    job = None;
                }
            }
        }
        context.end.wait();
    }
    if let Some(mut job) = job {
        let job = job.job();
        if let Some(latency) = job.latency() {
            note(WorkerNote::Latency(Box::new(latency)));
        }
        // Handed to the workload before this worker's last note, which the level waits for.
        if let Err(error) = job.hand_in_counts() {
            note(WorkerNote::Failed(format!(
                "worker {}: handing in its counts: {error:#}",
                context.worker
            )));
        }
    }
}

struct Measured {
    began: Instant,
    wall_s: f64,
    cpu_s: f64,
    ops: u64,
    counters: Option<CounterReading>,
}

impl Measured {
    fn sample(&self, batch: u32, worker: usize, epoch: Instant) -> Sample {
        Sample {
            batch,
            worker,
            cpu: current_cpu(),
            started_s: Some(self.began.saturating_duration_since(epoch).as_secs_f64()),
            wall_s: self.wall_s,
            cpu_s: self.cpu_s,
            ops: self.ops,
            cycles: self.counters.map(|reading| reading.cycles),
            instructions: self.counters.map(|reading| reading.instructions),
        }
    }
}

/// The timed window: counters on, clocks read, the job, clocks read, counters off. With
/// `live`, fixed-time jobs store their running count (plus `base`) in the worker's own padded
/// slot after each slice: a plain store to a line no other thread writes.
fn timed_job(
    job: &mut dyn WorkerJob,
    mut counters: Option<&mut ThreadCounters>,
    duration: Option<Duration>,
    live: Option<(&AtomicU64, u64)>,
) -> Result<Measured> {
    if let Some(counters) = counters.as_deref_mut() {
        counters.start();
    }
    let cpu_before = thread_cpu_seconds();
    let began = Instant::now();
    job.window_started(began);
    let ops = match duration {
        None => job.run_job(),
        Some(duration) => {
            let mut ops = 0;
            let mut outcome = Ok(());
            let ends_on_stop = job.window_ends_on_stop();
            while began.elapsed() < duration && !(ends_on_stop && super::stop::stop_requested()) {
                match job.run_slice() {
                    Ok(done) => {
                        ops += done;
                        if let Some((slot, base)) = live {
                            slot.store(base + ops, Ordering::Relaxed);
                        }
                    }
                    Err(error) => {
                        outcome = Err(error);
                        break;
                    }
                }
            }
            outcome.and_then(|()| Ok(ops + job.end_window()?))
        }
    };
    let wall_s = began.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_seconds() - cpu_before;
    let counters = counters.and_then(|counters| {
        counters.stop();
        counters.read()
    });
    Ok(Measured {
        began,
        wall_s,
        cpu_s,
        ops: ops?,
        counters,
    })
}

/// CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_seconds() -> f64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|time| time.tv_sec() as f64 + time.tv_nsec() as f64 * 1e-9)
        .unwrap_or(0.0)
}
