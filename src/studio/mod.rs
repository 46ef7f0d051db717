//! `croupier studio`: the broker's side of a studio deployment, generated rather than
//! written by hand (issues #30, #59).
//!
//! - `nats-config` writes, into one directory: `nats-server.conf` (listen address,
//!   JetStream store, TLS) which includes `auth.conf` (one NATS account per party, each
//!   exporting to the others only what they use, and one nkey user per party with only
//!   its own grants, `grants`), one credential per party under `credentials/` (an nkey
//!   seed, mode 0600: `table-<id>.nk`, `relay.nk`, `floor.nk`, `admin.nk`),
//!   `table-keys.toml` (the tables' pinned public keys, for the relays) and `studio.toml`
//!   (what it was generated from); [`settings`] is what each party must be told. Run
//!   again with the full list of tables to add one: existing credentials are kept, so
//!   only the new table's is new; the broker takes the new accounts with `nats-server
//!   --signal reload`.
//! - `provision` creates the tables' streams, the floor's consumers, the bucket and the
//!   relays' mirrors with the admin's credential: the tables themselves may not create
//!   streams (a table that could would be able to capture another table's subjects).
//!
//! - `grants`: who may do what, account by account and subject by subject.
//! - `demo` (`croupier studio demo`): the whole studio on one machine for evaluation — a
//!   broker on a free port, three tables, a relay and the floor, each its own process.

pub mod demo;
pub mod grants;
pub mod provision;

pub use provision::{provision, Made};

