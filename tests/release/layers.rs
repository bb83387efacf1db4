//! The layering `src/lib.rs` states, checked on the source: each top-level module uses only
//! the modules below it, and the analysis modules use each other without a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LEAVES: [&str; 8] = [
    "values",
    "stats",
    "format",
    "redact",
    "error",
    "interrupt",
    "rng",
    "input_file",
];

/// What each module may use besides the leaves.
fn allowed(module: &str) -> Option<&'static [&'static str]> {
    Some(match module {
        "values" | "stats" | "format" | "redact" | "error" | "interrupt" | "rng" => &[],
        // Its refusals are usage errors.
        "input_file" => &["error"],
        "host" | "latency" | "db" => &[],
        // Workloads fill the document's types; the document knows no workload.
        "workload" => &["host", "latency", "db", "result"],
        "result" => &["host", "latency"],
        "sweep" => &["host", "latency", "workload", "result"],
        "analysis" => &["host", "latency", "result"],
        "report" => &["host", "latency", "result", "analysis"],
        "cli" => &["host", "latency", "db", "workload", "sweep"],
        "commands" => &[
            "host", "latency", "db", "workload", "result", "sweep", "analysis", "report", "cli",
        ],
        _ => return None,
    })
}

/// Every file under `path`, or `path` itself.
pub(crate) fn sources(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        files.extend(sources(&entry.unwrap().path()));
    }
    files
}

/// The names after `prefix` in `text`: `crate::host::...` gives "host", and a group
/// `crate::{host, result::Level}` gives "host" and "result".
fn used(text: &str, prefix: &str) -> BTreeSet<String> {
    let name = |rest: &str| -> String {
        rest.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The group's items at its top level, up to its closing brace.
            let mut depth = 0;
            let mut item_start = 0;
            for (index, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.insert(name(&group[item_start..index]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(name(&group[item_start..index]));
                        item_start = index + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(name(rest));
        }
    }
    names.retain(|name| !name.is_empty() && name != "self");
    names
}

#[test]
fn groups_of_imports_are_read_too() {
    let names = used(
        "use crate::{host::Topology, result::{Level, Stats}, values};",
        "crate::",
    );
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["host", "result", "values"]
    );
}

#[test]
fn each_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        if matches!(module.as_str(), "lib" | "main") {
            continue;
        }
        let permitted = allowed(&module)
            .unwrap_or_else(|| panic!("src/{module}: add it to the layering in lib.rs and here"));
        for file in sources(&path) {
            let text = std::fs::read_to_string(&file).unwrap();
            for target in used(&text, "crate::") {
                assert!(
                    target == module
                        || LEAVES.contains(&target.as_str()) && !LEAVES.contains(&module.as_str())
                        || permitted.contains(&target.as_str()),
                    "{} uses crate::{target}, which is not below {module}",
                    file.display()
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 16, "only {checked} modules found");
}

/// In the database layer each product's driver stands alone: no driver uses another's folder,
/// and `connect` (URLs, settings, TLS) uses none of them; only `product` (their settings
/// resolvers) and `registry` (their drivers) know them all.
#[test]
fn database_products_use_only_the_shared_parts() {
    let db = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/db");
    let products = ["postgres", "mysql", "oracle"];
    let mut checked = 0;
    for part in products.iter().chain(&["connect"]) {
        for file in sources(&db.join(part)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for used in used(&text, "crate::db::") {
                assert!(
                    used == *part || !products.contains(&used.as_str()),
                    "{} uses crate::db::{used}: products share only connect, driver and catalog",
                    file.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} files found");
}

#[test]
fn the_analysis_modules_form_no_circle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analysis");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(&dir) {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        // A folder's module is its mod.rs (and the files beside it); its tests are not code.
        if stem == "tests" {
            continue;
        }
        let folder = file.parent().unwrap();
        let module = if folder == dir {
            stem
        } else {
            folder.file_name().unwrap().to_string_lossy().into_owned()
        };
        let text = std::fs::read_to_string(&file).unwrap();
        // Test modules may use anything; the circle that matters is in the code.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut targets = used(code, "super::");
        targets.extend(used(code, "crate::analysis::"));
        targets.remove(&module);
        edges.entry(module).or_default().extend(targets);
    }
    assert!(edges.contains_key("model") && edges.contains_key("study"));
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            panic!(
                "analysis modules use each other in a circle: {:?}",
                &path[at..]
            );
        }
        if !done.insert(node.to_string()) {
            return;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if edges.contains_key(next) {
                visit(next, edges, path, done);
            }
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        visit(node, &edges, &mut Vec::new(), &mut done);
    }
}

/// No source file grows past 900 lines unless its first comment says why it must be one
/// file ("one file: ..."): past that, a file holds more than one concern.
#[test]
fn no_source_file_is_over_900_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text.lines().count();
        let says_why = text
            .lines()
            .take_while(|line| line.starts_with("//!"))
            .any(|line| line.contains("one file:"));
        assert!(
            lines <= 900 || says_why,
            "{} has {lines} lines: split it by concern, or say in its first comment why it must be one file",
            file.display()
        );
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} source files found");
}
