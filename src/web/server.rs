//! The HTTP/1.1 server loop: hyper's connection builder with the settings `axum::serve`
//! does not expose, over any `axum::serve::Listener` (plain TCP or TLS).
//!
//! - **Header-read timeout** (`[http] header_timeout_ms`): hyper's timer runs from the
//!   moment a connection waits for a request head — when it opens and after each response
//!   — so it closes both half-sent requests and idle keep-alive connections. Plain hyper
//!   rather than `hyper_util`'s auto builder, whose HTTP-version sniffing waits for the
//!   first bytes with no timer at all (a silent connection would stay forever).
//! - **Connection cap** (`max_connections`): a semaphore permit per served connection;
//!   beyond it the loop stops accepting (the kernel's backlog holds the rest) instead of
//!   running out of descriptors. An upgraded connection (`/ws/*`) gives its permit back:
//!   the public cap (`super::edge`) and the viewer counts take over.
//! - The peer address as `ConnectInfo<Peer>` for the audit log, as `axum::serve` did.
//! - Graceful shutdown: stop accepting, let each connection finish its response.

use super::auth::Peer;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

/// The connection-level settings (from `[http]`).
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// See `HttpSection::header_timeout_ms`.
    pub header_timeout: Duration,
    /// Connections served at once: shared with the public gate, which keeps some free for
    /// staff (`super::edge::Edge`).
    pub connections: Arc<Semaphore>,
}

/// Serves `router` on `listener` until `shutdown` completes, then lets open connections
/// finish their responses (the caller bounds how long it waits).
pub async fn serve<L>(
    mut listener: L,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()>
where
    L: axum::serve::Listener<Addr = SocketAddr>,
    L::Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Some(limits.header_timeout))
        .keep_alive(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a receiver; `closed()` resolves when the last one ends.
    let (done_tx, done_rx) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&limits.connections).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (io, peer) = tokio::select! {
            c = listener.accept() => c,
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(Peer(peer)));
            let router = router.clone();
            async move {
                Ok::<_, Infallible>(
                    router
                        .oneshot(req.map(axum::body::Body::new))
                        .await
                        .unwrap_or_else(|e| match e {}),
                )
            }
        });
        let conn = builder
            .serve_connection(TokioIo::new(io), service)
            .with_upgrades();
        let mut stop = stop_rx.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let _done = done;
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                () = async { let _ = stop.wait_for(|s| *s).await; } => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// The raw TCP stream under an upgraded connection and what was read past the request
/// (`None` under TLS). Served by [`serve`] the stream is hyper's own `TokioIo`; under
/// `axum::serve` (hyper_util's auto builder) it is wrapped once more.
pub fn raw_tcp(upgraded: hyper::upgrade::Upgraded) -> Option<(TcpStream, Bytes)> {
    match upgraded.downcast::<TokioIo<TcpStream>>() {
        Ok(parts) => Some((parts.io.into_inner(), parts.read_buf)),
        Err(upgraded) => {
            hyper_util::server::conn::auto::upgrade::downcast::<TokioIo<TcpStream>>(upgraded)
                .ok()
                .map(|parts| (parts.io.into_inner(), parts.read_buf))
        }
    }
}
