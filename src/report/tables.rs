//! The analysis as tables of text cells, built once and rendered as terminal text, Markdown or
//! HTML by the format's own renderer.

use super::cell_table::{Table, cells, in_time_units, percent};
use crate::analysis::fit::{Fit, Inadequacy, Model};
use crate::analysis::latency::OpenLoopSeries;
use crate::analysis::model::{Analysis, FitRange, FitUse, SeriesAnalysis};
use crate::analysis::model::{BandRatio, Comparison};
use crate::analysis::model::{Fleet, HostHistory};
use crate::analysis::scaling::Saturation;
use crate::analysis::series::Measure;
use crate::format::significant;
use crate::format::{bytes, optional};

/// A series' provenance row: its name, file, host and run, as far as its file says.
fn provenance_row(series: &SeriesAnalysis) -> Vec<String> {
    let known = &series.series.provenance;
    let text = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
    let layout = match (
        known.sockets,
        series.series.physical_cores,
        series.series.logical_cpus,
    ) {
        (Some(sockets), Some(physical), Some(logical)) if sockets > 0 && physical > 0 => {
            format!(
                "{sockets} x {} x {}",
                physical / sockets,
                logical / physical
            )
        }
        (None, Some(physical), Some(logical)) => format!("{physical}/{logical} (given)"),
        _ => "-".into(),
    };
    let tool = known.version.clone().unwrap_or_else(|| {
        if series.series.job.tool.is_empty() {
            "-".into()
        } else {
            series.series.job.tool.clone()
        }
    });
    vec![
        series.name().to_string(),
        // The file's name: enough to find it, and the same wherever the report runs.
        std::path::Path::new(&series.series.source)
            .file_name()
            .map_or_else(
                || series.series.source.clone(),
                |name| name.to_string_lossy().into_owned(),
            ),
        text(&known.hostname),
        text(&known.cpu_model),
        layout,
        known.memory_bytes.map_or("-".into(), bytes),
        text(&known.kernel),
        text(&known.hypervisor),
        known.started_at.as_deref().map_or("-".into(), |date| {
            date.replace('T', " ").replace('Z', " UTC")
        }),
        tool,
        {
            let workload = known
                .workload
                .clone()
                .unwrap_or_else(|| series.series.job.describe());
            match &known.connection {
                Some(connection) => format!("{workload}; connected: {connection}"),
                None => workload,
            }
        },
        text(&known.pinning),
        text(&known.verdict),
        if known.tags.is_empty() {
            "-".to_string()
        } else {
            known
                .tags
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    ]
}

/// One row per series: where and how it was measured, as far as its file says.
pub(crate) fn provenance_tables(analysis: &Analysis) -> [Table; 2] {
    let rows: Vec<Vec<String>> = analysis.series.iter().map(provenance_row).collect();
    let headers = cells([
        "series",
        "file",
        "host",
        "CPU",
        "sockets x cores x threads",
        "memory",
        "kernel",
        "hypervisor",
        "run started",
        "tool",
        "workload",
        "pinning",
        "verdict",
        "tags",
    ]);
    // Two tables, the hosts' (8 columns) and the runs' (7), each row named by its series:
    // one of fourteen columns does not fit a narrow window.
    let columns = |range: std::ops::Range<usize>| {
        let pick = |row: &Vec<String>| {
            std::iter::once(row[0].clone())
                .chain(row[range.clone()].iter().cloned())
                .collect()
        };
        (pick(&headers), rows.iter().map(pick).collect())
    };
    let table = |title: &str, (headers, rows)| Table {
        drop_first: Vec::new(),
        title: title.to_string(),
        headers,
        rows,
    };
    [
        table("Provenance: the hosts", columns(1..8)),
        table("Provenance: the runs", columns(8..14)),
    ]
}

/// One row per series: where it bends and saturates.
pub(crate) fn series_table(analysis: &Analysis) -> Table {
    let rows = analysis
        .series
        .iter()
        .map(|series| {
            let cores = match (series.series.physical_cores, series.series.logical_cpus) {
                (Some(physical), Some(logical)) => format!("{physical}/{logical}"),
                _ => "?".to_string(),
            };
            vec![
                series.name().to_string(),
                measure_name(&series.series.measure),
                series.levels.len().to_string(),
                cores,
                series
                    .knee
                    .as_ref()
                    .map_or("-".into(), |knee| knee.workers.to_string()),
                series
                    .knee
                    .as_ref()
                    .map_or("-".into(), |knee| format!("{:+.0}%", 100.0 * knee.droop)),
                series
                    .saturation
                    .as_ref()
                    .map_or("-".into(), saturation_text),
                series
                    .smt_yield
                    .map_or("-".into(), |smt| format!("{smt:.2}")),
                if series.series.complete { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    Table {
        drop_first: vec!["complete", "measure", "levels", "droop", "SMT yield"],
        title: "Series".to_string(),
        headers: cells([
            "series",
            "measure",
            "levels",
            "P/L cores",
            "knee",
            "droop",
            "saturation",
            "SMT yield",
            "complete",
        ]),
        rows,
    }
}

/// "16.6 from n=38", ">=34.3 at n=40" when still rising at the last level, or "untold (max
/// 4.51 M at n=2 ±58%)" when the highest level is too uncertain to place a plateau (what
/// the findings say of it, not a second answer).
fn saturation_text(saturation: &Saturation) -> String {
    if let Some(untold) = saturation.untold.filter(|_| !saturation.censored) {
        format!(
            "untold (max {} at n={} ±{:.0}%)",
            significant(saturation.max_capacity),
            saturation.max_workers,
            100.0 * untold
        )
    } else if saturation.censored {
        format!(
            ">={} at n={}",
            significant(saturation.capacity),
            saturation.workers
        )
    } else {
        format!(
            "{} from n={}",
            significant(saturation.capacity),
            saturation.workers
        )
    }
}

fn measure_name(measure: &Measure) -> String {
    match measure {
        Measure::JobTime => "job time".to_string(),
        Measure::Rate { unit } => format!("rate ({unit})"),
    }
}

/// A level's workers, marked `!` when the run judged it disturbed and it was kept.
fn workers_cell(level: &crate::analysis::model::LevelFigures) -> String {
    if level.disturbed.is_empty() {
        level.workers.to_string()
    } else {
        format!("{} !", level.workers)
    }
}

/// Every level of one series with the four figures.
pub(crate) fn levels_table(series: &SeriesAnalysis) -> Table {
    let raw_header = match &series.series.measure {
        Measure::JobTime => "job time s".to_string(),
        Measure::Rate { unit } => unit.clone(),
    };
    let speed_header = match &series.series.measure {
        Measure::JobTime => "jobs/min/worker".to_string(),
        Measure::Rate { unit } => format!("{unit} per worker"),
    };
    // A lone level of several workers has no measured speedup: "-", its warning says why.
    let lone = series.levels.len() == 1 && series.speedup_base != 1;
    let rows = series
        .levels
        .iter()
        .map(|level| {
            vec![
                workers_cell(level),
                significant(level.raw),
                significant(level.speed),
                significant(level.capacity),
                if lone {
                    "-".to_string()
                } else {
                    format!("{:.2}", level.speedup)
                },
                if lone {
                    "-".to_string()
                } else {
                    percent(level.efficiency)
                },
                level
                    .cv
                    .map_or("-".into(), |cv| format!("{:.1}%", 100.0 * cv)),
                level.cpu_fraction.map_or("-".into(), percent),
                optional(level.steal_pct, 1),
            ]
        })
        .collect();
    Table {
        drop_first: vec!["steal %", "on CPU", "efficiency"],
        title: format!("{}: levels", series.name()),
        headers: vec![
            "workers".into(),
            raw_header,
            speed_header,
            format!("capacity {}", series.capacity_unit),
            "speedup".into(),
            "efficiency".into(),
            "CV".into(),
            "on CPU".into(),
            "steal %".into(),
        ],
        rows,
    }
}

/// The buffer cache at every level of an lio, pio or db series (SLOB's figures beside the
/// rate); no rows for other series.
pub(crate) fn cache_table(series: &SeriesAnalysis) -> Table {
    let rows = series
        .levels
        .iter()
        .filter_map(|level| {
            let cache = level.cache?;
            Some(vec![
                workers_cell(level),
                cache.hit_ratio.map_or("-".into(), crate::format::hit_ratio),
                optional(cache.latch_misses_per_1k_gets, 2),
                cache.pio_per_s.map_or("-".into(), significant),
                // In full, in ms: the table names one unit for it.
                cache
                    .read_p99_us
                    .map_or("-".into(), |us| (us / 1000.0).to_string()),
            ])
        })
        .collect();
    in_time_units(Table {
        drop_first: vec!["read p99 ms", "latch misses per 1k gets"],
        title: format!("{}: buffer cache", series.name()),
        headers: cells([
            "workers",
            "hit ratio",
            "latch misses per 1k gets",
            "PIO/s",
            "read p99 ms",
        ]),
        rows,
    })
}

/// The workload's own figures (`levels[].workload_figures`), one row per figure and one
/// column per level, so a figure a workload adds shows without a change here; no rows for
/// series without them.
pub(crate) fn workload_figures_table(series: &SeriesAnalysis) -> Table {
    let levels: Vec<&crate::analysis::model::LevelFigures> = series
        .levels
        .iter()
        .filter(|level| !level.figures.is_empty())
        .collect();
    let mut names: Vec<&String> = levels
        .iter()
        .flat_map(|level| level.figures.keys())
        .collect();
    names.sort();
    names.dedup();
    let rows = names
        .iter()
        .map(|name| {
            let mut row = vec![name.to_string()];
            row.extend(levels.iter().map(|level| {
                level
                    .figures
                    .get(*name)
                    .map_or("-".into(), |&value| significant(value))
            }));
            row
        })
        .collect();
    let mut headers = vec!["figure / workers".to_string()];
    headers.extend(levels.iter().map(|level| workers_cell(level)));
    Table {
        drop_first: Vec::new(),
        title: format!("{}: the workload's own figures", series.name()),
        headers,
        rows,
    }
}

/// Response times at every level of a series whose statements (or jobs) were timed: the
/// percentiles, and under --rate what was asked and sent; no rows for other series.
pub(crate) fn latency_table(series: &SeriesAnalysis) -> Table {
    let rows = series
        .levels
        .iter()
        .filter_map(|level| {
            let latency = level.latency.as_ref()?;
            let mut row = vec![workers_cell(level)];
            row.extend(response_cells(latency));
            Some(row)
        })
        .collect();
    let unit = series
        .levels
        .iter()
        .find_map(|level| level.latency.as_ref())
        .map(|latency| format!("per {}", latency.unit))
        .unwrap_or_default();
    let mut headers = cells(["workers"]);
    headers.extend(response_headers());
    in_time_units(Table {
        drop_first: vec!["count", "p90 ms", "late", "p99.9 ms"],
        title: format!("{}: response time {unit}", series.name()),
        headers,
        rows,
    })
}

/// A level's response times: count, p50, p90, p99, p99.9, max and late statements.
fn response_cells(latency: &crate::latency::Latency) -> Vec<String> {
    let response = latency.response;
    vec![
        response.count.to_string(),
        response.p50_ms.to_string(),
        response.p90_ms.to_string(),
        response.p99_ms.to_string(),
        response.p999_ms.to_string(),
        response.max_ms.to_string(),
        latency.late.map_or("-".into(), |late| late.to_string()),
    ]
}

fn response_headers() -> Vec<String> {
    cells([
        "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "late",
    ])
}

/// p99 of the series compared at the loads they all measured.
pub(crate) fn p99_at_loads_table(comparison: &Comparison) -> Table {
    let Some(loads) = &comparison.p99_at_loads else {
        return Table {
            title: String::new(),
            headers: Vec::new(),
            rows: Vec::new(),
            drop_first: Vec::new(),
        };
    };
    let mut headers = cells(["workers"]);
    headers.extend(loads.series.iter().map(|name| format!("{name} p99 ms")));
    in_time_units(Table {
        title: "p99 response time at the loads every series measured".to_string(),
        headers,
        rows: loads
            .rows
            .iter()
            .map(|(workers, p99)| {
                std::iter::once(workers.to_string())
                    .chain(p99.iter().map(|value| value.to_string()))
                    .collect()
            })
            .collect(),
        drop_first: Vec::new(),
    })
}

/// A series' open-loop levels (`--rate`): each worker count at each rate asked, with what
/// was sent and the response times counted from when each statement was due.
pub(crate) fn open_loop_table(open: &OpenLoopSeries) -> Table {
    let replay = open.is_replay();
    let rows = open
        .levels
        .iter()
        .map(|level| {
            let mut row = vec![level.workers.to_string()];
            if replay {
                row.push(level.speed.map_or(String::new(), crate::format::times));
            }
            row.extend([
                format!(
                    "{}{}",
                    significant(level.asked_per_s),
                    level
                        .share
                        .map(|share| format!(" ({})", crate::latency::share_text(share)))
                        .unwrap_or_default()
                ),
                format!(
                    "{}{}",
                    significant(level.sent_per_s),
                    if level.sustained { "" } else { " !" }
                ),
            ]);
            row.extend(response_cells(&level.latency));
            row
        })
        .collect();
    let mut headers = if replay {
        cells(["workers", "speed", "asked/s", "sent/s"])
    } else {
        cells(["workers", "asked/s", "sent/s"])
    };
    headers.extend(response_headers());
    in_time_units(Table {
        drop_first: vec!["count", "p90 ms", "late", "p99.9 ms", "max ms"],
        title: format!(
            "{}: {}, response time per statement from when it was due (!: the sessions fell behind)",
            open.series,
            if replay {
                "replaying a capture at set speeds"
            } else {
                "at set rates"
            }
        ),
        headers,
        rows,
    })
}

pub(crate) fn slo_table(analysis: &Analysis) -> Table {
    let Some(slo) = &analysis.slo else {
        return Table {
            title: String::new(),
            headers: Vec::new(),
            rows: Vec::new(),
            drop_first: Vec::new(),
        };
    };
    let rows = slo
        .verdicts
        .iter()
        .map(|verdict| {
            vec![
                verdict.series.clone(),
                verdict.throughput.map_or("-".into(), |throughput| {
                    format!(
                        "{}{}",
                        significant(throughput),
                        if verdict.beyond_largest { "+" } else { "" }
                    )
                }),
                verdict.unit.clone(),
                verdict
                    .workers
                    .map_or("-".into(), |workers| workers.to_string()),
                verdict
                    .value_ms
                    .map_or("-".into(), |value| value.to_string()),
            ]
        })
        .collect();
    in_time_units(Table {
        drop_first: vec!["unit"],
        title: format!(
            "Largest throughput within {} (+: kept at every level measured, a lower bound)",
            slo.objective
        ),
        headers: cells(["series", "throughput", "unit", "workers", "value ms"]),
        rows,
    })
}

pub(crate) fn comparison_table(comparison: &Comparison) -> Table {
    let rows = comparison
        .rows
        .iter()
        .map(|row| {
            // Each ratio with its uncertainty from the two series' measured noise; the
            // baseline's own row is exact.
            let exact = row.name == comparison.baseline;
            let ratio = |value: Option<f64>| {
                value.map_or("-".into(), |value| {
                    if exact {
                        format!("{value:.2}x")
                    } else {
                        row.versus.shown(value)
                    }
                })
            };
            // A band's ± covers only the noise of one ratio: where its levels spread wider,
            // the range they span is shown instead, as the findings give it.
            let band = |band: Option<&BandRatio>| {
                band.map_or("-".into(), |band| {
                    let margin = band.speed_ratio * row.versus.ratio_uncertainty;
                    let spread = band.speed_ratio_min < band.speed_ratio - margin
                        || band.speed_ratio_max > band.speed_ratio + margin;
                    let shown = if spread && !exact {
                        format!(
                            "{:.2}x ({:.2}-{:.2}x)",
                            band.speed_ratio, band.speed_ratio_min, band.speed_ratio_max
                        )
                    } else {
                        ratio(Some(band.speed_ratio))
                    };
                    format!("{shown} ({}..{})", band.from_workers, band.to_workers)
                })
            };
            // Without a known uncertainty the bare ratio: the findings say it is unknown.
            // A plateau not placed, this row's or the baseline's, is no capacity to divide.
            let baseline_untold = (comparison.rows.iter())
                .any(|other| other.name == comparison.baseline && other.saturation_untold);
            let capacity_ratio = |value: Option<f64>| match value {
                _ if row.saturation_untold || baseline_untold => "-".into(),
                Some(value) if !exact && row.versus.capacity_ratio_uncertainty.is_some() => {
                    row.versus.shown_capacity(value)
                }
                Some(value) => format!("{value:.2}x"),
                None => "-".into(),
            };
            // Only the estimated are ranked; the others show "-".
            let rank = comparison
                .ranking
                .iter()
                .position(|name| *name == row.name)
                .map_or("-".into(), |index| (index + 1).to_string());
            let capacity = match (row.capacity_at_saturation, row.saturation_workers) {
                _ if row.saturation_untold => "untold".into(),
                (Some(capacity), Some(workers)) if row.saturation_censored => {
                    format!(">={} at n={workers}", significant(capacity))
                }
                (Some(capacity), Some(workers)) => {
                    format!("{} from n={workers}", significant(capacity))
                }
                _ => "-".into(),
            };
            vec![
                row.name.clone(),
                row.single_thread_speed.map_or("-".into(), significant),
                ratio(row.versus.single_thread_ratio),
                band(row.versus.low_load.as_ref()),
                band(row.versus.high_load.as_ref()),
                capacity,
                capacity_ratio(row.versus.capacity_ratio),
                // Per core and per cost are capacity ratios: the capacity's uncertainty.
                capacity_ratio(row.per_core_ratio),
                capacity_ratio(row.per_cost_ratio),
                rank,
            ]
        })
        .collect();
    Table {
        drop_first: vec![
            "per cost",
            "per core",
            "rank",
            "1-thread speed",
            "high load",
        ],
        title: format!(
            "Comparison ({}; ratios against {}; speed per worker at low and high load)",
            comparison.unit, comparison.baseline
        ),
        headers: cells([
            "series",
            "1-thread speed",
            "1-thread",
            "low load",
            "high load",
            "saturation",
            "capacity",
            "per core",
            "per cost",
            "rank",
        ]),
        rows,
    }
}

pub(crate) fn fits_table(analysis: &Analysis) -> Table {
    let mut rows = Vec::new();
    for series in &analysis.series {
        let fits = [
            (FitRange::Amdahl, "Amdahl"),
            (FitRange::Usl, "USL"),
            (FitRange::AmdahlToKnee, "Amdahl to knee"),
            (FitRange::UslToKnee, "USL to knee"),
        ];
        for (range, name) in fits {
            if let (Some(fit), Some(used)) = (series.fits.get(range), series.fits.use_of(range)) {
                let used = match used {
                    FitUse::Quoted => "quoted".to_string(),
                    FitUse::Inadequate(why) => format!("no: {}", why.short()),
                    FitUse::SpansTheBend => "no: spans the bend".to_string(),
                    FitUse::KappaNotMeasured => "no: kappa not seen".to_string(),
                    FitUse::Adequate => "fits, not chosen".to_string(),
                };
                rows.push(fit_row(series.name(), name, fit, &used));
            }
        }
    }
    Table {
        drop_first: vec!["R^2", "limit", "workers"],
        title: "Scalability fits (to capacity, single-worker capacity free; sigma, kappa >= 0)"
            .to_string(),
        headers: cells([
            "series", "model", "workers", "sigma", "kappa", "R^2", "limit", "used",
        ]),
        rows,
    }
}

/// Said under the fits table: how to read R^2 beside a "no", what each "-" means, and each
/// series' notes on its fits.
pub(crate) fn fits_notes(analysis: &Analysis) -> Vec<String> {
    let mut notes = Vec::new();
    let uses: Vec<FitUse> = analysis
        .series
        .iter()
        .flat_map(|series| {
            [
                FitRange::Amdahl,
                FitRange::Usl,
                FitRange::AmdahlToKnee,
                FitRange::UslToKnee,
            ]
            .into_iter()
            .filter_map(|range| series.fits.use_of(range))
        })
        .collect();
    let said = |kind: FitUse| uses.contains(&kind);
    if said(FitUse::Inadequate(Inadequacy::ResidualStreaks)) {
        notes.push("no: not its shape: residuals of one sign run in long streaks (far fewer sign changes than noise gives), so the curve does not follow the data, however high its R^2; such a fit is neither drawn nor quoted.".to_string());
    }
    let others: Vec<&str> = [
        (
            FitUse::Inadequate(Inadequacy::PastLimit),
            "past its limit: the levels exceed the largest speedup the fitted Amdahl law allows",
        ),
        (
            FitUse::Inadequate(Inadequacy::PeakNotMeasured),
            "peak not seen: the fitted USL falls past a peak the levels do not show",
        ),
        (
            FitUse::SpansTheBend,
            "spans the bend: one curve over both sides of the knee averages two regimes",
        ),
        (
            FitUse::KappaNotMeasured,
            "kappa not seen: kappa's interval includes 0, so Amdahl's law says the same with one coefficient fewer",
        ),
        (
            FitUse::Adequate,
            "fits, not chosen: it follows the data, but the fit quoted comes first (full range before to the knee, USL before Amdahl)",
        ),
    ]
    .into_iter()
    .filter(|(kind, _)| said(*kind))
    .map(|(_, text)| text)
    .collect();
    if !others.is_empty() {
        notes.push(format!("{}.", others.join("; ")));
    }
    notes.push("'-' under kappa: Amdahl's law has none; under limit: no speedup ceiling or capacity peak that the levels support (given only for fits that follow the data).".to_string());
    for series in &analysis.series {
        notes.extend(
            series
                .fit_notes
                .iter()
                .map(|note| format!("{}: {note}", series.name())),
        );
    }
    notes
}

fn fit_row(series: &str, model: &str, fit: &Fit, used: &str) -> Vec<String> {
    let with_ci = |value: f64, ci: Option<f64>, at_bound: bool, decimals: usize| match ci {
        _ if at_bound => "0 (bound)".to_string(),
        ci => crate::format::coefficient(value, ci, decimals),
    };
    let limit = match (fit.max_speedup, fit.peak_workers) {
        (Some(speedup), _) => format!("speedup <= {speedup:.0}x"),
        (_, Some(peak)) => format!("peak at n*={peak:.0}"),
        _ => "-".to_string(),
    };
    vec![
        series.to_string(),
        model.to_string(),
        format!("{}..{}", fit.n_min, fit.n_max),
        with_ci(fit.sigma, fit.sigma_ci95, fit.sigma_at_bound, 4),
        if fit.model == Model::Usl {
            with_ci(fit.kappa, fit.kappa_ci95, fit.kappa_at_bound, 6)
        } else {
            "-".to_string()
        },
        format!("{:.4}", fit.r_squared),
        limit,
        used.to_string(),
    ]
}

/// The fleet: one row per host, against the median of its siblings, on the figure its
/// group is compared on (named in the header when every group shares it, else in each cell).
pub(crate) fn fleet_table(fleet: &Fleet) -> Table {
    let shared_figure = fleet.shared_figure_name();
    let rows = fleet
        .hosts
        .iter()
        .map(|host| {
            let group = &fleet.groups[host.group];
            let compared = host.compared.map_or("-".into(), |value| {
                let lower_bound = group.compared_at.is_none() && host.capacity_is_lower_bound;
                let value = if lower_bound {
                    format!(">={}", significant(value))
                } else {
                    significant(value)
                };
                match (&shared_figure, group.compared_at) {
                    (None, Some(workers)) => format!("{value} at n={workers}"),
                    _ => value,
                }
            });
            vec![
                host.host.clone(),
                host.cpu_model.clone().unwrap_or_else(|| "-".into()),
                match (host.physical_cores, host.logical_cpus) {
                    (Some(physical), Some(logical)) => format!("{physical}/{logical}"),
                    _ => "?".into(),
                },
                host.runs.to_string(),
                host.single_thread_speed.map_or("-".into(), significant),
                compared,
                host.capacity_vs_group.map_or("-".into(), |ratio| {
                    format!("{:+.0}%", 100.0 * (ratio - 1.0))
                }),
                format!("{}", group.hosts.len() - 1),
                host.verdict.clone(),
                if host.outlier { "OUTLIER" } else { "" }.to_string(),
            ]
        })
        .collect();
    let figure = shared_figure.unwrap_or_else(|| "compared figure".to_string());
    Table {
        drop_first: vec!["CPU", "runs", "siblings", "verdict"],
        title: format!(
            "Fleet ({figure} against the median of the host's siblings: same CPU, cores and job)"
        ),
        headers: vec![
            "host".into(),
            "CPU".into(),
            "P/L".into(),
            "runs".into(),
            "1-thread speed".into(),
            figure,
            "vs siblings".into(),
            "siblings".into(),
            "verdict".into(),
            String::new(),
        ],
        rows,
    }
}

/// Each host measured repeatedly: its runs in order against its own median.
pub(crate) fn history_table(history: &HostHistory) -> Table {
    let rows = history
        .runs
        .iter()
        .map(|run| {
            vec![
                run.started_at.as_deref().map_or_else(
                    || run.series.clone(),
                    |date| date.replace('T', " ").replace('Z', ""),
                ),
                run.capacity.map_or("no estimate".into(), significant),
                run.capacity_vs_history.map_or("-".into(), |ratio| {
                    format!("{:+.1}%", 100.0 * (ratio - 1.0))
                }),
                run.single_thread_speed.map_or("-".into(), significant),
                optional(run.steal_pct, 1),
                if run.departs { "DEPARTS" } else { "" }.to_string(),
            ]
        })
        .collect();
    Table {
        drop_first: vec!["steal %"],
        title: format!(
            "{}: {} runs (capacity against their median {}; {})",
            history.host,
            history.runs.len(),
            significant(history.median_capacity),
            history.threshold_text()
        ),
        headers: cells([
            "run started",
            "capacity",
            "vs median",
            "1-thread speed",
            "steal %",
            "",
        ]),
        rows,
    }
}

/// The week table of the Oracle cloud OCPU study's SLOB runs: each load level over a host's runs.
pub(crate) fn history_levels_table(history: &HostHistory) -> Table {
    let rows = history
        .levels
        .iter()
        .map(|level| {
            vec![
                level.workers.to_string(),
                level.runs.to_string(),
                significant(level.capacity_median),
                format!(
                    "{}-{}",
                    significant(level.capacity_min),
                    significant(level.capacity_max)
                ),
                level.cpu_fraction_median.map_or("-".into(), percent),
                format!("{:.2}", level.speedup_median),
            ]
        })
        .collect();
    Table {
        drop_first: vec!["on CPU"],
        title: format!("{}: every level over its runs", history.host),
        headers: cells(["workers", "runs", "capacity", "range", "on CPU", "speedup"]),
        rows,
    }
}
