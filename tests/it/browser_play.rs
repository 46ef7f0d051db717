//! Remote play in a real Chromium (Debian's `chromium` over DevTools): two players on
//! phone-size pages (390×844) opened from `croupier player add`'s launch links, and the
//! dealer panel, through a whole round against the demo dealer of the real binary: seats
//! taken, chips picked from the tray and laid on the bet spots by taps, insurance and doubles by taps when the table asks, the
//! results and balances on the pages equal to the wallet and the log; the next window's
//! re-bet (Deluxe: one tap; Ultimate: automatic) shown on the page. Screenshots under
//! `target/browser-artifacts/`.
//!
//! Without chromium the test is skipped locally, and fails under CI (`CI` set).

use crate::cdp;
use crate::common;
use crate::proc;

use cdp::{artifacts, chromium_present, Browser, Page};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tokio::time::{sleep, timeout};

const STEP: Duration = Duration::from_secs(30);

fn add_player(cfg: &Path, name: &str) -> String {
    common::launch_token(cfg, name, "500.00")
}

/// The built-in configuration in `dir`: any free port, a quick demo dealer, a 1 s dispute
/// window, a long betting countdown and decision timer (taps take their time).
fn config(dir: &Path) -> std::path::PathBuf {
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.join("croupier.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", "pace_ms = 100")
        .replace("window_seconds = 5", "window_seconds = 1")
        .replace("betting_seconds = 15", "betting_seconds = 120")
        .replace("decision_seconds = 20", "decision_seconds = 30");
    let cfg = dir.join("table.toml");
    std::fs::write(&cfg, text).expect("config");
    cfg
}

/// The real binary on `config`, and two players' phone-size pages (390×844) opened from
/// their launch links.
struct Table {
    dir: tempfile::TempDir,
    p: proc::Proc,
    base: String,
    browser: Browser,
    a: Page,
    b: Page,
}

async fn two_phones(first: &str, second: &str) -> Table {
    phones("deluxe", first, second).await
}

async fn phones(variant: &str, first: &str, second: &str) -> Table {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(dir.path());
    let text = std::fs::read_to_string(&cfg).expect("config");
    std::fs::write(
        &cfg,
        text.replace("variant = \"deluxe\"", &format!("variant = {variant:?}")),
    )
    .expect("config");
    let (one, two) = (add_player(&cfg, first), add_player(&cfg, second));
    let p = proc::spawn(&cfg, &dir.path().join("log")).await;
    let base = format!("http://{}", p.addr);
    let browser = Browser::launch().await;
    let a = browser
        .page(&format!("{base}/play#t={one}"), 390, 844)
        .await;
    let b = browser
        .page(&format!("{base}/play#t={two}"), 390, 844)
        .await;
    Table {
        dir,
        p,
        base,
        browser,
        a,
        b,
    }
}

/// Checks that `id`'s wallet holds `expected` and that `page` shows it; answers it.
async fn shows_the_wallets_balance(
    pool: &sqlx::SqlitePool,
    page: &Page,
    id: &str,
    expected: i64,
) -> i64 {
    let balance: i64 = sqlx::query_scalar("SELECT balance FROM players WHERE id = ?")
        .bind(id)
        .fetch_one(pool)
        .await
        .expect("balance");
    assert_eq!(balance, expected, "{id}");
    let written = croupier::currency::Currency::euro().format(balance);
    page.wait_for(
        &format!("document.querySelector('#balance').innerText === '{written}'"),
        STEP,
    )
    .await;
    balance
}

