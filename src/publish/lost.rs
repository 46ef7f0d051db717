//! What a superseded history moved in the wallet after the fork (`croupier timeline
//! lost`), seat-round by seat-round, and what this log does with the same round.
//!
//! The lost history's table took stakes and paid returns under its own timeline's wallet
//! ids, which this log never meets. Three kinds of round carry such movements:
//! - a round opened after the last row both histories share: only the lost history
//!   played it (this log's round of the same number is another round); its stakes were
//!   debited, and its returns credited if it became final before that history ends — or,
//!   in play when it ends, its stakes stayed debited and nothing will return them;
//! - the round in play at the fork: its stakes up to the common row are this log's too
//!   (a restored table voids it and returns them, `table/task/restore.rs`); what the lost
//!   history staked on it after the fork and what it paid for it are extra;
//! - a round settled at the fork whose dispute window closed on the lost history: paid
//!   there, and paid here too once final here.
//!
//! So every seat-round's wallet movements across both histories are this log's own
//! settlement plus what is listed here.

use crate::engine::{Event, RoundResult};
use crate::store::{LogRow, Record};
use crate::table::{Follower, Snapshot};
use std::collections::BTreeMap;

/// How a round stands when the superseded rows end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LostState {
    /// Settled and final: its returns were credited.
    Final,
    /// Settled, its dispute window still open: nothing was credited.
    Settled,
    /// In play: its stakes stayed debited, and nothing will settle them.
    Open,
}

/// What this log does with the same round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Here {
    /// Nothing: only the lost history played this round (a round of the same number here
    /// is another round, with its own wallet ids).
    None,
    /// Voided: the round in play at the fork, its stakes up to the fork returned here.
    Voided,
    /// Settled: this log pays the round too, once final here.
    Settled,
    /// Still in play here.
    Open,
}

/// One seat-round's wallet movements on the superseded history after the fork, for one
/// player.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LostMove {
    /// The round.
    pub round: u64,
    /// The seat (box).
    pub seat: u8,
    /// The player.
    pub player: String,
    /// Debited after the fork: every stake of a round opened after it; of the round in
    /// play at the fork, only what was staked after the common row (doubles, splits,
    /// insurance — its earlier stakes are this log's too).
    pub staked: i64,
    /// Credited: the round's returns, if it was final before the superseded rows end.
    pub returned: i64,
    /// How the round stands when the superseded rows end.
    pub state: LostState,
    /// What this log does with the same round.
    pub here: Here,
}

/// What `croupier timeline lost` found: the superseded rows it read and the movements.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LostTail {
    /// The continue's timeline id.
    pub timeline: String,
    /// The superseded history's timeline (empty: from before timelines).
    pub superseded: String,
    /// The superseded rows: `common_seq + 1 ..= last_seq`.
    pub common_seq: u64,
    /// The superseded history's last row.
    pub last_seq: u64,
    /// Every player's movements in those rows, by round and seat.
    pub moves: Vec<LostMove>,
}

/// Stakes and returns by (seat, player).
type ByPlayer = BTreeMap<(u8, String), (i64, i64)>;

/// A round's stakes and returns by seat and player: a line that names its player (behind
/// a seat, a common draw's box) is theirs, the seat's own lines its seated player's
/// (`round.bets`); a seat with no player named (the demo's players) moves no wallet.
fn by_player(result: &RoundResult, shown: &Snapshot) -> ByPlayer {
    let seated: BTreeMap<u8, &str> = shown
        .round
        .bets
        .iter()
        .filter_map(|b| Some((b.seat, b.player.as_deref()?)))
        .collect();
    let mut out = ByPlayer::new();
    for bet in &result.bets {
        let player = match &bet.player {
            Some(p) => p.to_string(),
            None => match seated.get(&bet.seat) {
                Some(p) => p.to_string(),
                None => continue,
            },
        };
        let e = out.entry((bet.seat, player)).or_default();
        e.0 += bet.staked;
        e.1 += bet.returned;
    }
    out
}

/// The table at the fork: what it showed, the round in play (its number and stakes so
/// far) and the round settled but not yet final (its number and settlement).
struct Fork {
    shown: Option<std::sync::Arc<Snapshot>>,
    in_play: Option<(u64, ByPlayer)>,
    provisional: Option<(u64, ByPlayer)>,
}

