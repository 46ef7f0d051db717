//! The dispute and alarm screens in a real Chromium (Debian's `chromium` over the DevTools
//! protocol), by taps only:
//! - the dealer raises a dispute from the panel, the round halts and a card dealt meanwhile
//!   shows as held; the dealer gets no resolution controls; a supervisor logs in on the
//!   same panel, picks "void" and the exposed card by taps, types the reason, sees the
//!   corrected round previewed, confirms, and the table plays on with the held card in its
//!   place; then cancels the next round. The hole card never appears. People show by name.
//! - resolutions the round cannot replay are offered disabled with the reason, before any
//!   Preview: exactly those the server's `offers` say, each refused when sent anyway;
//! - alarms: a card out of the shoe with no round in progress, and the dealer's touch
//!   "call supervisor", each shown in plain words with what to do, and cleared by a
//!   supervisor by taps.
//!
//! Every screen is measured at 800×480 and 1280×800: every control on screen, uncovered
//! and overlapping no other (`support/layout.js`), and axe-core finds no violation of
//! impact moderate or worse. Screenshots go to `target/browser-artifacts/` (or
//! `$CROUPIER_ARTIFACTS`).

use crate::cdp;
use crate::common;
use crate::fit;
use crate::running;

use cdp::{artifacts, chromium_present, Browser, Page};
use croupier::auth::Role;
use croupier::table::{Snapshot, TableHandle, TableState};
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

async fn api(addr: SocketAddr, cookie: &str, path: &str, body: serde_json::Value) {
    let reply = request_with(
        &addr.to_string(),
        "POST",
        path,
        Some(&body.to_string()),
        &[("Cookie", cookie)],
        STEP,
    )
    .await
    .expect("request");
    assert_eq!(reply.status, 200, "{path}: {}", reply.body);
}

async fn deal(handle: &TableHandle, sim: &SimShoe) {
    let mut watch = handle.watch();
    let before = watch.borrow().seq;
    assert_eq!(sim.deal(1).await.expect("sim deals").len(), 1);
    timeout(STEP, watch.wait_for(|s| s.seq > before))
        .await
        .expect("the card is taken")
        .expect("table running");
}

/// Logs in on the panel's keypad.
async fn log_in(panel: &Page, badge: &str, pin: &str) {
    panel
        .wait_for("document.querySelector('#login')", STEP)
        .await;
    for (field, text) in [("badge", badge), ("secret", pin)] {
        panel.tap(&format!("#login-{field}")).await;
        for key in text.chars() {
            panel.tap(&format!("[data-key=\"{key}\"]")).await;
        }
    }
    panel.tap("#login-ok").await;
    panel
        .wait_for("document.querySelector('#login') === null", STEP)
        .await;
}

/// Hands the panel over by touch while a sheet (alarm, dispute) covers it: Log out on the
/// sheet (the header's is under it), then the next person logs in on the keypad.
async fn hand_over(panel: &Page, badge: &str, pin: &str) {
    panel.tap_in_view("#sheet-logout").await;
    log_in(panel, badge, pin).await;
}

/// Confirms the previewed resolution by a tap: the dispute screen goes and the table is
/// open again. The table's snapshot then.
async fn confirm_on_panel(panel: &Page, h: &TableHandle) -> std::sync::Arc<Snapshot> {
    panel.tap_in_view("#confirm-resolution").await;
    panel
        .wait_for("document.querySelector('#dispute') === null", STEP)
        .await;
    let s = h.snapshot();
    assert_eq!(s.state, TableState::Open);
    s
}

/// Each selector's text on the panel is the one given.
async fn shows(panel: &Page, texts: &[(&str, &str)]) {
    for (selector, text) in texts {
        assert_eq!(panel.text(selector).await, *text, "{selector}");
    }
}

/// The supervisor (badge 701) takes the panel from the dealer, and the panel shows
/// `shown` (a JavaScript condition).
async fn supervisor_takes(panel: &Page, shown: &str) {
    hand_over(panel, "701", "7070").await;
    panel.wait_for(shown, STEP).await;
}

