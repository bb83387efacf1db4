//! `run tpcc`: order entry derived from TPC-C under the sweep. Each session is a terminal
//! of its home warehouse; a level's figure of merit is NOPM, read from the districts' order
//! counters at both ends and checked against the sessions' own count, beside TPM (the
//! server's commits and rollbacks per minute, as HammerDB reads them). Not an audited
//! TPC-C result.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use super::session::{Shared, TpccSessionJob, TpccTally};
use super::statements::{DISTRICT_ORDERS, Statements};
use super::transactions::{Kind, OwnWarehouses, run_c_last};
use crate::db::connect::options::DbTargetArgs;
use crate::db::connect::target::Target;
use crate::db::read_replicas::{Parts, ReadReplicas};
use crate::db::registry::connect;
use crate::db::{BoundValue, Database, DbCounters, DbSession};
use crate::error::{UsageError, locked};
use crate::latency::{Arrivals, Pace};
use crate::workload::figures::{FigureSet, level_figures, named_figure};
use crate::workload::server::{OnOneDatabase, server_process_cpu_s};
use crate::workload::{
    BuildContext, JobShape, LevelFigures, LevelTotals, PaddedJob, ServerWorkload,
    SessionConnection, Workload, WorkloadInfo, WorkloadKind, WorkloadOptions,
};

/// How long a level lasts unless `--duration` says otherwise.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Transactions a fixed-work job runs (`--job-size`).
const DEFAULT_JOB_TRANSACTIONS: u64 = 1_000;
/// The specification's mix (clause 5.2.3), in percent.
const STANDARD_MIX: [f64; 5] = [45.0, 43.0, 4.0, 4.0, 4.0];
pub use crate::result::workload::NOT_AUDITED;

/// Where order entry's transactions go on a primary and its replicas.
const PARTS: Parts = Parts {
    writer: "order entry",
    reads: "Order-Status and Stock-Level",
};

/// `run tpcc`: the options.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Order entry derived from TPC-C (not an audited TPC-C result): set the tables up first with `corescale db setup tpcc --warehouses W`. Each session is a terminal of one home warehouse (sessions are dealt to warehouses in turn); NOPM counts new orders per minute from the districts' order counters, TPM the server's commits and rollbacks per minute.\n\nExamples:\n  corescale db setup tpcc --warehouses 4 \\\n      --target postgres://bench@db1/shop\n  corescale run tpcc --target postgres://bench@db1/shop --sweep 1,2,4,8 \\\n      --duration 60s\n  corescale run tpcc --target mysql://root@127.0.0.1/test --sweep 4 \\\n      --mix 50,40,4,3,3 --max-failures 10"
)]
#[command(next_help_heading = "tpcc (order entry derived from TPC-C)")]
#[command(mut_arg("service_base", |arg| arg.hide(true)))]
#[command(mut_arg("service_max", |arg| arg.hide(true)))]
#[command(mut_arg("replay_limit", |arg| arg.hide(true)))]
#[command(mut_arg("rate", |arg| arg.help(crate::latency::TRANSACTIONS_RATE_HELP)))]
#[command(mut_arg("arrivals", |arg| arg.help(crate::latency::TRANSACTIONS_ARRIVALS_HELP)))]
#[command(mut_arg("route", |arg| arg.help("With a primary and its replicas in --target: reads=replicas runs Order-Status and Stock-Level on the replicas in turn (each session has a connection to one), the writing transactions on the primary")))]
#[command(mut_arg("latency_limit", |arg| arg.help("Count the transactions answered later than this (e.g. 50ms)")))]
pub struct TpccArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// The shares of New-Order, Payment, Order-Status, Delivery and Stock-Level, in percent
    /// summing to 100 (default: the specification's 45,43,4,4,4).
    #[arg(long, value_name = "NO,P,OS,D,SL", value_parser = parse_mix)]
    pub mix: Option<Mix>,

    /// The specification's keying and think times around each transaction (18 s and 12 s
    /// for a New-Order): a terminal then runs a few transactions a minute. Default: none,
    /// as HammerDB runs it. Not with --rate: the terminals' own times are their schedule.
    #[arg(long, conflicts_with = "paced")]
    pub keying_time: bool,

    /// Count up to this many failed transactions per level by SQLSTATE and go on (a failed
    /// transaction is rolled back). Deadlocks and serialization failures, at COMMIT too, are
    /// retried (up to 100 tries, then failed). Default 0: the first failure ends the level
    /// with the server's message.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_failures: u64,

    #[command(flatten)]
    pub pacing: crate::latency::PacingArgs,

    #[command(flatten)]
    pub latency: crate::latency::LatencyLimitArgs,

    #[command(flatten)]
    pub search: crate::latency::FindArgs,

    #[command(flatten)]
    pub routing: crate::db::connect::options::RouteArgs,
}

