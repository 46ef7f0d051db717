//! Every relative link and `#anchor` in README.md, ARCHITECTURE.md and the user guide
//! (`docs/src/**/*.md`, built with mdBook) resolves: the file exists, and the anchor is a
//! heading of the file it names. `.ci/run` builds the guide besides; this test is what
//! fails CI on a link left dangling when a section moves (mdBook itself does not check).
//! The same holds for the guide sections the program's `--help` names.
//!
//! Anchors follow the rule GitHub and mdBook share: the heading's text, lower-cased,
//! spaces turned into `-`, everything but letters, digits, `-` and `_` dropped, and a
//! repeated heading numbered `-1`, `-2`, … in document order.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// One markdown file's headings (as anchors) and outgoing links.
struct Page {
    anchors: HashSet<String>,
    links: Vec<Link>,
}

/// A link or image found in a page.
struct Link {
    dest: String,
    image: bool,
    line: usize,
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// The anchor a heading gets: mdBook's `normalize_id`, which GitHub's matches for the
/// headings this project writes.
fn slug(text: &str) -> String {
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

fn parse(text: &str) -> Page {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset);
    let mut anchors = HashSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut links = Vec::new();
    // The heading being read: its explicit `{#id}` if any, and its text so far.
    let mut heading: Option<(Option<String>, String)> = None;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { id, .. }) => {
                heading = Some((id.map(|i| i.to_string()), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((id, h)) = heading.take() {
                    let base = id.unwrap_or_else(|| slug(&h));
                    let n = seen.entry(base.clone()).or_insert(0);
                    let anchor = if *n == 0 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    };
                    *n += 1;
                    anchors.insert(anchor);
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => links.push(Link {
                dest: dest_url.to_string(),
                image: false,
                line: line_of(range.start),
            }),
            Event::Start(Tag::Image { dest_url, .. }) => links.push(Link {
                dest: dest_url.to_string(),
                image: true,
                line: line_of(range.start),
            }),
            _ => {}
        }
    }
    Page { anchors, links }
}

/// `a/b/../c` → `a/c`, without touching the filesystem (a symlinked folder inside the
/// guide must count as inside it).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn is_external(dest: &str) -> bool {
    dest.starts_with("//")
        || dest.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
        })
}

/// The markdown files to check under `root`: README.md, ARCHITECTURE.md and every `.md`
/// file under `docs/src` (symlinked folders are not followed: they hold images).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out.into_iter().filter(|p| p.exists()).collect()
}

/// Every broken link of the files under `root`, as `file:line: what`.
fn problems(root: &Path) -> Vec<String> {
    let book = normalise(&root.join("docs/src"));
    let mut pages: BTreeMap<PathBuf, Page> = BTreeMap::new();
    for f in files(root) {
        let text = fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        pages.insert(normalise(&f), parse(&text));
    }
    let mut out = Vec::new();
    // A chapter SUMMARY.md does not list is not built, so every link to it breaks in the book.
    let summary = book.join("SUMMARY.md");
    if let Some(toc) = pages.get(&summary) {
        let listed: HashSet<PathBuf> = toc
            .links
            .iter()
            .map(|l| normalise(&book.join(l.dest.split('#').next().unwrap_or_default())))
            .collect();
        for file in pages.keys() {
            if file.starts_with(&book) && *file != summary && !listed.contains(file) {
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                out.push(format!(
                    "{shown}: not in docs/src/SUMMARY.md, so mdBook does not build it"
                ));
            }
        }
    }
    for (file, page) in &pages {
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let in_book = file.starts_with(&book);
        for link in &page.links {
            if is_external(&link.dest) {
                continue;
            }
            let (path, anchor) = match link.dest.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.dest.as_str(), None),
            };
            let target = if path.is_empty() {
                file.clone()
            } else {
                normalise(&file.parent().unwrap_or(root).join(path))
            };
            let at = format!("{shown}:{}: {}", link.line, link.dest);
            if !target.exists() {
                out.push(format!("{at}: no such file"));
                continue;
            }
            if in_book && !target.starts_with(&book) {
                if link.image {
                    out.push(format!(
                        "{at}: an image outside docs/src is not copied into the built guide"
                    ));
                } else if target.extension().is_some_and(|e| e == "md") {
                    out.push(format!("{at}: mdBook rewrites a link to a .md file as .html, which exists only for the guide's own chapters"));
                }
            }
            if let Some(anchor) = anchor {
                match pages.get(&target) {
                    Some(p) if p.anchors.contains(anchor) => {}
                    Some(_) => out.push(format!("{at}: no heading with that anchor")),
                    None => out.push(format!(
                        "{at}: an anchor into a file this test does not read"
                    )),
                }
            }
        }
    }
    out
}

#[test]
fn the_readme_the_architecture_and_the_guide_have_no_broken_link() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join("docs/src/SUMMARY.md").exists(),
        "the guide's docs/src/SUMMARY.md is missing"
    );
    let found = problems(root);
    assert!(found.is_empty(), "broken links:\n{}", found.join("\n"));
}

#[test]
fn headings_get_the_anchors_github_and_mdbook_give_them() {
    let page = parse(
        "# Signing on the broker (`cargo bench --bench wire`)\n\n## Accounts, roles and audit\n\n\
         ## Notes\n\n## Notes\n\n## Custom {#my-id}\n",
    );
    for a in [
        "signing-on-the-broker-cargo-bench---bench-wire",
        "accounts-roles-and-audit",
        "notes",
        "notes-1",
        "my-id",
    ] {
        assert!(page.anchors.contains(a), "{a} missing: {:?}", page.anchors);
    }
    assert_eq!(page.anchors.len(), 5);
}

