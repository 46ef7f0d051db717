//! The sheets' bet-time balance rules (`[funds]` in the variant), as pure functions: what
//! a round's bets become when a player's balance cannot cover them. The service in front of
//! the engine applies them (the replay does too, `replay`); the engine never sees a balance.
//!
//! A player's lines are funded in a fixed order: seat plays (main bets, with Deluxe's
//! second seat), then special (side) bets, then bets behind other players' seats with their
//! follow-double / follow-split instructions. Each step sees what the steps before it left.

use super::rules::FundsRefusal;
use crate::engine::variant::{
    FundsRules, RebetSplit, SecondSeat, SecondSeatSplit, ShortFollow, ShortRebet, ShortSpecials,
    Variant,
};
use crate::engine::{BehindBet, PlayerBets, RoundResult, SeatBets, SeatId};
use crate::money::Amount;
use std::collections::HashMap;

/// What a `[funds]` rule changed or refused, for the player's answer and the replay's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The account: a player id, or a seat number for a seat without one.
    pub account: String,
    /// The seat (box) concerned.
    pub seat: Option<SeatId>,
    /// The setting that applied (`second_seat`, `short_follow`, …), or `insufficient_funds`
    /// for a bet refused whole.
    pub rule: &'static str,
    /// What it did (`mirrored`, `split_evenly`, `no_follow_double`, `dropped`, `clipped`,
    /// `below_minimum`, `refused`, `hit`, `stand`).
    pub result: &'static str,
    /// The bet line concerned, where one is (`pair`, `lucky_ladies`).
    pub bet: Option<String>,
    /// The amount the rule arrived at (a seat play, a clipped re-bet), where one is.
    pub amount: Option<Amount>,
}

impl Note {
    fn new(account: &str, seat: Option<SeatId>, rule: &'static str, result: &'static str) -> Note {
        Note {
            account: account.to_string(),
            seat,
            rule,
            result,
            bet: None,
            amount: None,
        }
    }

    fn amount(self, amount: Amount) -> Note {
        Note {
            amount: Some(amount),
            ..self
        }
    }

    fn bet(self, bet: &str) -> Note {
        Note {
            bet: Some(bet.to_string()),
            ..self
        }
    }
}

/// A round's bets after the balance rules: what reaches the engine and what it costs whom.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Funded<T> {
    /// The bets for the engine.
    pub bets: T,
    /// What each account stakes now (to be debited before the bets reach the engine).
    pub debits: Vec<(String, Amount)>,
    /// What each account must keep back for its follow instructions (debited only if the
    /// seated player doubles or splits).
    pub reserved: Vec<(String, Amount)>,
    /// What the rules changed or refused.
    pub notes: Vec<Note>,
}

/// Special (side) bets by name, as the engine takes them.
pub type Sides = Vec<(String, Amount)>;

/// The account a seat's bets are paid from: the seated player, or the seat's number.
pub fn seat_account(b: &SeatBets) -> String {
    b.player.clone().unwrap_or_else(|| b.seat.to_string())
}

/// What a settled round staked and returned per account: a bet's player, or for a seat's
/// own bets `seat_of(seat)` (the seated player's id or the seat's number).
pub fn round_by_account(
    r: &RoundResult,
    seat_of: impl Fn(SeatId) -> Option<String>,
) -> HashMap<String, (Amount, Amount)> {
    let mut out: HashMap<String, (Amount, Amount)> = HashMap::new();
    for b in &r.bets {
        let account = match &b.player {
            Some(p) => p.to_string(),
            None => seat_of(b.seat).unwrap_or_else(|| b.seat.to_string()),
        };
        let e = out.entry(account).or_default();
        e.0 += b.staked;
        e.1 += b.returned;
    }
    out
}

/// `amount` rounded down to a multiple of `funds.bet_unit`.
pub fn round_down(rules: &FundsRules, amount: Amount) -> Amount {
    let unit = rules.bet_unit.max(1);
    amount.max(0) / unit * unit
}

