//! The command line as users type it: every example of every help parsed, each option under
//! its heading, and test_cpu_parallel's spellings.

use super::*;

/// A help example's words as a shell splits them: single and double quotes kept
/// together, a `#` after a blank starts a comment, and a redirection (`>`) ends the
/// command.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '#') if !started => break,
            (None, '>') if !started => break,
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Every example line (`corescale ...`) of every command's help, and which command shows it.
fn help_examples(command: &clap::Command, path: &str, found: &mut Vec<(String, String)>) {
    let path = format!("{path} {}", command.get_name());
    for text in [command.get_after_help(), command.get_after_long_help()]
        .into_iter()
        .flatten()
    {
        // An example goes on over lines that end in " \\", as in a shell.
        let mut example: Option<String> = None;
        for line in text.to_string().lines() {
            let line = line.trim_start();
            if let Some(started) = example.as_mut() {
                started.push(' ');
                started.push_str(line.trim_end_matches('\\').trim_end());
            } else if line == "corescale" || line.starts_with("corescale ") {
                example = Some(line.trim_end_matches('\\').trim_end().to_string());
            }
            if !line.ends_with('\\')
                && let Some(done) = example.take()
            {
                found.push((path.clone(), done));
            }
        }
    }
    for subcommand in command.get_subcommands() {
        help_examples(subcommand, &path, found);
    }
}

