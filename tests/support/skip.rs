//! A test that cannot run here says so past the harness's output capture (which would hide
//! it behind an "ok"), naming itself: the run shows which tests did not run, and why.
#![allow(dead_code)]

use std::io::Write;

/// Prints `SKIPPED (TEST did not run): WHY` on stderr, `TEST` the running test's name (the
/// harness names each test's thread after it). Under `cargo nextest`, which shows a passing
/// test's output to nobody, the line also goes to the terminal the run was started from.
pub fn skipped(why: std::fmt::Arguments<'_>) {
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name,
        _ => "this test",
    };
    let line = format!("\nSKIPPED ({test} did not run): {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    if std::env::var_os("NEXTEST").is_some() {
        // No terminal (a CI log, a pipe): nothing more to do; there a missing tool fails
        // the test under CI instead.
        if let Ok(mut terminal) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
            let _ = terminal.write_all(line.as_bytes());
        }
    }
}
