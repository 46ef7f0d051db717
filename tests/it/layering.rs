//! The layers hold: no module of `src/` uses a module of a layer above its own, and no two
//! modules use each other (directly or round a longer cycle). The layers are the table in
//! ARCHITECTURE.md "Layers" (between `<!-- layers:begin -->` and `<!-- layers:end -->`),
//! so the document and the check cannot drift apart. Test code is exempt: `#[cfg(test)]`
//! items and `tests.rs` files may reach up to build what they check.
//!
//! And the rooms stay small: no Rust source file of the service or its drivers holds more
//! than [`MAX_LINES`] lines before its `#[cfg(test)]` module (issue #63).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One use of another top-level module: where it stands and what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Use {
    file: String,
    line: usize,
    from: String,
    to: String,
}

/// Layer index (0 = bottom) of every module the table places.
fn parse_layers(architecture: &str) -> BTreeMap<String, usize> {
    let begin = architecture
        .find("<!-- layers:begin -->")
        .expect("ARCHITECTURE.md has a layers table (<!-- layers:begin -->)");
    let end = architecture[begin..]
        .find("<!-- layers:end -->")
        .expect("the layers table ends (<!-- layers:end -->)")
        + begin;
    let rows = architecture[begin..end]
        .lines()
        .filter(|l| l.starts_with('|') && l.contains('`'));
    let mut layers = BTreeMap::new();
    for (i, row) in rows.enumerate() {
        let modules = row.rsplit('|').nth(1).expect("a row has a modules cell");
        for m in modules.split('`').skip(1).step_by(2) {
            let previous = layers.insert(m.to_string(), i);
            assert!(previous.is_none(), "`{m}` is placed in two layers");
        }
    }
    assert!(!layers.is_empty(), "the layers table places no module");
    layers
}

/// The lines of `text` that are code outside tests: comments and `#[cfg(test)]` items
/// (a `mod tests { … }` block, a `use`, a function) are left out.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.starts_with("//") {
            i += 1;
            continue;
        }
        if t == "#[cfg(test)]" {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().starts_with("#[") {
                j += 1;
            }
            if j < lines.len() && lines[j].trim_end().ends_with(';') {
                i = j + 1;
                continue;
            }
            // Skip the item's braces, however far they run.
            let (mut depth, mut opened, mut k) = (0i64, false, j);
            while k < lines.len() {
                let opens = lines[k].matches('{').count() as i64;
                depth += opens - lines[k].matches('}').count() as i64;
                opened |= opens > 0;
                k += 1;
                if opened && depth <= 0 {
                    break;
                }
            }
            i = k;
            continue;
        }
        out.push((i + 1, lines[i]));
        i += 1;
    }
    out
}

/// The module name `path` starts with (`web` of `web::client::Endpoint`), if any.
fn module_name(path: &str) -> Option<String> {
    let name: String = path
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The top-level modules named by the `crate::…` and `croupier::…` paths on a line.
fn named_modules(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for prefix in ["crate::", "croupier::"] {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + prefix.len()..];
            rest = after;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // part of a longer name (`mycrate::`)
            }
            found.extend(module_name(after));
        }
    }
    found
}

/// The top-level modules named by `super::` paths that climb to the crate root from a file
/// `depth` levels down (`super::web::…` in `table/mod.rs` is `crate::web::…`).
fn through_root(line: &str, depth: usize) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("super::") {
        let before = rest[..at].chars().next_back();
        let mut after = &rest[at..];
        let mut climbs = 0;
        while let Some(r) = after.strip_prefix("super::") {
            climbs += 1;
            after = r;
        }
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') || climbs != depth {
            continue;
        }
        found.extend(module_name(after));
    }
    found
}

/// Every use of one top-level module by another in the crate rooted at `src`.
fn uses(src: &Path) -> Vec<Use> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let rel: PathBuf = path.strip_prefix(src).expect("under src").to_path_buf();
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs"
            || rel.components().count() == 1 && matches!(name, "lib.rs" | "main.rs")
        {
            continue;
        }
        let first = rel.components().next().expect("a component");
        let from = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // How many `super::` reach the crate root from this file: `a/mod.rs` and `a.rs`
        // are one level down, `a/b.rs` two.
        let depth = rel.components().count() - usize::from(name == "mod.rs");
        let text = fs::read_to_string(&path).expect("read a source file");
        for (line, code) in code_lines(&text) {
            let mut named = named_modules(code);
            named.extend(through_root(code, depth));
            for to in named {
                if to != from {
                    out.push(Use {
                        file: rel.display().to_string(),
                        line,
                        from: from.clone(),
                        to,
                    });
                }
            }
        }
    }
    out
}

/// Every top-level module of the crate rooted at `src`.
fn modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .expect("read src")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            if path.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (!matches!(stem, "lib" | "main")).then(|| stem.to_string())
            }
        })
        .collect()
}