/// Types `text` on the dispute screen's on-screen keyboard for `field`, by taps.
async fn keyboard(panel: &Page, field: &str, text: &str) {
    let shown = format!("document.querySelector('#kbd-{field}') !== null");
    if panel.eval(&shown).await != json!(true) {
        panel.tap(&format!("#keyboard-{field}")).await;
    }
    panel.tap("[data-kbd=\"clear\"]").await;
    for c in text.chars() {
        let key = if c == ' ' {
            "space".to_string()
        } else {
            c.to_string()
        };
        panel.tap(&format!("[data-kbd=\"{key}\"]")).await;
    }
    assert_eq!(panel.text(&format!("#typed-{field}")).await, text);
}

/// Raises a dispute from the panel by taps only: the Dispute button, the seat on the
/// table's picture, the reason on the on-screen keyboard.
async fn raise_from_panel(panel: &Page, seat: &str, reason: &str) {
    panel.tap("#open-dispute").await;
    panel
        .tap(&format!("#raise-picture .seat[data-seat=\"{seat}\"]"))
        .await;
    assert_eq!(
        panel.text("#dispute-seat").await.split(' ').nth(1),
        Some(seat)
    );
    keyboard(panel, "raiseReason", reason).await;
    panel.tap("[data-kbd=\"done\"]").await;
    panel.tap_in_view("#raise-dispute-btn").await;
}

fn no_hole_card(html: &serde_json::Value) {
    assert_eq!(*html, json!(false), "the hole card is in the page");
}

