#![allow(dead_code)] // each player-page test uses its part
//! What the player's page tests share (`tests/browser_play_*.rs`): the real binary on the
//! built-in demo table with remote players added by `croupier player add`, their pages in
//! one Chromium, the phone and desktop sizes the page must fit, the fit check at each size
//! (`support/fit.rs`: every control on screen, uncovered, overlapping none; no box
//! overflowing; text ≥ 14 px; axe-core with no violation of impact moderate or worse), and
//! the table's own record (the SQLite database) to check what the pages say against.

use super::cdp::{artifacts, Browser, Page};
use super::common;
use super::fit;
use super::proc;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one step may take (a render, an answer, the demo dealer's next move).
pub const STEP: Duration = Duration::from_secs(30);

/// Upright phones: the smallest, the common one, the largest.
pub const PORTRAIT: [(u32, u32); 3] = [(360, 640), (390, 844), (430, 932)];
/// The same phones on their side.
pub const LANDSCAPE: [(u32, u32); 3] = [(640, 360), (844, 390), (932, 430)];
/// A desktop browser.
pub const DESKTOP: (u32, u32) = (1280, 800);
/// Alice's phone, upright, in the tests with two players.
pub const ALICE: (u32, u32) = (390, 844);
/// Bob's phone, on its side.
pub const BOB: (u32, u32) = (844, 390);

/// The demo table running in the real binary, and the players' pages.
pub struct Table {
    /// The table's directory (its database, configuration, log).
    pub dir: tempfile::TempDir,
    /// The configuration file.
    pub cfg: PathBuf,
    /// The running binary.
    pub p: Option<proc::Proc>,
    /// `http://ADDR`.
    pub base: String,
    /// The browser.
    pub browser: Browser,
    /// Each player's page, in the order named.
    pub pages: Vec<Page>,
    /// Each player's id (`croupier player add`'s: the name in lower case).
    pub ids: Vec<String>,
}

/// The demo table with `variant`, a long betting countdown, `decision_seconds`, a 1 s
/// dispute window and `edits` on top; `players` added with €500.00 each, each page opened
/// from its launch link at its size.
pub async fn start(
    variant: &str,
    decision_seconds: u32,
    edits: &[(&str, &str)],
    players: &[(&str, (u32, u32))],
) -> Table {
    let dir = tempfile::tempdir().expect("tempdir");
    let decision = format!("decision_seconds = {decision_seconds}");
    let variant = format!("variant = {variant:?}");
    let mut all = vec![
        ("variant = \"deluxe\"", variant.as_str()),
        ("pace_ms = 400", "pace_ms = 100"),
        ("window_seconds = 5", "window_seconds = 1"),
        ("betting_seconds = 15", "betting_seconds = 90"),
        ("decision_seconds = 20", decision.as_str()),
    ];
    all.extend_from_slice(edits);
    let cfg = common::demo_config_file(dir.path(), &all);
    open(dir, cfg, players).await
}

/// A table of `variant` without the demo dealer, dealt by the test from a simulated shoe
/// (`common::no_demo_table`: a `betting` seconds countdown, a `decision` seconds timer),
/// with `players` as [`start`] has them: the table and its shoe.
pub async fn start_dealt(
    variant: &str,
    betting: u64,
    decision: u64,
    players: &[(&str, (u32, u32))],
) -> (Table, croupier_drivers::sim::SimShoe) {
    let (dir, sim, cfg) = common::no_demo_table(variant, betting, decision);
    (open(dir, cfg, players).await, sim)
}

/// `players` added to the table configured at `cfg` with €500.00 each, the binary started,
/// each page opened from its launch link at its size.
async fn open(dir: tempfile::TempDir, cfg: PathBuf, players: &[(&str, (u32, u32))]) -> Table {
    let tokens: Vec<String> = players
        .iter()
        .map(|(name, _)| common::launch_token(&cfg, name, "500.00"))
        .collect();
    let p = proc::spawn(&cfg, &dir.path().join("log")).await;
    let base = format!("http://{}", p.addr);
    let browser = Browser::launch().await;
    let mut pages = Vec::new();
    for ((_, (w, h)), token) in players.iter().zip(&tokens) {
        pages.push(
            browser
                .page(&format!("{base}/play#t={token}"), *w, *h)
                .await,
        );
    }
    Table {
        dir,
        cfg,
        p: Some(p),
        base,
        browser,
        pages,
        ids: players.iter().map(|(n, _)| n.to_lowercase()).collect(),
    }
}

impl Table {
    /// The table's database (read beside the running service, as an auditor would).
    pub async fn pool(&self) -> sqlx::SqlitePool {
        croupier::auth::open_pool(&self.dir.path().join("croupier.db"))
            .await
            .expect("pool")
    }

    /// The running service.
    pub fn proc(&self) -> &proc::Proc {
        self.p.as_ref().expect("running")
    }
}

/// Fails on any of `problems`; then stops the browser and the service, which must exit
/// cleanly.
pub async fn finish(t: Table, problems: &[String]) {
    assert!(problems.is_empty(), "{problems:#?}");
    let Table { p, browser, .. } = t;
    browser.close().await;
    assert!(p.expect("running").terminate(), "clean stop");
}

/// Opens betting (a round settled a moment ago may still be confirming: retried).
pub async fn open_betting(staff: &proc::Proc) {
    for _ in 0..100 {
        let (status, _) = staff.post("/api/betting/open", "").await;
        if status == 200 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("betting did not open");
}

/// Whether `js` is true on `page` now.
pub async fn holds(page: &Page, js: &str) -> bool {
    page.eval(js).await == json!(true)
}

/// The page's last state from the server (`window.playState()`).
pub async fn state(page: &Page) -> Value {
    page.eval("window.playState()").await
}

/// Takes a free seat by tap and waits until the table has it.
pub async fn sit(page: &Page, seat: u8) {
    let sel = format!("#join button[data-seat='{seat}']");
    page.wait_for(
        &format!(
            "(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector(\"{sel}\"))"
        ),
        STEP,
    )
    .await;
    page.tap(&sel).await;
    page.wait_for(
        &format!("window.playState() && window.playState().seat === {seat}"),
        STEP,
    )
    .await;
}

/// Picks chip `chip` (1-based) from the tray and lays it on each spot in `spots`, by taps.
pub async fn lay(page: &Page, chip: usize, spots: &[&str]) {
    page.wait_for("document.querySelector('#chips .chip')", STEP)
        .await;
    page.tap_in_view(&format!("#chips .chip:nth-of-type({chip})"))
        .await;
    for s in spots {
        page.tap_in_view(&format!("[data-target='{s}']")).await;
    }
}

/// Places what is laid on the seat (`#place`) and waits for the page to say it was
/// accepted; answers the round the bet is for.
pub async fn place(page: &Page) -> u64 {
    page.wait_for("(b => !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true')(document.querySelector('#place'))", STEP)
        .await;
    // While bets are open the view still holds the round before.
    let before = page
        .eval("window.playState().view.round.number")
        .await
        .as_u64()
        .unwrap_or(0);
    page.tap_in_view("#place").await;
    page.wait_for(
        "(document.querySelector('#my-bet') || {innerText: ''}).innerText.includes('Bet accepted') || !window.playState().betting.open",
        STEP,
    )
    .await;
    // The round the bet is for: the window's, or, once it closed, the view's new round —
    // which a loaded table may open a moment after the window closes.
    let round = "window.playState().betting.round || window.playState().view.round.number";
    page.wait_for(&format!("({round}) > {before}"), STEP).await;
    page.eval(round).await.as_u64().expect("round")
}

/// Taps what the table asks of this player (`prefer` first, else no insurance, stand) if
/// anything; answers whether the page shows `round`'s result. A decision never shares the
/// dock with an earlier round's result (it took the buttons' room at 640×360).
pub async fn step(page: &Page, round: u64, prefer: &[&str]) -> bool {
    let stale = page
        .eval(
            "(() => { const r = document.querySelector('#result'); \
             return !!document.querySelector('#actions') && !!r \
               && r.dataset.round !== String(window.playState().view.round.number) ? r.dataset.round : null; })()",
        )
        .await;
    assert!(
        stale.is_null(),
        "a decision in round {round} beside round {stale}'s result"
    );
    if holds(
        page,
        &format!("(() => {{ const r = document.querySelector('#result'); return !!r && r.dataset.round === '{round}'; }})()"),
    )
    .await
    {
        return true;
    }
    for action in prefer.iter().chain(["no_insurance", "stand"].iter()) {
        let sel = format!("#actions button[data-action='{action}']");
        if holds(
            page,
            &format!("(() => {{ const b = document.querySelector(\"{sel}\"); return !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true'; }})()"),
        )
        .await
        {
            page.tap(&sel).await;
            tokio::time::sleep(Duration::from_millis(600)).await;
            break;
        }
    }
    false
}

/// [`fits`] at each of `sizes`, and `wanted` on screen and uncovered at each (the page
/// left at `back`).
pub async fn sized(
    page: &Page,
    name: &str,
    sizes: &[(u32, u32)],
    back: (u32, u32),
    wanted: &[&str],
) -> Vec<String> {
    sized_while(page, name, sizes, back, wanted, "true").await.0
}

/// [`sized`] while `state` (a script) holds on the page: a size's problems count only if
/// the page still held `state` once they were measured. A turn's timer can
/// run out while a loaded machine measures (seen: four sizes of a turn outlasted its 20 s),
/// and what the page shows after it is not the turn. Returns the problems and the sizes
/// left to measure at the next such turn.
pub async fn sized_while(
    page: &Page,
    name: &str,
    sizes: &[(u32, u32)],
    back: (u32, u32),
    wanted: &[&str],
    state: &str,
) -> (Vec<String>, Vec<(u32, u32)>) {
    let mut problems = Vec::new();
    for (i, &(w, h)) in sizes.iter().enumerate() {
        let mut found = fits(page, name, &[(w, h)], back).await;
        page.resize(w, h).await;
        for p in on_screen(page, wanted).await {
            found.push(format!("{name} {w}x{h}: {p}"));
        }
        page.resize(back.0, back.1).await;
        if !holds(page, state).await {
            return (problems, sizes[i..].to_vec());
        }
        problems.extend(found);
    }
    (problems, Vec::new())
}

/// The fit check at each of `sizes` (the page left at `back`): a screenshot each,
/// `NAME-WxH.png` in the artifacts, and every problem found.
pub async fn fits(page: &Page, name: &str, sizes: &[(u32, u32)], back: (u32, u32)) -> Vec<String> {
    let mut problems = Vec::new();
    for (w, h) in sizes {
        page.resize(*w, *h).await;
        // One render at the new size (the page re-renders every second; a resize needs none,
        // but the fit is measured on what a player sees after it).
        tokio::time::sleep(Duration::from_millis(150)).await;
        problems
            .extend(fit::check(page, &format!("{name}-{w}x{h}"), 14, true, &fit::MODERATE).await);
    }
    page.resize(back.0, back.1).await;
    problems
}

/// For a sheet whose body scrolls (the rules, the history): at each of `sizes` a
/// screenshot, then `layout.js`'s checks for pages that scroll inside `root` (no control
/// outside the viewport across or clipped, none overlapping, no box overflowing across)
/// and axe-core; the page left at `back`.
pub async fn scroll_fits(
    page: &Page,
    name: &str,
    root: &str,
    sizes: &[(u32, u32)],
    back: (u32, u32),
) -> Vec<String> {
    let mut problems = Vec::new();
    for (w, h) in sizes {
        page.resize(*w, *h).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let shot = format!("{name}-{w}x{h}");
        page.screenshot(&artifacts().join(format!("{shot}.png")))
            .await;
        let found: Vec<String> =
            serde_json::from_value(page.control_problems(root).await).expect("a list");
        let axe: Vec<String> = serde_json::from_value(page.axe_violations().await).expect("a list");
        problems.extend(
            found
                .into_iter()
                .chain(axe.into_iter().map(|v| format!("axe: {v}")))
                .map(|p| format!("{shot}: {p}")),
        );
    }
    page.resize(back.0, back.1).await;
    problems
}

/// Every size the page must fit.
pub fn all_sizes() -> Vec<(u32, u32)> {
    PORTRAIT
        .iter()
        .chain(LANDSCAPE.iter())
        .copied()
        .chain([DESKTOP])
        .collect()
}

/// At each of `sizes` (the page left at `back`), every turn's buttons within the viewport
/// (a dock that must scroll to show a box's buttons hides a decision): a problem for each
/// size where fewer than the page's turns show.
pub async fn every_turn_on_screen(
    page: &Page,
    name: &str,
    sizes: &[(u32, u32)],
    back: (u32, u32),
) -> Vec<String> {
    let n = page
        .eval("window.playState().turns.length")
        .await
        .as_u64()
        .expect("turns");
    let mut problems = Vec::new();
    for (w, h) in sizes {
        page.resize(*w, *h).await;
        let shown = page
            .eval("[...document.querySelectorAll('.pp-actions')].filter(e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }).length")
            .await
            .as_u64()
            .expect("count");
        if shown != n {
            problems.push(format!(
                "{name} {w}x{h}: {shown} of {n} turns' buttons on screen"
            ));
        }
    }
    page.resize(back.0, back.1).await;
    problems
}

/// The selectors `ids` are each on `page`, on screen and not covered (a control that
/// matters now).
pub async fn on_screen(page: &Page, ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        let s = serde_json::to_string(id).expect("json");
        let seen = page
            .eval(&format!(
                "(() => {{ const e = document.querySelector({s}); if (!e) return 'missing'; \
                 const r = e.getBoundingClientRect(); \
                 if (r.width === 0 || r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) \
                   return 'off screen: ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(','); \
                 const h = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); \
                 return h && (h === e || e.contains(h) || h.contains(e)) ? 'ok' : 'covered by ' + (h ? h.className : 'nothing'); }})()"
            ))
            .await;
        if seen != json!("ok") {
            out.push(format!("{id}: {seen}"));
        }
    }
    out
}

/// A copy of the artifact `name`.png as `docs/screenshots/play-NAME.png` when
/// `CROUPIER_DOCS_SHOTS` is set (how the documentation's pictures are made).
pub fn to_docs(name: &str) {
    if std::env::var_os("CROUPIER_DOCS_SHOTS").is_none() {
        return;
    }
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
    std::fs::create_dir_all(&docs).expect("docs/screenshots");
    std::fs::copy(
        artifacts().join(format!("{name}.png")),
        docs.join(format!("play-{name}.png")),
    )
    .expect("copy the screenshot");
}

/// A screenshot of `page` as it stands, `NAME.png` in the artifacts (and the docs).
pub async fn shot(page: &Page, name: &str) {
    page.screenshot(&artifacts().join(format!("{name}.png")))
        .await;
    to_docs(name);
}

/// Each settled line of `player`'s at (`round`, `seat`) in the table's record: seats'
/// own lines (`player` ''), or a player's behind a seat or on a box.
pub async fn lines(
    pool: &sqlx::SqlitePool,
    round: u64,
    seat: u8,
    player: &str,
) -> Vec<(String, i64, i64)> {
    sqlx::query_as(
        "SELECT kind, staked, returned FROM settlements WHERE round = ? AND seat = ? AND player = ? ORDER BY line",
    )
    .bind(i64::try_from(round).expect("round"))
    .bind(seat)
    .bind(player)
    .fetch_all(pool)
    .await
    .expect("settlements")
}

/// What player `id` staked on `round`: the wallet's debits, committed or settled.
pub async fn staked(pool: &sqlx::SqlitePool, id: &str, round: u64) -> i64 {
    sqlx::query_scalar(
        "SELECT COALESCE(SUM(amount), 0) FROM wallet_journal WHERE player_id = ? AND round = ? AND state IN ('committed', 'settled')",
    )
    .bind(id)
    .bind(i64::try_from(round).expect("round"))
    .fetch_one(pool)
    .await
    .expect("journal")
}

/// The player's balance in the wallet.
pub async fn balance(pool: &sqlx::SqlitePool, id: &str) -> i64 {
    sqlx::query_scalar("SELECT balance FROM players WHERE id = ?")
        .bind(id)
        .fetch_one(pool)
        .await
        .expect("balance")
}

/// `amount` minor units as the page writes them (the demo table's euro).
pub fn euro(amount: i64) -> String {
    croupier::currency::Currency::euro().format(amount)
}

/// `amount` (≥ 0) minor units of the euro as German writes them: `1.234,50 €`.
pub fn euro_de(amount: i64) -> String {
    let whole = (amount / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(c);
    }
    format!("{grouped},{:02}\u{a0}€", amount % 100)
}

/// A net amount as the page writes it: `+€5.00`, `−€35.00`, `€0.00`.
pub fn signed(amount: i64) -> String {
    match amount {
        a if a > 0 => format!("+{}", euro(a)),
        a if a < 0 => format!("\u{2212}{}", euro(-a)),
        _ => euro(0),
    }
}
