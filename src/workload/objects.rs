//! What a workload keeps in a database: one trait, [`DatabaseObjects`], implemented in the
//! workload's own folder (its `db setup NAME` options, how its objects are created and
//! loaded, how a finished setup is checked, and its claim on the catalogued names teardown
//! may drop), and the `database_objects!` table in `workload/mod.rs` that makes of them
//! `db setup`'s subcommands and the claims every setup and teardown honours. The database
//! layer below knows no workload's names: it proves identities and asks these claims.

use anyhow::Result;
use clap::{Args, FromArgMatches};

use crate::db::Database;
use crate::db::catalog::Claim;
use crate::db::connect::options::DbTargetArgs;
use crate::error::UsageError;

/// A workload's objects in a database. Its [`Claim`] says which catalogued names are its:
/// teardown drops only what some workload claims and the catalogue proves it created.
pub trait DatabaseObjects: Claim {
    /// `db setup NAME`'s options: the target, and the objects' size.
    type Options: Args + FromArgMatches + std::fmt::Debug;

    /// The database `options` name.
    fn target<'a>(&self, options: &'a Self::Options) -> &'a DbTargetArgs;

    /// Refuses options that cannot work, before anything connects.
    fn validate(&self, _options: &Self::Options) -> Result<(), UsageError> {
        Ok(())
    }

    /// Creates and loads the objects in `database` (a cluster's primary) under the setup
    /// lock, replacing only this workload's earlier setup, and checks them: what it did.
    fn setup(
        &self,
        options: &Self::Options,
        database: &dyn Database,
        progress: &Progress,
    ) -> Result<SetupDone>;

    /// Checks a finished setup's objects beyond their identity (`db check --workload NAME`):
    /// a line saying what holds, None where the workload checks nothing more.
    fn check(&self, _database: &dyn Database) -> Result<Option<String>> {
        Ok(None)
    }
}

/// Where a setup counts the rows it loads: their total once known, then each batch.
pub struct Progress<'a> {
    pub total: &'a dyn Fn(u64),
    pub loaded: &'a (dyn Fn(u64) + Sync),
}

/// What a finished setup did, for `db setup` to say.
#[derive(Debug)]
pub struct SetupDone {
    /// Objects the workload's earlier setup left, now dropped.
    pub previous: Vec<String>,
    /// One line: what was created, where, how large.
    pub summary: String,
}

/// A `db setup` as given, its workload's objects bound to their options: what the command
/// runs without knowing which workload it is.
pub trait SetupRequest {
    fn target(&self) -> &DbTargetArgs;
    fn validate(&self) -> Result<(), UsageError>;
    fn setup(&self, database: &dyn Database, progress: &Progress) -> Result<SetupDone>;
}

/// One workload's objects and the options `db setup` was given for them.
pub(crate) struct Bound<'a, W: DatabaseObjects> {
    pub objects: &'a W,
    pub options: &'a W::Options,
}

impl<W: DatabaseObjects> SetupRequest for Bound<'_, W> {
    fn target(&self) -> &DbTargetArgs {
        self.objects.target(self.options)
    }

    fn validate(&self) -> Result<(), UsageError> {
        self.objects.validate(self.options)
    }

    fn setup(&self, database: &dyn Database, progress: &Progress) -> Result<SetupDone> {
        self.objects.setup(self.options, database, progress)
    }
}

