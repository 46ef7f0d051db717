//! The HTTP edge (issue #18 item 1, #17 item 5) against the real service over raw TCP:
//! half-sent, silent and idle keep-alive connections are closed by the header timeout; an
//! oversize body gets 413 before any handler and changes nothing; with the public cap or
//! the public share of the connections exhausted by held-open streams, staff routes still
//! answer; the pages carry the security headers, validators and compression; request ids
//! are made and echoed.

use crate::common;
use crate::running;

use croupier::table::TableConfig;
use croupier_drivers::sim::{SimConfig, SimShoe};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

/// One response read off a raw connection.
#[derive(Debug)]
struct Resp {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

/// Reads one response head (and a `Content-Length` body) from `s`; `None` at EOF.
async fn read_response(s: &mut TcpStream, with_body: bool) -> Option<Resp> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = timeout(STEP, s.read(&mut byte))
            .await
            .expect("a response in time")
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).expect("utf-8 head");
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let mut resp = Resp {
        status,
        head,
        body: Vec::new(),
    };
    if with_body {
        let len: usize = resp
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        resp.body = vec![0; len];
        timeout(STEP, s.read_exact(&mut resp.body))
            .await
            .expect("the body in time")
            .expect("the body");
    }
    Some(resp)
}

/// Sends `req` on a new connection and reads the response.
async fn send(addr: &str, req: &str) -> Resp {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(req.as_bytes()).await.expect("send");
    let mut r = read_response(&mut s, false).await.expect("a response");
    // Every request here says `Connection: close`: the body (framing and all) is the rest.
    timeout(STEP, s.read_to_end(&mut r.body))
        .await
        .expect("the body in time")
        .expect("the body");
    r
}

fn get(path: &str, extra: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n")
}

/// Waits for the server to close `s` (reading and dropping whatever it still sends);
/// panics if it is still open after `within`.
async fn closed_within(s: &mut TcpStream, within: Duration, what: &str) {
    let mut buf = [0u8; 512];
    let closed = timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "{what}: still open after {within:?}");
}

/// Whether the server keeps `s` open for `for_at_least` (nothing read, no EOF).
async fn stays_open(s: &mut TcpStream, for_at_least: Duration) -> bool {
    let mut buf = [0u8; 1];
    timeout(for_at_least, s.read(&mut buf)).await.is_err()
}

async fn start(
    edit: impl FnOnce(&mut TableConfig),
) -> (tempfile::TempDir, SimShoe, running::Running) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
    let mut config = common::config(dir.path(), &sim.path(), "deluxe");
    edit(&mut config);
    let run = running::start(config).await;
    (dir, sim, run)
}

