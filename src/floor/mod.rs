//! The casino floor (`croupier floor`): every table's published log in one PostgreSQL
//! database, checked on the way in.
//!
//! - `chain`: a published row's wire format and the check of each table's hash chain
//!   (pure);
//! - `db`: the PostgreSQL database (sqlx, migrations in `src/floor/migrations/`), the
//!   batch commit;
//! - `ingest`: one durable JetStream pull consumer per table log stream, acknowledged only
//!   after the commit.
//!
//! SQLite stays the table's own store; the floor only ever reads what the tables
//! published, so a floor that is down or behind never slows a table.

pub mod chain;
pub mod db;
pub mod ingest;

use crate::broker::subjects;
use std::path::PathBuf;
use std::sync::Arc;

pub use db::FloorDb;
pub use ingest::{IngestConfig, IngestStats};

/// `croupier floor`'s settings.
#[derive(Debug, Clone)]
pub struct FloorConfig {
    /// The broker: one or more comma-separated NATS URLs.
    pub nats: String,
    /// A NATS credentials file.
    pub credentials: Option<PathBuf>,
    /// The floor's database, `postgres://…`.
    pub database: String,
    /// The tables' log stream prefix.
    pub log_stream: String,
    /// The durable consumer's name.
    pub consumer: String,
    /// Database connections.
    pub connections: u32,
}

impl FloorConfig {
    /// The defaults for `nats` and `database`.
    pub fn new(nats: &str, database: &str) -> FloorConfig {
        FloorConfig {
            nats: nats.to_string(),
            credentials: None,
            database: database.to_string(),
            log_stream: subjects::DEFAULT_LOG_STREAM.to_string(),
            consumer: DEFAULT_CONSUMER.to_string(),
            connections: 8,
        }
    }
}

/// The durable consumer's default name.
pub const DEFAULT_CONSUMER: &str = "croupier_floor";

/// The floor could not start.
#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    /// The database.
    #[error(transparent)]
    Db(#[from] db::DbError),
    /// The broker.
    #[error(transparent)]
    Broker(#[from] crate::broker::ConnectError),
}

/// Runs the floor until `shutdown` ends; `started` is called once the database is
/// migrated and the broker connected.
pub async fn run(
    config: FloorConfig,
    stats: Arc<IngestStats>,
    shutdown: impl std::future::Future<Output = ()>,
    started: impl FnOnce(),
) -> Result<(), FloorError> {
    let db = FloorDb::open(&config.database, config.connections).await?;
    let client =
        crate::broker::connect(&config.nats, config.credentials.as_deref(), "croupier floor")
            .await?;
    let js = async_nats::jetstream::new(client);
    started();
    ingest::run(
        js,
        db,
        IngestConfig {
            log_stream: config.log_stream,
            consumer: config.consumer,
        },
        stats,
        shutdown,
    )
    .await;
    Ok(())
}
