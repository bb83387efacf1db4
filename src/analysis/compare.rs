//! Side-by-side ratios of series that ran the same job: per-worker speed and capacity at every
//! load both measured, summarised over the low-load and high-load bands, single-thread speed
//! from a robust baseline, capacity at the saturation plateau, per physical core and per unit
//! of cost, and a ranking.

use super::model::{
    BandRatio, Comparison, ComparisonRow, LevelFigures, LoadRatio, NodeEquivalence, SeriesAnalysis,
    Versus,
};
use super::noise::band;
use crate::stats::median;

/// Levels whose median is the reference of the single-thread baseline.
const BASELINE_WINDOW: usize = 5;
/// A series' own noise where it has no jitter figure: half the default band.
const QUIET_NOISE: f64 = 0.01;

pub(crate) fn compare(group: &[&SeriesAnalysis]) -> Comparison {
    let own: Vec<Own> = group.iter().map(|series| own_figures(series)).collect();
    let rows: Vec<ComparisonRow> = group
        .iter()
        .zip(&own)
        .enumerate()
        .map(|(index, (series, figures))| {
            let mut against_baseline = versus((series, figures), (group[0], &own[0]));
            if index == 0 {
                // The baseline against itself: ratios of 1, nothing to list.
                against_baseline.by_load.clear();
                against_baseline.low_load = None;
                against_baseline.high_load = None;
                against_baseline.common_load = None;
            }
            let ratio = |value: Option<f64>, base: Option<f64>| match (value, base) {
                (Some(value), Some(base)) if base > 0.0 => Some(value / base),
                _ => None,
            };
            ComparisonRow {
                name: series.name().to_string(),
                single_thread_speed: figures.single_thread.as_ref().map(|(speed, _)| *speed),
                single_thread_workers: figures
                    .single_thread
                    .as_ref()
                    .map_or_else(Vec::new, |(_, workers)| workers.clone()),
                saturation_workers: figures.saturation_workers,
                capacity_at_saturation: figures.capacity,
                saturation_censored: figures.censored,
                saturation_untold: figures.untold,
                physical_cores: series.series.physical_cores,
                logical_cpus: series.series.logical_cpus,
                capacity_per_core: figures.per_core,
                cost: series.series.cost,
                capacity_per_cost: figures.per_cost,
                per_core_ratio: ratio(figures.per_core, own[0].per_core),
                per_cost_ratio: ratio(figures.per_cost, own[0].per_cost),
                versus: against_baseline,
            }
        })
        .collect();
    let ranked = rank(group, &rows);
    // Without any estimate, the first series given leads the speed comparison.
    let leader = ranked.first().copied().unwrap_or(0);
    Comparison {
        p99_at_loads: super::latency::p99_at_common_loads(
            &group
                .iter()
                .map(|series| &series.series)
                .collect::<Vec<_>>(),
        ),
        unit: group[0].capacity_unit.clone(),
        baseline: rows[0].name.clone(),
        ranking: ranked
            .iter()
            .map(|&index| rows[index].name.clone())
            .collect(),
        leader_against: (0..group.len())
            .filter(|&other| other != leader)
            .map(|other| versus((group[leader], &own[leader]), (group[other], &own[other])))
            .collect(),
        rows,
    }
}

/// Indices by plateau capacity, largest first, or, when a plateau is only a lower bound, by
/// capacity at the largest load every series measured (if there is one).
fn rank(group: &[&SeriesAnalysis], rows: &[ComparisonRow]) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..rows.len())
        .filter(|&index| rows[index].capacity_at_saturation.is_some())
        .collect();
    let common = group
        .iter()
        .map(|series| {
            series
                .levels
                .iter()
                .map(|level| level.workers)
                .collect::<Vec<_>>()
        })
        .reduce(|mut shared, workers| {
            shared.retain(|n| workers.binary_search(n).is_ok());
            shared
        })
        .and_then(|shared| shared.last().copied());
    let key: Vec<f64> = match common {
        Some(load)
            if rows
                .iter()
                .any(|row| row.saturation_censored || row.saturation_untold) =>
        {
            group
                .iter()
                .map(|series| series.level(load).map_or(0.0, |level| level.capacity))
                .collect()
        }
        _ => rows
            .iter()
            .map(|row| row.capacity_at_saturation.unwrap_or(0.0))
            .collect(),
    };
    ranked.sort_by(|&a, &b| key[b].total_cmp(&key[a]));
    ranked
}

/// A series' own figures that comparisons divide.
struct Own {
    single_thread: Option<(f64, Vec<usize>)>,
    saturation_workers: Option<usize>,
    capacity: Option<f64>,
    censored: bool,
    /// Where the plateau starts cannot be told from the batches (`Saturation::untold`).
    untold: bool,
    per_core: Option<f64>,
    per_cost: Option<f64>,
}

