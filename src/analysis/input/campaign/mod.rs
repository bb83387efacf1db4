//! A campaign's parts (`run --campaign NAME --part I/N` on several client hosts) merged into
//! one series, exactly: each level's sessions and client-side counts summed, the response
//! histograms added (percentiles of the merged histogram, never averaged percentiles), the
//! server's own counts taken once. A level that some part lacks is left out and said, never
//! summed short; each part's share, its client CPU and its start are checked.

use std::collections::BTreeMap;

use super::*;
use crate::analysis::series::PartOfLevel;
use crate::latency::{ClassTimes, IntervalFigures, RateFigures, ResponseTimes};
use crate::result::CampaignPart;

/// Client-side counts and rates of a level, which the parts' add up; the server's counts
/// (which every part read whole) are the first part's.
pub(super) const SUMMED: &[&str] = &[
    "statements",
    "statements_per_s",
    "updates",
    "rows_visited",
    "rows",
    "client_blocks",
    "client_cpu_s",
    "transactions",
    "transactions_per_s",
    "failed_transactions",
    "sessions_unpublished",
    // Order entry: each part counts its own warehouses' orders.
    "nopm",
    "client_nopm",
    "rollbacks",
    "retries",
];

/// Figures of one part that no sum or single part gives for the campaign (its sessions'
/// server CPU, ratios over it, averages of its own responses): left out of the merged level,
/// whose response times come from the merged histogram.
const PART_ONLY: &[&str] = &[
    "db_cpu_s",
    "db_lio_per_db_cpu_s",
    "client_cpu_share",
    "latency_average_ms",
    "latency_stddev_ms",
    "connection_time_ms",
];

/// A part whose share of the work departs from its share of the sessions by more than
/// this (relative) is named.
const IMBALANCE: f64 = 0.10;
/// A client host busier than this share of its CPUs was the limit, not the server.
const CLIENT_SATURATED: f64 = 0.90;

/// The series with every campaign's parts merged into one series each (the others as they
/// are), and what the merge found: missing parts, imbalance, busy clients, late starts.
pub fn merge_campaigns(series: Vec<Series>) -> Result<(Vec<Series>, Vec<String>)> {
    let mut merged = Vec::new();
    let mut parts: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for one in series {
        match &one.campaign {
            Some(campaign) => parts.entry(campaign.name.clone()).or_default().push(one),
            None => merged.push(one),
        }
    }
    let mut notes = Vec::new();
    for (name, mut group) in parts {
        group.sort_by_key(|part| part.campaign.as_ref().map_or(0, |campaign| campaign.part));
        merged.push(merge(&name, group, &mut notes)?);
    }
    Ok((merged, notes))
}

/// The part's label in messages: "part 2/3 (db-app-2)".
fn label(part: &Series, campaign: &CampaignPart) -> String {
    format!(
        "part {}/{} ({})",
        campaign.part,
        campaign.parts,
        quote(part.host())
    )
}

/// Fewer responses than this may fall in the same buckets by chance (one response each).
const SAME_RESPONSES_AT_LEAST: u64 = 100;

/// Refuses two parts that hold the same responses at a level: each part's sessions are its
/// own, so equal histograms of 100 responses or more (2- or 3-digit buckets, each a few
/// per mille wide) are one part's result given as two.
fn refuse_copies(name: &str, group: &[Series]) -> Result<()> {
    let histograms = |part: &Series| -> Vec<(usize, String)> {
        part.points
            .iter()
            .chain(&part.paced)
            .filter_map(|point| {
                let latency = point.latency.as_ref()?;
                let level = point.campaign.as_ref()?.level;
                (latency.response.count >= SAME_RESPONSES_AT_LEAST)
                    .then(|| latency.histogram.clone())
                    .flatten()
                    .map(|text| (level, text))
            })
            .collect()
    };
    for (index, part) in group.iter().enumerate() {
        let mine = histograms(part);
        for other in &group[index + 1..] {
            if let Some((level, _)) = histograms(other)
                .into_iter()
                .find(|theirs| mine.contains(theirs))
            {
                bail!(
                    "campaign '{}': '{}' and '{}' hold the same responses at level {}: one part's result given twice, or a copy; give each part's own result",
                    quote(name),
                    part.source,
                    other.source,
                    level + 1
                );
            }
        }
    }
    Ok(())
}

