//! Disputes at the table: raised by the dealer, a player or an alarm, they halt the round
//! (inputs refused, shoe cards held); a supervisor's resolution corrects the round's input
//! log, is recorded, and survives a restart exactly (recovery replays it). Driven through
//! the real table task and the real store; the API and the binary are in `tests/it/api.rs`
//! and `tests/it/crash.rs`.

use crate::common;

use common::bets;
use common::table_input as input;

use croupier::cards::Card;
use croupier::engine::{Action, Expectation, Input, Outcome, Place};
use croupier::store::{Reader, Record, Source};
use croupier::table::dispute::{Origin, Resolution};
use croupier::table::{
    Command, DisputeError, DisputeSettings, ProposalView, Raise, Snapshot, Table, TableHandle,
    TableState,
};
use croupier_drivers::event::ShoeEvent;
use std::path::Path;
use std::time::Duration;
use tokio::sync::oneshot;

fn c(s: &str) -> Card {
    s.parse().expect("card")
}

/// A table on the database in `dir`, recovered from whatever it holds.
async fn open(dir: &Path, settings: DisputeSettings) -> (Table, TableHandle) {
    let (table, handle, _) = open_with_commands(dir, settings).await;
    (table, handle)
}

/// [`open`], with the table's command receiver (to run its loop).
async fn open_with_commands(
    dir: &Path,
    settings: DisputeSettings,
) -> (Table, TableHandle, tokio::sync::mpsc::Receiver<Command>) {
    let (mut table, handle, rx) = common::recover_table(dir).await;
    table.set_disputes(settings);
    (table, handle, rx)
}

async fn shoe(t: &mut Table, cards: &[&str]) {
    for code in cards {
        t.handle(Command::Shoe(ShoeEvent::Card(c(code)))).await;
    }
}

/// Waits (at most 5 s) until no round is provisional: the dispute window has closed.
async fn window_closed(h: &TableHandle) {
    let mut watch = h.watch();
    tokio::time::timeout(
        Duration::from_secs(5),
        watch.wait_for(|s| s.provisional.is_none()),
    )
    .await
    .expect("the window closes")
    .expect("running");
}

/// A table in `dir` (default dispute settings) with 100 bet on seats 1 and 2.
async fn two_seats_bet(dir: &Path) -> (Table, TableHandle) {
    let (mut t, h) = open(dir, DisputeSettings::default()).await;
    input(&mut t, bets(&[(1, 100), (2, 100)]))
        .await
        .expect("bets");
    (t, h)
}

/// Moving the round's card at `index` (`card`) to seat `seat`'s first hand.
fn move_to(index: usize, card: &str, seat: u8) -> Resolution {
    Resolution::Move {
        index,
        card: c(card),
        to: Place::Hand { seat, hand: 0 },
    }
}

/// Sends the command `make` builds around its reply channel: the table's answer.
async fn ask<T>(t: &mut Table, make: impl FnOnce(oneshot::Sender<T>) -> Command) -> T {
    let (reply, rx) = oneshot::channel();
    t.handle(make(reply)).await;
    rx.await.expect("answered")
}

async fn raise(t: &mut Table, origin: Origin, round: Option<u64>) -> Result<u64, DisputeError> {
    let raise = Raise {
        origin,
        seat: Some(1),
        round,
        reason: "the player says so".into(),
        by: "dealer-7".into(),
    };
    ask(t, |reply| Command::RaiseDispute { raise, reply }).await
}

async fn propose(
    t: &mut Table,
    dispute: u64,
    resolution: Resolution,
    by: &str,
) -> Result<ProposalView, DisputeError> {
    ask(t, |reply| Command::Propose {
        dispute,
        resolution,
        reason: "seen on camera".into(),
        by: by.into(),
        reply,
    })
    .await
}

/// Confirms the proposal `preview` showed (naming its hash), as `by`.
async fn confirm(
    t: &mut Table,
    dispute: u64,
    preview: &ProposalView,
    by: &str,
) -> Result<u64, DisputeError> {
    ask(t, |reply| Command::Confirm {
        dispute,
        proposal: preview.proposal.clone(),
        by: by.into(),
        reply,
    })
    .await
}

async fn resolve(t: &mut Table, dispute: u64, resolution: Resolution) -> u64 {
    let preview = propose(t, dispute, resolution, "sup-1")
        .await
        .expect("proposed");
    confirm(t, dispute, &preview, "sup-1")
        .await
        .expect("confirmed")
}

