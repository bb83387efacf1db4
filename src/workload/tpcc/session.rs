//! One order-entry session: a terminal bound to its home warehouse, running one
//! transaction at a time picked by the mix, each timed from when it was due; deadlocks and
//! serialization failures are retried and counted by SQLSTATE, anything else ends the level
//! (or is counted under `--max-failures`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use super::statements::Statements;
use super::transactions::{Ended, Kind, Terminal};
use crate::db::{DbSession, Refusal};
use crate::latency::{Pace, SessionClock, StatementTimes, Turn};
use crate::workload::script::sleep_within;
use crate::workload::{Sessions, WorkerJob};

/// Tries of one transaction before its refusal ends the level.
const MOST_TRIES: u32 = 100;

/// What the sessions share: the statements, the mix, and what a level counts across them.
pub(crate) struct Shared {
    pub statements: Statements,
    /// Each type's share of the mix, cumulative, in hundredths of a percent (10,000 total).
    pub mix: [u64; 5],
    pub keying: bool,
    pub max_failures: u64,
    pub latency_limit: Option<Duration>,
    pub job_transactions: u64,
    pub level_length: Option<Duration>,
    pub warehouses: u64,
    /// The warehouses this run's sessions are at home in: a campaign's part owns its own.
    pub own: super::transactions::OwnWarehouses,
    pub nurand: super::random::NurandConstants,
    pub run_c_last: u64,
    pub sessions: Sessions<TpccTally>,
    /// The level's failed transactions, all sessions': touched only when one fails.
    pub failures: AtomicU64,
}

/// What one session counted over a level.
#[derive(Debug)]
pub(crate) struct TpccTally {
    /// Transactions that ran to their end (committed, or New-Orders rolled back as the
    /// specification asks), by type.
    pub ended: [u64; 5],
    pub rolled_back: u64,
    /// Districts a Delivery found nothing to deliver in, and the Deliveries that skipped one.
    pub skipped_districts: u64,
    pub deliveries_skipping: u64,
    /// Tries run again after a deadlock or serialization failure, by SQLSTATE.
    pub retries: Vec<(String, u64)>,
    pub failed: u64,
    pub failures: Vec<(String, u64)>,
    /// Each type's response times, from when it was due to its commit, retries included.
    pub times: StatementTimes,
    pub connections_s: Vec<f64>,
    pub backend_cpu_s: Option<f64>,
}

impl TpccTally {
    pub fn empty() -> Self {
        Self {
            ended: [0; 5],
            rolled_back: 0,
            skipped_districts: 0,
            deliveries_skipping: 0,
            retries: Vec::new(),
            failed: 0,
            failures: Vec::new(),
            times: StatementTimes::new(Kind::ALL.len()),
            connections_s: Vec::new(),
            backend_cpu_s: Some(0.0),
        }
    }

    /// The level's tally: every session's summed, histograms merged.
    pub fn sum(tallies: Vec<Self>) -> Self {
        let mut total = Self::empty();
        for tally in tallies {
            for (into, from) in total.ended.iter_mut().zip(tally.ended) {
                *into += from;
            }
            total.rolled_back += tally.rolled_back;
            total.skipped_districts += tally.skipped_districts;
            total.deliveries_skipping += tally.deliveries_skipping;
            total.failed += tally.failed;
            for (sqlstate, count) in tally.retries {
                count_by(&mut total.retries, &sqlstate, count);
            }
            for (sqlstate, count) in tally.failures {
                count_by(&mut total.failures, &sqlstate, count);
            }
            total.times.merge(&tally.times);
            total.connections_s.extend(tally.connections_s);
            total.backend_cpu_s = total
                .backend_cpu_s
                .zip(tally.backend_cpu_s)
                .map(|(a, b)| a + b);
        }
        total
    }

    pub fn transactions(&self) -> u64 {
        self.ended.iter().sum()
    }
}

/// The cumulative shares (hundredths of a percent) as a deck: 100 cards when every share
/// is a whole percent, else 10,000.
fn deck(cumulative: &[u64; 5]) -> Vec<Kind> {
    let per_card = if cumulative.iter().all(|upto| upto % 100 == 0) {
        100
    } else {
        1
    };
    let mut deck = Vec::with_capacity(10_000 / per_card as usize);
    let mut from = 0;
    for (kind, upto) in Kind::ALL.into_iter().zip(cumulative) {
        deck.extend(std::iter::repeat_n(
            kind,
            ((upto - from) / per_card) as usize,
        ));
        from = *upto;
    }
    deck
}

