//! Issue #60 items 4 and 5 on the player's page (`/play`) and the public page (`/public`),
//! in a real Chromium against the real binary, the round dealt by the test from a
//! simulated shoe:
//! - a blind player's round, by keyboard alone (Tab, Shift+Tab, Enter, Space, arrows:
//!   `support/a11y.rs`, never a tap): a seat taken, a chip laid and the bet placed, a hit
//!   and a stand, the result. Every card is said in words with its hand's total, the
//!   turn, the timer's last seconds and the result once each through the live regions, as
//!   the accessibility tree has them; a halt of the table is said at once; the focus stays
//!   on the player's control (or the dock, when the control went) at every redraw; the
//!   same page switched to German says all of it in German; the public page says the cards
//!   and the result too; axe-core finds no violation in the states reached.
//! - sound and vibration: tones (OscillatorNode) and buzzes as the timers run low and when
//!   the turn comes, none before the first key or tap, none when muted, the mute kept
//!   across a reload.
//!
//! Without chromium the tests are skipped locally, and fail under CI (`CI` set).

use crate::a11y;
#[allow(dead_code)] // what a screen reader reads comes from the accessibility tree here
use crate::cdp;
use crate::common;
use crate::player;

use a11y::{
    focused, ftl, live_region, press, record_live, said, tab_to, wait_said, wait_said_one_of,
    FOCUS_DESCRIBED,
};
use cdp::{chromium_present, Page};
use player::{holds, ALICE, STEP};
use serde_json::json;
use std::time::Duration;
use tokio::time::{sleep, timeout};

/// The focus is on `selector` (after a redraw, the control the player was on).
async fn focus_on(page: &Page, selector: &str, when: &str) {
    let s = serde_json::to_string(selector).expect("json");
    let on = page
        .eval(&format!("document.activeElement === document.querySelector({s}) && document.activeElement !== document.body"))
        .await;
    assert_eq!(
        on,
        json!(true),
        "{when}: the focus is on {} instead of {selector}",
        page.eval(FOCUS_DESCRIBED).await
    );
}

/// axe-core's violations on `page` now, each prefixed with `state`.
async fn axe(page: &Page, state: &str) -> Vec<String> {
    let found: Vec<String> = serde_json::from_value(page.axe_violations().await).expect("a list");
    found.into_iter().map(|v| format!("{state}: {v}")).collect()
}

/// Lays the first chip on the main bet and places it, by keyboard; answers the round.
async fn bet_by_keyboard(page: &Page) -> u64 {
    page.wait_for(
        "window.playState().betting.open && !!document.querySelector('#chips .chip')",
        STEP,
    )
    .await;
    tab_to(page, "#chips .chip", false).await;
    press(page, "Space", false).await;
    page.wait_for(
        "document.querySelector('#chips .chip').getAttribute('aria-pressed') === 'true'",
        STEP,
    )
    .await;
    focus_on(page, "#chips .chip", "a chip picked").await;
    tab_to(page, "[data-target='main']", false).await;
    press(page, "Enter", false).await;
    page.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place'))", STEP)
        .await;
    focus_on(page, "[data-target='main']", "a chip laid").await;
    // Back to the chip and on again (Shift+Tab works as well as Tab).
    tab_to(page, "#chips .chip", true).await;
    tab_to(page, "#place", false).await;
    let before = page
        .eval("window.playState().view.round.number")
        .await
        .as_u64()
        .unwrap_or(0);
    press(page, "Enter", false).await;
    page.wait_for("(document.querySelector('#my-bet') || {innerText: ''}).innerText.length > 0 && !!window.playState().betting.my_bet", STEP).await;
    let round = "window.playState().betting.round || window.playState().view.round.number";
    page.wait_for(&format!("({round}) > {before}"), STEP).await;
    // The place button is disabled now (nothing more laid): the focus went to the dock.
    page.wait_for("document.activeElement !== document.body", STEP)
        .await;
    page.eval(round).await.as_u64().expect("round")
}

