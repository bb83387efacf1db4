//! The words a report uses that a reader new to scalability testing may not know, each in
//! one plain sentence: the terms of the tables a report always has, and those of its
//! findings and warnings when they appear there.

use crate::analysis::model::Analysis;

/// (term, meaning, a word whose presence in the findings, warnings or fleet brings it in;
/// None: always, as the series and fits tables use it).
const TERMS: &[(&str, &str, Option<&str>)] = &[
    (
        "P/L",
        "physical cores / logical CPUs (hardware threads); with SMT, L is usually twice P.",
        None,
    ),
    (
        "speed per worker",
        "what one worker achieves per unit of time: flat while each worker has a core of its own.",
        None,
    ),
    (
        "capacity",
        "the throughput of all workers together at a load level.",
        None,
    ),
    (
        "speedup, efficiency",
        "capacity over capacity at one worker, and speedup over the workers: 1 is linear scaling.",
        None,
    ),
    (
        "knee",
        "the last load level before the time per unit of work bends upward: usually the physical core count.",
        None,
    ),
    (
        "droop",
        "how much speed per worker changed from the first level to the knee (negative: slower).",
        None,
    ),
    (
        "saturation, plateau",
        "where capacity stops rising within the noise of its largest value.",
        None,
    ),
    (
        "still rising",
        "capacity grew beyond its uncertainty at the last levels measured: the plateau lies beyond, and capacities are lower bounds.",
        Some("still rising"),
    ),
    (
        "SMT yield",
        "capacity at L over capacity at P: what the second hardware thread of each core adds.",
        None,
    ),
    (
        "sigma",
        "Amdahl's and the USL's serial fraction: the share of work that does not run in parallel (contention).",
        None,
    ),
    (
        "kappa",
        "the USL's coherency cost: work that grows with every pair of workers, which makes capacity fall past a peak.",
        Some("kappa"),
    ),
    (
        "±",
        "a 95% interval: from the batches of each level (Student's t) and the level-to-level noise.",
        Some("±"),
    ),
    (
        "p99",
        "the response time 99 of 100 statements (or jobs) were faster than.",
        Some("p99"),
    ),
    (
        "LIO, PIO",
        "logical reads (blocks visited in the buffer cache) and physical reads (blocks read from storage), as SLOB counts them.",
        Some("LIO"),
    ),
    (
        "nodes",
        "the instances of a cluster that ran sessions; a server replaces N of them when its capacity is N nodes' share of the cluster's.",
        Some("nodes"),
    ),
    (
        "siblings",
        "the other hosts of a fleet with the same CPU, cores and job: a host is compared with their median.",
        Some("sibling"),
    ),
];

/// The terms this report uses.
pub(crate) fn glossary(analysis: &Analysis) -> Vec<(&'static str, &'static str)> {
    let said = analysis
        .findings
        .iter()
        .chain(&analysis.warnings)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    let fleet = analysis.fleet.is_some();
    TERMS
        .iter()
        .filter(|(_, _, needle)| match needle {
            None => true,
            Some("sibling") => fleet,
            Some(needle) => said.contains(needle),
        })
        .map(|(term, meaning, _)| (*term, *meaning))
        .collect()
}
