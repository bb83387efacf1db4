//! SLOB's statements as each database's SQL writes them. They are the workload's own: the
//! database layer's sessions prepare, bind and send them, knowing no workload (as sysbench's
//! drivers run its Lua scripts' SQL).

use super::tables::{loop_function, table_name};
use crate::db::product::Dialect;
use crate::db::{Answer, BoundValue, Database, SampledStatement};

/// The sessions' indexes for their statements (each session prepares them on first use).
pub(crate) const SELECT: usize = 0;
pub(crate) const UPDATE: usize = 1;
pub(crate) const SERVER_LOOP: usize = 2;

/// One SLOB table's statements, in its database's dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlobStatements {
    /// The table, as the statements name it, and its database's target (for messages).
    pub table: String,
    pub target: String,
    /// Sums scratch over a key range (`first`, `last`): one row, the count of rows visited
    /// last.
    pub select: String,
    /// Adds one to scratch over a key range.
    pub update: String,
    /// Takes one off scratch over a key range: undoes an update sampled for its blocks
    /// where the sample must commit to be counted (MariaDB).
    pub undo_update: String,
    /// Runs `statements` selects in the server (pgio's PL/pgSQL loop): rows, work unit and
    /// statements bound; answers the rows visited. PostgreSQL only.
    pub server_loop: Option<String>,
    /// What a session sets first, so each statement is the SLOB method's index range scan
    /// visiting one heap block per row, planned once.
    pub session_settings: Option<&'static str>,
}

impl SlobStatements {
    /// The statements over schema `schema`'s table of `database`, named as corescale's own
    /// objects are there (quoted, in corescale's schema).
    pub(crate) fn for_table(database: &dyn Database, schema: u64) -> Self {
        let table = database.own_name(&table_name(schema));
        // What differs between dialects: the sum and count of the select, the key range
        // (`key` is a reserved word in MySQL), the loop and the settings.
        let (sum_count, range, server_loop, session_settings) = match database
            .target()
            .product
            .dialect
        {
            Dialect::PostgreSql => (
                "pg_catalog.sum(scratch)::pg_catalog.int8, pg_catalog.count(*)",
                "key BETWEEN $1 AND $2",
                Some(format!(
                    "SELECT {}($1, $2, $3)",
                    database.own_name(&loop_function(schema))
                )),
                Some(
                    "SET enable_bitmapscan = off; SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan",
                ),
            ),
            Dialect::MySql => (
                "CAST(SUM(scratch) AS SIGNED), COUNT(*)",
                "`key` BETWEEN ? AND ?",
                None,
                None,
            ),
            Dialect::Oracle => (
                "SUM(scratch), COUNT(*)",
                "key BETWEEN :1 AND :2",
                None,
                None,
            ),
        };
        let change =
            |sign: char| format!("UPDATE {table} SET scratch = scratch {sign} 1 WHERE {range}");
        Self {
            select: format!("SELECT {sum_count} FROM {table} WHERE {range}"),
            update: change('+'),
            undo_update: change('-'),
            server_loop,
            session_settings,
            target: database.target().to_string(),
            table,
        }
    }
}

/// A select's or update's two bound keys: the first and last of its range.
pub(crate) fn keys(first_key: u64, last_key: u64) -> [BoundValue; 2] {
    [
        BoundValue::Int(first_key as i64),
        BoundValue::Int(last_key as i64),
    ]
}

/// Statements sampled to learn how many blocks one statement visits.
const SAMPLE_STATEMENTS: u64 = 16;

/// The most rows (one-row blocks: 1 GiB) a table's every page is changed on, rolled back,
/// before its updates are sampled. A short first level of README's `--update-pct 20%`
/// example on fresh tables of 2,048 rows counted 1.07x the client's blocks when only the
/// samples' pages had been changed before it (each first change clears a visibility-map
/// bit); a larger table's first level may count up to a block more per page it reaches.
const MOST_ROWS_CHANGED_FIRST: u64 = 131_072;

/// First keys spread over the table for the sample statements.
pub(crate) fn sample_keys(rows: u64, work_unit: u64) -> Vec<u64> {
    let span = rows.saturating_sub(work_unit).max(1);
    // In u128: rows come from the catalogue, which anyone with write access could change.
    (0..SAMPLE_STATEMENTS)
        .map(|index| {
            let spread = u128::from(index) * u128::from(span) / u128::from(SAMPLE_STATEMENTS);
            (spread as u64).saturating_add(index * 7 % span)
        })
        .map(|key| key.min(span - 1))
        .collect()
}

impl SlobStatements {
    /// The blocks one select (or update) over `work_unit` keys visits, by the database's
    /// own count of sample statements spread over a table of `rows` rows.
    pub(crate) fn blocks_per_statement(
        &self,
        database: &dyn Database,
        rows: u64,
        work_unit: u64,
        update: bool,
    ) -> anyhow::Result<f64> {
        let samples: Vec<Vec<BoundValue>> = sample_keys(rows, work_unit)
            .into_iter()
            .map(|first_key| keys(first_key, first_key + work_unit).to_vec())
            .collect();
        let every_page = keys(0, rows);
        database.blocks_per_statement(&SampledStatement {
            settings: self.session_settings,
            sql: if update { &self.update } else { &self.select },
            changes: update,
            undo: update.then_some(self.undo_update.as_str()),
            samples: &samples,
            every_page: (update && rows <= MOST_ROWS_CHANGED_FIRST).then_some(&every_page),
        })
    }
}

/// Statements answered, as the workload counts them: selects and the rows they visited,
/// updates and the rows they changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Answered {
    pub selects: u64,
    pub updates: u64,
    pub rows: u64,
}

impl Answered {
    /// One statement's answer: a select returns its one row, the count of rows it visited
    /// last; an update returns none and says how many rows it changed.
    pub(crate) fn of(answer: Answer) -> Self {
        if answer.returned > 0 {
            Self {
                selects: 1,
                rows: answer.value.map_or(0, |rows| rows.max(0) as u64),
                ..Self::default()
            }
        } else {
            Self {
                updates: 1,
                rows: answer.changed,
                ..Self::default()
            }
        }
    }
}

impl std::ops::AddAssign for Answered {
    fn add_assign(&mut self, other: Self) {
        self.selects += other.selects;
        self.updates += other.updates;
        self.rows += other.rows;
    }
}
