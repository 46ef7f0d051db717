//! Simulated play: a deterministic generator of legal table sessions, for benchmarks,
//! property tests and demos. It plays the part of the shoe, the players and the bonus game,
//! always sending what the engine says it expects next; randomness is a seeded PRNG here,
//! never inside the engine.

use crate::cards::Card;
use crate::engine::variant::DealMode;
use crate::engine::{Action, BehindBet, Engine, Expectation, Input, PlayerBets, SeatBets, Variant};
use crate::money::Amount;
use std::sync::Arc;

/// A small deterministic PRNG (xorshift64*): the same seed gives the same session.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// How the simulated players play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Fixed: the given number of seats from seat 1, main bet 100 each, no side bets, no
    /// insurance, hit below 17 then stand. Every round costs about the same.
    Steady {
        /// Seats in play each round.
        seats: u8,
    },
    /// Random seats, bets, side bets and any allowed decision, to explore the rules. In a
    /// common draw: a few players, some of whom let the timer run out.
    Random,
    /// A common draw with this many players, each betting 100 on every box, hitting below
    /// 17 and standing otherwise, all deciding in time.
    Crowd {
        /// Players.
        players: usize,
    },
}

/// Generates a legal session against an engine.
#[derive(Debug, Clone)]
pub struct TableSim {
    variant: Arc<Variant>,
    rng: Rng,
    style: Style,
    /// The shoe, last card first (so `pop` deals).
    shoe: Vec<Input>,
    /// Common draw: the decisions still to send in this step, last first.
    queue: Vec<Input>,
    /// The tick clock, in ms.
    now: u64,
}

impl TableSim {
    /// A session generator for `variant`.
    pub fn new(variant: Arc<Variant>, seed: u64, style: Style) -> TableSim {
        let mut sim = TableSim {
            variant,
            rng: Rng::new(seed),
            style,
            shoe: Vec::new(),
            queue: Vec::new(),
            now: 0,
        };
        sim.new_shoe();
        sim
    }

    /// A freshly shuffled shoe, with the cut card at three quarters if the game uses one.
    fn new_shoe(&mut self) {
        let n = usize::from(self.variant.shoe.decks) * 52;
        let mut cards: Vec<Input> = (0..n)
            .filter_map(|i| Card::from_index(i % 52).map(Input::Card))
            .collect();
        for i in (1..cards.len()).rev() {
            let j = self.rng.below(i + 1);
            cards.swap(i, j);
        }
        if self.variant.shoe.cut_card {
            cards.insert(n / 4, Input::CutCard);
        }
        self.shoe = cards;
    }

    fn deal(&mut self) -> Input {
        if self.shoe.is_empty() {
            // Only a pathological session empties a shoe; start another rather than stall.
            self.new_shoe();
        }
        self.shoe.pop().unwrap_or(Input::Shuffle)
    }

    /// The next input for `engine`: always one the engine expects.
    pub fn next_input(&mut self, engine: &Engine) -> Input {
        match engine.expectation() {
            Expectation::Bets => {
                if self.variant.shoe.new_shoe_every_round {
                    self.new_shoe();
                }
                self.queue.clear();
                if self.variant.deal.mode == DealMode::CommonDraw {
                    Input::PlayerBets(self.player_bets())
                } else {
                    Input::Bets(self.bets())
                }
            }
            Expectation::PlayersInsurance { deadline_ms, .. } => {
                let open = engine.open_insurance();
                match (self.style, open.first()) {
                    (Style::Random, Some((player, seat))) if self.rng.below(3) > 0 => {
                        Input::PlayerDecision {
                            player: player.clone(),
                            seat: *seat,
                            action: [Action::Insurance, Action::NoInsurance][self.rng.below(2)],
                        }
                    }
                    _ => self.tick_to(deadline_ms),
                }
            }
            Expectation::PlayerDecisions { deadline_ms, .. } => {
                if self.queue.is_empty() {
                    self.fill_queue(engine);
                }
                match self.queue.pop() {
                    Some(input) => input,
                    None => self.tick_to(deadline_ms),
                }
            }
            Expectation::DrawCard { .. } => {
                self.queue.clear();
                self.deal()
            }
            Expectation::Shuffle => {
                self.new_shoe();
                Input::Shuffle
            }
            Expectation::RevealCard
            | Expectation::BurnCards(_)
            | Expectation::DealCard(_)
            | Expectation::HandCard { .. }
            | Expectation::DealerCard => self.deal(),
            Expectation::InsuranceAnswers { seats, behind } if seats.is_empty() => {
                let (player, seat) = behind.into_iter().next().unwrap_or_default();
                let action = match self.style {
                    Style::Random if self.rng.below(2) == 0 => Action::Insurance,
                    _ => Action::NoInsurance,
                };
                Input::PlayerDecision {
                    player,
                    seat,
                    action,
                }
            }
            Expectation::InsuranceAnswers { seats, .. } => {
                let seat = seats[0];
                let action = match self.style {
                    Style::Steady { .. } | Style::Crowd { .. } => Action::NoInsurance,
                    Style::Random => {
                        let pick = [Action::Insurance, Action::NoInsurance, Action::EvenMoney]
                            [self.rng.below(3)];
                        if engine.allows_insurance_answer(seat, pick) {
                            pick
                        } else {
                            Action::NoInsurance
                        }
                    }
                };
                Input::Decision { seat, action }
            }
            Expectation::Decision {
                seat,
                hand,
                allowed,
            } => match self.style {
                Style::Steady { .. } | Style::Crowd { .. } => {
                    if engine.hand_total(seat, hand).is_some_and(|t| t < 17) {
                        self.deal()
                    } else {
                        Input::Decision {
                            seat,
                            action: Action::Stand,
                        }
                    }
                }
                Style::Random => {
                    let pick = self.rng.below(allowed.len() + 2);
                    match allowed.get(pick) {
                        Some(&action) => Input::Decision { seat, action },
                        None => self.deal(),
                    }
                }
            },
            Expectation::Bonus(seats) => {
                let seat = seats[0];
                let options = engine.bonus_multipliers(seat).unwrap_or(&[]);
                let multiplier = options
                    .get(self.rng.below(options.len()))
                    .copied()
                    .unwrap_or(1);
                Input::Bonus { seat, multiplier }
            }
        }
    }

