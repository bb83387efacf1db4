//! The SLOB method without a database: schemas of one-row blocks and their indexes in a
//! shared buffer cache, and the statement every session runs —
//! `SELECT sum(scratch) FROM t WHERE key BETWEEN k AND k + WORK_UNIT` through the index —
//! or its update, which adds one to each row's scratch in exclusive mode.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use hdrhistogram::Histogram;

use super::cache::{BlockSource, BufferCache, Pinned, Visit};
use super::layout::{FIRST_ENTRY, KeyOrder, Layout, MAGIC_TABLE, WORD_KEY, WORD_SCRATCH};
use super::storage::{self, DataFile, word_of};

/// Physical IO: a cache smaller than the data, over a data file.
#[derive(Debug, Clone)]
pub struct PhysicalOptions {
    pub cache_blocks: u64,
    pub data_dir: PathBuf,
    /// Read blocks into private memory, bypassing the shared cache (Closson's PGA case).
    pub direct_path: bool,
}

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub block_bytes: usize,
    pub rows_per_schema: u64,
    pub schemas: u64,
    pub physical: Option<PhysicalOptions>,
}

pub struct Engine {
    pub layout: Layout,
    pub cache: BufferCache,
    pub file: Option<DataFile>,
    pub direct_path: bool,
    /// Seconds spent building the data, reported apart from any measurement.
    pub setup_s: f64,
}

/// A session's private IO state: its aligned block buffer and its read-time histogram.
pub struct SessionIo<'a> {
    pub block: &'a mut [u8],
    pub read_ns: &'a mut Histogram<u64>,
}

impl SessionIo<'_> {
    fn record_read(&mut self, nanoseconds: u64) {
        // Fixed buckets: recording never allocates; out-of-range values saturate.
        self.read_ns.saturating_record(nanoseconds.max(1));
    }
}

/// What one statement did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementCounts {
    pub lio: u64,
    pub hits: u64,
    pub misses: u64,
    pub reads: u64,
    /// Sum of the scratch values of the rows visited.
    pub scratch_sum: u64,
}

impl Engine {
    pub fn build(options: &EngineOptions) -> Result<Self> {
        let began = Instant::now();
        if options.block_bytes < 512 || !options.block_bytes.is_power_of_two() {
            bail!(
                "--block-size must be a power of two of at least 512 bytes (got {})",
                options.block_bytes
            );
        }
        let layout = Layout::new(
            options.block_bytes,
            options.rows_per_schema,
            options.schemas,
        );
        if let Some(physical) = &options.physical {
            // Before the key orders (memory) and the file (disk): a stale file's space counts
            // as free, and a file that cannot fit is refused before any work.
            for note in storage::remove_stale(&physical.data_dir)? {
                say!("corescale: note: {note}");
            }
            storage::check_free_space(&physical.data_dir, layout.file_bytes())?;
        }
        let orders: Vec<KeyOrder> = (0..options.schemas)
            .map(|schema| KeyOrder::new(options.rows_per_schema, schema + 1))
            .collect();
        let (cache, file, direct_path) = match &options.physical {
            None => (load_all(&layout, &orders)?, None, false),
            Some(physical) => {
                let file = DataFile::create(&physical.data_dir, &layout, &orders)?;
                let blocks = physical.cache_blocks.clamp(1, layout.total_blocks());
                let cache = BufferCache::new(blocks as usize, layout.block_words)?;
                (cache, Some(file), physical.direct_path)
            }
        };
        Ok(Self {
            layout,
            cache,
            file,
            direct_path,
            setup_s: began.elapsed().as_secs_f64(),
        })
    }

    fn source(&self) -> Option<&dyn BlockSource> {
        self.file.as_ref().map(|file| file as &dyn BlockSource)
    }

