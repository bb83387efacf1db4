//! Command-line definitions. test_cpu_parallel's flags are accepted as aliases so its users
//! can switch without relearning.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::error::UsageError;
use crate::host::pinning::Pin;
use crate::sweep::plan::SweepSpec;
use crate::workload::db::DbOptions;
use crate::workload::db::target::{Flavour, Target};
use crate::workload::{SlobRequest, WorkloadKind};

/// PostgreSQL statements per pipelined batch unless --pipeline says otherwise: enough that the
/// backend's flush and the client's wake-up are paid once per batch (see README, "db").
const DEFAULT_PIPELINE: u64 = 32;
/// `--connect-timeout`'s default, as its `default_value` says.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How much longer than a job's duration one database answer may take.
const STATEMENT_MARGIN: Duration = Duration::from_secs(30);

#[derive(Debug, Parser)]
#[command(
    name = "corescale",
    version = crate::commands::about::LONG_VERSION,
    about = "Load-test a server's CPUs and memory with 1..N workers and measure how it scales",
    long_about = "corescale runs a workload with 1..N concurrent worker threads, measures job \
times, per-thread CPU time, OS figures (including steal time) and hardware counters at each \
load level, and writes versioned JSON and test_cpu_parallel-compatible CSV.",
    after_help = "Examples:\n  corescale host\n  corescale run                       # cpu workload, automatic sweep\n  corescale run --sweep 1,2,4,8 -o rac55.json -o rac55.csv\n  corescale run memory --full -w 16 --pin scatter\n  corescale run lio --sweep auto -o lio.json        # SLOB method, no database needed\n  corescale db setup --target postgres://postgres@127.0.0.1:5432/test --schemas 4\n  corescale run db --target postgres://postgres@127.0.0.1:5432/test --sweep 1,2,4\n  corescale report rac52.json rac55.json --html report.html"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the host's CPU topology, caches, NUMA nodes and memory.
    #[command(after_help = "Examples:\n  corescale host\n  corescale host --json")]
    Host(HostArgs),
    /// Run a workload over one or more load levels and record the measurements.
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// Analyse and compare result files: figures, knee, saturation, fits, findings.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Create or drop corescale's tables in a PostgreSQL, MySQL/MariaDB or Oracle database.
    #[command(subcommand)]
    Db(DbCommand),
    /// Show the version, git commit, build date and target.
    #[command(after_help = "Examples:\n  corescale version\n  corescale version --json")]
    Version(VersionArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  corescale completions bash > /etc/bash_completion.d/corescale\n  corescale completions zsh > ~/.zfunc/_corescale\n  corescale completions fish > ~/.config/fish/completions/corescale.fish"
    )]
    Completions(CompletionsArgs),
    /// Write one man page per command into DIR (for packages and the release bundle).
    #[command(hide = true)]
    GenerateMan(GenerateManArgs),
}

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// As JSON: name, version, commit, build_date, target, features.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct GenerateManArgs {
    /// Directory to write corescale.1, corescale-run.1, ... into (created if missing).
    #[arg(value_name = "DIR")]
    pub directory: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Create corescale_tN tables of one-row blocks with a random-order key index.
    #[command(
        after_help = "Examples:\n  corescale db setup --target postgres://postgres@127.0.0.1:5432/test --schemas 4 --scale 64M\n  corescale db setup --target mysql://root@127.0.0.1:3306/test --schemas 2 --scale 8192"
    )]
    Setup(DbSetupArgs),
    /// Drop corescale's own tables and functions, and nothing else.
    Teardown(DbTargetArgs),
}

#[derive(Debug, Args)]
pub struct DbTargetArgs {
    /// postgres://, mysql://, mariadb:// or oracle://user@host:port/service. The password may
    /// be in the URL, in CORESCALE_DB_PASSWORD, or typed at --password-prompt.
    #[arg(long, value_name = "URL")]
    pub target: String,

    /// Ask for the password on the terminal (never echoed).
    #[arg(long)]
    pub password_prompt: bool,

