//! Issue #22 (and #17 item 4), each item against the real service: the two-person rule
//! takes two personal accounts (the local token is one actor, `local`, and no header names
//! an actor); a confirmation names the proposal it approves; every long-lived response
//! (`/api/stream`, `/ws/dealer`, the long poll) ends with its session; `croupier alarm
//! clear` works with TLS on and the banner says `https://`; `check-config` refuses
//! session settings that lock everyone out; sessions and lockouts run on monotonic time
//! (an injected clock, never a sleep).

use crate::common;
use crate::proc;
use crate::running;

use common::{croupier, text};
use croupier::auth::Role;
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use running::{audit_rows, code};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(20);
/// How long a stream may take to notice that its session ended (it re-checks every
/// second; logout is immediate). A bound on correctness, not a performance target.
const ENDS_WITHIN: Duration = Duration::from_secs(8);

/// A request with `headers` and a JSON `body`: the status and the answer.
async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let body = body.map(|b| b.to_string());
    running::call(addr, method, path, body.as_deref(), headers).await
}

/// `step` (`propose`, `confirm`) on dispute `id` with `body`, as the session `cookie`.
async fn dispute_step(
    addr: SocketAddr,
    id: u64,
    step: &str,
    body: Value,
    cookie: &str,
) -> (u16, Value) {
    let path = format!("/api/disputes/{id}/{step}");
    call(addr, "POST", &path, Some(body), &[("Cookie", cookie)]).await
}

/// A second supervisor account, `s2`.
async fn add_second_supervisor(db: &Path) {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    croupier::auth::accounts::add(&pool, "test", "s2", "s2", Role::Supervisor, "3333")
        .await
        .expect("add s2");
    pool.close().await;
}

/// A service with the two-person rule, `USERS` plus `s2`, a round in play with a dispute
/// open on it. Returns the service, the shoe, the dealer's cookie and the dispute's id.
async fn disputed_table() -> (running::Running, running::Fixture, String, u64) {
    let (run, fixture) =
        running::served_with("deluxe", |c| c.disputes.two_person_rule = true).await;
    add_second_supervisor(&fixture.db()).await;
    let dealer = running::login_as(run.addr, Role::Dealer).await;
    let h = [("Cookie", dealer.as_str())];
    for (path, body) in [
        ("/api/betting/open", None),
        ("/api/bets", Some(json!({"seat": 1, "main": 100}))),
        ("/api/betting/close", None),
        (
            "/api/disputes",
            Some(json!({"seat": 1, "reason": "the player disputes the deal"})),
        ),
    ] {
        let (status, v) = call(run.addr, "POST", path, body, &h).await;
        assert_eq!(status, 200, "{path}: {v}");
    }
    let id = run
        .handle
        .snapshot()
        .dispute
        .as_ref()
        .expect("a dispute is open")
        .head
        .id;
    (run, fixture, dealer, id)
}