/// The parts of one run of a campaign: the same number of parts, schedule and job.
fn refuse_mismatched_parts(name: &str, group: &[Series]) -> Result<()> {
    let first = &group[0];
    let declared = first.campaign.as_ref().expect("grouped by campaign").parts;
    for part in group {
        let campaign = part.campaign.as_ref().expect("grouped by campaign");
        if campaign.parts != declared {
            bail!(
                "campaign '{}': '{}' says {} parts, '{}' {declared}: merge the parts of one run of it",
                quote(name),
                part.source,
                campaign.parts,
                first.source
            );
        }
        let first_campaign = first.campaign.as_ref().expect("grouped by campaign");
        if campaign.start_at != first_campaign.start_at
            || campaign.level_period_s != first_campaign.level_period_s
        {
            bail!(
                "campaign '{}': '{}' and '{}' were scheduled apart (start {} against {}, a level every {} against {} s): merge the parts of one run, which share --start-at and the plan",
                quote(name),
                part.source,
                first.source,
                campaign
                    .start_at
                    .map_or("unset".to_string(), |at| at.to_rfc3339()),
                first_campaign
                    .start_at
                    .map_or("unset".to_string(), |at| at.to_rfc3339()),
                campaign
                    .level_period_s
                    .map_or("unset".to_string(), |period| format!("{period}")),
                first_campaign
                    .level_period_s
                    .map_or("unset".to_string(), |period| format!("{period}")),
            );
        }
        if part.measure != first.measure || part.job != first.job {
            bail!(
                "campaign '{}': '{}' ran another job than '{}' ({} against {}): every part runs the same plan",
                quote(name),
                part.source,
                first.source,
                part.job.describe(),
                first.job.describe()
            );
        }
    }
    Ok(())
}

fn merge(name: &str, group: Vec<Series>, notes: &mut Vec<String>) -> Result<Series> {
    let first = &group[0];
    let declared = first.campaign.as_ref().expect("grouped by campaign").parts;
    refuse_mismatched_parts(name, &group)?;
    let numbers: Vec<usize> = group
        .iter()
        .filter_map(|part| part.campaign.as_ref().map(|campaign| campaign.part))
        .collect();
    // Sorted by part: a part given twice stands next to itself.
    if let Some(pair) = group.windows(2).find(|pair| {
        pair[0].campaign.as_ref().map(|campaign| campaign.part)
            == pair[1].campaign.as_ref().map(|campaign| campaign.part)
    }) {
        bail!(
            "campaign '{}': '{}' and '{}' are both {}: give each part's result once",
            quote(name),
            pair[0].source,
            pair[1].source,
            label(
                &pair[0],
                pair[0].campaign.as_ref().expect("grouped by campaign")
            )
        );
    }
    refuse_copies(name, &group)?;
    let missing_parts: Vec<String> = (1..=declared)
        .filter(|part| !numbers.contains(part))
        .map(|part| format!("{part}/{declared}"))
        .collect();
    if !missing_parts.is_empty() {
        notes.push(format!(
            "campaign '{}' is incomplete: part {} missing, so none of its levels is merged (report every part's result)",
            quote(name),
            missing_parts.join(", ")
        ));
    }
    // Each closed-loop level by its campaign sessions, each open-loop level (whose rate is
    // each part's share) by its place in the plan, with the parts' points at it.
    let mut closed: BTreeMap<usize, Vec<(&Series, &Point)>> = BTreeMap::new();
    let mut paced: BTreeMap<usize, Vec<(&Series, &Point)>> = BTreeMap::new();
    for part in &group {
        for point in &part.points {
            if let Some(in_campaign) = &point.campaign {
                closed
                    .entry(in_campaign.workers)
                    .or_default()
                    .push((part, point));
            }
        }
        for point in &part.paced {
            if let Some(in_campaign) = &point.campaign {
                paced
                    .entry(in_campaign.level)
                    .or_default()
                    .push((part, point));
            }
        }
    }
    let mut points = Vec::new();
    let mut paced_points = Vec::new();
    if missing_parts.is_empty() {
        for at_level in closed.into_values() {
            if let Some(point) = merged_level(name, &group, &at_level, notes)? {
                points.push(point);
            }
        }
        for at_level in paced.into_values() {
            if let Some(point) = merged_level(name, &group, &at_level, notes)? {
                paced_points.push(point);
            }
        }
    }
    let mut series = Series::new(
        printable(name),
        first.measure.clone(),
        points,
        first.job.clone(),
    );
    // Against a cluster, the campaign loaded its nodes. Its server's cores are not the client
    // hosts': --cores or --nodes gives them.
    series.nodes = first.nodes;
    series.paced = paced_points;
    series.source = group
        .iter()
        .map(|part| part.source.clone())
        .collect::<Vec<_>>()
        .join(" + ");
    series.complete = group.iter().all(|part| part.complete) && missing_parts.is_empty();
    series.provenance = Provenance {
        label: Some(printable(name)),
        workload: first
            .provenance
            .workload
            .as_ref()
            .map(|workload| format!("{workload}; campaign of {declared} client hosts, merged")),
        ..first.provenance.clone()
    };
    Ok(series)
}

