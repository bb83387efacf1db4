//! The SLOB/pgio method against real databases. Each worker is a database session on its own
//! schema (table), running `SELECT sum(scratch) FROM t WHERE key BETWEEN k AND k + WORK_UNIT`
//! — or the matching update — as prepared statements; the figures come from the database's
//! own counters, read before and after every level, checked against the client's own count.

pub mod args;
pub mod catalog;
pub mod driver;
pub mod mysql;
#[cfg(feature = "oracle")]
pub mod oracle;
pub mod pg_wire;
pub mod postgres;
pub mod session;
pub mod target;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use crossbeam_utils::CachePadded;

use super::{Counters, LevelTotals, WorkerJob, Workload, WorkloadInfo, WorkloadKind};
pub use driver::{
    Answered, Database, DbCounters, DbSession, PREFIX, PlannedStatement, PreparedStatements,
    connect, loop_function, mean_of_samples, quote_backtick, quote_double, sample_keys, table_name,
};
use session::{BlocksPer, DbSessionJob};
use target::Target;

/// A job's length when --duration is not given (fixed-time, as SLOB's RUN_TIME).
pub const DEFAULT_JOB_DURATION: Duration = Duration::from_secs(5);
/// An LIO test ran cached when at least this share of block visits were hits.
pub const CACHED_HIT_RATIO: f64 = 0.99;
pub use crate::host::interference::process_cpu_seconds;

#[derive(Debug, Clone)]
pub struct DbOptions {
    pub work_unit: u64,
    pub update_share: f64,
    pub update_work_unit: u64,
    pub server_loop: bool,
    pub think_time: Option<Duration>,
    pub job_statements: u64,
    /// Statements sent together under one Sync, two such batches in flight (PostgreSQL);
    /// 1 waits for every answer before sending the next statement.
    pub pipeline: usize,
}

pub struct DbWorkload {
    database: Arc<dyn Database>,
    options: DbOptions,
    schemas: u64,
    rows: u64,
    blocks: BlocksPer,
    baseline: Mutex<Option<Baseline>>,
}

#[derive(Debug, Clone, Copy)]
struct Baseline {
    counters: DbCounters,
    server_cpu_s: Option<f64>,
}

impl DbWorkload {
    pub fn new(target: &Target, options: DbOptions) -> Result<Self> {
        let database = connect(target)?;
        let (schemas, rows) = catalog::inventory(database.as_ref())?;
        if schemas == 0 {
            bail!(
                "no corescale tables in {target}: run `corescale db setup --target {target}` first"
            );
        }
        if options.work_unit >= rows {
            bail!(
                "--work-unit {} is not below the {rows} rows per schema",
                options.work_unit
            );
        }
        if options.server_loop && !target.driver.server_loop {
            bail!(
                "--server-loop is available for PostgreSQL only, not {}",
                target.driver.name
            );
        }
        let select = database
            .blocks_per_statement(0, rows, options.work_unit, false)
            .context("measuring the blocks one select visits")?;
        let update = if options.update_share > 0.0 {
            database
                .blocks_per_statement(0, rows, options.update_work_unit.min(rows - 1), true)
                .context("measuring the blocks one update visits")?
        } else {
            0.0
        };
        Ok(Self {
            database,
            options,
            schemas,
            rows,
            blocks: BlocksPer { select, update },
            baseline: Mutex::new(None),
        })
    }

    fn server_cpu_s(&self) -> Result<Option<f64>> {
        if !self.database.target().is_local() {
            return Ok(None);
        }
        Ok(self.database.server_pid()?.and_then(process_cpu_seconds))
    }
}