    /// Give up on a server that does not complete the connection within this time.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,
}

impl DbTargetArgs {
    /// The target with its password and connect limit; setup's loads may take their time.
    pub fn open(&self) -> anyhow::Result<Target> {
        Ok(Target::parse(&self.target)?
            .with_password(self.password_prompt)?
            .with_timeouts(self.connect_timeout, None))
    }
}

#[derive(Debug, Args)]
pub struct DbSetupArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// Tables to create, one per session (run sessions beyond this share them).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub schemas: u64,

    /// Rows (one-row blocks) per table, as a count (8192) or a size at 8 KiB per row (64M).
    #[arg(long, value_name = "ROWS|SIZE", default_value = "64M")]
    pub scale: String,
}

impl DbSetupArgs {
    pub fn rows(&self) -> Result<u64, UsageError> {
        let text = self.scale.trim();
        let rows = if text.chars().all(|c| c.is_ascii_digit()) {
            text.parse::<u64>().ok()
        } else {
            parse_size(text).ok().map(|bytes| bytes / 8192)
        };
        match rows {
            Some(rows) if (128..=MAX_DB_ROWS).contains(&rows) => Ok(rows),
            _ => Err(UsageError::new(format!(
                "--scale '{text}' must give 128 to {MAX_DB_ROWS} rows (2 TiB at 8 KiB a row), e.g. 8192 or 64M"
            ))),
        }
    }
}

const REPORT_EXAMPLES: &str = "Examples:
  corescale report rac52.csv rac54.csv rac55.csv --cores rac52=20/40 --cores rac54=8/16 --cores rac55=16/32
  corescale report run1.json run2.json --html report.html --png figures/ --markdown report.md --json analysis.json
  corescale report old.csv --label old.csv=RAC52 --cost RAC52=10000

Inputs: corescale JSON or CSV, test_cpu_parallel CSV (either header), or SLOB-style
Num_concurrent_workers,<rate> CSV; the format is detected from the content.";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files to analyse, one series each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Name a series: FILE=NAME (default: the host label, else the file name without extension).
    #[arg(long = "label", value_name = "FILE=NAME", value_parser = parse_pair)]
    pub labels: Vec<(String, String)>,

    /// Physical cores / logical CPUs of a series whose file has no topology: NAME=P/L.
    #[arg(long = "cores", value_name = "NAME=P/L", value_parser = parse_cores)]
    pub cores: Vec<(String, (usize, usize))>,

    /// Cost of a server, in any unit you like, for capacity per cost: NAME=VALUE.
    #[arg(long = "cost", value_name = "NAME=VALUE", value_parser = parse_cost)]
    pub costs: Vec<(String, f64)>,

    /// Write a self-contained HTML page with the four figures, tables and findings.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write the figures as PNG files into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,

    /// Write tables and findings as Markdown.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write the whole analysis as JSON (fields documented in README).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Do not print the summary on the terminal.
    #[arg(short, long)]
    pub quiet: bool,

    /// Keep levels the run judged disturbed (by default they are left out of every figure).
    #[arg(long)]
    pub include_disturbed: bool,

    /// Print every column of the terminal tables and unwrapped sentences, however wide
    /// (by default they fit 80 columns).
    #[arg(long)]
    pub wide: bool,
}

/// "KEY=VALUE" with both parts non-empty.
fn parse_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !value.is_empty() => {
            Ok((key.to_string(), value.to_string()))
        }
        _ => Err(format!("'{text}' is not KEY=VALUE")),
    }
}

