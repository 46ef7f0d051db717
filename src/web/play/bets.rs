//! What the players' bets (`POST /api/play/bet`, `/behind`, `/boxes`) share: the amounts'
//! checks, the lines each debits, the open window, the answer. Each line is debited, then
//! the bet placed, every debit rolled back if the table refuses it (`super::stakes`).
//!
//! A module a kind of bet, siblings of this one: a player's own seats (`super::seat_bets`,
//! two seats included), a bet behind a seated player (`super::behind`), a common draw's
//! boxes with Let it play (`super::boxes`). Flat, not below `bets/`: the players' words
//! test (`tests/it/browser_play_words.rs`) reads the codes the routes write from
//! `src/web/play/*.rs`, one level deep.

use super::{Answer, PlayError};
use crate::engine::SeatId;
use crate::play::Play;
use crate::table::remote::Window;
use crate::wallet::journal::Entry;
use crate::wallet::{side_line, Owner};
use crate::web::AppState;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;

/// The documented answer of every bet ([`placed`]), one text for the three routes.
pub(super) const PLACED: &str = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`";

/// The documented 400 of every bet.
pub(super) const NOT_A_BET: &str = "Not a bet (`malformed`)";

/// The refusal of a negative amount, main or side.
pub(super) fn negative() -> PlayError {
    PlayError::unprocessable("invalid_bet", "amounts cannot be negative")
}

/// A main bet and its side bets, checked: no amount negative, the side bets as
/// [`side_bets`] takes them.
pub(super) fn amounts(
    app: &AppState,
    main: i64,
    side: &BTreeMap<String, i64>,
) -> Result<Vec<(String, i64)>, PlayError> {
    if main < 0 {
        return Err(negative());
    }
    side_bets(app, side)
}

/// Side bets by the variant's names (or aliases), checked: canonical names, amounts > 0.
pub(super) fn side_bets(
    app: &AppState,
    side: &BTreeMap<String, i64>,
) -> Result<Vec<(String, i64)>, PlayError> {
    let mut out: Vec<(String, i64)> = Vec::new();
    for (name, amount) in side {
        let Some(i) = app.variant.side_bet_index(name) else {
            let names: Vec<&str> = app
                .variant
                .side_bets
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            return Err(PlayError::unprocessable(
                "unknown_side_bet",
                format!(
                    "this game has no side bet {name:?} (it has: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        if *amount < 0 {
            return Err(negative());
        }
        let canonical = &app.variant.side_bets[i].name;
        if out.iter().any(|(n, _)| n == canonical) {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                format!("side bet {canonical:?} is named twice"),
            ));
        }
        if *amount > 0 {
            out.push((canonical.clone(), *amount));
        }
    }
    Ok(out)
}

/// The lines (seat, base line, amount) a bet of `owner` at `seat` debits.
pub(super) fn lines_of(
    seat: SeatId,
    owner: &Owner,
    main: i64,
    side: &[(String, i64)],
) -> Vec<(SeatId, String, i64)> {
    let mut out = Vec::new();
    if main > 0 {
        out.push((seat, owner.line("main"), main));
    }
    for (name, amount) in side {
        out.push((seat, owner.line(&side_line(name)), *amount));
    }
    out
}

/// The refusal of a bet outside the betting window, with where the window closed.
pub(super) fn betting_closed(play: &Play) -> PlayError {
    PlayError::closed(
        "betting_closed",
        "the betting window is closed",
        play.remote.betting_closed(),
    )
}

/// The open betting window (refused as `betting_closed` otherwise).
pub(super) fn open_window(app: &AppState, play: &Play) -> Result<Window, PlayError> {
    match play.remote.betting() {
        Some(w) if app.table.snapshot().betting.open && Instant::now() < w.deadline => Ok(w),
        _ => Err(betting_closed(play)),
    }
}

/// The answer to a bet: the round, the debits' ids, the balance.
pub(super) async fn placed(play: &Play, me: &str, round: Option<u64>, debited: &[Entry]) -> Answer {
    Ok(Json(placed_json(play, me, round, debited).await?).into_response())
}

/// `placed`'s answer as JSON, for answers that add to it.
pub(super) async fn placed_json(
    play: &Play,
    me: &str,
    round: Option<u64>,
    debited: &[Entry],
) -> Result<serde_json::Value, PlayError> {
    let balance = play.wallet.balance(me).await?;
    let txs: Vec<String> = debited.iter().map(|e| e.tx.to_string()).collect();
    Ok(json!({
        "ok": true,
        "round": round.filter(|_| !debited.is_empty()),
        "tx": txs.first(),
        "txs": txs,
        "balance": balance,
    }))
}