/// The five shares of `--mix`, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix(pub [f64; 5]);

impl Mix {
    /// Cumulative shares in hundredths of a percent, as a session draws from them.
    fn cumulative(self) -> [u64; 5] {
        let mut total = 0.0;
        self.0.map(|share| {
            total += share;
            (total * 100.0).round() as u64
        })
    }

    fn shown(self) -> String {
        let shares: Vec<String> = self.0.iter().map(|share| format!("{share}")).collect();
        shares.join("/")
    }
}

fn parse_mix(text: &str) -> Result<Mix, String> {
    let shares: Vec<&str> = text.split(',').map(str::trim).collect();
    if shares.len() != 5 {
        return Err(format!(
            "'{text}' gives {} shares: give five percentages, New-Order, Payment, Order-Status, Delivery and Stock-Level (45,43,4,4,4)",
            shares.len()
        ));
    }
    let mut mix = [0.0; 5];
    for (slot, share) in mix.iter_mut().zip(&shares) {
        *slot = share
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && (0.0..=100.0).contains(value))
            .ok_or_else(|| format!("'{share}' in '{text}' is not a percentage from 0 to 100"))?;
        // 0.29 * 100 is 28.999999999999996: hundredths within float rounding are whole.
        if ((*slot * 100.0).round() - *slot * 100.0).abs() > 1e-6 {
            return Err(format!(
                "'{share}' in '{text}' has more than two decimals: give hundredths at most"
            ));
        }
    }
    let total: f64 = mix.iter().sum();
    if (total - 100.0).abs() > 1e-6 {
        return Err(format!("the shares in '{text}' sum to {total}, not 100"));
    }
    Ok(Mix(mix))
}

pub struct TpccWorkload {
    /// The primary, where setup was made and the writing transactions run, and the
    /// replicas Order-Status and Stock-Level may go to.
    instances: ReadReplicas,
    shared: Arc<Shared>,
    mix: Mix,
    engine: String,
    rates: Vec<crate::latency::OfferedRate>,
    /// `--find`: every level but the first is paced by the search.
    searched: bool,
    arrivals: Arrivals,
    /// The session that reads the districts' order counters around each level.
    monitor: Mutex<Box<dyn DbSession>>,
    /// At the level's start: the server's counters, its local process's CPU time, and the
    /// districts' orders so far.
    baseline: Mutex<Option<(DbCounters, Option<f64>, i64)>>,
    connections:
        Mutex<std::collections::BTreeMap<usize, Option<crate::db::connect::tls::TlsFacts>>>,
    /// The sessions' isolation level, as the server named it.
    isolation: &'static str,
    /// The target without the run's answer limit: the consistency check after the run scans
    /// whole tables, in a session of its own.
    check_target: Target,
    /// The tables as setup recorded them, checked again before each level.
    tables: Vec<crate::db::catalog::Owned>,
    /// The lock on them, from a connection of its own, for the whole run.
    held: Mutex<Option<Box<dyn crate::db::TablesHeld>>>,
}

