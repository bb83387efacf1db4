//! The SLOB/pgio method against real databases. Each worker is a database session on its own
//! schema (table), running `SELECT sum(scratch) FROM t WHERE key BETWEEN k AND k + WORK_UNIT`
//! — or the matching update — as prepared statements; the figures come from the database's
//! own counters, read before and after every level, checked against the client's own count.

pub(crate) mod args;
pub(crate) mod instances;
pub(crate) mod objects;
pub(crate) mod session;
mod statements;
pub(crate) mod tables;
mod watch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::workload::server::server_process_cpu_s;
use crate::workload::{PaddedJob, ServerWorkload};
use anyhow::{Context, Result, bail};

use crate::workload::figures::level_figures;

use super::{
    JobShape, LevelFigures, LevelTotals, SessionConnection, Sessions, Workload, WorkloadInfo,
    WorkloadKind,
};
use crate::db::catalog::{ObjectKind, Owned, Verdict};
use crate::db::cluster::{Cluster, Replay, Route};
use crate::db::connect::{target::Target, tls};
use crate::db::{Database, DbCounters, Maintenance, TablesHeld};
use crate::error::UsageError;
use crate::error::locked;
pub use instances::InstanceFigures;
use session::{BlocksPer, DbSessionJob, SessionTally};
use statements::SlobStatements;

/// How the warning that the server counted more blocks than this client's sessions visited
/// begins: a campaign's part leaves it to `report`, which checks every part's together.
pub const COUNTED_OTHERS: &str = "the database counted";

/// Share of logical reads read from storage above which a level is not a cached test.
pub const NOT_CACHED_READS: f64 = 1e-4;
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
    /// `--rate`: the open-loop steps of each worker count (empty: closed loop only).
    pub rates: Vec<crate::latency::OfferedRate>,
    /// `--find`: every level but the first is paced by the search.
    pub searched: bool,
    /// The level's rate, statements per second for all its sessions (None: closed loop).
    pub rate: Option<f64>,
    /// Time every statement (false only to measure what that costs: benches/db_latency.rs).
    pub record_latency: bool,
    pub arrivals: crate::latency::Arrivals,
    /// The seed of random (Poisson) arrivals: each session's is derived from it.
    pub arrivals_seed: u64,
    /// `--latency-limit`: statements answered later than this are counted.
    pub latency_limit: Option<Duration>,
    /// `--route`: where each session goes when the target has several instances.
    pub route: Route,
    /// `--replay-limit`: how long the replicas may take to replay the primary's setup.
    pub replay_limit: Duration,
    /// The instance of a cluster one session runs on; None with one instance, where nothing
    /// is kept per instance and a failure ends the level.
    pub instance: Option<usize>,
}

pub struct DbWorkload {
    /// The instance setup ran on, where the blocks a statement visits are measured (the
    /// target itself, or a cluster's primary).
    database: Arc<dyn Database>,
    /// Every instance the sessions are spread over: one, or a cluster's.
    cluster: Cluster,
    options: DbOptions,
    schemas: u64,
    rows: u64,
    blocks: BlocksPer,
    /// The product and major version, for the job's shape.
    engine: String,
    baseline: Mutex<Option<Vec<Baseline>>>,
    /// Each worker's session's TLS, as it connected for the current level.
    connections: Mutex<std::collections::BTreeMap<usize, Option<tls::TlsFacts>>>,
    /// The sessions' tallies, handed in at each level's end.
    sessions: Arc<Sessions<SessionTally>>,
    /// Which instances are up, and their roles, as the level being run found them.
    watch: watch::InstanceWatch,
    /// The tables (and loop functions) the run reads, as setup recorded them: checked again
    /// before each level.
    read: Vec<Owned>,
    /// The lock on the tables, from a connection of its own, for the whole run.
    held: Mutex<Option<Box<dyn TablesHeld>>>,
}

