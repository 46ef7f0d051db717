//! `croupier studio …`: the studio's broker (its configuration, credentials and streams)
//! and the one-machine demo. Compiled only with the `studio` feature.

use super::args::BrokerArgs;
use super::{fail, with_runtime};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

/// `croupier studio …`.
#[derive(Subcommand)]
pub enum StudioCommand {
    /// Writes the broker's configuration for a studio into --out: nats-server.conf (which
    /// includes auth.conf: one account per party, one nkey user each with only its own
    /// grants), one credential per party in credentials/ (mode 0600), table-keys.toml (the
    /// keys the relays pin) and studio.toml, and prints what each party sets. Run it again
    /// with the full list to add a table: existing credentials are kept. Then:
    /// nats-server --signal reload.
    NatsConfig(NatsConfigArgs),
    /// Creates what is missing of the tables' streams, the floor's consumers, the bucket
    /// and the relays' mirrors, with the admin's credential (--dir's credentials/admin.nk):
    /// tables may not create streams. A mirror that stopped following its origin is made
    /// again.
    Provision {
        /// The studio directory `nats-config` wrote.
        #[arg(long)]
        dir: PathBuf,
        #[command(flatten)]
        broker: BrokerArgs,
    },
    /// The whole studio on this machine, for evaluation: a nats-server (Debian's binary)
    /// on a free port, three simulated tables of different games publishing to it, a
    /// relay and, when PostgreSQL answers, the floor with a demo pit account; each its own
    /// process, every one on a free port. Prints every URL; Ctrl-C stops everything and
    /// removes the temporary directory.
    Demo {
        /// Keep everything in this directory (kept at the end) instead of a new temporary
        /// one.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Keep the temporary directory at the end (logs, databases, the broker's store).
        #[arg(long)]
        keep: bool,
        /// The address the tables, the relay and the floor listen on, each on a free port
        /// (the broker stays on loopback: it runs without authentication).
        #[arg(long, default_value = "127.0.0.1")]
        bind_host: String,
        /// The PostgreSQL server for the floor; the demo makes its own database there and
        /// drops it at the end. Without an answer the floor is left out.
        #[arg(long, default_value = croupier::studio::demo::DEFAULT_PG)]
        pg: String,
        /// The nats-server binary (default: the first on PATH, else Debian's
        /// /usr/sbin/nats-server or /usr/bin/nats-server).
        #[arg(long)]
        nats_server: Option<PathBuf>,
    },
}

/// What `croupier studio nats-config` writes, and where: kept whole (rather than as the
/// variant's fields) so that the spec is built from it in one place.
#[derive(clap::Args)]
pub struct NatsConfigArgs {
    /// Every table's id, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    tables: Vec<String>,
    /// The studio directory to write.
    #[arg(long)]
    out: PathBuf,
    /// A table's public key to pin for the relays: ID=HEX (from `croupier table-key`
    /// on that table); repeat for each table.
    #[arg(long = "table-key", value_parser = parse_table_key)]
    table_keys: Vec<(String, String)>,
    /// Where the broker listens.
    #[arg(long, default_value = "0.0.0.0:4222")]
    listen: String,
    /// The broker's JetStream store directory.
    #[arg(long, default_value = "/var/lib/nats")]
    store_dir: PathBuf,
    /// The broker's TLS certificate (PEM), with --tls-key: clients then need the CA.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The broker's TLS key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require every client to present a certificate signed by this CA (PEM).
    #[arg(long, requires = "tls_cert")]
    verify_clients_ca: Option<PathBuf>,
    /// The public streams' prefix (`[publish] public_stream`).
    #[arg(long, default_value = croupier::broker::subjects::DEFAULT_PUBLIC_STREAM)]
    public_stream: String,
    /// The log streams' prefix (`[publish] log_stream`).
    #[arg(long, default_value = croupier::broker::subjects::DEFAULT_LOG_STREAM)]
    log_stream: String,
    /// The views' bucket (`[publish] bucket`).
    #[arg(long, default_value = croupier::broker::subjects::DEFAULT_BUCKET)]
    bucket: String,
    /// The floor's durable consumer name (`croupier floor --consumer`).
    #[arg(long, default_value = croupier::floor::DEFAULT_CONSUMER)]
    floor_consumer: String,
    /// Replicas of the streams `provision` creates (3 on a cluster).
    #[arg(long, default_value_t = 1)]
    replicas: usize,
    /// Hours the public streams keep messages.
    #[arg(long, default_value_t = 24)]
    public_max_age_hours: u32,
    /// The relays read the studio's public streams and bucket themselves rather than
    /// mirrors in their own account: no second copy on the broker, but a relay's
    /// credential can then deliver messages into any table's streams (a push
    /// consumer). docs/src/studio.md says what each costs.
    #[arg(long)]
    no_relay_mirrors: bool,
}

