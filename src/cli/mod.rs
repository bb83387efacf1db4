//! Command-line definitions. test_cpu_parallel's flags are accepted as aliases so its users
//! can switch without relearning.

mod one_line;
mod setup;

pub use one_line::one_line;
pub use setup::refused_setup_option;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::db::connect::options::DbTargetArgs;
use crate::error::UsageError;
use crate::host::pinning::Pin;
use crate::redact::redact_argument;
use crate::sweep::plan::SweepSpec;
use crate::values::{Workers, parse_count, parse_duration, parse_percent, parse_workers};
use crate::workload::{WorkloadArgs, WorkloadKind};

/// The version line of `--version` and `version`: version, commit, build date, target.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CORESCALE_COMMIT"),
    ", built ",
    env!("CORESCALE_BUILD_DATE"),
    ", ",
    env!("CORESCALE_TARGET"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "corescale",
    version = LONG_VERSION,
    // Help fits the terminal, and 80 columns where its width is unknown or wider.
    max_term_width = 80,
    about = "Load-test a server's CPUs and memory with 1..N workers and measure how it scales",
    long_about = "corescale runs a workload with 1..N concurrent worker threads, measures job \
times, per-thread CPU time, OS figures (including steal time) and hardware counters at each \
load level, and writes versioned JSON and test_cpu_parallel-compatible CSV.",
    after_help = "Examples:\n  corescale host\n  corescale run                       # cpu workload, automatic sweep\n  corescale run --sweep 1,2,4,8 -o rac55.json -o rac55.csv\n  corescale run memory --full -w 16 --pin scatter\n  corescale run lio --sweep auto -o lio.json   # SLOB method, no database\n  corescale db setup --target postgres://postgres@127.0.0.1:5432/test \\\n      --schemas 4\n  corescale run db --target postgres://postgres@127.0.0.1:5432/test \\\n      --sweep 1,2,4\n  corescale report rac52.json rac55.json --html report.html"
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
    /// Read a server's log into a capture of its workload, for `run replay`.
    #[command(after_help = CAPTURE_EXAMPLES)]
    Capture(CaptureArgs),
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

const CAPTURE_EXAMPLES: &str = "PostgreSQL logs each statement with log_statement = 'all' (or log_min_duration_statement = 0), and its sessions with log_connections and log_disconnections = on, in csvlog, jsonlog, or stderr with a log_line_prefix naming the time (%m), user (%u), database (%d) and session (%c). MySQL and MariaDB: the slow query log with long_query_time = 0, or the general query log. `corescale db check --capture --target URL` names the settings a server still lacks. Statements that set passwords are never stored; the capture is readable by its owner only.

Examples:
  corescale capture /var/lib/postgresql/15/main/log/postgresql.csv \\
      -o shop.capture
  corescale capture postgresql-Mon.log postgresql-Tue.log \\
      --log-line-prefix '%m [%p] %q%u@%d %c ' -o week.capture";

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The server's log files, in the order they were written.
    #[arg(value_name = "LOG", required = true)]
    pub logs: Vec<PathBuf>,

    /// The capture to write (readable by its owner only).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,

    /// The server's log_line_prefix, for a PostgreSQL log written to stderr (default:
    /// pgreplay's '%m|%u|%d|%c|'); csvlog, jsonlog and MySQL's logs name their fields.
    #[arg(long, value_name = "PREFIX")]
    pub log_line_prefix: Option<String>,

    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
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
    /// Create a workload's tables: SLOB's corescale_tN tables of one-row blocks with a
    /// random-order key index, unless another workload is named.
    #[command(
        after_help = "Examples:\n  corescale db setup --target postgres://postgres@127.0.0.1:5432/test \\\n      --schemas 4 --scale 64M\n  corescale db setup --target mysql://root@127.0.0.1:3306/test \\\n      --schemas 2 --scale 8192\n  # the order-entry tables derived from TPC-C, 4 warehouses:\n  corescale db setup tpcc --warehouses 4 \\\n      --target postgres://postgres@127.0.0.1:5432/test"
    )]
    Setup(crate::workload::SetupArgs),
    /// Drop corescale's own tables and functions, and nothing else.
    Teardown(DbTargetArgs),
    /// Connect, and say what was reached: server, user, database, TLS, where each setting
    /// came from (never the password) and whether `db setup` and `run db` have the
    /// privileges they need; with --workload tpcc, whether the order-entry tables meet the
    /// consistency conditions 1-4 of TPC-C's clause 3.3.2. Exits 0 when all is well, 1
    /// otherwise.
    #[command(
        after_help = "Examples:\n  corescale db check \\\n    --target 'postgres://dba@db1/sales?sslmode=verify-full&sslrootcert=ca.pem'\n  # from ~/.pg_service.conf and ~/.pgpass:\n  corescale db check --target 'postgres:///?service=prod'\n  corescale db check --target postgres://       # from PGHOST, PGUSER, ...\n  corescale db check \\\n      --target 'mysql://root@db1/test?ssl-mode=VERIFY_IDENTITY&ssl-ca=ca.pem'\n  corescale db check --target mysql:///test     # from ~/.my.cnf [client]\n  corescale db check --workload tpcc --target postgres://dba@db1/sales\n  corescale db check --capture --target postgres://dba@db1/shop"
    )]
    Check(DbCheckArgs),
}

