//! The players' decisions (`POST /api/play/decision`): the extra stake of a double, split
//! or insurance debited first (and a followed double or split from the players behind the
//! seat), then the decision sent to the engine; rolled back if it refuses.

use super::{common_draw, turns, Answer, PlayError, PlayerPost};
use crate::engine::{Action, BehindBet, Input, SeatId};
use crate::play::Play;
use crate::store::Source;
use crate::table::remote::Closed;
use crate::wallet::journal::Entry;
use crate::wallet::{Owner, WalletError};
use crate::web::body::RequestBody;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::time::Instant;
use utoipa::ToSchema;

/// A decision (`POST /api/play/decision`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    /// `hit`, `stand`, `double`, `split`, `surrender`, `insurance`, `no_insurance`, `even_money`.
    #[schema(schema_with = crate::web::openapi::action_schema)]
    action: Action,
    /// The seat the decision is for: one of the player's own seats (a player may hold two,
    /// `betting.seats_per_player`; the turn says its seat), or a seat played behind (its
    /// insurance question); absent: the player's own seat the table asks about.
    #[serde(default)]
    seat: Option<SeatId>,
    /// A common draw's box (absent: the first the table asks about).
    #[serde(default, rename = "box")]
    number: Option<SeatId>,
}

impl RequestBody for DecisionBody {
    const EXAMPLE: &'static str = r#"{"action": "hit|stand|double|...", "seat": N, "box": N}"#;
}

/// Debits `entry`; answers whether the wallet was short.
async fn take(play: &Play, entry: &Entry) -> Result<bool, PlayError> {
    match play.journal.debit(play.wallet.as_ref(), entry).await {
        Ok(_) => Ok(false),
        Err(WalletError::InsufficientFunds { .. }) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

async fn roll_back_all(play: &Play, entries: &[Entry]) -> Result<(), PlayError> {
    for e in entries {
        play.journal.roll_back(play.wallet.as_ref(), e).await?;
    }
    Ok(())
}

/// `POST /api/play/decision`.
#[utoipa::path(post, path = "/api/play/decision", tag = "players", request_body = DecisionBody,
    responses(
        (status = 200, description = "`{\"ok\", \"seq\", \"action\", \"balance\"}` (a hit at a seat: `{\"ok\", \"action\": \"hit\"}`, the card follows)", body = Object),
        (status = 400, description = "Not a decision (`malformed`)", body = crate::web::api::ErrorBody),
        (status = 409, description = "`not_your_turn`, `decision_closed` (with `closed`), `action_not_allowed`, `insufficient_funds`, `no_seat`", body = crate::web::api::ErrorBody)))]
