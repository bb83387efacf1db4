//! One lane of a replay: its captured sessions' statements sent in order, each when it
//! was due (its captured offset over the speed), timed from then; a new captured session
//! connects anew as soon as the one before it in the lane is done.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use super::commit_order::{CommitBoard, Waited};
use super::load::Sent;
use crate::db::Database;
use crate::db::driver::DbSession;
use crate::db::session_error::SessionError;
use crate::latency::{SessionClock, StatementTimes, Turn};
use crate::workload::figures::count_failure;
use crate::workload::{Sessions, WorkerJob};

/// How long past its window's end a lane may go on sending the statements due within it.
const END_GRACE: Duration = Duration::from_millis(250);

/// What one lane counted over a level.
pub(crate) struct ReplayTally {
    pub sent: u64,
    /// Each fingerprint's service times (from the send: what the server took, as the
    /// captured durations are).
    pub times: StatementTimes,
    /// Statements the server refused, by SQLSTATE.
    pub failures: Vec<(String, u64)>,
    pub connections: u64,
    pub connecting_s: f64,
    /// Statements sent before a commit the capture shows before them was answered: the
    /// level's end came first.
    pub out_of_order: u64,
    /// Each fingerprint's answers as rows: summed, failed, and a checksum of the row
    /// counts in the order each lane sent them.
    pub rows: Vec<FingerprintRows>,
    /// Seconds the lanes waited on answers (sent to answered), and the most one lane did:
    /// a lane that waited most of the level was held by the server, one that did not was
    /// late in sending.
    pub waiting_s: f64,
    pub busiest_waiting_s: f64,
    /// Seconds the lanes' threads waited, runnable, for a CPU (None where the kernel does
    /// not say): a client short of CPU.
    pub starved_s: Option<f64>,
    /// Captured sessions with a statement the server refused (Database Replay's failed
    /// sessions).
    pub sessions_with_errors: u64,
}

/// One fingerprint's rows over a level: what two replays of one capture compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FingerprintRows {
    /// Rows returned (or, where none, changed), summed.
    pub rows: u64,
    /// Statements the server refused.
    pub failed: u64,
    /// The row counts in statement order: a lane's running hash while it replays, then
    /// summed over lanes, each mixed with its lane's number.
    pub checksum: u64,
}

