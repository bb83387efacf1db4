//! Readers for every series format `report` accepts, detected from the content:
//! corescale JSON, corescale CSV, test_cpu_parallel CSV (both headers it has written),
//! SLOB-style rate CSV (`Num_concurrent_workers,<rate>`), and other tools' outputs
//! ([`IMPORTERS`]: a new one is a file of its own and a row there).

mod awr;
mod awr_rac;
mod campaign;
mod csv_series;
mod document;
mod folder;
mod hammerdb;
mod hlog;
mod html;
mod nodes;
pub(crate) mod orders;
mod pgbench;
mod pgbench_log;
mod sysbench;

pub use campaign::merge_campaigns;
use csv_series::from_csv;
use document::from_document;
use folder::{HEAD_BYTES, detect, level_from_name, level_known};
pub use folder::{levels_into_sweeps, pgbench_logs_joined, result_files};
pub use nodes::{NodeCores, node_cores};

/// Why a `.json` or `.csv` is no result at all (another harness's `params.json`, a
/// `samples.csv` of its own): found in a folder, such a file is left out with a note naming
/// it, so the folder's results are still read; named alone, it is refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotAResult(pub String);

/// What a file holding bytes that are not UTF-8 is, in every reader's message.
const NOT_TEXT: &str = "not a text file (invalid UTF-8)";

/// Other tools' outputs `report` reads, tried in this order on a file's first 64 KiB.
const IMPORTERS: &[&Importer] = &[
    &pgbench::SUMMARY,
    &pgbench::PROGRESS,
    &pgbench_log::TRANSACTIONS,
    &pgbench_log::AGGREGATED,
    &sysbench::REPORT,
    &sysbench::OLD,
    &hammerdb::LOG,
    &hammerdb::XTPROF,
    &hammerdb::COUNTER,
    &awr::AWR,
    &awr_rac::AWR_RAC,
    &awr::STATSPACK,
    &awr::LOAD_PROFILE_ALONE,
    &hlog::HLOG,
];

/// Another tool's output: the tool its series' job names, how its text is told from
/// others' by its head, where one run ends and the next begins in a file holding several,
/// and its reader.
struct Importer {
    tool: &'static str,
    detects: fn(&str) -> bool,
    /// Text its output holds: a file holding some of it and not claimed is said to be
    /// nearest this tool's, and what it lacks named.
    hints: &'static [&'static str],
    runs: Runs,
    read: Reader,
}

/// Where a text reader's runs begin, as line numbers (the first run always begins at 0).
type Runs = fn(&str) -> Vec<usize>;

/// A file read as one run.
fn one_run(_: &str) -> Vec<usize> {
    Vec::new()
}

/// The numbers of the lines that begin a run: those a test picks.
fn lines_where(text: &str, begins: impl Fn(&str) -> bool) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| begins(line))
        .map(|(number, _)| number)
        .collect()
}

enum Reader {
    /// A report, read whole.
    Text(fn(&InputFile, &str) -> Result<Series>),
    /// A log, read line by line: it may be larger than memory.
    Lines(fn(&InputFile, &mut dyn std::io::BufRead) -> Result<Series>),
}

/// A file being read: where it is (messages, its name's number) and the load level
/// `report --level FILE=N` gave it.
pub struct InputFile<'a> {
    pub path: &'a Path,
    pub level: Option<usize>,
    /// The line the run being read begins at, in a file of several runs.
    first_line: usize,
}

impl<'a> InputFile<'a> {
    pub fn new(path: &'a Path, level: Option<usize>) -> Self {
        InputFile {
            path,
            level,
            first_line: 0,
        }
    }

    /// Where a line of the run being read is in its file: "'x.txt' line 12".
    fn line(&self, number: usize) -> String {
        format!(
            "'{}' line {}",
            self.path.display(),
            self.first_line + number + 1
        )
    }

    /// The file's name without its extension: a series' name unless its file gives one.
    fn stem(&self) -> String {
        self.path.file_stem().map_or_else(
            || "series".to_string(),
            |stem| stem.to_string_lossy().into_owned(),
        )
    }

    /// A note when `--level` gave a level to a file that states its own (which wins).
    fn level_ignored(&self, stated: usize) -> Option<String> {
        self.level.filter(|given| *given != stated).map(|given| {
            format!(
                "'{}': --level {given} left out: the file says it ran at {stated}",
                self.path.display()
            )
        })
    }

