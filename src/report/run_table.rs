//! The summary table printed when a run ends: one row per level, a `!` on levels that were
//! disturbed or missed their precision target, and a footnote line per kind of trouble.
//! It fits 80 columns unless asked to be wide: the least needed columns go first.

use std::collections::BTreeSet;

use super::table;
use crate::format::{optional, rate, significant};
use crate::host::interference::{OTHER_BUSY_LIMIT, OTHER_RUNNABLE_LIMIT, STEAL_LIMIT_PCT};
use crate::latency::Percentile;
use crate::result::{CacheFigure, Level, RATE_FIGURES, RunDocument, RunMode};

/// Width the table and its notes keep to unless `--wide`.
pub(crate) const TERMINAL_COLUMNS: usize = 80;

/// One column: its header, its cell for a level, and how soon it is dropped when the table is
/// too wide (0: never; higher goes first).
struct Column<'a> {
    header: String,
    cell: Box<dyn Fn(&Level) -> String + 'a>,
    drop_rank: u8,
    /// The recorded names of the workload figures it shows, which `--wide` does not repeat.
    shows: Vec<&'static str>,
}

impl Column<'_> {
    fn showing(mut self, figures: &[CacheFigure]) -> Self {
        self.shows
            .extend(figures.iter().flat_map(|figure| figure.names()));
        self
    }

    fn showing_names(mut self, names: &[&'static str]) -> Self {
        self.shows.extend(names);
        self
    }
}

fn column<'a>(
    header: impl Into<String>,
    drop_rank: u8,
    cell: impl Fn(&Level) -> String + 'a,
) -> Column<'a> {
    Column {
        header: header.into(),
        cell: Box::new(cell),
        drop_rank,
        shows: Vec::new(),
    }
}

/// What a pgbench user reads first, above corescale's table, for database runs (db and
/// script; order entry has its own): per level the transactions and statements, per
/// second, the failures, the latency's mean and standard deviation and the connection time,
/// where the run has them (a column no level has is left out). Its title is wrapped to 80
/// columns unless `wide`.
/// None for other workloads.
pub(crate) fn pgbench_summary(document: &RunDocument, wide: bool) -> Option<String> {
    if document.workload.kind.name() == "tpcc" {
        return Some(order_entry_summary(document, wide));
    }
    if !matches!(document.workload.kind.name(), "db" | "script") {
        return None;
    }
    // Statements sent several to a round trip (a pipeline, or a loop in the server) are no
    // application's transactions, and their latency is not what one call waits.
    let depth = document
        .workload
        .shape
        .as_ref()
        .map_or(1, |shape| shape.pipeline_depth);
    let grouped = depth > 1;
    let rows: Vec<Vec<String>> = document
        .levels
        .iter()
        .map(|level| {
            let per_s = |count: Option<f64>| count.map(|count| count / level.elapsed_s.max(1e-9));
            // A db run's statements are its transactions (each one commits on its own).
            let transactions = figure(level, "transactions").or(figure(level, "statements"));
            let mut row = vec![level.workers.to_string(), count(transactions)];
            if !grouped {
                row.push(cell(
                    figure(level, "transactions_per_s").or(per_s(transactions)),
                ));
            }
            row.extend([
                cell(figure(level, "statements_per_s").or(per_s(figure(level, "statements")))),
                count(figure(level, "failed_transactions").or(Some(0.0))),
                cell(
                    figure(level, "latency_average_ms").or(level
                        .latency
                        .as_ref()
                        .map(|latency| latency.response.mean_ms)),
                ),
                cell(figure(level, "latency_stddev_ms")),
                cell(figure(level, "connection_time_ms")),
            ]);
            row
        })
        .collect();
    let mut headers = vec!["workers", "transactions"];
    if grouped {
        headers[1] = "statements";
    } else {
        headers.push("tps");
    }
    headers.extend([
        "stmt/s",
        "failed",
        if grouped {
            "stmt lat avg ms"
        } else {
            "lat avg ms"
        },
        "stddev ms",
        "connect ms",
    ]);
    let title = if grouped {
        format!(
            "as pgbench sums up, but statements went {depth} to a round trip: no transactions or tps, and latency is per statement within a group of {depth} (not what one application call waits; not comparable with one-at-a-time runs):"
        )
    } else {
        "as pgbench sums up (tps without connection time, latency per transaction):".to_string()
    };
    let (headers, rows) = without_empty_columns(&headers, rows);
    Some(format!(
        "{}{}",
        wrap(&title, wide),
        table::render(&headers, &rows)
    ))
}

