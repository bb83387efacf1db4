//! `run replay`: a captured workload sent again at rising speeds. Each speed is a level:
//! every lane of captured sessions sends its statements at their captured offsets over the
//! speed, each timed from when it was due, for the captured span over the speed; a lane
//! that falls behind leaves statements unsent, and the level says so.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::commit_order::CommitBoard;
use super::load::{Choice, LeftOut, Replay, load};
use super::options::{ReplayArgs, Synchronize, mapped_twice};
use super::session::{AsUsers, Connector, ReplaySessionJob, ReplayTally};
use crate::db::read_replicas::{Parts, ReadReplicas};
use crate::db::registry::connect;
use crate::db::{Database, DbCounters};
use crate::error::{UsageError, locked};
use crate::latency::{OfferedRate, SessionClock};
use crate::workload::figures::{level_figures, named_figure};
use crate::workload::server::{OnOneDatabase, server_tree_cpu_s};
use crate::workload::{
    BuildContext, JobShape, LevelFigures, LevelLength, LevelPlan, LevelSessions, LevelTotals,
    PaddedJob, ServerWorkload, Sessions, Workload, WorkloadInfo, WorkloadKind, WorkloadOptions,
};

/// Time past the span a level's window keeps, so the last statement due goes.
const GRACE: Duration = Duration::from_millis(5);

/// Where a replay's sessions go on a primary and its replicas.
const PARTS: Parts = Parts {
    writer: "a replay",
    reads: "the captured sessions that only read",
};
pub struct ReplayWorkload {
    /// The primary (the one instance, or where the sessions that write go), and the
    /// replicas the sessions that only read may go to.
    instances: ReadReplicas,
    /// Each instance (the primary, then the replicas) as each captured user connects
    /// (`--map`), by number in `replay.users`.
    as_user: Arc<[AsUsers]>,
    replay: Replay,
    lanes: Vec<Arc<[crate::workload::replay::load::Sent]>>,
    speeds: Vec<f64>,
    /// Statements per second of the replayed part at 1x.
    captured_rate: f64,
    engine: String,
    read_only_sessions: bool,
    before_level: Option<String>,
    latency_limit: Option<Duration>,
    sessions: Arc<Sessions<ReplayTally>>,
    baseline: Mutex<Option<(DbCounters, Option<f64>)>>,
    before_level_s: Mutex<Option<f64>>,
    /// The level's speed, as its sessions were prepared for it.
    level_speed: Mutex<f64>,
    synchronize: Synchronize,
    /// The level's commits as its lanes answer them (`--synchronize commits`).
    commits: Mutex<Option<Arc<CommitBoard>>>,
}

impl WorkloadOptions for ReplayArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn find(&self) -> Option<&crate::latency::FindArgs> {
        self.search.find.is_some().then_some(&self.search)
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        // Its sessions and levels are the capture's and --speed's (its plan's own sessions).
        if let Some(option) = context.sweep_options.first() {
            return Err(UsageError::new(format!(
                "run replay replays each captured session on a session of its own, once per speed: leave {option} out (--speed lists the levels)"
            ))
            .into());
        }
        if context.duration.is_some() || context.job_size.is_some() {
            return Err(UsageError::new(
                "a replay's level is one pass of the capture at its speed: leave --duration and --job-size out (--from and --window pick a part of the capture)",
            )
            .into());
        }
        if self.target.in_schema.is_some() {
            return Err(UsageError::new(
                "--in-schema names where corescale's own tables live; a replay sends the captured statements as they were: leave --in-schema out",
            )
            .into());
        }
        if let Some(option) = self.target.given_for_corescale_tables() {
            return Err(UsageError::new(format!(
                "{option} is for corescale's own tables; run replay sends a capture to one PostgreSQL or MySQL/MariaDB instance: leave {option} out"
            ))
            .into());
        }
        let choice = Choice {
            database: self.database.clone(),
            from: self.from,
            window: self.window,
            include_ddl: self.include_ddl,
            include_server_wide: self.include_server_wide,
            sessions_factor: self.sessions_factor,
            target_database: Some(self.target.database()?),
            max_idle: Some(self.max_idle),
        };
        let replay = load(&self.capture, &choice)?;
        let (count, shortened) = replay.idle_shortened;
        if count > 0 {
            say!(
                "corescale: note: {count} idle {} longer than --max-idle {} shortened to it ({:.1} s of the capture's idle time not waited for)",
                if count == 1 { "gap" } else { "gaps" },
                humantime::format_duration(self.max_idle),
                shortened.as_secs_f64()
            );
        }
        if let Some(said) = left_out_said(&replay.left_out) {
            say!("corescale: note: left out of the replay: {said}");
        }
        if self.sessions_factor > 1 {
            let (copies, statements) = replay.copied;
            let added = u64::from(self.sessions_factor - 1);
            say!(
                "corescale: note: --sessions-factor {}: each of {} read-only sessions gets {added} copies ({copies} sessions and {statements} statements added); the sessions that write are replayed once",
                self.sessions_factor,
                copies / added,
            );
        }
        let longest = replay
            .span
            .mul_f64(1.0 / self.speed.0.iter().copied().fold(f64::MAX, f64::min));
        let answer_limit = longest + Duration::from_secs(60);
        let targets = self.target.open_all_with(Some(answer_limit))?;
        let instances = ReadReplicas::connect(&targets, self.routing.route, PARTS)?;
        let as_user = self.as_user(&replay, &instances, answer_limit)?;
        Ok(Box::new(ReplayWorkload::new(
            self, replay, instances, as_user,
        )?))
    }

    fn connects(&self) -> bool {
        true
    }
}