    /// The load level of a file that does not state its own: `--level`, else the number in
    /// its name; 0 (unknown, an error unless a pgbench summary gives it) when neither does.
    fn given_level(&self) -> usize {
        self.level
            .or_else(|| level_from_name(self.path, "").ok())
            .unwrap_or(0)
    }
}

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::analysis::series::{
    CacheFigures, Job, Measure, Point, PointInCampaign, Provenance, Series,
};
use crate::latency::{Latency, Percentiles, RateFigures};
use crate::redact::redact_argument;
use crate::result::csv_format::{FIGURE_PREFIX, Row};
use crate::result::ranges::{self, COUNT, CPU_FRACTION, CV, PERCENT, RAW};
use crate::result::summary::delivered_jobs_per_min;
use crate::result::{CacheFigure, Level, RunDocument, RunMode, SCHEMA};

/// Text longer than this is cut when quoted in a message.
const QUOTE_CHARS: usize = 80;

/// Text from a file as it may be shown: control and bidirectional characters escaped (no
/// terminal escape sequence gets through), everything else kept.
pub fn printable(text: &str) -> String {
    crate::format::printable(text)
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

/// The first number in `text` as a count or another non-negative figure, checked against
/// [`COUNT`]: the range most figures of other tools' outputs are read in.
pub(super) fn count_in(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    in_range(number_in(text, what, at)?, &COUNT, what, at)
}

/// The first number in `text` ("2", "1.234 ms"), or an error naming the field; traced to
/// its line when [`traced`] reads.
pub(super) fn number_in(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    let word = text.split_whitespace().next().unwrap_or("");
    let value = word
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| anyhow::anyhow!("{}: {what} '{}' is not a number", at(), quote(word)))?;
    if !what.is_empty() {
        TRACE.with_borrow_mut(|trace| {
            if let Some(trace) = trace
                && trace.len() < TRACED_PER_FILE
            {
                trace.push(format!("{}: {what} {}", at(), quote(word)));
            }
        });
    }
    Ok(value)
}

/// At most this many numbers of one file are traced (a histogram's buckets are many).
const TRACED_PER_FILE: usize = 500;

