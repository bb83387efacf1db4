//! `lio` and `pio`: the SLOB method through an in-process buffer cache. Each worker is a
//! session on its own schema (or all on one with `--single-schema`); its unit of work is one
//! statement, and its operations are the blocks it visits (LIO) — or reads (PIO) with
//! `--direct-path`, which has no cache to visit.

pub(crate) mod args;
pub(crate) mod cache;
pub mod engine;
pub(crate) mod latch;
pub mod layout;
mod live_files;
pub mod storage;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::workload::PaddedJob;
use anyhow::Result;
use hdrhistogram::Histogram;

use crate::workload::figures::level_figures;

use super::{LevelFigures, LevelTotals, Sessions, WorkerJob, Workload, WorkloadInfo, WorkloadKind};
use crate::error::locked;
use crate::latency::SessionLatency;
use crate::rng::SessionRng;
use engine::{Engine, EngineOptions, SessionIo, StatementCounts};
use latch::LatchStats;
use storage::AlignedBlock;

/// lio's default rows per schema: the Oracle cloud OCPU study's SLOB SCALE of 500M (64,000 blocks of 8 KiB), "large
/// enough because I don't want to be in cpu cache" — or the last-level cache, if larger.
pub const LIO_DEFAULT_ROWS: u64 = 64_000;
/// pio's default rows per schema (64 MiB of 8 KiB blocks): its data file goes to disk and its
/// cache holds a tenth of it, so the CPU caches do not matter.
pub const PIO_DEFAULT_ROWS: u64 = 8192;
/// The pio cache holds this share of the data unless --cache-size says otherwise.
pub const DEFAULT_CACHE_SHARE: f64 = 0.1;
/// The hot region, when its size is not given: this share of the rows.
pub const DEFAULT_HOT_SHARE_OF_ROWS: f64 = 0.01;

/// A pio level whose cache served more than this share of the visits measured the cache.
const PIO_CACHED_HIT_RATIO: f64 = 0.99;

/// Untimed statements each session runs before measuring, as SLOB users warm the cache: at
/// most this many, and with a cache smaller than the data (pio) enough to visit twice its
/// blocks (each a read from the data file while it fills), but at least [`WARM_UP_LEAST`].
const WARM_UP_STATEMENTS: u64 = 2000;
const WARM_UP_LEAST: u64 = 50;

/// How sessions choose their statements.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub work_unit: u64,
    /// Share of statements that update (0..=1).
    pub update_share: f64,
    /// Share of statements that start in the hot region, and its size in rows.
    pub hotspot: Option<(f64, u64)>,
    pub think_time: Option<Duration>,
    pub single_schema: bool,
    pub job_statements: u64,
    /// Time every statement (always, from the command line; the bench turns it off to
    /// measure what timing costs).
    pub record_latency: bool,
}

pub struct LioWorkload {
    kind: WorkloadKind,
    options: EngineOptions,
    /// The planned shape, known before the data is built.
    layout: layout::Layout,
    /// Built by `setup`.
    engine: Option<Arc<Engine>>,
    sessions: SessionOptions,
    latency: Arc<Mutex<Histogram<u64>>>,
    latches_at_start: Mutex<(LatchStats, LatchStats)>,
    /// The sessions' totals, handed in at each level's end.
    handed_in: Arc<Sessions<SessionTotals>>,
    /// lio levels whose data fits in this many bytes of CPU cache get a warning.
    last_level_cache: Option<u64>,
}

impl LioWorkload {
    pub fn new(
        kind: WorkloadKind,
        options: EngineOptions,
        sessions: SessionOptions,
    ) -> Result<Self> {
        Ok(Self {
            kind,
            layout: layout::Layout::new(
                options.block_bytes,
                options.rows_per_schema,
                options.schemas,
            ),
            options,
            engine: None,
            sessions,
            latency: Arc::new(Mutex::new(new_histogram())),
            latches_at_start: Mutex::new(Default::default()),
            handed_in: Arc::default(),
            last_level_cache: None,
        })
    }

    /// Warns on lio levels whose sessions' data fits in a last-level cache of this size: their
    /// LIO/s then measures the CPU caches, not memory, as a database's buffer cache would.
    pub fn warning_when_cached(mut self, last_level_cache: Option<u64>) -> Self {
        self.last_level_cache = last_level_cache;
        self
    }

