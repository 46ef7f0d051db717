//! A missed idle heartbeat on a table's pull, judged before the consumer is given up:
//! a consumer lost with its node, or one that is there but was not heard.
//!
//! Two such cases are common. async-nats checks its heartbeat timer before the messages
//! that have already arrived, so a relay the machine did not run for two seconds (a
//! starved studio box) wakes to a "missed idle heartbeat" with the table's messages
//! waiting behind it. And the broker may hold no pull of the relay's (nats-server 2.9
//! drops an expired one silently: `follow::PULL_EXPIRES`). Making the consumer again
//! costs every viewer of that table the retry and a replay, so the relay first looks: a
//! message already waiting, or a consumer whose node still answers for it, means the
//! consumer is not lost, and it goes on.

use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::Message;
use futures::{FutureExt, Stream, StreamExt};
use std::time::Duration;

/// How long the consumer's node has to answer for it after a missed heartbeat: a node
/// that is gone costs the relay this much more before it makes the consumer again.
const ASK_WITHIN: Duration = Duration::from_secs(1);

/// What a missed heartbeat turned out to be.
pub(super) enum Missed {
    /// The relay was late: this message was already waiting.
    Waiting(Box<Message>),
    /// The consumer's node answered for it: why the heartbeat went missing, in words.
    Kept(Kept, String),
    /// The consumer is lost or cannot serve: make it again.
    Lost(String),
}

/// Why a heartbeat went missing while the consumer was not lost (`/metrics`' `judged`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kept {
    /// The relay was not run in time: messages had arrived or were on their way.
    RelayLate,
    /// The broker held no pull of the relay's, and had delivered no more than the relay
    /// took: the relay pulls anew on the same consumer.
    NoPull,
    /// The broker held the relay's pull with nothing to deliver: its heartbeat was late.
    BrokerLate,
}

impl Kept {
    /// Every judgement, in `/metrics`' order.
    pub const ALL: [Kept; 3] = [Kept::RelayLate, Kept::NoPull, Kept::BrokerLate];

    /// Its label in `/metrics`.
    pub fn label(self) -> &'static str {
        match self {
            Kept::RelayLate => "relay_late",
            Kept::NoPull => "no_pull",
            Kept::BrokerLate => "broker_late",
        }
    }

    /// Its place in [`Kept::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Judges a missed heartbeat on `messages`, the stream of `consumer`, after the relay
/// took `taken` deliveries from it.
pub(super) async fn judge<S, E>(consumer: &PullConsumer, messages: &mut S, taken: u64) -> Missed
where
    S: Stream<Item = Result<Message, E>> + Unpin,
    E: std::fmt::Display,
{
    // What arrived while the relay was not run is in its queue already.
    match messages.next().now_or_never() {
        Some(Some(Ok(message))) => return Missed::Waiting(Box::new(message)),
        Some(Some(Err(e))) => return Missed::Lost(e.to_string()),
        Some(None) => return Missed::Lost("the stream's consumer ended".into()),
        None => {}
    }
    // Nothing waiting: ask the consumer's node. Its answer comes on the same connection
    // after anything it delivered before, so a delivery past `taken` is queued by then.
    let info = match tokio::time::timeout(ASK_WITHIN, consumer.get_info()).await {
        Ok(Ok(info)) => info,
        Ok(Err(e)) => return Missed::Lost(format!("missed idle heartbeat; the consumer: {e}")),
        Err(_) => {
            return Missed::Lost(format!(
                "missed idle heartbeat; the consumer's node did not answer within {ASK_WITHIN:?}"
            ))
        }
    };
    let (delivered, waiting, pending) = (
        info.delivered.consumer_sequence,
        info.num_waiting,
        info.num_pending,
    );
    let said = format!(
        "the broker delivered {delivered}, the relay had taken {taken}; {waiting} pulls of the relay's held, {pending} messages waiting"
    );
    // Kept even with no pull of the relay's at the broker: the consumer is there, and
    // `follow` pulls anew; a second miss with nothing between gives the consumer up.
    let why = if delivered > taken {
        Kept::RelayLate
    } else if waiting == 0 {
        Kept::NoPull
    } else {
        Kept::BrokerLate
    };
    Missed::Kept(why, said)
}
