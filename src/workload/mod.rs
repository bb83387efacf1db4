//! Workloads: what each worker does in a job. A workload is one file (or folder) that owns
//! its command-line options (a clap `Args` struct implementing [`WorkloadOptions`]), their
//! defaults and validation, and its [`Workload`]; the runner knows nothing about any of them.
//! Adding one takes its file, its `mod` line and one line in the `workloads!` table below; a
//! workload that loads a database server also implements [`ServerWorkload`] (`server.rs`).

pub(crate) mod bandwidth;
pub mod cpu;
pub mod db;
pub mod figures;
pub mod lio;
pub(crate) mod memory;
pub mod objects;
pub mod plan;
pub mod replay;
pub mod script;
pub mod server;
pub(crate) mod slob;
pub(crate) mod sql_text;
pub mod tpcc;

use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use crossbeam_utils::CachePadded;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::host::Topology;
use crate::latency::{SessionClock, SessionLatency};
pub use crate::result::workload::{JobShape, SessionConnection, WorkloadInfo, WorkloadName};
pub use plan::{LevelLength, LevelPlan, LevelSessions};
pub use server::ServerWorkload;

/// The table of workloads: for each, its name in results and on the command line, its options
/// and what it measures (the doc line is its help). It generates [`WorkloadKind`], which the
/// result document records, and [`WorkloadArgs`], the `run` subcommands.
macro_rules! workloads {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal => $args:ty,)*) => {
        /// Which workload a run measured, as the result document records it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum WorkloadKind {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)*
        }

        impl WorkloadKind {
            pub const ALL: &[WorkloadKind] = &[$(Self::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }
        }

        /// `corescale run WORKLOAD [OPTIONS]`: one subcommand per workload, with its own options.
        #[derive(Debug, Clone, Subcommand)]
        pub enum WorkloadArgs {
            $($(#[doc = $doc])* #[command(name = $name)] $variant($args),)*
        }

        impl WorkloadArgs {
            pub fn kind(&self) -> WorkloadKind {
                match self {
                    $(Self::$variant(_) => WorkloadKind::$variant,)*
                }
            }

            pub fn options(&self) -> &dyn WorkloadOptions {
                match self {
                    $(Self::$variant(options) => options,)*
                }
            }
        }
    };
}

workloads! {
    /// Instruction-bound integer loop in registers.
    Cpu = "cpu" => cpu::CpuArgs,
    /// Dependent random read-modify-write over a large per-worker array (memory latency).
    Memory = "memory" => memory::MemoryArgs,
    /// STREAM-style triad over three large per-worker arrays (memory bandwidth).
    Bandwidth = "bandwidth" => bandwidth::BandwidthArgs,
    /// SLOB-method logical IO through an in-process shared buffer cache.
    Lio = "lio" => lio::args::LioArgs,
    /// The same engine with a cache smaller than the data, reading misses from a data file.
    Pio = "pio" => lio::args::PioArgs,
    /// The SLOB/pgio method against a real database (--target URL).
    Db = "db" => db::args::DbArgs,
    /// A DBA's own statements (pgbench's script syntax) against a real database.
    Script = "script" => script::ScriptArgs,
    /// Order entry derived from TPC-C (NOPM, TPM) on tables of `db setup tpcc`.
    Tpcc = "tpcc" => tpcc::run::TpccArgs,
    /// A production workload captured from the server's log (`corescale capture`), replayed
    /// at rising speeds.
    Replay = "replay" => replay::options::ReplayArgs,
}

// The workloads that keep objects in a database (`workload::objects`): `db setup NAME` and
// the claims teardown honours. The first, SLOB's, is `db setup`'s default.
objects::database_objects! {
    default db::objects::SlobTables;
    /// SLOB's corescale_tN tables of one-row blocks with a random-order key index (the
    /// default).
    Slob = "slob" => db::objects::SlobTables;
    /// The nine order-entry tables derived from TPC-C, loaded as its clause 4.3 says.
    Tpcc = "tpcc" => tpcc::objects::OrderEntryTables;
}

/// What every workload is told about the run it is built for.
pub struct BuildContext<'a> {
    /// `--job-size`: work per job in the workload's own unit, when given.
    pub job_size: Option<u64>,
    /// `--duration`: fixed-time jobs of this length, when given.
    pub duration: Option<Duration>,
    /// The largest worker count of the plan (sizes per-session schemas).
    pub max_workers: usize,
    pub topology: &'a Topology,
    /// `--part I/N` of a campaign: this part's number from 1, and how many there are.
    pub campaign_part: Option<(usize, usize)>,
    /// The options shaping the sweep's worker counts and batches that the user gave
    /// (`--sweep`, `--workers`, `--repeat`, ...): a workload whose plan has sessions of its
    /// own ([`LevelSessions::Own`]) refuses them.
    pub sweep_options: Vec<&'static str>,
}

