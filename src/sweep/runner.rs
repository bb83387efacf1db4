//! Measures one load level: the main thread's side. It releases the level's workers
//! (`super::worker`) together for every batch, reads the host around the timed window and
//! decides when the level has batches enough; samples are handed over after each window.
//!
//! A failed session ends the level with its error once the batch in progress is over; the
//! levels before it are kept by the caller.

use std::sync::Arc;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use chrono::Utc;
use crossbeam_channel::{Receiver, unbounded};
use crossbeam_utils::CachePadded;

use super::level_end::{OtherLoad, finish_level};
use super::progress::Progress;
use super::server_sampler::{ServerReading, sample_server};
pub use super::settings::LevelSettings;
use super::stop;
pub use super::worker::SessionNumbers;
use super::worker::{Gate, WorkerContext, WorkerNote, spawn_workers};
use crate::format::significant;
use crate::host::cpu_limit::{self, ThrottleCounts};
use crate::host::interference::CpuTicks;
use crate::host::os_stats::{OsFigures, RunQueueSampler, StatSnapshot};
use crate::host::processes::OtherParts;
use crate::host::sysfs::FsRoot;
use crate::latency::{LiveResponses, SessionLatency, interval_width};
use crate::result::summary::job_variation;
use crate::result::{Level, LevelSummary, RunMode, Sample};
use crate::workload::Workload;

/// An interval gets the server's counts when it is at least this many times as long as the
/// server takes to publish them: within 10%, then.
const SERVER_GRAINS_PER_INTERVAL: u32 = 10;

/// A measured level and what went wrong on its workers without stopping them.
pub struct LevelOutcome {
    pub level: Level,
    /// Why hardware counters could not be opened, as the first worker found.
    pub counter_problem: Option<String>,
    pub pin_problems: Vec<String>,
}

/// What runs once a level's sessions are ready, before they are released.
pub type SessionsReady<'a> = Box<dyn FnOnce() -> Result<()> + 'a>;

/// Measures `workers` workers (at `rate` statements per second in all, an open loop) for at
/// least one batch; after a stop request it ends with the batch in progress, so the level may
/// hold fewer batches than planned. None when a stop was requested before the first batch
/// (while the sessions prepared). `sessions_ready` runs once every session is ready and
/// before any is released (the run's look at the host, while its sessions wait connected).
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
    let meeting = Meeting::new(workers);
    let (sample_sender, samples) = unbounded::<Sample>();
    let (note_sender, notes) = unbounded::<WorkerNote>();
    let unit = workload.info().unit;
    let live = LiveCounts::watched(progress, workers, settings, &unit);
    // Read-only for the workers: each dates its own job from it.
    let epoch = Instant::now();
    let mut coordinator = Coordinator {
        workload,
        workers,
        settings,
        progress,
        meeting: &meeting,
        notes: &notes,
        collected: Vec::new(),
        failure: None,
        proc_root: FsRoot::new("/"),
        unit: &unit,
    };
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
            gate: &meeting.gate,
            ready: &meeting.ready,
            start: &meeting.start,
            end: &meeting.end,
            finished: &meeting.finished,
            samples: sample_sender.clone(),
            notes: note_sender.clone(),
            live_ops: live.ops.as_ref().map(|slots| &*slots[worker]),
            live_responses: live.responses.as_ref().map(|all| all.slot(worker)),
            numbers: settings.sessions,
        };
        if let Err(reason) = spawn_workers(scope, workload, placement, &meeting.gate, context) {
            coordinator.failure = Some(reason);
            return None;
        }
        meeting.gate.open(true);
        let other_parts = coordinator.release_when_ready(sessions_ready)?;
        Some(coordinator.measure_batches(scope, &samples, other_parts))
    });
    live.unwatch(progress, &unit);
    // Every worker has ended: the notes are complete.
    drop(note_sender);
    coordinator.collected.extend(notes.try_iter());
    let notes = WorkerNotes::gather(coordinator.collected, coordinator.failure);
    if let Some(reason) = notes.failure {
        return Err(anyhow!(reason));
    }
    let Some(mut window) = measured else {
        // A stop request before the first batch: nothing was measured.
        return Ok(None);
    };
    if window.samples.len() != window.batches as usize * workers {
        return Err(anyhow!(
            "expected {} samples from {workers} workers, got {}",
            window.batches as usize * workers,
            window.samples.len()
        ));
    }
    let server_windows = std::mem::take(&mut window.server_windows);
    let (mut level, load) = window.into_level(workers, placement);
    finish_level(
        &mut level,
        workload,
        notes.latency,
        &server_windows,
        load,
        settings,
    )?;
    Ok(Some(LevelOutcome {
        level,
        counter_problem: notes.counter_problem,
        pin_problems: notes.pin_problems,
    }))
}