fn seat_cards(s: &Snapshot, seat: u8) -> Vec<String> {
    s.round
        .hands
        .iter()
        .filter(|h| h.seat == seat)
        .flat_map(|h| h.cards.iter().map(|c| c.to_string()))
        .collect()
}

/// What must be identical after a restart.
fn essence(s: &Snapshot) -> String {
    serde_json::to_string(&(
        s.seq,
        s.state,
        &s.round,
        &s.expectation,
        &s.shoe.dealt,
        &s.shoe.burned,
        s.rounds_settled,
        &s.last_result,
        &s.alarm,
        s.provisional,
    ))
    .expect("json")
}

/// Closes the table's store and recovers a new table from it: the state must be equal.
async fn restart(
    dir: &Path,
    t: Table,
    h: &TableHandle,
    settings: DisputeSettings,
) -> (Table, TableHandle) {
    let before = essence(&h.snapshot());
    drop(t);
    let (t2, h2) = open(dir, settings).await;
    assert_eq!(
        essence(&h2.snapshot()),
        before,
        "recovery replays to the same table"
    );
    (t2, h2)
}

#[tokio::test]
async fn a_voided_exposed_card_is_burned_and_the_held_card_takes_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, h) = two_seats_bet(dir.path()).await;
    // Seat 1, seat 2, dealer up; then 2D is exposed on its way to seat 1.
    shoe(&mut t, &["9H", "5S", "7C", "2D"]).await;
    let id = raise(&mut t, Origin::Dealer, None).await.expect("raised");
    let s = h.snapshot();
    assert_eq!(s.state, TableState::Disputed);
    let d = s.dispute.as_ref().expect("open dispute");
    assert_eq!(
        (d.head.id, d.head.origin, d.head.round),
        (id, Origin::Dealer, 1)
    );
    assert_eq!(d.frozen, s.round, "the round is frozen as it stood");
    // The round is halted: no input applies, shoe cards are held.
    let refused = input(
        &mut t,
        Input::Decision {
            seat: 1,
            action: Action::Stand,
        },
    )
    .await;
    assert_eq!(refused.expect_err("halted").code(), "disputed");
    shoe(&mut t, &["9D"]).await;
    let s = h.snapshot();
    let d = s.dispute.as_ref().expect("open");
    assert_eq!(d.held, ["9D"]);
    let places: Vec<(String, Option<String>, bool)> = d
        .cards
        .iter()
        .map(|p| (p.card.to_string(), p.place.clone(), p.held))
        .collect();
    assert_eq!(
        places[3],
        ("2D".into(), Some("seat 1, hand 1".into()), false)
    );
    assert_eq!(places[4], ("9D".into(), None, true));
    assert_eq!(seat_cards(&s, 1), ["9H", "2D"]);
    // A proposal naming the wrong card (a stale screen) is refused.
    let stale = propose(
        &mut t,
        id,
        Resolution::Void {
            index: 3,
            card: c("9D"),
        },
        "sup-1",
    )
    .await;
    assert_eq!(stale.expect_err("stale").code(), "wrong_card");
    let preview = propose(
        &mut t,
        id,
        Resolution::Void {
            index: 3,
            card: c("2D"),
        },
        "sup-1",
    )
    .await
    .expect("previewed");
    assert_eq!(preview.round.hands[0].cards, [c("9H"), c("9D")]);
    // Previewing changes nothing.
    assert_eq!(seat_cards(&h.snapshot(), 1), ["9H", "2D"]);
    let burned_before = h.snapshot().shoe.burned;
    confirm(&mut t, id, &preview, "sup-1")
        .await
        .expect("confirmed");
    let s = h.snapshot();
    assert_eq!(s.state, TableState::Open);
    assert!(s.dispute.is_none());
    assert_eq!(seat_cards(&s, 1), ["9H", "9D"]);
    assert_eq!(s.shoe.burned, burned_before + 1);
    assert_eq!(
        s.expectation,
        Expectation::DealCard(Place::Hand { seat: 2, hand: 0 }),
        "the deal continues where the corrected round stands"
    );
    // Confirming twice does nothing: the dispute is closed.
    assert_eq!(
        confirm(&mut t, id, &preview, "sup-1")
            .await
            .expect_err("closed")
            .code(),
        "no_dispute"
    );
    let (mut t, h) = restart(dir.path(), t, &h, DisputeSettings::default()).await;
    // Play continues on the corrected round.
    shoe(&mut t, &["TS", "8C"]).await;
    assert_eq!(seat_cards(&h.snapshot(), 2), ["5S", "TS"]);
    let reader = Reader::open(&dir.path().join("t.db"))
        .await
        .expect("reader");
    let kinds = common::record_kinds(&reader, "t1").await;
    assert_eq!(
        kinds,
        [
            "input", "input", "input", "input", "input", "dispute", "held", "resolve", "input",
            "input"
        ]
    );
}

