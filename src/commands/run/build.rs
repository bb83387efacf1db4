//! The workload a run measures, built from its options for the plan's largest level, with
//! the run-wide options it refuses.

use anyhow::Result;

use crate::cli::{RunArgs, SweepArgs};
use crate::error::UsageError;
use crate::host::HostInfo;
use crate::workload::{BuildContext, Workload};

/// The workload named (cpu when none is), built from its options for the plan's largest level.
pub(super) fn build_workload(
    run: &RunArgs,
    host: &HostInfo,
    largest: usize,
) -> Result<Box<dyn Workload>> {
    let args = &run.sweep;
    let context = BuildContext {
        job_size: args.job_size,
        duration: args.duration,
        max_workers: largest,
        topology: &host.topology,
        campaign_part: args.campaign.part,
        sweep_options: sweep_options(args),
    };
    let workload_args = run.workload()?;
    let options = workload_args.options();
    if args.interval.is_some() && !options.keeps_intervals() {
        return Err(UsageError::new(crate::workload::NO_INTERVALS).into());
    }
    if args.campaign.campaign.is_some() && !options.connects() {
        return Err(UsageError::new(crate::workload::NO_CAMPAIGN).into());
    }
    options.build(&context).map_err(|error| {
        // A workload that only checks its settings fails on a bad one: a usage error. One
        // that connects somewhere marks its usage errors itself; the rest are runtime failures.
        if options.connects() || error.is::<UsageError>() {
            error
        } else {
            // The whole chain, "A: B: C", not only its outermost message.
            UsageError::new(format!("{error:#}")).into()
        }
    })
}

/// The options that shape the sweep's worker counts and batches, as far as the user gave
/// them: a workload with sessions of its own refuses them while it builds.
fn sweep_options(args: &SweepArgs) -> Vec<&'static str> {
    [
        (args.sweep.is_some(), "--sweep"),
        (args.workers.is_some(), "--workers"),
        (args.full, "--full"),
        (args.precision.is_some(), "--precision"),
        (args.campaign.campaign.is_some(), "--campaign"),
        (args.warmup.is_some(), "--warmup"),
        (args.repeat.is_some(), "--repeat"),
        (args.max_repeat.is_some(), "--max-repeat"),
    ]
    .into_iter()
    .filter_map(|(given, option)| given.then_some(option))
    .collect()
}