/// Alice's net on `round` at seat 4, from the table's record.
async fn net_of(t: &player::Table, round: u64) -> i64 {
    let pool = t.pool().await;
    let lines = player::lines(&pool, round, 4, "").await;
    pool.close().await;
    assert!(!lines.is_empty(), "round {round} settled for seat 4");
    lines.iter().map(|(_, s, r)| r - s).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blind_player_plays_a_round_by_keyboard_and_hears_every_card() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(300), async {
        let (t, sim) = player::start_dealt("deluxe", 300, 12, &[("Alice", ALICE)]).await;
        let mut problems = Vec::new();
        let public = t.browser.page(&format!("{}/public", t.base), 1280, 800).await;
        let a = &t.pages[0];
        a.wait_for("!!window.playState()", STEP).await;
        record_live(a).await;
        record_live(&public).await;
        // A seat, by keyboard.
        tab_to(a, "#join button[data-seat='4']", false).await;
        press(a, "Enter", false).await;
        a.wait_for("window.playState() && window.playState().seat === 4", STEP).await;
        a.wait_for("document.activeElement !== document.body", STEP).await;
        // Bets open; the bet laid and placed by keyboard.
        player::open_betting(t.proc()).await;
        let round = bet_by_keyboard(a).await;
        problems.extend(axe(a, "betting").await);
        let (status, body) = t.proc().post("/api/betting/close", "").await;
        assert_eq!(status, 200, "{body}");
        // Alice 7H 9C (16) against the dealer's 9D, the hole card 8S; her hit takes 4S.
        sim.load(common::cards_for_shoe(&["7H", "9D", "9C", "8S", "4S"])).await.expect("load");
        assert_eq!(sim.deal(4).await.expect("deal").len(), 4);
        a.wait_for("!!document.querySelector('#actions')", STEP).await;
        wait_said(a, "polite", "Seat 4: 7 of hearts, 9 of clubs, 16", STEP).await;
        wait_said(a, "polite", "Dealer: 9 of diamonds, face-down card", STEP).await;
        wait_said(a, "polite", &ftl("en", "your-turn", &[("seat", "4")]), STEP).await;
        problems.extend(axe(a, "deciding").await);
        // The dock took the focus when the bet was placed; Tab reaches Hit.
        tab_to(a, "#actions button[data-action='hit']", false).await;
        assert_eq!(focused(a).await, ("button".to_string(), "Hit".to_string()));
        press(a, "Enter", false).await;
        t.proc()
            .until("/api/status", "the hit taken: the next card is seat 4's", |s| s["remote"]["hit"]["seat"] == 4)
            .await;
        assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
        wait_said(a, "polite", "Seat 4: 7 of hearts, 9 of clubs, 4 of spades, 20", STEP).await;
        // The redraw with the new card kept the focus on Hit.
        focus_on(a, "#actions button[data-action='hit']", "after the hit").await;
        // The decision's last seconds are said (at 5, or at the first redraw under 5 when a
        // busy page's redraw skipped that second: with the seconds truly left); then Stand,
        // one Tab on.
        let last_seconds: Vec<String> = (2..=5)
            .map(|s| ftl("en", "timer-left", &[("seconds", &s.to_string())]))
            .collect();
        wait_said_one_of(a, "polite", &last_seconds, STEP).await;
        press(a, "Tab", false).await;
        focus_on(a, "#actions button[data-action='stand']", "Tab from Hit").await;
        press(a, "Enter", false).await;
        // The dealer turns the hole card over: 17, and the round settles.
        wait_said(a, "polite", "Dealer: 9 of diamonds, 8 of spades, 17", STEP).await;
        a.wait_for(&format!("(document.querySelector('#result') || {{dataset: {{}}}}).dataset.round === '{round}'"), STEP).await;
        let net = net_of(&t, round).await;
        assert!(net > 0, "20 against 17 wins: {net}");
        let result = ftl("en", "result-win", &[("amount", &player::euro(net))]);
        wait_said(a, "polite", &format!("Round {round}: {result}"), STEP).await;
        // The decision's buttons went: the focus is on the dock, not lost.
        focus_on(a, "#dock", "after the stand").await;
        assert_eq!(focused(a).await.1, ftl("en", "dock-label", &[]));
        problems.extend(axe(a, "result").await);
        // The live region as the accessibility tree has it.
        let (live, text) = live_region(a, "#announce").await;
        assert_eq!(live, "polite");
        assert!(text.contains(&format!("Round {round}: {result}")), "{text}");
        // Each said once, however often the page polled: no announcement of a hand repeats,
        // nor the turn, nor the result.
        let all = said(a).await;
        let hands: Vec<&String> = all.iter().map(|(_, t)| t).filter(|t| t.contains("of ")).collect();
        for h in &hands {
            assert_eq!(hands.iter().filter(|x| x == &h).count(), 1, "said more than once: {h}; all: {all:#?}");
        }
        for once in [
            "Seat 4: 7 of hearts, 9 of clubs, 16".to_string(),
            "Seat 4: 7 of hearts, 9 of clubs, 4 of spades, 20".to_string(),
            "Dealer: 9 of diamonds, 8 of spades, 17".to_string(),
            ftl("en", "your-turn", &[("seat", "4")]),
            format!("Round {round}: {result}"),
        ] {
            let times = all.iter().filter(|(_, t)| t.contains(&once)).count();
            assert_eq!(times, 1, "{once:?} said {times} times: {all:#?}");
        }
        // The public page said the cards and the result too.
        wait_said(&public, "polite", "Seat 4: 7 of hearts, 9 of clubs, 4 of spades, 20", STEP).await;
        wait_said(&public, "polite", "Dealer: 9 of diamonds, 8 of spades, 17", STEP).await;
        wait_said(&public, "polite", &format!("Round {round}: dealer 17"), STEP).await;
        problems.extend(axe(&public, "public").await);

        // German, picked by keyboard from the language list (an arrow key, then Tab on).
        let (_, english) = live_region(a, "#announce").await;
        assert!(!english.is_empty(), "the polite region holds the last announcement");
        let (_, alerted) = live_region(a, "#alert").await;
        tab_to(a, "#language", false).await;
        press(a, "ArrowDown", false).await;
        a.wait_for("document.documentElement.lang === 'de' && document.querySelector('#dock').getAttribute('aria-label') === 'Ihr Spiel'", STEP).await;
        focus_on(a, "#language", "the language changed").await;
        // What the regions held was said in English: a screen reader's review of them must
        // not find it under a German page.
        for (region, before) in [("#announce", &english), ("#alert", &alerted)] {
            let (_, left) = live_region(a, region).await;
            assert!(left.is_empty() || left != *before, "{region} still says, in English: {left}");
        }
        // A halt is said at once (the assertive region), in German.
        // The service's local token acts for the staff (as `croupier alarm clear` does).
        let staff = t.proc();
        let (status, body) = staff.post("/api/call-supervisor", "{}").await;
        assert_eq!(status, 200, "{body}");
        let halt = format!("{}. {}", ftl("de", "state-paused-title", &[]), ftl("de", "state-paused", &[]));
        wait_said(a, "assertive", &halt, STEP).await;
        assert_eq!(live_region(a, "#alert").await, ("assertive".to_string(), halt.clone()));
        problems.extend(axe(a, "halt").await);
        let (status, body) = staff.post("/api/alarm/clear", &json!({"reason": "checked"}).to_string()).await;
        assert_eq!(status, 200, "{body}");
        wait_said(a, "assertive", &ftl("de", "say-resumed", &[]), STEP).await;
        // A round in German: Alice's blackjack against the dealer's 17.
        player::open_betting(t.proc()).await;
        let round2 = bet_by_keyboard(a).await;
        let (status, body) = t.proc().post("/api/betting/close", "").await;
        assert_eq!(status, 200, "{body}");
        sim.load(common::cards_for_shoe(&["AS", "9H", "QH", "8C"])).await.expect("load");
        assert_eq!(sim.deal(4).await.expect("deal").len(), 4);
        wait_said(a, "polite", "Platz 4: Pik-Ass, Herz-Dame, Blackjack", STEP).await;
        wait_said(a, "polite", "Croupier: Herz-9, Kreuz-8, 17", STEP).await;
        a.wait_for(&format!("(document.querySelector('#result') || {{dataset: {{}}}}).dataset.round === '{round2}'"), STEP).await;
        let net2 = net_of(&t, round2).await;
        let result2 = ftl("de", "result-win", &[("amount", &player::euro_de(net2))]);
        wait_said(a, "polite", &format!("Runde {round2}: {result2}"), STEP).await;
        assert!(holds(a, "document.activeElement !== document.body").await, "the focus is lost");
        drop(public);
        player::finish(t, &problems).await;
    })
    .await
    .expect("bounded");
}