/// "NAME=P/L", e.g. RAC52=20/40.
fn parse_cores(text: &str) -> Result<(String, (usize, usize)), String> {
    let (name, counts) = parse_pair(text)?;
    let parsed = counts.split_once('/').and_then(|(physical, logical)| {
        Some((
            physical.trim().parse::<usize>().ok()?,
            logical.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((physical, logical)) if physical >= 1 && logical >= physical && logical < 1 << 20 => {
            Ok((name, (physical, logical)))
        }
        _ => Err(format!(
            "'{counts}' is not P/L with 1 <= P <= L, e.g. {name}=20/40"
        )),
    }
}

/// "NAME=VALUE" with a positive cost.
fn parse_cost(text: &str) -> Result<(String, f64), String> {
    let (name, value) = parse_pair(text)?;
    match value.parse::<f64>() {
        // Normal and bounded, so capacity per cost stays a finite number.
        Ok(cost) if cost.is_normal() && (1e-9..=1e15).contains(&cost) => Ok((name, cost)),
        _ => Err(format!(
            "'{value}' is not a cost: use a positive number from 1e-9 to 1e15"
        )),
    }
}

const RUN_EXAMPLES: &str = "Examples:
  corescale run                                  # cpu, --sweep auto around the core counts
  corescale run --sweep 1,2,4,8 -o out.json -o out.csv
  corescale run cpu --full -w 16 --pin scatter   # every level 1..16, one worker per core first
  corescale run memory -w 4 --array-size 1G
  corescale run bandwidth --sweep auto --duration 5s
  corescale run --precision 2% --max-repeat 10   # add batches until job-time CV <= 2%
  corescale run lio --sweep 1,2 --single-schema --hotspot 90%   # latch contention
  corescale run pio -w 4 --cache-size 16M --data-dir /data       # misses read with O_DIRECT
  corescale run db --target mysql://root@127.0.0.1:3306/test --update-pct 20%
  corescale run db --target postgres://postgres@127.0.0.1/test -w 1 --work-unit 255 --pipeline 1
                                                 # one round trip per statement, no batching

test_cpu_parallel users: --num_workers 8 --full --output_file out.csv --mode memory work as before.";

#[derive(Debug, Args)]
pub struct HostArgs {
    /// Print the host description as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read sysfs and procfs below this directory instead of / (for fixture trees).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload: cpu (instruction-bound), memory (latency-bound), bandwidth (STREAM triad),
    /// lio (SLOB-method logical IO), pio (the same with a cache smaller than the data).
    #[arg(value_enum, value_name = "WORKLOAD")]
    pub workload: Option<WorkloadKind>,

    /// Workload, test_cpu_parallel style (same as the positional WORKLOAD).
    #[arg(short = 'm', long = "mode", value_enum, conflicts_with = "workload")]
    pub mode: Option<WorkloadKind>,

    /// Number of concurrent workers: one level, or the top of --full.
    #[arg(short = 'w', long = "workers", visible_alias = "num_workers", value_name = "N",
          value_parser = parse_workers)]
    pub workers: Option<u64>,

    /// Measure every level from 1 to --workers (default: the logical CPU count).
    #[arg(short = 'f', long, conflicts_with = "sweep")]
    pub full: bool,

    /// Load levels: a list such as 1,2,4,8, or 'auto' (1, 2, powers of two, around the
    /// physical-core and logical-CPU counts, up to 1.5x the logical CPUs). Default: auto.
    #[arg(long, value_name = "LIST|auto", conflicts_with = "workers")]
    pub sweep: Option<SweepSpec>,

    /// Batches per level; in each batch every worker runs one job.
    #[arg(long, visible_alias = "num_job_execution_loops", value_name = "K",
          default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeat: u32,

    /// Add batches until the CV of job times (of job rates with --duration) is under this
    /// target (e.g. 2%).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub precision: Option<f64>,

    /// Most batches per level with --precision.
    #[arg(long, value_name = "K", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_repeat: u32,

    /// Work per job: cpu iterations (default 350M), memory accesses (default 6M), or
    /// bandwidth passes over the arrays (default: enough to move 10 GB). Suffixes K, M, G.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub job_size: Option<u64>,

    /// test_cpu_parallel's job size: millions of cpu iterations, or 50,000s of memory accesses.
    #[arg(long = "worker_inner_loop_size", value_name = "N", conflicts_with = "job_size",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub worker_inner_loop_size: Option<u64>,

    /// Run each job for this long instead of a fixed amount of work, and report rates.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Bytes per array for memory and bandwidth (default 4x the last-level cache). Suffixes K, M, G.
    #[arg(long, value_name = "SIZE", value_parser = parse_array_size)]
    pub array_size: Option<u64>,

    /// lio/pio: rows (one-row blocks) per schema, as a count (8192) or a size (64M). Default:
    /// lio 64000 (500M, as seed 003, or the last-level cache if larger); pio 8192.
    #[arg(
        long,
        value_name = "ROWS|SIZE",
        help_heading = "lio and pio (SLOB method)"
    )]
    pub scale: Option<String>,

    /// lio/pio: number of schemas (default: one per worker of the largest level).
    #[arg(long, value_name = "N", help_heading = "lio and pio (SLOB method)",
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub schemas: Option<u64>,

    /// lio/pio: every session on one schema (the contended case).
    #[arg(long, help_heading = "lio and pio (SLOB method)")]
    pub single_schema: bool,

    /// lio/pio: keys visited per statement (default 64).
    #[arg(long, value_name = "N", help_heading = "lio and pio (SLOB method)",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub work_unit: Option<u64>,

    /// lio/pio: share of statements that update the rows they visit (e.g. 20%).
    #[arg(long, value_name = "PCT", help_heading = "lio and pio (SLOB method)",
          value_parser = parse_share)]
    pub update_pct: Option<f64>,

    /// lio/pio: share of statements that start in a small hot region (e.g. 90%).
    #[arg(long, value_name = "PCT", help_heading = "lio and pio (SLOB method)",
          value_parser = parse_share)]
    pub hotspot: Option<f64>,

    /// lio/pio: rows in the hot region (default 1% of the rows, at least one work unit).
    #[arg(long, value_name = "ROWS", help_heading = "lio and pio (SLOB method)",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub hotspot_rows: Option<u64>,

    /// lio/pio: pause between statements (SLOB's THINK_TM), e.g. 1ms.
    #[arg(long, value_name = "TIME", help_heading = "lio and pio (SLOB method)",
          value_parser = humantime::parse_duration)]
    pub think_time: Option<Duration>,

    /// lio/pio: block size (default 8K).
    #[arg(long, value_name = "SIZE", help_heading = "lio and pio (SLOB method)",
          value_parser = parse_block_size)]
    pub block_size: Option<u64>,

    /// pio: buffer cache size (default 10% of the data), e.g. 32M.
    #[arg(long, value_name = "SIZE", help_heading = "lio and pio (SLOB method)",
          value_parser = parse_size)]
    pub cache_size: Option<u64>,

    /// pio: directory for the data file (default: the current directory).
    #[arg(long, value_name = "DIR", help_heading = "lio and pio (SLOB method)")]
    pub data_dir: Option<PathBuf>,

    /// pio: read blocks into private memory, bypassing the shared cache.
    #[arg(long, help_heading = "lio and pio (SLOB method)")]
    pub direct_path: bool,

    /// db: the database, postgres://, mysql://, mariadb:// or oracle:// URL (see `db setup`).
    #[arg(
        long,
        value_name = "URL",
        help_heading = "db (SLOB/pgio method on a real database)"
    )]
    pub target: Option<String>,

    /// db: ask for the database password on the terminal (never echoed).
    #[arg(long, help_heading = "db (SLOB/pgio method on a real database)")]
    pub password_prompt: bool,

    /// db: give up on a server that does not complete the connection within this time.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration,
          help_heading = "db (SLOB/pgio method on a real database)")]
    pub connect_timeout: Duration,

    /// db: run the statements in a PL/pgSQL loop inside PostgreSQL, as pgio does.
    #[arg(long, help_heading = "db (SLOB/pgio method on a real database)")]
    pub server_loop: bool,

    /// db: statements sent together under one Sync, two batches in flight (PostgreSQL only).
    /// Default 32 on PostgreSQL (1 with --think-time); 1 waits for every answer, one round
    /// trip per statement.
    #[arg(long, value_name = "N", help_heading = "db (SLOB/pgio method on a real database)",
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub pipeline: Option<u64>,

    /// db: keys changed by each update statement (default: the work unit).
    #[arg(long, value_name = "N", help_heading = "db (SLOB/pgio method on a real database)",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub update_work_unit: Option<u64>,

    /// Pin workers: none, compact (fill SMT siblings first), scatter (one per core first).
    #[arg(long, value_enum, default_value = "none")]
    pub pin: Pin,

    /// Result file, format by extension (.json or .csv); repeatable. Rewritten after each level.
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "output_file",
        value_name = "FILE"
    )]
    pub outputs: Vec<PathBuf>,

    /// Name for this host in results and reports (default: the hostname).
    #[arg(long)]
    pub label: Option<String>,

    /// Tag the result: KEY=VALUE (campaign=q3-refresh, inventory=db17); repeatable, stored in
    /// the JSON and shown by `report`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    /// Allow more than 8 workers per logical CPU, or allocations above available memory.
    #[arg(long)]
    pub force: bool,

    /// No progress bar and no summary table.
    #[arg(short, long)]
    pub quiet: bool,

    /// Print one plain line per interval (e.g. 1s) instead of a progress bar: the last
    /// batch's figures, the CV so far, steal and other load.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub report_interval: Option<Duration>,

    /// Keep every column of the summary table, however wide.
    #[arg(long)]
    pub wide: bool,

    /// Exit with code 3 when a level was disturbed or missed its precision target.
    #[arg(long)]
    pub strict: bool,

    /// Refuse to start (exit 1) when other processes keep the host busy.
    #[arg(long)]
    pub require_idle: bool,

    /// Wait up to this long for the host to become idle before measuring (e.g. 60s).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub wait_idle: Option<Duration>,
}