fn bearer(dir: &tempfile::TempDir) -> String {
    let token = croupier::auth::local_token::read(&dir.path().join("croupier.db"))
        .expect("the local token");
    format!("Authorization: Bearer {token}\r\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_silent_and_idle_connections_are_closed() {
    let (_dir, _sim, run) = start(|c| c.http.header_timeout_ms = 500).await;
    let addr = run.addr.to_string();

    // Half a request head, then nothing.
    let mut half = TcpStream::connect(&addr).await.expect("connect");
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        .await
        .expect("send");
    // Connected and silent.
    let mut silent = TcpStream::connect(&addr).await.expect("connect");
    // A complete request on a keep-alive connection, then idle.
    let mut idle = TcpStream::connect(&addr).await.expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .expect("send");
    let r = read_response(&mut idle, true).await.expect("a response");
    assert_eq!((r.status, &r.body[..]), (200, &b"ok\n"[..]));
    assert_ne!(r.header("connection").as_deref(), Some("close"), "{r:?}");

    closed_within(&mut half, STEP, "a half-sent request head").await;
    closed_within(&mut silent, STEP, "a silent connection").await;
    closed_within(&mut idle, STEP, "an idle keep-alive connection").await;

    // The default timeout leaves a connection that is about to send its request alone.
    run.stop().await;
    let (_dir, _sim, run) = start(|_| {}).await;
    let mut patient = TcpStream::connect(run.addr).await.expect("connect");
    assert!(
        stays_open(&mut patient, Duration::from_millis(1500)).await,
        "the default header timeout (10 s) closed a connection after 1.5 s"
    );
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_body_gets_413_and_changes_nothing() {
    let (dir, _sim, run) = start(|c| c.http.body_limit_bytes = 4096).await;
    let addr = run.addr.to_string();
    let auth = bearer(&dir);
    let before = run.handle.snapshot().seq;

    // A valid input padded with spaces past the limit: declared length, then chunked.
    let body = format!(
        "{{\"bets\": [{{\"seat\": 1, \"main\": 100, \"side\": []}}]}}{}",
        " ".repeat(5000)
    );
    let declared = format!(
        "POST /api/input HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let r = send(&addr, &declared).await;
    assert_eq!(r.status, 413, "{r:?}");
    let chunked = format!(
        "POST /api/input HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let r = send(&addr, &chunked).await;
    assert_eq!(r.status, 413, "{r:?}");
    assert_eq!(
        run.handle.snapshot().seq,
        before,
        "a refused body changed the table"
    );

    // The same input under the limit is taken: the 413s were the size, not the input.
    let small = "{\"bets\": [{\"seat\": 1, \"main\": 100, \"side\": []}]}";
    let ok = format!(
        "POST /api/input HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{small}",
        small.len()
    );
    let r = send(&addr, &ok).await;
    assert_eq!(r.status, 200, "{r:?} {}", String::from_utf8_lossy(&r.body));
    assert!(run.handle.snapshot().seq > before);
    run.stop().await;
}

/// Opens a `/sse/public` stream and returns it once its head says 200 (or the status).
async fn open_sse(addr: &str) -> (u16, TcpStream) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"GET /sse/public HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .expect("send");
    let r = read_response(&mut s, false).await.expect("a response head");
    (r.status, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_open_public_streams_leave_room_for_staff() {
    // 16 connections, 4 kept for staff, 1 always waiting for the next connection: the 12th
    // public stream is refused.
    let (dir, _sim, run) = start(|c| {
        c.http.max_connections = 16;
        c.http.staff_reserve = 4;
    })
    .await;
    let addr = run.addr.to_string();
    let auth = bearer(&dir);
    let mut held = Vec::new();
    for i in 0..11 {
        let (status, s) = open_sse(&addr).await;
        assert_eq!(status, 200, "public stream {i}");
        held.push(s);
    }
    let (status, _) = open_sse(&addr).await;
    assert_eq!(status, 503, "a public stream beyond the public share");
    let r = send(&addr, &get("/api/public", "")).await;
    assert_eq!(r.status, 503, "any public request beyond the public share");
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert_eq!(r.header("retry-after").as_deref(), Some("5"));

    // Staff still get in: the API with the token, the panel, its files, health.
    for (path, extra) in [
        ("/api/me", auth.as_str()),
        ("/api/view", auth.as_str()),
        ("/", ""),
        ("/ui/panel.js", ""),
        ("/healthz", ""),
    ] {
        let r = send(&addr, &get(path, extra)).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    // Streams that end give their place back.
    held.truncate(8);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _s) = open_sse(&addr).await;
    assert_eq!(status, 200, "a public stream after others ended");
    drop(held);
    run.stop().await;

    // The public cap counts `/ws/public` viewers (handed to the fan-out) and SSE streams.
    let (dir, _sim, run) = start(|c| c.http.max_public = 6).await;
    let addr = run.addr.to_string();
    let auth = bearer(&dir);
    let mut viewers = Vec::new();
    for _ in 0..3 {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws/public"))
            .await
            .expect("a public viewer");
        viewers.push(ws);
    }
    // The fan-out counts a viewer once its shard has it.
    timeout(STEP, async {
        loop {
            let m = send(&addr, &get("/metrics", "")).await;
            if String::from_utf8_lossy(&m.body)
                .contains("croupier_subscribers{stream=\"public_ws\"} 3")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("three public viewers counted");
    let mut streams = Vec::new();
    for _ in 0..3 {
        let (status, s) = open_sse(&addr).await;
        assert_eq!(status, 200);
        streams.push(s);
    }
    let (status, _) = open_sse(&addr).await;
    assert_eq!(status, 503, "the 7th public stream with max_public = 6");
    let refused = tokio_tungstenite::connect_async(format!("ws://{addr}/ws/public")).await;
    assert!(refused.is_err(), "the 7th public viewer was let in");
    let r = send(&addr, &get("/api/me", &auth)).await;
    assert_eq!(r.status, 200, "staff beside a full public cap: {r:?}");
    drop(viewers);
    drop(streams);
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_carry_security_headers_validators_and_request_ids() {
    let (_dir, _sim, run) = start(|_| {}).await;
    let addr = run.addr.to_string();
    for path in [
        "/",
        "/public",
        "/status",
        "/ui/panel.js",
        "/healthz",
        "/api/public",
    ] {
        let r = send(&addr, &get(path, "")).await;
        assert_eq!(r.status, 200, "{path}");
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert_eq!(
            r.header("x-frame-options").as_deref(),
            Some("DENY"),
            "{path}"
        );
        assert_eq!(
            r.header("referrer-policy").as_deref(),
            Some("no-referrer"),
            "{path}"
        );
        assert_eq!(
            r.header("x-content-type-options").as_deref(),
            Some("nosniff"),
            "{path}"
        );
        // Short answers keep their length (the public gate's body forwards its size).
        assert!(r.header("content-length").is_some(), "{path}: {r:?}");
        // A request id is made for every request and echoed.
        let id = r.header("x-request-id").unwrap_or_default();
        assert_eq!(id.len(), 36, "{path}: request id {id:?}");
        // The pages hold no inline script or handler (the CSP would block it).
        if r.header("content-type")
            .unwrap_or_default()
            .starts_with("text/html")
        {
            let html = String::from_utf8_lossy(&r.body).to_lowercase();
            for (i, _) in html.match_indices("<script") {
                let tag = &html[i..html[i..].find('>').map_or(html.len(), |e| i + e)];
                assert!(tag.contains("src="), "{path}: inline script {tag}");
            }
            assert!(!html.contains(" onclick="), "{path}: inline handler");
        }
    }
    // A request id the client sends is kept.
    let r = send(&addr, &get("/healthz", "x-request-id: abc-123\r\n")).await;
    assert_eq!(r.header("x-request-id").as_deref(), Some("abc-123"));
    let a = send(&addr, &get("/healthz", ""))
        .await
        .header("x-request-id");
    let b = send(&addr, &get("/healthz", ""))
        .await
        .header("x-request-id");
    assert_ne!(a, b, "each request gets its own id");

    // The embedded files: revalidated every load, 304 while unchanged, gzip on request.
    let r = send(&addr, &get("/ui/panel.js", "")).await;
    assert_eq!(r.header("cache-control").as_deref(), Some("no-cache"));
    let etag = r.header("etag").expect("an ETag");
    let full = r.body.len();
    let again = send(
        &addr,
        &get("/ui/panel.js", &format!("If-None-Match: {etag}\r\n")),
    )
    .await;
    assert_eq!(again.status, 304, "{again:?}");
    assert!(again.body.is_empty());
    let other = send(&addr, &get("/ui/panel.js", "If-None-Match: \"stale\"\r\n")).await;
    assert_eq!(other.status, 200);
    let zipped = send(&addr, &get("/ui/panel.js", "Accept-Encoding: gzip\r\n")).await;
    assert_eq!(
        zipped.header("content-encoding").as_deref(),
        Some("gzip"),
        "{zipped:?}"
    );
    assert!(
        zipped.body.len() < full / 2,
        "gzip {} of {full}",
        zipped.body.len()
    );
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_gets_408_while_streams_outlive_the_request_timeout() {
    // The shortest timeout allowed: just above the long poll's 30 s.
    let (_dir, _sim, run) = start(|c| c.http.request_timeout_ms = 30_001).await;
    let addr = run.addr.to_string();
    let (status, mut stream) = open_sse(&addr).await;
    assert_eq!(status, 200);
    // A login whose body never finishes arriving.
    let mut slow = TcpStream::connect(&addr).await.expect("connect");
    slow.write_all(
        b"POST /api/login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"badge\":",
    )
    .await
    .expect("send");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    let answered = timeout(Duration::from_secs(45), async {
        while !head.ends_with(b"\r\n\r\n") {
            if slow.read(&mut byte).await.expect("read") == 0 {
                break;
            }
            head.push(byte[0]);
        }
    })
    .await;
    assert!(answered.is_ok(), "no answer to a stalled body within 45 s");
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    // The SSE stream opened before it is still open (the timeout is not the streams').
    let mut buf = [0u8; 4096];
    let alive = timeout(Duration::from_millis(200), stream.read(&mut buf)).await;
    assert!(
        !matches!(alive, Ok(Ok(0)) | Ok(Err(_))),
        "the public stream was closed with the slow request"
    );
    run.stop().await;
}