/// Counts every tone started (`OscillatorNode.prototype.start`), every AudioContext made
/// and every `navigator.vibrate` call, from before the page's own scripts run.
const CUE_RECORDER: &str = "(() => { window.__cues = { contexts: 0, tones: 0, vibrations: 0 }; \
    const Orig = window.AudioContext; \
    if (Orig) window.AudioContext = class extends Orig { constructor(...a) { super(...a); window.__cues.contexts++; } }; \
    const start = OscillatorNode.prototype.start; \
    OscillatorNode.prototype.start = function (...a) { window.__cues.tones++; return start.apply(this, a); }; \
    Navigator.prototype.vibrate = function () { window.__cues.vibrations++; return true; }; })()";

/// What the recorder counted: (AudioContexts, tones, vibrations).
async fn cues(page: &Page) -> (u64, u64, u64) {
    let c = page.eval("window.__cues").await;
    let n = |k: &str| {
        c[k].as_u64()
            .unwrap_or_else(|| panic!("no recorder on the page: {c}"))
    };
    (n("contexts"), n("tones"), n("vibrations"))
}

/// One round for Alice at seat 4, her bet placed through the players' API (no key, no
/// tap on the page): betting opens and runs out its countdown (the page's timer through
/// its last seconds), the cards come (Alice 16 against the dealer's 9, hole 8) and it is
/// her turn. Answers the round.
async fn round_to_the_turn(
    t: &player::Table,
    sim: &croupier_drivers::sim::SimShoe,
    token: &str,
) -> u64 {
    let a = &t.pages[0];
    player::open_betting(t.proc()).await;
    a.wait_for("window.playState().betting.open", STEP).await;
    // While bets are open the view still holds the round before.
    let before = a
        .eval("window.playState().view.round.number")
        .await
        .as_u64()
        .unwrap_or(0);
    let min = a.eval("window.playState().limits.min").await;
    let (status, body) = t
        .proc()
        .post_as(
            token,
            "/api/play/bet",
            &json!({"seat": 4, "main": min, "side": {}}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // The window's last seconds run out on the page.
    a.wait_for("!window.playState().betting.open", STEP).await;
    // The round the window opened: a loaded table opens it a moment after the window
    // closes (CI saw the round before read here).
    a.wait_for(
        &format!("window.playState().view.round.number > {before}"),
        STEP,
    )
    .await;
    let round = a
        .eval("window.playState().view.round.number")
        .await
        .as_u64()
        .expect("round");
    sim.load(common::cards_for_shoe(&["7H", "9D", "9C", "8S"]))
        .await
        .expect("load");
    assert_eq!(sim.deal(4).await.expect("deal").len(), 4);
    a.wait_for("!!document.querySelector('#actions')", STEP)
        .await;
    // The turn's call has its moment.
    sleep(Duration::from_millis(500)).await;
    round
}

/// Alice stands through the API, and the round settles.
async fn stand_and_settle(t: &player::Table, token: &str, round: u64) {
    let (status, body) = t
        .proc()
        .post_as(
            token,
            "/api/play/decision",
            &json!({"seat": 4, "action": "stand"}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    t.pages[0]
        .wait_for(&format!("(document.querySelector('#result') || {{dataset: {{}}}}).dataset.round === '{round}'"), STEP)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tones_and_buzzes_as_time_runs_low_and_on_the_turn_unless_muted() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(300), async {
        let (t, sim) = player::start_dealt("deluxe", 7, 7, &[("Alice", ALICE)]).await;
        let a = &t.pages[0];
        a.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": CUE_RECORDER})).await;
        a.reload().await;
        a.wait_for("!!window.__cues && !!window.playState && !!window.playState()", STEP).await;
        let token = a.eval("sessionStorage.getItem('croupier.play')").await.as_str().expect("token").to_string();
        let (status, body) = t.proc().post_as(&token, "/api/play/join", &json!({"seat": 4}).to_string()).await;
        assert_eq!(status, 200, "{body}");
        a.wait_for("window.playState().seat === 4", STEP).await;

        // Before any key or tap: a betting window run out and a turn, in silence.
        let round = round_to_the_turn(&t, &sim, &token).await;
        assert_eq!(cues(a).await, (0, 0, 0), "no sound nor vibration before the first gesture");
        stand_and_settle(&t, &token, round).await;

        // The first key: sound is allowed from now on.
        press(a, "Tab", false).await;
        let (contexts, _, _) = cues(a).await;
        assert_eq!(contexts, 1, "the first key makes the AudioContext");
        let round = round_to_the_turn(&t, &sim, &token).await;
        let (_, tones, buzzes) = cues(a).await;
        // The betting window's last five seconds (each once; a render may miss one), then
        // the turn's two notes and its buzz.
        assert!((3 + 2..=5 + 2).contains(&tones), "tones by the turn: {tones}");
        assert!((3 + 1..=5 + 1).contains(&buzzes), "buzzes by the turn: {buzzes}");
        // The decision's own last seconds: Alice lets the timer run out.
        a.wait_for(&format!("(document.querySelector('#result') || {{dataset: {{}}}}).dataset.round === '{round}'"), STEP).await;
        let (_, after, buzzed) = cues(a).await;
        assert!((tones + 3..=tones + 5).contains(&after), "tones as the decision ran out: {after} after {tones}");
        assert!((buzzes + 3..=buzzes + 5).contains(&buzzed), "buzzes as the decision ran out: {buzzed} after {buzzes}");

        // Muted by keyboard: the toggle says so, and the page remembers it after a reload.
        tab_to(a, "#mute", false).await;
        assert_eq!(a.eval("document.querySelector('#mute').getAttribute('aria-pressed')").await, json!("false"));
        press(a, "Enter", false).await;
        a.wait_for("document.querySelector('#mute').getAttribute('aria-pressed') === 'true'", STEP).await;
        assert_eq!(focused(a).await, ("button".to_string(), ftl("en", "mute", &[])));
        a.reload().await;
        a.wait_for("!!window.__cues && !!document.querySelector('#mute')", STEP).await;
        assert_eq!(a.eval("document.querySelector('#mute').getAttribute('aria-pressed')").await, json!("true"));
        press(a, "Tab", false).await;
        let round = round_to_the_turn(&t, &sim, &token).await;
        let (contexts, tones, buzzes) = cues(a).await;
        assert_eq!((tones, buzzes), (0, 0), "muted: no tone, no buzz (AudioContexts: {contexts})");
        stand_and_settle(&t, &token, round).await;
        let problems = axe(a, "muted").await;
        player::finish(t, &problems).await;
    })
    .await
    .expect("bounded");
}
