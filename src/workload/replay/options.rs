//! `run replay`'s options, as the command line gives them: each value checked where it is
//! parsed.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::db::connect::options::DbTargetArgs;

/// The most speeds `--speed` takes.
const MOST_SPEEDS: usize = 50;

/// `run replay`: the options.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "A capture is made from the server's log by `corescale capture`. Each captured session is replayed on a session of its own (sessions that never overlapped share one, connecting anew for each), its statements sent at their captured times over the speed and timed from then, so falling behind is measured, not hidden. Each speed is one pass of the capture: --duration, --job-size, --repeat and --max-repeat do not apply.\n\nExamples:\n  corescale capture /var/log/postgresql/postgresql.csv -o shop.capture\n  corescale run replay --target postgres://app@new-server/shop \\\n      --capture shop.capture --speed 1,2,4,8 -o new-server.json\n  corescale run replay --target postgres://app@new-server/shop \\\n      --capture shop.capture --find 'p99<=5ms' -o new-server-limit.json\n  corescale run replay --target postgres://app@clone/shop \\\n      --capture shop.capture --speed 1,2 --allow-writes \\\n      --before-level './restore-clone.sh'\n  corescale run replay --target postgres://app@new-server/shop \\\n      --capture node1.capture --capture node2.capture --speed 1,2,4"
)]
#[command(next_help_heading = "replay (a captured workload)")]
#[command(mut_arg("route", |arg| arg.help("With a primary and its replicas in --target: reads=replicas replays each captured session that only reads on a replica (in turn), the others on the primary")))]
#[command(mut_arg("latency_limit", |arg| arg.help("Count the statements answered later than this after they were due (e.g. 50ms)")))]
#[command(mut_arg("in_schema", |arg| arg.hide(true)))]
#[command(mut_arg("service_base", |arg| arg.hide(true)))]
#[command(mut_arg("service_max", |arg| arg.hide(true)))]
#[command(mut_arg("replay_limit", |arg| arg.hide(true)))]
#[command(mut_arg("find", |arg| arg.conflicts_with("speed").help(FIND_HELP)))]
pub struct ReplayArgs {
    #[command(flatten)]
    pub target: DbTargetArgs,

    /// The capture to replay (`corescale capture LOG -o FILE`). Repeat it with each
    /// instance's capture to replay a cluster's workloads together, each at the times its
    /// log gave.
    #[arg(long, value_name = "FILE", required = true)]
    pub capture: Vec<PathBuf>,

    /// Speeds to replay at, each a level: 1 the captured pace, 2 twice as fast (a list,
    /// 1,2,4,8).
    #[arg(long, value_name = "LIST", default_value = "1", value_parser = parse_speeds)]
    pub speed: Speeds,

    /// The captured database to replay (default: the one with the most statements); the
    /// others' statements are left out and counted.
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,

    /// Start this far into the capture (e.g. 10m).
    #[arg(long, value_name = "TIME", value_parser = crate::values::parse_duration)]
    pub from: Option<Duration>,

    /// Replay this much of the capture (e.g. 5m), from --from.
    #[arg(long, value_name = "TIME", value_parser = crate::values::parse_duration)]
    pub window: Option<Duration>,

    /// Replay the capture's writes on the target, read-only or not: they change its data,
    /// so each speed replays on what the one before left, unless --before-level restores it.
    #[arg(long)]
    pub allow_writes: bool,

    /// A command run (by sh -c) before each speed: a snapshot's rollback, a pg_restore, a
    /// clone; its time is recorded and a failure ends the run.
    #[arg(long, value_name = "CMD")]
    pub before_level: Option<String>,