fn count_by(counts: &mut Vec<(String, u64)>, sqlstate: &str, count: u64) {
    match counts.iter_mut().find(|(known, _)| known == sqlstate) {
        Some((_, total)) => *total += count,
        None => counts.push((sqlstate.to_string(), count)),
    }
}

pub(crate) struct TpccSessionJob {
    connection: Box<dyn DbSession>,
    /// A replica's session for Order-Status and Stock-Level (`--route reads=replicas`).
    reader: Option<Box<dyn DbSession>>,
    shared: Arc<Shared>,
    terminal: Terminal,
    tally: TpccTally,
    connection_s: f64,
    backend_cpu_start: Option<f64>,
    clock: SessionClock,
    /// The mix as a deck of cards, each type as often as its share, shuffled anew each
    /// time it is dealt (clause 5.2.4.2): the shares hold over every full deck.
    deck: Vec<Kind>,
    dealt: usize,
}

impl TpccSessionJob {
    pub fn start(
        (connection, reader): (Box<dyn DbSession>, Option<Box<dyn DbSession>>),
        shared: Arc<Shared>,
        (worker, workers): (usize, usize),
        pace: Option<Pace>,
        connection_s: f64,
    ) -> Self {
        let clock = SessionClock::new("transaction", shared.latency_limit, pace, (worker, workers))
            .ending_after(shared.level_length);
        let shared_mix = shared.mix;
        let mut nurand = shared.nurand;
        nurand.c_last = shared.run_c_last;
        let terminal = Terminal::new(worker, (shared.warehouses, shared.own), nurand, 0x7C_C0DE);
        let mut job = Self {
            connection,
            reader,
            shared,
            terminal,
            tally: TpccTally::empty(),
            connection_s,
            backend_cpu_start: None,
            clock,
            deck: deck(&shared_mix),
            dealt: usize::MAX,
        };
        job.backend_cpu_start = job.backend_cpu();
        job
    }

    /// The next transaction's type: the deck's next card, shuffled once it is all dealt.
    fn pick(&mut self) -> Kind {
        if self.dealt >= self.deck.len() {
            let random = self.terminal.random();
            for last in (1..self.deck.len()).rev() {
                let other = random.uniform(0, last as u64) as usize;
                self.deck.swap(last, other);
            }
            self.dealt = 0;
        }
        self.dealt += 1;
        self.deck[self.dealt - 1]
    }

    /// Clause 5.2.5.7's think time: a negative exponential of the type's mean, cut at ten
    /// times it.
    fn think(&mut self, mean_s: f64) -> Duration {
        let unit = self.terminal.random().unit().max(1e-12);
        Duration::from_secs_f64((-unit.ln() * mean_s).min(10.0 * mean_s))
    }

    /// One transaction; returns the New-Orders it committed (0 or 1), 0 too when it failed
    /// (counted) or an open loop's next one is not yet due.
    fn step(&mut self) -> Result<u64> {
        let due = match self.clock.turn() {
            Turn::NotYet => return Ok(0),
            Turn::Due(due) => due,
        };
        let kind = self.pick();
        let (keying_s, think_mean_s) = kind.keying_and_think_s();
        if self.shared.keying {
            let window_end = self.clock.window_end();
            sleep_within(Duration::from_secs_f64(keying_s), window_end);
            if window_end.is_some_and(|end| Instant::now() >= end) {
                // The window closed while the terminal keyed: the entry is never sent.
                return Ok(0);
            }
        }
        let sent = self.clock.elapsed();
        self.terminal.draw(kind);
        let mut tries = 0;
        let ended = loop {
            tries += 1;
            let session = match &mut self.reader {
                Some(reader) if kind.reads_only() => reader.as_mut(),
                _ => self.connection.as_mut(),
            };
            let outcome = self.terminal.run(session, &self.shared.statements);
            let error = match outcome {
                Ok(ended) => break ended,
                Err(error) => error,
            };
            let Some(failure) = error.refusal() else {
                return Err(
                    anyhow::Error::new(error).context(format!("a {} transaction", kind.name()))
                );
            };
            session
                .run_plain("ROLLBACK")
                .context("rolling back a refused transaction")?;
            // Serialization failures and deadlocks are run again (`ServerCode::is_retryable`).
            if failure.code.is_retryable() && tries < MOST_TRIES {
                count_by(&mut self.tally.retries, &failure.code.to_string(), 1);
                continue;
            }
            return self.failed(kind, failure);
        };
        let at = self.clock.elapsed();
        self.clock.answered(due, sent, at);
        let index = kind as usize;
        self.tally.ended[index] += 1;
        self.tally
            .times
            .record(index, at.saturating_sub(due.unwrap_or(sent)));
        if self.shared.keying {
            let think = self.think(think_mean_s);
            sleep_within(think, self.clock.window_end());
        }
        Ok(match ended {
            Ended::Committed => u64::from(kind == Kind::NewOrder),
            Ended::RolledBack => {
                self.tally.rolled_back += 1;
                0
            }
            Ended::Delivered { skipped } => {
                self.tally.skipped_districts += skipped;
                self.tally.deliveries_skipping += u64::from(skipped > 0);
                0
            }
        })
    }

