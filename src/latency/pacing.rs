//! Pacing an open loop: when each statement of one session is due (uniform or Poisson
//! arrivals), and the open loop's own figures.

use super::{Arrivals, ResponseTimes};

/// One session's arrivals seed, from the run's: sessions draw apart, and one run seed
/// repeats them all.
pub fn session_seed(run_seed: u64, worker: usize) -> u64 {
    run_seed ^ (worker as u64).wrapping_mul(0xA076_1D64_78BD_642F)
}

/// When each statement of one session is due, from the start of a window: every 1/rate
/// seconds (uniform, this session's share of the spacing offset by `phase`), or with
/// exponential gaps of mean 1/rate (Poisson). Pure arithmetic: tests drive it with a clock of
/// their own.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate_per_s: f64,
    arrivals: Arrivals,
    phase: f64,
    state: u64,
    seed: u64,
    due_s: f64,
    index: u64,
    /// Windows begun: each draws its own Poisson arrivals, so batches stay independent.
    windows: u64,
}

impl Pacer {
    /// A session's pacer: `rate_per_s` its share of the level's rate, `phase` in [0, 1) where
    /// its first statement falls within the first spacing (uniform), `seed` its own.
    pub fn new(rate_per_s: f64, arrivals: Arrivals, phase: f64, seed: u64) -> Self {
        let mut pacer = Self {
            rate_per_s,
            arrivals,
            phase: phase.clamp(0.0, 1.0),
            state: seed,
            seed,
            due_s: 0.0,
            index: 0,
            windows: 0,
        };
        pacer.restart();
        pacer
    }

    /// Back to the start of a window: the next statement is due at the first spacing (and
    /// Poisson arrivals drawn anew for this window).
    pub fn restart(&mut self) {
        self.state = self.seed ^ self.windows.wrapping_mul(0xD1B5_4A32_D192_ED03);
        self.windows += 1;
        self.index = 0;
        self.due_s = self.first_due();
    }

    fn first_due(&mut self) -> f64 {
        match self.arrivals {
            Arrivals::Uniform | Arrivals::Captured => self.phase / self.rate_per_s,
            Arrivals::Poisson => self.gap(),
        }
    }

    /// Statements sent since the window's start.
    pub fn sent(&self) -> u64 {
        self.index
    }

    /// When the next statement is due, in seconds from the window's start.
    pub fn due_s(&self) -> f64 {
        self.due_s
    }

    /// The next statement was sent: moves to the one after it.
    pub fn advance(&mut self) {
        self.index += 1;
        self.due_s = match self.arrivals {
            // From the start, not by adding gaps: no drift over a long window.
            Arrivals::Uniform | Arrivals::Captured => {
                (self.index as f64 + self.phase) / self.rate_per_s
            }
            Arrivals::Poisson => self.due_s + self.gap(),
        };
    }

    /// Statements due by `elapsed_s` that were not sent: the backlog a window ends with.
    /// Counted, not walked, so a rate no session can keep costs nothing to tally: exactly
    /// for uniform arrivals, the expected count for Poisson ones.
    pub fn behind_at(&self, elapsed_s: f64) -> u64 {
        if self.due_s > elapsed_s {
            return 0;
        }
        let behind = match self.arrivals {
            // Due k = (k + phase) / rate for k from `index` up to the last at or before now.
            Arrivals::Uniform | Arrivals::Captured => {
                (elapsed_s * self.rate_per_s - self.phase).floor() - self.index as f64 + 1.0
            }
            Arrivals::Poisson => (elapsed_s - self.due_s) * self.rate_per_s + 1.0,
        };
        behind.max(1.0) as u64
    }

    /// An exponential gap of mean 1/rate (splitmix64 for the uniform draw).
    fn gap(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // In (0, 1]: never ln(0).
        let uniform = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
        -uniform.ln() / self.rate_per_s
    }
}

/// When each statement of one session is due, from a schedule of its own (a captured
/// workload's offsets over the speed, `run replay`), in seconds from the window's start.
#[derive(Debug, Clone)]
pub struct Schedule {
    due_s: std::sync::Arc<[f64]>,
    index: usize,
}

impl Schedule {
    /// `due_s` in order.
    pub fn new(due_s: std::sync::Arc<[f64]>) -> Self {
        Self { due_s, index: 0 }
    }

    pub fn restart(&mut self) {
        self.index = 0;
    }

    pub fn sent(&self) -> u64 {
        self.index as u64
    }

    /// When the next statement is due; never once the schedule is done.
    pub fn due_s(&self) -> f64 {
        self.due_s.get(self.index).copied().unwrap_or(f64::INFINITY)
    }

    pub fn advance(&mut self) {
        self.index = (self.index + 1).min(self.due_s.len());
    }

    /// Statements due by `elapsed_s` that were not sent.
    pub fn behind_at(&self, elapsed_s: f64) -> u64 {
        self.due_s[self.index..].partition_point(|due| *due <= elapsed_s) as u64
    }
}

/// The open loop's own figures for one session (or merged over a level).
#[derive(Debug, Clone)]
pub struct OpenLoop {
    /// From the actual send to the answer: what the server took.
    pub service: ResponseTimes,
    /// From when the statement was due to its send: how late the client was (pgbench's
    /// schedule lag).
    pub lag: ResponseTimes,
    /// Statements per second asked of this session.
    pub rate_per_s: f64,
    pub arrivals: Arrivals,
    /// Statements due in the windows, and those sent.
    pub due: u64,
    pub sent: u64,
    /// The windows' time, summed over the sessions merged, and how many they are.
    pub window_s: f64,
    pub sessions: u32,
}
