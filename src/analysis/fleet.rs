//! Many results at once: a fleet of hosts (one row per host, each against the median of its
//! siblings with the same CPU, cores and job) and the history of hosts measured repeatedly
//! (the Oracle cloud OCPU study's week of SLOB runs: does a VM keep delivering its cores?).

use super::compare::single_thread;
use super::model::{
    Fleet, FleetHost, HistoryLevel, HistoryRun, HostHistory, MAX_THRESHOLD, OutlierCall,
    SeriesAnalysis, SiblingGroup,
};
use super::series::{Job, Measure};
use crate::stats::median;

/// Smallest departure called an outlier, whatever the noise: measurements of identical
/// servers seldom agree closer than this.
const FLOOR: f64 = 0.03;

/// The fleet view, when at least two hosts share CPU, cores and job, or a host was measured
/// repeatedly.
pub(crate) fn fleet(series: &[SeriesAnalysis]) -> Option<Fleet> {
    // Runs belong together when they measured one host with identical settings (the same
    // measure and job); a host that ran several jobs has one row per job.
    // A host is its label and its hostname: clones that share one label stay apart.
    type RunKey<'a> = ((&'a str, Option<&'a str>), &'a Measure, &'a Job);
    let mut keyed: Vec<(RunKey, Vec<usize>)> = Vec::new();
    // A cluster is no host of a fleet, nor its client host's history: it is compared with
    // servers node for node (the answer), not as a sibling.
    for (index, analysed) in series
        .iter()
        .enumerate()
        .filter(|(_, analysed)| analysed.series.nodes.is_none())
    {
        let key = (
            (
                analysed.series.host(),
                analysed.series.provenance.hostname.as_deref(),
            ),
            &analysed.series.measure,
            &analysed.series.job,
        );
        match keyed.iter_mut().find(|(known, _)| *known == key) {
            Some((_, members)) => members.push(index),
            None => keyed.push((key, vec![index])),
        }
    }
    let by_host: Vec<(String, Vec<usize>)> = keyed
        .iter()
        .map(|(((host, hostname), _, job), members)| {
            let same_label: Vec<&RunKey> = keyed
                .iter()
                .map(|(key, _)| key)
                .filter(|((other, _), _, _)| other == host)
                .collect();
            let mut name = host.to_string();
            if same_label
                .iter()
                .any(|((_, other), _, _)| other != hostname)
            {
                name.push_str(&format!(" ({})", hostname.unwrap_or("?")));
            }
            if same_label.len() > 1 && same_label.iter().any(|(_, _, other)| *other != *job) {
                name.push_str(&format!(" ({})", job.describe()));
            }
            (name, members.clone())
        })
        .collect();
    if by_host.len() < 2 && by_host.iter().all(|(_, runs)| runs.len() < 2) {
        return None;
    }
    let mut hosts: Vec<FleetHost> = by_host
        .iter()
        .map(|(host, runs)| host_row(host, runs, series))
        .collect();
    let groups = sibling_groups(&mut hosts, &by_host, series);
    let histories: Vec<HostHistory> = by_host
        .iter()
        .filter(|(_, runs)| runs.len() > 1)
        .map(|(host, runs)| history(host, runs, series))
        .collect();
    // Servers of different kinds are a comparison, not a fleet: that needs siblings or a
    // history.
    if histories.is_empty() && groups.iter().all(|group| group.hosts.len() < 2) {
        return None;
    }
    Some(Fleet {
        hosts,
        groups,
        histories,
    })
}

fn capacity(series: &SeriesAnalysis) -> Option<f64> {
    series
        .saturation
        .as_ref()
        .map(|saturation| saturation.capacity)
        .filter(|capacity| capacity.is_finite() && *capacity > 0.0)
}

/// The median of the values, or None for none.
fn median_of(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median(values))
}

fn host_row(host: &str, runs: &[usize], series: &[SeriesAnalysis]) -> FleetHost {
    let first = &series[runs[0]].series;
    let capacities: Vec<f64> = runs
        .iter()
        .filter_map(|&run| capacity(&series[run]))
        .collect();
    let speeds: Vec<f64> = runs
        .iter()
        .filter_map(|&run| single_thread(&series[run]).map(|(speed, _)| speed))
        .collect();
    let verdicts: Vec<&str> = runs
        .iter()
        .filter_map(|&run| series[run].series.provenance.verdict.as_deref())
        .collect();
    let disturbed = verdicts
        .iter()
        .filter(|verdict| verdict.starts_with("disturbed"))
        .count();
    FleetHost {
        host: host.to_string(),
        cpu_model: first.provenance.cpu_model.clone(),
        physical_cores: first.physical_cores,
        logical_cpus: first.logical_cpus,
        runs: runs.len(),
        single_thread_speed: median_of(&speeds),
        capacity: median_of(&capacities),
        capacity_is_lower_bound: runs.iter().any(|&run| {
            series[run]
                .saturation
                .as_ref()
                .is_some_and(|saturation| saturation.censored)
        }),
        verdict: match (verdicts.len(), disturbed) {
            (0, _) => "not judged".to_string(),
            (_, 0) => "clean".to_string(),
            (count, disturbed) => format!("disturbed in {disturbed} of {count} runs"),
        },
        group: 0,
        compared: None,
        capacity_vs_group: None,
        speed_vs_group: None,
        outlier: false,
    }
}

