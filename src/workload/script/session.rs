//! One session running a DBA's script: a transaction at a time (a script picked by weight),
//! its variables evaluated in the session, its statements prepared once and bound, each
//! timed; a failure is counted by SQLSTATE and rolled back, or ends the level.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use super::Scripts;
use super::eval::{Value, evaluate};
use super::parse::{Command, Script, Statement, Variables};
use crate::db::driver::{Answer, BoundValue, DbSession};
use crate::db::session_error::SessionError;
use crate::latency::{Arrivals, Pace, SessionClock, StatementTimes, Turn};
use crate::rng::SessionRng;
use crate::workload::figures::count_failure;
use crate::workload::{Sessions, WorkerJob};

/// What one session counted over a level.
pub(crate) struct ScriptTally {
    pub transactions: u64,
    pub failed: u64,
    pub statements: u64,
    pub rows: u64,
    /// Sum and sum of squares of the transactions' times (ms), for pgbench's mean and stddev.
    pub sum_ms: f64,
    pub sum_squares_ms: f64,
    /// Sessions' connection times (s), one per session.
    pub connections_s: Vec<f64>,
    /// Each statement's response times, by its number across the scripts.
    pub statements_times: StatementTimes,
    pub statement_failures: Vec<u64>,
    /// Failed transactions by SQLSTATE.
    pub failures: Vec<(String, u64)>,
    /// CPU time of the session's own server process, where it has one (PostgreSQL).
    pub backend_cpu_s: Option<f64>,
}

impl ScriptTally {
    fn empty(statements: usize) -> Self {
        Self {
            transactions: 0,
            failed: 0,
            statements: 0,
            rows: 0,
            sum_ms: 0.0,
            sum_squares_ms: 0.0,
            connections_s: Vec::new(),
            statements_times: StatementTimes::new(statements),
            statement_failures: vec![0; statements],
            failures: Vec::new(),
            backend_cpu_s: Some(0.0),
        }
    }

    /// Statement `statement` answered with `answer` after `took`.
    fn answered(&mut self, statement: usize, answer: &Answer, took: Duration) {
        self.rows += answer.rows();
        self.statements += 1;
        self.statements_times.record(statement, took);
    }

    /// A transaction ran to its end `ms` after it was due (or sent).
    fn transaction(&mut self, ms: f64) {
        self.transactions += 1;
        self.sum_ms += ms;
        self.sum_squares_ms += ms * ms;
    }

    /// The level's tally: every session's summed, histograms merged.
    pub(crate) fn sum(tallies: Vec<Self>, statements: usize) -> Self {
        let mut total = Self::empty(statements);
        for tally in tallies {
            total.transactions += tally.transactions;
            total.failed += tally.failed;
            total.statements += tally.statements;
            total.rows += tally.rows;
            total.sum_ms += tally.sum_ms;
            total.sum_squares_ms += tally.sum_squares_ms;
            total.connections_s.extend(tally.connections_s);
            total.statements_times.merge(&tally.statements_times);
            for (into, from) in total
                .statement_failures
                .iter_mut()
                .zip(&tally.statement_failures)
            {
                *into += from;
            }
            for (sqlstate, count) in tally.failures {
                count_failure(&mut total.failures, &sqlstate, count);
            }
            total.backend_cpu_s = total
                .backend_cpu_s
                .zip(tally.backend_cpu_s)
                .map(|(a, b)| a + b);
        }
        total
    }

    pub(crate) fn mean_ms(&self) -> f64 {
        if self.transactions == 0 {
            return 0.0;
        }
        self.sum_ms / self.transactions as f64
    }

