//! The HTTP client of `croupier alarm clear`, the HTTP wallet (and the tests): hyper's
//! HTTP/1.1 client connection, one request per connection, over plain TCP or TLS.
//!
//! With `[http.tls]` the service has no plain listener, so the CLI speaks HTTPS and trusts
//! exactly the configured certificate ([`Endpoint::pinned`]): the end-entity certificate
//! the server presents must be byte for byte the first one of the configured PEM file, and
//! the handshake's signatures are checked against its key. The name the certificate was
//! issued for is not checked — the CLI reaches the service at whatever address it binds
//! (`0.0.0.0:8443`, `127.0.0.1`), and pinning the one certificate is stricter than any
//! name check against a CA.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
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
    /// The answer is not HTTP (e.g. plain HTTP sent to the TLS port, or the reverse).
    #[error("{addr}: not an HTTP response ({why})")]
    Malformed {
        /// The address.
        addr: String,
        /// What hyper said.
        why: String,
    },
    /// The request could not be built (a bad header name or value).
    #[error("bad request: {0}")]
    Request(String),
    /// The configured certificate could not be read.
    #[error("{path}: {why}")]
    Certificate {
        /// The PEM file.
        path: String,
        /// Why.
        why: String,
    },
    /// The TLS handshake failed (another certificate than the configured one, …).
    #[error("{addr}: TLS: {source}")]
    Tls {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}

/// An answer: status, headers (names lower-cased), body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
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