/// Fewest hosts in a group for an outlier to be named: with two, neither is the odd one.
const MIN_SIBLINGS_FOR_OUTLIERS: usize = 3;

/// What makes hosts siblings: CPU model, physical cores, logical CPUs, measure and job (and,
/// for a host whose hardware is unknown, its own index: a group of its own).
type SiblingKey = (
    Option<String>,
    Option<usize>,
    Option<usize>,
    Measure,
    Job,
    usize,
);

/// Each sibling group's key and its hosts' indexes, in the order hosts first appear.
fn sibling_keys(
    hosts: &[FleetHost],
    by_host: &[(String, Vec<usize>)],
    series: &[SeriesAnalysis],
) -> Vec<(SiblingKey, Vec<usize>)> {
    let mut keys: Vec<(SiblingKey, Vec<usize>)> = Vec::new();
    for (index, host) in hosts.iter().enumerate() {
        let first = &series[by_host[index].1[0]].series;
        let known = host.cpu_model.is_some()
            && host.physical_cores.is_some()
            && host.logical_cpus.is_some();
        let key: SiblingKey = (
            host.cpu_model.clone(),
            host.physical_cores,
            host.logical_cpus,
            first.measure.clone(),
            first.job.clone(),
            // Unknown hardware: a group of its own.
            if known { usize::MAX } else { index },
        );
        match keys.iter_mut().find(|(known, _)| *known == key) {
            Some((_, members)) => members.push(index),
            None => keys.push((key, vec![index])),
        }
    }
    keys
}

/// Each host's value over the median of the others' values.
fn to_the_others(values: &[(usize, f64)]) -> Vec<(usize, f64)> {
    values
        .iter()
        .filter_map(|&(index, value)| {
            let others: Vec<f64> = values
                .iter()
                .filter(|&&(other, _)| other != index)
                .map(|&(_, value)| value)
                .collect();
            Some((index, value / median_of(&others)?))
        })
        .collect()
}

/// Fills each compared host's value, its capacity and single-thread speed over its
/// siblings' medians, and whether `outlier` calls its capacity ratio one.
fn mark_hosts(
    hosts: &mut [FleetHost],
    members: &[usize],
    values: &[(usize, f64)],
    ratios: &[(usize, f64)],
    outlier: impl Fn(f64) -> bool,
) {
    let speeds: Vec<(usize, f64)> = members
        .iter()
        .filter_map(|&index| Some((index, hosts[index].single_thread_speed?)))
        .collect();
    for &(index, value) in values {
        hosts[index].compared = Some(value);
    }
    for &(index, ratio) in ratios {
        let others: Vec<f64> = speeds
            .iter()
            .filter(|&&(other, _)| other != index)
            .map(|&(_, speed)| speed)
            .collect();
        let host = &mut hosts[index];
        host.capacity_vs_group = Some(ratio);
        host.speed_vs_group = host
            .single_thread_speed
            .zip(median_of(&others))
            .map(|(speed, typical)| speed / typical);
        host.outlier = outlier(ratio);
    }
}

