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

/// An answer: status, headers (names lower-cased), body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: String,
}

impl Reply {
    /// The `croupier_session` cookie a login set, as a `Cookie` header value.
    pub fn session_cookie(&self) -> Option<String> {
        self.headers
            .iter()
            .filter(|(k, _)| k == "set-cookie")
            .filter_map(|(_, v)| v.split(';').next())
            .find(|kv| kv.starts_with("croupier_session=") && kv.len() > "croupier_session=".len())
            .map(str::to_string)
    }
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
    let reply = request_with(addr, method, path, body, &[], timeout).await?;
    Ok((reply.status, reply.body))
}

/// [`request`] with extra headers (`("Cookie", "croupier_session=...")`,
/// `("Authorization", "Bearer ...")`), answering the whole [`Reply`].
pub async fn request_with(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<Reply, ClientError> {
    tokio::time::timeout(timeout, exchange(addr, method, path, body, headers))
        .await
        .map_err(|_| ClientError::Timeout(addr.to_string()))?
}

async fn exchange(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<Reply, ClientError> {
    let io = |source| ClientError::Io {
        addr: addr.to_string(),
        source,
    };
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    let body = body.unwrap_or("");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.map_err(io)?;
    stream.write_all(body.as_bytes()).await.map_err(io)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.map_err(io)?;
    parse(addr, &raw)
}

/// Parses a whole HTTP/1.1 response (`Connection: close`).
pub fn parse(addr: &str, raw: &[u8]) -> Result<Reply, ClientError> {
    let text = String::from_utf8_lossy(raw);
    let malformed = || ClientError::Malformed(addr.to_string());
    let (head, rest) = text.split_once("\r\n\r\n").ok_or_else(malformed)?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(malformed)?;
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Ok(Reply {
        status,
        headers,
        body,
    })
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
