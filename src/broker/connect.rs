//! Connecting to the broker as one party of the studio: its servers, its credential (a
//! `.creds` file, an nkey seed file, or a user and password in the URL — never two of
//! them, never silently none), TLS with the studio's CA (and a client certificate where
//! the broker asks for one), and the party's private inbox prefix, so that nobody can
//! subscribe to another party's replies (`croupier studio nats-config` grants each party
//! only its own prefix).
//!
//! No secret is ever written to a log: [`redact`] hides a URL's user information, and the
//! errors here name files, never their contents.

use async_nats::{Client, ConnectOptions, ServerAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How one party reaches the broker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerOptions {
    /// One or more comma-separated NATS URLs (`nats://` or `tls://`; `user:password@`
    /// allowed, the same on every URL).
    pub url: String,
    /// A credential file: a `.creds` file (JWT and nkey seed) or an nkey seed file (what
    /// `croupier studio nats-config` writes). Must not be readable by group or others.
    pub credentials: Option<PathBuf>,
    /// The CA that signed the broker's certificate: TLS is then required.
    pub tls_ca: Option<PathBuf>,
    /// A client certificate (PEM), for a broker that verifies clients; with `tls_key`.
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// The prefix of this party's reply subjects (`_INBOX.<party>`); `None`: the client's
    /// default `_INBOX`, which only an unrestricted user may subscribe to.
    pub inbox_prefix: Option<String>,
    /// The subject prefix of the JetStream API this party talks to; `None`: [`DEFAULT_API`]
    /// (the party's own account: an open broker, or the relays' own account on a studio
    /// broker). On a studio broker the tables and the floor reach the studio account's
    /// JetStream through an import under another prefix (`croupier studio nats-config`
    /// says which).
    pub api_prefix: Option<String>,
}

impl BrokerOptions {
    /// The JetStream API prefix this party uses.
    pub fn api_prefix(&self) -> &str {
        self.api_prefix.as_deref().unwrap_or(DEFAULT_API)
    }
}

/// JetStream's own API prefix.
pub const DEFAULT_API: &str = "$JS.API";

/// Why `prefix` cannot be a subject prefix (a JetStream API or inbox prefix): empty, an
/// empty token, a wildcard or whitespace.
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    if prefix.is_empty()
        || prefix.split('.').any(|t| {
            t.is_empty() || t.contains(|c: char| c.is_whitespace() || c == '*' || c == '>')
        })
    {
        return Err(format!(
            "{prefix:?}: dot-separated tokens without wildcards"
        ));
    }
    Ok(())
}

/// The inbox prefix of table `id` (the grants of `croupier studio nats-config` match it).
pub fn table_inbox(id: &str) -> String {
    format!("_INBOX.table.{id}")
}

/// The relays' inbox prefix.
pub const RELAY_INBOX: &str = "_INBOX.relay";
/// The floor's inbox prefix.
pub const FLOOR_INBOX: &str = "_INBOX.floor";

/// Connecting to the broker failed, or the options cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The credential file could not be read.
    #[error("cannot read the NATS credentials {path}: {source}")]
    Credentials {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The credential file is readable by group or others.
    #[error(
        "the NATS credentials {path} are readable by others (mode {mode:o}): chmod 600 {path}"
    )]
    CredentialsExposed {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The credential file holds neither a `.creds` JWT nor an nkey seed.
    #[error("the NATS credentials {path} are neither a .creds file nor a user nkey seed (SU…)")]
    CredentialsFormat {
        /// The file.
        path: String,
    },
    /// Two credentials were given, or the URLs disagree on theirs.
    #[error("{0}")]
    Ambiguous(String),
    /// A server address is not a NATS URL.
    #[error("bad NATS URL {url:?}: {source}")]
    Url {
        /// The address (redacted).
        url: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TLS options are incomplete.
    #[error("{0}")]
    Tls(String),
    /// No server answered (or one refused the credentials).
    #[error("cannot connect to NATS at {url}: {source}")]
    Connect {
        /// The addresses (redacted).
        url: String,
        /// Why.
        source: async_nats::ConnectError,
    },
    /// No node greeted a new connection in time (`liveness::CONNECT_DEADLINE`).
    #[error("no NATS node answered within {0:?}")]
    Unanswered(std::time::Duration),
}

/// `url` (one or more comma-separated NATS URLs) with every password replaced by `***`:
/// what logs, errors and start-up lines show (`crate::redact::url`).
pub fn redact(url: &str) -> String {
    crate::redact::url(url)
}

/// Reads a secret file, refusing one that group or others may read (as `ssh` refuses a
/// private key).
pub fn read_private(path: &Path) -> Result<String, ConnectError> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| ConnectError::Credentials {
        path: shown.clone(),
        source,
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ConnectError::CredentialsExposed { path: shown, mode });
    }
    std::fs::read_to_string(path).map_err(|source| ConnectError::Credentials {
        path: shown,
        source,
    })
}

