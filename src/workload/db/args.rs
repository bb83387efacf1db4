//! The options of `run db`, `db setup` and `db teardown`: the target, how sessions send
//! their statements, and the tables' size.

use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::{DbOptions, DbWorkload};
use crate::db::connect::options::{DbTargetArgs, RouteArgs};
use crate::db::connect::target::Target;
use crate::error::UsageError;
use crate::latency::{LatencyLimitArgs, PacingArgs};
use crate::values::{Scale, parse_scale};
use crate::workload::slob::{DEFAULT_DURATION, DEFAULT_JOB_STATEMENTS, SlobArgs};
use crate::workload::{BuildContext, Workload, WorkloadOptions};

/// How much longer than a job's duration one database answer may take...
const STATEMENT_MARGIN: Duration = Duration::from_secs(30);

/// ...unless a test shortens it (`CORESCALE_TEST_STATEMENT_MARGIN`, from 1 s up to the
/// default), so a test of a stalled server need not wait half a minute.
fn statement_margin() -> Duration {
    crate::values::test_setting("CORESCALE_TEST_STATEMENT_MARGIN", Duration::from_secs(1))
        .unwrap_or(STATEMENT_MARGIN)
        .min(STATEMENT_MARGIN)
}
/// Most rows per table `db setup` creates (each loader holds the key order in memory).
pub(crate) const MAX_DB_ROWS: u64 = 1 << 28;
/// Bytes per row `db setup` sizes tables in: one 8 KiB block per row.
const SETUP_ROW_BYTES: u64 = 8192;

/// Refuses a `db setup` option given to `run db`: the tables are already sized.
fn setup_only(_: &str) -> Result<String, String> {
    Err("it sets corescale's tables in the database: give it to `corescale db setup`, not to run db".to_string())
}

/// `run db`'s wording of `--rate`: a session sends one statement at a time when paced.
const RATE_HELP: &str = "Open loop: statements per second for the whole level, shared by its sessions, each timed from when it was due, however late its session could send it (a session sends one at a time), so a stall is measured by every statement it delays (--pipeline 1). A list (1000,2000,5000) measures each worker count at each rate; shares (50%,90%) take the throughput of a closed-loop level measured first at that worker count";

/// `run db`: the SLOB/pgio method on a real database.
#[derive(Debug, Clone, Args)]
#[command(after_help = crate::workload::slob::job_help())]
#[command(next_help_heading = "db (SLOB/pgio method on a real database)")]
#[command(mut_arg("rate", |arg| arg.help(RATE_HELP)))]
#[command(mut_arg("route", |arg| arg.help("Where each session goes when --target names several instances: round-robin (session k on instance k mod N; the default), by-schema (table k on instance k mod N, as SLOB), random, or reads=replicas (read-only sessions on the replicas; updates need the primary)")))]
#[command(mut_arg("arrivals", |arg| arg.help("How --rate spaces statements: evenly, or at random as independent users arrive")))]
#[command(mut_arg("latency_limit", |arg| arg.help("Count the statements answered later than this (e.g. 50ms); unlike pgbench's, late statements are still sent and timed")))]
pub struct DbArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    #[command(flatten)]
    pub slob: SlobArgs,

    /// Run the statements in a PL/pgSQL loop inside PostgreSQL, as pgio does.
    #[arg(long, help_heading = "db (SLOB/pgio method on a real database)")]
    pub server_loop: bool,

    /// `db setup`'s options, refused here with where they go.
    #[arg(long = "scale", hide = true, value_name = "SIZE", value_parser = setup_only)]
    _scale: Option<String>,
    #[arg(long = "schemas", hide = true, value_name = "N", value_parser = setup_only)]
    _schemas: Option<String>,

    /// Statements sent together under one Sync, two batches in flight (PostgreSQL only).
    /// Default 32 on PostgreSQL (1 with --think-time); 1 waits for every answer, one round
    /// trip per statement.
    #[arg(long, value_name = "N", help_heading = "db (SLOB/pgio method on a real database)",
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub pipeline: Option<u64>,

    #[command(flatten)]
    pub pacing: PacingArgs,

    /// The seed of `--arrivals poisson`: drawn anew each run (and recorded in the result's
    /// workload.shape.arrivals_seed); give a recorded one to repeat a run's arrivals exactly.
    #[arg(
        long,
        value_name = "N",
        requires = "paced",
        help_heading = "Response time"
    )]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub latency: LatencyLimitArgs,

    #[command(flatten)]
    pub search: crate::latency::FindArgs,

    /// For benches/db_latency.rs only: leave out each statement's clock reads and histogram
    /// (a closed loop then records no response times), to measure what they cost.
    #[arg(long, hide = true, conflicts_with = "rate")]
    pub no_response_times: bool,

    #[command(flatten)]
    pub routing: RouteArgs,

    /// Keys changed by each update statement (default: the work unit).
    #[arg(long, value_name = "N", help_heading = "db (SLOB/pgio method on a real database)",
          value_parser = crate::values::parse_positive)]
    pub update_work_unit: Option<u64>,
}

