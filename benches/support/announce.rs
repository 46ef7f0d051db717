//! The table the load benchmarks start: its configuration, the process, and the address
//! `croupier run` announces on the first line of its stdout.
#![allow(dead_code)] // each benchmark uses its part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The built-in configuration written to `dir/table.toml`: its database in `dir`, any free
/// port, `edits` (text replacements) and then `extra` (more TOML) on top. Its path.
pub fn config_in(dir: &Path, edits: &[(&str, &str)], extra: &str) -> PathBuf {
    let db = format!("path = {:?}", dir.join("croupier.db").display().to_string());
    let mut text = croupier::table::config::DEFAULT_TOML
        .replace("path = \"data/croupier.db\"", &db)
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"");
    for (from, to) in edits {
        text = text.replace(from, to);
    }
    text.push_str(extra);
    let cfg = dir.join("table.toml");
    std::fs::write(&cfg, text).expect("config");
    cfg
}

/// `croupier` with `args` (its log quiet, to warnings, and not shown), once it announced
/// its address: the process and the address.
pub fn start(args: &[&std::ffi::OsStr]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start croupier");
    let addr = address(&mut child);
    (child, addr)
}

/// Reads the child's first stdout line (`croupier: table … serving http://ADDR/`) and
/// returns `ADDR`.
pub fn address(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .expect("first line");
    line.split("http://")
        .nth(1)
        .and_then(|x| x.split('/').next())
        .expect("address on the first line")
        .to_string()
}

/// Waits until the relay at `addr` lists table `id` in its lobby (`/api/tables`): it
/// serves the table once the table's first view is in the bucket. At most a minute.
pub async fn listed(addr: &str, id: &str) {
    let started = std::time::Instant::now();
    loop {
        let lobby = croupier::web::client::request_with(
            addr,
            "GET",
            "/api/tables",
            None,
            &[],
            std::time::Duration::from_secs(5),
        )
        .await
        .map(|r| r.body)
        .unwrap_or_default();
        if lobby.contains(&format!("\"{id}\"")) {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the relay at {addr} lists {id}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
