//! The per-instance view of a cluster's series: each instance's part of every level, so a
//! node that took less than its share of the work, or answered slower, is seen beside the
//! cluster's totals.

use super::cell_table::in_time_units;
use super::cell_table::{Table, cells, percent};
use crate::analysis::series::Series;
use crate::format::significant;

/// One row per level and instance: role, sessions and their share, share of the work,
/// statements/s, p99 and the instance's CPU. No rows for a series that is not a cluster.
pub(crate) fn instances_table(series: &Series) -> Table {
    let rows = series
        .points
        .iter()
        .flat_map(|point| {
            point.instances.iter().map(move |instance| {
                vec![
                    point.workers.to_string(),
                    instance.instance.clone(),
                    format!("{:?}", instance.role).to_lowercase(),
                    format!(
                        "{} ({})",
                        instance.sessions,
                        percent(instance.share_of_sessions)
                    ),
                    percent(instance.share_of_work),
                    significant(instance.statements_per_s),
                    instance
                        .latency
                        .map_or("-".into(), |latency| latency.p99_ms.to_string()),
                    instance
                        .db_cpu_s
                        .map_or("-".into(), |cpu| format!("{cpu:.1}")),
                ]
            })
        })
        .collect();
    in_time_units(Table {
        title: format!(
            "{}: each instance's part (its sessions and share of them, its share of the statements, its response time and CPU)",
            series.name
        ),
        headers: cells([
            "workers",
            "instance",
            "role",
            "sessions",
            "share of work",
            "statements/s",
            "p99 ms",
            "CPU s",
        ]),
        rows,
        drop_first: vec!["CPU s", "role", "statements/s"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::series::Point;

    #[test]
    fn a_cluster_level_has_a_row_per_instance_and_a_server_none() {
        // As a run's JSON gives them (the report reads no database type of its own).
        let instance = |name: &str, role: &str, share: f64| {
            serde_json::from_value(serde_json::json!({
                "instance": name, "role": role, "sessions": 1, "statements": 1000.0,
                "statements_per_s": 1000.0 * share, "db_cpu_s": 0.5,
                "share_of_sessions": 0.5, "share_of_work": share
            }))
            .unwrap()
        };
        let mut series = crate::analysis::synthetic::rate_series(|n| n, &[2], 0.0, 0, None);
        series.points[0] = Point {
            instances: vec![
                instance("db1:5432", "primary", 0.6),
                instance("db2:5432", "replica", 0.4),
            ],
            ..series.points[0].clone()
        };
        let table = instances_table(&series);
        assert_eq!(table.rows.len(), 2);
        assert_eq!(
            table.rows[1],
            [
                "2", "db2:5432", "replica", "1 (50%)", "40%", "400", "-", "0.5"
            ]
        );
        series.points[0].instances.clear();
        assert!(instances_table(&series).rows.is_empty());
    }
}