/// A `--table-key ID=HEX`, checked to be a key; the quotes of `croupier table-key`'s
/// `"ID" = "HEX"` are taken off, so its line can be pasted as it is.
fn parse_table_key(s: &str) -> Result<(String, String), String> {
    let (id, key) = s.split_once('=').ok_or_else(|| format!("{s:?}: ID=HEX"))?;
    let key = key.trim().trim_matches('"');
    croupier::trust::attest::verifying_key(key).map_err(|e| e.to_string())?;
    // `croupier table-key` prints `"ID" = "HEX"`: taken as it is.
    Ok((id.trim().trim_matches('"').to_string(), key.to_string()))
}

/// `croupier studio …`: exit 0 when done, 2 on an error.
pub fn studio_command(command: StudioCommand) -> ExitCode {
    match command {
        StudioCommand::NatsConfig(args) => nats_config(args),
        StudioCommand::Provision { dir, broker } => {
            let options = broker.options("_INBOX.admin");
            with_runtime(async move {
                match croupier::studio::provision(&dir, &options).await {
                    Ok(streams) => {
                        for (name, made) in streams {
                            println!("{name}: {made}");
                        }
                        ExitCode::SUCCESS
                    }
                    Err(e) => fail(e),
                }
            })
        }
        StudioCommand::Demo {
            dir,
            keep,
            bind_host,
            pg,
            nats_server,
        } => {
            // The services are this very binary, started again with their own subcommands.
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return fail(format!("cannot find the croupier binary: {e}")),
            };
            let options = croupier::studio::demo::DemoOptions {
                exe,
                nats_server,
                dir,
                keep,
                bind_host,
                pg,
            };
            with_runtime(async move {
                let stop = croupier::studio::demo::stop_signal();
                match croupier::studio::demo::run(options, stop).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => fail(e),
                }
            })
        }
    }
}

/// `croupier studio nats-config`: the files written, each party's credential (new or
/// kept) and what it sets; a table without a pinned key is named on stderr.
fn nats_config(args: NatsConfigArgs) -> ExitCode {
    let tls = match (args.tls_cert, args.tls_key) {
        (Some(cert), Some(key)) => Some(croupier::studio::ServerTls {
            cert,
            key,
            verify_clients_ca: args.verify_clients_ca,
        }),
        _ => None,
    };
    let spec = croupier::studio::StudioSpec {
        tables: args.tables,
        listen: args.listen,
        store_dir: args.store_dir,
        public_stream: args.public_stream,
        log_stream: args.log_stream,
        bucket: args.bucket,
        floor_consumer: args.floor_consumer,
        replicas: args.replicas,
        public_max_age_hours: args.public_max_age_hours,
        tls,
        relay_mirrors: !args.no_relay_mirrors,
    };
    match croupier::studio::nats_config(&spec, &args.out, &args.table_keys) {
        Ok(done) => {
            println!("wrote {}", args.out.join("nats-server.conf").display());
            for (party, public, new) in &done.parties {
                println!(
                    "  {party:<16} {public}  {} ({})",
                    croupier::studio::credential_path(&args.out, party).display(),
                    if *new { "new" } else { "kept" }
                );
            }
            println!("what each party sets, beside its credential:");
            for (party, setting) in croupier::studio::settings(&spec) {
                println!("  {party:<16} {setting}");
            }
            for t in &done.unpinned {
                eprintln!("croupier: table {t} has no pinned key yet: the relays will not serve it (run `croupier table-key` on it, then again with --table-key {t}=HEX)");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