/// splitmix64's finaliser: a well-mixed 64-bit hash step.
fn mixed(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

impl ReplayTally {
    pub fn empty(fingerprints: usize) -> Self {
        Self {
            sent: 0,
            times: StatementTimes::new(fingerprints),
            failures: Vec::new(),
            connections: 0,
            connecting_s: 0.0,
            out_of_order: 0,
            rows: vec![FingerprintRows::default(); fingerprints],
            waiting_s: 0.0,
            busiest_waiting_s: 0.0,
            starved_s: Some(0.0),
            sessions_with_errors: 0,
        }
    }

    pub fn add(&mut self, other: Self) {
        self.sent += other.sent;
        self.times.merge(&other.times);
        for (sqlstate, count) in other.failures {
            count_failure(&mut self.failures, &sqlstate, count);
        }
        self.connections += other.connections;
        self.connecting_s += other.connecting_s;
        self.out_of_order += other.out_of_order;
        self.waiting_s += other.waiting_s;
        self.busiest_waiting_s = self.busiest_waiting_s.max(other.busiest_waiting_s);
        self.starved_s = self.starved_s.zip(other.starved_s).map(|(a, b)| a + b);
        self.sessions_with_errors += other.sessions_with_errors;
        for (mine, theirs) in self.rows.iter_mut().zip(other.rows) {
            mine.rows += theirs.rows;
            mine.failed += theirs.failed;
            mine.checksum = mine.checksum.wrapping_add(theirs.checksum);
        }
    }

    /// One statement's answer: its rows (None when refused) in its fingerprint's figures.
    fn answered(&mut self, fingerprint: usize, rows: Option<u64>) {
        let Some(figures) = self.rows.get_mut(fingerprint) else {
            return;
        };
        match rows {
            Some(rows) => figures.rows += rows,
            None => figures.failed += 1,
        }
        // A refusal is its own mark in the order, distinct from every count of rows.
        figures.checksum = mixed(figures.checksum ^ rows.map_or(u64::MAX, mixed));
    }

    /// Hands the lane's checksums in: each mixed with its lane's number, so two lanes'
    /// answers swapped read as a change.
    fn sealed(mut self, lane: usize) -> Self {
        self.busiest_waiting_s = self.waiting_s;
        for figures in &mut self.rows {
            figures.checksum = mixed(figures.checksum ^ mixed(lane as u64 + 1));
        }
        self
    }
}

/// One instance as each captured user connects to it, by number in `Replay::users`.
pub(crate) type AsUsers = Arc<[Arc<dyn Database>]>;

/// How a lane connects: the instances (the primary, then the replicas the sessions that
/// only read go to), each as each captured user is replayed (`--map`), and whether its
/// sessions are held read-only.
#[derive(Clone)]
pub(crate) struct Connector {
    /// By instance, then by number in `Replay::users`.
    pub as_user: Arc<[AsUsers]>,
    pub read_only: bool,
}

impl Connector {
    /// The instance a captured session goes to: the primary, or, when it only reads and
    /// there are replicas, replica `reader` (in turn).
    pub fn instance_for(&self, reads_only: bool, reader: usize) -> usize {
        let replicas = self.as_user.len() - 1;
        if reads_only && replicas > 0 {
            1 + reader % replicas
        } else {
            0
        }
    }

    /// A session for a captured session of user `user` (its number) on `instance`.
    pub fn connect(&self, user: usize, instance: usize) -> Result<Box<dyn DbSession>> {
        let mut session = self.as_user[instance][user].open_script_session()?;
        if self.read_only {
            session
                .hold_read_only()
                .context("holding the session read-only at the server")?;
        }
        Ok(session)
    }
}

pub(crate) struct ReplaySessionJob {
    connection: Box<dyn DbSession>,
    connector: Connector,
    /// The lane's statements, in order (shared, read-only).
    statements: Arc<[Sent]>,
    number: usize,
    next: usize,
    clock: SessionClock,
    tally: ReplayTally,
    fingerprints: usize,
    sessions: Arc<Sessions<ReplayTally>>,
    /// Sessions of the lane that went to a replica: the next goes to the one after.
    readers: usize,
    /// A window began on a connection that has sent statements: the lane's first session
    /// connects anew, as it was captured.
    rewound: bool,
    /// Whether the connection is the lane's first session's and has sent nothing yet (no
    /// transaction, setting or table of a session left on it).
    fresh: bool,
    /// The level's commits as answered (None: `--synchronize none`).
    commits: Option<Arc<CommitBoard>>,
    /// The window being replayed, counted from 1 (each window moves it on): the board's
    /// marks carry it.
    window: u32,
    /// When waits for commits end: once the level's end has passed, an open transaction
    /// is finished without them.
    waits_end: Option<Instant>,
    /// The thread's run delay when the window began.
    run_delay: Option<Duration>,
    /// Whether the captured session being replayed has had a statement refused.
    session_failed: bool,
}

impl ReplaySessionJob {
    pub fn start(
        connector: Connector,
        statements: Arc<[Sent]>,
        number: usize,
        clock: SessionClock,
        fingerprints: usize,
        sessions: Arc<Sessions<ReplayTally>>,
        commits: Option<Arc<CommitBoard>>,
    ) -> Result<Self> {
        let began = Instant::now();
        let (user, reads_only) = statements
            .first()
            .map_or((0, false), |first| (first.user, first.reads_only));
        let instance = connector.instance_for(reads_only, number);
        let connection = connector.connect(user, instance)?;
        let mut tally = ReplayTally::empty(fingerprints);
        tally.connections = 1;
        tally.connecting_s = began.elapsed().as_secs_f64();
        Ok(Self {
            connection,
            connector,
            statements,
            number,
            next: 0,
            clock,
            tally,
            fingerprints,
            sessions,
            readers: usize::from(reads_only),
            rewound: false,
            fresh: true,
            commits,
            window: 1,
            waits_end: None,
            run_delay: None,
            session_failed: false,
        })
    }

    /// The next statement, when it is due; 1 when one was sent.
    fn step(&mut self) -> Result<u64> {
        if std::mem::take(&mut self.rewound)
            && let Some(first) = self.statements.first()
        {
            // The last window used the connection: the first session connects anew, as
            // captured, before it is due where it can.
            self.readers = 0;
            self.reconnect(first.user, first.reads_only)?;
        }
        let due = match self.clock.turn() {
            Turn::NotYet => return Ok(0),
            Turn::Due(due) => due,
        };
        let Some(statement) = self.statements.get(self.next) else {
            return Ok(0);
        };
        self.next += 1;
        self.fresh = false;
        if let Some(board) = &self.commits
            && board.wait(self.window, statement.order.after, self.waits_end) == Waited::GaveUp
        {
            self.tally.out_of_order += 1;
        }
        let sent = self.clock.elapsed();
        let outcome = match &statement.prepared {
            Some((index, values)) => self.connection.execute(*index, &statement.sql, values),
            None => self.connection.run_plain(&statement.sql),
        };
        let answered = self.clock.elapsed();
        if let (Some(board), Some(number)) = (&self.commits, statement.order.commit) {
            board.answered(self.window, number);
        }
        self.clock.answered(due, sent, answered);
        self.tally.sent += 1;
        let service = answered.saturating_sub(sent);
        self.tally.waiting_s += service.as_secs_f64();
        match outcome {
            Ok(answer) => {
                self.tally.times.record(statement.fingerprint, service);
                self.tally
                    .answered(statement.fingerprint, Some(answer.rows()));
            }
            Err(error) => match error.refusal() {
                // Counted by its code, never with its message (which may quote values).
                Some(failure) => {
                    count_failure(&mut self.tally.failures, &failure.code.to_string(), 1);
                    self.tally.answered(statement.fingerprint, None);
                    if !std::mem::replace(&mut self.session_failed, true) {
                        self.tally.sessions_with_errors += 1;
                    }
                }
                None => {
                    return Err(anyhow!(
                        "lane {}, fingerprint {} (statement {} of the lane): {}",
                        self.number + 1,
                        statement.fingerprint + 1,
                        self.next,
                        without_text(&error)
                    ));
                }
            },
        }
        // The next captured session connects now, before its first statement is due.
        if let Some(next) = self.statements.get(self.next)
            && next.new_session
        {
            self.reconnect(next.user, next.reads_only)?;
        }
        Ok(1)
    }

    /// Whether the last statement sent left its session in a transaction.
    fn in_transaction(&self) -> bool {
        self.next
            .checked_sub(1)
            .and_then(|last| self.statements.get(last))
            .is_some_and(|last| last.order.open)
    }

    fn reconnect(&mut self, user: usize, reads_only: bool) -> Result<()> {
        let began = Instant::now();
        let instance = self
            .connector
            .instance_for(reads_only, self.number + self.readers);
        self.readers += usize::from(reads_only);
        self.fresh = self.next == 0;
        self.session_failed = false;
        self.connection = self.connector.connect(user, instance).with_context(|| {
            format!("lane {}: connecting for its next session", self.number + 1)
        })?;
        self.tally.connections += 1;
        self.tally.connecting_s += began.elapsed().as_secs_f64();
        Ok(())
    }
}

/// An error's words without the statement's text or values: the first line of its chain.
fn without_text(error: &SessionError) -> String {
    let text = format!("{error:#}");
    text.lines().next().unwrap_or_default().to_string()
}

impl WorkerJob for ReplaySessionJob {
    fn run_job(&mut self) -> Result<u64> {
        let mut done = 0;
        while self.next < self.statements.len() {
            done += self.step()?;
        }
        self.clock.window_ended();
        Ok(done)
    }

    fn run_slice(&mut self) -> Result<u64> {
        if self.next >= self.statements.len() {
            // The lane is done: it waits for the window's end.
            std::thread::sleep(Duration::from_millis(1));
            return Ok(0);
        }
        self.step()
    }

    fn window_ends_on_stop(&self) -> bool {
        true
    }

    fn end_window(&mut self) -> Result<u64> {
        // The statements due within the level, its last instant included, are sent: the
        // window's clock may run out while the last of them wait their turn (a reconnection
        // before them), unless a stop was asked for. A lane that fell behind gets no more
        // than END_GRACE to catch up, so a backlog stays unsent and is said as falling
        // behind, not hidden by a level that lasts as long as the lane needs. A transaction
        // begun is finished all the same (its lateness counted): a level never cuts one.
        let deadline = self.clock.window_end().map(|end| end + END_GRACE);
        self.waits_end = deadline;
        let mut sent = 0;
        while self.next < self.statements.len()
            && !crate::interrupt::stop_requested()
            && ((self.clock.next_due_in_window()
                && deadline.is_none_or(|deadline| Instant::now() < deadline))
                || self.in_transaction())
        {
            sent += self.step()?;
        }
        self.waits_end = None;
        self.clock.window_ended();
        Ok(sent)
    }

    fn session_clock(&mut self) -> Option<&mut SessionClock> {
        Some(&mut self.clock)
    }

    fn window_started(&mut self, began: Instant) {
        // Each window (a warm-up's, then the level's) replays the lane from its start.
        self.next = 0;
        self.window += 1;
        self.session_failed = false;
        self.run_delay = crate::host::interference::thread_run_delay();
        self.rewound = !self.fresh;
        self.clock.window_started(began);
    }

    fn warmed_up(&mut self) {
        self.tally = ReplayTally::empty(self.fingerprints);
        self.clock.forget();
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        let mut tally = std::mem::replace(&mut self.tally, ReplayTally::empty(self.fingerprints));
        tally.starved_s = self
            .run_delay
            .zip(crate::host::interference::thread_run_delay())
            .map(|(then, now)| now.saturating_sub(then).as_secs_f64());
        self.sessions.hand_in(tally.sealed(self.number))
    }
}