/// Where the coordinator and a level's workers meet: the gate every worker passes once all
/// exist, the barriers of each window, and the flags that send them home or end a sampler.
struct Meeting {
    gate: Gate,
    ready: Barrier,
    start: Barrier,
    end: Barrier,
    finished: AtomicBool,
    sampler_stop: AtomicBool,
}

impl Meeting {
    fn new(workers: usize) -> Self {
        Meeting {
            gate: Gate::default(),
            ready: Barrier::new(workers + 1),
            start: Barrier::new(workers + 1),
            end: Barrier::new(workers + 1),
            finished: AtomicBool::new(false),
            sampler_stop: AtomicBool::new(false),
        }
    }

    /// Sends the workers home: they pass the next start and see the level finished.
    fn release(&self) {
        self.finished.store(true, Ordering::SeqCst);
        self.start.wait();
    }
}

/// Running counts for interval lines, one padded slot per worker, and each session's
/// response counts for their p50 and p99: only on fixed-time levels whose progress shows them.
struct LiveCounts {
    ops: Option<Arc<[CachePadded<AtomicU64>]>>,
    responses: Option<Arc<LiveResponses>>,
}

impl LiveCounts {
    fn watched(progress: &Progress, workers: usize, settings: &LevelSettings, unit: &str) -> Self {
        let ops: Option<Arc<[CachePadded<AtomicU64>]>> =
            (progress.wants_live_counts() && settings.duration.is_some()).then(|| {
                (0..workers)
                    .map(|_| CachePadded::new(AtomicU64::new(0)))
                    .collect()
            });
        progress.watch_counts(ops.clone(), unit);
        let responses = ops.as_ref().map(|_| LiveResponses::new(workers));
        progress.watch_responses(responses.clone());
        LiveCounts { ops, responses }
    }

    fn unwatch(&self, progress: &Progress, unit: &str) {
        progress.watch_counts(None, unit);
        progress.watch_responses(None);
    }
}

/// The main thread's side of a level: it releases the workers, reads the host around the
/// window and decides when the level has batches enough.
struct Coordinator<'a> {
    workload: &'a dyn Workload,
    workers: usize,
    settings: &'a LevelSettings,
    progress: &'a Progress,
    meeting: &'a Meeting,
    notes: &'a Receiver<WorkerNote>,
    collected: Vec<WorkerNote>,
    /// The first failure, the main thread's own or a worker's.
    failure: Option<String>,
    proc_root: FsRoot,
    unit: &'a str,
}

/// A level's measured batches and the host around them, before the level's figures.
struct Window {
    samples: Vec<Sample>,
    batches: u32,
    precision_reached: Option<bool>,
    /// The server's counts at each interval's edge, a vector per batch.
    server_windows: Vec<Vec<Option<ServerReading>>>,
    started_at: chrono::DateTime<Utc>,
    elapsed_s: f64,
    load: Option<OtherLoad>,
    os: OsFigures,
}

impl<'a> Coordinator<'a> {
    /// Waits for every session to be ready, runs `sessions_ready`, waits for a campaign's
    /// start and runs the warm-up window; the campaign's other parts on this host when the
    /// level goes ahead, None (the workers sent home) when it measures nothing.
    fn release_when_ready(
        &mut self,
        sessions_ready: Option<SessionsReady<'_>>,
    ) -> Option<Option<OtherParts>> {
        let meeting = self.meeting;
        meeting.ready.wait();
        if let Some(Err(error)) = sessions_ready.map(|check| check()) {
            self.failure = Some(format!("{error:#}"));
            meeting.release();
            return None;
        }
        // A campaign's other parts on this host, looked for before the start is due.
        let other_parts = self
            .settings
            .campaign
            .as_deref()
            .map(|name| OtherParts::find(&self.proc_root, name));
        if let Some(due) = self.settings.start_at {
            wait_until(due);
        }
        // Stopped while the sessions prepared (a warm-up cut short) or while the level
        // waited for its start: measure nothing.
        if stop::stop_requested() {
            meeting.release();
            return None;
        }
        if self.settings.warmup.is_some() {
            // The warm-up window: every worker runs, nothing is kept.
            meeting.start.wait();
            meeting.end.wait();
            if stop::stop_requested() {
                meeting.release();
                return None;
            }
        }
        self.failure = take_notes(self.notes, &mut self.collected);
        // The database's baseline is read after the warm-up, as the sessions' counts restart.
        if self.failure.is_none()
            && let Err(error) = self.workload.level_started()
        {
            self.failure = Some(format!("{error:#}"));
        }
        if self.failure.is_some() {
            meeting.release();
            return None;
        }
        Some(other_parts)
    }

