//! The dispute screen in a real Chromium (Debian's `chromium` over the DevTools protocol):
//! the dealer raises a dispute from the panel, the round halts and a card dealt meanwhile
//! shows as held; the dealer gets no resolution controls; a supervisor logs in on the same
//! panel, picks "void" and the exposed card by taps, types the reason, sees the corrected
//! round previewed, confirms, and the table plays on with the held card in its place. The
//! hole card never appears. Screenshots at 800×480 and 1280×800 go to
//! `target/browser-artifacts/` (or `$CROUPIER_ARTIFACTS`).

#[path = "support/cdp.rs"]
mod cdp;
mod common;
#[path = "support/running.rs"]
mod running;

use cdp::{artifacts, chromium_present, Browser, Page};
use croupier::auth::Role;
use croupier::table::{TableHandle, TableState};
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
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
    panel.tap("#raise-dispute-btn").await;
}

fn no_hole_card(html: &serde_json::Value) {
    assert_eq!(*html, json!(false), "the hole card is in the page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervisor_voids_an_exposed_card_from_the_panel() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(150), async {
        let out = artifacts();
        let dir = tempfile::tempdir().expect("tempdir");
        // Seat 1, seat 2, dealer up; 2D exposed on its way to seat 1; 9D dealt during the
        // halt; then seat 2's second card and the hole card 8C.
        let cards = ["9H", "5S", "7C", "2D", "9D", "TS", "8C"];
        let sim = SimShoe::start(SimConfig {
            items: cards
                .iter()
                .map(|c| ShoeItem::Card(c.parse().expect("card")))
                .collect(),
            ..SimConfig::default()
        })
        .expect("pty shoe");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
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

        // The dealer raises the dispute from the panel.
        panel
            .wait_for("document.querySelector('#raise-dispute') !== null", STEP)
            .await;
        raise_from_panel(&panel, "1", "2d was exposed").await;
        panel
            .wait_for("document.querySelector('#dispute') !== null", STEP)
            .await;
        assert_eq!(h.snapshot().state, TableState::Disputed);
        assert!(panel.text("#dispute-reason").await.contains("2d was exposed (seat 1)"));
        // A card dealt during the halt is held, shown as such; the dealer cannot resolve.
        deal(h, &sim).await;
        panel
            .wait_for("document.querySelector('#dispute').innerText.includes('9D')", STEP)
            .await;
        assert!(panel.text("#dispute-held").await.contains("9D"));
        assert_eq!(
            panel.eval("document.querySelector('#propose-resolution') === null").await,
            json!(true),
            "no resolution controls for a dealer"
        );
        panel.screenshot(&out.join("dispute-800x480-dealer.png")).await;

        // The supervisor takes the panel.
        panel.eval("document.querySelector('#logout').click()").await;
        log_in(&panel, "701", "7070").await;
        panel
            .wait_for("document.querySelector('#resolution-op') !== null", STEP)
            .await;
        // Preview stays off until a correction names its card and what it really is.
        panel.tap("[data-op=\"correct\"]").await;
        panel.tap("[data-preset=\"misread by the shoe\"]").await;
        let off = "document.querySelector('#propose-resolution').disabled";
        assert_eq!(panel.eval(off).await, json!(true));
        panel.tap("[data-card-index=\"3\"]").await;
        assert_eq!(panel.eval(off).await, json!(true));
        panel.tap("[data-rank=\"2\"]").await;
        panel.tap("[data-suit=\"H\"]").await;
        assert_eq!(panel.text("#correct-to").await, "2H");
        assert_eq!(panel.eval(off).await, json!(false));
        // Undoing a decision when none was taken is refused: the reason shows on top of
        // the dispute screen (hit-tested), not behind it.
        panel.tap("[data-op=\"undo_decision\"]").await;
        panel.tap("#propose-resolution").await;
        panel
            .wait_for(
                "(() => { const t = document.querySelector('#toast'); if (!t) return false; \
                 const r = t.getBoundingClientRect(); \
                 return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2).closest('#toast') === t; })()",
                STEP,
            )
            .await;
        panel.screenshot(&out.join("dispute-800x480-refused.png")).await;
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
        assert!(panel.text("#picked-card").await.contains("2D (seat 1, hand 1)"));
        assert_eq!(
            panel
                .eval("[...document.querySelectorAll('#card-picture .card.picked')].map((c) => c.dataset.card)")
                .await,
            json!(["2D"]),
            "the picture marks the picked card, and only it"
        );
        panel.screenshot(&out.join("dispute-800x480-card-picked.png")).await;
        keyboard(&panel, "reason", "exposed on camera").await;
        assert_eq!(
            panel.eval("document.querySelector('#resolution-reason').value").await,
            json!("exposed on camera")
        );
        panel.tap("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute-preview') !== null", STEP)
            .await;
        let preview = panel.text("#dispute-preview").await;
        assert!(preview.contains("void") && preview.contains("exposed on camera"), "{preview}");
        assert_eq!(
            panel
                .eval("document.querySelector('#dispute-preview [data-seat=\"1\"]').querySelectorAll('[data-card]').length")
                .await,
            json!(2),
            "seat 1 previewed with 9H and 9D"
        );
        // Nothing changed yet.
        assert_eq!(h.snapshot().state, TableState::Disputed);
        panel.screenshot(&out.join("dispute-800x480-preview.png")).await;
        panel.resize(1280, 800).await;
        panel.screenshot(&out.join("dispute-1280x800-preview.png")).await;
        panel.resize(800, 480).await;
        panel.tap("#confirm-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute') === null", STEP)
            .await;
        let s = h.snapshot();
        assert_eq!(s.state, TableState::Open);
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
        panel
            .tap("[data-op=\"cancel\"]")
            .await;
        panel.tap("[data-preset=\"misdeal: refund all\"]").await;
        panel.tap("#propose-resolution").await;
        panel
            .wait_for("document.querySelector('#preview-expecting') !== null", STEP)
            .await;
        assert!(panel
            .text("#preview-expecting")
            .await
            .contains("every bet refunded"));
        panel.tap("#confirm-resolution").await;
        panel
            .wait_for("document.querySelector('#dispute') === null", STEP)
            .await;
        let s = h.snapshot();
        assert_eq!(s.state, TableState::Open);
        let result = s.last_result.clone().expect("a cancelled result");
        assert!(result.cancelled);
        assert!(result.bets.iter().all(|b| b.returned == b.staked));
        assert_eq!(result.bets.iter().map(|b| b.returned).sum::<i64>(), 200);
        browser.close().await;
        run.stop().await;
    })
    .await
    .expect("in time");
}
