//! `corescale host` as text.

use std::fmt::Write;

use crate::format::bytes;
use crate::host::HostInfo;

pub(crate) fn render(host: &HostInfo) -> String {
    let topology = &host.topology;
    let mut out = String::new();
    let mut line = |name: &str, value: String| {
        let _ = writeln!(out, "{name:<18} {value}");
    };
    let unknown = || "unknown".to_string();
    line("hostname", host.hostname.clone());
    line("model", topology.model_name.clone().unwrap_or_else(unknown));
    line("sockets", topology.sockets.to_string());
    line("physical cores", topology.physical_cores.to_string());
    line("logical CPUs", topology.logical_cpus.to_string());
    line("threads per core", topology.threads_per_core.to_string());
    for cache in &topology.caches {
        line(
            cache.name.as_str(),
            format!("{} x {}", bytes(cache.size_bytes), cache.instances),
        );
    }
    for node in &topology.numa_nodes {
        line(&format!("NUMA node {}", node.id), cpu_list(&node.cpus));
    }
    let mhz = |value: Option<f64>| value.map_or_else(unknown, |mhz| format!("{mhz:.0} MHz"));
    line("nominal frequency", mhz(topology.nominal_mhz));
    line("max frequency", mhz(topology.max_mhz));
    line(
        "hypervisor",
        topology
            .hypervisor
            .clone()
            .unwrap_or_else(|| "none (bare metal)".to_string()),
    );
    line("kernel", host.kernel.clone().unwrap_or_else(unknown));
    if let Some(memory) = &host.memory {
        line(
            "memory",
            format!(
                "{} total, {} available",
                bytes(memory.total_bytes),
                bytes(memory.available_bytes)
            ),
        );
    }
    out
}

/// "0-9,20-29" from a sorted CPU list.
fn cpu_list(cpus: &[usize]) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &cpu in cpus {
        match ranges.last_mut() {
            Some((_, last)) if *last + 1 == cpu => *last = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    ranges
        .iter()
        .map(|&(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_lists_compress_to_ranges() {
        assert_eq!(super::cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
