use super::*;
use crate::engine::{Action, Engine, Input, Variant};
use crate::sim::{Style, TableSim};
use crate::store::Source;
use std::sync::Arc;

fn variant() -> Arc<Variant> {
    Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"))
}

fn follower() -> Follower {
    Follower::new(
        "t",
        "t",
        "deluxe",
        variant(),
        crate::table::DisputeSettings::default(),
    )
}

fn row(seq: u64, input: Input) -> LogRow {
    LogRow {
        seq,
        at_ms: 0,
        record: Record::Input {
            source: Source::Api,
            input,
        },
        hash: String::new(),
    }
}

/// A session of at least `rounds` settled rounds whose seats are held by players
/// `p<seat>`: the log rows, and what the engine settled.
fn session(rounds: usize) -> (Vec<LogRow>, Vec<RoundResult>) {
    let mut engine = Engine::new(variant());
    let mut sim = TableSim::new(variant(), 7, Style::Random);
    let (mut rows, mut results, mut events) = (Vec::new(), Vec::new(), Vec::new());
    while results.len() < rounds {
        let mut input = sim.next_input(&engine);
        if let Input::Bets(bets) = &mut input {
            for b in bets.iter_mut() {
                b.player = Some(format!("p{}", b.seat));
            }
        }
        events.clear();
        engine.apply(&input, &mut events).expect("legal");
        for e in events.drain(..) {
            if let Event::RoundSettled(r) = e {
                results.push(*r);
            }
        }
        rows.push(row(rows.len() as u64 + 1, input));
    }
    (rows, results)
}

/// Stakes and returns by (seat, player) of `r`, every seat held by `p<seat>`.
fn want(r: &RoundResult) -> ByPlayer {
    let mut out = ByPlayer::new();
    for b in &r.bets {
        let player = b
            .player
            .as_deref()
            .map_or_else(|| format!("p{}", b.seat), str::to_string);
        let e = out.entry((b.seat, player)).or_default();
        e.0 += b.staked;
        e.1 += b.returned;
    }
    out
}

fn have(moves: &[LostMove], round: u64) -> ByPlayer {
    moves
        .iter()
        .filter(|m| m.round == round)
        .map(|m| ((m.seat, m.player.clone()), (m.staked, m.returned)))
        .collect()
}

#[test]
fn rounds_only_the_lost_history_played_are_each_seated_players_stakes_and_returns() {
    let (rows, results) = session(6);
    // A new database beside the key: nothing shared, every lost round final at once.
    let got = lost_moves(follower, &[], &[], &rows, true).expect("folds");
    assert!(got.iter().all(|m| m.here == Here::None), "{got:?}");
    for r in &results {
        assert_eq!(have(&got, r.round), want(r), "round {}", r.round);
        assert!(got
            .iter()
            .filter(|m| m.round == r.round)
            .all(|m| m.state == LostState::Final));
    }
    // With a dispute window and no `final` rows, nothing was credited.
    let got = lost_moves(follower, &[], &[], &rows, false).expect("folds");
    assert!(got
        .iter()
        .all(|m| m.returned == 0 && m.state == LostState::Settled));
}

#[test]
fn the_round_in_play_at_the_fork_lists_only_what_the_lost_history_staked_after_it() {
    // A round in which a double came after its opening: the fork is between the two.
    let (rows, results) = session(40);
    let double = rows
        .iter()
        .position(|r| {
            matches!(
                &r.record,
                Record::Input {
                    input: Input::Decision {
                        action: Action::Double,
                        ..
                    },
                    ..
                }
            )
        })
        .expect("a double in 40 rounds");
    let opened = rows[..double]
        .iter()
        .rposition(|r| {
            matches!(
                &r.record,
                Record::Input {
                    input: Input::Bets(_),
                    ..
                }
            )
        })
        .expect("its round's bets");
    let common = opened + 1;
    let (prefix, lost) = rows.split_at(common);
    let round = {
        let mut f = follower();
        for r in prefix {
            f.follow(r).expect("replays");
        }
        f.stakes_in_play().expect("in play").round
    };
    let settled = results.iter().find(|r| r.round == round).expect("settled");
    // This log voided the round (a restore); the lost history played it on.
    let here = [row(common as u64 + 1, Input::CancelRound)];
    let got = lost_moves(follower, prefix, &here, lost, true).expect("folds");
    let mut expected = want(settled);
    let mut f = follower();
    for r in prefix {
        f.follow(r).expect("replays");
    }
    let at_fork = want(&f.stakes_in_play().expect("in play"));
    for (k, (staked, _)) in expected.iter_mut() {
        *staked -= at_fork.get(k).map_or(0, |s| s.0);
    }
    expected.retain(|_, (staked, returned)| *staked != 0 || *returned != 0);
    assert_eq!(have(&got, round), expected);
    assert!(
        expected.values().any(|(staked, _)| *staked > 0),
        "the double"
    );
    assert!(got
        .iter()
        .filter(|m| m.round == round)
        .all(|m| m.here == Here::Voided && m.state == LostState::Final));
    // The later rounds: the lost history's alone, whole.
    for r in results.iter().filter(|r| r.round > round) {
        assert_eq!(have(&got, r.round), want(r), "round {}", r.round);
    }
    assert!(got
        .iter()
        .filter(|m| m.round > round)
        .all(|m| m.here == Here::None));
    assert!(got.iter().all(|m| m.round >= round));
}
