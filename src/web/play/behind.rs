//! A bet behind a seated player (`POST /api/play/behind`), with its follows of the seated
//! player's doubles and splits.

use super::bets::{amounts, lines_of, open_window, placed, NOT_A_BET, PLACED};
use super::stakes::{affordable, replace_stakes, Target};
use super::{common_draw, Answer, PlayError, PlayerPost};
use crate::engine::{BehindBet, SeatId};
use crate::wallet::{Owner, WalletError};
use crate::web::body::RequestBody;
use serde::Deserialize;
use utoipa::ToSchema;

/// A bet behind a seated player (`POST /api/play/behind`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BehindBody {
    /// The seat played behind (it must have a bet in the window, and not be the player's).
    seat: SeatId,
    /// The main bet, minor units (0 withdraws the bet behind).
    #[schema(minimum = 0)]
    main: i64,
    /// Side bets on the seat's cards by the game's names (Deluxe: `pair`), minor units.
    #[serde(default)]
    side: crate::web::api::SideBets,
    /// When the seated player doubles, double too (its stake is debited then).
    #[serde(default)]
    follow_double: bool,
    /// When the seated player splits, bet on the second hand too (debited then).
    #[serde(default)]
    follow_split: bool,
}

impl RequestBody for BehindBody {
    const EXAMPLE: &'static str = r#"{"seat": N, "main": AMOUNT, "side": {"NAME": AMOUNT}, "follow_double": BOOL, "follow_split": BOOL}"#;
}

/// `POST /api/play/behind`: as `bet`, behind a seated player.
#[utoipa::path(post, path = "/api/play/behind", tag = "players", request_body = BehindBody,
    responses(
        (status = 200, description = PLACED, body = Object),
        (status = 400, description = NOT_A_BET, body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `seat_empty` (no bet to play behind), `own_seat`, `no_play_behind`, `follow_unavailable`, `insufficient_funds`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn behind(PlayerPost(app, play, me, b): PlayerPost<BehindBody>) -> Answer {
    if common_draw(&app) || !app.variant.betting.play_behind {
        return Err(PlayError::conflict(
            "no_play_behind",
            "this game has no bets behind seats",
        ));
    }
    let side = amounts(&app, b.main, &b.side)?;
    if play.remote.seat_of(&me) == Some(b.seat) {
        return Err(PlayError::conflict(
            "own_seat",
            "a seated player cannot play behind their own seat",
        ));
    }
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    let withdraw = b.main == 0 && side.is_empty();
    let seated = app
        .table
        .snapshot()
        .betting
        .bets
        .iter()
        .any(|x| x.seat == b.seat && x.main > 0);
    if !seated && !withdraw {
        return Err(PlayError::conflict(
            "seat_empty",
            format!("seat {} has no bet in this window to play behind", b.seat),
        ));
    }
    // A follow is debited when the seated player doubles or splits, which the service
    // sees only for remote players' seats.
    if (b.follow_double || b.follow_split) && !play.remote.is_remote(b.seat) {
        return Err(PlayError::conflict(
            "follow_unavailable",
            format!(
                "seat {} is not a remote player's: a bet behind it cannot follow doubles or splits",
                b.seat
            ),
        ));
    }
    if play.remote.seat_of(&me).is_none() {
        play.remote.join_unseated(&me);
    }
    let owner = Owner::Behind(me.clone());
    let before = play
        .journal
        .open_stakes_of(window.round, b.seat, &owner)
        .await?;
    let mut bet = BehindBet {
        player: me.clone(),
        main: b.main,
        side: side.clone(),
        follow_double: b.follow_double,
        follow_split: b.follow_split,
        ..BehindBet::default()
    };
    // The sheet's balance rule for follows (`[funds] short_follow`): a follow the balance
    // left after this bet cannot cover falls back (or refuses the bet), decided now, when
    // the bet is placed. The follow itself is debited when the seated player doubles or
    // splits.
    if !withdraw && (bet.follow_double || bet.follow_split) {
        let refunded: i64 = before.iter().map(|e| e.amount).sum();
        let stake = b.main + side.iter().map(|(_, a)| *a).sum::<i64>();
        let available = play.wallet.balance(&me).await? + refunded - stake;
        match crate::play::funds::follows(&app.variant, available.max(0), &bet) {
            Ok((out, _, _)) => bet = out,
            Err(crate::play::rules::FundsRefusal::InsufficientFunds { needed, available }) => {
                return Err(WalletError::InsufficientFunds {
                    balance: available,
                    amount: needed,
                }
                .into())
            }
        }
    }
    let target = Target::Behind(b.seat, bet);
    let lines = if withdraw {
        Vec::new()
    } else {
        lines_of(b.seat, &owner, b.main, &side)
    };
    affordable(&play, &me, &before, &lines).await?;
    let debited = replace_stakes(&app, &play, &me, window.round, before, lines, &target).await?;
    if play.remote.seat_of(&me).is_none() {
        play.remote.set_player_bet(&me, !debited.is_empty());
    }
    placed(&play, &me, Some(window.round), &debited).await
}
