//! Readers for every series format `report` accepts, detected from the content:
//! corescale JSON, corescale CSV, test_cpu_parallel CSV (both headers it has written) and
//! SLOB-style rate CSV (`Num_concurrent_workers,<rate>`).

mod csv_series;
mod document;
mod pgbench;

use csv_series::from_csv;
use document::from_document;
use pgbench::{from_pgbench, is_pgbench};

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::analysis::series::{CacheFigures, Job, Measure, Point, Provenance, Series};
use crate::latency::{Latency, Percentiles, RateFigures};
use crate::redact::redact_argument;
use crate::result::csv_format::{FIGURE_PREFIX, Row};
use crate::result::ranges::{self, COUNT, CPU_FRACTION, CV, PERCENT, RAW};
use crate::result::summary::delivered_jobs_per_min;
use crate::result::{CacheFigure, Level, RunDocument, RunMode, SCHEMA};

/// Text longer than this is cut when quoted in a message.
const QUOTE_CHARS: usize = 80;

/// Text from a file as it may be shown: control characters escaped (no terminal escape
/// sequence gets through), everything else kept.
pub fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Input quoted in a message: printable, and at most [`QUOTE_CHARS`] characters.
pub fn quote(text: &str) -> String {
    let shown = printable(text);
    match shown.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}...", &shown[..cut]),
        None => shown,
    }
}

/// Checks an imported number against its range; `at` says where it was.
fn in_range(
    value: f64,
    range: &std::ops::RangeInclusive<f64>,
    what: &str,
    at: &dyn Fn() -> String,
) -> Result<f64> {
    ranges::check(value, range, what).map_err(|problem| anyhow::anyhow!("{}: {problem}", at()))
}

fn worker_count(value: f64, at: &dyn Fn() -> String) -> Result<usize> {
    ranges::workers(value).map_err(|problem| anyhow::anyhow!("{}: {problem}", at()))
}

/// Reads one file into a series named after its host label, else its file stem.
pub fn read_series(path: &Path) -> Result<Series> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .context("cannot read standard input")?;
        return parse_series(Path::new("stdin"), &bytes);
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    parse_series(path, &bytes)
}

/// The result files a report reads: each file as given (`-` for standard input), and every
/// `*.json` and `*.csv` under each directory, recursively and in path order; a CSV beside a
/// JSON of the same name is the same run and is left out. Hidden files (lock files) are
/// skipped.
pub fn result_files(inputs: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        let mut found: Vec<std::path::PathBuf> = Vec::new();
        // Links are followed (walkdir stops at loops); hidden folders and files are not read.
        let walk = walkdir::WalkDir::new(input)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                entry.depth() == 0 || !entry.file_name().to_string_lossy().starts_with('.')
            });
        for entry in walk {
            let entry = entry.with_context(|| format!("cannot read '{}'", input.display()))?;
            let extension = entry
                .path()
                .extension()
                .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
            let ours = matches!(extension.as_deref(), Some("json" | "csv"));
            if entry.file_type().is_file()
                && (ours && !is_report_analysis(entry.path())
                    || !ours && other_tools_output(entry.path()))
            {
                found.push(entry.into_path());
            }
        }
        let all: std::collections::BTreeSet<&std::path::PathBuf> = found.iter().collect();
        let has_json = |csv: &std::path::Path| {
            all.contains(&csv.with_extension("json")) || all.contains(&csv.with_extension("JSON"))
        };
        let kept: Vec<std::path::PathBuf> = found
            .iter()
            .filter(|path| {
                let csv = path
                    .extension()
                    .is_some_and(|extension| extension.eq_ignore_ascii_case("csv"));
                !(csv && has_json(path))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            return Err(crate::error::UsageError::new(format!(
                "no .json or .csv results, and no pgbench output, under '{}'",
                input.display()
            ))
            .into());
        }
        files.extend(kept);
    }
    Ok(files)
}

