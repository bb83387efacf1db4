//! A cluster's level, instance by instance: each instance's sessions, statements, response
//! times and own counters (`levels[].instances[]` in the result), and whether the work was
//! shared as the sessions were.

use super::session::SessionTally;
use crate::db::cluster::Role;
use crate::latency::ResponseTimes;
pub use crate::result::workload::{InstanceFigures, InstanceRole};

/// What the workload read of one instance over the level.
pub(crate) struct InstanceReading {
    pub instance: String,
    pub role: Role,
    /// LIO and PIO over the level; None when its counters could not be read at both ends.
    pub blocks: Option<(f64, f64)>,
    pub db_cpu_s: Option<f64>,
    /// Why its counters could not be read.
    pub unread: Option<String>,
}

/// Each instance's figures from the sessions' tallies (`tally.instance` indexes `readings`),
/// and a warning for each instance whose share of the work departs from its share of the
/// sessions beyond what the sessions' own spread explains.
pub(crate) fn instance_figures(
    readings: Vec<InstanceReading>,
    tallies: &[SessionTally],
    elapsed_s: f64,
) -> (Vec<InstanceFigures>, Vec<String>) {
    let total_sessions = tallies.len().max(1) as f64;
    let total_statements: f64 = tallies.iter().map(|tally| tally.statements as f64).sum();
    let per = |count: f64, over: f64| if over > 0.0 { count / over } else { 0.0 };
    let spread = session_spread(tallies);
    let mut warnings = Vec::new();
    let figures: Vec<InstanceFigures> = readings
        .into_iter()
        .enumerate()
        .map(|(index, reading)| {
            let own: Vec<&SessionTally> = tallies
                .iter()
                .filter(|tally| tally.instance == index)
                .collect();
            let statements: f64 = own.iter().map(|tally| tally.statements as f64).sum();
            let mut response: Option<ResponseTimes> = None;
            for times in own.iter().filter_map(|tally| tally.response.as_ref()) {
                match response.as_mut() {
                    Some(merged) => merged.merge(times),
                    None => response = Some(times.clone()),
                }
            }
            let failures: Vec<&String> = own
                .iter()
                .filter_map(|tally| tally.failed.as_ref())
                .collect();
            let share_of_sessions = own.len() as f64 / total_sessions;
            let share_of_work = per(statements, total_statements);
            if let Some(unread) = &reading.unread {
                warnings.push(format!(
                    "{}'s counters could not be read ({unread}): the cluster's LIO leaves it out",
                    reading.instance
                ));
            }
            if let Some(first) = failures.first() {
                warnings.push(format!(
                    "{} of {} session(s) on {} ended early ({first}): its figures cover the time before; the other instances' stand",
                    failures.len(),
                    own.len(),
                    reading.instance
                ));
            } else if let Some(bound) = imbalance_bound(spread, own.len())
                && share_of_sessions > 0.0
                && (share_of_work / share_of_sessions - 1.0).abs() > bound
            {
                warnings.push(format!(
                    "{} ran {:.1}% of the statements with {:.1}% of the sessions: the instances did not share the work as they shared the sessions (beyond the sessions' own spread of {:.1}%)",
                    reading.instance,
                    100.0 * share_of_work,
                    100.0 * share_of_sessions,
                    100.0 * bound
                ));
            }
            InstanceFigures {
                instance: reading.instance,
                role: reading.role.into(),
                sessions: own.len(),
                statements,
                statements_per_s: per(statements, elapsed_s),
                db_lio: reading.blocks.map(|(lio, _)| lio),
                db_pio: reading.blocks.map(|(_, pio)| pio),
                db_lio_per_s: reading.blocks.map(|(lio, _)| per(lio, elapsed_s)),
                db_cpu_s: reading.db_cpu_s,
                latency: response.and_then(|times| times.percentiles()),
                share_of_sessions,
                share_of_work,
                failed: failures.first().map(|reason| (*reason).clone()),
                sessions_failed: (!failures.is_empty()).then_some(failures.len()),
            }
        })
        .collect();
    warnings.extend(stalls(&figures));
    (figures, warnings)
}