    pub(crate) fn stddev_ms(&self) -> f64 {
        if self.transactions == 0 {
            return 0.0;
        }
        let mean = self.mean_ms();
        (self.sum_squares_ms / self.transactions as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }

    pub(crate) fn connection_ms(&self) -> f64 {
        if self.connections_s.is_empty() {
            return 0.0;
        }
        1e3 * self.connections_s.iter().sum::<f64>() / self.connections_s.len() as f64
    }
}

pub(crate) struct ScriptSessionJob {
    connection: Box<dyn DbSession>,
    scripts: Arc<Scripts>,
    /// The variables' values in this session, by number.
    values: Vec<Option<Value>>,
    /// Values bound to the statement being sent (reused: nothing allocated per statement).
    bound: Vec<BoundValue>,
    /// A pipeline's answers, and when each came (reused).
    answers: Vec<(Answer, Instant)>,
    /// Where each script's statements start in the numbering across scripts.
    first_statement: Vec<usize>,
    weight_total: u64,
    random: SessionRng,
    tally: ScriptTally,
    connection_s: f64,
    /// The session's server process's CPU time when the level's counting began.
    backend_cpu_start: Option<f64>,
    /// Each transaction's response time, the window's start, and with `--rate` when each
    /// transaction is due.
    clock: SessionClock,
    sessions: Arc<Sessions<ScriptTally>>,
    /// The level's failed transactions, all sessions': touched only when one fails.
    level_failures: Arc<std::sync::atomic::AtomicU64>,
}

impl ScriptSessionJob {
    pub(crate) fn start(
        connection: Box<dyn DbSession>,
        scripts: Arc<Scripts>,
        (worker, workers): (usize, usize),
        rate: Option<(f64, Arrivals)>,
        connection_s: f64,
        (sessions, level_failures): (
            Arc<Sessions<ScriptTally>>,
            Arc<std::sync::atomic::AtomicU64>,
        ),
    ) -> Result<Self> {
        let pace = rate.map(|(level_rate_per_s, arrivals)| Pace {
            level_rate_per_s,
            arrivals,
            seed: 0x5EED,
        });
        let clock = SessionClock::new(
            "transaction",
            scripts.latency_limit,
            pace,
            (worker, workers),
        )
        .ending_after(scripts.level_length);
        let mut values = vec![None; scripts.variables.0.len()];
        for (variable, value) in &scripts.settings {
            values[*variable] = Some(*value);
        }
        if let Some(client) = scripts.variables.find("client_id") {
            values[client].get_or_insert(Value::Int(worker as i64));
        }
        let mut first_statement = Vec::new();
        let mut next = 0;
        for script in &scripts.scripts {
            first_statement.push(next);
            next += script.statements().count();
        }
        let most_bound = scripts
            .rendered
            .iter()
            .map(|(_, bound)| bound.len())
            .max()
            .unwrap_or(0);
        let statements = scripts.rendered.len();
        let mut job = Self {
            connection,
            weight_total: scripts.weights.iter().sum(),
            scripts,
            values,
            bound: Vec::with_capacity(most_bound),
            answers: Vec::with_capacity(statements),
            first_statement,
            random: SessionRng::for_worker(worker, 0x5C81_97F1_0000_0001),
            tally: ScriptTally::empty(statements),
            connection_s,
            backend_cpu_start: None,
            clock,
            sessions,
            level_failures,
        };
        job.backend_cpu_start = job.backend_cpu();
        Ok(job)
    }

    /// The script of the next transaction, by weight.
    fn pick(&mut self) -> usize {
        if self.scripts.scripts.len() == 1 {
            return 0;
        }
        let mut draw = self.random.below(self.weight_total);
        for (index, weight) in self.scripts.weights.iter().enumerate() {
            if draw < *weight {
                return index;
            }
            draw -= weight;
        }
        0
    }

    /// One transaction; returns 1 when it ran to its end, 0 when it failed (counted) or an
    /// open loop's next one is not yet due.
    fn step(&mut self) -> Result<u64> {
        let due = match self.clock.turn() {
            Turn::NotYet => return Ok(0),
            Turn::Due(due) => due,
        };
        let sent = self.clock.elapsed();
        let window_end = self.clock.window_end();
        let script = self.pick();
        // Borrowed apart: the scripts are read while the session's own state changes (no
        // reference count touched per transaction: it is shared by every session).
        let Self {
            connection,
            scripts,
            values,
            bound: bound_values,
            first_statement,
            random,
            tally,
            level_failures,
            answers,
            ..
        } = self;
        let mut statement = first_statement[script];
        // The open pipeline's first statement.
        let mut pipeline: Option<usize> = None;
        for command in &scripts.scripts[script].commands {
            match command {
                Command::Set {
                    variable,
                    value,
                    place,
                } => set(values, *variable, value, place, &scripts.variables, random)?,
                Command::Sleep {
                    length,
                    unit_us,
                    place,
                } => {
                    let length = evaluate(length, values, &scripts.variables, random)
                        .map_err(|problem| anyhow!("{place}: {problem}"))?;
                    sleep_within(sleep_length(length, *unit_us), window_end);
                }
                Command::StartPipeline(_) => pipeline = Some(statement),
                Command::Statement(written) => {
                    let (sql, bound) = &scripts.rendered[statement];
                    bind(bound_values, values, bound, written, &scripts.variables)?;
                    if pipeline.is_some() {
                        connection
                            .queue(statement, sql, bound_values)
                            .with_context(|| format!("{}: {}", written.place, written.shown()))?;
                        statement += 1;
                        continue;
                    }
                    let began = Instant::now();
                    let outcome = connection.execute(statement, sql, bound_values);
                    let took = began.elapsed();
                    match outcome {
                        Ok(answer) => tally.answered(statement, &answer, took),
                        Err(error) => {
                            let failing = Failing { written, statement };
                            return failed(
                                error,
                                failing,
                                scripts,
                                tally,
                                level_failures,
                                connection.as_mut(),
                            );
                        }
                    }
                    statement += 1;
                }
                Command::EndPipeline(_) => {
                    let first = pipeline.take().unwrap_or(statement);
                    if let Err((error, failing)) =
                        run_pipeline(connection.as_mut(), answers, tally, first)
                    {
                        let written = scripts.scripts[script]
                            .statements()
                            .nth(failing - first_statement[script])
                            .ok_or_else(|| error_without_statement(&error))?;
                        let failing = Failing {
                            written,
                            statement: failing,
                        };
                        return failed(
                            error,
                            failing,
                            scripts,
                            tally,
                            level_failures,
                            connection.as_mut(),
                        );
                    }
                }
            }
        }
        let at = self.clock.elapsed();
        self.clock.answered(due, sent, at);
        // From when it was due in an open loop, as the level's latency (and pgbench's).
        (self.tally).transaction(at.saturating_sub(due.unwrap_or(sent)).as_secs_f64() * 1e3);
        Ok(1)
    }

