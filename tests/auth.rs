//! Accounts, roles and the audit log against the real service (issue #6): the role ×
//! endpoint matrix over every route, lockout, sessions (logout, expiry, idle, CSRF), TLS,
//! configuration changes in the audit log, and tamper detection by `croupier audit verify`.

mod common;
#[path = "support/running.rs"]
#[allow(dead_code)]
mod running;

use common::{croupier, text};
use croupier::auth::Role;
use croupier::web::auth::Access;
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(20);

/// The status line's code only (streams never end, so nothing waits for the body).
async fn status_of(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> u16 {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    let body = if method == "POST" { "{}" } else { "" };
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    tcp.write_all(head.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !got.windows(2).any(|w| w == b"\r\n") {
        let n = timeout(STEP, tcp.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("{method} {path}: no status line"))
            .expect("read");
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&got);
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: {line:?}"))
}

async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    cookie: &str,
) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = if cookie.is_empty() {
        vec![]
    } else {
        vec![("Cookie", cookie)]
    };
    let reply = request_with(&addr.to_string(), method, path, body, &headers, STEP)
        .await
        .expect("request");
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body)),
    )
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

const D: Access = Access::Role(Role::Dealer);
const S: Access = Access::Role(Role::Supervisor);
const A: Access = Access::Role(Role::Admin);
const P: Access = Access::Public;
const O: Access = Access::Open;
const PL: Access = Access::Player;
const PF: Access = Access::Platform;

