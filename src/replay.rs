//! The replay format (`../shared/scenarios/README.md`) ↔ the engine.
//!
//! A scenario is the exact input stream of one or more rounds as JSON. [`parse`] turns it
//! into engine inputs (refusing malformed files with the event index), [`run`] plays them
//! and [`Replay::to_json`] writes the result document.

use crate::cards::Card;
use crate::engine::variant::Natural;
use crate::engine::{
    Action, BehindBet, Code, Engine, Event, Input, PlayerBets, Rejection, RoundResult, SeatBets,
    Variant,
};
use crate::money::Amount;
use crate::play::desk::FundsDesk;
use crate::play::funds::Note;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One event of a scenario: an engine input, or one the service in front of the engine
/// handles (balances and re-bets, `play::desk`).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// An input for the engine (through the balance rules when a balance is known).
    Input(Input),
    /// `{"funds": {"1": 5000, "alice": 300}}`: accounts' balances from here on.
    Funds(Vec<(String, Amount)>),
    /// `{"bets": "rebet"}`: the previous round's bets again (Ultimate's automatic re-bet).
    Rebet,
}

/// A parsed scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The variant's file stem (`deluxe`, `ultimate`, …).
    pub variant: String,
    /// The engine inputs in order (the `funds` and re-bet events left out).
    pub inputs: Vec<Input>,
    /// Every event in order.
    pub steps: Vec<Step>,
    /// Settings changed for this scenario, by dotted key (`"insurance.won_returns"`): the
    /// scenario's optional `"settings"` object, to replay under another reading of a sheet.
    pub settings: Vec<(String, Value)>,
}

/// Why a scenario file is malformed (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// Not JSON, or not the scenario's shape.
    #[error("scenario: {0}")]
    Shape(String),
    /// One event is malformed.
    #[error("event {index}: {reason}")]
    Event {
        /// The event's index, from 0.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Parses a scenario document.
pub fn parse(text: &str) -> Result<Scenario, ReplayError> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| ReplayError::Shape(format!("bad JSON: {e}")))?;
    let obj = doc.as_object().ok_or_else(|| {
        ReplayError::Shape("expected an object with \"variant\" and \"events\"".into())
    })?;
    if let Some(key) = obj
        .keys()
        .find(|k| !["variant", "events", "settings"].contains(&k.as_str()))
    {
        return Err(ReplayError::Shape(format!("unknown key {key:?}")));
    }
    let variant = obj
        .get("variant")
        .and_then(Value::as_str)
        .ok_or_else(|| ReplayError::Shape("\"variant\" must be a string".into()))?
        .to_string();
    let events = obj
        .get("events")
        .and_then(Value::as_array)
        .ok_or_else(|| ReplayError::Shape("\"events\" must be an array".into()))?;
    let steps: Vec<Step> = events
        .iter()
        .enumerate()
        .map(|(index, e)| parse_step(e).map_err(|reason| ReplayError::Event { index, reason }))
        .collect::<Result<_, _>>()?;
    let inputs = steps
        .iter()
        .filter_map(|s| match s {
            Step::Input(i) => Some(i.clone()),
            _ => None,
        })
        .collect();
    let settings = match obj.get("settings") {
        None => Vec::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(_) => {
            return Err(ReplayError::Shape(
                "\"settings\" must be an object of dotted keys".into(),
            ))
        }
    };
    Ok(Scenario {
        variant,
        inputs,
        steps,
        settings,
    })
}

/// A `funds` or re-bet event, else an engine input.
fn parse_step(e: &Value) -> Result<Step, String> {
    match e {
        Value::Object(o) if o.contains_key("funds") => {
            only_keys(o, &["funds"])?;
            let accounts = o["funds"]
                .as_object()
                .ok_or("\"funds\" must map accounts (seat numbers or player ids) to balances")?;
            accounts
                .iter()
                .map(|(account, amount)| {
                    amount
                        .as_i64()
                        .filter(|a| *a >= 0)
                        .map(|a| (account.clone(), a))
                        .ok_or_else(|| {
                            format!("funds: {account}: a balance is a whole number of minor units, at least 0")
                        })
                })
                .collect::<Result<_, _>>()
                .map(Step::Funds)
        }
        Value::Object(o) if o.get("bets").and_then(Value::as_str) == Some("rebet") => {
            only_keys(o, &["bets"])?;
            Ok(Step::Rebet)
        }
        e => parse_event(e).map(Step::Input),
    }
}