#[tokio::test]
async fn a_misread_card_is_corrected_and_a_card_dealt_out_of_order_is_moved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, h) = two_seats_bet(dir.path()).await;
    shoe(&mut t, &["9H", "5S"]).await;
    let id = raise(&mut t, Origin::Player, Some(1))
        .await
        .expect("raised");
    // The shoe read 5S; the card on seat 2 is the 5H.
    resolve(
        &mut t,
        id,
        Resolution::Correct {
            index: 1,
            card: c("5S"),
            to: c("5H"),
        },
    )
    .await;
    assert_eq!(seat_cards(&h.snapshot(), 2), ["5H"]);
    // Dealer up card, then seat 1's second card went to seat 2 and vice versa.
    shoe(&mut t, &["7C", "KD", "4S"]).await;
    assert_eq!(seat_cards(&h.snapshot(), 1), ["9H", "KD"]);
    let id = raise(&mut t, Origin::Dealer, None).await.expect("raised");
    let preview = propose(&mut t, id, move_to(3, "KD", 2), "sup-1")
        .await
        .expect("a position sends KD to seat 2");
    let hands: Vec<Vec<Card>> = preview
        .round
        .hands
        .iter()
        .map(|h| h.cards.clone())
        .collect();
    assert_eq!(hands, [vec![c("9H"), c("4S")], vec![c("5H"), c("KD")]]);
    confirm(&mut t, id, &preview, "sup-1")
        .await
        .expect("confirmed");
    assert_eq!(seat_cards(&h.snapshot(), 1), ["9H", "4S"]);
    assert_eq!(seat_cards(&h.snapshot(), 2), ["5H", "KD"]);
    // A place no order of the cards reaches is refused, and changes nothing.
    let id = raise(&mut t, Origin::Dealer, None).await.expect("raised");
    let before = essence(&h.snapshot());
    let err = propose(&mut t, id, move_to(0, "9H", 5), "sup-1")
        .await
        .expect_err("seat 5 has no bet");
    assert_eq!(err.code(), "cannot_move");
    assert_eq!(essence(&h.snapshot()), before);
    resolve(&mut t, id, Resolution::Reject).await;
    assert_eq!(h.snapshot().state, TableState::Open);
    restart(dir.path(), t, &h, DisputeSettings::default()).await;
}

#[tokio::test]
async fn the_last_decision_is_undone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, h) = two_seats_bet(dir.path()).await;
    shoe(&mut t, &["9H", "5S", "7C", "2D", "TS", "8C"]).await;
    // Seat 1 (11) meant to double; the dealer pressed stand.
    input(
        &mut t,
        Input::Decision {
            seat: 1,
            action: Action::Stand,
        },
    )
    .await
    .expect("stand");
    assert!(matches!(
        h.snapshot().expectation,
        Expectation::Decision { seat: 2, .. }
    ));
    let id = raise(&mut t, Origin::Dealer, None).await.expect("raised");
    resolve(&mut t, id, Resolution::UndoDecision).await;
    assert!(matches!(
        h.snapshot().expectation,
        Expectation::Decision { seat: 1, .. }
    ));
    input(
        &mut t,
        Input::Decision {
            seat: 1,
            action: Action::Double,
        },
    )
    .await
    .expect("double");
    let (_t, h) = restart(dir.path(), t, &h, DisputeSettings::default()).await;
    assert_eq!(
        h.snapshot().expectation,
        Expectation::HandCard { seat: 1, hand: 0 }
    );
}