impl ReplayArgs {
    /// The target as each captured user (by number in `replay.users`) connects: as `--map`
    /// names; else as the URL's user when that user holds no power the captured user's
    /// role on the target lacks (said in a warning when the names differ), or as that role
    /// itself, found as a mapped user's password is. A user connected as another connects
    /// once here, so a wrong password or a missing role ends the run before its first level.
    fn as_user(
        &self,
        replay: &Replay,
        instances: &ReadReplicas,
        answer_limit: Duration,
    ) -> Result<Vec<AsUsers>> {
        let target = instances.primary.target();
        if let Some(twice) = mapped_twice(&self.map) {
            return Err(UsageError::new(twice).into());
        }
        if let Some((captured, _)) = self
            .map
            .iter()
            .find(|(captured, _)| !replay.users.contains(captured))
        {
            return Err(UsageError::new(format!(
                "--map {captured}=...: no replayed session ran as '{captured}'; the captured users here are {}",
                quoted_list(&replay.users)
            ))
            .into());
        }
        let own = target.user();
        let mut powers = PowersOnTarget::read(instances.primary.as_ref(), &own)?;
        // Each user connected as on each instance (the primary, then the replicas).
        let mut opened: Vec<(String, Vec<Arc<dyn Database>>)> = Vec::new();
        // By user, then instance.
        let mut by_user: Vec<Vec<Arc<dyn Database>>> = Vec::new();
        let mut unmapped = Vec::new();
        for user in &replay.users {
            let mapped = self.map.iter().find(|(captured, _)| captured == user);
            // The URL user's powers this user's role lacks, read once: None when it may
            // connect as the URL's user.
            let beyond = match mapped {
                None if *user != own => powers.beyond(user)?,
                _ => None,
            };
            let to = match (mapped, &beyond) {
                (Some((_, to)), _) => to.clone(),
                (None, Some(_)) => user.clone(),
                (None, None) => {
                    if *user != own {
                        unmapped.push(user.clone());
                    }
                    own.clone()
                }
            };
            if to == own {
                by_user.push(instances.all().cloned().collect());
                continue;
            }
            if let Some((_, open)) = opened.iter().find(|(name, _)| *name == to) {
                by_user.push(open.clone());
                continue;
            }
            let open = self
                .open_as(&to, instances, answer_limit)
                .map_err(|error| match &beyond {
                    Some(beyond) => UsageError::new(format!(
                        "the captured user '{}' cannot be replayed as '{own}', which holds {beyond} that '{}' does not on the target, and connecting as '{}' failed ({}): create that role with the application's grants, or give --map {}=USER naming a user without those powers",
                        printable(user),
                        printable(user),
                        printable(user),
                        first_line(&error),
                        printable(user),
                    ))
                    .into(),
                    None => error,
                })?;
            opened.push((to, open.clone()));
            by_user.push(open);
        }
        let as_user = (0..instances.positions.len())
            .map(|instance| {
                by_user
                    .iter()
                    .map(|all| Arc::clone(&all[instance]))
                    .collect()
            })
            .collect();
        if !unmapped.is_empty() || replay.database != target.database() {
            say!(
                "corescale: warning: the captured sessions ran on database '{}' as {}; they are replayed on '{}'{} (--map CAPTURED=USER connects a user's sessions as a user of the target's)",
                replay.database,
                quoted_list(&replay.users),
                target.database(),
                if unmapped.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", {} as '{own}', which holds no power they lack",
                        quoted_list(&unmapped)
                    )
                }
            );
        }
        Ok(as_user)
    }

    /// Each instance (the primary, then the replicas) as `user`, connected once.
    fn open_as(
        &self,
        user: &str,
        instances: &ReadReplicas,
        answer_limit: Duration,
    ) -> Result<Vec<Arc<dyn Database>>> {
        let targets = self.target.open_all_as(user, Some(answer_limit))?;
        let mut open = Vec::with_capacity(instances.positions.len());
        for position in &instances.positions {
            let database = connect(&targets[*position])?;
            drop(database.open_script_session().with_context(|| {
                format!(
                    "connecting to {} as '{}'",
                    database.target(),
                    printable(user)
                )
            })?);
            open.push(database);
        }
        Ok(open)
    }
}

