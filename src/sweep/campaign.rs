//! One part of a campaign: several client hosts load one database together, each running its
//! share of every level's sessions, all starting each level at an agreed time on the database
//! server's clock. No daemon and no link between the hosts: each part measures its clock
//! against the server's before every level, refuses the level when they differ by more than a
//! bound it names, and `report` merges the parts' documents by the campaign's name.

use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use clap::Args;

use super::steps::LevelStep;
use crate::error::UsageError;
use crate::latency::OfferedRate;
use crate::result::{CampaignPart, LevelInCampaign};
use crate::values::parse_duration;
use crate::workload::Workload;

/// Readings of the server's clock taken to measure the offset; the one with the shortest
/// round trip is kept (NTP's choice).
const CLOCK_READINGS: usize = 7;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Campaign (several client hosts, one database)")]
pub struct CampaignArgs {
    /// Run as one part of a campaign: the same NAME, plan and options on every client host;
    /// `corescale report` merges the parts' results into one series.
    #[arg(long, value_name = "NAME", requires = "part", global = true)]
    pub campaign: Option<String>,

    /// This host's part, I of N: it runs its share of each level's sessions (and of --rate).
    #[arg(long, value_name = "I/N", requires = "campaign", value_parser = parse_part,
          global = true)]
    pub part: Option<(usize, usize)>,

    /// When the first level starts, by the database server's clock (RFC 3339, e.g.
    /// 2026-11-26T10:00:00Z); each next level starts one level's length (warm-up, batches
    /// and --level-gap) later. Without it the part starts at once.
    #[arg(long, value_name = "TIME", requires = "campaign", value_parser = parse_start,
          global = true)]
    pub start_at: Option<DateTime<Utc>>,

    /// Time left between levels for the sessions to connect and warm up.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration,
          global = true)]
    pub level_gap: Duration,

    /// Refuse a level when this host's clock and the database server's differ by more.
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = parse_duration,
          global = true)]
    pub max_clock_offset: Duration,
}

fn parse_part(text: &str) -> Result<(usize, usize), String> {
    let usage =
        || format!("'{text}' is not a part: give I/N, e.g. 2/3 (the second of three client hosts)");
    let (part, parts) = text.split_once('/').ok_or_else(usage)?;
    let (part, parts): (usize, usize) = (
        part.trim().parse().map_err(|_| usage())?,
        parts.trim().parse().map_err(|_| usage())?,
    );
    if parts == 0 || part == 0 || part > parts || parts > 1000 {
        return Err(format!(
            "--part {text}: I must be 1 to N, and N 1 to 1000 (e.g. 2/3)"
        ));
    }
    Ok((part, parts))
}

fn parse_start(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|time| time.with_timezone(&Utc))
        .map_err(|error| {
            format!("'{text}' is not an RFC 3339 time ({error}): give e.g. 2026-11-26T10:00:00Z")
        })
}

/// A part's plan: which part, and when each level starts.
pub struct Campaign {
    pub record: CampaignPart,
    /// Each level's length on the schedule (warm-up, batches, gap), with --start-at.
    period: Option<Duration>,
    max_clock_offset: Duration,
}

impl Campaign {
    /// The campaign of these options, None outside one. `level_length` is a level's timed
    /// part (warm-up and batches), None when it varies (fixed work, --precision).
    pub fn of(
        args: &CampaignArgs,
        fixed_time: bool,
        level_length: Option<Duration>,
    ) -> Result<Option<Self>> {
        let (Some(name), Some((part, parts))) = (&args.campaign, args.part) else {
            return Ok(None);
        };
        if !fixed_time {
            // The parts' rates add up; their job times do not.
            return Err(UsageError::new(
                "--campaign merges the parts' rates: run fixed-time levels (--duration), not fixed work (--job-size)",
            )
            .into());
        }
        let period = match (args.start_at, level_length) {
            (Some(_), Some(length)) => Some(length + args.level_gap),
            (Some(_), None) => {
                return Err(UsageError::new(
                    "--start-at schedules levels of a known length: give --duration (fixed time) and leave out --precision",
                )
                .into());
            }
            (None, _) => None,
        };
        Ok(Some(Self {
            record: CampaignPart {
                name: name.clone(),
                part,
                parts,
                start_at: args.start_at,
                level_period_s: period.map(|period| period.as_secs_f64()),
                max_clock_offset_ms: args.max_clock_offset.as_secs_f64() * 1e3,
            },
            period,
            max_clock_offset: args.max_clock_offset,
        }))
    }

    /// This part's steps: its share of each level's sessions (sessions k, k + N, ... of the
    /// campaign's, so shares differ by one at most) and of an asked rate.
    pub(crate) fn part_steps(&self, steps: &[LevelStep]) -> Result<Vec<LevelStep>, UsageError> {
        let (part, parts) = (self.record.part, self.record.parts);
        steps
            .iter()
            .map(|step| {
                // Every part refuses it alike, not only the parts that would get none.
                let share = share(step.workers, part, parts);
                if step.workers < parts {
                    return Err(UsageError::new(format!(
                        "a level of {} sessions has fewer than the campaign's {parts} parts: give every level at least {parts} sessions",
                        step.workers
                    )));
                }
                let offered = match step.offered {
                    Some(OfferedRate::PerSecond(rate)) => Some(OfferedRate::PerSecond(
                        rate * share as f64 / step.workers as f64,
                    )),
                    other => other,
                };
                Ok(LevelStep {
                    workers: share,
                    offered,
                    campaign_workers: Some(step.workers),
                })
            })
            .collect()
    }

