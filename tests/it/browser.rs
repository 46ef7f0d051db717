//! The dealer panel and the remote players' page in a real Chromium (Debian's `chromium`,
//! driven over the DevTools protocol): a full Deluxe round on the service with the
//! simulated shoe on a PTY read by the real serial driver — bets through the API, cards
//! out of the PTY shoe, decisions by tapping the panel — checked step by step; the hole
//! card never reaches the public page before the reveal; the panel reconnects and resyncs
//! after a network drop; the status bar says when the system clock is not synchronised.
//! Screenshots at 800×480 and 1280×800 are saved under
//! `target/browser-artifacts/` (or `$CROUPIER_ARTIFACTS`).
//!
//! Without chromium the test is skipped locally, and fails under CI (`CI` set).

use crate::cdp;
use crate::common;
use crate::running;

use cdp::{artifacts, chromium_present, Browser, Page};
use croupier::table::{TableHandle, TableState};
use croupier::web::client::request_with;
use croupier_drivers::sim::SimShoe;
use croupier_drivers::ShoeItem;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

/// A TCP proxy in front of the service that can drop every connection and refuse new
/// ones (a network drop), then come back on the same port.
struct Proxy {
    port: u16,
    target: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let port = listener.local_addr().expect("addr").port();
        let mut p = Proxy {
            port,
            target,
            task: None,
        };
        p.serve(listener);
        p
    }

    fn serve(&mut self, listener: TcpListener) {
        let target = self.target;
        self.task = Some(tokio::spawn(async move {
            let mut conns: Vec<JoinHandle<()>> = Vec::new();
            // Connection tasks die with this one (abort on drop of the set).
            struct Abort(Vec<JoinHandle<()>>);
            impl Drop for Abort {
                fn drop(&mut self) {
                    for c in &self.0 {
                        c.abort();
                    }
                }
            }
            let mut guard = Abort(Vec::new());
            while let Ok((mut inbound, _)) = listener.accept().await {
                let c = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                guard.0.push(c);
                conns.clear();
            }
        }));
    }

    /// Drops every connection and stops listening.
    async fn cut(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
    }

    /// Listens again on the same port.
    async fn restore(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("rebind the proxy's port");
        self.serve(listener);
    }
}

/// The seat terminals' session (a dealer account), for the API calls below.
static SESSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();

async fn api(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let cookie = SESSION.get().expect("logged in").as_str();
    let reply = request_with(
        &addr.to_string(),
        method,
        path,
        body,
        &[("Cookie", cookie)],
        STEP,
    )
    .await
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (reply.status, reply.body)
}

/// Types `text` on the login screen's keypad into `field` (taps, as a dealer would).
async fn keypad(panel: &Page, field: &str, text: &str) {
    panel.tap(&format!("#login-{field}")).await;
    for key in text.chars() {
        panel.tap(&format!("[data-key=\"{key}\"]")).await;
    }
}

/// Deals one card out of the PTY shoe and waits until the table has taken it.
async fn deal(handle: &TableHandle, sim: &SimShoe) {
    let mut watch = handle.watch();
    let before = watch.borrow().seq;
    assert_eq!(sim.deal(1).await.expect("sim deals").len(), 1);
    let s = timeout(STEP, watch.wait_for(|s| s.seq > before))
        .await
        .expect("the card is taken")
        .expect("table running")
        .clone();
    assert_eq!(s.state, TableState::Open, "{:?}", s.alarm);
}

/// Waits until the panel shows table seq `seq` or later.
async fn synced(page: &Page, handle: &TableHandle) {
    let seq = handle.snapshot().seq;
    page.wait_for(
        &format!("window.lastSeq !== undefined && window.lastSeq >= {seq}"),
        STEP,
    )
    .await;
}

