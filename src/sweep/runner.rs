//! Measures one load level: N worker threads, each with private (cache-line padded) state,
//! released together by a barrier for every batch. The timed window holds only the job:
//! no allocation, no locks, no shared writes; samples are handed over after it closes.
//!
//! A worker whose session fails (a database that went away) keeps taking part in the
//! barriers without working, so the others are never left waiting; the level then ends with
//! the error and the levels before it are kept by the caller.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use chrono::Utc;
use crossbeam_channel::{Receiver, Sender, unbounded};
use crossbeam_utils::CachePadded;
use nix::time::{ClockId, clock_gettime};

use super::level_end::{OtherLoad, finish_level};
use super::progress::Progress;
use super::server_sampler::{ServerReading, sample_server};
use super::stop;
use crate::format::significant;
use crate::host::counters::{CounterReading, ThreadCounters};
use crate::host::cpu_limit::{self, ThrottleCounts};
use crate::host::interference::CpuTicks;
use crate::host::os_stats::{OsFigures, RunQueueSampler, StatSnapshot};
use crate::host::pinning::{current_cpu, pin_current_thread};
use crate::host::processes::OtherParts;
use crate::host::sysfs::FsRoot;
use crate::latency::{LiveResponses, LiveSlot, SessionLatency, interval_width};
use crate::result::summary::job_variation;
use crate::result::{Level, LevelSummary, RunMode, Sample};
use crate::workload::{PaddedJob, WorkerJob, Workload};

/// An interval gets the server's counts when it is at least this many times as long as the
/// server takes to publish them: within 10%, then.
const SERVER_GRAINS_PER_INTERVAL: u32 = 10;

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
    /// An unmeasured first window of this length (`--warmup`).
    pub warmup: Option<Duration>,
    /// Fixed-time levels: per-interval figures this far apart (`--interval`).
    pub interval: Duration,
    /// A campaign's part: when the level's first window starts, by this host's clock (its
    /// sessions connect and warm up before).
    pub start_at: Option<std::time::SystemTime>,
    /// A campaign's part: its sessions' numbers among all the parts' (None: 0..workers).
    pub sessions: Option<SessionNumbers>,
    /// A campaign's part: the campaign's name, by which its other parts on this host are
    /// found (their load is the campaign's, not a disturbance).
    pub campaign: Option<String>,
}