/// Deluxe's second seat (`second_seat = "mirror_or_split"`): a player on two seats placed
/// `a` on one and `b` on the other. The extra plays on the higher one are mirrored on the other if the balance covers both
/// (`available`); else the plays are split evenly between the seats
/// (`second_seat_split`: the common play plus half the extra, or half the balance; each
/// seat's play rounded down to `bet_unit`; an odd unit is not placed). The result is each
/// seat's play; refused when even the even split is more than the balance.
pub fn seat_plays(
    rules: &FundsRules,
    available: Amount,
    a: Amount,
    b: Amount,
) -> Result<(Amount, &'static str), FundsRefusal> {
    let (lo, hi) = (a.min(b), a.max(b));
    if 2 * hi <= available {
        return Ok((hi, "mirrored"));
    }
    let even = match rules.second_seat_split {
        SecondSeatSplit::Extra => lo + round_down(rules, (hi - lo) / 2),
        // Never below the lower play the player placed.
        SecondSeatSplit::Balance => round_down(rules, available / 2).min(hi).max(lo),
    };
    if 2 * even <= available {
        return Ok((even, "split_evenly"));
    }
    Err(FundsRefusal::InsufficientFunds {
        needed: 2 * even,
        available,
    })
}

/// The follow instructions of a bet behind (main `main`) that `available` can cover, and
/// what they keep back: following a double stakes another `main` on each double the seated
/// hand may make (one per hand here, `double.max_per_hand` where more); following a split
/// another `main` on the second hand, and its double too when both are followed. The double
/// is served first (the sheet lists it first). A follow that does not fit falls back
/// (`short_follow = "fall_back"`: the double's card is a hit for the bet behind; only the
/// first split hand is followed) or refuses the bet behind (`"refuse"`).
pub fn follows(
    v: &Variant,
    available: Amount,
    bet: &BehindBet,
) -> Result<(BehindBet, Amount, Vec<&'static str>), FundsRefusal> {
    let rules = &v.funds;
    let doubles = Amount::from(v.double.max_per_hand.max(1));
    let mut out = bet.clone();
    let mut reserve = 0;
    let mut fell_back = Vec::new();
    let mut needed = 0;
    if bet.follow_double {
        let cost = bet.main * doubles;
        needed += cost;
        if cost <= available {
            reserve += cost;
        } else {
            out.follow_double = false;
            fell_back.push("no_follow_double");
        }
    }
    if bet.follow_split {
        let again = if out.follow_double && v.double.after_split {
            bet.main * doubles
        } else {
            0
        };
        let cost = bet.main + again;
        needed += cost;
        if reserve + cost <= available {
            reserve += cost;
        } else {
            out.follow_split = false;
            fell_back.push("no_follow_split");
        }
    }
    if !fell_back.is_empty() && rules.short_follow == ShortFollow::Refuse {
        return Err(FundsRefusal::InsufficientFunds { needed, available });
    }
    Ok((out, reserve, fell_back))
}

/// The special (side) bets `sides` with `available` left after the main bets: all of them
/// when they fit; else refused (`short_specials = "refuse"`) or each one that does not fit
/// in what is left, in order, dropped (`"drop"`). Returns the kept bets and the dropped names.
pub fn specials(
    rules: &FundsRules,
    available: Amount,
    sides: &[(String, Amount)],
) -> Result<(Sides, Vec<String>), FundsRefusal> {
    let total: Amount = sides.iter().map(|(_, a)| a).sum();
    if total <= available {
        return Ok((sides.to_vec(), Vec::new()));
    }
    if rules.short_specials == ShortSpecials::Refuse {
        return Err(FundsRefusal::InsufficientFunds {
            needed: total,
            available,
        });
    }
    let mut left = available;
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (name, amount) in sides {
        if *amount <= left {
            left -= amount;
            kept.push((name.clone(), *amount));
        } else {
            dropped.push(name.clone());
        }
    }
    Ok((kept, dropped))
}