fn parse_event(e: &Value) -> Result<Input, String> {
    match e {
        Value::String(s) if s.eq_ignore_ascii_case("cut") => Ok(Input::CutCard),
        Value::String(s) => s
            .parse::<Card>()
            .map(Input::Card)
            .map_err(|e| e.to_string()),
        Value::Object(o) if o.contains_key("bets") => {
            only_keys(o, &["bets", "seated", "behind"])?;
            let mut bets = seat_bets(&o["bets"])?;
            if let Some(seated) = o.get("seated") {
                add_seated(&mut bets, seated)?;
            }
            if let Some(behind) = o.get("behind") {
                add_behind(&mut bets, behind)?;
            }
            Ok(Input::Bets(bets))
        }
        Value::Object(o) if o.contains_key("players") => {
            only_keys(o, &["players"])?;
            parse_player_bets(&o["players"])
        }
        Value::Object(o) if o.contains_key("player") => {
            only_keys(o, &["player", "box", "seat", "do"])?;
            let player = o["player"]
                .as_str()
                .ok_or("\"player\" must be a string")?
                .to_string();
            let seat = parse_seat(o.get("box").or_else(|| o.get("seat")))?;
            let name = o
                .get("do")
                .and_then(Value::as_str)
                .ok_or("\"do\" must be a string")?;
            let action = Action::from_player_name(name).ok_or_else(|| {
                format!("unknown action {name:?} (hit, stand, double, split, surrender, insurance, no_insurance, even_money)")
            })?;
            Ok(Input::PlayerDecision {
                player,
                seat,
                action,
            })
        }
        Value::Object(o) if o.contains_key("tick") => {
            only_keys(o, &["tick"])?;
            let now_ms = o["tick"]
                .as_u64()
                .ok_or("\"tick\" must be a whole number of milliseconds")?;
            Ok(Input::Tick { now_ms })
        }
        Value::Object(o) if o.contains_key("do") => {
            only_keys(o, &["seat", "do"])?;
            let seat = parse_seat(o.get("seat"))?;
            let name = o["do"].as_str().ok_or("\"do\" must be a string")?;
            let action = Action::from_name(name).ok_or_else(|| {
                format!("unknown action {name:?} (stand, double, split, surrender, insurance, no_insurance, even_money)")
            })?;
            Ok(Input::Decision { seat, action })
        }
        Value::Object(o) if o.contains_key("bonus_multiplier") => {
            only_keys(o, &["seat", "bonus_multiplier"])?;
            let seat = parse_seat(o.get("seat"))?;
            let multiplier = o["bonus_multiplier"]
                .as_u64()
                .and_then(|m| u32::try_from(m).ok())
                .ok_or("\"bonus_multiplier\" must be a whole number")?;
            Ok(Input::Bonus { seat, multiplier })
        }
        Value::Object(o) if o.contains_key("shoe") => {
            only_keys(o, &["shoe"])?;
            match o["shoe"].as_str() {
                Some("shuffle") => Ok(Input::Shuffle),
                _ => Err("unknown shoe event (only {\"shoe\": \"shuffle\"})".into()),
            }
        }
        Value::Object(o) if o.contains_key("void") => {
            only_keys(o, &["void"])?;
            let card = o["void"]
                .as_str()
                .ok_or("\"void\" must be a card code such as \"7H\"")?;
            card.parse::<Card>()
                .map(Input::Void)
                .map_err(|e| e.to_string())
        }
        Value::Object(o) if o.contains_key("round") => {
            only_keys(o, &["round"])?;
            match o["round"].as_str() {
                Some("cancel") => Ok(Input::CancelRound),
                _ => Err("unknown round event (only {\"round\": \"cancel\"})".into()),
            }
        }
        other => Err(format!("unknown event {other}")),
    }
}