/// A Deluxe table on a PTY shoe holding `cards`, with the panel's two people: "Panel
/// dealer" (badge 601, PIN 6060) and "Panel supervisor" (701, 7070). `window`: the dispute
/// window in seconds, when not the test config's.
async fn table(
    cards: &[&str],
    window: Option<u32>,
) -> (tempfile::TempDir, running::Running, SimShoe) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = SimShoe::start(SimConfig {
        items: common::cards_for_shoe(cards),
        ..SimConfig::default()
    })
    .expect("pty shoe");
    let mut config = common::config(dir.path(), &sim.path(), "deluxe");
    if let Some(w) = window {
        config.disputes.window_seconds = w;
    }
    running::add_users(&config.store.path).await;
    let pool = croupier::auth::open_pool(&config.store.path)
        .await
        .expect("pool");
    for (badge, name, role, pin) in [
        ("601", "Panel dealer", Role::Dealer, "6060"),
        ("701", "Panel supervisor", Role::Supervisor, "7070"),
    ] {
        croupier::auth::accounts::add(&pool, "test", badge, name, role, pin)
            .await
            .expect("account");
    }
    pool.close().await;
    let run = running::start(config).await;
    (dir, run, sim)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervisor_voids_an_exposed_card_from_the_panel() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(150), async {
        let out = artifacts();
        // Seat 1, seat 2, dealer up; 2D exposed on its way to seat 1; 9D dealt during the
        // halt; then seat 2's second card and the hole card 8C.
        let (_dir, run, sim) =
            table(&["9H", "5S", "7C", "2D", "9D", "TS", "8C"], None).await;
        let h = &run.handle;
        let dealer = running::login_as(run.addr, Role::Dealer).await;
        let browser = Browser::launch().await;
        let panel = browser
            .page(&format!("http://{}/", run.addr), 800, 480)
            .await;
        log_in(&panel, "601", "6060").await;

        api(run.addr, &dealer, "/api/betting/open", json!({})).await;
        for seat in [1, 2] {
            api(run.addr, &dealer, "/api/bets", json!({"seat": seat, "main": 100})).await;
        }
        api(run.addr, &dealer, "/api/betting/close", json!({})).await;
        for _ in 0..4 {
            deal(h, &sim).await;
        }

        let mut problems = Vec::new();
        // The dealer raises the dispute from the panel. Without a reason the server
        // refuses: the refusal shows in plain words on top of the screen (hit-tested).
        panel
            .wait_for("document.querySelector('#raise-dispute') !== null", STEP)
            .await;
        panel.tap_in_view("#open-dispute").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-raise").await);
        panel.tap_in_view("#raise-dispute-btn").await;
        panel
            .wait_for(
                "(() => { const t = document.querySelector('#toast'); if (!t) return false; \
                 const r = t.getBoundingClientRect(); \
                 return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2).closest('#toast') === t; })()",
                STEP,
            )
            .await;
        assert_eq!(
            panel.text("#toast").await,
            "Give a reason first: tap one, or type it on the keyboard."
        );
        panel.screenshot(&out.join("dispute-800x480-refused.png")).await;
        panel.tap_in_view("#toast").await;
        panel.tap_in_view("#raise-cancel").await;
        raise_from_panel(&panel, "1", "2d was exposed").await;
        panel
            .wait_for("document.querySelector('#dispute') !== null", STEP)
            .await;
        assert_eq!(h.snapshot().state, TableState::Disputed);
        let said = panel.text("#dispute-reason").await;
        assert!(said.contains("2d was exposed (seat 1)"), "{said}");
        // People by name, not by audit actor.
        assert!(said.contains("raised by Panel dealer"), "{said}");
        assert!(!panel.text("#dispute").await.contains("user:"));
        // A card dealt during the halt is held, shown as such; the dealer cannot resolve.
        deal(h, &sim).await;
        panel
            .wait_for("document.querySelector('#dispute').innerText.includes('9\\u2666')", STEP)
            .await;
        assert!(panel.text("#dispute-held").await.contains("9\u{2666}"));
        assert_eq!(
            panel.eval("document.querySelector('#propose-resolution') === null").await,
            json!(true),
            "no resolution controls for a dealer"
        );
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-dealer").await);

        // The supervisor takes the panel.
        supervisor_takes(&panel, "document.querySelector('#resolution-op') !== null").await;
        // Preview stays off until a correction names its card and what it really is.
        panel.tap("[data-op=\"correct\"]").await;
        panel.tap("[data-preset=\"misread by the shoe\"]").await;
        let off = "document.querySelector('#propose-resolution').disabled";
        assert_eq!(panel.eval(off).await, json!(true));
        let codes = panel
            .eval("[...document.querySelectorAll('[data-card-index]')].map(b => b.innerText).filter(t => /\\b(?:[2-9TJQKA])[SHDC]\\b/.test(t))")
            .await;
        assert_eq!(codes, json!([]), "the card list speaks the shoe's codes");
        panel.tap("[data-card-index=\"3\"]").await;
        assert_eq!(panel.eval(off).await, json!(true));
        panel.tap("[data-rank=\"2\"]").await;
        panel.tap("[data-suit=\"H\"]").await;
        // Cards as a dealer reads them, never the shoe's codes ("2H").
        assert_eq!(panel.text("#correct-to").await, "2\u{2665}");
        assert_eq!(panel.eval(off).await, json!(false));
        // The correction's screen, the tallest (the card picker under the picture), fits.
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-correct").await);
        // Undoing a decision when none was taken is not offered: off before any Preview,
        // saying why.
        assert_eq!(
            panel.eval("document.querySelector('[data-op=\"undo_decision\"]').disabled").await,
            json!(true)
        );
        assert_eq!(
            panel.text("[data-op=\"undo_decision\"] .why").await,
            "no decision was taken this round"
        );
        panel
            .tap("[data-op=\"void\"]")
            .await;
        // This time the card is tapped on the table's picture: 2D, seat 1's second card.
        panel.tap("[data-card-index=\"0\"]").await;
        panel.tap("#card-picture [data-seat=\"1\"] [data-card=\"2D\"]").await;
        assert_eq!(
            panel
                .eval("document.querySelector('[data-card-index=\"3\"]').classList.contains('picked')")
                .await,
            json!(true),
            "the card tapped on the picture is the one picked"
        );
        assert!(panel.text("#picked-card").await.contains("2\u{2666} (seat 1, hand 1)"));
        assert_eq!(
            panel
                .eval("[...document.querySelectorAll('#card-picture .card.picked')].map((c) => c.dataset.card)")
                .await,
            json!(["2D"]),
            "the picture marks the picked card, and only it"
        );
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-void-card-picked").await);
        keyboard(&panel, "reason", "exposed on camera").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-keyboard").await);
        panel.tap("[data-kbd=\"done\"]").await;
        assert_eq!(
            panel.eval("document.querySelector('#resolution-reason').value").await,
            json!("exposed on camera")
        );
        panel.tap_in_view("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute-preview') !== null", STEP)
            .await;
        let preview = panel.text("#dispute-preview").await;
        assert!(preview.contains("void") && preview.contains("exposed on camera"), "{preview}");
        assert!(preview.contains("proposed by Panel supervisor"), "{preview}");
        // What the table would wait for, in the panel's words (not the engine's).
        let then = panel.text("#preview-expecting").await;
        assert_eq!(then, "Then: Deal a card to seat 2, hand 1.");
        assert_eq!(
            panel
                .eval("document.querySelector('#dispute-preview [data-seat=\"1\"]').querySelectorAll('[data-card]').length")
                .await,
            json!(2),
            "seat 1 previewed with 9H and 9D"
        );
        // Nothing changed yet.
        assert_eq!(h.snapshot().state, TableState::Disputed);
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-preview").await);
        let s = confirm_on_panel(&panel, h).await;
        let seat1: Vec<String> = s.round.hands[0].cards.iter().map(|c| c.to_string()).collect();
        assert_eq!(seat1, ["9H", "9D"]);
        panel
            .wait_for("document.querySelector('[data-seat=\"1\"] [data-card=\"9D\"]') !== null", STEP)
            .await;
        // Play on: seat 2's second card, then the hole card, which stays a card back.
        deal(h, &sim).await;
        deal(h, &sim).await;
        panel
            .wait_for("document.querySelectorAll('#dealer .card.back').length === 1", STEP)
            .await;
        no_hole_card(&panel.eval("document.body.innerHTML.includes('8C')").await);
        panel.screenshot(&out.join("dispute-800x480-after.png")).await;

        // The supervisor cancels the round from the panel: every bet comes back.
        raise_from_panel(&panel, "2", "shoe jammed mid-round").await;
        panel
            .wait_for("document.querySelector('#resolution-op') !== null", STEP)
            .await;
        // A move by taps: the card on the picture, then (the toggle has moved on by
        // itself) the hand it really went to; previewed, then withdrawn.
        panel.tap("[data-op=\"move\"]").await;
        // (its index: the next card covers the rest of it)
        panel.tap("#card-picture [data-seat=\"2\"] [data-card=\"5S\"] .index").await;
        assert_eq!(
            panel.eval("document.querySelector('#pick-to').getAttribute('aria-pressed')").await,
            json!("true")
        );
        panel.tap("#card-picture [data-seat=\"1\"] [data-hand=\"0\"]").await;
        assert!(panel.text("#move-to").await.contains("It went to: seat 1, hand 1"));
        let picked = panel.text("#picked-card").await;
        assert!(picked.contains("5\u{2660} (seat 2, hand 1)"), "{picked}");
        panel.tap("[data-preset=\"dealt out of order\"]").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-move").await);
        panel.tap_in_view("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute-preview') !== null", STEP)
            .await;
        assert!(panel.text("#dispute-preview h2").await.contains("move a card"));
        assert_eq!(
            panel
                .eval("!!document.querySelector('#dispute-preview [data-seat=\"1\"] [data-card=\"5S\"]')")
                .await,
            json!(true),
            "seat 1 previewed with the moved card"
        );
        panel.tap_in_view("#withdraw-resolution").await;
        panel
            .wait_for("document.querySelector('#resolution-op') !== null", STEP)
            .await;
        panel
            .tap("[data-op=\"cancel\"]")
            .await;
        panel.tap("[data-preset=\"misdeal: refund all\"]").await;
        panel.tap_in_view("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#preview-expecting') !== null", STEP)
            .await;
        assert!(panel
            .text("#preview-expecting")
            .await
            .contains("every bet refunded"));
        let s = confirm_on_panel(&panel, h).await;
        let result = s.last_result.clone().expect("a cancelled result");
        assert!(result.cancelled);
        assert!(result.bets.iter().all(|b| b.returned == b.staked));
        assert_eq!(result.bets.iter().map(|b| b.returned).sum::<i64>(), 200);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        browser.close().await;
        run.stop().await;
    })
    .await
    .expect("in time");
}

