//! The session loop of the db workload: each worker's statements over random key ranges of
//! its table, sent one by one, pipelined or looped in the server, counted by the client so
//! the database's own counters can be checked against them.

use anyhow::Result;

use super::driver::{Answered, DbSession, PlannedStatement};
use super::{DbOptions, process_cpu_seconds};
use crate::workload::rng::SessionRng;
use crate::workload::{SessionCounts, WorkerJob};

/// What one session counted over a level, by the client's own count.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionTally {
    pub statements: u64,
    pub updates: u64,
    pub rows_visited: u64,
    /// Blocks the statements visited, by the blocks one statement visits.
    pub client_blocks: f64,
    /// CPU time of the session's own server process, where it has one (PostgreSQL).
    pub backend_cpu_s: Option<f64>,
    /// Whether the session's statistics reached the server's counters before they were read.
    pub published: bool,
}

/// Statements each session runs before a level's baseline is taken.
const WARM_UP_STATEMENTS: u64 = 50;
/// Statements per server-side loop call (`--server-loop`).
const SERVER_LOOP_STATEMENTS: u64 = 200;

/// Blocks one statement visits, by the database's own per-statement instrumentation.
#[derive(Debug, Clone, Copy)]
pub struct BlocksPer {
    pub select: f64,
    pub update: f64,
}

impl BlocksPer {
    /// Blocks visited by some selects and updates: what the database's LIO counter should
    /// grow by.
    pub fn of(self, selects: u64, updates: u64) -> f64 {
        selects as f64 * self.select + updates as f64 * self.update
    }
}

pub struct DbSessionJob {
    connection: Box<dyn DbSession>,
    options: DbOptions,
    schema: u64,
    rows: u64,
    blocks: BlocksPer,
    random: SessionRng,
    statements: u64,
    updates: u64,
    rows_visited: u64,
    backend_cpu_start: Option<f64>,
}

impl DbSessionJob {
    /// A session on `schema` with `rows` rows, warmed up, its counts and CPU clock starting
    /// now.
    pub fn start(
        connection: Box<dyn DbSession>,
        options: DbOptions,
        worker: usize,
        schema: u64,
        rows: u64,
        blocks: BlocksPer,
    ) -> Result<Self> {
        let mut session = Self {
            connection,
            options,
            schema,
            rows,
            blocks,
            random: SessionRng::for_worker(worker, 0x9E37_79B9_7F4A_7C15),
            statements: 0,
            updates: 0,
            rows_visited: 0,
            backend_cpu_start: None,
        };
        for _ in 0..WARM_UP_STATEMENTS {
            session.select_once()?;
        }
        session.statements = 0;
        session.updates = 0;
        session.rows_visited = 0;
        session.connection.publish_statistics()?;
        session.backend_cpu_start = session.backend_cpu();
        Ok(session)
    }

    fn backend_cpu(&self) -> Option<f64> {
        self.connection.backend_pid().and_then(process_cpu_seconds)
    }

    /// A warm-up select, answered before it returns.
    fn select_once(&mut self) -> Result<()> {
        let statement = self.plan(false);
        let answered = self.connection.submit(statement, 1)?;
        self.count(answered);
        Ok(())
    }

    /// The next statement over a random key range of this session's table.
    fn plan(&mut self, update: bool) -> PlannedStatement {
        let span = if update {
            self.options.update_work_unit.min(self.rows - 1)
        } else {
            self.options.work_unit
        };
        let first_key = self.random.below(self.rows - span);
        PlannedStatement {
            schema: self.schema,
            update,
            first_key,
            last_key: first_key + span,
        }
    }

    /// Counts answered statements; returns the blocks they visited by the client's count.
    fn count(&mut self, answered: Answered) -> u64 {
        self.statements += answered.selects + answered.updates;
        self.updates += answered.updates;
        self.rows_visited += answered.rows;
        self.blocks.of(answered.selects, answered.updates) as u64
    }

    /// One unit of work: a statement sent (or a server-side loop of them); returns blocks
    /// visited by the statements answered meanwhile.
    fn step(&mut self) -> Result<u64> {
        if self.options.server_loop {
            let rows = self.connection.server_loop(
                self.schema,
                self.rows,
                self.options.work_unit,
                SERVER_LOOP_STATEMENTS,
            )?;
            self.statements += SERVER_LOOP_STATEMENTS;
            self.rows_visited += rows;
            return Ok(self.blocks.of(SERVER_LOOP_STATEMENTS, 0) as u64);
        }
        let update = self.random.chance(self.options.update_share);
        let statement = self.plan(update);
        let answered = self.connection.submit(statement, self.options.pipeline)?;
        let blocks = self.count(answered);
        if let Some(pause) = self.options.think_time {
            std::thread::sleep(pause);
        }
        Ok(blocks)
    }

    /// Waits for the statements still in flight; returns the blocks they visited.
    fn drain(&mut self) -> Result<u64> {
        let answered = self.connection.drain()?;
        Ok(self.count(answered))
    }
}

impl WorkerJob for DbSessionJob {
    fn run_job(&mut self) -> Result<u64> {
        let mut blocks = 0;
        for _ in 0..self.options.job_statements {
            blocks += self.step()?;
        }
        Ok(blocks + self.drain()?)
    }

    fn run_slice(&mut self) -> Result<u64> {
        self.step()
    }

    fn end_window(&mut self) -> Result<u64> {
        self.drain()
    }

    fn counters(&mut self) -> SessionCounts {
        // Published before the main thread reads the level's closing counters.
        let published = self.connection.publish_statistics().is_ok();
        let selects = self.statements - self.updates;
        Box::new(SessionTally {
            statements: self.statements,
            updates: self.updates,
            rows_visited: self.rows_visited,
            client_blocks: self.blocks.of(selects, self.updates),
            backend_cpu_s: self
                .backend_cpu_start
                .zip(self.backend_cpu())
                .map(|(start, now)| now - start),
            published,
        })
    }
}
