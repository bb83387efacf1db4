//! The levels of a run in the order they run: each worker count in a closed loop, or at an
//! offered rate; a campaign part's levels are its share of them (`campaign`).

use anyhow::Result;

use crate::latency::OfferedRate;

/// One level of the run: a worker count, in a closed loop or at an offered rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LevelStep {
    /// This run's sessions (a campaign part's share).
    pub workers: usize,
    pub offered: Option<OfferedRate>,
    /// A campaign part's level: the sessions of all its parts.
    pub campaign_workers: Option<usize>,
}

impl LevelStep {
    /// The level's rate in statements per second (None: a closed loop). A share takes the
    /// closed-loop level just measured at the same worker count (`closed_rate`: its workers
    /// and statements per second).
    pub(crate) fn rate_per_s(&self, closed_rate: Option<(usize, f64)>) -> Result<Option<f64>> {
        match self.offered {
            None => Ok(None),
            Some(OfferedRate::PerSecond(rate)) => Ok(Some(rate)),
            Some(OfferedRate::Share(share)) => match closed_rate {
                Some((workers, rate)) if workers == self.workers && share * rate >= 0.01 => {
                    Ok(Some(share * rate))
                }
                _ => anyhow::bail!(
                    "no closed-loop rate to take {} of: the closed-loop level before it answered too few statements",
                    crate::latency::share_text(share)
                ),
            },
        }
    }
}

/// The levels in the order they run: each worker count closed-loop, or at each `--rate`
/// step, after a closed-loop level when a step is a share of that level's throughput.
pub(crate) fn level_steps(plan: &[usize], rates: &[OfferedRate]) -> Vec<LevelStep> {
    let closed_first = rates.is_empty()
        || rates
            .iter()
            .any(|rate| matches!(rate, OfferedRate::Share(_)));
    plan.iter()
        .flat_map(|&workers| {
            let closed = closed_first.then_some(LevelStep {
                workers,
                offered: None,
                campaign_workers: None,
            });
            closed
                .into_iter()
                .chain(rates.iter().map(move |&rate| LevelStep {
                    workers,
                    offered: Some(rate),
                    campaign_workers: None,
                }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_steps_follow_a_closed_level_when_they_are_shares() {
        let step = |workers, offered| LevelStep {
            workers,
            offered,
            campaign_workers: None,
        };
        assert_eq!(
            level_steps(&[1, 2], &[]),
            vec![step(1, None), step(2, None)]
        );
        let fixed = [OfferedRate::PerSecond(100.0), OfferedRate::PerSecond(200.0)];
        assert_eq!(
            level_steps(&[1, 2], &fixed),
            vec![
                step(1, Some(fixed[0])),
                step(1, Some(fixed[1])),
                step(2, Some(fixed[0])),
                step(2, Some(fixed[1]))
            ]
        );
        // A share takes the closed-loop rate just measured at its own worker count.
        let half = step(4, Some(OfferedRate::Share(0.5)));
        assert_eq!(half.rate_per_s(Some((4, 1000.0))).unwrap(), Some(500.0));
        assert!(half.rate_per_s(Some((2, 1000.0))).is_err());
        assert!(half.rate_per_s(None).is_err());
        assert_eq!(step(4, None).rate_per_s(None).unwrap(), None);
        let mixed = [OfferedRate::Share(0.5), OfferedRate::PerSecond(100.0)];
        assert_eq!(
            level_steps(&[4], &mixed),
            vec![
                step(4, None),
                step(4, Some(mixed[0])),
                step(4, Some(mixed[1]))
            ]
        );
    }
}
