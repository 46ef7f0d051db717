//! A thread's integer tallies: what each settled round adds, read from the engine's
//! settlement (`Engine::settle_with`) or, in a common draw, from its result. Apart from
//! the round loop, since the common draw's loop adds to the same tallies; kept integer so
//! threads sum them exactly, in thread order.

use crate::engine::{
    BetKind, Engine, Outcome, RoundResult, SettledBet, SettledHand, SettledKind, SettlementSink,
};

/// One thread's integer tallies (a common draw's: per box, squares per round).
#[derive(Debug, Clone, Default)]
pub(in crate::math) struct Tally {
    pub(in crate::math) rounds: u64,
    pub(in crate::math) net: i64,
    pub(in crate::math) net_sq: u128,
    pub(in crate::math) wagered: i64,
    pub(in crate::math) wins: u64,
    pub(in crate::math) pushes: u64,
    pub(in crate::math) naturals: u64,
    pub(in crate::math) doubles: u64,
    pub(in crate::math) splits: u64,
    pub(in crate::math) surrenders: u64,
    pub(in crate::math) side: Vec<SideTally>,
    /// Each side bet's return in the round being added (scratch, not summed).
    // Seen by the round loop only because it builds its tally with `..Tally::default()`.
    pub(super) round_side: Vec<i64>,
}

/// One side bet's tallies.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::math) struct SideTally {
    pub(in crate::math) staked: i64,
    pub(in crate::math) returned: i64,
    pub(in crate::math) returned_sq: u128,
    pub(in crate::math) hits: u64,
}

impl Tally {
    /// An empty tally for `sides` side bets.
    pub(in crate::math) fn for_sides(sides: usize) -> Tally {
        Tally {
            side: vec![SideTally::default(); sides],
            ..Tally::default()
        }
    }

    pub(in crate::math) fn add(&mut self, other: &Tally) {
        self.rounds += other.rounds;
        self.net += other.net;
        self.net_sq += other.net_sq;
        self.wagered += other.wagered;
        self.wins += other.wins;
        self.pushes += other.pushes;
        self.naturals += other.naturals;
        self.doubles += other.doubles;
        self.splits += other.splits;
        self.surrenders += other.surrenders;
        self.side.resize(other.side.len(), SideTally::default());
        for (a, b) in self.side.iter_mut().zip(&other.side) {
            a.staked += b.staked;
            a.returned += b.returned;
            a.returned_sq += b.returned_sq;
            a.hits += b.hits;
        }
    }

    /// Adds a settled round from its result (the common draw's, which always records it).
    /// Shares and counts are per bet (per box in a common draw);
    /// squares are of the round's sums, as a round's boxes are one sample.
    pub(in crate::math) fn settle_result(&mut self, r: &RoundResult, side_names: &[String]) {
        self.rounds += 1;
        self.round_side.clear();
        self.round_side.resize(self.side.len(), 0);
        let mut net = 0i64;
        for b in &r.bets {
            match &b.kind {
                BetKind::Main => {
                    let box_net = b.returned - b.staked;
                    net += box_net;
                    self.wagered += b.staked;
                    match box_net.cmp(&0) {
                        std::cmp::Ordering::Greater => self.wins += 1,
                        std::cmp::Ordering::Equal => self.pushes += 1,
                        std::cmp::Ordering::Less => {}
                    }
                }
                BetKind::Insurance => {}
                BetKind::Side(name) => {
                    if let Some(i) = side_names.iter().position(|n| n == name) {
                        let t = &mut self.side[i];
                        t.staked += b.staked;
                        t.returned += b.returned;
                        t.hits += u64::from(b.returned > 0);
                        self.round_side[i] += b.returned;
                    }
                }
            }
        }
        self.net += net;
        self.net_sq += u128::from(net.unsigned_abs()).pow(2);
        for (t, returned) in self.side.iter_mut().zip(&self.round_side) {
            t.returned_sq += u128::from(returned.unsigned_abs()).pow(2);
        }
        // A box's split hands follow each other in the result.
        let boxes = usize::from(!r.hands.is_empty())
            + r.hands
                .windows(2)
                .filter(|w| w[0].seat != w[1].seat)
                .count();
        self.splits += (r.hands.len() - boxes) as u64;
        for h in &r.hands {
            self.doubles += u64::from(h.doubled);
            match h.outcome {
                Outcome::Blackjack | Outcome::Caribbean21 => self.naturals += 1,
                Outcome::Surrender => self.surrenders += 1,
                _ => {}
            }
        }
    }

    /// Tallies the round the engine has just settled (read through `Engine::settle_with`,
    /// the code that writes the table's settlement record). `slots` maps a variant's side
    /// bet index to its tally.
    pub(super) fn settle(&mut self, engine: &Engine, slots: &[Option<usize>]) {
        let mut sink = RoundSink {
            tally: self,
            slots,
            hands: 0,
        };
        engine.settle_with(&mut sink);
        let hands = sink.hands;
        self.rounds += 1;
        self.splits += hands.saturating_sub(1);
    }
}

/// One round's settlement into the tally.
struct RoundSink<'a> {
    tally: &'a mut Tally,
    slots: &'a [Option<usize>],
    hands: u64,
}

impl SettlementSink for RoundSink<'_> {
    #[inline]
    fn hand(&mut self, h: &SettledHand<'_>) {
        let t = &mut *self.tally;
        self.hands += 1;
        t.doubles += u64::from(h.doubled);
        match h.outcome {
            Outcome::Blackjack | Outcome::Caribbean21 => t.naturals += 1,
            Outcome::Surrender => t.surrenders += 1,
            _ => {}
        }
    }

    #[inline]
    fn bet(&mut self, b: &SettledBet<'_>) {
        let t = &mut *self.tally;
        match b.kind {
            SettledKind::Main => {
                let net = b.returned - b.staked;
                t.net += net;
                t.net_sq += u128::from(net.unsigned_abs()).pow(2);
                t.wagered += b.staked;
                // Counted, not branched on: as random as the cards.
                t.wins += u64::from(net > 0);
                t.pushes += u64::from(net == 0);
            }
            SettledKind::Insurance => {}
            SettledKind::Side { index, .. } => {
                if let Some(&Some(i)) = self.slots.get(usize::from(index)) {
                    let s = &mut t.side[i];
                    s.staked += b.staked;
                    s.returned += b.returned;
                    s.returned_sq += u128::from(b.returned.unsigned_abs()).pow(2);
                    s.hits += u64::from(b.returned > 0);
                }
            }
        }
    }
}
