//! The floor under the table's CPU per committed row: what this machine charges a process
//! for the two things a studio table cannot leave out of a row — its durable commit (one
//! card row through the table's own writer, `Store::append`: SQLite in WAL mode with
//! `synchronous = FULL`) and its publication (one JetStream message on the table's own log
//! stream, its acknowledgement awaited, as the publisher sends it) — with nothing else in
//! the process: no engine, no signature, no subscriber.
//! Against it, `cargo bench --bench relay` shows how much of the table's own CPU per row is
//! the table's and how much is the kernel's and the broker client's.
//!
//!     cargo bench --bench row_floor -- [--rows 200] [--pace-ms 100] [--payload 400]
//!
//! Each mode runs `--rows` rows at one row every `--pace-ms` (the relay bench's demo pace;
//! 0: back to back), on a two-worker tokio runtime like the table's, and prints the
//! process's CPU (all its threads, from `/proc/self/task/*/schedstat`) and voluntary
//! context switches per row. Needs `nats-server` (Debian's package); a real one, started
//! on a free port with a temporary store.

#[path = "support/args.rs"]
mod args;
#[path = "support/floor.rs"]
mod floor;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "support/viewers.rs"]
mod viewers;

use args::Args;
use floor::Mode;
use std::time::Duration;

fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let rows: u64 = args.number("--rows", 200);
    let pace = Duration::from_millis(args.number("--pace-ms", 100));
    let size: usize = args.number("--payload", 400);
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = nats::Nats::start(&bin, dir.path());
    let payload = floor::payload(size);
    let rt = viewers::runtime(2);
    println!(
        "one process, {rows} rows a mode, one every {} ms, {size}-byte messages; database under {}",
        pace.as_millis(),
        std::env::temp_dir().display()
    );
    println!("| does per row | rows | process CPU per row | sleeps per row |");
    println!("|---|---|---|---|");
    for mode in [Mode::Wake, Mode::Commit, Mode::Publish, Mode::Both] {
        let (cpu, sleeps) = rt.block_on(floor::cost(mode, rows, pace, &payload, &broker.url()));
        println!("| {mode:?} | {rows} | {cpu:.3} ms | {sleeps:.1} |");
    }
}
