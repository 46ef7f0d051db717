//! The casino floor (`croupier floor`): every table's published log in one PostgreSQL
//! database, checked on the way in.
//!
//! - `chain`: a published row's wire format and the check of each table's hash chain
//!   (pure);
//! - `db`: the PostgreSQL database (sqlx, migrations in `src/floor/migrations/`), the
//!   batch commit;
//! - `ingest`: one durable JetStream pull consumer per table log stream, acknowledged only
//!   after the commit;
//! - `accounts`: the pit page's supervisors (argon2id, lockout, sessions, audit);
//! - `report`: rounds with inputs and settlements folded from the rows, the shift report;
//! - `pit`: the pit page `/floor` and its API (`--bind`);
//! - `metrics`: `/metrics` beside the pit page (`--bind`).
//!
//! SQLite stays the table's own store; the floor only ever reads what the tables
//! published, so a floor that is down or behind never slows a table.

pub mod accounts;
pub mod chain;
pub mod db;
pub mod ingest;
pub mod metrics;
pub mod pit;
pub mod report;

use crate::broker::subjects;
use std::sync::Arc;

pub use db::FloorDb;
pub use ingest::{IngestConfig, IngestStats};

/// `croupier floor`'s settings.
#[derive(Debug, Clone)]
pub struct FloorConfig {
    /// The broker: URLs, credential, TLS, inbox prefix.
    pub broker: crate::broker::BrokerOptions,
    /// The floor's database, `postgres://…`.
    pub database: String,
    /// The tables' log stream prefix.
    pub log_stream: String,
    /// The durable consumer's name.
    pub consumer: String,
    /// Database connections.
    pub connections: u32,
    /// Serve the pit page here (`None`: ingest only).
    pub bind: Option<String>,
    /// The tables' view bucket (`[publish] bucket`).
    pub bucket: String,
    /// The key shared with the tables for dispute commands (`--floor-key`).
    pub floor_key: Option<Vec<u8>>,
    /// Serve the pit page over TLS with this PEM certificate chain and private key
    /// (`--https-cert`, `--https-key`); the session cookie is then `Secure`.
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// How long a table's stream may hold rows the floor has not taken before a `stall`
    /// alarm (`--stall-seconds`).
    pub stall: std::time::Duration,
    /// The tables' pinned public keys (`--table-keys`, the file `croupier studio
    /// nats-config` writes): only what a table signed is taken or shown.
    pub table_keys: std::path::PathBuf,
}

impl FloorConfig {
    /// The defaults for `nats`, `database` and the keys file `table_keys`.
    pub fn new(nats: &str, database: &str, table_keys: &std::path::Path) -> FloorConfig {
        FloorConfig {
            broker: crate::broker::BrokerOptions {
                url: nats.to_string(),
                inbox_prefix: Some(crate::broker::connect::FLOOR_INBOX.into()),
                ..Default::default()
            },
            database: database.to_string(),
            log_stream: subjects::DEFAULT_LOG_STREAM.to_string(),
            consumer: DEFAULT_CONSUMER.to_string(),
            connections: 8,
            bind: None,
            bucket: subjects::DEFAULT_BUCKET.to_string(),
            floor_key: None,
            tls: None,
            stall: std::time::Duration::from_secs(60),
            table_keys: table_keys.to_path_buf(),
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
    /// The pit page's address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The pit page's server failed.
    #[error("the pit page's server failed: {0}")]
    Http(std::io::Error),
    /// The pit page's certificate or key cannot be used.
    #[error("the pit page's TLS: {0}")]
    Tls(#[from] crate::web::tls::TlsError),
    /// The tables' keys file cannot be used.
    #[error(transparent)]
    Keys(#[from] crate::trust::pinned::PinnedError),
}

/// Serves the pit page on `listener` (TLS or plain) until `done`.
fn serve<L>(
    listener: L,
    app: axum::extract::connect_info::IntoMakeServiceWithConnectInfo<
        axum::Router,
        crate::web::auth::Peer,
    >,
    done: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<std::io::Result<()>>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
    crate::web::auth::Peer:
        for<'a> axum::extract::connect_info::Connected<axum::serve::IncomingStream<'a, L>>,
{
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(done)
            .await
    })
}

/// Runs the floor until `shutdown` ends; `started` is called once the database is
/// migrated, the broker connected and the pit page (with `bind`) listening at its address
/// (`croupier floor` sends systemd's READY then). Under systemd's watchdog, the ingest's
/// discovery loop pings it.
pub async fn run(
    config: FloorConfig,
    stats: Arc<IngestStats>,
    shutdown: impl std::future::Future<Output = ()>,
    started: impl FnOnce(Option<std::net::SocketAddr>),
) -> Result<(), FloorError> {
    // Nothing is taken on trust: without the tables' keys the floor does not start.
    let keys = Arc::new(crate::trust::pinned::KeysFile::open(&config.table_keys)?);
    let db = FloorDb::open(&config.database, config.connections).await?;
    let client = crate::broker::connect(&config.broker, "croupier floor").await?;
    let watch = crate::broker::liveness::watch(client.clone(), "floor");
    let js = crate::broker::jetstream(client.clone(), config.broker.api_prefix());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let wait = move |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    // The certificate is checked before anything listens: a bad one stops the start.
    let tls = match &config.tls {
        Some((cert, key)) => Some(crate::web::tls::server_config(cert, key)?),
        None => None,
    };
    let server = match &config.bind {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| FloorError::Bind {
                    addr: addr.clone(),
                    source,
                })?;
            let local = listener.local_addr().map_err(FloorError::Http)?;
            let app = pit::router(Arc::new(pit::Pit {
                db: db.clone(),
                js: js.clone(),
                bucket: config.bucket.clone(),
                log_stream: config.log_stream.clone(),
                floor_key: config.floor_key.clone(),
                secure: tls.is_some(),
                gate: accounts::Gate::default(),
                keys: Arc::clone(&keys),
            }))
            .merge(metrics::router(metrics::Scraped {
                stats: Arc::clone(&stats),
                client,
                db: db.clone(),
            }))
            .into_make_service_with_connect_info::<crate::web::auth::Peer>();
            let done = wait(stopped.clone());
            let task = match tls {
                Some(tls) => serve(
                    crate::web::tls::TlsListener::new(listener, tls).map_err(FloorError::Http)?,
                    app,
                    done,
                ),
                None => serve(crate::web::tcp::NoDelayListener(listener), app, done),
            };
            started(Some(local));
            Some(task)
        }
        None => {
            started(None);
            None
        }
    };
    let watchdog = crate::systemd::Watchdog::from_env();
    if let Some(w) = &watchdog {
        tracing::info!(
            every_ms = w.every.as_millis() as u64,
            "systemd watchdog: pinging from the floor's discovery loop"
        );
    }
    let ingest = tokio::spawn(ingest::run(
        js,
        db,
        IngestConfig {
            log_stream: config.log_stream,
            consumer: config.consumer,
            stall: config.stall,
            watchdog,
            keys,
        },
        stats,
        wait(stopped),
    ));
    shutdown.await;
    let _ = stop.send(true);
    let _ = ingest.await;
    watch.abort();
    if let Some(task) = server {
        if let Ok(Err(e)) = task.await {
            return Err(FloorError::Http(e));
        }
    }
    Ok(())
}
