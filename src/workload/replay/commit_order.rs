//! The capture's commit order, kept at every speed (as Oracle's Database Replay
//! synchronizes on commits): a statement the log shows starting after another session's
//! commit ended is not sent before that commit has been answered at replay. Lanes stay
//! independent otherwise, so a session never waits on one whose next statement comes later
//! in the capture (pgreplay's hang). A commit is a COMMIT (or END) closing a transaction,
//! or a statement that writes outside one (it commits itself); rollbacks and reads publish
//! nothing.
//!
//! Planned once from the capture ([`Planner`]), kept at replay by a [`CommitBoard`]: the
//! commits numbered in the order they ended, a watermark of how many of them, from the
//! first, have been answered, and each statement's count of commits it must see first.
//! A statement waits only on commits that ended before it started, and only outside a
//! transaction, holding no lock: at replay another session may take a row lock first that
//! it took second in production, and a session in a transaction that waited for that
//! session's commit would wait forever. So no wait is on a statement later in capture time,
//! no waiting session holds what another needs, and no cycle of waits can form.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::class::Class;

/// How a captured statement stands in its session's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Begin,
    Commit,
    Rollback,
    Other,
}

/// The statement's transaction word, from its first words (a `ROLLBACK TO` savepoint
/// ends nothing).
fn word(sql: &str) -> Word {
    let mut words = sql
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_uppercase);
    match (words.next().as_deref(), words.next().as_deref()) {
        (Some("BEGIN"), _) | (Some("START"), Some("TRANSACTION")) => Word::Begin,
        (Some("COMMIT" | "END"), _) => Word::Commit,
        (Some("ROLLBACK"), Some("TO")) => Word::Other,
        (Some("ROLLBACK" | "ABORT"), _) => Word::Rollback,
        _ => Word::Other,
    }
}

/// Follows one captured session's transactions, statement by statement.
#[derive(Debug, Default)]
pub struct Transactions {
    open: bool,
    /// Whether the open transaction has changed anything: a read-only one publishes
    /// nothing at its COMMIT.
    wrote: bool,
}

impl Transactions {
    /// Whether the statement commits a change (a COMMIT of a transaction that wrote, or a
    /// change outside a transaction), and whether a transaction is open before it and once
    /// it is answered.
    pub fn step(&mut self, sql: &str, class: Class) -> (bool, Within) {
        let before = self.open;
        let commits = self.commits(sql, class);
        (
            commits,
            Within {
                before,
                after: self.open,
            },
        )
    }

    fn commits(&mut self, sql: &str, class: Class) -> bool {
        let writes = matches!(class, Class::Write | Class::Ddl);
        match word(sql) {
            Word::Begin => {
                (self.open, self.wrote) = (true, false);
                false
            }
            Word::Commit => std::mem::replace(&mut self.open, false) && self.wrote,
            Word::Rollback => {
                self.open = false;
                false
            }
            Word::Other if self.open => {
                self.wrote |= writes;
                false
            }
            Word::Other => writes,
        }
    }
}

/// Whether a statement's session is in a transaction before it and once it is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Within {
    pub before: bool,
    pub after: bool,
}

/// A statement's place in the commit order, as a lane keeps it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Order {
    /// Commits (numbered by when they ended) that must all be answered before it is sent.
    pub after: u32,
    /// Its own number, where it is a commit whose end the capture tells.
    pub commit: Option<u32>,
    /// Whether its session is in a transaction once it is answered: a level does not end
    /// there.
    pub open: bool,
}

/// Numbers the commits and gives each statement its [`Order`], once every lane is dealt.
#[derive(Debug, Default)]
pub struct Planner {
    /// Each commit's end (capture microseconds), lane and place in it.
    commits: Vec<(i64, usize, usize)>,
}

impl Planner {
    /// A commit at `place` in `lane` that ended at `end_us`.
    pub fn commit(&mut self, end_us: i64, lane: usize, place: usize) {
        self.commits.push((end_us, lane, place));
    }

