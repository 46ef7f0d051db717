//! What a remote player can check without trusting the studio (issue #21 items 1–3): the
//! sealed hole card ([`seal`]), the signed round results with the log head they end at
//! ([`attest`]), the table's keys ([`keys`]) and the checker of a saved public history
//! behind `croupier verify-results` ([`verify`]); and on the studio's broker (issue #30),
//! the signature of every message the table publishes ([`wire`]) and the keys the
//! operator pinned for the relays ([`pinned`]). Every encoding is defined in the file
//! that makes it, and in the guide (docs/src/verify.md).

pub mod attest;
pub mod keys;
pub mod pinned;
pub mod pseudonym;
pub mod seal;
pub mod verify;
pub mod wire;

pub use attest::{Signed, Statement};
pub use keys::TableKeys;
pub use pseudonym::Pseudonyms;
pub use seal::Seal;

/// HMAC-SHA256 of `message` under a 32-byte `key`: what every secret the table derives
/// from its seal secret is made with (hole-card nonces, pseudonyms, a log row's salt on
/// the broker).
pub(crate) fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    // HMAC zero-pads a key shorter than its block: padding here gives the same MAC through
    // the infallible fixed-size constructor.
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    let mut m = <Hmac<sha2::Sha256> as hmac::digest::KeyInit>::new(&block.into());
    m.update(message);
    m.finalize().into_bytes().into()
}
