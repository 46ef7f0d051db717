//! The `croupier` command line.

use clap::{Parser, Subcommand};
use croupier::engine::Variant;
use croupier::replay;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Replay { file, variants } => replay_command(&file, variants.as_deref()),
        Command::CheckVariant { files } => check_variants(&files),
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