/// Whether a file in a folder is another tool's output `report` reads (pgbench's summary):
/// a text file (.txt, .log, .out or none) whose first lines say so. Others are left alone.
fn other_tools_output(path: &Path) -> bool {
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
    if !matches!(extension.as_deref(), None | Some("txt" | "log" | "out")) {
        return false;
    }
    let mut head = vec![0; 64 * 1024];
    let read = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .unwrap_or(0);
    head.truncate(read);
    is_pgbench(&String::from_utf8_lossy(&head))
}

/// Levels imported one file each (pgbench's outputs) become one series per folder and job,
/// named after the folder: a folder of runs at 1, 2, 4 clients is a sweep. Several files at
/// one level are repeats of it: the level's rate is their mean, their range its spread.
pub fn levels_into_sweeps(series: Vec<Series>) -> Vec<Series> {
    // Each series with the folder its file was in.
    let mut merged: Vec<(std::path::PathBuf, Series)> = Vec::new();
    for one in series {
        let imported = one.job.tool == pgbench::TOOL;
        let folder = Path::new(&one.source)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let same = merged.iter_mut().find(|(other_folder, other)| {
            imported && other.job == one.job && *other_folder == folder
        });
        match same {
            Some((_, sweep)) => {
                sweep.points.extend(one.points);
                if let Some(name) = folder.file_name() {
                    sweep.name = printable(&name.to_string_lossy());
                }
                sweep.source = folder.display().to_string();
            }
            None => merged.push((folder, one)),
        }
    }
    merged
        .into_iter()
        .map(|(_, mut sweep)| {
            sweep.points = repeats_averaged(std::mem::take(&mut sweep.points));
            sweep
        })
        .collect()
}

/// Points of one worker count averaged into one, their range its spread.
fn repeats_averaged(mut points: Vec<Point>) -> Vec<Point> {
    points.sort_by_key(|point| point.workers);
    let mut levels: Vec<Point> = Vec::new();
    for group in points.chunk_by(|a, b| a.workers == b.workers) {
        let mut level = group[0].clone();
        if group.len() > 1 {
            let raws: Vec<f64> = group.iter().map(|point| point.raw).collect();
            level.raw = raws.iter().sum::<f64>() / raws.len() as f64;
            level.spread = Some((
                raws.iter().copied().fold(f64::INFINITY, f64::min),
                raws.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ));
            level
                .figures
                .insert("repeats".to_string(), group.len() as f64);
        }
        levels.push(level);
    }
    levels
}

/// A result document inside log output: the first line that is just `{` begins it, and the
/// lines before and after it are blank or corescale's own notes (each starting "corescale:").
/// None for anything else (compact JSON, CSV, other text).
fn logged_document(text: &str) -> Option<&str> {
    let start = if text.starts_with("{\n") {
        0
    } else {
        text.find("\n{\n")? + 1
    };
    let mut values =
        serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde::de::IgnoredAny>();
    values.next()?.ok()?;
    let end = start + values.byte_offset();
    let notes = |part: &str| {
        part.lines()
            .all(|line| line.trim().is_empty() || line.starts_with("corescale:"))
    };
    (notes(&text[..start]) && notes(&text[end..])).then(|| &text[start..end])
}

/// An analysis `report --json` wrote (often saved beside the results): not a run, so a
/// folder's report leaves it out and says so.
fn is_report_analysis(path: &Path) -> bool {
    let mut head = [0u8; 4096];
    let read = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .unwrap_or(0);
    let found = String::from_utf8_lossy(&head[..read]).contains("\"schema\": \"corescale-report/");
    if found {
        say!(
            "corescale: note: left out '{}': a report's analysis, not a run",
            path.display()
        );
    }
    found
}

