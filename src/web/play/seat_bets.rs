//! A bet on the player's own seat (`POST /api/play/bet`), on both where the player holds
//! two (`funds.second_seat`), and the one seat-bet path the automatic re-bet takes too.

use super::bets::{amounts, lines_of, open_window, placed, placed_json, NOT_A_BET, PLACED};
use super::stakes::{affordable, replace_stakes, Target};
use super::{bearer, common_draw, seat_of, Answer, PlayError, PlayerPost};
use crate::engine::variant::SecondSeat;
use crate::engine::{BehindBet, SeatBets, SeatId};
use crate::play::funds::seat_plays;
use crate::play::rules::FundsRefusal;
use crate::play::{Play, SeatMark};
use crate::table::remote::Window;
use crate::wallet::journal::Entry;
use crate::wallet::{Owner, WalletError};
use crate::web::body::RequestBody;
use crate::web::AppState;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A bet on the player's seat (`POST /api/play/bet`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBody {
    /// Which of the player's seats (absent: their lowest). A player on two seats
    /// (`betting.seats_per_player`) bets on both: with `funds.second_seat =
    /// "mirror_or_split"` the main bet is mirrored on the other seat, or the extra split
    /// evenly when the balance is short; 0 withdraws both seats' bets.
    #[serde(default)]
    seat: Option<SeatId>,
    /// The main bet, minor units (0 withdraws the seat's bets).
    #[schema(minimum = 0)]
    main: i64,
    /// Side bets by the game's names (`GET /api/play/state` `game.side_bets`), minor units.
    #[serde(default)]
    side: crate::web::api::SideBets,
}

impl RequestBody for BetBody {
    const EXAMPLE: &'static str = r#"{"main": AMOUNT, "side": {"NAME": AMOUNT}}"#;
}