    /// Before level `index`: this host's clock against the server's (refused beyond the
    /// bound), and, on a schedule, when the level starts by this host's clock.
    pub fn before_level(
        &self,
        workload: &dyn Workload,
        index: usize,
        campaign_workers: usize,
    ) -> Result<(LevelInCampaign, Option<SystemTime>)> {
        let offset = match workload.server().and_then(|server| server.server_clock()) {
            Some(_) => Some(clock_offset(workload)?),
            None if self.period.is_some() => {
                return Err(UsageError::new(
                    "--start-at agrees on the database server's clock, which corescale reads from PostgreSQL and MySQL/MariaDB: start the parts at once (leave out --start-at) on other targets",
                )
                .into());
            }
            None => None,
        };
        if let Some((offset, uncertainty)) = offset
            && offset.abs() + uncertainty > self.max_clock_offset.as_secs_f64()
        {
            anyhow::bail!(
                "this host's clock is {:.1} ms from the database server's (±{:.1} ms), beyond --max-clock-offset {} ms: synchronise it (chrony, ntpd) or allow more",
                offset * 1e3,
                uncertainty * 1e3,
                self.max_clock_offset.as_millis()
            );
        }
        let scheduled = self
            .record
            .start_at
            .zip(self.period)
            .map(|(first, period)| first + period * index as u32);
        // The server's time, on this host's clock: less the amount the server is ahead.
        let local = scheduled.map(|at| {
            let at = SystemTime::from(at);
            let ahead = offset.map_or(0.0, |(offset, _)| offset);
            if ahead >= 0.0 {
                at - Duration::from_secs_f64(ahead)
            } else {
                at + Duration::from_secs_f64(-ahead)
            }
        });
        Ok((
            LevelInCampaign {
                workers: campaign_workers,
                scheduled_start: scheduled,
                clock_offset_ms: offset.map(|(offset, _)| offset * 1e3),
                clock_uncertainty_ms: offset.map(|(_, uncertainty)| uncertainty * 1e3),
            },
            local,
        ))
    }
}

/// Part `part` (1-based) of `parts`' share of `workers` sessions: sessions part, part + N, ...
pub fn share(workers: usize, part: usize, parts: usize) -> usize {
    workers / parts + usize::from(part <= workers % parts)
}

/// How far the server's clock is ahead of this host's, in seconds, and the reading's
/// uncertainty (half its round trip): the reading with the shortest round trip of several.
fn clock_offset(workload: &dyn Workload) -> Result<(f64, f64)> {
    let now = || {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64())
    };
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..CLOCK_READINGS {
        let sent = now();
        let server = workload
            .server()
            .and_then(|server| server.server_clock())
            .ok_or_else(|| anyhow::anyhow!("the workload stopped reading its server's clock"))?
            .context("reading the database server's clock")?;
        let answered = now();
        let half_trip = (answered - sent).max(0.0) / 2.0;
        let offset = server - (sent + half_trip);
        if best.is_none_or(|(_, uncertainty)| half_trip < uncertainty) {
            best = Some((offset, half_trip));
        }
    }
    Ok(best.expect("at least one reading"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_share_every_level_and_its_rate() {
        for (workers, parts) in [(8, 3), (3, 3), (100, 7), (5, 2)] {
            let shares: Vec<usize> = (1..=parts)
                .map(|part| share(workers, part, parts))
                .collect();
            assert_eq!(shares.iter().sum::<usize>(), workers, "{workers}/{parts}");
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
        }
        let args = CampaignArgs {
            campaign: Some("c".to_string()),
            part: Some((2, 3)),
            start_at: None,
            level_gap: Duration::from_secs(5),
            max_clock_offset: Duration::from_millis(50),
        };
        let campaign = Campaign::of(&args, true, None).unwrap().unwrap();
        let steps = [
            LevelStep {
                workers: 8,
                offered: Some(OfferedRate::PerSecond(800.0)),
                campaign_workers: None,
            },
            LevelStep {
                workers: 2,
                offered: None,
                campaign_workers: None,
            },
        ];
        let refused = campaign.part_steps(&steps).unwrap_err().to_string();
        assert!(
            refused.contains("fewer than the campaign's 3 parts"),
            "{refused}"
        );
        let mine = campaign.part_steps(&steps[..1]).unwrap();
        assert_eq!((mine[0].workers, mine[0].campaign_workers), (3, Some(8)));
        assert_eq!(mine[0].offered, Some(OfferedRate::PerSecond(300.0)));
        assert_eq!(
            parse_part("3/2").unwrap_err(),
            "--part 3/2: I must be 1 to N, and N 1 to 1000 (e.g. 2/3)"
        );
        assert!(parse_start("tomorrow").unwrap_err().contains("RFC 3339"));
        // A schedule needs levels of a known length.
        let scheduled = CampaignArgs {
            start_at: Some(parse_start("2026-11-26T10:00:00Z").unwrap()),
            ..args
        };
        assert!(Campaign::of(&scheduled, true, None).is_err());
        let campaign = Campaign::of(&scheduled, true, Some(Duration::from_secs(10)))
            .unwrap()
            .unwrap();
        assert_eq!(campaign.record.level_period_s, Some(15.0));
        // Job times of parts do not add up: fixed work is refused.
        let refused = Campaign::of(&scheduled, false, None)
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("fixed-time"), "{refused}");
    }
}