#[tokio::test]
async fn an_alarm_opens_a_dispute_that_a_correction_resolves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, h) = open(dir.path(), DisputeSettings::default()).await;
    input(&mut t, bets(&[(1, 100)])).await.expect("bets");
    // Eight decks: a ninth ace of spades is impossible — a misread.
    shoe(&mut t, &["AS", "AS", "AS", "AS"]).await;
    shoe(&mut t, &["AS"; 5]).await;
    let s = h.snapshot();
    assert_eq!(s.state, TableState::Locked);
    let d = s.dispute.as_ref().expect("the alarm opened a dispute");
    assert_eq!(d.head.origin, Origin::Alarm);
    assert_eq!(d.held, ["AS"]);
    // Raising another is refused while it is open.
    assert_eq!(
        raise(&mut t, Origin::Dealer, None)
            .await
            .expect_err("open")
            .code(),
        "dispute_open"
    );
    let index = d.cards.len() - 1;
    resolve(
        &mut t,
        d.head.id,
        Resolution::Correct {
            index,
            card: c("AS"),
            to: c("AH"),
        },
    )
    .await;
    let s = h.snapshot();
    assert_eq!(s.state, TableState::Open);
    assert!(s.alarm.is_none());
    assert!(seat_cards(&s, 1).contains(&"AH".to_string()));
    let (_t, _h) = restart(dir.path(), t, &h, DisputeSettings::default()).await;
    // On the record: the alarm's dispute, for round 1, resolved by a correction.
    let reader = Reader::open(&dir.path().join("t.db"))
        .await
        .expect("reader");
    let rows = reader.disputes("t1", 10).await.expect("disputes");
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].origin.as_str(), rows[0].round), ("alarm", 1));
    assert_eq!(
        rows[0].resolution.as_ref().map(|r| r["op"].clone()),
        Some(serde_json::json!("correct"))
    );
}

fn settings(window_ms: u64, two_person_rule: bool) -> DisputeSettings {
    DisputeSettings {
        window: Duration::from_millis(window_ms),
        two_person_rule,
    }
}

/// Plays one Deluxe round to its settlement: seat 1 doubles, seat 2 stands.
async fn settled_round(t: &mut Table) {
    input(t, bets(&[(1, 100), (2, 50)])).await.expect("bets");
    shoe(t, &["6H", "8S", "7C", "5D", "8D", "9C"]).await;
    input(
        t,
        Input::Decision {
            seat: 1,
            action: Action::Double,
        },
    )
    .await
    .expect("double");
    shoe(t, &["KH"]).await;
    input(
        t,
        Input::Decision {
            seat: 2,
            action: Action::Stand,
        },
    )
    .await
    .expect("stand");
    shoe(t, &["9S"]).await; // dealer 7 9 9 = 25: bust
}

async fn settlements(dir: &Path, round: i64) -> Vec<(i64, String, i64, i64)> {
    let reader = Reader::open(&dir.join("t.db")).await.expect("reader");
    reader
        .settlement_lines("t1", round)
        .await
        .expect("settlements")
}

#[tokio::test]
async fn a_provisional_round_is_cancelled_once_under_the_two_person_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let window = settings(60_000, true);
    let (mut t, h) = open(dir.path(), window).await;
    settled_round(&mut t).await;
    let s = h.snapshot();
    assert_eq!(s.provisional, Some(1));
    let result = s.last_result.clone().expect("settled");
    assert_eq!(
        result.bets.iter().map(|b| b.returned).sum::<i64>(),
        400 + 100
    );
    // The next round waits for the window.
    let next = input(&mut t, bets(&[(1, 100)])).await;
    assert_eq!(next.expect_err("provisional").code(), "round_provisional");
    // A player token for an older round is refused; for this one it is taken.
    assert_eq!(
        raise(&mut t, Origin::Player, Some(0))
            .await
            .expect_err("old")
            .code(),
        "round_final"
    );
    let id = raise(&mut t, Origin::Player, Some(1))
        .await
        .expect("raised");
    let preview = propose(&mut t, id, Resolution::Cancel, "sup-1")
        .await
        .expect("preview");
    assert!(preview.second_person);
    let refunds = preview.result.as_ref().expect("a cancelled result");
    assert!(refunds.cancelled);
    assert!(refunds.bets.iter().all(|b| b.returned == b.staked));
    // The proposer cannot confirm their own cancellation.
    let same = confirm(&mut t, id, &preview, "sup-1")
        .await
        .expect_err("two-person rule");
    assert_eq!(same.code(), "two_person_rule");
    confirm(&mut t, id, &preview, "sup-2")
        .await
        .expect("confirmed by another");
    let s = h.snapshot();
    let last = s.last_result.clone().expect("result");
    assert!(last.cancelled);
    assert!(last.hands.iter().all(|h| h.outcome == Outcome::Cancelled));
    assert_eq!(
        s.rounds_settled, 1,
        "the cancellation replaces the settlement"
    );
    // Exactly one refund line per bet: main 200 (the double included) and 50.
    let lines = settlements(dir.path(), 1).await;
    assert_eq!(
        lines,
        [
            (1, "main".to_string(), 200, 200),
            (2, "main".to_string(), 50, 50)
        ]
    );
    // Cancelled once: again is refused.
    let id = raise(&mut t, Origin::Dealer, None)
        .await
        .expect("still provisional");
    let again = propose(&mut t, id, Resolution::Cancel, "sup-1")
        .await
        .expect_err("already cancelled");
    assert_eq!(again.code(), "correction_does_not_replay");
    resolve(&mut t, id, Resolution::Reject).await;
    let (_t, _h) = restart(dir.path(), t, &h, window).await;
    assert_eq!(settlements(dir.path(), 1).await.len(), 2);
}