    /// Each statement's order, by lane: `starts` gives each lane's statements' captured
    /// starts, `within` whether each is in a transaction before and after it. A statement
    /// within a transaction waits for no commit: its session may hold locks the commit
    /// needs (at replay another session's statement may take a row lock first that it took
    /// second in production), so only a session outside a transaction, holding nothing,
    /// waits; the transaction's first statement waited for what came before it.
    pub fn orders(mut self, starts: &[Vec<i64>], within: &[Vec<Within>]) -> Vec<Vec<Order>> {
        self.commits.sort_unstable();
        let ends: Vec<i64> = self.commits.iter().map(|(end, _, _)| *end).collect();
        let mut orders: Vec<Vec<Order>> = starts
            .iter()
            .zip(within)
            .map(|(starts, within)| {
                starts
                    .iter()
                    .zip(within)
                    .map(|(start, within)| Order {
                        after: if within.before {
                            0
                        } else {
                            count(ends.partition_point(|end| end < start))
                        },
                        commit: None,
                        open: within.after,
                    })
                    .collect()
            })
            .collect();
        for (number, (_, lane, place)) in self.commits.iter().enumerate() {
            orders[*lane][*place].commit = Some(count(number));
        }
        orders
    }

    pub fn commits(&self) -> usize {
        self.commits.len()
    }
}

fn count(number: usize) -> u32 {
    u32::try_from(number).unwrap_or(u32::MAX)
}

/// How long a lane naps while the commits it waits for are answered: short beside a
/// statement's time, long beside an atomic read.
const NAP: Duration = Duration::from_micros(50);

/// One level's commits as the replay answers them. Each window (a warm-up's, the level's)
/// replays the capture anew: marks carry the window's number, so a window's waits see
/// only its own commits.
#[derive(Debug)]
pub struct CommitBoard {
    /// The window in which each commit was last answered (0: never).
    answered: Box<[AtomicU32]>,
    /// The window (high half) and how many commits from the first it has answered.
    watermark: AtomicU64,
}

/// What a lane's wait came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Every commit it waited for was answered.
    InOrder,
    /// It went on without them: the deadline passed, a stop was asked for, or the window
    /// ended under it.
    GaveUp,
}

impl CommitBoard {
    pub fn new(commits: usize) -> Self {
        Self {
            answered: (0..commits).map(|_| AtomicU32::new(0)).collect(),
            watermark: AtomicU64::new(0),
        }
    }

    fn read(&self) -> (u32, u32) {
        let mark = self.watermark.load(Ordering::Acquire);
        ((mark >> 32) as u32, mark as u32)
    }

    /// Commit `number` answered in `window`: the watermark moves over every commit answered
    /// in a row from it.
    pub fn answered(&self, window: u32, number: u32) {
        let Some(slot) = self.answered.get(number as usize) else {
            return;
        };
        slot.store(window, Ordering::Release);
        loop {
            let current = self.watermark.load(Ordering::Acquire);
            let (marked, mut done) = ((current >> 32) as u32, current as u32);
            if marked > window {
                return;
            }
            if marked < window {
                done = 0;
            }
            while (done as usize) < self.answered.len()
                && self.answered[done as usize].load(Ordering::Acquire) == window
            {
                done += 1;
            }
            let next = (u64::from(window) << 32) | u64::from(done);
            if next == current
                || self
                    .watermark
                    .compare_exchange(current, next, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                return;
            }
        }
    }

    /// Waits until the first `after` commits are answered in `window`, or `deadline`
    /// passes, or a stop is asked for.
    pub fn wait(&self, window: u32, after: u32, deadline: Option<Instant>) -> Waited {
        loop {
            let (marked, done) = self.read();
            if after == 0 || (marked == window && done >= after) {
                return Waited::InOrder;
            }
            if marked > window
                || crate::interrupt::stop_requested()
                || deadline.is_some_and(|deadline| Instant::now() >= deadline)
            {
                return Waited::GaveUp;
            }
            std::thread::sleep(NAP);
        }
    }
}

#[cfg(test)]
mod tests;