    /// The engine, once `setup` has built it.
    pub fn engine(&self) -> Result<&Arc<Engine>> {
        self.engine
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the lio engine is used before setup"))
    }

    fn cache_blocks(&self) -> u64 {
        let total = self.layout.total_blocks();
        self.options
            .physical
            .as_ref()
            .map_or(total, |physical| physical.cache_blocks.clamp(1, total))
    }
}

fn new_histogram() -> Histogram<u64> {
    // 1 ns to 100 s at 3 significant digits: fixed buckets, so recording never allocates.
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds")
}

impl Workload for LioWorkload {
    fn info(&self) -> WorkloadInfo {
        let layout = &self.layout;
        let cache_bytes = self
            .cache_blocks()
            .saturating_mul(layout.block_bytes() as u64);
        let direct = self
            .options
            .physical
            .as_ref()
            .is_some_and(|physical| physical.direct_path);
        let file_note = match self.engine.as_ref().and_then(|engine| engine.file.as_ref()) {
            Some(file) if file.direct => ", data file read with O_DIRECT",
            Some(_) => {
                ", data file read through the page cache (O_DIRECT refused by this file system)"
            }
            None => "",
        };
        let setup = self.engine.as_ref().map_or(String::new(), |engine| {
            format!("; setup {:.2} s", engine.setup_s)
        });
        WorkloadInfo {
            kind: self.kind.into(),
            unit: if direct { "PIO" } else { "LIO" }.to_string(),
            job_size: self.sessions.job_statements,
            job_size_unit: "statements".to_string(),
            bytes_per_worker: 0,
            shared_bytes: cache_bytes,
            array_bytes: None,
            description: format!(
                "SLOB method: {} schema(s) x {} one-row blocks of {} bytes, index of {} level(s); work unit {}, {:.0}% updates, hot spot {}, cache {} buffers ({} MiB){file_note}{}{setup}",
                layout.schemas,
                layout.rows,
                layout.block_bytes(),
                layout.index_levels.len(),
                self.sessions.work_unit,
                100.0 * self.sessions.update_share,
                self.sessions
                    .hotspot
                    .map_or("none".to_string(), |(share, rows)| format!(
                        "{:.0}% of statements in {rows} rows",
                        100.0 * share
                    )),
                self.cache_blocks(),
                cache_bytes >> 20,
                if direct {
                    ", direct path reads into private memory"
                } else {
                    ""
                },
            ),
            shape: None,
            server_on_this_host: None,
        }
    }

    fn setup(&mut self) -> Result<()> {
        if self.engine.is_none() {
            self.engine = Some(Arc::new(Engine::build(&self.options)?));
        }
        Ok(())
    }

    fn prepare(&self, worker: usize, _workers: usize, _rate: Option<f64>) -> Result<PaddedJob> {
        let engine = self.engine()?;
        let schemas = self.layout.schemas;
        let schema = if self.sessions.single_schema {
            0
        } else {
            worker as u64 % schemas
        };
        let mut session = Session {
            engine: Arc::clone(engine),
            options: self.sessions.clone(),
            schema,
            random: SessionRng::for_worker(worker, 0x2545_F491_4F6C_DD1D),
            scratch: AlignedBlock::new(self.layout.block_bytes()),
            totals: SessionTotals::default(),
            latency: new_histogram(),
            shared_latency: Arc::clone(&self.latency),
            handed_in: Arc::clone(&self.handed_in),
            responses: SessionLatency::closed("statement", None),
            origin: Instant::now(),
        };
        let warm_up = match engine.file {
            None => WARM_UP_STATEMENTS,
            Some(_) => (2 * engine.cache.buffers() as u64)
                .div_ceil(self.sessions.work_unit.max(1))
                .clamp(WARM_UP_LEAST, WARM_UP_STATEMENTS),
        };
        for _ in 0..warm_up {
            if crate::interrupt::stop_requested() {
                break;
            }
            session.statement()?;
        }
        session.totals = SessionTotals::default();
        session.latency.reset();
        session.responses = SessionLatency::closed("statement", None);
        Ok(PaddedJob::new(session))
    }