/// Issue #32 item 5: a badge is one person at every table and on the floor, so the table's
/// `user:201` and the pit page's `floor:201` cannot be the rule's two people; another
/// badge from either side can.
#[tokio::test]
async fn one_badge_at_the_table_and_on_the_floor_is_one_person() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, h) = open(dir.path(), settings(60_000, true)).await;
    settled_round(&mut t).await;
    let id = raise(&mut t, Origin::Dealer, None).await.expect("raised");
    let preview = propose(&mut t, id, Resolution::Cancel, "user:201")
        .await
        .expect("preview");
    assert!(preview.second_person);
    for same in ["floor:201", "user:201"] {
        let refused = confirm(&mut t, id, &preview, same)
            .await
            .expect_err("the same person");
        assert_eq!(refused.code(), "two_person_rule", "{same}");
        assert!(!h.snapshot().last_result.clone().expect("result").cancelled);
    }
    confirm(&mut t, id, &preview, "floor:202")
        .await
        .expect("another person on the floor");
    assert!(h.snapshot().last_result.clone().expect("result").cancelled);
}

#[tokio::test]
async fn no_dispute_on_a_final_round_and_the_window_closes_with_a_final_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    // No window: final at settlement.
    let (mut t, h) = open(dir.path(), DisputeSettings::default()).await;
    settled_round(&mut t).await;
    assert_eq!(h.snapshot().provisional, None);
    assert_eq!(
        raise(&mut t, Origin::Dealer, None)
            .await
            .expect_err("final")
            .code(),
        "round_final"
    );
    drop(t);
    // A short window, through the table's own loop. A restart gives the last settled round
    // (no `final` row yet) a whole window: the conservative side.
    let (t, h, rx) = open_with_commands(dir.path(), settings(300, false)).await;
    assert_eq!(h.snapshot().provisional, Some(1));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let tx = h.commands();
    let mut watch = h.watch();
    let task = tokio::spawn(t.run(rx, stop_rx, None));
    window_closed(&h).await;
    h.submit(bets(&[(1, 100), (2, 50)]), Source::Api)
        .await
        .expect("bets");
    for code in ["6H", "8S", "7C", "5D", "8D", "9C"] {
        tx.send(Command::Shoe(ShoeEvent::Card(c(code))))
            .await
            .expect("sent");
    }
    common::stand(&h, 1).await;
    common::stand(&h, 2).await;
    tx.send(Command::Shoe(ShoeEvent::Card(c("9S"))))
        .await
        .expect("sent");
    watch
        .wait_for(|s| s.provisional == Some(2))
        .await
        .expect("provisional");
    let refused = h.submit(bets(&[(1, 100)]), Source::Api).await;
    assert_eq!(
        refused.expect_err("provisional").code(),
        "round_provisional"
    );
    window_closed(&h).await;
    h.submit(bets(&[(1, 100)]), Source::Api)
        .await
        .expect("the next round opens");
    stop_tx.send(true).expect("stop");
    drop(tx);
    task.await.expect("joined");
    let reader = Reader::open(&dir.path().join("t.db"))
        .await
        .expect("reader");
    let log = reader.log("t1").await.expect("log");
    for round in [1, 2] {
        assert!(log.iter().any(|r| r.record == Record::Final { round }));
    }
}