thread_local! {
    /// The numbers read while [`traced`] runs, each with its line.
    static TRACE: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `read` keeping where each number another tool's output gave was read from ("'x.txt'
/// line 14: tps 1009.648474"), for `report --verbose`.
pub fn traced<T>(read: impl FnOnce() -> T) -> (T, Vec<String>) {
    TRACE.set(Some(Vec::new()));
    let result = read();
    let trace = TRACE.take().unwrap_or_default();
    (result, trace)
}

/// The interval a progress line ends (pgbench's `-P`, sysbench's `--report-interval`): from
/// the line before it (else the start) to `end_s`, at `rate` per second.
fn interval_ending(
    end_s: f64,
    rate: f64,
    before: Option<&crate::latency::IntervalFigures>,
    at: &dyn Fn() -> String,
) -> Result<crate::latency::IntervalFigures> {
    let start_s = before.map_or(0.0, |before| before.start_s + before.length_s);
    if end_s <= start_s {
        bail!(
            "{}: interval end {end_s} s is not after the line before it ({start_s} s)",
            at()
        );
    }
    let length_s = end_s - start_s;
    Ok(crate::latency::IntervalFigures {
        start_s,
        length_s,
        responses: (rate * length_s).round() as u64,
        rate_per_s: rate,
        p50_ms: None,
        p99_ms: None,
        server_lio_per_s: None,
        server_pio_per_s: None,
        histogram: None,
    })
}

/// Where an imported series came from: "imported from pgbench 15.20 output: select only".
pub(super) fn imported(tool: &str, version: Option<String>, workload: &str) -> Provenance {
    Provenance {
        workload: Some(format!(
            "imported from {tool} {} output: {workload}",
            version.as_deref().unwrap_or("(version not printed)")
        )),
        version,
        ..Provenance::default()
    }
}

/// Reads one file into a series named after its host label, else its file stem: an error
/// for a file of several jobs (`report` reads those).
pub fn read_series(path: &Path) -> Result<Series> {
    only_one(path, read_input(&InputFile::new(path, None))?)
}

/// The one series of a file, its level known.
fn only_one(path: &Path, mut series: Vec<Series>) -> Result<Series> {
    if series.len() != 1 {
        bail!(
            "'{}' holds {} jobs' runs: report reads them as {} series",
            path.display(),
            series.len(),
            series.len()
        );
    }
    let one = series.remove(0);
    level_known(&one)?;
    Ok(one)
}

/// Reads one file as `report` does, into a series per job it ran: a level the file does not
/// state may stay unknown (0) until [`pgbench_logs_joined`] joins it to its run's summary, or
/// [`levels_into_sweeps`] says what is missing.
pub fn read_input(file: &InputFile) -> Result<Vec<Series>> {
    use crate::input_file::{Bounded, MOST_STREAMED_BYTES, MOST_WHOLE_BYTES};
    use std::io::Read;
    let path = file.path;
    if path.as_os_str() == "-" {
        let bytes = crate::input_file::read_stdin(MOST_WHOLE_BYTES)?;
        return parse_input(&InputFile::new(Path::new("stdin"), file.level), &bytes);
    }
    let cannot_read = || format!("cannot read '{}'", path.display());
    let what = format!("'{}'", path.display());
    let regular = crate::input_file::open_regular(path, &what)?;
    let length = regular.metadata().with_context(cannot_read)?.len();
    if length > MOST_STREAMED_BYTES {
        return Err(crate::input_file::too_large(&what, MOST_STREAMED_BYTES));
    }
    let mut opened = Bounded::new(regular, MOST_STREAMED_BYTES);
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut opened)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .with_context(cannot_read)?;
    if let Some(Importer {
        read: Reader::Lines(read),
        ..
    }) = detect(&String::from_utf8_lossy(&head), "")
    {
        // A log: streamed, never held whole, nor any of its lines past the bound.
        opened.bound_lines();
        let mut lines =
            std::io::BufReader::with_capacity(1 << 20, std::io::Cursor::new(head).chain(opened));
        return Ok(vec![finish(path, read(file, &mut lines)?)?]);
    }
    let head_text = String::from_utf8_lossy(&head).into_owned();
    let tail = tail_of(opened.get_mut(), head.len()).with_context(cannot_read)?;
    if streams_as_csv(&head_text, &tail) {
        // A CSV: read row by row, never held whole, nor any of its rows past the bound.
        opened.bound_lines();
        opened.csv_records();
        let rest = std::io::BufReader::with_capacity(1 << 16, opened);
        return streamed_csv(file, std::io::Cursor::new(head).chain(rest));
    }
    // Read whole: a document, a tool's report.
    if length > MOST_WHOLE_BYTES {
        return Err(crate::input_file::too_large(&what, MOST_WHOLE_BYTES));
    }
    let rest = MOST_WHOLE_BYTES + 1 - head.len() as u64;
    opened
        .take(rest)
        .read_to_end(&mut head)
        .with_context(cannot_read)?;
    if head.len() as u64 > MOST_WHOLE_BYTES {
        return Err(crate::input_file::too_large(&what, MOST_WHOLE_BYTES));
    }
    parse_input(file, &head)
}

/// A file's last [`HEAD_BYTES`] when it is longer than two heads (as `parse_input` looks at
/// them), read without moving where the next read starts; empty otherwise.
fn tail_of(opened: &mut std::fs::File, position: usize) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let length = opened.metadata()?.len();
    if length <= 2 * HEAD_BYTES as u64 {
        return Ok(String::new());
    }
    opened.seek(SeekFrom::Start(length - HEAD_BYTES as u64))?;
    let mut tail = Vec::with_capacity(HEAD_BYTES);
    opened.read_to_end(&mut tail)?;
    opened.seek(SeekFrom::Start(position as u64))?;
    Ok(tail_text(&tail))
}

/// A file's last bytes as text for detection: cut at a character boundary, as `parse_input`
/// cuts its tail, anything else not UTF-8 replaced.
fn tail_text(tail: &[u8]) -> String {
    let from = (0..tail.len().min(4))
        .find(|at| std::str::from_utf8(&tail[*at..]).is_ok())
        .unwrap_or(0);
    String::from_utf8_lossy(&tail[from..]).into_owned()
}

/// A CSV's series, read row by row from `input` (a byte-order mark before it dropped).
fn streamed_csv(file: &InputFile, input: impl std::io::BufRead) -> Result<Vec<Series>> {
    let path = file.path;
    Ok(vec![finish(
        path,
        from_csv(path, BomSkipped::new(input), &file.stem())?,
    )?])
}