/// An answer this long is a stall, not a slow statement, when it is also far above the other
/// instances' p99.
const STALL_MS: f64 = 1000.0;
const STALL_OVER_OTHERS_P99: f64 = 10.0;

/// Each instance whose sessions waited a second or more for one answer, ten times the
/// others' p99 or more (none said when no other instance answered at all): named with how long (a replica stopped for 12 s stretched a 3 s level
/// to 14.2 s and was said only as an imbalance).
fn stalls(figures: &[InstanceFigures]) -> Vec<String> {
    figures
        .iter()
        .enumerate()
        .filter_map(|(index, instance)| {
            let longest = instance.latency.as_ref()?.max_ms;
            let others_p99 = figures
                .iter()
                .enumerate()
                .filter(|(other, _)| *other != index)
                .filter_map(|(_, other)| other.latency.as_ref().map(|latency| latency.p99_ms))
                .reduce(f64::max)?;
            (longest >= STALL_MS && longest >= STALL_OVER_OTHERS_P99 * others_p99).then(|| {
                format!(
                    "{} stalled: its sessions waited up to {} for one answer (the other instances' p99: {}); the level's figures include that wait",
                    instance.instance,
                    crate::format::duration_ms(longest),
                    crate::format::duration_ms(others_p99)
                )
            })
        })
        .collect()
}

/// The relative spread of the statements one session answers by chance: the sessions'
/// deviations from their own instance's mean (so an imbalance between instances is not taken
/// for noise), pooled, over the mean of all sessions.
fn session_spread(tallies: &[SessionTally]) -> Option<f64> {
    let instances = tallies.iter().map(|tally| tally.instance).max()? + 1;
    let mut sums = vec![(0.0, 0usize); instances];
    for tally in tallies {
        sums[tally.instance].0 += tally.statements as f64;
        sums[tally.instance].1 += 1;
    }
    let groups = sums.iter().filter(|(_, count)| *count > 0).count();
    if tallies.len() <= groups {
        return None;
    }
    let mean = sums.iter().map(|(sum, _)| sum).sum::<f64>() / tallies.len() as f64;
    if mean <= 0.0 {
        return None;
    }
    let squares: f64 = tallies
        .iter()
        .map(|tally| {
            let (sum, count) = sums[tally.instance];
            (tally.statements as f64 - sum / count as f64).powi(2)
        })
        .sum();
    Some((squares / (tallies.len() - groups) as f64).sqrt() / mean)
}

/// How far an instance of `sessions` sessions may depart from its share by chance: three
/// times the spread of a mean of that many sessions, and never under 5% (a share measured
/// over a level wanders by that much with no cause).
fn imbalance_bound(spread: Option<f64>, sessions: usize) -> Option<f64> {
    let spread = spread?;
    if sessions == 0 {
        return None;
    }
    Some((3.0 * spread / (sessions as f64).sqrt()).max(0.05))
}

