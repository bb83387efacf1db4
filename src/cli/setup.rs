//! `db setup`'s refusals in corescale's words: `--workload NAME` is now the subcommand, and
//! an option of another workload's setup says whose it is. Read from the setups' table, so a
//! new workload's options are known here without a line of their own.

use std::ffi::OsString;

use crate::workload::SETUP_NAMES;

/// For an option clap did not know in `db setup [NAME]`: `--workload NAME` is now the
/// subcommand, and an option of another workload's setup says whose it is.
pub fn refused_setup_option(arguments: &[OsString], unknown: &str) -> Option<String> {
    let words: Vec<&str> = arguments.iter().filter_map(|arg| arg.to_str()).collect();
    if words.get(1..3) != Some(&["db", "setup"][..]) {
        return None;
    }
    let named = words.iter().skip(3).find(|word| SETUP_NAMES.contains(word));
    let option = unknown.split('=').next().unwrap_or(unknown);
    if option == "--workload" {
        let given = words
            .iter()
            .position(|word| word.split('=').next() == Some("--workload"))
            .and_then(|at| match words[at].split_once('=') {
                Some((_, value)) => Some(value),
                None => words.get(at + 1).copied(),
            })
            .filter(|value| SETUP_NAMES.contains(value));
        return Some(match given {
            Some(name) => format!(
                "--workload is gone: name the workload right after setup, as in `corescale db setup {name} --target URL`"
            ),
            None => format!(
                "--workload is gone: name the workload right after setup, as in `corescale db setup {} --target URL`",
                SETUP_NAMES.join("|")
            ),
        });
    }
    if SETUP_NAMES.contains(&option) {
        return Some(format!(
            "name the workload right after setup, before its options: `corescale db setup {option} --target URL ...`"
        ));
    }
    let long = option.strip_prefix("--")?;
    let command = <super::Cli as clap::CommandFactory>::command();
    let owners: Vec<String> = command
        .find_subcommand("db")?
        .find_subcommand("setup")?
        .get_subcommands()
        .filter(|setup| {
            setup
                .get_arguments()
                .any(|arg| !arg.is_hide_set() && arg.get_long() == Some(long))
        })
        .map(|setup| format!("`db setup {}`", setup.get_name()))
        .collect();
    if owners.is_empty() {
        return None;
    }
    let chosen = named.copied().unwrap_or(SETUP_NAMES[0]);
    Some(format!(
        "{option} is an option of {}, not of `db setup {chosen}`: drop it, or run {}",
        owners.join(" and "),
        owners.join(" or ")
    ))
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use clap::error::{ContextKind, ContextValue};

    use super::*;

    /// What `corescale LINE` is refused with: corescale's words where it has them, else
    /// clap's.
    fn refused(line: &str) -> String {
        let arguments: Vec<OsString> = std::iter::once("corescale")
            .chain(line.split_whitespace())
            .map(OsString::from)
            .collect();
        let error = crate::cli::Cli::try_parse_from(&arguments).expect_err(line);
        match error.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(option)) => refused_setup_option(&arguments, option),
            _ => None,
        }
        .unwrap_or_else(|| error.to_string())
    }

    #[test]
    fn the_workload_flag_and_another_setups_options_name_the_setup_to_run() {
        let target = "--target postgres://u@h/d";
        for (line, says) in [
            (
                format!("db setup --workload tpcc --warehouses 2 {target}"),
                "`corescale db setup tpcc --target URL`",
            ),
            (
                format!("db setup {target} --workload=slob"),
                "`corescale db setup slob --target URL`",
            ),
            (
                format!("db setup --workload oracle {target}"),
                "`corescale db setup slob|tpcc --target URL`",
            ),
            (
                format!("db setup --warehouses 2 {target}"),
                "--warehouses is an option of `db setup tpcc`, not of `db setup slob`",
            ),
            (
                format!("db setup tpcc --scale 64M {target}"),
                "--scale is an option of `db setup slob`, not of `db setup tpcc`",
            ),
        ] {
            let said = refused(&line);
            assert!(said.contains(says), "{line}: {said}");
        }
        // An option no setup takes is clap's to refuse.
        assert!(refused(&format!("db setup --bogus {target}")).contains("unexpected argument"));
        // Both forms of the default parse.
        for line in [
            format!("corescale db setup {target} --schemas 3"),
            format!("corescale db setup slob {target} --schemas 3"),
            format!("corescale db setup tpcc {target} --warehouses 3"),
        ] {
            assert!(
                crate::cli::Cli::try_parse_from(line.split_whitespace()).is_ok(),
                "{line}"
            );
        }
    }
}