/// Taps what the table asks of this player (`prefer` first), if anything; answers
/// whether the page shows the result of `round`.
async fn play_step(page: &Page, round: u64, prefer: &[&str]) -> bool {
    let shown = page
        .eval(&format!(
            "(() => {{ const r = document.querySelector('#result'); return !!r && r.dataset.round === '{round}'; }})()"
        ))
        .await;
    if shown == json!(true) {
        return true;
    }
    for action in prefer.iter().chain(["no_insurance", "stand"].iter()) {
        let sel = format!("#actions button[data-action='{action}']");
        let here = page
            .eval(&format!(
                "(() => {{ const b = document.querySelector(\"{sel}\"); return !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true'; }})()"
            ))
            .await;
        if here == json!(true) {
            page.tap(&sel).await;
            // The answer and the next poll.
            sleep(Duration::from_millis(700)).await;
            break;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_phone_players_and_the_dealer_panel_play_a_round() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(200), async {
        let out = artifacts();
        let Table { dir, p, base, browser, a, b } = two_phones("Alice", "Bob").await;
        let panel = browser.page(&format!("{base}/"), 800, 480).await;
        // The demo dealer's account (a demo start creates it).
        let login = "fetch('/api/login', {method: 'POST', headers: {'content-type': 'application/json'}, \
                     body: JSON.stringify({badge: '101', secret: '1111'})}).then(r => r.status)";
        assert_eq!(panel.eval(login).await, json!(200));
        panel.reload().await;
        // The token left the address bar (kept in the tab).
        a.wait_for("document.querySelector('#balance')", STEP).await;
        assert_eq!(a.eval("location.hash").await, json!(""));
        assert_eq!(a.text("#balance").await, "€500.00");
        a.screenshot(&out.join("play-390x844-join.png")).await;
        // The page re-renders every second, keeping the nodes that did not change: a tap
        // (press, then release) on a node replaced in between would be lost.
        a.eval("window.joinButton = document.querySelector(\"#join button[data-seat='4']\")")
            .await;
        sleep(Duration::from_millis(2200)).await;
        assert_eq!(
            a.eval("window.joinButton.isConnected && window.joinButton === document.querySelector(\"#join button[data-seat='4']\")")
                .await,
            json!(true),
            "the join button outlived two renders"
        );
        a.tap("#join button[data-seat='4']").await;
        b.wait_for("document.querySelector(\"#join button[data-seat='5']\")", STEP).await;
        b.tap("#join button[data-seat='5']").await;
        // Both seated before either bets: a window closes once every seated remote player
        // has bet, so a join still on its way under load would leave Bob to the next round.
        for (page, seat) in [(&a, 4), (&b, 5)] {
            page.wait_for(&format!("window.playState() && window.playState().seat === {seat}"), STEP)
                .await;
        }
        // A chip picked from the tray and laid on the main bet's spot, then the bet, by taps,
        // within the countdown.
        for (page, chip) in [(&a, 0), (&b, 1)] {
            page.wait_for("document.querySelector('#chips .chip')", STEP).await;
            page.tap(&format!("#chips .chip:nth-of-type({})", chip + 1)).await;
            page.tap("[data-target='main']").await;
            page.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place'))", STEP).await;
            page.tap("#place").await;
            page.wait_for("(document.querySelector('#my-bet') || {innerText: ''}).innerText.includes('Bet accepted') || !document.querySelector('#chips')", STEP)
                .await;
        }
        // The round that holds both stakes, as the log has it: read from a page after the
        // window closed, a round over at once (a dealer's blackjack at the demo's pace)
        // could already show the next window's number.
        let db = dir.path().join("croupier.db");
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        let round = staked_round(&pool, &[4, 5], &[&a, &b]).await;
        a.screenshot(&out.join("play-390x844-bet.png")).await;
        // The panel shows both remote seats in the round.
        panel
            .wait_for("document.querySelector(\"#seats [data-seat='4']\") && document.querySelector(\"#seats [data-seat='5']\")", STEP)
            .await;
        panel.screenshot(&out.join("play-panel-800x480.png")).await;
        let mut done = (false, false);
        for _ in 0..400 {
            if !done.0 {
                done.0 = play_step(&a, round, &["insurance", "double"]).await;
            }
            if !done.1 {
                done.1 = play_step(&b, round, &["even_money", "no_insurance"]).await;
            }
            if done == (true, true) {
                break;
            }
            sleep(Duration::from_millis(100)).await;
        }
        if done != (true, true) {
            panic!(
                "both pages show round {round}'s result: {done:?}\nAlice's page: {}\nBob's page: {}",
                report(&a).await,
                report(&b).await
            );
        }
        // Each player's page checks the table's word itself (issue #21): the hole card's
        // seal opened by its reveal, the result's signature, and no alarm.
        for page in [&a, &b] {
            page.wait_for(
                "document.querySelector('#result [data-sig=\"verified\"]') !== null \
                 && document.querySelector('#seal[data-state=\"verified\"]') !== null",
                STEP,
            )
            .await;
            assert_eq!(
                page.eval("document.querySelector('#trust-alarm') === null && window.playTrust.alarms.length === 0")
                    .await,
                json!(true)
            );
        }
        a.screenshot(&out.join("play-390x844-result.png")).await;
        // Once final, the balances on the pages are the wallet's, which are the log's.
        sleep(Duration::from_millis(2500)).await;
        for (page, id, seat) in [(&a, "alice", 4), (&b, "bob", 5)] {
            let (staked, returned): (i64, i64) = sqlx::query_as(
                "SELECT COALESCE(SUM(staked), 0), COALESCE(SUM(returned), 0) FROM settlements WHERE round = ? AND seat = ?",
            )
            .bind(i64::try_from(round).expect("round"))
            .bind(seat)
            .fetch_one(&pool)
            .await
            .expect("settlements");
            assert!(staked > 0, "{id} played round {round}");
            let balance = shows_the_wallets_balance(&pool, page, id, 50_000 - staked + returned).await;
            let state: Value = page.eval("window.playState()").await;
            assert_eq!(state["balance"], balance);
        }
        pool.close().await;
        // Deluxe has no automatic re-bet: in the next window the page offers the round's
        // bet again (Repeat lays it on the spots, Bet places it).
        a.wait_for(
            &format!("(() => {{ const s = window.playState(); return s.betting.open && s.betting.round > {round} && !!document.querySelector('#rebet'); }})()"),
            STEP,
        )
        .await;
        let last: Value = a.eval("window.playState().betting.last_bet").await;
        assert!(last["main"].as_i64() > Some(0), "{last}");
        assert_eq!(a.eval("window.playState().betting.my_bet").await, Value::Null);
        a.tap("#rebet").await;
        a.wait_for(&format!("document.querySelector(\"[data-target='main'] .amount\").innerText === '{}'",
            croupier::currency::Currency::euro().format(last["main"].as_i64().expect("main"))), STEP)
            .await;
        a.tap("#place").await;
        a.wait_for(&format!("window.playState().betting.my_bet === {}", last["main"]), STEP)
            .await;
        assert!(a.text("#my-bet").await.starts_with("Bet accepted: "));
        a.tap("#withdraw").await;
        a.wait_for("!window.playState().betting.my_bet", STEP).await;
        browser.close().await;
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

/// The one round whose bets hold a stake on each of `seats`, once the log has it (the
/// window closed); the pages' state and text if it does not within a minute.
async fn staked_round(pool: &sqlx::SqlitePool, seats: &[i64], pages: &[&Page]) -> u64 {
    let start = std::time::Instant::now();
    loop {
        let mut rounds = Vec::new();
        for seat in seats {
            let round: Option<i64> = sqlx::query_scalar(
                "SELECT MIN(round) FROM bets WHERE seat = ? AND kind = 'main' AND amount > 0",
            )
            .bind(seat)
            .fetch_one(pool)
            .await
            .expect("bets");
            rounds.push(round);
        }
        if let Some(Some(first)) = rounds.first() {
            if rounds.iter().all(|r| *r == Some(*first)) {
                return u64::try_from(*first).expect("round");
            }
        }
        if start.elapsed() > Duration::from_secs(60) {
            let mut shown = String::new();
            for page in pages {
                shown.push_str(&format!("\n{}", report(page).await));
            }
            panic!("seats {seats:?} staked in rounds {rounds:?}, not one round; the pages:{shown}");
        }
        sleep(Duration::from_millis(100)).await;
    }
}

/// Whether the wallet holds `player`'s debit whose transaction id ends in `round_line`
/// (`<round>:<seat>:<line>.<n>:debit`), on the table's own timeline.
async fn debited(db: &std::path::Path, round_line: &str, player: &str) -> bool {
    let tx = common::tx_table(db).await;
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM wallet_ledger WHERE tx_id = ? AND player_id = ? AND kind = 'debit'",
    )
    .bind(format!("{tx}:{round_line}"))
    .bind(player)
    .fetch_one(&pool)
    .await
    .expect("ledger");
    pool.close().await;
    n == 1
}

/// What `page` holds and shows, for a failure's message.
async fn report(page: &Page) -> String {
    let state = page.eval("JSON.stringify(window.playState())").await;
    let text = page.eval("document.body.innerText").await;
    format!("state: {state}; it shows: {text}")
}

/// Whether `js` (an expression) is true on `page` now.
async fn holds(page: &Page, js: &str) -> bool {
    page.eval(js).await == json!(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_player_bets_behind_with_follow_double_and_a_pair_bet() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(300), async {
        let out = artifacts();
        let Table { dir, p, browser, a, b, .. } = two_phones("Ann", "Ben").await;
        a.wait_for("document.querySelector(\"#join button[data-seat='4']\")", STEP).await;
        a.tap("#join button[data-seat='4']").await;
        // Ben takes no seat: he plays behind.
        b.wait_for("document.querySelector('#join-unseated')", STEP).await;
        b.tap("#join-unseated").await;
        let mut followed = None;
        for attempt in 0..4 {
            a.wait_for("document.querySelector('#chips .chip')", STEP).await;
            a.tap("#chips .chip:nth-of-type(2)").await;
            a.tap("[data-target='main']").await;
            a.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place'))", STEP).await;
            a.tap("#place").await;
            a.wait_for("(document.querySelector('#my-bet') || {innerText: ''}).innerText.includes('Bet accepted')", STEP).await;
            let round = a.eval("window.playState().betting.round").await.as_u64().expect("round");
            // Behind Ann's seat: the main bet, a pair bet by the game's name, follow double;
            // each chip laid by tapping its spot.
            b.wait_for("document.querySelector(\"#behind button[data-behind='4']\")", STEP).await;
            b.tap("#chips .chip:nth-of-type(1)").await;
            b.tap("#behind button[data-behind='4']").await;
            b.wait_for("document.querySelector('#follow-double')", STEP).await;
            b.tap("#follow-double").await;
            b.wait_for("document.querySelector(\"[data-target='bside:pair']\")", STEP).await;
            b.tap("[data-target='bside:pair']").await;
            b.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place-behind'))", STEP).await;
            if attempt == 0 {
                b.screenshot(&out.join("play-390x844-behind.png")).await;
            }
            b.tap("#place-behind").await;
            b.wait_for("(document.querySelector('#my-bet') || {innerText: ''}).innerText.includes('follows doubles') || !document.querySelector('#chips')", STEP)
                .await;
            let mut done = (false, false);
            let mut doubled = false;
            for _ in 0..600 {
                if !done.0 {
                    if holds(&a, "!!document.querySelector(\"#actions button[data-action='double']\")").await {
                        doubled = true;
                    }
                    done.0 = play_step(&a, round, &["double"]).await;
                }
                if !done.1 {
                    done.1 = play_step(&b, round, &["no_insurance"]).await;
                }
                if done == (true, true) {
                    break;
                }
                sleep(Duration::from_millis(100)).await;
            }
            if done != (true, true) {
            panic!(
                "both pages show round {round}'s result: {done:?}\nAlice's page: {}\nBob's page: {}",
                report(&a).await,
                report(&b).await
            );
        }
            // Offered is not done: the table's record says whether she doubled (her
            // double's debit). A CI run took a round for a double by the button alone and
            // found no follow debited from Ben, with nothing to say whether Ann had
            // doubled; now a round counts only with her double in the wallet, and a
            // follow missing beside it still fails below.
            if doubled && debited(&dir.path().join("croupier.db"), &format!("{round}:4:double.1:debit"), "ann").await {
                followed = Some(round);
                break;
            }
        }
        let round = followed.expect("Ann doubled within four rounds");
        b.screenshot(&out.join("play-390x844-behind-result.png")).await;
        // Once final, the pages' balances are the wallet's, which are the log's.
        sleep(Duration::from_millis(2500)).await;
        let db = dir.path().join("croupier.db");
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        let r = i64::try_from(round).expect("round");
        let tx = common::tx_table(&db).await;
        let follow: Option<i64> = sqlx::query_scalar(
            "SELECT amount FROM wallet_ledger WHERE tx_id = ? AND player_id = 'ben' AND kind = 'debit'",
        )
        .bind(format!("{tx}:{round}:4:behind-double@ben.1:debit"))
        .fetch_optional(&pool)
        .await
        .expect("ledger");
        let main: i64 = sqlx::query_scalar(
            "SELECT amount FROM wallet_ledger WHERE tx_id = ? AND kind = 'debit'",
        )
        .bind(format!("{tx}:{round}:4:behind-main@ben.1:debit"))
        .fetch_one(&pool)
        .await
        .expect("behind main");
        assert_eq!(follow, Some(main), "the follow is debited from Ben when Ann doubles");
        let pair: i64 = sqlx::query_scalar(
            "SELECT staked FROM settlements WHERE round = ? AND seat = 4 AND player = 'ben' AND kind = 'pair'",
        )
        .bind(r)
        .fetch_one(&pool)
        .await
        .expect("pair settled");
        assert!(pair > 0);
        for (page, id, filter) in [(&a, "ann", "seat = 4 AND player = ''"), (&b, "ben", "player = 'ben'")] {
            let (staked, returned): (i64, i64) = sqlx::query_as(&format!(
                "SELECT COALESCE(SUM(staked), 0), COALESCE(SUM(returned), 0) FROM settlements WHERE {filter}"
            ))
            .fetch_one(&pool)
            .await
            .expect("settlements");
            shows_the_wallets_balance(&pool, page, id, 50_000 - staked + returned).await;
        }
        pool.close().await;
        browser.close().await;
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

/// The only player at the table has bet: the window closes at once; taps what the table
/// asks (no insurance, stand) until the page shows the result of the round that holds the
/// player's stake. That round.
async fn play_alone(a: &Page) -> u64 {
    // The round that holds the player's stake: under load the bet can miss a window whose
    // deadline passed during the taps and go to the next one, while a round of the demo
    // seats alone is in play (seen: the test then waited for that round's result).
    a.wait_for(
        "(() => { const s = window.playState(); if (!s || s.betting.open || !s.view.round.number) return false; \
          return (s.view.round.bets || []).some(b => b.player === s.public_name) || (s.hands || []).length > 0; })()",
        Duration::from_secs(60),
    )
    .await;
    let round = a
        .eval("window.playState().view.round.number")
        .await
        .as_u64()
        .expect("round");
    for _ in 0..900 {
        if play_step(a, round, &[]).await {
            return round;
        }
        sleep(Duration::from_millis(100)).await;
    }
    // What the page and the table show, for the next one to read (seen once under load).
    panic!(
        "the page shows no result for round {round}; its {}",
        report(a).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_player_plays_three_multihand_boxes_with_a_special() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(300), async {
        let out = artifacts();
        // The second player's page stays away from the table.
        let Table { dir, p, browser, a, .. } = phones("multihand", "Mia", "Max").await;
        a.wait_for("document.querySelector('#join-unseated')", STEP).await;
        assert_eq!(a.eval("document.querySelector('#join') === null").await, json!(true), "no seats");
        a.tap("#join-unseated").await;
        a.wait_for("document.querySelector(\"[data-target='box:3']\")", STEP).await;
        a.tap("#chips .chip:nth-of-type(1)").await;
        for n in 1..=3 {
            a.tap(&format!("[data-target='box:{n}']")).await;
        }
        a.tap("[data-target='box:1:21+3']").await;
        a.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place-boxes'))", STEP).await;
        a.screenshot(&out.join("play-390x844-boxes.png")).await;
        a.tap("#place-boxes").await;
        play_alone(&a).await;
        a.screenshot(&out.join("play-390x844-boxes-result.png")).await;
        sleep(Duration::from_millis(2500)).await;
        let pool = croupier::auth::open_pool(&dir.path().join("croupier.db")).await.expect("pool");
        let (staked, returned, boxes): (i64, i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(staked), 0), COALESCE(SUM(returned), 0), COUNT(DISTINCT seat) FROM settlements WHERE player = 'mia'",
        )
        .fetch_one(&pool)
        .await
        .expect("settlements");
        assert_eq!(boxes, 3, "three boxes settled");
        assert!(staked >= 3 * 100 + 100, "{staked}");
        shows_the_wallets_balance(&pool, &a, "mia", 50_000 - staked + returned).await;
        pool.close().await;
        browser.close().await;
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ultimate_phone_players_bet_is_rebet_in_the_next_window() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(300), async {
        let out = artifacts();
        // The second player's page stays away from the table.
        let Table { dir, p, browser, a, .. } = phones("ultimate", "Uma", "Ugo").await;
        a.wait_for("document.querySelector(\"#join button[data-seat='4']\")", STEP).await;
        a.tap("#join button[data-seat='4']").await;
        // €10.00 on the seat and €5.00 on 21+3, by taps.
        a.wait_for("document.querySelector(\"[data-target='side:21+3']\")", STEP).await;
        a.tap("#chips .chip:nth-of-type(2)").await;
        a.tap("[data-target='main']").await;
        a.tap("[data-target='main']").await;
        a.tap("[data-target='side:21+3']").await;
        a.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place'))", STEP).await;
        a.tap("#place").await;
        let round = play_alone(&a).await;
        // The next window: the page shows the same bet on the seat's lines, re-bet for the
        // player without a tap.
        a.wait_for(
            &format!("(() => {{ const s = window.playState(); return s.betting.open && s.betting.round > {round} && !!s.betting.my_rebet; }})()"),
            STEP,
        )
        .await;
        a.wait_for("(document.querySelector('#my-bet') || {innerText: ''}).innerText.includes('(your last bet again)')", STEP)
            .await;
        // The side bet by its name (`side-21-plus-3`), never the engine's id "21+3".
        assert_eq!(a.text("#my-bet").await, "Bet accepted: Main €10.00 · 21 + 3 €5.00 (your last bet again)");
        assert_eq!(a.text("[data-target='main'] .amount").await, "€10.00");
        assert_eq!(a.text("[data-target='side:21+3'] .amount").await, "€5.00");
        a.screenshot(&out.join("play-390x844-rebet.png")).await;
        // Withdrawn by a tap: the stakes come back.
        a.tap("#withdraw").await;
        a.wait_for("window.playState().betting.open && !window.playState().betting.my_bet", STEP)
            .await;
        let pool = croupier::auth::open_pool(&dir.path().join("croupier.db")).await.expect("pool");
        let (staked, returned): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(staked), 0), COALESCE(SUM(returned), 0) FROM settlements WHERE seat = 4 AND player = ''",
        )
        .fetch_one(&pool)
        .await
        .expect("settlements");
        assert_eq!(staked, 1500, "round {round}'s bet");
        shows_the_wallets_balance(&pool, &a, "uma", 50_000 - staked + returned).await;
        pool.close().await;
        browser.close().await;
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