/// The columns where some level has a figure: "-" in every row says only that the run
/// does not record it (db runs time no connections).
fn without_empty_columns<'a>(
    headers: &[&'a str],
    rows: Vec<Vec<String>>,
) -> (Vec<&'a str>, Vec<Vec<String>>) {
    let kept: Vec<usize> = (0..headers.len())
        .filter(|&index| rows.is_empty() || rows.iter().any(|row| row[index] != "-"))
        .collect();
    let rows = rows
        .into_iter()
        .map(|row| kept.iter().map(|&index| row[index].clone()).collect())
        .collect();
    (kept.iter().map(|&index| headers[index]).collect(), rows)
}

/// A level's workload figure, where it recorded it.
fn figure(level: &Level, name: &str) -> Option<f64> {
    level.workload_figures.get(name).copied()
}

/// A figure in a summary's cell, "-" where there is none.
fn cell(value: Option<f64>) -> String {
    value.map_or("-".to_string(), significant)
}

/// A count in a summary's cell, "-" where there is none.
fn count(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |n| format!("{n:.0}"))
}

/// What a HammerDB or pgbench user reads first for order entry: per level NOPM and TPM (as
/// HammerDB's TEST RESULT line gives them), the transactions and their rate, the failures,
/// the latency's mean, New-Order's 90th percentile (the specification's limit is on it) and
/// the connection time.
fn order_entry_summary(document: &RunDocument, wide: bool) -> String {
    let rows: Vec<Vec<String>> = document
        .levels
        .iter()
        .map(|level| {
            vec![
                level.workers.to_string(),
                count(figure(level, "nopm")),
                count(figure(level, "tpm")),
                count(figure(level, "transactions")),
                cell(figure(level, "transactions_per_s")),
                count(figure(level, "failed_transactions").or(Some(0.0))),
                cell(
                    level
                        .latency
                        .as_ref()
                        .map(|latency| latency.response.mean_ms),
                ),
                cell(figure(level, "new_order p90_ms")),
                cell(figure(level, "connection_time_ms")),
            ]
        })
        .collect();
    let headers = vec![
        "workers",
        "NOPM",
        "TPM",
        "transactions",
        "tps",
        "failed",
        "lat avg ms",
        "New-Order p90 ms",
        "connect ms",
    ];
    let title = format!(
        "as HammerDB and pgbench sum up ({}; TPM is the server's commits and rollbacks per minute):",
        crate::analysis::input::orders::NOT_AUDITED,
    );
    let (headers, rows) = without_empty_columns(&headers, rows);
    format!("{}{}", wrap(&title, wide), table::render(&headers, &rows))
}

/// Whether a level gets the `!` mark.
fn flagged(level: &Level) -> bool {
    disturbed(level) || level.precision_reached == Some(false) || fell_behind(level)
}

fn fell_behind(level: &Level) -> bool {
    level.fell_behind()
}

fn disturbed(level: &Level) -> bool {
    level.is_disturbed()
}

pub(crate) fn render(document: &RunDocument, wide: bool) -> String {
    let mut columns = leading_columns(document);
    columns.extend(cache_columns(document));
    columns.extend(latency_columns(document));
    columns.extend(trailing_columns(document));
    if wide {
        let others = other_figures(document, &columns);
        columns.extend(others);
    }
    let mut out = heading(document);
    out.push_str(&fitted_table(columns, &document.levels, wide));
    for note in footnotes(document) {
        out.push_str(&wrap(&note, wide));
    }
    out
}

/// The figure a replay records its level's speed under.
const SPEED: &str = "speed";

