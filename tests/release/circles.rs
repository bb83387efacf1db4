//! No circle of imports between source files, however long: `a` uses `b`, `b` uses `c`, `c`
//! uses `a` is caught as surely as two files that use each other. A path is followed to the
//! file that defines what it names, through a folder's `pub use` re-exports; a file's use of
//! its own folder's `mod.rs` (or lib.rs) is containment, not a circle, and is left out, as are
//! tests (`#[cfg(test)]` and on).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file of the module at `segments` (from `src`), if there is one.
fn module_file(src: &Path, segments: &[String]) -> Option<PathBuf> {
    if segments.is_empty() {
        return Some(src.join("lib.rs"));
    }
    let joined: PathBuf = segments.iter().collect();
    let file = src.join(&joined).with_extension("rs");
    if file.is_file() {
        return Some(file);
    }
    let folder = src.join(joined).join("mod.rs");
    folder.is_file().then_some(folder)
}

/// The module path of a source file: `src/db/catalog/mod.rs` is ["db", "catalog"].
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut segments: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    segments
}

/// Every path a `use` item names, its groups expanded: `a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d` and `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let close = tree
        .rfind('}')
        .filter(|close| *close > open)
        .unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (index, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|item| !item.trim().is_empty())
        .flat_map(expand)
        .map(|path| match path.as_str() {
            "self" => prefix.to_string(),
            _ if prefix.is_empty() => path,
            _ => format!("{prefix}::{path}"),
        })
        .collect()
}

/// The paths of `code` that start at `crate::` or `super::`: in `use` items and inline.
fn paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let boundary = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let end = rest[at..].find(';').map_or(rest.len(), |end| at + end);
        if boundary {
            found.extend(expand(&rest[at + 4..end]));
        }
        rest = &rest[(at + 4).min(end)..];
    }
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            // A group's prefix (`super::catalog::{...}`) is read with its `use` item above.
            if code[at + path.len()..].starts_with('{') {
                continue;
            }
            found.push(path.trim_end_matches(':').to_string());
        }
    }
    found.retain(|path| path.starts_with("crate::") || path.starts_with("super::"));
    found
}

/// The file that defines what `path` names, used from the module `from`: the deepest module
/// file on the path, then through that module's `pub use` of the next name, if any.
fn resolve(src: &Path, from: &[String], path: &str, depth: usize) -> Option<PathBuf> {
    let mut segments: Vec<String> = Vec::new();
    let mut parts = path.split("::").peekable();
    match parts.peek().copied() {
        Some("crate") => {
            parts.next();
        }
        Some("super") => {
            segments = from.to_vec();
            while parts.peek() == Some(&"super") {
                parts.next();
                segments.pop();
            }
        }
        _ => segments = from.to_vec(),
    }
    let mut file = module_file(src, &segments)?;
    let rest: Vec<&str> = parts.collect();
    for (index, name) in rest.iter().enumerate() {
        let mut deeper = segments.clone();
        deeper.push((*name).to_string());
        if let Some(inner) = module_file(src, &deeper) {
            segments = deeper;
            file = inner;
            continue;
        }
        // Not a module: an item of `file`, or one it re-exports.
        if depth < 4 {
            let text = std::fs::read_to_string(&file).ok()?;
            let reexports = text
                .split("pub use ")
                .skip(1)
                .chain(text.split("pub(crate) use ").skip(1));
            for reexport in reexports {
                let item = &reexport[..reexport.find(';').unwrap_or(reexport.len())];
                for target in expand(item) {
                    if target.rsplit("::").next() == Some(name) {
                        let rest = rest[index + 1..].join("::");
                        let target = if rest.is_empty() {
                            target
                        } else {
                            format!("{target}::{rest}")
                        };
                        return resolve(src, &segments, &target, depth + 1).or(Some(file));
                    }
                }
            }
        }
        break;
    }
    Some(file)
}

fn sources(path: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// `text` without its tests: a `#[cfg(test)] mod name;` declaration (its file is a test file,
/// left out on its own) and an inline `#[cfg(test)] mod name { ... }` with all after it; other
/// test-only items stay, and what they use counts.
fn without_tests(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && let Some(next) = lines.peek().map(|next| next.trim())
            && (next.starts_with("mod ")
                || next.starts_with("pub mod ")
                || next.starts_with("pub(crate) mod "))
        {
            if next.ends_with(';') {
                lines.next();
                continue;
            }
            break;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The import graph of the crate under `src`: each file and the files it uses.
fn graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut edges = BTreeMap::new();
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        if stem == "tests" || stem.ends_with("_tests") || stem == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = without_tests(&text);
        let module = module_of(src, &file);
        // Its own folder's module files, up to the crate's root: containment.
        let ancestors: BTreeSet<PathBuf> = (0..module.len())
            .filter_map(|length| module_file(src, &module[..length]))
            .collect();
        let used: BTreeSet<PathBuf> = paths(&code)
            .iter()
            .filter_map(|path| resolve(src, &module, path, 0))
            .filter(|target| *target != file && !ancestors.contains(target))
            .collect();
        edges.insert(file, used);
    }
    edges
}

/// A circle of `edges`, if there is one, as the files along it.
fn circle(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        node: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        path: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            let mut found = path[at..].to_vec();
            found.push(node.clone());
            return Some(found);
        }
        if !done.insert(node.clone()) {
            return None;
        }
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

#[test]
fn an_indirect_circle_through_a_reexport_is_found() {
    let dir = std::env::temp_dir().join(format!("corescale-circles-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("db/connect")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).unwrap();
    write("lib.rs", "pub mod db;\n");
    write(
        "db/mod.rs",
        "pub mod connect;\nmod product;\nmod postgres;\npub use product::Row;\n",
    );
    write("db/connect/mod.rs", "pub mod target;\n");
    // target -> product (through db's re-export) -> postgres -> target.
    write(
        "db/connect/target.rs",
        "use crate::db::Row;\npub struct Target;\n",
    );
    write(
        "db/product.rs",
        "use super::postgres::resolve;\npub struct Row;\n",
    );
    write(
        "db/postgres.rs",
        "use crate::db::connect::target::Target;\npub fn resolve() {}\n",
    );
    let found = circle(&graph(&src)).expect("the circle");
    std::fs::write(src.join("db/postgres.rs"), "pub fn resolve() {}\n").unwrap();
    let broken = circle(&graph(&src));
    std::fs::remove_dir_all(&dir).unwrap();
    let names: Vec<String> = found
        .iter()
        .map(|file| file.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    for name in ["db/connect/target.rs", "db/product.rs", "db/postgres.rs"] {
        assert!(names.contains(&name.to_string()), "{names:?}");
    }
    assert_eq!(broken, None);
}

#[test]
fn no_source_files_use_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    let linked = edges.values().filter(|used| !used.is_empty()).count();
    assert!(
        linked >= 100,
        "only {linked} files use another: the paths were not read"
    );
    if let Some(found) = circle(&edges) {
        let names: Vec<String> = found
            .iter()
            .map(|file| file.strip_prefix(&src).unwrap().display().to_string())
            .collect();
        panic!(
            "source files use each other in a circle: {}",
            names.join(" -> ")
        );
    }
}