/// A level that every part ran, merged; None (and said) when some part lacks it.
fn merged_level(
    name: &str,
    group: &[Series],
    at_level: &[(&Series, &Point)],
    notes: &mut Vec<String>,
) -> Result<Option<Point>> {
    let (first_part, first) = at_level[0];
    let workers = first
        .campaign
        .as_ref()
        .expect("grouped by campaign")
        .workers;
    let rate_of = |point: &Point| point.latency.as_ref().and_then(|latency| latency.rate);
    let asked = rate_of(first).map(|rate| match rate.share {
        Some(share) => format!(", {:.0}% of the closed loop's rate,", 100.0 * share),
        None => format!(
            " of {}/s",
            crate::format::significant(
                rate.target_per_s * workers as f64 / first.workers.max(1) as f64
            )
        ),
    });
    let level = match &asked {
        Some(share) => format!("{workers} sessions at a set rate{share}"),
        None => format!("{workers} sessions"),
    };
    // Every part ran the same plan: the same sessions at this level and, at an open-loop
    // level (matched by its place in the plan), the same share or rate per session, with the
    // same arrivals.
    let sessions = |point: &Point| {
        point
            .campaign
            .as_ref()
            .map_or(0, |campaign| campaign.workers)
    };
    let per_session =
        |point: &Point| rate_of(point).map(|rate| rate.target_per_s / point.workers.max(1) as f64);
    let same_rate = |point: &Point| match (rate_of(point), rate_of(first)) {
        (Some(mine), Some(theirs)) => {
            mine.share == theirs.share
                && mine.arrivals == theirs.arrivals
                && (mine.share.is_some()
                    || per_session(point)
                        .zip(per_session(first))
                        .is_some_and(|(mine, theirs)| (mine - theirs).abs() <= 1e-6 * theirs.abs()))
        }
        (None, None) => true,
        _ => false,
    };
    let differs = |point: &Point| {
        if sessions(point) != workers {
            Some(format!(
                "has {} and {workers} sessions): every part runs the same plan",
                sessions(point)
            ))
        } else if !same_rate(point) {
            Some(
                "was asked different rates): every part runs the same plan, --rate included"
                    .to_string(),
            )
        } else {
            None
        }
    };
    if let Some((part, why)) = at_level
        .iter()
        .find_map(|(part, point)| differs(point).map(|why| (part, why)))
    {
        bail!(
            "campaign '{}': '{}' and '{}' ran different plans (their level {} {why}",
            quote(name),
            part.source,
            first_part.source,
            first
                .campaign
                .as_ref()
                .map_or(0, |campaign| campaign.level + 1),
        );
    }
    if at_level.len() < group.len() {
        let absent: Vec<String> = group
            .iter()
            .filter(|part| !at_level.iter().any(|(had, _)| std::ptr::eq(*had, *part)))
            .map(|part| label(part, part.campaign.as_ref().expect("grouped")))
            .collect();
        notes.push(format!(
            "campaign '{}' at {level} is incomplete: {} has no such level (stopped or failed before it): left out, not summed short",
            quote(name),
            absent.join(", ")
        ));
        return Ok(None);
    }
    merged_point(name, workers, at_level, notes).map(Some)
}

