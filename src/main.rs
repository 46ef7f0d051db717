//! The `croupier` binary: its command line is [`cli`].

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    cli::main()
}
