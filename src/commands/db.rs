//! `corescale db setup|teardown`: corescale's tables in a real database.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{DbCommand, DbTargetArgs};
use crate::workload::db::target::Target;
use crate::workload::db::{connect, setup};

pub fn execute(command: &DbCommand) -> Result<()> {
    match command {
        DbCommand::Setup(args) => {
            let rows = args.rows()?;
            let target = open(&args.target)?;
            let database = connect(&target)?;
            let bar = ProgressBar::new(args.schemas * rows);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} rows  ETA {eta}",
                )
                .expect("the progress template is valid"),
            );
            setup(database.as_ref(), args.schemas, rows, &|count| {
                bar.inc(count)
            })
            .with_context(|| format!("setting up {target}"))?;
            bar.finish_and_clear();
            println!(
                "created {} table(s) corescale_t0..corescale_t{} of {rows} one-row blocks in {target}",
                args.schemas,
                args.schemas - 1
            );
            Ok(())
        }
        DbCommand::Teardown(args) => {
            let target = open(args)?;
            let dropped = connect(&target)?.teardown()?;
            if dropped.is_empty() {
                println!("no corescale objects in {target}");
            } else {
                println!("dropped from {target}: {}", dropped.join(", "));
            }
            Ok(())
        }
    }
}

fn open(args: &DbTargetArgs) -> Result<Target> {
    Target::parse(&args.target)?.with_password(args.password_prompt)
}