    fn backend_cpu(&self) -> Option<f64> {
        self.connection
            .backend_pid()
            .and_then(crate::host::interference::process_cpu_seconds)
    }

    fn end_of_window(&mut self) {
        self.clock.window_ended();
    }
}

impl WorkerJob for ScriptSessionJob {
    fn run_job(&mut self) -> Result<u64> {
        let mut done = 0;
        let mut tried = 0;
        while tried < self.scripts.job_transactions {
            let before = self.tally.transactions + self.tally.failed;
            done += self.step()?;
            if self.tally.transactions + self.tally.failed > before {
                tried += 1;
            }
        }
        self.end_of_window();
        Ok(done)
    }

    fn run_slice(&mut self) -> Result<u64> {
        self.step()
    }

    fn end_window(&mut self) -> Result<u64> {
        self.end_of_window();
        Ok(0)
    }

    fn session_clock(&mut self) -> Option<&mut SessionClock> {
        Some(&mut self.clock)
    }

    fn warmed_up(&mut self) {
        self.tally = ScriptTally::empty(self.scripts.rendered.len());
        self.clock.forget();
        self.backend_cpu_start = self.backend_cpu();
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        let mut tally = std::mem::replace(
            &mut self.tally,
            ScriptTally::empty(self.scripts.rendered.len()),
        );
        tally.connections_s.push(self.connection_s);
        tally.backend_cpu_s = self
            .backend_cpu()
            .zip(self.backend_cpu_start)
            .map(|(now, then)| now - then);
        self.sessions.hand_in(tally)
    }
}

/// The statement a transaction failed at, and its number across the scripts.
struct Failing<'a> {
    written: &'a Statement,
    statement: usize,
}

/// Sleeps for `length`, but wakes at `until` (the level's end) and at a stop signal: a
/// `\sleep` holds neither a level past its length nor a run past Ctrl-C or SIGTERM.
pub(crate) fn sleep_within(length: Duration, until: Option<Instant>) {
    const GLANCE: Duration = Duration::from_millis(50);
    let now = Instant::now();
    let wake = now
        .checked_add(length)
        .unwrap_or(now + Duration::from_secs(86_400 * 365));
    let wake = until.map_or(wake, |until| wake.min(until));
    loop {
        let now = Instant::now();
        if now >= wake || crate::interrupt::stop_requested() {
            return;
        }
        std::thread::sleep((wake - now).min(GLANCE));
    }
}

/// Sends a pipeline's statements (the first numbered `first`) and reads their answers, each
/// timed from the send to its own answer; on a failure, the number of the statement that
/// failed (the ones before it are answered and counted).
fn run_pipeline(
    connection: &mut dyn DbSession,
    answers: &mut Vec<(Answer, Instant)>,
    tally: &mut ScriptTally,
    first: usize,
) -> std::result::Result<(), (SessionError, usize)> {
    answers.clear();
    let began = Instant::now();
    let outcome = connection
        .send_batch()
        .and_then(|()| connection.answer_batch(answers));
    for (offset, (answer, at)) in answers.iter().enumerate() {
        tally.answered(first + offset, answer, at.saturating_duration_since(began));
    }
    outcome.map_err(|error| (error, first + answers.len()))
}

