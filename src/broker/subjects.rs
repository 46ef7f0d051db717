//! Names on the broker, shared by the publisher and the relay.
//!
//! | what | name |
//! |---|---|
//! | the public feed of table `T` | subject `croupier.T.public`, stream `<public_stream>_T` |
//! | every log row of `T` | subject `croupier.T.log`, stream `<log_stream>_T` |
//! | the latest public view of every table | key-value bucket `<bucket>`, key `T` |
//!
//! One stream per table and subject, so a stream's sequence numbers *are* the table's:
//! the log stream's sequence is the row's `seq`, the public stream's is the message's `n`.
//! Every publication carries `Nats-Expected-Last-Sequence`, so the broker itself refuses a
//! gap or a repeat, beyond its de-duplication window (`Nats-Msg-Id`) too.

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
/// Header: the table's Ed25519 signature of the payload (`trust::wire`), on every public
/// message and bucket snapshot.
pub const HEADER_SIG: &str = "Croupier-Sig";

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
