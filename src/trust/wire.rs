//! What the table signs on the broker: every public message and every snapshot it puts in
//! the views' bucket carries an Ed25519 signature of its exact bytes in the header
//! `Croupier-Sig` (`broker::subjects::HEADER_SIG`), so a relay serves only what the table
//! itself published — whoever else can write to the broker.
//!
//! ```text
//! sig = Ed25519(table key, domain || table || "\n" || payload)   (128 hex digits)
//! domain = "croupier-public/1\n"     a message on croupier.<table>.public
//!        | "croupier-log/1\n"        a row on croupier.<table>.log
//!        | "croupier-snapshot/1\n"   the table's value in the bucket
//! ```
//!
//! The table's id is inside what is signed, so one table's message cannot be replayed as
//! another's; the two domains keep a snapshot from passing for a stream message. A replay
//! of the table's own older message is caught by its number (`n`), which is inside the
//! payload: the relay serves only the next one.
//!
//! The relay (and the publisher itself, resuming) checks against a key pinned by the
//! operator (`super::pinned`), never one a message offers. Positions on the broker prove
//! nothing: any client with a JetStream grant can point an API answer at any subject, so
//! a stream may hold messages nobody meant for it, and only the signature says whose a
//! message is.

use super::keys::TableKeys;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};

/// The domain of a public stream message.
pub const PUBLIC: &str = "croupier-public/1\n";
/// The domain of a log row.
pub const LOG: &str = "croupier-log/1\n";
/// The domain of a bucket snapshot.
pub const SNAPSHOT: &str = "croupier-snapshot/1\n";

fn signed_bytes(domain: &str, table: &str, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(domain.len() + table.len() + 1 + payload.len());
    bytes.extend_from_slice(domain.as_bytes());
    bytes.extend_from_slice(table.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(payload);
    bytes
}

/// The signature (hex) of `payload` as `table`'s, in `domain`.
pub fn sign(keys: &TableKeys, domain: &str, table: &str, payload: &[u8]) -> String {
    keys.sign(&signed_bytes(domain, table, payload))
}

/// Whether `sig` (hex) is `key`'s signature of `payload` as `table`'s, in `domain`.
pub fn verify(key: &VerifyingKey, domain: &str, table: &str, payload: &[u8], sig: &str) -> bool {
    let Ok(bytes) = hex::decode(sig.trim()) else {
        return false;
    };
    let Ok(bytes) = <[u8; 64]>::try_from(bytes) else {
        return false;
    };
    key.verify(
        &signed_bytes(domain, table, payload),
        &Signature::from_bytes(&bytes),
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_binds_the_bytes_the_table_and_the_domain() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let key = super::super::attest::verifying_key(&keys.public_hex()).expect("key");
        let sig = sign(&keys, PUBLIC, "t1", b"{\"n\":1}");
        assert!(verify(&key, PUBLIC, "t1", b"{\"n\":1}", &sig));
        assert!(
            !verify(&key, PUBLIC, "t1", b"{\"n\":2}", &sig),
            "other bytes"
        );
        assert!(
            !verify(&key, PUBLIC, "t2", b"{\"n\":1}", &sig),
            "other table"
        );
        assert!(
            !verify(&key, SNAPSHOT, "t1", b"{\"n\":1}", &sig),
            "other domain"
        );
        assert!(!verify(&key, PUBLIC, "t1", b"{\"n\":1}", "zz"), "not hex");
        let other = TableKeys::from_secrets([9; 32], [8; 32]);
        let other = super::super::attest::verifying_key(&other.public_hex()).expect("key");
        assert!(
            !verify(&other, PUBLIC, "t1", b"{\"n\":1}", &sig),
            "other key"
        );
    }
}
