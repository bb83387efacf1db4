//! Per-thread hardware counters (cycles, instructions) through perf_event_open, where the
//! kernel and the hypervisor allow it; otherwise a reason the report can show.

use perf_event::events::Hardware;
use perf_event::{Builder, Counter, Group};
use serde::{Deserialize, Serialize};

/// Whether the run could count cycles and instructions, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterStatus {
    pub available: bool,
    pub reason: Option<String>,
}

/// Cycles and instructions of one job on one thread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct CounterReading {
    pub cycles: u64,
    pub instructions: u64,
}

/// A cycles+instructions group counting the calling thread only.
pub(crate) struct ThreadCounters {
    group: Group,
    cycles: Counter,
    instructions: Counter,
}

impl ThreadCounters {
    /// Opens the counters for the calling thread, or explains why they cannot be had.
    pub(crate) fn open() -> Result<Self, String> {
        let mut group = Group::new().map_err(|error| explain(&error))?;
        let mut add = |event| {
            let mut builder = Builder::new(event);
            builder.observe_self().any_cpu();
            group.add(&builder).map_err(|error| explain(&error))
        };
        let cycles = add(Hardware::CPU_CYCLES)?;
        let instructions = add(Hardware::INSTRUCTIONS)?;
        Ok(Self {
            group,
            cycles,
            instructions,
        })
    }

    /// Zeroes and starts counting; call just before the timed job.
    pub(crate) fn start(&mut self) {
        let _ = self.group.reset();
        let _ = self.group.enable();
    }

    /// Stops counting; call right after the timed job, then `read` outside the timed window.
    pub(crate) fn stop(&mut self) {
        let _ = self.group.disable();
    }

    pub(crate) fn read(&mut self) -> Option<CounterReading> {
        let data = self.group.read().ok()?;
        Some(CounterReading {
            cycles: data.get(&self.cycles)?.value(),
            instructions: data.get(&self.instructions)?.value(),
        })
    }
}

fn explain(error: &std::io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|text| text.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    let hint = match error.raw_os_error() {
        Some(code) if code == nix::errno::Errno::ENOENT as i32 => {
            "no hardware PMU is exposed (common in VMs without a virtual PMU)"
        }
        Some(code) if code == nix::errno::Errno::EACCES as i32 => {
            "permission denied: lower kernel.perf_event_paranoid or run with CAP_PERFMON"
        }
        Some(code) if code == nix::errno::Errno::EPERM as i32 => {
            "not permitted: lower kernel.perf_event_paranoid or run with CAP_PERFMON"
        }
        _ => "perf_event_open failed",
    };
    format!("{hint} ({error}; perf_event_paranoid={paranoid})")
}
