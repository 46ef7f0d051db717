//! What the relay says about its tables: the lobby (`/api/tables`) and the per-table
//! figures `/metrics` and the viewer cap read. Apart from the feeds, since these only
//! read what the followers keep.

use super::Tables;
use crate::metrics::Metrics;
use crate::table::TableState;
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One table in the lobby (`/api/tables`).
#[derive(Debug, Clone, Serialize)]
pub struct LobbyEntry {
    /// The table id.
    pub table: String,
    /// Its display name.
    pub name: String,
    /// The game.
    pub variant: String,
    /// The game's display name (a built-in variant's `name`; else its id).
    pub game: String,
    /// `open`, `locked`, `disputed` or `broken`.
    pub state: TableState,
    /// The current (or last) round.
    pub round: u64,
    /// Rounds settled so far.
    pub rounds_settled: u64,
    /// The last message's id and number this relay has.
    pub id: Option<String>,
    /// Its number.
    pub n: u64,
    /// How long the table has been quiet, ms: since its last message reached this relay,
    /// or since this relay began following it when none has yet. A table publishes as it
    /// deals; a long quiet means it stopped or lost the broker — the lobby must not show it
    /// as open.
    pub quiet_ms: u64,
    /// The table's limits and seats as it last published them (`None`: a table that does
    /// not publish them yet).
    pub offer: Option<crate::table::TableOffer>,
    /// The table's currency: the offer's amounts are whole numbers of its minor unit.
    pub currency: crate::currency::Currency,
}

impl Tables {
    /// The lobby, in table order.
    pub fn lobby(&self) -> Vec<LobbyEntry> {
        self.read()
            .iter()
            .filter_map(|(id, t)| {
                let view = t.source.feed.view()?;
                let last = t.source.feed.last();
                Some(LobbyEntry {
                    table: id.clone(),
                    name: view.name,
                    game: crate::engine::Variant::built_in_name(&view.variant)
                        .map_or_else(|| view.variant.clone(), str::to_string),
                    variant: view.variant,
                    state: view.state,
                    round: view.round.number,
                    rounds_settled: view.rounds_settled,
                    id: last.map(|((s, b), _)| format!("{s}.{b}")),
                    n: last.map_or(0, |(_, n)| n),
                    quiet_ms: t.quiet_ms(),
                    offer: view.offer,
                    currency: view.currency,
                })
            })
            .collect()
    }

    /// Per table: the messages received from the broker, the last `n`, the metrics of its
    /// subscribers.
    pub fn figures(&self) -> Vec<(String, u64, u64, Arc<Metrics>)> {
        self.read()
            .iter()
            .map(|(id, t)| {
                (
                    id.clone(),
                    t.received.load(Ordering::Relaxed),
                    t.source.feed.last().map_or(0, |(_, n)| n),
                    Arc::clone(&t.source.metrics),
                )
            })
            .collect()
    }
}