// Item 1: one holder of the local token is one actor; a header names no one; the local
// token cannot be the second person, nor can the proposer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_two_person_rule_takes_two_personal_accounts() {
    timeout(Duration::from_secs(120), async {
        let (run, fixture, _dealer, id) = disputed_table().await;
        let addr = run.addr;
        let db = fixture.db();
        let token = croupier::auth::local_token::read(&db).expect("token");
        let bearer = format!("Bearer {token}");
        let as_token = |who: &'static str| {
            vec![
                ("Authorization", bearer.clone()),
                ("X-Croupier-Actor", who.to_string()),
            ]
        };
        let refs = |h: &Vec<(&'static str, String)>| -> Vec<(&'static str, String)> { h.clone() };
        let send = |h: Vec<(&'static str, String)>, path: String, body: Option<Value>| async move {
            let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
            call(addr, "POST", &path, body, &h).await
        };
        // No header names the actor: `/api/me` through the token is `local` whatever it says.
        let alice = as_token("alice");
        let h: Vec<(&str, &str)> = alice.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, me) = call(addr, "GET", "/api/me", None, &h).await;
        assert_eq!(status, 200, "{me}");
        assert_eq!(me["badge"], "local", "{me}");
        assert!(
            !me.to_string().contains("alice"),
            "a header named the actor: {me}"
        );

        // The token proposes as "alice" and confirms as "bob": one person, refused.
        let cancel = json!({"resolution": {"op": "cancel"}, "reason": "misdeal seen on camera"});
        let (status, preview) = send(
            refs(&alice),
            format!("/api/disputes/{id}/propose"),
            Some(cancel.clone()),
        )
        .await;
        assert_eq!(status, 200, "{preview}");
        assert_eq!(preview["proposed_by"], "local", "{preview}");
        let hash = preview["proposal"].as_str().unwrap_or_default().to_string();
        let (status, v) = send(
            as_token("bob"),
            format!("/api/disputes/{id}/confirm"),
            Some(json!({"proposal": hash})),
        )
        .await;
        assert_eq!((status, code(&v)), (409, "two_person_rule"), "{v}");
        // A supervisor's account cannot confirm what the token proposed either: whoever
        // holds the token may be that supervisor.
        let s1 = running::login_as(addr, Role::Supervisor).await;
        let (status, v) = dispute_step(addr, id, "confirm", json!({"proposal": hash}), &s1).await;
        assert_eq!((status, code(&v)), (409, "two_person_rule"), "{v}");

        // A supervisor's own proposal cannot be confirmed through the token.
        let (status, preview) = dispute_step(addr, id, "propose", cancel.clone(), &s1).await;
        assert_eq!(status, 200, "{preview}");
        assert_eq!(preview["proposed_by"], "user:s1");
        let hash = preview["proposal"].as_str().unwrap_or_default().to_string();
        let (status, v) = send(
            as_token("cli:root"),
            format!("/api/disputes/{id}/confirm"),
            Some(json!({"proposal": hash})),
        )
        .await;
        assert_eq!((status, code(&v)), (409, "two_person_rule"), "{v}");
        // Nor by the proposer's own account.
        let (status, v) = dispute_step(addr, id, "confirm", json!({"proposal": hash}), &s1).await;
        assert_eq!((status, code(&v)), (409, "two_person_rule"), "{v}");
        assert!(
            run.handle.snapshot().dispute.is_some(),
            "nothing was applied"
        );
        // A second account confirms.
        let s2 = running::login(addr, "s2", "3333").await;
        let (status, v) = dispute_step(addr, id, "confirm", json!({"proposal": hash}), &s2).await;
        assert_eq!(status, 200, "{v}");
        let rows = audit_rows(&db).await;
        let o = rows
            .iter()
            .find(|r| r.entry.action == "override")
            .expect("the override is audited");
        assert_eq!(o.entry.actor, "user:s2");
        assert_eq!(o.entry.detail["proposed_by"], "user:s1");
        assert_eq!(o.entry.detail["confirmed_by"], "user:s2");
        assert_eq!(o.entry.detail["proposal"], hash.as_str());
        assert!(
            rows.iter().all(|r| !r.entry.actor.contains("alice")
                && !r.entry.actor.contains("bob")
                && !r.entry.actor.contains("cli:root")),
            "no header-named actor on the record"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

// Item 2: a confirmation names the proposal it approves; a replaced proposal is refused;
// withdrawing names the proposal too and is audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_applies_only_the_proposal_it_names() {
    timeout(Duration::from_secs(120), async {
        let (run, fixture, _dealer, id) = disputed_table().await;
        let addr = run.addr;
        let db = fixture.db();
        let a = running::login_as(addr, Role::Supervisor).await;
        let b = running::login(addr, "s2", "3333").await;
        let post = |cookie: &str, path: String, body: Option<Value>| {
            let cookie = cookie.to_string();
            async move { call(addr, "POST", &path, body, &[("Cookie", &cookie)]).await }
        };
        // A proposes a reject; B reviews it (the panel shows it with its hash).
        let (status, reject) = post(
            &a,
            format!("/api/disputes/{id}/propose"),
            Some(json!({"resolution": {"op": "reject"}, "reason": "the deal was right"})),
        )
        .await;
        assert_eq!(status, 200, "{reject}");
        let reviewed = reject["proposal"]
            .as_str()
            .expect("a proposal hash")
            .to_string();
        assert_eq!(reviewed.len(), 64, "sha256 hex: {reviewed}");
        let (_, shown) = call(
            addr,
            "GET",
            "/api/disputes/current",
            None,
            &[("Cookie", &b)],
        )
        .await;
        assert_eq!(shown["proposal"]["proposal"], reviewed.as_str(), "{shown}");
        // A replaces it with a cancellation.
        let (status, cancel) = post(
            &a,
            format!("/api/disputes/{id}/propose"),
            Some(json!({"resolution": {"op": "cancel"}, "reason": "cancel it after all"})),
        )
        .await;
        assert_eq!(status, 200, "{cancel}");
        let current = cancel["proposal"].as_str().expect("hash").to_string();
        assert_ne!(current, reviewed);
        // B's confirmation of the reject does not apply the cancel.
        let (status, v) = post(
            &b,
            format!("/api/disputes/{id}/confirm"),
            Some(json!({"proposal": reviewed})),
        )
        .await;
        assert_eq!((status, code(&v)), (409, "proposal_changed"), "{v}");
        // A confirmation that names nothing is malformed.
        let (status, v) = post(&b, format!("/api/disputes/{id}/confirm"), Some(json!({}))).await;
        assert_eq!((status, code(&v)), (400, "malformed"), "{v}");
        let s = run.handle.snapshot();
        assert!(s.dispute.is_some() && !s.round.settled, "nothing applied");
        // Withdrawing a proposal that is no longer the one proposed is refused too.
        let (status, v) = post(
            &b,
            format!("/api/disputes/{id}/withdraw"),
            Some(json!({"proposal": reviewed})),
        )
        .await;
        assert_eq!((status, code(&v)), (409, "proposal_changed"), "{v}");
        // B withdraws A's cancellation, naming it; it is audited.
        let (status, v) = post(
            &b,
            format!("/api/disputes/{id}/withdraw"),
            Some(json!({"proposal": current})),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        assert!(run
            .handle
            .snapshot()
            .dispute
            .as_ref()
            .is_some_and(|d| d.proposal.is_none()));
        let rows = audit_rows(&db).await;
        let w = rows
            .iter()
            .find(|r| r.entry.action == "dispute_withdraw")
            .expect("the withdrawal is audited");
        assert_eq!(w.entry.actor, "user:s2");
        assert_eq!(w.entry.detail["proposed_by"], "user:s1");
        assert_eq!(w.entry.detail["proposal"], current.as_str());
        // The reviewed reject, proposed again by A and confirmed by B naming it, applies.
        let (_, again) = post(
            &a,
            format!("/api/disputes/{id}/propose"),
            Some(json!({"resolution": {"op": "reject"}, "reason": "the deal was right"})),
        )
        .await;
        let (status, v) = post(
            &b,
            format!("/api/disputes/{id}/confirm"),
            Some(json!({"proposal": again["proposal"]})),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        assert!(run.handle.snapshot().dispute.is_none());
        run.stop().await;
    })
    .await
    .expect("bounded");
}

// Items 8 and 4: the TLS banner says https, and `croupier alarm clear` reaches the service
// over HTTPS, trusting the configured certificate (local token and badge alike).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alarm_clear_works_with_tls_and_the_banner_says_https() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cert =
            rcgen::generate_simple_self_signed(vec!["croupier.local".to_string()]).expect("cert");
        std::fs::write(dir.path().join("cert.pem"), cert.cert.pem()).expect("write");
        std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem())
            .expect("write");
        let card = croupier_drivers::ShoeItem::Card("QS".parse().expect("card"));
        let sim = SimShoe::start(SimConfig {
            items: vec![card; 2],
            ..SimConfig::default()
        })
        .expect("pty");
        let cfg = common::config_file(dir.path(), &sim.path(), "deluxe");
        let mut toml = std::fs::read_to_string(&cfg).expect("read");
        toml.push_str(&format!(
            "\n[http.tls]\ncert = {:?}\nkey = {:?}\n",
            dir.path().join("cert.pem").display().to_string(),
            dir.path().join("key.pem").display().to_string()
        ));
        std::fs::write(&cfg, toml).expect("write");
        let cfgs = cfg.display().to_string();
        let p = proc::announced(proc::spawn_raw(&cfg, &dir.path().join("log"))).await;
        assert!(
            p.announce.contains("serving https://") && !p.announce.contains("http://"),
            "{}",
            p.announce
        );
        // The client trusts exactly the configured certificate: another one is refused.
        let other =
            rcgen::generate_simple_self_signed(vec!["croupier.local".to_string()]).expect("cert");
        let other_pem = dir.path().join("other.pem");
        std::fs::write(&other_pem, other.cert.pem()).expect("write");
        let refused = croupier::web::client::Endpoint::pinned(&p.addr, &other_pem)
            .expect("pem")
            .timeout(STEP)
            .send("GET", "/api/public", None, &[])
            .await;
        assert!(
            matches!(refused, Err(croupier::web::client::ClientError::Tls { .. })),
            "{refused:?}"
        );
        let trusted =
            croupier::web::client::Endpoint::pinned(&p.addr, &dir.path().join("cert.pem"))
                .expect("pem")
                .timeout(STEP)
                .send("GET", "/api/public", None, &[])
                .await
                .expect("the configured certificate is trusted");
        assert_eq!(trusted.status, 200, "{}", trusted.body);
        let out = croupier(
            &[
                "user",
                "add",
                "--config",
                &cfgs,
                "--badge",
                "77",
                "--name",
                "Sam",
                "--role",
                "supervisor",
                "--secret-stdin",
            ],
            Some("2468\n"),
        );
        assert!(out.status.success(), "{}", text(&out));
        let db = dir.path().join("croupier.db");
        let locked = || async {
            let reader = croupier::store::Reader::open(&db).await.expect("reader");
            for _ in 0..200 {
                let log = reader.log("t1").await.expect("log");
                let alarms = log
                    .iter()
                    .filter(|r| matches!(r.record, croupier::store::Record::Alarm { .. }))
                    .count();
                let clears = log
                    .iter()
                    .filter(|r| matches!(r.record, croupier::store::Record::Clear { .. }))
                    .count();
                if alarms > clears {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            false
        };
        // A card while no round is open locks the table.
        sim.deal(1).await.expect("deal");
        assert!(locked().await, "the table locks");
        // `alarm clear` on this config and address, with `extra` arguments.
        let clear = |reason: &str, extra: &[&str], stdin: Option<&str>| {
            let mut args = vec!["alarm", "clear", "--config", &cfgs, "--addr", &p.addr];
            args.extend(["--reason", reason]);
            args.extend(extra);
            croupier(&args, stdin)
        };
        let out = clear("card removed", &[], None);
        assert!(out.status.success(), "local token over TLS: {}", text(&out));
        sim.deal(1).await.expect("deal");
        assert!(locked().await, "the table locks again");
        let out = clear(
            "second card removed",
            &["--badge", "77", "--secret-stdin"],
            Some("2468\n"),
        );
        assert!(out.status.success(), "badge over TLS: {}", text(&out));
        let clears: Vec<(String, String)> = audit_rows(&db)
            .await
            .into_iter()
            .filter(|r| r.entry.action == "alarm_clear")
            .map(|r| (r.entry.actor, r.entry.reason))
            .collect();
        assert_eq!(
            clears,
            [
                ("local".to_string(), "card removed".to_string()),
                ("user:77".to_string(), "second card removed".to_string())
            ]
        );
    })
    .await
    .expect("bounded");
}