impl RunArgs {
    /// The database target and session settings, for the db workload.
    pub fn database_request(&self) -> anyhow::Result<Option<(Target, DbOptions)>> {
        let kind = self.workload_kind();
        if kind != WorkloadKind::Db {
            if self.target.is_some() || self.server_loop || self.pipeline.is_some() {
                return Err(UsageError::new(format!(
                    "--target, --server-loop and --pipeline apply to the db workload, not {}",
                    kind.name()
                ))
                .into());
            }
            return Ok(None);
        }
        let Some(url) = &self.target else {
            return Err(UsageError::new(
                "the db workload needs --target URL, e.g. postgres://postgres@127.0.0.1:5432/test",
            )
            .into());
        };
        // One answer may take a whole job's duration and a margin before the server counts
        // as stalled; then the run ends, keeping the levels done.
        let answer_limit = self.duration.unwrap_or(Duration::from_secs(5)) + STATEMENT_MARGIN;
        let target = Target::parse(url)?
            .with_password(self.password_prompt)?
            .with_timeouts(self.connect_timeout, Some(answer_limit));
        let work_unit = self.work_unit.unwrap_or(64);
        let pipeline = match (target.flavour, self.pipeline) {
            // A think time paces single statements, so they are sent one by one.
            (Flavour::Postgres, None) if self.think_time.is_some() => 1,
            (Flavour::Postgres, depth) => depth.unwrap_or(DEFAULT_PIPELINE),
            (_, None | Some(1)) => 1,
            (_, Some(_)) => {
                return Err(UsageError::new(
                    "--pipeline above 1 needs PostgreSQL: the MySQL and Oracle drivers wait for each answer (use --pipeline 1)",
                )
                .into());
            }
        };
        Ok(Some((
            target,
            DbOptions {
                work_unit,
                update_share: self.update_pct.unwrap_or(0.0),
                update_work_unit: self.update_work_unit.unwrap_or(work_unit),
                server_loop: self.server_loop,
                think_time: self.think_time,
                job_statements: self.job_size.unwrap_or(1000),
                pipeline: pipeline as usize,
            },
        )))
    }

