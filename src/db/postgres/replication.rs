//! What runs over several instances or client hosts ask of a server: whether it is a standby,
//! the WAL position a standby must reach and waiting until it replayed that far, and the
//! server's clock, which a campaign's parts agree on.

use anyhow::Result;

use super::Postgres;

impl crate::db::Replication for Postgres {
    fn read_only(&self) -> Result<bool> {
        let answer: String = self.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT (pg_catalog.pg_is_in_recovery() OR pg_catalog.current_setting('default_transaction_read_only')::pg_catalog.bool)::pg_catalog.text",
                &[],
            )
        })?;
        Ok(answer == "true")
    }

    fn is_replica(&self) -> Result<bool> {
        is_replica(self)
    }

    fn replication_position(&self) -> Result<Option<String>> {
        position(self)
    }

    fn wait_replayed(&self, position: &str, limit: std::time::Duration) -> Result<bool> {
        wait_replayed(self, position, limit)
    }
}

/// Whether the server is a standby (in recovery).
pub(super) fn is_replica(postgres: &Postgres) -> Result<bool> {
    let ask = |monitor: &mut super::wire::WireSession| -> Result<String> {
        monitor.query_value(
            "SELECT pg_catalog.pg_is_in_recovery()::pg_catalog.text",
            &[],
        )
    };
    let answer = match postgres.on_monitor(ask) {
        Ok(answer) => answer,
        // Asked before each level of a cluster: a monitor that a restart ended is replaced,
        // and a server still down answers with its error.
        Err(_) => {
            postgres.reconnect_monitor()?;
            postgres.on_monitor(ask)?
        }
    };
    Ok(answer == "true")
}

/// The WAL position a replica must replay: the primary's current one, a standby's replayed one.
pub(super) fn position(postgres: &Postgres) -> Result<Option<String>> {
    // A standby has no WAL of its own to give: its position is what it replayed.
    let position: String = postgres.on_monitor(|monitor| {
        monitor.query_value(
            "SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.pg_last_wal_replay_lsn() ELSE pg_catalog.pg_current_wal_lsn() END::pg_catalog.text",
            &[],
        )
    })?;
    Ok(Some(position))
}

/// Polls the standby's replay position until it reaches `position`, or `limit` passes.
pub(super) fn wait_replayed(
    postgres: &Postgres,
    position: &str,
    limit: std::time::Duration,
) -> Result<bool> {
    let began = std::time::Instant::now();
    loop {
        let replayed: String = postgres.on_monitor(|monitor| {
            monitor.query_value(
                "SELECT coalesce(pg_catalog.pg_last_wal_replay_lsn() OPERATOR(pg_catalog.>=) $1::pg_catalog.pg_lsn, false)::pg_catalog.text",
                &[position],
            )
        })?;
        if replayed == "true" {
            return Ok(true);
        }
        if began.elapsed() >= limit {
            return Ok(false);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The server's clock, in seconds since the epoch (the time of the reading itself).
pub(super) fn clock(postgres: &Postgres) -> Result<f64> {
    postgres.on_monitor(|monitor| {
        monitor.query_value(
            "SELECT pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())::pg_catalog.text",
            &[],
        )
    })
}