    /// pio sessions wait for reads: they need no CPU of their own.
    fn plan(&self) -> crate::workload::LevelPlan {
        crate::workload::LevelPlan {
            default_duration: Some(crate::workload::slob::DEFAULT_DURATION),
            cpu_bound: self.kind == WorkloadKind::Lio,
            ..Default::default()
        }
    }

    fn level_started(&self) -> Result<()> {
        let engine = self.engine()?;
        *locked(&self.latency, "the read latency histogram")? = new_histogram();
        *locked(&self.latches_at_start, "the latch baseline")? = (
            engine.cache.chain_latch_stats(),
            engine.cache.lru_latch_stats(),
        );
        // Totals a level that ended early left behind are not this level's.
        self.handed_in.take()?;
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let engine = self.engine()?;
        let mut sum = SessionTotals::default();
        for session in self.handed_in.take()? {
            sum.add(&session);
        }
        let (lio, pio) = (sum.counts.lio as f64, sum.counts.reads as f64);
        let (hits, misses) = (sum.counts.hits as f64, sum.counts.misses as f64);
        let (chains_before, lru_before) = *locked(&self.latches_at_start, "the latch baseline")?;
        let chains = engine.cache.chain_latch_stats().since(&chains_before);
        let lru = engine.cache.lru_latch_stats().since(&lru_before);
        let per = |count: f64, over: f64| if over > 0.0 { count / over } else { 0.0 };
        let latency = locked(&self.latency, "the read latency histogram")?;
        let read_us = |quantile: f64| {
            (!latency.is_empty()).then(|| latency.value_at_quantile(quantile) as f64 / 1000.0)
        };
        let layout = &self.layout;
        let schemas_read = if self.sessions.single_schema {
            1
        } else {
            (totals.workers as u64).min(layout.schemas)
        };
        let figures = SlobFigures {
            statements: sum.statements as f64,
            updates: sum.updates as f64,
            lio,
            lio_per_s: per(lio, totals.elapsed_s),
            lio_per_s_per_worker: per(lio, totals.elapsed_s * totals.workers as f64),
            lio_per_cpu_s: per(lio, totals.cpu_s),
            ns_per_lio: per(1e9 * totals.elapsed_s * totals.workers as f64, lio),
            cache_hits: hits,
            cache_misses: misses,
            cache_hit_ratio: per(hits, hits + misses),
            pio,
            pio_per_s: per(pio, totals.elapsed_s),
            pio_per_cpu_s: per(pio, totals.cpu_s),
            read_us_p50: read_us(0.50),
            read_us_p95: read_us(0.95),
            read_us_p99: read_us(0.99),
            latch_gets: chains.gets as f64,
            latch_misses: chains.misses as f64,
            latch_spins: chains.spins as f64,
            latch_sleeps: chains.sleeps as f64,
            latch_miss_ratio: per(chains.misses as f64, chains.gets as f64),
            lru_latch_gets: lru.gets as f64,
            lru_latch_misses: lru.misses as f64,
            cache_chain_latches: engine.cache.chain_latches() as f64,
            setup_s: engine.setup_s,
            data_read_mib: (schemas_read * layout.blocks_per_schema() * layout.block_bytes() as u64)
                as f64
                / (1u64 << 20) as f64,
        };
        let warnings = self.warnings(&figures);
        Ok(LevelFigures::of(&figures, warnings))
    }
}

level_figures! {
    /// One lio or pio level's figures; `workload_figures` in the result, by these names.
    pub struct SlobFigures / SlobFigureNames {
        statements: f64,
        updates: f64,
        /// Block visits (logical IO), and per second, per worker-second and per CPU-second.
        lio: f64,
        lio_per_s: f64,
        lio_per_s_per_worker: f64,
        lio_per_cpu_s: f64,
        ns_per_lio: f64,
        cache_hits: f64,
        cache_misses: f64,
        cache_hit_ratio: f64,
        /// Blocks read from the data file (physical IO).
        pio: f64,
        pio_per_s: f64,
        pio_per_cpu_s: f64,
        /// Read latency quantiles in microseconds, when there were reads.
        read_us_p50: Option<f64>,
        read_us_p95: Option<f64>,
        read_us_p99: Option<f64>,
        latch_gets: f64,
        latch_misses: f64,
        latch_spins: f64,
        latch_sleeps: f64,
        latch_miss_ratio: f64,
        lru_latch_gets: f64,
        lru_latch_misses: f64,
        cache_chain_latches: f64,
        /// Seconds spent building the cache and its tables, before the first level.
        setup_s: f64,
        /// The data the sessions read, in MiB (for the CPU-cache check).
        data_read_mib: f64,
    }
}

