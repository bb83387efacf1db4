//! The whole analysis of a set of series: per-series figures, fits, comparison, findings.
//! This is what `report --json` writes and every renderer draws from.

use super::compare::compare;
use super::findings::{MAX_FINDINGS, findings, fit_notes, series_warnings};
use super::fit::{Fit, Model, fit};
use super::fleet::{fleet, fleet_findings};
use super::statements::StatementComparison;
use std::collections::BTreeSet;

use super::latency::{
    OpenLoopSeries, SloRatio, SloVerdict, bend, classes_of, classes_of_open, missing_class,
    series_of_class, slo_comparison, slo_verdict,
};
use super::model::SloReport;
use super::model::{
    Analysis, FitRange, Fits, LevelFigures, MISLEADING_EVIDENCE, REPORT_SCHEMA, SeriesAnalysis,
    SingleCurve,
};
use super::noise::noise;
use super::scaling::{Knee, knee, saturation, smt_yield, time_per_work};
use super::segments::{self, bic};
use super::series::{Job, Measure, Point, Series};
use crate::latency::{Objective, timeline_warnings};

/// The series with closed-loop levels, which the capacity figures need; the others' notes
/// (and their timelines' warnings) said in `notes`.
fn with_closed_loop_levels(
    series: Vec<Series>,
    open_loop: &[OpenLoopSeries],
    notes: &mut Vec<String>,
) -> Vec<Series> {
    let replays: Vec<&str> = open_loop
        .iter()
        .filter(|open| open.is_replay())
        .map(|open| open.series.as_str())
        .collect();
    series
        .into_iter()
        .filter(|one| {
            if one.points.is_empty() {
                notes.extend(
                    timeline_warnings_of(one)
                        .into_iter()
                        .map(|warning| format!("{}: {warning}", one.name)),
                );
                notes.push(if replays.contains(&one.name.as_str()) {
                    format!(
                        "{}: a replay at set speeds: no capacity, knee or scaling figures, which need closed-loop levels (a replay's load is the captured pace over the speed, not a worker count)",
                        one.name
                    )
                } else {
                    format!(
                        "{}: measured at set rates only (--rate): no capacity, knee or scaling figures, which need closed-loop levels (run without --rate, or with shares such as --rate 50%,90%, which measure one first)",
                        one.name
                    )
                });
            }
            !one.points.is_empty()
        })
        .collect()
}

pub fn analyse(series: Vec<Series>) -> Analysis {
    let open_loop: Vec<OpenLoopSeries> = series.iter().filter_map(OpenLoopSeries::of).collect();
    let mut notes = Vec::new();
    let series = with_closed_loop_levels(series, &open_loop, &mut notes);
    let analysed: Vec<SeriesAnalysis> = series.into_iter().map(analyse_series).collect();
    let groups = measure_groups(&analysed);
    let comparisons = groups
        .iter()
        .filter(|group| group.len() > 1)
        .map(|group| {
            compare(
                &group
                    .iter()
                    .map(|&index| &analysed[index])
                    .collect::<Vec<_>>(),
            )
        })
        .collect::<Vec<_>>();
    let mut warnings: Vec<String> = analysed
        .iter()
        .flat_map(|series| {
            series
                .warnings
                .iter()
                .map(move |warning| format!("{}: {warning}", series.name()))
        })
        .collect();
    warnings.extend(different_jobs(&analysed, &groups));
    warnings.extend(notes);
    let kinds: Vec<&Measure> = groups
        .iter()
        .map(|group| &analysed[group[0]].series.measure)
        .collect();
    if kinds.iter().any(|kind| *kind != kinds[0]) {
        warnings.push(
            "the series measure different things (job times and rates, or different rate units): they are compared only within each kind".to_string(),
        );
    }
    let fleet = fleet(&analysed);
    // Two searches at one objective answer more finely than any sweep; a single search's
    // answer comes before a sweep's.
    // A migration's statements, compared on the captured workload itself: two replays of
    // one capture answer before anything.
    let statements = super::statements::compare(&open_loop);
    let searched = super::migration::first_answer(&analysed, &open_loop, &statements);
    let from_searches = searched.is_some();
    let answer = searched.or_else(|| super::answer::answer(&analysed, &comparisons, None));
    let answer_sentence = answer.iter().map(|answer| answer.sentence.clone());
    let searches = super::searched::findings(&analysed);
    let mut all_findings: Vec<String> = if from_searches {
        answer_sentence.chain(searches).collect()
    } else {
        searches.into_iter().chain(answer_sentence).collect()
    };
    all_findings.extend(statements.iter().map(StatementComparison::sentence));
    all_findings.extend(fleet.as_ref().map(fleet_findings).unwrap_or_default());
    all_findings.extend(findings(
        &analysed,
        &comparisons,
        answer
            .as_ref()
            .map(|answer| (answer.server.as_str(), answer.against.as_str())),
    ));
    all_findings.extend(analysed.iter().filter_map(|series| {
        let bend = series.latency_bend.as_ref()?;
        Some(format!("{}: {}.", series.name(), bend.sentence()))
    }));
    all_findings.extend(
        comparisons
            .iter()
            .filter_map(|comparison| comparison.p99_at_loads.as_ref())
            .flat_map(|loads| loads.sentences())
            .map(|sentence| format!("{sentence}.")),
    );
    all_findings.extend(open_loop.iter().filter_map(OpenLoopSeries::finding));
    all_findings.extend(super::latency::replay_comparisons(&open_loop));
    all_findings.truncate(MAX_FINDINGS);
    Analysis {
        schema: REPORT_SCHEMA.to_string(),
        answer,
        fleet,
        findings: all_findings,
        series: analysed,
        comparisons,
        warnings,
        slo: None,
        open_loop,
        statements,
    }
}

