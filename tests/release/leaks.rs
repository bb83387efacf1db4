//! Nothing in `src` is kept past its owner (issue 76): no `Box::leak`, `String::leak`,
//! `.leak()` and no global interner, so a process that loads a capture or builds a workload
//! twice holds what it held after once (`tests/memory.rs` measures it). Checked on the
//! words of the source, comments included: a word holding "leak", or one beginning with
//! "intern" other than "internal" (intern, interner, interned, internment).

use std::path::Path;

use super::layers::sources;

/// The words of `line`, lowercased: split at anything but letters and digits (so
/// `string_interner` gives "interner") and where a capital follows a small letter (so
/// `StringInterner` does too).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_small = false;
    for c in line.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_small);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_small = c.is_lowercase();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a word names leaking or interning. "internal" is another word (PostgreSQL's
/// `tgisinternal` column among its uses).
fn forbidden(word: &str) -> bool {
    word.contains("leak") || word.starts_with("intern") && !word.starts_with("internal")
}

/// Each line of `text` that names leaking or interning, with its number.
fn offending(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| words(line).iter().any(|word| forbidden(word)))
        .map(|(index, line)| (index + 1, line.trim().to_string()))
        .collect()
}

#[test]
fn the_check_finds_leaks_and_interners_and_passes_internal() {
    for line in [
        "let text: &'static str = Box::leak(owned.into_boxed_str());",
        "names.push(name.leak());",
        "let made = String::leak(name);",
        "// its values leaked once",
        "static INTERNER: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());",
        "let names = StringInterner::default();",
        "use string_interner::Symbol;",
        "fn intern(name: String) -> &'static str {",
    ] {
        assert_eq!(offending(line).len(), 1, "not found: {line}");
    }
    for line in [
        "WHERE t.tgrelid IN (SELECT oid FROM tables) AND NOT t.tgisinternal",
        "/// An internal error: corescale's own fault.",
        "let sql: Box<str> = statement.sql.into_boxed_str();",
    ] {
        assert_eq!(offending(line), Vec::new(), "found in: {line}");
    }
}

#[test]
fn nothing_in_src_is_leaked_or_interned() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut checked = 0;
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in offending(&text) {
            found.push(format!("{}:{number}: {line}", file.display()));
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} files found under src");
    assert!(
        found.is_empty(),
        "memory kept past its owner (own it, or borrow it from its owner) or named so:\n{}",
        found.join("\n")
    );
}
