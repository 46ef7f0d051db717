//! `croupier sim-shoe` without the service: `cargo run -p croupier-drivers --example
//! sim_shoe -- --dialect ascii-suit-rank --link /tmp/croupier-shoe`.

use clap::Parser;
use croupier_drivers::sim::{run, SimShoeArgs};

#[derive(Parser)]
#[command(about = "A simulated card shoe on a pseudo-terminal")]
struct Cli {
    #[command(flatten)]
    args: SimShoeArgs,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(cli.args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("sim-shoe: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