/// The level, its batches and open-loop rate, then its times (fixed work) or its rates.
fn leading_columns(document: &RunDocument) -> Vec<Column<'_>> {
    let unit = document.workload.unit.as_str();
    let mode = document.settings.mode;
    let mut columns = vec![
        column("workers", 0, |level: &Level| level.workers.to_string()),
        column("!", 0, |level: &Level| {
            if flagged(level) { "!" } else { "" }.to_string()
        }),
        column("batches", 3, |level: &Level| level.batches.to_string()),
    ];
    // A replay's levels: the speed over the captured pace.
    if document
        .levels
        .iter()
        .any(|level| level.workload_figures.contains_key(SPEED))
    {
        columns.push(column("speed", 0, |level: &Level| {
            level
                .workload_figures
                .get(SPEED)
                .map_or(String::new(), |speed| crate::format::times(*speed))
        }));
    }
    // Open-loop levels (`--rate`): the rate asked of each, beside its workers.
    if document.levels.iter().any(Level::is_paced) {
        columns.push(column("asked/s", 0, |level: &Level| {
            level
                .latency
                .as_ref()
                .and_then(|latency| latency.rate)
                .map_or("closed".into(), |rate| significant(rate.target_per_s))
        }));
    }
    if mode == RunMode::FixedWork {
        columns.extend([
            column("median s", 0, |level: &Level| {
                format!("{:.3}", level.summary.job_time_s.median)
            }),
            column("CV %", 0, |level: &Level| {
                format!("{:.2}", 100.0 * level.summary.cv)
            }),
            column("jobs/min/worker", 6, |level: &Level| {
                format!("{:.2}", level.summary.speed_jobs_per_min)
            }),
            column("jobs/min", 0, |level: &Level| {
                format!("{:.2}", level.summary.capacity_jobs_per_min)
            }),
        ]);
    } else {
        columns.extend([
            // The figure of merit's rates: the database's own count for db runs.
            column("rate/worker", 0, move |level: &Level| {
                rate(level.merit(mode, unit).rate_per_worker, unit)
            })
            .showing_names(&RATE_FIGURES),
            column("rate total", 0, move |level: &Level| {
                rate(level.merit(mode, unit).rate_total, unit)
            })
            .showing_names(&RATE_FIGURES),
            column("CV %", 0, |level: &Level| {
                format!("{:.2}", 100.0 * level.summary.cv)
            }),
        ]);
    }
    columns
}

/// SLOB's figures beside the rate, where the workload recorded them (lio, pio, db): the hit
/// ratio, and pio's reads and their p99.
fn cache_columns(document: &RunDocument) -> Vec<Column<'_>> {
    let mut columns = Vec::new();
    if recorded(document, CacheFigure::HitRatio) {
        columns.push(
            column("hit %", 1, |level: &Level| {
                level
                    .cache_figure(CacheFigure::HitRatio)
                    .map_or("-".into(), |(ratio, _)| format!("{:.2}", 100.0 * ratio))
            })
            .showing(&[CacheFigure::HitRatio]),
        );
    }
    if document.workload.kind.name() == "pio" {
        columns.push(
            column("PIO/s", 1, |level: &Level| {
                level
                    .cache_figure(CacheFigure::PioPerS)
                    .map_or("-".into(), |(value, _)| significant(value))
            })
            .showing(&[CacheFigure::PioPerS]),
        );
        let read_ms = |level: &Level| {
            level
                .cache_figure(CacheFigure::ReadP99Us)
                .map(|(us, _)| us / 1000.0)
        };
        // Times in the unit that gives the column's largest value 1 to 4 digits, as the
        // statements' below (pio's reads are recorded in us, statements in ms).
        let (unit, factor) = crate::format::time_unit(
            document
                .levels
                .iter()
                .filter_map(read_ms)
                .fold(0.0, f64::max),
        );
        columns.push(
            column(format!("p99 {unit}"), 1, move |level: &Level| {
                read_ms(level).map_or("-".into(), |ms| crate::format::time_in_unit(ms * factor))
            })
            .showing(&[CacheFigure::ReadP99Us]),
        );
    }
    columns
}

/// Whether any level recorded `figure`.
fn recorded(document: &RunDocument, figure: CacheFigure) -> bool {
    document
        .levels
        .iter()
        .any(|level| level.cache_figure(figure).is_some())
}