/// Folds `prefix` (this log up to the common row) into `f`: the table at the fork.
fn fork(f: &mut Follower, prefix: &[LogRow]) -> Result<Fork, String> {
    let mut shown = None;
    for row in prefix {
        shown = Some(f.follow(row)?.0);
    }
    let Some(at) = shown.clone() else {
        return Ok(Fork {
            shown,
            in_play: None,
            provisional: None,
        });
    };
    let in_play = f.stakes_in_play().map(|r| (r.round, by_player(&r, &at)));
    let provisional = at.provisional.and_then(|round| {
        let last = at.last_result.as_ref().filter(|r| r.round == round)?;
        Some((round, by_player(last, &at)))
    });
    Ok(Fork {
        shown,
        in_play,
        provisional,
    })
}

/// The wallet movements of the superseded rows `lost` after this log's `prefix` (its rows
/// up to the last one both share), and what this log's rows after it (`here`) do with
/// the rounds both hold. `follower` makes an empty table of this log's configuration;
/// `final_when_settled`: a settled round is final at once (no dispute window).
pub fn lost_moves(
    follower: impl Fn() -> Follower,
    prefix: &[LogRow],
    here: &[LogRow],
    lost: &[LogRow],
    final_when_settled: bool,
) -> Result<Vec<LostMove>, String> {
    let mut f = follower();
    let at = fork(&mut f, prefix)?;
    let fork_round = at.in_play.as_ref().map(|(r, _)| *r);
    // Each round's latest settlement on the lost rows, and how it stands.
    let mut rounds: BTreeMap<u64, (ByPlayer, LostState)> = BTreeMap::new();
    if let Some((round, settled)) = &at.provisional {
        rounds.insert(*round, (settled.clone(), LostState::Settled));
    }
    let mut last = at.shown.clone();
    for row in lost {
        let (shown, events) = f.follow(row)?;
        last = Some(std::sync::Arc::clone(&shown));
        for e in &events {
            if let Event::RoundSettled(result) = e {
                let state = if final_when_settled {
                    LostState::Final
                } else {
                    LostState::Settled
                };
                rounds.insert(result.round, (by_player(result, &shown), state));
            }
        }
        if let Record::Final { round } = &row.record {
            if let Some((_, state)) = rounds.get_mut(round) {
                *state = LostState::Final;
            }
        }
    }
    if let (Some(result), Some(shown)) = (f.stakes_in_play(), last) {
        rounds.insert(result.round, (by_player(&result, &shown), LostState::Open));
    }
    let here = here_states(follower, prefix, here, &at)?;
    let mut out = Vec::new();
    for (round, (players, state)) in rounds {
        let provisional = at.provisional.as_ref().is_some_and(|(r, _)| *r == round);
        for ((seat, player), (staked, returned)) in players {
            // The stakes this log holds too: all of a round settled at the fork, and the
            // round in play's up to the fork.
            let before = if provisional {
                staked
            } else if Some(round) == fork_round {
                at.in_play
                    .as_ref()
                    .and_then(|(_, p)| p.get(&(seat, player.clone())))
                    .map_or(0, |s| s.0)
            } else {
                0
            };
            let m = LostMove {
                round,
                seat,
                player,
                staked: staked - before,
                returned: if state == LostState::Final {
                    returned
                } else {
                    0
                },
                state,
                here: here.get(&round).copied().unwrap_or(Here::None),
            };
            if m.staked != 0 || m.returned != 0 {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// What this log's rows after the fork do with the rounds both histories hold: the round
/// in play at the fork and the one settled but not final.
fn here_states(
    follower: impl Fn() -> Follower,
    prefix: &[LogRow],
    here: &[LogRow],
    at: &Fork,
) -> Result<BTreeMap<u64, Here>, String> {
    let mut out = BTreeMap::new();
    if let Some((round, _)) = &at.provisional {
        out.insert(*round, Here::Settled);
    }
    let Some((round, _)) = &at.in_play else {
        return Ok(out);
    };
    out.insert(*round, Here::Open);
    let mut f = follower();
    for row in prefix.iter().chain(here) {
        let (_, events) = f.follow(row)?;
        if row.seq <= prefix.last().map_or(0, |r| r.seq) {
            continue;
        }
        for e in &events {
            if let Event::RoundSettled(result) = e {
                if result.round == *round {
                    let state = if result.cancelled {
                        Here::Voided
                    } else {
                        Here::Settled
                    };
                    out.insert(*round, state);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
