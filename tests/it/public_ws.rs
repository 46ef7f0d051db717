//! `/ws/public` through the fan-out (`web::fanout`), over real sockets: three viewers per
//! shard each get every message in order; what viewers send is answered as RFC
//! 6455 says (a ping with its pong, a close with a close and the end of the connection,
//! a protocol violation with close code 1002 or 1009); a plain GET is a 400; a feed with
//! no viewer rests, and a viewer who comes back gets the state then and what follows.

use crate::common;
use crate::running;

use common::session;
use croupier::store::Source;
use croupier_drivers::sim::{SimConfig, SimShoe};
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;

const STEP: Duration = Duration::from_secs(10);

/// A raw client after its handshake, with what came after the response head.
async fn handshake(addr: SocketAddr) -> (TcpStream, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let key = "dGhlIHNhbXBsZSBub25jZQ==";
    stream
        .write_all(
            format!(
                "GET /ws/public HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .expect("write");
    let mut got = Vec::new();
    let end = loop {
        let mut chunk = [0u8; 1024];
        let n = timeout(STEP, stream.read(&mut chunk))
            .await
            .expect("a response")
            .expect("read");
        assert!(n > 0, "closed during the handshake");
        got.extend_from_slice(&chunk[..n]);
        if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    // RFC 6455, section 1.3: the accept key for this nonce.
    assert!(
        head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{head}"
    );
    (stream, got[end..].to_vec())
}

/// The next server frame: (first byte, payload). `None` at the end of the stream.
async fn next_frame(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(u8, Vec<u8>)> {
    loop {
        if buf.len() >= 2 {
            assert_eq!(buf[1] & 0x80, 0, "server frames are not masked");
            let (head, len) = match buf[1] {
                126 if buf.len() >= 4 => (4, usize::from(u16::from_be_bytes([buf[2], buf[3]]))),
                127 if buf.len() >= 10 => (
                    10,
                    u64::from_be_bytes(buf[2..10].try_into().expect("8 bytes")) as usize,
                ),
                126 | 127 => (usize::MAX, 0),
                n => (2, usize::from(n)),
            };
            if head != usize::MAX && buf.len() >= head + len {
                let first = buf[0];
                let payload = buf[head..head + len].to_vec();
                buf.drain(..head + len);
                return Some((first, payload));
            }
        }
        let mut chunk = [0u8; 4096];
        let n = timeout(STEP, stream.read(&mut chunk))
            .await
            .expect("a frame or the end in time")
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A masked client frame.
fn client_frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    // Built by hand: the tests send frames no WebSocket library would (unmasked,
    // reserved bits, bad opcodes).
    let mut out = vec![first];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= usize::from(u16::MAX) => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Reads frames until a close; returns its code, then checks the connection ends.
async fn close_code(stream: &mut TcpStream, buf: &mut Vec<u8>) -> u16 {
    loop {
        let (first, payload) = next_frame(stream, buf).await.expect("a close frame");
        match first {
            0x81 => continue, // feed messages sent before the close
            0x88 => {
                assert!(payload.len() >= 2, "a close code");
                let code = u16::from_be_bytes([payload[0], payload[1]]);
                assert!(
                    next_frame(stream, buf).await.is_none(),
                    "the server ends the connection after its close"
                );
                return code;
            }
            other => panic!("unexpected frame {other:#x}"),
        }
    }
}

/// A table on the built-in Deluxe config with an idle PTY shoe.
async fn serve() -> (tempfile::TempDir, SimShoe, running::Running) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
    let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
    (dir, sim, run)
}

/// Opens a WebSocket at `addr`, writes `bytes`: the close code the server answers with.
async fn closes_with(addr: SocketAddr, bytes: &[u8]) -> u16 {
    let (mut stream, mut buf) = handshake(addr).await;
    stream.write_all(bytes).await.expect("write");
    close_code(&mut stream, &mut buf).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_viewer_on_every_shard_gets_every_message_in_order() {
    timeout(Duration::from_secs(180), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let (inputs, _, _) = session("deluxe", 11, 6);
        let sim = common::session_shoe(&inputs);
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let h = &run.handle;
        // Every shard filled to FILL, then one more each (so every shard serves someone).
        use croupier::web::fanout::{Fanout, FILL};
        let mut viewers = Vec::new();
        for _ in 0..(FILL + 1) * Fanout::shards_for_this_machine() {
            let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws/public", run.addr))
                .await
                .expect("ws");
            viewers.push(ws);
        }
        common::feed_session(h, &sim, &inputs).await;
        let last_seq = h.snapshot().seq;
        let mut seen: Vec<Vec<String>> = Vec::new();
        for ws in &mut viewers {
            let got = read_to(ws, last_seq).await;
            assert_eq!(
                got[0]["resync"], true,
                "a new viewer starts from a resync view"
            );
            seen.push(got.iter().map(|v| v["id"].to_string()).collect());
        }
        // Same messages for everyone after the first viewer's starting point.
        let longest = seen.iter().map(Vec::len).max().expect("viewers");
        assert!(longest > 30, "a real session: {longest} messages");
        for ids in &seen {
            assert_eq!(ids.last(), seen[0].last());
        }
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_gets_its_pong_and_the_feed_goes_on() {
    timeout(Duration::from_secs(60), async {
        let (_dir, _sim, run) = serve().await;
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws/public", run.addr))
            .await
            .expect("ws");
        let first = timeout(STEP, ws.next())
            .await
            .expect("a resync")
            .expect("open")
            .expect("ok");
        let first: Value = serde_json::from_str(first.to_text().expect("text")).expect("json");
        ws.send(Message::Ping(b"are you there".to_vec().into()))
            .await
            .expect("ping");
        let pong = timeout(STEP, ws.next())
            .await
            .expect("a pong")
            .expect("open")
            .expect("ok");
        assert_eq!(pong, Message::Pong(b"are you there".to_vec().into()));
        // The next change reaches the same viewer, right after what it had.
        run.handle
            .submit(croupier::engine::Input::Shuffle, Source::Api)
            .await
            .expect("shuffle");
        let next = timeout(STEP, ws.next())
            .await
            .expect("a view")
            .expect("open")
            .expect("ok");
        let next: Value = serde_json::from_str(next.to_text().expect("text")).expect("json");
        assert_eq!(
            next["n"].as_u64(),
            first["n"].as_u64().map(|n| n + 1),
            "{next}"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_is_answered_with_a_close_and_the_end_of_the_connection() {
    timeout(Duration::from_secs(60), async {
        let (_dir, _sim, run) = serve().await;
        assert_eq!(
            closes_with(run.addr, &client_frame(0x88, &1001u16.to_be_bytes())).await,
            1001,
            "the code is echoed"
        );
        // Codes that must never be sent on the wire (1005, 1006, 1015, unassigned ranges)
        // are a protocol error (RFC 6455, section 7.4): answered with 1002.
        for bad in [1005u16, 1006, 1015, 999, 1004, 2000, 5000] {
            assert_eq!(
                closes_with(run.addr, &client_frame(0x88, &bad.to_be_bytes())).await,
                1002,
                "close {bad}"
            );
        }
        // A close with no code is answered with 1000.
        assert_eq!(closes_with(run.addr, &client_frame(0x88, b"")).await, 1000);
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_violations_close_the_connection_with_their_code() {
    timeout(Duration::from_secs(60), async {
        let (_dir, _sim, run) = serve().await;
        // Unmasked (only servers may send those).
        assert_eq!(closes_with(run.addr, &[0x81, 0x02, b'h', b'i']).await, 1002);
        // A ping split over two writes is still one ping; then an unknown opcode.
        let (mut stream, mut buf) = handshake(run.addr).await;
        let ping = client_frame(0x89, b"x");
        stream.write_all(&ping[..3]).await.expect("write");
        tokio::time::sleep(Duration::from_millis(50)).await;
        stream.write_all(&ping[3..]).await.expect("write");
        loop {
            let (first, payload) = next_frame(&mut stream, &mut buf).await.expect("a pong");
            if first == 0x8A {
                assert_eq!(payload, b"x");
                break;
            }
        }
        stream
            .write_all(&client_frame(0x83, b"?"))
            .await
            .expect("write");
        assert_eq!(close_code(&mut stream, &mut buf).await, 1002);
        // Text that is not UTF-8: 1007. Text split mid-character over two fragments is fine.
        let (mut stream, mut buf) = handshake(run.addr).await;
        let euro = "€".as_bytes();
        stream
            .write_all(&client_frame(0x01, &euro[..1]))
            .await
            .expect("write");
        stream
            .write_all(&client_frame(0x80, &euro[1..]))
            .await
            .expect("write");
        stream
            .write_all(&client_frame(0x89, b"y"))
            .await
            .expect("write");
        loop {
            let (first, payload) = next_frame(&mut stream, &mut buf).await.expect("a pong");
            assert_ne!(first, 0x88, "split UTF-8 is valid: {payload:?}");
            if first == 0x8A {
                break;
            }
        }
        stream
            .write_all(&client_frame(0x81, b"\xff\xfe"))
            .await
            .expect("write");
        assert_eq!(close_code(&mut stream, &mut buf).await, 1007);
        // A continuation with nothing to continue: 1002.
        assert_eq!(closes_with(run.addr, &client_frame(0x80, b"x")).await, 1002);
        // One byte more than the server takes (64 KiB): refused from its header alone
        // (length and masking key; none of the payload is sent, so none is buffered).
        assert_eq!(
            closes_with(
                run.addr,
                &[
                    0x82,
                    0x80 | 127,
                    0,
                    0,
                    0,
                    0,
                    0,
                    1,
                    0,
                    1,
                    0x37,
                    0xfa,
                    0x21,
                    0x3d,
                ]
            )
            .await,
            1009
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_with_a_bad_key_or_over_http_1_0_is_a_400() {
    timeout(Duration::from_secs(60), async {
        let (_dir, _sim, run) = serve().await;
        let addr = run.addr;
        let ask = |version: &'static str, key: &'static str| async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            let key = if key == "-" {
                String::new()
            } else {
                format!("Sec-WebSocket-Key: {key}\r\n")
            };
            stream
                .write_all(
                    format!(
                        "GET /ws/public {version}\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
                         Connection: Upgrade\r\n{key}Sec-WebSocket-Version: 13\r\n\r\n"
                    )
                    .as_bytes(),
                )
                .await
                .expect("write");
            let mut head = vec![0u8; 12];
            stream.read_exact(&mut head).await.expect("status line");
            String::from_utf8_lossy(&head).into_owned()
        };
        for key in [
            "",
            "-",
            "short",
            "dGhlIHNhbXBsZSBub25jZQ",
            "!!!!!!!!!!!!!!!!!!!!!!==",
        ] {
            let head = ask("HTTP/1.1", key).await;
            assert!(head.ends_with("400"), "key {key:?}: {head}");
        }
        let head = ask("HTTP/1.0", "dGhlIHNhbXBsZSBub25jZQ==").await;
        assert!(head.ends_with("400"), "HTTP/1.0: {head}");
        // The same request over HTTP/1.1 with that key is accepted.
        let head = ask("HTTP/1.1", "dGhlIHNhbXBsZSBub25jZQ==").await;
        assert!(head.ends_with("101"), "{head}");
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_is_not_an_upgrade_is_a_400() {
    timeout(Duration::from_secs(60), async {
        let (_dir, _sim, run) = serve().await;
        let (status, body) =
            croupier::web::client::request(&run.addr.to_string(), "GET", "/ws/public", None, STEP)
                .await
                .expect("reply");
        assert_eq!(status, 400, "{body}");
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["error"]["code"], "malformed", "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Connection: upgrade")),
            "{v}"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// A `/ws/public` viewer.
type Viewer = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// Reads `ws` until a view of row `seq` or later: every message read, each numbered
/// right after the one before, and none but the first a resync.
async fn read_to(ws: &mut Viewer, seq: u64) -> Vec<Value> {
    let mut got: Vec<Value> = Vec::new();
    loop {
        let m = common::next_message(ws, STEP).await;
        let v: Value = serde_json::from_str(m.to_text().expect("text")).expect("json");
        let n = v["n"].as_u64().expect("n");
        if let Some(p) = got.last().and_then(|p| p["n"].as_u64()) {
            assert_eq!(n, p + 1, "a gap or a repeat after {p}: {v}");
            assert_ne!(v["resync"], true, "only the first message is a resync: {v}");
        }
        let done = v["type"] == "view" && v["seq"].as_u64() >= Some(seq);
        got.push(v);
        if done {
            return got;
        }
    }
}

/// The first event of `/sse/public` resumed after `last_id`, as JSON (asked over HTTP/1.0,
/// so the body is the event stream itself, not chunks).
async fn first_sse_event(addr: SocketAddr, last_id: &str) -> Value {
    let mut tcp = TcpStream::connect(addr).await.expect("tcp");
    tcp.write_all(
        format!("GET /sse/public HTTP/1.0\r\nHost: x\r\nLast-Event-ID: {last_id}\r\n\r\n")
            .as_bytes(),
    )
    .await
    .expect("write");
    let mut text = String::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let data = text
            .split("\r\n\r\n")
            .nth(1)
            .and_then(|body| body.split("\n\n").next().filter(|_| body.contains("\n\n")))
            .and_then(|event| event.lines().find_map(|l| l.strip_prefix("data: ")));
        if let Some(data) = data {
            return serde_json::from_str(data).expect("an event's JSON");
        }
        let k = timeout(STEP, tcp.read(&mut buf))
            .await
            .expect("sse in time")
            .expect("read");
        assert!(k > 0, "sse closed: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..k]));
    }
}

/// The last message's number and id.
fn last_n_id(got: &[Value]) -> (u64, String) {
    let last = got.last().expect("a message");
    (
        last["n"].as_u64().expect("n"),
        last["id"].as_str().expect("id").to_owned(),
    )
}

/// Issue #37: a table's own feed with no viewer for `feed::ALONE` stops making messages
/// (a studio table's players watch through relays), and a viewer who joins then — new, or
/// resuming from an id of before — gets a resync view of the table's state now, numbered
/// right after the last message made, then every message after it with no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_nobody_watches_rests_and_a_viewer_who_joins_gets_now_and_what_follows() {
    timeout(Duration::from_secs(150), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let (inputs, _, _) = session("deluxe", 23, 6);
        let sim = common::session_shoe(&inputs);
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let h = &run.handle;
        let third = inputs.len() / 3;
        let url = format!("ws://{}/ws/public", run.addr);
        // A viewer watches the first third, then leaves.
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("ws");
        common::feed_session(h, &sim, &inputs[..third]).await;
        let (n_left, id_left) = last_n_id(&read_to(&mut ws, h.snapshot().seq).await);
        drop(ws);
        // Nobody watches for longer than ALONE: the second third's first change puts the
        // feed at rest, and the rest of it makes no message.
        tokio::time::sleep(croupier::web::feed::ALONE + Duration::from_millis(500)).await;
        common::feed_session(h, &sim, &inputs[third..2 * third]).await;
        let now = h.snapshot().seq;
        // The first to come back is an SSE client resuming after the last id it had (the
        // feed's `join`; WebSocket viewers reach it through the fan-out's `subscribe`).
        let sse = first_sse_event(run.addr, &id_left).await;
        assert_eq!(sse["resync"], true, "{sse}");
        assert!(sse["seq"].as_u64() >= Some(now), "the state now: {sse}");
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("{url}?after={id_left}"))
            .await
            .expect("ws");
        let back = read_to(&mut ws, now).await.swap_remove(0);
        assert_eq!(back["resync"], true, "{back}");
        assert!(back["seq"].as_u64() >= Some(now), "the state now: {back}");
        // At most the second third's first changes were made into messages before it
        // rested (a view and perhaps a result): not the dozens of the whole third.
        let made = back["n"].as_u64().expect("n") - n_left;
        assert!(
            (1..=4).contains(&made),
            "{made} messages between the viewer who left and the one who came back"
        );
        // A new viewer joins the feed that follows again; both get the last third.
        let (mut new, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("ws");
        let first_new = read_to(&mut new, now).await.swap_remove(0);
        assert_eq!(first_new["resync"], true, "{first_new}");
        common::feed_session(h, &sim, &inputs[2 * third..]).await;
        let end = h.snapshot().seq;
        let (n_back, id_back) = last_n_id(&read_to(&mut ws, end).await);
        let (n_new, id_new) = last_n_id(&read_to(&mut new, end).await);
        assert_eq!((n_back, id_back), (n_new, id_new));
        assert!(
            n_back > back["n"].as_u64().expect("n") + 10,
            "the last third"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}
