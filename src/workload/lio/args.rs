//! The options of `run lio` and `run pio`: the engine's shape (shared by both), pio's data
//! file and cache, and how they become the engine's and the sessions' settings.

use std::path::PathBuf;

use anyhow::{Result, ensure};
use clap::Args;

use super::engine::{EngineOptions, PhysicalOptions};
use super::{
    DEFAULT_CACHE_SHARE, DEFAULT_HOT_SHARE_OF_ROWS, LIO_DEFAULT_ROWS, LioWorkload,
    PIO_DEFAULT_ROWS, SessionOptions, layout,
};
use crate::error::UsageError;
use crate::values::{
    BlockSize, Scale, Share, parse_block_size, parse_scale, parse_share, parse_size,
};
use crate::workload::slob::{DEFAULT_JOB_STATEMENTS, SlobArgs};
use crate::workload::{BuildContext, Workload, WorkloadKind, WorkloadOptions};

/// Most rows per lio/pio schema, so sizes stay far from 64-bit overflow.
pub(crate) const MAX_ROWS_PER_SCHEMA: u64 = 1 << 32;

/// The buffer-cache engine's shape, shared by lio and pio.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "SLOB engine (lio, pio)")]
pub struct EngineArgs {
    /// Rows (one-row blocks) per schema, as a count (8192) or a size (64M). Default: lio
    /// 64000 (500M, the SLOB SCALE of the Oracle cloud OCPU study, or the last-level cache if larger); pio 8192.
    #[arg(long, value_name = "ROWS|SIZE", value_parser = parse_scale)]
    pub scale: Option<Scale>,

    /// Number of schemas (default: one per worker of the largest level).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub schemas: Option<u64>,

    /// Every session on one schema (the contended case).
    #[arg(long, conflicts_with = "schemas")]
    pub single_schema: bool,

    /// Share of statements that start in a small hot region (e.g. 90%).
    #[arg(long, value_name = "PCT", value_parser = parse_share)]
    pub hotspot: Option<Share>,

    /// Rows in the hot region (default 1% of the rows, at least one work unit).
    #[arg(long, value_name = "ROWS", requires = "hotspot",
          value_parser = crate::values::parse_positive)]
    pub hotspot_rows: Option<u64>,

    /// Block size (default 8K).
    #[arg(long, value_name = "SIZE", value_parser = parse_block_size)]
    pub block_size: Option<BlockSize>,
}

/// `run lio`: SLOB-method logical IO through an in-process buffer cache.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = crate::workload::slob::job_help())]
pub struct LioArgs {
    #[command(flatten)]
    pub slob: SlobArgs,
    #[command(flatten)]
    pub no_campaign: crate::workload::NoCampaign,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `run pio`: the same engine with a cache smaller than the data, reading misses from a file.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = crate::workload::slob::job_help())]
pub struct PioArgs {
    #[command(flatten)]
    pub slob: SlobArgs,
    #[command(flatten)]
    pub no_campaign: crate::workload::NoCampaign,
    #[command(flatten)]
    pub engine: EngineArgs,

    /// Buffer cache size (default 10% of the data), e.g. 32M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "pio")]
    pub cache_size: Option<u64>,

    /// Directory for the data file (default: the current directory).
    #[arg(long, value_name = "DIR", help_heading = "pio")]
    pub data_dir: Option<PathBuf>,

    /// Read blocks into private memory, bypassing the shared cache.
    #[arg(long, help_heading = "pio")]
    pub direct_path: bool,
}

impl WorkloadOptions for LioArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        Ok(Box::new(build(
            WorkloadKind::Lio,
            &self.slob,
            &self.engine,
            None,
            context,
        )?))
    }
}

impl WorkloadOptions for PioArgs {
    fn keeps_intervals(&self) -> bool {
        true
    }

    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        let file = DataFile {
            cache_size: self.cache_size,
            data_dir: self.data_dir.clone(),
            direct_path: self.direct_path,
        };
        Ok(Box::new(build(
            WorkloadKind::Pio,
            &self.slob,
            &self.engine,
            Some(file),
            context,
        )?))
    }
}

/// pio's data file and the cache in front of it.
struct DataFile {
    cache_size: Option<u64>,
    data_dir: Option<PathBuf>,
    direct_path: bool,
}

/// Builds lio, or pio when its data file is given.
fn build(
    kind: WorkloadKind,
    slob: &SlobArgs,
    engine: &EngineArgs,
    file: Option<DataFile>,
    context: &BuildContext,
) -> Result<LioWorkload> {
    let block_bytes = engine.block_size.unwrap_or_default().0;
    let last_level_cache = context.topology.last_level_cache_bytes();
    let rows = engine.scale.map_or_else(
        || default_rows(kind, block_bytes, last_level_cache),
        |scale| scale.rows(block_bytes),
    );
    if rows > MAX_ROWS_PER_SCHEMA {
        return Err(UsageError::new(format!(
            "--scale gives {rows} rows per schema: at most {MAX_ROWS_PER_SCHEMA} (2^32)"
        ))
        .into());
    }
    ensure!(rows >= 2, "--scale must give at least 2 rows per schema");
    let work_unit = slob.work_unit();
    ensure!(
        (1..=rows).contains(&work_unit),
        "--work-unit must be between 1 and the rows per schema ({rows})"
    );
    let schemas = if engine.single_schema {
        1
    } else {
        engine.schemas.unwrap_or(context.max_workers.max(1) as u64)
    };
    let physical = file.map(|file| {
        let layout = layout::Layout::new(block_bytes as usize, rows, schemas);
        let default_cache = (layout.total_blocks() as f64 * DEFAULT_CACHE_SHARE).ceil() as u64;
        let cache_blocks = file.cache_size.map(|bytes| (bytes / block_bytes).max(1));
        PhysicalOptions {
            cache_blocks: cache_blocks.unwrap_or(default_cache).max(16),
            data_dir: file.data_dir.unwrap_or_else(|| ".".into()),
            direct_path: file.direct_path,
        }
    });
    let hotspot = engine.hotspot.map(|Share(share)| {
        let default_rows = ((rows as f64 * DEFAULT_HOT_SHARE_OF_ROWS) as u64).max(work_unit);
        (
            share,
            engine.hotspot_rows.unwrap_or(default_rows).clamp(1, rows),
        )
    });
    Ok(LioWorkload::new(
        kind,
        EngineOptions {
            block_bytes: block_bytes as usize,
            rows_per_schema: rows,
            schemas,
            physical,
        },
        SessionOptions {
            work_unit,
            update_share: slob.update_share(),
            hotspot,
            think_time: slob.think_time,
            single_schema: engine.single_schema,
            job_statements: context.job_size.unwrap_or(DEFAULT_JOB_STATEMENTS),
            record_latency: true,
        },
    )?
    .warning_when_cached(last_level_cache))
}

/// Rows per schema when --scale is not given.
pub(super) fn default_rows(
    kind: WorkloadKind,
    block_bytes: u64,
    last_level_cache: Option<u64>,
) -> u64 {
    match kind {
        WorkloadKind::Pio => PIO_DEFAULT_ROWS,
        _ => last_level_cache
            .map_or(0, |bytes| bytes.div_ceil(block_bytes.max(1)))
            .max(LIO_DEFAULT_ROWS),
    }
}
