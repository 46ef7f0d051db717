//! `[publish]` in `table.toml`: absent (the embedded default), the table talks to no
//! broker.

use super::subjects;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[publish]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishSection {
    /// The broker, e.g. `nats://nats.studio:4222` (several, comma-separated, for a cluster).
    pub nats_url: String,
    /// The table's NATS credential: an nkey seed file (as `croupier studio nats-config`
    /// writes) or a `.creds` file (JWT and nkey seed), mode 0600; absent: none (or a user
    /// and password in `nats_url`, never both).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// The CA that signed the broker's certificate (PEM): the connection is then TLS
    /// only.
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    /// A client certificate (PEM) for a broker that verifies clients, with `tls_key`.
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// The table's reply subjects' prefix; default `_INBOX.table.<id>`, the one the
    /// generated grants allow this table alone.
    #[serde(default)]
    pub inbox_prefix: Option<String>,
    /// The JetStream API's subject prefix; default `$JS.API` (an open broker). On a broker
    /// configured by `croupier studio nats-config` the table reaches the studio's streams
    /// through its account's imports: `$JS.STUDIO.API`, as the command prints.
    #[serde(default)]
    pub js_api_prefix: Option<String>,
    /// The public streams' name prefix: table `T` publishes to stream `<prefix>_T`.
    #[serde(default = "default_public_stream")]
    pub public_stream: String,
    /// The log streams' name prefix.
    #[serde(default = "default_log_stream")]
    pub log_stream: String,
    /// The key-value bucket holding every table's latest public view.
    #[serde(default = "default_bucket")]
    pub bucket: String,
    /// Replicas of the streams and the bucket when this table creates them (3 on a
    /// production cluster; 1 on a single server).
    #[serde(default = "one")]
    pub replicas: usize,
    /// Hours the public stream keeps messages (0: for ever). The log stream keeps
    /// everything.
    #[serde(default = "day")]
    pub public_max_age_hours: u32,
    /// Unpublished rows tolerated while connected before `/readyz` says `publish_lag`.
    #[serde(default = "default_max_lag")]
    pub max_lag: u64,
    /// The key shared with the casino floor (`croupier floor --floor-key`): with it the
    /// table answers the floor's signed dispute commands on `croupier.<id>.floor`
    /// (`publish::floor_commands`); absent: it answers none.
    #[serde(default)]
    pub floor_key: Option<PathBuf>,
}

fn default_public_stream() -> String {
    subjects::DEFAULT_PUBLIC_STREAM.into()
}

fn default_log_stream() -> String {
    subjects::DEFAULT_LOG_STREAM.into()
}

fn default_bucket() -> String {
    subjects::DEFAULT_BUCKET.into()
}

fn one() -> usize {
    1
}

fn day() -> u32 {
    24
}

fn default_max_lag() -> u64 {
    100
}

impl PublishSection {
    /// How table `id` connects to the broker.
    pub fn broker_options(&self, id: &str) -> super::BrokerOptions {
        super::BrokerOptions {
            url: self.nats_url.clone(),
            credentials: self.credentials.clone(),
            tls_ca: self.tls_ca.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            inbox_prefix: Some(
                self.inbox_prefix
                    .clone()
                    .unwrap_or_else(|| super::connect::table_inbox(id)),
            ),
            api_prefix: self.js_api_prefix.clone(),
        }
    }

    /// The streams' names and retention.
    pub fn stream_names(&self) -> super::streams::StreamNames {
        super::streams::StreamNames {
            public_stream: self.public_stream.clone(),
            log_stream: self.log_stream.clone(),
            bucket: self.bucket.clone(),
            replicas: self.replicas,
            public_max_age_hours: self.public_max_age_hours,
        }
    }