/// A workload's own options: it validates them and builds the workload for this host.
pub trait WorkloadOptions {
    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>>;

    /// Whether its fixed-time levels keep per-interval figures (`--interval`): workloads
    /// that time each statement do.
    fn keeps_intervals(&self) -> bool {
        false
    }

    /// Whether building connects to something outside corescale (a database): then a failure
    /// is a runtime failure unless it is a [`UsageError`]. Otherwise building only checks
    /// the options, and every failure is a bad setting.
    fn connects(&self) -> bool {
        false
    }

    /// The search's options when `--find` was given (the workloads that take `--rate`, and
    /// a replay).
    fn find(&self) -> Option<&crate::latency::FindArgs> {
        None
    }
}

/// The line each workload's `--help` ends with: what `--job-size` counts, and its default.
pub fn job_size_help(unit: &str, default: &str) -> String {
    format!("--job-size counts {unit} (default: {default}).")
}

/// test_cpu_parallel's job size, for the workloads it had (cpu and memory).
#[derive(Debug, Clone, Default, Args)]
pub struct InnerLoopArgs {
    /// test_cpu_parallel's job size: millions of cpu iterations, or 50,000s of memory accesses.
    #[arg(long = "worker_inner_loop_size", value_name = "N",
          value_parser = crate::values::parse_positive)]
    pub worker_inner_loop_size: Option<u64>,
}

impl InnerLoopArgs {
    /// The job size: `--job-size`, else the loop count in units of `per_loop`.
    pub fn job_size(
        &self,
        job_size: Option<u64>,
        per_loop: u64,
    ) -> Result<Option<u64>, UsageError> {
        match (job_size, self.worker_inner_loop_size) {
            (Some(_), Some(_)) => Err(UsageError::new(
                "--job-size and --worker_inner_loop_size both set the job size: give one",
            )),
            (Some(size), None) => Ok(Some(size)),
            (None, loops) => Ok(loops.map(|loops| loops.saturating_mul(per_loop))),
        }
    }
}

/// The sessions' own counts of one level, in the workload's own type: each session hands its
/// counts in once after the level's last batch ([`WorkerJob::hand_in_counts`]) and the
/// workload takes them all in [`Workload::level_figures`]. Typed end to end: the runner
/// never carries them, and no count is read as another type.
pub struct Sessions<T> {
    counts: std::sync::Mutex<Vec<T>>,
}

