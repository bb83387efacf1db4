//! The shared buffer cache: buffers, buffer headers, hash chains under latches, and clock
//! replacement under its own latch when the cache is smaller than the data.
//!
//! A consistent get: hash the block address, take the chain's latch, walk the chain, pin the
//! buffer, release the latch, read the row, unpin. A miss takes a victim buffer from the
//! replacement clock, unlinks it from its old chain, links it under the new address in
//! READING state, reads the block from storage, and marks it VALID; a session that finds a
//! block still READING waits for it, so a block is never read twice at once.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};

use anyhow::{Result, bail};
use crossbeam_utils::CachePadded;

use super::latch::{Latch, LatchStats, total};

/// Hash chains per buffer, rounded up to a power of two, as Oracle sizes its buckets.
const CHAINS_PER_BUFFER: usize = 2;
/// Up to this many chains share one latch (Oracle's "cache buffers chains" latches)...
const MAX_CHAINS_PER_LATCH: usize = 32;
/// ...but a cache has at least this many latches, so small caches are not all contention.
const MIN_LATCHES: usize = 1024;

const NO_ADDRESS: u64 = u64::MAX;
const END: u32 = u32::MAX;
const FREE: u8 = 0;
const READING: u8 = 1;
const VALID: u8 = 2;

/// What chain walkers read: the block a buffer holds, its chain link and its state. Kept
/// apart from `BufferUse`, so a walk past another session's buffer does not pull a cache line
/// that session is writing with every pin.
struct Header {
    address: AtomicU64,
    next: AtomicU32,
    state: AtomicU8,
}

impl Header {
    fn new() -> Self {
        Self {
            address: AtomicU64::new(NO_ADDRESS),
            next: AtomicU32::new(END),
            state: AtomicU8::new(FREE),
        }
    }
}

/// What sessions write as they use a buffer: pins, the touch count, dirty and exclusive mode.
#[derive(Default)]
struct BufferUse {
    pins: AtomicU32,
    touches: AtomicU32,
    dirty: AtomicBool,
    /// Held by an update while it changes the row ("exclusive mode").
    exclusive: AtomicBool,
}

/// Where blocks come from on a miss and go to when a dirty buffer is reused.
pub trait BlockSource: Sync {
    /// Reads block `address` into `words`; returns how long the read took, in nanoseconds.
    fn read(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<u64>;
    fn write(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<()>;
}

pub struct BufferCache {
    block_words: usize,
    words: Box<[AtomicU64]>,
    headers: Box<[Header]>,
    uses: Box<[BufferUse]>,
    heads: Box<[AtomicU32]>,
    chain_latches: Box<[CachePadded<Latch>]>,
    chains_per_latch: usize,
    lru_latch: CachePadded<Latch>,
    clock_hand: CachePadded<AtomicU32>,
}

/// A pinned buffer: the block stays in it until the pin is dropped.
pub struct Pinned<'a> {
    cache: &'a BufferCache,
    buffer: u32,
}

/// What a get cost: a hit, or a miss with the read it needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    Hit,
    Miss { read_ns: u64 },
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        self.cache.uses[self.buffer as usize]
            .pins
            .fetch_sub(1, Ordering::Release);
    }
}

impl Pinned<'_> {
    pub fn word(&self, index: usize) -> u64 {
        self.cache.buffer_words(self.buffer)[index].load(Ordering::Relaxed)
    }

    /// Adds one to a word in exclusive mode, so concurrent updates are never lost, and marks
    /// the buffer dirty.
    pub fn increment(&self, index: usize) {
        let header = &self.cache.uses[self.buffer as usize];
        while header
            .exclusive
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let word = &self.cache.buffer_words(self.buffer)[index];
        // A plain read and write: only exclusive mode makes the increment safe.
        word.store(word.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        header.dirty.store(true, Ordering::Relaxed);
        header.exclusive.store(false, Ordering::Release);
    }
}

impl BufferCache {
    pub fn new(buffers: usize, block_words: usize) -> Result<Self> {
        if buffers == 0 || buffers >= END as usize {
            bail!("a buffer cache needs between 1 and {} buffers", END - 1);
        }
        let chains = (buffers * CHAINS_PER_BUFFER)
            .next_power_of_two()
            .max(MIN_LATCHES);
        let latches = (chains / MAX_CHAINS_PER_LATCH).max(MIN_LATCHES);
        let chains_per_latch = chains / latches;
        Ok(Self {
            block_words,
            words: (0..buffers * block_words)
                .map(|_| AtomicU64::new(0))
                .collect(),
            headers: (0..buffers).map(|_| Header::new()).collect(),
            uses: (0..buffers).map(|_| BufferUse::default()).collect(),
            heads: (0..chains).map(|_| AtomicU32::new(END)).collect(),
            chain_latches: (0..latches)
                .map(|_| CachePadded::new(Latch::default()))
                .collect(),
            chains_per_latch,
            lru_latch: CachePadded::new(Latch::default()),
            clock_hand: CachePadded::new(AtomicU32::new(0)),
        })
    }