/// What breaks the layering, one line each; empty when it holds.
fn violations(src: &Path, layers: &BTreeMap<String, usize>) -> Vec<String> {
    let mut found = Vec::new();
    for m in modules(src) {
        if !layers.contains_key(&m) {
            found.push(format!(
                "module `{m}` is in no layer of ARCHITECTURE.md's table"
            ));
        }
    }
    let all = uses(src);
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for u in &all {
        let (Some(&from), Some(&to)) = (layers.get(&u.from), layers.get(&u.to)) else {
            continue; // not a module of ours (an unplaced one is reported above)
        };
        graph.entry(&u.from).or_default().insert(&u.to);
        if to > from {
            found.push(format!(
                "src/{}:{}: `{}` (layer {}) uses `{}` (layer {}), a layer above it",
                u.file,
                u.line,
                u.from,
                from + 1,
                u.to,
                to + 1
            ));
        }
    }
    for cycle in cycles(&graph) {
        let at: Vec<String> = cycle
            .windows(2)
            .filter_map(|w| {
                all.iter()
                    .find(|u| u.from == w[0] && u.to == w[1])
                    .map(|u| format!("src/{}:{}", u.file, u.line))
            })
            .collect();
        found.push(format!(
            "modules use each other: {} ({})",
            cycle.join(" → "),
            at.join(", ")
        ));
    }
    found
}

/// One cycle (as a closed walk `a → … → a`) per strongly tied group of modules.
fn cycles<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for &start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // Depth-first from `start`, looking for a way back to it.
        let mut path = vec![start];
        let mut visited = BTreeSet::from([start]);
        if back_to(start, graph, &mut path, &mut visited) {
            seen.extend(path.iter().copied());
            path.push(start);
            out.push(path);
        }
    }
    out
}

fn back_to<'a>(
    start: &'a str,
    graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    path: &mut Vec<&'a str>,
    visited: &mut BTreeSet<&'a str>,
) -> bool {
    let here = *path.last().expect("a path");
    for &next in graph.get(here).into_iter().flatten() {
        if next == start {
            return true;
        }
        if visited.insert(next) {
            path.push(next);
            if back_to(start, graph, path, visited) {
                return true;
            }
            path.pop();
        }
    }
    false
}

/// The checkout: cargo's `CARGO_MANIFEST_DIR` when it runs the test (so the check can be
/// pointed at another tree), else where the test was built.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

#[test]
fn no_module_uses_a_layer_above_it_or_a_module_that_uses_it() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("read");
    let layers = parse_layers(&architecture);
    let found = violations(&root().join("src"), &layers);
    assert!(
        found.is_empty(),
        "the layering of ARCHITECTURE.md \"Layers\" is broken:\n{}",
        found.join("\n")
    );
}

/// A crate planted in a temporary folder: `files` are (path under src, text).
fn planted(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        fs::write(p, text).expect("write");
    }
    dir
}

/// What the check finds in a crate planted from `files`, under [`PLANTED_LAYERS`].
fn found_in(files: &[(&str, &str)]) -> Vec<String> {
    let dir = planted(files);
    violations(dir.path(), &parse_layers(PLANTED_LAYERS))
}

/// Fails unless one of `found` starts with `prefix`.
fn assert_found(found: &[String], prefix: &str) {
    assert!(
        found.iter().any(|f| f.starts_with(prefix)),
        "{prefix}: {found:?}"
    );
}

const PLANTED_LAYERS: &str = "<!-- layers:begin -->
| layer | modules |
|---|---|
| bottom | `cards`, `engine` |
| store | `store` |
| table | `table` |
<!-- layers:end -->";

#[test]
fn a_planted_upward_import_is_caught() {
    let found = found_in(&[
        ("lib.rs", "pub mod cards; pub mod engine; pub mod store; pub mod table;"),
        ("cards.rs", "pub struct Card;"),
        ("engine/mod.rs", "use crate::cards::Card;"),
        ("table/mod.rs", "use crate::store::Record;\nuse crate::engine::Engine;"),
        // The upward arrow: the store reaching up into the table.
        (
            "store/record.rs",
            "//! `crate::table` in a comment is no use.\nuse crate::table::dispute::Origin;\n\n#[cfg(test)]\nmod tests {\n    use crate::table::Table;\n}\n",
        ),
        ("store/mod.rs", "pub mod record;\n#[cfg(test)]\nuse crate::table::Other;\n"),
        ("table/tests.rs", "use crate::table::x;"),
    ]);
    assert_found(
        &found,
        "src/store/record.rs:2: `store` (layer 2) uses `table` (layer 3)",
    );
    // Only that line: the comment and both test items are exempt; the table → store use
    // and the store → table one make a cycle, reported too.
    assert_eq!(
        found.iter().filter(|f| f.contains("a layer above")).count(),
        1,
        "{found:?}"
    );
    assert_found(&found, "modules use each other: store → table → store");
}

#[test]
fn two_modules_of_one_layer_that_use_each_other_are_caught() {
    let found = found_in(&[
        ("cards.rs", "use crate::engine::Rank;"),
        (
            "engine/round.rs",
            "fn f() -> crate::cards::Card { todo!() }",
        ),
        ("store.rs", "use crate::engine::Engine;"),
    ]);
    assert_found(&found, "modules use each other: cards → engine → cards");
    // Every module of the planted crate is placed, and nothing goes up.
    assert!(
        !found.iter().any(|f| f.contains("a layer above")),
        "{found:?}"
    );
}