/// The matrix: (method, route pattern, a concrete path, who may call it). Written out
/// here on purpose: a route added to the router without a line here fails the test.
const MATRIX: &[(&str, &str, &str, Access)] = &[
    ("GET", "/", "/", O),
    ("GET", "/public", "/public", P),
    ("GET", "/ui/{file}", "/ui/panel.js", O),
    ("GET", "/status", "/status", O),
    ("GET", "/ws/public", "/ws/public", P),
    ("GET", "/sse/public", "/sse/public", P),
    ("GET", "/api/openapi.json", "/api/openapi.json", O),
    ("GET", "/api/public", "/api/public", P),
    ("GET", "/api/results", "/api/results", P),
    ("GET", "/api/table-key", "/api/table-key", P),
    ("POST", "/api/login", "/api/login", O),
    ("GET", "/healthz", "/healthz", O),
    ("GET", "/readyz", "/readyz", O),
    ("GET", "/metrics", "/metrics", O),
    ("GET", "/api/{*rest}", "/api/nothing", O),
    ("POST", "/api/{*rest}", "/api/nothing", O),
    ("GET", "/play", "/play", P),
    ("GET", "/api/play/state", "/api/play/state", PL),
    ("POST", "/api/play/join", "/api/play/join", PL),
    ("POST", "/api/play/leave", "/api/play/leave", PL),
    ("POST", "/api/play/bet", "/api/play/bet", PL),
    ("POST", "/api/play/behind", "/api/play/behind", PL),
    ("POST", "/api/play/boxes", "/api/play/boxes", PL),
    ("POST", "/api/play/decision", "/api/play/decision", PL),
    ("POST", "/api/play/sessions", "/api/play/sessions", PF),
    (
        "POST",
        "/api/play/sessions/revoke",
        "/api/play/sessions/revoke",
        PF,
    ),
    (
        "POST",
        "/api/play/players/disable",
        "/api/play/players/disable",
        PF,
    ),
    ("GET", "/api/me", "/api/me", D),
    ("GET", "/ws/dealer", "/ws/dealer", D),
    ("GET", "/api/view", "/api/view", D),
    ("POST", "/api/betting/open", "/api/betting/open", D),
    ("POST", "/api/betting/close", "/api/betting/close", D),
    ("POST", "/api/bets", "/api/bets", D),
    ("POST", "/api/decision", "/api/decision", D),
    ("POST", "/api/shuffle", "/api/shuffle", D),
    ("POST", "/api/sim/deal", "/api/sim/deal", D),
    ("GET", "/api/alarm", "/api/alarm", D),
    ("GET", "/api/staff", "/api/staff", D),
    ("POST", "/api/call-supervisor", "/api/call-supervisor", D),
    ("GET", "/api/rounds/{round}", "/api/rounds/1", D),
    ("GET", "/api/rounds", "/api/rounds", D),
    ("GET", "/api/status", "/api/status", D),
    ("GET", "/api/stream", "/api/stream", D),
    ("POST", "/api/input", "/api/input", S),
    ("POST", "/api/alarm/clear", "/api/alarm/clear", S),
    ("GET", "/api/audit", "/api/audit", A),
    ("GET", "/api/disputes", "/api/disputes", D),
    ("POST", "/api/disputes", "/api/disputes", D),
    ("POST", "/api/disputes/player", "/api/disputes/player", P),
    ("GET", "/api/disputes/current", "/api/disputes/current", D),
    (
        "POST",
        "/api/disputes/{id}/propose",
        "/api/disputes/1/propose",
        S,
    ),
    (
        "POST",
        "/api/disputes/{id}/confirm",
        "/api/disputes/1/confirm",
        S,
    ),
    (
        "POST",
        "/api/disputes/{id}/withdraw",
        "/api/disputes/1/withdraw",
        S,
    ),
    // Last: it ends the session the rows above used.
    ("POST", "/api/logout", "/api/logout", O),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_by_role() {
    timeout(Duration::from_secs(120), async {
        // The matrix covers exactly the router's routes, with the same access.
        let declared: BTreeSet<(String, String, String)> = croupier::web::route_specs()
            .iter()
            .map(|r| {
                (
                    r.method.to_string(),
                    r.path.to_string(),
                    format!("{:?}", r.access),
                )
            })
            .collect();
        let tested: BTreeSet<(String, String, String)> = MATRIX
            .iter()
            .map(|(m, p, _, a)| (m.to_string(), p.to_string(), format!("{a:?}")))
            .collect();
        assert_eq!(
            declared.symmetric_difference(&tested).collect::<Vec<_>>(),
            Vec::<&(String, String, String)>::new(),
            "routes in the router but not in MATRIX, or with another access (or the reverse)"
        );

        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;
        let mut who: Vec<(Option<Role>, String)> = vec![(None, String::new())];
        for role in Role::ALL {
            who.push((Some(role), running::login_as(run.addr, role).await));
        }
        let mut failures = Vec::new();
        for (role, cookie) in &who {
            let headers: Vec<(&str, &str)> = if cookie.is_empty() {
                vec![]
            } else {
                vec![("Cookie", cookie.as_str())]
            };
            for (method, pattern, path, access) in MATRIX {
                let status = status_of(run.addr, method, path, &headers).await;
                let ok = match (access, role) {
                    (Access::Public | Access::Open, _) => status != 401 && status != 403,
                    // A staff login is no player's token nor the platform's credential.
                    (Access::Player | Access::Platform, _) => status == 401,
                    (Access::Role(_), None) => status == 401,
                    (Access::Role(min), Some(r)) if r < min => status == 403,
                    (Access::Role(_), Some(_)) => status != 401 && status != 403,
                };
                if !ok {
                    failures.push(format!(
                        "{role:?} {method} {pattern} ({access:?}) -> {status}"
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
        // The error bodies use the API's stable codes.
        let (status, v) = call(run.addr, "GET", "/api/status", None, "").await;
        assert_eq!((status, code(&v)), (401, "unauthenticated"), "{v}");
        let dealer = running::login_as(run.addr, Role::Dealer).await;
        let (status, v) = call(run.addr, "POST", "/api/input", Some("\"shuffle\""), &dealer).await;
        assert_eq!(
            (status, code(&v)),
            (403, "forbidden"),
            "the dealer cannot override: {v}"
        );
        let (status, v) = call(
            run.addr,
            "POST",
            "/api/alarm/clear",
            Some(r#"{"reason": "x"}"#),
            &dealer,
        )
        .await;
        assert_eq!((status, code(&v)), (403, "forbidden"), "{v}");
        // The public results carry settled results only (no snapshot, no hole card).
        let (status, v) = call(run.addr, "GET", "/api/results", None, "").await;
        assert_eq!(status, 200);
        assert!(v.as_array().is_some(), "{v}");
        run.stop().await;
    })
    .await
    .expect("bounded");
}

async fn audit_rows(db: &Path) -> Vec<croupier::store::audit::AuditRow> {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let mut conn = pool.acquire().await.expect("conn");
    let rows = croupier::store::audit::rows_since(&mut conn, 0)
        .await
        .expect("rows");
    drop(conn);
    pool.close().await;
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_failures_lock_the_account_and_every_attempt_is_audited() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let mut config = common::config(dir.path(), &sim.path(), "deluxe");
        config.auth.lockout_seconds = 2;
        let db = config.store.path.clone();
        running::add_users(&db).await;
        let run = running::start(config).await;
        let login = |badge: &'static str, secret: &'static str| {
            let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
            async move { call(run.addr, "POST", "/api/login", Some(&body), "").await }
        };
        let (status, v) = login("d1", "9999").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        let (status, v) = login("d1", "9998").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        let (status, v) = login("d1", "9997").await;
        assert_eq!(
            (status, code(&v)),
            (423, "account_locked"),
            "the third failure locks: {v}"
        );
        let (status, v) = login("d1", "1111").await;
        assert_eq!(
            (status, code(&v)),
            (423, "account_locked"),
            "the right PIN is refused while locked: {v}"
        );
        // Unknown badges get the same answer as a wrong secret, and are logged too.
        let (status, v) = login("nobody", "1234").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        // Lockout is per account: another account still logs in.
        let (status, _) = login("s1", "2222").await;
        assert_eq!(status, 200);

        let rows = audit_rows(&db).await;
        let attempts: Vec<(&str, &str, &str)> = rows
            .iter()
            .filter(|r| r.action.starts_with("login"))
            .map(|r| {
                (
                    r.action.as_str(),
                    r.subject.as_str(),
                    r.detail["why"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            attempts,
            vec![
                ("login_failed", "d1", "wrong secret"),
                ("login_failed", "d1", "wrong secret"),
                ("login_locked", "d1", "wrong secret"),
                ("login_locked", "d1", "account locked"),
                ("login_failed", "nobody", "unknown badge"),
                ("login", "s1", ""),
            ]
        );
        assert!(
            rows.iter().all(|r| !r.detail.to_string().contains("9999")),
            "no secret in the log"
        );
        assert_eq!(
            rows.iter()
                .find(|r| r.subject == "nobody")
                .expect("row")
                .actor,
            "anonymous"
        );

        // The lockout runs out; the right PIN then works and resets the count.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let (status, v) = login("d1", "1111").await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["role"], "dealer");

        // An admin unlocks early (`croupier user unlock`).
        for pin in ["1", "2", "3"] {
            let _ = login("d1", pin).await;
        }
        assert_eq!(login("d1", "1111").await.0, 423);
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        croupier::auth::accounts::unlock(&pool, "test", "d1", "they remembered")
            .await
            .expect("unlock");
        pool.close().await;
        assert_eq!(login("d1", "1111").await.0, 200);
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// `POST /api/login` from the source address `from` (any 127.x.y.z reaches the service).
async fn login_from(addr: SocketAddr, from: &str, badge: &str, secret: &str) -> (u16, Value) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(from.parse().expect("ip"), 0))
        .expect("bind the source address");
    let mut tcp = socket.connect(addr).await.expect("connect");
    let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
    let req = format!(
        "POST /api/login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await.expect("read");
    let reply = croupier::web::client::parse("x", &raw).expect("http");
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_tells_no_badges_locks_out_only_the_guesser_and_throttles_its_address() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;
        let addr = run.addr;
        let guesser = "127.0.0.7";
        // Unknown and real badges answer alike: 401, 401, then 423 on the third failure.
        for badge in ["s1", "nobody"] {
            let mut answers = Vec::new();
            for pin in ["9991", "9992", "9993", "9994"] {
                let (status, v) = login_from(addr, guesser, badge, pin).await;
                answers.push((status, code(&v).to_string()));
            }
            assert_eq!(
                answers,
                [
                    (401, "invalid_credentials".to_string()),
                    (401, "invalid_credentials".to_string()),
                    (423, "account_locked".to_string()),
                    (423, "account_locked".to_string()),
                ],
                "{badge}"
            );
        }
        // The guesser locked the supervisor out — of the guesser's address only: at the
        // table's own terminal the supervisor still logs in.
        let (badge, secret) = running::user(Role::Supervisor);
        assert_eq!(login_from(addr, guesser, badge, secret).await.0, 423);
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        // Guessing on from one address: after 20 failures it is refused outright (429 and
        // when to retry), whatever it sends; other addresses are not.
        for i in 0..20 {
            let (status, v) = login_from(addr, guesser, &format!("g{i}"), "0000").await;
            if status == 429 {
                assert_eq!(code(&v), "too_many_attempts", "{v}");
                break;
            }
        }
        let (status, v) = login_from(addr, guesser, badge, secret).await;
        assert_eq!((status, code(&v)), (429, "too_many_attempts"), "{v}");
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_from_many_addresses_cannot_lock_a_supervisor_out_of_the_table() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;
        let addr = run.addr;
        let (badge, secret) = running::user(Role::Supervisor);
        // The table's terminal: the supervisor has logged in from it.
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        // Three guessers, three failures each (nine in all): each locks itself out only;
        // the supervisor logs in from the terminal and from a fresh address alike.
        for g in 1..=3 {
            let from = format!("127.0.1.{g}");
            let mut last = 0;
            for pin in ["9991", "9992", "9993"] {
                last = login_from(addr, &from, badge, pin).await.0;
            }
            assert_eq!(last, 423, "{from} locked itself out");
            assert_eq!(
                login_from(addr, &from, badge, secret).await.0,
                423,
                "{from}"
            );
        }
        assert_eq!(
            login_from(addr, "127.0.2.1", badge, secret).await.0,
            200,
            "fresh address"
        );
        assert_eq!(
            login_from(addr, "127.0.0.1", badge, secret).await.0,
            200,
            "the terminal"
        );
        // Guessing spread over many addresses is capped per badge: after ten failures in a
        // lockout length, every address that never logged into it is locked out (so a
        // botnet gets ten guesses per five minutes), the table's terminals are not. An
        // unknown badge answers the same way.
        for target in [badge, "nobody"] {
            let mut answers = Vec::new();
            for n in 1..=12 {
                let (status, _) = login_from(addr, &format!("127.0.3.{n}"), target, "9999").await;
                answers.push(status);
            }
            assert_eq!(
                answers,
                [401, 401, 401, 401, 401, 401, 401, 401, 401, 423, 423, 423],
                "{target}"
            );
            let (status, v) = login_from(addr, "127.0.4.1", target, "1357").await;
            assert_eq!(
                (status, code(&v)),
                (423, "account_locked"),
                "{target}: a fresh address"
            );
        }
        assert_eq!(
            login_from(addr, "127.0.4.2", badge, secret).await.0,
            423,
            "fresh: capped"
        );
        assert_eq!(
            login_from(addr, "127.0.0.1", badge, secret).await.0,
            200,
            "the terminal"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_flood_is_answered_429_beyond_the_admitted_and_a_real_login_gets_through() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;
        let addr = run.addr;
        // Forty guesses at once at unknown badges (no account gets locked by them).
        let flood: Vec<_> = (0..40)
            .map(|i| {
                tokio::spawn(async move {
                    let body = serde_json::json!({"badge": format!("x{i}"), "secret": "0000"});
                    let reply = request_with(
                        &addr.to_string(),
                        "POST",
                        "/api/login",
                        Some(&body.to_string()),
                        &[],
                        STEP,
                    )
                    .await
                    .expect("answered");
                    let retry = reply
                        .headers
                        .iter()
                        .any(|(k, v)| k == "retry-after" && v == "1");
                    (reply.status, reply.body, retry)
                })
            })
            .collect();
        let mut refused = 0;
        for task in flood {
            let (status, body, retry) = task.await.expect("join");
            match status {
                401 => {}
                429 => {
                    refused += 1;
                    assert!(body.contains("too_many_logins") && retry, "{body}");
                }
                other => panic!("{other}: {body}"),
            }
        }
        assert!(
            refused > 0,
            "a flood beyond {} logins at once is refused",
            croupier::auth::LOGINS_ADMITTED
        );
        assert!(refused < 40, "the admitted ones are answered");
        // The flood is over: a real login works at once.
        let (badge, secret) = running::user(Role::Supervisor);
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        assert_eq!(
            call(addr, "POST", "/api/login", Some(&body), "").await.0,
            200
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_end_at_logout_expiry_idleness_and_disabling() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let config = common::config(dir.path(), &sim.path(), "deluxe");
        let db = config.store.path.clone();
        running::add_users(&db).await;
        // Sessions run on monotonic time: the test moves it by hand.
        let clock = croupier::auth::time::ManualClock::at_system_now();
        let run = running::start_with_clock(config, clock.clone()).await;
        let addr = run.addr;

        // The cookie: HttpOnly, SameSite=Strict, no Secure without TLS.
        let body = r#"{"badge": "d1", "secret": "1111"}"#;
        let reply = request_with(
            &addr.to_string(),
            "POST",
            "/api/login",
            Some(body),
            &[],
            STEP,
        )
        .await
        .expect("login");
        let set = reply
            .headers
            .iter()
            .find(|(k, _)| k == "set-cookie")
            .map(|(_, v)| v.clone())
            .expect("set-cookie");
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(!set.contains("Secure"), "{set}");
        let cookie = reply.session_cookie().expect("cookie");
        let (status, v) = call(addr, "GET", "/api/me", None, &cookie).await;
        assert_eq!(status, 200);
        assert_eq!(
            (v["badge"].as_str(), v["role"].as_str()),
            (Some("d1"), Some("dealer"))
        );

        // CSRF: a state change by cookie must be JSON — exactly that media type.
        let post_as = |path: &'static str, content_type: &'static str| {
            let cookie = cookie.clone();
            async move {
                let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
                let req = format!(
                    "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: {cookie}\r\n\
                     Content-Type: {content_type}\r\nContent-Length: 0\r\n\r\n"
                );
                tcp.write_all(req.as_bytes()).await.expect("write");
                let mut raw = Vec::new();
                tcp.read_to_end(&mut raw).await.expect("read");
                croupier::web::client::parse("x", &raw)
                    .expect("http")
                    .status
            }
        };
        assert_eq!(
            post_as("/api/betting/open", "application/x-www-form-urlencoded").await,
            415,
            "a form post with the cookie is refused"
        );
        for lookalike in [
            "application/jsonp",
            "application/json-seq",
            "application/json2",
        ] {
            assert_eq!(
                post_as("/api/betting/open", lookalike).await,
                415,
                "{lookalike} is not JSON"
            );
        }
        // Logout is a state change too: a cross-site text/plain post does not end it.
        assert_eq!(post_as("/api/logout", "text/plain").await, 415);
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 200);

        // Logout ends it (and is audited).
        let (status, _) = call(addr, "POST", "/api/logout", None, &cookie).await;
        assert_eq!(status, 200);
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 401);

        // Expiry and idleness, by moving the service's (monotonic) clock on: 13 h of
        // use every 30 min passes the 12 h lifetime; 2 h without use passes the idle limit.
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        for (what, steps, step) in [("expiry", 26, 1800u64), ("idleness", 1, 7200)] {
            let cookie = running::login_as(addr, Role::Dealer).await;
            assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 200);
            let mut status = 200;
            for _ in 0..steps {
                clock.advance(Duration::from_secs(step));
                status = call(addr, "GET", "/api/me", None, &cookie).await.0;
            }
            assert_eq!(status, 401, "{what}");
        }
        // Disabling a user ends their sessions at once.
        let cookie = running::login_as(addr, Role::Supervisor).await;
        croupier::auth::accounts::set_disabled(&pool, "test", "s1", true, "left")
            .await
            .expect("disable");
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 401);
        let (status, v) = call(
            addr,
            "POST",
            "/api/login",
            Some(r#"{"badge": "s1", "secret": "2222"}"#),
            "",
        )
        .await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        pool.close().await;

        let actions: Vec<String> = audit_rows(&db)
            .await
            .into_iter()
            .map(|r| r.action)
            .collect();
        assert!(actions.contains(&"logout".to_string()), "{actions:?}");
        assert!(actions.contains(&"user_disable".to_string()), "{actions:?}");
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// `croupier user add` through the binary, the secret on stdin.
fn add_user(
    config: &str,
    badge: &str,
    name: &str,
    role: &str,
    secret: &str,
) -> std::process::Output {
    croupier(
        &[
            "user",
            "add",
            "--config",
            config,
            "--badge",
            badge,
            "--name",
            name,
            "--role",
            role,
            "--secret-stdin",
        ],
        Some(&format!("{secret}\n")),
    )
}

/// Runs raw SQL on a copy (the tamperer's view: triggers dropped first).
async fn tamper(db: &Path, statements: &[&str]) {
    use sqlx::{Connection, Executor};
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("open");
    conn.execute("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .await
        .expect("drop triggers");
    for sql in statements {
        conn.execute(*sql).await.expect(sql);
    }
    conn.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_verify_names_an_edited_a_deleted_and_an_inserted_row() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("a.db");
        let dbs = db.display().to_string();
        // Five rows through the real binary: three users added, one disabled, one unlocked.
        for (badge, pin) in [("1", "1234"), ("2", "2345"), ("3", "3456")] {
            let out = croupier(
                &["user", "add", "--db", &dbs, "--badge", badge, "--name", "N", "--role", "dealer", "--secret-stdin"],
                Some(&format!("{pin}\n")),
            );
            assert!(out.status.success(), "{}", text(&out));
        }
        assert!(croupier(&["user", "disable", "--db", &dbs, "--badge", "2", "--reason", "r"], None).status.success());
        assert!(croupier(&["user", "unlock", "--db", &dbs, "--badge", "3"], None).status.success());
        let out = croupier(&["audit", "verify", "--db", &dbs], None);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("5 rows, hash chain intact"), "{}", text(&out));
        // Export: JSON lines, with --since.
        let out = croupier(&["audit", "export", "--db", &dbs, "--since", "3"], None);
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0]["seq"].as_u64(), lines[0]["action"].as_str()), (Some(4), Some("user_disable")));
        assert!(lines[0]["actor"].as_str().is_some_and(|a| a.starts_with("cli:")), "{}", lines[0]);

        // The database with its write-ahead log: a command that exits before its last
        // connection's checkpoint (under load) leaves its latest rows in `-wal`, and a copy
        // of the main file alone would miss them.
        let copy = |name: &str| {
            let p = dir.path().join(name);
            std::fs::copy(&db, &p).expect("copy");
            for suffix in ["-wal", "-shm"] {
                let from = PathBuf::from(format!("{}{suffix}", db.display()));
                let to = PathBuf::from(format!("{}{suffix}", p.display()));
                if from.exists() {
                    std::fs::copy(&from, &to).expect("copy the log");
                }
            }
            p
        };
        let verify = |p: &Path| croupier(&["audit", "verify", "--db", &p.display().to_string()], None);

        let edited = copy("edited.db");
        tamper(&edited, &["UPDATE audit SET reason = 'nothing happened' WHERE seq = 4"]).await;
        let out = verify(&edited);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 4: edited"), "{}", text(&out));
        // A backup's verification sees it too.
        assert!(croupier::store::verify(&edited).await.is_err());

        let deleted = copy("deleted.db");
        tamper(&deleted, &["DELETE FROM audit WHERE seq = 2"]).await;
        let out = verify(&deleted);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 2: deleted"), "{}", text(&out));

        // Inserted: a row forged with a valid hash (made by the library on a copy cut
        // after seq 2), slipped in as seq 3 with the later rows renumbered.
        let forge = copy("forge.db");
        tamper(&forge, &["DELETE FROM audit WHERE seq > 2"]).await;
        let pool = croupier::auth::open_pool(&forge).await.expect("pool");
        croupier::store::audit::append_now(
            &pool,
            &croupier::store::audit::AuditEntry::new("user:1", "alarm_clear").reason("forged"),
        )
        .await
        .expect("forge");
        let forged: (String, String, String, Vec<u8>, Vec<u8>) =
            sqlx::query_as("SELECT at, actor, action, prev_hash, hash FROM audit WHERE seq = 3")
                .fetch_one(&pool)
                .await
                .expect("forged row");
        pool.close().await;
        let inserted = copy("inserted.db");
        {
            use sqlx::{Connection, Executor};
            tamper(&inserted, &["UPDATE audit SET seq = seq + 100 WHERE seq >= 3", "UPDATE audit SET seq = seq - 99 WHERE seq >= 100"]).await;
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", inserted.display()))
                .await
                .expect("open");
            sqlx::query(
                "INSERT INTO audit (seq, at, actor, action, subject, old_value, new_value, reason, detail, prev_hash, hash) \
                 VALUES (3, ?, ?, ?, '', NULL, NULL, 'forged', '{}', ?, ?)",
            )
            .bind(&forged.0)
            .bind(&forged.1)
            .bind(&forged.2)
            .bind(&forged.3)
            .bind(&forged.4)
            .execute(&mut conn)
            .await
            .expect("insert");
            conn.execute("SELECT 1").await.expect("still open");
            conn.close().await.expect("close");
        }
        let out = verify(&inserted);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 3: inserted"), "{}", text(&out));

        // The untouched original still verifies.
        assert!(verify(&db).status.success());
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_and_alarm_commands_work_while_the_service_runs() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let card: croupier_drivers::ShoeItem =
            croupier_drivers::ShoeItem::Card("QS".parse().expect("card"));
        let sim = SimShoe::start(SimConfig {
            items: vec![card; 3],
            ..SimConfig::default()
        })
        .expect("pty");
        let cfg = common::config_file(dir.path(), &sim.path(), "deluxe");
        let cfgs = cfg.display().to_string();
        let mut p = common_proc::spawn(&cfg, &dir.path().join("croupier.log")).await;

        // `user add` while the service holds the database's lock.
        let out = add_user(&cfgs, "77", "Sam Super", "supervisor", "2468");
        assert!(out.status.success(), "{}", text(&out));
        let out = add_user(&cfgs, "78", "Dee Dealer", "dealer", "1357");
        assert!(out.status.success(), "{}", text(&out));
        // The policy and duplicates are refused with a reason.
        let out = add_user(&cfgs, "79", "X", "dealer", "12");
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("4 to 12 digits"), "{}", text(&out));
        let out = add_user(&cfgs, "77", "X", "dealer", "1234");
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("already exists"), "{}", text(&out));
        // Without --secret-stdin and without a terminal, it says how.
        let out = croupier(
            &["user", "passwd", "--config", &cfgs, "--badge", "77"],
            None,
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("--secret-stdin"), "{}", text(&out));
        let out = croupier(&["user", "list", "--config", &cfgs], None);
        let listed = text(&out);
        assert!(
            listed.contains("77") && listed.contains("supervisor") && listed.contains("active"),
            "{listed}"
        );

        // The new supervisor logs in at once.
        p.login("77", "2468").await;
        let me = p.get("/api/me").await;
        assert_eq!(me["name"], "Sam Super");

        // A card now is refused: the table locks.
        assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
        let locked = |p: &common_proc::Proc| {
            let p_addr = p.addr.clone();
            let headers = p.headers.clone();
            async move {
                for _ in 0..100 {
                    let h: Vec<(&str, &str)> = headers
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let r = request_with(&p_addr, "GET", "/api/alarm", None, &h, STEP)
                        .await
                        .expect("alarm");
                    if r.body.contains("\"locked\"") {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                false
            }
        };
        assert!(locked(&p).await, "the table locks");
        // A dealer's badge cannot clear it; the supervisor's can.
        let out = croupier(
            &[
                "alarm",
                "clear",
                "--config",
                &cfgs,
                "--addr",
                &p.addr,
                "--reason",
                "misdeal",
                "--badge",
                "78",
                "--secret-stdin",
            ],
            Some("1357\n"),
        );
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("403"), "{}", text(&out));
        // Said for people: the API's message and code, not its raw JSON.
        assert!(
            text(&out).contains("refused: ") && !text(&out).contains("{\""),
            "{}",
            text(&out)
        );
        let out = croupier(
            &[
                "alarm",
                "clear",
                "--config",
                &cfgs,
                "--addr",
                &p.addr,
                "--reason",
                "card removed",
                "--badge",
                "77",
                "--secret-stdin",
            ],
            Some("2468\n"),
        );
        assert!(out.status.success(), "{}", text(&out));
        // Again, with the local token (as the service's user on the table's machine).
        assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
        assert!(locked(&p).await, "the table locks again");
        let out = croupier(
            &[
                "alarm",
                "clear",
                "--config",
                &cfgs,
                "--addr",
                &p.addr,
                "--reason",
                "second card removed",
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out));

        // `user disable` while running ends the session.
        let out = croupier(
            &[
                "user",
                "disable",
                "--config",
                &cfgs,
                "--badge",
                "77",
                "--reason",
                "shift over",
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out));
        let h: Vec<(&str, &str)> = p
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = request_with(&p.addr, "GET", "/api/me", None, &h, STEP)
            .await
            .expect("me");
        assert_eq!(r.status, 401);

        let db = dir.path().join("croupier.db");
        let rows = audit_rows(&db).await;
        let clears: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r.action == "alarm_clear")
            .map(|r| (r.actor.as_str(), r.reason.as_str()))
            .collect();
        assert_eq!(clears.len(), 2, "{clears:?}");
        assert_eq!(clears[0], ("user:77", "card removed"));
        // The local token is one actor whoever holds it (no header names anyone).
        assert_eq!(clears[1].0, "local", "{clears:?}");
        assert!(rows
            .iter()
            .any(|r| r.action == "user_add" && r.subject == "77" && r.actor.starts_with("cli:")));
        // Every command kept the chain intact.
        let out = croupier(&["audit", "verify", "--config", &cfgs], None);
        assert!(out.status.success(), "{}", text(&out));
        assert!(p.terminate());
    })
    .await
    .expect("bounded");
}

#[path = "common/proc.rs"]
mod common_proc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_change_is_audited_once() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let mut config = common::config(dir.path(), &sim.path(), "deluxe");
        let db = config.store.path.clone();
        running::start(config.clone()).await.stop().await;
        running::start(config.clone()).await.stop().await;
        let rows: Vec<_> = audit_rows(&db)
            .await
            .into_iter()
            .filter(|r| r.action == "config")
            .collect();
        assert_eq!(rows.len(), 1, "an unchanged config is not recorded again");
        config.table.name = "Renamed".into();
        running::start(config).await.stop().await;
        let rows: Vec<_> = audit_rows(&db)
            .await
            .into_iter()
            .filter(|r| r.action == "config")
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].old_value, rows[0].new_value);
        let new: Value =
            serde_json::from_str(rows[1].new_value.as_deref().expect("new")).expect("json");
        assert_eq!(new["config"]["table"]["name"], "Renamed");
        assert_eq!(rows[1].actor, "system");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_is_served_over_tls_with_secure_cookies() {
    timeout(Duration::from_secs(90), async {
        use rustls_pki_types::pem::PemObject;
        let dir = tempfile::tempdir().expect("tempdir");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
        let cert_pem = cert.cert.pem();
        std::fs::write(dir.path().join("cert.pem"), &cert_pem).expect("write");
        std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem()).expect("write");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let mut config = common::config(dir.path(), &sim.path(), "deluxe");
        config.http.tls = Some(croupier::table::config::TlsSection {
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
        });
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;

        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls_pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("pem"))
            .expect("root");
        let client = std::sync::Arc::new(
            rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
        );
        let https = |request: String| {
            let client = client.clone();
            async move {
                let tcp = tokio::net::TcpStream::connect(run.addr).await.expect("tcp");
                let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
                let mut tls = tokio_rustls::TlsConnector::from(client)
                    .connect(name, tcp)
                    .await
                    .expect("TLS handshake with the configured certificate");
                tls.write_all(request.as_bytes()).await.expect("write");
                let mut raw = Vec::new();
                let _ = tls.read_to_end(&mut raw).await;
                croupier::web::client::parse("tls", &raw).expect("http")
            }
        };
        let body = r#"{"badge": "d1", "secret": "1111"}"#;
        let reply = https(format!(
            "POST /api/login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ))
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let set = reply.headers.iter().find(|(k, _)| k == "set-cookie").map(|(_, v)| v.clone()).expect("cookie");
        assert!(set.contains("; Secure"), "{set}");
        let cookie = reply.session_cookie().expect("cookie");
        let reply = https(format!(
            "GET /api/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nCookie: {cookie}\r\n\r\n"
        ))
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(reply.body.contains("\"d1\""), "{}", reply.body);
        // The public feed over TLS: a viewer with a task of its own (the fan-out's shards
        // write to plain TCP only), starting from a resync view.
        {
            let tcp = tokio::net::TcpStream::connect(run.addr).await.expect("tcp");
            let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
            let tls = tokio_rustls::TlsConnector::from(client.clone())
                .connect(name, tcp)
                .await
                .expect("TLS handshake");
            let (mut ws, _) = tokio_tungstenite::client_async("wss://localhost/ws/public", tls)
                .await
                .expect("wss upgrade");
            let first = timeout(Duration::from_secs(10), futures::StreamExt::next(&mut ws))
                .await
                .expect("a message")
                .expect("open")
                .expect("ok");
            let v: Value = serde_json::from_str(first.to_text().expect("text")).expect("json");
            assert_eq!(v["resync"], true, "{v}");
        }
        // Plain HTTP on the TLS port gets no answer from the API.
        let plain = request_with(&run.addr.to_string(), "GET", "/api/public", None, &[], Duration::from_secs(3)).await;
        assert!(plain.map(|r| r.status != 200).unwrap_or(true));
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// Issue #32 item 14: what the contract fuzzers found. Every request body has a schema of
/// its own (the players' `BetBody` had replaced the staff's, whose seat is required); a
/// seat, box or hand ends at 255; a POST that reads nothing documents the JSON body its
/// session requests must send (it answered 415 with no body in the contract).
#[test]
fn the_openapi_document_says_what_the_service_accepts() {
    let doc: Value = serde_json::from_str(
        &croupier::web::openapi::document()
            .to_json()
            .expect("the document serialises"),
    )
    .expect("openapi.json");
    let body = |path: &str| {
        let r = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
            ["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{path} has a JSON body"))
            .rsplit('/')
            .next()
            .expect("name")
            .to_string();
        doc["components"]["schemas"][r.as_str()].clone()
    };
    let required = |schema: &Value, field: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|f| f == field))
    };
    assert!(
        required(&body("/api/bets"), "seat"),
        "{}",
        body("/api/bets")
    );
    assert!(!required(&body("/api/play/bet"), "seat"));
    assert!(required(&body("/api/decision"), "seat"));
    assert_ne!(body("/api/decision"), body("/api/play/decision"));
    assert_eq!(doc["components"]["schemas"]["u8"]["maximum"], 255);
    assert_eq!(body("/api/bets")["properties"]["seat"]["maximum"], 255);
    for path in [
        "/api/betting/open",
        "/api/betting/close",
        "/api/shuffle",
        "/api/logout",
    ] {
        assert_eq!(body(path)["type"], "object", "{path}");
    }
}

