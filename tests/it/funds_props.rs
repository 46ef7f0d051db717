//! Money conservation under the balance rules, as a property (issue #38 item 5): random
//! legal sessions of every built-in game (the simulator's players, seats, bets behind and
//! common-draw boxes), each account given a random balance and, now and then mid-round, a
//! new one (a deposit or a withdrawal), played through the same `FundsDesk` the replay puts
//! in front of the engine. For every account whose balance is known, every round:
//!
//! - its balance after = before + given − staked + returned, to the unit;
//! - its balance after, less what the round returned, is not negative: every stake the
//!   engine played for it (those charged at settlement too) came from what it had;
//! - no balance is ever negative.

use croupier::engine::variant::BUILT_IN;
use croupier::engine::{Engine, Event, Input, SeatId, Variant};
use croupier::money::Amount;
use croupier::play::desk::FundsDesk;
use croupier::play::funds::{round_by_account, seat_account};
use croupier::sim::{Rng, Style, TableSim};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

fn variant(i: usize) -> Arc<Variant> {
    let (stem, _) = BUILT_IN[i % BUILT_IN.len()];
    Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"))
}

/// Every account that `input`'s bets are paid from.
fn accounts(input: &Input) -> Vec<String> {
    match input {
        Input::Bets(bets) => bets
            .iter()
            .flat_map(|b| {
                std::iter::once(seat_account(b)).chain(b.behind.iter().map(|bb| bb.player.clone()))
            })
            .collect(),
        Input::PlayerBets(bets) => bets.iter().map(|p| p.player.clone()).collect(),
        _ => Vec::new(),
    }
}

/// The round in play's books: balances when its bets were placed, what accounts were given
/// since, and each seat's account.
#[derive(Default)]
struct Books {
    before: BTreeMap<String, Amount>,
    given: BTreeMap<String, Amount>,
    seats: HashMap<SeatId, String>,
}

/// Plays a random session of `rounds` rounds through the desk; answers how many settled.
fn play(
    variant_index: usize,
    seed: u64,
    money_seed: u64,
    rounds: usize,
) -> Result<usize, TestCaseError> {
    let v = variant(variant_index);
    let mut sim = TableSim::new(Arc::clone(&v), seed, Style::Random);
    let mut engine = Engine::new(Arc::clone(&v));
    let mut desk = FundsDesk::default();
    let mut money = Rng::new(money_seed);
    let mut books = Books::default();
    let (mut notes, mut events) = (Vec::new(), Vec::new());
    let mut settled = 0;
    // Short balances refuse bets and decisions, which the simulator then asks again
    // differently: bounded, not endless.
    for _ in 0..20_000 {
        if settled == rounds {
            break;
        }
        let input = sim.next_input(&engine);
        let opens = matches!(input, Input::Bets(_) | Input::PlayerBets(_));
        if opens {
            for a in accounts(&input) {
                if desk.available(&a).is_none() {
                    desk.set(&[(a, money.below(4_000) as Amount)]);
                }
            }
            books = Books {
                before: desk.balances().clone(),
                ..Books::default()
            };
        } else if money.below(8) == 0 && !books.before.is_empty() {
            // A deposit or a withdrawal mid-round: the wallet as it is now.
            let known: Vec<String> = books.before.keys().cloned().collect();
            let a = known[money.below(known.len())].clone();
            let now = desk.balances().get(&a).copied().unwrap_or(0);
            // Often nothing at all: the short cases the sheets' rules are for.
            let new = (money.below(3) * money.below(800)) as Amount;
            *books.given.entry(a.clone()).or_default() += new - now;
            desk.set(&[(a, new)]);
        }
        let saved = desk.clone();
        let Some(played) = desk.before(&engine, &input, &mut notes) else {
            continue;
        };
        if let Input::Bets(bets) = &played {
            books.seats = bets.iter().map(|b| (b.seat, seat_account(b))).collect();
        }
        events.clear();
        if engine.apply(&played, &mut events).is_err() {
            // Refused by the engine: it staked nothing, the desk goes back with it.
            desk = saved;
            continue;
        }
        for e in events.drain(..) {
            let Event::RoundSettled(r) = e else { continue };
            desk.settle(&r);
            settled += 1;
            let tally = round_by_account(&r, |s| books.seats.get(&s).cloned());
            for (account, (staked, returned)) in tally {
                let Some(&before) = books.before.get(&account) else {
                    continue;
                };
                let given = books.given.get(&account).copied().unwrap_or(0);
                let after = desk.balances().get(&account).copied();
                prop_assert_eq!(
                    after,
                    Some(before + given - staked + returned),
                    "{}'s balance after round {}",
                    account,
                    r.round
                );
                // Less the round's returns, the balance is what stakes left of what it
                // had: below zero, a stake was played that the wallet did not give.
                prop_assert!(
                    after.unwrap_or(0) - returned >= 0,
                    "{account} staked {staked} from {before} + {given} in round {}: {notes:?}",
                    r.round
                );
            }
        }
        for (account, balance) in desk.balances() {
            prop_assert!(
                *balance >= 0,
                "{account}'s balance {balance} after {played:?}"
            );
        }
    }
    Ok(settled)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn random_sessions_with_balances_conserve_every_accounts_money(
        variant in 0usize..5,
        seed in any::<u64>(),
        money in any::<u64>(),
        rounds in 1usize..8,
    ) {
        play(variant, seed, money, rounds)?;
    }
}

/// The property is not vacuous: across seeds, every game settles rounds with balances
/// known (short balances refuse some bets, never all of them).
#[test]
fn the_random_sessions_settle_rounds_in_every_game() {
    for (variant, (stem, _)) in BUILT_IN.iter().enumerate() {
        let settled: usize = (1..=10u64)
            .map(|seed| play(variant, seed, seed * 7919, 4).expect("conserved"))
            .sum();
        assert!(settled >= 20, "{stem}: {settled} rounds settled");
    }
}
