//! Who held back a replay's level that fell behind: the client, short of CPU or late in
//! sending, or the server, whose answers kept its sessions waiting.

use super::PacedLevel;

/// Who held a replay's level back, from how long its sessions waited on answers: "; the
/// server was the limit: ..." or "; the client was the limit: ...". Nothing for a level
/// without the figures (a result from before they were recorded).
pub(super) fn behind_because(level: &PacedLevel) -> String {
    let figure = |name: &str| level.figures.get(name).copied();
    let (Some(busiest), Some(average)) = (
        figure("busiest_session_waiting_share"),
        figure("sessions_waiting_share"),
    ) else {
        return String::new();
    };
    let share = |value: f64| crate::format::percent(value.min(1.0));
    let cpu = match (figure("client_cpu_cores"), figure("client_cpus")) {
        (Some(cores), Some(cpus)) if cpus > 0.0 => Some((cores, cpus)),
        _ => None,
    };
    let cpu_bound = cpu.is_some_and(|(cores, cpus)| cores >= CLIENT_BUSY * cpus);
    // A client short of CPU also reads its answers late (when next run): its waits look
    // long, so its CPU decides before they do.
    if let Some(starved) = figure("sessions_starved_share").filter(|share| *share >= CLIENT_STARVED)
    {
        let cpu_said = cpu.map_or(String::new(), |(cores, cpus)| {
            format!(", its CPU time {cores:.2} of {}", may_use(cpus))
        });
        return format!(
            "; the client was the limit: its sessions waited for a CPU {} of the level{cpu_said}",
            share(starved)
        );
    }
    if busiest >= SERVER_HELD && !cpu_bound {
        return format!(
            "; the server was the limit: its answers kept the busiest session waiting {} of the level ({} on average)",
            share(busiest),
            share(average)
        );
    }
    match cpu {
        Some((cores, cpus)) if cpu_bound => format!(
            "; the client was the limit: its CPU was busy {cores:.2} of {}",
            may_use(cpus)
        ),
        Some((cores, cpus)) => format!(
            "; the client was the limit (its CPU {cores:.2} of {}): no session waited on answers more than {} of the level, so the lateness was in sending",
            may_use(cpus),
            share(busiest)
        ),
        None => format!(
            "; the client was the limit: no session waited on answers more than {} of the level, so the lateness was in sending",
            share(busiest)
        ),
    }
}

/// "the 1 CPU it may use", "the 2 CPUs it may use", "the 0.2 CPU it may use" (a quota).
fn may_use(cpus: f64) -> String {
    let plural = if cpus > 1.0 { "s" } else { "" };
    let count = format!("{cpus:.2}");
    let count = count.trim_end_matches('0').trim_end_matches('.');
    format!("the {count} CPU{plural} it may use")
}

/// A client whose CPU time reached this share of the CPUs it may use was short of CPU.
const CLIENT_BUSY: f64 = 0.8;
/// Nor whose sessions waited, runnable, for a CPU this share of the level or more.
const CLIENT_STARVED: f64 = 0.2;

/// A session of a replay that waited on answers this share of its level or more was held
/// by the server; below it, its lateness was its own (sending, or its CPU).
const SERVER_HELD: f64 = 0.5;