impl From<Role> for InstanceRole {
    fn from(role: Role) -> Self {
        match role {
            Role::Primary => InstanceRole::Primary,
            Role::Replica => InstanceRole::Replica,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tally(instance: usize, statements: u64, millis: &[u64]) -> SessionTally {
        let mut times = ResponseTimes::default();
        for ms in millis {
            times.record(Duration::from_millis(*ms));
        }
        SessionTally {
            statements,
            instance,
            response: Some(times),
            ..SessionTally::default()
        }
    }

    fn reading(name: &str, role: Role, lio: f64) -> InstanceReading {
        InstanceReading {
            instance: name.to_string(),
            role,
            blocks: Some((lio, 0.0)),
            db_cpu_s: None,
            unread: None,
        }
    }

    #[test]
    fn each_instance_gets_its_own_sessions_counts_and_merged_response_times() {
        let tallies = [
            tally(0, 100, &[1, 1]),
            tally(1, 100, &[2, 2]),
            tally(0, 102, &[1, 9]),
            tally(1, 98, &[2, 2]),
        ];
        let (figures, warnings) = instance_figures(
            vec![
                reading("p", Role::Primary, 2020.0),
                reading("r", Role::Replica, 1980.0),
            ],
            &tallies,
            2.0,
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(figures[0].sessions, 2);
        assert_eq!(figures[0].statements, 202.0);
        assert_eq!(figures[0].statements_per_s, 101.0);
        assert_eq!(figures[0].db_lio_per_s, Some(1010.0));
        assert_eq!(figures[1].share_of_sessions, 0.5);
        assert_eq!(figures[1].share_of_work, 198.0 / 400.0);
        // Percentiles of the instance's merged histogram: its slowest is session 2's 9 ms.
        let latency = figures[0].latency.unwrap();
        assert_eq!(latency.count, 4);
        assert!((latency.max_ms - 9.0).abs() < 0.01, "{latency:?}");
        assert!((figures[1].latency.unwrap().max_ms - 2.0).abs() < 0.01);
    }

    #[test]
    fn an_instance_doing_less_than_its_share_is_said_and_a_failed_one_named() {
        // Even sessions within an instance, one instance at half the pace: far beyond the
        // sessions' spread.
        let tallies: Vec<SessionTally> = (0..8)
            .map(|session| tally(session % 2, if session % 2 == 0 { 1000 } else { 500 }, &[]))
            .collect();
        let readings = || {
            vec![
                reading("p", Role::Primary, 0.0),
                reading("slow", Role::Replica, 0.0),
            ]
        };
        let (_, warnings) = instance_figures(readings(), &tallies, 1.0);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[1].starts_with("slow ran 33.3% of the statements with 50.0% of the sessions")
        );
        // The same counts with noisy sessions everywhere: within the spread, nothing said.
        let noisy: Vec<SessionTally> = [1000, 400, 1100, 600, 300, 900, 1200, 500]
            .into_iter()
            .enumerate()
            .map(|(session, count)| tally(session % 2, count, &[]))
            .collect();
        let (_, warnings) = instance_figures(readings(), &noisy, 1.0);
        assert!(warnings.is_empty(), "{warnings:?}");
        // A session whose instance went away: named with its reason, no imbalance claimed.
        let mut failed = tallies.clone();
        failed[1].failed = Some("server closed the connection".to_string());
        let (figures, warnings) = instance_figures(readings(), &failed, 1.0);
        assert_eq!(figures[1].sessions_failed, Some(1));
        assert!(
            warnings.iter().any(|warning| warning.starts_with(
                "1 of 4 session(s) on slow ended early (server closed the connection)"
            )),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_instance_whose_sessions_waited_seconds_is_named_with_how_long() {
        let tallies = [
            tally(0, 300, &[1, 2, 2]),
            tally(1, 300, &[2, 1, 3]),
            tally(2, 20, &[2, 12_000]),
        ];
        let (_, warnings) = instance_figures(
            vec![
                reading("p", Role::Primary, 300.0),
                reading("r1", Role::Replica, 300.0),
                reading("r2", Role::Replica, 20.0),
            ],
            &tallies,
            14.2,
        );
        let stalled: Vec<&String> = warnings.iter().filter(|w| w.contains("stalled")).collect();
        assert_eq!(stalled.len(), 1, "{warnings:?}");
        assert!(
            stalled[0].starts_with("r2 stalled: its sessions waited up to 12.0 s"),
            "{warnings:?}"
        );
        // Slow everywhere alike is no stall of one instance.
        let even = [tally(0, 10, &[1500]), tally(1, 10, &[1400])];
        let (_, warnings) = instance_figures(
            vec![
                reading("p", Role::Primary, 10.0),
                reading("r", Role::Replica, 10.0),
            ],
            &even,
            3.0,
        );
        assert!(
            !warnings.iter().any(|w| w.contains("stalled")),
            "{warnings:?}"
        );
    }
}