#[test]
fn an_upward_import_through_super_is_caught() {
    let found = found_in(&[
        ("cards.rs", ""),
        (
            "engine/mod.rs",
            "use super::cards::Card;\nuse super::table::Table;",
        ),
        (
            "engine/round.rs",
            "use super::super::store::Record;\nuse super::mod_item;",
        ),
        ("store.rs", ""),
        ("table/mod.rs", ""),
    ]);
    let upward: Vec<&String> = found
        .iter()
        .filter(|f| f.contains("a layer above"))
        .collect();
    assert_eq!(upward.len(), 2, "{found:?}");
    assert!(
        upward[0].starts_with("src/engine/mod.rs:2: `engine` (layer 1) uses `table`"),
        "{found:?}"
    );
    assert!(
        upward[1].starts_with("src/engine/round.rs:1: `engine` (layer 1) uses `store`"),
        "{found:?}"
    );
}

#[test]
fn a_module_the_table_does_not_place_is_caught() {
    let found = found_in(&[
        ("cards.rs", ""),
        ("newcomer/mod.rs", "use crate::cards::Card;"),
    ]);
    assert_eq!(
        found,
        vec!["module `newcomer` is in no layer of ARCHITECTURE.md's table".to_string()]
    );
}

/// The most lines a source file may hold before its tests: past this a file holds more
/// than one concern, and the next reader has to page through all of them to find one.
const MAX_LINES: usize = 800;

/// How many lines `text` holds before its first `#[cfg(test)]` line (all where it has none).
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .count()
}

/// Every `.rs` file below `dirs` (relative to `root`) longer than [`MAX_LINES`] before its
/// tests, as `path: N lines`.
fn oversized(root: &Path, dirs: &[&str]) -> Vec<String> {
    oversized_with(root, dirs, "rs", &[])
}

/// Files the project carries as published by others (the same check would hold their
/// authors to our layout): Fluent's bundle, built by its project and kept whole.
const VENDORED: &[&str] = &["dealer-ui/fluent-bundle.js"];

/// [`oversized`] for files ending in `.ext`, but those in `skip` (relative to `root`).
fn oversized_with(root: &Path, dirs: &[&str], ext: &str, skip: &[&str]) -> Vec<String> {
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext)
                && !skip.iter().any(|s| path == root.join(s))
            {
                let text = fs::read_to_string(&path).expect("read a source file");
                let n = lines_before_tests(&text);
                if n > MAX_LINES {
                    let rel = path.strip_prefix(root).expect("under root");
                    found.push(format!("{}: {n} lines", rel.display()));
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn no_source_file_is_over_800_lines_before_its_tests() {
    let found = oversized(&root(), &["src", "drivers/src"]);
    assert!(
        found.is_empty(),
        "split these by concern (at most {MAX_LINES} lines before `#[cfg(test)]`):\n{}",
        found.join("\n")
    );
}

/// ARCHITECTURE.md stays a map a newcomer reads in one sitting (issue #63 item 4): a
/// section per module, one list of invariants; what grows past this belongs in the guide.
const MAX_ARCHITECTURE_LINES: usize = 400;

#[test]
fn architecture_md_is_at_most_400_lines() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("read");
    let lines = architecture.lines().count();
    assert!(
        lines <= MAX_ARCHITECTURE_LINES,
        "ARCHITECTURE.md has {lines} lines (at most {MAX_ARCHITECTURE_LINES}): move what is a \
         user's or operator's concern to docs/, and keep one section per module"
    );
}

#[test]
fn no_script_of_the_pages_is_over_800_lines() {
    let found = oversized_with(&root(), &["dealer-ui"], "js", VENDORED);
    assert!(
        found.is_empty(),
        "split these by concern (at most {MAX_LINES} lines; scripts load in order and \
         share their top-level names, as play-bets.js and play.js do):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_oversized_script_is_caught_unless_vendored() {
    let long = "f();\n".repeat(MAX_LINES + 1);
    let dir = planted(&[("dealer-ui/big.js", &long), ("dealer-ui/theirs.js", &long)]);
    assert_eq!(
        oversized_with(dir.path(), &["dealer-ui"], "js", &["dealer-ui/theirs.js"]),
        vec![format!("dealer-ui/big.js: {} lines", MAX_LINES + 1)]
    );
}

#[test]
fn an_oversized_file_is_caught_and_its_tests_do_not_count() {
    let long = "fn f() {}\n".repeat(MAX_LINES + 1);
    let tested = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        "fn f() {}\n".repeat(MAX_LINES),
        "fn g() {}\n".repeat(500)
    );
    let dir = planted(&[("src/big/deep.rs", &long), ("src/tested.rs", &tested)]);
    assert_eq!(
        oversized(dir.path(), &["src", "drivers/src"]),
        vec![format!("src/big/deep.rs: {} lines", MAX_LINES + 1)]
    );
}
