//! `croupier studio provision`: the admin makes what the parties read and cannot make
//! themselves — every table's two streams, the floor's durable consumer on each log
//! stream and the bucket in the studio's account, and the relays' mirrors of the public
//! streams and the bucket in theirs (`grants`: a relay that could create consumers on the
//! studio's streams could have them deliver into any table's subject).
//!
//! A mirror holds nothing of its own: the origin's messages under the origin's sequence
//! numbers. nats-server 2.9 stores a mirrored message through the same checks as a
//! publication, headers included, so a message a table chained to the one before it
//! (`Nats-Expected-Last-Msg-Id`) is refused by a mirror that does not know that message's
//! id — and every later one of the chain with it, for good. Hence a new mirror starts at
//! the first message that opens a chain (`chain_start`); a mirror keeps a message's id for
//! [`MIRROR_WINDOW`], so that a broker restarted within that time still knows it; and a
//! mirror found not following its origin is made again (`follows`).

use super::{credential_path, grants, load_spec, StudioError};
use async_nats::jetstream::{self, stream, Context};
use std::path::Path;
use std::time::Duration;

/// How long a mirror remembers the ids of the messages it stored (its de-duplication
/// window), at most the stream's age limit. A broker that restarts with a mirror behind
/// its origin in the middle of a chain resumes it only if it still knows the last id the
/// mirror stored: for up to this long after that message. The cost is the ids in memory:
/// about 100 bytes a message.
pub const MIRROR_WINDOW: Duration = Duration::from_secs(3600);

/// How long `provision` waits for an existing mirror to reach what its origin held when
/// it looked, before taking it for stuck and making it again.
const CATCH_UP: Duration = Duration::from_secs(10);

/// What `provision` did about one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// It was missing and is now there.
    Created,
    /// It was there.
    Exists,
    /// A mirror that no longer followed its origin, deleted and made again.
    Remade,
}

impl std::fmt::Display for Made {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Made::Created => "created",
            Made::Exists => "exists",
            Made::Remade => "remade (it had stopped following its origin)",
        })
    }
}

fn broker(e: impl std::fmt::Display) -> StudioError {
    StudioError::Broker(e.to_string())
}

/// Whether `e` says the stream does not exist (as opposed to no answer).
fn not_found(e: &jetstream::context::GetStreamError) -> bool {
    matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(ref j)
        if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND)
}

/// Creates every table's two streams, the floor's consumer on each log stream, the bucket
/// and the relays' mirrors, where missing, as the admin (`credentials/admin.nk` in `dir`);
/// `broker` names the servers and TLS. Returns what it made sure of and how.
pub async fn provision(
    dir: &Path,
    broker_options: &crate::broker::BrokerOptions,
) -> Result<Vec<(String, Made)>, StudioError> {
    let spec = load_spec(dir)?;
    let mut options = broker_options.clone();
    if options.credentials.is_none() {
        options.credentials = Some(credential_path(dir, "admin"));
    }
    let client = crate::broker::connect(&options, "croupier studio provision")
        .await
        .map_err(broker)?;
    let js = crate::broker::jetstream(client.clone(), options.api_prefix());
    let relays = crate::broker::jetstream(client, grants::RELAY_API);
    let names = spec.names();
    let mut origins = vec![names.bucket()];
    let mut configs = vec![names.bucket()];
    for id in &spec.tables {
        origins.push(names.public(id));
        configs.push(names.public(id));
        configs.push(names.log(id));
    }
    let mut out = Vec::new();
    for config in configs {
        let name = config.name.clone();
        let is_log = name.starts_with(&format!("{}_", spec.log_stream));
        let (stream, made) = match js.get_stream(&name).await {
            Ok(s) => (s, Made::Exists),
            Err(e) if not_found(&e) => {
                let s = js
                    .create_stream(config)
                    .await
                    .map_err(|e| broker(format!("creating {name}: {e}")))?;
                (s, Made::Created)
            }
            Err(e) => return Err(broker(format!("{name}: {e}"))),
        };
        out.push((name.clone(), made));
        if is_log {
            // The floor's consumer, so the floor needs no grant to create consumers.
            let consumer = &spec.floor_consumer;
            let made = if stream.consumer_info(consumer).await.is_err() {
                Made::Created
            } else {
                Made::Exists
            };
            stream
                .get_or_create_consumer::<jetstream::consumer::pull::Config>(
                    consumer,
                    crate::broker::streams::floor_consumer(consumer),
                )
                .await
                .map_err(|e| broker(format!("the floor's consumer on {name}: {e}")))?;
            out.push((format!("{name} consumer {consumer}"), made));
        }
    }
    // Without mirrors the relays read the studio's streams.
    let origins = if spec.relay_mirrors {
        origins
    } else {
        Vec::new()
    };
    for origin in origins {
        let made = mirror(&js, &relays, &origin).await?;
        out.push((format!("{} (the relays' mirror)", origin.name), made));
    }
    Ok(out)
}

