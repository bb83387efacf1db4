//! Oracle's RAC-wide AWR report (awrgrpt.sql; SLOB's `awr_rac.txt`; text or HTML): one file is
//! one level of the whole cluster. Its rate is the "System Statistics - Per Second" table's
//! logical reads per second summed over the instances; physical reads, executes and
//! transactions per second are kept beside it, and so is each instance's share of the logical
//! reads. Average active sessions come from the instances table. The series is a cluster's,
//! its nodes the instances in the report, so `report` counts a single server in them. The
//! text report's tables are fixed-width (each value is read within its column's run of
//! dashes); the HTML report's are read by their cells, with the same figures from both.

use super::*;

pub(super) const TOOL: &str = "Oracle AWR (RAC)";

pub(super) const AWR_RAC: Importer = Importer {
    tool: TOOL,
    detects: is_awr_rac,
    hints: &["WORKLOAD REPOSITORY REPORT (RAC", "Load Profile"],
    runs: one_run,
    read: Reader::Text(from_awr_rac),
};

/// A RAC-wide report's title, in either layout; the text one must also hold the per-second
/// table (an HTML report may put it past the head detection reads).
fn is_awr_rac(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    let titled = upper.contains("WORKLOAD REPOSITORY REPORT (RAC");
    if is_html(text) {
        return titled;
    }
    titled && upper.contains("SYSTEM STATISTICS - PER SECOND")
}

fn is_html(text: &str) -> bool {
    text.contains("<html") || text.contains("<HTML") || text.contains("<table")
}

/// A report table under a title as cells: each column's header and each row's cells with
/// its line number. A text report's rows are fixed-width; an HTML one's are its cells.
struct Table {
    headers: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    /// The first table under `title` whose columns hold every word of `needs`, in the
    /// report's own layout; None when there is none.
    fn under(text: &str, title: &str, needs: &[&str]) -> Option<Self> {
        let fits = |table: &Self| table.column(needs).is_some();
        if is_html(text) {
            super::html::tables_after(text, title)
                .map(|table| Self {
                    headers: table.headers,
                    rows: table.rows,
                })
                .find(fits)
        } else {
            Self::fixed_width(text, title).filter(fits)
        }
    }

    /// The first fixed-width table whose dashes follow `title`'s line: each column is a run
    /// of dashes, its header the header lines' text within it; its rows go to the first blank
    /// line.
    fn fixed_width(text: &str, title: &str) -> Option<Self> {
        let lines: Vec<&str> = text.lines().collect();
        let start = lines
            .iter()
            .position(|line| line.trim_start().starts_with(title))?;
        let dashes = start
            + lines[start..]
                .iter()
                .position(|line| line.trim_start().starts_with("----"))?;
        let spans = column_spans(lines[dashes]);
        // The header lines: the non-blank lines between the title and the dashes.
        let header_lines: Vec<&str> = lines[start + 1..dashes]
            .iter()
            .copied()
            .filter(|line| !line.trim().is_empty())
            .collect();
        let cells = |line: &str| -> Vec<String> {
            spans
                .iter()
                .map(|&span| within(line, span).to_string())
                .collect()
        };
        let headers = spans
            .iter()
            .map(|&span| {
                let words: Vec<&str> = header_lines
                    .iter()
                    .map(|line| within(line, span))
                    .filter(|word| !word.is_empty())
                    .collect();
                words.join(" ")
            })
            .collect();
        let rows = lines[dashes + 1..]
            .iter()
            .enumerate()
            .take_while(|(_, line)| !line.trim().is_empty())
            .map(|(offset, line)| (dashes + 2 + offset, cells(line)))
            .collect();
        Some(Self { headers, rows })
    }

    /// The column whose header holds every one of `words` (case-insensitive).
    fn column(&self, words: &[&str]) -> Option<usize> {
        self.headers.iter().position(|header| {
            let header = header.to_ascii_lowercase();
            words.iter().all(|word| header.contains(word))
        })
    }
}

/// A row's cell in a column, "" past its end.
fn cell(row: &[String], column: usize) -> &str {
    row.get(column).map_or("", String::as_str)
}

/// The text of a line within a span (byte positions), trimmed; empty past its end.
fn within(line: &str, (from, to): (usize, usize)) -> &str {
    let end = to.min(line.len());
    line.get(from.min(end)..end).unwrap_or("").trim()
}

