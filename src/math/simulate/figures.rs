//! A run's figures: the summed tallies turned into the report (returns, their 95 %
//! intervals, shares and counts per box) and the report as text. Apart from the round
//! loop, since this runs once per run, after the threads.

use super::{Config, Tally};
use crate::engine::Variant;
use crate::math::strategy::Strategy;
use crate::money::Amount;
use serde::Serialize;

/// The main game's figures. "Round" in the shares and counts means one box's round where
/// the player bets several boxes of a common draw (`Report::boxes`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MainFigures {
    /// The main bet each round, in minor units.
    pub stake: Amount,
    /// Return to player per initial bet, percent.
    pub rtp_pct: f64,
    /// Its 95 % confidence interval, percent.
    pub ci95_pct: [f64; 2],
    /// Standard deviation of a round's net result (all its boxes), in one box's initial bet.
    pub sd_per_round: f64,
    /// Return per amount wagered (doubles and splits included), percent.
    pub rtp_per_wagered_pct: f64,
    /// Share of rounds won, pushed and lost (net result above, at, below zero).
    pub win: f64,
    /// Share of rounds pushed.
    pub push: f64,
    /// Share of rounds lost.
    pub lose: f64,
    /// Naturals per round.
    pub naturals: f64,
    /// Doubles per round.
    pub doubles: f64,
    /// Splits per round.
    pub splits: f64,
    /// Surrenders per round.
    pub surrenders: f64,
}

/// One side bet's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SideFigures {
    /// The bet's name.
    pub name: String,
    /// Its stake each round, in minor units.
    pub stake: Amount,
    /// Return to player, percent.
    pub rtp_pct: f64,
    /// Its 95 % confidence interval, percent.
    pub ci95_pct: [f64; 2],
    /// Standard deviation of a round's return, in stakes.
    pub sd_per_round: f64,
    /// Share of bets that paid (rounds × boxes).
    pub hit_frequency: f64,
}

/// A run's report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// The variant's name.
    pub variant: String,
    /// Rounds played.
    pub rounds: u64,
    /// Boxes the simulated player bets each round (a common draw; 1 in a seat game). The
    /// main game's shares and counts are per box; SDs are of a round's result (all boxes)
    /// in one box's stake.
    pub boxes: u8,
    /// Threads.
    pub threads: usize,
    /// The seed.
    pub seed: u64,
    /// How the strategy was derived.
    pub strategy: &'static str,
    /// The strategy's main-game RTP on an infinite deck, percent (computed, not sampled).
    pub infinite_deck_rtp_pct: f64,
    /// The main game.
    pub main: MainFigures,
    /// Each side bet.
    pub side_bets: Vec<SideFigures>,
    /// Wall-clock seconds (not part of the determinism).
    pub seconds: f64,
    /// Rounds per second, all threads.
    pub rounds_per_second: f64,
}

/// The method, as the report names it.
pub const METHOD: &str = "infinite-deck expectimax per dealer up card (dealer outcomes exact, \
conditioned on no natural where the dealer peeks); pairs split as two hands without resplit; \
never insures";

fn ci(mean: f64, sd: f64, n: f64) -> [f64; 2] {
    let half = 1.96 * sd / n.sqrt();
    [100.0 * (mean - half), 100.0 * (mean + half)]
}

/// What the player bets each round: `boxes` boxes, each with the main `stake` and `side`.
pub(in crate::math) struct Shape<'a> {
    pub(in crate::math) boxes: u8,
    pub(in crate::math) stake: Amount,
    pub(in crate::math) side: &'a [(String, Amount)],
}

