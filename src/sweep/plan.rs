//! Which worker counts to measure: one level, 1..N, a list, or an automatic plan that
//! brackets the physical-core and logical-CPU counts.

use std::collections::BTreeSet;
use std::str::FromStr;

use crate::error::UsageError;
use crate::host::Topology;

/// Worker counts above this many times the logical CPUs need `--force`.
pub(crate) const OVERSUBSCRIPTION_LIMIT: usize = 8;

/// How the user asked for load levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoadLevels {
    /// One level with N workers.
    Single(usize),
    /// Every level from 1 to N (test_cpu_parallel's --full).
    Full(usize),
    /// An explicit list.
    List(Vec<usize>),
    /// 1, 2, powers of two, P-1..P+1, L-1..L+1 and 1.5 L.
    Auto,
}

/// The value of `--sweep`: "auto" or a comma-separated list of worker counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepSpec {
    Auto,
    List(Vec<usize>),
}

impl FromStr for SweepSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        let counts = text
            .split(',')
            .map(|part| {
                let part = part.trim();
                if part.is_empty() || !part.bytes().all(|byte| byte.is_ascii_digit()) {
                    return Err(format!(
                        "'{part}' is not a worker count: use a list such as 1,2,4,8 or 'auto'"
                    ));
                }
                crate::values::parse_workers(part).map(|workers| workers.0)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::List(counts))
    }
}

/// Expands the request into the ordered, deduplicated list of worker counts to measure,
/// refusing absurd counts unless `force` is set.
pub(crate) fn plan(
    levels: &LoadLevels,
    topology: &Topology,
    force: bool,
) -> Result<Vec<usize>, UsageError> {
    let counts: Vec<usize> = match levels {
        LoadLevels::Single(workers) => vec![*workers],
        LoadLevels::Full(workers) => (1..=*workers).collect(),
        LoadLevels::List(list) => list.clone(),
        LoadLevels::Auto => auto_plan(topology.physical_cores, topology.logical_cpus),
    };
    if counts.contains(&0) {
        return Err(UsageError::new(
            "0 workers is not a load level: use 1 or more",
        ));
    }
    let limit = OVERSUBSCRIPTION_LIMIT * topology.logical_cpus.max(1);
    if let Some(too_many) = counts
        .iter()
        .find(|&&count| count > limit)
        .filter(|_| !force)
    {
        return Err(UsageError::new(format!(
            "{too_many} workers is more than {OVERSUBSCRIPTION_LIMIT}x the {} logical CPUs of this host: lower it or add --force",
            topology.logical_cpus
        )));
    }
    let unique: BTreeSet<usize> = counts.into_iter().collect();
    Ok(unique.into_iter().collect())
}

/// The automatic plan for P physical cores and L logical CPUs.
pub(crate) fn auto_plan(physical: usize, logical: usize) -> Vec<usize> {
    let physical = physical.max(1);
    let logical = logical.max(physical);
    let ceiling = (3 * logical).div_ceil(2);
    let powers = std::iter::successors(Some(1usize), |power| Some(power * 2))
        .take_while(|power| *power <= ceiling);
    let brackets = [
        1,
        2,
        physical - 1,
        physical,
        physical + 1,
        logical - 1,
        logical,
        logical + 1,
        ceiling,
    ];
    let plan: BTreeSet<usize> = powers
        .chain(brackets)
        .filter(|count| (1..=ceiling).contains(count))
        .collect();
    plan.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_plan_brackets_cores_and_threads() {
        // RAC52: 20 cores, 40 threads.
        assert_eq!(
            auto_plan(20, 40),
            vec![1, 2, 4, 8, 16, 19, 20, 21, 32, 39, 40, 41, 60]
        );
        // This 2-core VM without SMT.
        assert_eq!(auto_plan(2, 2), vec![1, 2, 3]);
        assert_eq!(auto_plan(1, 1), vec![1, 2]);
    }

    #[test]
    fn sweep_lists_parse_and_reject_zero() {
        assert_eq!(
            "1, 2,4".parse::<SweepSpec>(),
            Ok(SweepSpec::List(vec![1, 2, 4]))
        );
        assert_eq!("AUTO".parse::<SweepSpec>(), Ok(SweepSpec::Auto));
        assert!("1,0".parse::<SweepSpec>().is_err());
        assert!("1,x".parse::<SweepSpec>().is_err());
    }
}
