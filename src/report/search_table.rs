//! A search's probes (`run --find`), in the order they were measured: the rate offered and
//! sent, the sessions, each objective's percentile with its 95% interval, and the verdict.

use super::cell_table::Table;
use crate::analysis::model::SeriesAnalysis;
use crate::format::significant;
use crate::latency::Verdict;

/// The probes of `series`' search; no rows when it made none.
pub(crate) fn probes_table(series: &SeriesAnalysis) -> Table {
    let Some(search) = &series.series.search else {
        return Table {
            title: String::new(),
            headers: Vec::new(),
            rows: Vec::new(),
            drop_first: Vec::new(),
        };
    };
    let mut headers = vec![
        "probe".to_string(),
        format!("offered {}", search.unit),
        "sent/s".to_string(),
        "sessions".to_string(),
    ];
    headers.extend(search.objectives.iter().cloned());
    headers.push("verdict".to_string());
    let rows = (search.probes.iter().enumerate())
        .map(|(index, probe)| {
            let mut row = vec![
                (index + 1).to_string(),
                significant(probe.rate_per_s),
                format!(
                    "{}{}",
                    significant(probe.achieved_per_s),
                    if probe.kept_up { "" } else { " !" }
                ),
                format!(
                    "{}{}",
                    probe.sessions,
                    if probe.sessions_busy {
                        " (all busy)"
                    } else {
                        ""
                    }
                ),
            ];
            row.extend(search.objectives.iter().map(|objective| {
                (probe.objectives.iter())
                    .find(|check| &check.objective == objective)
                    .and_then(|check| check.interval.as_ref())
                    .map_or("-".to_string(), |interval| interval.text())
            }));
            row.push(
                match probe.verdict {
                    Verdict::Kept => "kept",
                    Verdict::Broken => "broken",
                    Verdict::Undecided => "undecided (as broken)",
                }
                .to_string(),
            );
            row
        })
        .collect();
    Table {
        title: format!(
            "{}: the search's probes, in order (each percentile with its 95% interval; !: the sessions fell behind the schedule)",
            series.name()
        ),
        headers,
        rows,
        drop_first: vec!["sessions", "sent/s"],
    }
}
