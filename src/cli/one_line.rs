//! clap's refusals on one line, as corescale's own: the problem, then where the fix is.

/// clap's rendered error (`error: ...`, its items and tips, a usage line, a pointer to
/// help) as one line: "error: PROBLEM (TIP): see `COMMAND --help`".
pub fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().filter(|line| !line.trim().is_empty());
    let problem = lines
        .next()
        .map(|line| line.strip_prefix("error: ").unwrap_or(line).trim())
        .unwrap_or("the command line is not understood");
    let (mut items, mut tips, mut command) = (Vec::new(), Vec::new(), None);
    for line in lines {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            // The command path: the words before its options and arguments.
            let words: Vec<&str> = usage
                .split_whitespace()
                .take_while(|word| !word.starts_with(['[', '<', '-']))
                .collect();
            command = Some(words.join(" "));
        } else if let Some(tip) = line.trim().strip_prefix("tip: ") {
            tips.push(tip.to_string());
        } else if line.starts_with(' ') {
            items.push(line.trim().to_string());
        }
    }
    let mut text = format!("error: {}", problem.trim_end_matches(':'));
    if !items.is_empty() {
        text = format!("{text}: {}", items.join(", "));
    }
    if !tips.is_empty() {
        text = format!("{text} ({})", tips.join("; "));
    }
    match command.filter(|command| !command.is_empty()) {
        Some(command) => format!("{text}: see `{command} --help`"),
        None => format!("{text} (see --help)"),
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn clap_refusals_become_one_line_naming_the_help() {
        let cases = [
            (
                "error: the following required arguments were not provided:\n  --target <URL>\n\nUsage: corescale db setup --target <URL>\n\nFor more information, try '--help'.\n",
                "error: the following required arguments were not provided: --target <URL>: see `corescale db setup --help`",
            ),
            (
                "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: corescale run [OPTIONS] [WORKLOAD]\n\nFor more information, try '--help'.\n",
                "error: unexpected argument '--bogus' found (to pass '--bogus' as a value, use '-- --bogus'): see `corescale run --help`",
            ),
            (
                "error: invalid value 'x' for '--workers <N>': 'x' is not a worker count: use a whole number such as 8\n\nFor more information, try '--help'.\n",
                "error: invalid value 'x' for '--workers <N>': 'x' is not a worker count: use a whole number such as 8 (see --help)",
            ),
            (
                "error: unrecognized subcommand 'foo'\n\nUsage: corescale <COMMAND>\n\nFor more information, try '--help'.\n",
                "error: unrecognized subcommand 'foo': see `corescale --help`",
            ),
        ];
        for (rendered, expected) in cases {
            let line = one_line(rendered);
            assert_eq!(line, expected);
            assert!(!line.contains('\n'));
        }
    }
}