/// One level of the campaign from its parts' points.
fn merged_point(
    name: &str,
    workers: usize,
    at_level: &[(&Series, &Point)],
    notes: &mut Vec<String>,
) -> Result<Point> {
    let (_, first) = at_level[0];
    let in_campaign = first.campaign.as_ref().expect("grouped by campaign");
    // The server's own count is the whole database's in every part: taken once, from the
    // first part. The parts' own counts add up.
    let raw = if orders::on_nopm_axis(&at_level[0].0.measure) {
        at_level
            .iter()
            .map(|(part, point)| own_orders(name, part, point, notes))
            .sum()
    } else if in_campaign.server_counted {
        first.raw
    } else {
        at_level.iter().map(|(_, point)| point.raw).sum()
    };
    let mut figures = first.figures.clone();
    figures.retain(|name, _| !PART_ONLY.contains(&name.as_str()));
    for figure in SUMMED {
        if at_level
            .iter()
            .all(|(_, point)| point.figures.contains_key(*figure))
        {
            figures.insert(
                figure.to_string(),
                at_level
                    .iter()
                    .map(|(_, point)| point.figures[*figure])
                    .sum(),
            );
        }
    }
    if orders::on_nopm_axis(&at_level[0].0.measure) {
        figures.insert("nopm".to_string(), raw);
    }
    if let Some(rate) = figures.get("db_lio_per_s").copied() {
        figures.insert("db_lio_per_s_per_worker".to_string(), rate / workers as f64);
    }
    // The server's blocks against the blocks every part's sessions visited.
    if let (Some(lio), Some(blocks)) = (figures.get("db_lio"), figures.get("client_blocks"))
        && *blocks > 0.0
    {
        let ratio = lio / blocks;
        figures.insert("db_lio_over_client_blocks".to_string(), ratio);
        if !(0.95..=1.05).contains(&ratio) {
            notes.push(format!(
                "campaign '{}' at {workers} sessions: the database counted {ratio:.3}x the blocks all the parts' sessions visited: other activity on the server, or a changed plan",
                quote(name)
            ));
        }
    }
    let latency = merged_latency(name, workers, at_level, notes)?;
    let parts = check_parts(name, workers, at_level, notes);
    Ok(Point {
        workers,
        raw,
        figures,
        latency: latency.map(Box::new),
        parts,
        intervals: merged_timeline(at_level)?,
        classes: merged_classes(name, workers, at_level, notes)?,
        logged: Vec::new(),
        // The parts' counts add up; the sum is no surer than its least sure part.
        capacity_uncertainty: at_level
            .iter()
            .map(|(_, point)| point.capacity_uncertainty)
            .collect::<Option<Vec<f64>>>()
            .and_then(|each| each.into_iter().reduce(f64::max)),
        disturbed: at_level
            .iter()
            .flat_map(|(part, point)| {
                point
                    .disturbed
                    .iter()
                    .map(move |reason| format!("{}: {reason}", part.host()))
            })
            .collect(),
        ..Point::default()
    })
}

