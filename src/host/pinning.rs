//! Where workers run: placement orders for compact and scatter pinning, and the pinning itself.

use clap::ValueEnum;
use nix::sched::{CpuSet, sched_setaffinity};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::topology::Topology;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pin {
    /// Let the scheduler place workers.
    None,
    /// Fill the SMT siblings of one core before moving to the next core.
    Compact,
    /// One worker per physical core first, then the second sibling of each core, ...
    Scatter,
}

/// The CPU for each worker index under `pin`, or None when workers are not pinned.
/// Workers beyond the number of logical CPUs wrap around.
pub(crate) fn placement(topology: &Topology, pin: Pin, workers: usize) -> Vec<Option<usize>> {
    let order = cpu_order(topology, pin);
    (0..workers)
        .map(|worker| order.as_ref().map(|order| order[worker % order.len()]))
        .collect()
}

fn cpu_order(topology: &Topology, pin: Pin) -> Option<Vec<usize>> {
    let mut cpus = topology.cpus.clone();
    cpus.sort_by_key(|cpu| (cpu.package, cpu.core, cpu.cpu));
    match pin {
        Pin::None => None,
        Pin::Compact => Some(cpus.iter().map(|cpu| cpu.cpu).collect()),
        Pin::Scatter => {
            // Rank each CPU among the siblings of its core, then take rank 0 of every core first.
            let mut ranked: Vec<(usize, usize, usize, usize)> = Vec::with_capacity(cpus.len());
            for (index, cpu) in cpus.iter().enumerate() {
                let rank = cpus[..index]
                    .iter()
                    .filter(|other| (other.package, other.core) == (cpu.package, cpu.core))
                    .count();
                ranked.push((rank, cpu.package, cpu.core, cpu.cpu));
            }
            ranked.sort_unstable();
            Some(ranked.into_iter().map(|(.., cpu)| cpu).collect())
        }
    }
}

/// Pins the calling thread to one CPU.
pub(crate) fn pin_current_thread(cpu: usize) -> nix::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu)?;
    sched_setaffinity(Pid::from_raw(0), &set)
}

/// The CPU the calling thread is running on now.
pub(crate) fn current_cpu() -> Option<usize> {
    nix::sched::sched_getcpu().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::topology::LogicalCpu;

    /// 1 socket, 2 cores, 2 threads: Linux numbers siblings 0/2 and 1/3.
    fn two_core_smt() -> Topology {
        let cpus = [(0, 0), (1, 1), (2, 0), (3, 1)]
            .into_iter()
            .map(|(cpu, core)| LogicalCpu {
                cpu,
                package: 0,
                core,
            })
            .collect();
        Topology {
            model_name: None,
            vendor: None,
            sockets: 1,
            physical_cores: 2,
            logical_cpus: 4,
            threads_per_core: 2,
            caches: vec![],
            numa_nodes: vec![],
            nominal_mhz: None,
            max_mhz: None,
            hypervisor: None,
            cpus,
        }
    }

    #[test]
    fn compact_fills_siblings_first_and_scatter_spreads_over_cores() {
        let topology = two_core_smt();
        let cpus = |pin| -> Vec<usize> {
            placement(&topology, pin, 5)
                .into_iter()
                .map(Option::unwrap)
                .collect()
        };
        assert_eq!(cpus(Pin::Compact), vec![0, 2, 1, 3, 0]);
        assert_eq!(cpus(Pin::Scatter), vec![0, 1, 2, 3, 0]);
        assert_eq!(placement(&topology, Pin::None, 2), vec![None, None]);
    }
}
