//! The host's CPU topology, caches, NUMA layout and memory, read from sysfs and procfs.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail};
use procfs_core::{CpuInfo, FromRead, Meminfo};
use serde::{Deserialize, Serialize};

use super::sysfs::{FsRoot, parse_cache_size, parse_cpu_list};

/// One logical CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogicalCpu {
    pub cpu: usize,
    pub package: usize,
    pub core: usize,
}

/// One cache level as seen by a logical CPU, with how many instances the host has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// "L1d", "L1i", "L2", "L3".
    pub name: String,
    pub size_bytes: u64,
    pub instances: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaNode {
    pub id: usize,
    pub cpus: Vec<usize>,
}

/// How the host's processors are laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub model_name: Option<String>,
    pub vendor: Option<String>,
    pub sockets: usize,
    pub physical_cores: usize,
    pub logical_cpus: usize,
    pub threads_per_core: usize,
    pub caches: Vec<Cache>,
    pub numa_nodes: Vec<NumaNode>,
    /// Nominal (base) frequency, from the model name or cpufreq's base_frequency.
    pub nominal_mhz: Option<f64>,
    /// Maximum (turbo) frequency from cpufreq, where the kernel exposes it.
    pub max_mhz: Option<f64>,
    /// Hypervisor vendor when the CPU reports running under one ("KVM", "Xen", ...).
    pub hypervisor: Option<String>,
    pub cpus: Vec<LogicalCpu>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

/// Everything the result document says about the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    /// The name shown in reports: `--label`, else the hostname.
    pub label: String,
    pub kernel: Option<String>,
    pub topology: Topology,
    pub memory: Option<Memory>,
    /// What limits this process below the host's CPUs: a cgroup's CPU quota (a container, a
    /// Kubernetes CPU limit), a cpuset or its affinity. None when nothing does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<super::cpu_limit::CpuLimit>,
}

impl Topology {
    /// Size of one instance of the largest cache, the one a memory-bound loop must overflow.
    pub fn last_level_cache_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|cache| cache.name != "L1i")
            .max_by_key(|cache| cache.name.clone())
            .map(|cache| cache.size_bytes)
    }

    pub fn cache(&self, name: &str) -> Option<&Cache> {
        self.caches.iter().find(|cache| cache.name == name)
    }
}

impl HostInfo {
    /// Reads the host below `root`; `label` overrides the hostname in reports.
    pub fn read(root: &FsRoot, label: Option<String>) -> Result<Self> {
        let topology = read_topology(root)?;
        let hostname = root
            .read("proc/sys/kernel/hostname")
            .or_else(|| root.read("etc/hostname"))
            .unwrap_or_else(|| "unknown".to_string());
        Ok(Self {
            label: label.unwrap_or_else(|| hostname.clone()),
            hostname,
            kernel: root.read("proc/sys/kernel/osrelease"),
            cpu_limit: super::cpu_limit::read(root, topology.logical_cpus),
            topology,
            memory: read_memory(root),
        })
    }
}

fn read_memory(root: &FsRoot) -> Option<Memory> {
    let meminfo = Meminfo::from_file(root.path("proc/meminfo")).ok()?;
    Some(Memory {
        total_bytes: meminfo.mem_total,
        available_bytes: meminfo.mem_available.unwrap_or(meminfo.mem_free),
    })
}