/// A campaign part's sessions among the campaign's: part I of N runs sessions I-1, I-1+N, ...
/// of `of`, so tables, routes, random streams and the open loop's phases interleave with the
/// other parts' instead of repeating them.
#[derive(Debug, Clone, Copy)]
pub struct SessionNumbers {
    pub first: usize,
    pub step: usize,
    pub of: usize,
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

/// What workers report besides their samples.
enum WorkerNote {
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

/// What runs once a level's sessions are ready, before they are released.
pub type SessionsReady<'a> = Box<dyn FnOnce() -> Result<()> + 'a>;

/// Measures `workers` workers (at `rate` statements per second in all, an open loop) for at
/// least one batch; after a stop request it ends with the batch in progress, so the level may
/// hold fewer batches than planned. None when a stop was requested before the first batch
/// (while the sessions prepared). `sessions_ready` runs once every session is ready and
/// before any is released (the run's look at the host, while its sessions wait connected).
#[expect(clippy::too_many_lines, reason = "not yet broken along its steps")]
pub fn measure_level(
    workload: &dyn Workload,
    workers: usize,
    rate: Option<f64>,
    placement: &[Option<usize>],
    settings: &LevelSettings,
    progress: &Progress,
    sessions_ready: Option<SessionsReady<'_>>,
) -> Result<Option<LevelOutcome>> {
    workload
        .level_preparing()
        .context("looking at the instances before the level")?;
    let ready = Barrier::new(workers + 1);
    let start = Barrier::new(workers + 1);
    let end = Barrier::new(workers + 1);
    let finished = AtomicBool::new(false);
    let (sample_sender, samples_received) = unbounded::<Sample>();
    let (note_sender, notes) = unbounded::<WorkerNote>();
    let proc_root = FsRoot::new("/");
    let mut failure: Option<String> = None;
    let mut collected: Vec<WorkerNote> = Vec::new();

    let gate = Gate::default();
    // A fixed-time level of a workload with server counts: their values at each interval's
    // edge. Workloads without them start no thread beside their workers.
    let server_window = settings
        .duration
        .map(|window| (interval_width(settings.interval, window), window))
        .filter(|(width, _)| {
            workload
                .server()
                .and_then(|server| server.server_counts_grain())
                .is_some_and(|grain| *width >= SERVER_GRAINS_PER_INTERVAL * grain)
        });
    let sampler_stop = AtomicBool::new(false);
    let mut server_windows: Vec<Vec<Option<ServerReading>>> = Vec::new();
    // Read-only for the workers: each dates its own job from it.
    let epoch = Instant::now();
    let unit = workload.info().unit;
    // Running counts for interval lines, one padded slot per worker.
    let live_ops: Option<Arc<[CachePadded<AtomicU64>]>> =
        (progress.wants_live_counts() && settings.duration.is_some()).then(|| {
            (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect()
        });
    progress.watch_counts(live_ops.clone(), &unit);
    // Each session's response counts for the interval lines' p50 and p99, one block each.
    let live_responses = live_ops.as_ref().map(|_| LiveResponses::new(workers));
    progress.watch_responses(live_responses.clone());
    let measured = std::thread::scope(|scope| {
        let context = |worker: usize, cpu: Option<usize>| WorkerContext {
            worker,
            workers,
            rate,
            cpu,
            epoch,
            duration: settings.duration,
            warmup: settings.warmup,
            interval: settings.interval,
            gate: &gate,
            ready: &ready,
            start: &start,
            end: &end,
            finished: &finished,
            samples: sample_sender.clone(),
            notes: note_sender.clone(),
            live_ops: live_ops.as_ref().map(|slots| &*slots[worker]),
            live_responses: live_responses
                .as_ref()
                .map(|responses| responses.slot(worker)),
            numbers: settings.sessions,
        };
        if let Err(reason) = spawn_workers(scope, workload, placement, &gate, context) {
            failure = Some(reason);
            return None;
        }
        gate.open(true);
        let release = || {
            finished.store(true, Ordering::SeqCst);
            start.wait();
        };

        ready.wait();
        if let Some(Err(error)) = sessions_ready.map(|check| check()) {
            failure = Some(format!("{error:#}"));
            release();
            return None;
        }
        // A campaign's other parts on this host, looked for before the start is due.
        let other_parts = settings
            .campaign
            .as_deref()
            .map(|name| OtherParts::find(&proc_root, name));
        if let Some(due) = settings.start_at {
            wait_until(due);
        }
        if stop::stop_requested() {
            // Stopped while the sessions prepared (a warm-up cut short) or while the level
            // waited for its start: measure nothing.
            release();
            return None;
        }
        if settings.warmup.is_some() {
            // The warm-up window: every worker runs, nothing is kept.
            start.wait();
            end.wait();
            if stop::stop_requested() {
                release();
                return None;
            }
        }
        failure = take_notes(&notes, &mut collected);
        // The database's baseline is read after the warm-up, as the sessions' counts restart.
        if failure.is_none()
            && let Err(error) = workload.level_started()
        {
            failure = Some(format!("{error:#}"));
        }
        if failure.is_some() {
            release();
            return None;
        }
        let started_at = Utc::now();
        let host = HostWatch::begin(&proc_root, other_parts);
        let began = Instant::now();
        let mut samples: Vec<Sample> = Vec::with_capacity(workers * settings.repeat as usize);
        let mut batches = 0u32;
        let mut precision_reached = None;
        loop {
            start.wait();
            // Not a worker: reads the server's counters from a thread of its own, while the
            // workers' timed window runs, dating each reading from the workers' release.
            let released = Instant::now();
            let sampler = server_window.map(|(width, window)| {
                let stop = &sampler_stop;
                scope.spawn(move || sample_server(workload, width, window, released, stop))
            });
            end.wait();
            sampler_stop.store(true, Ordering::SeqCst);
            if let Some(readings) = sampler.and_then(|sampler| sampler.join().ok()) {
                server_windows.push(readings);
            }
            sampler_stop.store(false, Ordering::SeqCst);
            batches += 1;
            samples.extend(samples_received.try_iter());
            failure = take_notes(&notes, &mut collected);
            if failure.is_some() {
                break;
            }
            let cv = job_variation(&samples, settings.mode());
            progress.batch_done(
                batches > settings.repeat,
                &batch_figures(
                    &samples[samples.len().saturating_sub(workers)..],
                    settings,
                    cv,
                    &unit,
                ),
                cv,
            );
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
        release();
        let (load, os) = host.end(&proc_root, elapsed_s);
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
            workload_figures: Default::default(),
            workload_rate: None,
            server_cpu_s: None,
            connections: Vec::new(),
            instances: Vec::new(),
            latency: None,
            intervals: Vec::new(),
            warnings: Vec::new(),
            interference: None,
            campaign: None,
        };
        Some((level, load))
    });

    progress.watch_counts(None, &unit);
    progress.watch_responses(None);
    // Every worker has ended: the notes are complete.
    drop(note_sender);
    collected.extend(notes.try_iter());
    let notes = WorkerNotes::gather(collected, failure);
    if let Some(reason) = notes.failure {
        return Err(anyhow!(reason));
    }
    let Some((mut level, load)) = measured else {
        // A stop request before the first batch: nothing was measured.
        return Ok(None);
    };
    if level.samples.len() != level.batches as usize * workers {
        return Err(anyhow!(
            "expected {} samples from {workers} workers, got {}",
            level.batches as usize * workers,
            level.samples.len()
        ));
    }
    finish_level(
        &mut level,
        workload,
        notes.latency,
        &server_windows,
        load,
        settings.mode(),
    )?;
    Ok(Some(LevelOutcome {
        level,
        counter_problem: notes.counter_problem,
        pin_problems: notes.pin_problems,
    }))
}

/// Starts one thread per worker of `placement`, each with its `context`; a thread that cannot
/// start sends those already started home (they wait at `gate`) and says why.
fn spawn_workers<'scope, 'env>(
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

/// The host around a level's measured window: /proc/stat, the CPUs' ticks, a campaign's
/// other parts on this host, the cgroup's throttling and the run queue, read as the window
/// opens...
struct HostWatch {
    stat: Option<StatSnapshot>,
    ticks: Option<CpuTicks>,
    other_parts: Option<OtherParts>,
    throttle: Option<Vec<ThrottleCounts>>,
    run_queue: RunQueueSampler,
}

impl HostWatch {
    fn begin(proc_root: &FsRoot, other_parts: Option<OtherParts>) -> Self {
        HostWatch {
            stat: StatSnapshot::read(proc_root),
            ticks: CpuTicks::read(proc_root),
            other_parts: other_parts.map(|parts| parts.counted_from_now(proc_root)),
            throttle: cpu_limit::throttle_counts(proc_root),
            run_queue: RunQueueSampler::start(proc_root.clone()),
        }
    }

    /// ...and once it has closed: the other load beside the workers, and the OS figures.
    fn end(self, proc_root: &FsRoot, elapsed_s: f64) -> (Option<OtherLoad>, OsFigures) {
        let run_queue = self.run_queue.finish();
        let after = StatSnapshot::read(proc_root);
        let load = match (self.ticks, CpuTicks::read(proc_root)) {
            (Some(before), Some(after)) => Some(OtherLoad {
                busy_cpus: before.other_busy_cpus(&after),
                other_parts: self
                    .other_parts
                    .as_ref()
                    .filter(|parts| parts.count() > 0)
                    .map(|parts| (parts.count(), parts.busy_cpus(proc_root, elapsed_s))),
                host_cpus: before.cpus,
                runnable: run_queue.others,
                throttle: self
                    .throttle
                    .zip(cpu_limit::throttle_counts(proc_root))
                    .and_then(|(before, after)| cpu_limit::throttled_between(&before, &after)),
            }),
            _ => None,
        };
        let mut os = match (self.stat, after) {
            (Some(before), Some(after)) => before.figures_until(&after),
            _ => Default::default(),
        };
        os.run_queue = run_queue.all;
        (load, os)
    }
}

/// What the workers said besides their samples, gathered once every worker has ended.
struct WorkerNotes {
    counter_problem: Option<String>,
    pin_problems: Vec<String>,
    /// The first failure: the main thread's own, else a session's.
    failure: Option<String>,
    /// Every session's response times, merged.
    latency: Option<SessionLatency>,
}

impl WorkerNotes {
    fn gather(collected: Vec<WorkerNote>, failure: Option<String>) -> Self {
        let mut notes = WorkerNotes {
            counter_problem: None,
            pin_problems: Vec::new(),
            failure,
            latency: None,
        };
        for note in collected {
            match note {
                WorkerNote::Counters(reason) => {
                    notes.counter_problem = notes.counter_problem.or(Some(reason));
                }
                WorkerNote::Pin(reason) => notes.pin_problems.push(reason),
                WorkerNote::Failed(reason) => notes.failure = notes.failure.or(Some(reason)),
                // Merged after the window: no session's recording touched another's.
                WorkerNote::Latency(session) => match notes.latency.as_mut() {
                    Some(merged) => merged.merge(&session),
                    None => notes.latency = Some(*session),
                },
            }
        }
        notes
    }
}

/// The last batch in a few words: its median job time, or its total rate for fixed-time
/// jobs, and the CV of the level so far. Short enough for a `--report-interval` line with
/// the host's figures to fit 80 columns (the per-worker rate is the total over n).
fn batch_figures(batch: &[Sample], settings: &LevelSettings, cv: f64, unit: &str) -> String {
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let figure = match settings.mode() {
        RunMode::FixedWork => format!(
            "last batch median {:.3} s",
            median(batch.iter().map(|sample| sample.wall_s).collect())
        ),
        RunMode::FixedTime => {
            let total: f64 = batch
                .iter()
                .map(|sample| sample.ops as f64 / sample.wall_s.max(1e-9))
                .sum();
            format!("last batch {} {unit}/s", significant(total))
        }
    };
    format!("{figure}, CV {:.1}%", 100.0 * cv)
}

/// Moves the notes that have arrived into `collected` and returns the first failure.
fn take_notes(notes: &Receiver<WorkerNote>, collected: &mut Vec<WorkerNote>) -> Option<String> {
    collected.extend(notes.try_iter());
    collected.iter().find_map(|note| match note {
        WorkerNote::Failed(reason) => Some(reason.clone()),
        _ => None,
    })
}

/// Holds started workers until every worker thread of the level exists, so a thread that
/// cannot be started leaves nobody waiting at a barrier sized for all of them.
#[derive(Default)]
struct Gate {
    /// The decision, and how many workers have reached the gate.
    decision: Mutex<(Option<bool>, usize)>,
    decided: Condvar,
}

impl Gate {
    fn open(&self, go: bool) {
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

/// Sleeps until `due` by this host's clock, a tenth of a second at most at a time so a stop
/// request is seen; the last stretch is slept whole, so the level starts on time.
fn wait_until(due: std::time::SystemTime) {
    const STEP: Duration = Duration::from_millis(100);
    while let Ok(left) = due.duration_since(std::time::SystemTime::now()) {
        if stop::stop_requested() {
            return;
        }
        std::thread::sleep(left.min(STEP));
    }
}

/// What one worker thread needs; everything it writes in the timed window is its own.
struct WorkerContext<'a> {
    worker: usize,
    workers: usize,
    /// The level's open-loop rate, statements per second for all workers.
    rate: Option<f64>,
    cpu: Option<usize>,
    /// The instant job starts are counted from (copied, never written).
    epoch: Instant,
    duration: Option<Duration>,
    warmup: Option<Duration>,
    interval: Duration,
    gate: &'a Gate,
    ready: &'a Barrier,
    start: &'a Barrier,
    end: &'a Barrier,
    finished: &'a AtomicBool,
    samples: Sender<Sample>,
    notes: Sender<WorkerNote>,
    /// This worker's own padded slot for its running operation count, read once per
    /// `--report-interval` (None without interval lines).
    live_ops: Option<&'a AtomicU64>,
    /// This worker's own block of response counts for the interval lines.
    live_responses: Option<LiveSlot>,
    /// A campaign part's numbering of its sessions among all the parts'.
    numbers: Option<SessionNumbers>,
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
            while began.elapsed() < duration {
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
pub fn thread_cpu_seconds() -> f64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|time| time.tv_sec() as f64 + time.tv_nsec() as f64 * 1e-9)
        .unwrap_or(0.0)
}