/// One instance's counters at a level's start; None where they could not be read (an
/// instance that went away).
#[derive(Debug, Clone, Copy)]
struct Baseline {
    counters: Option<DbCounters>,
    server_cpu_s: Option<f64>,
}

/// The objects a run reads: SLOB's tables, and with `--server-loop` its loop functions.
fn objects_read(database: &dyn Database, server_loop: bool) -> Result<Vec<Owned>> {
    Ok(database
        .catalogue()?
        .into_iter()
        .filter(|object| object.claimed_by(&objects::SlobTables, database.upper_case_names()))
        .filter(|object| match object.kind {
            Some(ObjectKind::Table) => true,
            Some(ObjectKind::Function) => server_loop,
            None => false,
        })
        .collect())
}

/// Refuses a run whose tables (and server-side loops, with `--server-loop`) are not the
/// objects setup created: another role's table or view put under a catalogued name would be
/// read, or its function run, as corescale's. Checked before the run and again before each
/// level, by oid (`when` says which).
fn verify_tables(database: &dyn Database, read: &[Owned], when: &str) -> Result<()> {
    let verdicts = database.verify_owned(read)?;
    for (object, verdict) in read.iter().zip(verdicts) {
        if verdict != Verdict::Same {
            bail!(
                "{} in {} is not the object `corescale db setup` created ({}){when}: corescale reads only its own tables; check it, then run `corescale db teardown` and `corescale db setup` again",
                crate::format::printable(&object.name),
                database.target(),
                verdict.reason()
            );
        }
    }
    Ok(())
}

impl DbWorkload {
    /// The workload on every instance the targets name.
    pub fn new(targets: &[Target], options: DbOptions) -> Result<Self> {
        Self::on(Cluster::connect(targets)?, options)
    }

    /// The workload on instances already connected: its tables from the catalogue (the same
    /// on every instance, once the replicas replayed the primary's setup), and the blocks
    /// one statement visits by the primary's own instrumentation.
    fn on(cluster: Cluster, options: DbOptions) -> Result<Self> {
        options
            .route
            .check(&cluster.roles(), options.update_share > 0.0)?;
        let database = Arc::clone(cluster.primary()?);
        let by_schema_idle = options.route == Route::BySchema && cluster.len() > 1;
        let target = database.target().clone();
        if let Replay::NotWaited(why) = cluster.wait_for_replicas(options.replay_limit)? {
            say!("corescale: warning: {why}");
        }
        (cluster.forwarded().iter()).for_each(|note| say!("corescale: note: {note}"));
        crate::db::catalog::refuse_others_in_control(database.as_ref(), &[])?;
        let (schemas, rows) = objects::inventory(database.as_ref())?;
        if schemas == 0 {
            bail!(
                "no corescale tables in {target}: run `corescale db setup --target {target}` first"
            );
        }
        crate::db::catalog::warn_of_schema(database.as_ref())?;
        // Locked first, then checked: what is checked stays for the whole run.
        let read = objects_read(database.as_ref(), options.server_loop)?;
        let held = crate::db::catalog::hold_tables(database.as_ref(), &read)?;
        verify_tables(database.as_ref(), &read, "")?;
        if by_schema_idle && (schemas as usize) < cluster.len() {
            return Err(UsageError::new(format!(
                "--route by-schema places table k on instance k mod {}, and there are {schemas} table(s): some instances would get no session (set up at least {} schemas, or use --route round-robin)",
                cluster.len(),
                cluster.len()
            ))
            .into());
        }
        // The primary's inventory is read above; each other instance's is checked against it.
        for instance in cluster
            .instances
            .iter()
            .filter(|instance| !Arc::ptr_eq(&instance.database, &database))
        {
            let other = instance.database.target();
            let tables = objects::inventory(instance.database.as_ref())?;
            if tables != (schemas, rows) {
                bail!(
                    "{other} has {} corescale table(s) of {} rows, {target} {schemas} of {rows}: each instance must hold the primary's tables (run `corescale db setup` with every --target, which waits for the replicas)",
                    tables.0,
                    tables.1
                );
            }
        }
        if options.work_unit >= rows {
            return Err(UsageError::new(format!(
                "--work-unit {} is not below the {rows} rows per schema of {target}: give a smaller one, or set up larger tables",
                options.work_unit
            ))
            .into());
        }
        let select = SlobStatements::for_table(database.as_ref(), 0)
            .blocks_per_statement(database.as_ref(), rows, options.work_unit, false)
            .context("measuring the blocks one select visits")?;
        // Updates are sampled on every table: on PostgreSQL a page's first update after
        // VACUUM also clears its visibility-map bit, one block more, once. Every page of a
        // table of up to 1 GiB is changed once before the samples, rolled back, so a level
        // whose sessions reach a table for the first time counts what later levels do.
        let update = if options.update_share > 0.0 {
            let mut per_table = Vec::new();
            for schema in 0..schemas {
                per_table.push(
                    SlobStatements::for_table(database.as_ref(), schema)
                        .blocks_per_statement(
                            database.as_ref(),
                            rows,
                            options.update_work_unit.min(rows - 1),
                            true,
                        )
                        .with_context(|| {
                            format!("measuring the blocks one update of table {schema} visits")
                        })?,
                );
            }
            per_table.iter().sum::<f64>() / per_table.len() as f64
        } else {
            0.0
        };
        let engine = database
            .engine()
            .context("reading the database's version")?;
        // A first reading costs the server more than later ones (PostgreSQL plans its query,
        // getting hundreds of catalogue blocks): taken now, it is in no level's counts.
        database
            .counters()
            .context("reading the database's block counters")?;
        Ok(Self {
            database,
            watch: watch::InstanceWatch::new(&cluster),
            cluster,
            options,
            schemas,
            rows,
            blocks: BlocksPer { select, update },
            engine,
            baseline: Mutex::new(None),
            connections: Mutex::new(std::collections::BTreeMap::new()),
            sessions: Arc::default(),
            read,
            held: Mutex::new(held),
        })
    }

