use clap::Parser;

use corescale::cli::{Cli, Command};
use corescale::commands::{self, run::RunEnd};
use corescale::error::exit_code;
use corescale::sweep::stop::INTERRUPTED_EXIT_CODE;
use corescale::workload::db::target::redact;

fn main() {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Host(args) => commands::host::execute(args).map(|()| 0),
        Command::Report(args) => commands::report::execute(args).map(|()| 0),
        Command::Db(args) => commands::db::execute(args).map(|()| 0),
        Command::Run(args) => {
            let command_line = std::env::args().map(|arg| redact(&arg)).collect();
            commands::run::execute(args, command_line).map(|end| match end {
                RunEnd::Complete => 0,
                RunEnd::Interrupted => INTERRUPTED_EXIT_CODE,
            })
        }
    };
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            eprintln!("error: {}", redact(&format!("{error:#}")));
            std::process::exit(exit_code(&error));
        }
    }
}
