//! Order entry on a primary and its replicas: `--route reads=replicas` sends the two
//! read-only transactions (Order-Status and Stock-Level) to the replicas in turn, as a
//! DBA offloads reporting reads, while New-Order, Payment and Delivery write on the primary.
//! The server's counters are the instances' summed, so TPM counts every commit.

use std::sync::Arc;

use anyhow::Result;

use crate::db::cluster::{Cluster, Role, Route};
use crate::db::connect::target::Target;
use crate::db::registry::connect;
use crate::db::{Database, DbCounters};
use crate::error::UsageError;

/// The instances a run uses: the primary every writing transaction runs on, and the replicas
/// the read-only ones go to (none: they run on the primary too).
pub struct Instances {
    pub primary: Arc<dyn Database>,
    pub replicas: Vec<Arc<dyn Database>>,
}

impl Instances {
    /// Connects the targets given, refusing a cluster order entry cannot run on: several
    /// instances without `--route reads=replicas`, another route, or no primary or no
    /// replica among them.
    pub fn connect(targets: &[Target], route: Option<Route>) -> Result<Self> {
        match (targets, route) {
            ([one], None) => {
                return Ok(Self {
                    primary: connect(one)?,
                    replicas: Vec::new(),
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
                    "--target names {} instances: order entry writes on the primary; give --route reads=replicas to send Order-Status and Stock-Level to the replicas, or give one --target",
                    targets.len()
                ))
                .into());
            }
            (_, Some(Route::ReadsToReplicas)) => {}
            (_, Some(route)) => {
                return Err(UsageError::new(format!(
                    "--route {route} would place order entry's writing transactions on any instance: use --route reads=replicas (writes on the primary, Order-Status and Stock-Level on the replicas)"
                ))
                .into());
            }
        }
        let cluster = Cluster::connect(targets)?;
        Route::ReadsToReplicas.check(&cluster.roles(), false)?;
        let mut primaries = cluster
            .instances
            .iter()
            .filter(|instance| instance.role == Role::Primary);
        let primary = primaries
            .next()
            .map(|instance| Arc::clone(&instance.database));
        if let Some(other) = primaries.next() {
            return Err(UsageError::new(format!(
                "{} and {} both take writes: order entry writes on one primary; give it and its replicas",
                primary.as_ref().map_or_else(String::new, |one| one.target().to_string()),
                other.database.target()
            ))
            .into());
        }
        let Some(primary) = primary else {
            return Err(UsageError::new(
                "every instance given is a replica: add the primary's --target (order entry writes there)",
            )
            .into());
        };
        let replicas = cluster
            .instances
            .iter()
            .filter(|instance| instance.role == Role::Replica)
            .map(|instance| Arc::clone(&instance.database))
            .collect();
        Ok(Self { primary, replicas })
    }

    /// The replica session `worker` reads on, in turn; None without replicas.
    pub fn reader_of(&self, worker: usize) -> Option<&Arc<dyn Database>> {
        (!self.replicas.is_empty()).then(|| &self.replicas[worker % self.replicas.len()])
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

    /// Where the read-only transactions go, for the run's description ("" without replicas).
    pub fn placement(&self) -> String {
        if self.replicas.is_empty() {
            return String::new();
        }
        let names: Vec<String> = self
            .replicas
            .iter()
            .map(|replica| replica.target().to_string())
            .collect();
        format!(
            "; Order-Status and Stock-Level on {} replica(s) in turn ({})",
            names.len(),
            names.join(", ")
        )
    }
}
