//! A process's `/metrics`, read by the benchmarks with the tests' strict parser
//! (`tests/support/prom.rs`, included beside this module as `prom`).
#![allow(dead_code)] // each benchmark uses its part

use super::prom::{self, Scrape};
use std::time::Duration;

/// `addr`'s `/metrics`, parsed; `Err` says why not (no answer within 10 s, or text that is
/// not the exposition format).
pub async fn scrape(addr: &str) -> Result<Scrape, String> {
    let reply = croupier::web::client::request_with(
        addr,
        "GET",
        "/metrics",
        None,
        &[],
        Duration::from_secs(10),
    )
    .await
    .map_err(|e| format!("{addr}/metrics: {e}"))?;
    prom::parse(&reply.body).map_err(|e| format!("{addr}/metrics: {e}"))
}

/// The value of the unlabelled sample `name` (0 when the process has not counted it yet).
pub fn value(scrape: &Scrape, name: &str) -> f64 {
    scrape.samples.get(name).copied().unwrap_or(0.0)
}

/// A histogram's cumulative buckets in `scrape`: each upper bound (`le`, in the metric's
/// unit) with its count, in ascending order of the bound.
pub fn buckets(scrape: &Scrape, name: &str) -> Vec<(f64, u64)> {
    let prefix = format!("{name}_bucket{{le=\"");
    let mut out: Vec<(f64, u64)> = scrape
        .samples
        .iter()
        .filter_map(|(series, count)| {
            let le = series.strip_prefix(&prefix)?.strip_suffix("\"}")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, *count as u64))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}