/// `report --slo`: each series' verdict on the objective, series of one measure and job
/// compared on it, and those sentences first among the findings. An objective on a class
/// no series recorded is an error naming the classes there are.
pub fn apply_objective(analysis: &mut Analysis, objective: &Objective) -> anyhow::Result<()> {
    let mut verdicts = closed_loop_verdicts(&analysis.series, objective);
    let mut comparisons: Vec<SloRatio> = measure_groups(&analysis.series)
        .iter()
        .filter(|group| group.len() > 1)
        .flat_map(|group| {
            let members: Vec<&SloVerdict> = group.iter().map(|&index| &verdicts[index]).collect();
            slo_comparison(&members, objective)
        })
        .collect();
    // Open-loop levels: the rate each series sent within the objective, compared among
    // series of one unit.
    let open = open_loop_verdicts(&analysis.open_loop, objective);
    if let Some(class) = &objective.class {
        let recorded: BTreeSet<String> = (analysis.series.iter())
            .flat_map(|one| classes_of(&one.series))
            .chain(analysis.open_loop.iter().flat_map(classes_of_open))
            .collect();
        if recorded.is_empty() {
            anyhow::bail!(
                "--slo '{objective}': no series recorded classes of responses (corescale's scripts, replays and order entry record them); drop '{class}:' to judge all responses"
            );
        }
        if !recorded.contains(class) {
            let names: Vec<&str> = recorded.iter().map(String::as_str).collect();
            anyhow::bail!(
                "--slo '{objective}': no series recorded class '{class}' (the classes recorded: {}); name one of them, or drop '{class}:' to judge all responses",
                names.join(", ")
            );
        }
    }
    let units: BTreeSet<&str> = open.iter().map(|verdict| verdict.unit.as_str()).collect();
    for unit in units {
        let members: Vec<&SloVerdict> = open.iter().filter(|v| v.unit == unit).collect();
        comparisons.extend(slo_comparison(&members, objective));
    }
    verdicts.extend(open);
    let report = SloReport {
        objective: objective.to_string(),
        verdicts,
        comparisons: comparisons
            .iter()
            .map(|ratio| ratio.sentence.clone())
            .collect(),
    };
    // The answer at the objective replaces the one at saturation, and the objective's own
    // comparison of the same two series is not said again.
    let said_at_saturation = analysis.answer.take().map(|answer| answer.sentence);
    analysis
        .findings
        .retain(|finding| Some(finding) != said_at_saturation.as_ref());
    analysis.answer =
        super::migration::first_answer(&analysis.series, &analysis.open_loop, &analysis.statements)
            .or_else(|| {
                super::answer::answer(&analysis.series, &analysis.comparisons, Some(&report))
            });
    let answered = |ratio: &SloRatio| {
        analysis.answer.as_ref().is_some_and(|answer| {
            let pair = [answer.server.as_str(), answer.against.as_str()];
            pair.contains(&ratio.best.as_str()) && pair.contains(&ratio.other.as_str())
        })
    };
    let mut first: Vec<String> = analysis
        .answer
        .iter()
        .map(|answer| answer.sentence.clone())
        .collect();
    first.extend(
        comparisons
            .iter()
            .filter(|ratio| !answered(ratio))
            .map(|ratio| format!("{}.", ratio.sentence)),
    );
    first.extend(
        report
            .verdicts
            .iter()
            .map(|verdict| format!("{}.", verdict.sentence(objective))),
    );
    first.append(&mut analysis.findings);
    first.truncate(MAX_FINDINGS.max(comparisons.len() + report.verdicts.len() + 1));
    analysis.findings = first;
    analysis.slo = Some(report);
    Ok(())
}

