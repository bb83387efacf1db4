//! A latch as databases have them: a spinlock that spins a while, then yields the CPU
//! ("sleeps"), counting gets, misses (first try failed), spins and sleeps (misses that had to
//! yield at least once, so sleeps <= misses <= gets). Its counters share
//! the latch's cache line and are written only by the holder, as in a real buffer cache.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

/// Spins before each yield.
const SPINS_BEFORE_SLEEP: u32 = 200;

#[derive(Debug, Default)]
pub(crate) struct Latch {
    held: AtomicBool,
    gets: AtomicU64,
    misses: AtomicU64,
    spins: AtomicU64,
    sleeps: AtomicU64,
}

/// Totals over a set of latches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatchStats {
    pub gets: u64,
    pub misses: u64,
    pub spins: u64,
    pub sleeps: u64,
}

impl LatchStats {
    pub fn since(&self, earlier: &LatchStats) -> LatchStats {
        LatchStats {
            gets: self.gets - earlier.gets,
            misses: self.misses - earlier.misses,
            spins: self.spins - earlier.spins,
            sleeps: self.sleeps - earlier.sleeps,
        }
    }
}

/// Held until dropped.
pub(crate) struct LatchGuard<'a> {
    latch: &'a Latch,
}

impl Drop for LatchGuard<'_> {
    fn drop(&mut self) {
        self.latch.held.store(false, Ordering::Release);
    }
}

impl Latch {
    pub(crate) fn acquire(&self) -> LatchGuard<'_> {
        if self.try_take() {
            self.gets.fetch_add(1, Ordering::Relaxed);
            return LatchGuard { latch: self };
        }
        let (mut spins, mut sleeps) = (0u64, 0u64);
        loop {
            for _ in 0..SPINS_BEFORE_SLEEP {
                spins += 1;
                std::hint::spin_loop();
                if !self.held.load(Ordering::Relaxed) && self.try_take() {
                    self.record_miss(spins, sleeps);
                    return LatchGuard { latch: self };
                }
            }
            sleeps += 1;
            std::thread::yield_now();
        }
    }

    fn try_take(&self) -> bool {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Counted while holding the latch, so the counters are never contended on their own.
    fn record_miss(&self, spins: u64, sleeps: u64) {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.spins.fetch_add(spins, Ordering::Relaxed);
        self.sleeps
            .fetch_add(u64::from(sleeps > 0), Ordering::Relaxed);
    }

    fn stats(&self) -> LatchStats {
        LatchStats {
            gets: self.gets.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            spins: self.spins.load(Ordering::Relaxed),
            sleeps: self.sleeps.load(Ordering::Relaxed),
        }
    }
}

pub(crate) fn total(latches: &[CachePadded<Latch>]) -> LatchStats {
    latches.iter().fold(LatchStats::default(), |sum, latch| {
        let stats = latch.stats();
        LatchStats {
            gets: sum.gets + stats.gets,
            misses: sum.misses + stats.misses,
            spins: sum.spins + stats.spins,
            sleeps: sum.sleeps + stats.sleeps,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contended_latches_count_misses_and_protect_their_data() {
        let latches = vec![CachePadded::new(Latch::default())];
        let counter = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for _ in 0..20_000 {
                        let _guard = latches[0].acquire();
                        // A non-atomic read-modify-write: only the latch keeps it whole.
                        let value = counter.load(Ordering::Relaxed);
                        std::hint::spin_loop();
                        counter.store(value + 1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::Relaxed), 40_000);
        let stats = total(&latches);
        assert_eq!(stats.gets, 40_000);
        assert!(stats.misses <= stats.gets && stats.sleeps <= stats.misses);
    }
}