    /// The SLOB-method settings; sizes become rows and blocks of the chosen block size.
    pub fn slob_request(&self) -> Result<SlobRequest, UsageError> {
        let block = self.block_size.unwrap_or(8192).max(1);
        let rows = match &self.scale {
            None => None,
            Some(text) if text.trim().chars().all(|c| c.is_ascii_digit()) => Some(
                text.trim()
                    .parse::<u64>()
                    .map_err(|_| UsageError::new(format!("--scale '{text}' is not a row count")))?,
            ),
            Some(text) => Some(parse_size(text).map_err(UsageError::new)? / block),
        };
        if let Some(rows) = rows
            && rows > MAX_ROWS_PER_SCHEMA
        {
            return Err(UsageError::new(format!(
                "--scale gives {rows} rows per schema: at most {MAX_ROWS_PER_SCHEMA} (2^32)"
            )));
        }
        let kind = self.workload_kind();
        let slob_only = [
            (self.scale.is_some(), "--scale"),
            (self.single_schema, "--single-schema"),
            (self.direct_path, "--direct-path"),
            (self.cache_size.is_some(), "--cache-size"),
        ];
        if !matches!(kind, WorkloadKind::Lio | WorkloadKind::Pio)
            && let Some((_, flag)) = slob_only.iter().find(|(given, _)| *given)
        {
            return Err(UsageError::new(format!(
                "{flag} applies to the lio and pio workloads, not {}",
                kind.name()
            )));
        }
        Ok(SlobRequest {
            block_bytes: self.block_size,
            rows_per_schema: rows,
            schemas: self.schemas,
            single_schema: self.single_schema,
            work_unit: self.work_unit,
            update_share: self.update_pct.unwrap_or(0.0),
            hotspot: self.hotspot.map(|share| (share, self.hotspot_rows)),
            think_time: self.think_time,
            cache_blocks: self.cache_size.map(|bytes| (bytes / block).max(1)),
            data_dir: self.data_dir.clone(),
            direct_path: self.direct_path,
        })
    }