/// Whether a file with this head and tail is read as a CSV, as `parse_input` decides: no
/// result document, no other tool's output, a comma on its first line that is not blank.
fn streams_as_csv(head: &str, tail: &str) -> bool {
    let head = head.strip_prefix('\u{feff}').unwrap_or(head);
    let Some(first) = head.lines().find(|line| !line.trim().is_empty()) else {
        return false;
    };
    let document = first.trim_start().starts_with('{') || first.starts_with("corescale:");
    !document
        && detect(head, tail).is_none()
        && looks_like_csv(head)
        && nearest(head).is_none_or(|near| near.1 < 2)
}

/// A reader that drops a byte-order mark at its start (editors on Windows put one before a
/// CSV), as `parse_input` does.
struct BomSkipped<R> {
    inner: R,
    started: bool,
}

impl<R> BomSkipped<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            started: false,
        }
    }
}

impl<R: std::io::BufRead> std::io::Read for BomSkipped<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if !self.started {
            self.started = true;
            if self.inner.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
                self.inner.consume(3);
            }
        }
        self.inner.read(buffer)
    }
}

/// Every run of another tool's text, each read alone and then joined: runs of one job at
/// different loads are its levels, at one load repeats of a level; each job is a series.
fn read_runs(file: &InputFile, text: &str, importer: &Importer) -> Result<Vec<Series>> {
    let read = match importer.read {
        Reader::Text(read) => read,
        Reader::Lines(read) => return Ok(vec![read(file, &mut text.as_bytes())?]),
    };
    let mut starts = (importer.runs)(text);
    starts.retain(|start| *start > 0);
    starts.dedup();
    if starts.is_empty() {
        let mut one = read(file, text)?;
        one.notes.extend(name_disagrees(file, &one));
        return Ok(vec![one]);
    }
    // Where each line begins, so each run's text is a slice of the file's.
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let first_lines: Vec<usize> = std::iter::once(0)
        .chain(
            starts
                .into_iter()
                .filter(|start| *start < line_starts.len()),
        )
        .collect();
    let mut runs = Vec::new();
    for (index, &first_line) in first_lines.iter().enumerate() {
        let end = first_lines
            .get(index + 1)
            .map_or(text.len(), |next| line_starts[*next]);
        let part = InputFile {
            first_line,
            ..InputFile::new(file.path, file.level)
        };
        runs.push(read(&part, &text[line_starts[first_line]..end])?);
    }
    Ok(jobs_of(file, runs))
}

/// A warning when the number in a file's name is not the load its content states (the
/// content is read); a number that is the tool's major version (`pgbench-15.txt`) is none.
fn name_disagrees(file: &InputFile, series: &Series) -> Option<String> {
    let [point] = series.points.as_slice() else {
        return None;
    };
    let named = level_from_name(file.path, "").ok()?;
    let major = series
        .provenance
        .version
        .as_deref()
        .and_then(|version| version.split(['.', '-']).next())
        .and_then(|major| major.parse::<usize>().ok());
    (file.level.is_none() && named != point.workers && Some(named) != major).then(|| {
        format!(
            "'{}': its name says a load of {named} and its content {}: the content is read (rename the file, or check that it is the run you meant)",
            file.path.display(),
            point.workers
        )
    })
}

/// A file's runs joined by job (and host): a series each, its runs' levels merged and their
/// repeats averaged; each named after the file, and after its job when there are several.
fn jobs_of(file: &InputFile, runs: Vec<Series>) -> Vec<Series> {
    let mut jobs: Vec<Series> = Vec::new();
    for run in runs {
        match jobs
            .iter_mut()
            .find(|job| job.job == run.job && job.provenance.hostname == run.provenance.hostname)
        {
            Some(job) => job.absorb(run),
            None => jobs.push(run),
        }
    }
    let several = jobs.len() > 1;
    for job in &mut jobs {
        job.points = folder::repeats_averaged(std::mem::take(&mut job.points));
        if several {
            let what = job.job.workload.clone().unwrap_or_default();
            job.name = format!("{} ({what})", file.stem());
        }
    }
    jobs
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
    let read = crate::input_file::open_regular(path, "")
        .ok()
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head).ok())
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
    only_one(path, parse_input(&InputFile::new(path, None), bytes)?)
}

/// Every series in a file's bytes (a series per job of another tool's runs), each level
/// known.
pub fn parse_all(path: &Path, bytes: &[u8]) -> Result<Vec<Series>> {
    let series = parse_input(&InputFile::new(path, None), bytes)?;
    series.iter().try_for_each(level_known)?;
    Ok(series)
}

