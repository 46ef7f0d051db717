//! A `/ws/public` viewer that stops reading falls behind, and catches up — never left with
//! a silent gap. The viewer's TCP receive window is made tiny and it reads nothing while a
//! long session is dealt through the PTY shoe, so the server's writes back up and its
//! queue in the fan-out overflows (counted in `/metrics`); the viewer then gets the missed
//! messages from the feed's ring (or a `resync` view once they have left it), so every
//! message's `n` follows the one before, except right at a resync.

use crate::common;
use crate::running;

use common::session;
use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tokio::time::timeout;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_that_stops_reading_catches_up_without_a_silent_gap() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        // Enough messages to fill the kernel's socket buffers (megabytes on loopback) and then
        // the feed's 512-message lag allowance.
        let (inputs, _, _) = session("deluxe", 7, 450);
        let sim = common::session_shoe(&inputs);
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let h = &run.handle;

        // The viewer: a receive buffer as small as the kernel allows, and no reading yet.
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(1024).expect("rcvbuf");
        let stream = socket.connect(run.addr).await.expect("connect");
        let (mut ws, _) =
            tokio_tungstenite::client_async(format!("ws://{}/ws/public", run.addr), stream)
                .await
                .expect("ws");

        // The session, every input durable before the next.
        common::feed_session(h, &sim, &inputs).await;
        let last_seq = h.snapshot().seq;

        // Now read everything: gaps in `n` only where a resync view starts again.
        let (mut gaps, mut prev, mut read) = (0, None::<u64>, 0);
        loop {
            let m = timeout(Duration::from_secs(10), ws.next())
                .await
                .expect("the viewer catches up")
                .expect("open")
                .expect("message");
            let v: Value = serde_json::from_str(m.to_text().expect("text")).expect("json");
            let n = v["n"].as_u64().expect("n");
            read += 1;
            if v["resync"] != true {
                if let Some(p) = prev {
                    if n != p + 1 {
                        gaps += 1;
                    }
                }
            }
            prev = Some(n);
            if v["type"] == "view" && v["seq"].as_u64() >= Some(last_seq) {
                break;
            }
        }
        // The viewer's queue in its fan-out shard overflowed while its socket took nothing
        // (counted when it happens), and it caught up from the ring.
        let (_, metrics) = croupier::web::client::request(
            &run.addr.to_string(),
            "GET",
            "/metrics",
            None,
            Duration::from_secs(10),
        )
        .await
        .expect("metrics");
        let lagged: f64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix("croupier_lagged_resyncs_total{feed=\"public\"} "))
            .and_then(|v| v.trim().parse().ok())
            .expect("the public lag counter");
        assert!(
            lagged >= 1.0,
            "the stalled viewer never fell behind: {lagged}"
        );

        assert_eq!(gaps, 0, "a gap in n without a resync: a silent drop");
        assert!(
            read > 512,
            "read {read} messages: more than the lag allowance"
        );
        run.stop().await;
    })
    .await
    .expect("in time");
}