/// Reads the CPU topology below `root` (sys/devices/system/cpu, sys/devices/system/node,
/// proc/cpuinfo).
pub fn read_topology(root: &FsRoot) -> Result<Topology> {
    let cpus = read_logical_cpus(root)?;
    let sockets = cpus
        .iter()
        .map(|cpu| cpu.package)
        .collect::<BTreeSet<_>>()
        .len();
    let physical_cores = cpus
        .iter()
        .map(|cpu| (cpu.package, cpu.core))
        .collect::<BTreeSet<_>>()
        .len();
    let cpuinfo = CpuInfo::from_file(root.path("proc/cpuinfo")).ok();
    let field = |name: &str| {
        cpuinfo
            .as_ref()
            .and_then(|info| info.get_field(0, name))
            .map(str::to_string)
    };
    let model_name = field("model name");
    let flags = field("flags").unwrap_or_default();
    let virtualized = flags.split_whitespace().any(|flag| flag == "hypervisor");
    Ok(Topology {
        nominal_mhz: nominal_mhz(root, model_name.as_deref()),
        max_mhz: root
            .read_u64("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .map(|khz| khz as f64 / 1000.0),
        hypervisor: virtualized.then(|| hypervisor_vendor(root)),
        vendor: field("vendor_id"),
        model_name,
        sockets,
        physical_cores,
        logical_cpus: cpus.len(),
        threads_per_core: cpus.len().div_ceil(physical_cores.max(1)),
        caches: read_caches(root, &cpus),
        numa_nodes: read_numa_nodes(root),
        cpus,
    })
}

fn read_logical_cpus(root: &FsRoot) -> Result<Vec<LogicalCpu>> {
    let base = "sys/devices/system/cpu";
    let online = match root.read(&format!("{base}/online")) {
        Some(list) => parse_cpu_list(&list)
            .with_context(|| format!("malformed CPU list in {}", root.path(base).display()))?,
        None => root.numbered_entries(base, "cpu"),
    };
    if online.is_empty() {
        bail!(
            "no CPUs found under {}: is this a Linux sysfs tree?",
            root.path(base).display()
        );
    }
    Ok(online
        .into_iter()
        .map(|cpu| {
            let topology = format!("{base}/cpu{cpu}/topology");
            LogicalCpu {
                cpu,
                package: root
                    .read_u64(&format!("{topology}/physical_package_id"))
                    .unwrap_or(0) as usize,
                // Without topology files every CPU counts as its own core.
                core: root
                    .read_u64(&format!("{topology}/core_id"))
                    .map_or(cpu, |core| core as usize),
            }
        })
        .collect())
}

fn read_caches(root: &FsRoot, cpus: &[LogicalCpu]) -> Vec<Cache> {
    let Some(first) = cpus.first() else {
        return Vec::new();
    };
    let cache_dir = |cpu: usize| format!("sys/devices/system/cpu/cpu{cpu}/cache");
    root.numbered_entries(&cache_dir(first.cpu), "index")
        .into_iter()
        .filter_map(|index| {
            let dir = format!("{}/index{index}", cache_dir(first.cpu));
            let level = root.read_u64(&format!("{dir}/level"))?;
            let name = match root.read(&format!("{dir}/type"))?.as_str() {
                "Data" => format!("L{level}d"),
                "Instruction" => format!("L{level}i"),
                _ => format!("L{level}"),
            };
            let size_bytes = parse_cache_size(&root.read(&format!("{dir}/size"))?)?;
            // Each distinct sharing set of this cache index is one physical instance.
            let instances = cpus
                .iter()
                .filter_map(|cpu| {
                    root.read(&format!(
                        "{}/index{index}/shared_cpu_list",
                        cache_dir(cpu.cpu)
                    ))
                })
                .collect::<BTreeSet<_>>()
                .len()
                .max(1);
            Some(Cache {
                name,
                size_bytes,
                instances,
            })
        })
        .collect()
}

fn read_numa_nodes(root: &FsRoot) -> Vec<NumaNode> {
    root.numbered_entries("sys/devices/system/node", "node")
        .into_iter()
        .filter_map(|id| {
            let list = root.read(&format!("sys/devices/system/node/node{id}/cpulist"))?;
            Some(NumaNode {
                id,
                cpus: parse_cpu_list(&list)?,
            })
        })
        .collect()
}

/// The "@ 2.20GHz" of Intel model names, else cpufreq's base frequency.
fn nominal_mhz(root: &FsRoot, model_name: Option<&str>) -> Option<f64> {
    let from_name = model_name.and_then(|name| {
        let (_, after) = name.rsplit_once('@')?;
        let ghz: f64 = after.trim().trim_end_matches("GHz").trim().parse().ok()?;
        Some(ghz * 1000.0)
    });
    from_name
        .or_else(|| {
            root.read_u64("sys/devices/system/cpu/cpu0/cpufreq/base_frequency")
                .map(|khz| khz as f64 / 1000.0)
        })
        .or_else(|| {
            // VMs without cpufreq: the kernel's clock (TSC) rate, the host's nominal rate.
            root.read("proc/cpuinfo")?
                .lines()
                .find_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    (key.trim() == "cpu MHz").then(|| value.trim().parse::<f64>().ok())?
                })
                .filter(|mhz| *mhz > 0.0)
        })
}

/// Names the hypervisor: sysfs first (Xen, DMI), then CPUID leaf 0x40000000 on the live host.
fn hypervisor_vendor(root: &FsRoot) -> String {
    let from_sysfs = root
        .read("sys/hypervisor/type")
        .or_else(|| root.read("sys/class/dmi/id/sys_vendor"));
    from_sysfs
        .or_else(|| root.is_live().then(cpuid_hypervisor).flatten())
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    // Leaf 0x40000000 is reserved for hypervisors: their signature in EBX, ECX, EDX.
    let leaf = std::arch::x86_64::__cpuid(0x4000_0000);
    let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    let signature = String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .to_string();
    let known = BTreeMap::from([
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Microsoft Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen"),
        ("TCGTCGTCGTCG", "QEMU TCG"),
        ("ACRNACRNACRN", "ACRN"),
        ("bhyve bhyve ", "bhyve"),
    ]);
    known
        .get(signature.as_str())
        .map(|name| name.to_string())
        .or_else(|| (!signature.is_empty()).then_some(signature))
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}
