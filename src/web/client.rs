//! A minimal HTTP/1.1 client for the local API (`croupier alarm clear`, tests): one
//! request per connection, `Connection: close`, no TLS — it only talks to 127.0.0.1.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The request failed before an HTTP status came back.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Connecting, writing or reading failed.
    #[error("{addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// No answer in time.
    #[error("{0}: no answer within the timeout")]
    Timeout(String),
    /// The answer is not HTTP.
    #[error("{0}: not an HTTP response")]
    Malformed(String),
}

/// Sends `method path` with an optional JSON body to `addr` (`host:port`); returns the
/// status code and the body.
pub async fn request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    timeout: Duration,
) -> Result<(u16, String), ClientError> {
    tokio::time::timeout(timeout, exchange(addr, method, path, body))
        .await
        .map_err(|_| ClientError::Timeout(addr.to_string()))?
}

async fn exchange(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), ClientError> {
    let io = |source| ClientError::Io {
        addr: addr.to_string(),
        source,
    };
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.map_err(io)?;
    stream.write_all(body.as_bytes()).await.map_err(io)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.map_err(io)?;
    let text = String::from_utf8_lossy(&raw);
    let malformed = || ClientError::Malformed(addr.to_string());
    let (head, rest) = text.split_once("\r\n\r\n").ok_or_else(malformed)?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(malformed)?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Ok((status, body))
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}
