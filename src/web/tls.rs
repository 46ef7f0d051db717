//! Optional TLS for the panel and the API (`[http.tls]` in `table.toml`): rustls with the
//! *ring* provider (pure Rust and assembly, so the aarch64 cross-build needs no cmake), as
//! an `axum::serve` listener. Handshakes run in their own tasks with a timeout, so a slow or
//! silent client never holds up the others.

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// The certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("{path}: {why}")]
    Pem {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// rustls refused the certificate and key.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// A server configuration from a PEM certificate chain and a PEM private key.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let pem = |path: &Path, why: String| TlsError::Pem {
        path: path.display().to_string(),
        why,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| pem(cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| pem(cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(pem(cert, "no certificate in the file".into()));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| pem(key, e.to_string()))?;
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(certs, key_der)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// How long a client has to complete the handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TCP listener whose connections are TLS streams.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor_task: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Serves TLS with `config` on `tcp` (starts the accepting task: call in a runtime).
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, ready) = mpsc::channel(64);
        let acceptor_task = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(s) => s,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, as axum does.
                        tracing::warn!(error = %e, "accept");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // As for plain TCP (see `super::tcp`): no Nagle delay on bursts.
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(%peer, error = %e, "TCP_NODELAY");
                }
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            local,
            acceptor_task,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor_task.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accepting task only ends when the listener is dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