    pub fn workload_kind(&self) -> WorkloadKind {
        self.workload.or(self.mode).unwrap_or(WorkloadKind::Cpu)
    }

    /// A flag given for a workload it does not belong to is a usage error naming the
    /// workloads it does belong to: silently ignoring it would measure something else than
    /// the user asked for.
    pub fn check_flags(&self) -> Result<(), UsageError> {
        use WorkloadKind::{Bandwidth, Db, Lio, Memory, Pio};
        let slob = &[Lio, Pio][..];
        let slob_and_db = &[Lio, Pio, Db][..];
        use WorkloadKind::Cpu;
        let flags: [(&str, bool, &[WorkloadKind]); 21] = [
            // test_cpu_parallel's loop count scales cpu and memory jobs; elsewhere it would
            // make millions of passes or statements.
            (
                "--worker_inner_loop_size",
                self.worker_inner_loop_size.is_some(),
                &[Cpu, Memory],
            ),
            (
                "--array-size",
                self.array_size.is_some(),
                &[Memory, Bandwidth],
            ),
            ("--scale", self.scale.is_some(), slob),
            ("--schemas", self.schemas.is_some(), slob),
            ("--single-schema", self.single_schema, slob),
            ("--block-size", self.block_size.is_some(), slob),
            ("--hotspot", self.hotspot.is_some(), slob),
            ("--hotspot-rows", self.hotspot_rows.is_some(), slob),
            ("--cache-size", self.cache_size.is_some(), slob),
            ("--data-dir", self.data_dir.is_some(), &[Pio]),
            ("--direct-path", self.direct_path, &[Pio]),
            ("--work-unit", self.work_unit.is_some(), slob_and_db),
            ("--update-pct", self.update_pct.is_some(), slob_and_db),
            ("--think-time", self.think_time.is_some(), slob_and_db),
            ("--target", self.target.is_some(), &[Db]),
            ("--password-prompt", self.password_prompt, &[Db]),
            ("--server-loop", self.server_loop, &[Db]),
            ("--pipeline", self.pipeline.is_some(), &[Db]),
            ("--update-work-unit", self.update_work_unit.is_some(), &[Db]),
            (
                "--connect-timeout",
                self.connect_timeout != DEFAULT_CONNECT_TIMEOUT,
                &[Db],
            ),
            (
                "--hotspot-rows without --hotspot",
                self.hotspot_rows.is_some() && self.hotspot.is_none(),
                &[],
            ),
        ];
        let mut keys: Vec<&str> = self.tags.iter().map(|(key, _)| key.as_str()).collect();
        keys.sort_unstable();
        if let Some(pair) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(UsageError::new(format!(
                "--tag {}=... is given twice: give each key once",
                pair[0]
            )));
        }
        let kind = self.workload_kind();
        for (flag, given, workloads) in flags {
            if !given || workloads.contains(&kind) {
                continue;
            }
            let names: Vec<&str> = workloads.iter().map(|workload| workload.name()).collect();
            return Err(UsageError::new(if names.is_empty() {
                format!("{flag}: give --hotspot PCT too")
            } else {
                format!(
                    "{flag} applies to the {} workload{}, not {}: drop it, or run {}",
                    names.join(" and "),
                    if names.len() > 1 { "s" } else { "" },
                    kind.name(),
                    names.join(" or ")
                )
            }));
        }
        Ok(())
    }

    /// The job size, translating test_cpu_parallel's inner-loop count into our units.
    pub fn job_size(&self) -> Option<u64> {
        self.job_size.or_else(|| {
            let loops = self.worker_inner_loop_size?;
            Some(match self.workload_kind() {
                WorkloadKind::Memory => loops.saturating_mul(50_000),
                _ => loops.saturating_mul(1_000_000),
            })
        })
    }
}

