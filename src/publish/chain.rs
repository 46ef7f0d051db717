//! One subject's messages, published without waiting for the broker's acknowledgement
//! of each, and confirmed together afterwards.
//!
//! Every message carries `Nats-Msg-Id` and expects the one before it by id
//! (`Nats-Expected-Last-Msg-Id`; the first of a pass expects the stream's last sequence),
//! so the stream stores a chain's messages only in order and only after one another: once
//! one is missing (refused because a foreign message got in, or lost with the connection),
//! every later one is refused. So whether all were stored is known from the last alone,
//! sent again with a reply ([`Chain::confirm`]): the broker checks `Nats-Msg-Id` before the
//! expected id, so a stored message is answered with its sequence as a duplicate; a lost
//! one is stored now if the one before it is the stream's last (still in order), and
//! refused otherwise. Checked against nats-server 2.9 by `tests/studio_*` (foreign
//! messages, outages, restarts).
//!
//! Why: awaiting an acknowledgement per message cost the table a wake-up of the broker
//! client's task and of the publisher for every message (docs/src/benchmarks.md,
//! "Acknowledged once a second").

use async_nats::header::{
    NATS_EXPECTED_LAST_MESSAGE_ID, NATS_EXPECTED_LAST_SEQUENCE, NATS_MESSAGE_ID,
};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::{Client, HeaderMap};
use bytes::Bytes;

/// A chain could not be sent or confirmed.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// The broker failed or refused a request.
    #[error("broker: {0}")]
    Broker(String),
    /// The stream does not hold what was sent, in order: a foreign message got in
    /// between, or the connection lost a message and one after it was refused.
    #[error("{0}")]
    Hole(String),
}

/// The last message of a chain, kept until it is confirmed.
struct Last {
    subject: String,
    headers: HeaderMap,
    payload: Bytes,
    /// The stream sequence it must be stored at.
    expected: u64,
}

/// One subject's messages sent since their last confirmation.
#[derive(Default)]
pub struct Chain {
    /// The id of the last message sent (the next one expects it); `None` before a pass's
    /// first message, which expects the stream's last sequence instead.
    prev: Option<String>,
    /// The last message sent and not yet confirmed.
    last: Option<Last>,
    /// Messages sent and not yet confirmed.
    count: u64,
}

impl Chain {
    /// Messages sent and not yet confirmed.
    pub fn unconfirmed(&self) -> u64 {
        self.count
    }

    /// Publishes `payload` on `subject` with `headers`, id `msg_id`, to be stored at
    /// sequence `expected`, without a reply.
    pub async fn send(
        &mut self,
        client: &Client,
        subject: &str,
        mut headers: HeaderMap,
        msg_id: String,
        payload: String,
        expected: u64,
    ) -> Result<(), ChainError> {
        headers.insert(NATS_MESSAGE_ID, msg_id.as_str());
        match self.prev.replace(msg_id) {
            Some(prev) => headers.insert(NATS_EXPECTED_LAST_MESSAGE_ID, prev.as_str()),
            None => headers.insert(
                NATS_EXPECTED_LAST_SEQUENCE,
                expected.saturating_sub(1).to_string().as_str(),
            ),
        }
        let payload = Bytes::from(payload);
        client
            .publish_with_headers(subject.to_string(), headers.clone(), payload.clone())
            .await
            .map_err(|e| ChainError::Broker(e.to_string()))?;
        self.last = Some(Last {
            subject: subject.to_string(),
            headers,
            payload,
            expected,
        });
        self.count += 1;
        Ok(())
    }

    /// Confirms every message sent since the last confirmation (see the module's
    /// comment); returns how many.
    pub async fn confirm(
        &mut self,
        js: &async_nats::jetstream::Context,
    ) -> Result<u64, ChainError> {
        let Some(last) = self.last.take() else {
            return Ok(0);
        };
        let ack = js
            .publish_with_headers(last.subject.clone(), last.headers, last.payload)
            .await
            .map_err(|e| ChainError::Broker(e.to_string()))?
            .await
            .map_err(|e| match e.kind() {
                PublishErrorKind::WrongLastSequence | PublishErrorKind::WrongLastMessageId => {
                    ChainError::Hole(format!(
                        "{} does not hold the messages sent to it in order (a foreign message got in, or the connection lost one): {e}",
                        last.subject
                    ))
                }
                _ => ChainError::Broker(e.to_string()),
            })?;
        if ack.sequence != last.expected {
            return Err(ChainError::Broker(format!(
                "stream {} holds the message at sequence {} where {} was expected",
                ack.stream, ack.sequence, last.expected
            )));
        }
        Ok(std::mem::take(&mut self.count))
    }
}