impl<T> Default for Sessions<T> {
    fn default() -> Self {
        Self {
            counts: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl<T> Sessions<T> {
    /// A session's counts at the level's end (outside every timed window).
    pub fn hand_in(&self, counts: T) -> Result<()> {
        crate::error::locked(&self.counts, "the sessions' counts")?.push(counts);
        Ok(())
    }

    /// Every count handed in since the last take: the level's.
    pub fn take(&self) -> Result<Vec<T>> {
        Ok(std::mem::take(&mut *crate::error::locked(
            &self.counts,
            "the sessions' counts",
        )?))
    }
}

/// What a workload adds to a level: its figures (declared with [`figures::level_figures!`])
/// as the result document records them, what they cannot vouch for, and the two the result
/// itself needs typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelFigures {
    pub recorded: Vec<figures::Figure>,
    pub warnings: Vec<String>,
    /// The workload's own count of its total rate, when that (not the workers' sum of their
    /// operations) is the figure of merit: a database's count of its logical reads.
    pub rate_of_merit: Option<f64>,
    /// CPU seconds a server spent for the workers, where measured.
    pub server_cpu_s: Option<f64>,
    /// How each session reached its server (database workloads).
    pub connections: Vec<SessionConnection>,
    /// A cluster's level, instance by instance (empty with one instance).
    pub instances: Vec<db::InstanceFigures>,
    /// Each class's response times (statements, fingerprints, transaction types).
    pub classes: Vec<crate::latency::ClassTimes>,
}

impl SessionConnection {
    /// How the sessions of a level of `workers` connected, from what each recorded (its TLS,
    /// or none) when it opened.
    pub fn of_level(
        connections: &std::collections::BTreeMap<usize, Option<crate::db::connect::tls::TlsFacts>>,
        workers: usize,
    ) -> Vec<Self> {
        connections
            .range(..workers)
            .map(|(session, tls)| Self {
                session: *session,
                tls: tls.is_some(),
                protocol: tls.as_ref().map(|tls| tls.protocol.clone()),
                cipher: tls.as_ref().map(|tls| tls.cipher.clone()),
            })
            .collect()
    }
}

impl LevelFigures {
    /// Records a workload's figures under their field names (absent ones left out).
    pub fn of(figures: &dyn figures::FigureSet, warnings: Vec<String>) -> Self {
        Self {
            recorded: figures.figures(),
            warnings,
            ..Self::default()
        }
    }

    /// A recorded figure by its name.
    #[cfg(test)]
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.recorded
            .iter()
            .find_map(|(recorded, value)| (recorded == name).then_some(*value))
    }
}

/// A server's running counts of blocks read: logical (whether cached or not) and physical.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerCounts {
    pub lio: f64,
    pub pio: f64,
}

/// What the runner measured over a level, for workloads that derive figures from it.
#[derive(Debug, Clone, Copy)]
pub struct LevelTotals {
    pub workers: usize,
    /// Wall time of the measured batches.
    pub elapsed_s: f64,
    /// Thread CPU time of all jobs.
    pub cpu_s: f64,
    pub ops: u64,
}

/// A load generator: describes itself and builds per-worker state.
pub trait Workload: Send + Sync {
    fn info(&self) -> WorkloadInfo;

    /// Builds shared data (the lio buffer cache and its tables) once, after the memory it
    /// needs was checked and before any level; its time is reported apart from measurements.
    fn setup(&mut self) -> Result<()> {
        Ok(())
    }

    /// Builds one worker's private state (allocating and touching its memory, or opening a
    /// session) before any timing starts. Runs on the worker's own thread, after pinning;
    /// `workers` is the level's count, and `rate` an open loop's statements per second for
    /// the whole level (shared among them; None: closed loop).
    fn prepare(&self, worker: usize, workers: usize, rate: Option<f64>) -> Result<PaddedJob>;

    /// What the workload tells the sweep about its levels (whose sessions, how long, at
    /// which rates, whether each worker needs a CPU), read once before the first level.
    fn plan(&self) -> LevelPlan {
        LevelPlan::default()
    }

    /// Called on the main thread before a level's sessions are prepared: a cluster looks at
    /// its instances again (which is up, which is the primary now).
    fn level_preparing(&self) -> Result<()> {
        Ok(())
    }

    /// Called on the main thread just before a level's first batch.
    fn level_started(&self) -> Result<()> {
        Ok(())
    }

    /// Figures for a level from the sessions' counts (handed in to the workload's own
    /// [`Sessions`]) and the runner's totals, with what they
    /// cannot vouch for (an LIO test that was not cached, ...); called on the main thread
    /// after the level's last batch.
    fn level_figures(&self, _totals: &LevelTotals) -> Result<LevelFigures> {
        Ok(LevelFigures::default())
    }

