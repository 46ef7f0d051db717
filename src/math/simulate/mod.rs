//! `croupier simulate`: Monte Carlo of a variant through the rules engine itself.
//!
//! Each thread owns an `Engine` and a shoe of the variant's composition, shuffled lazily
//! (a Fisher–Yates step per card dealt, from a seeded xorshift64* generator: a uniformly
//! random order without shuffling cards that are never dealt), and plays one seat: the main
//! bet and every side bet of the variant each round, decisions from the strategy derived
//! for the variant (`strategy.rs`), never insurance, bonus-game multipliers drawn with
//! equal chances. It sends exactly what the engine says it waits for: every card the
//! engine waits for it deals itself from the thread's shoe (`Engine::deal_from`, which
//! returns what it waits for next without allocating; a hit through `Engine::hit_from`),
//! after the first round the same bets through `Engine::repeat_bets_to`; and it reads
//! each round's settlement from the engine once it is over (`Engine::settle_with`, the
//! code that writes the table's settlement record, which the simulator switches off), so
//! every payout is the table's own. Thread `t` plays its share of the rounds from a seed
//! derived from (`seed`, `t`); the tallies are integers summed in thread order, so a run
//! is determined by its seed and thread count.
//!
//! By file: `shoe` is the thread's shoe and `tally` its integer tallies, both on the
//! per-card and per-round path; `figures` turns the summed tallies into the report and its
//! text, once per run. What stays here is the driving: the round loop, the threads and the
//! progress line.

mod figures;
mod shoe;
mod tally;

pub use super::common_draw::CommonOptions;
pub use figures::{render, MainFigures, Report, SideFigures, METHOD};
pub(super) use figures::{report, Shape};
pub(super) use shoe::Deck;
pub(super) use tally::Tally;

use super::strategy::Strategy;
use crate::engine::variant::DealMode;
use crate::engine::Action;
use crate::engine::{Engine, Input, NoEvents, SeatBets, SeatId, Step, Variant};
use crate::money::Amount;
use crate::sim::Rng;
use shoe::DeckShoe;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally::SideTally;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Rounds in all.
    pub rounds: u64,
    /// Threads (each plays its share of the rounds).
    pub threads: usize,
    /// The seed.
    pub seed: u64,
    /// Report progress on stderr while the run lasts more than two seconds.
    pub progress: bool,
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A common-draw setting (`--boxes`, `--specials`) the run cannot take.
    #[error("{0}")]
    Options(String),
    /// The engine refused what the simulator sent (a bug in one of them).
    #[error("round {round}: the engine refused {input:?}: {why}")]
    Refused {
        /// The thread's round.
        round: u64,
        /// What was sent.
        input: Box<Input>,
        /// The rejection.
        why: String,
    },
    /// Nothing to run.
    #[error("--rounds and --threads must be at least 1")]
    Empty,
}

/// The stake of each bet: 100 minor units for the main bet (so 3:2 and half-bet costs are
/// exact), side bets at 100 too, both clamped to the variant's limits.
fn stakes(v: &Variant) -> (Amount, Vec<(String, Amount)>) {
    let main = 100.clamp(v.limits.min, v.limits.max);
    let side = v
        .side_bets
        .iter()
        .filter(|s| s.requires_bet.is_none())
        .map(|s| (s.name.clone(), 100.clamp(s.limits.min, s.limits.max)))
        .collect();
    (main, side)
}

