//! The session loop of the db workload: each worker's statements over random key ranges of
//! its table, sent one by one, pipelined or looped in the server, counted by the client so
//! the database's own counters can be checked against them.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::statements::{Answered, SELECT, SERVER_LOOP, SlobStatements, UPDATE, keys};
use super::{DbOptions, process_cpu_seconds};
use crate::db::{Answer, BoundValue, DbSession, ErrorKind, SessionError};
use crate::latency::{Pace, ResponseTimes, SessionClock, SessionLatency, Turn};
use crate::rng::SessionRng;
use crate::workload::{Sessions, WorkerJob};

/// What one session counted over a level, by the client's own count.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionTally {
    pub statements: u64,
    pub updates: u64,
    pub rows_visited: u64,
    /// Blocks the statements visited, by the blocks one statement visits.
    pub client_blocks: f64,
    /// CPU time of the session's own server process, where it has one (PostgreSQL).
    pub backend_cpu_s: Option<f64>,
    /// Whether the session's statistics reached the server's counters before they were read.
    pub published: bool,
    /// The cluster instance the session ran on (0 with one instance).
    pub instance: usize,
    /// A copy of its response times, kept only when a cluster's figures are per instance.
    pub response: Option<ResponseTimes>,
    /// Why the session ended early: its instance went away (a cluster's run goes on).
    pub failed: Option<String>,
}

/// Statements each session runs before a level's baseline is taken.
const WARM_UP_STATEMENTS: u64 = 50;
/// Statements per server-side loop call (`--server-loop`).
pub(crate) const SERVER_LOOP_STATEMENTS: u64 = 200;

/// Blocks one statement visits, by the database's own per-statement instrumentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlocksPer {
    pub select: f64,
    pub update: f64,
}

impl BlocksPer {
    /// Blocks visited by some selects and updates: what the database's LIO counter should
    /// grow by.
    pub(crate) fn of(self, selects: u64, updates: u64) -> f64 {
        selects as f64 * self.select + updates as f64 * self.update
    }
}

pub(crate) struct DbSessionJob {
    connection: Box<dyn DbSession>,
    options: DbOptions,
    /// The statements over this session's table.
    sql: SlobStatements,
    /// The answers of a batch, as read (reused).
    answers: Vec<(Answer, Instant)>,
    rows: u64,
    blocks: BlocksPer,
    random: SessionRng,
    statements: u64,
    updates: u64,
    rows_visited: u64,
    backend_cpu_start: Option<f64>,
    /// Every answered statement's response time, recorded by this session alone, the
    /// current window's start and, with `--rate`, when each statement is due.
    clock: SessionClock,
    /// Statements in flight, oldest first: when each was due (open loop) and sent.
    in_flight: VecDeque<(Option<Duration>, Duration)>,
    /// Where this session hands its tally in at a level's end: its workload's.
    sessions: std::sync::Arc<Sessions<SessionTally>>,
    /// On a cluster: the level's response times, copied after its last batch.
    response: Option<ResponseTimes>,
    /// On a cluster: why this session stopped (its instance went away); it then idles.
    failed: Option<String>,
}

/// How long a session whose instance went away waits between slices it no longer runs.
const IDLE_AFTER_FAILURE: Duration = Duration::from_millis(5);

/// One answer may hold this many statements' records (two pipelined batches of 64).
const MOST_IN_FLIGHT: usize = 128;

