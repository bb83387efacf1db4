//! Each statement's response times in a script's session: 2 significant digits, the
//! statements' counts kept together (`GroupCounts`), merged after the level into a
//! histogram per statement.

use std::borrow::Cow;
use std::time::Duration;

use super::ResponseTimes;
use super::counts::GroupCounts;
use super::histogram::{LONGEST_NS, nanoseconds};

/// Response times of each of a script's statements, by number.
#[derive(Debug)]
pub struct StatementTimes(Record);

#[derive(Debug)]
enum Record {
    /// A session's, while it runs.
    Session(GroupCounts),
    /// Merged over sessions, or widened (a statement past 2^32 responses in one session).
    Merged(Vec<ResponseTimes>),
}

impl StatementTimes {
    /// A session's record of `statements` statements, made before its window.
    pub fn new(statements: usize) -> Self {
        Self(Record::Session(GroupCounts::new(2, LONGEST_NS, statements)))
    }

    /// How many statements.
    pub fn len(&self) -> usize {
        match &self.0 {
            Record::Session(group) => group.members(),
            Record::Merged(times) => times.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One answer of `statement` after `time`.
    #[inline]
    pub fn record(&mut self, statement: usize, time: Duration) {
        if let Record::Session(group) = &mut self.0 {
            if group.total(statement) < u64::from(u32::MAX) {
                group.add(statement, nanoseconds(time), 1);
                return;
            }
            self.0 = Record::Merged(self.times().into_owned());
        }
        if let Record::Merged(times) = &mut self.0 {
            times[statement].record(time);
        }
    }

    /// Each statement's response times, as histograms to read or merge.
    pub fn times(&self) -> Cow<'_, [ResponseTimes]> {
        let group = match &self.0 {
            Record::Merged(times) => return Cow::Borrowed(times),
            Record::Session(group) => group,
        };
        let mut times: Vec<ResponseTimes> = (0..group.members())
            .map(|_| ResponseTimes::per_statement())
            .collect();
        add_group(group, &mut times);
        Cow::Owned(times)
    }

    /// Adds another session's (the same statements).
    pub fn merge(&mut self, other: &Self) {
        if let Record::Session(_) = self.0 {
            self.0 = Record::Merged(self.times().into_owned());
        }
        let Record::Merged(mine) = &mut self.0 else {
            unreachable!("merged just now");
        };
        match &other.0 {
            Record::Merged(theirs) => {
                for (mine, theirs) in mine.iter_mut().zip(theirs) {
                    mine.merge(theirs);
                }
            }
            Record::Session(group) => add_group(group, mine),
        }
    }
}

/// Adds a session's statements' counts to each statement's histogram.
fn add_group(group: &GroupCounts, times: &mut [ResponseTimes]) {
    for (statement, times) in times.iter_mut().enumerate() {
        for (value, count) in group.buckets(statement) {
            times.record_n(Duration::from_nanos(value), u64::from(count));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statements' times recorded together read back as each statement's own histogram,
    /// merged across sessions too.
    #[test]
    fn each_statement_reads_back_as_its_own_histogram() {
        let mut sessions = [StatementTimes::new(3), StatementTimes::new(3)];
        let mut own: Vec<ResponseTimes> = (0..3).map(|_| ResponseTimes::per_statement()).collect();
        for i in 0..30_000u64 {
            // Statement 0 fast, 1 slow, 2 spread over every doubling; some buckets past 255.
            let statement = (i % 3) as usize;
            let ns = match statement {
                0 => 20_000 + i % 7,
                1 => 3_000_000 + (i * 7919) % 2_000_000,
                _ => 1 + (i * 104_729 * 7919) % 3_600_000_000_000,
            };
            let time = Duration::from_nanos(ns);
            sessions[(i % 2) as usize].record(statement, time);
            own[statement].record(time);
        }
        let single = sessions[0].times();
        let mut merged = StatementTimes::new(3);
        for session in &sessions {
            merged.merge(session);
        }
        let merged = merged.times();
        for statement in 0..3 {
            assert_eq!(merged[statement], own[statement], "statement {statement}");
            assert!(single[statement].count() < own[statement].count());
        }
        assert_eq!(merged[0].count(), 10_000);
        assert_eq!(
            merged[0].percentiles().unwrap().p50_ms,
            own[0].percentiles().unwrap().p50_ms
        );
    }
}