fn own_figures(series: &SeriesAnalysis) -> Own {
    let (saturation_workers, capacity, censored, untold) = series
        .saturation
        .as_ref()
        .filter(|saturation| saturation.capacity.is_finite() && saturation.capacity > 0.0)
        .map_or((None, None, false, false), |saturation| {
            (
                Some(saturation.workers),
                Some(saturation.capacity),
                saturation.censored,
                saturation.untold.is_some() && !saturation.censored,
            )
        });
    Own {
        // Single-thread speed means one worker alone: a series that starts higher has none.
        single_thread: single_thread(series).filter(|_| {
            series
                .levels
                .first()
                .is_some_and(|level| level.workers == 1)
        }),
        saturation_workers,
        capacity,
        censored,
        untold,
        per_core: capacity
            .zip(series.series.physical_cores)
            .map(|(capacity, cores)| capacity / cores as f64),
        per_cost: capacity
            .zip(series.series.cost.filter(|cost| *cost > 0.0))
            .map(|(capacity, cost)| capacity / cost),
    }
}

/// `series` against `other`.
fn versus(
    (series, own): (&SeriesAnalysis, &Own),
    (other, theirs): (&SeriesAnalysis, &Own),
) -> Versus {
    let by_load = by_load(series, other);
    let cores = |series: &SeriesAnalysis| series.series.physical_cores;
    let threads = |series: &SeriesAnalysis| series.series.logical_cpus;
    let low_load = cores(series)
        .zip(cores(other))
        .and_then(|(a, b)| summarise(&by_load, 1, a.min(b)));
    let high_load = cores(series)
        .zip(cores(other))
        .zip(threads(series).zip(threads(other)))
        .and_then(|((pa, pb), (la, lb))| summarise(&by_load, pa.max(pb), la.min(lb)));
    let single_thread_ratio = match (&own.single_thread, &theirs.single_thread) {
        (Some((mine, _)), Some((theirs, _))) if *theirs > 0.0 => Some(mine / theirs),
        _ => None,
    };
    let capacity_ratio = own
        .capacity
        .zip(theirs.capacity)
        .map(|(mine, theirs)| mine / theirs);
    let margin = 2.0 * noise(series).hypot(noise(other));
    let within = |ratio: f64| ratio.ln().abs() <= margin;
    let (similar_speed, speed_crosses) = match (&low_load, single_thread_ratio) {
        (Some(band), _) if within(band.speed_ratio) => {
            let ends = within(band.speed_ratio_min) && within(band.speed_ratio_max);
            (ends, !ends)
        }
        (Some(_), _) => (false, false),
        (None, Some(single)) => (within(single), false),
        (None, None) => (false, false),
    };
    // A plateau not reached, or not placed: capacities compare at the largest common load.
    let censored = own.censored || theirs.censored || own.untold || theirs.untold;
    let common_load = censored.then(|| by_load.last().cloned()).flatten();
    let node_equivalence = node_equivalence(series, other, capacity_ratio, common_load.as_ref());
    // Each side's capacity as the ratio takes it: at the largest common load when either
    // was still rising, else at its plateau.
    let taken_at = |own: &Own| {
        common_load
            .as_ref()
            .map(|common| common.workers)
            .or(own.saturation_workers)
    };
    let capacity_ratio_uncertainty = taken_at(own)
        .and_then(|workers| series.capacity_uncertainty(workers))
        .zip(taken_at(theirs).and_then(|workers| other.capacity_uncertainty(workers)))
        .map(|(mine, theirs)| mine.hypot(theirs));
    Versus {
        series: series.name().to_string(),
        against: other.name().to_string(),
        similar_speed,
        speed_crosses,
        similar_capacity: !censored && capacity_ratio.is_some_and(within),
        noise_margin: margin,
        // About two standard deviations: a 95% interval, as the capacity ratio's.
        ratio_uncertainty: 2.0 * noise(series).hypot(noise(other)),
        capacity_ratio_uncertainty,
        common_load,
        node_equivalence,
        single_thread_ratio,
        capacity_ratio,
        low_load,
        high_load,
        by_load,
    }
}

/// A single server against a cluster, either way round: the server's capacity in the
/// cluster's nodes (at saturation, else at the largest load both measured); None unless
/// exactly one of the two is a cluster.
fn node_equivalence(
    series: &SeriesAnalysis,
    other: &SeriesAnalysis,
    capacity_ratio: Option<f64>,
    common_load: Option<&LoadRatio>,
) -> Option<NodeEquivalence> {
    let (ratio, at_workers) = match common_load {
        Some(common) => (common.capacity_ratio, Some(common.workers)),
        None => (capacity_ratio?, None),
    };
    let (server, cluster, server_over_cluster) = match (series.series.nodes, other.series.nodes) {
        (None, Some(_)) => (series, other, ratio),
        (Some(_), None) if ratio > 0.0 => (other, series, 1.0 / ratio),
        _ => return None,
    };
    let nodes = cluster.series.nodes?;
    let at_p99 = equal_p99(server, cluster, nodes);
    Some(NodeEquivalence {
        server: server.name().to_string(),
        cluster: cluster.name().to_string(),
        nodes,
        equivalent_nodes: server_over_cluster * nodes as f64,
        at_workers,
        cluster_p99_ms: at_p99.map(|(p99, _)| p99),
        equivalent_nodes_at_p99: at_p99.map(|(_, equivalent)| equivalent),
    })
    .filter(|equivalence| equivalence.equivalent_nodes.is_finite())
}