/// Statements' response times, p50 and p99 (a job's are its job time, shown already).
fn latency_columns(document: &RunDocument) -> Vec<Column<'_>> {
    let statements = document.levels.iter().any(|level| {
        level
            .latency
            .as_ref()
            .is_some_and(|latency| latency.is_statement())
    });
    if !statements {
        return Vec::new();
    }
    let at = |percentile: Percentile, drop_rank: u8| {
        let (unit, factor) = crate::format::time_unit(
            document
                .levels
                .iter()
                .filter_map(|level| level.latency.as_ref())
                .map(|latency| latency.response.at(percentile))
                .fold(0.0, f64::max),
        );
        column(
            format!("{} {unit}", percentile.name()),
            drop_rank,
            move |level: &Level| {
                level.latency.as_ref().map_or("-".into(), |latency| {
                    crate::format::time_in_unit(latency.response.at(percentile) * factor)
                })
            },
        )
    };
    vec![at(Percentile::P50, 3), at(Percentile::P99, 1)]
}

/// Latch misses, speedup, CPU, steal and IPC; for fixed work the rate per worker last.
fn trailing_columns(document: &RunDocument) -> Vec<Column<'_>> {
    let unit = document.workload.unit.as_str();
    let mode = document.settings.mode;
    let mut columns = Vec::new();
    // Last of the four, so the first to go when they do not all fit (pio at 80 columns).
    if recorded(document, CacheFigure::LatchGets) {
        columns.push(
            column("miss/1k", 1, |level: &Level| {
                optional(level.latch_misses_per_1k_gets(), 2)
            })
            .showing(&[CacheFigure::LatchGets, CacheFigure::LatchMisses]),
        );
    }
    // Relative to 1 worker, else to the smallest clean level (as `report` computes it).
    let speedup_header = match speedup_base(document) {
        Some(base) => format!("speedup/{base}w"),
        None => "speedup".to_string(),
    };
    columns.extend([
        column(speedup_header, 0, |level: &Level| {
            optional(level.summary.speedup, 2)
        }),
        column("CPU %", 4, move |level: &Level| {
            format!("{:.1}", 100.0 * level.merit(mode, unit).cpu_fraction)
        }),
        column("steal %", 2, |level: &Level| {
            format!("{:.1}", level.os.steal_pct)
        }),
        column("IPC", 7, |level: &Level| optional(level.summary.ipc, 2)),
    ]);
    if mode == RunMode::FixedWork {
        // Last to go: for bandwidth it is the figure (GB/s).
        columns.push(column("rate/worker", 1, move |level: &Level| {
            rate(level.merit(mode, unit).rate_per_worker, unit)
        }));
    }
    columns
}

/// The table's first line: the workload, the host and its cores, and a database job's shape
/// (engine, statements per round trip, loop).
fn heading(document: &RunDocument) -> String {
    let shape = document
        .workload
        .shape
        .as_ref()
        .map_or_else(String::new, |shape| {
            format!(
                "; {}, {} statement{} per round trip, {} loop",
                shape.engine,
                shape.pipeline_depth,
                if shape.pipeline_depth == 1 { "" } else { "s" },
                if shape.open_loop { "open" } else { "closed" }
            )
        });
    format!(
        "{} on {} ({} physical cores, {} logical CPUs{shape}){}\n",
        document.workload.kind.name(),
        document.host.label,
        document.host.topology.physical_cores,
        document.host.topology.logical_cpus,
        if document.complete {
            ""
        } else {
            " - INCOMPLETE"
        }
    )
}

/// A column for each figure the workload recorded that no column shows, headed by its
/// recorded name: a workload's new figure reaches the wide table without an edit here.
fn other_figures<'a>(document: &RunDocument, columns: &[Column<'_>]) -> Vec<Column<'a>> {
    let shown: BTreeSet<&str> = columns
        .iter()
        .flat_map(|column| column.shows.iter().copied())
        .collect();
    let names: BTreeSet<&String> = document
        .levels
        .iter()
        .flat_map(|level| level.workload_figures.keys())
        .filter(|name| !shown.contains(name.as_str()))
        .collect();
    names
        .into_iter()
        .map(|name| {
            let name = name.clone();
            column(name.clone(), 0, move |level: &Level| {
                level
                    .workload_figures
                    .get(&name)
                    .map_or("-".into(), |value| significant(*value))
            })
        })
        .collect()
}

