//! One database behind several instances: a primary with its replicas, a RAC's instances or
//! a Galera cluster's nodes. Which instance is which, where each session goes (`--route`),
//! and waiting for the replicas to replay what setup wrote before a run reads it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::connect::settings::Endpoint;
use super::connect::target::Target;
use super::driver::Database;
use super::registry::connect;
use crate::error::UsageError;

/// What an instance does in its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Takes writes: a primary, a RAC instance, a Galera node.
    Primary,
    /// Replays another instance's changes and takes no writes.
    Replica,
}

impl std::fmt::Display for Role {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Role::Primary => "primary",
            Role::Replica => "replica",
        })
    }
}

/// One instance, connected, with its role as it said at connection.
pub struct Instance {
    pub database: Arc<dyn Database>,
    pub role: Role,
}

/// The instances a run's targets name, in the order given.
pub struct Cluster {
    pub instances: Vec<Instance>,
}

impl Cluster {
    /// The main processes of the instances on this host (see
    /// [`Database::server_main_pid`]).
    pub fn server_main_pids(&self) -> Vec<u32> {
        self.instances
            .iter()
            .filter_map(|instance| instance.database.server_main_pid().ok().flatten())
            .collect()
    }

    /// Connects to every target and asks each for its role. Two targets reaching the same
    /// server and database are refused: their counters would be counted twice.
    pub fn connect(targets: &[Target]) -> Result<Self> {
        for (index, target) in targets.iter().enumerate() {
            if let Some(earlier) = targets[..index]
                .iter()
                .find(|earlier| same_instance(earlier, target))
            {
                return Err(UsageError::new(format!(
                    "--target {target} reaches the same instance and database as {earlier}: name each instance once"
                ))
                .into());
            }
        }
        if let Some(mixed) = targets
            .iter()
            .find(|target| target.product.name != targets[0].product.name)
        {
            return Err(UsageError::new(format!(
                "--target {mixed} is {} but {} is {}: one cluster is one product",
                mixed.product.name, targets[0], targets[0].product.name
            ))
            .into());
        }
        let mut instances = Vec::with_capacity(targets.len());
        for target in targets {
            let database = connect(target)?;
            let role = if targets.len() > 1 && database.is_replica()? {
                Role::Replica
            } else {
                Role::Primary
            };
            instances.push(Instance { database, role });
        }
        Ok(Self { instances })
    }

    /// One instance already connected, taken as the primary.
    pub fn single(database: Arc<dyn Database>) -> Self {
        Self {
            instances: vec![Instance {
                database,
                role: Role::Primary,
            }],
        }
    }

    pub fn len(&self) -> usize {
        self.instances.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    pub fn roles(&self) -> Vec<Role> {
        self.instances
            .iter()
            .map(|instance| instance.role)
            .collect()
    }

    /// The instance setup, teardown and the measuring statements run on: the first that
    /// takes writes.
    pub fn primary(&self) -> Result<&Arc<dyn Database>> {
        match self
            .instances
            .iter()
            .find(|instance| instance.role == Role::Primary)
        {
            Some(instance) => Ok(&instance.database),
            None => bail!(
                "every instance given is a replica: add the primary's --target (setup and updates run there)"
            ),
        }
    }

    /// What a run says of instances behind a tunnel or a proxy (`Database::forwarded`).
    pub fn forwarded(&self) -> Vec<String> {
        self.instances
            .iter()
            .filter_map(|instance| instance.database.forwarded())
            .collect()
    }

    /// Waits until every replica has replayed what the primary has written so far; an error
    /// naming the replica that did not within `limit`.
    pub fn wait_for_replicas(&self, limit: Duration) -> Result<Replay> {
        let replicas = self
            .roles()
            .iter()
            .filter(|role| **role == Role::Replica)
            .count();
        if replicas == 0 {
            return Ok(Replay::NoReplica);
        }
        let primary = self.primary()?;
        let Some(position) = primary
            .replication_position()
            .with_context(|| format!("reading {}'s replication position", primary.target()))?
        else {
            return Ok(Replay::NotWaited(format!(
                "{} gives no replication position to wait on (MySQL with gtid_mode OFF, or a binary log that is off): the {replicas} replica(s) were not waited for, so what was just written may not be on them yet; enable GTIDs (gtid_mode=ON, enforce_gtid_consistency=ON)",
                primary.target()
            )));
        };
        for replica in self
            .instances
            .iter()
            .filter(|instance| instance.role == Role::Replica)
        {
            let target = replica.database.target();
            let replayed = replica
                .database
                .wait_replayed(&position, limit)
                .with_context(|| format!("waiting for {target} to replay {position}"))?;
            if !replayed {
                bail!(
                    "{target} had not replayed the primary's changes up to {position} after {}: check its replication (is it streaming from {}?), or allow more with --replay-limit",
                    humantime::format_duration(limit),
                    primary.target()
                );
            }
        }
        Ok(Replay::Replayed(replicas))
    }
}

/// What waiting for a cluster's replicas came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Replay {
    NoReplica,
    /// This many replicas replayed the primary's changes.
    Replayed(usize),
    /// Replicas there are, but nothing to wait on (a MySQL primary without GTIDs): why, for
    /// the caller to say.
    NotWaited(String),
}