/// The series in a file's bytes; `path` names it in messages and gives the default name.
pub fn parse_series(path: &Path, bytes: &[u8]) -> Result<Series> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        anyhow::anyhow!(
            "'{}': not a text file (invalid UTF-8 at byte {})",
            path.display(),
            error.valid_up_to()
        )
    })?;
    // Editors on Windows put a byte-order mark before JSON and CSV alike.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        bail!(
            "'{}' is empty: no header and no levels (a run stopped before its first level writes none)",
            path.display()
        );
    }
    let stem = path.file_stem().map_or_else(
        || "series".to_string(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let mut series = if let Some(document) = logged_document(text) {
        // Also `kubectl logs` of a `run -o -` pod: corescale's own notes around the document.
        from_document(path, document)?
    } else if text.trim_start().starts_with('{') {
        from_document(path, text)?
    } else if is_pgbench(text) {
        from_pgbench(path, text, &stem)?
    } else {
        from_csv(path, text, &stem)?
    };
    series.source = path.display().to_string();
    series.name = printable(&series.name);
    if let Measure::Rate { unit } = &mut series.measure {
        *unit = printable(unit);
    }
    if series.points.is_empty() {
        bail!("'{}' holds no load levels", path.display());
    }
    // Open-loop levels (`--rate`) are latency-throughput points, not capacity: several may
    // share a worker count.
    let (paced, closed): (Vec<Point>, Vec<Point>) = std::mem::take(&mut series.points)
        .into_iter()
        .partition(|point| {
            point
                .latency
                .as_ref()
                .is_some_and(|latency| latency.rate.is_some())
        });
    series.points = closed;
    series.paced = paced;
    series.points.sort_by_key(|point| point.workers);
    if let Some(pair) = series
        .points
        .windows(2)
        .find(|pair| pair[0].workers == pair[1].workers)
    {
        bail!(
            "'{}' has two rows for {} workers: keep one",
            path.display(),
            pair[0].workers
        );
    }
    Ok(series)
}

/// A level's workload figures as the file gives them: each finite, names shown escaped.
fn checked_figures(
    figures: &std::collections::BTreeMap<String, f64>,
    at: &dyn Fn(&str) -> String,
) -> Result<std::collections::BTreeMap<String, f64>> {
    figures
        .iter()
        .map(|(name, &value)| {
            let value = in_range(value, &(-*RAW.end()..=*RAW.end()), "the figure", &|| {
                at(&printable(name))
            })?;
            Ok((printable(name), value))
        })
        .collect()
}

/// The buffer cache's figures among a level's workload figures (`CacheFigure`), each
/// range-checked where it is read (`at` names a figure's place); None when it has none.
fn cache_figures(
    figures: &std::collections::BTreeMap<String, f64>,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<CacheFigures>> {
    let get = |figure: CacheFigure,
               range: &std::ops::RangeInclusive<f64>,
               what: &str|
     -> Result<Option<f64>> {
        figure
            .find(figures)
            .map(|(value, name)| in_range(value, range, what, &|| at(name)))
            .transpose()
    };
    let counts = COUNT;
    // Both counts checked before their ratio is taken.
    let gets = get(CacheFigure::LatchGets, &counts, "latch gets")?;
    let misses = get(CacheFigure::LatchMisses, &counts, "latch misses")?;
    let cache = CacheFigures {
        hit_ratio: get(CacheFigure::HitRatio, &(0.0..=1.0), "the hit ratio")?,
        latch_misses_per_1k_gets: crate::result::misses_per_1k_gets(gets, misses),
        pio_per_s: get(CacheFigure::PioPerS, &counts, "PIO/s")?,
        read_p99_us: get(CacheFigure::ReadP99Us, &counts, "the read p99")?,
    };
    Ok((cache != CacheFigures::default()).then_some(cache))
}

/// A level's response times as the file gives them: in order and below a day
/// (`Latency::check`), its rates and limit in range (a sent rate of 1.1e132/s overflowed the
/// latency figure's pixel arithmetic).
fn checked_latency(latency: &Latency) -> std::result::Result<(), String> {
    latency.check()?;
    if let Some(rate) = &latency.rate {
        ranges::check(rate.target_per_s, &RAW, "rate.target_per_s")?;
        ranges::check(rate.achieved_per_s, &COUNT, "rate.achieved_per_s")?;
    }
    if let Some(limit) = latency.limit_ms {
        ranges::check(limit, &(0.0..=crate::latency::A_DAY_MS), "limit_ms")?;
    }
    Ok(())
}