impl DbSessionJob {
    /// A session on the table of `sql` with `rows` rows, warmed up, its counts and CPU clock
    /// starting now.
    pub(crate) fn start(
        mut connection: Box<dyn DbSession>,
        options: DbOptions,
        (worker, workers): (usize, usize),
        sql: SlobStatements,
        rows: u64,
        blocks: BlocksPer,
        sessions: std::sync::Arc<Sessions<SessionTally>>,
    ) -> Result<Self> {
        let unit = if options.server_loop {
            "server-side loop call"
        } else {
            "statement"
        };
        // The level's rate, shared evenly; uniform arrivals of the sessions interleave.
        let pace = options.rate.map(|level_rate_per_s| Pace {
            level_rate_per_s,
            arrivals: options.arrivals,
            seed: options.arrivals_seed,
        });
        let clock = SessionClock::new(unit, options.latency_limit, pace, (worker, workers));
        if let Some(settings) = sql.session_settings {
            connection.run_plain(settings)?;
        }
        let mut session = Self {
            connection,
            options,
            sql,
            answers: Vec::with_capacity(MOST_IN_FLIGHT),
            rows,
            blocks,
            random: SessionRng::for_worker(worker, 0x9E37_79B9_7F4A_7C15),
            statements: 0,
            updates: 0,
            rows_visited: 0,
            backend_cpu_start: None,
            clock,
            in_flight: VecDeque::with_capacity(MOST_IN_FLIGHT),
            sessions,
            response: None,
            failed: None,
        };
        for _ in 0..WARM_UP_STATEMENTS {
            session.select_once()?;
        }
        session.statements = 0;
        session.updates = 0;
        session.rows_visited = 0;
        // Best effort: PostgreSQL before 15 has no way to publish at once (it sends its
        // statistics every half second), and the level's figures say when one could not.
        let _ = session.connection.publish_statistics();
        session.backend_cpu_start = session.backend_cpu();
        Ok(session)
    }

    fn backend_cpu(&self) -> Option<f64> {
        self.connection.backend_pid().and_then(process_cpu_seconds)
    }

    /// A warm-up select, answered before it returns.
    fn select_once(&mut self) -> Result<()> {
        let (first_key, last_key) = self.key_range(false);
        let answer = self
            .connection
            .execute(SELECT, &self.sql.select, &keys(first_key, last_key))
            .map_err(|error| self.failed(error))?;
        self.count(Answered::of(answer));
        Ok(())
    }

    /// The next statement's key range, random over this session's table.
    fn key_range(&mut self, update: bool) -> (u64, u64) {
        let span = if update {
            self.options.update_work_unit.min(self.rows - 1)
        } else {
            self.options.work_unit
        };
        let first_key = self.random.below(self.rows - span);
        (first_key, first_key + span)
    }

    /// Sends one statement. Pipelined, it is queued until `--pipeline` are, then sent under
    /// one Sync (one implicit transaction), with up to two batches in flight: the oldest is
    /// answered once that limit is reached. An update ends its batch, so its row locks are
    /// held no longer than in autocommit and sessions sharing a table cannot deadlock.
    /// Returns what was answered meanwhile.
    fn submit(&mut self, update: bool) -> Result<Answered> {
        let (first_key, last_key) = self.key_range(update);
        let (index, sql) = if update {
            (UPDATE, &self.sql.update)
        } else {
            (SELECT, &self.sql.select)
        };
        let values = keys(first_key, last_key);
        if self.options.pipeline <= 1 {
            let answer = self.connection.execute(index, sql, &values);
            return answer.map(Answered::of).map_err(|error| self.failed(error));
        }
        let sent = self.connection.queue(index, sql, &values).and_then(|()| {
            if self.connection.queued() < self.options.pipeline && !update {
                return Ok(false);
            }
            self.connection.send_batch().map(|()| true)
        });
        if !sent.map_err(|error| self.failed(error))? || self.connection.batches_in_flight() < 2 {
            return Ok(Answered::default());
        }
        self.answer_batch()
    }

    /// The oldest batch's answers.
    fn answer_batch(&mut self) -> Result<Answered> {
        self.answers.clear();
        let outcome = self.connection.answer_batch(&mut self.answers);
        let mut answered = Answered::default();
        for (answer, _) in &self.answers {
            answered += Answered::of(*answer);
        }
        outcome
            .map(|()| answered)
            .map_err(|error| self.failed(error))
    }

    /// A statement's failure with what to do about it: a missing table was never set up,
    /// or was dropped since; a refused one needs privileges.
    fn failed(&self, error: SessionError) -> anyhow::Error {
        let SlobStatements { table, target, .. } = &self.sql;
        let hint = match error.refusal().map(|refusal| refusal.code.kind()) {
            Some(ErrorKind::MissingTable) => format!(
                "SLOB's table {table} is missing in {target}: run `corescale db setup --target {target}` first"
            ),
            Some(ErrorKind::Privilege) => format!(
                "SLOB's statement on {table} in {target}: the user needs SELECT and UPDATE on corescale's tables"
            ),
            _ => format!("SLOB's statement on {table} in {target}"),
        };
        anyhow::Error::new(error).context(hint)
    }

