//! The player's page at the most crowded table a round is likely to make: all seven seats
//! of Deluxe in play, three of them split (ten hands, up to five cards each), while the
//! remote player at seat 7 decides. The real binary without the demo dealer: the test deals every
//! card through the simulated shoe on a pty and takes the other seats' decisions as the
//! dealer would; the local engine says which card and decision come next. The page must
//! fit every phone and desktop size (`support/fit.rs`, through `play.js`'s `fitSeats`
//! steps), its own seat whole, every card's rank and suit readable.
//!
//! And the most a common draw asks at once: Multi-hand's three boxes, each with a pair of
//! fives (four buttons a box), and the same boxes asked about insurance under an ace, each
//! in English and in German (a test each, so every check ends well within the step's timer).
//!
//! Without chromium the tests are skipped locally, and fail under CI (`CI` set).

#[allow(dead_code)] // the page's text is read through player.rs
use crate::cdp;
use crate::common;
use crate::player;
use crate::proc;

use cdp::{chromium_present, Browser};
use croupier::engine::{Action, Engine, Expectation, Input, Place};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::timeout;

/// Each seat's two cards of the deal; the seats dealt a pair of eights split them.
const DEALT: [(u8, [&str; 2]); 7] = [
    (1, ["8S", "8H"]),
    (2, ["2C", "3D"]),
    (3, ["8C", "8D"]),
    (4, ["TS", "6H"]),
    (5, ["8S", "8C"]),
    (6, ["2D", "3S"]),
    (7, ["9C", "2H"]),
];
/// The dealer's up card (no peek on a nine) and hole card.
const DEALER: [&str; 2] = ["9H", "7C"];
/// The cards each hand takes after its first two (a split hand's second card first), in
/// order, until it stands: five-card hands, split hands of four and five.
/// (No card more than four times: the shoe's integrity checks count them.)
fn later_cards(seat: u8, hand: u8) -> &'static [&'static str] {
    match (seat, hand) {
        (1, 0) => &["3H", "2D", "4C"],
        (1, 1) => &["2S", "3C", "2H", "4D"],
        (3, 0) => &["3S", "2C", "4H"],
        (3, 1) => &["2D", "3H", "2C", "4S"],
        (5, 0) => &["3D", "2S", "4D"],
        (5, 1) => &["2C", "3S", "2S", "4H"],
        (2, 0) => &["2H", "4S", "5D"],
        (6, 0) => &["2S", "4D", "5C"],
        _ => &[],
    }
}