/// Groups hosts by CPU model, cores, measure and job, known ones only (a host whose CPU model
/// or core counts are unknown stands alone); fills each host's ratios to its siblings.
fn sibling_groups(
    hosts: &mut [FleetHost],
    by_host: &[(String, Vec<usize>)],
    series: &[SeriesAnalysis],
) -> Vec<SiblingGroup> {
    let keys = sibling_keys(hosts, by_host, series);
    let jitter_of = |index: usize| {
        let jitters: Vec<f64> = by_host[index]
            .1
            .iter()
            .filter_map(|&run| series[run].noise.as_ref().map(|noise| noise.jitter))
            .collect();
        median_of(&jitters)
    };
    keys.into_iter()
        .enumerate()
        .map(
            |(group, ((cpu_model, physical, logical, _, job, _), members))| {
                // Lower bounds are compared where every host measured, not at their plateaus.
                let censored = members
                    .iter()
                    .any(|&index| hosts[index].capacity_is_lower_bound);
                let compared_at = censored
                    .then(|| {
                        common_load(
                            members
                                .iter()
                                .flat_map(|&index| by_host[index].1.iter().copied()),
                            series,
                        )
                    })
                    .flatten();
                let value = |index: usize| -> Option<f64> {
                    match compared_at {
                        Some(workers) => {
                            let at: Vec<f64> = by_host[index]
                                .1
                                .iter()
                                .filter_map(|&run| {
                                    series[run].level(workers).map(|level| level.capacity)
                                })
                                .collect();
                            median_of(&at)
                        }
                        None if censored => None,
                        None => hosts[index].capacity,
                    }
                };
                let values: Vec<(usize, f64)> = members
                    .iter()
                    .filter_map(|&index| Some((index, value(index)?)))
                    .filter(|(_, value)| value.is_finite() && *value > 0.0)
                    .collect();
                let all: Vec<f64> = values.iter().map(|&(_, value)| value).collect();
                let median_capacity = median_of(&all).unwrap_or(0.0);
                // Each host against the median of the others.
                let ratios = to_the_others(&values);
                let deviations: Vec<f64> = ratios
                    .iter()
                    .map(|(_, ratio)| (ratio - 1.0).abs())
                    .collect();
                let jitters: Vec<f64> = members
                    .iter()
                    .filter_map(|&index| jitter_of(index))
                    .collect();
                let spread = 3.0 * 1.4826 * median_of(&deviations).unwrap_or(0.0);
                let noise = 2.0 * std::f64::consts::SQRT_2 * median_of(&jitters).unwrap_or(0.0);
                let threshold = spread.max(noise).max(FLOOR);
                let outliers = outlier_call(ratios.len(), threshold);
                mark_hosts(hosts, &members, &values, &ratios, |ratio| {
                    outliers == OutlierCall::Named && (ratio - 1.0).abs() > threshold
                });
                for &index in &members {
                    hosts[index].group = group;
                }
                SiblingGroup {
                    cpu_model,
                    physical_cores: physical,
                    logical_cpus: logical,
                    job,
                    hosts: members
                        .iter()
                        .map(|&index| hosts[index].host.clone())
                        .collect(),
                    median_capacity,
                    compared_at,
                    threshold,
                    threshold_is_floor: spread.max(noise) < FLOOR,
                    outliers,
                }
            },
        )
        .collect()
}

/// Whether `count` values with this threshold can single one out.
fn outlier_call(count: usize, threshold: f64) -> OutlierCall {
    if count < MIN_SIBLINGS_FOR_OUTLIERS {
        OutlierCall::TooFew
    } else if threshold > MAX_THRESHOLD {
        OutlierCall::TooNoisy
    } else {
        OutlierCall::Named
    }
}

/// The largest worker count that every one of the runs measured.
fn common_load(runs: impl Iterator<Item = usize>, series: &[SeriesAnalysis]) -> Option<usize> {
    runs.map(|run| {
        series[run]
            .levels
            .iter()
            .map(|level| level.workers)
            .collect::<std::collections::BTreeSet<usize>>()
    })
    .reduce(|shared, workers| shared.intersection(&workers).copied().collect())
    .and_then(|shared| shared.last().copied())
}

fn history(host: &str, runs: &[usize], series: &[SeriesAnalysis]) -> HostHistory {
    let mut ordered: Vec<usize> = runs.to_vec();
    ordered.sort_by(|&a, &b| {
        let start = |run: usize| series[run].series.provenance.started_at.clone();
        start(a).cmp(&start(b))
    });
    let capacities: Vec<f64> = ordered
        .iter()
        .filter_map(|&run| capacity(&series[run]))
        .collect();
    let median_capacity = median_of(&capacities).unwrap_or(0.0);
    let deviations: Vec<f64> = capacities
        .iter()
        .map(|capacity| (capacity / median_capacity - 1.0).abs())
        .collect();
    let jitters: Vec<f64> = ordered
        .iter()
        .filter_map(|&run| series[run].noise.as_ref().map(|noise| noise.jitter))
        .collect();
    let threshold = (3.0 * 1.4826 * median_of(&deviations).unwrap_or(0.0))
        .max(2.0 * std::f64::consts::SQRT_2 * median_of(&jitters).unwrap_or(0.0))
        .max(FLOOR);
    let outliers = outlier_call(capacities.len(), threshold);
    let runs: Vec<HistoryRun> = ordered
        .iter()
        .map(|&run| {
            let analysed = &series[run];
            let capacity = capacity(analysed);
            let ratio = capacity
                .filter(|_| median_capacity > 0.0)
                .map(|capacity| capacity / median_capacity);
            HistoryRun {
                series: analysed.name().to_string(),
                started_at: analysed.series.provenance.started_at.clone(),
                capacity,
                single_thread_speed: single_thread(analysed).map(|(speed, _)| speed),
                steal_pct: analysed
                    .levels
                    .iter()
                    .filter_map(|level| level.steal_pct)
                    .reduce(f64::max),
                capacity_vs_history: ratio,
                departs: outliers == OutlierCall::Named
                    && ratio.is_some_and(|ratio| (ratio - 1.0).abs() > threshold),
            }
        })
        .collect();
    HostHistory {
        host: host.to_string(),
        levels: history_levels(&ordered, series),
        runs,
        median_capacity,
        threshold,
        outliers,
    }
}

