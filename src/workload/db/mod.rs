//! The SLOB/pgio method against real databases. Each worker is a database session on its own
//! schema (table), running `SELECT sum(scratch) FROM t WHERE key BETWEEN k AND k + WORK_UNIT`
//! — or the matching update — as prepared statements; the figures come from the database's
//! own counters, read before and after every level, checked against the client's own count.

pub mod catalog;
pub mod mysql;
#[cfg(feature = "oracle")]
pub mod oracle;
pub mod pg_wire;
pub mod postgres;
pub mod target;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use crossbeam_utils::CachePadded;

use super::rng::SessionRng;
use super::{Counters, LevelTotals, WorkerJob, Workload, WorkloadInfo, WorkloadKind};
use catalog::{Owned, SetupRecord};
use target::{Flavour, Target};

/// Every object corescale creates starts with this; teardown drops what its catalogue lists.
pub const PREFIX: &str = "corescale_";
/// An LIO test ran cached when at least this share of block visits were hits.
pub const CACHED_HIT_RATIO: f64 = 0.99;
/// Statements each session runs before a level's baseline is taken.
const WARM_UP_STATEMENTS: u64 = 50;
/// Statements per server-side loop call (`--server-loop`).
const SERVER_LOOP_STATEMENTS: u64 = 200;

pub fn table_name(schema: u64) -> String {
    format!("{PREFIX}t{schema}")
}

/// The server-side loop over table corescale_tN is the function corescale_loop_tN.
pub fn loop_function(schema: u64) -> String {
    format!("{PREFIX}loop_t{schema}")
}

/// An identifier in double quotes, embedded quotes doubled (PostgreSQL, Oracle, SQL standard).
pub fn quote_double(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An identifier in backticks, embedded backticks doubled (MySQL, MariaDB).
pub fn quote_backtick(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Server-wide block counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DbCounters {
    /// Logical reads: PostgreSQL blks_hit, InnoDB buffer pool read requests, Oracle session
    /// logical reads.
    pub lio: f64,
    /// Physical reads: blks_read, Innodb_buffer_pool_reads, physical reads.
    pub pio: f64,
    /// Oracle's DB CPU, in seconds, where the database reports it.
    pub db_cpu_s: Option<f64>,
}

/// One database behind a URL.
pub trait Database: Send + Sync {
    fn target(&self) -> &Target;
    /// Creates table `record.schema` with `record.rows` one-row blocks, its index (and
    /// server-side loop) and their catalogue rows; `loaded` counts rows. The table must not
    /// exist: creation fails rather than replace an object corescale did not create.
    fn load_table(&self, record: SetupRecord, loaded: &(dyn Fn(u64) + Sync)) -> Result<()>;
    /// Takes the setup lock for the monitor connection's lifetime, or fails at once naming
    /// the other setup or teardown that holds it.
    fn lock_setup(&self) -> Result<()>;
    fn has_catalogue(&self) -> Result<bool>;
    /// The catalogue's rows; none when there is no catalogue.
    fn catalogue(&self) -> Result<Vec<Owned>>;
    fn create_catalogue(&self) -> Result<()>;
    /// Drops one catalogued object, its name quoted by the database's rules, and its row.
    fn drop_owned(&self, object: &Owned) -> Result<()>;
    fn drop_catalogue(&self) -> Result<()>;
    /// Whether the database keeps corescale's unquoted names in upper case (Oracle).
    fn upper_case_names(&self) -> bool {
        false
    }
    /// Tables (and functions) whose names start with corescale's prefix, listed or not.
    fn lookalikes(&self) -> Result<Vec<String>>;
    fn open_session(&self) -> Result<Box<dyn DbSession>>;
    fn counters(&self) -> Result<DbCounters>;
    /// Blocks one statement over `work_unit` keys visits, by the database's own per-statement
    /// instrumentation (EXPLAIN ANALYZE BUFFERS, ANALYZE FORMAT=JSON).
    fn blocks_per_statement(
        &self,
        schema: u64,
        rows: u64,
        work_unit: u64,
        update: bool,
    ) -> Result<f64>;
    /// The buffer cache's size in bytes and the setting that sets it, where readable.
    fn buffer_cache(&self) -> Result<Option<(u64, &'static str)>> {
        Ok(None)
    }
    /// Bytes one row takes in the table (a whole block or half a page).
    fn bytes_per_row(&self) -> u64 {
        8192
    }
    /// The server's process, when one process serves every session (MariaDB).
    fn server_pid(&self) -> Result<Option<u32>> {
        Ok(None)
    }
}

/// One statement of the client loop: a select or an update over a key range of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedStatement {
    pub schema: u64,
    pub update: bool,
    pub first_key: u64,
    pub last_key: u64,
}

/// What the database answered for some statements: selects and the rows they visited,
/// updates and the rows they changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answered {
    pub selects: u64,
    pub updates: u64,
    pub rows: u64,
}