    /// Statements per round trip: the batch, or the statements of one server-side call.
    fn pipeline_depth(&self) -> u64 {
        if self.options.server_loop {
            session::SERVER_LOOP_STATEMENTS
        } else {
            self.options.pipeline.max(1) as u64
        }
    }

    /// Session `worker`'s connection, on the instance its route places it, or while that
    /// instance is down, on another that suits it (`InstanceWatch::stand_in`). With one
    /// instance, a failure to connect ends the level.
    fn open_placed(
        &self,
        worker: usize,
        schema: u64,
        roles: &[crate::db::cluster::Role],
    ) -> Result<(usize, Box<dyn crate::db::DbSession>)> {
        let placed = self
            .options
            .route
            .place(worker, schema, roles, self.options.arrivals_seed);
        let writes = self.options.update_share > 0.0;
        let mut instance = placed;
        for _ in 0..=self.cluster.len() {
            if self.per_instance() && self.watch.down(instance)?.is_some() {
                match self.watch.stand_in(placed, writes)? {
                    Some(other) if other != instance => instance = other,
                    _ => bail!(
                        "session {worker}: no instance that suits it answers (the one it is placed on, {}, is down)",
                        self.cluster.instances[placed].database.target()
                    ),
                }
            }
            let database = &self.cluster.instances[instance].database;
            match database.open_session() {
                Ok(session) => {
                    if instance != placed {
                        self.watch.moved_from(placed)?;
                    }
                    return Ok((instance, session));
                }
                Err(error) if self.per_instance() => {
                    self.watch.mark_down(instance, format!("{error:#}"))?;
                }
                Err(error) => {
                    return Err(
                        error.context(format!("opening session {worker} on {}", database.target()))
                    );
                }
            }
        }
        bail!("session {worker}: no instance of the cluster takes a session")
    }