/// An order-entry part's NOPM: its own warehouses' districts' count, which the parts add
/// up. A part whose districts counted more than one order beyond what its sessions committed
/// counted other parts' orders too (a run from before each part owned its warehouses): its
/// sessions' own count stands for it, and a note says so.
fn own_orders(name: &str, part: &Series, point: &Point, notes: &mut Vec<String>) -> f64 {
    let (Some(districts), Some(committed)) = (
        point.figures.get("nopm").copied(),
        point.figures.get("client_nopm").copied(),
    ) else {
        return point.raw;
    };
    let minutes = point
        .campaign
        .as_ref()
        .map_or(0.0, |campaign| campaign.elapsed_s / 60.0);
    if (districts - committed) * minutes <= 1.0 {
        return point.raw;
    }
    notes.push(format!(
        "campaign '{}' at {} sessions: '{}' counted {} NOPM in the districts and its sessions committed {}: its districts were shared with other parts, so its sessions' count is summed",
        quote(name),
        point.workers,
        part.source,
        crate::format::significant(districts),
        crate::format::significant(committed)
    ));
    committed
}

/// The level's response times: the parts' histograms added. Without every part's histogram
/// there are no merged percentiles (averaging percentiles would be wrong).
fn merged_latency(
    name: &str,
    workers: usize,
    at_level: &[(&Series, &Point)],
    notes: &mut Vec<String>,
) -> Result<Option<Latency>> {
    let mut merged: Option<ResponseTimes> = None;
    for (part, point) in at_level {
        let Some(text) = point
            .latency
            .as_ref()
            .and_then(|latency| latency.histogram.as_ref())
        else {
            if point.latency.is_some() {
                notes.push(format!(
                    "campaign '{}' at {workers} sessions: '{}' has no response histogram (written before corescale kept them): the level's percentiles are not merged, and an open-loop level without them is left out",
                    quote(name),
                    part.source
                ));
            }
            return Ok(None);
        };
        let times = ResponseTimes::decode(text).map_err(|problem| {
            anyhow::anyhow!(
                "'{}' level of {} sessions, latency.histogram: {problem}",
                part.source,
                point.workers
            )
        })?;
        match merged.as_mut() {
            Some(all) => all.try_merge(&times).map_err(|problem| {
                anyhow::anyhow!(
                    "campaign '{}' at {workers} sessions, '{}' latency.histogram: {problem}",
                    quote(name),
                    part.source
                )
            })?,
            None => merged = Some(times),
        }
    }
    let (Some(merged), Some(latency)) = (merged, at_level[0].1.latency.as_deref()) else {
        return Ok(None);
    };
    let Some(response) = merged.percentiles() else {
        return Ok(None);
    };
    Ok(Some(Latency {
        response,
        // Of the parts' own distributions, only the merged one is exact.
        service: None,
        schedule_lag: None,
        rate: merged_rate(at_level),
        late: at_level
            .iter()
            .map(|(_, point)| point.latency.as_ref().and_then(|latency| latency.late))
            .sum(),
        histogram: Some(merged.encode()),
        ..(*latency).clone()
    }))
}

/// The level's classes of responses: each class's histograms added over the parts that
/// answered it (a part without a class answered none of it: runs record answered classes).
/// None when a part recorded no classes while another did (a document from before them:
/// a class would rest on some hosts only), or the parts timed a class differently.
fn merged_classes(
    name: &str,
    workers: usize,
    at_level: &[(&Series, &Point)],
    notes: &mut Vec<String>,
) -> Result<Vec<ClassTimes>> {
    let recorded = (at_level.iter())
        .filter(|(_, point)| !point.classes.is_empty())
        .count();
    if recorded < at_level.len() {
        if recorded > 0 {
            notes.push(format!(
                "campaign '{}' at {workers} sessions: a part recorded no classes of responses: no class is merged, so --slo on one has no verdict there",
                quote(name)
            ));
        }
        return Ok(Vec::new());
    }
    let mut merged: Vec<(&ClassTimes, ResponseTimes)> = Vec::new();
    for (part, point) in at_level {
        for class in &point.classes {
            let times = ResponseTimes::decode(&class.histogram).map_err(|problem| {
                anyhow::anyhow!("'{}' class {}: {problem}", part.source, class.class)
            })?;
            match merged.iter_mut().find(|(one, _)| one.class == class.class) {
                Some((first, _)) if first.measured_from != class.measured_from => {
                    notes.push(format!(
                        "campaign '{}' at {workers} sessions: the parts timed class {} from different points: no class is merged",
                        quote(name),
                        class.class
                    ));
                    return Ok(Vec::new());
                }
                Some((_, all)) => all.try_merge(&times).map_err(|problem| {
                    anyhow::anyhow!("'{}' class {}: {problem}", part.source, class.class)
                })?,
                None => merged.push((class, times)),
            }
        }
    }
    Ok(merged
        .into_iter()
        .map(|(first, times)| ClassTimes {
            histogram: times.encode(),
            ..first.clone()
        })
        .collect())
}

