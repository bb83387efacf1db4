//! What the binary says about itself: `version`, `completions SHELL`, and the man pages the
//! release bundle and packages install (`generate-man DIR`, hidden).

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;
use serde::Serialize;

use crate::cli::{Cli, CompletionsArgs, LONG_VERSION, VersionArgs};

#[derive(Serialize)]
struct Version {
    name: &'static str,
    version: &'static str,
    commit: &'static str,
    build_date: &'static str,
    target: &'static str,
    /// Optional features built in ("oracle").
    features: Vec<&'static str>,
    /// The Oracle client library's version when this host has it (loaded only for oracle://
    /// targets; everything else runs without it).
    oracle_client: Option<String>,
}

pub fn version(args: &VersionArgs) -> Result<()> {
    if args.json {
        let version = Version {
            name: env!("CARGO_PKG_NAME"),
            version: env!("CARGO_PKG_VERSION"),
            commit: env!("CORESCALE_COMMIT"),
            build_date: env!("CORESCALE_BUILD_DATE"),
            target: env!("CORESCALE_TARGET"),
            features: if cfg!(feature = "oracle") {
                vec!["oracle"]
            } else {
                Vec::new()
            },
            oracle_client: crate::db::oracle::client::version().ok(),
        };
        super::write_out(&format!("{}\n", serde_json::to_string_pretty(&version)?))?;
    } else {
        super::write_out(&format!(
            "corescale {LONG_VERSION}\n{}\n",
            crate::db::oracle::client::found()
        ))?;
    }
    Ok(())
}

pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    clap_complete::generate(
        args.shell,
        &mut command,
        "corescale",
        &mut std::io::stdout(),
    );
    Ok(())
}

/// One man page per command and subcommand: corescale.1, corescale-run.1, corescale-db-setup.1.
pub fn man_pages(directory: &Path) -> Result<()> {
    std::fs::create_dir_all(directory)
        .with_context(|| format!("cannot create '{}'", directory.display()))?;
    let command = Cli::command();
    clap_mangen::generate_to(command, directory)
        .with_context(|| format!("cannot write man pages into '{}'", directory.display()))
}