/// The client options a credential file gives.
fn credential_options(path: &Path) -> Result<ConnectOptions, ConnectError> {
    let text = read_private(path)?;
    let shown = path.display().to_string();
    if text.contains("BEGIN NATS USER JWT") {
        return ConnectOptions::with_credentials(&text).map_err(|source| {
            ConnectError::Credentials {
                path: shown,
                source,
            }
        });
    }
    let seed = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("SU"))
        .ok_or(ConnectError::CredentialsFormat {
            path: shown.clone(),
        })?;
    // The seed must decode: a typo is reported here, not as a refused connection.
    nkeys::KeyPair::from_seed(seed).map_err(|_| ConnectError::CredentialsFormat { path: shown })?;
    Ok(ConnectOptions::with_nkey(seed.to_string()))
}

/// A user and password (a token alone: the password is empty).
type UserInfo = (String, String);

/// The servers, and the user information they carry (the same on all, or none).
fn servers(url: &str) -> Result<(Vec<ServerAddr>, Option<UserInfo>), ConnectError> {
    let mut addrs = Vec::new();
    let mut users = Vec::new();
    for one in url.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let addr: ServerAddr = one.parse().map_err(|source| ConnectError::Url {
            url: redact(one),
            source,
        })?;
        let user = addr.username().filter(|u| !u.is_empty()).map(|u| {
            (
                percent_decode(u),
                addr.password().map(percent_decode).unwrap_or_default(),
            )
        });
        users.push(user);
        addrs.push(addr);
    }
    if addrs.is_empty() {
        return Err(ConnectError::Ambiguous("no NATS URL given".into()));
    }
    let first = users[0].clone();
    if users.iter().any(|u| *u != first) {
        return Err(ConnectError::Ambiguous(format!(
            "the NATS URLs {} carry different credentials: give the same user on every URL, or none and a credentials file",
            redact(url)
        )));
    }
    Ok((addrs, first))
}

/// A URL's user or password as written, `%XX` escapes decoded.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The client options for `options`, and the servers; nothing is connected yet.
pub fn client_options(
    options: &BrokerOptions,
) -> Result<(ConnectOptions, Vec<ServerAddr>), ConnectError> {
    let (addrs, user) = servers(&options.url)?;
    let mut client = match (&options.credentials, user) {
        (Some(_), Some(_)) => {
            return Err(ConnectError::Ambiguous(format!(
                "both a credentials file and a user in the NATS URL {}: give one",
                redact(&options.url)
            )))
        }
        (Some(path), None) => credential_options(path)?,
        (None, Some((user, password))) if password.is_empty() => ConnectOptions::new().token(user),
        (None, Some((user, password))) => ConnectOptions::new().user_and_password(user, password),
        (None, None) => ConnectOptions::new(),
    };
    match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => {
            client = client.add_client_certificate(cert.clone(), key.clone());
        }
        (None, None) => {}
        _ => {
            return Err(ConnectError::Tls(
                "a client certificate needs both its certificate and its key".into(),
            ))
        }
    }
    for path in [&options.tls_ca, &options.tls_cert, &options.tls_key]
        .into_iter()
        .flatten()
    {
        if !path.is_file() {
            return Err(ConnectError::Tls(format!(
                "the TLS file {} does not exist",
                path.display()
            )));
        }
    }
    if let Some(ca) = &options.tls_ca {
        client = client.add_root_certificates(ca.clone()).require_tls(true);
    } else if addrs.iter().any(ServerAddr::tls_required) {
        client = client.require_tls(true);
    }
    if let Some(prefix) = &options.inbox_prefix {
        client = client.custom_inbox_prefix(prefix);
    }
    Ok((client, addrs))
}

/// How long a JetStream request (stream and consumer information, consumer creation, a
/// publish's acknowledgement) waits for its answer. A request that reached a stream whose
/// leader just died is never answered; the client's defaults (10 s for a request, 5 s for
/// an acknowledgement), paid once per request of a pass, made a cluster's failover cost
/// every party 10 s or more on top of the election (tests/it/studio_cluster.rs, docs/src/studio.md "Studio on a cluster"). A healthy broker
/// answers in milliseconds, so 3 s is still far from a false failure.
pub const JETSTREAM_TIMEOUT: Duration = Duration::from_secs(3);