    /// Counts answered statements; returns the blocks they visited by the client's count.
    fn count(&mut self, answered: Answered) -> u64 {
        self.statements += answered.selects + answered.updates;
        self.updates += answered.updates;
        self.rows_visited += answered.rows;
        self.blocks.of(answered.selects, answered.updates) as u64
    }

    /// Records the answers that came back, oldest in flight first.
    fn answered(&mut self, count: u64) {
        if !self.options.record_latency {
            return;
        }
        let at = self.clock.elapsed();
        for _ in 0..count {
            if let Some((due, sent)) = self.in_flight.pop_front() {
                self.clock.answered(due, sent, at);
            }
        }
    }

    /// One unit of work: a statement sent (or a server-side loop of them); returns the blocks
    /// visited by the statements answered meanwhile, or None when an open loop's next
    /// statement is not yet due.
    fn step(&mut self) -> Result<Option<u64>> {
        let due = match self.clock.turn() {
            Turn::NotYet => return Ok(None),
            Turn::Due(due) => due,
        };
        // Without recording (a closed loop measuring its cost), the loop reads no clock
        // (PostgreSQL's client stamps each socket read it answers from, one per batch).
        let sent = if self.options.record_latency || due.is_some() {
            self.clock.elapsed()
        } else {
            Duration::ZERO
        };
        if self.options.server_loop {
            return self.server_loop(due, sent).map(Some);
        }
        let update = self.random.chance(self.options.update_share);
        if self.options.record_latency {
            self.in_flight.push_back((due, sent));
        }
        let answered = self.submit(update)?;
        self.answered(answered.selects + answered.updates);
        let blocks = self.count(answered);
        if let Some(pause) = self.options.think_time {
            std::thread::sleep(pause);
        }
        Ok(Some(blocks))
    }

    /// One call of the server-side loop, timed from when it was due (or sent); returns the
    /// blocks its statements visited.
    fn server_loop(&mut self, due: Option<Duration>, sent: Duration) -> Result<u64> {
        let Some(sql) = &self.sql.server_loop else {
            bail!("--server-loop needs PostgreSQL's server-side loop; this database has none");
        };
        let values = [
            BoundValue::Int(self.rows as i64),
            BoundValue::Int(self.options.work_unit as i64),
            BoundValue::Int(SERVER_LOOP_STATEMENTS as i64),
        ];
        let answer = (self.connection.execute(SERVER_LOOP, sql, &values))
            .map_err(|error| self.failed(error))
            .context("calling the server-side loop (was it created by `corescale db setup`?)")?;
        if self.options.record_latency {
            let at = self.clock.elapsed();
            self.clock.answered(due, sent, at);
        }
        self.statements += SERVER_LOOP_STATEMENTS;
        self.rows_visited += answer.value.map_or(0, |rows| rows.max(0) as u64);
        Ok(self.blocks.of(SERVER_LOOP_STATEMENTS, 0) as u64)
    }

    /// Waits for the statements still in flight; returns the blocks they visited. Ends the
    /// window: an open loop counts the statements due that it did not send.
    fn drain(&mut self) -> Result<u64> {
        let mut answered = Answered::default();
        if self.connection.queued() > 0 {
            self.connection
                .send_batch()
                .map_err(|error| self.failed(error))?;
        }
        while self.connection.batches_in_flight() > 0 {
            answered += self.answer_batch()?;
        }
        self.answered(answered.selects + answered.updates);
        self.clock.window_ended();
        Ok(self.count(answered))
    }
}

impl DbSessionJob {
    /// On a cluster, a session whose instance fails stops and records why, so the level and
    /// the other instances' sessions go on; with one instance the failure ends the level.
    fn survive(&mut self, outcome: Result<u64>) -> Result<u64> {
        match outcome {
            Err(error) if self.options.instance.is_some() => {
                self.failed = Some(format!("{error:#}"));
                self.in_flight.clear();
                Ok(0)
            }
            outcome => outcome,
        }
    }

