//! Signed results. Every settled round's public result goes out with a statement signed by
//! the table's Ed25519 key: the result, the round's seal (opened) and the log head the
//! round ended at — the row that settled it, with its chain hash, so a log cut back below
//! a head someone has already seen is detectable from outside (`super::verify`).
//!
//! The statement travels as the exact JSON text that was signed (`payload`), so nobody
//! has to re-serialise JSON to check it:
//!
//! ```text
//! signed = {"payload": "<statement JSON text>", "sig": "<128 hex>"}
//! sig    = Ed25519(table key, "croupier-result/1\n" || payload)
//! statement = {"v": 1, "table", "round", "result": RoundResult, "seal": Seal | null,
//!              "head": {"seq", "hash"}, "timeline"?: {"id", "epoch", "from_seq"}}
//! ```

use super::keys::TableKeys;
use super::seal::Seal;
use crate::engine::RoundResult;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The prefix of every signed message (domain separation).
pub const DOMAIN: &str = "croupier-result/1\n";

/// The log head a statement names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The row's sequence number.
    pub seq: u64,
    /// The row's chain hash (lowercase hex).
    pub hash: String,
}

/// What a table signs at the end of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// The format's version (1).
    pub v: u32,
    /// The table.
    pub table: String,
    /// The round.
    pub round: u64,
    /// The round's public result.
    pub result: RoundResult,
    /// The round's sealed card, opened (`None`: no card was dealt face down).
    pub seal: Option<Seal>,
    /// The log's head after the row that settled the round.
    pub head: Head,
    /// The timeline the log is on, after its first (`store/timeline.rs`): signed, so a
    /// history across a restore is told from a cut log (`super::verify`). Absent on the
    /// first timeline, so those statements read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::store::Timeline>,
}

/// A statement's text and its signature, as the result message carries them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signed {
    /// The statement's JSON text, exactly as signed.
    pub payload: String,
    /// The Ed25519 signature (lowercase hex) of [`DOMAIN`] followed by `payload`.
    pub sig: String,
}

/// Signs `statement` with `keys`.
pub fn sign(keys: &TableKeys, statement: &Statement) -> Signed {
    // Serialising plain structs of strings and numbers cannot fail.
    let payload = serde_json::to_string(statement).unwrap_or_default();
    let sig = keys.sign(format!("{DOMAIN}{payload}").as_bytes());
    Signed { payload, sig }
}

/// Why a signed statement is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttestError {
    /// The public key is not 32 bytes of hex, or not a curve point.
    #[error("the table key {0:?} is not an Ed25519 public key")]
    BadKey(String),
    /// The signature is not 64 bytes of hex.
    #[error("the signature is not 64 bytes of hex")]
    BadSignature,
    /// The signature does not verify.
    #[error("the signature does not verify with the table key (the statement was altered or signed by another key)")]
    Forged,
    /// The payload is not a statement.
    #[error("the signed payload is not a result statement: {0}")]
    Unreadable(String),
}

/// Parses a hex public key.
pub fn verifying_key(hex_key: &str) -> Result<VerifyingKey, AttestError> {
    let bad = || AttestError::BadKey(hex_key.to_string());
    let bytes: [u8; 32] = hex::decode(hex_key.trim())
        .map_err(|_| bad())?
        .try_into()
        .map_err(|_| bad())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| bad())
}

/// Checks `signed` against `key`; returns the statement it vouches for.
pub fn verify(key: &VerifyingKey, signed: &Signed) -> Result<Statement, AttestError> {
    let sig: [u8; 64] = hex::decode(signed.sig.trim())
        .map_err(|_| AttestError::BadSignature)?
        .try_into()
        .map_err(|_| AttestError::BadSignature)?;
    key.verify(
        format!("{DOMAIN}{}", signed.payload).as_bytes(),
        &Signature::from_bytes(&sig),
    )
    .map_err(|_| AttestError::Forged)?;
    serde_json::from_str(&signed.payload).map_err(|e| AttestError::Unreadable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement() -> Statement {
        Statement {
            v: 1,
            table: "t1".into(),
            round: 3,
            result: RoundResult {
                round: 3,
                shoe: 1,
                dealer_cards: vec!["TD".parse().expect("card"), "7S".parse().expect("card")],
                dealer_total: 17,
                dealer_natural: false,
                hands: Vec::new(),
                bets: Vec::new(),
                burned: Vec::new(),
                cancelled: false,
            },
            seal: None,
            head: Head {
                seq: 40,
                hash: "ab".repeat(32),
            },
            timeline: None,
        }
    }

    #[test]
    fn a_signature_verifies_and_any_change_breaks_it() {
        let keys = TableKeys::from_secrets([1; 32], [2; 32]);
        let key = verifying_key(&keys.public_hex()).expect("key");
        let signed = sign(&keys, &statement());
        assert_eq!(verify(&key, &signed), Ok(statement()));
        let tampered = Signed {
            payload: signed
                .payload
                .replace("\"dealer_total\":17", "\"dealer_total\":18"),
            ..signed.clone()
        };
        assert_ne!(tampered.payload, signed.payload);
        assert_eq!(verify(&key, &tampered), Err(AttestError::Forged));
        let other =
            verifying_key(&TableKeys::from_secrets([3; 32], [2; 32]).public_hex()).expect("key");
        assert_eq!(verify(&other, &signed), Err(AttestError::Forged));
        // Deterministic: the table's feed and the broker's fold sign the same bytes.
        assert_eq!(sign(&keys, &statement()), signed);
    }
}