impl LioWorkload {
    /// What a level's figures cannot vouch for: a pio level the cache served, an lio level
    /// whose data fits in the CPU caches.
    fn warnings(&self, figures: &SlobFigures) -> Vec<String> {
        if self.kind == WorkloadKind::Pio && figures.cache_hit_ratio > PIO_CACHED_HIT_RATIO {
            return vec![format!(
                "the buffer cache served {:.3}% of the block visits: this pio level measured the cache, not physical IO (give a --cache-size well below the data, or raise --scale)",
                100.0 * figures.cache_hit_ratio
            )];
        }
        let Some(cache) = self.last_level_cache else {
            return Vec::new();
        };
        let (cache_mib, data_mib) = (cache as f64 / (1u64 << 20) as f64, figures.data_read_mib);
        if self.kind != WorkloadKind::Lio || data_mib > cache_mib {
            return Vec::new();
        }
        vec![format!(
            "the sessions read {data_mib:.0} MiB, which fits in the {cache_mib:.0} MiB last-level cache: LIO/s measures the CPU caches, not memory (raise --scale until the data outgrow the CPU caches, as the SLOB method needs)"
        )]
    }
}

/// One session's counts over a level.
#[derive(Debug, Default, Clone, Copy)]
struct SessionTotals {
    statements: u64,
    updates: u64,
    counts: StatementCounts,
}

impl SessionTotals {
    fn add(&mut self, other: &Self) {
        self.statements += other.statements;
        self.updates += other.updates;
        self.counts.lio += other.counts.lio;
        self.counts.hits += other.counts.hits;
        self.counts.misses += other.counts.misses;
        self.counts.reads += other.counts.reads;
    }
}

struct Session {
    engine: Arc<Engine>,
    options: SessionOptions,
    schema: u64,
    random: SessionRng,
    scratch: AlignedBlock,
    totals: SessionTotals,
    latency: Histogram<u64>,
    shared_latency: Arc<Mutex<Histogram<u64>>>,
    handed_in: Arc<Sessions<SessionTotals>>,
    /// Each statement's response time, from this session's own clock readings.
    responses: SessionLatency,
    origin: Instant,
}

impl Session {
    fn next_random(&mut self) -> u64 {
        self.random.next_u64()
    }

    fn chance(&mut self, share: f64) -> bool {
        self.random.chance(share)
    }

    /// The first key of the next statement: in the hot region for its share, else anywhere.
    fn first_key(&mut self) -> u64 {
        let rows = self.engine.layout.rows;
        let hotspot = self.options.hotspot;
        let span = match hotspot {
            Some((share, hot_rows)) if self.chance(share) => hot_rows.min(rows),
            _ => rows,
        };
        let starts = span.saturating_sub(self.options.work_unit).max(1);
        self.next_random() % starts
    }

    /// Runs one statement; returns its operations (LIO, or PIO on the direct path).
    fn statement(&mut self) -> Result<u64> {
        let key = self.first_key();
        let update = self.chance(self.options.update_share);
        let mut io = SessionIo {
            block: self.scratch.bytes(),
            read_ns: &mut self.latency,
        };
        let began = self.options.record_latency.then(|| self.origin.elapsed());
        let counts =
            self.engine
                .statement(self.schema, key, self.options.work_unit, update, &mut io)?;
        if let Some(began) = began {
            self.responses.answered(None, began, self.origin.elapsed());
        }
        let totals = &mut self.totals;
        totals.statements += 1;
        totals.updates += u64::from(update);
        totals.counts.lio += counts.lio;
        totals.counts.hits += counts.hits;
        totals.counts.misses += counts.misses;
        totals.counts.reads += counts.reads;
        totals.counts.scratch_sum += counts.scratch_sum;
        if let Some(pause) = self.options.think_time {
            std::thread::sleep(pause);
        }
        Ok(if self.engine.direct_path {
            counts.reads
        } else {
            counts.lio
        })
    }
}