/// Taps a decision button and waits until the table has recorded the decision.
async fn decide(panel: &Page, handle: &TableHandle, action: &str) {
    let mut watch = handle.watch();
    let before = watch.borrow().seq;
    panel.tap(&format!("[data-action=\"{action}\"]")).await;
    timeout(STEP, watch.wait_for(|s| s.seq > before))
        .await
        .unwrap_or_else(|_| panic!("the {action} tap is not recorded"))
        .expect("table running");
    synced(panel, handle).await;
}

async fn next_is(panel: &Page, handle: &TableHandle, to: &str) {
    synced(panel, handle).await;
    assert_eq!(
        panel.text("#next").await,
        format!("Next card \u{2192} {to}")
    );
}

async fn hole_hidden(page: &Page) {
    page.wait_for(
        "document.querySelectorAll('#dealer .card').length === 2 && \
         document.querySelectorAll('#dealer .card.back').length === 1",
        STEP,
    )
    .await;
    assert_eq!(
        page.eval("document.body.innerHTML.includes('7C')").await,
        serde_json::json!(false),
        "the hole card is in the page"
    );
}

/// The panel's status bar shows "clock not synchronised" exactly when `/readyz` says so:
/// first as this machine's clock really is, then with `/readyz` answered by a stub in the
/// page for the other state, then back to the real answer.
async fn clock_badge(panel: &Page, addr: SocketAddr) {
    let (_, body) = api(addr, "GET", "/readyz", None).await;
    let ready: serde_json::Value = serde_json::from_str(&body).expect("readyz JSON");
    let synced = ready["clock"]["synchronised"]
        .as_bool()
        .expect("clock.synchronised");
    let shown = |synced: bool| {
        if synced {
            "window.clockStatus && window.clockStatus.synchronised && !document.querySelector('#clock')".to_string()
        } else {
            "window.clockStatus && !window.clockStatus.synchronised && document.querySelector('#clock.unsync') && document.querySelector('#clock').innerText === 'clock not synchronised'".to_string()
        }
    };
    panel.wait_for(&shown(synced), STEP).await;
    let stub = format!(
        "(async () => {{ const real = window.fetch; \
         window.fetch = async (u, o) => String(u).endsWith('/readyz') \
           ? new Response(JSON.stringify({{ready: true, reasons: [], clock: {{synchronised: {}, source: 'adjtimex', state: 'ok'}}}}), \
               {{status: 200, headers: {{'content-type': 'application/json'}}}}) \
           : real(u, o); \
         try {{ await window.pollClock(); }} finally {{ window.fetch = real; }} return true; }})()",
        !synced
    );
    assert_eq!(panel.eval(&stub).await, serde_json::json!(true));
    panel.wait_for(&shown(!synced), STEP).await;
    assert_eq!(
        panel.eval("window.pollClock().then(() => true)").await,
        serde_json::json!(true)
    );
    panel.wait_for(&shown(synced), STEP).await;
}

