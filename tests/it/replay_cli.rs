//! `croupier replay` through the real binary: every scenario under `tests/scenarios/` and
//! the shared examples in `../shared/scenarios/` must reproduce their `.expected.json`
//! (fields not shown there are free), and malformed files must exit 2 naming the event.

use crate::json_subset;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary under test: this build's, or `CROUPIER_EXE` (CI points it at the aarch64
/// build under qemu).
fn croupier() -> Command {
    match std::env::var_os("CROUPIER_EXE") {
        Some(exe) => Command::new(exe),
        None => Command::new(env!("CARGO_BIN_EXE_croupier")),
    }
}

fn scenarios_in(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut pairs: Vec<(PathBuf, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.ends_with(".expected.json")
        })
        .filter_map(|p| {
            let expected = p.with_extension("expected.json");
            expected.exists().then_some((p, expected))
        })
        .collect();
    pairs.sort();
    pairs
}

fn check_dir(dir: &Path) -> usize {
    let pairs = scenarios_in(dir);
    let mut failures = Vec::new();
    for (scenario, expected) in &pairs {
        let out = croupier()
            .arg("replay")
            .arg(scenario)
            .output()
            .expect("run croupier");
        let name = scenario.display();
        if !out.status.success() {
            failures.push(format!(
                "{name}: exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let got: Value = serde_json::from_slice(&out.stdout).expect("replay prints JSON");
        let want: Value =
            serde_json::from_str(&std::fs::read_to_string(expected).expect("read expected"))
                .expect("expected file is JSON");
        let mut diffs = Vec::new();
        json_subset::subset_diffs(&want, &got, "", &mut diffs);
        if !diffs.is_empty() {
            failures.push(format!("{name}:\n    {}", diffs.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ:\n{}",
        failures.len(),
        pairs.len(),
        failures.join("\n")
    );
    pairs.len()
}

#[test]
fn project_scenarios_reproduce() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let n = check_dir(&dir);
    assert!(n >= 40, "only {n} scenarios under tests/scenarios");
}

#[test]
fn shared_examples_reproduce() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/scenarios");
    if !dir.exists() {
        // A checkout without shared/ beside it (CI always has it).
        eprintln!("skipping: {} not present", dir.display());
        return;
    }
    assert!(check_dir(&dir) >= 3);
}

fn replay_text(text: &str) -> std::process::Output {
    let dir = tempfile::tempdir().expect("tmp dir");
    let file = dir.path().join(format!("s{}.json", text.len()));
    std::fs::write(&file, text).expect("write scenario");
    croupier()
        .arg("replay")
        .arg(&file)
        .output()
        .expect("run croupier")
}

#[test]
fn malformed_files_exit_2_naming_the_event() {
    let cases = [
        (
            r#"{"variant": "deluxe", "events": [{"bets": {"1": {"main": 100}}}, "ZZ"]}"#,
            "event 1",
        ),
        (
            r#"{"variant": "deluxe", "events": [{"seat": "1", "do": "hit"}]}"#,
            "event 0",
        ),
        (
            r#"{"variant": "deluxe", "events": [{"bets": {"1": {"main": 1.5}}}]}"#,
            "event 0",
        ),
        (
            r#"{"variant": "deluxe", "events": [{"shoe": "spin"}]}"#,
            "event 0",
        ),
        (
            r#"{"variant": "deluxe", "events": ["AS", {"dance": 1}]}"#,
            "event 1",
        ),
        (
            r#"{"variant": "deluxe", "events": [{"bets": {"1": {"main": 100}}}, {"funds": {"1": -5}}]}"#,
            "event 1",
        ),
        (
            r#"{"variant": "deluxe", "events": [{"funds": 500}]}"#,
            "event 0",
        ),
        (
            r#"{"variant": "ultimate", "events": [{"bets": "again"}]}"#,
            "event 0",
        ),
        (r#"{"variant": "nosuch", "events": []}"#, "unknown variant"),
        (r#"{"variant": "deluxe", "events": [}"#, "bad JSON"),
    ];
    for (text, needle) in cases {
        let out = replay_text(text);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle),
            "{text}: stderr {err:?} lacks {needle:?}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_halt_is_a_result_with_exit_0() {
    let out = replay_text(
        r#"{"variant": "caribbean21", "events": [{"bets": {"1": {"main": 100}}}, "AS", "AS"]}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["halted"]["event"], 2);
    assert_eq!(v["halted"]["code"], "impossible_card");
}

#[test]
fn check_variant_names_file_key_and_reason() {
    let tmp = tempfile::tempdir().expect("tmp dir");
    let dir = tmp.path();
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/variants/deluxe.toml");
    let text = std::fs::read_to_string(&good).expect("read deluxe");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, text.replace("max_hands = 2", "max_hands = 9")).expect("write");
    let out = croupier()
        .arg("check-variant")
        .arg(&good)
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml: split.max_hands: must be between 1 and 4"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("deluxe.toml: ok"));
}

#[test]
fn a_rebet_without_previous_bets_halts_and_funds_appear_only_when_known() {
    let out = replay_text(r#"{"variant": "ultimate", "events": [{"bets": "rebet"}]}"#);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["halted"]["event"], 0);
    assert_eq!(v["halted"]["code"], "invalid_bet");
    // Without a `funds` event the document has no balances (unlimited, as before).
    assert!(v.get("balances").is_none() && v.get("funds").is_none());
    // Bets the engine refuses staked nothing: the balance is as it was.
    let out = replay_text(
        r#"{"variant": "deluxe", "events": [{"funds": {"1": 500}}, {"bets": {"1": {"main": 5}}}]}"#,
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["halted"]["code"], "invalid_bet");
    assert_eq!(v["balances"], serde_json::json!({"1": 500}));
}

/// Issue #38 item 5: money is conserved in every scenario that gives balances. For each
/// settled round and each account whose balance is known and was not set by a `funds`
/// event while the round was in play: its balance after the round is its balance before
/// (after the last round, or as a `funds` event between rounds set it) less everything it
/// staked in the round plus everything it was paid back. Checked independently of the
/// balance rules' own bookkeeping: stakes and returns come from the engine's settlement.
#[test]
fn money_is_conserved_in_every_scenario_with_balances() {
    use croupier::engine::Input;
    use croupier::replay::Step;
    use std::collections::BTreeMap;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, _) in scenarios_in(&dir) {
        let text = std::fs::read_to_string(&path).expect("scenario");
        if !text.contains("\"funds\"") {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let scenario = croupier::replay::parse(&text).expect("parses");
        let variant = std::sync::Arc::new(
            croupier::engine::Variant::built_in(&scenario.variant)
                .expect("known")
                .expect("valid")
                .with_settings("scenario", &scenario.settings)
                .expect("its settings"),
        );
        let full = croupier::replay::run_steps(std::sync::Arc::clone(&variant), &scenario.steps);
        // The step that settled each round: the shortest prefix that settles it.
        let settled_at: Vec<usize> = (0..full.rounds.len())
            .map(|i| {
                (1..=scenario.steps.len())
                    .find(|&k| {
                        croupier::replay::run_steps(
                            std::sync::Arc::clone(&variant),
                            &scenario.steps[..k],
                        )
                        .rounds
                        .len()
                            > i
                    })
                    .expect("settled within the scenario")
                    - 1
            })
            .collect();
        let mut balance: BTreeMap<String, i64> = BTreeMap::new();
        let mut seats: BTreeMap<u8, String> = BTreeMap::new();
        let mut from = 0;
        for (i, round) in full.rounds.iter().enumerate() {
            let until = settled_at[i];
            // What happened since the last round: balances set, the round's bets.
            let mut opened = false;
            let mut changed_in_play = Vec::new();
            for step in &scenario.steps[from..=until] {
                match step {
                    Step::Funds(accounts) => {
                        for (a, v) in accounts {
                            if opened {
                                changed_in_play.push(a.clone());
                            }
                            balance.insert(a.clone(), *v);
                        }
                    }
                    Step::Input(Input::Bets(bets)) => {
                        opened = true;
                        seats = bets
                            .iter()
                            .map(|b| (b.seat, croupier::play::funds::seat_account(b)))
                            .collect();
                    }
                    Step::Input(Input::PlayerBets(_)) | Step::Rebet => opened = true,
                    Step::Input(_) => {}
                }
            }
            from = until + 1;
            let net: BTreeMap<String, i64> =
                croupier::play::funds::round_by_account(round, |s| seats.get(&s).cloned())
                    .into_iter()
                    .map(|(a, (staked, returned))| (a, returned - staked))
                    .collect();
            let after = &full.round_balances()[i];
            for (account, before) in balance.iter_mut() {
                let want = *before + net.get(account).copied().unwrap_or(0);
                let got = after.get(account).copied();
                if !changed_in_play.contains(account) && got != Some(want) {
                    failures.push(format!(
                        "{name} round {}: {account} {before} + {} should be {want}, the balance rules say {got:?}",
                        round.round,
                        net.get(account).copied().unwrap_or(0)
                    ));
                }
                *before = got.unwrap_or(want);
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 14,
        "only {checked} rounds with balances were checked"
    );
    assert!(
        failures.is_empty(),
        "money not conserved:\n{}",
        failures.join("\n")
    );
}