/// The cluster's statement p99 at its saturation level, and the server's largest capacity
/// at a p99 no worse than that, in the cluster's nodes (one node: the cluster's capacity at
/// that level over its nodes).
fn equal_p99(
    server: &SeriesAnalysis,
    cluster: &SeriesAnalysis,
    nodes: usize,
) -> Option<(f64, f64)> {
    let p99 = |level: &LevelFigures| {
        level
            .latency
            .as_ref()
            .filter(|latency| latency.is_statement() && latency.response.count > 0)
            .map(|latency| latency.response.p99_ms)
    };
    let at = cluster.saturation.as_ref()?.workers;
    let reference = cluster.level(at)?;
    let limit = p99(reference)?;
    let best = server
        .levels
        .iter()
        .filter(|level| p99(level).is_some_and(|p99| p99 <= limit))
        .map(|level| level.capacity)
        .fold(None, |best: Option<f64>, capacity| {
            Some(best.map_or(capacity, |best| best.max(capacity)))
        })?;
    let per_node = reference.capacity / nodes as f64;
    (per_node > 0.0).then(|| (limit, best / per_node))
}

/// The level-to-level noise of a series: its jitter, else 1%.
fn noise(series: &SeriesAnalysis) -> f64 {
    series
        .noise
        .as_ref()
        .map_or(QUIET_NOISE, |noise| noise.jitter.max(QUIET_NOISE / 2.0))
}

/// Ratios at every worker count both measured: one pass over the two sorted level lists.
fn by_load(series: &SeriesAnalysis, base: &SeriesAnalysis) -> Vec<LoadRatio> {
    let mut ratios = Vec::new();
    let mut others = base.levels.iter().peekable();
    for level in &series.levels {
        while others
            .peek()
            .is_some_and(|other| other.workers < level.workers)
        {
            others.next();
        }
        if let Some(other) = others.peek().filter(|other| other.workers == level.workers)
            && other.speed > 0.0
            && other.capacity > 0.0
        {
            ratios.push(LoadRatio {
                workers: level.workers,
                speed_ratio: level.speed / other.speed,
                capacity_ratio: level.capacity / other.capacity,
            });
        }
    }
    ratios
}

/// The median speed ratio over the levels from `from` to `to` workers, with its spread; none
/// for a band of fewer than two levels.
fn summarise(by_load: &[LoadRatio], from: usize, to: usize) -> Option<BandRatio> {
    let ratios: Vec<&LoadRatio> = by_load
        .iter()
        .filter(|ratio| (from..=to).contains(&ratio.workers))
        .collect();
    if ratios.len() < 2 {
        return None;
    }
    let speeds: Vec<f64> = ratios.iter().map(|ratio| ratio.speed_ratio).collect();
    let lowest = ratios
        .iter()
        .min_by(|a, b| a.speed_ratio.total_cmp(&b.speed_ratio))?;
    let highest = ratios
        .iter()
        .max_by(|a, b| a.speed_ratio.total_cmp(&b.speed_ratio))?;
    Some(BandRatio {
        from_workers: ratios.first()?.workers,
        to_workers: ratios.last()?.workers,
        levels: ratios.len(),
        speed_ratio: median(&speeds),
        speed_ratio_min: lowest.speed_ratio,
        speed_ratio_max: highest.speed_ratio,
        min_workers: lowest.workers,
        max_workers: highest.workers,
    })
}