/// Per worker count over the runs that measured it: median and range of capacity, median
/// on-CPU fraction and median speedup against the median first level.
fn history_levels(runs: &[usize], series: &[SeriesAnalysis]) -> Vec<HistoryLevel> {
    let mut workers: Vec<usize> = runs
        .iter()
        .flat_map(|&run| series[run].levels.iter().map(|level| level.workers))
        .collect();
    workers.sort_unstable();
    workers.dedup();
    let at = |count: usize| -> Vec<&super::model::LevelFigures> {
        runs.iter()
            .filter_map(|&run| series[run].level(count))
            .collect()
    };
    let Some(&first) = workers.first() else {
        return Vec::new();
    };
    let base: Vec<f64> = at(first).iter().map(|level| level.capacity).collect();
    let base = median(&base);
    workers
        .iter()
        .map(|&count| {
            let levels = at(count);
            let capacities: Vec<f64> = levels.iter().map(|level| level.capacity).collect();
            let cpu: Vec<f64> = levels
                .iter()
                .filter_map(|level| level.cpu_fraction)
                .collect();
            let capacity_median = median(&capacities);
            HistoryLevel {
                workers: count,
                runs: levels.len(),
                capacity_median,
                capacity_min: capacities.iter().copied().fold(f64::MAX, f64::min),
                capacity_max: capacities.iter().copied().fold(f64::MIN, f64::max),
                cpu_fraction_median: (!cpu.is_empty()).then(|| median(&cpu)),
                speedup_median: if base > 0.0 {
                    capacity_median / base * first as f64
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// The fleet in sentences: each outlier against its siblings, each run that departs from its
/// host's own history.
pub(crate) fn fleet_findings(fleet: &Fleet) -> Vec<String> {
    let mut sentences = Vec::new();
    for host in fleet.hosts.iter().filter(|host| host.outlier) {
        let group = &fleet.groups[host.group];
        let Some(ratio) = host.capacity_vs_group else {
            continue;
        };
        let cpu = match (&group.cpu_model, group.physical_cores, group.logical_cpus) {
            (Some(model), Some(physical), Some(logical)) => {
                format!(" with the same CPU ({model}, {physical} cores, {logical} threads)")
            }
            _ => String::new(),
        };
        let at = match group.compared_at {
            Some(1) => " (at 1 worker, the largest load all of them measured)".to_string(),
            Some(workers) => format!(
                " (at {workers} workers, the largest load all of them measured; some were still rising)"
            ),
            None => String::new(),
        };
        let figure = if group.compared_at == Some(1) {
            "single-thread speed"
        } else {
            "capacity"
        };
        sentences.push(format!(
            "{} has {:.0}% {} {figure} than the median of its {} siblings{cpu}{at} ({}).",
            host.host,
            100.0 * (ratio - 1.0).abs(),
            if ratio < 1.0 { "less" } else { "more" },
            group.hosts.len() - 1,
            group.threshold_text(),
        ));
    }
    for group in fleet
        .groups
        .iter()
        .filter(|group| group.outliers == OutlierCall::TooNoisy)
    {
        sentences.push(format!(
            "{}: {}, so no host is singled out ({} of {} hosts).",
            group.hosts.join(", "),
            group.threshold_text(),
            group.figure_name(),
            group.hosts.len()
        ));
    }
    for history in &fleet.histories {
        for run in history.runs.iter().filter(|run| run.departs) {
            let Some(ratio) = run.capacity_vs_history else {
                continue;
            };
            sentences.push(format!(
                "{}: the run started {} delivered {:.0}% {} capacity than the host's median over {} runs ({}){}.",
                history.host,
                run.started_at.as_deref().unwrap_or(&run.series),
                100.0 * (ratio - 1.0).abs(),
                if ratio < 1.0 { "less" } else { "more" },
                history.runs.len(),
                history.threshold_text(),
                run.steal_pct
                    .filter(|steal| *steal > 2.0)
                    .map_or_else(String::new, |steal| format!(", with steal up to {steal:.0}%"))
            ));
        }
    }
    sentences
}