/// The level's timeline: the parts' intervals (which started together) with their responses
/// and rates summed, the server's rates taken once. Percentiles only where every part kept
/// the interval's responses (`--interval` writes them): a sum of percentiles is none.
/// Empty when the parts' intervals do not line up.
fn merged_timeline(at_level: &[(&Series, &Point)]) -> Result<Vec<IntervalFigures>> {
    let first = &at_level[0].1.intervals;
    let aligned =
        at_level.iter().all(|(_, point)| {
            point.intervals.len() == first.len()
                && point.intervals.iter().zip(first).all(|(one, other)| {
                    one.start_s == other.start_s && one.length_s == other.length_s
                })
        });
    if !aligned {
        return Ok(Vec::new());
    }
    let mut merged = Vec::with_capacity(first.len());
    for (index, interval) in first.iter().enumerate() {
        let parts: Vec<&IntervalFigures> = at_level
            .iter()
            .map(|(_, point)| &point.intervals[index])
            .collect();
        let times = merged_interval_times(at_level, index)?;
        let percentiles = times.as_ref().and_then(ResponseTimes::percentiles);
        merged.push(IntervalFigures {
            responses: parts.iter().map(|part| part.responses).sum(),
            rate_per_s: parts.iter().map(|part| part.rate_per_s).sum(),
            p50_ms: percentiles.map(|p| p.p50_ms),
            p99_ms: percentiles.map(|p| p.p99_ms),
            histogram: times.as_ref().map(ResponseTimes::encode),
            ..interval.clone()
        });
    }
    Ok(merged)
}

/// Interval `index`'s responses over the parts, when each part kept its own.
fn merged_interval_times(
    at_level: &[(&Series, &Point)],
    index: usize,
) -> Result<Option<ResponseTimes>> {
    let mut merged: Option<ResponseTimes> = None;
    for (part, point) in at_level {
        let Some(encoded) = &point.intervals[index].histogram else {
            return Ok(None);
        };
        let problem = |problem: String| {
            anyhow::anyhow!(
                "'{}' level of {} sessions, intervals[{index}].histogram: {problem}",
                part.source,
                point.workers
            )
        };
        let times = ResponseTimes::decode(encoded).map_err(problem)?;
        match &mut merged {
            Some(merged) => merged.try_merge(&times).map_err(problem)?,
            None => merged = Some(times),
        }
    }
    Ok(merged)
}

/// An open-loop level's rates: each part was asked its share and sent what it could, so
/// the campaign's are the sums; it kept the rate only if every part kept its own.
fn merged_rate(at_level: &[(&Series, &Point)]) -> Option<RateFigures> {
    let rates: Vec<RateFigures> = at_level
        .iter()
        .map(|(_, point)| point.latency.as_ref().and_then(|latency| latency.rate))
        .collect::<Option<_>>()?;
    let first = rates.first()?;
    Some(RateFigures {
        target_per_s: rates.iter().map(|rate| rate.target_per_s).sum(),
        achieved_per_s: rates.iter().map(|rate| rate.achieved_per_s).sum(),
        arrivals: first.arrivals,
        due: rates.iter().map(|rate| rate.due).sum(),
        sent: rates.iter().map(|rate| rate.sent).sum(),
        sustained: rates.iter().all(|rate| rate.sustained),
        share: first.share,
    })
}

