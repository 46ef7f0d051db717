//! One process's wall clock skewed while it runs (issue #61's nemesis): Debian's
//! libfaketime preloaded, reading its offset from a file the test rewrites, so the skew
//! comes and goes under a running process as an NTP step would. The monotonic clock is
//! left alone (`FAKETIME_DONT_FAKE_MONOTONIC`): timers and timeouts keep real time.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's `libfaketime` package puts the thread-safe library.
const LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// A skew file and the processes started with it.
pub struct Skew {
    file: PathBuf,
}

impl Skew {
    /// A skew of zero, its file under `dir` named for `part`; `None` where libfaketime is
    /// missing (the caller skips or, under CI, fails: `.ci/run` installs it).
    pub fn new(dir: &Path, part: &str) -> Option<Skew> {
        if !Path::new(LIBRARY).exists() {
            return None;
        }
        let s = Skew {
            file: dir.join(format!("{part}.faketime")),
        };
        s.set("+0");
        Some(s)
    }

    /// The library's path, for a message.
    pub fn library() -> &'static str {
        LIBRARY
    }

    /// Makes `command` run with this skew.
    pub fn apply(&self, command: &mut Command) {
        command
            .env("LD_PRELOAD", LIBRARY)
            .env("FAKETIME_TIMESTAMP_FILE", &self.file)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            // The file is read again at most a second after it changes.
            .env("FAKETIME_CACHE_DURATION", "1");
    }

    /// Sets the offset (`+5m`, `-300`, `+0`: libfaketime's relative form).
    pub fn set(&self, offset: &str) {
        std::fs::write(&self.file, format!("{offset}\n")).expect("write the skew file");
    }
}
