//! `corescale db setup|teardown`: corescale's tables in a real database.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::DbCommand;
use crate::workload::db::catalog::{self, Teardown};
use crate::workload::db::connect;

pub fn execute(command: &DbCommand) -> Result<()> {
    match command {
        DbCommand::Setup(args) => {
            let rows = args.rows()?;
            let target = args.target.open()?;
            let database = connect(&target)?;
            let bar = ProgressBar::new(args.schemas * rows);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} rows  ETA {eta}",
                )
                .expect("the progress template is valid"),
            );
            let previous = catalog::setup(database.as_ref(), args.schemas, rows, &|count| {
                bar.inc(count)
            })
            .with_context(|| format!("setting up {target}"))?;
            bar.finish_and_clear();
            if !previous.is_empty() {
                println!(
                    "dropped the earlier setup's objects: {}",
                    previous.join(", ")
                );
            }
            println!(
                "created {} table(s) corescale_t0..corescale_t{} of {rows} one-row blocks in {target}",
                args.schemas,
                args.schemas - 1
            );
            Ok(())
        }
        DbCommand::Teardown(args) => {
            let target = args.open()?;
            let Teardown {
                dropped,
                left_alone,
                refused,
            } = catalog::teardown(connect(&target)?.as_ref())?;
            if dropped.is_empty() {
                println!("no objects of corescale's catalogue in {target}");
            } else {
                println!("dropped from {target}: {}", dropped.join(", "));
            }
            if !left_alone.is_empty() {
                println!(
                    "left alone (not created by corescale: its catalogue does not list them): {}",
                    left_alone.join(", ")
                );
            }
            if !refused.is_empty() {
                eprintln!(
                    "warning: {} lists {} which corescale never creates: left alone",
                    catalog::CATALOG_TABLE,
                    refused.join(", ")
                );
            }
            Ok(())
        }
    }
}