/// `db check`: the target, and the workload whose tables to check.
#[derive(Debug, clap::Args)]
pub struct DbCheckArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,
    /// Also check this workload's tables (tpcc: the consistency conditions 1-4).
    #[arg(long, value_enum)]
    pub workload: Option<crate::workload::SetupName>,
    /// Also say whether the server logs what `corescale capture` reads, as a session of this
    /// database has its settings, and the statement that fixes each that is missing.
    #[arg(long)]
    pub capture: bool,
}

const REPORT_EXAMPLES: &str = "Examples:
  corescale report rac52.csv rac54.csv rac55.csv \\
      --cores rac52=20/40 --cores rac54=8/16 --cores rac55=16/32
  corescale report rac.json new-server.json \\
      --nodes rac=node1.json,node2.json --nodes new-server=db9.json
  corescale report run1.json run2.json \\
      -o report.html -o figures/ -o report.md -o analysis.json
  corescale report old.csv --label old.csv=RAC52 --cost RAC52=10000
  corescale report db-small.json db-large.json --slo 'p99<=5ms'
  corescale report new-server.json old-pgbench-runs/ old-slob-awr/ \\
      --level old-slob-awr/awr.txt=8

Inputs: corescale JSON or CSV, test_cpu_parallel CSV (either header), or SLOB-style
Num_concurrent_workers,<rate> CSV; and other tools' outputs: pgbench (its summary with -P
and -r lines, its per-transaction and aggregated logs), sysbench 1.0 (with --histogram and
--report-interval lines), HammerDB logs (TEST RESULT lines, xtprof), Oracle AWR (text or
HTML) and Statspack reports. The format is detected from the content. A folder is a sweep:
one series per folder and job, one level per file, files at one level averaged as repeats.
A file that does not state its load (AWR, Statspack, an aggregated pgbench log) takes it
from the one number in its name (awr.16.txt) or from --level.";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files to analyse, one series each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Name a series: FILE=NAME (default: the host label, else the file name without extension).
    #[arg(long = "label", value_name = "FILE=NAME", value_parser = parse_pair)]
    pub labels: Vec<(String, String)>,

    /// The load (sessions, clients, threads) of a file that does not state it, such as an
    /// AWR report: FILE=N (default: the one number in its name, as in awr.16.txt).
    #[arg(long = "level", value_name = "FILE=N", value_parser = parse_level)]
    pub levels: Vec<(PathBuf, usize)>,

    /// Physical cores / logical CPUs of a series whose file has no topology, or whose
    /// database server ran on another host than the client: NAME=P/L.
    #[arg(long = "cores", value_name = "NAME=P/L", value_parser = parse_cores)]
    pub cores: Vec<(String, (usize, usize))>,

    /// A cluster's nodes, each as `corescale host --json > FILE` on it describes it (or a
    /// run's JSON from it): NAME=FILE,FILE,... The series' cores are the nodes' sums, and it
    /// counts as that many nodes against one server. A database server elsewhere than the
    /// client is known only this way or by --cores.
    #[arg(long = "nodes", value_name = "NAME=FILE,FILE", value_parser = parse_nodes)]
    pub nodes: Vec<(String, Vec<PathBuf>)>,

    /// Cost of a server, in any unit you like, for capacity per cost: NAME=VALUE.
    #[arg(long = "cost", value_name = "NAME=VALUE", value_parser = parse_cost)]
    pub costs: Vec<(String, f64)>,

    /// The warehouses an order-entry result ran on, where its file does not say (HammerDB's
    /// log does not): NAME=W. Series on the NOPM axis are compared as one job only at equal
    /// warehouses; HammerDB's stored procedures against corescale's tpcc by scaling only.
    #[arg(long = "warehouses", value_name = "NAME=W", value_parser = parse_warehouses)]
    pub warehouses: Vec<(String, u32)>,

    /// Write an output, its format by its name: FILE.html (a self-contained page with the
    /// figures, tables and findings), FILE.md (Markdown), FILE.json (the whole analysis), or
    /// DIR/ (the figures as PNG files, the folder created if missing); repeatable.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub outputs: Vec<PathBuf>,

    /// Same as -o FILE.html.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Same as -o DIR/.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,

    /// Same as -o FILE.md.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Same as -o FILE.json (fields in docs/schema.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Do not print the summary on the terminal.
    #[arg(short, long)]
    pub quiet: bool,

    /// Keep levels the run judged disturbed (by default they are left out of every figure).
    #[arg(long)]
    pub include_disturbed: bool,

    /// Keep a CSV's last line that looks cut (no line end, its last number shorter than
    /// the rest of its column's): by default it is left out, with a warning.
    #[arg(long)]
    pub accept_truncated: bool,

    /// Print every column of the terminal tables and unwrapped sentences, however wide
    /// (by default they fit 80 columns).
    #[arg(long)]
    pub wide: bool,

    /// Print every warning and every note on the fits (by default the terminal lists up to
    /// 5 warnings and counts the rest; the page and the Markdown hold them all).
    #[arg(short, long)]
    pub verbose: bool,

    /// A latency objective, e.g. 'p99<=5ms' (p50, p90, p95, p99, p99.9, max, mean): the
    /// largest throughput at which each series kept it, and the series compared on it. On
    /// one class of responses with the class first: 'new_order:p99<=5ms' (order entry's
    /// transaction types), 'fingerprint-3:p99<=2ms' (a replay's), 'statement-2:p99<=1ms'
    /// (a script's).
    #[arg(long, value_name = "OBJECTIVE")]
    pub slo: Option<crate::latency::Objective>,
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

