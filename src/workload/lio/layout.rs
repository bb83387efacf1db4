//! Where blocks live and what is in them, as SLOB and pgio lay tables out: one row per block,
//! and an index whose key order is random with respect to the physical order of the rows.
//!
//! Every schema owns a contiguous range of block addresses: its table blocks, then its index
//! leaves, then each branch level up to a single root.

use crate::rng::permutation;

/// Block words (u64). Table block: [MAGIC_TABLE, key, scratch, filler...].
/// Index block: [MAGIC_INDEX, entries, child or row address per entry...].
pub const MAGIC_TABLE: u64 = 0x5441_424C_0000_0000;
pub const MAGIC_INDEX: u64 = 0x494E_4458_0000_0000;
pub const WORD_KEY: usize = 1;
pub const WORD_SCRATCH: usize = 2;
pub const WORD_ENTRIES: usize = 1;
pub const FIRST_ENTRY: usize = 2;

/// The shape of every schema; all schemas are alike.
#[derive(Debug, Clone)]
pub struct Layout {
    pub block_words: usize,
    /// Rows (= table blocks) per schema.
    pub rows: u64,
    /// Index entries per index block.
    pub fanout: u64,
    /// Blocks per index level, leaves first, root last.
    pub index_levels: Vec<u64>,
    pub schemas: u64,
}

impl Layout {
    pub fn new(block_bytes: usize, rows: u64, schemas: u64) -> Self {
        let block_words = block_bytes / 8;
        let fanout = (block_words - FIRST_ENTRY) as u64;
        let mut index_levels = vec![rows.div_ceil(fanout)];
        while *index_levels.last().expect("one level at least") > 1 {
            let below = *index_levels.last().expect("one level at least");
            index_levels.push(below.div_ceil(fanout));
        }
        Self {
            block_words,
            rows,
            fanout,
            index_levels,
            schemas,
        }
    }

    pub fn blocks_per_schema(&self) -> u64 {
        self.rows + self.index_levels.iter().sum::<u64>()
    }

    pub fn total_blocks(&self) -> u64 {
        self.blocks_per_schema().saturating_mul(self.schemas)
    }

    pub fn block_bytes(&self) -> usize {
        self.block_words * 8
    }

    /// The size of pio's data file, which holds every block.
    pub fn file_bytes(&self) -> u64 {
        self.total_blocks()
            .saturating_mul(self.block_bytes() as u64)
    }

    pub fn schema_base(&self, schema: u64) -> u64 {
        schema * self.blocks_per_schema()
    }

    /// First block of index level `level` (0 = leaves) within a schema.
    pub fn level_base(&self, schema: u64, level: usize) -> u64 {
        self.schema_base(schema) + self.rows + self.index_levels[..level].iter().sum::<u64>()
    }

    pub fn root(&self, schema: u64) -> u64 {
        self.level_base(schema, self.index_levels.len() - 1)
    }

    /// The scratch value the loader writes for a key, so readers can check what they sum.
    pub fn initial_scratch(key: u64) -> u64 {
        key % 1000
    }

    /// Fills `block` (one block of words) with the contents of block `address`.
    pub fn fill_block(&self, address: u64, order: &KeyOrder, block: &mut [u64]) {
        let schema = address / self.blocks_per_schema();
        let offset = address % self.blocks_per_schema();
        block.fill(0);
        if offset < self.rows {
            // The table block at physical position `offset` holds the row the key order put there.
            let key = order.key_at_position[offset as usize];
            block[0] = MAGIC_TABLE | schema;
            block[WORD_KEY] = key;
            block[WORD_SCRATCH] = Self::initial_scratch(key);
            for (index, word) in block.iter_mut().enumerate().skip(3) {
                *word = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index as u64;
            }
            return;
        }
        // An index block: which level, and which block of that level.
        let mut level_offset = offset - self.rows;
        let mut level = 0;
        while level_offset >= self.index_levels[level] {
            level_offset -= self.index_levels[level];
            level += 1;
        }
        let span = self.fanout.pow(level as u32 + 1);
        let first_key = level_offset * span;
        let entries = ((self.rows - first_key).div_ceil(span / self.fanout)).min(self.fanout);
        block[0] = MAGIC_INDEX | schema;
        block[WORD_ENTRIES] = entries;
        for entry in 0..entries {
            let child = if level == 0 {
                // Leaf entry: the table block of key first_key + entry.
                self.schema_base(schema) + order.position_of_key[(first_key + entry) as usize]
            } else {
                self.level_base(schema, level - 1) + level_offset * self.fanout + entry
            };
            block[FIRST_ENTRY + entry as usize] = child;
        }
    }
}

/// Both directions of a schema's key order: key -> position and position -> key.
pub struct KeyOrder {
    pub position_of_key: Vec<u64>,
    pub key_at_position: Vec<u64>,
}

impl KeyOrder {
    pub fn new(rows: u64, seed: u64) -> Self {
        let position_of_key = permutation(rows, seed);
        let mut key_at_position = vec![0; rows as usize];
        for (key, &position) in position_of_key.iter().enumerate() {
            key_at_position[position as usize] = key as u64;
        }
        Self {
            position_of_key,
            key_at_position,
        }
    }
}
