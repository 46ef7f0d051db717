//! The player's page's words (`dealer-ui/play-LANG.ftl`), read by the page's own Fluent
//! runtime in Chromium: each catalogue parses without an error, every message of the
//! English one is in every other language shipped, and every code the players' API can
//! answer has its own sentence (`error-CODE`) in each — so no code reaches a player.
//!
//! The codes come from the service itself: the wallet's, the table's and the engine's
//! error enums (an exhaustive `match` below stops the build when one gains a variant), and
//! every code the players' routes write (`src/web/play.rs`, `src/web/play/*.rs`).
//!
//! Without chromium the test is skipped locally, and fails under CI (`CI` set).

#[allow(dead_code)] // this test reads the page's catalogues, never taps or photographs
#[path = "support/cdp.rs"]
mod cdp;
mod common;
#[path = "common/proc.rs"]
mod proc;

use cdp::{chromium_present, Browser};
use croupier::engine::{Code, Rejection};
use croupier::table::{BetError, SubmitError};
use croupier::wallet::WalletError;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::time::timeout;

/// The codes of the error enums the players' API passes on.
fn enum_codes() -> Vec<&'static str> {
    let engine = [
        Code::CardNotExpected,
        Code::ImpossibleCard,
        Code::ActionNotAllowed,
        Code::NotYourTurn,
        Code::BurnIncomplete,
        Code::ShoeFinished,
        Code::InvalidBet,
    ];
    // A new variant must be added to the list above (and to the catalogues).
    for c in engine {
        match c {
            Code::CardNotExpected
            | Code::ImpossibleCard
            | Code::ActionNotAllowed
            | Code::NotYourTurn
            | Code::BurnIncomplete
            | Code::ShoeFinished
            | Code::InvalidBet => {}
        }
    }
    let submit = [
        SubmitError::Rejected(Rejection::new(Code::InvalidBet, "")),
        SubmitError::Locked(String::new()),
        SubmitError::Disputed(String::new()),
        SubmitError::Provisional(0),
        SubmitError::Broken(String::new()),
        SubmitError::Stopped,
    ];
    for e in &submit {
        match e {
            SubmitError::Rejected(_)
            | SubmitError::Locked(_)
            | SubmitError::Disputed(_)
            | SubmitError::Provisional(_)
            | SubmitError::Broken(_)
            | SubmitError::Stopped => {}
        }
    }
    let bet = [
        BetError::NotTakingBets(String::new()),
        BetError::BettingClosed,
        BetError::InvalidBet(String::new()),
    ];
    for e in &bet {
        match e {
            BetError::NotTakingBets(_) | BetError::BettingClosed | BetError::InvalidBet(_) => {}
            BetError::Submit(_) => {}
        }
    }
    let wallet = [
        WalletError::InsufficientFunds {
            balance: 0,
            amount: 0,
        },
        WalletError::UnknownPlayer(String::new()),
        WalletError::Conflict(String::new()),
        WalletError::RolledBack(String::new()),
        WalletError::Unavailable(String::new()),
    ];
    for e in &wallet {
        match e {
            WalletError::InsufficientFunds { .. }
            | WalletError::UnknownPlayer(_)
            | WalletError::Conflict(_)
            | WalletError::RolledBack(_)
            | WalletError::Unavailable(_) => {}
        }
    }
    engine
        .iter()
        .map(|c| c.as_str())
        .chain(submit.iter().map(SubmitError::code))
        .chain(bet.iter().map(BetError::code))
        .chain(wallet.iter().map(WalletError::code))
        .collect()
}