    fn buffer_words(&self, buffer: u32) -> &[AtomicU64] {
        let start = buffer as usize * self.block_words;
        &self.words[start..start + self.block_words]
    }

    /// The block address modulo the chain count, with consecutive chains under one latch, as
    /// InnoDB's page hash does it (cell = page fold % cells, one latch per cache line of
    /// cells). A schema's blocks are contiguous, so sessions on separate schemas take separate
    /// latches, as sessions on separate tables do there, while sessions on one schema share
    /// them. A mixing hash would put every schema under every latch, and each get would then
    /// pull a latch line the other core had just written.
    fn chain_of(&self, address: u64) -> usize {
        address as usize & (self.heads.len() - 1)
    }

    fn latch_index(&self, chain: usize) -> usize {
        chain / self.chains_per_latch
    }

    fn latch_of(&self, chain: usize) -> &Latch {
        &self.chain_latches[self.latch_index(chain)]
    }

    /// Walks a chain (its latch held) and pins the buffer holding `address`.
    fn find_and_pin(&self, chain: usize, address: u64) -> Option<u32> {
        let mut buffer = self.heads[chain].load(Ordering::Acquire);
        while buffer != END {
            let header = &self.headers[buffer as usize];
            if header.address.load(Ordering::Relaxed) == address {
                let using = &self.uses[buffer as usize];
                using.pins.fetch_add(1, Ordering::Acquire);
                using.touches.fetch_add(1, Ordering::Relaxed);
                return Some(buffer);
            }
            buffer = header.next.load(Ordering::Relaxed);
        }
        None
    }

    /// Places a block in a free buffer at load time (the cache must not be full).
    pub fn preload(&self, buffer: u32, address: u64, contents: &[u64]) {
        for (word, value) in self.buffer_words(buffer).iter().zip(contents) {
            word.store(*value, Ordering::Relaxed);
        }
        let header = &self.headers[buffer as usize];
        header.address.store(address, Ordering::Relaxed);
        header.state.store(VALID, Ordering::Release);
        let chain = self.chain_of(address);
        let _latch = self.latch_of(chain).acquire();
        header
            .next
            .store(self.heads[chain].load(Ordering::Relaxed), Ordering::Relaxed);
        self.heads[chain].store(buffer, Ordering::Release);
    }

    /// A consistent get of block `address`: the pinned buffer and whether it was a hit.
    /// Without a source, a block missing from the cache is an error.
    pub fn get(
        &self,
        address: u64,
        source: Option<&dyn BlockSource>,
        scratch: &mut [u8],
    ) -> Result<(Pinned<'_>, Visit)> {
        let chain = self.chain_of(address);
        let found = {
            let _latch = self.latch_of(chain).acquire();
            self.find_and_pin(chain, address)
        };
        if let Some(buffer) = found {
            self.wait_valid(buffer);
            return Ok((
                Pinned {
                    cache: self,
                    buffer,
                },
                Visit::Hit,
            ));
        }
        let Some(source) = source else {
            bail!("block {address} is not in the buffer cache");
        };
        self.load(address, chain, source, scratch)
    }

    fn wait_valid(&self, buffer: u32) {
        let state = &self.headers[buffer as usize].state;
        while state.load(Ordering::Acquire) != VALID {
            std::thread::yield_now();
        }
    }

    fn load(
        &self,
        address: u64,
        chain: usize,
        source: &dyn BlockSource,
        scratch: &mut [u8],
    ) -> Result<(Pinned<'_>, Visit)> {
        let victim = self.claim_victim(source, scratch)?;
        let (header, using) = (&self.headers[victim as usize], &self.uses[victim as usize]);
        {
            let _latch = self.latch_of(chain).acquire();
            if let Some(existing) = self.find_and_pin(chain, address) {
                // Another session loaded it meanwhile: give the victim back.
                header.state.store(FREE, Ordering::Relaxed);
                using.pins.store(0, Ordering::Release);
                drop(_latch);
                self.wait_valid(existing);
                return Ok((
                    Pinned {
                        cache: self,
                        buffer: existing,
                    },
                    Visit::Hit,
                ));
            }
            header.address.store(address, Ordering::Relaxed);
            header.state.store(READING, Ordering::Relaxed);
            using.touches.store(1, Ordering::Relaxed);
            header
                .next
                .store(self.heads[chain].load(Ordering::Relaxed), Ordering::Relaxed);
            self.heads[chain].store(victim, Ordering::Release);
        }
        let read = source.read(address, scratch, self.buffer_words(victim));
        header.state.store(VALID, Ordering::Release);
        let pinned = Pinned {
            cache: self,
            buffer: victim,
        };
        Ok((pinned, Visit::Miss { read_ns: read? }))
    }