/// Ultimate's automatic re-bet: one account's seats (`seats`, its previous round's bets) with
/// `available` on the balance. Under `short_rebet = "maximum_available"` each seat's main
/// bet is the previous one or, when short, the balance shared evenly between the account's
/// seats and rounded down to `bet_unit`; a seat whose main would fall below the table
/// minimum is not re-bet (the seat sits the round out, as a Deluxe seat "without coin
/// balance for the minimum seat play"). Side bets are re-bet with what is left, each clipped
/// the same way and dropped below its own minimum; bets behind are left to the normal rules.
/// Under `"refuse"` the bets are returned unchanged (the normal rules then refuse them).
pub fn rebet(
    v: &Variant,
    account: &str,
    available: Amount,
    seats: &mut Vec<SeatBets>,
) -> Vec<Note> {
    let rules = &v.funds;
    let mut notes = Vec::new();
    if rules.short_rebet == ShortRebet::Refuse || seats.is_empty() {
        return notes;
    }
    if rules.rebet_split == RebetSplit::Proportional {
        rebet_proportionally(v, account, available, seats, &mut notes);
        return notes;
    }
    let share = round_down(rules, available / seats.len() as Amount);
    let mut left = available;
    seats.retain_mut(|b| {
        if b.main > share {
            if share < v.limits.min {
                notes.push(
                    Note::new(account, Some(b.seat), "short_rebet", "below_minimum").amount(share),
                );
                return false;
            }
            b.main = share;
            notes.push(Note::new(account, Some(b.seat), "short_rebet", "clipped").amount(share));
        }
        left -= b.main;
        true
    });
    for b in seats.iter_mut() {
        let mut kept = Vec::with_capacity(b.side.len());
        for (name, amount) in b.side.drain(..) {
            let min = v
                .side_bet_index(&name)
                .map_or(1, |i| v.side_bets[i].limits.min);
            let clipped = (amount).min(round_down(rules, left));
            if clipped < min {
                notes.push(
                    Note::new(account, Some(b.seat), "short_rebet", "below_minimum")
                        .bet(&name)
                        .amount(clipped),
                );
                continue;
            }
            if clipped < amount {
                notes.push(
                    Note::new(account, Some(b.seat), "short_rebet", "clipped")
                        .bet(&name)
                        .amount(clipped),
                );
            }
            left -= clipped;
            kept.push((name, clipped));
        }
        b.side = kept;
    }
    notes
}

/// `rebet_split = "proportional"`: when the re-bet's lines together exceed `available`,
/// each (main and specials, every seat) is scaled by `available` / their total and rounded
/// down to `bet_unit`; a main bet that falls below the table minimum is not re-bet (its
/// specials with it), a special below its own minimum is dropped.
fn rebet_proportionally(
    v: &Variant,
    account: &str,
    available: Amount,
    seats: &mut Vec<SeatBets>,
    notes: &mut Vec<Note>,
) {
    let rules = &v.funds;
    let total: Amount = seats
        .iter()
        .map(|b| b.main + b.side.iter().map(|(_, a)| *a).sum::<Amount>())
        .sum();
    if total <= available {
        return;
    }
    // i128: amounts up to i64 times a balance up to i64 do not overflow.
    let scale = |amount: Amount| {
        let scaled = i128::from(amount) * i128::from(available.max(0)) / i128::from(total);
        round_down(rules, Amount::try_from(scaled).unwrap_or(0))
    };
    seats.retain_mut(|b| {
        let main = scale(b.main);
        if main < v.limits.min {
            notes.push(
                Note::new(account, Some(b.seat), "short_rebet", "below_minimum").amount(main),
            );
            return false;
        }
        if main < b.main {
            notes.push(Note::new(account, Some(b.seat), "short_rebet", "clipped").amount(main));
        }
        b.main = main;
        let mut kept = Vec::with_capacity(b.side.len());
        for (name, amount) in b.side.drain(..) {
            let min = v
                .side_bet_index(&name)
                .map_or(1, |i| v.side_bets[i].limits.min);
            let clipped = scale(amount);
            let note = |result| {
                Note::new(account, Some(b.seat), "short_rebet", result)
                    .bet(&name)
                    .amount(clipped)
            };
            if clipped < min {
                notes.push(note("below_minimum"));
                continue;
            }
            if clipped < amount {
                notes.push(note("clipped"));
            }
            kept.push((name, clipped));
        }
        b.side = kept;
        true
    });
}