    /// The target, or a cluster's instances with their roles and the route.
    fn instances_described(&self) -> String {
        if !self.per_instance() {
            return self.database.target().to_string();
        }
        let instances: Vec<String> = self
            .cluster
            .instances
            .iter()
            .map(|instance| format!("{} ({})", instance.database.target(), instance.role))
            .collect();
        format!(
            "{} instances, sessions placed {}: {}",
            self.cluster.len(),
            self.options.route,
            instances.join(", ")
        )
    }

    /// Whether figures are kept per instance: when there are several.
    fn per_instance(&self) -> bool {
        self.cluster.len() > 1
    }

    /// One instance's blocks and CPU over the level, from its counters at the start and now
    /// (or why they could not be read), and whether its maintenance ran meanwhile; with its
    /// index among the cluster's instances and its role.
    fn instance_reading(
        &self,
        (index, role): (usize, crate::db::cluster::Role),
        database: &dyn Database,
        before: Baseline,
        tallies: &[SessionTally],
    ) -> Result<(instances::InstanceReading, bool)> {
        let after = match database.counters() {
            Ok(after) => Ok(after),
            Err(error) if !self.per_instance() => return Err(error),
            Err(error) => Err(format!("{error:#}")),
        };
        let mut unread = None;
        let blocks = match (&before.counters, &after) {
            (Some(before), Ok(after)) => {
                let blocks = (after.lio - before.lio, after.pio - before.pio);
                // A restarted instance starts its counters afresh: no difference to take.
                if blocks.0 < 0.0 || blocks.1 < 0.0 {
                    unread = Some("its counters restarted during the level".to_string());
                    None
                } else {
                    Some(blocks)
                }
            }
            (None, _) => {
                unread = Some("not at the level's start".to_string());
                None
            }
            (_, Err(error)) => {
                unread = Some(error.clone());
                None
            }
        };
        let maintenance_ran = matches!(
            (
                before.counters.map(|counters| counters.maintenance),
                after.as_ref().map(|counters| counters.maintenance),
            ),
            (Some(Some(then)), Ok(Some(now))) if Maintenance::ran_between(then, now)
        );
        // Oracle's own DB CPU; else the server process (MariaDB), else the sessions'
        // backends (PostgreSQL).
        let db_cpu_s = match (
            after.as_ref().ok().and_then(|counters| counters.db_cpu_s),
            before.counters.and_then(|counters| counters.db_cpu_s),
        ) {
            (Some(now), Some(then)) => Some(now - then),
            _ => match (
                server_process_cpu_s(database).unwrap_or(None),
                before.server_cpu_s,
            ) {
                (Some(now), Some(then)) => Some(now - then),
                _ => tallies
                    .iter()
                    .filter(|tally| tally.instance == index)
                    .map(|tally| tally.backend_cpu_s)
                    .sum::<Option<f64>>(),
            },
        };
        let reading = instances::InstanceReading {
            instance: database.target().to_string(),
            role,
            blocks,
            db_cpu_s,
            unread,
        };
        Ok((reading, maintenance_ran))
    }

