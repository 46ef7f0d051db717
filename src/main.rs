//! The `croupier` command line.

use clap::{Parser, Subcommand};
use croupier::engine::Variant;
use croupier::replay;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod commands;

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
    /// Validates variant files and prints the first problem with file, key and reason.
    CheckVariant {
        /// The variant files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
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
    },
    /// Validates a table configuration; prints file:line:column: message on a problem.
    CheckConfig {
        /// The file (default: the built-in configuration).
        file: Option<PathBuf>,
    },
    /// Prints the last rounds from the store with every input and the settlement. Reads
    /// the database directly: works while the table is locked or stopped.
    Recall {
        /// How many rounds.
        #[arg(long, default_value_t = 10)]
        last: u32,
        /// The table configuration naming the database and table (default: built-in).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The database file, instead of the config's store.path.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copies the database to PATH while the table runs (SQLite `VACUUM INTO`), then
    /// verifies the copy: integrity check and every table's hash chain.
    Backup {
        /// The backup file to create (never overwritten).
        path: PathBuf,
        /// The table configuration naming the database (default: built-in).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The database file, instead of the config's store.path.
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Alarm commands, sent to the running service's API.
    Alarm {
        #[command(subcommand)]
        command: AlarmCommand,
    },
    /// Runs a simulated card shoe on a pseudo-terminal (see drivers/src/sim).
    SimShoe(croupier_drivers::sim::SimShoeArgs),
}

#[derive(Subcommand)]
enum AlarmCommand {
    /// Clears the table's alarm (POST /api/alarm/clear): the refused and held cards are
    /// voided and the table takes inputs again.
    Clear {
        /// Why it may be cleared (recorded in the event log).
        #[arg(long)]
        reason: String,
        /// The table configuration whose http.bind to talk to (default: built-in).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The service's address (host:port), instead of the config's http.bind.
        #[arg(long)]
        addr: Option<String>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Replay { file, variants } => replay_command(&file, variants.as_deref()),
        Command::CheckVariant { files } => check_variants(&files),
        Command::Run { config, bind } => with_runtime(commands::run_command(config, bind)),
        Command::CheckConfig { file } => commands::check_config(file.as_deref()),
        Command::Recall {
            last,
            config,
            db,
            json,
        } => with_runtime(commands::recall(last, config, db, json)),
        Command::Backup { path, config, db } => with_runtime(commands::backup(path, config, db)),
        Command::Alarm {
            command:
                AlarmCommand::Clear {
                    reason,
                    config,
                    addr,
                },
        } => with_runtime(commands::alarm_clear(reason, config, addr)),
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
    let variant = match loaded {
        Ok(v) => Arc::new(v),
        Err(e) => return fail(e),
    };
    let result = replay::run(variant, &scenario.inputs);
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
            Ok(v) => println!("{}: ok ({})", f.display(), v.name),
            Err(e) => {
                eprintln!("{e}");
                status = ExitCode::from(2);
            }
        }
    }
    status
}