fn only_keys(o: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("unknown key {k:?} in this event")),
        None => Ok(()),
    }
}

fn parse_seat(v: Option<&Value>) -> Result<u8, String> {
    let s = v
        .and_then(Value::as_str)
        .ok_or("\"seat\" must be a string such as \"1\"")?;
    s.parse::<u8>()
        .map_err(|_| format!("seat {s:?} is not a seat number"))
}

fn parse_player_bets(v: &Value) -> Result<Input, String> {
    let players = v
        .as_object()
        .ok_or("\"players\" must map player ids to their bets per box")?;
    let mut out = Vec::with_capacity(players.len());
    for (player, boxes) in players {
        out.push(PlayerBets {
            player: player.clone(),
            boxes: seat_bets(boxes).map_err(|e| format!("player {player}: {e}"))?,
        });
    }
    Ok(Input::PlayerBets(out))
}

/// `"seated": {"1": "bob", "2": "bob"}`: who sits where.
fn add_seated(bets: &mut [SeatBets], v: &Value) -> Result<(), String> {
    let seated = v
        .as_object()
        .ok_or("\"seated\" must map seats to player ids")?;
    for (seat, player) in seated {
        let seat = parse_seat(Some(&Value::String(seat.clone())))?;
        let player = player
            .as_str()
            .ok_or("\"seated\" maps seats to player ids (strings)")?;
        let b = bets
            .iter_mut()
            .find(|b| b.seat == seat)
            .ok_or_else(|| format!("seated: seat {seat} has no bet"))?;
        b.player = Some(player.to_string());
    }
    Ok(())
}

/// `"behind": {"alice": {"1": {"main": 50, "pair": 5, "follow_double": true}}}`.
fn add_behind(bets: &mut [SeatBets], v: &Value) -> Result<(), String> {
    let players = v
        .as_object()
        .ok_or("\"behind\" must map player ids to their bets per seat")?;
    for (player, seats) in players {
        let seats = seats
            .as_object()
            .ok_or_else(|| format!("behind: {player}'s bets must map seats to bets"))?;
        for (seat, kinds) in seats {
            let seat = parse_seat(Some(&Value::String(seat.clone())))?;
            let kinds = kinds
                .as_object()
                .ok_or_else(|| format!("behind: {player}, seat {seat}: bets must be an object"))?;
            let mut bet = BehindBet {
                player: player.clone(),
                ..BehindBet::default()
            };
            for (kind, value) in kinds {
                match kind.as_str() {
                    "follow_double" | "follow_split" => {
                        let flag = value.as_bool().ok_or_else(|| {
                            format!("behind: {player}: {kind} must be true or false")
                        })?;
                        if kind == "follow_double" {
                            bet.follow_double = flag;
                        } else {
                            bet.follow_split = flag;
                        }
                    }
                    "timer_ms" => {
                        bet.timer_ms = value.as_u64().ok_or_else(|| {
                            format!("behind: {player}: timer_ms must be a whole number of ms")
                        })?;
                    }
                    _ => {
                        let amount = value.as_i64().ok_or_else(|| {
                            format!("behind: {player}: {kind} amount must be a whole number of minor units")
                        })?;
                        if kind == "main" {
                            bet.main = amount;
                        } else {
                            bet.side.push((kind.clone(), amount));
                        }
                    }
                }
            }
            let b = bets
                .iter_mut()
                .find(|b| b.seat == seat)
                .ok_or_else(|| format!("behind: seat {seat} has no seated bet to play behind"))?;
            b.behind.push(bet);
        }
    }
    Ok(())
}