/// A thread's seed: splitmix64 of (seed, thread).
fn thread_seed(seed: u64, thread: usize) -> u64 {
    let mut z = seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Plays `rounds` rounds on one thread.
fn play(
    variant: &Arc<Variant>,
    strategy: &Strategy,
    seed: u64,
    rounds: u64,
    progress: &AtomicU64,
) -> Result<Tally, SimError> {
    play_rounds(variant, strategy, seed, rounds, progress).map_err(|e| *e)
}

/// `play`, its refusal boxed: each step of the round loop passes back one register.
fn play_rounds(
    variant: &Arc<Variant>,
    strategy: &Strategy,
    seed: u64,
    rounds: u64,
    progress: &AtomicU64,
) -> Result<Tally, Box<SimError>> {
    let (main, side) = stakes(variant);
    let side_names: Vec<String> = side.iter().map(|(n, _)| n.clone()).collect();
    // Each of the variant's side bets by index: its tally, if the simulator bets on it.
    let slots: Vec<Option<usize>> = variant
        .side_bets
        .iter()
        .map(|s| side_names.iter().position(|n| *n == s.name))
        .collect();
    let bets = Input::Bets(vec![SeatBets {
        seat: 1,
        main,
        side,
        ..SeatBets::default()
    }]);
    let mut tally = Tally {
        side: vec![SideTally::default(); side_names.len()],
        ..Tally::default()
    };
    let mut engine = Engine::new(Arc::clone(variant));
    // The settlement is read from the engine once each round is over, not as a record.
    engine.set_settlement_records(false);
    let mut in_round = false;
    let mut deck = Deck::new(variant);
    let mut rng = Rng::new(seed);
    let fresh_every_round = variant.shoe.new_shoe_every_round;
    let mut reported = 0;
    // Tallies the round the engine has just finished and reports progress now and then;
    // whether that was the last round.
    let mut round_over = |tally: &mut Tally, engine: &Engine| {
        tally.settle(engine, &slots);
        if tally.rounds - reported >= 1 << 14 {
            progress.fetch_add(tally.rounds - reported, Ordering::Relaxed);
            reported = tally.rounds;
        }
        tally.rounds >= rounds
    };
    if rounds == 0 {
        return Ok(tally);
    }
    // The simulator reads the engine's state, never its events: none are built. The engine
    // deals its cards from the deck itself (`Engine::deal_from`, `hit_from`), decisions go
    // straight to their handler (`Engine::decision_to`), the rest as inputs.
    let input = |engine: &mut Engine, tally: &Tally, input: &Input| {
        engine
            .apply_to(input, &mut NoEvents)
            .map_err(|e| refusal(tally, input.clone(), &e.to_string()))
    };
    loop {
        // Every card the engine waits for is dealt here, up to what it waits for next.
        let shoe = &mut DeckShoe {
            deck: &mut deck,
            rng: &mut rng,
        };
        let step = engine
            .deal_from(shoe, &mut NoEvents)
            .map_err(|e| refusal(&tally, e.input, &e.rejection.to_string()))?;
        match step {
            // A round is over exactly when the engine next waits for bets or for a shuffle
            // (burn cards only follow a shuffle): it is tallied there rather than checked
            // for after every input.
            Step::Bets => {
                if in_round && round_over(&mut tally, &engine) {
                    break;
                }
                if fresh_every_round {
                    deck.reset();
                }
                // The same bets every round: after the first, the engine repeats them.
                if in_round || tally.rounds > 0 {
                    engine
                        .repeat_bets_to(&mut NoEvents)
                        .map_err(|e| refusal(&tally, bets.clone(), &e.to_string()))?;
                } else {
                    input(&mut engine, &tally, &bets)?;
                }
                in_round = true;
            }
            Step::Shuffle => {
                if in_round && round_over(&mut tally, &engine) {
                    break;
                }
                in_round = false;
                deck.reset();
                input(&mut engine, &tally, &Input::Shuffle)?;
            }
            Step::Card => return Err(shoe_ran_out(&tally)),
            Step::Insurance(seat) => decide(&mut engine, &tally, seat, Action::NoInsurance)?,
            Step::Decision => {
                // One decision at a time asked of the engine, not its whole list.
                let choice = engine.hand_in_play().map(|h| {
                    let may = |a| engine.may_decide(a);
                    (h.seat, strategy.decide_in_play(&h, may))
                });
                match choice {
                    Some((seat, Some(action))) => decide(&mut engine, &tally, seat, action)?,
                    _ => {
                        let shoe = &mut DeckShoe {
                            deck: &mut deck,
                            rng: &mut rng,
                        };
                        let hit = engine
                            .hit_from(shoe, &mut NoEvents)
                            .map_err(|e| refusal(&tally, e.input, &e.rejection.to_string()))?;
                        if !hit {
                            return Err(shoe_ran_out(&tally));
                        }
                    }
                }
            }
            Step::Bonus(seat) => {
                let options = engine.bonus_multipliers(seat).unwrap_or(&[]);
                let multiplier = options.get(rng.below(options.len())).copied().unwrap_or(1);
                input(&mut engine, &tally, &Input::Bonus { seat, multiplier })?;
            }
            Step::Other => return Err(refusal(
                &tally,
                Input::Shuffle,
                "the round waits for players behind or a common draw, which simulate does not play",
            )),
        }
    }
    progress.fetch_add(tally.rounds - reported, Ordering::Relaxed);
    Ok(tally)
}

/// Sends a decision to the engine.
#[inline(always)]
fn decide(
    engine: &mut Engine,
    tally: &Tally,
    seat: SeatId,
    action: Action,
) -> Result<(), Box<SimError>> {
    engine
        .decision_to(seat, action, &mut NoEvents)
        .map_err(|e| refusal(tally, Input::Decision { seat, action }, &e.to_string()))
}

/// The refusal of a round the shoe has too few cards for.
#[cold]
#[inline(never)]
fn shoe_ran_out(tally: &Tally) -> Box<SimError> {
    refusal(tally, Input::Shuffle, "the shoe ran out of cards")
}

/// `refused`, boxed.
#[cold]
#[inline(never)]
fn refusal(tally: &Tally, input: Input, why: &str) -> Box<SimError> {
    Box::new(refused(tally, input, why))
}

#[cold]
#[inline(never)]
pub(super) fn refused(tally: &Tally, input: Input, why: &str) -> SimError {
    SimError::Refused {
        round: tally.rounds + 1,
        input: Box::new(input),
        why: why.to_string(),
    }
}

/// Runs the simulation of `variant` (a common draw with its default settings: every box
/// and every special bet).
pub fn simulate(variant: &Variant, config: &Config) -> Result<Report, SimError> {
    simulate_with(variant, config, &CommonOptions::default())
}

/// Runs the simulation of `variant`; a common draw is played by `common_draw` with
/// `options`, which a seat-by-seat game refuses.
pub fn simulate_with(
    variant: &Variant,
    config: &Config,
    options: &CommonOptions,
) -> Result<Report, SimError> {
    if variant.deal.mode == DealMode::CommonDraw {
        return super::common_draw::simulate(variant, config, options);
    }
    if *options != CommonOptions::default() {
        return Err(SimError::Options(format!(
            "{} is played seat by seat: --boxes and --specials are for a common draw",
            variant.name
        )));
    }
    if config.rounds == 0 || config.threads == 0 {
        return Err(SimError::Empty);
    }
    let variant = Arc::new(variant.clone());
    let strategy = Strategy::derive(&variant);
    let started = Instant::now();
    let total = run_threads(config, started, |seed, share, progress| {
        play(&variant, &strategy, seed, share, progress)
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let (stake, side) = stakes(&variant);
    let shape = Shape {
        boxes: 1,
        stake,
        side: &side,
    };
    Ok(report(&variant, config, &strategy, &total, &shape, seconds))
}

/// Runs `play(seed, rounds, progress)` on `config.threads` threads, each its share of the
/// rounds from its own seed, and sums the tallies in thread order (so the result is
/// determined by the seed and the thread count).
pub(super) fn run_threads<F>(config: &Config, started: Instant, play: F) -> Result<Tally, SimError>
where
    F: Fn(u64, u64, &AtomicU64) -> Result<Tally, SimError> + Sync,
{
    let progress = AtomicU64::new(0);
    let threads = config.threads;
    let tallies: Vec<Result<Tally, SimError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let share = config.rounds / threads as u64
                    + u64::from((t as u64) < config.rounds % threads as u64);
                let (play, progress) = (&play, &progress);
                let seed = thread_seed(config.seed, t);
                scope.spawn(move || play(seed, share, progress))
            })
            .collect();
        if config.progress {
            report_progress(&handles, &progress, config.rounds, started);
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut total = Tally::default();
    for t in tallies {
        total.add(&t?);
    }
    Ok(total)
}

/// Progress on stderr every second once a run has lasted two (a line a report when stderr
/// is not a terminal, every ten seconds).
fn report_progress<T>(
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    progress: &AtomicU64,
    rounds: u64,
    started: Instant,
) {
    let terminal = std::io::stderr().is_terminal();
    let every = if terminal { 1 } else { 10 };
    let mut printed = false;
    let mut next = 2;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(100));
        let secs = started.elapsed().as_secs();
        if secs < next {
            continue;
        }
        next = secs + every;
        let done = progress.load(Ordering::Relaxed);
        let rate = done as f64 / started.elapsed().as_secs_f64();
        let pct = 100.0 * done as f64 / rounds as f64;
        let eta = (rounds.saturating_sub(done)) as f64 / rate.max(1.0);
        let line = format!(
            "simulate: {pct:5.1} % ({done} of {rounds} rounds, {:.0} k/s, {eta:.0} s left)",
            rate / 1e3
        );
        let mut err = std::io::stderr().lock();
        let _ = if terminal {
            write!(err, "\r{line}")
        } else {
            writeln!(err, "{line}")
        };
        printed = true;
    }
    if printed && terminal {
        let _ = writeln!(std::io::stderr());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Event, SettledBet, SettledHand, SettlementSink};
    use crate::math::paytable::variant_tables;

    fn variant(stem: &str) -> Variant {
        Variant::built_in(stem).expect("shipped").expect("valid")
    }

    fn run(stem: &str, rounds: u64, threads: usize, seed: u64) -> Report {
        let config = Config {
            rounds,
            threads,
            seed,
            progress: false,
        };
        simulate(&variant(stem), &config).expect("simulates")
    }

    /// Everything but the timing.
    fn figures(r: &Report) -> (u64, MainFigures, Vec<SideFigures>) {
        (r.rounds, r.main.clone(), r.side_bets.clone())
    }

    /// The same seed and thread count give the same figures; another seed does not.
    #[test]
    fn a_run_is_determined_by_its_seed_and_threads() {
        let a = run("infor6", 3_000, 2, 11);
        let b = run("infor6", 3_000, 2, 11);
        assert_eq!(figures(&a), figures(&b));
        assert_eq!(a.rounds, 3_000);
        let c = run("infor6", 3_000, 2, 12);
        assert_ne!(figures(&a), figures(&c));
        // Every variant a seat plays runs: Caribbean 21's doubles on any cards, surrender
        // any time, ace one and three-card natural included.
        let c21 = run("caribbean21", 3_000, 1, 5);
        assert_eq!(c21.rounds, 3_000);
        assert!(c21.main.rtp_pct > 80.0 && c21.main.rtp_pct < 110.0);
    }

    /// A settlement refilled into a recycled record is the one a fresh record gets, whatever
    /// the shapes of the rounds before (hands, splits, bets behind, side bets, common draws).
    #[test]
    fn a_recycled_settlement_record_equals_a_fresh_one() {
        use crate::sim::{Style, TableSim};
        for (stem, _) in crate::engine::variant::BUILT_IN {
            let v = Arc::new(variant(stem));
            let mut fresh = Engine::new(Arc::clone(&v));
            let mut reused = Engine::new(Arc::clone(&v));
            let mut sim = TableSim::new(Arc::clone(&v), 9, Style::Random);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut settled = 0;
            while settled < 300 {
                let input = sim.next_input(&fresh);
                a.clear();
                b.clear();
                assert_eq!(fresh.apply(&input, &mut a), reused.apply(&input, &mut b));
                assert_eq!(a, b, "{stem}");
                for e in b.drain(..) {
                    if let Event::RoundSettled(r) = e {
                        settled += 1;
                        reused.recycle(r);
                    }
                }
            }
        }
    }

    /// An engine that settles without records plays every round as one that records
    /// (same state, same events but the record), and `settle_with` reads, hand by hand and
    /// bet by bet, what the record holds — in every variant, whatever the rounds' shapes.
    #[test]
    fn settle_with_reads_what_the_record_holds() {
        use crate::engine::{total, BetResult, HandResult};
        use crate::sim::{Style, TableSim};
        struct Record(
            Vec<HandResult>,
            Vec<BetResult>,
            crate::engine::variant::AceValue,
        );
        impl SettlementSink for Record {
            fn hand(&mut self, h: &SettledHand<'_>) {
                self.0.push(HandResult {
                    player: h.player.cloned(),
                    seat: h.seat,
                    hand: h.hand,
                    cards: h.cards.to_vec(),
                    total: total(h.cards, self.2).best,
                    doubled: h.doubled,
                    outcome: h.outcome,
                    staked: h.staked,
                    returned: h.returned,
                });
            }
            fn bet(&mut self, b: &SettledBet<'_>) {
                self.1.push(BetResult {
                    player: b.player.cloned(),
                    seat: b.seat,
                    kind: b.kind.owned(),
                    staked: b.staked,
                    returned: b.returned,
                });
            }
        }
        for (stem, _) in crate::engine::variant::BUILT_IN {
            let v = Arc::new(variant(stem));
            let mut recording = Engine::new(Arc::clone(&v));
            let mut quiet = Engine::new(Arc::clone(&v));
            quiet.set_settlement_records(false);
            let mut sim = TableSim::new(Arc::clone(&v), 9, Style::Random);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut settled = 0;
            while settled < 300 {
                let input = sim.next_input(&recording);
                a.clear();
                b.clear();
                assert_eq!(recording.apply(&input, &mut a), quiet.apply(&input, &mut b));
                assert!(recording == quiet, "{stem}");
                let common = v.deal.mode == DealMode::CommonDraw;
                let kept: Vec<&Event> = a
                    .iter()
                    .filter(|e| common || !matches!(e, Event::RoundSettled(r) if !r.cancelled))
                    .collect();
                assert_eq!(kept, b.iter().collect::<Vec<_>>(), "{stem}");
                for e in &a {
                    if let Event::RoundSettled(r) = e {
                        if r.cancelled {
                            continue;
                        }
                        settled += 1;
                        let mut read = Record(Vec::new(), Vec::new(), v.hand.ace);
                        quiet.settle_with(&mut read);
                        assert_eq!((&read.0, &read.1), (&r.hands, &r.bets), "{stem}");
                    }
                }
            }
        }
    }

    /// The hot path's one-at-a-time questions (`hand_in_play`, `may_decide`) answer what
    /// `active_hand` and its list say, and the counts `hand_in_play` carries are its
    /// cards', in every variant a seat plays, at every decision.
    #[test]
    fn one_decision_at_a_time_agrees_with_the_allowed_list() {
        use crate::cards::Rank;
        use crate::sim::{Style, TableSim};
        for (stem, _) in crate::engine::variant::BUILT_IN {
            let v = Arc::new(variant(stem));
            if v.deal.mode == DealMode::CommonDraw {
                continue;
            }
            let mut engine = Engine::new(Arc::clone(&v));
            let mut sim = TableSim::new(Arc::clone(&v), 3, Style::Random);
            let mut events = Vec::new();
            let mut decisions = 0;
            while decisions < 2_000 {
                if let Some(active) = engine.active_hand() {
                    let lean = engine.hand_in_play().expect("a hand in play");
                    assert_eq!(
                        (
                            lean.seat,
                            lean.cards,
                            lean.from_split,
                            lean.doubles,
                            lean.up
                        ),
                        (
                            active.seat,
                            active.cards,
                            active.from_split,
                            active.doubles,
                            active.up
                        ),
                        "{stem}"
                    );
                    // The counts the engine keeps are its cards'.
                    let hard: u32 = active
                        .cards
                        .iter()
                        .map(|c| u32::from(c.rank.points()))
                        .sum();
                    let aces = active.cards.iter().filter(|c| c.rank == Rank::Ace).count();
                    let tens = active
                        .cards
                        .iter()
                        .filter(|c| c.rank.is_ten_value())
                        .count();
                    assert_eq!(
                        (
                            u32::from(lean.hard),
                            usize::from(lean.aces),
                            usize::from(lean.tens)
                        ),
                        (hard, aces, tens),
                        "{stem} {:?}",
                        active.cards
                    );
                    for a in Action::ALL.into_iter().chain([Action::Hit]) {
                        assert_eq!(
                            engine.may_decide(a),
                            active.allowed.contains(&a),
                            "{stem} {a:?}"
                        );
                    }
                    decisions += 1;
                } else {
                    assert!(engine.hand_in_play().is_none());
                    assert!(Action::ALL.into_iter().all(|a| !engine.may_decide(a)));
                }
                let input = sim.next_input(&engine);
                events.clear();
                engine
                    .apply(&input, &mut events)
                    .expect("the simulator sends what is expected");
            }
        }
    }

    /// The sheets' main-game figures fall inside the 95 % interval of a seeded run
    /// (debug builds play about 100,000 rounds a second a core; docs/src/game-math.md has
    /// the long release runs), and each side bet's simulated interval holds the exact
    /// figure that `croupier paytables` enumerates — the simulator tallies what the table pays.
    #[test]
    fn the_sheets_main_game_figures_fall_in_the_interval() {
        for (stem, sheet) in [("ultimate", 99.51), ("deluxe", 99.53), ("infor6", 99.64)] {
            let r = run(stem, 600_000, 2, 2026);
            let [lo, hi] = r.main.ci95_pct;
            assert!(
                lo <= sheet && sheet <= hi,
                "{stem}: the sheet's {sheet} % is outside {lo:.3}–{hi:.3} %"
            );
            assert!(
                hi - lo < 0.7,
                "{stem}: the interval is too wide to mean anything"
            );
            let exact = variant_tables(&variant(stem)).expect("enumerates");
            for side in &r.side_bets {
                let table = exact
                    .bets
                    .iter()
                    .find(|t| t.bet == side.name)
                    .expect("priced");
                let rtp = 100.0 * table.rtp;
                let [lo, hi] = side.ci95_pct;
                assert!(
                    lo <= rtp && rtp <= hi,
                    "{stem} {}: exact {rtp:.3} % outside {lo:.3}–{hi:.3} %",
                    side.name
                );
            }
        }
    }
}
