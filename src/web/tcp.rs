//! The plain-TCP listener for `axum::serve`: every accepted connection gets `TCP_NODELAY`.
//!
//! Why: the feed writes a whole message (or a batch of them) per write. With Nagle's
//! algorithm on, the second of two messages published close together waits for the
//! viewer's ACK of the first, and a viewer that only reads delays its ACKs (up to 40 ms on
//! Linux): the second message of a burst would arrive late for no gain.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// A TCP listener whose accepted streams have `TCP_NODELAY` set.
pub struct NoDelayListener(pub TcpListener);

impl axum::serve::Listener for NoDelayListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, peer)) => {
                    if let Err(e) = stream.set_nodelay(true) {
                        // Still a working connection, only slower on bursts.
                        tracing::debug!(%peer, error = %e, "TCP_NODELAY");
                    }
                    return (stream, peer);
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off, as axum does.
                    tracing::warn!(error = %e, "accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}