    /// The level's figures from every instance's reading and the sessions' own counts.
    fn db_figures(
        &self,
        readings: &[instances::InstanceReading],
        tallies: &[SessionTally],
        totals: &LevelTotals,
    ) -> DbFigures {
        let per = |count: f64, over: f64| if over > 0.0 { count / over } else { 0.0 };
        let read = || readings.iter().filter_map(|reading| reading.blocks);
        let lio: f64 = read().map(|(lio, _)| lio).sum();
        let pio: f64 = read().map(|(_, pio)| pio).sum();
        // Only instances whose counters were read count the client's blocks against them.
        let counted_blocks: f64 = tallies
            .iter()
            .filter(|tally| readings[tally.instance].blocks.is_some())
            .map(|tally| tally.client_blocks)
            .sum();
        let server_cpu = readings
            .iter()
            .map(|reading| reading.db_cpu_s)
            .sum::<Option<f64>>()
            .filter(|_| !tallies.is_empty());
        DbFigures {
            statements: tallies.iter().map(|tally| tally.statements as f64).sum(),
            updates: tallies.iter().map(|tally| tally.updates as f64).sum(),
            rows_visited: tallies.iter().map(|tally| tally.rows_visited as f64).sum(),
            client_blocks: tallies.iter().map(|tally| tally.client_blocks).sum(),
            db_lio: lio,
            db_pio: pio,
            db_lio_per_s: per(lio, totals.elapsed_s),
            db_lio_per_s_per_worker: per(lio, totals.elapsed_s * totals.workers as f64),
            db_pio_per_s: per(pio, totals.elapsed_s),
            // LIO counts every block got, PIO those read from storage among them.
            db_hit_ratio: if lio > 0.0 { 1.0 - pio / lio } else { 0.0 },
            db_lio_over_client_blocks: per(lio, counted_blocks),
            blocks_per_statement: self.blocks.select,
            blocks_per_update: (self.options.update_share > 0.0).then_some(self.blocks.update),
            pipeline_depth: self.pipeline_depth() as f64,
            client_cpu_s: totals.cpu_s,
            db_cpu_s: server_cpu,
            db_lio_per_db_cpu_s: server_cpu.map(|cpu| per(lio, cpu)),
            client_cpu_share: server_cpu.map(|cpu| per(totals.cpu_s, totals.cpu_s + cpu)),
            sessions_unpublished: Some(
                tallies
                    .iter()
                    .filter(|tally| !tally.published && tally.failed.is_none())
                    .count() as f64,
            )
            .filter(|&count| count > 0.0),
        }
    }

    /// What the level's figures cannot vouch for: the figures' own checks, maintenance in
    /// the database, and sessions of which only some ran over TLS.
    fn level_warnings(
        &self,
        figures: &DbFigures,
        maintenance_ran: bool,
        connections: &[SessionConnection],
    ) -> Vec<String> {
        let mut warnings = figures.warnings();
        if maintenance_ran {
            warnings.push(
                "autovacuum ran in the database during this level: its block reads are in the database's counts (run when it is idle, or after VACUUM ANALYZE)".to_string(),
            );
        }
        let encrypted = connections
            .iter()
            .filter(|connection| connection.tls)
            .count();
        if encrypted > 0 && encrypted < connections.len() {
            warnings.push(format!(
                "only {encrypted} of {} sessions ran over TLS (the others fell back to clear text): their figures are not comparable; set {} to make TLS required",
                connections.len(),
                self.database.target().settings().tls.vocabulary.mode_option()
            ));
        }
        warnings
    }
}

