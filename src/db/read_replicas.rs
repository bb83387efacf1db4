//! A workload's writes on a primary and its reads on the replicas (`--route reads=replicas`),
//! as a DBA offloads reporting reads: order entry's Order-Status and Stock-Level, a replay's
//! sessions that only read. The servers' counters are the instances' summed, so the run
//! counts every commit and block read.

use std::sync::Arc;

use anyhow::Result;

use super::cluster::{Cluster, Role, Route};
use super::connect::target::Target;
use super::registry::connect;
use super::{Database, DbCounters};
use crate::error::UsageError;

/// What a workload calls its parts, for its messages.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// Who writes: "order entry".
    pub writer: &'static str,
    /// What may read on a replica: "Order-Status and Stock-Level".
    pub reads: &'static str,
}

/// The instances a run uses: the primary every write goes to, and the replicas the reads
/// go to (none: they run on the primary too).
pub struct ReadReplicas {
    pub primary: Arc<dyn Database>,
    pub replicas: Vec<Arc<dyn Database>>,
    /// Where the primary, then each replica, stood in the targets given.
    pub positions: Vec<usize>,
}

impl ReadReplicas {
    /// Connects the targets given, refusing a cluster the workload cannot run on: several
    /// instances without `--route reads=replicas`, another route, or no primary or no
    /// replica among them.
    pub fn connect(targets: &[Target], route: Option<Route>, parts: Parts) -> Result<Self> {
        let Parts { writer, reads } = parts;
        match (targets, route) {
            ([one], None) => {
                return Ok(Self {
                    primary: connect(one)?,
                    replicas: Vec::new(),
                    positions: vec![0],
                });
            }
            ([_], Some(route)) => {
                return Err(UsageError::new(format!(
                    "--route {route} places sessions over several instances, and one --target was given: add the replicas' --target, or leave --route out"
                ))
                .into());
            }
            (_, None) => {
                return Err(UsageError::new(format!(
                    "--target names {} instances: {writer} writes on the primary; give --route reads=replicas to send {reads} to the replicas, or give one --target",
                    targets.len()
                ))
                .into());
            }
            (_, Some(Route::ReadsToReplicas)) => {}
            (_, Some(route)) => {
                return Err(UsageError::new(format!(
                    "--route {route} would place {writer}'s writes on any instance: use --route reads=replicas (writes on the primary, {reads} on the replicas)"
                ))
                .into());
            }
        }
        let cluster = Cluster::connect(targets)?;
        Route::ReadsToReplicas.check(&cluster.roles(), false)?;
        let at = |role: Role| -> Vec<usize> {
            (cluster.instances.iter().enumerate())
                .filter(|(_, instance)| instance.role == role)
                .map(|(position, _)| position)
                .collect()
        };
        let (primaries, replicas) = (at(Role::Primary), at(Role::Replica));
        let database = |position: &usize| Arc::clone(&cluster.instances[*position].database);
        let primary = match primaries.as_slice() {
            [one] => database(one),
            [] => {
                return Err(UsageError::new(format!(
                    "every instance given is a replica: add the primary's --target ({writer} writes there)"
                ))
                .into());
            }
            [one, other, ..] => {
                return Err(UsageError::new(format!(
                    "{} and {} both take writes: {writer} writes on one primary; give it and its replicas",
                    database(one).target(),
                    database(other).target()
                ))
                .into());
            }
        };
        Ok(Self {
            primary,
            replicas: replicas.iter().map(database).collect(),
            positions: primaries.into_iter().chain(replicas).collect(),
        })
    }

    /// The primary, then each replica.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Database>> {
        std::iter::once(&self.primary).chain(&self.replicas)
    }

    /// The replica reader `number` reads on, in turn; None without replicas.
    pub fn reader_of(&self, number: usize) -> Option<&Arc<dyn Database>> {
        (!self.replicas.is_empty()).then(|| &self.replicas[number % self.replicas.len()])
    }

    /// The primary's counters with the replicas' block reads and commits added: the
    /// transactions they ran are the run's too.
    pub fn counters(&self) -> Result<DbCounters> {
        let mut total = self.primary.counters()?;
        for replica in &self.replicas {
            let counters = replica.counters()?;
            total.lio += counters.lio;
            total.pio += counters.pio;
            total.transactions = total
                .transactions
                .zip(counters.transactions)
                .map(|(primary, replica)| primary + replica);
            total.db_cpu_s = total
                .db_cpu_s
                .zip(counters.db_cpu_s)
                .map(|(primary, replica)| primary + replica);
        }
        Ok(total)
    }

    /// Where the reads go, for the run's description ("" without replicas).
    pub fn placement(&self, reads: &str) -> String {
        if self.replicas.is_empty() {
            return String::new();
        }
        let names: Vec<String> = self
            .replicas
            .iter()
            .map(|replica| replica.target().to_string())
            .collect();
        format!(
            "; {reads} on {} replica(s) in turn ({})",
            names.len(),
            names.join(", ")
        )
    }
}