    fn job(&mut self) -> Result<u64> {
        let mut blocks = 0;
        let mut sent = 0;
        while sent < self.options.job_statements {
            if let Some(done) = self.step()? {
                blocks += done;
                sent += 1;
            }
        }
        Ok(blocks + self.drain()?)
    }
}

impl WorkerJob for DbSessionJob {
    fn run_job(&mut self) -> Result<u64> {
        if self.failed.is_some() {
            return Ok(0);
        }
        let outcome = self.job();
        self.survive(outcome)
    }

    fn run_slice(&mut self) -> Result<u64> {
        if self.failed.is_some() {
            std::thread::sleep(IDLE_AFTER_FAILURE);
            return Ok(0);
        }
        let outcome = self.step().map(|blocks| blocks.unwrap_or(0));
        self.survive(outcome)
    }

    fn end_window(&mut self) -> Result<u64> {
        if self.failed.is_some() {
            return Ok(0);
        }
        let outcome = self.drain();
        self.survive(outcome)
    }

    fn session_clock(&mut self) -> Option<&mut SessionClock> {
        Some(&mut self.clock)
    }

    fn latency(&mut self) -> Option<SessionLatency> {
        let latency = self.clock.take();
        if self.options.instance.is_some() {
            self.response = Some(latency.response.clone());
        }
        Some(latency)
    }

    fn warmed_up(&mut self) {
        self.statements = 0;
        self.updates = 0;
        self.rows_visited = 0;
        self.clock.forget();
        // Published before the main thread reads the level's baseline, as after the start's
        // warm-up statements.
        let _ = self.connection.publish_statistics();
        self.backend_cpu_start = self.backend_cpu();
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        let tally = self.tally();
        self.sessions.hand_in(tally)
    }
}