/// Every code the players' routes write themselves: the string given to a refusal's
/// constructor (`PlayError::conflict("seat_taken", …)` and its kin) in their sources.
fn route_codes() -> BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web");
    let mut files = vec![root.join("play.rs")];
    for entry in std::fs::read_dir(root.join("play")).expect("src/web/play") {
        files.push(entry.expect("entry").path());
    }
    let mut out = BTreeSet::new();
    for file in files {
        let text: String = std::fs::read_to_string(&file)
            .expect("source")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for opener in ["conflict(", "unprocessable(", "closed(", "PlayError::new("] {
            for (at, _) in text.match_indices(opener) {
                let rest = text[at + opener.len()..].trim_start();
                // `PlayError::new(StatusCode::X, "code", …)`: the code follows the status.
                let rest = rest
                    .strip_prefix("StatusCode::")
                    .and_then(|r| r.split_once(',').map(|(_, r)| r.trim_start()))
                    .unwrap_or(rest);
                if let Some(code) = rest
                    .strip_prefix('"')
                    .and_then(|r| r.split_once('"'))
                    .map(|(c, _)| c)
                    .filter(|c| {
                        !c.is_empty() && c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_')
                    })
                {
                    out.insert(code.to_string());
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_code_the_players_api_answers_has_words_in_every_language() {
    if !chromium_present() {
        return;
    }
    let mut codes: BTreeSet<String> = route_codes();
    // The scan finds the routes' own codes; too few means it no longer reads them.
    for known in [
        "seat_taken",
        "decision_closed",
        "unauthenticated",
        "no_remote_play",
    ] {
        assert!(codes.contains(known), "{known} in {codes:?}");
    }
    codes.extend(enum_codes().into_iter().map(str::to_string));
    // What the page itself names: a network failure and the edge's busy answers.
    codes.extend(["network", "busy", "unknown"].map(str::to_string));
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = common::demo_config_file(dir.path(), &[]);
        let p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let browser = Browser::launch().await;
        let page = browser
            .page(&format!("http://{}/play", p.addr), 390, 844)
            .await;
        page.wait_for(
            "window.I18n && window.FluentBundle && window.Trust",
            Duration::from_secs(15),
        )
        .await;
        let languages: Vec<String> =
            serde_json::from_value(page.eval("window.I18n.languages").await).expect("languages");
        assert!(
            languages.len() >= 2 && languages[0] == "en",
            "{languages:?}"
        );
        let codes: Vec<String> = codes.into_iter().collect();
        let report: Value = page
            .eval(&format!(
                "(async () => {{ const codes = {}; const out = {{}}; let english = null; \
                   for (const lang of window.I18n.languages) {{ \
                     const text = await (await fetch('/ui/play-' + lang + '.ftl')).text(); \
                     const res = new window.FluentBundle.FluentResource(text); \
                     const bundle = new window.FluentBundle.FluentBundle(lang, {{ useIsolating: false }}); \
                     const errors = bundle.addResource(res); \
                     const ids = res.body.map(m => m.id); \
                     if (lang === 'en') english = ids; \
                     const args = {{ round: '7', from: '3', to: '5', row: '12', card: 'AS', commitment: 'ee15b016', error: 'x' }}; \
                     const said = (c) => bundle.formatPattern(bundle.getMessage('trust-' + c).value, args); \
                     out[lang] = {{ errors: errors.map(String), \
                       missing_codes: codes.filter(c => !bundle.hasMessage('error-' + c)), \
                       missing_ids: (english || []).filter(id => !bundle.hasMessage(id)), \
                       trust_codes: window.Trust.codes.length, \
                       missing_trust: window.Trust.codes.filter(c => !bundle.hasMessage('trust-' + c)), \
                       trust_unlike_english: lang !== 'en' ? [] : window.Trust.codes \
                         .filter(c => bundle.hasMessage('trust-' + c) && said(c) !== window.Trust.english(c, args)) \
                         .map(c => c + ': ' + said(c) + ' / ' + window.Trust.english(c, args)) \
                       }}; }} \
                   return out; }})()",
                json!(codes)
            ))
            .await;
        for lang in &languages {
            let r = &report[lang];
            assert_eq!(r["errors"], json!([]), "{lang}: the catalogue parses");
            assert_eq!(r["missing_codes"], json!([]), "{lang}: codes without words");
            assert_eq!(
                r["missing_ids"],
                json!([]),
                "{lang}: messages English has and {lang} lacks"
            );
            // trust.js's checks (seal, signatures, alarms) in the page's words.
            assert!(r["trust_codes"].as_u64() >= Some(20), "trust.js names its codes: {r}");
            assert_eq!(r["missing_trust"], json!([]), "{lang}: trust.js codes without words");
            assert_eq!(
                r["trust_unlike_english"],
                json!([]),
                "the catalogue's English of trust.js's codes is trust.js's own"
            );
        }
        println!(
            "{} codes with words in {}",
            codes.len(),
            languages.join(", ")
        );
        browser.close().await;
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
