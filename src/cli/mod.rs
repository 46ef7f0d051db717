//! The `croupier` command line: the commands and their dispatch. Each family of commands
//! (its subcommands, options and what runs them) has its own file; this one holds what
//! every command goes through (the runtime, how an error is reported, a closed stdout).
//! Bin-only: the library knows nothing of it.

#[cfg(feature = "studio")]
use args::BrokerArgs;
use args::TableArgs;
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

mod alarm;
mod args;
mod audit;
mod player;
mod services;
#[cfg(feature = "studio")]
mod studio;
mod table_commands;
mod timeline;
mod user;
mod variants;
mod verify;

use alarm::AlarmCommand;
use audit::AuditCommand;
use player::PlayerCommand;
#[cfg(feature = "studio")]
use studio::StudioCommand;
use timeline::TimelineCommand;
use user::UserCommand;

/// croupier: the controller for a live-dealer blackjack table.
#[derive(Parser)]
#[command(version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    command: Command,
}

/// Every command, as the user types it: a variant per command.
#[derive(clap::Subcommand)]
pub enum Command {
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

/// Parses the command line and runs the command: its exit status, 2 on an error reported
/// as `croupier: …` on stderr unless the command documents others.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if !serves(&cli.command) {
        exit_quietly_on_a_closed_pipe();
    }
    match cli.command {
        Command::Replay {
            file,
            variants: dir,
        } => variants::replay_command(&file, dir.as_deref()),
        Command::CheckVariant { files } => variants::check_variants(&files),
        Command::Paytables { variant, json } => {
            variants::paytables_command(variant.as_deref(), json)
        }
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
            variants::simulate_command(&variant, &options, rounds, threads, seed, json)
        }
        Command::Run { config, bind, init } => {
            croupier::process::return_large_allocations();
            with_runtime(services::run_command(config, bind, init))
        }
        #[cfg(feature = "studio")]
        Command::Relay {
            broker,
            bind,
            table_keys,
            public_stream,
            bucket,
            ring,
        } => with_runtime(services::relay_command(croupier::relay::RelayConfig {
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
            with_runtime(services::floor_command(config))
        }
        #[cfg(feature = "studio")]
        Command::Studio { command } => studio::studio_command(command),
        Command::TableKey { table } => table_commands::table_key(table),
        Command::Timeline { command } => timeline::timeline_command(command),
        #[cfg(feature = "studio")]
        Command::FloorUser {
            database,
            badge,
            name,
        } => with_runtime(services::floor_user(database, badge, name)),
        Command::CheckConfig { file } => table_commands::check_config(file.as_deref()),
        Command::Recall { last, table, json } => {
            with_runtime(table_commands::recall(last, table, json))
        }
        Command::Backup { path, table } => with_runtime(table_commands::backup(path, table)),
        Command::Alarm { command } => with_runtime(alarm::alarm_command(command)),
        Command::User { command, table } => with_runtime(user::user(command, table)),
        Command::Player { command, table } => with_runtime(player::player(command, table)),
        Command::Audit { command, table } => audit::audit_command(command, table),
        Command::VerifyResults { file, key } => verify::run(&file, key.as_deref()),
        Command::SimShoe(args) => with_runtime(async move {
            services::init_logs();
            match croupier_drivers::sim::run(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }),
    }
}

/// Runs `f` to its end on a new multi-threaded runtime: the commands that need one start it
/// here, so the offline ones never do.
pub fn with_runtime(f: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => fail(format!("cannot start the runtime: {e}")),
    }
}

/// Reports `message` as `croupier: …` on stderr: exit status 2, the status of an error
/// throughout the command line.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("croupier: {message}");
    ExitCode::from(2)
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
}
