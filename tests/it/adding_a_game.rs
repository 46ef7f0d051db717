//! The guide's walkthrough "Adding a game" (`docs/src/adding-a-game.md`), followed through
//! the real binary so the chapter cannot drift from the program. The chapter marks what
//! this test takes from it with an HTML comment on the line before a code block:
//! - `<!-- test: file PATH -->`: a file to write at PATH in a fresh working directory (the
//!   variant file, the scenario, its expected result);
//! - `<!-- test: command -->`: `$ croupier ARGS` lines, each followed by the output it
//!   prints, run in that directory and compared whole;
//! - `<!-- test: table PATH -->`: `[table]` lines set in a copy of `config/table.toml`;
//! - `<!-- test: run -->`: `croupier run` and the line it announces;
//! - `<!-- test: settings-scenario -->`: the same round on a shipped game with `settings`.
//!
//! Then: the scenario's replay meets its expected result, and stops meeting it when the
//! decisive expected value changes or the variant file's changed rule is undone; a table
//! configured as the chapter shows (the real `croupier run`, demo on its simulated shoe)
//! deals the game; and a table on that variant file, dealt the scenario's cards from a
//! simulated shoe, settles the round as the replay does.

use crate::common;
use crate::json_subset;
use crate::proc;
use crate::running;

use proc::output_in as croupier;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The chapter, relative to the repository.
const CHAPTER: &str = "docs/src/adding-a-game.md";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A marked code block: the marker's words after `test:`, and the block's text.
struct Block {
    marker: String,
    text: String,
}

/// `$ croupier ARGS` and the output shown under it.
struct Shown {
    args: Vec<String>,
    output: String,
}

/// What the chapter gives the test.
struct Chapter {
    /// `file PATH` blocks: (PATH, text).
    files: Vec<(String, String)>,
    /// Every `command` block's commands, in order.
    commands: Vec<Shown>,
    /// The `table PATH` block: (PATH, its `[table]` lines).
    table: (String, String),
    /// The `run` block's command and the first line it prints.
    run: Shown,
    /// The `settings-scenario` block.
    settings_scenario: String,
}

impl Chapter {
    fn read() -> Chapter {
        let path = root().join(CHAPTER);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let blocks = blocks(&text);
        let one = |marker: &str| -> Vec<&Block> {
            let found: Vec<&Block> = blocks
                .iter()
                .filter(|b| b.marker == marker || b.marker.starts_with(&format!("{marker} ")))
                .collect();
            assert!(
                !found.is_empty(),
                "{CHAPTER}: no `<!-- test: {marker} -->` block"
            );
            found
        };
        let files = one("file")
            .iter()
            .map(|b| (b.marker["file ".len()..].trim().to_string(), b.text.clone()))
            .collect();
        let commands = one("command")
            .iter()
            .flat_map(|b| transcript(&b.text))
            .collect();
        let [table] = one("table")[..] else {
            panic!("{CHAPTER}: one `table` block")
        };
        let [run] = one("run")[..] else {
            panic!("{CHAPTER}: one `run` block")
        };
        let [settings] = one("settings-scenario")[..] else {
            panic!("{CHAPTER}: one `settings-scenario` block")
        };
        let mut runs = transcript(&run.text);
        assert_eq!(runs.len(), 1, "{CHAPTER}: the `run` block runs one command");
        Chapter {
            files,
            commands,
            table: (
                table.marker["table ".len()..].trim().to_string(),
                table.text.clone(),
            ),
            run: runs.remove(0),
            settings_scenario: settings.text.clone(),
        }
    }

    /// The one file whose path `f` picks.
    fn file(&self, what: &str, f: impl Fn(&str) -> bool) -> (&str, &str) {
        let found: Vec<_> = self.files.iter().filter(|(p, _)| f(p)).collect();
        assert_eq!(
            found.len(),
            1,
            "{CHAPTER}: one {what} file block: {found:?}"
        );
        (found[0].0.as_str(), found[0].1.as_str())
    }

