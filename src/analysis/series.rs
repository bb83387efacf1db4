//! A measurement series as the analysis sees it, whatever file it came from: one figure per
//! load level, either a job time (fixed work) or a total rate (fixed time, LIO/s, ...).

use serde::{Deserialize, Serialize};

/// The unit of a tpcc level's response times once the report reads them as New-Order's.
pub(crate) const NEW_ORDER: &str = "New-Order";

/// What the raw figure of a series is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Measure {
    /// Median job time in seconds; less is better.
    JobTime,
    /// Total operations per second over all workers, in `unit`; more is better.
    Rate { unit: String },
}

/// One load level of a series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub workers: usize,
    /// Median job time (s) or total rate, per the series' measure.
    pub raw: f64,
    /// Jobs per minute the host delivered (jobs over the time the batches took), when the
    /// file says (corescale's); else capacity is test_cpu_parallel's 60 n / median job time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<f64>,
    /// Coefficient of variation of the jobs at this level, when known.
    pub cv: Option<f64>,
    /// The 95% half-width of the level's capacity, relative (0.04: ±4%), from its batches by
    /// Student's t; None from one batch, or from a file that does not give its batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_uncertainty: Option<f64>,
    pub cpu_fraction: Option<f64>,
    pub steal_pct: Option<f64>,
    /// Why the run judged this level disturbed; empty when clean or not judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<String>,
    /// Why the level's rate is not capacity, when it ran to a schedule (pgbench `-R`): such a
    /// level is always left out of the capacity analysis, and said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    /// With --precision: false when the CV target was missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_reached: Option<bool>,
    /// The buffer cache's figures of an lio, pio or db level, when the run recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheFigures>,
    /// The spread of the raw figure at this level (low, high): the fastest and slowest job
    /// (or batch), or median ± stdev where the file gives only that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<(f64, f64)>,
    /// Response times at this level: each statement's, or each job's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Box<crate::latency::Latency>>,
    /// The level's timeline (a run's JSON only): rate and percentiles per interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::latency::IntervalFigures>,
    /// The workload's own figures of the level (`levels[].workload_figures`, or the CSV's
    /// `workload_figures.*` columns), by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub figures: std::collections::BTreeMap<String, f64>,
    /// A campaign part's level: what merging the parts needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<PointInCampaign>,
    /// A merged campaign level: each client host's part of it, for the per-client view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartOfLevel>,
    /// A cluster's level, instance by instance (a run's JSON only), for the per-instance view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<crate::result::InstanceFigures>,
    /// A pgbench log whose 7th field is either `-R`'s schedule lag or `--max-tries`'
    /// retries: its reading as an open loop, kept until its run's summary tells which.
    #[serde(skip)]
    pub open_reading: Option<Box<crate::latency::Latency>>,
    /// Each class of the level's responses (a run's `levels[].classes[]`), encoded as the
    /// run wrote them: `--slo` on one class reads them, a campaign adds them up.
    #[serde(skip)]
    pub classes: Vec<crate::latency::ClassTimes>,
    /// A replay's capture's logged durations, by fingerprint (`log:fingerprint-K` in the
    /// run's classes): what a replay alone is compared with.
    #[serde(skip)]
    pub logged: Vec<crate::latency::ClassTimes>,
}

/// One client host's part of a merged campaign level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartOfLevel {
    /// This part, 1 to the campaign's parts, and its host's label.
    pub part: usize,
    pub client: String,
    pub sessions: usize,
    pub statements_per_s: Option<f64>,
    /// Its share of the level's statements (its share of the sessions is `sessions` over
    /// the level's).
    pub share_of_work: Option<f64>,
    /// Its client CPU time over its host's CPUs and the level's time: near 1, the client
    /// was the limit.
    pub client_cpu_busy: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Open loop: whether it kept its share of the rate.
    pub kept_rate: Option<bool>,
    /// How far the database server's clock was ahead of this client's before the level.
    pub clock_offset_ms: Option<f64>,
}

/// A campaign part's level, as `report` merges it with the other parts'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointInCampaign {
    /// Sessions of all the parts at this level.
    pub workers: usize,
    /// The level's place in its part's plan: every part runs the same plan, so an open-loop
    /// level (whose rate is each part's share) is matched with the others' by it.
    #[serde(default)]
    pub level: usize,
    /// When this part's level started, by its own clock, and by the schedule.
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub scheduled_start: Option<chrono::DateTime<chrono::Utc>>,
    /// How far the database server's clock was ahead of this part's.
    pub clock_offset_ms: Option<f64>,
    pub elapsed_s: f64,
    /// Whether the rate is the server's own count (every part reads the whole database's),
    /// or the part's own (the parts' add up).
    pub server_counted: bool,
}