/// Whether two targets reach the same server's same database.
fn same_instance(one: &Target, other: &Target) -> bool {
    let (a, b) = (one.settings(), other.settings());
    let endpoint = match (&a.endpoint, &b.endpoint) {
        (Endpoint::Tcp { host, port }, Endpoint::Tcp { host: h, port: p }) => {
            host.eq_ignore_ascii_case(h) && port == p
        }
        (one, other) => one == other,
    };
    endpoint && one.database() == other.database()
}

/// `--route`: where each session goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// Session k on instance k mod N.
    #[default]
    RoundRobin,
    /// As SLOB: schema k on instance k mod N, so each table is read on one instance.
    BySchema,
    /// Each session on an instance drawn at random (fixed for a session number).
    Random,
    /// Sessions that only read on the replicas in turn, sessions that write on the primary.
    ReadsToReplicas,
}

impl std::str::FromStr for Route {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "round-robin" => Ok(Route::RoundRobin),
            "by-schema" => Ok(Route::BySchema),
            "random" => Ok(Route::Random),
            "reads=replicas" => Ok(Route::ReadsToReplicas),
            _ => Err(format!(
                "'{text}' is not a route: use round-robin, by-schema, random or reads=replicas"
            )),
        }
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Route::RoundRobin => "round-robin",
            Route::BySchema => "by-schema",
            Route::Random => "random",
            Route::ReadsToReplicas => "reads=replicas",
        })
    }
}

impl Route {
    /// Refuses, before the run, a route that would send a writing session to a replica or
    /// leave nowhere for a session to go. `writes`: whether the sessions write.
    pub fn check(self, roles: &[Role], writes: bool) -> Result<(), UsageError> {
        let replicas = roles.iter().filter(|role| **role == Role::Replica).count();
        let primaries = roles.len() - replicas;
        match self {
            Route::ReadsToReplicas if writes => Err(UsageError::new(
                "--route reads=replicas: every session writes (--update-pct above 0), so none may run on a replica: leave out --update-pct, or use --route round-robin over the instances that take writes",
            )),
            Route::ReadsToReplicas if replicas == 0 => Err(UsageError::new(
                "--route reads=replicas: none of the instances given is a replica (`corescale db check` says which is which)",
            )),
            _ if writes && replicas > 0 => Err(UsageError::new(format!(
                "--route {self} would place writing sessions (--update-pct above 0) on {replicas} replica(s), which take no writes: use --route reads=replicas with reads only, or leave the replicas out"
            ))),
            _ if primaries == 0 && writes => Err(UsageError::new(
                "the sessions write, and every instance given is a replica: add the primary's --target",
            )),
            _ => Ok(()),
        }
    }

    /// The instance (an index into `roles`) of session `session` on table `schema`.
    pub fn place(self, session: usize, schema: u64, roles: &[Role], seed: u64) -> usize {
        let count = roles.len().max(1);
        match self {
            Route::RoundRobin => session % count,
            Route::BySchema => (schema % count as u64) as usize,
            Route::Random => {
                (crate::rng::scramble(seed ^ (session as u64).wrapping_add(1)) % count as u64)
                    as usize
            }
            Route::ReadsToReplicas => {
                let replicas: Vec<usize> = (0..roles.len())
                    .filter(|index| roles[*index] == Role::Replica)
                    .collect();
                if replicas.is_empty() {
                    0
                } else {
                    replicas[session % replicas.len()]
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Role::{Primary, Replica};

    #[test]
    fn routes_place_sessions_as_they_say() {
        let roles = [Primary, Replica, Replica];
        let placed = |route: Route, schemas: u64| -> Vec<usize> {
            (0..6)
                .map(|session| route.place(session, session as u64 % schemas, &roles, 7))
                .collect()
        };
        assert_eq!(placed(Route::RoundRobin, 6), [0, 1, 2, 0, 1, 2]);
        // Two tables: table 0 on instance 0, table 1 on instance 1, as SLOB spreads schemas.
        assert_eq!(placed(Route::BySchema, 2), [0, 1, 0, 1, 0, 1]);
        assert_eq!(placed(Route::ReadsToReplicas, 6), [1, 2, 1, 2, 1, 2]);
        let random = placed(Route::Random, 6);
        assert!(random.iter().all(|index| *index < 3));
        assert_eq!(random, placed(Route::Random, 6), "fixed for a seed");
        // Over many sessions every instance gets some.
        let spread: std::collections::BTreeSet<usize> = (0..64)
            .map(|session| Route::Random.place(session, 0, &roles, 7))
            .collect();
        assert_eq!(spread.len(), 3);
    }

    #[test]
    fn a_writing_session_is_never_routed_to_a_replica() {
        let roles = [Primary, Replica];
        for route in [Route::RoundRobin, Route::BySchema, Route::Random] {
            assert!(route.check(&roles, false).is_ok());
            let refused = route.check(&roles, true).unwrap_err().to_string();
            assert!(refused.contains("take no writes"), "{refused}");
            assert!(route.check(&[Primary, Primary], true).is_ok());
        }
        assert!(Route::ReadsToReplicas.check(&roles, false).is_ok());
        assert!(
            Route::ReadsToReplicas
                .check(&roles, true)
                .unwrap_err()
                .to_string()
                .contains("every session writes")
        );
        assert!(
            Route::ReadsToReplicas
                .check(&[Primary, Primary], false)
                .unwrap_err()
                .to_string()
                .contains("none of the instances")
        );
        assert_eq!(
            "reads=replicas".parse::<Route>(),
            Ok(Route::ReadsToReplicas)
        );
        assert!(
            "replicas"
                .parse::<Route>()
                .unwrap_err()
                .contains("round-robin")
        );
    }
}
