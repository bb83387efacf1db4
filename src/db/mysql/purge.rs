//! InnoDB purges a transaction's history in the background after it commits, reading pages
//! as it goes, and its reads are in the server-wide count a run measures by. `db setup`'s own
//! history (17 to 34 transactions here) was purged up to 1.2 s after it returned, 410 to 650
//! read requests: in the first level of a run started at once, 13% of its count when the
//! level was slow. Setup waits for it.

use super::*;

/// The longest setup waits for InnoDB's purge: a busy server's other sessions keep history
/// of their own, which this wait cannot outlast.
const PURGE_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits until InnoDB has no history left to purge, at most `PURGE_LIMIT`; says what is left
/// then. Servers that do not report the history's length (MySQL keeps it in INNODB_METRICS)
/// are not waited for.
pub(super) fn wait_for_purge(connection: &mut Conn, target: &Target) -> Result<()> {
    let started = std::time::Instant::now();
    loop {
        let row: Option<(String, u64)> = connection
            .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")
            .map_err(|error| describe(error, target))?;
        let Some((_, history)) = row else {
            return Ok(());
        };
        if history == 0 {
            return Ok(());
        }
        if started.elapsed() >= PURGE_LIMIT {
            say!(
                "corescale: note: InnoDB still had {history} transactions' history to purge {} s after the setup: a run started now counts the pages its purge reads",
                PURGE_LIMIT.as_secs()
            );
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