/// What the SLOB method measures beside the rate: how the buffer cache served the level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheFigures {
    /// Share of block gets the cache served (1 - PIO/LIO).
    pub hit_ratio: Option<f64>,
    /// Cache-chain latch misses per 1,000 gets (lio and pio).
    pub latch_misses_per_1k_gets: Option<f64>,
    /// Blocks read from storage per second.
    pub pio_per_s: Option<f64>,
    /// 99th percentile of a storage read, in microseconds (pio).
    pub read_p99_us: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    pub source: String,
    pub measure: Measure,
    /// Sorted by workers, one point per worker count: the closed-loop levels.
    pub points: Vec<Point>,
    /// Open-loop levels (`--rate`), kept off the capacity curve: their throughput is the
    /// rate they were asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paced: Vec<Point>,
    /// The measured server's cores: the run's host, or a database server's from --cores or
    /// --nodes (a client host's are not the server's).
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    /// The logical CPUs of the host the workers ran on (a database workload's client): a
    /// campaign part's client saturation is judged against them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<usize>,
    /// False when the document says the run was interrupted.
    pub complete: bool,
    /// Cost of the server in the user's unit, for price/performance.
    pub cost: Option<f64>,
    /// Levels the run judged disturbed, kept out of every figure (see `leave_out_disturbed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Point>,
    /// What one job was: only series that ran the same job compare by speed or capacity.
    #[serde(default)]
    pub job: Job,
    /// Where the series came from, as far as its file says.
    #[serde(default)]
    pub provenance: Provenance,
    /// A CSV's last line that looks cut short (no line end, its last field shorter than any
    /// other in its column), held apart: `report` leaves it out unless `--accept-truncated`.
    #[serde(skip)]
    pub cut_last_line: Option<(usize, Point)>,
    /// What the reader of its file should know (an imported level's caveats), said among the
    /// report's warnings.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// A cluster's series: the instances its sessions were spread over (None: one server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<usize>,
    /// One client host's part of a campaign (`run --campaign`), before `report` merges it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<crate::result::CampaignPart>,
    /// The search for the largest rate at an objective (`run --find`) the run made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::result::search::SearchRecord>,
    /// How many of the search's probes the run judged disturbed (other processes took the
    /// CPUs): their verdicts, and the answer, are said to be so.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub search_disturbed: usize,
    /// A replay's statements by class (`fingerprint-3`), as normalised, for the comparison
    /// statement by statement.
    #[serde(skip)]
    pub statements: std::collections::BTreeMap<String, String>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The run behind a series, for the report's provenance block: what a corescale JSON holds;
/// for other files only what is known (the file, the tool, `--cores`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The host's label in the run (`--label`, else its hostname): runs of one host share it.
    pub label: Option<String>,
    /// The run's `--tag` labels.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub sockets: Option<usize>,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    /// The hypervisor's vendor, or "bare metal" when the CPU reports none.
    pub hypervisor: Option<String>,
    /// When the run started (RFC 3339, UTC).
    pub started_at: Option<String>,
    /// The version of the tool that wrote the file.
    pub version: Option<String>,
    /// The workload in words, with its job size or duration.
    pub workload: Option<String>,
    pub pinning: Option<String>,
    /// "clean", "disturbed at 2 of 9 levels" or "not judged".
    pub verdict: Option<String>,
    /// The command line, passwords hidden.
    pub command_line: Option<String>,
    /// How the database sessions connected: TLS protocol and cipher, or no TLS (db runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// What limited the run below the host's CPUs (a cgroup's CPU quota, a cpuset), in
    /// words: its figures describe what it was given, not the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<String>,
}

/// The job a series measured: the tool that ran it, and for corescale the workload and its
/// size (or duration). Speedup, efficiency, knee and SMT yield compare across jobs; speed and
/// capacity only within one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// "corescale", "test_cpu_parallel", or "rate file" (a SLOB-style CSV); empty if unknown.
    pub tool: String,
    /// The corescale workload (cpu, memory, lio, ...), when known.
    pub workload: Option<String>,
    /// Work per job and its unit, for fixed-work runs.
    pub size: Option<(u64, String)>,
    /// Seconds per job, for fixed-time runs.
    pub duration_s: Option<f64>,
    /// A database job's shape (engine and version, statement, statements per round trip,
    /// open or closed loop): two engines, or one pipelined and one not, are two jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
}

