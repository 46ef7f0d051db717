//! The floor → table dispute commands, both sides: the signed `Command` the pit page sends
//! (`crate::floor::pit`), and the table's answering task: a subscription on
//! `croupier.<id>.floor`; each request's signature checked with `[publish] floor_key`,
//! then applied through the table's own `propose` / `confirm` — the same preview, the same
//! confirmation by hash, the same two-person rule and the same `resolve` and audit rows as
//! from the panel, with the actor `floor:<badge>`. Every request is answered with JSON:
//! `{"ok": true, …}` or `{"ok": false, "code", "message"}`.
//!
//! **Authentication: a signed command.** Every command carries an HMAC-SHA256 over its
//! fields with a key the floor and the table share (`--floor-key` on the floor,
//! `[publish] floor_key` at the table), and the table checks it before anything else.
//! NATS permissions alone (only the floor's user may publish on `croupier.*.floor`) are
//! configured too, but they prove only *which connection* sent a message: a table would
//! then trust whoever holds the floor's NATS credentials, or any broker operator. The
//! signature makes the table itself the judge, with a key no broker holds, and the
//! supervisor's badge is inside what is signed, so the audit row's name cannot be changed
//! on the way. Replays change nothing: a proposal only previews, and a confirmation names
//! the preview's hash, which a resolved dispute no longer has (`proposal_changed`).

use crate::broker::PublishSection;
use crate::table::dispute::Resolution;
use crate::table::TableHandle;
use futures::StreamExt;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Sha256;
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::{info, warn};

/// The subject a table answers floor commands on.
pub fn subject(table: &str) -> String {
    format!("croupier.{table}.floor")
}

/// What the floor asks a table to do about a dispute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Preview a resolution (the table answers with the preview and its hash).
    Propose {
        /// What to decide.
        resolution: Resolution,
        /// Why.
        reason: String,
    },
    /// Apply the proposal with this hash.
    Confirm {
        /// The preview's hash.
        proposal: String,
    },
}

/// A signed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The table it is for.
    pub table: String,
    /// The dispute (the seq of the row that opened it).
    pub dispute: u64,
    /// The floor supervisor's badge.
    pub badge: String,
    /// What to do.
    #[serde(flatten)]
    pub action: Action,
    /// HMAC-SHA256 of [`signed_text`], hex.
    pub sig: String,
}

/// The text that is signed: every field but the signature, in a fixed order.
pub fn signed_text(table: &str, dispute: u64, badge: &str, action: &Action) -> String {
    let action = serde_json::to_string(action).unwrap_or_default();
    format!("croupier-floor-command\n{table}\n{dispute}\n{badge}\n{action}")
}

fn mac(key: &[u8], text: &str) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
    m.update(text.as_bytes());
    m
}

impl Command {
    /// A command signed with `key`.
    pub fn sign(key: &[u8], table: &str, dispute: u64, badge: &str, action: Action) -> Command {
        let sig = hex::encode(
            mac(key, &signed_text(table, dispute, badge, &action))
                .finalize()
                .into_bytes(),
        );
        Command {
            table: table.to_string(),
            dispute,
            badge: badge.to_string(),
            action,
            sig,
        }
    }

    /// Whether the signature is `key`'s (constant-time comparison).
    pub fn verify(&self, key: &[u8]) -> bool {
        let Ok(sig) = hex::decode(&self.sig) else {
            return false;
        };
        mac(
            key,
            &signed_text(&self.table, self.dispute, &self.badge, &self.action),
        )
        .verify_slice(&sig)
        .is_ok()
    }

    /// The name the table records as the actor: `floor:<badge>`.
    pub fn actor(&self) -> String {
        format!("floor:{}", self.badge)
    }
}

/// Reads a shared key file (its bytes, surrounding whitespace trimmed; at least 16).
pub fn read_key(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let key = bytes.trim_ascii().to_vec();
    if key.len() < 16 {
        return Err(format!(
            "{}: a floor key has at least 16 bytes",
            path.display()
        ));
    }
    Ok(key)
}

/// Starts answering the floor for `table` (call inside a runtime); abort to stop.
pub fn start(
    config: PublishSection,
    table: String,
    key: Vec<u8>,
    handle: TableHandle,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(250);
        let client = loop {
            match crate::broker::connect(
                &config.broker_options(&table),
                &format!("croupier table {table} floor commands"),
            )
            .await
            {
                Ok(c) => break c,
                Err(e) => {
                    warn!(%table, error = %e, "floor commands: the broker is unreachable");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        };
        let mut sub = loop {
            match client.subscribe(subject(&table)).await {
                Ok(s) => break s,
                Err(e) => {
                    warn!(%table, error = %e, "floor commands: cannot subscribe");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        };
        info!(%table, "answering the floor's signed dispute commands");
        while let Some(msg) = sub.next().await {
            let answer = answer(&table, &key, &handle, &msg.payload).await;
            if let Some(reply) = msg.reply {
                if let Err(e) = client.publish(reply, answer.to_string().into()).await {
                    warn!(%table, error = %e, "floor commands: cannot answer");
                }
            }
        }
    })
}

fn refuse(code: &str, message: impl std::fmt::Display) -> Value {
    json!({"ok": false, "code": code, "message": message.to_string()})
}

async fn answer(table: &str, key: &[u8], handle: &TableHandle, body: &[u8]) -> Value {
    let command: Command = match serde_json::from_slice(body) {
        Ok(c) => c,
        Err(e) => return refuse("bad_request", e),
    };
    // Before anything else: a command without this table's key is nobody's.
    if !command.verify(key) {
        warn!(%table, badge = %command.badge, "floor command refused: bad signature");
        return refuse(
            "bad_signature",
            "the command is not signed with this table's floor key",
        );
    }
    if command.table != table {
        return refuse(
            "wrong_table",
            format!("the command is for {}", command.table),
        );
    }
    let by = command.actor();
    match command.action {
        Action::Propose { resolution, reason } => {
            match handle
                .propose(command.dispute, resolution, reason, by)
                .await
            {
                Ok(preview) => json!({"ok": true, "preview": preview}),
                Err(e) => refuse(e.code(), e),
            }
        }
        Action::Confirm { proposal } => match handle.confirm(command.dispute, proposal, by).await {
            Ok(seq) => json!({"ok": true, "seq": seq}),
            Err(e) => refuse(e.code(), e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_covers_every_field() {
        let key = b"0123456789abcdef-floor";
        let c = Command::sign(
            key,
            "t1",
            7,
            "301",
            Action::Confirm {
                proposal: "abc".into(),
            },
        );
        assert!(c.verify(key));
        assert!(!c.verify(b"another key of some length"));
        let json = serde_json::to_string(&c).expect("json");
        let back: Command = serde_json::from_str(&json).expect("parse");
        assert!(back.verify(key));
        for tampered in [
            Command {
                table: "t2".into(),
                ..c.clone()
            },
            Command {
                dispute: 8,
                ..c.clone()
            },
            Command {
                badge: "302".into(),
                ..c.clone()
            },
            Command {
                action: Action::Confirm {
                    proposal: "abd".into(),
                },
                ..c.clone()
            },
        ] {
            assert!(!tampered.verify(key), "{tampered:?}");
        }
    }
}
