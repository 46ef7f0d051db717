//! Names on the broker, shared by the publisher and the relay.
//!
//! | what | name |
//! |---|---|
//! | the public feed of table `T` | subject `croupier.T.public`, stream `<public_stream>_T` |
//! | every log row of `T` | subject `croupier.T.log`, stream `<log_stream>_T` |
//! | the latest public view of every table | key-value bucket `<bucket>`, key `T` |
//!
//! One stream per table and subject. A stream's sequence is *not* taken for the row's
//! `seq` or the message's `n`: anyone granted the subject can add to the stream, so the
//! publisher sends one message in flight per stream with `Nats-Msg-Id` and no guard, and
//! reads its own messages back by their signatures (`publish::position`; ARCHITECTURE.md,
//! invariant "Positions on the broker prove nothing").

/// The public subject of `table`.
pub fn public(table: &str) -> String {
    format!("croupier.{table}.public")
}

/// The log subject of `table`.
pub fn log(table: &str) -> String {
    format!("croupier.{table}.log")
}

/// The wildcard the relay watches (every table's public subject).
pub const ALL_PUBLIC: &str = "croupier.*.public";

/// The stream for `table` with the configured prefix.
pub fn stream(prefix: &str, table: &str) -> String {
    format!("{prefix}_{table}")
}

/// Header: the message's resume id, `seq.sub`.
pub const HEADER_ID: &str = "Croupier-Id";
/// Header: the table.
pub const HEADER_TABLE: &str = "Croupier-Table";
/// Header: the table's Ed25519 signature (`trust::wire`), on every public message, log
/// row and bucket snapshot: of the payload itself, or of its row's list of digests.
pub const HEADER_SIG: &str = "Croupier-Sig";
/// Header: on a message signed with the other messages of its row, the row's list of
/// digests that `Croupier-Sig` signs (`trust::wire`).
pub const HEADER_ROW: &str = "Croupier-Row";
/// Header: on a log row signed with its public messages, the salt of its digest.
pub const HEADER_SALT: &str = "Croupier-Salt";

/// What `headers` carry to prove a message the table's (`trust::wire::verify_proof`);
/// `None` without a signature.
pub fn proof(headers: &async_nats::HeaderMap) -> Option<crate::trust::wire::ProofRef<'_>> {
    Some(crate::trust::wire::ProofRef {
        sig: headers.get(HEADER_SIG)?.as_str(),
        row: headers.get(HEADER_ROW).map(|v| v.as_str()),
        salt: headers.get(HEADER_SALT).map(|v| v.as_str()),
    })
}

/// Whether `headers` prove `payload` to be `table`'s, in `domain`, signed by `key`.
pub fn signed(
    key: &ed25519_dalek::VerifyingKey,
    domain: &str,
    table: &str,
    payload: &[u8],
    headers: &async_nats::HeaderMap,
) -> bool {
    proof(headers).is_some_and(|p| crate::trust::wire::verify_proof(key, domain, table, payload, p))
}

/// What `headers`' proof asks a key to have signed for `payload` (`trust::wire::claim`),
/// for checking many messages together (`trust::wire::verify_claims`).
pub fn claim(
    domain: &str,
    table: &str,
    payload: &[u8],
    headers: &async_nats::HeaderMap,
) -> Option<crate::trust::wire::Claim> {
    proof(headers).and_then(|p| crate::trust::wire::claim(domain, table, payload, p))
}

/// `message` with `proof` in its headers.
pub fn with_proof(
    message: async_nats::jetstream::message::PublishMessage,
    proof: &crate::trust::wire::Proof,
) -> async_nats::jetstream::message::PublishMessage {
    let message = message.header(HEADER_SIG, proof.sig.as_str());
    let message = match &proof.row {
        Some(row) => message.header(HEADER_ROW, row.as_str()),
        None => message,
    };
    match &proof.salt {
        Some(salt) => message.header(HEADER_SALT, salt.as_str()),
        None => message,
    }
}

/// The subject of `table`'s value in `bucket`.
pub fn bucket_key(bucket: &str, table: &str) -> String {
    format!("$KV.{bucket}.{table}")
}

/// The default public stream prefix.
pub const DEFAULT_PUBLIC_STREAM: &str = "CROUPIER_PUBLIC";
/// The default log stream prefix.
pub const DEFAULT_LOG_STREAM: &str = "CROUPIER_LOG";
/// The default key-value bucket.
pub const DEFAULT_BUCKET: &str = "croupier_tables";