impl std::ops::AddAssign for Answered {
    fn add_assign(&mut self, other: Self) {
        self.selects += other.selects;
        self.updates += other.updates;
        self.rows += other.rows;
    }
}

/// One session. PostgreSQL sessions have their own backend process.
pub trait DbSession: Send {
    /// Sums scratch over the key range in the server; returns the rows visited.
    fn select(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64>;
    /// Adds one to scratch of the rows in the range; returns the rows changed.
    fn update(&mut self, schema: u64, first_key: u64, last_key: u64) -> Result<u64>;
    /// Sends a statement; drivers that can pipeline send `batch` statements together and
    /// answer for earlier ones later. Returns what was answered meanwhile.
    fn submit(&mut self, statement: PlannedStatement, _batch: usize) -> Result<Answered> {
        let PlannedStatement {
            schema,
            update,
            first_key,
            last_key,
        } = statement;
        Ok(if update {
            Answered {
                updates: 1,
                rows: self.update(schema, first_key, last_key)?,
                ..Answered::default()
            }
        } else {
            Answered {
                selects: 1,
                rows: self.select(schema, first_key, last_key)?,
                ..Answered::default()
            }
        })
    }
    /// Waits for every statement still in flight; returns what they answered.
    fn drain(&mut self) -> Result<Answered> {
        Ok(Answered::default())
    }
    /// Runs `statements` selects inside the server (PostgreSQL's PL/pgSQL loop, as pgio does);
    /// returns the rows visited.
    fn server_loop(
        &mut self,
        _schema: u64,
        _rows: u64,
        _work_unit: u64,
        _statements: u64,
    ) -> Result<u64> {
        bail!("--server-loop is available for PostgreSQL only")
    }
    fn backend_pid(&self) -> Option<u32> {
        None
    }
    /// Makes the session's statistics visible to other sessions (PostgreSQL flushes lazily).
    fn publish_statistics(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A session's prepared statements, by table and kind, prepared on first use.
pub struct PreparedStatements<S> {
    selects: Vec<Option<S>>,
    updates: Vec<Option<S>>,
}

impl<S> Default for PreparedStatements<S> {
    fn default() -> Self {
        Self {
            selects: Vec::new(),
            updates: Vec::new(),
        }
    }
}

impl<S> PreparedStatements<S> {
    /// The statement for `schema`, prepared by `prepare(table, update)` the first time.
    pub fn get(
        &mut self,
        schema: u64,
        update: bool,
        prepare: impl FnOnce(&str, bool) -> Result<S>,
    ) -> Result<&mut S> {
        let index = schema as usize;
        let cache = if update {
            &mut self.updates
        } else {
            &mut self.selects
        };
        if cache.len() <= index {
            cache.resize_with(index + 1, || None);
        }
        if cache[index].is_none() {
            cache[index] = Some(prepare(&table_name(schema), update)?);
        }
        Ok(cache[index].as_mut().expect("prepared just now"))
    }
}

/// Statements sampled to learn how many blocks one statement visits.
const SAMPLE_STATEMENTS: u64 = 16;

/// First keys spread over the table for the sample statements.
pub fn sample_keys(rows: u64, work_unit: u64) -> Vec<u64> {
    let span = rows.saturating_sub(work_unit).max(1);
    // In u128: rows come from the catalogue, which anyone with write access could change.
    (0..SAMPLE_STATEMENTS)
        .map(|index| {
            let spread = u128::from(index) * u128::from(span) / u128::from(SAMPLE_STATEMENTS);
            (spread as u64).saturating_add(index * 7 % span)
        })
        .map(|key| key.min(span - 1))
        .collect()
}

/// The mean block count of the sample statements, which must be positive.
pub fn mean_of_samples(samples: &[f64], source: &str) -> Result<f64> {
    let mean = samples.iter().sum::<f64>() / samples.len().max(1) as f64;
    if mean <= 0.0 {
        bail!("{source} reported no blocks for the sample statements");
    }
    Ok(mean)
}

/// Opens the database a target names.
pub fn connect(target: &Target) -> Result<Arc<dyn Database>> {
    Ok(match target.flavour {
        Flavour::Postgres => Arc::new(postgres::Postgres::new(target.clone())?),
        Flavour::MySql => Arc::new(mysql::MySql::new(target.clone())?),
        #[cfg(feature = "oracle")]
        Flavour::Oracle => Arc::new(oracle::Oracle::new(target.clone())?),
        #[cfg(not(feature = "oracle"))]
        Flavour::Oracle => bail!(
            "this corescale was built without Oracle support: rebuild with `cargo build --release --features oracle` (needs Oracle Instant Client at run time)"
        ),
    })
}

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

/// Blocks one statement visits, by the database's own per-statement instrumentation.
#[derive(Debug, Clone, Copy)]
struct BlocksPer {
    select: f64,
    update: f64,
}

impl BlocksPer {
    /// Blocks visited by some selects and updates: what the database's LIO counter should
    /// grow by.
    fn of(self, selects: u64, updates: u64) -> f64 {
        selects as f64 * self.select + updates as f64 * self.update
    }
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
        if options.server_loop && target.flavour != Flavour::Postgres {
            bail!("--server-loop is available for PostgreSQL only");
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
        let mut session = DbSessionJob {
            connection: self.database.open_session()?,
            options: self.options.clone(),
            schema: worker as u64 % self.schemas,
            rows: self.rows,
            blocks: self.blocks,
            random: SessionRng::for_worker(worker, 0x9E37_79B9_7F4A_7C15),
            statements: 0,
            updates: 0,
            rows_visited: 0,
            backend_cpu_start: None,
        };
        for _ in 0..WARM_UP_STATEMENTS {
            session.select_once()?;
        }
        session.statements = 0;
        session.rows_visited = 0;
        session.connection.publish_statistics()?;
        session.backend_cpu_start = session.backend_cpu();
        Ok(Box::new(CachePadded::new(session)))
    }

    fn default_duration(&self) -> Option<Duration> {
        Some(Duration::from_secs(5))
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

struct DbSessionJob {
    connection: Box<dyn DbSession>,
    options: DbOptions,
    schema: u64,
    rows: u64,
    blocks: BlocksPer,
    random: SessionRng,
    statements: u64,
    updates: u64,
    rows_visited: u64,
    backend_cpu_start: Option<f64>,
}

impl DbSessionJob {
    fn backend_cpu(&self) -> Option<f64> {
        self.connection.backend_pid().and_then(process_cpu_seconds)
    }

    /// A warm-up select, answered before it returns.
    fn select_once(&mut self) -> Result<()> {
        let statement = self.plan(false);
        let answered = self.connection.submit(statement, 1)?;
        self.count(answered);
        Ok(())
    }

    /// The next statement over a random key range of this session's table.
    fn plan(&mut self, update: bool) -> PlannedStatement {
        let span = if update {
            self.options.update_work_unit.min(self.rows - 1)
        } else {
            self.options.work_unit
        };
        let first_key = self.random.below(self.rows - span);
        PlannedStatement {
            schema: self.schema,
            update,
            first_key,
            last_key: first_key + span,
        }
    }

    /// Counts answered statements; returns the blocks they visited by the client's count.
    fn count(&mut self, answered: Answered) -> u64 {
        self.statements += answered.selects + answered.updates;
        self.updates += answered.updates;
        self.rows_visited += answered.rows;
        self.blocks.of(answered.selects, answered.updates) as u64
    }

    /// One unit of work: a statement sent (or a server-side loop of them); returns blocks
    /// visited by the statements answered meanwhile.
    fn step(&mut self) -> Result<u64> {
        if self.options.server_loop {
            let rows = self.connection.server_loop(
                self.schema,
                self.rows,
                self.options.work_unit,
                SERVER_LOOP_STATEMENTS,
            )?;
            self.statements += SERVER_LOOP_STATEMENTS;
            self.rows_visited += rows;
            return Ok(self.blocks.of(SERVER_LOOP_STATEMENTS, 0) as u64);
        }
        let update = self.random.chance(self.options.update_share);
        let statement = self.plan(update);
        let answered = self.connection.submit(statement, self.options.pipeline)?;
        let blocks = self.count(answered);
        if let Some(pause) = self.options.think_time {
            std::thread::sleep(pause);
        }
        Ok(blocks)
    }

    /// Waits for the statements still in flight; returns the blocks they visited.
    fn drain(&mut self) -> Result<u64> {
        let answered = self.connection.drain()?;
        Ok(self.count(answered))
    }
}

impl WorkerJob for DbSessionJob {
    fn run_job(&mut self) -> Result<u64> {
        let mut blocks = 0;
        for _ in 0..self.options.job_statements {
            blocks += self.step()?;
        }
        Ok(blocks + self.drain()?)
    }

    fn run_slice(&mut self) -> Result<u64> {
        self.step()
    }

    fn end_window(&mut self) -> Result<u64> {
        self.drain()
    }

    fn counters(&mut self) -> Counters {
        // Published before the main thread reads the level's closing counters.
        let published = self.connection.publish_statistics();
        let selects = self.statements - self.updates;
        let mut counters = Counters::from([
            ("statements".to_string(), self.statements as f64),
            ("updates".to_string(), self.updates as f64),
            ("rows_visited".to_string(), self.rows_visited as f64),
            (
                "client_blocks".to_string(),
                self.blocks.of(selects, self.updates),
            ),
        ]);
        if let (Some(start), Some(now)) = (self.backend_cpu_start, self.backend_cpu()) {
            counters.insert("backend_cpu_s".to_string(), now - start);
        }
        if published.is_err() {
            counters.insert("statistics_not_published".to_string(), 1.0);
        }
        counters
    }
}