impl WorkloadOptions for TpccArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        if let Some(option) = self.target.given_for_corescale_tables() {
            return Err(UsageError::new(format!(
                "{option} is for SLOB's tables on several services or replicas; run tpcc drives one PostgreSQL or MySQL/MariaDB instance: leave {option} out"
            ))
            .into());
        }
        let answer_limit = context.duration.unwrap_or(DEFAULT_DURATION) + Duration::from_secs(60);
        let targets = self.target.open_all_with(Some(answer_limit))?;
        let instances = ReadReplicas::connect(&targets, self.routing.route, PARTS)?;
        Ok(Box::new(TpccWorkload::new(self, instances, context)?))
    }

    fn connects(&self) -> bool {
        true
    }

    fn find(&self) -> Option<&crate::latency::FindArgs> {
        self.search.find.is_some().then_some(&self.search)
    }
}

impl TpccWorkload {
    fn new(args: &TpccArgs, instances: ReadReplicas, context: &BuildContext) -> Result<Self> {
        let database = Arc::clone(&instances.primary);
        let target = database.target().clone();
        if let Some(note) = database.forwarded() {
            say!("corescale: note: {note}");
        }
        if database
            .read_only()
            .context("asking whether the target takes writes")?
        {
            return Err(UsageError::new(format!(
                "{target} is read-only (a replica, or read-only by its settings), and order entry writes: run it against the primary"
            ))
            .into());
        }
        let super::Verified {
            setup,
            tables,
            held,
        } = super::verify(database.as_ref())?;
        let engine = database
            .engine()
            .context("reading the database's version")?;
        database
            .counters()
            .context("reading the database's counters")?;
        let mut monitor = database
            .open_session()
            .context("opening the session that reads the districts' order counters")?;
        let isolation = isolation_of(monitor.as_mut(), database.target().product.dialect)?;
        let mut salt = super::random::Random::new(0, std::process::id().into());
        let mix = args.mix.unwrap_or(Mix(STANDARD_MIX));
        let shared = Shared {
            statements: Statements::new(database.as_ref()),
            mix: mix.cumulative(),
            keying: args.keying_time,
            max_failures: args.max_failures,
            latency_limit: args.latency.latency_limit,
            job_transactions: context.job_size.unwrap_or(DEFAULT_JOB_TRANSACTIONS),
            level_length: context
                .duration
                .or(context.job_size.is_none().then_some(DEFAULT_DURATION)),
            warehouses: setup.warehouses,
            own: own_warehouses(context, setup.warehouses)?,
            nurand: setup.nurand,
            run_c_last: run_c_last(setup.nurand.c_last, &mut salt),
            sessions: Default::default(),
            failures: Default::default(),
        };
        if let Some(length) = shared
            .level_length
            .filter(|length| shared.keying && length.as_secs() < 120)
        {
            say!(
                "corescale: note: with --keying-time a terminal runs about two transactions a minute: levels of {} s count few of them (give --duration 10m or more)",
                length.as_secs()
            );
        }
        say_unused_warehouses(context, &shared);
        Ok(Self {
            instances,
            shared: Arc::new(shared),
            mix,
            engine,
            rates: args.pacing.rates(),
            searched: args.search.find.is_some(),
            arrivals: args.pacing.arrivals,
            monitor: Mutex::new(monitor),
            baseline: Mutex::new(None),
            connections: Mutex::default(),
            check_target: target.with_timeouts(None, None),
            isolation,
            tables,
            held: Mutex::new(held),
        })
    }

    /// The districts' orders so far: the sum of their next order numbers.
    fn district_orders(&self) -> Result<i64> {
        let mut monitor = locked(&self.monitor, "the districts' monitor session")?;
        let statement = DISTRICT_ORDERS;
        let own = self.shared.own;
        let [parts, part] = [own.parts, own.part].map(|value| BoundValue::Int(value as i64));
        monitor
            .execute(
                statement,
                self.shared.statements.get(statement),
                &[parts, part],
            )
            .context("reading the districts' order counters")?
            .value
            .ok_or_else(|| anyhow!("the districts' order counters gave no number"))
    }