    /// Called once after the whole sweep ran to its end: a check of what the run left
    /// (order entry's consistency conditions), said and recorded; an error fails the run.
    fn check_after_run(&self) -> Result<Option<String>> {
        Ok(None)
    }

    /// The hooks of a workload that loads a database server; None for those that run on
    /// this host alone.
    fn server(&self) -> Option<&dyn ServerWorkload> {
        None
    }
}

/// One worker's private state and loops. Nothing here is shared between workers.
pub trait WorkerJob: Send {
    /// One fixed-work job; returns the operations done.
    fn run_job(&mut self) -> Result<u64>;

    /// A short slice of work (about a millisecond) for fixed-time runs; returns operations.
    fn run_slice(&mut self) -> Result<u64>;

    /// Whether a stop request (a signal) ends this job's fixed-time window at once rather
    /// than after it: a replay's window is one pass of its capture, which may last hours,
    /// and what it sent until then is kept.
    fn window_ends_on_stop(&self) -> bool {
        false
    }

    /// Finishes work still in flight when a fixed-time window ends (pipelined statements);
    /// runs inside the window and returns operations.
    fn end_window(&mut self) -> Result<u64> {
        Ok(0)
    }

    /// Hands this session's own counts to its workload ([`Sessions`]), once after the
    /// level's last batch; workloads without counts of their own have nothing to hand in.
    fn hand_in_counts(&mut self) -> Result<()> {
        Ok(())
    }

    /// The clock that times this session's responses (the database workloads'); the
    /// hooks below default to it, and do nothing for workloads that time jobs.
    fn session_clock(&mut self) -> Option<&mut SessionClock> {
        None
    }

    /// Fixed-time levels: keep per-interval figures of each window of `window`, `width`
    /// apart. Called before the first window, so nothing is allocated inside one.
    fn keep_intervals(&mut self, width: std::time::Duration, window: std::time::Duration) {
        if let Some(clock) = self.session_clock() {
            clock.keep_intervals(width, window);
        }
    }

    /// `--report-interval`: count each response in `live` too, for the interval lines'
    /// p50 and p99 (workloads that time statements).
    fn report_responses(&mut self, live: crate::latency::LiveSlot) {
        if let Some(clock) = self.session_clock() {
            clock.report_to(live);
        }
    }

    /// The level's warm-up (`--warmup`) ended: forget its counts and response times, so
    /// only the measured batches count.
    fn warmed_up(&mut self) {}

    /// A timed window (a fixed-work job or a fixed-time batch) begins now: an open loop
    /// schedules its statements from this instant.
    fn window_started(&mut self, began: std::time::Instant) {
        if let Some(clock) = self.session_clock() {
            clock.window_started(began);
        }
    }

    /// The response time of every statement this session answered in the level, taken once
    /// after its last batch; None for workloads whose response is the job (job times).
    fn latency(&mut self) -> Option<SessionLatency> {
        self.session_clock().map(SessionClock::take)
    }
}

/// Workers' states sit in separate heap blocks; padding them to cache lines keeps one
/// worker's writes from invalidating a line another worker reads.
/// A worker's job on cache lines of its own (crossbeam's `CachePadded`), as `prepare` hands
/// it to the runner. The runner reaches the job itself through [`PaddedJob::job`]: no
/// method-by-method forwarding, in which a new `WorkerJob` method could be forgotten and fall
/// back to its default without a word.
pub struct PaddedJob(Box<dyn PaddedSlot>);

/// What a padded job is to the runner: the one way to its job.
trait PaddedSlot: Send {
    fn job(&mut self) -> &mut dyn WorkerJob;
}

impl<T: WorkerJob + 'static> PaddedSlot for CachePadded<T> {
    fn job(&mut self) -> &mut dyn WorkerJob {
        &mut **self
    }
}