    /// Runs batches until the level has enough (its repeats, its precision) or a stop is
    /// asked for, then sends the workers home.
    fn measure_batches<'scope>(
        &mut self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        received: &Receiver<Sample>,
        other_parts: Option<OtherParts>,
    ) -> Window
    where
        'a: 'scope,
    {
        let settings = self.settings;
        let started_at = Utc::now();
        let host = HostWatch::begin(&self.proc_root, other_parts);
        let began = Instant::now();
        let mut window = Window {
            samples: Vec::with_capacity(self.workers * settings.repeat as usize),
            batches: 0,
            precision_reached: None,
            server_windows: Vec::new(),
            started_at,
            elapsed_s: 0.0,
            load: None,
            os: OsFigures::default(),
        };
        let server_window = self.server_window();
        loop {
            self.run_batch(scope, server_window, &mut window);
            window.samples.extend(received.try_iter());
            self.failure = take_notes(self.notes, &mut self.collected);
            if self.failure.is_some() {
                break;
            }
            let cv = job_variation(&window.samples, settings.mode());
            self.progress.batch_done(
                window.batches > settings.repeat,
                &batch_figures(
                    &window.samples[window.samples.len().saturating_sub(self.workers)..],
                    settings,
                    cv,
                    self.unit,
                ),
                cv,
            );
            if let Some(target) = settings.precision {
                window.precision_reached = Some(cv <= target);
            }
            let enough = window.batches >= settings.repeat
                && settings
                    .precision
                    .is_none_or(|target| cv <= target || window.batches >= settings.max_repeat);
            if enough || stop::stop_requested() {
                break;
            }
        }
        window.elapsed_s = began.elapsed().as_secs_f64();
        self.meeting.release();
        (window.load, window.os) = host.end(&self.proc_root, window.elapsed_s);
        window
    }

    /// One batch: the workers released together and waited for, the server's counters read
    /// beside them from a thread of its own (not a worker), dated from the workers' release.
    fn run_batch<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        server_window: Option<(Duration, Duration)>,
        window: &mut Window,
    ) where
        'a: 'scope,
    {
        let meeting = self.meeting;
        meeting.start.wait();
        let released = Instant::now();
        let workload = self.workload;
        let seen = self.progress.server_reads();
        let sampler = server_window.map(|(width, length)| {
            let stop = &meeting.sampler_stop;
            scope.spawn(move || {
                sample_server(workload, width, length, released, stop, seen.as_deref())
            })
        });
        meeting.end.wait();
        meeting.sampler_stop.store(true, Ordering::SeqCst);
        if let Some(readings) = sampler.and_then(|sampler| sampler.join().ok()) {
            window.server_windows.push(readings);
        }
        meeting.sampler_stop.store(false, Ordering::SeqCst);
        window.batches += 1;
    }

    /// A fixed-time level of a workload with server counts: its interval width and length,
    /// when the server publishes its counts often enough for intervals that wide. Workloads
    /// without them start no thread beside their workers.
    fn server_window(&self) -> Option<(Duration, Duration)> {
        self.settings
            .duration
            .map(|window| (interval_width(self.settings.interval, window), window))
            .filter(|(width, _)| {
                self.workload
                    .server()
                    .and_then(|server| server.server_counts_grain())
                    .is_some_and(|grain| *width >= SERVER_GRAINS_PER_INTERVAL * grain)
            })
    }
}

impl Window {
    /// The level these batches make, its figures still to be computed, and the other load
    /// beside it.
    fn into_level(self, workers: usize, placement: &[Option<usize>]) -> (Level, Option<OtherLoad>) {
        let level = Level {
            workers,
            batches: self.batches,
            precision_reached: self.precision_reached,
            placement: placement.to_vec(),
            started_at: self.started_at,
            elapsed_s: self.elapsed_s,
            os: self.os,
            samples: self.samples,
            summary: LevelSummary::default(),
            workload_figures: Default::default(),
            workload_rate: None,
            server_cpu_s: None,
            connections: Vec::new(),
            instances: Vec::new(),
            latency: None,
            intervals: Vec::new(),
            classes: Vec::new(),
            warnings: Vec::new(),
            interference: None,
            campaign: None,
            search_step: None,
        };
        (level, self.load)
    }
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
/// the host's figures to fit 80 columns (the per-worker rate is the total over n), and for
/// the bar's "level 3/6, 4 workers | ..." to keep its CV there (the bar says which batch).
fn batch_figures(batch: &[Sample], settings: &LevelSettings, cv: f64, unit: &str) -> String {
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let figure = match settings.mode() {
        RunMode::FixedWork => format!(
            "median {:.3} s",
            median(batch.iter().map(|sample| sample.wall_s).collect())
        ),
        RunMode::FixedTime => {
            let total: f64 = batch
                .iter()
                .map(|sample| sample.ops as f64 / sample.wall_s.max(1e-9))
                .sum();
            format!("{} {unit}/s", significant(total))
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
