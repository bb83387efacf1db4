//! What the suite skips, and why: every ignored test says what it needs, and the summary of
//! README's test command names the tests this host skips with the variable each needs (this
//! test's output is shown at the end of `cargo nextest run`, see .config/nextest.toml).

use std::path::Path;

/// The variables that name the servers and binaries the database tests use.
const VARIABLES: [&str; 3] = [
    "CORESCALE_TEST_PG",
    "CORESCALE_TEST_MYSQL",
    "CORESCALE_TEST_PG_BINDIR",
];

/// The identifier `text` begins with.
fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Each ignored test of `text`: its function's name and the reason its attribute gives.
fn ignored_tests(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("ignore = \"") {
        let reason_start = at + "ignore = \"".len();
        let Some(length) = text[reason_start..].find('"') else {
            continue;
        };
        let reason = text[reason_start..reason_start + length].to_string();
        let after = &text[reason_start + length..];
        let name = after
            .find("fn ")
            .map(|fn_at| identifier(&after[fn_at + 3..]))
            .unwrap_or_default();
        // A test a macro writes is one per use of the macro: say so.
        let macro_at = text[..at]
            .rfind("macro_rules! ")
            .filter(|macro_at| !text[*macro_at..at].contains("\n}"));
        let name = match macro_at {
            Some(macro_at) => format!(
                "every {}! test's {name}",
                identifier(&text[macro_at + "macro_rules! ".len()..])
            ),
            None => name,
        };
        found.push((name, reason));
    }
    found
}

/// Whether `reason` names `variable` itself, not a longer name it begins
/// (CORESCALE_TEST_PG_BINDIR is not CORESCALE_TEST_PG).
fn names_variable(reason: &str, variable: &str) -> bool {
    reason.match_indices(variable).any(|(at, _)| {
        !reason[at + variable.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn test_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "fixtures") {
                test_files(&path, files);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn a_variable_is_told_from_a_longer_one() {
    assert!(names_variable(
        "needs CORESCALE_TEST_PG, a URL",
        "CORESCALE_TEST_PG"
    ));
    assert!(!names_variable(
        "needs CORESCALE_TEST_PG_BINDIR",
        "CORESCALE_TEST_PG"
    ));
    assert!(names_variable(
        "needs CORESCALE_TEST_PG_BINDIR",
        "CORESCALE_TEST_PG_BINDIR"
    ));
}

#[test]
fn a_reason_is_read_from_each_kind_of_ignore() {
    let text = "#[test]\n#[cfg_attr(not(a), ignore = \"needs CORESCALE_TEST_PG, a URL\")]\nfn on_pg() {}\n#[test]\n#[ignore = \"needs an idle host\"]\nfn quiet() {}";
    assert_eq!(
        ignored_tests(text),
        [
            (
                "on_pg".to_string(),
                "needs CORESCALE_TEST_PG, a URL".to_string()
            ),
            ("quiet".to_string(), "needs an idle host".to_string())
        ]
    );
}

#[test]
fn every_skipped_test_names_what_it_needs() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    test_files(&tests, &mut files);
    files.sort();
    let mut ignored = 0;
    let mut skipped_here = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let module = file.strip_prefix(&tests).unwrap().display().to_string();
        assert!(
            !text.contains(concat!("#[", "ignore]")),
            "{module}: a bare ignore attribute says nothing: give the reason, ignore = \"needs ...\""
        );
        for (name, reason) in ignored_tests(&text) {
            assert!(
                reason.starts_with("needs ") && !name.is_empty(),
                "{module}: the ignore attribute of `{name}` must say what the test needs (\"needs ...\"), not \"{reason}\""
            );
            ignored += 1;
            let unset = VARIABLES.iter().find(|variable| {
                names_variable(&reason, variable) && std::env::var_os(variable).is_none()
            });
            if let Some(variable) = unset {
                skipped_here.push(format!("{module} {name}: {variable} is not set"));
            }
        }
    }
    assert!(ignored >= 20, "only {ignored} ignored tests found");
    if skipped_here.is_empty() {
        println!(
            "every database test runs here: {} are set",
            VARIABLES.join(", ")
        );
    } else {
        println!("skipped here for want of a variable (see README):",);
        for line in &skipped_here {
            println!("  {line}");
        }
    }
}