    fn variant(&self) -> (&str, &str) {
        self.file("variant (.toml)", |p| p.ends_with(".toml"))
    }

    fn scenario(&self) -> (&str, &str) {
        self.file("scenario (.json)", |p| {
            p.ends_with(".json") && !p.ends_with(".expected.json")
        })
    }

    fn expected(&self) -> Value {
        let (path, text) = self.file("expected (.expected.json)", |p| {
            p.ends_with(".expected.json")
        });
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The shown command whose arguments start with `command` and end with `path`.
    fn command(&self, command: &str, path: &str) -> &Shown {
        self.commands
            .iter()
            .find(|c| {
                c.args.first().is_some_and(|a| a == command)
                    && c.args.last().is_some_and(|a| a == path)
            })
            .unwrap_or_else(|| panic!("{CHAPTER}: no `$ croupier {command} ... {path}` shown"))
    }

    /// A fresh working directory holding the chapter's files and its table configuration.
    fn workdir(&self) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in &self.files {
            write(&dir.path().join(path), text);
        }
        let (path, lines) = &self.table;
        write(&dir.path().join(path), &table_config(lines));
        dir
    }
}

/// Every code block of `text` with `<!-- test: ... -->` on the line before it.
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(marker) = line
            .trim()
            .strip_prefix("<!-- test:")
            .and_then(|m| m.strip_suffix("-->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "{CHAPTER}: a code block follows {line:?}, not {fence:?}"
        );
        let mut body = String::new();
        loop {
            let l = lines
                .next()
                .unwrap_or_else(|| panic!("{CHAPTER}: the block after {line:?} is not closed"));
            if l == "```" {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        out.push(Block {
            marker: marker.trim().to_string(),
            text: body,
        });
    }
    out
}

/// The `$ croupier ARGS` lines of a console block, each with the lines under it.
fn transcript(text: &str) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            let mut words = command.split_whitespace().map(str::to_string);
            assert_eq!(words.next().as_deref(), Some("croupier"), "{line}");
            out.push(Shown {
                args: words.collect(),
                output: String::new(),
            });
        } else {
            let shown = out
                .last_mut()
                .unwrap_or_else(|| panic!("{CHAPTER}: output before a command: {line:?}"));
            shown.output.push_str(line);
            shown.output.push('\n');
        }
    }
    out
}

