//! A workload of known job times for the sweep's own tests: each job sleeps its worker's time
//! (a fixed-time window sleeps a millisecond a slice), and every call the sweep makes is
//! written in a log the tests read. A script says which session fails where, and where a stop
//! is asked for. Nothing here measures: the tests assert orders and counts, not timings.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Result, bail};

use crate::workload::{
    LevelFigures, LevelPlan, LevelTotals, PaddedJob, Sessions, WorkerJob, Workload, WorkloadInfo,
    WorkloadKind,
};

/// Operations one job counts.
pub(super) const OPS_PER_JOB: u64 = 1000;

/// What a sweep asked of the mock, in the order it asked.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Event {
    /// `level_preparing`, before a level's sessions.
    Preparing,
    /// A session prepared for a level of `workers` offered `rate` in all.
    Prepared {
        worker: usize,
        workers: usize,
        rate: Option<f64>,
    },
    /// `level_started`, just before the first measured batch.
    Started,
    /// A session's warm-up ended: the jobs and slices it forgets.
    WarmedUp {
        worker: usize,
        jobs: u64,
        slices: u64,
    },
    /// A session handed in its counts after the level's last batch.
    HandedIn {
        worker: usize,
        jobs: u64,
        slices: u64,
    },
    /// `level_figures`: the sessions that had handed in, their jobs, and the runner's totals.
    Figures {
        sessions: usize,
        jobs: u64,
        totals: (usize, u64),
    },
}

/// What the mock's sessions do besides sleeping.
#[derive(Debug, Clone, Default)]
pub(super) struct Script {
    /// How long a job takes, by worker (the last for the workers beyond).
    pub(super) job_times: Vec<Duration>,
    /// This worker's session fails this job of a level (from 1).
    pub(super) fails_at: Option<(usize, u64)>,
    /// This worker's session cannot be prepared.
    pub(super) prepare_fails: Option<usize>,
    /// Worker 0 asks for a stop (as a signal would) after this job of a level of this many
    /// workers: (workers, job).
    pub(super) stop_after_job: Option<(usize, u64)>,
    /// Worker 0 asks for a stop in its first slice of a fixed-time window (a warm-up).
    pub(super) stop_in_slice: bool,
}

/// One session's counts, handed in at the level's end.
struct Counts {
    jobs: u64,
}

/// What the workload and its sessions share: the log and the handed-in counts.
#[derive(Default)]
struct Shared {
    log: Mutex<Vec<Event>>,
    sessions: Sessions<Counts>,
}

impl Shared {
    fn note(&self, event: Event) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}

pub(super) struct MockWorkload {
    script: Script,
    plan: LevelPlan,
    shared: Arc<Shared>,
}

impl MockWorkload {
    pub(super) fn new(script: Script, plan: LevelPlan) -> Self {
        Self {
            script,
            plan,
            shared: Arc::default(),
        }
    }

    /// Everything the sweep asked so far.
    pub(super) fn log(&self) -> Vec<Event> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Workload for MockWorkload {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            kind: WorkloadKind::Cpu.into(),
            unit: "operations".to_string(),
            job_size: OPS_PER_JOB,
            job_size_unit: "operations".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: "a mock of known job times".to_string(),
            shape: None,
            server_on_this_host: None,
        }
    }

    fn prepare(&self, worker: usize, workers: usize, rate: Option<f64>) -> Result<PaddedJob> {
        self.shared.note(Event::Prepared {
            worker,
            workers,
            rate,
        });
        if self.script.prepare_fails == Some(worker) {
            bail!("the mock's session {worker} cannot be prepared");
        }
        let times = &self.script.job_times;
        Ok(PaddedJob::new(MockJob {
            worker,
            workers,
            job_time: times[worker.min(times.len() - 1)],
            script: self.script.clone(),
            shared: Arc::clone(&self.shared),
            jobs: 0,
            slices: 0,
        }))
    }

    fn plan(&self) -> LevelPlan {
        self.plan.clone()
    }

    fn level_preparing(&self) -> Result<()> {
        self.shared.note(Event::Preparing);
        Ok(())
    }

    fn level_started(&self) -> Result<()> {
        self.shared.note(Event::Started);
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let counts = self.shared.sessions.take()?;
        self.shared.note(Event::Figures {
            sessions: counts.len(),
            jobs: counts.iter().map(|counts| counts.jobs).sum(),
            totals: (totals.workers, totals.ops),
        });
        Ok(LevelFigures::default())
    }
}

struct MockJob {
    worker: usize,
    workers: usize,
    job_time: Duration,
    script: Script,
    shared: Arc<Shared>,
    jobs: u64,
    slices: u64,
}

impl WorkerJob for MockJob {
    fn run_job(&mut self) -> Result<u64> {
        std::thread::sleep(self.job_time);
        self.jobs += 1;
        if self.script.fails_at == Some((self.worker, self.jobs)) {
            bail!("the mock's job {} failed", self.jobs);
        }
        if self.worker == 0 && self.script.stop_after_job == Some((self.workers, self.jobs)) {
            crate::interrupt::request_stop(signal_hook::consts::SIGINT);
        }
        Ok(OPS_PER_JOB)
    }

    fn run_slice(&mut self) -> Result<u64> {
        std::thread::sleep(Duration::from_millis(1));
        self.slices += 1;
        if self.worker == 0 && self.script.stop_in_slice {
            crate::interrupt::request_stop(signal_hook::consts::SIGINT);
        }
        Ok(1)
    }

    fn warmed_up(&mut self) {
        self.shared.note(Event::WarmedUp {
            worker: self.worker,
            jobs: self.jobs,
            slices: self.slices,
        });
        self.jobs = 0;
        self.slices = 0;
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        self.shared.note(Event::HandedIn {
            worker: self.worker,
            jobs: self.jobs,
            slices: self.slices,
        });
        self.shared.sessions.hand_in(Counts { jobs: self.jobs })
    }
}
