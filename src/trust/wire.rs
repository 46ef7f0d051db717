//! What the table signs on the broker: every public message, log row and snapshot it puts
//! on the broker carries the table's Ed25519 signature in the header `Croupier-Sig`
//! (`broker::subjects::HEADER_SIG`), so a relay serves only what the table itself
//! published — whoever else can write to the broker.
//!
//! A message signed alone (a snapshot, a branch's resync view, a row with no public
//! message, a row's one public message when the row is already on the broker) is signed
//! over its exact bytes:
//!
//! ```text
//! sig = Ed25519(table key, domain || table || "\n" || payload)   (128 hex digits)
//! domain = "croupier-public/1\n"     a message on croupier.<table>.public
//!        | "croupier-log/1\n"        a row on croupier.<table>.log
//!        | "croupier-snapshot/1\n"   the table's value in the bucket
//! ```
//!
//! A row and its public messages, published together, share **one** signature over the
//! list of their digests (issue #37: a signature was most of a published row's CPU, and a
//! row has its log message and usually a public message):
//!
//! ```text
//! digest(m) = SHA-256(domain || table || "\n" || len(salt) as one byte || salt || payload)
//! sig       = Ed25519(table key, "croupier-row/1\n" || table || "\n" || digest(m1) || … || digest(mk))
//! ```
//!
//! Each of the k messages carries the same `Croupier-Sig` and the list in
//! `Croupier-Row` (hex, 64 digits a digest), so each is checked on its own: its digest,
//! computed from its own bytes and domain, must be in the list, and the list must carry
//! the table's signature. The log row's digest is salted (`Croupier-Salt`, on the log row
//! only; 16 bytes the table derives from its secret and the row's message id), because
//! a relay, which may not read the log, sees the list: unsalted, the digest of a row that
//! holds the hole card would tell the card to whoever tries the 52 candidates.
//!
//! The table's id is inside what is signed, so one table's message cannot be replayed as
//! another's; the domains keep a snapshot from passing for a stream message, and a log row
//! for a public one, and the row domain keeps a list's signature from passing for a
//! message's own (no domain is a prefix of another). A replay of the table's own older
//! message is caught by its number (`n`), which is inside the payload: the relay serves
//! only the next one.
//!
//! The relay (and the publisher itself, resuming) checks against a key pinned by the
//! operator (`super::pinned`), never one a message offers. Positions on the broker prove
//! nothing: any client with a JetStream grant can point an API answer at any subject, so
//! a stream may hold messages nobody meant for it, and only the signature says whose a
//! message is.

use super::keys::TableKeys;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

/// The domain of a public stream message.
pub const PUBLIC: &str = "croupier-public/1\n";
/// The domain of a log row.
pub const LOG: &str = "croupier-log/1\n";
/// The domain of a bucket snapshot.
pub const SNAPSHOT: &str = "croupier-snapshot/1\n";
/// The domain of a row's list of digests, signed once for all its messages.
pub const ROW: &str = "croupier-row/1\n";

/// The most messages one row signature covers: a row makes a handful of public messages
/// at most; a longer list is refused unread.
pub const MAX_TOGETHER: usize = 64;
/// The longest salt a digest takes.
const MAX_SALT: usize = 32;
/// A log row's salt.
pub type Salt = [u8; 16];

/// What a message carries to prove it is the table's, as the headers `Croupier-Sig`,
/// `Croupier-Row` and `Croupier-Salt` hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The signature, 128 hex digits.
    pub sig: String,
    /// For a message signed with others of its row: the row's digests, in hex.
    pub row: Option<String>,
    /// For a salted digest (a log row signed with its public messages): the salt, in hex.
    pub salt: Option<String>,
}

impl Proof {
    /// The proof as a message's headers hold it.
    pub fn as_ref(&self) -> ProofRef<'_> {
        ProofRef {
            sig: &self.sig,
            row: self.row.as_deref(),
            salt: self.salt.as_deref(),
        }
    }
}

/// A [`Proof`] borrowed from a message's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofRef<'a> {
    /// `Croupier-Sig`.
    pub sig: &'a str,
    /// `Croupier-Row`, when present.
    pub row: Option<&'a str>,
    /// `Croupier-Salt`, when present.
    pub salt: Option<&'a str>,
}

/// One of a row's messages, to be signed with the others.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// Its domain ([`PUBLIC`] or [`LOG`]).
    pub domain: &'static str,
    /// Its exact bytes.
    pub payload: &'a [u8],
    /// Its salt (a log row's: [`salt`]).
    pub salt: Option<Salt>,
}

