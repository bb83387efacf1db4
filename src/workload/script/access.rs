//! Whether a statement of a DBA's script may change data or the session's access mode, read
//! from the SQL the server runs, not from how it looks: comments are skipped as either
//! server would skip them (PostgreSQL nests `/* */` and ends `--` at the line's end; MySQL
//! and MariaDB also end `#` comments there, need a blank after `--`, and run the contents of
//! `/*! ... */` and `/*M! ... */` as code), and a statement counts as writing when any of
//! those readings finds a write in it. The server holds read-only runs read-only as well
//! (`DbSession::hold_read_only`); this check refuses them early, with the statement named.

use crate::workload::sql_text::{READINGS, code_words};

/// Words that change data wherever they stand: in a data-modifying WITH, after EXPLAIN
/// ANALYZE or PREPARE, in SELECT ... INTO (a new table on PostgreSQL) or FOR UPDATE.
const WRITING_ANYWHERE: &[&str] = &[
    "insert", "update", "delete", "merge", "upsert", "truncate", "into",
];

/// First words of statements that may change data or run code that may.
const WRITING_FIRST: &[&str] = &[
    "insert",
    "update",
    "delete",
    "merge",
    "upsert",
    "replace",
    "create",
    "drop",
    "alter",
    "truncate",
    "copy",
    "grant",
    "revoke",
    "call",
    "do",
    "lock",
    "vacuum",
    "analyze",
    "cluster",
    "reindex",
    "load",
    "rename",
    "comment",
    "refresh",
    "execute",
    "exec",
    "handler",
    "install",
    "uninstall",
    "import",
    "flush",
    "purge",
    "kill",
    "shutdown",
    "reset",
    "discard",
];

/// Whether `sql` may write: change data, or the access mode that keeps a read-only session
/// from writing (`SET SESSION TRANSACTION READ WRITE`, `BEGIN READ WRITE`, any setting
/// named `*read_only`, `RESET`/`DISCARD`, which restore the default).
pub(crate) fn may_write(sql: &str) -> bool {
    changes_access_mode(sql)
        || READINGS.iter().any(|reading| {
            let words = code_words(sql, reading);
            words
                .first()
                .is_some_and(|first| WRITING_FIRST.contains(&first.as_str()))
                || words
                    .iter()
                    .any(|word| WRITING_ANYWHERE.contains(&word.as_str()))
                || words
                    .windows(2)
                    .any(|pair| pair[0] == "read" && pair[1] == "write")
                || words
                    .iter()
                    .any(|word| SETS_ANYTHING.contains(&word.as_str()))
        })
}

/// Words PostgreSQL's hot standby refuses though no table changes: sequences, transaction
/// ids, notifications, row locks for share, serializable transactions (FOR UPDATE is a
/// write already).
const STANDBY_REFUSES: &[&str] = &[
    "nextval",
    "setval",
    "txid_current",
    "pg_current_xact_id",
    "listen",
    "notify",
    "unlisten",
    "serializable",
    "share",
];

/// Whether a hot standby refuses `sql` though it writes nothing `may_write` sees: with
/// `may_write`, what keeps a statement on the primary. A function that writes inside is not
/// seen by either: its refusal on a replica is counted by SQLSTATE.
pub(crate) fn standby_refuses(sql: &str) -> bool {
    READINGS.iter().any(|reading| {
        code_words(sql, reading)
            .iter()
            .any(|word| STANDBY_REFUSES.contains(&word.as_str()))
    })
}

/// Functions and forms that set a setting by a name built at run time (concatenated, or
/// spelled with Unicode escapes), which no reading of the text can follow.
const SETS_ANYTHING: &[&str] = &["set_config"];

/// Whether the text names the session's access mode anywhere, quoted or not (a
/// `set_config('default_transaction_read_only', ...)` passes it as a string), or spells a
/// name with Unicode escapes (`U&"...\005f..."`), which could be any name.
fn changes_access_mode(sql: &str) -> bool {
    let flat = sql
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    flat.contains("read_only")
        || flat.contains("read write")
        || flat.contains("read-write")
        || flat.contains("u&\"")
        || flat.contains("u&'")
}

#[cfg(test)]
mod tests {
    use super::{may_write, standby_refuses};

    /// What `--route reads=replicas` keeps on the primary.
    fn needs_primary(sql: &str) -> bool {
        may_write(sql) || standby_refuses(sql)
    }

    #[test]
    fn what_a_standby_refuses_needs_the_primary() {
        for sql in [
            "SELECT nextval('orders_seq')",
            "SELECT * FROM t WHERE id = 1 FOR KEY SHARE",
            "SELECT * FROM t FOR SHARE",
            "NOTIFY orders",
            "LISTEN orders",
            "BEGIN ISOLATION LEVEL SERIALIZABLE",
            "SELECT pg_catalog.txid_current()",
            "UPDATE t SET a = 1",
        ] {
            assert!(needs_primary(sql), "{sql}");
        }
        for sql in [
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            "SELECT 'nextval' FROM t",
            "/* for share */ SELECT 1",
        ] {
            assert!(!needs_primary(sql), "{sql}");
        }
    }

    #[test]
    fn reads_are_reads() {
        for sql in [
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            "select sum(k) from sbtest1 where id between ? and ?",
            "SELECT 'delete from t' AS text, \"update\" FROM t",
            "/* update everything */ SELECT 1",
            "-- delete\nSELECT 1",
            "SELECT created, updated_at, deleted FROM t",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "SELECT $1::int + $2",
            "SELECT $$delete$$ AS word",
        ] {
            assert!(!may_write(sql), "{sql}");
        }
    }

    #[test]
    fn no_comment_or_quote_hides_a_write() {
        for sql in [
            "DELETE FROM victim WHERE id = 2",
            "/*!DELETE FROM victim WHERE id = 2*/",
            "/*!50000 DELETE */ FROM victim WHERE id = 2",
            "/*M!100100 DELETE */ FROM victim",
            "-- a comment\nDELETE FROM victim",
            "# a comment\nDELETE FROM victim",
            "SELECT 1 --x\nDELETE FROM victim",
            "/* /* */ DELETE FROM victim */",
            "WITH gone AS (DELETE FROM victim RETURNING *) SELECT * FROM gone",
            "EXPLAIN ANALYZE UPDATE t SET a = 1",
            "SELECT * INTO copy FROM t",
            "SELECT * FROM t FOR UPDATE",
            "SET SESSION TRANSACTION READ WRITE",
            "SET STATEMENT tx_read_only=0 FOR DELETE FROM t",
            "BEGIN READ WRITE",
            "START TRANSACTION READ  WRITE",
            "SET default_transaction_read_only = off",
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            "RESET ALL",
            "DISCARD ALL",
            "EXECUTE writer(1)",
            "WITH a AS (SELECT $$'$$), d AS (DELETE FROM victim RETURNING 1) SELECT $$'$$",
            "WITH a AS (SELECT '\\'), d AS (DELETE FROM victim RETURNING 1) SELECT '\\'",
            "WITH a AS (SELECT $x$ ' $x$), d AS (DELETE FROM victim RETURNING 1) SELECT 1",
            "BEGIN READ/**/WRITE",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ--x\nWRITE",
            "SET U&\"default_transaction_read\\005fonly\" = off",
            "SELECT set_config('default_transaction_rea'||'d_only','off',false)",
        ] {
            assert!(may_write(sql), "{sql}");
        }
    }
}