/// What the table is given, in order: a card through the shoe, or a seat's decision
/// through the dealer's API.
#[derive(Debug)]
enum Step {
    Card(&'static str),
    Decide(u8, Action),
}

/// The round up to seat 7's first decision, planned on the engine the table runs.
fn plan() -> Vec<Step> {
    let variant = common::variant("deluxe");
    let mut engine = Engine::new(variant);
    let mut events = Vec::new();
    let bets: Vec<(u8, i64)> = (1..=7).map(|s| (s, 1000)).collect();
    engine
        .apply(&common::bets(&bets), &mut events)
        .expect("bets");
    // Cards of the deal so far per place: the dealer as seat 0.
    let mut dealt: HashMap<u8, usize> = HashMap::new();
    let mut later: HashMap<(u8, u8), usize> = HashMap::new();
    let mut split = Vec::new();
    let mut steps = Vec::new();
    loop {
        let step = match engine.expectation() {
            Expectation::DealCard(Place::Dealer) => {
                let n = dealt.entry(0).or_default();
                *n += 1;
                Step::Card(DEALER[*n - 1])
            }
            Expectation::DealCard(Place::Hand { seat, .. }) => {
                let n = dealt.entry(seat).or_default();
                *n += 1;
                Step::Card(DEALT[usize::from(seat) - 1].1[*n - 1])
            }
            Expectation::HandCard { seat, hand } => {
                let n = later.entry((seat, hand)).or_default();
                *n += 1;
                Step::Card(later_cards(seat, hand)[*n - 1])
            }
            Expectation::Decision { seat: 7, .. } => break,
            Expectation::Decision {
                seat,
                hand,
                allowed,
            } => {
                let pair = DEALT[usize::from(seat) - 1].1[0].starts_with('8');
                let n = later.entry((seat, hand)).or_default();
                if pair && !split.contains(&seat) && allowed.contains(&Action::Split) {
                    split.push(seat);
                    Step::Decide(seat, Action::Split)
                } else if let Some(card) = later_cards(seat, hand).get(*n) {
                    *n += 1;
                    Step::Card(card)
                } else {
                    Step::Decide(seat, Action::Stand)
                }
            }
            other => panic!("the plan expects no {other:?}"),
        };
        let input = match &step {
            Step::Card(code) => Input::Card(code.parse().expect("card")),
            Step::Decide(seat, action) => Input::Decision {
                seat: *seat,
                action: *action,
            },
        };
        events.clear();
        engine
            .apply(&input, &mut events)
            .expect("the planned round is legal");
        steps.push(step);
    }
    assert_eq!(split.len(), 3, "three seats split: {steps:?}");
    steps
}

/// Cards on the table in the staff's snapshot (the dealer's hole card included).
fn cards_on_table(snap: &Value) -> usize {
    let hands: usize = snap["round"]["hands"].as_array().map_or(0, |hs| {
        hs.iter()
            .map(|h| h["cards"].as_array().map_or(0, Vec::len))
            .sum()
    });
    hands + snap["round"]["dealer"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seven_seats_with_three_splits_fit_every_size() {
    if !chromium_present() {
        return;
    }
    let steps = plan();
    timeout(Duration::from_secs(400), async {
        // Long timers: the dealer closes betting, and the player's decision waits for the
        // checks.
        let (dir, sim, cfg) = common::no_demo_table("deluxe", 300, 300);
        let token = common::launch_token(&cfg, "Pia", "500.00");
        let p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let browser = Browser::launch().await;
        let page = browser
            .page(&format!("http://{}/play#t={token}", p.addr), 360, 640)
            .await;
        page.wait_for("document.querySelector(\"#join button[data-seat='7']\")", player::STEP)
            .await;
        page.tap("#join button[data-seat='7']").await;
        p.until("/api/status", "Pia at seat 7", |s| s["remote"]["seats"][0]["seat"] == 7)
            .await;

        // Every seat bets: the others at the table, then Pia by her page's API (the last
        // remote bet closes the window).
        let (status, body) = p.post("/api/betting/open", "").await;
        assert_eq!(status, 200, "{body}");
        for seat in 1..=6 {
            let (status, body) = p
                .post("/api/bets", &format!(r#"{{"seat": {seat}, "main": 1000}}"#))
                .await;
            assert_eq!(status, 200, "seat {seat}: {body}");
        }
        let (status, body) = p.post_as(&token, "/api/play/bet", r#"{"main": 1000}"#).await;
        assert_eq!(status, 200, "{body}");
        // Closed by the dealer unless that bet closed it already.
        let (status, body) = p.post("/api/betting/close", "").await;
        assert!(status == 200 || body.contains("betting_closed"), "{status} {body}");
        p.until("/api/status", "seven seats in the round", |s| {
            s["round"]["bets"].as_array().map_or(0, Vec::len) == 7
        })
        .await;

        // The round as planned: each card through the shoe (and on the table before the
        // next step), each decision through the API.
        let mut cards = 0;
        for step in &steps {
            match step {
                Step::Card(code) => {
                    sim.load(common::cards_for_shoe(&[code])).await.expect("load");
                    assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
                    cards += 1;
                    p.until("/api/status", &format!("card {code} on the table"), |s| {
                        cards_on_table(s) == cards
                    })
                    .await;
                }
                Step::Decide(seat, action) => {
                    let action = serde_json::to_value(action).expect("action");
                    let (status, body) = p
                        .post("/api/decision", &format!(r#"{{"seat": {seat}, "action": {action}}}"#))
                        .await;
                    assert_eq!(status, 200, "seat {seat} {action}: {body}");
                }
            }
        }

        // Pia decides at seat 7 beside nine other hands (ten in all).
        page.wait_for("!!document.querySelector('#actions') && document.querySelectorAll('#seats .hand').length === 10", player::STEP)
            .await;
        let wanted = ["#actions", ".seat.mine", "#dealer", "#balance"];
        let mut problems = player::sized(&page, "crowded", &player::all_sizes(), (360, 640), &wanted).await;
        // The smallest sizes need every step; the own seat keeps its cards whole.
        for (w, h) in [(360, 640), (640, 360)] {
            page.resize(w, h).await;
            page.wait_for("document.querySelector('#seats').classList.contains('fit-4')", player::STEP)
                .await;
            let mine = page
                .eval("getComputedStyle(document.querySelector('.seat.mine .card:last-child')).height")
                .await;
            let other = page
                .eval("getComputedStyle(document.querySelector(\".seat[data-seat='2'] .card:last-child\")).height")
                .await;
            assert_ne!(mine, other, "{w}x{h}: the own seat's cards stay whole");
            // The own seat's label keeps its words; each seat is named by them.
            assert_eq!(page.eval("document.querySelector('.seat.mine .label').innerText").await, "Seat 7");
            assert_eq!(page.eval("document.querySelector(\".seat[data-seat='2']\").getAttribute('aria-label')").await, "Seat 2");
        }
        page.resize(360, 640).await;
        page.screenshot(&cdp::artifacts().join("play-crowded-360x640.png")).await;
        // German's words (the decision's among them) are the longer.
        page.eval("(() => { const s = document.querySelector('#language'); s.value = 'de'; s.dispatchEvent(new Event('change')); })()")
            .await;
        page.wait_for("document.documentElement.lang === 'de'", player::STEP).await;
        // The hole card's seal, checked by the page itself, in German too.
        page.wait_for("document.querySelector('#seal') && document.querySelector('#seal').dataset.state === 'sealed'", player::STEP)
            .await;
        let seal = page.text("#seal").await;
        assert!(seal.starts_with("verdeckte Karte versiegelt · "), "{seal}");
        problems.extend(player::sized(&page, "crowded-de", &player::all_sizes(), (360, 640), &wanted).await);
        browser.close().await;
        assert!(p.terminate(), "clean stop");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    })
    .await
    .expect("bounded");
}

/// A common draw's deal (boxes 1, 2, 3, the dealer's one card, boxes 1, 2, 3 again): a pair
/// of fives on every box, ten, which may hit, stand, double (nine to eleven) and split — the
/// most buttons Multi-hand asks of a box — and a nine for the dealer (no insurance).
/// (No card more than four times: the shoe's integrity checks count them.)
const FIVES: [&str; 7] = ["5S", "5C", "5H", "9D", "5H", "5D", "5S"];
/// The same with an ace for the dealer: every box is asked about insurance first.
const UNDER_AN_ACE: [&str; 7] = ["5S", "5C", "5H", "AD", "5H", "5D", "5S"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_boxes_with_four_decisions_each_fit_every_size() {
    three_boxes_fit(
        "fives",
        "en",
        FIVES,
        ".pp-actions.n4",
        "[data-action='split']",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_boxes_with_four_decisions_each_fit_every_size_in_german() {
    three_boxes_fit(
        "fives-de",
        "de",
        FIVES,
        ".pp-actions.n4",
        "[data-action='split']",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_boxes_asked_for_insurance_fit_every_size() {
    three_boxes_fit(
        "insurance",
        "en",
        UNDER_AN_ACE,
        ".pp-actions.n2",
        "[data-action='no_insurance']",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_boxes_asked_for_insurance_fit_every_size_in_german() {
    three_boxes_fit(
        "insurance-de",
        "de",
        UNDER_AN_ACE,
        ".pp-actions.n2",
        "[data-action='no_insurance']",
    )
    .await;
}

/// Mia bets on Multi-hand's three boxes, `dealt` is dealt, and while every box asks at once
/// (three `rows`, each with a `last` button) the page in `lang` must fit every size, every
/// box's buttons on screen (`NAME-*.png`).
async fn three_boxes_fit(name: &str, lang: &str, dealt: [&str; 7], rows: &str, last: &str) {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(400), async {
        // Multi-hand with its longest step timer (25 s), each step asked twice before the
        // timeout rule plays (a second decision after the first timeout; insurance asked
        // again), so the step is still open while every size is checked on a loaded machine.
        let files = tempfile::tempdir().expect("tempdir");
        let variant = files.path().join("multihand-long-step.toml");
        let mut text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/variants/multihand.toml"))
            .expect("variant");
        for (from, to) in [
            ("decision_ms = 15000", "decision_ms = 25000"),
            ("first_strike = \"burn_card\"", "first_strike = \"decide_again\""),
            ("insurance_timeout = \"decline\"", "insurance_timeout = \"two_strike\""),
        ] {
            assert!(text.contains(from), "the variant says {from}");
            text = text.replace(from, to);
        }
        std::fs::write(&variant, text).expect("write variant");
        let (dir, sim, cfg) = common::no_demo_table(&variant.display().to_string(), 300, 300);
        let token = common::launch_token(&cfg, "Mia", "500.00");
        let p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let browser = Browser::launch().await;
        let page = browser
            .page(&format!("http://{}/play#t={token}", p.addr), 640, 360)
            .await;
        page.wait_for("document.querySelector('#join-unseated')", player::STEP).await;
        let (status, body) = p.post_as(&token, "/api/play/join", "{}").await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = p.post("/api/betting/open", "").await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = p
            .post_as(&token, "/api/play/boxes", r#"{"boxes": [{"box": 1, "main": 1000}, {"box": 2, "main": 1000}, {"box": 3, "main": 1000}]}"#)
            .await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = p.post("/api/betting/close", "").await;
        assert!(status == 200 || body.contains("betting_closed"), "{status} {body}");
        for (n, code) in dealt.iter().enumerate() {
            sim.load(common::cards_for_shoe(&[code])).await.expect("load");
            assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
            p.until("/api/status", &format!("card {code} on the table"), |s| cards_on_table(s) == n + 1)
                .await;
        }
        if lang != "en" {
            page.eval(&format!("(() => {{ const s = document.querySelector('#language'); s.value = '{lang}'; s.dispatchEvent(new Event('change')); }})()"))
                .await;
            page.wait_for(&format!("document.documentElement.lang === '{lang}'"), player::STEP).await;
        }
        let asked = format!("(window.playState().turns || []).length === 3 && document.querySelectorAll('.pp-turn-row {rows}').length === 3");
        page.wait_for(&asked, player::STEP).await;
        let last = format!(".pp-turn-row[data-seat='3'] {last}");
        let wanted = ["#actions", "#dealer", "#balance", last.as_str()];
        let sizes = player::all_sizes();
        let mut problems = player::sized(&page, name, &sizes, (640, 360), &wanted).await;
        problems.extend(player::every_turn_on_screen(&page, name, &sizes, (640, 360)).await);
        assert_eq!(
            page.eval(&asked).await,
            serde_json::json!(true),
            "the step stayed open while the sizes were checked"
        );
        browser.close().await;
        assert!(p.terminate(), "clean stop");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    })
    .await
    .expect("bounded");
}