/// The powers of the URL's user and of each captured user's role, read once on the
/// primary.
struct PowersOnTarget {
    session: Box<dyn crate::db::DbSession>,
    dialect: crate::db::product::Dialect,
    own: super::powers::Powers,
}

impl PowersOnTarget {
    fn read(primary: &dyn Database, own: &str) -> Result<Self> {
        let dialect = primary.target().product.dialect;
        let mut session = primary.open_session()?;
        let own = super::powers::of_role(session.as_mut(), dialect, own)?.unwrap_or_default();
        Ok(Self {
            session,
            dialect,
            own,
        })
    }

    /// The URL user's powers that the captured `user`'s role on the target lacks, in
    /// words (all of them where no such role exists); None when it lacks none.
    fn beyond(&mut self, user: &str) -> Result<Option<String>> {
        let theirs =
            super::powers::of_role(self.session.as_mut(), self.dialect, user)?.unwrap_or_default();
        Ok((!theirs.cover(&self.own)).then(|| theirs.missing_from(&self.own)))
    }
}

fn printable(name: &str) -> String {
    crate::format::printable(name).to_string()
}

/// An error's first line, without the context below it.
fn first_line(error: &anyhow::Error) -> String {
    format!("{error:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The statements a replay does not send for what they reach, in words; None when none.
fn left_out_said(left_out: &LeftOut) -> Option<String> {
    let parts: Vec<String> = [
        (left_out.other_databases, "in or naming another database"),
        (
            left_out.database_changes,
            "USE (the replay stays in the URL's database)",
        ),
        (
            left_out.denied,
            "refused in production for want of a privilege",
        ),
        (
            left_out.server_wide,
            "reaching beyond the data (--include-server-wide sends them)",
        ),
        (left_out.ddl, "data definition (--include-ddl sends them)"),
        (left_out.passwords, "setting or holding a password"),
    ]
    .into_iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, why)| format!("{count} {why}"))
    .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("'{}'", crate::format::printable(name)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl ReplayWorkload {
    fn new(
        args: &ReplayArgs,
        mut replay: Replay,
        instances: ReadReplicas,
        as_user: Vec<AsUsers>,
    ) -> Result<Self> {
        let database = Arc::clone(&instances.primary);
        let target = database.target().clone();
        if let Some(note) = database.forwarded() {
            say!("corescale: note: {note}");
        }
        for warning in &replay.warnings {
            say!("corescale: warning: {warning}");
        }
        let (writes, first_write) = &replay.writes;
        if *writes > 0 && !args.allow_writes {
            return Err(UsageError::new(format!(
                "the captured workload writes ({writes} statements, the first: {}): replaying them changes {target}'s data; give --allow-writes to replay them there (with --before-level to restore the data before each speed), or capture a read-only workload",
                first_write.as_deref().unwrap_or_default()
            ))
            .into());
        }
        if *writes > 0 {
            say!(
                "corescale: warning: replaying {writes} captured writes on {target}: its data changes with each speed{}",
                if args.before_level.is_some() {
                    ", restored by --before-level before each"
                } else {
                    " (--before-level CMD restores it before each)"
                }
            );
        }
        let engine = database
            .engine()
            .context("reading the database's version")?;
        database
            .counters()
            .context("reading the database's block counters")?;
        let span_s = replay.span.as_secs_f64();
        if span_s <= 0.0 {
            bail!(
                "{}: the replayed part holds statements at a single instant: there is no pace to replay; give a longer --window",
                replay.name
            );
        }
        // The lanes move to where the sessions share them: the statements are held once.
        let lanes = std::mem::take(&mut replay.lanes)
            .into_iter()
            .map(Arc::from)
            .collect();
        Ok(Self {
            captured_rate: replay.statements as f64 / span_s,
            lanes,
            instances,
            as_user: as_user.into(),
            speeds: args.speed.0.clone(),
            engine,
            read_only_sessions: !args.allow_writes,
            before_level: args.before_level.clone(),
            latency_limit: args.latency.latency_limit,
            sessions: Arc::default(),
            baseline: Mutex::new(None),
            before_level_s: Mutex::new(None),
            level_speed: Mutex::new(1.0),
            synchronize: args.synchronize,
            commits: Mutex::new(None),
            replay,
        })
    }

    /// Each fingerprint's figures: its count, percentiles, rows (summed, refused, and their
    /// checksum in statement order, in the 52 bits a JSON number holds exactly), and the
    /// capture's own where the log gave them.
    fn fingerprint_figures(
        &self,
        total: &ReplayTally,
    ) -> Vec<(std::borrow::Cow<'static, str>, f64)> {
        let mut recorded = Vec::new();
        let rows = total.rows.iter();
        for (index, (times, rows)) in total.times.times().iter().zip(rows).enumerate() {
            let subject = format!("fingerprint {}", index + 1);
            let name = |figure: &str| named_figure(&subject, figure);
            recorded.push((name("count"), times.count() as f64));
            if let Some(times) = times.percentiles() {
                recorded.push((name("p50_ms"), times.p50_ms));
                recorded.push((name("p99_ms"), times.p99_ms));
            }
            if let Some(captured) = self.replay.captured[index].percentiles() {
                recorded.push((name("captured_p50_ms"), captured.p50_ms));
                recorded.push((name("captured_p99_ms"), captured.p99_ms));
            }
            recorded.push((name("rows"), rows.rows as f64));
            recorded.push((name("failed"), rows.failed as f64));
            recorded.push((name("rows_checksum"), (rows.checksum >> 12) as f64));
            if let Some(captured) = self.replay.captured_rows.get(index).copied().flatten() {
                recorded.push((name("captured_rows"), captured as f64));
            }
        }
        recorded
    }

    /// The fingerprints whose every captured statement was answered and whose rows differ
    /// from those the log gave: a divergence from production (other data, another plan).
    fn rows_against_capture(&self, total: &ReplayTally) -> Option<String> {
        if self.replay.copied.0 > 0 {
            return None;
        }
        let differing: Vec<String> = (total.rows.iter().enumerate())
            .filter_map(|(index, rows)| {
                let captured = self.replay.captured_rows.get(index).copied().flatten()?;
                let answered = rows.failed + total.times.times()[index].count();
                (answered == self.replay.counts[index] && rows.rows != captured).then(|| {
                    format!(
                        "fingerprint-{} ({} rows, the capture's {captured})",
                        index + 1,
                        rows.rows
                    )
                })
            })
            .collect();
        (!differing.is_empty()).then(|| {
            format!(
                "{} {} returned or changed other rows than the captured log says: {}; the replayed data or plans differ from production's",
                differing.len(),
                if differing.len() == 1 { "statement" } else { "statements" },
                differing.join(", ")
            )
        })
    }

    /// Each fingerprint's answers (`fingerprint-K`, from the send), then the capture's
    /// logged durations of it (`log:fingerprint-K`, the server's alone): a replay without
    /// another of its capture is compared with them.
    fn classes(&self, total: &ReplayTally) -> Vec<crate::latency::ClassTimes> {
        let send = Some(crate::latency::MeasuredFrom::Send);
        let mut classes = crate::latency::ClassTimes::of(&total.times.times(), send, |index| {
            format!("fingerprint-{}", index + 1)
        });
        if self.replay.copied.0 == 0 {
            classes.extend(crate::latency::ClassTimes::of(
                &self.replay.captured,
                send,
                |index| format!("{}fingerprint-{}", crate::latency::LOGGED, index + 1),
            ));
        }
        classes
    }

    fn speed_of(&self, rate: Option<f64>) -> f64 {
        rate.map_or(1.0, |rate| rate / self.captured_rate)
    }

    /// A level's length: one pass of the capture at its speed, and a little grace.
    fn pass(&self) -> LevelLength {
        LevelLength::Pass {
            span: self.replay.span,
            rate_1x: self.captured_rate,
            grace: GRACE,
        }
    }
}

impl Workload for ReplayWorkload {
    fn info(&self) -> WorkloadInfo {
        let fingerprints: Vec<String> = self
            .replay
            .fingerprints
            .iter()
            .enumerate()
            .map(|(index, print)| format!("fingerprint {}: {print}", index + 1))
            .collect();
        WorkloadInfo {
            kind: WorkloadKind::Replay.into(),
            unit: "statements".to_string(),
            job_size: self.replay.statements,
            job_size_unit: "statements".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: format!(
                "replay of {} (database '{}': {} sessions on {} lanes, {} statements over {:.3} s{}) on {}{}; {}",
                self.replay.name,
                self.replay.database,
                self.replay.sessions,
                self.lanes.len(),
                self.replay.statements,
                self.replay.span.as_secs_f64(),
                copies(&self.replay),
                self.instances.primary.target(),
                self.instances.placement(PARTS.reads),
                fingerprints.join("; ")
            ),
            shape: Some(JobShape {
                engine: self.engine.clone(),
                statement: format!(
                    "replay of {} ({}, database '{}', {} statements over {:.3} s)",
                    self.replay.name,
                    self.replay.digest,
                    self.replay.database,
                    self.replay.statements,
                    self.replay.span.as_secs_f64()
                ),
                blocks_per_statement: 0.0,
                pipeline_depth: 1,
                open_loop: true,
                arrivals_seed: None,
            }),
            server_on_this_host: Some(self.instances.primary.on_this_host()),
        }
    }

    fn prepare(&self, worker: usize, _workers: usize, rate: Option<f64>) -> Result<PaddedJob> {
        let speed = self.speed_of(rate);
        *locked(&self.level_speed, "the level's speed")? = speed;
        let lane = Arc::clone(&self.lanes[worker % self.lanes.len()]);
        let due_s: Arc<[f64]> = lane
            .iter()
            .map(|statement| statement.at_us as f64 / 1e6 / speed)
            .collect();
        let length = self.pass().at(rate);
        // The lane's share of the captured rate at this speed: the lanes sum to it.
        let lane_rate = lane.len() as f64 * speed / self.replay.span.as_secs_f64();
        let clock = SessionClock::scheduled("statement", self.latency_limit, due_s, lane_rate)
            .ending_after(length);
        let connector = Connector {
            as_user: Arc::clone(&self.as_user),
            read_only: self.read_only_sessions,
        };
        let job = ReplaySessionJob::start(
            connector,
            lane,
            worker,
            clock,
            self.replay.fingerprints.len(),
            Arc::clone(&self.sessions),
            locked(&self.commits, "the level's commits")?.clone(),
        )?;
        Ok(PaddedJob::new(job))
    }

    /// One level per speed, each one pass of the capture on its own lanes.
    fn plan(&self) -> LevelPlan {
        LevelPlan {
            sessions: LevelSessions::Own(self.lanes.len()),
            rates: self
                .speeds
                .iter()
                .map(|speed| OfferedRate::PerSecond(speed * self.captured_rate))
                .collect(),
            default_duration: self.pass().at(None),
            length: self.pass(),
            cpu_bound: false,
        }
    }

    fn level_preparing(&self) -> Result<()> {
        // Each level keeps the commit order afresh.
        *locked(&self.commits, "the level's commits")? = (self.synchronize == Synchronize::Commits)
            .then(|| Arc::new(CommitBoard::new(self.replay.commits)));
        let Some(command) = &self.before_level else {
            return Ok(());
        };
        let began = Instant::now();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running --before-level '{command}'"))?;
        if !status.success() {
            bail!(
                "--before-level '{command}' failed ({status}): the data may not be restored; fix the command and run again"
            );
        }
        *locked(&self.before_level_s, "the --before-level time")? =
            Some(began.elapsed().as_secs_f64());
        Ok(())
    }

    fn level_started(&self) -> Result<()> {
        *locked(&self.baseline, "the level's baseline")? = Some((
            self.instances.counters()?,
            server_tree_cpu_s(self.instances.primary.as_ref())?,
        ));
        self.sessions.take()?;
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let after = self.instances.counters()?;
        let Some((before, server_cpu_before)) = *locked(&self.baseline, "the level's baseline")?
        else {
            bail!("the level's database counters were not read at its start");
        };
        let mut total = ReplayTally::empty(self.replay.fingerprints.len());
        for tally in self.sessions.take()? {
            total.add(tally);
        }
        let elapsed_s = totals.elapsed_s.max(f64::MIN_POSITIVE);
        // Every lane's time over the level: what their waits are a share of.
        let lanes_s = self.lanes.len().max(1) as f64 * elapsed_s;
        let per = |count: f64| count / elapsed_s;
        let failed: u64 = total.failures.iter().map(|(_, count)| count).sum();
        let left_out = &self.replay.left_out;
        let server_cpu_s = match (
            server_tree_cpu_s(self.instances.primary.as_ref())?,
            server_cpu_before,
        ) {
            (Some(now), Some(then)) => Some(now - then),
            _ => None,
        };
        let figures = ReplayFigures {
            speed: *locked(&self.level_speed, "the level's speed")?,
            statements_sent: total.sent as f64,
            statements_per_s: per(total.sent as f64),
            failed_statements: failed as f64,
            sessions_with_errors: total.sessions_with_errors as f64,
            connections: total.connections as f64,
            statements_out_of_order: total.out_of_order as f64,
            connection_time_ms: if total.connections > 0 {
                1e3 * total.connecting_s / total.connections as f64
            } else {
                0.0
            },
            before_level_s: *locked(&self.before_level_s, "the --before-level time")?,
            left_out_other_databases: left_out.other_databases as f64,
            left_out_outside_window: left_out.outside_window as f64,
            left_out_ddl: left_out.ddl as f64,
            left_out_server_wide: left_out.server_wide as f64,
            left_out_copy: left_out.copy as f64,
            left_out_passwords: left_out.passwords as f64,
            left_out_database_changes: left_out.database_changes as f64,
            left_out_denied: left_out.denied as f64,
            server_lio_per_s: per(after.lio - before.lio),
            server_pio_per_s: per(after.pio - before.pio),
            client_cpu_s: totals.cpu_s,
            client_cpu_cores: totals.cpu_s / elapsed_s,
            client_cpus: crate::host::cpu_limit::usable_cpus(),
            sessions_waiting_share: total.waiting_s / lanes_s,
            busiest_session_waiting_share: total.busiest_waiting_s / elapsed_s,
            sessions_starved_share: total.starved_s.map(|starved| starved / lanes_s),
        };
        let mut recorded = crate::workload::figures::FigureSet::figures(&figures);
        recorded.extend(self.fingerprint_figures(&total));
        for (sqlstate, count) in &total.failures {
            recorded.push((named_figure("failures SQLSTATE", sqlstate), *count as f64));
        }
        let mut warnings = divergence(&total.failures, &self.replay.capture_errors);
        warnings.extend(self.rows_against_capture(&total));
        if total.out_of_order > 0 {
            warnings.push(format!(
                "{} statements were sent before a commit the capture shows before them had been answered: the level ended while a session waited; its rows may differ from the capture's",
                total.out_of_order
            ));
        }
        Ok(LevelFigures {
            recorded,
            warnings,
            rate_of_merit: None,
            server_cpu_s,
            connections: Vec::new(),
            instances: Vec::new(),
            classes: self.classes(&total),
        })
    }

    fn server(&self) -> Option<&dyn ServerWorkload> {
        Some(self)
    }
}

/// ", 3 copies of 40 read-only sessions": what --sessions-factor added to the capture's.
fn copies(replay: &Replay) -> String {
    let (sessions, statements) = replay.copied;
    if sessions == 0 {
        return String::new();
    }
    format!(", {sessions} of them and {statements} of the statements copies of read-only sessions")
}

/// The replay's refused statements said as what they are: divergence from the capture
/// (duplicate keys, missing rows on data the capture changed), beside its own errors.
fn divergence(
    failures: &[(String, u64)],
    captured: &std::collections::BTreeMap<String, u64>,
) -> Vec<String> {
    if failures.is_empty() {
        return Vec::new();
    }
    let said = |counts: &mut dyn Iterator<Item = (&String, &u64)>| {
        counts
            .map(|(sqlstate, count)| format!("{count} with SQLSTATE {sqlstate}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let replayed: u64 = failures.iter().map(|(_, count)| count).sum();
    let logged: u64 = captured.values().sum();
    vec![format!(
        "{replayed} replayed statements failed ({}) where the captured log had {logged} errors{}: the replay diverged from the captured workload (data it changed, rows it expected); restore the data before each speed with --before-level",
        said(&mut failures.iter().map(|(sqlstate, count)| (sqlstate, count))),
        if captured.is_empty() {
            String::new()
        } else {
            format!(" ({})", said(&mut captured.iter()))
        }
    )]
}

impl OnOneDatabase for ReplayWorkload {
    fn database(&self) -> &dyn Database {
        self.instances.primary.as_ref()
    }
}

level_figures! {
    /// One replay level's figures; `workload_figures` in the result, by these names (each
    /// fingerprint's and each SQLSTATE's follow them).
    pub struct ReplayFigures / ReplayFigureNames {
        speed: f64,
        /// Statements sent in the level (the summary's open-loop figures say how many were
        /// due), and per second of the level.
        statements_sent: f64,
        statements_per_s: f64,
        /// Statements the server refused, counted by SQLSTATE.
        failed_statements: f64,
        /// Captured sessions with a statement refused.
        sessions_with_errors: f64,
        /// Statements sent before a commit the capture shows before them was answered (the
        /// level's end came first; `--synchronize commits`).
        statements_out_of_order: f64,
        /// Connections the lanes opened (one per captured session), and their mean time.
        connections: f64,
        connection_time_ms: f64,
        /// How long --before-level took before this level.
        before_level_s: Option<f64>,
        /// Captured statements not replayed, by why.
        left_out_other_databases: f64,
        left_out_outside_window: f64,
        left_out_ddl: f64,
        left_out_server_wide: f64,
        left_out_copy: f64,
        left_out_passwords: f64,
        /// `USE` statements: the replay stays in the URL's database.
        left_out_database_changes: f64,
        /// Refused in production for want of a privilege: never sent.
        left_out_denied: f64,
        /// The database's own block counters over the level, per second.
        server_lio_per_s: f64,
        server_pio_per_s: f64,
        client_cpu_s: f64,
        /// The client's CPU over the level, in cores, and the CPUs it may use (its
        /// affinity and quota): near them, the client limited the replay.
        client_cpu_cores: f64,
        client_cpus: f64,
        /// The share of the level the sessions spent waiting on answers, on average and the
        /// busiest one's: who limited a replay that fell behind (the server, when a session
        /// waited on it most of the level; else the client, late in sending).
        sessions_waiting_share: f64,
        busiest_session_waiting_share: f64,
        /// The share of the level the sessions' threads waited, runnable, for a CPU of the
        /// client's (its run delay): a client short of CPU, whatever its CPU time says.
        sessions_starved_share: Option<f64>,
    }
}