/// `config/table.toml` (what the chapter copies) with the chapter's `[table]` lines set.
fn table_config(lines: &str) -> String {
    let mut lines = lines.lines();
    assert_eq!(lines.next(), Some("[table]"), "{CHAPTER}: the table lines");
    let keys: Vec<(&str, &str)> = lines
        .map(|l| {
            let (k, v) = l.split_once('=').expect("key = value");
            (k.trim(), v.trim())
        })
        .collect();
    let original =
        std::fs::read_to_string(root().join("config/table.toml")).expect("config/table.toml");
    let (mut section, mut set, mut out) = ("", Vec::new(), String::new());
    for line in original.lines() {
        if line.starts_with('[') {
            section = line.trim();
        }
        let key = line.split_once('=').map(|(k, _)| k.trim());
        match keys
            .iter()
            .find(|(k, _)| section == "[table]" && Some(*k) == key)
        {
            Some((k, v)) => {
                out.push_str(&format!("{k} = {v}\n"));
                set.push(*k);
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    assert_eq!(
        set.len(),
        keys.len(),
        "every key the chapter sets is in [table] of config/table.toml: {keys:?}"
    );
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// What `croupier replay ...` printed, as JSON (it must exit 0).
fn replayed(dir: &Path, args: &[String]) -> Value {
    let out = croupier(dir, args);
    assert!(out.status.success(), "{args:?}: {}", common::text(&out));
    serde_json::from_slice(&out.stdout).expect("replay prints JSON")
}

fn diffs(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    json_subset::subset_diffs(want, got, "", &mut out);
    out
}

#[test]
fn every_command_the_chapter_shows_prints_what_it_shows() {
    let chapter = Chapter::read();
    let dir = chapter.workdir();
    // The steps the chapter must keep: check the file, check the table, replay the scenario.
    let (variant, _) = chapter.variant();
    let (scenario, _) = chapter.scenario();
    chapter.command("check-variant", variant);
    chapter.command("check-config", &chapter.table.0);
    let replay = chapter.command("replay", scenario);
    assert!(
        replay.args.iter().any(|a| a == "--variants"),
        "the replay reads the new file: {:?}",
        replay.args
    );
    for shown in &chapter.commands {
        let out = croupier(dir.path(), &shown.args);
        assert!(
            out.status.success(),
            "croupier {:?}: {}",
            shown.args,
            common::text(&out)
        );
        assert_eq!(
            common::text(&out),
            shown.output,
            "`croupier {}` prints something else than {CHAPTER} shows",
            shown.args.join(" ")
        );
    }
}

#[test]
fn the_scenario_proves_the_rule_and_fails_when_it_does_not_hold() {
    let chapter = Chapter::read();
    let dir = chapter.workdir();
    let (scenario, events) = chapter.scenario();
    let replay = &chapter.command("replay", scenario).args;
    let expected = chapter.expected();

    // The new game's replay meets the expected result.
    let got = replayed(dir.path(), replay);
    assert_eq!(diffs(&expected, &got), Vec::<String>::new(), "{got:#}");

    // The decisive expected value changed (the hand's return): the replay no longer meets it.
    let mut wrong = expected.clone();
    let main = &mut wrong["rounds"][0]["returns"]["1"]["main"];
    let was = main
        .as_i64()
        .expect("the expected file gives seat 1's main return");
    *main = Value::from(was + 200);
    let found = diffs(&wrong, &got);
    assert!(
        found.len() == 1 && found[0].starts_with(".rounds[0].returns.1.main:"),
        "a changed expected return is caught: {found:?}"
    );

    // The changed rule undone in the variant file (Deluxe's dealer stands on soft 17): the
    // same events no longer meet the expected result, as the chapter says of Deluxe.
    let (variant, text) = chapter.variant();
    assert_eq!(
        text.matches("soft_17 = \"hit\"").count(),
        1,
        "the variant file's changed rule"
    );
    let undone = tempfile::tempdir().expect("tempdir");
    write(
        &undone.path().join(variant),
        &text.replace("soft_17 = \"hit\"", "soft_17 = \"stand\""),
    );
    write(&undone.path().join(scenario), events);
    let standing = replayed(undone.path(), replay);
    assert!(
        !diffs(&expected, &standing).is_empty(),
        "the scenario tells the rules apart: {standing:#}"
    );
    let round = &standing["rounds"][0];
    assert_eq!(round["dealer"]["total"], 17, "{standing:#}");
    assert_eq!(round["returns"]["1"]["main"], 200, "{standing:#}");
    assert_eq!(
        standing["halted"]["code"], "card_not_expected",
        "{standing:#}"
    );

    // The rule alone on the shipped game (`settings`), the same events: the same result.
    let settings: Value = serde_json::from_str(&chapter.settings_scenario).expect("JSON");
    let ours: Value = serde_json::from_str(events).expect("JSON");
    assert_eq!(settings["events"], ours["events"], "the same round");
    write(
        &dir.path().join("settings-scenario.json"),
        &chapter.settings_scenario,
    );
    let on_deluxe = replayed(
        dir.path(),
        &["replay".into(), "settings-scenario.json".into()],
    );
    assert_eq!(
        diffs(&expected, &on_deluxe),
        Vec::<String>::new(),
        "{on_deluxe:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_configured_as_the_chapter_shows_deals_the_game() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let chapter = Chapter::read();
        let dir = chapter.workdir();
        let (variant, _) = chapter.variant();
        let game = croupier::engine::Variant::load(&dir.path().join(variant))
            .expect("the chapter's variant file")
            .name;
        // The chapter's `croupier run`, on any free port.
        let mut args: Vec<&std::ffi::OsStr> =
            chapter.run.args.iter().map(std::ffi::OsStr::new).collect();
        assert_eq!(args.first().map(|a| a.to_str()), Some(Some("run")));
        args.extend(["--bind", "127.0.0.1:0"].map(std::ffi::OsStr::new));
        let child = proc::command_args(&args, &dir.path().join("run.log"))
            .current_dir(dir.path())
            .spawn()
            .expect("spawn croupier run");
        let mut p = proc::announced(child).await;
        let shown = chapter
            .run
            .output
            .lines()
            .next()
            .expect("the announce line");
        let shown_addr = shown.rsplit("://").next().expect("an address");
        let shown_addr = shown_addr.trim_end_matches('/');
        assert_eq!(p.announce.trim_end(), shown.replace(shown_addr, &p.addr));
        // The database the copy names (relative to the working directory, as the variant).
        let config: toml::Value = toml::from_str(
            &std::fs::read_to_string(dir.path().join(&chapter.table.0)).expect("table config"),
        )
        .expect("TOML");
        let db = config["store"]["path"].as_str().expect("store.path");
        p.use_local_token(&dir.path().join(db));

        // The demo deals the game on its simulated shoe until a round settles.
        let mut status = p.get("/api/status").await;
        for _ in 0..300 {
            if status["rounds_settled"].as_u64() >= Some(1) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            status = p.get("/api/status").await;
        }
        assert!(status["rounds_settled"].as_u64() >= Some(1), "{status}");
        assert_eq!(
            status["variant"],
            game.as_str(),
            "players see the game's name"
        );
        assert_eq!(status["shoe"]["link"], "connected");
        let result = &status["last_result"];
        assert!(
            result["dealer_cards"]
                .as_array()
                .is_some_and(|c| !c.is_empty()),
            "{result}"
        );
        assert!(
            result["hands"].as_array().is_some_and(|h| !h.is_empty()),
            "{result}"
        );
        assert!(p.terminate(), "SIGTERM: a clean stop");
    })
    .await
    .expect("within 60 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_on_the_variant_file_settles_the_scenario_as_the_replay_does() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let chapter = Chapter::read();
        let dir = chapter.workdir();
        let (variant, _) = chapter.variant();
        let (scenario, events) = chapter.scenario();
        let replay = replayed(dir.path(), &chapter.command("replay", scenario).args);
        let printed = &replay["rounds"][0];

        // A table on the variant file, its cards from a simulated shoe holding the scenario's.
        let inputs = croupier::replay::parse(events)
            .expect("the scenario")
            .inputs;
        let sim = common::session_shoe(&inputs);
        let file: PathBuf = dir.path().join(variant);
        let table = dir.path().join("table");
        let config = common::config(&table, &sim.path(), file.to_str().expect("utf-8"));
        let run = running::start(config).await;
        common::feed_session(&run.handle, &sim, &inputs).await;
        let snap =
            common::until_snapshot(&run.handle, "the round settled", |s| s.rounds_settled >= 1)
                .await;
        run.stop().await;

        let game = croupier::engine::Variant::load(&file)
            .expect("variant")
            .name;
        assert_eq!(snap.variant, game);
        let r = snap.last_result.expect("a settlement");
        let cards = |c: &[croupier::cards::Card]| -> Vec<String> {
            c.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            serde_json::json!(cards(&r.dealer_cards)),
            printed["dealer"]["cards"]
        );
        assert_eq!(printed["dealer"]["total"], r.dealer_total);
        let hands = printed["hands"].as_array().expect("hands");
        assert_eq!(hands.len(), r.hands.len());
        for (p, h) in hands.iter().zip(&r.hands) {
            assert_eq!(p["seat"], h.seat.to_string());
            assert_eq!(p["cards"], serde_json::json!(cards(&h.cards)));
            assert_eq!(p["outcome"], h.outcome.as_str());
            assert_eq!(p["staked"], h.staked);
            assert_eq!(p["returned"], h.returned);
        }
    })
    .await
    .expect("within 60 s");
}
