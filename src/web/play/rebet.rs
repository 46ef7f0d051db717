//! The automatic re-bet (`[funds] auto_rebet`, Ultimate: "your bet from the previous round
//! within the same game session is automatically rebet on return to the betting stage").
//!
//! A task beside the reconciler watches the table. When a betting window opens, every
//! remote player seated where they had a seat bet in the round just played is a candidate.
//! Once that round has credited their seat (the balance then holds its returns), and unless
//! they bet first in this window, the same main and side bets are placed for them through
//! the players' bet path (`seat_bets::on_seat`: debited, then placed), clipped to their balance
//! by `play::funds::rebet` (`short_rebet = "maximum_available"`; below the table minimum:
//! no re-bet). A re-bet does not count as the player's bet for closing the window early:
//! they may change or withdraw it until the window closes.
//!
//! "Within the same game session ... on return to the betting stage" (issue #58 item 4):
//! a bet is re-bet only while the launch session it was placed with (`SeatMark::session`,
//! which the re-bet keeps) is live, and only once that session's page has been heard in
//! this window (`play::presence`): a revoked, expired or disabled session, or a closed tab,
//! is never staked again. A bet the service has no mark of (placed before a restart) is not
//! re-bet: the page's Rebet lays it again with a tap.

use super::bets::open_window;
use super::common_draw;
use super::seat_bets::on_seat;
use crate::engine::variant::RebetBelowMinimum;
use crate::engine::{SeatBets, SeatId};
use crate::play::{Play, SeatMark};
use crate::table::remote::Window;
use crate::table::Snapshot;
use crate::wallet::Owner;
use crate::web::AppState;
use std::collections::HashSet;
use std::time::Duration;
use tracing::{info, warn};

/// A seat to re-bet in the open window.
#[derive(Debug, Clone)]
struct Candidate {
    /// The round the bet was played in.
    round: u64,
    /// The player.
    player: String,
    /// The bet (seat, main, side bets).
    bet: SeatBets,
}

/// Whether a candidate is still waiting for its previous round's credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Wait,
    Done,
    /// Below the table minimum under `funds.rebet_below_minimum = "stop"`: this seat's
    /// re-bet of this round is not tried again.
    Stopped,
}

/// The seats of the round just played that a window of `window_round` re-bets: a remote
/// player's own seat bet, still held by them.
fn candidates(play: &Play, snap: &Snapshot, window_round: u64) -> Vec<Candidate> {
    let round = &snap.round;
    if round.number == 0 || !round.settled || round.number >= window_round {
        return Vec::new();
    }
    round
        .bets
        .iter()
        .filter(|b| b.main > 0)
        .filter_map(|b| {
            let player = b.player.clone()?;
            (play.remote.seat_of(&player) == Some(b.seat)).then(|| Candidate {
                round: round.number,
                player: player.clone(),
                bet: SeatBets {
                    seat: b.seat,
                    main: b.main,
                    side: b.side.clone(),
                    player: Some(player),
                    ..SeatBets::default()
                },
            })
        })
        .collect()
}

/// Whether `seat` was bet on (by the player or a re-bet) in the window of `round`.
fn already_bet(play: &Play, seat: SeatId, round: u64) -> bool {
    play.seat_mark(seat).is_some_and(|m| m.round == round)
}

