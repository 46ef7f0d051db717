//! The players' bets (`POST /api/play/bet`, `/behind`, `/boxes`): each line debited, then
//! the bet placed, every debit rolled back if the table refuses it (`replace_stakes`).

use super::{common_draw, parse, player, seat_of, PlayError};
use crate::engine::variant::SecondSeat;
use crate::engine::{BehindBet, PlayerBets, SeatBets, SeatId};
use crate::play::funds::seat_plays;
use crate::play::rules::FundsRefusal;
use crate::play::{Play, SeatMark};
use crate::table::remote::Window;
use crate::table::BetError;
use crate::wallet::journal::Entry;
use crate::wallet::{side_line, Owner, WalletError};
use crate::web::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;
use utoipa::ToSchema;

/// Side bets by the variant's names (or aliases), checked: canonical names, amounts > 0.
fn side_bets(
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
            return Err(PlayError::unprocessable(
                "invalid_bet",
                "amounts cannot be negative",
            ));
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
fn lines_of(
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

/// What a bet puts on the table.
enum Target {
    /// A player's seats (one, or two placed together: the engine holds them equal).
    Seats(Vec<SeatBets>),
    Behind(SeatId, BehindBet),
    Boxes(PlayerBets),
}

impl Target {
    /// Whether the table would take it in place of the standing bet, changing nothing.
    async fn check(&self, app: &AppState) -> Result<Option<u64>, BetError> {
        use crate::table::WindowChange;
        app.table
            .check_window(match self {
                Target::Seats(b) => WindowChange::Seats(b.clone()),
                Target::Behind(seat, b) => WindowChange::Behind(*seat, b.clone()),
                Target::Boxes(p) => WindowChange::Players(p.clone()),
            })
            .await
    }

    /// Places it (`on`) or takes it off.
    async fn put(&self, app: &AppState, on: bool) -> Result<Option<u64>, BetError> {
        match self {
            Target::Seats(b) if on => app.table.place_bets(b.clone()).await,
            Target::Seats(b) => {
                let off = b
                    .iter()
                    .map(|b| SeatBets {
                        seat: b.seat,
                        player: b.player.clone(),
                        ..SeatBets::default()
                    })
                    .collect();
                app.table.place_bets(off).await
            }
            Target::Behind(seat, b) if on => app.table.place_behind(*seat, b.clone()).await,
            Target::Behind(seat, b) => {
                let off = BehindBet {
                    player: b.player.clone(),
                    ..BehindBet::default()
                };
                app.table.place_behind(*seat, off).await
            }
            Target::Boxes(p) if on => app.table.place_player_bets(p.clone()).await,
            Target::Boxes(p) => {
                let off = PlayerBets {
                    player: p.player.clone(),
                    boxes: Vec::new(),
                };
                app.table.place_player_bets(off).await
            }
        }
    }
}

fn betting_closed(play: &Play) -> PlayError {
    PlayError::closed(
        "betting_closed",
        "the betting window is closed",
        play.remote.betting_closed(),
    )
}

fn refusal(app: &AppState, play: &Play, e: BetError) -> PlayError {
    match e {
        BetError::BettingClosed | BetError::NotTakingBets(_) => betting_closed(play),
        BetError::InvalidBet(m) => PlayError::unprocessable(
            "invalid_bet",
            app.table.snapshot().currency.write_amounts(&m),
        ),
        other => PlayError::conflict(other.code(), other.to_string()),
    }
}

/// The open betting window (refused as `betting_closed` otherwise).
pub(super) fn open_window(app: &AppState, play: &Play) -> Result<Window, PlayError> {
    match play.remote.betting() {
        Some(w) if app.table.snapshot().betting.open && Instant::now() < w.deadline => Ok(w),
        _ => Err(betting_closed(play)),
    }
}

/// Refuses (`insufficient_funds`) a replacement of `before` by `lines` that the balance,
/// with `before`'s stakes back, cannot cover, before anything is touched: a refused change
/// leaves the standing bet and its stakes as they were.
async fn affordable(
    play: &Play,
    me: &str,
    before: &[Entry],
    lines: &[(SeatId, String, i64)],
) -> Result<(), PlayError> {
    let amount: i64 = lines.iter().map(|(_, _, a)| *a).sum();
    if lines.is_empty() || before.is_empty() {
        // Nothing stands to be lost: a first bet refused at its debit leaves nothing.
        return Ok(());
    }
    let balance = play.wallet.balance(me).await? + before.iter().map(|e| e.amount).sum::<i64>();
    if balance < amount {
        return Err(WalletError::InsufficientFunds { balance, amount }.into());
    }
    Ok(())
}

/// Replaces `before` (the stakes of the bet being replaced) by `lines`: the old bet
/// leaves the table before its stakes go back (were the window to close in between, the
/// round would hold a stake the wallet no longer has); each new line is debited, then
/// the bet placed; a refusal anywhere rolls back what was debited and leaves nothing of
/// the bet on the table. No lines: a withdrawal. The caller has checked the change is
/// `affordable`, so a refusal here is the wallet's own (a balance spent elsewhere in
/// between, an outage): the player's stakes are all back and the seat is empty.
async fn replace_stakes(
    app: &AppState,
    play: &Play,
    me: &str,
    round: u64,
    before: Vec<Entry>,
    lines: Vec<(SeatId, String, i64)>,
    target: &Target,
) -> Result<Vec<Entry>, PlayError> {
    // A bet the table would refuse (limits, betting unit, the game's rules) is refused
    // before the standing bet leaves the table: a refused change changes nothing.
    if !lines.is_empty() && !before.is_empty() {
        target.check(app).await.map_err(|e| refusal(app, play, e))?;
    }
    if lines.is_empty() || !before.is_empty() {
        target
            .put(app, false)
            .await
            .map_err(|e| refusal(app, play, e))?;
        for e in &before {
            play.journal.roll_back(play.wallet.as_ref(), e).await?;
        }
    }
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let mut debited: Vec<Entry> = Vec::new();
    for (seat, line, amount) in lines {
        let entry = Entry {
            tx: play.journal.next_debit(round, seat, &line).await?,
            player: me.to_string(),
            amount,
        };
        if let Err(e) = play.journal.debit(play.wallet.as_ref(), &entry).await {
            // Nothing of this bet is on the table any more.
            let _ = target.put(app, false).await;
            for d in &debited {
                play.journal.roll_back(play.wallet.as_ref(), d).await?;
            }
            return Err(e.into());
        }
        debited.push(entry);
    }
    match target.put(app, true).await {
        Ok(Some(r)) if r == round => Ok(debited),
        other => {
            for d in &debited {
                play.journal.roll_back(play.wallet.as_ref(), d).await?;
            }
            let _ = target.put(app, false).await;
            Err(match other {
                Err(e) => refusal(app, play, e),
                _ => betting_closed(play),
            })
        }
    }
}

/// The answer to a bet: the round, the debits' ids, the balance.
async fn placed(
    play: &Play,
    me: &str,
    round: Option<u64>,
    debited: &[Entry],
) -> Result<Response, PlayError> {
    Ok(Json(placed_json(play, me, round, debited).await?).into_response())
}

/// `placed`'s answer as JSON, for answers that add to it.
async fn placed_json(
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
    #[schema(value_type = BTreeMap<String, crate::web::api::Amount>)]
    side: BTreeMap<String, i64>,
}

/// `POST /api/play/bet`: the stakes are debited, then placed; if the table refuses them,
/// they are rolled back. A new bet replaces the last (whose debits are rolled back); 0
/// withdraws. Bets behind the seat stay on it.
#[utoipa::path(post, path = "/api/play/bet", tag = "players", request_body = BetBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `no_seat`, `insufficient_funds`, `common_draw`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn bet(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BetBody = parse(
        &headers,
        &body,
        r#"{"main": AMOUNT, "side": {"NAME": AMOUNT}}"#,
    )?;
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
    if b.main < 0 {
        return Err(PlayError::unprocessable(
            "invalid_bet",
            "amounts cannot be negative",
        ));
    }
    let side = side_bets(&app, &b.side)?;
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    // The player's own bet, in the session they placed it with.
    let mark = SeatMark {
        round: window.round,
        rebet: None,
        session: crate::play::sessions::key(super::bearer(&headers)),
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
/// (`POST /api/play/bet`) and the automatic re-bet's (`super::rebet`). Bets behind the
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
    #[schema(value_type = BTreeMap<String, crate::web::api::Amount>)]
    side: BTreeMap<String, i64>,
    /// When the seated player doubles, double too (its stake is debited then).
    #[serde(default)]
    follow_double: bool,
    /// When the seated player splits, bet on the second hand too (debited then).
    #[serde(default)]
    follow_split: bool,
}

/// `POST /api/play/behind`: as `bet`, behind a seated player.
#[utoipa::path(post, path = "/api/play/behind", tag = "players", request_body = BehindBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `seat_empty` (no bet to play behind), `own_seat`, `no_play_behind`, `follow_unavailable`, `insufficient_funds`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn behind(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BehindBody = parse(
        &headers,
        &body,
        r#"{"seat": N, "main": AMOUNT, "side": {"NAME": AMOUNT}, "follow_double": BOOL, "follow_split": BOOL}"#,
    )?;
    if common_draw(&app) || !app.variant.betting.play_behind {
        return Err(PlayError::conflict(
            "no_play_behind",
            "this game has no bets behind seats",
        ));
    }
    if b.main < 0 {
        return Err(PlayError::unprocessable(
            "invalid_bet",
            "amounts cannot be negative",
        ));
    }
    let side = side_bets(&app, &b.side)?;
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
    #[schema(value_type = BTreeMap<String, crate::web::api::Amount>)]
    side: BTreeMap<String, i64>,
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

/// `POST /api/play/boxes`: a common draw's bets on one or more boxes, as `bet`: every
/// box's stakes are debited, then the whole set placed; it replaces the last.
#[utoipa::path(post, path = "/api/play/boxes", tag = "players", request_body = BoxesBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = crate::web::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `not_common_draw`, `insufficient_funds`, `no_let_it_play`, `let_it_play_no_win` (the box did not win last round), `let_it_play_over_limit`", body = crate::web::api::ErrorBody),
        (status = 422, description = "`box_out_of_range`, `invalid_bet`, `unknown_side_bet`", body = crate::web::api::ErrorBody)))]
pub async fn boxes(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BoxesBody = parse(
        &headers,
        &body,
        r#"{"boxes": [{"box": N, "main": AMOUNT, "side": {"NAME": AMOUNT}}]}"#,
    )?;
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
            return Err(PlayError::unprocessable(
                "invalid_bet",
                "amounts cannot be negative",
            ));
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