/// Issue 49: examples wrapped in the middle of a command at 80 columns. No line of any
/// help's examples and notes is longer than 80 columns less clap's indent, so none wraps.
#[test]
fn no_help_example_wraps_at_80_columns() {
    use clap::CommandFactory;
    fn long_lines(command: &clap::Command, path: &str, found: &mut Vec<String>) {
        let path = format!("{path} {}", command.get_name());
        for text in [command.get_after_help(), command.get_after_long_help()]
            .into_iter()
            .flatten()
        {
            // An example's lines: its first, and each after one ending in " \\".
            let mut going_on = false;
            for line in text.to_string().lines() {
                let example = going_on || line.trim_start().starts_with("corescale");
                if example && line.chars().count() > 78 {
                    found.push(format!("{path}: {line}"));
                }
                going_on = example && line.ends_with('\\');
            }
        }
        for subcommand in command.get_subcommands() {
            long_lines(subcommand, &path, found);
        }
    }
    let mut found = Vec::new();
    long_lines(&Cli::command(), "", &mut found);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The long help of the command at `path` (`["run", "db"]`), as `--help` prints it.
fn long_help(path: &[&str]) -> String {
    use clap::CommandFactory;
    let mut command = Cli::command();
    // Global options reach the subcommands when the command is built.
    command.build();
    let mut at = &mut command;
    for name in path {
        at = at.find_subcommand_mut(name).unwrap();
    }
    at.render_long_help().to_string()
}

/// Issue 49: the progress and idle-host options sat under the Campaign heading, and
/// `run script` listed --in-schema, which it refuses. Each heading holds its own options.
#[test]
fn options_sit_under_the_heading_they_belong_to() {
    let help = long_help;
    let options_under = |help: &str, heading: &str| -> Vec<String> {
        help.split(heading)
            .nth(1)
            .unwrap_or_else(|| panic!("no {heading} in {help}"))
            .lines()
            .skip(1)
            .take_while(|line| line.is_empty() || line.starts_with(' '))
            .filter_map(|line| line.trim_start().strip_prefix("--"))
            .map(|option| option.split([' ', ',']).next().unwrap().to_string())
            .collect()
    };
    let db = help(&["run", "db"]);
    assert_eq!(
        options_under(&db, "Campaign (several client hosts, one database):"),
        [
            "campaign",
            "part",
            "start-at",
            "level-gap",
            "max-clock-offset"
        ]
    );
    assert_eq!(
        options_under(&db, "Oracle targets (SLOB's numbered services):"),
        ["service-base", "service-max"]
    );
    let script = help(&["run", "script"]);
    assert!(!script.contains("--in-schema"), "{script}");
    assert!(db.contains("--in-schema"));
}

/// Issue 49: `run script --help` showed `-w 1,2,4,8`, which fails. Every example of every
/// help text is parsed as the binary parses its arguments.
#[test]
fn every_help_example_parses() {
    use clap::CommandFactory;
    let mut found = Vec::new();
    help_examples(&Cli::command(), "", &mut found);
    assert!(found.len() > 30, "only {} examples found", found.len());
    let refused: Vec<String> = found
        .iter()
        .filter_map(|(command, example)| {
            let words: Vec<OsString> = shell_words(example)
                .into_iter()
                .map(OsString::from)
                .collect();
            let parsed = normalize(words)
                .map_err(|error| error.to_string())
                .and_then(|words| Cli::try_parse_from(words).map_err(|error| error.to_string()));
            parsed
                .err()
                .map(|error| format!("{command}: {example}: {error}"))
        })
        .collect();
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

fn arguments(line: &str) -> Vec<OsString> {
    std::iter::once("corescale")
        .chain(line.split_whitespace())
        .map(OsString::from)
        .collect()
}

/// The workload, its array size and the worker count clap reads from a command line
/// after the `--mode` alias, or the refusal in corescale's words.
fn parsed(line: &str) -> Result<(WorkloadKind, Option<u64>, Option<String>), String> {
    let arguments = normalize(arguments(line)).map_err(|error| error.to_string())?;
    let cli = Cli::try_parse_from(&arguments).map_err(|error| {
        workload_refused(&arguments, &error).unwrap_or_else(|| error.to_string())
    })?;
    let Command::Run(run) = cli.command else {
        return Err("not run".to_string());
    };
    let workload = run.workload().map_err(|error| error.to_string())?;
    let array = match &workload {
        WorkloadArgs::Memory(memory) => memory.array.array_size,
        _ => None,
    };
    let workers = run.sweep.workers.map(|workers| format!("{workers:?}"));
    Ok((workload.kind(), array, workers))
}

/// Every spelling README and test_cpu_parallel use reads as the same run: the workload
/// named (cpu when none is), its options after it, the run's options anywhere.
#[test]
fn every_spelling_of_the_workload_reads_the_same() {
    let memory_64k = |line: &str| {
        let (kind, array, workers) = parsed(line).unwrap_or_else(|error| panic!("{line}: {error}"));
        assert_eq!((kind, array), (WorkloadKind::Memory, Some(65536)), "{line}");
        assert!(workers.is_some(), "{line}");
    };
    for line in [
        "run memory --array-size 64K -w 1",
        "run --mode memory --array-size 64K -w1",
        "run --mode=memory --array-size 64K -q -w 1",
        "run -m memory --array-size 64K -qw 1",
        "run -mmemory --array-size 64K -w1",
        "run -m=memory --array-size 64K -w1",
        "run --repeat 1 -qw1 memory --array-size 64K",
        "run -w 1 memory --array-size 64K --repeat 1",
        // A value that looks like a workload's name is the option's value.
        "run --label cpu -w1 memory --array-size 64K",
        "run -o db.json -w 1 memory --array-size 64K",
    ] {
        memory_64k(line);
    }
    for line in [
        "run",
        "run -w 4",
        "run --sweep 1,2,4,8 -o out.json",
        "run cpu --full -w 16",
    ] {
        assert_eq!(parsed(line).unwrap().0, WorkloadKind::Cpu, "{line}");
    }
    // Other commands pass unchanged, --mode and all.
    assert_eq!(
        normalize(arguments("report a.csv --mode x")).unwrap(),
        arguments("report a.csv --mode x")
    );
}

#[test]
fn a_workload_given_twice_or_unknown_is_refused() {
    for (given, message) in [
        ("run --mode memory memory", "the workload is named twice"),
        ("run memory memory", "the workload is named twice"),
        ("run --mode memory --mode cpu", "--mode is given twice"),
        ("run --mode", "--mode needs a workload"),
        ("run disk", "'disk' is not a workload: use cpu, memory"),
        ("run -m disk", "'disk' is not a workload"),
    ] {
        let error = parsed(given).expect_err(given);
        assert!(error.contains(message), "{given}: {error}");
    }
}

#[test]
fn an_option_of_another_workload_names_its_owners() {
    let said = foreign_option(&arguments("run lio --array-size 64M"), "--array-size");
    assert_eq!(
        said.as_deref(),
        Some(
            "--array-size applies to the memory and bandwidth workloads, not lio: drop it, or run memory or bandwidth"
        )
    );
    // The run's options may come before the workload, its own only after it.
    let said = foreign_option(&arguments("run --array-size 64K memory"), "--array-size");
    assert!(said.unwrap().contains("give it after the workload's name"));
    let said = foreign_option(&arguments("run -w1 --cache-size 64M"), "--cache-size");
    assert!(said.unwrap().contains("not cpu"));
    // An option of the chosen workload, or of none, is left to clap's own message.
    assert_eq!(
        foreign_option(&arguments("run lio --scale 1G"), "--scale"),
        None
    );
    assert_eq!(
        foreign_option(&arguments("run cpu --nonsense"), "--nonsense"),
        None
    );
    assert_eq!(
        foreign_option(&arguments("report --array-size 1"), "--array-size"),
        None
    );
}

/// `db setup`'s sizing options are refused by `run db` itself, saying where they go.
#[test]
fn run_db_sends_setup_options_to_db_setup() {
    for line in ["run db --scale 1G", "run db --schemas 4"] {
        let error = parsed(line).expect_err(line);
        assert!(
            error.contains("give it to `corescale db setup`"),
            "{line}: {error}"
        );
    }
}

/// Issue 49: a workload's help lists only the options it takes. `run script` showed Oracle's
/// numbered services and the replay limit of corescale's own setup, and cpu, memory and
/// bandwidth --interval and the built-in workloads the campaign options, which they ignored
/// or could not use; each is now hidden there and refused.
#[test]
fn a_workloads_help_lists_only_options_it_takes() {
    let help = long_help;
    let script = help(&["run", "script"]);
    for option in [
        "--service-base",
        "--service-max",
        "--replay-limit",
        "--in-schema",
    ] {
        assert!(!script.contains(option), "{option} in {script}");
    }
    assert!(help(&["run", "db"]).contains("--service-base"));
    for workload in ["cpu", "memory", "bandwidth"] {
        let shown = help(&["run", workload]);
        assert!(!shown.contains("--interval"), "{workload}: {shown}");
        assert!(shown.contains("--duration"), "{workload}: {shown}");
        // Given after the workload's name, the parser refuses it with the reason.
        let refused = Cli::try_parse_from(["corescale", "run", workload, "--interval", "2s"])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("keep no per-interval figures"),
            "{refused}"
        );
    }
    for workload in ["lio", "db", "script"] {
        assert!(
            help(&["run", workload]).contains("--interval"),
            "{workload}"
        );
    }
    // Given before it, the run-wide option parses, and `run` refuses it once the workload is
    // known (tests/run/command.rs runs the binary).
    let cli = Cli::try_parse_from(["corescale", "run", "--interval", "2s", "cpu"]).unwrap();
    let crate::cli::Command::Run(run) = cli.command else {
        panic!("not run");
    };
    assert_eq!(run.sweep.interval, Some(std::time::Duration::from_secs(2)));
    assert!(!run.workload().unwrap().options().keeps_intervals());
}