/// `POST /api/play/bet`: the stakes are debited, then placed; if the table refuses them,
/// they are rolled back. A new bet replaces the last (whose debits are rolled back); 0
/// withdraws. Bets behind the seat stay on it.
#[utoipa::path(post, path = "/api/play/bet", tag = "players", request_body = BetBody,
    responses(
        (status = 200, description = PLACED, body = Object),
        (status = 400, description = NOT_A_BET, body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `no_seat`, `insufficient_funds`, `common_draw`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn bet(headers: HeaderMap, PlayerPost(app, play, me, b): PlayerPost<BetBody>) -> Answer {
    if common_draw(&app) {
        return Err(PlayError::conflict(
            "common_draw",
            "this game is a common draw: bet on boxes (POST /api/play/boxes)",
        ));
    }
    let mine = play.remote.seats_of(&me);
    let seat = match b.seat {
        None => seat_of(&play, &me)?,
        Some(s) if mine.contains(&s) => s,
        Some(s) => {
            return Err(PlayError::conflict(
                "not_your_seat",
                format!("you do not hold seat {s}"),
            ))
        }
    };
    let side = amounts(&app, b.main, &b.side)?;
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    // The player's own bet, in the session they placed it with.
    let mark = SeatMark {
        round: window.round,
        rebet: None,
        session: crate::play::sessions::key(bearer(&headers)),
    };
    let Some(&other) = mine.iter().find(|s| **s != seat) else {
        let debited = on_seat(&app, &play, &me, seat, &window, b.main, side, true).await?;
        play.mark_seat_bet(seat, mark);
        return placed(&play, &me, Some(window.round), &debited).await;
    };
    let (plays, how) = second_seat(&app, &play, &me, &window, (seat, other), b.main, &side).await?;
    let by_seat: BTreeMap<String, i64> =
        plays.iter().map(|(s, m, _)| (s.to_string(), *m)).collect();
    let seats: Vec<SeatId> = plays.iter().map(|(s, _, _)| *s).collect();
    let debited = on_seats(&app, &play, &me, &window, plays, true).await?;
    for s in seats {
        play.mark_seat_bet(s, mark);
    }
    let mut answer = placed_json(&play, &me, Some(window.round), &debited).await?;
    // How the second seat's rule applied, and what each seat carries now.
    answer["second_seat"] = json!(how);
    answer["seat_plays"] = json!(by_seat);
    Ok(Json(answer).into_response())
}

/// What a bet of `main` (and `side`) on `seat` puts on a player's two seats (`seat` and
/// `other`): Deluxe's "additional seat plays on one occupied seat ... mirrored to the
/// other occupied seat if their coin balance allows ... evenly split" (`play::funds::
/// seat_plays` with the balance and the two seats' stakes in the window, which the bet
/// replaces). A lower bet lowers both; 0 withdraws both. The other seat keeps its side
/// bets. Answers each seat's (seat, main, side) and how the rule applied.
#[allow(clippy::too_many_arguments)]
async fn second_seat(
    app: &AppState,
    play: &Play,
    me: &str,
    window: &Window,
    (seat, other): (SeatId, SeatId),
    main: i64,
    side: &[(String, i64)],
) -> Result<(SeatPlays, Option<&'static str>), PlayError> {
    let snap = app.table.snapshot();
    let now = snap.betting.bets.iter().find(|b| b.seat == other);
    let other_main = now.map_or(0, |b| b.main);
    let other_side = now.map(|b| b.side.clone()).unwrap_or_default();
    if main == 0 {
        return Ok((vec![(seat, 0, side.to_vec()), (other, 0, Vec::new())], None));
    }
    let mirror = app.variant.funds.second_seat == SecondSeat::MirrorOrSplit;
    let (play_each, how) = if !mirror || main <= other_main {
        (main, (main != other_main).then_some("mirrored"))
    } else {
        let mut refunded = 0;
        for s in [seat, other] {
            refunded += play
                .journal
                .open_stakes_of(window.round, s, &Owner::Seat)
                .await?
                .iter()
                .map(|e| e.amount)
                .sum::<i64>();
        }
        let sides: i64 = side.iter().chain(&other_side).map(|(_, a)| *a).sum();
        let available = play.wallet.balance(me).await? + refunded - sides;
        match seat_plays(&app.variant.funds, available.max(0), main, other_main) {
            Ok((p, how)) => (p, Some(how)),
            Err(FundsRefusal::InsufficientFunds { needed, available }) => {
                return Err(WalletError::InsufficientFunds {
                    balance: available,
                    amount: needed,
                }
                .into())
            }
        }
    };
    Ok((
        vec![
            (seat, play_each, side.to_vec()),
            (other, play_each, other_side),
        ],
        how,
    ))
}

/// A player's seats' bets: (seat, main, side) each.
type SeatPlays = Vec<(SeatId, i64, Vec<(String, i64)>)>;

/// Puts `main` and `side` on `me`'s `seat` in `window` in place of the seat's bet there
/// (the caller holds `play.money`): the one path of a seat bet, the player's own
/// (`POST /api/play/bet`) and the automatic re-bet's (`web::play::rebet`). Bets behind the
/// seat stay on it. `by_player`: the player placed it (the demo dealer closes the window
/// early once every remote player has; a re-bet is theirs to change until then).
#[allow(clippy::too_many_arguments)]
pub(super) async fn on_seat(
    app: &AppState,
    play: &Play,
    me: &str,
    seat: SeatId,
    window: &Window,
    main: i64,
    side: Vec<(String, i64)>,
    by_player: bool,
) -> Result<Vec<Entry>, PlayError> {
    on_seats(app, play, me, window, vec![(seat, main, side)], by_player).await
}

/// `on_seat` for several of `me`'s seats at once (a player's two seats, which the engine
/// holds to the same main bet): every seat's old stakes are replaced by the new lines, the
/// bets placed together, all refused together.
async fn on_seats(
    app: &AppState,
    play: &Play,
    me: &str,
    window: &Window,
    seats: SeatPlays,
    by_player: bool,
) -> Result<Vec<Entry>, PlayError> {
    let mut before = Vec::new();
    let mut behind: Vec<(SeatId, Vec<BehindBet>)> = Vec::new();
    let mut lines = Vec::new();
    let mut bets = Vec::new();
    let snap = app.table.snapshot();
    for (seat, main, side) in seats {
        before.extend(
            play.journal
                .open_stakes_of(window.round, seat, &Owner::Seat)
                .await?,
        );
        // Players behind the seat: taken off with the seated bet, put back after it.
        let on_it = snap
            .betting
            .bets
            .iter()
            .find(|x| x.seat == seat)
            .map(|x| x.behind.clone())
            .unwrap_or_default();
        behind.push((seat, on_it));
        if main != 0 || !side.is_empty() {
            lines.extend(lines_of(seat, &Owner::Seat, main, &side));
        }
        bets.push(SeatBets {
            seat,
            main,
            side,
            player: Some(me.to_string()),
            ..SeatBets::default()
        });
    }
    affordable(play, me, &before, &lines).await?;
    for b in &bets {
        play.remote.set_bet(b.seat, false);
    }
    let target = Target::Seats(bets.clone());
    let debited = replace_stakes(app, play, me, window.round, before, lines, &target).await?;
    if !debited.is_empty() {
        for (b, (seat, on_it)) in bets.iter().zip(behind) {
            if b.main == 0 && b.side.is_empty() {
                continue;
            }
            play.remote.set_bet(seat, by_player);
            for bb in on_it {
                // A bet behind that no longer fits stays off; its stake comes back when the
                // round opens without it (`play::run_reconciler`).
                let _ = app.table.place_behind(seat, bb).await;
            }
        }
    }
    Ok(debited)
}
