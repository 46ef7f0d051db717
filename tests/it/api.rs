//! The HTTP API and the public feed against the running service (PTY shoe, no demo):
//! stable error codes, malformed requests change nothing, the betting window, and
//! resuming `/ws/public` and `/sse/public` from the last message id.

use crate::common;
use crate::running;

use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use futures::StreamExt;
use running::Running;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;

const STEP: Duration = Duration::from_secs(10);

/// The dealer session of each running service (the endpoints here are the dealer's).
static SESSIONS: std::sync::Mutex<Vec<(SocketAddr, String)>> = std::sync::Mutex::new(Vec::new());

async fn start(sim: &SimShoe, dir: &std::path::Path) -> Running {
    let config = common::config(dir, &sim.path(), "deluxe");
    running::add_users(&config.store.path).await;
    let run = running::start(config).await;
    let cookie = running::login_as(run.addr, croupier::auth::Role::Dealer).await;
    SESSIONS.lock().expect("sessions").push((run.addr, cookie));
    run
}

/// The dealer's session cookie at the service on `addr`.
fn session_of(addr: SocketAddr) -> String {
    SESSIONS
        .lock()
        .expect("sessions")
        .iter()
        .find(|(a, _)| *a == addr)
        .map(|(_, c)| c.clone())
        .expect("a session for this service")
}