/// The panel says when the broker publisher stopped (`/readyz` `publish.stopped`, issue
/// #31): a banner with the reason while it is so (a stub in the page answers `/readyz`
/// as a restored table's does), none once `/readyz` says nothing of it.
async fn publish_banner(panel: &Page) {
    let stub = "(async () => { const real = window.fetch; \
         window.fetch = async (u, o) => String(u).endsWith('/readyz') \
           ? new Response(JSON.stringify({ready: false, reasons: ['publish_stopped'], \
               clock: window.clockStatus, publish: {state: 'failed', stopped: 'timeline_fork: the broker holds another history of table table-1'}}), \
               {status: 503, headers: {'content-type': 'application/json'}}) \
           : real(u, o); \
         try { await window.pollClock(); } finally { window.fetch = real; } return true; })()";
    assert!(
        panel
            .eval("!document.querySelector('#publish-stopped')")
            .await
            == serde_json::json!(true)
    );
    assert_eq!(panel.eval(stub).await, serde_json::json!(true));
    panel
        .wait_for(
            "document.querySelector('#publish-stopped') && document.querySelector('#publish-stopped').innerText.includes('timeline_fork') && document.querySelector('#publish-stopped').innerText.includes('Call the operator')",
            STEP,
        )
        .await;
    assert_eq!(
        panel.eval("window.pollClock().then(() => true)").await,
        serde_json::json!(true)
    );
    panel
        .wait_for("!document.querySelector('#publish-stopped')", STEP)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deluxe_round_from_the_panel_with_the_hole_card_hidden_and_a_reconnect() {
    if !chromium_present() {
        return;
    }
    timeout(Duration::from_secs(150), async {
        let out = artifacts();
        let dir = tempfile::tempdir().expect("tempdir");
        // Deal order (ascending seats): 1, 3, dealer, 1, 3, dealer (the hole card, 7C),
        // then 9C for seat 1's double, 3C and 2H for seat 3's split hands, 9D a hit.
        let cards = ["5H", "8S", "KD", "6D", "8D", "7C", "9C", "3C", "2H", "9D"];
        let sim = common::dealing(&cards);
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        running::add_users(&config.store.path).await;
        let pool = croupier::auth::open_pool(&config.store.path)
            .await
            .expect("pool");
        croupier::auth::accounts::add(
            &pool,
            "test",
            "501",
            "Browser dealer",
            croupier::auth::Role::Dealer,
            "4321",
        )
        .await
        .expect("the panel's dealer");
        pool.close().await;
        let run = running::start(config).await;
        let _ = SESSION.set(running::login_as(run.addr, croupier::auth::Role::Dealer).await);
        let h = &run.handle;
        let mut proxy = Proxy::start(run.addr).await;
        let browser = Browser::launch().await;
        let panel = browser
            .page(&format!("http://127.0.0.1:{}/", proxy.port), 800, 480)
            .await;
        let public = browser
            .page(&format!("http://{}/public", run.addr), 1280, 800)
            .await;
        // No session: the panel shows its login screen (the public page needs none).
        public.wait_for("document.querySelector('#conn.live')", STEP).await;
        panel.wait_for("document.querySelector('#login')", STEP).await;
        assert_eq!(
            panel.eval("document.querySelector('#conn') === null && !document.body.innerHTML.includes('Seat 1')").await,
            serde_json::json!(true),
            "nothing of the table before a login"
        );
        panel.screenshot(&out.join("panel-800x480-login.png")).await;
        // A wrong PIN is refused with a message; the right one opens the panel.
        keypad(&panel, "badge", "501").await;
        keypad(&panel, "secret", "9999").await;
        panel.tap("#login-ok").await;
        panel
            .wait_for("document.querySelector('#login-error').innerText.includes('not accepted')", STEP)
            .await;
        panel.screenshot(&out.join("panel-800x480-login-refused.png")).await;
        keypad(&panel, "secret", "4321").await;
        panel.tap("#login-ok").await;
        panel.wait_for("document.querySelector('#conn.live')", STEP).await;
        assert_eq!(panel.text("#user").await, "Browser dealer \u{b7} dealer");
        clock_badge(&panel, run.addr).await;
        publish_banner(&panel).await;

        // Betting: opened by a tap, bets from the API (limits checked), closed by a tap.
        panel.tap("#open-betting").await;
        panel.wait_for("document.querySelector('#close-betting')", STEP).await;
        let (status, body) = api(run.addr, "POST", "/api/bets", Some(r#"{"seat": 1, "main": 5}"#)).await;
        assert_eq!(status, 422, "{body}");
        assert!(body.contains("\"invalid_bet\""), "{body}");
        for bet in [r#"{"seat": 1, "main": 100}"#, r#"{"seat": 3, "main": 200}"#] {
            let (status, body) = api(run.addr, "POST", "/api/bets", Some(bet)).await;
            assert_eq!(status, 200, "{body}");
        }
        panel
            .wait_for("document.querySelector('.seat[data-seat=\"3\"] .bet').innerText === 'bet €2.00'", STEP)
            .await;
        public
            .wait_for("document.querySelector('.seat[data-seat=\"1\"] .bet').innerText === 'bet €1.00'", STEP)
            .await;
        panel.screenshot(&out.join("panel-800x480-betting.png")).await;
        panel.tap("#close-betting").await;
        panel.wait_for("!document.querySelector('#close-betting')", STEP).await;
        assert_eq!(h.snapshot().round.number, 1);

        // The initial deal, the indicator checked before each card.
        for to in ["seat 1, hand 1", "seat 3, hand 1", "dealer", "seat 1, hand 1", "seat 3, hand 1", "dealer"] {
            next_is(&panel, h, to).await;
            deal(h, &sim).await;
        }
        synced(&panel, h).await;
        hole_hidden(&panel).await;
        hole_hidden(&public).await;
        assert_eq!(panel.text("#peek").await, "dealer blackjack: no");
        public.wait_for("document.querySelector('#peek')", STEP).await;
        // The public page says it in the player's page's words (`play-en.ftl`).
        assert_eq!(public.text("#peek").await, "no dealer blackjack");
        assert_eq!(panel.text("#dealer-total").await, "10 + ?");

        // Seat 1: 5H 6D = 11. Only the legal decisions are enabled.
        next_is(&panel, h, "seat 1, hand 1").await;
        let enabled = |a: &str| format!("!document.querySelector('[data-action=\"{a}\"]').disabled");
        for (action, legal) in [("stand", true), ("double", true), ("split", false), ("surrender", false)] {
            assert_eq!(panel.eval(&enabled(action)).await, serde_json::json!(legal), "{action}");
        }
        assert_eq!(
            panel.text(".seat[data-seat=\"1\"] .hand .total").await,
            "11"
        );
        panel.screenshot(&out.join("panel-800x480-decision.png")).await;
        panel.resize(1280, 800).await;
        panel.screenshot(&out.join("panel-1280x800-decision.png")).await;
        public.screenshot(&out.join("public-1280x800-hole-hidden.png")).await;
        panel.resize(800, 480).await;
        decide(&panel, h, "double").await;
        next_is(&panel, h, "seat 1, hand 1").await; // the double's card
        deal(h, &sim).await; // 9C: 20, stands after the double's card

        // Seat 3: 8S 8D, split by a tap; hand 1 takes 3C and stands; hand 2 takes 2H, hits 9D.
        next_is(&panel, h, "seat 3, hand 1").await;
        assert_eq!(panel.eval(&enabled("split")).await, serde_json::json!(true));
        decide(&panel, h, "split").await;
        panel
            .wait_for("document.querySelectorAll('.seat[data-seat=\"3\"] .hand').length === 2", STEP)
            .await;
        next_is(&panel, h, "seat 3, hand 1").await;
        deal(h, &sim).await; // 3C
        next_is(&panel, h, "seat 3, hand 1").await;
        decide(&panel, h, "stand").await;
        next_is(&panel, h, "seat 3, hand 2").await;
        deal(h, &sim).await; // 2H
        next_is(&panel, h, "seat 3, hand 2").await;
        assert_eq!(panel.text(".seat[data-seat=\"3\"] .hand[data-hand=\"1\"] .total").await, "10");
        deal(h, &sim).await; // 9D, a hit
        synced(&panel, h).await;
        hole_hidden(&public).await;
        assert_eq!(
            public
                .eval("JSON.stringify(window.publicLog).includes('7C') || JSON.stringify(window.publicLog).includes('expect')")
                .await,
            serde_json::json!(false),
            "the public stream carried the hole card or the expectation before the reveal"
        );
        decide(&panel, h, "stand").await;

        // Dealer KD 7C = 17 stands: settled. The hole card is shown, outcomes badged.
        let mut watch = h.watch();
        timeout(STEP, watch.wait_for(|s| s.round.settled))
            .await
            .expect("the round settles")
            .expect("table running");
        synced(&panel, h).await;
        for page in [&panel, &public] {
            page.wait_for("document.querySelector('#dealer [data-card=\"7C\"]')", STEP).await;
            page.wait_for("document.querySelectorAll('[data-outcome]').length === 3", STEP).await;
            let outcomes = page
                .eval("[...document.querySelectorAll('[data-outcome]')].map(e => e.dataset.outcome).join(',')")
                .await;
            assert_eq!(outcomes, serde_json::json!("win,lose,win"));
        }
        assert_eq!(panel.text("#dealer-total").await, "17");
        public.wait_for("document.querySelector('.result[data-round=\"1\"]')", STEP).await;
        let result = h.snapshot().last_result.clone().expect("result");
        let returned: Vec<i64> = result.hands.iter().map(|x| x.returned).collect();
        assert_eq!(returned, vec![400, 0, 400]);
        panel.screenshot(&out.join("panel-800x480-settled.png")).await;
        panel.resize(1280, 800).await;
        panel.screenshot(&out.join("panel-1280x800-settled.png")).await;
        public.screenshot(&out.join("public-1280x800-settled.png")).await;
        panel.resize(800, 480).await;

        // A network drop: the panel says so, reconnects by itself and resyncs.
        proxy.cut().await;
        panel.wait_for("document.querySelector('#conn.reconnecting, #conn.connecting')", STEP).await;
        let (status, body) = api(run.addr, "POST", "/api/betting/open", None).await;
        assert_eq!(status, 200, "{body}");
        panel.screenshot(&out.join("panel-800x480-reconnecting.png")).await;
        // A stale screen cannot be acted on: the overlay is up and every control is off.
        panel.wait_for("document.querySelector('#offline')", STEP).await;
        assert_eq!(
            panel
                .eval("[...document.querySelectorAll('#app button')].filter(b => !b.disabled).length")
                .await,
            serde_json::json!(0)
        );
        proxy.restore().await;
        panel.wait_for("document.querySelector('#conn.live')", Duration::from_secs(15)).await;
        panel.wait_for("document.querySelector('#close-betting')", STEP).await;
        synced(&panel, h).await;

        // An alarm fills the screen with the reason and what to do.
        // (a card out of the shoe while bets are being taken)
        sim.load(vec![ShoeItem::Card("4S".parse().expect("card"))])
            .await
            .expect("load");
        sim.deal(1).await.expect("deal");
        panel.wait_for("document.querySelector('#alarm')", STEP).await;
        assert!(panel.text("#alarm").await.contains("What to do"));
        panel.screenshot(&out.join("panel-800x480-alarm.png")).await;
        panel.resize(1280, 800).await;
        panel.screenshot(&out.join("panel-1280x800-alarm.png")).await;

        // Logging out (from the alarm's sheet, by touch: the header is under it) brings the
        // login screen back, and the session is gone server-side.
        panel.resize(800, 480).await;
        panel.tap_in_view("#sheet-logout").await;
        panel.wait_for("document.querySelector('#login')", STEP).await;
        assert_eq!(
            panel.eval("fetch('/api/me').then(r => r.status)").await,
            serde_json::json!(401)
        );

        // Wrong PINs until the badge locks: one sentence with the end of the lock as the
        // panel's local time, not the server's message with its UTC timestamp.
        keypad(&panel, "badge", "501").await;
        for attempt in 1..=3 {
            keypad(&panel, "secret", "0000").await;
            panel.tap("#login-ok").await;
            let refused = if attempt < 3 { "not accepted" } else { "locked until" };
            panel
                .wait_for(&format!("document.querySelector('#login-error').innerText.includes('{refused}')"), STEP)
                .await;
        }
        let locked = panel.text("#login-error").await;
        assert!(locked.starts_with("Too many wrong attempts: this badge is locked until "), "{locked}");
        assert_eq!(locked.matches("locked").count(), 1, "{locked}");
        assert!(!locked.contains('Z') && !locked.contains("T0") && !locked.contains("T1") && !locked.contains("T2"), "{locked}");
        panel.screenshot(&out.join("panel-800x480-login-locked.png")).await;

        browser.close().await;
        run.stop().await;
    })
    .await
    .expect("the browser test finishes within 150 s");
}
