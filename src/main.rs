//! The `croupier` command line.

use clap::{Parser, Subcommand};
use croupier::engine::Variant;
use croupier::replay;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod commands;
mod player_commands;
mod user_commands;
mod verify_command;

use user_commands::UserAction;

/// croupier: the controller for a live-dealer blackjack table.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replays a round scenario (JSON) through the rules engine and prints the result.
    ///
    /// Exit status 0 when the scenario was replayed (a halt is a result), 2 when the file
    /// is malformed (with a one-line message naming the event).
    Replay {
        /// The scenario file.
        file: PathBuf,
        /// Read variants from this directory instead of the built-in copies of
        /// config/variants/.
        #[arg(long)]
        variants: Option<PathBuf>,
    },
    /// Validates variant files and prints the first problem with file, key and reason;
    /// warns (on stderr, exit status 0) about a side bet returning 100 % or more, or one
    /// whose declared `rtp` its pay table does not give.
    CheckVariant {
        /// The variant files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Prints the exact return (RTP) of every side bet and insurance, by enumeration over
    /// the shoe's composition: each winning line's ways, probability and contribution.
    ///
    /// Without --variant, every built-in variant.
    Paytables {
        /// A built-in variant (ultimate, deluxe, caribbean21, infor6, multihand) or a
        /// variant file.
        #[arg(long)]
        variant: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Plays rounds of a variant through the rules engine (Monte Carlo) with a basic
    /// strategy derived for its rules, and prints the main game's and each side bet's RTP
    /// with 95 % confidence intervals, hit frequencies and the SD per round.
    ///
    /// A common draw (multihand) is played by one player on --boxes boxes with the
    /// --specials special bets on each. Deterministic for a given --seed and --threads.
    /// Progress goes to stderr on long runs.
    Simulate {
        /// A built-in variant (ultimate, deluxe, caribbean21, infor6, multihand) or a
        /// variant file.
        #[arg(long)]
        variant: String,
        /// Common draw: the boxes the player bets, 1 to the table's (boxes 1..=N; default
        /// every box).
        #[arg(long)]
        boxes: Option<u8>,
        /// Common draw: the special bets placed on each box, by name, comma-separated
        /// (default every one; a bet that needs another needs it listed too).
        #[arg(long, value_delimiter = ',')]
        specials: Option<Vec<String>>,
        /// Rounds to play, in all.
        #[arg(long, default_value_t = 1_000_000)]
        rounds: u64,
        /// Threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// The seed of the shuffles and bonus games.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Runs the table service: shoe, buttons, engine, store, status page and API.
    ///
    /// Without --config it uses the built-in default (the text of config/table.toml): a
    /// simulated shoe on a pseudo-terminal, demo players, ./data/croupier.db, and
    /// http://127.0.0.1:8080. Stops cleanly on SIGTERM or Ctrl-C.
    Run {
        /// The table configuration (see config/table.toml).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Listen here instead of the config's http.bind (port 0: any free port).
        #[arg(long)]
        bind: Option<String>,
        /// Create a new table where the database file is empty (0 bytes) or missing beside
        /// its anchor; without it such a start is refused (the history would be lost).
        #[arg(long)]
        init: bool,
    },
    /// Runs a relay: serves remote players the public streams every table publishes to
    /// NATS JetStream (`[publish]` in table.toml). Stateless: run as many as needed behind
    /// a load balancer. Stops cleanly on SIGTERM or Ctrl-C.
    #[cfg(feature = "studio")]
    Relay {
        #[command(flatten)]
        broker: BrokerArgs,
        /// Listen address (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:8090")]
        bind: String,
        /// The tables' pinned public keys (`croupier studio nats-config` writes it): only
        /// these tables are served, and only what each signed. Read again when it changes.
        #[arg(long)]
        table_keys: PathBuf,
        /// The public streams' prefix (`[publish] public_stream`).
        #[arg(long, default_value = croupier::broker::subjects::DEFAULT_PUBLIC_STREAM)]
        public_stream: String,
        /// The key-value bucket the tables put their views in (`[publish] bucket`).
        #[arg(long, default_value = croupier::broker::subjects::DEFAULT_BUCKET)]
        bucket: String,
        /// Messages kept in memory per table for viewers that resume; an older id is read
        /// from the stream.
        #[arg(long, default_value_t = croupier::web::feed::RING)]
        ring: usize,
    },
    /// Runs the casino floor: every table's log (published to NATS JetStream by
    /// `[publish]`) into PostgreSQL, each table's hash chain checked on the way in (a break
    /// or a gap raises a floor alarm). Stops cleanly on SIGTERM or Ctrl-C.
    #[cfg(feature = "studio")]
    Floor {
        #[command(flatten)]
        broker: BrokerArgs,
        /// The floor's database: `postgres://USER@HOST:PORT/DB` (migrated at start).
        #[arg(long)]
        database: String,
        /// The tables' log stream prefix (`[publish] log_stream`).
        #[arg(long, default_value = croupier::broker::subjects::DEFAULT_LOG_STREAM)]
        log_stream: String,
        /// The durable consumer's name on every table's log stream.
        #[arg(long, default_value = croupier::floor::DEFAULT_CONSUMER)]
        consumer: String,
        /// Serve the pit page (`/floor`) here (port 0: any free port).
        #[arg(long)]
        bind: Option<String>,
        /// The key-value bucket the tables put their views in (`[publish] bucket`).
        #[arg(long, default_value = croupier::broker::subjects::DEFAULT_BUCKET)]
        bucket: String,
        /// The key file shared with the tables (`[publish] floor_key`): the pit page's
        /// dispute commands are signed with it.
        #[arg(long)]
        floor_key: Option<PathBuf>,
        /// The tables' pinned public keys (`table-keys.toml`, written by `croupier studio
        /// nats-config`; read again when it changes): only rows a table signed are taken,
        /// and a table with no key here is not followed until it has one.
        #[arg(long)]
        table_keys: PathBuf,
        /// A `stall` floor alarm when a table's stream holds rows the floor has not taken
        /// for this long (a broken consumer, a failing database, a recreated stream it
        /// cannot follow).
        #[arg(long, default_value_t = 60)]
        stall_seconds: u64,
        /// Serve the pit page over HTTPS with this PEM certificate chain (with
        /// `--https-key`); its session cookie is then `Secure`. (`--tls-*` are the
        /// broker's.)
        #[arg(long, requires = "https_key")]
        https_cert: Option<PathBuf>,
        /// The PEM private key of `--https-cert`.
        #[arg(long, requires = "https_cert")]
        https_key: Option<PathBuf>,
    },
    /// The studio's broker: generated permissions and credentials, and its streams; and
    /// the whole studio on one machine for evaluation (`studio demo`).
    #[cfg(feature = "studio")]
    Studio {
        #[command(subcommand)]
        command: StudioCommand,
    },
    /// The table's timelines: a restored table's new history, and what the old one lost
    /// (the guide: operations, "Restoring a table with money in flight").
    Timeline {
        #[command(subcommand)]
        command: TimelineCommand,
    },
    /// Prints the table's Ed25519 public key (`ID = "HEX"`, a line of the relays'
    /// `table-keys.toml`), read from the key file beside its database. Never the secret.
    TableKey {
        #[command(flatten)]
        table: TableArgs,
    },
    /// Adds a pit-page supervisor to the floor's database (or sets their secret): the
    /// secret is read from the first line of stdin.
    #[cfg(feature = "studio")]
    FloorUser {
        /// The floor's database: `postgres://USER@HOST:PORT/DB`.
        #[arg(long)]
        database: String,
        /// The badge (login name).
        #[arg(long)]
        badge: String,
        /// The supervisor's name.
        #[arg(long)]
        name: String,
    },
    /// Validates a table configuration; prints file:line:column: message on a problem.
    CheckConfig {
        /// The file (default: the built-in configuration).
        file: Option<PathBuf>,
    },
    /// Prints the last rounds from the store with every input and the settlement. Reads
    /// the database directly: works while the table is locked or stopped.
    Recall {
        /// How many rounds (at least 1).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        last: u32,
        #[command(flatten)]
        table: TableArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copies the database to PATH while the table runs (SQLite `VACUUM INTO`), then
    /// verifies the copy: integrity check and every table's hash chain.
    Backup {
        /// The backup file to create (never overwritten).
        path: PathBuf,
        #[command(flatten)]
        table: TableArgs,
    },
    /// Alarm commands, sent to the running service's API.
    Alarm {
        #[command(subcommand)]
        command: AlarmCommand,
    },
    /// Runs a simulated card shoe on a pseudo-terminal (see drivers/src/sim).
    SimShoe(croupier_drivers::sim::SimShoeArgs),
    /// Checks a saved public history (the public messages, one JSON object per line):
    /// signatures, sealed hole cards, and log heads that never go back. Exit 0: all good;
    /// 1: something is wrong (every problem is listed); 2: the file cannot be read; 3:
    /// nothing is wrong, but the history spans a change of the table's timeline (a
    /// restore: the rounds after it were played again), each change listed.
    VerifyResults {
        /// The saved messages (`-` for stdin).
        file: PathBuf,
        /// The table's public key (hex), e.g. from `GET /api/table-key`; default: the one
        /// the history's views carry.
        #[arg(long)]
        key: Option<String>,
    },
    /// Accounts (dealer, supervisor, admin), straight on the database: works while the
    /// service runs; every change is recorded in the audit log as `cli:<unix user>`.
    User {
        #[command(subcommand)]
        command: UserCommand,
        #[command(flatten)]
        table: TableArgs,
    },
    /// Remote players and the embedded wallet, straight on the database (works while the
    /// service runs): add (prints a launch link), credit, balance, link.
    Player {
        #[command(subcommand)]
        command: PlayerCommand,
        #[command(flatten)]
        table: TableArgs,
    },
    /// The audit log: verify its hash chain, export it.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
        #[command(flatten)]
        table: TableArgs,
    },
}

#[cfg(feature = "studio")]
#[derive(Subcommand)]
enum StudioCommand {
    /// Writes the broker's configuration for a studio into --out: nats-server.conf (which
    /// includes auth.conf: one account per party, one nkey user each with only its own
    /// grants), one credential per party in credentials/ (mode 0600), table-keys.toml (the
    /// keys the relays pin) and studio.toml, and prints what each party sets. Run it again
    /// with the full list to add a table: existing credentials are kept. Then:
    /// nats-server --signal reload.
    NatsConfig {
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
    },
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

/// The table a command reads or changes, straight on its database: flattened into every
/// such subcommand (global, so `croupier user --db X add …` and `croupier user add … --db
/// X` both work).
#[derive(clap::Args)]
struct TableArgs {
    /// The table configuration naming the database and the table (default: built-in).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The database file, instead of the config's store.path.
    #[arg(long, global = true)]
    db: Option<PathBuf>,
}

/// `croupier timeline …`.
#[derive(Subcommand)]
enum TimelineCommand {
    /// Keeps this table's log although the broker holds another history of the table (a
    /// restored database whose lost rows were published; a second table that published
    /// under this id): run with the table stopped. A new timeline begins in the log; at
    /// the next start the log is published after the last row both share, and the
    /// broker's other history stays there, superseded. Exit 0 when a timeline began or
    /// there was nothing to continue over (it says which), 2 on an error.
    Continue {
        #[command(flatten)]
        table: TableArgs,
    },
    /// Lists the wallet movements of the rounds a restore lost, which the restored log
    /// does not know: read from the rows the broker keeps of the superseded history
    /// (after `croupier timeline continue`), by round, seat and player, with each
    /// player's totals — for the operator to reconcile with the wallet. Read-only; the
    /// table may be running. Exit 0, 2 on an error.
    Lost {
        #[command(flatten)]
        table: TableArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[cfg(feature = "studio")]
fn parse_table_key(s: &str) -> Result<(String, String), String> {
    let (id, key) = s.split_once('=').ok_or_else(|| format!("{s:?}: ID=HEX"))?;
    let key = key.trim().trim_matches('"');
    croupier::trust::attest::verifying_key(key).map_err(|e| e.to_string())?;
    // `croupier table-key` prints `"ID" = "HEX"`: taken as it is.
    Ok((id.trim().trim_matches('"').to_string(), key.to_string()))
}

#[cfg(feature = "studio")]
/// How a studio party (relay, floor) reaches the broker.
#[derive(clap::Args)]
struct BrokerArgs {
    /// The broker: one or more comma-separated NATS URLs (`user:password@` is used, and
    /// never logged).
    #[arg(long)]
    nats: String,
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

#[cfg(feature = "studio")]
fn parse_prefix(s: &str) -> Result<String, String> {
    croupier::broker::connect::check_prefix(s).map(|()| s.to_string())
}

#[cfg(feature = "studio")]
impl BrokerArgs {
    fn options(self, default_inbox: &str) -> croupier::broker::BrokerOptions {
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

#[derive(Subcommand)]
enum PlayerCommand {
    /// Adds a player with an opening balance and prints a launch link for /play.
    Add {
        /// The name shown.
        #[arg(long)]
        name: String,
        /// The opening balance in the table's currency (e.g. 500.00).
        #[arg(long, default_value = "0")]
        balance: String,
        /// The player id (default: the name in lower case).
        #[arg(long)]
        id: Option<String>,
    },
    /// Deposits money (a negative amount withdraws).
    Credit {
        /// The player id.
        id: String,
        /// The amount in the table's currency (e.g. 100.00 or -20).
        #[arg(allow_hyphen_values = true)]
        amount: String,
    },
    /// Prints the player's balance.
    Balance {
        /// The player id.
        id: String,
    },
    /// Ends a player's sessions at once: every one of the player's, or one link.
    Revoke {
        /// The player id (every live session of theirs).
        #[arg(required_unless_present = "link", conflicts_with = "link")]
        id: Option<String>,
        /// One launch link (or its token) instead.
        #[arg(long)]
        link: Option<String>,
    },
    /// Disables a player: every session ends, and none opens until `enable`.
    Disable {
        /// The player id.
        id: String,
    },
    /// Enables a disabled player again (new launch links work; revoked ones stay revoked).
    Enable {
        /// The player id.
        id: String,
    },
    /// Prints a new launch link.
    Link {
        /// The player id.
        id: String,
    },
    /// Makes a new credential for the operator's platform (replacing the last) and prints
    /// it: the platform opens players' sessions with it (POST /api/play/sessions).
    PlatformKey,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Adds an account. The secret (a PIN of 4-12 digits or a password of 8-128
    /// characters) is asked on the terminal, or read from stdin with --secret-stdin; never
    /// on the command line.
    Add {
        /// Badge id (letters, digits, '-', '_').
        #[arg(long)]
        badge: String,
        /// The person's name.
        #[arg(long)]
        name: String,
        /// dealer, supervisor or admin.
        #[arg(long)]
        role: String,
        /// Read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
    },
    /// Disables an account (it cannot log in; its sessions end).
    Disable {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Re-enables a disabled account.
    Enable {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Sets a new secret; also unlocks the account and ends its sessions.
    Passwd {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Unlocks an account locked by failed logins.
    Unlock {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Lists the accounts.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verifies the hash chain: exit 0 when intact, 1 naming the first bad row (edited,
    /// deleted, inserted, chain mismatch), 2 when the database cannot be read.
    Verify,
    /// Writes the rows as JSON lines on stdout.
    Export {
        /// Only rows after this sequence number.
        #[arg(long, default_value_t = 0)]
        since: u64,
    },
}

#[derive(Subcommand)]
enum AlarmCommand {
    /// Clears the table's alarm (POST /api/alarm/clear): the refused and held cards are
    /// voided and the table takes inputs again. Needs the supervisor role: by default it
    /// uses the service's local token (`<db>.token`, readable by the service's user only);
    /// with --badge it logs in as that person (secret on the terminal or --secret-stdin).
    Clear {
        /// Why it may be cleared (recorded in the event log and the audit log).
        #[arg(long)]
        reason: String,
        /// Log in with this badge instead of using the local token.
        #[arg(long)]
        badge: Option<String>,
        /// With --badge: read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
        /// The database whose local token to use, instead of the config's store.path.
        #[arg(long)]
        db: Option<PathBuf>,
        /// The table configuration whose http.bind to talk to (default: built-in); with
        /// [http.tls] the command speaks HTTPS, trusting exactly its certificate.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The service's address (host:port), instead of the config's http.bind.
        #[arg(long)]
        addr: Option<String>,
    },
}

/// Whether the command is a long-running service (whose closed stdout is no reason to
/// stop quietly).
fn serves(command: &Command) -> bool {
    match command {
        Command::Run { .. } | Command::SimShoe(_) => true,
        #[cfg(feature = "studio")]
        Command::Relay { .. } | Command::Floor { .. } => true,
        _ => false,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !serves(&cli.command) {
        exit_quietly_on_a_closed_pipe();
    }
    match cli.command {
        Command::Replay { file, variants } => replay_command(&file, variants.as_deref()),
        Command::CheckVariant { files } => check_variants(&files),
        Command::Paytables { variant, json } => paytables_command(variant.as_deref(), json),
        Command::Simulate {
            variant,
            boxes,
            specials,
            rounds,
            threads,
            seed,
            json,
        } => {
            let options = croupier::math::simulate::CommonOptions { boxes, specials };
            simulate_command(&variant, &options, rounds, threads, seed, json)
        }
        Command::Run { config, bind, init } => {
            croupier::process::return_large_allocations();
            with_runtime(commands::run_command(config, bind, init))
        }
        #[cfg(feature = "studio")]
        Command::Relay {
            broker,
            bind,
            table_keys,
            public_stream,
            bucket,
            ring,
        } => with_runtime(commands::relay_command(croupier::relay::RelayConfig {
            broker: broker.options(croupier::broker::connect::RELAY_INBOX),
            bind,
            table_keys,
            public_stream,
            bucket,
            ring,
        })),
        #[cfg(feature = "studio")]
        Command::Floor {
            broker,
            database,
            log_stream,
            consumer,
            bind,
            bucket,
            floor_key,
            table_keys,
            stall_seconds,
            https_cert,
            https_key,
        } => {
            let mut config =
                croupier::floor::FloorConfig::new(&broker.nats, &database, &table_keys);
            config.stall = std::time::Duration::from_secs(stall_seconds);
            config.broker = broker.options(croupier::broker::connect::FLOOR_INBOX);
            config.log_stream = log_stream;
            config.consumer = consumer;
            config.bind = bind;
            config.bucket = bucket;
            config.tls = https_cert.zip(https_key);
            if let Some(path) = floor_key {
                match croupier::publish::floor_commands::read_key(&path) {
                    Ok(key) => config.floor_key = Some(key),
                    Err(e) => return fail(e),
                }
            }
            with_runtime(commands::floor_command(config))
        }
        #[cfg(feature = "studio")]
        Command::Studio { command } => studio_command(command),
        Command::TableKey {
            table: TableArgs { config, db },
        } => commands::table_key(config, db),
        Command::Timeline {
            command:
                TimelineCommand::Continue {
                    table: TableArgs { config, db },
                },
        } => with_runtime(commands::timeline_continue(config, db)),
        Command::Timeline {
            command:
                TimelineCommand::Lost {
                    table: TableArgs { config, db },
                    json,
                },
        } => with_runtime(commands::timeline_lost(config, db, json)),
        #[cfg(feature = "studio")]
        Command::FloorUser {
            database,
            badge,
            name,
        } => with_runtime(commands::floor_user(database, badge, name)),
        Command::CheckConfig { file } => commands::check_config(file.as_deref()),
        Command::Recall {
            last,
            table: TableArgs { config, db },
            json,
        } => with_runtime(commands::recall(last, config, db, json)),
        Command::Backup {
            path,
            table: TableArgs { config, db },
        } => with_runtime(commands::backup(path, config, db)),
        Command::Alarm {
            command:
                AlarmCommand::Clear {
                    reason,
                    badge,
                    secret_stdin,
                    db,
                    config,
                    addr,
                },
        } => with_runtime(commands::alarm_clear(
            reason,
            config,
            addr,
            commands::Credentials {
                badge,
                secret_stdin,
                db,
            },
        )),
        Command::User {
            command,
            table: TableArgs { config, db },
        } => {
            let action = match command {
                UserCommand::Add {
                    badge,
                    name,
                    role,
                    secret_stdin,
                } => UserAction::Add {
                    badge,
                    name,
                    role,
                    secret_stdin,
                },
                UserCommand::Disable { badge, reason } => UserAction::Disable {
                    badge,
                    enable: false,
                    reason,
                },
                UserCommand::Enable { badge, reason } => UserAction::Disable {
                    badge,
                    enable: true,
                    reason,
                },
                UserCommand::Passwd {
                    badge,
                    secret_stdin,
                    reason,
                } => UserAction::Passwd {
                    badge,
                    secret_stdin,
                    reason,
                },
                UserCommand::Unlock { badge, reason } => UserAction::Unlock { badge, reason },
                UserCommand::List { json } => UserAction::List { json },
            };
            with_runtime(user_commands::user(action, config, db))
        }
        Command::Player {
            command,
            table: TableArgs { config, db },
        } => {
            use player_commands::PlayerAction;
            let action = match command {
                PlayerCommand::Add { name, balance, id } => PlayerAction::Add { id, name, balance },
                PlayerCommand::Credit { id, amount } => PlayerAction::Credit { id, amount },
                PlayerCommand::Balance { id } => PlayerAction::Balance { id },
                PlayerCommand::Revoke { id, link } => PlayerAction::Revoke { id, link },
                PlayerCommand::Disable { id } => PlayerAction::Disabled { id, disabled: true },
                PlayerCommand::Enable { id } => PlayerAction::Disabled {
                    id,
                    disabled: false,
                },
                PlayerCommand::Link { id } => PlayerAction::Link { id },
                PlayerCommand::PlatformKey => PlayerAction::PlatformKey,
            };
            with_runtime(player_commands::player(action, config, db))
        }
        Command::Audit {
            command,
            table: TableArgs { config, db },
        } => match command {
            AuditCommand::Verify => with_runtime(user_commands::audit_verify(config, db)),
            AuditCommand::Export { since } => {
                with_runtime(user_commands::audit_export(config, db, since))
            }
        },
        Command::VerifyResults { file, key } => verify_command::run(&file, key.as_deref()),
        Command::SimShoe(args) => with_runtime(async move {
            commands::init_logs();
            match croupier_drivers::sim::run(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }),
    }
}

fn with_runtime(f: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => fail(format!("cannot start the runtime: {e}")),
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("croupier: {message}");
    ExitCode::from(2)
}

fn replay_command(file: &std::path::Path, variants: Option<&std::path::Path>) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return fail(format!("{}: {e}", file.display())),
    };
    let scenario = match replay::parse(&text) {
        Ok(s) => s,
        Err(e) => return fail(format!("{}: {e}", file.display())),
    };
    let loaded = match variants {
        Some(dir) => {
            let path = dir.join(format!("{}.toml", scenario.variant));
            if !path.is_file() {
                return fail(format!(
                    "unknown variant {:?}: no {}",
                    scenario.variant,
                    path.display()
                ));
            }
            Variant::load(&path)
        }
        None => match Variant::built_in(&scenario.variant) {
            Some(v) => v,
            None => {
                let known: Vec<&str> = croupier::engine::variant::BUILT_IN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                return fail(format!(
                    "unknown variant {:?} (known: {})",
                    scenario.variant,
                    known.join(", ")
                ));
            }
        },
    };
    let loaded = loaded.and_then(|v| {
        if scenario.settings.is_empty() {
            Ok(v)
        } else {
            v.with_settings(&file.display().to_string(), &scenario.settings)
        }
    });
    let variant = match loaded {
        Ok(v) => Arc::new(v),
        Err(e) => return fail(e),
    };
    let result = replay::run_steps(variant, &scenario.steps);
    match serde_json::to_string_pretty(&result.to_json()) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

fn check_variants(files: &[PathBuf]) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for f in files {
        match Variant::load(f) {
            Ok(v) => {
                println!("{}: ok ({})", f.display(), v.name);
                match croupier::math::variant_tables(&v) {
                    Ok(tables) => {
                        for w in croupier::math::warnings(&tables) {
                            eprintln!("{}: warning: {w}", f.display());
                        }
                    }
                    Err(e) => eprintln!("{}: warning: {e}", f.display()),
                }
            }
            Err(e) => {
                eprintln!("{e}");
                status = ExitCode::from(2);
            }
        }
    }
    status
}

/// The variants `paytables` covers: one named (built-in or a file), or every built-in one.
fn variants_for(name: Option<&str>) -> Result<Vec<Variant>, String> {
    let Some(name) = name else {
        return croupier::engine::variant::BUILT_IN
            .iter()
            .map(|(stem, _)| match Variant::built_in(stem) {
                Some(Ok(v)) => Ok(v),
                Some(Err(e)) => Err(e.to_string()),
                None => Err(format!("unknown variant {stem:?}")),
            })
            .collect();
    };
    match Variant::built_in(name) {
        Some(v) => v.map(|v| vec![v]).map_err(|e| e.to_string()),
        None if std::path::Path::new(name).is_file() => Variant::load(std::path::Path::new(name))
            .map(|v| vec![v])
            .map_err(|e| e.to_string()),
        None => {
            let known: Vec<&str> = croupier::engine::variant::BUILT_IN
                .iter()
                .map(|(n, _)| *n)
                .collect();
            Err(format!(
                "unknown variant {name:?} (known: {}; or a variant file)",
                known.join(", ")
            ))
        }
    }
}

fn paytables_command(name: Option<&str>, json: bool) -> ExitCode {
    let variants = match variants_for(name) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let mut all = Vec::new();
    for v in &variants {
        match croupier::math::variant_tables(v) {
            Ok(t) => all.push(t),
            Err(e) => return fail(format!("{}: {e}", v.name)),
        }
    }
    if json {
        match serde_json::to_string_pretty(&all) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e),
        }
    } else {
        for t in &all {
            print!("{}", croupier::math::paytable::render(t));
            for w in croupier::math::warnings(t) {
                println!("  warning: {w}");
            }
        }
    }
    ExitCode::SUCCESS
}

fn simulate_command(
    name: &str,
    options: &croupier::math::simulate::CommonOptions,
    rounds: u64,
    threads: Option<usize>,
    seed: u64,
    json: bool,
) -> ExitCode {
    let variant = match variants_for(Some(name)) {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        Ok(_) => return fail("one variant, please"),
        Err(e) => return fail(e),
    };
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let config = croupier::math::simulate::Config {
        rounds,
        threads,
        seed,
        progress: true,
    };
    match croupier::math::simulate::simulate_with(&variant, &config, options) {
        Ok(report) if json => match serde_json::to_string_pretty(&report) {
            Ok(s) => {
                println!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        Ok(report) => {
            print!("{}", croupier::math::simulate::render(&report));
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{}: {e}", variant.name)),
    }
}

#[cfg(feature = "studio")]
fn studio_command(command: StudioCommand) -> ExitCode {
    match command {
        StudioCommand::NatsConfig {
            tables,
            out,
            table_keys,
            listen,
            store_dir,
            tls_cert,
            tls_key,
            verify_clients_ca,
            public_stream,
            log_stream,
            bucket,
            floor_consumer,
            replicas,
            public_max_age_hours,
            no_relay_mirrors,
        } => {
            let tls = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => Some(croupier::studio::ServerTls {
                    cert,
                    key,
                    verify_clients_ca,
                }),
                _ => None,
            };
            let spec = croupier::studio::StudioSpec {
                tables,
                listen,
                store_dir,
                public_stream,
                log_stream,
                bucket,
                floor_consumer,
                replicas,
                public_max_age_hours,
                tls,
                relay_mirrors: !no_relay_mirrors,
            };
            match croupier::studio::nats_config(&spec, &out, &table_keys) {
                Ok(done) => {
                    println!("wrote {}", out.join("nats-server.conf").display());
                    for (party, public, new) in &done.parties {
                        println!(
                            "  {party:<16} {public}  {} ({})",
                            croupier::studio::credential_path(&out, party).display(),
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

/// A one-shot command whose reader went away (`croupier paytables | head`) has done its
/// job: it exits 0 without a word, as `recall` does, instead of panicking on the next
/// `println!` (the standard library ignores SIGPIPE, so the write fails with EPIPE and
/// `println!` panics). The services are left alone: there a closed socket is an error to
/// handle, never a reason to exit.
fn exit_quietly_on_a_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

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
