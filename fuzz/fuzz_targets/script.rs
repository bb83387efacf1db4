//! Any text, as a script `run script --file` might be given: an error naming its file, line
//! and column, or a script whose statements render with either product's placeholders and
//! whose `\set` expressions evaluate to a value or a message, never a panic. `.ci/run` runs it
//! for 30 s from the scripts in `fuzz/inputs/script`; by hand: `cargo +nightly fuzz run script`.
#![no_main]

use corescale::workload::script::parse::{Variables, parse_script};
use corescale::workload::script::try_evaluations;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let mut variables = Variables::default();
    match parse_script("fuzz.sql", text, &mut variables) {
        Err(error) => {
            let message = error.to_string();
            assert!(message.starts_with("fuzz.sql:"), "{message}");
            assert!(error.place.line >= 1 && error.place.column >= 1);
        }
        Ok(script) => {
            assert!(script.statements().count() >= 1);
            for statement in script.statements() {
                let (sql, bound) = statement.render(|n| format!("${n}"));
                assert_eq!(sql.matches('$').count() >= bound.len(), true);
                let (_, again) = statement.render(|_| "?".to_string());
                assert_eq!(bound, again);
            }
            // Each \set evaluated in order, as a session would: a value or a message.
            try_evaluations(&script, &variables);
        }
    }
});
