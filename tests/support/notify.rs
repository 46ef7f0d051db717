//! A fake systemd notification socket for the tests (`NOTIFY_SOCKET`): what a process sends
//! there (`READY=1`, `WATCHDOG=1`, `STOPPING=1`), read as systemd would.
#![allow(dead_code)]

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

/// Messages received on the fake notification socket within `window`.
pub fn collect(sock: &UnixDatagram, window: Duration) -> Vec<String> {
    let end = Instant::now() + window;
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return out;
        }
        sock.set_read_timeout(Some(left)).expect("timeout");
        if let Ok(n) = sock.recv(&mut buf) {
            // sd_notify(3) datagrams may end in a newline (the sd-notify crate's do).
            let text = String::from_utf8_lossy(&buf[..n]);
            out.push(text.strip_suffix('\n').unwrap_or(&text).to_owned());
        }
    }
}

/// The watchdog pings among `messages`.
pub fn pings(messages: &[String]) -> usize {
    messages.iter().filter(|m| *m == "WATCHDOG=1").count()
}

/// [`collect`] off the async runtime.
pub async fn collect_async(sock: &UnixDatagram, window: Duration) -> Vec<String> {
    let sock = sock.try_clone().expect("clone socket");
    tokio::task::spawn_blocking(move || collect(&sock, window))
        .await
        .expect("collector")
}
