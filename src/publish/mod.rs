//! The table → broker outbox (`[publish]` in `table.toml`): every committed log row, and
//! the public feed derived from it, published to NATS JetStream for the studio's relays
//! (`crate::relay`).
//!
//! - `crate::broker`: the `[publish]` section, the names on the broker, the connection and
//!   the status (shared with the relay, `table.toml` and `web`).
//! - `fold`: the public messages each committed row makes, numbered from the log.
//! - `floor_commands`: the casino floor's signed dispute commands (`[publish] floor_key`).
//! - `outbox`: the publisher task: reads committed rows from SQLite in order, publishes,
//!   awaits each acknowledgement, records its progress, resumes after a crash or outage.
//! - [`PublishStatus`] (in `crate::broker`, below `web`, which reports it): what `/readyz`
//!   and `/metrics` say about the publisher.
//!
//! The broker is never on the table's path: the table commits and tells its own viewers
//! as before; the publisher follows the committed log at its own pace, so a broker that is
//! down only makes the publisher lag (`/readyz` reason `publish_lag`), never the table.

pub mod branch;
pub mod floor_commands;
pub mod fold;
pub mod lost;
pub mod outbox;
mod position;

pub use crate::broker::{subjects, PublishSection};

pub use crate::broker::{PublishState, PublishStatus};