/// The relays' mirror of `origin`: made where missing, made again where it does not
/// follow its origin.
async fn mirror(
    js: &Context,
    relays: &Context,
    origin: &stream::Config,
) -> Result<Made, StudioError> {
    let name = &origin.name;
    let existing = match relays.get_stream(name).await {
        Ok(s) => Some(s),
        Err(e) if not_found(&e) => None,
        Err(e) => {
            return Err(broker(format!(
                "the relays' account does not answer ({e}): is the broker running the configuration `croupier studio nats-config` wrote, reloaded?"
            )))
        }
    };
    let made = match existing {
        None => Made::Created,
        Some(mirror) => {
            if follows(js, mirror, name).await? {
                return Ok(Made::Exists);
            }
            relays
                .delete_stream(name)
                .await
                .map_err(|e| broker(format!("deleting the stuck mirror {name}: {e}")))?;
            Made::Remade
        }
    };
    let start = chain_start(js, name).await?;
    relays
        .create_stream(mirror_config(origin, start))
        .await
        .map_err(|e| broker(format!("creating the relays' mirror {name}: {e}")))?;
    Ok(made)
}

/// Whether `mirror` reaches, within [`CATCH_UP`], the last message its origin held when
/// asked.
async fn follows(
    js: &Context,
    mut mirror: stream::Stream,
    name: &str,
) -> Result<bool, StudioError> {
    let target = js
        .get_stream(name)
        .await
        .map_err(|e| broker(format!("{name}: {e}")))?
        .cached_info()
        .state
        .last_sequence;
    let deadline = tokio::time::Instant::now() + CATCH_UP;
    loop {
        let held = mirror.info().await.map_err(broker)?.state.last_sequence;
        if held >= target {
            return Ok(true);
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Where a new mirror of stream `name` starts: `None` (from the beginning) on a stream
/// that holds nothing, else the first message that opens a chain (one that does not name
/// the message before it). A stream that ends inside a chain — its table is publishing
/// one right now — is looked at again until the chain ends.
async fn chain_start(js: &Context, name: &str) -> Result<Option<u64>, StudioError> {
    let deadline = tokio::time::Instant::now() + CATCH_UP;
    let mut from = 0;
    loop {
        let mut stream = js
            .get_stream(name)
            .await
            .map_err(|e| broker(format!("{name}: {e}")))?;
        let state = stream.info().await.map_err(broker)?.state.clone();
        if state.messages == 0 {
            return Ok(None);
        }
        for seq in from.max(state.first_sequence)..=state.last_sequence {
            match stream.get_raw_message(seq).await {
                Ok(m) if m.headers.get(CHAINED).is_none() => return Ok(Some(seq)),
                // Chained to the message before it, or gone (a gap): not a start.
                Ok(_) | Err(_) => {}
            }
        }
        from = state.last_sequence + 1;
        if tokio::time::Instant::now() >= deadline {
            // Still inside one chain after all this time: the next message opens one.
            return Ok(Some(from));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The header that chains a message to the one before it (the client's constant: a
/// header named by a string is another name to its map).
const CHAINED: async_nats::header::HeaderName = async_nats::header::NATS_EXPECTED_LAST_MESSAGE_ID;

/// The relays' mirror of `origin`: the same name, limits and replicas, no subject, its
/// messages from the studio's account from `start`.
pub fn mirror_config(origin: &stream::Config, start: Option<u64>) -> stream::Config {
    let window = if origin.max_age.is_zero() {
        MIRROR_WINDOW
    } else {
        MIRROR_WINDOW.min(origin.max_age)
    };
    stream::Config {
        name: origin.name.clone(),
        description: Some(format!(
            "croupier: the relays' copy of the studio's {}",
            origin.name
        )),
        mirror: Some(stream::Source {
            name: origin.name.clone(),
            start_sequence: start,
            external: Some(stream::External {
                api_prefix: grants::STUDIO_API.into(),
                delivery_prefix: Some(grants::mirror_delivery(&origin.name)),
            }),
            ..Default::default()
        }),
        max_age: origin.max_age,
        max_messages_per_subject: origin.max_messages_per_subject,
        storage: origin.storage,
        num_replicas: origin.num_replicas,
        duplicate_window: window,
        discard: stream::DiscardPolicy::Old,
        // Direct gets: the relays read the bucket's values by key.
        allow_direct: true,
        deny_delete: true,
        deny_purge: true,
        ..Default::default()
    }
}