/// The figures of a run. With `k` boxes a round is one sample of the sum over its boxes
/// (they share the dealer's cards and the shoe, so boxes are not independent samples):
/// means are per box, the interval is the per-round mean's over `k`.
pub(in crate::math) fn report(
    v: &Variant,
    config: &Config,
    strategy: &Strategy,
    t: &Tally,
    shape: &Shape<'_>,
    seconds: f64,
) -> Report {
    let n = t.rounds as f64;
    let k = f64::from(shape.boxes);
    let hands = n * k;
    let b = shape.stake as f64;
    let mean = t.net as f64 / (hands * b);
    // A round's net in one box's stake: its mean is k × the per-box mean.
    let var = (t.net_sq as f64 / (n * b * b) - (k * mean).powi(2)).max(0.0);
    let sd = var.sqrt();
    let main = MainFigures {
        stake: shape.stake,
        rtp_pct: 100.0 * (1.0 + mean),
        ci95_pct: ci(1.0 + mean, sd / k, n),
        sd_per_round: sd,
        rtp_per_wagered_pct: 100.0 * (1.0 + t.net as f64 / (t.wagered as f64).max(1.0)),
        win: t.wins as f64 / hands,
        push: t.pushes as f64 / hands,
        lose: (hands - (t.wins + t.pushes) as f64) / hands,
        naturals: t.naturals as f64 / hands,
        doubles: t.doubles as f64 / hands,
        splits: t.splits as f64 / hands,
        surrenders: t.surrenders as f64 / hands,
    };
    let side_bets = shape
        .side
        .iter()
        .zip(&t.side)
        .map(|((name, stake), s)| {
            let unit = *stake as f64;
            let mean = s.returned as f64 / (s.staked as f64).max(1.0);
            let var = (s.returned_sq as f64 / (n * unit * unit) - (k * mean).powi(2)).max(0.0);
            SideFigures {
                name: name.clone(),
                stake: *stake,
                rtp_pct: 100.0 * mean,
                ci95_pct: ci(mean, var.sqrt() / k, n),
                sd_per_round: var.sqrt(),
                hit_frequency: s.hits as f64 / hands,
            }
        })
        .collect();
    Report {
        variant: v.name.clone(),
        rounds: t.rounds,
        boxes: shape.boxes,
        threads: config.threads,
        seed: config.seed,
        strategy: METHOD,
        infinite_deck_rtp_pct: 100.0 * strategy.infinite_deck_rtp,
        main,
        side_bets,
        seconds,
        rounds_per_second: n / seconds.max(1e-9),
    }
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let m = &r.main;
    let mut out = format!(
        "{}: {} rounds, {} thread(s), seed {} ({:.1} s, {:.0} rounds/s)\n",
        r.variant, r.rounds, r.threads, r.seed, r.seconds, r.rounds_per_second
    );
    if r.boxes > 1 {
        out += &format!(
            "  one player on {} boxes: figures per box, SDs of a round's result (all boxes) in one box's stake\n",
            r.boxes
        );
    }
    out += &format!("  strategy: {}\n", r.strategy);
    out += &format!(
        "  strategy's RTP on an infinite deck (computed): {:.3} %\n",
        r.infinite_deck_rtp_pct
    );
    out += &format!(
        "  main game (stake {}): RTP {:.3} % (95 % CI {:.3}–{:.3} %), SD {:.3} a round, {:.3} % per amount wagered\n",
        m.stake, m.rtp_pct, m.ci95_pct[0], m.ci95_pct[1], m.sd_per_round, m.rtp_per_wagered_pct
    );
    out += &format!(
        "    rounds won {:.2} %, pushed {:.2} %, lost {:.2} %; per round: naturals {:.4}, doubles {:.4}, splits {:.4}, surrenders {:.4}\n",
        100.0 * m.win, 100.0 * m.push, 100.0 * m.lose, m.naturals, m.doubles, m.splits, m.surrenders
    );
    for s in &r.side_bets {
        out += &format!(
            "  {} (stake {}): RTP {:.3} % (95 % CI {:.3}–{:.3} %), SD {:.3} a round, hits {:.4} %\n",
            s.name,
            s.stake,
            s.rtp_pct,
            s.ci95_pct[0],
            s.ci95_pct[1],
            s.sd_per_round,
            100.0 * s.hit_frequency
        );
    }
    out
}
