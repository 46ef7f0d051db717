//! The options several commands share: which table (`--config`/`--db`) and how a studio
//! party reaches the broker, with what they resolve to.

use super::fail;
use croupier::table::TableConfig;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The table a command reads or changes, straight on its database: flattened into every
/// such subcommand (global, so `croupier user --db X add …` and `croupier user add … --db
/// X` both work).
#[derive(clap::Args)]
pub struct TableArgs {
    /// The table configuration naming the database and the table (default: built-in).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// The database file, instead of the config's store.path.
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
}

/// The table configuration `--config` names, else the built-in one; a problem is printed
/// (exit status 2).
pub fn load_config(path: Option<&Path>) -> Result<TableConfig, ExitCode> {
    match path {
        Some(p) => TableConfig::load(p),
        None => TableConfig::embedded(),
    }
    .map_err(fail)
}

impl TableArgs {
    /// The table's configuration and its database (`--db`, else the config's
    /// `store.path`): what a command on the table's own files starts from.
    pub fn load(self) -> Result<(TableConfig, PathBuf), ExitCode> {
        let config = load_config(self.config.as_deref())?;
        let db = self.db.unwrap_or_else(|| config.store.path.clone());
        Ok((config, db))
    }

    /// The database alone: `--db`, else the config's `store.path`. With `--db` the
    /// configuration is not read at all, so a broken one does not matter.
    pub fn database(self) -> Result<PathBuf, ExitCode> {
        match self.db {
            Some(db) => Ok(db),
            None => load_config(self.config.as_deref()).map(|c| c.store.path),
        }
    }
}

/// How a studio party (relay, floor) reaches the broker.
#[cfg(feature = "studio")]
#[derive(clap::Args)]
pub struct BrokerArgs {
    /// The broker: one or more comma-separated NATS URLs (`user:password@` is used, and
    /// never logged).
    #[arg(long)]
    pub nats: String,
    /// The party's NATS credential: an nkey seed file (`croupier studio nats-config`
    /// writes one per party) or a `.creds` file; mode 0600.
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// The CA that signed the broker's certificate (PEM): TLS is then required.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// A client certificate (PEM) for a broker that verifies clients, with --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// The prefix of the party's reply subjects (default: `_INBOX.relay` or
    /// `_INBOX.floor`, the ones the generated grants allow).
    #[arg(long)]
    inbox_prefix: Option<String>,
    /// The JetStream API's subject prefix (default `$JS.API`). On a broker configured by
    /// `croupier studio nats-config`, the floor's is `$JS.STUDIO.API` (the command prints
    /// what each party sets); the relays keep the default.
    #[arg(long, value_parser = parse_prefix)]
    js_api_prefix: Option<String>,
}

/// A `--js-api-prefix`, refused here rather than at the first request when NATS would
/// not take it as a subject prefix.
#[cfg(feature = "studio")]
fn parse_prefix(s: &str) -> Result<String, String> {
    croupier::broker::connect::check_prefix(s).map(|()| s.to_string())
}

#[cfg(feature = "studio")]
impl BrokerArgs {
    /// The connection options, with `default_inbox` unless `--inbox-prefix` names another:
    /// the default is the one the generated grants allow the party.
    pub fn options(self, default_inbox: &str) -> croupier::broker::BrokerOptions {
        croupier::broker::BrokerOptions {
            url: self.nats,
            credentials: self.credentials,
            tls_ca: self.tls_ca,
            tls_cert: self.tls_cert,
            tls_key: self.tls_key,
            inbox_prefix: Some(self.inbox_prefix.unwrap_or_else(|| default_inbox.into())),
            api_prefix: self.js_api_prefix,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::timeline::TimelineCommand;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use std::path::PathBuf;

    /// `--config` and `--db` mean the same on every command that reads a table's database,
    /// before or after a subcommand.
    #[test]
    fn the_table_options_are_one_set_everywhere() {
        let table = |args: &[&str]| -> (Option<PathBuf>, Option<PathBuf>) {
            let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let t = match cli.command {
                Command::Recall { table, .. }
                | Command::Backup { table, .. }
                | Command::TableKey { table }
                | Command::User { table, .. }
                | Command::Player { table, .. }
                | Command::Audit { table, .. } => table,
                Command::Timeline {
                    command:
                        TimelineCommand::Continue { table } | TimelineCommand::Lost { table, .. },
                } => table,
                _ => panic!("{args:?}: not a table command"),
            };
            (t.config, t.db)
        };
        let want = (Some(PathBuf::from("t.toml")), Some(PathBuf::from("t.db")));
        for args in [
            &["croupier", "recall", "--config", "t.toml", "--db", "t.db"][..],
            &[
                "croupier", "backup", "b.db", "--config", "t.toml", "--db", "t.db",
            ],
            &[
                "croupier",
                "table-key",
                "--db",
                "t.db",
                "--config",
                "t.toml",
            ],
            &[
                "croupier", "user", "--config", "t.toml", "--db", "t.db", "list",
            ],
            &[
                "croupier", "user", "list", "--config", "t.toml", "--db", "t.db",
            ],
            &[
                "croupier", "player", "--db", "t.db", "balance", "p1", "--config", "t.toml",
            ],
            &[
                "croupier", "audit", "verify", "--config", "t.toml", "--db", "t.db",
            ],
            &[
                "croupier", "timeline", "continue", "--config", "t.toml", "--db", "t.db",
            ],
            &[
                "croupier", "timeline", "lost", "--db", "t.db", "--config", "t.toml",
            ],
        ] {
            assert_eq!(table(args), want, "{args:?}");
        }
        assert_eq!(table(&["croupier", "recall"]), (None, None));
    }
}
