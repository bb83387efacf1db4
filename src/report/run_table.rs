//! The summary table printed when a run ends.

use super::table;
use super::units::{optional, rate};
use crate::result::{RunDocument, RunMode};

pub fn render(document: &RunDocument) -> String {
    let unit = document.workload.unit.as_str();
    let fixed_work = document.settings.mode == RunMode::FixedWork;
    let headers: Vec<&str> = if fixed_work {
        vec![
            "workers",
            "median s",
            "CV %",
            "jobs/min/worker",
            "jobs/min",
            "speedup",
            "CPU %",
            "rate/worker",
            "steal %",
            "IPC",
        ]
    } else {
        vec![
            "workers",
            "rate/worker",
            "rate total",
            "CV %",
            "speedup",
            "CPU %",
            "steal %",
            "IPC",
        ]
    };
    let rows: Vec<Vec<String>> = document
        .levels
        .iter()
        .map(|level| {
            let summary = &level.summary;
            let cv = format!("{:.2}", 100.0 * summary.cv);
            let cpu = format!("{:.1}", 100.0 * summary.cpu_fraction);
            let steal = format!("{:.1}", level.os.steal_pct);
            let speedup = optional(summary.speedup, 2);
            let ipc = optional(summary.ipc, 2);
            if fixed_work {
                vec![
                    level.workers.to_string(),
                    format!("{:.3}", summary.job_time_s.median),
                    cv,
                    format!("{:.2}", summary.speed_jobs_per_min),
                    format!("{:.2}", summary.capacity_jobs_per_min),
                    speedup,
                    cpu,
                    rate(summary.rate_per_worker, unit),
                    steal,
                    ipc,
                ]
            } else {
                vec![
                    level.workers.to_string(),
                    rate(summary.rate_per_worker, unit),
                    rate(summary.rate_total, unit),
                    cv,
                    speedup,
                    cpu,
                    steal,
                    ipc,
                ]
            }
        })
        .collect();
    let mut out = format!(
        "{} on {} ({} physical cores, {} logical CPUs){}\n",
        document.workload.kind.name(),
        document.host.label,
        document.host.topology.physical_cores,
        document.host.topology.logical_cpus,
        if document.complete {
            ""
        } else {
            " — INCOMPLETE"
        }
    );
    out.push_str(&table::render(&headers, &rows));
    if !document.hw_counters.available
        && let Some(reason) = &document.hw_counters.reason
    {
        out.push_str(&format!("hardware counters unavailable: {reason}\n"));
    }
    out
}