fn parse_input(file: &InputFile, bytes: &[u8]) -> Result<Vec<Series>> {
    let path = file.path;
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            // A CSV is read row by row, as its file is: the first line that breaks, whatever
            // breaks it, is the one refused.
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(HEAD_BYTES)]);
            let tail = if bytes.len() > 2 * HEAD_BYTES {
                tail_text(&bytes[bytes.len() - HEAD_BYTES..])
            } else {
                String::new()
            };
            if streams_as_csv(&head, &tail) {
                return streamed_csv(file, bytes);
            }
            let line = 1 + bytes[..error.valid_up_to()]
                .iter()
                .filter(|byte| **byte == b'\n')
                .count();
            bail!("'{}' line {line}: {NOT_TEXT}", path.display());
        }
    };
    // Editors on Windows put a byte-order mark before JSON and CSV alike.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        bail!(
            "'{}' is empty: no header and no levels (a run stopped before its first level writes none)",
            path.display()
        );
    }
    // A run pasted as an indented code block (in a Markdown list) is read as a run.
    let (dedented, pasted) = if text.trim_start().starts_with('{') {
        (None, Vec::new())
    } else {
        match indented_runs(text) {
            Some((dedented, pasted)) => (Some(dedented), pasted),
            None => (None, Vec::new()),
        }
    };
    let text = dedented.as_deref().unwrap_or(text);
    // Cut at character boundaries (at most 3 bytes away).
    let head = match text.char_indices().find(|(at, _)| *at >= HEAD_BYTES) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    let tail = if text.len() > 2 * HEAD_BYTES {
        let from = (text.len() - HEAD_BYTES..text.len())
            .find(|at| text.is_char_boundary(*at))
            .unwrap_or(text.len());
        &text[from..]
    } else {
        ""
    };
    let series = if let Some(document) = logged_document(text) {
        // Also `kubectl logs` of a `run -o -` pod: corescale's own notes around the document.
        vec![from_document(path, document)?]
    } else if text.trim_start().starts_with('{') {
        vec![from_document(path, text)?]
    } else if let Some(importer) = detect(head, tail).or_else(|| detect(text, "")) {
        // Key lines anywhere: HammerDB's result past the first 64 KiB (100 virtual users
        // print that much before it) in a file too short to have a tail of its own.
        read_runs(file, text, importer)?
    } else {
        // Not claimed: a CSV unless it holds two of a tool's lines, or no comma at all.
        let csv = looks_like_csv(head);
        match nearest(head) {
            Some(near) if near.1 >= 2 || !csv => return Err(unclaimed(path, Some(near))),
            _ if csv => vec![from_csv(path, text.as_bytes(), &file.stem())?],
            _ => return Err(unclaimed(path, None)),
        }
    };
    series
        .into_iter()
        .map(|mut one| {
            for (first, last) in &pasted {
                one.notes.push(format!(
                    "'{}' lines {}-{}: indented (a pasted code block), read as a run",
                    path.display(),
                    first + 1,
                    last + 1
                ));
            }
            finish(path, one)
        })
        .collect()
}

/// A text whose indented blocks (consecutive lines that are blank or begin with a space or a
/// tab) that each are another tool's run on their own are taken out of their indentation,
/// line for line, with the first and last line (from 0) of each; `None` when there is none.
fn indented_runs(text: &str) -> Option<(String, Vec<(usize, usize)>)> {
    let lines: Vec<&str> = text.lines().collect();
    let indented = |line: &str| line.trim().is_empty() || line.starts_with([' ', '\t']);
    let mut out: Vec<std::borrow::Cow<str>> = Vec::with_capacity(lines.len());
    let mut pasted = Vec::new();
    let mut number = 0;
    while number < lines.len() {
        if !indented(lines[number]) || lines[number].trim().is_empty() {
            out.push(lines[number].into());
            number += 1;
            continue;
        }
        let end = (number..lines.len())
            .find(|at| !indented(lines[*at]))
            .unwrap_or(lines.len());
        let block = &lines[number..end];
        let depth = block
            .iter()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.len() - line.trim_start_matches([' ', '\t']).len())
            .min()
            .unwrap_or(0);
        let dedented: Vec<&str> = block
            .iter()
            .map(|line| {
                line.get(depth..)
                    .unwrap_or("")
                    .trim_end_matches([' ', '\t'])
            })
            .collect();
        if detect(&dedented.join("\n"), "").is_some() {
            let last = number
                + block
                    .iter()
                    .rposition(|line| !line.trim().is_empty())
                    .unwrap_or(0);
            pasted.push((number, last));
            out.extend(dedented.into_iter().map(Into::into));
        } else {
            out.extend(block.iter().map(|line| (*line).into()));
        }
        number = end;
    }
    (!pasted.is_empty()).then(|| (out.join("\n"), pasted))
}

