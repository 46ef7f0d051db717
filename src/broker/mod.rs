//! The broker (NATS JetStream) as the table's publisher (`crate::publish`), the relay
//! (`crate::relay`), `table.toml` and `web` all see it: a leaf below them, so none of
//! them depends on `publish`, which builds on `table` and `web`.
//!
//! - `connect`: the connection (credentials, TLS, the party's private inbox);
//! - `streams`: the streams' and the bucket's configurations;
//! - `config`: `[publish]` in `table.toml`;
//! - `subjects`: subject, stream, bucket and header names;
//! - `status`: the publisher's status, reported by `/readyz` and `/metrics`;
//! - `noise`: what the readers of a table's streams say of messages it did not sign.

pub mod config;
pub mod connect;
pub mod liveness;
pub mod noise;
mod status;
pub mod streams;
pub mod subjects;

pub use config::PublishSection;
pub use connect::{connect, jetstream, redact, BrokerOptions, ConnectError};
pub use status::{PublishState, PublishStatus};