/// KEY=VALUE with a non-empty key of letters, digits, '-', '_' or '.', and a printable value.
fn parse_tag(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not KEY=VALUE, e.g. campaign=q3"))?;
    let key_ok = !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !key_ok {
        return Err(format!(
            "tag key '{key}' must be 1 to 64 letters, digits, '-', '_' or '.'"
        ));
    }
    if value.len() > 256 || value.chars().any(char::is_control) {
        return Err("a tag value must be at most 256 printable characters".to_string());
    }
    Ok((key.to_string(), value.to_string()))
}

/// "2%", "2" or "0.5%" as a fraction (0.02, 0.02, 0.005), strictly between 0 and 1: a CV target.
fn parse_percent(text: &str) -> Result<f64, String> {
    percentage(text)
        .filter(|value| *value > 0.0 && *value < 1.0)
        .ok_or_else(|| format!("'{text}' is not a percentage strictly between 0 and 100, e.g. 2%"))
}

/// A percentage as a fraction, when it is a number in 0..=100 with or without '%'.
fn percentage(text: &str) -> Option<f64> {
    let value: f64 = text.trim().trim_end_matches('%').parse().ok()?;
    (0.0..=100.0).contains(&value).then_some(value / 100.0)
}

/// "20%" or "20" as a share in 0..=1.
fn parse_share(text: &str) -> Result<f64, String> {
    percentage(text)
        .ok_or_else(|| format!("'{text}' is not a percentage between 0 and 100, e.g. 20%"))
}

/// A count with decimal suffixes: 500M = 500,000,000.
fn parse_count(text: &str) -> Result<u64, String> {
    parse_with_suffix(text, 1000).and_then(|value| {
        if value == 0 {
            Err("the job size must be at least 1".to_string())
        } else {
            Ok(value)
        }
    })
}

/// A byte size with binary suffixes: 64M = 64 MiB.
fn parse_size(text: &str) -> Result<u64, String> {
    parse_with_suffix(text, 1024)
}

/// Most rows per table `db setup` creates (each loader holds the key order in memory).
pub const MAX_DB_ROWS: u64 = 1 << 28;