/// "FILE=N", e.g. awr.txt=16: a load level, 1 or more.
fn parse_level(text: &str) -> Result<(PathBuf, usize), String> {
    let (file, level) = text
        .rsplit_once('=')
        .filter(|(file, _)| !file.is_empty())
        .ok_or_else(|| format!("'{text}' is not FILE=N"))?;
    match level.trim().parse::<usize>() {
        Ok(level) if level > 0 => Ok((PathBuf::from(file), level)),
        _ => Err(format!(
            "'{level}' in '{text}' is not a load level (a whole number of sessions, 1 or more)"
        )),
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

/// The most nodes `--nodes` takes for one series.
const MOST_NODES: usize = 256;

/// "NAME=FILE,FILE,...", e.g. rac=node1.json,node2.json: one host file per node.
fn parse_nodes(text: &str) -> Result<(String, Vec<PathBuf>), String> {
    let (name, files) = parse_pair(text)?;
    let files: Vec<PathBuf> = files.split(',').map(PathBuf::from).collect();
    if files.iter().any(|file| file.as_os_str().is_empty()) {
        return Err(format!(
            "'{text}' has an empty file name: give NAME=FILE,FILE, e.g. {name}=node1.json,node2.json"
        ));
    }
    if files.len() > MOST_NODES {
        return Err(format!(
            "'{name}' is given {} nodes, more than {MOST_NODES}: give one host file per node",
            files.len()
        ));
    }
    Ok((name, files))
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

fn parse_warehouses(text: &str) -> Result<(String, u32), String> {
    let (name, value) = parse_pair(text)?;
    match value.trim().parse::<u32>() {
        Ok(warehouses) if (1..=1_000_000).contains(&warehouses) => Ok((name, warehouses)),
        _ => Err(format!(
            "'{value}' is not a warehouse count: use a whole number from 1 to 1000000"
        )),
    }
}

const RUN_EXAMPLES: &str = "Examples:
  corescale run                  # cpu, --sweep auto around the core counts
  corescale run --sweep 1,2,4,8 -o out.json -o out.csv
  # every level 1..16, one worker per core first:
  corescale run cpu --full -w 16 --pin scatter
  corescale run memory -w 4 --array-size 1G
  corescale run bandwidth --sweep auto --duration 5s
  # add batches until job-time CV <= 2%:
  corescale run --precision 2% --max-repeat 10
  corescale run lio --sweep 1,2 --single-schema --hotspot 90%   # latches
  corescale run pio -w 4 --cache-size 16M --data-dir /data    # O_DIRECT
  corescale run db --target mysql://root@127.0.0.1:3306/test --update-pct 20%
  # one round trip per statement, no batching:
  corescale run db --target postgres://postgres@127.0.0.1/test -w 1 \\
      --work-unit 255 --pipeline 1

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
#[command(
    subcommand_value_name = "WORKLOAD",
    subcommand_help_heading = "Workloads (default: cpu)"
)]
pub struct RunArgs {
    /// The workload, with its own options (`corescale run WORKLOAD --help` lists them);
    /// none named runs cpu, as test_cpu_parallel does.
    #[command(subcommand)]
    workload: Option<WorkloadArgs>,

    #[command(flatten)]
    pub sweep: SweepArgs,
}

impl RunArgs {
    /// The workload named, else cpu with its defaults (as clap gives them).
    pub fn workload(&self) -> Result<WorkloadArgs, clap::Error> {
        use clap::FromArgMatches;
        match &self.workload {
            Some(workload) => Ok(workload.clone()),
            None => WorkloadArgs::from_arg_matches(
                &WorkloadArgs::augment_subcommands(clap::Command::new("run"))
                    .try_get_matches_from(["run", WorkloadKind::Cpu.name()])?,
            ),
        }
    }
}

/// The options of every run: which levels, how many batches, where the results go. Global,
/// so they may come before or after the workload's name.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Number of concurrent workers: one level, or the top of --full.
    #[arg(short = 'w', long = "workers", visible_alias = "num_workers", value_name = "N",
          value_parser = parse_workers, global = true)]
    pub workers: Option<Workers>,

    /// Measure every level from 1 to --workers (default: the logical CPU count).
    #[arg(short = 'f', long, conflicts_with = "sweep", global = true)]
    pub full: bool,

    /// Load levels: a list such as 1,2,4,8, or 'auto' (1, 2, powers of two, around the
    /// physical-core and logical-CPU counts, up to 1.5x the logical CPUs). Default: auto.
    #[arg(
        long,
        value_name = "LIST|auto",
        conflicts_with = "workers",
        global = true
    )]
    pub sweep: Option<SweepSpec>,

    /// Batches per level (default: 3); in each batch every worker runs one job.
    #[arg(long, visible_alias = "num_job_execution_loops", value_name = "K",
          value_parser = clap::value_parser!(u32).range(1..=10_000), global = true)]
    pub repeat: Option<u32>,

    /// Add batches until the CV of job times (of job rates with --duration) is under this
    /// target (e.g. 2%).
    #[arg(long, value_name = "PCT", value_parser = parse_percent, global = true)]
    pub precision: Option<f64>,

    /// Most batches per level with --precision (default: 10).
    #[arg(long, value_name = "K",
          value_parser = clap::value_parser!(u32).range(1..=10_000), global = true)]
    pub max_repeat: Option<u32>,

    /// Work per job in the workload's unit (its `--help` says which, and the default); for
    /// lio, pio and db it makes fixed-work jobs of N statements. Suffixes K, M, G.
    #[arg(long, value_name = "N", value_parser = parse_count, global = true)]
    pub job_size: Option<u64>,

    /// Run each job for this long instead of a fixed amount of work, and report rates.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub duration: Option<Duration>,

    /// Run every level's workers this long before its measured batches and leave that time
    /// out of every figure (caches, plans and connections warm; recorded in the document).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub warmup: Option<Duration>,

    /// Fixed-time levels of lio, pio, db and script: keep responses, p50 and p99 per interval
    /// of this length (levels[].intervals), and say when the first ones ran apart (a warm-up)
    /// or one fell far below the rest (a stall) [default: 1s].
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub interval: Option<Duration>,

    /// Pin workers: none, compact (fill SMT siblings first), scatter (one per core first).
    #[arg(long, value_enum, default_value = "none", global = true)]
    pub pin: Pin,

    /// Result file, format by extension (.json or .csv; .hlog for HdrHistogram's interval log
    /// of each level's response times, .classes.hlog for each statement or transaction
    /// type's; - for JSON on standard output); repeatable. Rewritten after each level.
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "output_file",
        value_name = "FILE",
        global = true
    )]
    pub outputs: Vec<PathBuf>,

    /// Name for this host in results and reports (default: the hostname).
    #[arg(long, global = true)]
    pub label: Option<String>,

    /// Tag the result: KEY=VALUE (campaign=q3-refresh, inventory=db17); repeatable, stored in
    /// the JSON and shown by `report`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag, global = true)]
    pub tags: Vec<(String, String)>,

    /// Allow more than 8 workers per logical CPU, or allocations above available memory.
    #[arg(long, global = true)]
    pub force: bool,

    /// No progress bar and no summary table.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print one plain line per interval (e.g. 1s) instead of a progress bar: the last
    /// batch's figures, the CV so far, steal and other load.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub report_interval: Option<Duration>,

    /// Serve the run's figures to Prometheus while it goes on: OpenMetrics text at
    /// http://ADDR/metrics (a port alone listens on 127.0.0.1): level, workers, operations,
    /// response-time histogram, client CPU, and each level's rate, p99 and verdict as it ends.
    #[arg(long, value_name = "ADDR", value_parser = crate::sweep::export::parse_listen,
          global = true)]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// Push each level's figures to a Prometheus Pushgateway as it ends (e.g.
    /// http://pushgateway:9091), one group per level, for runs too short to be scraped.
    #[arg(long, value_name = "URL", value_parser = parse_push_gateway, global = true)]
    pub push_gateway: Option<String>,

    /// Keep every column of the summary table, however wide, with one more for each figure
    /// the workload recorded that no column shows (lio's ns_per_lio, db's db_pio_per_s, ...),
    /// under its JSON name.
    #[arg(long, global = true)]
    pub wide: bool,

    /// Exit with code 3 when a level was disturbed, missed its precision target, or could
    /// not keep its --rate.
    #[arg(long, global = true)]
    pub strict: bool,

    /// Refuse to start (exit 1) when other processes keep the host busy.
    #[arg(long, global = true)]
    pub require_idle: bool,

    /// Wait up to this long for the host to become idle before measuring (e.g. 60s).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, global = true)]
    pub wait_idle: Option<Duration>,

    // Last: its heading would otherwise take in the options after it.
    #[command(flatten)]
    pub campaign: crate::sweep::campaign::CampaignArgs,
}