fn seat_bets(v: &Value) -> Result<Vec<SeatBets>, String> {
    let seats = v.as_object().ok_or("bets must map seats to their bets")?;
    let mut out = Vec::with_capacity(seats.len());
    for (seat, kinds) in seats {
        let seat = parse_seat(Some(&Value::String(seat.clone())))?;
        let kinds = kinds
            .as_object()
            .ok_or_else(|| format!("seat {seat}: bets must map bet kinds to amounts"))?;
        let mut bets = SeatBets {
            seat,
            ..SeatBets::default()
        };
        for (kind, amount) in kinds {
            if kind == "timer_ms" {
                bets.timer_ms = amount
                    .as_u64()
                    .ok_or_else(|| format!("seat {seat}: timer_ms must be a whole number of ms"))?;
                continue;
            }
            if kind == "let_it_play" {
                bets.let_it_play = amount
                    .as_bool()
                    .ok_or_else(|| format!("seat {seat}: let_it_play must be true or false"))?;
                continue;
            }
            let amount = amount.as_i64().ok_or_else(|| {
                format!("seat {seat}: {kind} amount must be a whole number of minor units")
            })?;
            if kind == "main" {
                bets.main = amount;
            } else {
                bets.side.push((kind.clone(), amount));
            }
        }
        out.push(bets);
    }
    Ok(out)
}

/// The outcome of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Rounds settled, in order.
    pub rounds: Vec<RoundResult>,
    /// The first rejected input: (event index, rejection).
    pub halted: Option<(usize, crate::engine::Rejection)>,
    /// What the engine expected after the last accepted input.
    pub expecting: String,
    /// The natural's kind, for the dealer's flag in the output.
    natural: Natural,
    /// Whether the game is a common draw (players, burned cards in the output).
    common_draw: bool,
    /// What the balance rules did: (event index, note).
    pub funds: Vec<(usize, Note)>,
    /// The known balances after each round (parallel to `rounds`) and at the end; empty
    /// without a `funds` event.
    balances: Vec<BTreeMap<String, Amount>>,
    /// The known balances at the end (`None` without a `funds` event).
    pub final_balances: Option<BTreeMap<String, Amount>>,
}

/// The object under `key` in `map`, created empty if missing.
fn entry_object<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        // Made an object just above.
        _ => unreachable!("slot is an object"),
    }
}

/// Plays a scenario's inputs through a fresh engine for `variant`.
pub fn run(variant: Arc<Variant>, inputs: &[Input]) -> Replay {
    let steps: Vec<Step> = inputs.iter().cloned().map(Step::Input).collect();
    run_steps(variant, &steps)
}

/// Plays a scenario's events through a fresh engine for `variant`, the balance rules in
/// front of it once a `funds` event made a balance known (`play::desk`).
pub fn run_steps(variant: Arc<Variant>, steps: &[Step]) -> Replay {
    let natural = variant.hand.natural;
    let common_draw = variant.deal.mode == crate::engine::variant::DealMode::CommonDraw;
    let mut engine = Engine::new(Arc::clone(&variant));
    let mut desk = FundsDesk::default();
    let mut notes = Vec::new();
    let mut funds = Vec::new();
    let mut balances = Vec::new();
    let mut events = Vec::new();
    let mut rounds: Vec<RoundResult> = Vec::new();
    let mut halted = None;
    for (index, step) in steps.iter().enumerate() {
        // An input the engine refuses staked nothing: the balances go back with it.
        let saved = desk.active().then(|| desk.clone());
        let input = match step {
            Step::Funds(accounts) => {
                desk.set(accounts);
                continue;
            }
            Step::Rebet => match desk.rebet(&variant, &mut notes) {
                Some(bets) => desk.before(&engine, &bets, &mut notes),
                None => {
                    let why = "rebet: no previous bets to repeat";
                    halted = Some((index, Rejection::new(Code::InvalidBet, why)));
                    break;
                }
            },
            Step::Input(input) => desk.before(&engine, input, &mut notes),
        };
        funds.extend(notes.drain(..).map(|n| (index, n)));
        let Some(input) = input else { continue };
        events.clear();
        if let Err(rejection) = engine.apply(&input, &mut events) {
            if let Some(saved) = saved {
                desk = saved;
            }
            halted = Some((index, rejection));
            break;
        }
        for e in events.drain(..) {
            if let Event::RoundSettled(result) = e {
                desk.settle(&result);
                // A cancellation after settlement replaces the round's result.
                match rounds.last_mut() {
                    Some(last) if last.round == result.round => {
                        *last = *result;
                        balances.pop();
                    }
                    _ => rounds.push(*result),
                }
                balances.push(desk.balances().clone());
            }
        }
    }
    let active = desk.active();
    Replay {
        rounds,
        halted,
        expecting: engine.expectation().to_string(),
        natural,
        common_draw,
        funds,
        balances: if active { balances } else { Vec::new() },
        final_balances: active.then(|| desk.balances().clone()),
    }
}

