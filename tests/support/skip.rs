//! A test that cannot run here says so past the harness's output capture (which would hide
//! it behind an "ok"), naming itself: the run shows which tests did not run, and why.
#![allow(dead_code)]

/// Prints `SKIPPED (TEST did not run): WHY` on stderr, `TEST` the running test's name (the
/// harness names each test's thread after it).
pub fn skipped(why: std::fmt::Arguments<'_>) {
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name,
        _ => "this test",
    };
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("\nSKIPPED ({test} did not run): {why}\n"),
    );
}