pub async fn decision(PlayerPost(app, play, me, d): PlayerPost<DecisionBody>) -> Answer {
    let _money = play.money.lock().await;
    let snap = app.table.snapshot();
    let round = snap.round.number;
    let all = turns(&app, &play, &me, &snap);
    let common = common_draw(&app);
    let pick = all.iter().find(|t| {
        if common {
            d.number.is_none_or(|n| n == t.seat)
        } else if let Some(s) = d.seat {
            // A seated player cannot play behind their own seat: the seat names one turn.
            t.seat == s
        } else {
            !t.behind
        }
    });
    let Some(turn) = pick else {
        if !common && d.seat.is_none() && play.remote.seat_of(&me).is_none() {
            return Err(PlayError::conflict("no_seat", "join a seat first"));
        }
        return Err(match play.remote.decision_closed() {
            Some(c) if c.round == round => {
                PlayError::closed("decision_closed", "the decision timer ran out", Some(c))
            }
            _ => PlayError::conflict("not_your_turn", "the table is not waiting on your hand"),
        });
    };
    if let Some(w) = turn.window {
        if Instant::now() >= w.deadline {
            let closed = Closed {
                round: w.round,
                seq: w.at_seq,
                at_ms: w.deadline_ms,
                clock_ms: w.clock_ms,
            };
            return Err(PlayError::closed(
                "decision_closed",
                "the decision timer ran out",
                Some(closed),
            ));
        }
    }
    if !turn.allowed.contains(&d.action) {
        return Err(PlayError::conflict(
            "action_not_allowed",
            format!("{:?} is not allowed now ({})", d.action, turn.kind),
        ));
    }
    let seat = turn.seat;
    let owner = if common {
        Owner::Box(me.clone())
    } else if turn.behind {
        Owner::Behind(me.clone())
    } else {
        Owner::Seat
    };
    let main: i64 = if turn.behind {
        snap.round
            .bets
            .iter()
            .find(|b| b.seat == seat)
            .and_then(|b| b.behind.iter().find(|bb| bb.player == me))
            .map_or(0, |bb| bb.main)
    } else {
        play.journal
            .open_stakes(round, seat, &owner.line("main"))
            .await?
            .iter()
            .map(|e| e.amount)
            .sum()
    };
    let cost = crate::play::rules::decision_cost(&app.variant, d.action, main);
    let mut action = d.action;
    let mut taken: Vec<Entry> = Vec::new();
    if cost > 0 {
        let line = match action {
            Action::Double => "double",
            Action::Split => "split",
            _ => "insurance",
        };
        let e = Entry {
            tx: play
                .journal
                .next_debit(round, seat, &owner.line(line))
                .await?,
            player: me.clone(),
            amount: cost,
        };
        if take(&play, &e).await? {
            // The sheet's balance rule (`[funds]`; Deluxe: a double the balance cannot
            // cover is a hit, a split a hit on 11 or less, else a stand; a common draw's
            // double, split and insurance are refused without the credits).
            let total = snap
                .round
                .hands
                .iter()
                .find(|h| h.seat == seat && h.hand == turn.hand)
                .map_or_else(crate::engine::Total::default, |h| crate::engine::Total {
                    best: h.total,
                    soft: h.soft,
                });
            let instead = if common || turn.behind {
                None
            } else {
                crate::play::rules::short_funds(&app.variant.funds, action, total)
            };
            match instead {
                Some(a) => action = a,
                None => {
                    let balance = play.wallet.balance(&me).await?;
                    return Err(WalletError::InsufficientFunds {
                        balance,
                        amount: cost,
                    }
                    .into());
                }
            }
        } else {
            taken.push(e);
        }
    }
    // Players behind a seat who follow its double or split stake again when it does; a
    // follower who cannot pay, or whose game session ended, is `short`: a double's card is
    // a hit for them, a split's second hand is not theirs.
    let mut short = Vec::new();
    if !common && !turn.behind && matches!(action, Action::Double | Action::Split) {
        let followers: Vec<BehindBet> = snap
            .round
            .bets
            .iter()
            .find(|b| b.seat == seat)
            .map(|b| b.behind.clone())
            .unwrap_or_default();
        for bb in followers {
            // A split's stake follows onto the second hand (1); a double onto this one.
            let follows = match action {
                Action::Double => bb.follows(turn.hand, true),
                _ => bb.follows(1, false),
            };
            if !follows || bb.main == 0 {
                continue;
            }
            // A follower whose game session ended is not staked again (issue #58 item 4):
            // the sheet's default for a bet behind that does not follow — the double's
            // card a hit for them, the split's first hand only.
            if !play.in_session(&bb.player).await {
                short.push(bb.player.clone());
                continue;
            }
            let line = if action == Action::Double {
                "double"
            } else {
                "split"
            };
            let e = Entry {
                tx: play
                    .journal
                    .next_debit(round, seat, &Owner::Behind(bb.player.clone()).line(line))
                    .await?,
                player: bb.player.clone(),
                amount: bb.main,
            };
            match take(&play, &e).await {
                Ok(false) => taken.push(e),
                // Deluxe: "with insufficient coin balance, the third card will be treated
                // as a hit for the play behind player, and the original coin value remains
                // unchanged"; a follow-split short plays the first hand only (the sheet's
                // fallback for a split the balance cannot cover) — at the moment of the
                // double or split, whatever the balance was when the bet was placed; the
                // seated player's decision goes ahead (issue #38 items 2 and 5). The
                // replay's desk applies the same rule (`play::desk::FundsDesk::follow`).
                Ok(true) => short.push(bb.player.clone()),
                Err(err) => {
                    roll_back_all(&play, &taken).await?;
                    return Err(err);
                }
            }
        }
    }
    if action == Action::Hit && !common {
        play.remote.request_hit(seat, snap.seq);
        return Ok(Json(json!({"ok": true, "action": "hit", "asked": d.action})).into_response());
    }
    let input = if common || turn.behind {
        Input::PlayerDecision {
            player: me.clone(),
            seat,
            action,
        }
    } else if short.is_empty() {
        Input::Decision { seat, action }
    } else if action == Action::Double {
        Input::DoubleShort { seat, short }
    } else {
        Input::SplitShort { seat, short }
    };
    match app.table.submit(input, Source::Api).await {
        Ok(seq) => {
            let balance = play.wallet.balance(&me).await?;
            Ok(Json(json!({
                "ok": true,
                "seq": seq,
                "action": action,
                "seat": seat,
                "balance": balance,
            }))
            .into_response())
        }
        Err(e) => {
            roll_back_all(&play, &taken).await?;
            Err(e.into())
        }
    }
}