/// A seat game's bets (`Input::Bets`) after the balance rules. `available` answers what an
/// account's balance still covers (`None`: unknown, unlimited; its bets pass unchanged).
/// Each account's seats are funded first (second seat, then specials; refused whole when
/// the balance cannot cover them, and the bets behind those seats are returned), then the
/// bets behind seats (main, specials, follows).
pub fn seat_bets(
    v: &Variant,
    available: &dyn Fn(&str) -> Option<Amount>,
    mut bets: Vec<SeatBets>,
) -> Funded<Vec<SeatBets>> {
    let mut out = Funded::default();
    let mut left: HashMap<String, Amount> = HashMap::new();
    let mut refused: Vec<SeatId> = Vec::new();
    let mut accounts: Vec<String> = Vec::new();
    for b in &bets {
        let a = seat_account(b);
        if !accounts.contains(&a) {
            accounts.push(a);
        }
    }
    for account in &accounts {
        let idx: Vec<usize> = (0..bets.len())
            .filter(|&i| seat_account(&bets[i]) == *account)
            .collect();
        let stakes: Amount = idx
            .iter()
            .map(|&i| bets[i].main + bets[i].side.iter().map(|(_, a)| a).sum::<Amount>())
            .sum();
        let Some(avail) = available(account) else {
            out.debits.push((account.clone(), stakes));
            continue;
        };
        match fund_seats(v, account, avail, &mut bets, &idx) {
            Ok((spent, notes)) => {
                out.notes.extend(notes);
                out.debits.push((account.clone(), spent));
                left.insert(account.clone(), avail - spent);
            }
            Err(_) => {
                for &i in &idx {
                    out.notes.push(Note::new(
                        account,
                        Some(bets[i].seat),
                        "insufficient_funds",
                        "refused",
                    ));
                    refused.push(bets[i].seat);
                }
            }
        }
    }
    // The sheet: "any play behind or pair coins on the seat(s) will be returned".
    for b in bets.iter().filter(|b| refused.contains(&b.seat)) {
        for bb in &b.behind {
            out.notes.push(Note::new(
                &bb.player,
                Some(b.seat),
                "insufficient_funds",
                "returned",
            ));
        }
    }
    bets.retain(|b| !refused.contains(&b.seat));
    for b in &mut bets {
        let seat = b.seat;
        let mut kept = Vec::with_capacity(b.behind.len());
        for bb in b.behind.drain(..) {
            let account = bb.player.clone();
            let stakes = bb.main + bb.side.iter().map(|(_, a)| a).sum::<Amount>();
            let avail = match left.get(&account) {
                Some(l) => Some(*l),
                None => available(&account),
            };
            let Some(avail) = avail else {
                out.debits.push((account, stakes));
                kept.push(bb);
                continue;
            };
            match fund_behind(v, &account, seat, avail, bb) {
                Ok((bet, spent, reserve, notes)) => {
                    out.notes.extend(notes);
                    out.debits.push((account.clone(), spent));
                    if reserve > 0 {
                        out.reserved.push((account.clone(), reserve));
                    }
                    left.insert(account, avail - spent - reserve);
                    kept.push(bet);
                }
                Err(_) => {
                    out.notes.push(Note::new(
                        &account,
                        Some(seat),
                        "insufficient_funds",
                        "refused",
                    ));
                }
            }
        }
        b.behind = kept;
    }
    out.bets = bets;
    out
}

