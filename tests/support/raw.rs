#![allow(dead_code)] // each test uses its part
//! What no person should read on a page: an engine id of the shipped variants (a game's
//! or a side bet's, from `config/variants/*.toml`), an amount written another language's
//! way, an amount in the API's minor units. Shared by `browser_play_words.rs` and
//! `browser_play_reached.rs`.

use super::cdp::Page;
use serde_json::json;
use std::collections::BTreeSet;

/// The engine ids of the shipped variants, read from `config/variants/*.toml`: the games
/// (each file's stem) and every side bet any of them offers (its `name`).
pub fn engine_ids() -> (Vec<String>, Vec<String>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/variants");
    let mut games = Vec::new();
    let mut sides = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("config/variants") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("stem");
        let variant = croupier::engine::Variant::load(&path).expect("a shipped variant");
        sides.extend(variant.side_bets.iter().map(|b| b.name.clone()));
        games.push(stem.to_string());
    }
    games.sort();
    assert!(games.len() >= 5 && sides.len() >= 15, "{games:?} {sides:?}");
    (games, sides.into_iter().collect())
}

/// What `page` shows (its `innerText`) that a person of `lang` should not read: an engine
/// id among `ids` (as a whole word, case and all) or an amount written another language's
/// way (`foreign`, a regular expression).
pub async fn problems_on(page: &Page, ids: &[String], foreign: &str) -> Vec<String> {
    let found = page
        .eval(&format!(
            "(() => {{ const text = document.body.innerText; const out = []; \
               const esc = (s) => s.replace(/[.*+?^${{}}()|[\\]\\\\]/g, '\\\\$&'); \
               for (const id of {ids}) {{ \
                 const m = new RegExp('(^|[^\\\\w+])' + esc(id) + '(?![\\\\w+])').exec(text); \
                 if (m) out.push('engine id ' + id + ' in: ' + text.slice(Math.max(0, m.index - 30), m.index + id.length + 30)); }} \
               const f = new RegExp({foreign:?}).exec(text); \
               if (f) out.push('money written another way: ' + text.slice(Math.max(0, f.index - 30), f.index + 30)); \
               return out; }})()",
            ids = json!(ids),
        ))
        .await;
    serde_json::from_value(found).expect("problems")
}

/// The engine ids of the shipped variants as one list (games, then side bets).
pub fn all_engine_ids() -> Vec<String> {
    let (games, sides) = engine_ids();
    games.into_iter().chain(sides).collect()
}

/// What English money written another way looks like ("10,00 €": a decimal comma before
/// the symbol).
pub const FOREIGN_TO_ENGLISH: &str = r"\d,\d\d[ \u00a0]?[€$£]";

/// Each of `amounts` (minor units, ≥ 1000 so no card total or round number is taken for
/// one) that `page` shows as a bare number (`1000` where `€10.00` is meant).
pub async fn minor_units_shown(page: &Page, amounts: &[i64]) -> Vec<String> {
    let wanted: Vec<i64> = amounts
        .iter()
        .map(|a| a.abs())
        .filter(|a| *a >= 1000)
        .collect();
    let found = page
        .eval(&format!(
            "(() => {{ const text = document.body.innerText; \
               return {}.filter(a => new RegExp('(^|[^\\\\d.,\\u202f\\u00a0])' + a + '(?![\\\\d.,])').test(text)) \
                 .map(a => 'an amount in minor units: ' + a); }})()",
            json!(wanted)
        ))
        .await;
    serde_json::from_value(found).expect("problems")
}

/// Everything raw on `page` (English): engine ids, foreign money, `amounts` in minor
/// units; each problem prefixed with `state`.
pub async fn raw_on(page: &Page, state: &str, amounts: &[i64]) -> Vec<String> {
    let mut out = problems_on(page, &all_engine_ids(), FOREIGN_TO_ENGLISH).await;
    out.extend(minor_units_shown(page, amounts).await);
    out.into_iter().map(|p| format!("{state}: {p}")).collect()
}
