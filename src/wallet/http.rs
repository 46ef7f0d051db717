//! The HTTP seamless-wallet adapter: the operator's wallet server holds the balances.
//!
//! Protocol (docs/src/remote-play.md, "Wallet"): `POST <url>/debit`, `/credit`, `/rollback`,
//! `/balance`, each a JSON body — `{"tx": ID, "player": P, "amount": N}` (`/rollback` adds
//! `"ref": DEBIT_ID` and `tx` is the rollback's id; `/balance` is `{"player": P}`) — signed
//! with `X-Croupier-Signature: hex(HMAC-SHA256(secret, body))`. The server answers 200
//! `{"balance": N}`, or 4xx `{"error": CODE}` with CODE one of `insufficient_funds`
//! (with `"balance"`), `unknown_player`, `conflict`, `rolled_back`. A timeout, a
//! connection failure or a 5xx is retried with the same transaction id (the server applies
//! an id once), `retries` times with a doubling pause; then `wallet_unavailable`, and the
//! journal rolls the debit back (again by id) so nothing stays half-applied.

use super::{TxKind, Wallet, WalletError, WalletRequest};
use crate::http_client::{ClientError, Endpoint};
use futures::future::BoxFuture;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::time::Duration;

/// `[play.http_wallet]` in `table.toml`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpWalletSection {
    /// The wallet's base URL: `http://host:port/path`, or `https://…` with `cert`.
    pub url: String,
    /// A file holding the shared secret the requests are signed with (first line).
    pub secret_file: std::path::PathBuf,
    /// The server's certificate (PEM) for `https://`: trusted exactly (pinned).
    #[serde(default)]
    pub cert: Option<std::path::PathBuf>,
    /// Each attempt's timeout, milliseconds.
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    /// Attempts after the first (same transaction id).
    #[serde(default = "default_retries")]
    pub retries: u32,
}

fn default_timeout() -> u64 {
    2_000
}

fn default_retries() -> u32 {
    3
}

/// The adapter.
#[derive(Debug, Clone)]
pub struct HttpWallet {
    endpoint: Endpoint,
    prefix: String,
    secret: Vec<u8>,
    retries: u32,
}

impl HttpWallet {
    /// The adapter for `section` (reads the secret file).
    pub fn new(section: &HttpWalletSection) -> Result<HttpWallet, String> {
        let secret = std::fs::read_to_string(&section.secret_file)
            .map_err(|e| format!("{}: {e}", section.secret_file.display()))?;
        let secret = secret
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .as_bytes()
            .to_vec();
        if secret.len() < 16 {
            return Err(format!(
                "{}: the wallet secret must be at least 16 characters",
                section.secret_file.display()
            ));
        }
        let (tls, rest) = if let Some(r) = section.url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = section.url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(format!(
                "{}: the wallet URL must start with http:// or https://",
                crate::redact::url(&section.url)
            ));
        };
        let (addr, path) = rest.split_once('/').unwrap_or((rest, ""));
        // The requests are signed with `secret_file`: a user in the URL would be sent to
        // no one, and shown wherever the address is (errors, the log).
        if addr.contains('@') {
            return Err(format!(
                "{}: the wallet URL must not hold a user or password (the requests are signed with secret_file)",
                crate::redact::url(&section.url)
            ));
        }
        let endpoint = match (tls, &section.cert) {
            (false, _) => Endpoint::plain(addr),
            (true, Some(cert)) => Endpoint::pinned(addr, cert).map_err(|e| e.to_string())?,
            (true, None) => return Err("an https:// wallet needs `cert` (pinned)".into()),
        };
        Ok(HttpWallet {
            endpoint: endpoint.timeout(Duration::from_millis(section.timeout_ms.max(1))),
            prefix: format!("/{}", path.trim_end_matches('/')).replace("//", "/"),
            secret,
            retries: section.retries,
        })
    }

    fn sign(&self, body: &str) -> String {
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.secret) {
            Ok(m) => m,
            // HMAC takes a key of any length.
            Err(_) => return String::new(),
        };
        mac.update(body.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// One request, retried with the same body (and so the same id) on no answer.
    async fn call(&self, op: &str, body: Value) -> Result<i64, WalletError> {
        let body = body.to_string();
        let signature = self.sign(&body);
        let path = format!("{}/{op}", self.prefix.trim_end_matches('/'));
        let mut pause = Duration::from_millis(100);
        let mut last = String::new();
        for attempt in 0..=self.retries {
            if attempt > 0 {
                tokio::time::sleep(pause).await;
                pause = pause.saturating_mul(2);
            }
            let reply = self
                .endpoint
                .send(
                    "POST",
                    &path,
                    Some(&body),
                    &[("X-Croupier-Signature", &signature)],
                )
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(
                    e @ (ClientError::Timeout(_)
                    | ClientError::Io { .. }
                    | ClientError::Malformed { .. }),
                ) => {
                    last = e.to_string();
                    continue;
                }
                Err(e) => return Err(WalletError::Unavailable(e.to_string())),
            };
            if reply.status >= 500 {
                last = format!("{op}: HTTP {}", reply.status);
                continue;
            }
            let v: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
            if reply.status == 200 {
                return v["balance"].as_i64().ok_or_else(|| {
                    WalletError::Unavailable(format!("{op}: no balance in the answer"))
                });
            }
            let tx = v["tx"].as_str().unwrap_or_default().to_string();
            return Err(match v["error"].as_str().unwrap_or("") {
                "insufficient_funds" => WalletError::InsufficientFunds {
                    balance: v["balance"].as_i64().unwrap_or(0),
                    amount: v["amount"].as_i64().unwrap_or(0),
                },
                "unknown_player" => {
                    WalletError::UnknownPlayer(v["player"].as_str().unwrap_or_default().to_string())
                }
                "conflict" => WalletError::Conflict(tx),
                "rolled_back" => WalletError::RolledBack(tx),
                other => WalletError::Unavailable(format!("{op}: HTTP {} {other}", reply.status)),
            });
        }
        Err(WalletError::Unavailable(last))
    }
}

fn money(req: &WalletRequest) -> Value {
    json!({"tx": req.tx.to_string(), "player": req.player, "amount": req.amount})
}

impl Wallet for HttpWallet {
    fn balance<'a>(&'a self, player: &'a str) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(self.call("balance", json!({ "player": player })))
    }

    fn debit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            if req.tx.kind != TxKind::Debit || req.amount < 0 {
                return Err(WalletError::Conflict(req.tx.to_string()));
            }
            self.call("debit", money(req)).await
        })
    }

    fn credit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            if req.tx.kind != TxKind::Credit || req.amount < 0 {
                return Err(WalletError::Conflict(req.tx.to_string()));
            }
            self.call("credit", money(req)).await
        })
    }

    fn rollback<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            let body = json!({
                "tx": req.tx.rollback().to_string(),
                "ref": req.tx.to_string(),
                "player": req.player,
                "amount": req.amount,
            });
            self.call("rollback", body).await
        })
    }
}