impl WorkerJob for Session {
    fn run_job(&mut self) -> Result<u64> {
        let mut ops = 0;
        for _ in 0..self.options.job_statements {
            ops += self.statement()?;
        }
        Ok(ops)
    }

    fn run_slice(&mut self) -> Result<u64> {
        self.statement()
    }

    fn keep_intervals(&mut self, width: Duration, window: Duration) {
        self.responses = self.responses.emptied().with_intervals(width, window);
    }

    fn warmed_up(&mut self) {
        self.totals = SessionTotals::default();
        self.latency.reset();
        self.responses = self.responses.emptied();
    }

    fn latency(&mut self) -> Option<SessionLatency> {
        if !self.options.record_latency {
            return None;
        }
        let empty = self.responses.emptied();
        Some(std::mem::replace(&mut self.responses, empty))
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        // A read time past the histogram's bounds is left out, as when it was recorded.
        let _ = locked(&self.shared_latency, "the read latency histogram")?.add(&self.latency);
        self.handed_in.hand_in(self.totals)
    }
}

#[cfg(test)]
mod tests {
    /// The figures the result reads back by name are declared under those names.
    #[test]
    fn the_figures_the_result_reads_are_declared_by_its_names() {
        use crate::result::workload::figure_names as names;
        let declared = super::SlobFigures::NAMES;
        assert_eq!(declared.cache_hit_ratio, names::CACHE_HIT_RATIO);
        assert_eq!(declared.latch_gets, names::LATCH_GETS);
        assert_eq!(declared.latch_misses, names::LATCH_MISSES);
        assert_eq!(declared.pio_per_s, names::PIO_PER_S);
        assert_eq!(declared.read_us_p99, names::READ_US_P99);
    }

    use super::args::default_rows;
    use super::*;

    fn small_lio(rows: u64) -> LioWorkload {
        LioWorkload::new(
            WorkloadKind::Lio,
            EngineOptions {
                block_bytes: 8192,
                rows_per_schema: rows,
                schemas: 2,
                physical: None,
            },
            SessionOptions {
                work_unit: 8,
                update_share: 0.0,
                hotspot: None,
                think_time: None,
                single_schema: false,
                job_statements: 10,
                record_latency: true,
            },
        )
        .unwrap()
    }

    #[test]
    fn lio_defaults_to_data_beyond_the_last_level_cache() {
        assert_eq!(default_rows(WorkloadKind::Lio, 8192, None), 64_000);
        assert_eq!(
            default_rows(WorkloadKind::Lio, 8192, Some(105 << 20)),
            64_000
        );
        assert_eq!(
            default_rows(WorkloadKind::Lio, 8192, Some(1 << 30)),
            (1 << 30) / 8192
        );
        assert_eq!(default_rows(WorkloadKind::Pio, 8192, Some(1 << 30)), 8192);
    }

    /// The MiB one session of `workload` reads: its schema's blocks.
    fn warnings_mib(workload: &LioWorkload) -> f64 {
        let layout = &workload.layout;
        (layout.blocks_per_schema() * layout.block_bytes() as u64) as f64 / (1u64 << 20) as f64
    }

    #[test]
    fn levels_whose_data_fits_in_the_cpu_cache_are_flagged() {
        let mut workload = small_lio(1000).warning_when_cached(Some(32 << 20));
        workload.setup().unwrap();
        let totals = |workers| LevelTotals {
            workers,
            elapsed_s: 1.0,
            cpu_s: 1.0,
            ops: 0,
        };
        // One schema of 1000 rows is ~8 MiB: inside a 32 MiB cache.
        let warnings = workload.level_figures(&totals(1)).unwrap().warnings;
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("fits in the 32 MiB last-level cache"));
        // Without a known cache size nothing can be said.
        let mut unknown = small_lio(1000);
        unknown.setup().unwrap();
        let figures = unknown.level_figures(&totals(1)).unwrap();
        assert!(figures.warnings.is_empty());
        assert_eq!(
            figures.figure(SlobFigures::NAMES.data_read_mib).unwrap(),
            warnings_mib(&workload)
        );
        // Larger data than the cache: no warning.
        let mut large = small_lio(1000).warning_when_cached(Some(4 << 20));
        large.setup().unwrap();
        let figures = large.level_figures(&totals(2)).unwrap();
        assert!(figures.warnings.is_empty());
    }
}