    /// One statement over `work_unit` keys from `first_key` of `schema`; `update` adds one to
    /// every row's scratch. `io` is the session's private block buffer and read-time log.
    pub fn statement(
        &self,
        schema: u64,
        first_key: u64,
        work_unit: u64,
        update: bool,
        io: &mut SessionIo<'_>,
    ) -> Result<StatementCounts> {
        if self.direct_path {
            return self.direct_statement(schema, first_key, work_unit, io);
        }
        let mut counts = StatementCounts::default();
        let last_key = (first_key + work_unit).min(self.layout.rows);
        let mut leaf = self.descend(schema, first_key, io, &mut counts)?;
        let mut leaf_number = first_key / self.layout.fanout;
        for key in first_key..last_key {
            if key / self.layout.fanout != leaf_number {
                // The next leaf, as a range scan follows the leaves' sibling links.
                leaf_number = key / self.layout.fanout;
                drop(leaf);
                leaf = self.get(
                    self.layout.level_base(schema, 0) + leaf_number,
                    io,
                    &mut counts,
                )?;
            }
            let row_address = leaf.word(FIRST_ENTRY + (key % self.layout.fanout) as usize);
            let row = self.get(row_address, io, &mut counts)?;
            if row.word(0) != MAGIC_TABLE | schema || row.word(WORD_KEY) != key {
                bail!(
                    "block {row_address} does not hold key {key} of schema {schema}: the buffer cache is corrupt"
                );
            }
            counts.scratch_sum += row.word(WORD_SCRATCH);
            if update {
                row.increment(WORD_SCRATCH);
            }
        }
        Ok(counts)
    }

    /// From the root down to the leaf holding `key`, one consistent get per level.
    fn descend(
        &self,
        schema: u64,
        key: u64,
        io: &mut SessionIo<'_>,
        counts: &mut StatementCounts,
    ) -> Result<Pinned<'_>> {
        let fanout = self.layout.fanout;
        let mut block = self.get(self.layout.root(schema), io, counts)?;
        for level in (1..self.layout.index_levels.len()).rev() {
            let entry = (key / fanout.pow(level as u32)) % fanout;
            let child = block.word(FIRST_ENTRY + entry as usize);
            block = self.get(child, io, counts)?;
        }
        Ok(block)
    }

    fn get(
        &self,
        address: u64,
        io: &mut SessionIo<'_>,
        counts: &mut StatementCounts,
    ) -> Result<Pinned<'_>> {
        let (pinned, visit) = self.cache.get(address, self.source(), io.block)?;
        counts.lio += 1;
        match visit {
            Visit::Hit => counts.hits += 1,
            Visit::Miss { read_ns } => {
                counts.misses += 1;
                counts.reads += 1;
                io.record_read(read_ns);
            }
        }
        Ok(pinned)
    }

    /// The same visits with every block read into private memory: no cache, no latches.
    fn direct_statement(
        &self,
        schema: u64,
        first_key: u64,
        work_unit: u64,
        io: &mut SessionIo<'_>,
    ) -> Result<StatementCounts> {
        let file = self
            .file
            .as_ref()
            .expect("direct path reads need the data file");
        let mut counts = StatementCounts::default();
        let read =
            |address: u64, io: &mut SessionIo<'_>, counts: &mut StatementCounts| -> Result<()> {
                let read_ns = file.read_block(address, io.block)?;
                io.record_read(read_ns);
                counts.reads += 1;
                Ok(())
            };
        let fanout = self.layout.fanout;
        let last_key = (first_key + work_unit).min(self.layout.rows);
        let mut block = self.layout.root(schema);
        for level in (1..self.layout.index_levels.len()).rev() {
            read(block, io, &mut counts)?;
            let entry = (first_key / fanout.pow(level as u32)) % fanout;
            block = word_of(io.block, FIRST_ENTRY + entry as usize);
        }
        let mut leaf_number = u64::MAX;
        let mut leaf = vec![0u64; self.layout.block_words];
        for key in first_key..last_key {
            if key / fanout != leaf_number {
                leaf_number = key / fanout;
                read(block, io, &mut counts)?;
                for (index, word) in leaf.iter_mut().enumerate() {
                    *word = word_of(io.block, index);
                }
                block = self.layout.level_base(schema, 0) + leaf_number + 1;
            }
            let row_address = leaf[FIRST_ENTRY + (key % fanout) as usize];
            read(row_address, io, &mut counts)?;
            if word_of(io.block, WORD_KEY) != key {
                bail!("block {row_address} of the data file does not hold key {key}");
            }
            counts.scratch_sum += word_of(io.block, WORD_SCRATCH);
        }
        Ok(counts)
    }
}

/// Builds a cache that holds every block, each placed once at load time.
fn load_all(layout: &Layout, orders: &[KeyOrder]) -> Result<BufferCache> {
    let blocks = layout.total_blocks();
    let cache = BufferCache::new(blocks as usize, layout.block_words)?;
    let mut block = vec![0u64; layout.block_words];
    for address in 0..blocks {
        let schema = (address / layout.blocks_per_schema()) as usize;
        layout.fill_block(address, &orders[schema], &mut block);
        cache.preload(address as u32, address, &block);
    }
    Ok(cache)
}