impl DbArgs {
    /// An open loop: `--rate`, or a search's probes.
    fn paced(&self) -> bool {
        self.pacing.rate.is_some() || self.search.find.is_some()
    }

    /// The target and the sessions' settings, checked against what the driver can do.
    pub fn request(&self, context: &BuildContext) -> Result<(Vec<Target>, DbOptions)> {
        // One answer may take a whole job's duration and a margin before the server counts
        // as stalled; then the run ends, keeping the levels done.
        let answer_limit = context.duration.unwrap_or(DEFAULT_DURATION) + statement_margin();
        let targets = self.target.open_all_with(Some(answer_limit))?;
        let driver = targets[0].product;
        let product = driver.name;
        let pipeline = match self.pipeline {
            Some(depth) if depth as usize > driver.max_pipeline => {
                return Err(UsageError::new(format!(
                    "--pipeline above {max} needs a driver that sends statements before their answers come back: the {product} driver waits for each answer (use --pipeline {max})",
                    max = driver.max_pipeline
                ))
                .into());
            }
            Some(depth) if depth > 1 && self.paced() => {
                return Err(UsageError::new(
                    "--rate and --find send each statement when it is due: use --pipeline 1 (their default)",
                )
                .into());
            }
            Some(depth) => depth as usize,
            // A think time or a rate paces single statements, so they are sent one by one.
            None if self.slob.think_time.is_some() || self.paced() => 1,
            None => driver.default_pipeline,
        };
        if self.paced() && (self.server_loop || self.slob.think_time.is_some()) {
            return Err(UsageError::new(
                "--rate and --find pace statements themselves: leave out --server-loop and --think-time",
            )
            .into());
        }
        if self.server_loop && driver.dialect != crate::db::product::Dialect::PostgreSql {
            return Err(UsageError::new(format!(
                "--server-loop needs a driver that runs the statements in a server-side loop (PostgreSQL's PL/pgSQL, as pgio does): the {product} driver sends each from the client (leave out --server-loop)"
            ))
            .into());
        }
        let work_unit = self.slob.work_unit();
        Ok((
            targets,
            DbOptions {
                work_unit,
                update_share: self.slob.update_share(),
                update_work_unit: self.update_work_unit.unwrap_or(work_unit),
                server_loop: self.server_loop,
                think_time: self.slob.think_time,
                job_statements: context.job_size.unwrap_or(DEFAULT_JOB_STATEMENTS),
                pipeline,
                rates: self.pacing.rates(),
                searched: self.search.find.is_some(),
                rate: None,
                replay_limit: self.target.replay_limit(),
                record_latency: !self.no_response_times,
                arrivals: self.pacing.arrivals,
                arrivals_seed: self.seed.unwrap_or_else(fresh_seed),
                latency_limit: self.latency.latency_limit,
                route: self.routing.route.unwrap_or_default(),
                instance: None,
            },
        ))
    }
}

impl WorkloadOptions for DbArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        let (targets, options) = self.request(context)?;
        Ok(Box::new(DbWorkload::new(&targets, options)?))
    }

    fn connects(&self) -> bool {
        true
    }

    fn find(&self) -> Option<&crate::latency::FindArgs> {
        self.search.find.is_some().then_some(&self.search)
    }
}

/// `db setup [slob]`: SLOB's tables in a database (`db setup`'s default).
#[derive(Debug, Args)]
pub struct DbSetupArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// Tables to create, one per session (run sessions beyond this share them); default 2.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub schemas: Option<u64>,

    /// Rows (one-row blocks) per table, as a count (8192) or a size at 8 KiB per row (64M).
    /// Default: 64M, or less so that the tables fit the server's buffer cache with a fifth of
    /// it to spare (a cached LIO test).
    #[arg(long, value_name = "ROWS|SIZE", value_parser = parse_scale)]
    pub scale: Option<Scale>,
}

/// Rows per table when `--scale` is not given, before fitting them to the buffer cache.
pub(crate) const DEFAULT_SETUP_ROWS: u64 = (64 << 20) / SETUP_ROW_BYTES;

impl DbSetupArgs {
    /// SLOB's tables: `--schemas`, else 2.
    pub fn schemas(&self) -> u64 {
        self.schemas.unwrap_or(2)
    }

    /// Rows per table from `--scale`; None when it was not given.
    pub fn rows(&self) -> Result<Option<u64>, UsageError> {
        let Some(scale) = &self.scale else {
            return Ok(None);
        };
        let rows = scale.rows(SETUP_ROW_BYTES);
        if (128..=MAX_DB_ROWS).contains(&rows) {
            Ok(Some(rows))
        } else {
            Err(UsageError::new(format!(
                "--scale gives {rows} rows: use 128 to {MAX_DB_ROWS} rows (2 TiB at 8 KiB a row), e.g. 8192 or 64M"
            )))
        }
    }
}

/// A seed no two runs share: the clock's nanoseconds and the process id, mixed (SplitMix64's
/// finaliser), so repeated runs draw their random arrivals anew.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64);
    let mut mixed = nanos ^ (u64::from(std::process::id()) << 32);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    mixed ^ (mixed >> 31)
}