    /// Takes an unpinned buffer by the clock (second chance), writes it back if dirty,
    /// unlinks it from its chain, and returns it pinned once and FREE.
    ///
    /// The write-back comes before the unlink: a block unlinked while its write was still
    /// under way could be read back from storage by another session in that window, without
    /// the updates the write was carrying, and those updates would be lost. A buffer used or
    /// dirtied again while it was written keeps its place, and the clock moves on.
    fn claim_victim(&self, source: &dyn BlockSource, scratch: &mut [u8]) -> Result<u32> {
        let buffers = u64::from(self.headers.len() as u32);
        for _ in 0..64 * buffers {
            let victim = self.next_unpinned()?;
            let using = &self.uses[victim as usize];
            match self.detach(victim, source, scratch) {
                Ok(true) => return Ok(victim),
                Ok(false) => using.pins.store(0, Ordering::Release),
                Err(error) => {
                    using.pins.store(0, Ordering::Release);
                    return Err(error);
                }
            }
        }
        bail!("every buffer is in use: the cache is too small for this many sessions")
    }

    /// The next buffer by the clock that no session holds, pinned once by the caller.
    fn next_unpinned(&self) -> Result<u32> {
        let buffers = self.headers.len() as u32;
        let _lru = self.lru_latch.acquire();
        let mut sweeps = 0u64;
        loop {
            let buffer = self.clock_hand.load(Ordering::Relaxed);
            self.clock_hand
                .store((buffer + 1) % buffers, Ordering::Relaxed);
            let (header, using) = (&self.headers[buffer as usize], &self.uses[buffer as usize]);
            sweeps += 1;
            if sweeps > 64 * u64::from(buffers) {
                bail!("every buffer is pinned: the cache is too small for this many sessions");
            }
            if header.state.load(Ordering::Acquire) == READING {
                continue;
            }
            if using.touches.load(Ordering::Relaxed) > 0 {
                using.touches.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            if using
                .pins
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(buffer);
            }
        }
    }

    /// Writes `victim` (pinned once by the caller) back if dirty, then unlinks it if no
    /// session pinned or dirtied it meanwhile: false when one did, and it stays.
    fn detach(&self, victim: u32, source: &dyn BlockSource, scratch: &mut [u8]) -> Result<bool> {
        let (header, using) = (&self.headers[victim as usize], &self.uses[victim as usize]);
        let old = header.address.load(Ordering::Relaxed);
        if old != NO_ADDRESS {
            if using.dirty.swap(false, Ordering::AcqRel) {
                source.write(old, scratch, self.buffer_words(victim))?;
            }
            let chain = self.chain_of(old);
            // Sessions pin under the chain's latch: with it held, none can come.
            let _latch = self.latch_of(chain).acquire();
            if using.pins.load(Ordering::Acquire) > 1 || using.dirty.load(Ordering::Acquire) {
                return Ok(false);
            }
            self.unlink(chain, victim);
            header.address.store(NO_ADDRESS, Ordering::Relaxed);
        }
        header.state.store(FREE, Ordering::Relaxed);
        Ok(true)
    }

    /// Removes `buffer` from `chain` (its latch held).
    fn unlink(&self, chain: usize, buffer: u32) {
        let next = self.headers[buffer as usize].next.load(Ordering::Relaxed);
        let head = &self.heads[chain];
        if head.load(Ordering::Relaxed) == buffer {
            head.store(next, Ordering::Release);
            return;
        }
        let mut current = head.load(Ordering::Relaxed);
        while current != END {
            let link = &self.headers[current as usize].next;
            if link.load(Ordering::Relaxed) == buffer {
                link.store(next, Ordering::Release);
                return;
            }
            current = link.load(Ordering::Relaxed);
        }
    }

    pub fn chain_latch_stats(&self) -> LatchStats {
        total(&self.chain_latches)
    }

    pub fn lru_latch_stats(&self) -> LatchStats {
        total(std::slice::from_ref(&self.lru_latch))
    }

    /// Buffers the cache holds, each one block.
    pub fn buffers(&self) -> usize {
        self.headers.len()
    }

    pub fn chain_latches(&self) -> usize {
        self.chain_latches.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::workload::lio::layout::Layout;

    /// The chain latches taken for the blocks of one schema.
    fn latches_of(cache: &BufferCache, layout: &Layout, schema: u64) -> HashSet<usize> {
        let first = schema * layout.blocks_per_schema();
        (first..first + layout.blocks_per_schema())
            .map(|address| cache.latch_index(cache.chain_of(address)))
            .collect()
    }

    #[test]
    fn separate_schemas_take_separate_latches_when_the_cache_holds_them() {
        let layout = Layout::new(8192, 8192, 2);
        let cache = BufferCache::new(layout.total_blocks() as usize, 4).unwrap();
        let (first, second) = (
            latches_of(&cache, &layout, 0),
            latches_of(&cache, &layout, 1),
        );
        // At most the one latch whose chains straddle the boundary between the schemas.
        assert!(first.intersection(&second).count() <= 1);
        assert!(first.len() > 100 && second.len() > 100, "{first:?}");
    }

    #[test]
    fn one_schema_spreads_over_many_latches() {
        let layout = Layout::new(8192, 8192, 1);
        let cache = BufferCache::new(layout.total_blocks() as usize, 4).unwrap();
        let latches = latches_of(&cache, &layout, 0);
        let per_latch = layout.blocks_per_schema() as f64 / latches.len() as f64;
        assert!(
            per_latch <= MAX_CHAINS_PER_LATCH as f64,
            "{per_latch} blocks per latch"
        );
    }
}