impl Workload for DbWorkload {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            kind: WorkloadKind::Db.into(),
            unit: "LIO".to_string(),
            job_size: self.options.job_statements,
            job_size_unit: "statements".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: format!(
                "SLOB/pgio method on {}: {} table(s) of {} one-row blocks; work unit {}, {:.0}% updates of {} rows; {} blocks per select{} by the database's own count{}",
                self.instances_described(),
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
            shape: Some(JobShape {
                engine: self.engine.clone(),
                statement: format!(
                    "work unit {}, {:.0}% updates of {} rows",
                    self.options.work_unit,
                    100.0 * self.options.update_share,
                    self.options.update_work_unit
                ),
                blocks_per_statement: self.blocks.select,
                pipeline_depth: self.pipeline_depth(),
                open_loop: !self.options.rates.is_empty() || self.options.searched,
                arrivals_seed: ((!self.options.rates.is_empty() || self.options.searched)
                    && self.options.arrivals == crate::latency::Arrivals::Poisson)
                    .then_some(self.options.arrivals_seed),
            }),
            server_on_this_host: Some(
                self.cluster
                    .instances
                    .iter()
                    .all(|instance| instance.database.on_this_host()),
            ),
        }
    }

    fn prepare(&self, worker: usize, workers: usize, rate: Option<f64>) -> Result<PaddedJob> {
        let schema = worker as u64 % self.schemas;
        let roles = self.watch.roles()?;
        let (instance, mut session) = self.open_placed(worker, schema, &roles)?;
        // Sessions that only read are held to it by the server: with no updates asked, and
        // on a replica.
        if self.options.update_share == 0.0
            || roles.get(instance) == Some(&crate::db::cluster::Role::Replica)
        {
            session
                .hold_read_only()
                .with_context(|| format!("holding session {worker} read-only"))?;
        }
        locked(&self.connections, "the sessions' connections")?.insert(worker, session.tls());
        let session = DbSessionJob::start(
            session,
            DbOptions {
                rate,
                instance: self.per_instance().then_some(instance),
                ..self.options.clone()
            },
            (worker, workers),
            SlobStatements::for_table(self.cluster.instances[instance].database.as_ref(), schema),
            self.rows,
            self.blocks,
            Arc::clone(&self.sessions),
        )?;
        Ok(PaddedJob::new(session))
    }

    /// Sessions wait for the server's answers: they need no CPU each.
    fn plan(&self) -> crate::workload::LevelPlan {
        crate::workload::LevelPlan {
            rates: self.options.rates.clone(),
            default_duration: Some(super::slob::DEFAULT_DURATION),
            cpu_bound: false,
            ..Default::default()
        }
    }

    /// The instances looked at again, and the tables: still locked, still setup's.
    fn level_preparing(&self) -> Result<()> {
        self.watch.look(&self.cluster)?;
        if let Some(held) = locked(&self.held, "the lock on the tables")?.as_mut() {
            held.still_held()?;
        }
        verify_tables(
            self.database.as_ref(),
            &self.read,
            " any more: it changed during the run, which ends here",
        )
    }

    fn level_started(&self) -> Result<()> {
        let mut baseline = Vec::with_capacity(self.cluster.len());
        for instance in &self.cluster.instances {
            let database = instance.database.as_ref();
            // With one instance its counters are the level's figure: unreadable, no level.
            // On a cluster an instance that went away is recorded, and the others measured.
            let counters = match database.counters() {
                Ok(counters) => Some(counters),
                Err(error) if !self.per_instance() => return Err(error),
                Err(_) => None,
            };
            baseline.push(Baseline {
                counters,
                server_cpu_s: server_process_cpu_s(database).unwrap_or(None),
            });
        }
        *locked(&self.baseline, "the level's baseline")? = Some(baseline);
        // Tallies a level that ended early left behind are not this level's.
        self.sessions.take()?;
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let Some(before) = locked(&self.baseline, "the level's baseline")?.take() else {
            bail!("the level's database counters were not read at its start");
        };
        let tallies = self.sessions.take()?;
        let roles = self.watch.roles()?;
        let mut readings = Vec::with_capacity(self.cluster.len());
        let mut maintenance_ran = false;
        for (index, (instance, before)) in self.cluster.instances.iter().zip(before).enumerate() {
            let database = instance.database.as_ref();
            let (reading, maintained) =
                self.instance_reading((index, roles[index]), database, before, &tallies)?;
            readings.push(reading);
            maintenance_ran |= maintained;
        }
        let figures = self.db_figures(&readings, &tallies, totals);
        let connections: Vec<SessionConnection> = SessionConnection::of_level(
            // Taken: the next level's sessions record theirs afresh (a campaign part's are
            // numbered among all the parts').
            &std::mem::take(&mut *locked(
                &self.connections,
                "the sessions' connections",
            )?),
            usize::MAX,
        );
        let mut warnings = self.level_warnings(&figures, maintenance_ran, &connections);
        let instances = if self.per_instance() {
            warnings.extend(self.watch.take_notes(&self.cluster)?);
            let (instances, said) =
                instances::instance_figures(readings, &tallies, totals.elapsed_s);
            warnings.extend(said);
            instances
        } else {
            Vec::new()
        };
        Ok(LevelFigures {
            rate_of_merit: Some(figures.db_lio_per_s),
            server_cpu_s: figures.db_cpu_s,
            connections,
            instances,
            ..LevelFigures::of(&figures, warnings)
        })
    }

    fn server(&self) -> Option<&dyn ServerWorkload> {
        Some(self)
    }
}

