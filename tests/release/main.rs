//! What ships: packages, deployment files, the Oracle client check, the layers, the fleet, Ansible.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod ansible;
mod circles;
mod deploy;
mod dist;
mod fleet;
mod layers;
mod leaks;
mod oracle_client;
mod profiles;
mod skips;
