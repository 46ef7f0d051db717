//! The configurations of a table's two streams and of the views' bucket: one definition
//! for the table's publisher (which creates them on a broker that lets it) and for
//! `croupier studio provision` (the admin creates them where the tables may not).

use super::subjects;
use async_nats::jetstream::{consumer, stream};
use std::time::Duration;

/// The names and retention the streams are made with (`[publish]`'s, or the studio's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamNames {
    /// The public streams' prefix.
    pub public_stream: String,
    /// The log streams' prefix.
    pub log_stream: String,
    /// The bucket.
    pub bucket: String,
    /// Replicas.
    pub replicas: usize,
    /// Hours the public stream keeps messages (0: for ever).
    pub public_max_age_hours: u32,
}

impl Default for StreamNames {
    fn default() -> StreamNames {
        StreamNames {
            public_stream: subjects::DEFAULT_PUBLIC_STREAM.into(),
            log_stream: subjects::DEFAULT_LOG_STREAM.into(),
            bucket: subjects::DEFAULT_BUCKET.into(),
            replicas: 1,
            public_max_age_hours: 24,
        }
    }
}

impl StreamNames {
    /// Table `id`'s public stream: subject `croupier.<id>.public`.
    pub fn public(&self, id: &str) -> stream::Config {
        table_stream(
            subjects::stream(&self.public_stream, id),
            subjects::public(id),
            Duration::from_secs(u64::from(self.public_max_age_hours) * 3600),
            self.replicas,
        )
    }

    /// Table `id`'s log stream: subject `croupier.<id>.log`, kept for ever.
    pub fn log(&self, id: &str) -> stream::Config {
        table_stream(
            subjects::stream(&self.log_stream, id),
            subjects::log(id),
            Duration::ZERO,
            self.replicas,
        )
    }

    /// The bucket's stream, with the key-value conventions (`KV_<bucket>`,
    /// `$KV.<bucket>.>`, one value per key, rollups, no deletes). It is created as a
    /// stream rather than by `create_key_value`, which first asks for the account's
    /// information in a form nats-server 2.9 does not answer.
    pub fn bucket(&self) -> stream::Config {
        stream::Config {
            name: format!("KV_{}", self.bucket),
            description: Some("croupier: the latest public view of every table".into()),
            subjects: vec![format!("$KV.{}.>", self.bucket)],
            max_messages_per_subject: 1,
            storage: stream::StorageType::File,
            num_replicas: self.replicas,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: stream::DiscardPolicy::New,
            ..Default::default()
        }
    }
}

fn table_stream(
    name: String,
    subject: String,
    max_age: Duration,
    replicas: usize,
) -> stream::Config {
    stream::Config {
        name,
        subjects: vec![subject],
        max_age,
        num_replicas: replicas,
        storage: stream::StorageType::File,
        discard: stream::DiscardPolicy::Old,
        duplicate_window: Duration::from_secs(120),
        allow_direct: true,
        // Nobody deletes a message or purges a table's stream, whatever their grants.
        deny_delete: true,
        deny_purge: true,
        ..Default::default()
    }
}

/// The floor's durable consumer on a table's log stream (`croupier floor` creates it where
/// it may; on a studio broker `croupier studio provision` does, so the floor needs no
/// grant to create consumers).
pub fn floor_consumer(name: &str) -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(name.to_string()),
        description: Some("croupier floor: every log row into PostgreSQL".into()),
        ack_policy: consumer::AckPolicy::All,
        ack_wait: Duration::from_secs(30),
        max_ack_pending: 20_000,
        ..Default::default()
    }
}
