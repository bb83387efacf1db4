//! What database workloads have beyond every workload's hooks: their server's clock, counts
//! and processes, which the sweep reads around and during levels.

use anyhow::Result;

use super::ServerCounts;
use crate::db::Database;
use crate::host::interference::process_cpu_seconds;

/// What only a workload that loads a database server has: the server's clock, counts and
/// processes, which the sweep reads around and during its levels.
pub trait ServerWorkload: Send + Sync {
    /// The database server's clock, in seconds since the epoch (a campaign's parts agree on
    /// it); None where the server does not tell it.
    fn server_clock(&self) -> Option<Result<f64>>;

    /// Whether a server on this host works for the workers (a local database): its CPU time
    /// and up to one runnable thread per worker are part of the load, not interference.
    fn local_server(&self) -> bool;

    /// Whether the host is watched for its whole second before the sessions connect, not
    /// looked at while they do: a workload that checks the server's counts against its own
    /// (db) lets the server's background work after a set-up (InnoDB's purge, PostgreSQL's
    /// statistics) settle first.
    fn settles_first(&self) -> bool {
        false
    }

    /// The main processes of the servers on this host that work for the workers: their CPU
    /// time and their children's is not other load in the look at the host before a run.
    fn server_processes(&self) -> Vec<u32>;

    /// The server's running counts (db: the database's logical and physical reads), read
    /// at each interval's edge during a fixed-time level for its timeline; None where the
    /// workload keeps none (script).
    fn server_counts(&self) -> Option<Result<ServerCounts>> {
        None
    }

    /// How far behind the work `server_counts` may be (see `Database::counters_grain`): an
    /// interval shorter than ten times this gets no server figures, which would swing by
    /// whole publications. None where the workload has no server counts (then no sampler
    /// thread is started, and nothing is asked of a server to find out).
    fn server_counts_grain(&self) -> Option<std::time::Duration> {
        None
    }
}

/// A workload that loads one database through one target (script, tpcc): its server's
/// clock, locality and processes are that database's.
pub trait OnOneDatabase: Send + Sync {
    fn database(&self) -> &dyn Database;
}

impl<T: OnOneDatabase> ServerWorkload for T {
    fn server_clock(&self) -> Option<Result<f64>> {
        self.database().server_clock().transpose()
    }

    fn local_server(&self) -> bool {
        self.database().on_this_host()
    }

    fn server_processes(&self) -> Vec<u32> {
        let pid = self.database().server_main_pid();
        pid.ok().flatten().into_iter().collect()
    }
}

/// CPU seconds of a server on this host and every process it started: MariaDB's one
/// process, or PostgreSQL's postmaster with its sessions' backends, live and ended. A replay
/// reads it around a level, so its own busy server is not taken for other work.
pub(crate) fn server_tree_cpu_s(database: &dyn Database) -> Result<Option<f64>> {
    if let Some(seconds) = server_process_cpu_s(database)? {
        return Ok(Some(seconds));
    }
    if !database.on_this_host() {
        return Ok(None);
    }
    Ok(database
        .server_main_pid()?
        .and_then(crate::host::interference::process_tree_cpu_seconds))
}

/// CPU seconds of an instance's server process, when it runs on this host and one process
/// serves every session (MariaDB); `run db` and `run script` read it around a level.
pub(crate) fn server_process_cpu_s(database: &dyn Database) -> Result<Option<f64>> {
    if !database.on_this_host() {
        return Ok(None);
    }
    Ok(database.server_pid()?.and_then(process_cpu_seconds))
}