impl PaddedJob {
    pub fn new<T: WorkerJob + 'static>(job: T) -> Self {
        Self(Box::new(CachePadded::new(job)))
    }

    pub fn job(&mut self) -> &mut dyn WorkerJob {
        self.0.job()
    }
}

/// The per-worker arrays of the memory workloads (memory, bandwidth).
#[derive(Debug, Clone, Default, Args)]
pub struct ArrayArgs {
    /// Bytes per array (default 4x the last-level cache). Suffixes K, M, G.
    #[arg(long, value_name = "SIZE", value_parser = crate::values::parse_array_size)]
    pub array_size: Option<u64>,
}

impl ArrayArgs {
    /// Bytes per array: as given, else 4x the last-level cache, so almost every access
    /// misses it (256 MiB when the cache size is unknown).
    pub fn bytes(&self, topology: &Topology) -> Result<u64> {
        let bytes = self.array_size.unwrap_or_else(|| {
            topology
                .last_level_cache_bytes()
                .map_or(256 << 20, |bytes| bytes * 4)
        });
        anyhow::ensure!(
            bytes >= 4096,
            "--array-size must be at least 4K (got {bytes} bytes)"
        );
        Ok(bytes)
    }
}

/// `--interval` for a workload that keeps no per-interval figures: hidden from its help and
/// refused. Defined in the workload's own options, it takes the place of the run-wide
/// `--interval` there (clap does not propagate a global option to a subcommand that has one
/// of the same name), typed alike, as clap copies a value given before the workload's name.
#[derive(Debug, Clone, Default, Args)]
pub struct NoIntervals {
    #[arg(long = "interval", hide = true, value_name = "TIME", value_parser = keeps_no_intervals)]
    interval: Option<Duration>,
}

fn keeps_no_intervals(_: &str) -> Result<Duration, String> {
    Err(NO_INTERVALS.to_string())
}

/// Why `--interval` is refused by the workloads that keep no per-interval figures.
pub const NO_INTERVALS: &str = "cpu, memory and bandwidth time whole jobs and keep no per-interval figures (lio, pio, db and script do): leave --interval out";

/// The campaign options (`--campaign`, `--part`, `--start-at`, `--level-gap`,
/// `--max-clock-offset`) for a workload that loads no database: hidden from its help and
/// refused after its name, as [`NoIntervals`] does for `--interval`; before its name,
/// `--campaign` (which `--part` and `--start-at` need) is refused once the workload is known,
/// and the other two, with their defaults, cannot be told from unset and do nothing. A campaign
/// splits one database's load among client hosts.
#[derive(Debug, Clone, Default, Args)]
pub struct NoCampaign {
    #[arg(long = "campaign", hide = true, value_parser = no_campaign::<String>)]
    campaign: Option<String>,
    #[arg(long = "part", hide = true, value_parser = no_campaign::<(usize, usize)>)]
    part: Option<(usize, usize)>,
    #[arg(long = "start-at", hide = true,
          value_parser = no_campaign::<chrono::DateTime<chrono::Utc>>)]
    start_at: Option<chrono::DateTime<chrono::Utc>>,
    #[arg(long = "level-gap", hide = true, value_parser = no_campaign::<Duration>)]
    level_gap: Option<Duration>,
    #[arg(long = "max-clock-offset", hide = true, value_parser = no_campaign::<Duration>)]
    max_clock_offset: Option<Duration>,
}

fn no_campaign<T>(_: &str) -> Result<T, String> {
    Err(NO_CAMPAIGN.to_string())
}

/// Why the campaign options are refused by the workloads that load no database.
pub const NO_CAMPAIGN: &str = "a campaign splits one database's load among client hosts: it applies to run db and run script; for several hosts of the built-in workloads, run each and report them together (a fleet)";

impl From<WorkloadKind> for WorkloadName {
    /// The name the workloads table gives it, as the result document records it.
    fn from(kind: WorkloadKind) -> Self {
        WorkloadName::new(kind.name())
    }
}