impl ServerWorkload for DbWorkload {
    /// Every instance's counts together (a cluster's timeline is the cluster's).
    fn server_counts(&self) -> Option<Result<crate::workload::ServerCounts>> {
        let mut counts = crate::workload::ServerCounts { lio: 0.0, pio: 0.0 };
        for instance in &self.cluster.instances {
            match instance.database.counters() {
                Ok(counters) => {
                    counts.lio += counters.lio;
                    counts.pio += counters.pio;
                }
                Err(error) => return Some(Err(error)),
            }
        }
        Some(Ok(counts))
    }

    fn server_counts_grain(&self) -> Option<Duration> {
        Some(self.database.counters_grain())
    }

    fn server_clock(&self) -> Option<Result<f64>> {
        self.database.server_clock().transpose()
    }

    fn local_server(&self) -> bool {
        self.cluster
            .instances
            .iter()
            .any(|instance| instance.database.on_this_host())
    }

    fn settles_first(&self) -> bool {
        true
    }

    fn server_processes(&self) -> Vec<u32> {
        self.cluster.server_main_pids()
    }
}

level_figures! {
    /// One db level's figures; `workload_figures` in the result, by these names.
    pub struct DbFigures / DbFigureNames {
        /// Statements answered, updates among them, rows they visited (the client's count).
        statements: f64,
        updates: f64,
        rows_visited: f64,
        /// Blocks the statements visited by the client's count (statements x blocks each).
        client_blocks: f64,
        /// The database's own block counters over the level, and per second.
        db_lio: f64,
        db_pio: f64,
        db_lio_per_s: f64,
        db_lio_per_s_per_worker: f64,
        db_pio_per_s: f64,
        db_hit_ratio: f64,
        /// The database's count over the client's: 1 when nothing else ran and the plan held.
        db_lio_over_client_blocks: f64,
        blocks_per_statement: f64,
        blocks_per_update: Option<f64>,
        /// Statements per round trip: 1 one at a time, 32 pipelined, 200 in a server loop.
        pipeline_depth: f64,
        client_cpu_s: f64,
        /// CPU seconds the database spent for the sessions, where measured.
        db_cpu_s: Option<f64>,
        db_lio_per_db_cpu_s: Option<f64>,
        client_cpu_share: Option<f64>,
        /// Sessions whose statistics were not published before the counters were read.
        sessions_unpublished: Option<f64>,
    }
}

impl DbFigures {
    /// What the level's figures cannot vouch for.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        // A miss costs a storage read where a hit costs a memory copy: a few per ten
        // thousand already move the throughput measured by more than its noise.
        if self.db_lio > 0.0 && self.db_pio / self.db_lio > NOT_CACHED_READS {
            warnings.push(format!(
                "not a cached test: {:.0} of {:.0} blocks ({:.3}%, hit ratio {:.2}%) were read from storage, more than the {}% the figures can hide (grow the buffer cache, or `db setup` with a smaller --scale)",
                self.db_pio,
                self.db_lio,
                100.0 * self.db_pio / self.db_lio,
                100.0 * self.db_hit_ratio,
                100.0 * NOT_CACHED_READS
            ));
        }
        if !(0.95..=1.05).contains(&self.db_lio_over_client_blocks) {
            warnings.push(format!(
                "{COUNTED_OTHERS} {:.3}x the blocks the client visited: other activity on the server, or a changed plan",
                self.db_lio_over_client_blocks
            ));
        }
        if let Some(unpublished) = self.sessions_unpublished {
            warnings.push(format!(
                "{unpublished:.0} session(s) could not publish their statistics before the level's counters were read: the database's count may be short",
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests;