/// One account's seats (`idx` into `bets`) with `avail`: what they stake, or a refusal.
fn fund_seats(
    v: &Variant,
    account: &str,
    avail: Amount,
    bets: &mut [SeatBets],
    idx: &[usize],
) -> Result<(Amount, Vec<Note>), FundsRefusal> {
    let mut notes = Vec::new();
    let mirror = v.funds.second_seat == SecondSeat::MirrorOrSplit;
    let mains = if let (&[i, j], true) = (idx, mirror) {
        let (a, b) = (bets[i].main, bets[j].main);
        let (play, how) = seat_plays(&v.funds, avail, a, b)?;
        if a != b {
            for &k in &[i, j] {
                notes.push(Note::new(account, Some(bets[k].seat), "second_seat", how).amount(play));
            }
            bets[i].main = play;
            bets[j].main = play;
        }
        2 * play
    } else {
        idx.iter().map(|&i| bets[i].main).sum()
    };
    if mains > avail {
        return Err(FundsRefusal::InsufficientFunds {
            needed: mains,
            available: avail,
        });
    }
    let mut left = avail - mains;
    for &i in idx {
        let (kept, dropped) = specials(&v.funds, left, &bets[i].side)?;
        for name in dropped {
            notes.push(
                Note::new(account, Some(bets[i].seat), "short_specials", "dropped").bet(&name),
            );
        }
        left -= kept.iter().map(|(_, a)| a).sum::<Amount>();
        bets[i].side = kept;
    }
    Ok((avail - left, notes))
}

/// A bet behind `seat` by `account` with `avail`: the bet, what it stakes now, what it
/// keeps back for its follows, and the notes.
fn fund_behind(
    v: &Variant,
    account: &str,
    seat: SeatId,
    avail: Amount,
    bb: BehindBet,
) -> Result<(BehindBet, Amount, Amount, Vec<Note>), FundsRefusal> {
    let mut notes = Vec::new();
    if bb.main > avail {
        return Err(FundsRefusal::InsufficientFunds {
            needed: bb.main,
            available: avail,
        });
    }
    let (kept, dropped) = specials(&v.funds, avail - bb.main, &bb.side)?;
    for name in dropped {
        notes.push(Note::new(account, Some(seat), "short_specials", "dropped").bet(&name));
    }
    let spent = bb.main + kept.iter().map(|(_, a)| a).sum::<Amount>();
    let bb = BehindBet { side: kept, ..bb };
    let (bet, reserve, fell_back) = follows(v, avail - spent, &bb)?;
    for result in fell_back {
        notes.push(Note::new(account, Some(seat), "short_follow", result));
    }
    Ok((bet, spent, reserve, notes))
}

