use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
// Prints that ignore a closed pipe instead of panicking (see the crate's root).
use corescale::{eprint, eprintln};

use corescale::cli::{self, Cli, Command};
use corescale::commands::{self, run::RunEnd, run::STRICT_EXIT_CODE};
use corescale::db::connect::target::{
    PASSWORD_VARIABLE, carries_password, hide_passwords_from_ps, redact,
};
use corescale::error::exit_code;
use corescale::redact::{
    redact_command_word, redact_misplaced, register_argument_secrets, register_variable_secrets,
};

/// Environment variables whose value is a password: corescale's own and libpq's.
const PASSWORD_VARIABLES: [&str; 2] = [PASSWORD_VARIABLE, "PGPASSWORD"];

fn main() {
    let arguments: Vec<_> = std::env::args_os().collect();
    // Before anything may echo an argument (clap included): every password given is hidden
    // from then on, whatever characters it holds, and a URL outside --target is stored and
    // shown without its password.
    register_argument_secrets(&arguments);
    register_variable_secrets(&PASSWORD_VARIABLES);
    let arguments = redact_misplaced(arguments, "--target");
    let arguments = cli::normalize(arguments).unwrap_or_else(|error| {
        eprintln!("error: {}", redact(&error.to_string()));
        std::process::exit(2);
    });
    // `--version` also says whether this host has Oracle's client library: clap's is fixed.
    if let [_, flag] = arguments.as_slice()
        && (flag == "--version" || flag == "-V")
    {
        let shown = commands::about::version(&cli::VersionArgs { json: false });
        std::process::exit(i32::from(shown.is_err()));
    }
    // clap's own messages quote the arguments: a misplaced URL must not show its password.
    let cli = Cli::try_parse_from(&arguments).unwrap_or_else(|error| {
        if let Some(text) = cli::workload_refused(&arguments, &error) {
            eprintln!("error: {}", redact(&text));
            std::process::exit(2);
        }
        if error.kind() == ErrorKind::UnknownArgument
            && let Some(ContextValue::String(option)) = error.get(ContextKind::InvalidArg)
            && let Some(text) = cli::foreign_option(&arguments, option)
                .or_else(|| cli::refused_setup_option(&arguments, option))
        {
            eprintln!("error: {}", redact(&text));
            std::process::exit(2);
        }
        let text = redact(&error.render().to_string());
        // `corescale` or `corescale db` alone: clap shows the command's help, on stderr.
        if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            eprint!("{text}");
        } else if error.use_stderr() {
            eprintln!("{}", cli::one_line(&text));
        } else if let Err(error) = commands::write_out(&text) {
            eprintln!("corescale: {error:#}");
        }
        std::process::exit(error.exit_code());
    });
    if std::env::args_os().any(|arg| carries_password(&arg.to_string_lossy())) {
        eprintln!(
            "warning: a password on the command line shows in `ps` and stays in shell history: set {PASSWORD_VARIABLE} or use --password-prompt"
        );
        if let Err(error) = hide_passwords_from_ps() {
            eprintln!("warning: the password stays visible in `ps`: {error:#}");
        }
    }
    let outcome = match &cli.command {
        Command::Host(args) => commands::host::execute(args).map(|()| 0),
        Command::Report(args) => commands::report::execute(args).map(|()| 0),
        Command::Db(args) => commands::db::execute(args).map(|()| 0),
        Command::Capture(args) => commands::capture::execute(args).map(|()| 0),
        Command::Version(args) => commands::about::version(args).map(|()| 0),
        Command::Completions(args) => commands::about::completions(args).map(|()| 0),
        Command::GenerateMan(args) => commands::about::man_pages(&args.directory).map(|()| 0),
        Command::Run(args) => {
            let command_line = std::env::args_os()
                .map(|arg| redact_command_word(&arg.to_string_lossy()))
                .collect();
            commands::run::execute(args, command_line).map(|end| match end {
                RunEnd::Complete => 0,
                RunEnd::Flagged => STRICT_EXIT_CODE,
                RunEnd::Stopped(code) => code,
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
