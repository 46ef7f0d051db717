//! The one path every players' bet takes onto the table (`replace_stakes`): the standing
//! bet off and its stakes back, each new line debited, then the bet placed; a refusal
//! anywhere rolls back what was debited and leaves nothing of the bet on the table.

use super::bets::betting_closed;
use crate::engine::{BehindBet, PlayerBets, SeatBets, SeatId};
use crate::play::Play;
use crate::table::BetError;
use crate::wallet::journal::Entry;
use crate::wallet::WalletError;
use crate::web::play::PlayError;
use crate::web::AppState;

/// What a bet puts on the table.
pub(super) enum Target {
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

/// A table's refusal of a bet as the players' API says it (amounts in money).
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

/// Refuses (`insufficient_funds`) a replacement of `before` by `lines` that the balance,
/// with `before`'s stakes back, cannot cover, before anything is touched: a refused change
/// leaves the standing bet and its stakes as they were.
pub(super) async fn affordable(
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
pub(super) async fn replace_stakes(
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
