//! The broker (NATS JetStream) as the table's publisher (`crate::publish`), the relay
//! (`crate::relay`), `table.toml` and `web` all see it: a leaf below them, so none of
//! them depends on `publish`, which builds on `table` and `web`.
//!
//! - this file: the connection;
//! - `config`: `[publish]` in `table.toml`;
//! - `subjects`: subject, stream, bucket and header names;
//! - `status`: the publisher's status, reported by `/readyz` and `/metrics`.

pub mod config;
mod status;
pub mod subjects;

pub use config::PublishSection;
pub use status::{PublishState, PublishStatus};

use async_nats::{Client, ConnectOptions};
use std::path::Path;
use std::time::Duration;

/// Connecting to the broker failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The credentials file could not be read.
    #[error("cannot read the NATS credentials {path}: {source}")]
    Credentials {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A server address is not a NATS URL.
    #[error("bad NATS URL {url:?}: {source}")]
    Url {
        /// The address.
        url: String,
        /// Why.
        source: std::io::Error,
    },
    /// No server answered (or one refused the credentials).
    #[error("cannot connect to NATS at {url}: {source}")]
    Connect {
        /// The addresses.
        url: String,
        /// Why.
        source: async_nats::ConnectError,
    },
}

/// Connects to `url` (one or more comma-separated servers) as `name`, with an optional
/// `.creds` file. Once connected the client reconnects by itself, for ever.
pub async fn connect(
    url: &str,
    credentials: Option<&Path>,
    name: &str,
) -> Result<Client, ConnectError> {
    let options = match credentials {
        Some(path) => ConnectOptions::with_credentials_file(path)
            .await
            .map_err(|source| ConnectError::Credentials {
                path: path.display().to_string(),
                source,
            })?,
        None => ConnectOptions::new(),
    };
    let servers: Vec<async_nats::ServerAddr> = url
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse().map_err(|source| ConnectError::Url {
                url: s.to_string(),
                source,
            })
        })
        .collect::<Result<_, _>>()?;
    options
        .name(name)
        .connection_timeout(Duration::from_secs(3))
        .max_reconnects(None)
        // A broker that comes back is tried again within a second, not after the
        // client's default back-off of up to several seconds.
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis(100 * u64::try_from(attempts.min(10)).unwrap_or(10))
        })
        .connect(servers)
        .await
        .map_err(|source| ConnectError::Connect {
            url: url.to_string(),
            source,
        })
}