#[test]
fn a_planted_broken_link_anchor_or_image_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    fs::create_dir_all(root.join("docs/src/img")).expect("mkdir");
    fs::create_dir_all(root.join("docs/screenshots")).expect("mkdir");
    fs::write(root.join("docs/src/img/a.png"), b"png").expect("write");
    fs::write(root.join("docs/screenshots/b.png"), b"png").expect("write");
    fs::write(root.join("ARCHITECTURE.md"), "# Architecture\n").expect("write");
    fs::write(
        root.join("docs/src/SUMMARY.md"),
        "# Summary\n\n- [One](one.md)\n- [Two](two.md)\n",
    )
    .expect("write");
    fs::write(
        root.join("docs/src/one.md"),
        "# One\n\n## A part\n\nSee [two](two.md#the-other-part), [here](#a-part), \
         ![a](img/a.png) and [the web](https://example.org/x.md#nope).\n",
    )
    .expect("write");
    fs::write(root.join("docs/src/two.md"), "# Two\n\n## The other part\n").expect("write");
    let readme = "# Readme\n\nThe [guide](docs/src/one.md#a-part).\n";
    fs::write(root.join("README.md"), readme).expect("write");
    assert_eq!(problems(root), Vec::<String>::new(), "the sound book");

    let plant = |file: &str, text: &str, expect: &str| {
        let path = root.join(file);
        let before = fs::read_to_string(&path).expect("read");
        fs::write(&path, format!("{before}\n{text}\n")).expect("write");
        let found = problems(root);
        fs::write(&path, before).expect("restore");
        assert!(
            found.len() == 1 && found[0].contains(expect),
            "planted {text:?} in {file}: {found:?}"
        );
    };
    plant("README.md", "A [gone](docs/src/three.md).", "no such file");
    plant(
        "README.md",
        "A [bad](docs/src/two.md#no-part).",
        "no heading",
    );
    plant("docs/src/two.md", "Up to [here](#the-part).", "no heading");
    plant("docs/src/SUMMARY.md", "- [Three](three.md)", "no such file");
    plant(
        "docs/src/one.md",
        "![b](../screenshots/b.png)",
        "not copied",
    );
    plant(
        "docs/src/one.md",
        "[arch](../../ARCHITECTURE.md)",
        "rewrites",
    );
    plant(
        "ARCHITECTURE.md",
        "[x](docs/src/one.md#a-par)",
        "no heading",
    );
    fs::write(root.join("docs/src/three.md"), "# Three\n").expect("write");
    let found = problems(root);
    assert!(
        found.len() == 1 && found[0].contains("not in docs/src/SUMMARY.md"),
        "an unlisted chapter: {found:?}"
    );
}

/// Every guide section the program's own help names — `(the guide: CHAPTER, "SECTION")` in
/// the doc comments clap turns into `--help` — as `CHAPTER: "SECTION"` when
/// `docs/src/CHAPTER.md` has no such heading.
fn help_references_missing(root: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    let mut sources = vec![root.join("src/main.rs")];
    if let Ok(dir) = fs::read_dir(root.join("src/cli")) {
        sources.extend(dir.flatten().map(|e| e.path()));
    }
    for source in sources {
        let Ok(text) = fs::read_to_string(&source) else {
            continue;
        };
        // Doc comments wrap: a reference is read across the `///` line breaks.
        let help: String = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("///"))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        for (at, _) in help.match_indices("the guide: ") {
            let rest = &help[at + "the guide: ".len()..];
            let Some((chapter, rest)) = rest.split_once(", \"") else {
                missing.push(format!("{}: unreadable reference", source.display()));
                continue;
            };
            let section = rest.split('"').next().unwrap_or_default();
            let page = fs::read_to_string(root.join("docs/src").join(format!("{chapter}.md")))
                .map(|t| parse(&t))
                .ok();
            if !page.is_some_and(|p| p.anchors.contains(&slug(section))) {
                missing.push(format!("{chapter}: \"{section}\""));
            }
        }
    }
    missing
}

#[test]
fn every_guide_section_the_help_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cli = fs::read_to_string(root.join("src/cli/mod.rs")).expect("src/cli/mod.rs");
    assert!(
        cli.contains("the guide: "),
        "the help names at least one guide section (else this test checks nothing)"
    );
    let missing = help_references_missing(root);
    assert!(
        missing.is_empty(),
        "sections --help names that the guide lacks:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_help_naming_a_missing_section_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    fs::create_dir_all(root.join("src")).expect("mkdir");
    fs::create_dir_all(root.join("docs/src")).expect("mkdir");
    fs::write(
        root.join("docs/src/operations.md"),
        "# Operations\n\n## Restoring a table\n",
    )
    .expect("write");
    fs::write(
        root.join("src/main.rs"),
        "/// Restores (the guide: operations,\n/// \"Restoring a table\").\n\
         /// Lists (the guide: operations, \"Listing what was lost\").\n\
         /// Moves (the guide: moving, \"Anything\").\n",
    )
    .expect("write");
    assert_eq!(
        help_references_missing(root),
        vec![
            "operations: \"Listing what was lost\"".to_string(),
            "moving: \"Anything\"".to_string()
        ]
    );
}
