//! The command line of the benchmarks: `--name value` options and `--flag`s, and `--list`
//! (cargo's harness protocol, which these benchmarks answer with nothing).
#![allow(dead_code)] // each benchmark uses its part

use std::str::FromStr;

/// This process's arguments.
pub struct Args(Vec<String>);

impl Args {
    /// This process's arguments.
    pub fn from_env() -> Args {
        Args(std::env::args().collect())
    }

    /// Whether `--name` is given.
    pub fn flag(&self, name: &str) -> bool {
        self.0.iter().any(|a| a == name)
    }

    /// Whether cargo only asks for the list of benchmarks (`cargo bench -- --list`).
    pub fn listing(&self) -> bool {
        self.flag("--list")
    }

    /// The value after `--name`, if any.
    pub fn value(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.0.get(i + 1))
            .cloned()
    }

    /// The value after `--name` read as a `T`; `default` when it is missing or unreadable.
    pub fn number<T: FromStr>(&self, name: &str, default: T) -> T {
        self.value(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// The comma-separated numbers after `--name` (`default` when it is missing).
    pub fn numbers(&self, name: &str, default: &str) -> Vec<usize> {
        self.value(name)
            .unwrap_or_else(|| default.into())
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect()
    }

    /// Every value given after a repeated `--name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .windows(2)
            .filter(|w| w[0] == name)
            .map(|w| w[1].as_str())
            .collect()
    }
}