// Item 6: session settings that lock everyone out are refused with file:line:column.
#[test]
fn check_config_refuses_session_settings_that_lock_everyone_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (key, value) in [
        ("session_hours", "0"),
        ("idle_minutes", "0"),
        ("max_failed_attempts", "0"),
    ] {
        let path = dir.path().join(format!("{key}.toml"));
        let toml =
            format!("[table]\nid = \"t1\"\nvariant = \"deluxe\"\n\n[auth]\n{key} = {value}\n");
        std::fs::write(&path, toml).expect("write");
        let out = croupier(&["check-config", &path.display().to_string()], None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{key} = {value}: {}",
            text(&out)
        );
        let want = format!("{}:6:1: auth.{key}", path.display());
        assert!(text(&out).contains(&want), "{key}: {}", text(&out));
    }
    // Values that work are accepted.
    let path = dir.path().join("ok.toml");
    std::fs::write(
        &path,
        "[table]\nid = \"t1\"\nvariant = \"deluxe\"\n\n[auth]\nsession_hours = 1\nidle_minutes = 1\n",
    )
    .expect("write");
    let out = croupier(&["check-config", &path.display().to_string()], None);
    assert!(out.status.success(), "{}", text(&out));
}

/// The three long-lived responses of a session: the SSE `/api/stream`, the `/ws/dealer`
/// socket and a long poll of `/api/status`. Each resolves once its response has ended
/// (the stream's end, the socket's close, the poll's answer: its status).
struct Streams {
    sse: tokio::task::JoinHandle<String>,
    ws: tokio::task::JoinHandle<Option<u16>>,
    poll: tokio::task::JoinHandle<u16>,
}

