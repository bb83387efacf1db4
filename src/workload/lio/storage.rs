//! The data file behind the pio cache: every block of every schema, read with pread into a
//! private aligned buffer — through O_DIRECT where the file system allows it, so reads reach
//! the device instead of the OS page cache — and written back with pwrite.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use tempfile::NamedTempFile;

use super::cache::BlockSource;
use super::layout::{KeyOrder, Layout};

/// O_DIRECT wants buffers, offsets and sizes aligned to the device's logical block.
pub const ALIGNMENT: usize = 4096;

pub struct DataFile {
    /// Removed from disk when dropped (and by a second signal, through `cleanup`).
    temporary: NamedTempFile,
    reader: File,
    block_bytes: usize,
    /// Whether reads bypass the page cache.
    pub direct: bool,
}

impl Drop for DataFile {
    fn drop(&mut self) {
        crate::interrupt::forget(self.temporary.path());
    }
}

impl DataFile {
    /// Writes every block of `layout` to a new file in `directory`.
    pub fn create(directory: &Path, layout: &Layout, orders: &[KeyOrder]) -> Result<Self> {
        let temporary = tempfile::Builder::new()
            .prefix("corescale-pio-")
            .suffix(".dat")
            .tempfile_in(directory)
            .with_context(|| {
                format!(
                    "cannot create the pio data file in '{}': choose a writable --data-dir",
                    directory.display()
                )
            })?;
        crate::interrupt::register(temporary.path());
        let mut block = vec![0u64; layout.block_words];
        {
            let mut writer = BufWriter::with_capacity(1 << 20, temporary.as_file());
            for address in 0..layout.total_blocks() {
                let schema = (address / layout.blocks_per_schema()) as usize;
                layout.fill_block(address, &orders[schema], &mut block);
                for word in &block {
                    writer.write_all(&word.to_ne_bytes())?;
                }
            }
            writer.flush()?;
        }
        temporary
            .as_file()
            .sync_all()
            .context("writing the pio data file (is the disk full?)")?;
        let (reader, direct) = open_direct(temporary.path())?;
        Ok(Self {
            temporary,
            reader,
            block_bytes: layout.block_bytes(),
            direct,
        })
    }

    fn offset(&self, address: u64) -> u64 {
        address * self.block_bytes as u64
    }

    /// Reads one block into `scratch` (aligned, one block long); returns the read's ns.
    pub fn read_block(&self, address: u64, scratch: &mut [u8]) -> Result<u64> {
        let began = Instant::now();
        self.reader
            .read_exact_at(&mut scratch[..self.block_bytes], self.offset(address))
            .with_context(|| format!("reading block {address} of the pio data file"))?;
        Ok(began.elapsed().as_nanos() as u64)
    }
}

/// Opens for reading with O_DIRECT, falling back to buffered reads where it is refused
/// (tmpfs, some overlay file systems).
fn open_direct(path: &Path) -> Result<(File, bool)> {
    let direct = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(path);
    match direct {
        Ok(file) => Ok((file, true)),
        Err(_) => {
            let file = OpenOptions::new().read(true).write(true).open(path)?;
            Ok((file, false))
        }
    }
}

/// A block-sized, ALIGNMENT-aligned window into an owned buffer, for O_DIRECT.
pub struct AlignedBlock {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBlock {
    pub fn new(len: usize) -> Self {
        let storage = vec![0u8; len + ALIGNMENT];
        let start = storage.as_ptr().align_offset(ALIGNMENT);
        Self {
            storage,
            start,
            len,
        }
    }

    pub fn bytes(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// The word at `index` of a block read into bytes.
pub fn word_of(bytes: &[u8], index: usize) -> u64 {
    let start = index * 8;
    u64::from_ne_bytes(bytes[start..start + 8].try_into().expect("8 bytes"))
}

impl BlockSource for DataFile {
    fn read(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<u64> {
        let nanoseconds = self.read_block(address, scratch)?;
        for (index, word) in words.iter().enumerate() {
            word.store(word_of(scratch, index), Ordering::Relaxed);
        }
        Ok(nanoseconds)
    }

    fn write(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<()> {
        for (index, word) in words.iter().enumerate() {
            scratch[index * 8..index * 8 + 8]
                .copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        self.reader
            .write_all_at(&scratch[..self.block_bytes], self.offset(address))
            .with_context(|| format!("writing block {address} back to the pio data file"))
    }
}