/// The values of a statement's `bound` variables, into `bound_values` (reused).
fn bind(
    bound_values: &mut Vec<BoundValue>,
    values: &[Option<Value>],
    bound: &[usize],
    written: &Statement,
    variables: &Variables,
) -> Result<()> {
    bound_values.clear();
    for variable in bound {
        let value = values[*variable].ok_or_else(|| {
            anyhow!(
                "{}: :{} is used before it is set",
                written.place,
                variables.name(*variable)
            )
        })?;
        bound_values.push(value.into());
    }
    Ok(())
}

/// A `\sleep`'s length: its value in its unit, a negative one none.
fn sleep_length(length: Value, unit_us: u64) -> Duration {
    let micros = match length {
        Value::Int(value) => value.max(0) as u64,
        Value::Double(value) => value.max(0.0) as u64,
    };
    Duration::from_micros(micros.saturating_mul(unit_us))
}

/// A statement failed: a server's refusal is counted by SQLSTATE and the transaction rolled
/// back (Ok(0)) until more than `--max-failures` failed in the level; anything else, or one
/// failure too many, ends the level with the statement and the server's words.
fn failed(
    error: SessionError,
    Failing { written, statement }: Failing,
    scripts: &Scripts,
    tally: &mut ScriptTally,
    level_failures: &std::sync::atomic::AtomicU64,
    connection: &mut dyn DbSession,
) -> Result<u64> {
    let Some(failure) = error.refusal() else {
        return Err(anyhow::Error::new(error).context(format!(
            "{}: {}",
            written.place,
            written.shown()
        )));
    };
    let failed = level_failures.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if failed > scripts.max_failures {
        return Err(anyhow!(
            "{}: {} failed: {failure}{}",
            written.place,
            written.shown(),
            if scripts.max_failures > 0 {
                format!(
                    " (more than --max-failures {} failed in the level)",
                    scripts.max_failures
                )
            } else {
                " (--max-failures N counts failures by SQLSTATE and goes on)".to_string()
            }
        ));
    }
    tally.failed += 1;
    tally.statement_failures[statement] += 1;
    count_failure(&mut tally.failures, &failure.code.to_string(), 1);
    // Whatever the script opened (BEGIN, START, a savepoint, a chained commit) is closed:
    // ROLLBACK outside a transaction only warns.
    connection
        .run_plain("ROLLBACK")
        .context("rolling back a failed transaction")?;
    Ok(0)
}

/// A pipeline's failure that no statement of it explains (answers beyond its statements).
fn error_without_statement(error: &SessionError) -> anyhow::Error {
    anyhow!("a pipeline failed after its last statement: {error:#}")
}

/// A `\set`: the variable takes its expression's value, or the error names the place.
fn set(
    values: &mut [Option<Value>],
    variable: usize,
    expression: &super::parse::Expression,
    place: &super::parse::Place,
    variables: &Variables,
    random: &mut SessionRng,
) -> Result<()> {
    let value = evaluate(expression, values, variables, random)
        .map_err(|problem| anyhow!("{place}: {problem}"))?;
    values[variable] = Some(value);
    Ok(())
}

/// Runs a script once, from start to end, on a session of its own (`--init`); its
/// statements are prepared and bound as in the run.
pub(crate) fn run_once(
    connection: &mut dyn DbSession,
    script: &Script,
    variables: &Variables,
    placeholder: fn(usize) -> String,
) -> Result<()> {
    let mut values = vec![None; variables.0.len()];
    let mut random = SessionRng::for_worker(0, 0x1417);
    let mut statement = 0;
    for command in &script.commands {
        match command {
            Command::Set {
                variable,
                value,
                place,
            } => set(&mut values, *variable, value, place, variables, &mut random)?,
            // Once, before the sweep: a pipeline's statements run one at a time.
            Command::Sleep { .. } | Command::StartPipeline(_) | Command::EndPipeline(_) => {}
            Command::Statement(written) => {
                let (sql, variables_bound) = written.render(placeholder);
                let mut bound = Vec::new();
                bind(&mut bound, &values, &variables_bound, written, variables)?;
                connection
                    .execute(statement, &sql, &bound)
                    .with_context(|| format!("{}: {}", written.place, written.shown()))?;
                statement += 1;
            }
        }
    }
    Ok(())
}