    /// Idle time longer than this, within and between captures (no statement sent or
    /// running), is shortened to it, and said (e.g. 30s, 1h).
    #[arg(long, value_name = "TIME", default_value = "5m",
          value_parser = crate::values::parse_duration)]
    pub max_idle: Duration,

    /// Replay data definition (CREATE, ALTER, DROP, GRANT, ...), skipped and counted unless
    /// given.
    #[arg(long)]
    pub include_ddl: bool,

    /// Replay statements that change the role or the server (SET ROLE, ALTER SYSTEM, ...),
    /// skipped and counted unless given.
    #[arg(long)]
    pub include_server_wide: bool,

    /// Replay each read-only captured session this many times (2 to 100), each copy a
    /// fraction of the session's mean gap between statements later, to load more users than
    /// were captured; sessions that write are replayed once.
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub sessions_factor: u32,

    /// Connect the sessions a captured user ran as another user of the target (app=bench;
    /// repeat for each user). An unmapped user's sessions connect as the URL's user when it
    /// holds no power (superuser, a predefined role, a global privilege) that user's role on
    /// the target lacks, else as that role; each user connected as another has its
    /// password found as the URL user's is (never the URL's own).
    #[arg(long, value_name = "CAPTURED=USER", value_parser = parse_mapping)]
    pub map: Vec<(String, String)>,

    /// Keep the capture's commit order (commits): a statement logged after another
    /// session's commit ended is sent only once that commit is answered, at every speed;
    /// none times each session on its own.
    #[arg(long, value_name = "WHAT", default_value = "commits")]
    pub synchronize: Synchronize,

    #[command(flatten)]
    pub latency: crate::latency::LatencyLimitArgs,

    #[command(flatten)]
    pub routing: crate::db::connect::options::RouteArgs,

    #[command(flatten)]
    pub search: crate::latency::FindArgs,
}

/// What a replay keeps of the order of statements across sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Synchronize {
    /// The capture's commit order.
    Commits,
    /// None: each session on its own schedule.
    None,
}

/// `--find`'s words for a replay, whose rate is its speed.
const FIND_HELP: &str = "Search the largest speed that holds this objective ('p99<=5ms'; a fingerprint's 'fingerprint-3:p99<=2ms'; several with ',', all to hold): one pass of the capture per probe, from the captured pace up, each judged by the percentile's 95% confidence interval";

/// `--map CAPTURED=USER`: a captured user and the target's user its sessions connect as.
fn parse_mapping(text: &str) -> Result<(String, String), String> {
    let named =
        |name: &str| !name.is_empty() && name.len() <= 128 && !name.chars().any(char::is_control);
    match text.split_once('=') {
        Some((captured, user)) if named(captured) && named(user) => {
            Ok((captured.to_string(), user.to_string()))
        }
        _ => Err(format!(
            "'{}' is not a mapping: give CAPTURED=USER, the user the log names and the target's user its sessions connect as (app=bench)",
            crate::format::printable(text)
        )),
    }
}

/// Why `--map` cannot be followed: a captured user mapped to two users.
pub(super) fn mapped_twice(map: &[(String, String)]) -> Option<String> {
    map.iter().enumerate().find_map(|(index, (captured, to))| {
        let (_, other) = map[..index]
            .iter()
            .find(|(earlier, other)| earlier == captured && other != to)?;
        Some(format!(
            "--map {captured}={other} and --map {captured}={to}: map each captured user to one user"
        ))
    })
}

/// The value of `--speed`: speeds over the captured pace, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Speeds(pub Vec<f64>);

fn parse_speeds(text: &str) -> Result<Speeds, String> {
    let mut speeds = Vec::new();
    for part in text.split(',').map(str::trim) {
        let speed = part
            .trim_end_matches(['x', 'X'])
            .parse::<f64>()
            .ok()
            .filter(|speed| speed.is_finite() && (0.01..=1000.0).contains(speed))
            .ok_or_else(|| {
                format!("'{part}' is not a speed: give how many times the captured pace, 0.01 to 1000 (1,2,4,8)")
            })?;
        if speeds.contains(&speed) {
            return Err(format!("speed {part} is given twice: list each speed once"));
        }
        speeds.push(speed);
    }
    if speeds.len() > MOST_SPEEDS {
        return Err(format!(
            "{} speeds is too many: at most {MOST_SPEEDS}",
            speeds.len()
        ));
    }
    Ok(Speeds(speeds))
}