    fn job(&self) -> String {
        format!(
            "tpcc {} warehouse(s), mix {}{}",
            self.shared.warehouses,
            self.mix.shown(),
            if self.shared.keying {
                ", keying and think times"
            } else {
                ""
            }
        )
    }
}

impl Workload for TpccWorkload {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            kind: WorkloadKind::Tpcc.into(),
            unit: "new orders".to_string(),
            job_size: self.shared.job_transactions,
            job_size_unit: "transactions".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: format!(
                "order entry ({NOT_AUDITED}) on {}: {}, at {} (the sessions' default isolation){}",
                self.instances.primary.target(),
                self.job(),
                self.isolation,
                self.instances.placement(PARTS.reads)
            ),
            shape: Some(JobShape {
                engine: self.engine.clone(),
                statement: self.job(),
                blocks_per_statement: 0.0,
                pipeline_depth: 1,
                open_loop: !self.rates.is_empty() || self.searched,
                arrivals_seed: None,
            }),
            server_on_this_host: Some(self.instances.primary.on_this_host()),
        }
    }

    fn prepare(&self, worker: usize, workers: usize, rate: Option<f64>) -> Result<PaddedJob> {
        let started = std::time::Instant::now();
        let connection = self.instances.primary.open_session()?;
        let reader =
            match self.instances.reader_of(worker) {
                Some(replica) => Some(replica.open_session().with_context(|| {
                    format!("connecting session {worker} to {}", replica.target())
                })?),
                None => None,
            };
        let connection_s = started.elapsed().as_secs_f64();
        locked(&self.connections, "the sessions' connections")?.insert(worker, connection.tls());
        let pace = rate.map(|level_rate_per_s| Pace {
            level_rate_per_s,
            arrivals: self.arrivals,
            seed: 0x7C_C0DE,
        });
        Ok(PaddedJob::new(TpccSessionJob::start(
            (connection, reader),
            Arc::clone(&self.shared),
            (worker, workers),
            pace,
            connection_s,
        )))
    }

    fn plan(&self) -> crate::workload::LevelPlan {
        crate::workload::LevelPlan {
            rates: self.rates.clone(),
            default_duration: Some(DEFAULT_DURATION),
            cpu_bound: false,
            ..Default::default()
        }
    }

    /// The tables: still locked, still setup's.
    fn level_preparing(&self) -> Result<()> {
        if let Some(held) = locked(&self.held, "the lock on the tables")?.as_mut() {
            held.still_held()?;
        }
        super::check_tables(
            self.instances.primary.as_ref(),
            &self.tables,
            " any more: it changed during the run, which ends here",
        )
    }

    fn level_started(&self) -> Result<()> {
        *locked(&self.baseline, "the level's baseline")? = Some((
            self.instances.counters()?,
            server_process_cpu_s(self.instances.primary.as_ref())?,
            self.district_orders()?,
        ));
        self.shared.sessions.take()?;
        self.shared
            .failures
            .store(0, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let after = self.instances.counters()?;
        let orders_after = self.district_orders()?;
        let Some((before, server_cpu_before, orders_before)) =
            *locked(&self.baseline, "the level's baseline")?
        else {
            bail!("the level's counters were not read at its start");
        };
        let total = TpccTally::sum(self.shared.sessions.take()?);
        let server_cpu_s = match (
            server_process_cpu_s(self.instances.primary.as_ref())?,
            server_cpu_before,
        ) {
            (Some(now), Some(then)) => Some(now - then),
            _ => total.backend_cpu_s,
        };
        let new_orders = (orders_after - orders_before) as f64;
        let figures = TpccFigures::of(&total, totals, (&before, &after), new_orders);
        let mut recorded = figures.figures();
        recorded.extend(per_kind(&total));
        for (sqlstate, count) in &total.retries {
            recorded.push((named_figure("retries SQLSTATE", sqlstate), *count as f64));
        }
        for (sqlstate, count) in &total.failures {
            recorded.push((named_figure("failures SQLSTATE", sqlstate), *count as f64));
        }
        let connections = SessionConnection::of_level(
            &std::mem::take(&mut *locked(
                &self.connections,
                "the sessions' connections",
            )?),
            usize::MAX,
        );
        Ok(LevelFigures {
            recorded,
            warnings: warnings(&total, new_orders),
            rate_of_merit: (totals.elapsed_s > 0.0).then(|| new_orders / totals.elapsed_s),
            server_cpu_s,
            connections,
            instances: Vec::new(),
            classes: crate::latency::ClassTimes::of(&total.times.times(), None, |index| {
                Kind::ALL[index].name().to_string()
            }),
        })
    }

    fn check_after_run(&self) -> Result<Option<String>> {
        let database = connect(&self.check_target)?;
        let mut session = database.open_session()?;
        let checked = super::consistency::check(database.as_ref(), session.as_mut())?;
        Ok(Some(format!(
            "the order-entry tables meet consistency conditions {} of clause 3.3.2 after the run",
            checked
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    fn server(&self) -> Option<&dyn ServerWorkload> {
        Some(self)
    }
}

impl OnOneDatabase for TpccWorkload {
    fn database(&self) -> &dyn Database {
        self.instances.primary.as_ref()
    }
}

/// The isolation level a new session of the target runs at (its default, which the run's
/// transactions keep).
fn isolation_of(
    session: &mut dyn DbSession,
    dialect: crate::db::product::Dialect,
) -> Result<&'static str> {
    // Indexes past the workload's statements: the monitor prepares those too.
    let first = super::statements::STATEMENT_COUNT;
    let [asked, older] = super::statements::isolation_queries(dialect);
    let answer = match session.execute(first, asked, &[]) {
        Ok(answer) => answer,
        Err(error) if error.refusal().is_some() => session
            .execute(first + 1, older, &[])
            .context("reading the sessions' isolation level")?,
        Err(error) => {
            return Err(anyhow::Error::new(error).context("reading the sessions' isolation level"));
        }
    };
    Ok(super::statements::isolation_name(answer.value.unwrap_or(0)))
}

/// The warehouses this run's sessions are at home in: all of them, or a campaign's part's
/// own, so that each part's districts count its orders alone.
fn own_warehouses(context: &BuildContext, warehouses: u64) -> Result<OwnWarehouses> {
    let Some((part, parts)) = context.campaign_part else {
        return Ok(OwnWarehouses::ALL);
    };
    if (parts as u64) > warehouses {
        return Err(UsageError::new(format!(
            "a campaign of {parts} parts needs at least {parts} warehouses, each part its own ({warehouses} set up): set up more (`corescale db setup tpcc --warehouses {parts}`) or run fewer parts"
        ))
        .into());
    }
    Ok(OwnWarehouses {
        part: part as u64 - 1,
        parts: parts as u64,
    })
}

/// Said when the largest level has fewer sessions than the run's warehouses: some stay idle.
fn say_unused_warehouses(context: &BuildContext, shared: &Shared) {
    let own = shared.own;
    let count = own.count(shared.warehouses);
    // This part's sessions at the largest level: its number, then every `parts`-th.
    let sessions = (context.max_workers as u64)
        .saturating_sub(own.part)
        .div_ceil(own.parts);
    if sessions >= count {
        return;
    }
    if own == OwnWarehouses::ALL {
        say!(
            "corescale: note: {} warehouses are set up and at most {sessions} sessions run: warehouses 1 to {sessions} are used",
            shared.warehouses,
        );
    } else {
        say!(
            "corescale: note: part {} of {} owns {count} of the {} warehouses (numbers {}, {}, {}, ...) and runs at most {sessions} sessions: {sessions} of its warehouses are used",
            own.part + 1,
            own.parts,
            shared.warehouses,
            own.part + 1,
            own.part + 1 + own.parts,
            own.part + 1 + 2 * own.parts,
        );
    }
}

/// Each type's count, share of the mix and response times: "new_order p90_ms".
fn per_kind(total: &TpccTally) -> Vec<crate::workload::figures::Figure> {
    const FIGURES: [&str; 6] = [
        "transactions",
        "share_percent",
        "mean_ms",
        "p50_ms",
        "p90_ms",
        "p99_ms",
    ];
    let all = total.transactions().max(1) as f64;
    let times = total.times.times();
    let mut recorded = Vec::new();
    for kind in Kind::ALL {
        let name = |figure: &str| named_figure(kind.name(), figure);
        let count = total.ended[kind as usize] as f64;
        recorded.push((name(FIGURES[0]), count));
        recorded.push((name(FIGURES[1]), 100.0 * count / all));
        if let Some(times) = times[kind as usize].percentiles() {
            recorded.push((name(FIGURES[2]), times.mean_ms));
            recorded.push((name(FIGURES[3]), times.p50_ms));
            recorded.push((name(FIGURES[4]), times.p90_ms));
            recorded.push((name(FIGURES[5]), times.p99_ms));
            recorded.push((name("p95_ms"), times.p95_ms));
            recorded.push((name("p999_ms"), times.p999_ms));
            recorded.push((name("max_ms"), times.max_ms));
        }
    }
    recorded
}

/// What the level's figures cannot vouch for: orders the districts counted that the
/// sessions did not commit (another client wrote), types over the specification's
/// 90th-percentile limit, failed transactions.
fn warnings(total: &TpccTally, new_orders: f64) -> Vec<String> {
    let mut warnings = Vec::new();
    let committed = total.ended[Kind::NewOrder as usize].saturating_sub(total.rolled_back) as f64;
    if (new_orders - committed).abs() > 1.0 {
        warnings.push(format!(
            "the districts counted {new_orders} new orders and the sessions committed {committed}: another client wrote to the order-entry tables, and NOPM is not this run's alone"
        ));
    }
    let times = total.times.times();
    for kind in Kind::ALL {
        if let Some(p90) = times[kind as usize].percentiles().map(|times| times.p90_ms)
            && p90 > 1e3 * kind.p90_limit_s()
        {
            warnings.push(format!(
                "{}'s 90th percentile response time, {:.0} ms, is over the specification's {} s",
                kind.name(),
                p90,
                kind.p90_limit_s()
            ));
        }
    }
    // Clause 2.7.4.2: at most 1% of Deliveries, or one, may skip a district.
    let deliveries = total.ended[Kind::Delivery as usize];
    let skipping = total.deliveries_skipping;
    if skipping > 1 && skipping * 100 > deliveries {
        warnings.push(format!(
            "{skipping} of {deliveries} Deliveries skipped districts ({} in all) where they found no undelivered order, over the specification's 1%: the mix may run more Deliveries than New-Orders fill, or Deliveries of one warehouse met on its oldest order",
            total.skipped_districts
        ));
    }
    if total.failed > 0 {
        let by_code: Vec<String> = total
            .failures
            .iter()
            .map(|(sqlstate, count)| format!("{count} with SQLSTATE {sqlstate}"))
            .collect();
        warnings.push(format!(
            "{} of {} transactions failed and were rolled back ({}): they are not in the rate or the response times",
            total.failed,
            total.failed + total.transactions(),
            by_code.join(", ")
        ));
    }
    warnings
}

level_figures! {
    /// One order-entry level's figures; `workload_figures` in the result, by these names
    /// (each type's and each SQLSTATE's follow them).
    pub struct TpccFigures / TpccFigureNames {
        /// New orders per minute, from the districts' order counters at both ends.
        nopm: f64,
        /// New orders per minute the sessions committed, by their own count.
        client_nopm: f64,
        /// The server's commits and rollbacks per minute, as HammerDB's TPM.
        tpm: Option<f64>,
        /// Transactions that ran to their end (committed, and the New-Orders rolled back by
        /// the specification's unused item), and per second.
        transactions: f64,
        transactions_per_s: f64,
        /// New-Orders rolled back by their unused item (1% of them).
        rollbacks: f64,
        /// Tries run again after a deadlock or serialization failure.
        retries: f64,
        /// Districts a Delivery skipped, finding no undelivered order (clause 2.7.4.2).
        delivery_skipped_districts: f64,
        /// Transactions refused and rolled back, under --max-failures.
        failed_transactions: f64,
        /// The sessions' mean time to connect.
        connection_time_ms: f64,
        /// The database's own block counters over the level, per second.
        server_lio_per_s: f64,
        server_pio_per_s: f64,
        /// The same per transaction that ran to its end: what a transaction costs the
        /// server's buffer cache and disks, to set two servers or schemas side by side.
        server_lio_per_transaction: f64,
        server_pio_per_transaction: f64,
        client_cpu_s: f64,
    }
}

impl TpccFigures {
    fn of(
        total: &TpccTally,
        totals: &LevelTotals,
        (before, after): (&DbCounters, &DbCounters),
        new_orders: f64,
    ) -> Self {
        let per_s = |count: f64| {
            if totals.elapsed_s > 0.0 {
                count / totals.elapsed_s
            } else {
                0.0
            }
        };
        let transactions = total.transactions() as f64;
        let per_transaction = |count: f64| {
            if transactions > 0.0 {
                count / transactions
            } else {
                0.0
            }
        };
        let committed_new_orders =
            total.ended[Kind::NewOrder as usize].saturating_sub(total.rolled_back) as f64;
        TpccFigures {
            nopm: 60.0 * per_s(new_orders),
            client_nopm: 60.0 * per_s(committed_new_orders),
            tpm: after
                .transactions
                .zip(before.transactions)
                .map(|(after, before)| 60.0 * per_s(after - before)),
            transactions: total.transactions() as f64,
            transactions_per_s: per_s(total.transactions() as f64),
            rollbacks: total.rolled_back as f64,
            retries: total.retries.iter().map(|(_, count)| *count).sum::<u64>() as f64,
            delivery_skipped_districts: total.skipped_districts as f64,
            failed_transactions: total.failed as f64,
            connection_time_ms: if total.connections_s.is_empty() {
                0.0
            } else {
                1e3 * total.connections_s.iter().sum::<f64>() / total.connections_s.len() as f64
            },
            server_lio_per_s: per_s(after.lio - before.lio),
            server_pio_per_s: per_s(after.pio - before.pio),
            server_lio_per_transaction: per_transaction(after.lio - before.lio),
            server_pio_per_transaction: per_transaction(after.pio - before.pio),
            client_cpu_s: totals.cpu_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_is_five_percentages_summing_to_100() {
        assert_eq!(
            parse_mix("45,43,4,4,4").unwrap().cumulative(),
            [4500, 8800, 9200, 9600, 10_000]
        );
        assert_eq!(parse_mix("100,0,0,0,0").unwrap().0[0], 100.0);
        assert_eq!(
            parse_mix("44.5, 43.5, 4, 4, 4%").unwrap().cumulative()[1],
            8800
        );
        // Hundredths that floats hold only nearly (0.29 * 100 = 28.999999999999996).
        assert_eq!(
            parse_mix("45,42.71,0.29,8,4").unwrap().cumulative(),
            [4500, 8771, 8800, 9600, 10_000]
        );
        for bad in [
            "45,43,4,4",
            "45,43,4,4,5",
            "x,43,4,4,4",
            "-5,53,4,4,4",
            "45.001,42.999,4,4,4",
        ] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
    }
}