impl SweepArgs {
    /// Batches per level: `--repeat`, 3 when not given.
    pub fn repeat(&self) -> u32 {
        self.repeat.unwrap_or(3)
    }

    /// Most batches per level with `--precision`: `--max-repeat`, 10 when not given.
    pub fn max_repeat(&self) -> u32 {
        self.max_repeat.unwrap_or(10)
    }

    /// Checks what clap cannot: each tag key given once.
    pub fn check(&self) -> Result<(), UsageError> {
        let mut keys: Vec<&str> = self.tags.iter().map(|(key, _)| key.as_str()).collect();
        keys.sort_unstable();
        if let Some(pair) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(UsageError::new(format!(
                "--tag {}=... is given twice: give each key once",
                pair[0]
            )));
        }
        Ok(())
    }
}

/// A Pushgateway's base URL: http or https, a host; no user, password, query or fragment.
fn parse_push_gateway(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|error| {
        format!(
            "'{text}' is not a URL ({error}): give the Pushgateway's, e.g. http://pushgateway:9091"
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!(
            "'{text}' is not an http(s) URL with a host: give the Pushgateway's, e.g. http://pushgateway:9091"
        ));
    }
    if url.password().is_some()
        || !url.username().is_empty()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(format!(
            "the URL of '{}' holds a user, a password, a query or a fragment: give the Pushgateway's base URL alone",
            url.host_str().unwrap_or_default()
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
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

/// Brings test_cpu_parallel's `--mode X` (also `--mode=X`, `-m X`, `-mX`, `-m=X`) to clap's
/// shape: the workload `X` right after `run`. Every other spelling is clap's own: the
/// workload is an optional subcommand (cpu when none is named) and the run's options are
/// global, so they may come before or after it.
pub fn normalize(mut arguments: Vec<OsString>) -> Result<Vec<OsString>, UsageError> {
    if arguments.get(1).and_then(|arg| arg.to_str()) != Some("run") {
        return Ok(arguments);
    }
    let end = arguments
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(arguments.len());
    let given = |arg: &OsString| {
        let text = arg.to_str()?;
        let value = text
            .strip_prefix("--mode")
            .or_else(|| text.strip_prefix("-m"))?;
        Some(value.strip_prefix('=').unwrap_or(value).to_string())
    };
    let modes: Vec<usize> = (2..end)
        .filter(|&index| given(&arguments[index]).is_some())
        .collect();
    let &[index] = modes.as_slice() else {
        return match modes.len() {
            0 => Ok(arguments),
            _ => Err(UsageError::new("--mode is given twice: give it once")),
        };
    };
    let mut name = given(&arguments.remove(index)).unwrap_or_default();
    if name.is_empty() {
        if index >= arguments.len() {
            return Err(UsageError::new(
                "--mode needs a workload, e.g. --mode memory",
            ));
        }
        name = arguments.remove(index).to_string_lossy().into_owned();
    }
    arguments.insert(2, name.into());
    Ok(arguments)
}

/// clap's refusal of a workload's name, in corescale's words: not a workload (with the
/// list), or a workload given twice (`--mode memory memory`).
pub fn workload_refused(arguments: &[OsString], error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if arguments.get(1).and_then(|arg| arg.to_str()) != Some("run") {
        return None;
    }
    let names: Vec<String> = WorkloadKind::ALL
        .iter()
        .map(|kind| kind.name().to_string())
        .collect();
    let ContextValue::String(given) = error.get(match error.kind() {
        ErrorKind::InvalidSubcommand => ContextKind::InvalidSubcommand,
        ErrorKind::UnknownArgument => ContextKind::InvalidArg,
        _ => return None,
    })?
    else {
        return None;
    };
    match error.kind() {
        ErrorKind::InvalidSubcommand => Some(format!(
            "'{}' is not a workload: use {}",
            redact_argument(given),
            listed(&names, "or")
        )),
        _ if names.contains(given)
            && arguments
                .iter()
                .filter(|arg| names.iter().any(|name| arg.to_str() == Some(name)))
                .count()
                > 1 =>
        {
            Some(format!(
                "the workload is named twice: name it once, e.g. `corescale run {given}`"
            ))
        }
        _ => None,
    }
}

/// Whether an option is `--long` by its name or one of its aliases.
fn has_long(arg: &clap::Arg, long: &str) -> bool {
    arg.get_long() == Some(long)
        || arg
            .get_all_aliases()
            .is_some_and(|aliases| aliases.contains(&long))
}

/// For an option clap did not know in `run WORKLOAD`: which workloads it belongs to, in
/// words, so the user learns what to drop or which workload to run.
pub fn foreign_option(arguments: &[OsString], option: &str) -> Option<String> {
    if arguments.get(1).and_then(|arg| arg.to_str()) != Some("run") {
        return None;
    }
    let name = option.split('=').next().unwrap_or(option);
    let long = name.strip_prefix("--")?;
    // The workload as clap reads it, wherever it was named: cpu when none was, unless only
    // help was asked for (`run --target URL --help`).
    let command = Cli::command();
    let help_only = arguments
        .iter()
        .any(|arg| matches!(arg.to_str(), Some("-h" | "--help")));
    let chosen = command
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(arguments)
        .ok()
        .and_then(|matches| {
            let run = matches.subcommand_matches("run")?;
            Some(run.subcommand_name()?.to_string())
        })
        .unwrap_or_else(|| {
            let default = if help_only {
                ""
            } else {
                WorkloadKind::Cpu.name()
            };
            default.to_string()
        });
    // A workload's option before its name (`run --array-size 64K memory`): clap reads a
    // workload's options after its name only.
    let workload_at = |arg: &OsString| {
        let arg = arg.to_str()?;
        WorkloadKind::ALL.iter().find(|kind| kind.name() == arg)
    };
    let at = arguments
        .iter()
        .position(|arg| arg.to_str().and_then(|arg| arg.split('=').next()) == Some(name))?;
    let named_later = arguments[2..at]
        .iter()
        .all(|arg| workload_at(arg).is_none())
        .then(|| arguments[at..].iter().find_map(workload_at))
        .flatten();
    let owners: Vec<String> = command
        .find_subcommand("run")?
        .get_subcommands()
        .filter(|workload| {
            workload
                .get_arguments()
                .any(|arg| !arg.is_hide_set() && has_long(arg, long))
        })
        .map(|workload| workload.get_name().to_string())
        .collect();
    if let Some(kind) = named_later
        && owners.iter().any(|owner| owner == kind.name())
    {
        return Some(format!(
            "{name} is an option of {0}: give it after the workload's name, e.g. `corescale run {0} {name} ...`",
            kind.name()
        ));
    }
    if owners.is_empty() || owners.contains(&chosen) {
        return None;
    }
    // No workload named (`run --target URL --help`): say where the option goes.
    if !WorkloadKind::ALL.iter().any(|kind| kind.name() == chosen) {
        return Some(format!(
            "{name} is an option of the {} workload{}: name the workload, e.g. `corescale run {} {name} ...` (`corescale run {} --help` lists its options)",
            listed(&owners, "and"),
            if owners.len() > 1 { "s" } else { "" },
            owners[0],
            owners[0]
        ));
    }
    Some(format!(
        "{name} applies to the {} workload{}, not {chosen}: drop it, or run {}",
        listed(&owners, "and"),
        if owners.len() > 1 { "s" } else { "" },
        listed(&owners, "or")
    ))
}

/// "a", "a and b", "a, b and c".
fn listed(items: &[String], conjunction: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {conjunction} {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests;