impl Job {
    /// The job in words: "corescale cpu, 350000000 iterations", "test_cpu_parallel, its own loop".
    pub fn describe(&self) -> String {
        let mut text = if self.tool.is_empty() {
            "an unknown tool".to_string()
        } else {
            self.tool.clone()
        };
        if let Some(workload) = &self.workload {
            text.push(' ');
            text.push_str(workload);
        }
        match (&self.size, self.duration_s) {
            (Some((size, unit)), _) => text.push_str(&format!(", {size} {unit} per job")),
            (None, Some(seconds)) => text.push_str(&format!(", {seconds} s per job")),
            (None, None) if self.tool == "test_cpu_parallel" => text.push_str(", its own loop"),
            (None, None) => {}
        }
        if let Some(shape) = &self.shape {
            text.push_str(&format!(", {shape}"));
        }
        text
    }
}

impl Point {
    /// What the level's intervals count, plural: "statements", "jobs", else "responses".
    pub fn responses_unit(&self) -> String {
        self.latency
            .as_ref()
            .map_or("responses".to_string(), |latency| {
                // A tpcc level's response times are New-Order's; its timeline counts every
                // transaction.
                if latency.unit == NEW_ORDER {
                    "transactions".to_string()
                } else {
                    format!("{}s", latency.unit)
                }
            })
    }
}

impl Series {
    /// A complete series of these levels, nothing else known: what a file's reader starts
    /// from (`parse_series` sets its source).
    pub fn new(name: String, measure: Measure, points: Vec<Point>, job: Job) -> Self {
        Self {
            name,
            source: String::new(),
            measure,
            points,
            paced: Vec::new(),
            physical_cores: None,
            logical_cpus: None,
            client_cpus: None,
            complete: true,
            cost: None,
            left_out: Vec::new(),
            job,
            provenance: Provenance::default(),
            cut_last_line: None,
            notes: Vec::new(),
            nodes: None,
            campaign: None,
            search: None,
            search_disturbed: 0,
            statements: std::collections::BTreeMap::new(),
        }
    }

    /// Capacity at a point: jobs per minute the host delivered over all workers, or the
    /// total rate.
    pub fn capacity(&self, point: &Point) -> f64 {
        match self.measure {
            Measure::JobTime => point
                .delivered
                .unwrap_or(60.0 * point.workers as f64 / point.raw),
            Measure::Rate { .. } => point.raw,
        }
    }

    /// Speed at a point: jobs per minute of one worker (60 / median job time), or the rate
    /// per worker.
    pub fn speed(&self, point: &Point) -> f64 {
        match self.measure {
            Measure::JobTime => 60.0 / point.raw,
            Measure::Rate { .. } => point.raw / point.workers as f64,
        }
    }

    /// The unit of capacity, for labels.
    pub fn capacity_unit(&self) -> String {
        match &self.measure {
            Measure::JobTime => "jobs/min".to_string(),
            Measure::Rate { unit } => unit.clone(),
        }
    }

    /// Moves the levels the run judged disturbed out of the analysis. False when none is
    /// clean: such a series describes its disturbance, not its host, and is not analysed.
    pub fn leave_out_disturbed(&mut self) -> bool {
        self.leave_out_scheduled();
        // Taken out in place: a series of 10^5 levels is not copied.
        let disturbed = |point: &mut Point| !point.disturbed.is_empty();
        self.left_out.extend(self.points.extract_if(.., disturbed));
        self.left_out.extend(self.paced.extract_if(.., disturbed));
        !(self.points.is_empty() && self.paced.is_empty())
    }

    /// Takes in another series' levels and notes (another run of the same job): its levels,
    /// open-loop and left-out levels join this one's, and its notes those not said yet.
    pub fn absorb(&mut self, other: Series) {
        self.points.extend(other.points);
        self.paced.extend(other.paced);
        self.left_out.extend(other.left_out);
        for note in other.notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    /// Moves the levels that ran to a schedule (their rate is the one asked) out of the
    /// capacity analysis, disturbed or not. False when no level is left.
    pub fn leave_out_scheduled(&mut self) -> bool {
        let scheduled = |point: &mut Point| point.scheduled.is_some();
        self.left_out.extend(self.points.extract_if(.., scheduled));
        !(self.points.is_empty() && self.paced.is_empty())
    }

    /// The host this series measured: the run's host label, else the series' name. Runs of
    /// one host share it (their names are told apart by file).
    pub fn host(&self) -> &str {
        self.provenance.label.as_deref().unwrap_or(&self.name)
    }

    pub fn point(&self, workers: usize) -> Option<&Point> {
        self.points.iter().find(|point| point.workers == workers)
    }
}