async fn open_streams(run: &running::Running, cookie: &str) -> Streams {
    use futures::StreamExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = run.addr;
    // SSE: read until the server ends the response (or the socket closes).
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    let req = format!(
        "GET /api/stream HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n"
    );
    tcp.write_all(req.as_bytes()).await.expect("write");
    let mut first = vec![0u8; 4096];
    let n = timeout(STEP, tcp.read(&mut first))
        .await
        .expect("the stream answers")
        .expect("read");
    let head = String::from_utf8_lossy(&first[..n]).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let sse = tokio::spawn(async move {
        let mut all = head;
        let mut buf = vec![0u8; 65536];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return all,
                Ok(n) => {
                    all.push_str(&String::from_utf8_lossy(&buf[..n]));
                    // The chunked body's last chunk: the response is over.
                    if all.ends_with("0\r\n\r\n") {
                        return all;
                    }
                }
            }
        }
    });
    // The dealer socket: its first message, then wait for the close.
    let mut req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
        format!("ws://{addr}/ws/dealer"),
    )
    .expect("request");
    req.headers_mut()
        .insert("Cookie", cookie.parse().expect("header"));
    let (mut socket, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("the dealer socket opens");
    let first = timeout(STEP, socket.next()).await.expect("a view");
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
    let ws = tokio::spawn(async move {
        while let Some(m) = socket.next().await {
            match m {
                Ok(tokio_tungstenite::tungstenite::Message::Close(frame)) => {
                    return frame.map(|f| u16::from(f.code))
                }
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    });
    // The long poll: waits up to 30 s for a newer snapshot that will not come.
    let seq = run.handle.snapshot().seq;
    let cookie = cookie.to_string();
    let poll = tokio::spawn(async move {
        request_with(
            &addr.to_string(),
            "GET",
            &format!("/api/status?after={seq}&wait_ms=30000"),
            None,
            &[("Cookie", &cookie)],
            Duration::from_secs(60),
        )
        .await
        .map(|r| r.status)
        .unwrap_or(0)
    });
    // Let the poll reach its wait.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Streams { sse, ws, poll }
}

impl Streams {
    /// Every response ends within [`ENDS_WITHIN`]: the SSE stream with a `session_ended`
    /// event, the socket with 4401, the poll with 401.
    async fn all_end(self, why: &str) {
        let sse = timeout(ENDS_WITHIN, self.sse)
            .await
            .unwrap_or_else(|_| panic!("{why}: /api/stream went on"))
            .expect("task");
        assert!(sse.contains("event: session_ended"), "{why}: {sse:.300}");
        let ws = timeout(ENDS_WITHIN, self.ws)
            .await
            .unwrap_or_else(|_| panic!("{why}: /ws/dealer went on"))
            .expect("task");
        assert_eq!(ws, Some(4401), "{why}");
        let poll = timeout(ENDS_WITHIN, self.poll)
            .await
            .unwrap_or_else(|_| panic!("{why}: the long poll went on"))
            .expect("task");
        assert_eq!(poll, 401, "{why}");
    }
}

// Item 3 of #22 and item 4 of #17: every long-lived response ends when its session does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stream_ends_when_its_session_ends() {
    timeout(Duration::from_secs(120), async {
        let clock = croupier::auth::time::ManualClock::at_system_now();
        let (run, fixture) = running::served_on("deluxe", |_| {}, clock.clone()).await;
        let db = fixture.db();
        let pool = croupier::auth::open_pool(&db).await.expect("pool");

        // Idle expiry: an hour passes with nothing but the streams (watching is no use).
        let cookie = running::login_as(run.addr, Role::Dealer).await;
        let streams = open_streams(&run, &cookie).await;
        clock.advance(Duration::from_secs(3601));
        streams.all_end("idle expiry").await;

        // Expiry: used all along, the session still ends 12 h after login.
        let cookie = running::login_as(run.addr, Role::Dealer).await;
        for _ in 0..23 {
            clock.advance(Duration::from_secs(1800));
            let (status, _) = call(run.addr, "GET", "/api/me", None, &[("Cookie", &cookie)]).await;
            assert_eq!(status, 200);
        }
        let streams = open_streams(&run, &cookie).await;
        clock.advance(Duration::from_secs(1801));
        streams.all_end("expiry").await;

        // Logout.
        let cookie = running::login_as(run.addr, Role::Dealer).await;
        let streams = open_streams(&run, &cookie).await;
        let (status, _) = call(
            run.addr,
            "POST",
            "/api/logout",
            None,
            &[("Cookie", &cookie)],
        )
        .await;
        assert_eq!(status, 200);
        streams.all_end("logout").await;

        // `croupier user passwd` (another process, the same database).
        let cookie = running::login_as(run.addr, Role::Dealer).await;
        let streams = open_streams(&run, &cookie).await;
        croupier::auth::accounts::passwd(&pool, "test", "d1", "1111", "rotated")
            .await
            .expect("passwd");
        streams.all_end("passwd").await;

        // `croupier user disable`.
        let cookie = running::login_as(run.addr, Role::Dealer).await;
        let streams = open_streams(&run, &cookie).await;
        croupier::auth::accounts::set_disabled(&pool, "test", "d1", true, "left")
            .await
            .expect("disable");
        streams.all_end("disable").await;
        pool.close().await;
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// Accounts on a fresh database in `dir`, on a clock moved by hand.
async fn clocked(
    dir: &Path,
    config: croupier::auth::AuthConfig,
) -> (
    croupier::auth::Auth,
    std::sync::Arc<croupier::auth::time::ManualClock>,
) {
    let db = dir.join("auth.db");
    running::add_users(&db).await;
    let clock = croupier::auth::time::ManualClock::at_system_now();
    let auth = croupier::auth::Auth::open_with_clock(&db, config, false, clock.clone())
        .await
        .expect("accounts");
    (auth, clock)
}

const MINUTE: Duration = Duration::from_secs(60);
const HOUR_MS: i64 = 3_600_000;

// Item 7: a session lives by monotonic time: a wall-clock step neither ends it nor
// extends it.
#[tokio::test]
async fn sessions_follow_monotonic_time_not_the_wall_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (auth, clock) = clocked(dir.path(), croupier::auth::AuthConfig::default()).await;
    let session = auth.login("d1", "1111", "test").await.expect("login");
    // NTP steps the clock 3 h forward: nobody is logged out.
    clock.step_wall(3 * HOUR_MS);
    assert!(
        auth.session(&session.token).await.expect("db").is_some(),
        "a forward step ended the session"
    );
    // Used every 30 minutes, it lives its 12 hours (monotonic) and no longer, even with
    // the wall clock stepped 5 h back on the way.
    clock.step_wall(-5 * HOUR_MS);
    for _ in 0..23 {
        clock.advance(30 * MINUTE);
        assert!(auth.session(&session.token).await.expect("db").is_some());
    }
    clock.advance(31 * MINUTE);
    assert!(
        auth.session(&session.token).await.expect("db").is_none(),
        "12 h after login the session is over"
    );
}

// Item 7: a lockout lasts `lockout_seconds` of monotonic time, whatever the wall clock did.
#[tokio::test]
async fn lockouts_follow_monotonic_time_not_the_wall_clock() {
    use croupier::auth::sessions::LoginError;
    let dir = tempfile::tempdir().expect("tempdir");
    let (auth, clock) = clocked(dir.path(), croupier::auth::AuthConfig::default()).await;
    for (step, why) in [
        (-2 * HOUR_MS, "set while the clock was behind"),
        (2 * HOUR_MS, "set while the clock was ahead"),
    ] {
        clock.step_wall(step);
        for _ in 0..3 {
            let _ = auth.login("s1", "0000", "test").await;
        }
        assert!(matches!(
            auth.login("s1", "2222", "test").await,
            Err(LoginError::Locked { .. })
        ));
        // The clock is corrected.
        clock.step_wall(-step);
        clock.advance(Duration::from_secs(299));
        assert!(
            matches!(
                auth.login("s1", "2222", "test").await,
                Err(LoginError::Locked { .. })
            ),
            "{why}: lifted early"
        );
        clock.advance(Duration::from_secs(2));
        assert!(
            auth.login("s1", "2222", "test").await.is_ok(),
            "{why}: still locked after lockout_seconds"
        );
    }
}

// Item 5: use refreshes the idle timer.
#[tokio::test]
async fn a_session_in_use_does_not_go_idle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = croupier::auth::AuthConfig {
        idle_minutes: 1,
        ..croupier::auth::AuthConfig::default()
    };
    let (auth, clock) = clocked(dir.path(), config).await;
    let session = auth.login("d1", "1111", "test").await.expect("login");
    for i in 0..30 {
        clock.advance(Duration::from_secs(10));
        assert!(
            auth.session(&session.token).await.expect("db").is_some(),
            "used every 10 s, it ended after {} s",
            (i + 1) * 10
        );
    }
    clock.advance(Duration::from_secs(61));
    assert!(
        auth.session(&session.token).await.expect("db").is_none(),
        "a minute without use ends it"
    );
}
