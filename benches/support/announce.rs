//! The address `croupier run` announces on the first line of its stdout.

use std::io::{BufRead, BufReader};
use std::process::Child;

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