/// Each closed-loop series' verdict, on all its responses or on the objective's class.
fn closed_loop_verdicts(series: &[SeriesAnalysis], objective: &Objective) -> Vec<SloVerdict> {
    let verdict = |one: &SeriesAnalysis| {
        let Some(class) = &objective.class else {
            return slo_verdict(&one.series, objective);
        };
        let mut verdict = slo_verdict(&series_of_class(&one.series, class), objective);
        let recorded = classes_of(&one.series);
        if !recorded.contains(class) {
            verdict.reason = Some(missing_class(class, &recorded));
        }
        verdict
    };
    series.iter().map(verdict).collect()
}

/// The same of the open-loop series.
fn open_loop_verdicts(series: &[OpenLoopSeries], objective: &Objective) -> Vec<SloVerdict> {
    let verdict = |one: &OpenLoopSeries| {
        let Some(class) = &objective.class else {
            return one.verdict(objective);
        };
        let mut verdict = one.of_class(class).verdict(objective);
        let recorded = classes_of_open(one);
        if !recorded.contains(class) {
            verdict.reason = Some(missing_class(class, &recorded));
        }
        verdict
    };
    series.iter().map(verdict).collect()
}

/// Indices of the series grouped by what they measure (job time, or a rate unit) and the job
/// they ran, groups and members in input order: only series in one group can be compared by
/// speed or capacity, or drawn together.
pub fn measure_groups(series: &[SeriesAnalysis]) -> Vec<Vec<usize>> {
    let mut groups: Vec<((&Measure, &Job), Vec<usize>)> = Vec::new();
    for (index, analysed) in series.iter().enumerate() {
        let key = (&analysed.series.measure, &analysed.series.job);
        match groups.iter_mut().find(|(known, _)| *known == key) {
            Some((_, members)) => members.push(index),
            None => groups.push((key, vec![index])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// One warning per pair of groups that ran different jobs, or measure different figures
/// (job times against an imported tool's tps): their speed and capacity are not comparable,
/// their scaling is.
fn different_jobs(series: &[SeriesAnalysis], groups: &[Vec<usize>]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (position, group) in groups.iter().enumerate() {
        for other in &groups[position + 1..] {
            let (first, second) = (&series[group[0]], &series[other[0]]);
            if let Some(warning) = order_entry_pair(first, second) {
                warnings.push(warning);
                continue;
            }
            let what = if first.series.measure == second.series.measure {
                "ran different jobs"
            } else {
                "measure different figures"
            };
            warnings.push(format!(
                "{} ({}) and {} ({}) {what}: compare their speedup and efficiency, not their speed or capacity",
                first.name(),
                first.series.job.describe(),
                second.name(),
                second.series.job.describe()
            ));
        }
    }
    warnings
}

/// Two order-entry series on the NOPM axis that are different jobs, said by what makes them
/// so: the warehouses (a different count is another job; an unknown one cannot be checked),
/// or, at equal warehouses, the implementation (HammerDB's stored procedures against
/// corescale's statements): either way compared by scaling, not by NOPM.
fn order_entry_pair(first: &SeriesAnalysis, second: &SeriesAnalysis) -> Option<String> {
    use crate::analysis::input::orders::on_nopm_axis;
    if !on_nopm_axis(&first.series.measure) || !on_nopm_axis(&second.series.measure) {
        return None;
    }
    let count = |one: &SeriesAnalysis| crate::analysis::input::orders::warehouses(&one.series.job);
    let (a, b) = (first.name(), second.name());
    let (one, other) = (
        implementation(&first.series.job),
        implementation(&second.series.job),
    );
    let why = match (count(first), count(second)) {
        // One implementation at equal warehouses differs elsewhere (its mix, its level
        // length): the general warning says how.
        (Some(x), Some(y)) if x == y && one == other => return None,
        (Some(x), Some(y)) if x == y => format!(
            "ran order entry on the same {x} warehouse(s) in different implementations ({one} and {other})"
        ),
        (Some(x), Some(y)) => {
            format!(
                "ran order entry on different warehouse counts ({x} and {y}), so different jobs"
            )
        }
        (Some(x), None) => format!(
            "cannot be checked for equal warehouses: {a} ran on {x}, and {b}'s file does not say (pass --warehouses {b}=W)"
        ),
        (None, Some(y)) => format!(
            "cannot be checked for equal warehouses: {b} ran on {y}, and {a}'s file does not say (pass --warehouses {a}=W)"
        ),
        (None, None) => format!(
            "cannot be checked for equal warehouses: neither file says (pass --warehouses {a}=W and --warehouses {b}=W)"
        ),
    };
    Some(format!(
        "{a} and {b} {why}: compare their speedup and efficiency, not their NOPM"
    ))
}

/// An order-entry job's implementation: its tool and workload ("corescale tpcc",
/// "HammerDB TPROC-C on PostgreSQL").
fn implementation(job: &Job) -> String {
    match &job.workload {
        Some(workload) => format!("{} {workload}", job.tool),
        None => job.tool.clone(),
    }
}

fn analyse_series(series: Series) -> SeriesAnalysis {
    // The run's rule (`result::summary::speedup_base`): the smallest clean level, which is the
    // first kept unless disturbed levels were asked for.
    let base = series
        .points
        .iter()
        .find(|point| point.disturbed.is_empty())
        .unwrap_or(&series.points[0]);
    let base_capacity = series.capacity(base);
    let levels = series
        .points
        .iter()
        .map(|point| {
            // Without a 1-worker level, speedup assumes linear scaling up to the base.
            let speedup = series.capacity(point) / base_capacity * base.workers as f64;
            LevelFigures {
                workers: point.workers,
                raw: point.raw,
                speed: series.speed(point),
                capacity: series.capacity(point),
                speedup,
                efficiency: speedup / point.workers as f64,
                cv: point.cv,
                capacity_uncertainty: point.capacity_uncertainty,
                cpu_fraction: point.cpu_fraction,
                steal_pct: point.steal_pct,
                raw_spread: point.spread,
                cache: point.cache,
                latency: point.latency.clone(),
                figures: point.figures.clone(),
                disturbed: point.disturbed.clone(),
                speed_spread: point.spread.map(|(low, high)| {
                    let speed = |raw: f64| {
                        series.speed(&Point {
                            raw,
                            workers: point.workers,
                            ..Point::default()
                        })
                    };
                    let (a, b) = (speed(low), speed(high));
                    (a.min(b), a.max(b))
                }),
            }
        })
        .collect();
    let knee = knee(&series);
    // Where per-worker speed should be flat: up to the knee, or the physical core count
    // when the knee leaves too few levels to measure jitter on.
    let noise = knee
        .as_ref()
        .and_then(|knee| noise(&series, Some(knee.workers)))
        .or_else(|| noise(&series, series.physical_cores));
    let fits = fit_series(&series, knee.as_ref());
    let mut analysed = SeriesAnalysis {
        capacity_unit: series.capacity_unit(),
        speedup_base: base.workers,
        saturation: saturation(&series, knee.as_ref().map(|knee| knee.workers)),
        noise,
        smt_yield: smt_yield(&series),
        latency_bend: bend(&series),
        knee,
        fits,
        levels,
        warnings: Vec::new(),
        fit_notes: Vec::new(),
        series,
    };
    analysed.warnings = series_warnings(&analysed);
    analysed.fit_notes = fit_notes(&analysed);
    analysed
        .warnings
        .extend(timeline_warnings_of(&analysed.series));
    analysed
}

/// What each level's timeline shows (a warm-up, stalls), as the run warned of it live.
fn timeline_warnings_of(series: &Series) -> Vec<String> {
    series
        .points
        .iter()
        .chain(&series.paced)
        .flat_map(|point| {
            let unit = point.responses_unit();
            let at = match point.latency.as_ref().and_then(|latency| latency.rate) {
                Some(rate) => format!(
                    "{} at {}/s",
                    crate::format::workers_text(point.workers),
                    crate::format::significant(rate.target_per_s)
                ),
                None => crate::format::workers_text(point.workers),
            };
            timeline_warnings(&point.intervals, &unit)
                .into_iter()
                .map(move |warning| format!("{at}: {warning}"))
        })
        .collect()
}

fn fit_series(series: &Series, knee: Option<&Knee>) -> Fits {
    let up_to = |limit: Option<usize>| -> Vec<(usize, f64)> {
        series
            .points
            .iter()
            .filter(|point| limit.is_none_or(|limit| point.workers <= limit))
            .map(|point| (point.workers, series.capacity(point)))
            .collect()
    };
    let full = up_to(series.logical_cpus);
    let to_knee = knee.map(|knee| up_to(Some(knee.workers)));
    let fit_knee = |model| to_knee.as_deref().and_then(|points| fit(model, points));
    let mut fits = Fits {
        amdahl: fit(Model::Amdahl, &full),
        usl: fit(Model::Usl, &full),
        amdahl_to_knee: fit_knee(Model::Amdahl),
        usl_to_knee: fit_knee(Model::Usl),
        single_curve: None,
        recommended: None,
    };
    fits.single_curve = fits
        .usl
        .as_ref()
        .and_then(|usl| single_curve(series, usl, &full));
    fits.recommended = recommend(&fits);
    fits
}

/// See [`SingleCurve`].
fn single_curve(series: &Series, usl: &Fit, full: &[(usize, f64)]) -> Option<SingleCurve> {
    let (x, y) = time_per_work(series, series.logical_cpus);
    let candidates = segments::candidates(&x, &y);
    let segmented = candidates
        .iter()
        .skip(1)
        .min_by(|a, b| a.bic.total_cmp(&b.bic))?;
    let &(first_workers, first_capacity) = full.first()?;
    let first_time = first_workers as f64 / first_capacity;
    let log_error = |predict: &dyn Fn(f64) -> f64| -> f64 {
        full.iter()
            .map(|&(workers, capacity)| (capacity / predict(workers as f64)).ln().powi(2))
            .sum()
    };
    let segmented_error = log_error(&|n| n / (segmented.predict(n) * first_time));
    let usl_error = log_error(&|n| usl.capacity(n));
    if !segmented_error.is_finite() || !usl_error.is_finite() {
        return None;
    }
    let bic_segmented = bic(segmented_error, full.len(), segmented.parameters());
    let bic_usl = bic(usl_error, full.len(), 3);
    Some(SingleCurve {
        segments: segmented.knots.len() + 1,
        bic_segmented,
        bic_usl,
        misleading: bic_usl - bic_segmented > MISLEADING_EVIDENCE,
    })
}

fn recommend(fits: &Fits) -> Option<FitRange> {
    let misleading = fits.misleading();
    let usable = |range: FitRange| {
        fits.get(range)
            .is_some_and(|fit| fit.adequate && (fit.model == Model::Amdahl || fit.kappa_measured()))
    };
    let order: &[FitRange] = if misleading {
        &[FitRange::UslToKnee, FitRange::AmdahlToKnee]
    } else {
        &[
            FitRange::Usl,
            FitRange::Amdahl,
            FitRange::UslToKnee,
            FitRange::AmdahlToKnee,
        ]
    };
    order.iter().copied().find(|&range| usable(range))
}