/// Most workers in one level, even with --force: each is a thread with its own stack.
pub const MAX_WORKERS: u64 = 4096;
/// Most rows per lio/pio schema, so sizes stay far from 64-bit overflow.
pub const MAX_ROWS_PER_SCHEMA: u64 = 1 << 32;
/// Range of --array-size: a few pages, up to 1 TiB per array.
const ARRAY_BYTES: std::ops::RangeInclusive<u64> = 4096..=(1 << 40);
/// Range of --block-size: the block sizes databases use.
const BLOCK_BYTES: std::ops::RangeInclusive<u64> = 512..=(64 << 10);

/// A worker count: at least 1, at most [`MAX_WORKERS`].
pub fn parse_workers(text: &str) -> Result<u64, String> {
    let workers: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a worker count: use a whole number such as 8"))?;
    match workers {
        0 => Err("a load level needs at least 1 worker".to_string()),
        1..=MAX_WORKERS => Ok(workers),
        _ => Err(format!(
            "{workers} workers is more than corescale runs in one level (at most {MAX_WORKERS})"
        )),
    }
}

fn parse_array_size(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text)?;
    if ARRAY_BYTES.contains(&bytes) {
        Ok(bytes)
    } else {
        Err(format!(
            "'{text}' is outside the array sizes corescale allocates: use 4K to 1T"
        ))
    }
}

fn parse_block_size(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text)?;
    if BLOCK_BYTES.contains(&bytes) && bytes.is_power_of_two() {
        Ok(bytes)
    } else {
        Err(format!(
            "'{text}' is not a block size: use a power of two from 512 to 64K, e.g. 8K"
        ))
    }
}

fn parse_with_suffix(text: &str, base: u64) -> Result<u64, String> {
    let trimmed = text.trim().trim_end_matches(['B', 'b', 'i']);
    let (digits, power) = match trimmed.chars().last() {
        Some('K' | 'k') => (&trimmed[..trimmed.len() - 1], 1),
        Some('M' | 'm') => (&trimmed[..trimmed.len() - 1], 2),
        Some('G' | 'g') => (&trimmed[..trimmed.len() - 1], 3),
        Some('T' | 't') => (&trimmed[..trimmed.len() - 1], 4),
        _ => (trimmed, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|value| value.checked_mul(base.pow(power)))
        .ok_or_else(|| format!("'{text}' is not a number with an optional K, M or G suffix"))
}

/// Longest duration any option takes: a week, far from overflowing a clock.
const LONGEST: Duration = Duration::from_secs(7 * 24 * 3600);

fn parse_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(duration) if duration > LONGEST => Err(format!("'{text}' is too long: at most 7 days")),
        Ok(duration) if duration >= Duration::from_millis(10) => Ok(duration),
        Ok(_) => Err(format!("'{text}' is too short: use at least 10ms")),
        Err(error) => Err(format!(
            "'{text}' is not a duration such as 10s or 1m: {error}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_counts_and_percentages_parse() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_count("500M"), Ok(500_000_000));
        assert_eq!(parse_count("12"), Ok(12));
        assert!(parse_count("0").is_err());
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_percent("2%"), Ok(0.02));
        assert!(parse_percent("0").is_err());
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert!(parse_duration("1ms").is_err());
        assert!(parse_duration("18446744073709551615s").is_err());
        assert!(parse_duration("8days").is_err());
        assert_eq!(parse_block_size("8K"), Ok(8192));
        for bad in [
            "0",
            "8",
            "16",
            "24",
            "100",
            "511",
            "128K",
            "18446744073709551615",
        ] {
            assert!(parse_block_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_array_size("1G"), Ok(1 << 30));
        for bad in ["1", "4095", "2T", "18446744073709551615", "99999999999T"] {
            assert!(parse_array_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_workers("4096"), Ok(4096));
        assert_eq!(
            parse_workers("0"),
            Err("a load level needs at least 1 worker".to_string())
        );
        assert!(parse_workers("4097").is_err());
        assert!(parse_workers("18446744073709551615").is_err());
    }
}
