//! Debian's `promtool` (package `prometheus`): without it a test is skipped locally, and
//! fails under CI (`CI` set), where `.ci/run` installs it.
#![allow(dead_code)]

// The skip helper, declared once at the tests' root (tests/it/main.rs).
use crate::skip;

use std::path::Path;

/// The `promtool` binary, or `None` (skipped) outside CI.
pub fn promtool() -> Option<&'static str> {
    let path = "/usr/bin/promtool";
    if Path::new(path).exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI: promtool is missing (.ci/run installs Debian's prometheus)");
    }
    skip::skipped(format_args!(
        "promtool is not installed (apt-get install prometheus)"
    ));
    None
}