/// GETs `path` with the session `cookie`: (status, JSON).
async fn get(addr: SocketAddr, cookie: &str, path: &str) -> (u16, serde_json::Value) {
    let reply = request_with(
        &addr.to_string(),
        "GET",
        path,
        None,
        &[("Cookie", cookie)],
        STEP,
    )
    .await
    .expect("request");
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or_default(),
    )
}

/// POSTs `body` to `path` with the session `cookie`: (status, JSON).
async fn send(
    addr: SocketAddr,
    cookie: &str,
    path: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let reply = request_with(
        &addr.to_string(),
        "POST",
        path,
        Some(&body.to_string()),
        &[("Cookie", cookie), ("Content-Type", "application/json")],
        STEP,
    )
    .await
    .expect("request");
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_round_offers_only_the_resolutions_that_replay() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(150), async {
        // Seat 1: TH 9S, 19; the dealer 7C QD, 17: seat 1 stands and wins.
        let (_dir, run, sim) = table(&["TH", "7C", "9S", "QD"], Some(600)).await;
        let h = &run.handle;
        let dealer = running::login_as(run.addr, Role::Dealer).await;
        let supervisor = running::login_as(run.addr, Role::Supervisor).await;
        api(run.addr, &dealer, "/api/betting/open", json!({})).await;
        api(
            run.addr,
            &dealer,
            "/api/bets",
            json!({"seat": 1, "main": 100}),
        )
        .await;
        api(run.addr, &dealer, "/api/betting/close", json!({})).await;
        for _ in 0..4 {
            deal(h, &sim).await;
        }
        api(
            run.addr,
            &dealer,
            "/api/decision",
            json!({"seat": 1, "action": "stand"}),
        )
        .await;
        let mut watch = h.watch();
        timeout(STEP, watch.wait_for(|s| s.round.settled))
            .await
            .expect("settles")
            .expect("running");

        let browser = Browser::launch().await;
        let panel = browser
            .page(&format!("http://{}/", run.addr), 800, 480)
            .await;
        log_in(&panel, "601", "6060").await;
        // The round's summary in the decision buttons' place; what comes next in words.
        panel
            .wait_for("document.querySelector('#round-summary')", STEP)
            .await;
        shows(
            &panel,
            &[
                ("#round-summary .summary-title", "Round 1 settled"),
                ("[data-summary-seat=\"1\"]", "Seat 1 win +€1.00"),
                ("#summary-house", "Dealer 17 · House paid out €1.00"),
                (
                    "#expecting",
                    "Between rounds: open betting when the players are ready.",
                ),
            ],
        )
        .await;
        let mut problems = fit::panel_at_both_sizes(&panel, "panel-summary").await;

        raise_from_panel(&panel, "1", "player disputes").await;
        panel
            .wait_for("document.querySelector('#dispute')", STEP)
            .await;
        supervisor_takes(&panel, "document.querySelector('#resolution-op')").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "dispute-settled").await);

        // What the server offers is what the screen offers, before any Preview; what it
        // does not offer is refused when sent anyway, for the reason the screen gives.
        let (status, view) = get(run.addr, &supervisor, "/api/view").await;
        assert_eq!(status, 200, "{view}");
        let d = &view["dispute"];
        let offers = d["offers"].as_array().expect("offers").clone();
        assert_eq!(offers.len(), 6, "{offers:?}");
        let mut refused = 0;
        for o in &offers {
            let op = o["op"].as_str().expect("op");
            let off = panel
                .eval(&format!(
                    "document.querySelector('[data-op=\"{op}\"]').disabled"
                ))
                .await;
            assert_eq!(
                off,
                json!(!o["possible"].as_bool().expect("bool")),
                "{op}: {o}"
            );
            if o["possible"] == json!(false) {
                assert!(!panel
                    .text(&format!("[data-op=\"{op}\"] .why"))
                    .await
                    .is_empty());
            }
            if o["possible"] == json!(false) && o["cards"].is_null() {
                let (status, body) = send(
                    run.addr,
                    &supervisor,
                    &format!("/api/disputes/{}/propose", d["id"]),
                    json!({"resolution": {"op": op}, "reason": "tried anyway"}),
                )
                .await;
                assert_ne!(status, 200, "{op} was offered off but taken: {body}");
                assert_eq!(body["error"]["code"], o["why"], "{op}: {body}");
                refused += 1;
            }
        }
        // A void: each card the screen leaves off is one the server refuses.
        let void = offers.iter().find(|o| o["op"] == "void").expect("void");
        let allowed: Vec<u64> = void["cards"]
            .as_array()
            .expect("cards")
            .iter()
            .filter_map(|c| c.as_u64())
            .collect();
        if void["possible"] == json!(true) {
            panel.tap("[data-op=\"void\"]").await;
        }
        for c in d["cards"].as_array().expect("cards") {
            let index = c["index"].as_u64().expect("index");
            if c["card"].is_null() {
                continue;
            }
            if void["possible"] == json!(true) {
                let off = panel
                    .eval(&format!(
                        "document.querySelector('[data-card-index=\"{index}\"]').disabled"
                    ))
                    .await;
                assert_eq!(off, json!(!allowed.contains(&index)), "card {index}");
            }
            if !allowed.contains(&index) {
                let (status, body) = send(
                    run.addr,
                    &supervisor,
                    &format!("/api/disputes/{}/propose", d["id"]),
                    json!({"resolution": {"op": "void", "index": index, "card": c["card"]},
                           "reason": "tried anyway"}),
                )
                .await;
                assert_ne!(
                    status, 200,
                    "void of card {index} was offered off but taken: {body}"
                );
                refused += 1;
            }
        }
        println!("{refused} resolutions offered off, each refused by the server");
        assert!(
            refused >= 1,
            "a settled round with no decision to undo: {offers:?}"
        );
        assert!(
            h.snapshot()
                .dispute
                .as_ref()
                .expect("open")
                .proposal
                .is_none(),
            "nothing refused was proposed"
        );

        // Reject by taps: the round stands.
        panel.tap("[data-op=\"reject\"]").await;
        panel.tap("[data-preset=\"checked at the table\"]").await;
        panel.tap_in_view("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute-preview')", STEP)
            .await;
        panel.tap_in_view("#confirm-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute') === null", STEP)
            .await;
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        browser.close().await;
        run.stop().await;
    })
    .await
    .expect("in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alarms_are_said_plainly_and_cleared_by_taps() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(150), async {
        let (_dir, run, sim) = table(&["3H"], None).await;
        let h = &run.handle;
        let browser = Browser::launch().await;
        let panel = browser
            .page(&format!("http://{}/", run.addr), 800, 480)
            .await;
        log_in(&panel, "601", "6060").await;
        let mut problems = Vec::new();

        // A card out of the shoe with no round in progress: refused, the table locked.
        deal(h, &sim).await;
        panel
            .wait_for("document.querySelector('#alarm-reason')", STEP)
            .await;
        assert_eq!(
            panel.text("#alarm-reason").await,
            "Card 3H came out of the shoe but does not fit: no round is in progress"
        );
        assert!(panel
            .text("#alarm-todo")
            .await
            .starts_with("What to do: Take the 3H out of play and put it aside."));
        let page = panel.text("#alarm").await;
        assert!(!page.contains("card_not_expected"), "{page}");
        // The dealer waits for a supervisor: no clearing here.
        assert_eq!(
            panel
                .eval("document.querySelector('#clear-alarm') === null")
                .await,
            json!(true)
        );
        problems.extend(fit::panel_at_both_sizes(&panel, "alarm-card-refused-dealer").await);
        supervisor_takes(&panel, "document.querySelector('#clear-alarm')").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "alarm-card-refused").await);
        panel.tap("[data-preset=\"checked at the table\"]").await;
        panel.tap_in_view("#clear-alarm").await;
        panel
            .wait_for("document.querySelector('#alarm') === null", STEP)
            .await;
        assert_eq!(h.snapshot().state, TableState::Open);

        // The dealer's touch "call supervisor": the button box's alarm, by the same path.
        panel.tap_in_view("#logout").await;
        log_in(&panel, "601", "6060").await;
        problems.extend(fit::panel_at_both_sizes(&panel, "panel-idle").await);
        panel.tap_in_view("#call-supervisor").await;
        panel
            .wait_for("document.querySelector('#alarm-reason')", STEP)
            .await;
        assert_eq!(
            h.snapshot().alarm.as_ref().expect("an alarm").reason,
            "the dealer called the supervisor"
        );
        assert_eq!(
            panel.text("#alarm-reason").await,
            "The dealer called the supervisor."
        );
        problems.extend(fit::panel_at_both_sizes(&panel, "alarm-called-dealer").await);
        supervisor_takes(&panel, "document.querySelector('#clear-alarm')").await;
        // The dealer's "Supervisor called" went with the dealer: nothing of theirs lies over
        // the supervisor's screen (it covered the alarm's heading).
        assert_eq!(
            panel.eval("document.querySelector('#toast') && document.querySelector('#toast').innerText").await,
            json!(null),
            "the dealer's notice outlived their session"
        );
        panel.tap("#keyboard-reason").await;
        keyboard(&panel, "reason", "came to the table").await;
        panel.tap("[data-kbd=\"done\"]").await;
        panel.tap_in_view("#clear-alarm").await;
        panel
            .wait_for("document.querySelector('#alarm') === null", STEP)
            .await;
        assert_eq!(h.snapshot().state, TableState::Open);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        browser.close().await;
        run.stop().await;
    })
    .await
    .expect("in time");
}