/// A common draw's bets (`Input::PlayerBets`) after the balance rules. `let_it_play` answers
/// what a box riding Let it play stakes (its last main return). Each player's main bets must
/// fit together, else the player's bets are refused whole; then the specials.
pub fn player_bets(
    v: &Variant,
    available: &dyn Fn(&str) -> Option<Amount>,
    let_it_play: &dyn Fn(&str, SeatId) -> Amount,
    bets: Vec<PlayerBets>,
) -> Funded<Vec<PlayerBets>> {
    let mut out: Funded<Vec<PlayerBets>> = Funded::default();
    for mut p in bets {
        let main_of = |b: &SeatBets| {
            if b.let_it_play {
                let_it_play(&p.player, b.seat)
            } else {
                b.main
            }
        };
        let mains: Amount = p.boxes.iter().map(main_of).sum();
        let Some(avail) = available(&p.player) else {
            let sides: Amount = p
                .boxes
                .iter()
                .flat_map(|b| b.side.iter().map(|(_, a)| *a))
                .sum();
            out.debits.push((p.player.clone(), mains + sides));
            out.bets.push(p);
            continue;
        };
        if mains > avail {
            out.notes
                .push(Note::new(&p.player, None, "insufficient_funds", "refused"));
            continue;
        }
        let mut left = avail - mains;
        let mut notes = Vec::new();
        let mut refused = false;
        for b in &mut p.boxes {
            match specials(&v.funds, left, &b.side) {
                Ok((kept, dropped)) => {
                    for name in dropped {
                        notes.push(
                            Note::new(&p.player, Some(b.seat), "short_specials", "dropped")
                                .bet(&name),
                        );
                    }
                    left -= kept.iter().map(|(_, a)| a).sum::<Amount>();
                    b.side = kept;
                }
                Err(_) => refused = true,
            }
        }
        if refused {
            out.notes
                .push(Note::new(&p.player, None, "insufficient_funds", "refused"));
            continue;
        }
        // A box left with neither a main bet nor a special is no bet at all.
        p.boxes
            .retain(|b| b.main > 0 || b.let_it_play || !b.side.is_empty());
        out.notes.extend(notes);
        out.debits.push((p.player.clone(), avail - left));
        out.bets.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::rules::tests::variant;

    #[test]
    fn a_second_seat_is_mirrored_when_affordable_and_split_evenly_when_short() {
        let f = variant("deluxe").funds;
        assert_eq!(seat_plays(&f, 200, 100, 0), Ok((100, "mirrored")));
        assert_eq!(seat_plays(&f, 199, 100, 0), Ok((50, "split_evenly")));
        // 40 on both, 60 more on one: 70 each when 140..199 is left.
        assert_eq!(seat_plays(&f, 150, 100, 40), Ok((70, "split_evenly")));
        // An odd extra: the odd unit stays with the player.
        assert_eq!(seat_plays(&f, 30, 25, 0), Ok((12, "split_evenly")));
        assert!(seat_plays(&f, 99, 100, 0).is_err());
        // Equal plays the balance cannot cover are refused.
        assert_eq!(
            seat_plays(&f, 150, 100, 100),
            Err(FundsRefusal::InsufficientFunds {
                needed: 200,
                available: 150
            })
        );
        let mut units = f;
        units.bet_unit = 10;
        assert_eq!(seat_plays(&units, 90, 50, 0), Ok((20, "split_evenly")));
        // "Evenly split" read as the balance shared: half of it on each seat, up to the
        // higher play, never below the lower one; the odd unit stays.
        let mut balance = f;
        balance.second_seat_split = SecondSeatSplit::Balance;
        assert_eq!(seat_plays(&balance, 199, 100, 0), Ok((99, "split_evenly")));
        assert_eq!(seat_plays(&balance, 150, 100, 45), Ok((75, "split_evenly")));
        assert!(
            seat_plays(&balance, 80, 100, 45).is_err(),
            "below the lower play"
        );
    }

    #[test]
    fn as_placed_leaves_unequal_seat_plays_to_the_engine() {
        let v = variant("ultimate");
        let seat = |seat, main| SeatBets {
            seat,
            main,
            player: Some("bob".into()),
            ..SeatBets::default()
        };
        let bets = vec![seat(1, 100), seat(2, 40)];
        let f = seat_bets(&v, &|_| Some(1000), bets.clone());
        assert_eq!(f.bets, bets);
        assert!(f.notes.is_empty());
        assert_eq!(f.debits, vec![("bob".to_string(), 140)]);
    }

    #[test]
    fn follows_fall_back_in_the_sheets_order() {
        let v = variant("deluxe");
        let bet = BehindBet {
            player: "alice".into(),
            main: 50,
            side: Vec::new(),
            follow_double: true,
            follow_split: true,
            timer_ms: 0,
        };
        // Both followed: a double (50), the split's hand (50) and its double (50).
        let (b, reserve, fell) = follows(&v, 150, &bet).expect("falls back");
        assert!(b.follow_double && b.follow_split);
        assert_eq!((reserve, fell.len()), (150, 0));
        let (b, reserve, fell) = follows(&v, 149, &bet).expect("falls back");
        assert!(b.follow_double && !b.follow_split);
        assert_eq!((reserve, fell), (50, vec!["no_follow_split"]));
        let (b, reserve, fell) = follows(&v, 49, &bet).expect("falls back");
        assert!(!b.follow_double && !b.follow_split);
        assert_eq!(reserve, 0);
        assert_eq!(fell, vec!["no_follow_double", "no_follow_split"]);
        // Without following the double, the split's hand alone.
        let split_only = BehindBet {
            follow_double: false,
            ..bet.clone()
        };
        let (b, reserve, _) = follows(&v, 50, &split_only).expect("fits");
        assert!(b.follow_split);
        assert_eq!(reserve, 50);
        let mut strict = v.clone();
        strict.funds.short_follow = ShortFollow::Refuse;
        assert!(follows(&strict, 49, &bet).is_err());
    }

    #[test]
    fn specials_are_refused_whole_or_dropped_one_by_one() {
        let sides = vec![("pair".to_string(), 30), ("21+3".to_string(), 10)];
        let multihand = variant("multihand").funds;
        assert_eq!(
            specials(&multihand, 20, &sides),
            Ok((vec![("21+3".to_string(), 10)], vec!["pair".to_string()]))
        );
        assert_eq!(
            specials(&multihand, 40, &sides),
            Ok((sides.clone(), vec![]))
        );
        let ultimate = variant("ultimate").funds;
        assert!(specials(&ultimate, 39, &sides).is_err());
    }

    #[test]
    fn a_rebet_is_clipped_to_the_maximum_available_and_dropped_below_the_minimum() {
        let v = variant("ultimate");
        let prev = SeatBets {
            seat: 1,
            main: 100,
            side: vec![("21+3".into(), 10)],
            ..SeatBets::default()
        };
        let mut seats = vec![prev.clone()];
        assert!(rebet(&v, "1", 500, &mut seats).is_empty());
        assert_eq!(seats, vec![prev.clone()]);
        let mut seats = vec![prev.clone()];
        let notes = rebet(&v, "1", 105, &mut seats);
        assert_eq!(
            (seats[0].main, seats[0].side.clone()),
            (100, vec![("21+3".into(), 5)])
        );
        assert_eq!(notes[0].result, "clipped");
        let mut seats = vec![prev.clone()];
        rebet(&v, "1", 60, &mut seats);
        assert_eq!((seats[0].main, seats[0].side.len()), (60, 0));
        let mut seats = vec![prev];
        let notes = rebet(&v, "1", 9, &mut seats);
        assert!(seats.is_empty());
        assert_eq!(notes[0].result, "below_minimum");
    }

    #[test]
    fn seat_bets_fund_seats_then_bets_behind() {
        let v = variant("deluxe");
        let bets = vec![
            SeatBets {
                seat: 1,
                main: 100,
                player: Some("bob".into()),
                behind: vec![BehindBet {
                    player: "alice".into(),
                    main: 50,
                    follow_double: true,
                    ..BehindBet::default()
                }],
                ..SeatBets::default()
            },
            SeatBets {
                seat: 3,
                main: 0,
                player: Some("bob".into()),
                ..SeatBets::default()
            },
        ];
        let balances = |a: &str| match a {
            "bob" => Some(150),
            "alice" => Some(60),
            _ => None,
        };
        let f = seat_bets(&v, &balances, bets.clone());
        assert_eq!(f.bets[0].main, 50);
        assert_eq!(f.bets[1].main, 50);
        assert!(!f.bets[0].behind[0].follow_double);
        assert_eq!(
            f.debits,
            vec![("bob".to_string(), 100), ("alice".to_string(), 50)]
        );
        assert!(f.reserved.is_empty());
        // Bob cannot cover even 10 a seat: his seats go, and alice's bet behind with them.
        let broke = |a: &str| (a == "bob").then_some(10);
        let f = seat_bets(&v, &broke, bets.clone());
        assert!(f.bets.is_empty());
        let results: Vec<&str> = f.notes.iter().map(|n| n.result).collect();
        assert_eq!(results, vec!["refused", "refused", "returned"]);
        // Unknown balances: nothing changes.
        let f = seat_bets(&v, &|_| None, bets.clone());
        assert_eq!(f.bets, bets);
    }

    #[test]
    fn player_bets_drop_the_specials_that_do_not_fit() {
        let v = variant("multihand");
        let bets = vec![PlayerBets {
            player: "p1".into(),
            boxes: vec![SeatBets {
                seat: 1,
                main: 100,
                side: vec![("pair".into(), 20), ("21+3".into(), 5)],
                ..SeatBets::default()
            }],
        }];
        let f = player_bets(&v, &|_| Some(110), &|_, _| 0, bets.clone());
        assert_eq!(f.bets[0].boxes[0].side, vec![("21+3".to_string(), 5)]);
        assert_eq!(f.debits, vec![("p1".to_string(), 105)]);
        assert_eq!(f.notes[0].bet.as_deref(), Some("pair"));
        let f = player_bets(&v, &|_| Some(99), &|_, _| 0, bets);
        assert!(f.bets.is_empty());
        assert_eq!(f.notes[0].rule, "insufficient_funds");
    }
}
