//! Who may call what: every route of the router answered by role, from the matrix written out
//! here (a route added without its line fails).

use super::*;

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
    ("GET", "/api/play/history", "/api/play/history", PL),
    ("GET", "/api/play/help", "/api/play/help", PL),
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

        let (run, _fixture) = running::served("deluxe").await;
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