impl DbSessionJob {
    /// What this session counted over the level, its statistics published first (before
    /// the main thread reads the level's closing counters).
    pub(crate) fn tally(&mut self) -> SessionTally {
        let published = self.failed.is_none() && self.connection.publish_statistics().is_ok();
        let selects = self.statements - self.updates;
        SessionTally {
            statements: self.statements,
            updates: self.updates,
            rows_visited: self.rows_visited,
            client_blocks: self.blocks.of(selects, self.updates),
            backend_cpu_s: self
                .backend_cpu_start
                .zip(self.backend_cpu())
                .map(|(start, now)| now - start),
            published,
            instance: self.options.instance.unwrap_or(0),
            response: self.response.take(),
            failed: self.failed.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The session loop against a fake driver: what it sends, and how it counts answers that
    //! come back late (pipelined) or not at all.
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::db::cluster::Route;

    /// A statement the fake received: its kind, key range and text.
    #[derive(Debug, Clone)]
    struct Sent {
        update: bool,
        first_key: u64,
        last_key: u64,
        sql: String,
    }

    /// A driver that records every statement and answers its batches as
    /// `db::postgres::wire` does (late, when pipelined); each statement visits its key range.
    struct Fake {
        sent: Arc<Mutex<Vec<Sent>>>,
        queued: Vec<Sent>,
        batches: std::collections::VecDeque<Vec<Sent>>,
        published: bool,
    }

    impl Fake {
        fn record(&mut self, index: usize, sql: &str, values: &[BoundValue]) -> Sent {
            let key = |value: &BoundValue| match value {
                BoundValue::Int(key) => *key as u64,
                BoundValue::Double(_) | BoundValue::Text(_) | BoundValue::Null => {
                    panic!("keys are integers")
                }
            };
            let sent = Sent {
                update: index == UPDATE,
                first_key: key(&values[0]),
                last_key: key(&values[1]),
                sql: sql.to_string(),
            };
            self.sent.lock().unwrap().push(sent.clone());
            sent
        }
    }

    /// What the database answers for a statement over its key range.
    fn answer(statement: &Sent) -> Answer {
        let rows = statement.last_key - statement.first_key + 1;
        if statement.update {
            Answer {
                changed: rows,
                ..Answer::default()
            }
        } else {
            Answer {
                returned: 1,
                value: Some(rows as i64),
                ..Answer::default()
            }
        }
    }

    impl DbSession for Fake {
        fn execute(
            &mut self,
            index: usize,
            sql: &str,
            values: &[BoundValue],
        ) -> Result<Answer, SessionError> {
            assert!(self.batches.is_empty(), "a statement outside the pipeline");
            Ok(answer(&self.record(index, sql, values)))
        }
        fn queue(
            &mut self,
            index: usize,
            sql: &str,
            values: &[BoundValue],
        ) -> Result<(), SessionError> {
            let sent = self.record(index, sql, values);
            self.queued.push(sent);
            Ok(())
        }
        fn send_batch(&mut self) -> Result<(), SessionError> {
            let batch = std::mem::take(&mut self.queued);
            self.batches.push_back(batch);
            Ok(())
        }
        fn queued(&self) -> usize {
            self.queued.len()
        }
        fn batches_in_flight(&self) -> usize {
            self.batches.len()
        }
        fn answer_batch(
            &mut self,
            answered: &mut Vec<(Answer, Instant)>,
        ) -> Result<(), SessionError> {
            let batch = self.batches.pop_front().unwrap_or_default();
            answered.extend(batch.iter().map(|sent| (answer(sent), Instant::now())));
            Ok(())
        }
        fn run_plain(&mut self, _sql: &str) -> Result<Answer, SessionError> {
            Ok(Answer::default())
        }
        fn publish_statistics(&mut self) -> Result<()> {
            if self.published {
                Ok(())
            } else {
                anyhow::bail!("statistics stayed with the session")
            }
        }
    }

    fn fake(sent: &Arc<Mutex<Vec<Sent>>>, published: bool) -> Box<Fake> {
        Box::new(Fake {
            sent: Arc::clone(sent),
            queued: Vec::new(),
            batches: std::collections::VecDeque::new(),
            published,
        })
    }

    /// The statements of the sessions' table.
    fn sql() -> SlobStatements {
        SlobStatements {
            table: "t1".to_string(),
            target: "postgres://u@db/test".to_string(),
            select: "select t1".to_string(),
            update: "update t1".to_string(),
            undo_update: "undo t1".to_string(),
            server_loop: None,
            session_settings: None,
        }
    }

    fn options(update_share: f64, pipeline: usize) -> DbOptions {
        DbOptions {
            work_unit: 10,
            update_share,
            update_work_unit: 4,
            server_loop: false,
            think_time: None,
            job_statements: 1000,
            pipeline,
            rates: Vec::new(),
            searched: false,
            rate: None,
            record_latency: true,
            arrivals: crate::latency::Arrivals::Uniform,
            arrivals_seed: 1,
            latency_limit: None,
            route: Route::default(),
            replay_limit: Duration::from_secs(120),
            instance: None,
        }
    }

    const BLOCKS: BlocksPer = BlocksPer {
        select: 11.0,
        update: 5.0,
    };

    fn session(options: DbOptions) -> (DbSessionJob, Arc<Mutex<Vec<Sent>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let job = DbSessionJob::start(
            fake(&sent, true),
            options,
            (3, 4),
            sql(),
            500,
            BLOCKS,
            Arc::default(),
        )
        .unwrap();
        sent.lock().unwrap().clear();
        (job, sent)
    }

    fn tally(job: &mut DbSessionJob) -> SessionTally {
        job.tally()
    }

    #[test]
    fn statements_are_the_asked_mix_over_the_sessions_table() {
        let (mut job, sent) = session(options(0.25, 1));
        job.run_job().unwrap();
        let sent = sent.lock().unwrap();
        assert_eq!(sent.len(), 1000);
        let updates = sent.iter().filter(|statement| statement.update).count();
        assert!((200..300).contains(&updates), "{updates} updates of 1000");
        for statement in sent.iter() {
            let table = sql();
            let text = if statement.update {
                &table.update
            } else {
                &table.select
            };
            assert_eq!(&statement.sql, text);
            let span = if statement.update { 4 } else { 10 };
            assert_eq!(statement.last_key - statement.first_key, span);
            assert!(statement.last_key < 500);
        }
    }

    #[test]
    fn pipelined_answers_are_counted_once_and_none_is_lost() {
        for pipeline in [1, 3, 32] {
            let (mut job, sent) = session(options(0.2, pipeline));
            let blocks = job.run_job().unwrap();
            let sent = sent.lock().unwrap().clone();
            let updates = sent.iter().filter(|statement| statement.update).count() as u64;
            let selects = sent.len() as u64 - updates;
            // The job drains what is in flight: every statement it sent is counted in it.
            assert_eq!(
                blocks,
                BLOCKS.of(selects, updates) as u64,
                "pipeline {pipeline}"
            );
            let counted = tally(&mut job);
            assert_eq!(counted.statements, 1000, "pipeline {pipeline}");
            assert_eq!(counted.updates, updates);
            let rows: u64 = sent.iter().map(|s| s.last_key - s.first_key + 1).sum();
            assert_eq!(counted.rows_visited, rows);
            assert_eq!(counted.client_blocks, BLOCKS.of(selects, updates));
            assert!(counted.published);
        }
    }

    #[test]
    fn every_answered_statement_is_timed_once_pipelined_or_not() {
        for pipeline in [1, 3, 32] {
            let (mut job, sent) = session(options(0.2, pipeline));
            job.window_started(Instant::now());
            job.run_job().unwrap();
            let latency = job.latency().unwrap();
            assert_eq!(latency.response.count(), 1000, "pipeline {pipeline}");
            assert_eq!(sent.lock().unwrap().len(), 1000);
            assert!(latency.open.is_none());
        }
    }

    #[test]
    fn an_open_loop_sends_at_its_share_of_the_rate() {
        // 4,000/s for the level, 4 sessions: this one sends 1,000/s, 100 in a 100 ms window.
        let mut paced = options(0.0, 1);
        paced.rate = Some(4000.0);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let mut job = DbSessionJob::start(
            fake(&sent, true),
            paced,
            (1, 4),
            sql(),
            500,
            BLOCKS,
            Arc::default(),
        )
        .unwrap();
        sent.lock().unwrap().clear();
        let began = Instant::now();
        job.window_started(began);
        while began.elapsed() < Duration::from_millis(100) {
            job.run_slice().unwrap();
        }
        job.end_window().unwrap();
        let statements = sent.lock().unwrap().len();
        // Sleeping to each due time may overshoot on a busy host, never send early.
        assert!((80..=101).contains(&statements), "{statements} statements");
        let figures = job.latency().unwrap().figures(0.1).unwrap();
        let rate = figures.rate.unwrap();
        assert_eq!(rate.target_per_s, 1000.0);
        assert_eq!(rate.sent as usize, statements);
        assert_eq!(figures.measured_from, crate::latency::MeasuredFrom::Due);
    }

    #[test]
    fn a_refused_statement_says_what_to_do_and_where() {
        let (job, _) = session(options(0.0, 1));
        let refused = |sqlstate: &str| {
            let code = crate::db::ServerCode::SqlState(crate::db::SqlState::new(sqlstate).unwrap());
            let failure = SessionError::refused(code, "the server's words");
            format!("{:#}", job.failed(failure))
        };
        let missing = refused("42P01");
        assert!(
            missing.contains(
                "SLOB's table t1 is missing in postgres://u@db/test: run `corescale db setup --target postgres://u@db/test` first"
            ) && missing.contains("the server's words (SQLSTATE 42P01)"),
            "{missing}"
        );
        assert!(refused("42501").contains("needs SELECT and UPDATE"));
        let other = refused("40P01");
        assert!(
            other.starts_with("SLOB's statement on t1 in postgres://u@db/test: "),
            "{other}"
        );
    }

    #[test]
    fn a_session_that_cannot_publish_says_so() {
        let (mut job, _) = session(options(0.0, 1));
        job.run_job().unwrap();
        // Swap in a driver whose statistics stay with it.
        job.connection = fake(&Arc::new(Mutex::new(Vec::new())), false);
        assert!(!tally(&mut job).published);
    }
}