impl Replay {
    /// The known balances after each settled round (parallel to `rounds`; empty without a
    /// `funds` event).
    pub fn round_balances(&self) -> &[BTreeMap<String, Amount>] {
        &self.balances
    }

    /// The result document of the replay format.
    pub fn to_json(&self) -> Value {
        let mut rounds: Vec<Value> = self.rounds.iter().map(|r| self.round_json(r)).collect();
        for (round, balances) in rounds.iter_mut().zip(&self.balances) {
            round["balances"] = json!(balances);
        }
        let halted = match &self.halted {
            None => Value::Null,
            Some((event, r)) => {
                json!({"event": event, "code": r.code.as_str(), "message": r.message})
            }
        };
        let mut doc = json!({"rounds": rounds, "halted": halted, "expecting": self.expecting});
        if let Some(balances) = &self.final_balances {
            doc["balances"] = json!(balances);
        }
        if !self.funds.is_empty() {
            doc["funds"] = self.funds.iter().map(|(i, n)| note_json(*i, n)).collect();
        }
        doc
    }

    fn round_json(&self, r: &RoundResult) -> Value {
        let cards = |cs: &[Card]| {
            cs.iter()
                .map(|c| Value::String(c.to_string()))
                .collect::<Vec<_>>()
        };
        let mut dealer = json!({
            "cards": cards(&r.dealer_cards),
            "total": r.dealer_total,
            "blackjack": r.dealer_natural && self.natural == Natural::Blackjack,
        });
        if self.natural == Natural::Caribbean21 {
            dealer["caribbean21"] = Value::Bool(r.dealer_natural);
        }
        let hands: Vec<Value> = r
            .hands
            .iter()
            .map(|h| {
                let mut hand = json!({
                    "seat": h.seat.to_string(),
                    "hand": h.hand,
                    "cards": cards(&h.cards),
                    "total": h.total,
                    "doubled": h.doubled,
                    "outcome": h.outcome.as_str(),
                    "staked": h.staked,
                    "returned": h.returned,
                });
                if let Some(player) = &h.player {
                    hand["player"] = Value::String(player.to_string());
                }
                hand
            })
            .collect();
        // Seat games: seat → kind → return. Common draw: player → box → kind → return.
        let mut returns = Map::new();
        let mut behind = Map::new();
        for b in &r.bets {
            let mut at = &mut returns;
            if let Some(player) = &b.player {
                let top = if self.common_draw {
                    &mut returns
                } else {
                    &mut behind
                };
                at = entry_object(top, player);
            }
            entry_object(at, &b.seat.to_string())
                .insert(b.kind.name().to_string(), Value::from(b.returned));
        }
        let mut round = json!({"round": r.round, "shoe": r.shoe, "dealer": dealer, "hands": hands, "returns": returns});
        if self.common_draw || !r.burned.is_empty() {
            round["burned"] = Value::Array(cards(&r.burned));
        }
        if r.cancelled {
            round["cancelled"] = Value::Bool(true);
        }
        if !behind.is_empty() {
            round["behind"] = Value::Object(behind);
        }
        round
    }
}

/// One balance rule's note in the result document.
fn note_json(event: usize, n: &Note) -> Value {
    let mut v = json!({"event": event, "account": n.account, "rule": n.rule, "result": n.result});
    if let Some(seat) = n.seat {
        v["seat"] = Value::String(seat.to_string());
    }
    if let Some(bet) = &n.bet {
        v["bet"] = Value::String(bet.clone());
    }
    if let Some(amount) = n.amount {
        v["amount"] = Value::from(amount);
    }
    v
}