/// Re-bets `c` in `window` (the `windows`-th opened) if it is due.
async fn try_rebet(
    app: &AppState,
    play: &Play,
    (window, windows): (&Window, u64),
    c: &Candidate,
) -> Step {
    let seat = c.bet.seat;
    if play.remote.seat_of(&c.player) != Some(seat) || already_bet(play, seat, window.round) {
        return Step::Done;
    }
    // The game session the bet belongs to; none known: not re-bet.
    let Some(session) = play
        .seat_mark(seat)
        .filter(|m| m.round == c.round)
        .map(|m| m.session)
    else {
        return Step::Done;
    };
    if !play.presence.heard_in(&session, windows) {
        return Step::Wait;
    }
    // "The maximum available" includes what the round just played returns.
    match play
        .journal
        .open_stakes_of(c.round, seat, &Owner::Seat)
        .await
    {
        Ok(open) if open.is_empty() => {}
        _ => return Step::Wait,
    }
    let _money = play.money.lock().await;
    let Ok(open) = open_window(app, play) else {
        return Step::Done;
    };
    let taken = app
        .table
        .snapshot()
        .betting
        .bets
        .iter()
        .any(|b| b.seat == seat && b.main > 0);
    if open.round != window.round || taken || already_bet(play, seat, window.round) {
        return Step::Done;
    }
    // Checked last, under the money lock: the session must still be live as it is staked.
    if !crate::play::sessions::is_live(&play.pool, &session, &play.table).await {
        info!(player = %c.player, seat, "re-bet: the game session ended; nothing staked");
        return Step::Done;
    }
    let balance = match play.wallet.balance(&c.player).await {
        Ok(b) => b,
        Err(e) => {
            warn!(player = %c.player, error = %e, "re-bet: the wallet did not answer; retrying");
            return Step::Wait;
        }
    };
    let mut seats = vec![c.bet.clone()];
    let notes = crate::play::funds::rebet(&app.variant, &c.player, balance, &mut seats);
    let Some(bet) = seats.pop() else {
        info!(player = %c.player, seat, balance, "re-bet: the balance is below the table minimum");
        return match app.variant.funds.rebet_below_minimum {
            RebetBelowMinimum::Retry => Step::Done,
            RebetBelowMinimum::Stop => Step::Stopped,
        };
    };
    match on_seat(app, play, &c.player, seat, &open, bet.main, bet.side, false).await {
        Ok(debited) if !debited.is_empty() => {
            let mark = SeatMark {
                round: open.round,
                rebet: Some(!notes.is_empty()),
                session,
            };
            play.mark_seat_bet(seat, mark);
            info!(player = %c.player, seat, round = open.round, main = bet.main, clipped = !notes.is_empty(), "re-bet the previous round's bet");
        }
        Ok(_) => {}
        Err(e) => warn!(player = %c.player, seat, error = ?e, "re-bet refused"),
    }
    Step::Done
}

/// Re-bets seated remote players' previous bets in each betting window until the table
/// stops (nothing to do unless the variant sets `funds.auto_rebet`, on seat games).
pub async fn run(app: AppState) {
    let Some(play) = app.play.clone() else {
        return;
    };
    if !app.variant.funds.auto_rebet || common_draw(&app) {
        return;
    }
    let mut sub = app.table.watch();
    // A window is known by the row that opened it, not its round: a window that closes
    // without a bet leaves the round's number to the next one, which must re-bet again
    // ("on return to the betting stage": after a deposit, say).
    let mut seen: Option<(u64, u64)> = None;
    let mut pending: Vec<Candidate> = Vec::new();
    // (player, seat, round) whose re-bet stopped below the minimum (in memory: a restart
    // tries it once more, and stops it again if the balance is still short).
    let mut stopped: HashSet<(String, SeatId, u64)> = HashSet::new();
    loop {
        // The credit of the round just played arrives with a later row, or the reconciler's
        // retry: look again at least four times a second while a candidate waits.
        let changed = tokio::time::timeout(Duration::from_millis(250), sub.changed()).await;
        if let Ok(Err(_)) = changed {
            return;
        }
        let Some(window) = play.remote.betting() else {
            pending.clear();
            continue;
        };
        let windows = play.remote.windows_opened();
        if seen != Some((window.round, window.at_seq)) {
            seen = Some((window.round, window.at_seq));
            pending = candidates(&play, &app.table.snapshot(), window.round);
            pending.retain(|c| !stopped.contains(&(c.player.clone(), c.bet.seat, c.round)));
        }
        let mut waiting = Vec::new();
        for c in pending.drain(..) {
            match try_rebet(&app, &play, (&window, windows), &c).await {
                Step::Wait => waiting.push(c),
                Step::Stopped => {
                    stopped.insert((c.player.clone(), c.bet.seat, c.round));
                }
                Step::Done => {}
            }
        }
        pending = waiting;
    }
}