/// A request with the dealer's session cookie.
async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let cookie = session_of(addr);
    let reply = request_with(
        &addr.to_string(),
        method,
        path,
        body,
        &[("Cookie", &cookie)],
        STEP,
    )
    .await
    .expect("request");
    let (status, text) = (reply.status, reply.body);
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_stable_codes_and_change_nothing() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let run = start(&sim, dir.path()).await;
        let (h, addr) = (&run.handle, run.addr);
        let before = h.snapshot();

        // Malformed: 400 `malformed`, nothing changes.
        for (path, body) in [
            ("/api/bets", "not json"),
            ("/api/bets", r#"{"seat": 1}"#),
            ("/api/bets", r#"{"seat": 1, "main": 100, "extra": 1}"#),
            ("/api/bets", r#"{"seat": "one", "main": 100}"#),
            ("/api/decision", r#"{"seat": 1, "action": "fly"}"#),
            ("/api/decision", ""),
            ("/api/sim/deal", r#"{"n": 500}"#),
        ] {
            let (status, v) = call(addr, "POST", path, Some(body)).await;
            assert_eq!((status, code(&v)), (400, "malformed"), "{path} {body}: {v}");
        }
        let (status, v) = call(addr, "GET", "/api/rounds/abc", None).await;
        assert_eq!((status, code(&v)), (400, "malformed"));
        // One error shape everywhere, the input and alarm endpoints included.
        let supervisor = running::login_as(addr, croupier::auth::Role::Supervisor).await;
        for (method, path, body, want) in [
            ("POST", "/api/input", Some("not json"), (400, "malformed")),
            ("POST", "/api/alarm/clear", Some("{}"), (400, "malformed")),
            (
                "POST",
                "/api/alarm/clear",
                Some(r#"{"reason": " "}"#),
                (400, "malformed"),
            ),
            (
                "POST",
                "/api/alarm/clear",
                Some(r#"{"reason": "x"}"#),
                (409, "not_locked"),
            ),
            (
                "POST",
                "/api/input",
                Some(r#"{"decision": {"seat": 1, "action": "stand"}}"#),
                (409, "action_not_allowed"),
            ),
            // The long poll has an upper bound, said rather than silently applied.
            (
                "GET",
                "/api/status?after=0&wait_ms=30001",
                None,
                (400, "malformed"),
            ),
        ] {
            let reply = request_with(
                &addr.to_string(),
                method,
                path,
                body,
                &[("Cookie", &supervisor)],
                STEP,
            )
            .await
            .expect("request");
            let v: Value = serde_json::from_str(&reply.body).expect("a JSON body");
            assert_eq!((reply.status, code(&v)), want, "{method} {path}: {v}");
            assert!(v["error"]["message"].is_string(), "{v}");
        }
        let (status, v) = call(addr, "GET", "/api/nothing", None).await;
        assert_eq!((status, code(&v)), (404, "not_found"));

        // The betting window.
        let (status, v) = call(
            addr,
            "POST",
            "/api/bets",
            Some(r#"{"seat": 1, "main": 100}"#),
        )
        .await;
        assert_eq!((status, code(&v)), (409, "betting_closed"));
        let (status, v) = call(
            addr,
            "POST",
            "/api/decision",
            Some(r#"{"seat": 1, "action": "stand"}"#),
        )
        .await;
        assert_eq!(status, 409, "{v}");
        assert!(!code(&v).is_empty());
        assert_eq!(
            h.snapshot().seq,
            before.seq,
            "refused requests changed the table"
        );
        assert_eq!(h.snapshot().betting, before.betting);

        let (status, _) = call(addr, "POST", "/api/betting/open", None).await;
        assert_eq!(status, 200);
        for bad in [
            r#"{"seat": 1, "main": 5}"#,
            r#"{"seat": 1, "main": 99999999999}"#,
            r#"{"seat": 99, "main": 100}"#,
            r#"{"seat": 1, "main": 100, "side": {"no_such_bet": 5}}"#,
        ] {
            let (status, v) = call(addr, "POST", "/api/bets", Some(bad)).await;
            assert_eq!((status, code(&v)), (422, "invalid_bet"), "{bad}: {v}");
        }
        // A negative amount is outside the contract itself (`minimum: 0`), so it is
        // refused before the table's limits are asked, naming the field.
        let (status, v) = call(
            addr,
            "POST",
            "/api/bets",
            Some(r#"{"seat": 1, "main": -100}"#),
        )
        .await;
        assert_eq!((status, code(&v)), (400, "malformed"), "{v}");
        assert!(v.to_string().contains("body.main"), "{v}");
        assert!(h.snapshot().betting.bets.is_empty());
        let (status, v) = call(
            addr,
            "POST",
            "/api/bets",
            Some(r#"{"seat": 2, "main": 100, "side": {"pair": 10}}"#),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        // The player's dispute token for round 1, seat 2.
        assert_eq!(v["round"], 1, "{v}");
        let token = v["dispute_token"].as_str().expect("a dispute token");
        let pool = croupier::auth::open_pool(&dir.path().join("croupier.db"))
            .await
            .expect("pool");
        let key = croupier::auth::player_token::key(&pool).await.expect("key");
        assert!(croupier::auth::player_token::verify(
            &key, "t1", 1, 2, token
        ));
        assert!(!croupier::auth::player_token::verify(
            &key, "t1", 1, 3, token
        ));
        pool.close().await;
        let (status, v) = call(addr, "POST", "/api/betting/close", None).await;
        assert_eq!(status, 200, "{v}");
        let s = h.snapshot();
        assert_eq!(s.round.number, 1);
        assert_eq!(s.round.bets.len(), 1);
        assert!(!s.betting.open);
        let (status, v) = call(addr, "POST", "/api/betting/open", None).await;
        assert_eq!((status, code(&v)), (409, "not_taking_bets"), "{v}");

        // The OpenAPI document lists the endpoints.
        let (status, v) = call(addr, "GET", "/api/openapi.json", None).await;
        assert_eq!(status, 200);
        for path in [
            "/api/bets",
            "/api/decision",
            "/api/betting/open",
            "/api/results",
            "/healthz",
            "/readyz",
            "/metrics",
        ] {
            assert!(v["paths"].get(path).is_some(), "{path} not documented");
        }
        run.stop().await;
    })
    .await
    .expect("within 60 s");
}

/// Issue #17.7 and #18.3: what axum refuses before any handler runs (a path, query or body
/// that does not parse, a method the route lacks, a body over the limit, an unknown asset)
/// has the one error shape, with its status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_before_any_handler_have_the_one_error_shape() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let run = start(&sim, dir.path()).await;
        let addr = run.addr;
        for (method, path, body, status, want) in [
            ("GET", "/api/results?last=-1", None, 400, "malformed"),
            ("GET", "/api/results?last=1001", None, 400, "malformed"),
            ("GET", "/api/rounds?last=x", None, 400, "malformed"),
            ("GET", "/api/status?after=-2", None, 400, "malformed"),
            ("GET", "/ws/public?after=1", None, 400, "malformed"),
            ("PUT", "/api/public", None, 405, "method_not_allowed"),
            ("GET", "/ui/nothing.js", None, 404, "not_found"),
        ] {
            let (got, v) = call(addr, method, path, body).await;
            assert_eq!((got, code(&v)), (status, want), "{method} {path}: {v}");
            assert!(
                v["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{method} {path}: {v}"
            );
        }
        // An oversize body is refused on its declared length, before a byte more of it is
        // read. Over a raw socket: a client still writing 3 MB may find the connection
        // closed under it before it reads the answer (seen once under load).
        let v = oversize_post(addr, "/api/bets", 3 << 20).await;
        assert_eq!(code(&v), "too_large", "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{v}"
        );
        run.stop().await;
    })
    .await
    .expect("within 60 s");
}

/// Sends the head of a `POST path` declaring a `len`-byte JSON body with the dealer's
/// session, and only its first bytes; answers the 413's JSON body.
async fn oversize_post(addr: SocketAddr, path: &str, len: usize) -> Value {
    let cookie = session_of(addr);
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n{{\"seat\": 1, "
    );
    tcp.write_all(head.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        if let Ok(reply) = croupier::web::client::parse(&addr.to_string(), &raw) {
            let want = reply
                .headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse::<usize>().ok());
            if want.is_some_and(|n| reply.body.len() >= n) {
                assert_eq!(reply.status, 413, "{}", reply.body);
                return serde_json::from_str(&reply.body).expect("a JSON error");
            }
        }
        let k = timeout(STEP, tcp.read(&mut buf))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(
            k > 0,
            "closed before a whole answer: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..k]);
    }
}

async fn next_text(
    ws: &mut (impl futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
              + Unpin),
) -> Value {
    loop {
        let m = timeout(STEP, ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("ok");
        if let Message::Text(t) = m {
            return serde_json::from_str(&t).expect("json");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_feed_resumes_from_the_last_id_or_resyncs() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        // Seat 1 takes 5H and KD; the dealer 8S up and 6D face down.
        let cards = ["5H", "8S", "KD", "6D"];
        let sim = common::dealing(&cards);
        let run = start(&sim, dir.path()).await;
        let (h, addr) = (&run.handle, run.addr);
        let url = format!("ws://{addr}/ws/public");
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("ws");
        let first = next_text(&mut ws).await;
        assert_eq!(first["type"], "view");
        assert_eq!(first["resync"], true);
        call(addr, "POST", "/api/betting/open", None).await;
        let opened = next_text(&mut ws).await;
        assert_eq!(opened["view"]["betting"]["open"], true);
        assert_eq!(opened["n"].as_u64(), first["n"].as_u64().map(|n| n + 1));
        let last_id = opened["id"].as_str().expect("id").to_string();
        drop(ws);

        // Missed while away: a bet, the close (the round opens), the whole initial deal.
        call(
            addr,
            "POST",
            "/api/bets",
            Some(r#"{"seat": 1, "main": 100}"#),
        )
        .await;
        call(addr, "POST", "/api/betting/close", None).await;
        for _ in 0..cards.len() {
            let mut watch = h.watch();
            let before = watch.borrow().seq;
            sim.deal(1).await.expect("deal");
            timeout(STEP, watch.wait_for(|s| s.seq > before))
                .await
                .expect("taken")
                .expect("running");
        }
        assert!(h.snapshot().round.hole_hidden);
        tokio::time::sleep(Duration::from_millis(200)).await;

        let (mut ws, _) =
            tokio_tungstenite::connect_async(format!("{url}?after={last_id}").as_str())
                .await
                .expect("ws");
        let mut n = opened["n"].as_u64().expect("n");
        let mut got = Vec::new();
        loop {
            let m = next_text(&mut ws).await;
            assert_eq!(m["resync"], false, "resumed, not resynced: {m}");
            assert_eq!(m["n"].as_u64(), Some(n + 1), "no gap");
            n += 1;
            let text = m.to_string();
            assert!(!text.contains("6D"), "the hole card went public: {text}");
            assert!(
                !text.contains("expect"),
                "the expectation went public: {text}"
            );
            let dealer = m["view"]["round"]["dealer"]
                .as_array()
                .map(Vec::len)
                .unwrap_or(0);
            got.push(m);
            if dealer == 2 {
                break;
            }
        }
        // The missed changes (a bet, the close, four cards) arrive in order, without a gap in
        // `n` (checked above); how many messages they take depends on how many changes the
        // feed had folded into one view when it read them, so the views must only never go
        // backwards and end at the dealt round.
        let dealt: Vec<usize> = got
            .iter()
            .map(|m| m["view"]["round"]["dealer"].as_array().map_or(0, Vec::len))
            .collect();
        assert!(
            dealt.windows(2).all(|w| w[0] <= w[1]),
            "views went backwards: {dealt:?}"
        );
        assert_eq!(dealt.last(), Some(&2));
        assert_eq!(
            got.last().expect("last")["view"]["round"]["dealer"][1],
            Value::Null
        );

        // An id the ring does not hold: a resync view.
        let (mut ws, _) =
            tokio_tungstenite::connect_async(format!("{url}?after=999999.0").as_str())
                .await
                .expect("ws");
        let m = next_text(&mut ws).await;
        assert_eq!(m["resync"], true);
        assert_eq!(m["view"]["round"]["dealer"][1], Value::Null);

        // SSE with Last-Event-ID: the messages after it, with their ids.
        let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
        tcp.write_all(
            format!("GET /sse/public HTTP/1.1\r\nHost: x\r\nLast-Event-ID: {last_id}\r\n\r\n")
                .as_bytes(),
        )
        .await
        .expect("write");
        let mut buf = vec![0u8; 65536];
        let mut text = String::new();
        while !text.contains("\"resync\":false") || text.matches("id: ").count() < 3 {
            let k = timeout(STEP, tcp.read(&mut buf))
                .await
                .expect("sse in time")
                .expect("read");
            assert!(k > 0, "sse closed: {text}");
            text.push_str(&String::from_utf8_lossy(&buf[..k]));
        }
        assert!(text.contains("event: view"));
        // Quoted: the card as JSON (the chunked encoding's hex sizes may spell "6D").
        assert!(!text.contains("\"6D\""), "{text}");
        assert!(!text.contains("\"resync\":true"), "{text}");
        run.stop().await;
    })
    .await
    .expect("within 60 s");
}