/// The table of workloads that keep objects in a database: for each, its name as `db setup
/// NAME` and `db check --workload NAME` take it, and the type implementing
/// [`DatabaseObjects`] (the doc line is its help). The first is `db setup`'s default.
macro_rules! database_objects {
    (default $default:path; $($(#[doc = $doc:literal])* $variant:ident = $name:literal => $objects:path;)*) => {
        /// `db setup NAME`: one subcommand per workload that keeps objects in a database.
        #[derive(Debug, clap::Subcommand)]
        pub enum SetupCommand {
            $($(#[doc = $doc])* #[command(name = $name)]
              $variant(<$objects as $crate::workload::objects::DatabaseObjects>::Options),)*
        }

        /// A workload whose objects `db check --workload NAME` checks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum SetupName {
            $($(#[doc = $doc])* #[value(name = $name)] $variant,)*
        }

        /// Every workload's claim on the catalogued objects its setup creates.
        pub const CLAIMS: &[&dyn $crate::db::catalog::Claim] = &[$(&$objects),*];

        /// The names `db setup NAME` takes, in the table's order.
        pub const SETUP_NAMES: &[&str] = &[$($name),*];

        /// `db setup [NAME]`: a workload's setup, the default's when none is named.
        #[derive(Debug, clap::Args)]
        #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
        pub struct SetupArgs {
            #[command(subcommand)]
            pub workload: Option<SetupCommand>,
            #[command(flatten)]
            pub default: <$default as $crate::workload::objects::DatabaseObjects>::Options,
        }

        impl SetupArgs {
            /// The setup to run, bound to its options.
            pub fn request(&self) -> Box<dyn $crate::workload::objects::SetupRequest + '_> {
                use $crate::workload::objects::Bound;
                match &self.workload {
                    None => Box::new(Bound { objects: &$default, options: &self.default }),
                    $(Some(SetupCommand::$variant(options)) => {
                        Box::new(Bound { objects: &$objects, options })
                    })*
                }
            }
        }

        impl SetupName {
            /// Checks this workload's objects in `database` (see
            /// [`DatabaseObjects::check`](crate::workload::objects::DatabaseObjects::check)).
            pub fn check(self, database: &dyn $crate::db::Database) -> anyhow::Result<Option<String>> {
                use $crate::workload::objects::DatabaseObjects;
                match self {
                    $(Self::$variant => $objects.check(database),)*
                }
            }
        }
    };
}

pub(crate) use database_objects;

#[cfg(test)]
mod tests {
    use crate::db::catalog::{ObjectKind, Owned, READY};
    use crate::workload::CLAIMS;
    use crate::workload::db::objects::SlobTables;
    use crate::workload::db::tables::SetupRecord;
    use crate::workload::tpcc::objects::OrderEntryTables;

    fn owned(kind: Option<ObjectKind>, name: &str) -> Owned {
        Owned {
            kind,
            name: name.to_string(),
            state: READY.to_string(),
            parameters: String::new(),
            identity: None,
        }
    }

    #[test]
    fn only_corescale_shaped_rows_are_dropped() {
        assert!(owned(Some(ObjectKind::Table), "corescale_t0").is_corescale_shaped(CLAIMS, false));
        assert!(owned(Some(ObjectKind::Table), "CORESCALE_T12").is_corescale_shaped(CLAIMS, true));
        assert!(
            !owned(Some(ObjectKind::Table), "CORESCALE_T12").is_corescale_shaped(CLAIMS, false)
        );
        assert!(!owned(Some(ObjectKind::Table), "Corescale_t12").is_corescale_shaped(CLAIMS, true));
        assert!(
            owned(Some(ObjectKind::Function), "corescale_loop_t3")
                .is_corescale_shaped(CLAIMS, false)
        );
        for hostile in [
            "corescale_orders",
            "corescale_t",
            "corescale_t1\"; DROP TABLE victim; --",
            "corescale_t1`; DROP TABLE victim; --",
            "victim",
            "corescale_t1 ",
        ] {
            assert!(
                !owned(Some(ObjectKind::Table), hostile).is_corescale_shaped(CLAIMS, false),
                "{hostile}"
            );
        }
        assert!(
            !owned(Some(ObjectKind::Function), "corescale_t0").is_corescale_shaped(CLAIMS, false)
        );
        assert!(!owned(None, "corescale_t0").is_corescale_shaped(CLAIMS, false));
    }

    #[test]
    fn parameters_round_trip() {
        let record = SetupRecord {
            schema: 1,
            schemas: 2,
            rows: 1024,
        };
        assert_eq!(
            serde_json::from_str::<SetupRecord>(&record.to_json()).unwrap(),
            record
        );
    }

    #[test]
    fn order_entry_tables_are_shaped_by_their_prefix_and_belong_to_its_setup() {
        let table = |name| owned(Some(ObjectKind::Table), name);
        assert!(table("corescale_tpcc_order_line").claimed_by(&OrderEntryTables, false));
        assert!(table("CORESCALE_TPCC_STOCK").claimed_by(&OrderEntryTables, true));
        assert!(table("corescale_t3").claimed_by(&SlobTables, false));
        assert!(!table("corescale_t3").claimed_by(&OrderEntryTables, false));
        for hostile in [
            "corescale_tpcc_",
            "corescale_tpcc_Stock",
            "corescale_tpcc_stock1",
            "corescale_tpcc_stock; drop",
            "corescale_tpcc_abcdefghijklmnopq",
        ] {
            assert!(
                !table(hostile).is_corescale_shaped(CLAIMS, false),
                "{hostile}"
            );
        }
        assert!(
            !owned(Some(ObjectKind::Function), "corescale_tpcc_stock")
                .is_corescale_shaped(CLAIMS, false)
        );
    }
}