/// The table with the columns that fit: the highest drop ranks go first until it does.
fn fitted_table(mut columns: Vec<Column<'_>>, levels: &[Level], wide: bool) -> String {
    loop {
        let headers: Vec<&str> = columns
            .iter()
            .map(|column| column.header.as_str())
            .collect();
        let rows: Vec<Vec<String>> = levels
            .iter()
            .map(|level| columns.iter().map(|column| (column.cell)(level)).collect())
            .collect();
        let text = table::render(&headers, &rows);
        let fits = text
            .lines()
            .all(|line| line.chars().count() <= TERMINAL_COLUMNS);
        let droppable = columns
            .iter()
            .enumerate()
            .filter(|(_, column)| column.drop_rank > 0)
            .max_by_key(|(_, column)| column.drop_rank)
            .map(|(index, _)| index);
        match droppable {
            Some(index) if !wide && !fits => {
                columns.remove(index);
            }
            _ => return text,
        }
    }
}

/// The workers speedup is relative to, when not 1 (no clean 1-worker level was measured).
fn speedup_base(document: &RunDocument) -> Option<usize> {
    document
        .levels
        .iter()
        .find_map(|level| level.summary.speedup_base)
        .filter(|base| *base != 1)
}

/// Text wrapped at word boundaries to the terminal width, continuation lines indented.
pub(crate) fn wrap(text: &str, wide: bool) -> String {
    if wide {
        return format!("{text}\n");
    }
    let mut out = crate::format::wrap_to(text, TERMINAL_COLUMNS);
    out.push('\n');
    out
}

fn worker_list(levels: &[&Level]) -> String {
    let counts: Vec<String> = levels
        .iter()
        .map(|level| level.workers.to_string())
        .collect();
    format!(
        "{} worker{}",
        counts.join(", "),
        if counts.len() == 1 && counts[0] == "1" {
            ""
        } else {
            "s"
        }
    )
}

/// The levels disturbed and what disturbed them, in one line: each level's own reasons were
/// printed as it ended (and are in the JSON).
fn disturbed_note(document: &RunDocument) -> Option<String> {
    let disturbed_levels: Vec<&Level> = document.levels.iter().filter(|l| disturbed(l)).collect();
    let kind = |test: &dyn Fn(&Level) -> Option<f64>| -> Option<(Vec<&Level>, f64)> {
        let hit: Vec<(&Level, f64)> = disturbed_levels
            .iter()
            .filter_map(|level| Some((*level, test(level)?)))
            .collect();
        let worst = hit.iter().map(|(_, value)| *value).fold(f64::MIN, f64::max);
        (!hit.is_empty()).then(|| (hit.into_iter().map(|(level, _)| level).collect(), worst))
    };
    let interference = |level: &Level| level.interference.clone();
    // What disturbed the levels, summed up in one line: each level's own reasons were
    // printed as it ended (and are in the JSON).
    let mut causes = Vec::new();
    if let Some((levels, worst)) = kind(&|level| {
        interference(level)
            .map(|i| i.other_busy_cpus)
            .filter(|busy| *busy > OTHER_BUSY_LIMIT)
    }) {
        causes.push(format!(
            "other processes used up to {worst:.2} CPUs (limit {OTHER_BUSY_LIMIT}) at {}",
            worker_list(&levels)
        ));
    }
    if let Some((levels, worst)) = kind(&|level| {
        interference(level)
            .and_then(|i| i.other_runnable)
            .filter(|runnable| *runnable > OTHER_RUNNABLE_LIMIT)
    }) {
        causes.push(format!(
            "up to {worst:.2} other tasks were runnable (limit {OTHER_RUNNABLE_LIMIT}) at {}",
            worker_list(&levels)
        ));
    }
    if let Some((levels, worst)) = kind(&|level| {
        interference(level)
            .map(|i| i.steal_pct)
            .filter(|steal| *steal > STEAL_LIMIT_PCT)
    }) {
        causes.push(format!(
            "the hypervisor stole up to {worst:.1}% of CPU time (limit {STEAL_LIMIT_PCT}%) at {}",
            worker_list(&levels)
        ));
    }
    if let Some((levels, _)) = kind(&|level| {
        interference(level).and_then(|i| {
            i.reasons
                .iter()
                .any(|reason| reason.contains("ran on") || reason.contains("may use"))
                .then_some(0.0)
        })
    }) {
        causes.push(format!(
            "the workers had fewer CPUs than expected at {}",
            worker_list(&levels)
        ));
    }
    (!disturbed_levels.is_empty()).then(|| {
        format!(
            "! {} of {} levels disturbed: {}",
            disturbed_levels.len(),
            document.levels.len(),
            if causes.is_empty() {
                "see the warnings above".to_string()
            } else {
                causes.join("; ")
            }
        )
    })
}

