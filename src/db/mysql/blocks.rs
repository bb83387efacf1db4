//! The blocks a workload's statement visits on MySQL/MariaDB, by the buffer pool's own
//! count around each execution of it as its sessions run it (prepared, binary protocol).

use anyhow::{Context, Result, anyhow};
use mysql::Conn;
use mysql::prelude::Queryable;

use super::session::parameters;
use super::{MySql, connect, describe};
use crate::db::{SampledStatement, mean_of_samples};

/// Executions of each sample statement: the least count is its own.
const SAMPLE_REPEATS: usize = 3;
/// Before each, the buffer pool's counter must stand still this long (no purge, no other
/// session reading)...
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(20);
/// ...waiting at most this long.
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(1);

impl MySql {
    /// The buffer pool's own count around each sample: it holds what ANALYZE's
    /// pages_accessed leaves out (the optimizer's index dives before each execution, 2 pages
    /// here), which the run's counter sees too. Other sessions only add to a delta, so the
    /// least of a few repeats is the statement's own; the status read's own count is
    /// measured and taken off. A change is committed, as the sessions' are, and undone by
    /// the workload's `undo` (not measured): its commit's pages count as the run's do, and
    /// the table's values end as they were.
    pub(super) fn blocks_by_buffer_pool(&self, sampled: &SampledStatement) -> Result<f64> {
        let mut connection = connect(&self.target)?;
        let target = &self.target;
        if let Some(settings) = sampled.settings {
            connection
                .query_drop(settings)
                .map_err(|error| describe(error, target))?;
        }
        let statement = connection
            .prep(sampled.sql)
            .map_err(|error| describe(error, target))?;
        let requests = |connection: &mut Conn| -> Result<f64> {
            let row: Option<(String, String)> = connection
                .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read_requests'")
                .map_err(|error| describe(error, target))?;
            let (_, value) =
                row.ok_or_else(|| anyhow!("{target}: no Innodb_buffer_pool_read_requests"))?;
            value
                .parse()
                .with_context(|| format!("{target}: Innodb_buffer_pool_read_requests = '{value}'"))
        };
        let mut reading = f64::MAX;
        for _ in 0..SAMPLE_REPEATS {
            let before = requests(&mut connection)?;
            reading = reading.min(requests(&mut connection)? - before);
        }
        let undo = match (sampled.changes, sampled.undo) {
            (true, Some(undo)) => Some(
                connection
                    .prep(undo)
                    .map_err(|error| describe(error, target))?,
            ),
            (true, None) => anyhow::bail!(
                "a change sampled on MySQL/MariaDB needs the statement that undoes it"
            ),
            (false, _) => None,
        };
        // InnoDB's purge reads pages in the background after every committed change (the
        // undo's too), and other sessions may run: each execution waits until the counter
        // stands still for a moment, at most a second, so their reads are not its own.
        let settle = |connection: &mut Conn| -> Result<()> {
            let deadline = std::time::Instant::now() + SETTLE_AT_MOST;
            loop {
                let before = requests(connection)?;
                std::thread::sleep(SETTLE_QUIET);
                let quiet = requests(connection)? - before <= reading;
                if quiet || std::time::Instant::now() >= deadline {
                    return Ok(());
                }
            }
        };
        let mut samples = Vec::new();
        for values in sampled.samples {
            let mut least = f64::MAX;
            for _ in 0..SAMPLE_REPEATS {
                settle(&mut connection)?;
                let before = requests(&mut connection)?;
                connection
                    .exec_drop(&statement, parameters(values))
                    .map_err(|error| describe(error, target))?;
                least = least.min(requests(&mut connection)? - before - reading);
                if let Some(undo) = &undo {
                    connection
                        .exec_drop(undo, parameters(values))
                        .map_err(|error| describe(error, target))?;
                }
            }
            samples.push(least);
        }
        mean_of_samples(
            &samples,
            "Innodb_buffer_pool_read_requests around each statement",
        )
    }
}
