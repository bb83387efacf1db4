//! Series with known answers, for the analysis tests and `benches/known_answers.rs`: a seeded
//! generator, so every run and machine sees the same noise.

use super::series::{Job, Measure, Point, Series};

/// SplitMix64: small, seeded, good enough for test noise.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// A standard normal draw (Box-Muller).
pub fn gaussian(rng: &mut Rng) -> f64 {
    let (u, v) = (rng.uniform(), rng.uniform());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A job-time series whose capacity (jobs/min) follows `capacity` at 1..=levels workers, each
/// job time multiplied by (1 + noise z) with z standard normal.
pub fn job_time_series(
    capacity: impl Fn(f64) -> f64,
    levels: usize,
    noise: f64,
    seed: u64,
    cores: Option<(usize, usize)>,
) -> Series {
    let mut rng = Rng::new(seed);
    let points = (1..=levels)
        .map(|workers| {
            let n = workers as f64;
            point(
                workers,
                60.0 * n / capacity(n) * (1.0 + noise * gaussian(&mut rng)),
            )
        })
        .collect();
    series(Measure::JobTime, points, cores)
}

/// Job times given level by level, at 1, 2, ... workers.
pub fn measured_job_times(times: &[f64], cores: Option<(usize, usize)>) -> Series {
    let points = times
        .iter()
        .enumerate()
        .map(|(index, &raw)| point(index + 1, raw))
        .collect();
    series(Measure::JobTime, points, cores)
}

/// A rate series (total rate at each worker count in `workers`) with multiplicative noise.
pub fn rate_series(
    capacity: impl Fn(f64) -> f64,
    workers: &[usize],
    noise: f64,
    seed: u64,
    cores: Option<(usize, usize)>,
) -> Series {
    let mut rng = Rng::new(seed);
    let points = workers
        .iter()
        .map(|&workers| {
            point(
                workers,
                capacity(workers as f64) * (1.0 + noise * gaussian(&mut rng)),
            )
        })
        .collect();
    series(
        Measure::Rate {
            unit: "ops/s".to_string(),
        },
        points,
        cores,
    )
}

/// A level with only its worker count and raw figure known.
pub(crate) fn point(workers: usize, raw: f64) -> Point {
    Point {
        workers,
        raw,
        ..Point::default()
    }
}

/// A complete series of `points`, named "synthetic", with no file behind it.
pub(crate) fn series(
    measure: Measure,
    points: Vec<Point>,
    cores: Option<(usize, usize)>,
) -> Series {
    Series {
        physical_cores: cores.map(|cores| cores.0),
        logical_cpus: cores.map(|cores| cores.1),
        ..Series::new("synthetic".into(), measure, points, Job::default())
    }
}

/// Capacity of an SMT server: linear to `physical`, a shallower segment adding `smt` (0.25:
/// +25%) by `logical`, flat after.
pub fn smt_capacity(physical: f64, logical: f64, smt: f64) -> impl Fn(f64) -> f64 {
    move |n| {
        if n <= physical {
            n
        } else if n <= logical {
            physical * (1.0 + smt * (n - physical) / (logical - physical))
        } else {
            physical * (1.0 + smt)
        }
    }
}

/// A rate series on the SLOB grid (1, 2, 4, ..., 36 workers), flat per worker to 16 and
/// then sharing cores (knee 16), with the level at 2 workers 15% low, as in the RAC55 SLOB
/// measurement: one low level early is noise, not a regime.
pub fn early_dip(noise: f64, seed: u64) -> Series {
    let workers: Vec<usize> = std::iter::once(1).chain((2..=36).step_by(2)).collect();
    let mut series = rate_series(
        smt_capacity(16.0, 32.0, 0.25),
        &workers,
        noise,
        seed,
        Some((16, 32)),
    );
    series.points[1].raw *= 0.85;
    series
}

/// The Universal Scalability Law with lambda 1.
pub fn usl_capacity(sigma: f64, kappa: f64) -> impl Fn(f64) -> f64 {
    move |n| n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// RAC52's shape: per-worker speed droops 22% from 1 to 20 workers, then each added worker
/// shares a core (SMT adding 16% by 40) and capacity is flat past 40.
pub fn droop_then_bend(n: f64) -> f64 {
    let speed_at = |n: f64| 1.0 / (1.0 + 0.0148 * (n - 1.0));
    if n <= 20.0 {
        n * speed_at(n)
    } else {
        20.0 * speed_at(20.0) * (1.0 + 0.16 * (n.min(40.0) - 20.0) / 20.0)
    }
}
