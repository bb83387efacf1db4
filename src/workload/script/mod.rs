//! `run script`: a DBA's own statements under the same sweep, latency and verdicts as the
//! SLOB method. Each worker is a database session running the script's transactions (one
//! file each, picked by weight) with pgbench's `\set` variables bound to prepared
//! statements; a level counts transactions, statements, failures by SQLSTATE, each
//! statement's response times, and the database's own block counters around it.

pub(crate) mod access;
pub mod eval;
pub mod parse;
mod session;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use sha2::Digest as _;

use crate::db::connect::options::DbTargetArgs;
use crate::db::connect::target::Target;
use crate::db::registry::connect;
use crate::db::{Database, DbCounters};
use crate::error::{UsageError, locked};
use crate::latency::Arrivals;
use crate::workload::ServerWorkload;
use crate::workload::figures::{level_figures, named_figure};
use crate::workload::server::{OnOneDatabase, server_process_cpu_s};
use crate::workload::{
    BuildContext, JobShape, LevelFigures, LevelTotals, PaddedJob, SessionConnection, Sessions,
    Workload, WorkloadInfo, WorkloadKind, WorkloadOptions,
};
use parse::{Script, Variables, parse_script};
pub(crate) use session::sleep_within;
use session::{ScriptSessionJob, ScriptTally};

/// How long a script level lasts unless `--duration` says otherwise.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Transactions a fixed-work job runs (`--job-size`).
const DEFAULT_JOB_TRANSACTIONS: u64 = 1_000;

const HEADING: &str = "script (a DBA's own statements)";

/// `run script`: the options.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "A script is pgbench's: SQL statements ending in ';' with :name variables (bound, never pasted in), \\set name expression (random, random_gaussian, random_exponential, random_zipfian, abs, least, greatest, int, double, sqrt, pi, mod) \\sleep n [us|ms|s], and on PostgreSQL \\startpipeline ... \\endpipeline around statements sent together. One file is one transaction.\n\nExamples:\n  corescale run script --target postgres://app@db1/shop --file select.sql \\\n      --sweep 1,2,4,8\n  corescale run script --target mysql://root@127.0.0.1/test \\\n      --file order.sql@9 --file report.sql@1 --init load.sql\n  corescale run script --target postgres:///shop --file select.sql \\\n      --set scale=100 --rate 1000,2000 --latency-limit 20ms\n  # the largest rate that holds p99 <= 5 ms, within 5%:\n  corescale run script --target postgres:///shop --file select.sql \\\n      --find 'p99<=5ms' -o found.json"
)]
#[command(next_help_heading = HEADING)]
// A script's statements are the DBA's, in the role's own schema, on PostgreSQL or MySQL/MariaDB
// and with no setup of corescale's: the options for corescale's own tables are hidden, and
// refused when given.
#[command(mut_arg("in_schema", |arg| arg.hide(true)))]
#[command(mut_arg("service_base", |arg| arg.hide(true)))]
#[command(mut_arg("service_max", |arg| arg.hide(true)))]
#[command(mut_arg("replay_limit", |arg| arg.hide(true)))]
#[command(mut_arg("rate", |arg| arg.help(crate::latency::TRANSACTIONS_RATE_HELP)))]
#[command(mut_arg("arrivals", |arg| arg.help(crate::latency::TRANSACTIONS_ARRIVALS_HELP)))]
#[command(mut_arg("latency_limit", |arg| arg.help("Count the transactions answered later than this (e.g. 50ms)")))]
pub struct ScriptArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// A script file, with its weight after '@' when there are several (a.sql@9).
    #[arg(long = "file", value_name = "FILE[@WEIGHT]", required = true, value_parser = parse_weighted)]
    pub files: Vec<(std::path::PathBuf, u64)>,

    /// A script run once before the sweep (its tables and rows are the DBA's: nothing it
    /// creates is dropped by corescale).
    #[arg(long, value_name = "FILE")]
    pub init: Option<std::path::PathBuf>,

    /// A variable's value for every session, as pgbench's -D (scale=100).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub settings: Vec<(String, eval::Value)>,

    /// Count up to this many failed transactions per level by SQLSTATE and go on (a failed
    /// transaction is rolled back); one more ends the level. Default 0: the first failure
    /// ends it with the statement and the server's message.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_failures: u64,

    #[command(flatten)]
    pub pacing: crate::latency::PacingArgs,

    #[command(flatten)]
    pub latency: crate::latency::LatencyLimitArgs,

    #[command(flatten)]
    pub search: crate::latency::FindArgs,
}

