//! The options that say where a database is and how to reach it (`--target` and its
//! companions), shared by every command and workload that connects: `run db`, `run script`,
//! `db setup`, `db check`, `db teardown`.

use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::target::Target;
use crate::error::UsageError;
use crate::values::parse_duration;

/// The help heading of the options only an Oracle target takes.
const ORACLE: &str = "Oracle targets (SLOB's numbered services)";

/// Where the database is and how to reach it: one instance, or each of a cluster's.
#[derive(Debug, Clone, Args)]
pub struct DbTargetArgs {
    /// postgres://, mysql://, mariadb:// or oracle://user@host:port/service. The password may
    /// be in the URL, in CORESCALE_DB_PASSWORD, or typed at --password-prompt. Give it once per
    /// instance of a cluster (a primary and its replicas, RAC instances, Galera nodes), or list
    /// PostgreSQL hosts as libpq does: postgres://user@h1:5432,h2:5433/db.
    #[arg(long, value_name = "URL", required = true)]
    pub target: Vec<String>,

    /// SLOB's SQLNET_SERVICE_BASE: with --service-max N, the Oracle target (given without a
    /// service) is reached through services NAME1..NAMEN, one instance each.
    #[arg(long, value_name = "NAME", requires = "service_max", help_heading = ORACLE)]
    pub service_base: Option<String>,

    /// SLOB's SQLNET_SERVICE_MAX: how many numbered services --service-base names.
    #[arg(long, value_name = "N", requires = "service_base", help_heading = ORACLE,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub service_max: Option<u32>,

    /// Ask for the password on the terminal (never echoed); once for all instances.
    #[arg(long)]
    pub password_prompt: bool,

    /// Give up on a server that does not complete the connection within this time
    /// [default: connect_timeout or PGCONNECT_TIMEOUT, else 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub connect_timeout: Option<Duration>,

    /// How long each replica of a cluster may take to replay setup or teardown (db setup,
    /// db teardown, and run db before it starts) before the command gives up, naming the
    /// replica behind (large tables take long on a slow replica) [default: 120s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub replay_limit: Option<Duration>,

    /// The schema (MySQL/MariaDB: the database) corescale's tables live in: `db setup`
    /// creates it, owned by the user, where no other role can create objects beside them;
    /// give the same to `run db`, `db check` and `db teardown`. Default: the user's current
    /// schema (database). Not --schemas, the number of tables.
    #[arg(long, value_name = "NAME", value_parser = parse_schema_name)]
    pub in_schema: Option<String>,
}

/// A schema name as `--in-schema` takes it: 1 to 63 characters (PostgreSQL's limit; MySQL's
/// is 64), none of them a control character.
fn parse_schema_name(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 63 {
        return Err(format!(
            "a schema name has 1 to 63 bytes, and this one has {}: give a shorter name",
            text.len()
        ));
    }
    if text.chars().any(|c| c.is_control()) {
        return Err("a schema name holds no control characters: give a plain name".to_string());
    }
    Ok(text.to_string())
}

/// How long a replica may take to replay setup or teardown unless `--replay-limit` says.
const DEFAULT_REPLAY_LIMIT: Duration = Duration::from_secs(120);

impl DbTargetArgs {
    /// `--replay-limit`, or its default.
    pub fn replay_limit(&self) -> Duration {
        self.replay_limit.unwrap_or(DEFAULT_REPLAY_LIMIT)
    }

    /// The first option given that only setup, teardown and `run db` take (Oracle's numbered
    /// services, the replay limit), by name: a workload that runs the DBA's own statements
    /// refuses it. (`--in-schema` is refused apart, with where to name a schema instead.)
    pub fn given_for_corescale_tables(&self) -> Option<&'static str> {
        [
            (self.service_base.is_some(), "--service-base"),
            (self.service_max.is_some(), "--service-max"),
            (self.replay_limit.is_some(), "--replay-limit"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The one target of a command that drives one instance.
    pub fn open(&self) -> Result<Target> {
        self.open_with(None)
    }

    /// The one target, with a limit on each answer too.
    pub(crate) fn open_with(&self, answer_limit: Option<Duration>) -> Result<Target> {
        let mut targets = self.open_all_with(answer_limit)?;
        if targets.len() > 1 {
            return Err(UsageError::new(format!(
                "--target names {} instances, and this command drives one: give one --target",
                targets.len()
            ))
            .into());
        }
        Ok(targets.remove(0))
    }

    /// Every instance the targets name, each as `user` (`run replay --map`; in the order
    /// `open_all` gives them): its password found for that user as for the target's own
    /// (prompted once with --password-prompt), never the URL's, which was its own user's.
    pub(crate) fn open_all_as(
        &self,
        user: &str,
        answer_limit: Option<Duration>,
    ) -> Result<Vec<Target>> {
        let urls = crate::db::connect::instances::instance_urls(&self.target, None)?;
        let mut prompted = None;
        let mut targets = Vec::with_capacity(urls.len());
        for url in &urls {
            let url = crate::db::connect::instances::as_user(url, user).ok_or_else(|| {
                UsageError::new("--map needs a --target URL (scheme://user@host/database)")
            })?;
            let target = crate::db::registry::target(&url)?;
            if target.user() != user {
                return Err(UsageError::new(format!(
                    "the --target URL names its user outside its authority (as '{}'): --map cannot change it; name the user before the host",
                    target.user()
                ))
                .into());
            }
            targets.push(
                target
                    .with_password(self.password_prompt, &mut prompted)?
                    .with_timeouts(self.connect_timeout, answer_limit),
            );
        }
        Ok(targets)
    }

    /// Every instance the targets name, with their passwords and connect limits; setup's
    /// loads may take their time.
    pub fn open_all(&self) -> Result<Vec<Target>> {
        self.open_all_with(None)
    }

    /// The database the first instance's URL names (with its service files and variables
    /// applied), read without connecting or asking for a password.
    pub(crate) fn database(&self) -> Result<String> {
        let services = self.service_base.as_deref().zip(self.service_max);
        let urls = crate::db::connect::instances::instance_urls(&self.target, services)?;
        let first = urls
            .first()
            .ok_or_else(|| UsageError::new("give --target URL: the database to connect to"))?;
        Ok(crate::db::registry::target(first)?.database())
    }

    /// Every instance, with a limit on each answer too.
    pub(crate) fn open_all_with(&self, answer_limit: Option<Duration>) -> Result<Vec<Target>> {
        let services = self.service_base.as_deref().zip(self.service_max);
        let urls = crate::db::connect::instances::instance_urls(&self.target, services)?;
        let mut typed = None;
        urls.iter()
            .map(|url| {
                let target = crate::db::registry::target(url)?;
                for warning in &target.settings().warnings {
                    say!("corescale: warning: {warning}");
                }
                Ok(target
                    .with_password(self.password_prompt, &mut typed)?
                    .with_timeouts(self.connect_timeout, answer_limit)
                    .with_in_schema(self.in_schema.clone()))
            })
            .collect()
    }
}

/// `--route`: where each session goes when `--target` names several instances. Written once
/// for the workloads that load a cluster; each words its help for the routes it takes (order
/// entry and a replay take reads=replicas alone) and checks them where it connects.
#[derive(Debug, Clone, Default, Args)]
pub struct RouteArgs {
    /// Where each session goes when --target names several instances.
    #[arg(
        long,
        value_name = "ROUTE",
        help_heading = "Cluster (several --target)"
    )]
    pub route: Option<crate::db::cluster::Route>,
}