#[test]
fn the_openapi_document_declares_every_route_with_its_method_and_role() {
    let doc: Value = serde_json::from_str(
        &croupier::web::openapi::document()
            .to_json()
            .expect("the document serialises"),
    )
    .expect("openapi.json");
    // The catch-all answers 404 `not_found` for any other /api/ path: the document's
    // description says so; a path template cannot.
    let specs: Vec<_> = croupier::web::route_specs()
        .into_iter()
        .filter(|s| s.path != "/api/{*rest}")
        .collect();
    for spec in &specs {
        let op = &doc["paths"][spec.path][spec.method.to_ascii_lowercase()];
        assert!(
            op.is_object(),
            "{} {} is not in openapi.json",
            spec.method,
            spec.path
        );
        match spec.access {
            Access::Public | Access::Open => {
                assert_eq!(op["security"], serde_json::json!([]), "{}", spec.path);
                assert!(op.get("x-min-role").is_none(), "{}", spec.path);
            }
            Access::Player | Access::Platform => {
                let scheme = if spec.access == Access::Player {
                    "playerToken"
                } else {
                    "platformKey"
                };
                assert_eq!(
                    op["security"],
                    serde_json::json!([{ scheme: [] }]),
                    "{}",
                    spec.path
                );
                assert!(op.get("x-min-role").is_none(), "{}", spec.path);
                assert!(op["responses"]["401"].is_object(), "{}", spec.path);
            }
            Access::Role(r) => {
                assert_eq!(op["x-min-role"], r.as_str(), "{}", spec.path);
                let schemes: Vec<&str> = op["security"]
                    .as_array()
                    .expect("security")
                    .iter()
                    .flat_map(|req| req.as_object().expect("requirement").keys())
                    .map(String::as_str)
                    .collect();
                assert_eq!(schemes, ["session", "localToken"], "{}", spec.path);
                assert!(
                    op["responses"]["401"].is_object() && op["responses"]["403"].is_object(),
                    "{}",
                    spec.path
                );
            }
        }
    }
    // And the other way: the document lists nothing the router does not serve.
    let methods = doc["paths"].as_object().expect("paths");
    for (path, item) in methods {
        for method in item.as_object().expect("path item").keys() {
            if method == "parameters" {
                continue;
            }
            assert!(
                specs
                    .iter()
                    .any(|s| s.path == path && s.method.eq_ignore_ascii_case(method)),
                "{method} {path} is documented but not routed"
            );
        }
    }
    // Every schema the document refers to is defined (`Resolution` among them).
    let text = doc.to_string();
    for (i, _) in text.match_indices("#/components/schemas/") {
        let name: String = text[i + 21..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        assert!(
            doc["components"]["schemas"][&name].is_object(),
            "schema {name} is referred to but not defined"
        );
    }
    assert!(
        text.contains("#/components/schemas/Resolution"),
        "the propose body names the Resolution schema"
    );
    // Readiness names every reason /readyz gives.
    let reasons = &doc["components"]["schemas"]["Reason"]["enum"];
    for reason in [
        "store",
        "shoe",
        "alarm",
        "dispute",
        "table_loop",
        "publish_lag",
    ] {
        assert!(
            reasons
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x == reason)),
            "readiness reason {reason} missing: {reasons}"
        );
    }
    // One error body: every JSON error answer documented is the Error schema.
    for (path, item) in methods {
        for (method, op) in item.as_object().expect("path item") {
            for (status, resp) in op["responses"].as_object().expect("responses") {
                if status.starts_with('4') || status.starts_with('5') {
                    let json = &resp["content"]["application/json"];
                    if json.is_object() && path != "/readyz" {
                        assert_eq!(
                            json["schema"]["$ref"], "#/components/schemas/Error",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
    }
}