    /// A refusal not retried: counted under `--max-failures`, else the level's end.
    fn failed(&mut self, kind: Kind, failure: &Refusal) -> Result<u64> {
        let failed = self.shared.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failed > self.shared.max_failures {
            return Err(anyhow!(
                "a {} transaction failed: {failure}{}",
                kind.name(),
                if self.shared.max_failures > 0 {
                    format!(
                        " (more than --max-failures {} failed in the level)",
                        self.shared.max_failures
                    )
                } else {
                    " (--max-failures N counts failures by SQLSTATE and goes on)".to_string()
                }
            ));
        }
        self.tally.failed += 1;
        count_by(&mut self.tally.failures, &failure.code.to_string(), 1);
        Ok(0)
    }

    /// The CPU time of the session's backends (the reader's too), where they are this
    /// host's processes.
    fn backend_cpu(&self) -> Option<f64> {
        let cpu = |session: &dyn DbSession| {
            session
                .backend_pid()
                .and_then(crate::host::interference::process_cpu_seconds)
        };
        let writer = cpu(self.connection.as_ref());
        match &self.reader {
            Some(reader) => writer.zip(cpu(reader.as_ref())).map(|(a, b)| a + b),
            None => writer,
        }
    }

    /// Makes both sessions' commits visible in the servers' counters.
    fn publish_statistics(&mut self) {
        let _ = self.connection.publish_statistics();
        if let Some(reader) = &mut self.reader {
            let _ = reader.publish_statistics();
        }
    }
}

impl WorkerJob for TpccSessionJob {
    fn run_job(&mut self) -> Result<u64> {
        let mut done = 0;
        let mut tried = 0;
        while tried < self.shared.job_transactions {
            let before = self.tally.transactions() + self.tally.failed;
            done += self.step()?;
            if self.tally.transactions() + self.tally.failed > before {
                tried += 1;
            }
        }
        self.clock.window_ended();
        Ok(done)
    }

    fn run_slice(&mut self) -> Result<u64> {
        self.step()
    }

    fn end_window(&mut self) -> Result<u64> {
        self.clock.window_ended();
        Ok(0)
    }

    fn session_clock(&mut self) -> Option<&mut SessionClock> {
        Some(&mut self.clock)
    }

    fn warmed_up(&mut self) {
        // The warm-up's commits are in the server's counters before the level's baseline is
        // read, and the level's before its end is (PostgreSQL publishes them lazily; before
        // version 15 it cannot be asked to, and TPM may lag by a second's commits).
        self.publish_statistics();
        self.tally = TpccTally::empty();
        self.clock.forget();
        self.backend_cpu_start = self.backend_cpu();
    }

    fn hand_in_counts(&mut self) -> Result<()> {
        self.publish_statistics();
        let mut tally = std::mem::replace(&mut self.tally, TpccTally::empty());
        tally.connections_s.push(self.connection_s);
        tally.backend_cpu_s = self
            .backend_cpu()
            .zip(self.backend_cpu_start)
            .map(|(now, then)| now - then);
        self.shared.sessions.hand_in(tally)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_holds_each_type_as_often_as_its_share() {
        let standard = deck(&[4500, 8800, 9200, 9600, 10_000]);
        assert_eq!(standard.len(), 100);
        let count = |deck: &[Kind], kind| deck.iter().filter(|card| **card == kind).count();
        assert_eq!(count(&standard, Kind::NewOrder), 45);
        assert_eq!(count(&standard, Kind::Payment), 43);
        assert_eq!(count(&standard, Kind::StockLevel), 4);
        let fine = deck(&[4450, 8800, 9200, 9600, 10_000]);
        assert_eq!(fine.len(), 10_000);
        assert_eq!(count(&fine, Kind::NewOrder), 4450);
        assert_eq!(count(&fine, Kind::Payment), 4350);
    }
}