/// Whether a text may be a CSV: its first line that is not blank has a comma.
fn looks_like_csv(head: &str) -> bool {
    head.lines()
        .find(|line| !line.trim().is_empty())
        .is_some_and(|line| line.contains(','))
}

/// The tool whose output a text is nearest: the one most of whose hints it holds (one at
/// least), with how many it holds and the first it lacks.
fn nearest(head: &str) -> Option<(&'static str, usize, &'static str)> {
    IMPORTERS
        .iter()
        .filter_map(|importer| {
            let found = importer
                .hints
                .iter()
                .filter(|hint| head.contains(*hint))
                .count();
            let lacks = importer.hints.iter().find(|hint| !head.contains(*hint))?;
            (found > 0).then_some((importer.tool, found, *lacks))
        })
        .max_by_key(|(_, found, _)| *found)
}

/// The error for a file no reader claims: the formats tried, and the nearest one's reason.
fn unclaimed(path: &Path, nearest: Option<(&str, usize, &str)>) -> anyhow::Error {
    let why = match nearest {
        Some((tool, _, lacks)) => format!(
            "; nearest is {tool}'s output, but it has no '{}'",
            lacks.trim()
        ),
        None => String::new(),
    };
    crate::error::UsageError::new(format!(
        "'{}': not a format corescale reads (tried corescale JSON and CSV, test_cpu_parallel and SLOB CSV, pgbench, pgbench logs, sysbench, HammerDB, AWR, Statspack, corescale's .hlog){why}",
        path.display()
    ))
    .into()
}

/// A series as every reader leaves it: its source set, its names printable, its levels
/// sorted with the open loop's apart, one level a worker count.
fn finish(path: &Path, series: Series) -> Result<Series> {
    // Order entry (`run tpcc`) is argued in new orders per minute, from its JSON or its CSV.
    let mut series = orders::on_the_nopm_axis(series);
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
    // Taken out in place: a file of 10^5 levels is not copied.
    series.paced = series
        .points
        .extract_if(.., |point| {
            point
                .latency
                .as_ref()
                .is_some_and(|latency| latency.rate.is_some())
        })
        .collect();
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

/// Figures that count something, or a rate or time of it, beside those a campaign sums
/// (`campaign::SUMMED`): never below 0 (a part's `statements: -78016` was summed into a
/// campaign's -2,496).
const MORE_COUNTS: &[&str] = &[
    "db_lio",
    "db_pio",
    "db_lio_per_s",
    "db_pio_per_s",
    "db_cpu_s",
    "blocks_per_statement",
];

/// A level's workload figures as the file gives them: each finite, counts not negative,
/// names shown escaped.
fn checked_figures(
    figures: &std::collections::BTreeMap<String, f64>,
    at: &dyn Fn(&str) -> String,
) -> Result<std::collections::BTreeMap<String, f64>> {
    figures
        .iter()
        .map(|(name, &value)| {
            let count =
                campaign::SUMMED.contains(&name.as_str()) || MORE_COUNTS.contains(&name.as_str());
            let (range, what) = if count {
                (COUNT, "a count")
            } else {
                (-*RAW.end()..=*RAW.end(), "the figure")
            };
            let value = in_range(value, &range, what, &|| at(&printable(name)))?;
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
    // The histogram is the level's responses: it must hold as many as the level counted.
    if let Some(text) = &latency.histogram {
        let times = crate::latency::ResponseTimes::decode(text)
            .map_err(|problem| format!("histogram: {problem}"))?;
        if times.count() != latency.response.count {
            return Err(format!(
                "histogram holds {} responses and count says {}: one of them was changed",
                times.count(),
                latency.response.count
            ));
        }
    }
    if let Some(rate) = &latency.rate {
        ranges::check(rate.target_per_s, &RAW, "rate.target_per_s")?;
        ranges::check(rate.achieved_per_s, &COUNT, "rate.achieved_per_s")?;
    }
    if let Some(limit) = latency.limit_ms {
        ranges::check(limit, &(0.0..=crate::latency::A_DAY_MS), "limit_ms")?;
    }
    Ok(())
}

#[cfg(test)]
mod versions_tests;