/// How often a party pings its broker node when it has sent nothing else. The client
/// calls a connection dead when a third ping finds two unanswered, and `liveness::watch` one that
/// heard nothing for three of these; the client's default, 60 s, left a party on a node
/// cut off from everyone for minutes while the other nodes were there (`tests/it/nemesis.rs`).
/// A ping is a few bytes.
pub const PING_INTERVAL: Duration = Duration::from_secs(2);

/// The JetStream context every party uses on `client`, with the API under `api_prefix`
/// ([`BrokerOptions::api_prefix`]; [`DEFAULT_API`] on an open broker): requests bounded by
/// [`JETSTREAM_TIMEOUT`].
pub fn jetstream(client: Client, api_prefix: &str) -> async_nats::jetstream::Context {
    let mut js = async_nats::jetstream::with_prefix(client, api_prefix);
    js.set_timeout(JETSTREAM_TIMEOUT);
    js
}

/// Connects as `name`. Once connected the client reconnects by itself, for ever.
pub async fn connect(options: &BrokerOptions, name: &str) -> Result<Client, ConnectError> {
    let (client, addrs) = client_options(options)?;
    connect_with(client, addrs, options, name).await
}

/// [`connect`] with the nodes that greet a probe first (`super::liveness`): a node that
/// accepts connections and then says nothing (cut off behind a proxy or a NAT that still
/// answers) is tried last, not by chance. The client keeps that order for its own
/// reconnects.
pub async fn connect_greeted_first(
    options: &BrokerOptions,
    name: &str,
) -> Result<Client, ConnectError> {
    let (client, addrs) = client_options(options)?;
    let addrs = super::liveness::greeted_first(addrs).await;
    connect_with(client.retain_servers_order(), addrs, options, name).await
}

async fn connect_with(
    client: ConnectOptions,
    addrs: Vec<ServerAddr>,
    options: &BrokerOptions,
    name: &str,
) -> Result<Client, ConnectError> {
    client
        .name(name)
        .connection_timeout(Duration::from_secs(3))
        // JetStream's API requests (stream and consumer information, consumer creation)
        // are the client's requests: bounded like a publish's acknowledgement.
        .request_timeout(Some(JETSTREAM_TIMEOUT))
        .ping_interval(PING_INTERVAL)
        .max_reconnects(None)
        // A broker that comes back is tried again within a second, not after the
        // client's default back-off of up to several seconds.
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis(100 * u64::try_from(attempts.min(10)).unwrap_or(10))
        })
        .connect(addrs)
        .await
        .map_err(|source| ConnectError::Connect {
            url: redact(&options.url),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_url_user_is_used_and_two_credentials_are_refused() {
        let (_, user) = servers("nats://tbla:tbla%40pw@h:4222,nats://tbla:tbla%40pw@g:4222")
            .expect("same user");
        assert_eq!(user, Some(("tbla".into(), "tbla@pw".into())));
        let e = servers("nats://a:b@h:4222,nats://g:4222").expect_err("mixed");
        assert!(e.to_string().contains("different credentials"), "{e}");
        assert!(!e.to_string().contains(":b@"), "redacted: {e}");
        let dir = tempfile::tempdir().expect("dir");
        let creds = dir.path().join("t.nk");
        std::fs::write(&creds, nkeys::KeyPair::new_user().seed().expect("seed")).expect("w");
        std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let both = BrokerOptions {
            url: "nats://u:p@h:4222".into(),
            credentials: Some(creds.clone()),
            ..Default::default()
        };
        let e = client_options(&both)
            .map(|_| ())
            .expect_err("two credentials");
        assert!(e.to_string().contains("give one"), "{e}");
        let seed_only = BrokerOptions {
            url: "nats://h:4222".into(),
            credentials: Some(creds.clone()),
            ..Default::default()
        };
        assert!(client_options(&seed_only).is_ok());
        std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let e = client_options(&seed_only).map(|_| ()).expect_err("exposed");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        std::fs::write(&creds, "hello").expect("w");
        std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let e = client_options(&seed_only).map(|_| ()).expect_err("format");
        assert!(e.to_string().contains("neither"), "{e}");
        assert!(!e.to_string().contains("hello"), "never the contents: {e}");
    }
}