fn signed_bytes(domain: &str, table: &str, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(domain.len() + table.len() + 1 + payload.len());
    bytes.extend_from_slice(domain.as_bytes());
    bytes.extend_from_slice(table.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(payload);
    bytes
}

fn digest(domain: &str, table: &str, salt: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(domain.as_bytes());
    h.update(table.as_bytes());
    h.update(b"\n");
    // At most MAX_SALT: the length fits a byte.
    h.update([salt.len() as u8]);
    h.update(salt);
    h.update(payload);
    h.finalize().into()
}

/// The signature (hex) of `payload` as `table`'s, in `domain`.
pub fn sign(keys: &TableKeys, domain: &str, table: &str, payload: &[u8]) -> String {
    keys.sign(&signed_bytes(domain, table, payload))
}

/// The salt of the log row published with the message id `message_id`: derived from the
/// table's secret, so nobody else can compute it, and the same each time the row is
/// published again.
pub fn salt(keys: &TableKeys, message_id: &str) -> Salt {
    let text = format!("croupier-row-salt/1\n{message_id}");
    let bytes = super::hmac_sha256(keys.seal_secret(), text.as_bytes());
    let mut salt = [0u8; 16];
    salt.copy_from_slice(&bytes[..16]);
    salt
}

/// The proofs of a row's messages, in the order of `parts`: one signature for them all (at
/// most [`MAX_TOGETHER`] a signature; one part alone gets its own, as [`sign`] makes it).
pub fn sign_together(keys: &TableKeys, table: &str, parts: &[Part<'_>]) -> Vec<Proof> {
    parts
        .chunks(MAX_TOGETHER)
        .flat_map(|chunk| sign_list(keys, table, chunk))
        .collect()
}

/// [`sign_together`] for at most [`MAX_TOGETHER`] parts.
fn sign_list(keys: &TableKeys, table: &str, parts: &[Part<'_>]) -> Vec<Proof> {
    match parts {
        [] => return Vec::new(),
        [part] => {
            return vec![Proof {
                sig: sign(keys, part.domain, table, part.payload),
                row: None,
                salt: None,
            }]
        }
        _ => {}
    }
    let mut list = Vec::with_capacity(parts.len() * 32);
    for p in parts {
        let salt = p.salt.as_ref().map_or(&[][..], |s| &s[..]);
        list.extend_from_slice(&digest(p.domain, table, salt, p.payload));
    }
    let sig = keys.sign(&signed_bytes(ROW, table, &list));
    let row = hex::encode(&list);
    parts
        .iter()
        .map(|p| Proof {
            sig: sig.clone(),
            row: Some(row.clone()),
            salt: p.salt.map(hex::encode),
        })
        .collect()
}

fn signature(sig: &str) -> Option<Signature> {
    let bytes = hex::decode(sig.trim()).ok()?;
    let bytes = <[u8; 64]>::try_from(bytes).ok()?;
    Some(Signature::from_bytes(&bytes))
}

/// Whether `sig` (hex) is `key`'s signature of `payload` as `table`'s, in `domain`.
pub fn verify(key: &VerifyingKey, domain: &str, table: &str, payload: &[u8], sig: &str) -> bool {
    signature(sig).is_some_and(|s| {
        key.verify(&signed_bytes(domain, table, payload), &s)
            .is_ok()
    })
}

/// Whether `proof` proves `payload` to be `table`'s in `domain`, signed by `key`: alone
/// ([`verify`]), or with the other messages of its row (its digest in the row's list, and
/// the list signed).
pub fn verify_proof(
    key: &VerifyingKey,
    domain: &str,
    table: &str,
    payload: &[u8],
    proof: ProofRef<'_>,
) -> bool {
    claim(domain, table, payload, proof).is_some_and(|c| key.verify(&c.signed, &c.sig).is_ok())
}

/// What a message's proof asks a key to have signed: the bytes and the signature, once
/// everything but the signature itself checks out (the message's digest in its row's
/// list). `None`: the proof cannot hold whatever the key.
#[derive(Debug, Clone)]
pub struct Claim {
    signed: Vec<u8>,
    sig: Signature,
}

/// The [`Claim`] of `payload` with `proof` as `table`'s in `domain`.
pub fn claim(domain: &str, table: &str, payload: &[u8], proof: ProofRef<'_>) -> Option<Claim> {
    let Some(row) = proof.row else {
        return match proof.salt {
            None => Some(Claim {
                signed: signed_bytes(domain, table, payload),
                sig: signature(proof.sig)?,
            }),
            Some(_) => None,
        };
    };
    // Bounded before it is decoded: a message cannot make a relay hash a list of any length.
    if row.len() > MAX_TOGETHER * 64 {
        return None;
    }
    let list = hex::decode(row.trim()).ok()?;
    if list.is_empty() || list.len() % 32 != 0 {
        return None;
    }
    let salt = match proof.salt.map(|s| hex::decode(s.trim())) {
        None => Vec::new(),
        Some(Ok(salt)) if salt.len() <= MAX_SALT => salt,
        Some(_) => return None,
    };
    let own = digest(domain, table, &salt, payload);
    if !list.chunks_exact(32).any(|d| d == own) {
        return None;
    }
    Some(Claim {
        signed: signed_bytes(ROW, table, &list),
        sig: signature(proof.sig)?,
    })
}

/// Whether each of `claims` holds for `key`: checked together (Ed25519's batch
/// verification, about twice as fast a signature as one by one), and one by one only when
/// the batch fails, to find which do not hold — the floor checks every row of a fetch so.
pub fn verify_claims(key: &VerifyingKey, claims: &[&Claim]) -> Vec<bool> {
    let messages: Vec<&[u8]> = claims.iter().map(|c| c.signed.as_slice()).collect();
    let sigs: Vec<Signature> = claims.iter().map(|c| c.sig).collect();
    let keys = vec![*key; claims.len()];
    if claims.len() > 1 && ed25519_dalek::verify_batch(&messages, &sigs, &keys).is_ok() {
        return vec![true; claims.len()];
    }
    claims
        .iter()
        .map(|c| key.verify(&c.signed, &c.sig).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_checked_together_say_which_hold() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let other = TableKeys::from_secrets([9; 32], [8; 32]);
        let key = key_of(&keys);
        let payloads: Vec<Vec<u8>> = (0..5)
            .map(|i| format!("{{\"seq\":{i}}}").into_bytes())
            .collect();
        let mut sigs: Vec<String> = payloads.iter().map(|p| sign(&keys, LOG, "t1", p)).collect();
        let claims = |sigs: &[String]| -> Vec<Claim> {
            payloads
                .iter()
                .zip(sigs)
                .map(|(p, s)| {
                    let proof = ProofRef {
                        sig: s,
                        row: None,
                        salt: None,
                    };
                    claim(LOG, "t1", p, proof).expect("well formed")
                })
                .collect()
        };
        let first = claims(&sigs);
        assert_eq!(
            verify_claims(&key, &first.iter().collect::<Vec<_>>()),
            vec![true; 5]
        );
        sigs[2] = sign(&other, LOG, "t1", &payloads[2]);
        let second = claims(&sigs);
        assert_eq!(
            verify_claims(&key, &second.iter().collect::<Vec<_>>()),
            vec![true, true, false, true, true],
            "the one signed with another key found"
        );
        let each: Vec<bool> = payloads
            .iter()
            .zip(&sigs)
            .map(|(p, s)| {
                verify_proof(
                    &key,
                    LOG,
                    "t1",
                    p,
                    ProofRef {
                        sig: s,
                        row: None,
                        salt: None,
                    },
                )
            })
            .collect();
        assert_eq!(
            each,
            vec![true, true, false, true, true],
            "as verify_proof says"
        );
    }

    fn key_of(keys: &TableKeys) -> VerifyingKey {
        super::super::attest::verifying_key(&keys.public_hex()).expect("key")
    }

    #[test]
    fn a_signature_binds_the_bytes_the_table_and_the_domain() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let key = key_of(&keys);
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
        assert!(
            !verify(&key_of(&other), PUBLIC, "t1", b"{\"n\":1}", &sig),
            "other key"
        );
    }

    const ROW_TEXT: &[u8] = b"{\"seq\":7,\"card\":\"Qh\"}";
    const FIRST: &[u8] = b"{\"n\":4,\"type\":\"delta\"}";
    const SECOND: &[u8] = b"{\"n\":5,\"type\":\"final\"}";

    fn row_proofs(keys: &TableKeys) -> Vec<Proof> {
        let salt = salt(keys, "t1:1:7");
        sign_together(
            keys,
            "t1",
            &[
                Part {
                    domain: LOG,
                    payload: ROW_TEXT,
                    salt: Some(salt),
                },
                Part {
                    domain: PUBLIC,
                    payload: FIRST,
                    salt: None,
                },
                Part {
                    domain: PUBLIC,
                    payload: SECOND,
                    salt: None,
                },
            ],
        )
    }

    #[test]
    fn a_row_and_its_messages_share_one_signature_and_each_is_checked_on_its_own() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let key = key_of(&keys);
        let proofs = row_proofs(&keys);
        assert_eq!(proofs.len(), 3);
        assert!(
            proofs.iter().all(|p| p.sig == proofs[0].sig),
            "one signature"
        );
        assert!(verify_proof(&key, LOG, "t1", ROW_TEXT, proofs[0].as_ref()));
        assert!(verify_proof(&key, PUBLIC, "t1", FIRST, proofs[1].as_ref()));
        assert!(verify_proof(&key, PUBLIC, "t1", SECOND, proofs[2].as_ref()));
        // Another message's proof in the same row serves as well (its list holds both).
        assert!(verify_proof(&key, PUBLIC, "t1", SECOND, proofs[1].as_ref()));

        let refused = |domain, table, payload: &[u8], proof: ProofRef<'_>, why: &str| {
            assert!(!verify_proof(&key, domain, table, payload, proof), "{why}");
        };
        refused(
            PUBLIC,
            "t1",
            b"{\"n\":6}",
            proofs[1].as_ref(),
            "other bytes",
        );
        refused(PUBLIC, "t2", FIRST, proofs[1].as_ref(), "other table");
        refused(SNAPSHOT, "t1", FIRST, proofs[1].as_ref(), "other domain");
        refused(
            PUBLIC,
            "t1",
            ROW_TEXT,
            proofs[0].as_ref(),
            "the log row as a public message",
        );
        let unsalted = ProofRef {
            salt: None,
            ..proofs[0].as_ref()
        };
        refused(
            LOG,
            "t1",
            ROW_TEXT,
            unsalted,
            "the log row without its salt",
        );
        let alone = ProofRef {
            row: None,
            ..proofs[1].as_ref()
        };
        refused(
            PUBLIC,
            "t1",
            FIRST,
            alone,
            "the row's signature as the message's own",
        );
        // A list with another digest in it (the forger's payload's) is not the one signed.
        let forged = b"{\"n\":4,\"type\":\"delta\",\"forged\":true}";
        let mut list = hex::decode(proofs[1].row.as_deref().expect("row")).expect("hex");
        list[32..64].copy_from_slice(&digest(PUBLIC, "t1", &[], forged));
        let list = hex::encode(list);
        let swapped = ProofRef {
            row: Some(&list),
            ..proofs[1].as_ref()
        };
        refused(
            PUBLIC,
            "t1",
            forged,
            swapped,
            "a digest swapped in the list",
        );
        let other = TableKeys::from_secrets([9; 32], [8; 32]);
        assert!(
            !verify_proof(&key_of(&other), PUBLIC, "t1", FIRST, proofs[1].as_ref()),
            "other key"
        );
    }

    #[test]
    fn the_list_does_not_tell_the_log_row_without_its_salt() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let proofs = row_proofs(&keys);
        let list = hex::decode(proofs[1].row.as_deref().expect("row")).expect("hex");
        // The row's digest without the salt, as someone trying candidates would compute it.
        assert!(!list
            .chunks_exact(32)
            .any(|d| d == digest(LOG, "t1", &[], ROW_TEXT)));
        // The salt is the table's: another seal secret, another salt; the same row, the same.
        let other = TableKeys::from_secrets([7; 32], [9; 32]);
        assert_ne!(salt(&keys, "t1:1:7"), salt(&other, "t1:1:7"));
        assert_eq!(salt(&keys, "t1:1:7"), salt(&keys, "t1:1:7"));
        assert_ne!(salt(&keys, "t1:1:7"), salt(&keys, "t1:1:8"));
    }

    #[test]
    fn a_row_past_the_longest_list_is_signed_in_lists_of_at_most_that_many() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let key = key_of(&keys);
        let payloads: Vec<Vec<u8>> = (0..MAX_TOGETHER + 2)
            .map(|n| format!("{{\"n\":{n}}}").into_bytes())
            .collect();
        let parts: Vec<Part<'_>> = payloads
            .iter()
            .map(|p| Part {
                domain: PUBLIC,
                payload: p,
                salt: None,
            })
            .collect();
        let proofs = sign_together(&keys, "t1", &parts);
        assert_eq!(proofs.len(), parts.len());
        for (p, proof) in payloads.iter().zip(&proofs) {
            assert!(verify_proof(&key, PUBLIC, "t1", p, proof.as_ref()));
        }
        assert_eq!(proofs[0].sig, proofs[MAX_TOGETHER - 1].sig);
        assert_ne!(proofs[0].sig, proofs[MAX_TOGETHER].sig, "a second list");
        assert!(
            proofs[MAX_TOGETHER].row.is_some(),
            "two left: signed together"
        );
    }

    #[test]
    fn one_part_is_signed_alone() {
        let keys = TableKeys::from_secrets([7; 32], [8; 32]);
        let proofs = sign_together(
            &keys,
            "t1",
            &[Part {
                domain: PUBLIC,
                payload: FIRST,
                salt: None,
            }],
        );
        assert_eq!(proofs.len(), 1);
        assert_eq!(proofs[0].row, None);
        let key = key_of(&keys);
        assert!(verify(&key, PUBLIC, "t1", FIRST, &proofs[0].sig));
        // As every message was signed before rows were: the relays still serve it.
        assert!(verify_proof(&key, PUBLIC, "t1", FIRST, proofs[0].as_ref()));
        let salted = ProofRef {
            salt: Some("00"),
            ..proofs[0].as_ref()
        };
        assert!(
            !verify_proof(&key, PUBLIC, "t1", FIRST, salted),
            "a salt only goes with a row's list"
        );
    }
}