impl Workload for DbWorkload {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            kind: WorkloadKind::Db,
            unit: "LIO".to_string(),
            job_size: self.options.job_statements,
            job_size_unit: "statements".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: format!(
                "SLOB/pgio method on {}: {} table(s) of {} one-row blocks; work unit {}, {:.0}% updates of {} rows; {} blocks per select{} by the database's own count{}",
                self.database.target(),
                self.schemas,
                self.rows,
                self.options.work_unit,
                100.0 * self.options.update_share,
                self.options.update_work_unit,
                self.blocks.select,
                if self.options.update_share > 0.0 {
                    format!(" and {} per update", self.blocks.update)
                } else {
                    String::new()
                },
                match (self.options.server_loop, self.options.pipeline) {
                    (true, _) => "; statements looped inside the server (PL/pgSQL)".to_string(),
                    (false, 0 | 1) => "; one round trip per statement".to_string(),
                    (false, batch) => format!(
                        "; pipelined: batches of {batch} statements under one Sync, two in flight"
                    ),
                }
            ),
        }
    }

    fn prepare(&self, worker: usize) -> Result<Box<dyn WorkerJob>> {
        let session = DbSessionJob::start(
            self.database.open_session()?,
            self.options.clone(),
            worker,
            worker as u64 % self.schemas,
            self.rows,
            self.blocks,
        )?;
        Ok(Box::new(CachePadded::new(session)))
    }

    fn default_duration(&self) -> Option<Duration> {
        Some(DEFAULT_JOB_DURATION)
    }

    /// Sessions wait for the server's answers.
    fn cpu_bound(&self) -> bool {
        false
    }

    fn local_server(&self) -> bool {
        self.database.target().is_local()
    }

    fn level_started(&self) -> Result<()> {
        let baseline = Baseline {
            counters: self.database.counters()?,
            server_cpu_s: self.server_cpu_s()?,
        };
        *self.baseline.lock().expect("baseline") = Some(baseline);
        Ok(())
    }

    fn level_figures(&self, sessions: &[Counters], totals: &LevelTotals) -> Result<Counters> {
        let after = self.database.counters()?;
        let Some(before) = *self.baseline.lock().expect("baseline") else {
            bail!("the level's database counters were not read at its start");
        };
        let sum = |name: &str| -> f64 {
            sessions
                .iter()
                .filter_map(|session| session.get(name))
                .sum()
        };
        let per = |count: f64, over: f64| if over > 0.0 { count / over } else { 0.0 };
        let lio = after.lio - before.counters.lio;
        let pio = after.pio - before.counters.pio;
        let client_blocks = sum("client_blocks");
        let mut figures = Counters::new();
        let mut put = |name: &str, value: f64| {
            figures.insert(name.to_string(), value);
        };
        put("statements", sum("statements"));
        put("updates", sum("updates"));
        put("rows_visited", sum("rows_visited"));
        put("client_blocks", client_blocks);
        put("db_lio", lio);
        put("db_pio", pio);
        put(crate::result::DB_LIO_PER_S, per(lio, totals.elapsed_s));
        put(
            "db_lio_per_s_per_worker",
            per(lio, totals.elapsed_s * totals.workers as f64),
        );
        put("db_pio_per_s", per(pio, totals.elapsed_s));
        put("db_hit_ratio", per(lio, lio + pio));
        put("db_lio_over_client_blocks", per(lio, client_blocks));
        put("blocks_per_statement", self.blocks.select);
        if self.options.update_share > 0.0 {
            put("blocks_per_update", self.blocks.update);
        }
        put("client_cpu_s", totals.cpu_s);
        // PostgreSQL: the sessions' backends; MariaDB: the server process.
        let server_cpu = match (self.server_cpu_s()?, before.server_cpu_s) {
            (Some(now), Some(then)) => Some(now - then),
            _ => sessions
                .iter()
                .map(|session| session.get("backend_cpu_s").copied())
                .sum::<Option<f64>>(),
        };
        if let Some(server_cpu) = server_cpu.filter(|_| !sessions.is_empty()) {
            put(crate::result::DB_CPU_S, server_cpu);
            put("db_lio_per_db_cpu_s", per(lio, server_cpu));
            put(
                "client_cpu_share",
                per(totals.cpu_s, totals.cpu_s + server_cpu),
            );
        }
        if let (Some(now), Some(then)) = (after.db_cpu_s, before.counters.db_cpu_s) {
            put(crate::result::DB_CPU_S, now - then);
            put("db_lio_per_db_cpu_s", per(lio, now - then));
        }
        Ok(figures)
    }

    fn level_warnings(&self, figures: &Counters) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(ratio) = figures.get("db_hit_ratio")
            && *ratio < CACHED_HIT_RATIO
        {
            warnings.push(format!(
                "hit ratio {:.2}% is below {:.0}%: this was not a cached LIO test (grow the buffer cache or shrink --scale)",
                100.0 * ratio,
                100.0 * CACHED_HIT_RATIO
            ));
        }
        if let Some(agreement) = figures.get("db_lio_over_client_blocks")
            && !(0.95..=1.05).contains(agreement)
        {
            warnings.push(format!(
                "the database counted {agreement:.3}x the blocks the client visited: other activity on the server, or a changed plan"
            ));
        }
        warnings
    }
}