/// "a.sql@9": the file and its weight (1 when not given).
fn parse_weighted(text: &str) -> Result<(std::path::PathBuf, u64), String> {
    match text.rsplit_once('@') {
        Some((file, weight)) if !file.is_empty() && weight.bytes().all(|b| b.is_ascii_digit()) => {
            match weight.parse::<u64>() {
                Ok(weight) if (1..=1_000_000).contains(&weight) => Ok((file.into(), weight)),
                _ => Err(format!(
                    "weight '{weight}' in '{text}' is not a whole number from 1 to 1000000"
                )),
            }
        }
        _ => Ok((text.into(), 1)),
    }
}

/// "scale=100": a variable and its value (an integer, or a double).
fn parse_setting(text: &str) -> Result<(String, eval::Value), String> {
    let (name, value) = text
        .split_once('=')
        .filter(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .ok_or_else(|| format!("'{text}' is not NAME=VALUE (scale=100)"))?;
    let value = value.trim();
    let integer = value
        .strip_prefix(['-', '+'])
        .unwrap_or(value)
        .bytes()
        .all(|byte| byte.is_ascii_digit());
    let value = match value.parse::<i64>() {
        Ok(value) => eval::Value::Int(value),
        Err(_) if integer && !value.is_empty() => {
            return Err(format!(
                "'{value}' in '{text}' is outside a 64-bit integer ({} to {}): give a smaller number",
                i64::MIN,
                i64::MAX
            ));
        }
        Err(_) => match value.parse::<f64>() {
            Ok(parsed) if !parsed.is_finite() => {
                return Err(format!(
                    "'{value}' in '{text}' is beyond a double's range: give a smaller number"
                ));
            }
            // A number that underflows to zero is not the zero it was written as.
            Ok(parsed) if parsed == 0.0 && mantissa_has_digits(value) => {
                return Err(format!(
                    "'{value}' in '{text}' is too small for a double and would become 0: give 0, or a larger number"
                ));
            }
            Ok(parsed) => eval::Value::Double(parsed),
            Err(_) => return Err(format!("'{value}' in '{text}' is not a number")),
        },
    };
    Ok((name.to_string(), value))
}

/// Refuses, before the run, a script whose statements the role may not run, naming each
/// with the server's own words: on a session of its own, each statement is checked the way
/// the server checks privileges without running it (`DbSession::missing_privilege`).
fn refuse_missing_privileges(
    database: &dyn Database,
    scripts: &[Script],
    rendered: &[(String, Vec<parse::Variable>)],
) -> Result<()> {
    let mut probe = database
        .open_script_session()
        .context("opening a session to check the script's privileges")?;
    let mut lacking = Vec::new();
    for (statement, (sql, bound)) in scripts.iter().flat_map(Script::statements).zip(rendered) {
        if let Some(why) = probe.missing_privilege(sql, bound.len())? {
            lacking.push(format!(
                "{} ({}): {}",
                statement.shown(),
                statement.place,
                crate::format::printable(&why)
            ));
        }
    }
    if !lacking.is_empty() {
        bail!(
            "{} lacks privileges the script needs: {}; grant them, or run as a role that has them",
            database.target().user(),
            lacking.join("; ")
        );
    }
    Ok(())
}

/// Whether a number's mantissa (before any exponent) has a digit other than 0.
fn mantissa_has_digits(number: &str) -> bool {
    number
        .split(['e', 'E'])
        .next()
        .unwrap_or("")
        .bytes()
        .any(|byte| (b'1'..=b'9').contains(&byte))
}

/// The scripts as parsed, with everything a session needs to run them.
#[derive(Debug, Clone)]
pub(crate) struct Scripts {
    pub scripts: Vec<Script>,
    /// Each script's weight, in order.
    pub weights: Vec<u64>,
    pub variables: Variables,
    /// Values every session starts with (--set, and :client_id set per session).
    pub settings: Vec<(parse::Variable, eval::Value)>,
    /// Each statement's SQL with the product's placeholders, and its bound variables, by
    /// the statement's number across all scripts.
    pub rendered: Vec<(String, Vec<parse::Variable>)>,
    pub max_failures: u64,
    pub latency_limit: Option<Duration>,
    pub job_transactions: u64,
    /// A fixed-time level's length (`--duration`), which a `\sleep` does not outlast.
    pub level_length: Option<Duration>,
}

impl Scripts {
    /// Statements of every script, in order: the numbers `rendered` and the figures use.
    pub fn statements(&self) -> impl Iterator<Item = &parse::Statement> {
        self.scripts.iter().flat_map(Script::statements)
    }
}

/// Reads and parses a script file; an error names the file, line and column.
/// The largest script corescale reads: pgbench's scripts are a few lines; a larger file is
/// a mistake (a dump, a device), not a transaction.
const MOST_SCRIPT_BYTES: u64 = 16 << 20;

fn read_script(path: &std::path::Path, variables: &mut Variables) -> Result<(Script, String)> {
    let text = read_script_text(path)?;
    let script = parse_script(&path.display().to_string(), &text, variables)
        .map_err(|error| UsageError::new(error.to_string()))?;
    Ok((script, text))
}

/// A script's text: a regular file only (a FIFO would block, /dev/zero never end), at most
/// 16 MiB, read no further than that even if it grows meanwhile; a leading BOM is dropped,
/// not sent to the server.
fn read_script_text(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let shown = crate::format::printable(&path.display().to_string());
    let metadata = std::fs::metadata(path)
        .map_err(|error| crate::error::unreadable(&format!("the script '{shown}'"), error))?;
    if !metadata.is_file() {
        return Err(UsageError::new(format!(
            "the script '{shown}' is not a regular file (a device, a FIFO or a directory): give a file of SQL"
        ))
        .into());
    }
    let too_large = || {
        UsageError::new(format!(
            "the script '{shown}' is larger than {} MiB: a script holds one transaction's statements; give a smaller file",
            MOST_SCRIPT_BYTES >> 20
        ))
    };
    if metadata.len() > MOST_SCRIPT_BYTES {
        return Err(too_large().into());
    }
    let mut bytes = Vec::new();
    // Opened non-blocking and looked at again: a FIFO swapped in meanwhile is not waited on.
    crate::input_file::open_regular(path, &format!("the script '{shown}'"))?
        .take(MOST_SCRIPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the script '{shown}'"))?;
    if bytes.len() as u64 > MOST_SCRIPT_BYTES {
        return Err(too_large().into());
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| UsageError::new(format!("the script '{shown}' is not UTF-8 text")))?;
    Ok(match text.strip_prefix('\u{FEFF}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

pub struct ScriptWorkload {
    database: Arc<dyn Database>,
    scripts: Arc<Scripts>,
    init: Option<(Script, Variables)>,
    /// The job in words: each file, its weight and its text's hash.
    job: String,
    engine: String,
    rates: Vec<crate::latency::OfferedRate>,
    /// `--find`: every level but the first is paced by the search.
    searched: bool,
    arrivals: Arrivals,
    /// The database's counters, and its local server process's CPU time, at the level's start.
    baseline: Mutex<Option<(DbCounters, Option<f64>)>>,
    connections:
        Mutex<std::collections::BTreeMap<usize, Option<crate::db::connect::tls::TlsFacts>>>,
    sessions: Arc<Sessions<ScriptTally>>,
    /// The level's failed transactions over all sessions (`--max-failures` is per level).
    failures: Arc<std::sync::atomic::AtomicU64>,
    /// The target takes no writes: each session is held read-only at the server too, so a
    /// write the statement check could not see fails whoever the user is.
    read_only: bool,
}

impl WorkloadOptions for ScriptArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        let answer_limit = context.duration.unwrap_or(DEFAULT_DURATION) + Duration::from_secs(30);
        if self.target.in_schema.is_some() {
            return Err(UsageError::new(
                "--in-schema names where corescale's own tables live; a script's statements are yours and run under the role's own search path: name the schema in the script, or leave --in-schema out",
            )
            .into());
        }
        if let Some(option) = self.target.given_for_corescale_tables() {
            return Err(UsageError::new(format!(
                "{option} is for corescale's own tables (db setup, db teardown, run db); run script runs your statements on one PostgreSQL or MySQL/MariaDB instance: leave {option} out"
            ))
            .into());
        }
        let target = self.target.open_with(Some(answer_limit))?;
        Ok(Box::new(ScriptWorkload::new(self, &target, context)?))
    }

    fn connects(&self) -> bool {
        true
    }

    fn find(&self) -> Option<&crate::latency::FindArgs> {
        self.search.find.is_some().then_some(&self.search)
    }
}

/// Each `--file`'s script, its variables named in `variables`, and the job's name: each
/// file's name (with its weight when there are several) and the start of its SHA-256.
fn read_scripts(
    args: &ScriptArgs,
    variables: &mut Variables,
) -> Result<(Vec<Script>, Vec<String>)> {
    let mut scripts = Vec::new();
    let mut job = Vec::new();
    for (path, weight) in &args.files {
        let (script, text) = read_script(path, variables)?;
        let digest = sha2::Sha256::digest(text.as_bytes());
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        job.push(if args.files.len() > 1 {
            format!(
                "{name}@{weight} (sha256 {})",
                crate::format::hex(&digest[..6])
            )
        } else {
            format!("{name} (sha256 {})", crate::format::hex(&digest[..6]))
        });
        scripts.push(script);
    }
    Ok((scripts, job))
}

/// Every variable is set somewhere before the run: by a `\set`, `--set`, or `:client_id`.
fn every_variable_set(
    scripts: &[Script],
    variables: &Variables,
    settings: &[(parse::Variable, eval::Value)],
) -> Result<()> {
    let set: Vec<parse::Variable> = scripts
        .iter()
        .flat_map(|script| &script.commands)
        .filter_map(|command| match command {
            parse::Command::Set { variable, .. } => Some(*variable),
            _ => None,
        })
        .chain(settings.iter().map(|(variable, _)| *variable))
        .collect();
    if let Some(unset) = variables
        .0
        .iter()
        .enumerate()
        .find(|(variable, name)| !set.contains(variable) && name.as_str() != "client_id")
    {
        return Err(UsageError::new(format!(
            "the script uses :{name}, which no \\set sets: give it with --set {name}=VALUE (pgbench's :scale is the scale of `pgbench -i`)",
            name = unset.1
        ))
        .into());
    }
    Ok(())
}

impl ScriptWorkload {
    fn new(args: &ScriptArgs, target: &Target, context: &BuildContext) -> Result<Self> {
        let mut variables = Variables::default();
        let (scripts, job) = read_scripts(args, &mut variables)?;
        let init = match &args.init {
            Some(path) => {
                let mut init_variables = Variables::default();
                let (script, _) = read_script(path, &mut init_variables)?;
                Some((script, init_variables))
            }
            None => None,
        };
        let mut settings = Vec::new();
        for (name, value) in &args.settings {
            let Some(variable) = variables.find(name) else {
                return Err(
                    UsageError::new(format!("--set {name}=...: no script uses :{name}")).into(),
                );
            };
            settings.push((variable, *value));
        }
        every_variable_set(&scripts, &variables, &settings)?;
        if target.product.max_pipeline <= 1
            && let Some(place) = scripts.iter().find_map(Script::first_pipeline)
        {
            return Err(UsageError::new(format!(
                "{place}: \\startpipeline: {} answers each statement before the next is sent, and pipelines need PostgreSQL; run the statements without \\startpipeline and \\endpipeline",
                target.product.name
            ))
            .into());
        }
        let database = connect(target)?;
        if let Some(note) = database.forwarded() {
            say!("corescale: note: {note}");
        }
        let placeholder = target.product.placeholder;
        let rendered: Vec<(String, Vec<parse::Variable>)> = scripts
            .iter()
            .flat_map(Script::statements)
            .map(|statement| statement.render(placeholder))
            .collect();
        let read_only = database
            .read_only()
            .context("asking whether the target takes writes")?;
        if read_only && scripts.iter().any(Script::writes) {
            let writing = scripts
                .iter()
                .flat_map(Script::statements)
                .find(|statement| statement.writes)
                .map(|statement| format!("{} ({})", statement.shown(), statement.place))
                .unwrap_or_default();
            return Err(UsageError::new(format!(
                "{target} is read-only (a replica, or read-only by its settings), and the script writes: {writing}; run it against the primary"
            ))
            .into());
        }
        refuse_missing_privileges(database.as_ref(), &scripts, &rendered)?;
        let engine = database
            .engine()
            .context("reading the database's version")?;
        database
            .counters()
            .context("reading the database's block counters")?;
        let scripts = Scripts {
            weights: args.files.iter().map(|(_, weight)| *weight).collect(),
            scripts,
            variables,
            settings,
            rendered,
            max_failures: args.max_failures,
            latency_limit: args.latency.latency_limit,
            job_transactions: context.job_size.unwrap_or(DEFAULT_JOB_TRANSACTIONS),
            level_length: context
                .duration
                .or(context.job_size.is_none().then_some(DEFAULT_DURATION)),
        };
        Ok(Self {
            database,
            scripts: Arc::new(scripts),
            init,
            job: job.join(" + "),
            engine,
            rates: args.pacing.rates(),
            searched: args.search.find.is_some(),
            arrivals: args.pacing.arrivals,
            baseline: Mutex::new(None),
            connections: Mutex::default(),
            sessions: Arc::default(),
            failures: Arc::default(),
            read_only,
        })
    }
}

/// Evaluates each `\set` of a script in order with a fixed generator, keeping what fails
/// as a message: for the script parser's fuzz target, which looks for panics.
#[doc(hidden)]
pub fn try_evaluations(script: &Script, variables: &Variables) -> Vec<Result<eval::Value, String>> {
    let mut values = vec![None; variables.0.len()];
    let mut random = crate::rng::SessionRng::for_worker(0, 7);
    let mut outcomes = Vec::new();
    for command in &script.commands {
        if let parse::Command::Set {
            variable, value, ..
        } = command
        {
            let outcome = eval::evaluate(value, &values, variables, &mut random);
            if let Ok(value) = outcome {
                values[*variable] = Some(value);
            }
            outcomes.push(outcome);
        }
    }
    outcomes
}

impl Workload for ScriptWorkload {
    fn info(&self) -> WorkloadInfo {
        let statements: Vec<String> = self
            .scripts
            .statements()
            .enumerate()
            .map(|(index, statement)| format!("statement {}: {}", index + 1, statement.text))
            .collect();
        WorkloadInfo {
            kind: WorkloadKind::Script.into(),
            unit: "transactions".to_string(),
            job_size: self.scripts.job_transactions,
            job_size_unit: "transactions".to_string(),
            bytes_per_worker: 0,
            shared_bytes: 0,
            array_bytes: None,
            description: format!(
                "the DBA's script {} on {}{}; {}",
                self.job,
                self.database.target(),
                self.init
                    .as_ref()
                    .map(|(init, _)| format!(", set up once by {}", init.name))
                    .unwrap_or_default(),
                statements.join("; ")
            ),
            shape: Some(JobShape {
                engine: self.engine.clone(),
                statement: format!("script {}", self.job),
                blocks_per_statement: 0.0,
                pipeline_depth: 1,
                open_loop: !self.rates.is_empty() || self.searched,
                arrivals_seed: None,
            }),
            server_on_this_host: Some(self.database.on_this_host()),
        }
    }

    fn setup(&mut self) -> Result<()> {
        let Some((init, variables)) = &self.init else {
            return Ok(());
        };
        let mut connection = self.database.open_script_session()?;
        session::run_once(
            connection.as_mut(),
            init,
            variables,
            self.database.target().product.placeholder,
        )
        .with_context(|| format!("running the set-up script {}", init.name))
    }

    fn prepare(&self, worker: usize, workers: usize, rate: Option<f64>) -> Result<PaddedJob> {
        let started = std::time::Instant::now();
        let mut connection = self.database.open_script_session()?;
        if self.read_only {
            connection
                .hold_read_only()
                .context("holding the session read-only at the server")?;
        }
        let connection_s = started.elapsed().as_secs_f64();
        locked(&self.connections, "the sessions' connections")?.insert(worker, connection.tls());
        let job = ScriptSessionJob::start(
            connection,
            Arc::clone(&self.scripts),
            (worker, workers),
            rate.map(|rate| (rate, self.arrivals)),
            connection_s,
            (Arc::clone(&self.sessions), Arc::clone(&self.failures)),
        )?;
        Ok(PaddedJob::new(job))
    }

    fn plan(&self) -> crate::workload::LevelPlan {
        crate::workload::LevelPlan {
            rates: self.rates.clone(),
            default_duration: Some(DEFAULT_DURATION),
            cpu_bound: false,
            ..Default::default()
        }
    }

    fn level_started(&self) -> Result<()> {
        *locked(&self.baseline, "the level's baseline")? = Some((
            self.database.counters()?,
            server_process_cpu_s(self.database.as_ref())?,
        ));
        self.sessions.take()?;
        self.failures.store(0, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn level_figures(&self, totals: &LevelTotals) -> Result<LevelFigures> {
        let after = self.database.counters()?;
        let Some((before, server_cpu_before)) = *locked(&self.baseline, "the level's baseline")?
        else {
            bail!("the level's database counters were not read at its start");
        };
        let tallies = self.sessions.take()?;
        let sessions = tallies.len();
        let per = |count: f64| {
            if totals.elapsed_s > 0.0 {
                count / totals.elapsed_s
            } else {
                0.0
            }
        };
        let total = ScriptTally::sum(tallies, self.scripts.statements().count());
        // The server process (MariaDB), else the sessions' backends (PostgreSQL).
        let server_cpu_s = match (
            server_process_cpu_s(self.database.as_ref())?,
            server_cpu_before,
        ) {
            (Some(now), Some(then)) => Some(now - then),
            _ => total.backend_cpu_s,
        }
        .filter(|_| sessions > 0);
        let figures = ScriptFigures {
            transactions: total.transactions as f64,
            transactions_per_s: per(total.transactions as f64),
            statements: total.statements as f64,
            statements_per_s: per(total.statements as f64),
            failed_transactions: total.failed as f64,
            rows: total.rows as f64,
            latency_average_ms: total.mean_ms(),
            latency_stddev_ms: total.stddev_ms(),
            connection_time_ms: total.connection_ms(),
            server_lio_per_s: per(after.lio - before.lio),
            server_pio_per_s: per(after.pio - before.pio),
            client_cpu_s: totals.cpu_s,
        };
        let mut recorded = crate::workload::figures::FigureSet::figures(&figures);
        for (index, statement) in total.statements_times.times().iter().enumerate() {
            let subject = format!("statement {}", index + 1);
            let name = |figure: &str| named_figure(&subject, figure);
            if let Some(times) = statement.percentiles() {
                recorded.push((name("mean_ms"), times.mean_ms));
                recorded.push((name("p50_ms"), times.p50_ms));
                recorded.push((name("p99_ms"), times.p99_ms));
                recorded.push((name("p999_ms"), times.p999_ms));
            }
            recorded.push((name("failures"), total.statement_failures[index] as f64));
        }
        for (sqlstate, count) in &total.failures {
            recorded.push((named_figure("failures SQLSTATE", sqlstate), *count as f64));
        }
        let mut warnings = Vec::new();
        if total.failed > 0 {
            let by_code: Vec<String> = total
                .failures
                .iter()
                .map(|(sqlstate, count)| format!("{count} with SQLSTATE {sqlstate}"))
                .collect();
            warnings.push(format!(
                "{} of {} transactions failed and were rolled back ({}): they are not in the rate or the response times",
                total.failed,
                total.failed + total.transactions,
                by_code.join(", ")
            ));
        }
        let connections: Vec<SessionConnection> = SessionConnection::of_level(
            // Taken: the next level's sessions record theirs afresh (a campaign part's are
            // numbered among all the parts').
            &std::mem::take(&mut *locked(
                &self.connections,
                "the sessions' connections",
            )?),
            usize::MAX,
        );
        Ok(LevelFigures {
            recorded,
            warnings,
            rate_of_merit: None,
            server_cpu_s,
            connections,
            instances: Vec::new(),
            classes: crate::latency::ClassTimes::of(
                &total.statements_times.times(),
                Some(crate::latency::MeasuredFrom::Send),
                |index| format!("statement-{}", index + 1),
            ),
        })
    }

    fn server(&self) -> Option<&dyn ServerWorkload> {
        Some(self)
    }
}

impl OnOneDatabase for ScriptWorkload {
    fn database(&self) -> &dyn Database {
        self.database.as_ref()
    }
}

level_figures! {
    /// One script level's figures; `workload_figures` in the result, by these names (each
    /// statement's and each SQLSTATE's follow them).
    pub struct ScriptFigures / ScriptFigureNames {
        /// Transactions that ran to their end, and per second: pgbench's tps.
        transactions: f64,
        transactions_per_s: f64,
        statements: f64,
        statements_per_s: f64,
        /// Transactions a statement's failure ended (rolled back), under --max-failures.
        failed_transactions: f64,
        /// Rows the statements returned or changed.
        rows: f64,
        /// pgbench's "latency average" and "latency stddev" of the transactions.
        latency_average_ms: f64,
        latency_stddev_ms: f64,
        /// The sessions' mean time to connect (pgbench's initial connection time).
        connection_time_ms: f64,
        /// The database's own block counters over the level, per second.
        server_lio_per_s: f64,
        server_pio_per_s: f64,
        client_cpu_s: f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_outside_a_number_s_range_are_refused() {
        assert!(matches!(
            parse_setting("scale=100"),
            Ok((_, eval::Value::Int(100)))
        ));
        assert!(matches!(
            parse_setting("rate=1.5e-3"),
            Ok((_, eval::Value::Double(value))) if value == 1.5e-3
        ));
        assert!(matches!(
            parse_setting("zero=0.0e-400"),
            Ok((_, eval::Value::Double(_)))
        ));
        for bad in [
            "n=99999999999999999999",
            "n=-99999999999999999999",
            "n=1.5e-400",
            "n=1e400",
            "n=x",
        ] {
            assert!(parse_setting(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_bounded_regular_files_are_read_as_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let bom = dir.path().join("bom.sql");
        std::fs::write(&bom, "\u{FEFF}SELECT 1;\n").unwrap();
        assert_eq!(read_script_text(&bom).unwrap(), "SELECT 1;\n");
        let error = read_script_text(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(format!("{error}").contains("not a regular file"), "{error}");
        let error = read_script_text(dir.path()).unwrap_err();
        assert!(format!("{error}").contains("not a regular file"), "{error}");
        let large = dir.path().join("large.sql");
        let file = std::fs::File::create(&large).unwrap();
        file.set_len(MOST_SCRIPT_BYTES + 1).unwrap();
        let error = read_script_text(&large).unwrap_err();
        assert!(format!("{error}").contains("larger than 16 MiB"), "{error}");
    }
}