/// Each part's figures of the level, and what they say: its share of the work against its
/// share of the sessions, whether its host's CPUs were the limit, whether it kept its rate,
/// and how far its start was from the others'.
fn check_parts(
    name: &str,
    workers: usize,
    at_level: &[(&Series, &Point)],
    notes: &mut Vec<String>,
) -> Vec<PartOfLevel> {
    let statements = |point: &Point| point.figures.get("statements").copied();
    let total: Option<f64> = at_level.iter().map(|(_, point)| statements(point)).sum();
    let mut parts = Vec::new();
    for (part, point) in at_level {
        let who = part.host();
        let campaign = part.campaign.as_ref().expect("grouped by campaign");
        let in_campaign = point.campaign.as_ref().expect("grouped by campaign");
        let share_of_work = total
            .filter(|total| *total > 0.0)
            .zip(statements(point))
            .map(|(total, own)| own / total);
        if let Some(share_of_work) = share_of_work {
            let share_of_sessions = point.workers as f64 / workers as f64;
            if (share_of_work / share_of_sessions - 1.0).abs() > IMBALANCE {
                notes.push(format!(
                    "campaign '{}' at {workers} sessions: {} ran {:.1}% of the statements with {:.1}% of the sessions",
                    quote(name),
                    label(part, campaign),
                    100.0 * share_of_work,
                    100.0 * share_of_sessions
                ));
            }
        }
        let client_cpu_busy = point
            .figures
            .get("client_cpu_s")
            .zip(part.client_cpus)
            .filter(|_| in_campaign.elapsed_s > 0.0)
            .map(|(cpu_s, cpus)| cpu_s / (in_campaign.elapsed_s * cpus as f64));
        if let Some(busy) = client_cpu_busy
            && busy >= CLIENT_SATURATED
        {
            notes.push(format!(
                "campaign '{}': client {who} used {:.0}% of its CPUs at {workers} sessions: the clients, not the server, were the limit (add client hosts)",
                quote(name),
                100.0 * busy.min(1.0)
            ));
        }
        let rate = point.latency.as_ref().and_then(|latency| latency.rate);
        if let Some(rate) = rate
            && !rate.sustained
        {
            notes.push(format!(
                "campaign '{}' at {workers} sessions: client {who} did not keep its rate ({} of {} statements/s)",
                quote(name),
                crate::format::significant(rate.achieved_per_s),
                crate::format::significant(rate.target_per_s)
            ));
        }
        parts.push(PartOfLevel {
            part: campaign.part,
            client: who.to_string(),
            sessions: point.workers,
            statements_per_s: point.figures.get("statements_per_s").copied().or_else(|| {
                statements(point)
                    .filter(|_| in_campaign.elapsed_s > 0.0)
                    .map(|statements| statements / in_campaign.elapsed_s)
            }),
            share_of_work,
            client_cpu_busy,
            p99_ms: point
                .latency
                .as_ref()
                .map(|latency| latency.response.p99_ms),
            kept_rate: rate.map(|rate| rate.sustained),
            clock_offset_ms: in_campaign.clock_offset_ms,
        });
    }
    // Starts by the server's clock: each part's own start plus how far the server was ahead.
    let starts: Vec<f64> = at_level
        .iter()
        .filter_map(|(_, point)| {
            let in_campaign = point.campaign.as_ref()?;
            let offset_s = in_campaign.clock_offset_ms? / 1e3;
            Some(in_campaign.started_at.timestamp_micros() as f64 / 1e6 + offset_s)
        })
        .collect();
    let bound_ms = at_level
        .iter()
        .filter_map(|(part, _)| part.campaign.as_ref())
        .map(|campaign| campaign.max_clock_offset_ms)
        .fold(0.0, f64::max);
    if starts.len() == at_level.len() && starts.len() > 1 {
        let spread_ms = 1e3
            * (starts.iter().copied().fold(f64::MIN, f64::max)
                - starts.iter().copied().fold(f64::MAX, f64::min));
        if spread_ms > 2.0 * bound_ms {
            notes.push(format!(
                "campaign '{}' at {workers} sessions: the parts started {spread_ms:.0} ms apart by the server's clock, more than twice the {bound_ms:.0} ms clock bound: they did not run together the whole level",
                quote(name)
            ));
        }
    }
    parts
}

#[cfg(test)]
mod tests;