/// The start and end of each run of dashes: a fixed-width table's columns.
fn column_spans(dashes: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (index, byte) in dashes.bytes().enumerate() {
        match (byte == b'-', start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                spans.push((from, index));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        spans.push((from, dashes.len()));
    }
    spans
}

/// The per-second table's logical reads column, by its header's words: the totals table of
/// the same name has no `/s`.
const LOGICAL_READS: &[&str] = &["logical", "reads/s"];

/// The per-second figures read off the instances' rows, by figure name and header words.
const PER_SECOND: &[(&str, &[&str])] = &[
    ("lio_per_s", LOGICAL_READS),
    ("physical_reads_per_s", &["physical", "reads/s"]),
    ("executes_per_s", &["execs"]),
    ("transactions_per_s", &["txns"]),
];

fn from_awr_rac(file: &InputFile, text: &str) -> Result<Series> {
    let path = file.path;
    let at_line = |line: usize| format!("'{}' line {line}", path.display());
    let missing = |what: &str| {
        anyhow::anyhow!(
            "'{}': {TOOL} report without {what} (is the report cut short?)",
            path.display()
        )
    };
    let statistics = Table::under(text, "System Statistics - Per Second", LOGICAL_READS)
        .ok_or_else(|| missing("a 'System Statistics - Per Second' table with logical reads"))?;
    let instance_rows: Vec<(usize, &str, &[String])> = statistics
        .rows
        .iter()
        .map(|(line, row)| (*line, cell(row, 0), row.as_slice()))
        .filter(|(_, number, _)| number.parse::<u32>().is_ok())
        .collect();
    if instance_rows.is_empty() {
        return Err(missing("instance rows in 'System Statistics - Per Second'"));
    }
    let mut figures = std::collections::BTreeMap::new();
    for (name, words) in PER_SECOND {
        // The table was chosen for its logical reads column: only the others may be missing.
        let Some(column) = statistics.column(words) else {
            continue;
        };
        let mut sum = 0.0;
        for &(line, instance, row) in &instance_rows {
            let plain: String = cell(row, column).chars().filter(|c| *c != ',').collect();
            let value = in_range(
                number_in(&plain, name, &|| at_line(line))?,
                &RAW,
                name,
                &|| at_line(line),
            )?;
            if *name == "lio_per_s" {
                figures.insert(format!("instance {instance} lio_per_s"), value);
            }
            sum += value;
        }
        figures.insert(name.to_string(), sum);
    }
    // Each instance's average active sessions, from the instances table.
    let instances = Table::under(text, "Database Instances Included In Report", &["sessions"]);
    let mut release = None;
    if let Some(table) = &instances {
        let sessions = table.column(&["sessions"]).expect("filtered on it");
        let mut active = 0.0;
        let version = table.column(&["release"]);
        for (line, row) in &table.rows {
            let line = *line;
            let plain: String = cell(row, sessions).chars().filter(|c| *c != ',').collect();
            let value = number_in(&plain, "average active sessions", &|| at_line(line))?;
            active += in_range(value, &COUNT, "average active sessions", &|| at_line(line))?;
            release = release.or_else(|| {
                version
                    .map(|column| cell(row, column))
                    .filter(|text| !text.is_empty())
                    .map(printable)
            });
        }
        figures.insert("db_time_per_s".to_string(), active);
    }
    let nodes = instance_rows.len();
    let lio = figures["lio_per_s"];
    let level = file.given_level();
    let point = Point {
        workers: level,
        raw: lio,
        figures,
        ..Point::default()
    };
    let (mut series, workload) = super::awr::lio_series(
        file,
        TOOL,
        "AWR logical reads of every instance",
        "System Statistics",
        point,
    );
    series.nodes = (nodes > 1).then_some(nodes);
    series.provenance = imported(TOOL, release, &format!("{workload}, {nodes} instance(s)"));
    // The cluster's average active sessions (the instances' sum) against the load, as an
    // instance's report is checked.
    let notes = series
        .points
        .first()
        .map(|point| super::awr::level_notes(file, &point.figures, level))
        .unwrap_or_default();
    series.notes.extend(notes);
    Ok(series)
}
