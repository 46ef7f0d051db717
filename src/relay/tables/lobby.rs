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

    /// Per table: what `/metrics` says of it.
    pub fn figures(&self) -> Vec<TableFigures> {
        self.read()
            .iter()
            .map(|(id, t)| TableFigures {
                table: id.clone(),
                received: t.received.load(Ordering::Relaxed),
                last_n: t.source.feed.last().map_or(0, |(_, n)| n),
                metrics: Arc::clone(&t.source.metrics),
                restarts: t.restarts.load(Ordering::Relaxed),
                heartbeats_kept: t
                    .heartbeats_kept
                    .each_ref()
                    .map(|c| c.load(Ordering::Relaxed)),
            })
            .collect()
    }
}

/// One relayed table's figures, as `/metrics` reports them.
pub struct TableFigures {
    /// The table's id.
    pub table: String,
    /// Messages received from the broker.
    pub received: u64,
    /// The last message's number (`n`).
    pub last_n: u64,
    /// Its subscribers' metrics.
    pub metrics: Arc<Metrics>,
    /// Consumers of its public stream made again after a pass of following failed.
    pub restarts: u64,
    /// Missed heartbeats after which the consumer was kept, by `Kept::index`.
    pub heartbeats_kept: [u64; 3],
}
