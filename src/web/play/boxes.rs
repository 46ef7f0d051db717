//! A common draw's bets (`POST /api/play/boxes`): one or more boxes placed as one set,
//! Let it play (the box's last return bet again) and the specials the balance allows.

use super::bets::{lines_of, negative, open_window, placed, side_bets, NOT_A_BET, PLACED};
use super::stakes::{affordable, replace_stakes, Target};
use super::{common_draw, Answer, PlayError, PlayerPost};
use crate::engine::{PlayerBets, SeatBets, SeatId};
use crate::wallet::{Owner, WalletError};
use crate::web::body::RequestBody;
use crate::web::AppState;
use serde::Deserialize;
use utoipa::ToSchema;

/// One box of a common draw (`POST /api/play/boxes`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxBet {
    /// The box, from 1 (`GET /api/play/state` `game.boxes`).
    #[serde(rename = "box")]
    number: SeatId,
    /// The main bet, minor units (none with `let_it_play`).
    #[serde(default)]
    #[schema(minimum = 0)]
    main: i64,
    /// The game's special bets by name, minor units.
    #[serde(default)]
    side: crate::web::api::SideBets,
    /// "Let it play" (`betting.let_it_play_max`): the main bet is everything the box's main
    /// bet returned last round, which it must have won; that return is debited again.
    #[serde(default)]
    let_it_play: bool,
}

/// The boxes `me` may let play in the window of `round`, with what each would stake: the
/// main bets that won in the round just settled and what they returned (the engine
/// remembers the same, `last_wins`).
pub(super) fn let_it_play_wins(
    snap: &crate::table::Snapshot,
    me: &str,
    round: u64,
) -> Vec<(SeatId, i64)> {
    snap.last_result
        .iter()
        .filter(|r| r.round + 1 == round && !r.cancelled)
        .flat_map(|r| &r.bets)
        .filter(|b| {
            b.player.as_deref() == Some(me)
                && b.kind == crate::engine::BetKind::Main
                && b.returned > b.staked
        })
        .map(|b| (b.seat, b.returned))
        .collect()
}

/// What "Let it play" stakes on box `number` for `me` in the window of `round`: what the
/// box's main bet returned in the round just settled (the engine's `last_wins`, from the
/// same settlement: credited then, debited again now). Refused `no_let_it_play` where the
/// game has none, `let_it_play_no_win` when the box did not win last round.
fn let_it_play(app: &AppState, me: &str, number: SeatId, round: u64) -> Result<i64, PlayError> {
    let max = app.variant.betting.let_it_play_max;
    if max == 0 {
        return Err(PlayError::conflict(
            "no_let_it_play",
            "this game has no Let it play",
        ));
    }
    let won = let_it_play_wins(&app.table.snapshot(), me, round)
        .into_iter()
        .find(|(b, _)| *b == number)
        .map(|(_, w)| w);
    match won {
        None => Err(PlayError::conflict(
            "let_it_play_no_win",
            format!("box {number} did not win last round: Let it play needs a win"),
        )),
        Some(w) if w > max => Err(PlayError::conflict(
            "let_it_play_over_limit",
            format!("Let it play would bet {w} on box {number}, over its limit {max}"),
        )),
        Some(w) => Ok(w),
    }
}

/// A common draw's bets (`POST /api/play/boxes`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxesBody {
    /// The boxes bet on (each at most once); `[]` withdraws them all.
    boxes: Vec<BoxBet>,
}

impl RequestBody for BoxesBody {
    const EXAMPLE: &'static str =
        r#"{"boxes": [{"box": N, "main": AMOUNT, "side": {"NAME": AMOUNT}}]}"#;
}

/// `POST /api/play/boxes`: a common draw's bets on one or more boxes, as `bet`: every
/// box's stakes are debited, then the whole set placed; it replaces the last.
#[utoipa::path(post, path = "/api/play/boxes", tag = "players", request_body = BoxesBody,
    responses(
        (status = 200, description = PLACED, body = Object),
        (status = 400, description = NOT_A_BET, body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `not_common_draw`, `insufficient_funds`, `no_let_it_play`, `let_it_play_no_win` (the box did not win last round), `let_it_play_over_limit`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`box_out_of_range`, `invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn boxes(PlayerPost(app, play, me, b): PlayerPost<BoxesBody>) -> Answer {
    if !common_draw(&app) {
        return Err(PlayError::conflict(
            "not_common_draw",
            "this game is played seat by seat: join a seat and bet on it",
        ));
    }
    let count = app.variant.deal.seats;
    let owner = Owner::Box(me.clone());
    let mut bets: Vec<SeatBets> = Vec::new();
    for x in &b.boxes {
        if x.number == 0 || x.number > count {
            return Err(PlayError::unprocessable(
                "box_out_of_range",
                format!("box {}: this game has boxes 1 to {count}", x.number),
            ));
        }
        if bets.iter().any(|y| y.seat == x.number) {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                format!("box {} is named twice", x.number),
            ));
        }
        if x.main < 0 {
            return Err(negative());
        }
        if x.let_it_play && x.main != 0 {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                format!(
                    "box {}: Let it play bets the box's last return, not a main bet",
                    x.number
                ),
            ));
        }
        let side = side_bets(&app, &x.side)?;
        bets.push(SeatBets {
            seat: x.number,
            main: x.main,
            side,
            let_it_play: x.let_it_play,
            ..SeatBets::default()
        });
    }
    bets.sort_by_key(|x| x.seat);
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    // The engine stakes the box's last return; the wallet debits exactly that.
    for x in bets.iter_mut().filter(|x| x.let_it_play) {
        x.main = let_it_play(&app, &me, x.seat, window.round)?;
    }
    play.remote.join_unseated(&me);
    let mut before = Vec::new();
    for n in 1..=count {
        before.extend(play.journal.open_stakes_of(window.round, n, &owner).await?);
    }
    // The sheet: specials "only when the player has enough credits" (`[funds]
    // short_specials`): after the main bets, box by box, a special that does not fit in
    // what is left is dropped (or the bet refused).
    let has_specials = bets.iter().any(|x| !x.side.is_empty());
    if has_specials {
        let refunded: i64 = before.iter().map(|e| e.amount).sum();
        let mains: i64 = bets.iter().map(|x| x.main).sum();
        let mut left = play.wallet.balance(&me).await? + refunded - mains;
        for x in &mut bets {
            let (kept, _dropped) =
                crate::play::funds::specials(&app.variant.funds, left.max(0), &x.side).map_err(
                    |crate::play::rules::FundsRefusal::InsufficientFunds { needed, available }| {
                        PlayError::from(WalletError::InsufficientFunds {
                            balance: available,
                            amount: needed,
                        })
                    },
                )?;
            left -= kept.iter().map(|(_, a)| *a).sum::<i64>();
            x.side = kept;
        }
    }
    let lines: Vec<_> = bets
        .iter()
        .flat_map(|x| lines_of(x.seat, &owner, x.main, &x.side))
        .collect();
    let target = Target::Boxes(PlayerBets {
        player: me.clone(),
        boxes: bets,
    });
    affordable(&play, &me, &before, &lines).await?;
    let debited = replace_stakes(&app, &play, &me, window.round, before, lines, &target).await?;
    play.remote.set_player_bet(&me, !debited.is_empty());
    placed(&play, &me, Some(window.round), &debited).await
}