use crate::broker::streams::StreamNames;
use crate::trust::pinned::PinnedKeys;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a studio directory was generated from (`studio.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudioSpec {
    /// The tables' ids.
    pub tables: Vec<String>,
    /// Where the broker listens (`host:port`).
    pub listen: String,
    /// The broker's JetStream store.
    pub store_dir: PathBuf,
    /// The public streams' prefix.
    pub public_stream: String,
    /// The log streams' prefix.
    pub log_stream: String,
    /// The views' bucket.
    pub bucket: String,
    /// The floor's durable consumer name.
    pub floor_consumer: String,
    /// Replicas of the streams `provision` creates.
    pub replicas: usize,
    /// Hours the public streams keep messages.
    pub public_max_age_hours: u32,
    /// The broker's TLS, if any.
    #[serde(default)]
    pub tls: Option<ServerTls>,
    /// Whether the relays read mirrors of the public streams and the bucket in their own
    /// account (the default), or the studio's streams themselves: a second copy of every
    /// public message on the broker, against a relay able to deliver, by a push consumer,
    /// into any table's streams (`grants::relay`).
    #[serde(default = "yes")]
    pub relay_mirrors: bool,
}

fn yes() -> bool {
    true
}

/// The broker's certificate, and the CA its clients' certificates must chain to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerTls {
    /// The server certificate (PEM).
    pub cert: PathBuf,
    /// Its key (PEM).
    pub key: PathBuf,
    /// The CA (PEM) that signed the clients' certificates; with it every client must
    /// present one.
    #[serde(default)]
    pub verify_clients_ca: Option<PathBuf>,
}

impl StudioSpec {
    /// The streams' names.
    pub fn names(&self) -> StreamNames {
        StreamNames {
            public_stream: self.public_stream.clone(),
            log_stream: self.log_stream.clone(),
            bucket: self.bucket.clone(),
            replicas: self.replicas,
            public_max_age_hours: self.public_max_age_hours,
        }
    }

    /// Why the spec cannot be used.
    pub fn validate(&self) -> Result<(), StudioError> {
        if self.tables.is_empty() {
            return Err(StudioError::Spec(
                "no table given (--tables ID[,ID…])".into(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for id in &self.tables {
            if id.is_empty()
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(StudioError::Spec(format!(
                    "table id {id:?}: letters, digits, '-' and '_' only (it is a subject token)"
                )));
            }
            if !seen.insert(id) {
                return Err(StudioError::Spec(format!("table {id:?} is listed twice")));
            }
        }
        Ok(())
    }
}

/// `croupier studio` failed.
#[derive(Debug, thiserror::Error)]
pub enum StudioError {
    /// The request does not make sense.
    #[error("{0}")]
    Spec(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A key or seed is not what it should be.
    #[error("{0}")]
    Key(String),
    /// The broker refused or failed.
    #[error("broker: {0}")]
    Broker(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StudioError + '_ {
    move |source| StudioError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One party's credential file in `dir`.
pub fn credential_path(dir: &Path, party: &str) -> PathBuf {
    dir.join("credentials").join(format!("{party}.nk"))
}

/// The party name of table `id`.
pub fn table_party(id: &str) -> String {
    format!("table-{id}")
}

/// The party's nkey: read from its credential file, or made (and written, 0600).
fn party_key(dir: &Path, party: &str) -> Result<(nkeys::KeyPair, bool), StudioError> {
    let path = credential_path(dir, party);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let seed = text
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with("SU"))
                .ok_or_else(|| {
                    StudioError::Key(format!("{}: no user nkey seed", path.display()))
                })?;
            let pair = nkeys::KeyPair::from_seed(seed)
                .map_err(|e| StudioError::Key(format!("{}: {e}", path.display())))?;
            Ok((pair, false))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let pair = nkeys::KeyPair::new_user();
            let seed = pair
                .seed()
                .map_err(|e| StudioError::Key(format!("a new nkey: {e}")))?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let mut f = crate::store::private_file(&path).map_err(io(&path))?;
            use std::io::Write;
            f.write_all(format!("{seed}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(io(&path))?;
            Ok((pair, true))
        }
        Err(e) => Err(io(&path)(e)),
    }
}

/// A string in the server configuration's syntax.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", items.join(", "))
}

/// The `auth.conf` text: one account per party (`grants`), each with its users (one nkey
/// user per party), its exports (to exactly the accounts that import them) and imports.
fn auth_conf(parties: &[(String, String, grants::Party)]) -> String {
    use grants::Kind;
    let mut out = String::from(
        "# Generated by `croupier studio nats-config`: one account per party, exporting to\n\
         # each other only what the other uses, and one nkey user per party with only its\n\
         # own grants. Edit the studio (run the command again), not this file.\n\
         accounts {\n",
    );
    let all: Vec<grants::Party> = parties.iter().map(|p| p.2.clone()).collect();
    let exports = grants::exports(&all);
    let mut accounts: Vec<&grants::Party> = Vec::new();
    for (_, _, p) in parties {
        if !accounts.iter().any(|a| a.account == p.account) {
            accounts.push(p);
        }
    }
    for account in accounts {
        out.push_str(&format!("  {} {{\n", quoted(&account.account)));
        if account.jetstream {
            out.push_str("    jetstream: enabled\n");
        }
        out.push_str("    users = [\n");
        for (party, public, p) in parties.iter().filter(|p| p.2.account == account.account) {
            let g = &p.grants;
            out.push_str(&format!(
                "      # {party}\n      {{\n        nkey: {}\n        permissions: {{\n          publish: {{ allow: {}",
                quoted(public),
                list(&g.publish)
            ));
            if !g.deny_publish.is_empty() {
                out.push_str(&format!(", deny: {}", list(&g.deny_publish)));
            }
            out.push_str(&format!(
                " }}\n          subscribe: {{ allow: {} }}\n",
                list(&g.subscribe)
            ));
            if g.allow_responses {
                out.push_str("          allow_responses: true\n");
            }
            out.push_str("        }\n      }\n");
        }
        out.push_str("    ]\n");
        let own: Vec<_> = exports
            .iter()
            .filter(|e| e.account == account.account)
            .collect();
        if !own.is_empty() {
            out.push_str("    exports = [\n");
            for e in own {
                let kind = e.kind.word();
                out.push_str(&format!(
                    "      {{ {kind}: {}, accounts: {}",
                    quoted(&e.subject),
                    list(&e.to)
                ));
                if e.kind == Kind::StreamedService {
                    out.push_str(", response_type: stream");
                }
                out.push_str(" }\n");
            }
            out.push_str("    ]\n");
        }
        if !account.imports.is_empty() {
            out.push_str("    imports = [\n");
            for i in &account.imports {
                let kind = i.kind.word();
                out.push_str(&format!(
                    "      {{ {kind}: {{ account: {}, subject: {} }}",
                    quoted(&i.account),
                    quoted(&i.subject)
                ));
                if let Some(to) = &i.to {
                    out.push_str(&format!(", to: {}", quoted(to)));
                }
                out.push_str(" }\n");
            }
            out.push_str("    ]\n");
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// The `nats-server.conf` text.
fn server_conf(spec: &StudioSpec) -> String {
    let (host, port) = spec
        .listen
        .rsplit_once(':')
        .unwrap_or((spec.listen.as_str(), "4222"));
    let mut out = format!(
        "# Generated by `croupier studio nats-config`. Start: nats-server -c nats-server.conf\n\
         # Reload after regenerating: nats-server --signal reload (or systemctl reload)\n\
         host: {}\nport: {port}\n\
         # Drop a connection (a route, once clustered) that lived through a partition\n\
         # without a reset within ~30 s, not nats-server's default of several minutes.\n\
         ping_interval: \"10s\"\nping_max: 3\n\
         jetstream {{\n  store_dir: {}\n}}\n",
        quoted(host),
        quoted(&spec.store_dir.display().to_string())
    );
    if let Some(tls) = &spec.tls {
        out.push_str(&format!(
            "tls {{\n  cert_file: {}\n  key_file: {}\n",
            quoted(&tls.cert.display().to_string()),
            quoted(&tls.key.display().to_string())
        ));
        if let Some(ca) = &tls.verify_clients_ca {
            out.push_str(&format!(
                "  ca_file: {}\n  verify: true\n",
                quoted(&ca.display().to_string())
            ));
        }
        out.push_str("  timeout: 2\n}\n");
    }
    out.push_str("include \"auth.conf\"\n");
    out
}

/// What each party must set to use the configuration generated from `spec`, beside its
/// credential: the JetStream API prefix its account reaches the studio's streams under.
pub fn settings(spec: &StudioSpec) -> Vec<(&'static str, String)> {
    let relays = if spec.relay_mirrors {
        "nothing (their account holds the mirrors they read: the default $JS.API)".into()
    } else {
        format!("croupier relay --js-api-prefix '{}'", grants::STUDIO_API)
    };
    vec![
        (
            "each table",
            format!("[publish] js_api_prefix = {}", quoted(grants::STUDIO_API)),
        ),
        (
            "the floor",
            format!("croupier floor --js-api-prefix '{}'", grants::STUDIO_API),
        ),
        ("the relays", relays),
    ]
}

/// What `nats-config` did.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Each party with its public nkey and whether its credential is new.
    pub parties: Vec<(String, String, bool)>,
    /// Tables with no pinned key yet (the relays will not serve them until pinned).
    pub unpinned: Vec<String>,
}

/// Writes the studio directory `dir` for `spec`, pinning `keys` (`table → hex`) beside
/// any already in `table-keys.toml`.
pub fn nats_config(
    spec: &StudioSpec,
    dir: &Path,
    keys: &[(String, String)],
) -> Result<Generated, StudioError> {
    spec.validate()?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let names = spec.names();
    let mut users = Vec::new();
    let mut parties = Vec::new();
    let mut add = |party: String, p: grants::Party| -> Result<(), StudioError> {
        let (pair, new) = party_key(dir, &party)?;
        parties.push((party.clone(), pair.public_key(), new));
        users.push((party, pair.public_key(), p));
        Ok(())
    };
    for id in &spec.tables {
        add(table_party(id), grants::table(&names, id))?;
    }
    add(
        "relay".into(),
        grants::relay(&names, &spec.tables, spec.relay_mirrors),
    )?;
    add(
        "floor".into(),
        grants::floor(&names, &spec.tables, &spec.floor_consumer),
    )?;
    add("admin".into(), grants::admin(spec.relay_mirrors))?;

    let keys_path = dir.join("table-keys.toml");
    let mut pinned = match std::fs::metadata(&keys_path) {
        Ok(_) => PinnedKeys::load(&keys_path).map_err(|e| StudioError::Key(e.to_string()))?,
        Err(_) => PinnedKeys::default(),
    };
    for (table, hex_key) in keys {
        if !spec.tables.contains(table) {
            return Err(StudioError::Spec(format!(
                "--table-key names {table:?}, which is not in --tables"
            )));
        }
        let key = crate::trust::attest::verifying_key(hex_key)
            .map_err(|e| StudioError::Key(format!("table {table}: {e}")))?;
        pinned.insert(table, key);
    }
    let unpinned = spec
        .tables
        .iter()
        .filter(|t| pinned.get(t).is_none())
        .cloned()
        .collect();

    write(&dir.join("auth.conf"), &auth_conf(&users))?;
    write(&dir.join("nats-server.conf"), &server_conf(spec))?;
    write(&keys_path, &pinned.to_text())?;
    let spec_text = toml::to_string(spec).map_err(|e| StudioError::Spec(e.to_string()))?;
    write(
        &dir.join("studio.toml"),
        &format!(
            "# What `croupier studio nats-config` generated this directory from.\n{spec_text}"
        ),
    )?;
    Ok(Generated { parties, unpinned })
}

/// Writes `text` to `path` through a temporary file and a rename (a reloading broker
/// never reads half a file).
fn write(path: &Path, text: &str) -> Result<(), StudioError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".new");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// Reads `dir/studio.toml`.
pub fn load_spec(dir: &Path) -> Result<StudioSpec, StudioError> {
    let path = dir.join("studio.toml");
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    toml::from_str(&text).map_err(|e| StudioError::Spec(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn spec(tables: &[&str]) -> StudioSpec {
        StudioSpec {
            tables: tables.iter().map(|s| s.to_string()).collect(),
            listen: "127.0.0.1:4333".into(),
            store_dir: "/tmp/js".into(),
            public_stream: "CROUPIER_PUBLIC".into(),
            log_stream: "CROUPIER_LOG".into(),
            bucket: "croupier_tables".into(),
            floor_consumer: "croupier_floor".into(),
            replicas: 1,
            public_max_age_hours: 24,
            tls: None,
            relay_mirrors: true,
        }
    }

    #[test]
    fn regenerating_keeps_every_credential_and_adds_the_new_tables() {
        let dir = tempfile::tempdir().expect("dir");
        let key = crate::trust::TableKeys::from_secrets([3; 32], [0; 32]).public_hex();
        let first = nats_config(
            &spec(&["t1", "t2"]),
            dir.path(),
            &[("t1".into(), key.clone())],
        )
        .expect("generated");
        assert_eq!(first.parties.len(), 5);
        assert!(first.parties.iter().all(|p| p.2), "all new");
        assert_eq!(first.unpinned, vec!["t2".to_string()]);
        for party in ["table-t1", "table-t2", "relay", "floor", "admin"] {
            let mode = std::fs::metadata(credential_path(dir.path(), party))
                .expect("credential")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{party}");
        }
        let again = nats_config(&spec(&["t1", "t2", "t3"]), dir.path(), &[]).expect("again");
        let new: Vec<_> = again
            .parties
            .iter()
            .filter(|p| p.2)
            .map(|p| p.0.as_str())
            .collect();
        assert_eq!(
            new,
            vec!["table-t3"],
            "only the new table's credential is new"
        );
        for p in &first.parties {
            assert!(
                again.parties.iter().any(|q| q.0 == p.0 && q.1 == p.1),
                "{} kept",
                p.0
            );
        }
        let pinned = PinnedKeys::load(&dir.path().join("table-keys.toml")).expect("keys");
        assert!(pinned.get("t1").is_some(), "t1 stays pinned");
        let auth = std::fs::read_to_string(dir.path().join("auth.conf")).expect("auth");
        assert_eq!(auth.matches("nkey:").count(), 6);
        for p in &again.parties {
            let seed = std::fs::read_to_string(credential_path(dir.path(), &p.0)).expect("seed");
            assert!(seed.trim().starts_with("SU"), "{}: a user seed", p.0);
            assert!(
                !auth.contains(seed.trim()),
                "no seed in the server's configuration"
            );
            assert!(auth.contains(&p.1), "{}'s public key is", p.0);
        }
        assert_eq!(load_spec(dir.path()).expect("spec").tables.len(), 3);
        let e = nats_config(&spec(&["t.1"]), dir.path(), &[]).expect_err("bad id");
        assert!(e.to_string().contains("subject token"), "{e}");
    }
}
