//! A cluster's instances as a run finds them before each level: which are up, and which is
//! the primary now. An instance down at a level's start leaves the level to the others
//! (its sessions run there, and the level says so); a promotion is said and routes by the
//! new roles. One instance alone is never worked around: its failure ends the level.

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::{Result, bail};

use crate::db::cluster::{Cluster, Role};
use crate::error::locked;

/// What the run knows of the instances for the level being prepared.
pub(crate) struct InstanceWatch {
    /// Each instance's role as last read.
    roles: Mutex<Vec<Role>>,
    /// Why each instance could not be reached before this level (None: up).
    down: Mutex<Vec<Option<String>>>,
    /// What the level must say: roles that changed, instances left out, sessions moved.
    notes: Mutex<Vec<String>>,
    /// Sessions moved off each down instance in this level.
    moved: Mutex<BTreeMap<usize, usize>>,
}

impl InstanceWatch {
    pub(crate) fn new(cluster: &Cluster) -> Self {
        Self {
            roles: Mutex::new(cluster.roles()),
            down: Mutex::new(vec![None; cluster.len()]),
            notes: Mutex::new(Vec::new()),
            moved: Mutex::new(BTreeMap::new()),
        }
    }

    /// Reads every instance's role again (a cluster of several): an instance that does not
    /// answer is down for this level; one whose role changed is said.
    pub(crate) fn look(&self, cluster: &Cluster) -> Result<()> {
        let mut notes = locked(&self.notes, "the level's notes")?;
        notes.clear();
        locked(&self.moved, "the moved sessions")?.clear();
        if cluster.len() < 2 {
            return Ok(());
        }
        let mut roles = locked(&self.roles, "the instances' roles")?;
        let mut down = locked(&self.down, "the instances' state")?;
        for (index, instance) in cluster.instances.iter().enumerate() {
            let target = instance.database.target();
            match instance.database.is_replica() {
                Ok(replica) => {
                    down[index] = None;
                    let now = if replica {
                        Role::Replica
                    } else {
                        Role::Primary
                    };
                    if now != roles[index] {
                        notes.push(format!(
                            "{target} is now a {now} (it was a {}): {}; sessions are placed by the new roles from this level on",
                            roles[index],
                            if now == Role::Primary {
                                "promoted"
                            } else {
                                "it follows another primary"
                            }
                        ));
                        roles[index] = now;
                    }
                }
                Err(error) => down[index] = Some(format!("{error:#}")),
            }
        }
        if down.iter().all(Option::is_some) {
            bail!(
                "no instance of the cluster answers: {}",
                down[0].as_deref().unwrap_or("")
            );
        }
        Ok(())
    }

    pub(crate) fn roles(&self) -> Result<Vec<Role>> {
        Ok(locked(&self.roles, "the instances' roles")?.clone())
    }

    /// Why instance `index` is down for this level, if it is.
    pub(crate) fn down(&self, index: usize) -> Result<Option<String>> {
        Ok(locked(&self.down, "the instances' state")?[index].clone())
    }

    /// Marks instance `index` down (a session could not connect to it).
    pub(crate) fn mark_down(&self, index: usize, why: String) -> Result<()> {
        locked(&self.down, "the instances' state")?[index].get_or_insert(why);
        Ok(())
    }

    /// The instance a session meant for `wanted` runs on while `wanted` is down: the first
    /// instance up whose role suits it (a writing session needs a primary).
    pub(crate) fn stand_in(&self, wanted: usize, writes: bool) -> Result<Option<usize>> {
        let roles = self.roles()?;
        let down = locked(&self.down, "the instances' state")?;
        Ok((0..roles.len()).find(|&index| {
            index != wanted && down[index].is_none() && (!writes || roles[index] == Role::Primary)
        }))
    }

    /// Counts a session placed on `wanted` that runs on another instance.
    pub(crate) fn moved_from(&self, wanted: usize) -> Result<()> {
        *locked(&self.moved, "the moved sessions")?
            .entry(wanted)
            .or_default() += 1;
        Ok(())
    }

    /// What the level says of its instances: changed roles, and each instance down at its
    /// start with why and how many of its sessions ran elsewhere.
    pub(crate) fn take_notes(&self, cluster: &Cluster) -> Result<Vec<String>> {
        let mut notes = std::mem::take(&mut *locked(&self.notes, "the level's notes")?);
        let down = locked(&self.down, "the instances' state")?;
        for (index, moved) in locked(&self.moved, "the moved sessions")?.iter() {
            notes.push(format!(
                "{} was not reachable at the level's start ({}): its {moved} session(s) ran on the other instances, and its figures are missing from the level",
                cluster.instances[*index].database.target(),
                crate::format::printable(down[*index].as_deref().unwrap_or("no answer"))
            ));
        }
        Ok(notes)
    }
}
