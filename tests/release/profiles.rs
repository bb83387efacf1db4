//! The test build's profile: the crates it leaves unoptimized are crates only the tests link.
//! A crate the binary links, left at opt-level 0, would share its unoptimized copies of
//! generic `#[inline]` functions with corescale, whose loops would call them instead of
//! inlining their own (the cpu workload's loop ran 3x slower: docs/measurements/tests.md).

use std::collections::BTreeSet;

use crate::common;

/// The packages `[profile.dev.package]` of Cargo.toml builds at opt-level 0.
fn unoptimized(manifest: &str) -> BTreeSet<String> {
    let Some(start) = manifest.find("\n[profile.dev.package]\n") else {
        return BTreeSet::new();
    };
    manifest[start..]
        .lines()
        .skip(2)
        .take_while(|line| !line.starts_with('['))
        .filter(|line| line.replace(' ', "").contains("{opt-level=0}"))
        .filter_map(|line| line.split('=').next())
        .map(|name| name.trim().trim_matches('"').to_string())
        .collect()
}

/// Every package the corescale binary links, from `cargo tree` (normal dependencies only).
fn linked_by_the_binary() -> BTreeSet<String> {
    let tree = common::run_tool(
        env!("CARGO"),
        &[
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ],
        &[],
    );
    tree.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn unoptimized_crates_are_linked_by_the_tests_only() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("Cargo.toml reads");
    let unoptimized = unoptimized(&manifest);
    assert!(
        unoptimized.contains("tokio") && unoptimized.contains("proptest"),
        "the profile's unoptimized crates were not found: {unoptimized:?}"
    );
    let linked = linked_by_the_binary();
    assert!(
        linked.contains("corescale") && linked.contains("rustls"),
        "{linked:?}"
    );
    let shared: Vec<_> = unoptimized.intersection(&linked).collect();
    assert!(
        shared.is_empty(),
        "{shared:?} at opt-level 0 in Cargo.toml's [profile.dev.package], but the binary links them: take them out"
    );
}