/// Where requests go: `host:port`, over plain TCP or TLS.
#[derive(Clone)]
pub struct Endpoint {
    addr: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// How long one exchange may take, connection included ([`Endpoint::DEFAULT_TIMEOUT`]
    /// unless set with [`Endpoint::timeout`]).
    timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("addr", &self.addr)
            .field("tls", &self.tls.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Endpoint {
    /// An exchange's time limit until [`Endpoint::timeout`] sets another.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Plain HTTP to `addr`.
    pub fn plain(addr: &str) -> Endpoint {
        Endpoint {
            addr: addr.to_string(),
            tls: None,
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    /// The same endpoint, with `timeout` for each exchange.
    pub fn timeout(mut self, timeout: Duration) -> Endpoint {
        self.timeout = timeout;
        self
    }

    /// HTTPS to `addr`, trusting only the certificate in the PEM file `cert` (the first one:
    /// the service's own, as `[http.tls] cert` names it).
    pub fn pinned(addr: &str, cert: &Path) -> Result<Endpoint, ClientError> {
        let bad = |why: String| ClientError::Certificate {
            path: cert.display().to_string(),
            why,
        };
        let pinned = CertificateDer::pem_file_iter(cert)
            .map_err(|e| bad(e.to_string()))?
            .next()
            .ok_or_else(|| bad("no certificate in the file".into()))?
            .map_err(|e| bad(e.to_string()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Pinned {
            cert: pinned,
            algorithms: provider.signature_verification_algorithms,
        };
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Endpoint {
            addr: addr.to_string(),
            tls: Some(Arc::new(config)),
            timeout: Self::DEFAULT_TIMEOUT,
        })
    }

    /// The address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `method path` with an optional JSON body and extra headers
    /// (`("Cookie", "croupier_session=...")`, `("Authorization", "Bearer ...")`); answers
    /// the whole [`Reply`] once the body has arrived, or an error after the endpoint's
    /// timeout.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, ClientError> {
        tokio::time::timeout(
            self.timeout,
            self.exchange(build(&self.addr, method, path, body, headers)?),
        )
        .await
        .map_err(|_| ClientError::Timeout(self.addr.clone()))?
    }

    async fn exchange(&self, request: hyper::Request<Full<Bytes>>) -> Result<Reply, ClientError> {
        let tcp = TcpStream::connect(&self.addr)
            .await
            .map_err(|source| ClientError::Io {
                addr: self.addr.clone(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => exchange_on(&self.addr, TokioIo::new(tcp), request).await,
            Some(config) => {
                // The name is only sent (SNI); `Pinned` checks the certificate itself.
                let name = ServerName::try_from("croupier.local")
                    .map_err(|e| ClientError::Request(e.to_string()))?;
                let tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
                    .connect(name, tcp)
                    .await
                    .map_err(|source| ClientError::Tls {
                        addr: self.addr.clone(),
                        source,
                    })?;
                exchange_on(&self.addr, TokioIo::new(tls), request).await
            }
        }
    }
}

fn build(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<hyper::Request<Full<Bytes>>, ClientError> {
    let bad = |e: &dyn std::fmt::Display| ClientError::Request(e.to_string());
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(HOST, addr)
        // Every state change by cookie must be JSON (the CSRF rule, `web::auth`).
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.unwrap_or("").to_owned())))
        .map_err(|e| bad(&e))?;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?;
        let value = HeaderValue::from_str(value).map_err(|e| bad(&e))?;
        request.headers_mut().append(name, value);
    }
    Ok(request)
}

async fn exchange_on<I>(
    addr: &str,
    io: I,
    request: hyper::Request<Full<Bytes>>,
) -> Result<Reply, ClientError>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let malformed = |e: hyper::Error| ClientError::Malformed {
        addr: addr.to_string(),
        why: e.to_string(),
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(malformed)?;
    // The connection drives the bytes; it ends when the exchange is done and `sender` is
    // dropped (or the server closes).
    let driver = tokio::spawn(connection);
    let response = sender.send_request(request).await.map_err(malformed)?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(malformed)?
        .to_bytes();
    drop(sender);
    driver.abort();
    Ok(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// A handshake signature check of `ServerCertVerifier`, done by rustls's function of the
/// same name with the pinned provider's algorithms: the TLS 1.2 and 1.3 checks differ only
/// in that name.
macro_rules! handshake_signature {
    ($check:ident) => {
        fn $check(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::$check(message, cert, dss, &self.algorithms)
        }
    };
}

/// Trusts exactly one certificate (see the module doc).
#[derive(Debug)]
struct Pinned {
    cert: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    handshake_signature!(verify_tls12_signature);
    handshake_signature!(verify_tls13_signature);

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Sends `method path` with an optional JSON body to `addr` (`host:port`, plain HTTP);
/// returns the status code and the body.
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

/// [`request`] with extra headers, answering the whole [`Reply`].
pub async fn request_with(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<Reply, ClientError> {
    Endpoint::plain(addr)
        .timeout(timeout)
        .send(method, path, body, headers)
        .await
}

/// Parses a whole HTTP/1.1 response read off a raw socket (tests that write their own
/// malformed or cross-site requests), with hyper's parser underneath (httparse).
pub fn parse(addr: &str, raw: &[u8]) -> Result<Reply, ClientError> {
    let malformed = |why: &str| ClientError::Malformed {
        addr: addr.to_string(),
        why: why.to_string(),
    };
    let mut names = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut names);
    let head = match response.parse(raw) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(malformed("incomplete head")),
        Err(e) => return Err(malformed(&e.to_string())),
    };
    let status = response.code.ok_or_else(|| malformed("no status"))?;
    let headers: Vec<(String, String)> = response
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).trim().to_string(),
            )
        })
        .collect();
    let rest = &raw[head..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        String::from_utf8_lossy(rest).into_owned()
    };
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn dechunk(mut rest: &[u8]) -> String {
    let mut out = Vec::new();
    while let Ok(httparse::Status::Complete((start, n))) = httparse::parse_chunk_size(rest) {
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 || rest.len() < start + n {
            break;
        }
        out.extend_from_slice(&rest[start..start + n]);
        rest = &rest[start + n..];
        rest = rest.strip_prefix(b"\r\n").unwrap_or(rest);
    }
    String::from_utf8_lossy(&out).into_owned()
}