    /// Why the section cannot be used (names the broker would refuse).
    pub fn validate(&self) -> Result<(), String> {
        if self.nats_url.trim().is_empty() {
            return Err("publish.nats_url is empty".into());
        }
        for (key, name) in [
            ("public_stream", &self.public_stream),
            ("log_stream", &self.log_stream),
            ("bucket", &self.bucket),
        ] {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(format!(
                    "publish.{key} {name:?}: use letters, digits, '-' and '_'"
                ));
            }
        }
        if self.public_stream == self.log_stream {
            return Err("publish.public_stream and publish.log_stream must differ".into());
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err("publish.tls_cert and publish.tls_key go together".into());
        }
        for (key, prefix) in [
            ("inbox_prefix", &self.inbox_prefix),
            ("js_api_prefix", &self.js_api_prefix),
        ] {
            if let Some(prefix) = prefix {
                super::connect::check_prefix(prefix).map_err(|e| format!("publish.{key} {e}"))?;
            }
        }
        if !(1..=5).contains(&self.replicas) {
            return Err(format!("publish.replicas {}: 1 to 5", self.replicas));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::table::config::{TableConfig, DEFAULT_TOML};

    fn with(section: &str) -> Result<TableConfig, String> {
        TableConfig::parse("t.toml", &format!("{DEFAULT_TOML}\n{section}"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_embedded_default_talks_to_no_broker() {
        assert_eq!(TableConfig::embedded().expect("valid").publish, None);
    }

    #[test]
    fn a_section_with_only_the_url_takes_the_defaults() {
        let p = with("[publish]\nnats_url = \"nats://10.0.0.5:4222\"\n")
            .expect("valid")
            .publish
            .expect("publish");
        assert_eq!(p.nats_url, "nats://10.0.0.5:4222");
        assert_eq!(p.public_stream, "CROUPIER_PUBLIC");
        assert_eq!(p.log_stream, "CROUPIER_LOG");
        assert_eq!(p.bucket, "croupier_tables");
        assert_eq!(
            (p.replicas, p.public_max_age_hours, p.max_lag),
            (1, 24, 100)
        );
        assert_eq!(p.credentials, None);
        assert_eq!(p.broker_options("t").api_prefix(), "$JS.API");
    }

    #[test]
    fn unknown_keys_and_bad_names_are_refused_where_they_are() {
        let lines = DEFAULT_TOML.lines().count();
        let e = with("[publish]\nnats_url = \"nats://x:4222\"\nstream = \"X\"\n")
            .expect_err("unknown key");
        assert!(e.contains("unknown field `stream`"), "{e}");
        let e = with("[publish]\nnats_url = \"nats://x:4222\"\nbucket = \"a.b\"\n")
            .expect_err("bad bucket");
        assert!(
            e.starts_with(&format!("t.toml:{}:", lines + 4))
                && e.contains("publish.bucket \"a.b\""),
            "{e}"
        );
        let e = with("[publish]\nnats_url = \"nats://x:4222\"\nlog_stream = \"CROUPIER_PUBLIC\"\n")
            .expect_err("same streams");
        assert!(e.contains("must differ"), "{e}");
        let e = with("[publish]\nnats_url = \" \"\n").expect_err("empty url");
        assert!(e.contains("nats_url is empty"), "{e}");
        let e =
            with("[publish]\nnats_url = \"nats://x:4222\"\nreplicas = 0\n").expect_err("replicas");
        assert!(e.contains("publish.replicas 0"), "{e}");
        let e = with("[publish]\nnats_url = \"nats://x:4222\"\njs_api_prefix = \"$JS.*.API\"\n")
            .expect_err("a wildcard prefix");
        assert!(e.contains("publish.js_api_prefix \"$JS.*.API\""), "{e}");
        let p =
            with("[publish]\nnats_url = \"nats://x:4222\"\njs_api_prefix = \"$JS.STUDIO.API\"\n")
                .expect("valid")
                .publish
                .expect("publish");
        assert_eq!(p.broker_options("t").api_prefix(), "$JS.STUDIO.API");
    }
}