    fn tick_to(&mut self, deadline_ms: u64) -> Input {
        self.now = self.now.max(deadline_ms);
        Input::Tick { now_ms: self.now }
    }

    /// Queues this step's decisions (last first); a random player sometimes stays silent.
    fn fill_queue(&mut self, engine: &Engine) {
        let open = engine.open_decisions();
        let mut queued = Vec::with_capacity(open.len());
        for d in open {
            let action = match self.style {
                Style::Random => {
                    if self.rng.below(6) == 0 {
                        continue;
                    }
                    d.allowed[self.rng.below(d.allowed.len())]
                }
                _ if d.total < 17 => Action::Hit,
                _ => Action::Stand,
            };
            queued.push(Input::PlayerDecision {
                player: d.player,
                seat: d.seat,
                action,
            });
        }
        queued.reverse();
        self.queue = queued;
    }

    fn player_bets(&mut self) -> Vec<PlayerBets> {
        let v = Arc::clone(&self.variant);
        let players = match self.style {
            Style::Crowd { players } => players,
            Style::Steady { seats } => usize::from(seats),
            Style::Random => 1 + self.rng.below(4),
        };
        (0..players)
            .map(|i| {
                let mut boxes = Vec::new();
                for seat in 1..=v.deal.seats {
                    if matches!(self.style, Style::Random) && self.rng.below(3) == 0 && seat > 1 {
                        continue;
                    }
                    let mut side = Vec::new();
                    if matches!(self.style, Style::Random) {
                        for sb in &v.side_bets {
                            let needs = sb.requires_bet.as_ref();
                            if self.rng.below(3) == 0 && needs.is_none() {
                                side.push((sb.name.clone(), sb.limits.min));
                            }
                        }
                    }
                    boxes.push(SeatBets {
                        seat,
                        main: 100.clamp(v.limits.min, v.limits.max),
                        side,
                        ..SeatBets::default()
                    });
                }
                PlayerBets {
                    player: format!("p{i:05}"),
                    boxes,
                }
            })
            .collect()
    }

    fn bets(&mut self) -> Vec<SeatBets> {
        let v = Arc::clone(&self.variant);
        match self.style {
            Style::Steady { seats } => (1..=seats.min(v.deal.seats))
                .map(|seat| SeatBets {
                    seat,
                    main: 100.clamp(v.limits.min, v.limits.max),
                    ..SeatBets::default()
                })
                .collect(),
            Style::Random | Style::Crowd { .. } => {
                let mut bets = Vec::new();
                for seat in 1..=v.deal.seats {
                    if self.rng.below(2) == 0 && !(seat == v.deal.seats && bets.is_empty()) {
                        continue;
                    }
                    let span = (v.limits.max - v.limits.min).min(1000) + 1;
                    let main = v.limits.min + self.rng.below(span as usize) as Amount;
                    let mut side = Vec::new();
                    for sb in &v.side_bets {
                        if self.rng.below(2) == 0 {
                            let span = (sb.limits.max - sb.limits.min).min(500) + 1;
                            let amount = sb.limits.min + self.rng.below(span as usize) as Amount;
                            side.push((sb.name.clone(), amount));
                        }
                    }
                    let mut behind = Vec::new();
                    if v.betting.play_behind {
                        for k in 0..self.rng.below(3) {
                            let side = v
                                .side_bets
                                .iter()
                                .filter(|sb| sb.requires_bet.is_none() && self.rng.below(2) == 0)
                                .map(|sb| (sb.name.clone(), sb.limits.min))
                                .collect();
                            behind.push(BehindBet {
                                player: format!("behind-{seat}-{k}"),
                                main: v.limits.min + self.rng.below(200) as Amount,
                                side,
                                follow_double: self.rng.below(2) == 0,
                                follow_split: self.rng.below(2) == 0,
                                timer_ms: 0,
                            });
                        }
                    }
                    bets.push(SeatBets {
                        seat,
                        main,
                        side,
                        player: v.betting.play_behind.then(|| format!("seated-{seat}")),
                        behind,
                        ..SeatBets::default()
                    });
                }
                bets
            }
        }
    }
}