/// One line per kind of trouble, naming the levels and the worst figure.
fn footnotes(document: &RunDocument) -> Vec<String> {
    let mut notes: Vec<String> = disturbed_note(document).into_iter().collect();
    let apart: Vec<&Level> = document
        .levels
        .iter()
        .filter(|level| level.apart().is_some())
        .collect();
    if !apart.is_empty() {
        let overlaps: Vec<String> = apart
            .iter()
            .filter_map(|level| level.summary.together)
            .map(|together| format!("{:.0}%", 100.0 * together.overlap))
            .collect();
        let (figure, claim, cure) = match document.settings.mode {
            RunMode::FixedWork => (
                "jobs/min",
                "n x 60 / median job time",
                "longer jobs (--job-size) or fewer workers per CPU",
            ),
            RunMode::FixedTime => (
                "rate total",
                "the sum of each job's own rate",
                "fewer workers per CPU",
            ),
        };
        notes.push(format!(
            "! jobs did not run together at {} (overlap {}): {figure} is what the host delivered, less than {claim} would claim; {cure} keep them together",
            worker_list(&apart),
            overlaps.join(", ")
        ));
    }
    let behind: Vec<&Level> = document.levels.iter().filter(|l| fell_behind(l)).collect();
    if !behind.is_empty() {
        let rates: Vec<String> = behind
            .iter()
            .filter_map(|level| level.latency.as_ref()?.rate)
            .map(|rate| {
                format!(
                    "{}/s of {}/s",
                    significant(rate.achieved_per_s),
                    significant(rate.target_per_s)
                )
            })
            .collect();
        notes.push(format!(
            "! rate not sustained at {}: {}; the server (or this client) could not keep up, and latency there counts the backlog",
            worker_list(&behind),
            rates.join(", ")
        ));
    }
    if let Some(base) = speedup_base(document) {
        let clean = document
            .levels
            .iter()
            .any(|level| level.workers == base && !level.is_disturbed());
        notes.push(format!(
            "  speedup/{base}w: relative to {base} workers, {}, assuming linear scaling up to it (no clean 1-worker level)",
            if clean {
                "the smallest clean level"
            } else {
                "the smallest level (none was clean)"
            }
        ));
    } else if let [lone] = document.levels.as_slice()
        && lone.workers > 1
        && !lone.is_paced()
    {
        notes.push(format!(
            "  speedup -: one level of {} workers only, with nothing to compare it to (measure 1 worker too: --sweep 1,{})",
            lone.workers, lone.workers
        ));
    }
    let missed: Vec<&Level> = document
        .levels
        .iter()
        .filter(|level| level.precision_reached == Some(false))
        .collect();
    if !missed.is_empty() {
        let cvs: Vec<String> = missed
            .iter()
            .map(|level| format!("{:.1}%", 100.0 * level.summary.cv))
            .collect();
        notes.push(format!(
            "! precision target {}% missed at {}: CV {} after {} batches",
            document.settings.precision_target_pct.unwrap_or_default(),
            worker_list(&missed),
            cvs.join(", "),
            document.settings.max_repeat
        ));
    }
    if document.levels.iter().any(disturbed) {
        notes.push(
            "  disturbed levels may not describe this host: measure again on an idle host (`corescale report` leaves them out; each level's reasons are in the warnings above and the JSON)"
                .to_string(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::without_empty_columns;

    #[test]
    fn a_column_no_level_has_is_left_out() {
        let row = |cells: &[&str]| cells.iter().map(|cell| cell.to_string()).collect();
        let (headers, rows) = without_empty_columns(
            &["workers", "stmt/s", "stddev ms", "connect ms"],
            vec![
                row(&["1", "39.0 K", "-", "-"]),
                row(&["2", "70.1 K", "-", "1.2"]),
            ],
        );
        assert_eq!(headers, ["workers", "stmt/s", "connect ms"]);
        assert_eq!(
            rows,
            [row(&["1", "39.0 K", "-"]), row(&["2", "70.1 K", "1.2"])]
        );
        // No levels: the headers stay, for a table that says so.
        let (headers, rows) = without_empty_columns(&["workers", "stmt/s"], Vec::new());
        assert_eq!((headers.len(), rows.len()), (2, 0));
    }
}
