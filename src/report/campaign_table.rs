//! The per-client view of a merged campaign: each client host's part of every level, so a
//! client that ran short of CPU, fell behind its rate or did less than its share is seen.

use super::cell_table::in_time_units;
use super::cell_table::{Table, cells, percent};
use crate::analysis::series::{Point, Series};
use crate::format::significant;

/// Each level of a merged campaign, one row per part: its sessions, statements/s, share of
/// the work against its share of the sessions, client CPU, p99 and (open loop) whether it kept
/// its rate. No rows for a series that is not a merged campaign.
pub(crate) fn parts_table(series: &Series) -> Table {
    fn rows(point: &Point, level: String) -> impl Iterator<Item = Vec<String>> + '_ {
        point.parts.iter().map(move |part| {
            vec![
                level.clone(),
                format!("{} ({})", part.part, part.client),
                format!(
                    "{} ({})",
                    part.sessions,
                    percent(part.sessions as f64 / point.workers as f64)
                ),
                part.statements_per_s.map_or("-".into(), significant),
                part.share_of_work.map_or("-".into(), percent),
                part.client_cpu_busy
                    .map_or("-".into(), |busy| percent(busy.min(1.0))),
                part.p99_ms.map_or("-".into(), |p99| p99.to_string()),
                match part.kept_rate {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "-".into(),
                },
            ]
        })
    }
    let closed = series
        .points
        .iter()
        .flat_map(|point| rows(point, point.workers.to_string()));
    let paced = series.paced.iter().flat_map(|point| {
        let asked = point
            .latency
            .as_ref()
            .and_then(|latency| latency.rate)
            .map_or(String::new(), |rate| {
                format!(" at {}/s", significant(rate.target_per_s))
            });
        rows(point, format!("{}{asked}", point.workers))
    });
    in_time_units(Table {
        title: format!(
            "{}: each client host's part (its sessions and share of them, its share of the statements, its CPUs' use)",
            series.name
        ),
        headers: cells([
            "sessions",
            "part",
            "its sessions",
            "statements/s",
            "share of work",
            "client CPU",
            "p99 ms",
            "kept rate",
        ]),
        rows: closed.chain(paced).collect(),
        drop_first: vec!["kept rate", "p99 ms", "statements/s"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::series::PartOfLevel;

    #[test]
    fn a_merged_level_has_a_row_per_part() {
        let part = |number: usize, busy: f64| PartOfLevel {
            part: number,
            client: format!("app-{number}"),
            sessions: 2,
            statements_per_s: Some(1000.0),
            share_of_work: Some(0.5),
            client_cpu_busy: Some(busy),
            p99_ms: Some(1.5),
            kept_rate: None,
            clock_offset_ms: Some(0.2),
        };
        let point = Point {
            workers: 4,
            parts: vec![part(1, 0.25), part(2, 0.98)],
            ..Point::default()
        };
        let series = crate::analysis::series::Series::new(
            "pair".to_string(),
            crate::analysis::series::Measure::Rate {
                unit: "statements/s".to_string(),
            },
            vec![point],
            crate::analysis::series::Job::default(),
        );
        let table = parts_table(&series);
        assert_eq!(
            table.rows,
            [
                [
                    "4",
                    "1 (app-1)",
                    "2 (50%)",
                    "1.00 K",
                    "50%",
                    "25%",
                    "1.50",
                    "-"
                ],
                [
                    "4",
                    "2 (app-2)",
                    "2 (50%)",
                    "1.00 K",
                    "50%",
                    "98%",
                    "1.50",
                    "-"
                ]
            ]
        );
    }
}
