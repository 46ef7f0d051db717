//! A pull that delivers nothing, checked against the stream itself: the one check of
//! "nothing new" that does not rest on the consumer's word.
//!
//! A consumer that is there answers its pull with idle heartbeats (and expired pulls with
//! a timeout status), and async-nats counts either as the consumer alive. A short nemesis
//! run (`tests/it/nemesis.rs`) caught one such consumer that delivered nothing for over
//! two minutes while its stream grew by 2,000 messages: the relay alive and idle, its
//! log silent, the table's viewers without a message. The floor met the same on its side
//! (`floor/ingest/quiet.rs`). So a pull that has delivered nothing for [`NO_PROGRESS`]
//! asks the stream's leader for the message after the last one taken; a message there
//! that the consumer still does not deliver within [`DELIVER_WITHIN`] means the consumer
//! is stuck, and the pass ends so the next makes it again from that message. It costs a
//! quiet table one request per [`NO_PROGRESS`].

use async_nats::jetstream::stream::Stream;
use std::time::Duration;

/// How long a pull may deliver nothing before the stream is asked: as the floor's, far
/// above a dealing table's gap between messages (a fraction of a second), far below the
/// studio's checks.
pub(super) const NO_PROGRESS: Duration = Duration::from_secs(10);
/// How long a message the stream holds then has to arrive: a consumer that is merely late
/// delivers it in this time, with the stream's answer on the same connection before it.
pub(super) const DELIVER_WITHIN: Duration = Duration::from_secs(1);
/// How long the stream's leader has to answer: one that does not is a node lost, which
/// the heartbeat's judgement handles.
const ASK_WITHIN: Duration = Duration::from_secs(1);

/// The stream sequence after `taken` if the stream holds a message there; `None` when it
/// holds none (a quiet table), or did not answer within [`ASK_WITHIN`]. (A message the
/// stream's age limit already removed, a day after it was published, reads as none.)
pub(super) async fn held_after(stream: &Stream, taken: u64) -> Option<u64> {
    let next = taken + 1;
    match tokio::time::timeout(ASK_WITHIN, stream.get_raw_message(next)).await {
        Ok(Ok(_)) => Some(next),
        _ => None,
    }
}