/// The robust single-thread baseline: the median per-worker speed of the levels, from the
/// first, that stay within the noise band of the median of the first five (levels up to the
/// physical core count only). Within those five a level outside the band is passed over as
/// an outlier; after them the first one outside ends the run. When fewer than half of the
/// first five are within the band, the start is not flat and the first level stands alone.
pub(crate) fn single_thread(series: &SeriesAnalysis) -> Option<(f64, Vec<usize>)> {
    let first = series.levels.first()?;
    let jitter = series.noise.as_ref().map(|noise| noise.jitter);
    let width = band(first.cv, jitter);
    let limit = series
        .series
        .physical_cores
        .unwrap_or(usize::MAX)
        .max(first.workers);
    let start: Vec<&LevelFigures> = series
        .levels
        .iter()
        .take_while(|level| level.workers <= limit)
        .collect();
    let window = &start[..start.len().min(BASELINE_WINDOW)];
    let reference = median(&window.iter().map(|level| level.speed).collect::<Vec<_>>());
    let within = |level: &LevelFigures| (level.speed / reference - 1.0).abs() <= width;
    if window.len() < 3 || 2 * window.iter().filter(|level| within(level)).count() <= window.len() {
        return Some((first.speed, vec![first.workers]));
    }
    let mut chosen: Vec<&LevelFigures> = Vec::new();
    for (index, level) in start.iter().enumerate() {
        if within(level) {
            chosen.push(level);
        } else if index >= window.len() {
            break;
        }
    }
    let speeds: Vec<f64> = chosen.iter().map(|level| level.speed).collect();
    Some((
        median(&speeds),
        chosen.iter().map(|level| level.workers).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use crate::analysis::series::Series;
    use crate::analysis::study::analyse;
    use crate::analysis::synthetic::job_time_series;
    use crate::latency::{Latency, Percentiles};

    /// Gives every level a statement p99 of `p99(workers)` ms.
    fn with_p99(series: &mut Series, p99: impl Fn(f64) -> f64) {
        for point in &mut series.points {
            let ms = p99(point.workers as f64);
            point.latency = Some(Box::new(Latency::closed(
                "statement",
                Percentiles {
                    count: 10_000,
                    mean_ms: ms / 2.0,
                    p50_ms: ms / 2.0,
                    p90_ms: ms * 0.8,
                    p95_ms: ms * 0.9,
                    p99_ms: ms,
                    p999_ms: ms * 1.5,
                    max_ms: ms * 2.0,
                },
            )));
        }
    }

    /// CERN's 2007 comparison with known answers: a server whose plateau is 600 jobs/min
    /// against a 4-node cluster whose plateau is 400 (100 a node) is worth 6 of its nodes at
    /// saturation, but only 4 at the cluster's p99 (the server's p99 climbs from 3 workers),
    /// whichever of the two is given first; two single servers have no such figure.
    #[test]
    fn a_server_is_counted_in_a_clusters_nodes() {
        let plateau = |top: f64| move |n: f64| (100.0 * n).min(top);
        let mut server = job_time_series(plateau(600.0), 16, 0.004, 1, None);
        server.name = "new-server".to_string();
        let mut cluster = job_time_series(plateau(400.0), 16, 0.004, 2, None);
        cluster.name = "rac".to_string();
        cluster.nodes = Some(4);
        // The cluster's statement p99 is 1.5 ms up to 8 workers; the server's reaches 1.5 ms
        // at 4 workers (400 jobs/min) and climbs on.
        with_p99(&mut server, |n| 1.0 + 0.5 * (n - 3.0).max(0.0));
        with_p99(&mut cluster, |n| 1.5 + 0.5 * (n - 8.0).max(0.0));
        for order in [
            vec![server.clone(), cluster.clone()],
            vec![cluster.clone(), server.clone()],
        ] {
            let analysis = analyse(order);
            let equivalence = analysis.comparisons[0]
                .leader_against
                .iter()
                .find_map(|versus| versus.node_equivalence.clone())
                .expect("a server against a cluster");
            assert_eq!(
                (equivalence.server.as_str(), equivalence.cluster.as_str()),
                ("new-server", "rac")
            );
            assert_eq!(equivalence.nodes, 4);
            assert!(
                (equivalence.equivalent_nodes - 6.0).abs() < 0.1,
                "{equivalence:?}"
            );
            let at_p99 = equivalence.equivalent_nodes_at_p99.unwrap();
            assert!((at_p99 - 4.0).abs() < 0.1, "{equivalence:?}");
            assert_eq!(equivalence.cluster_p99_ms, Some(1.5));
            // The answer, once and first.
            let answer = analysis.answer.as_ref().expect("an answer");
            assert_eq!(analysis.findings[0], answer.sentence);
            assert!(
                answer.sentence.starts_with("new-server replaces 6.0")
                    && answer
                        .sentence
                        .contains(" of rac's 4 nodes at saturation: "),
                "{answer:?}"
            );
            let uncertainty = answer.uncertainty.expect("measured noise");
            assert!(uncertainty > 0.0 && uncertainty < 0.6, "{answer:?}");
            assert_eq!(
                analysis
                    .findings
                    .iter()
                    .filter(|finding| finding.contains("nodes"))
                    .count(),
                1,
                "{:?}",
                analysis.findings
            );
        }
        let mut other = server.clone();
        other.name = "old-server".to_string();
        let analysis = analyse(vec![server, other]);
        assert!(
            analysis.comparisons[0]
                .leader_against
                .iter()
                .all(|versus| versus.node_equivalence.is_none())
        );
    }
}
