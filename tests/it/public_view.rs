//! The public view is a pure function of the table's snapshot that drops hidden fields.
//! Checked as non-interference: over every snapshot of generated Deluxe sessions (the real
//! table task, the real store), changing a hidden field — the face-down card and the
//! totals it makes, the expectation, alarm details, the serial link — never changes the
//! public view; and the public feed's messages carry nothing else.

use crate::common;

use croupier::cards::Card;
use croupier::engine::Expectation;
use croupier::store::{Source, Store};
use croupier::table::{Alarm, Command, Snapshot, Table, TableState};
use croupier::web::view::{dealer_view, public_view, LimitsView};
use std::sync::Arc;

/// Every snapshot the table publishes while playing `rounds` rounds of seed `seed`.
async fn snapshots(seed: u64, rounds: usize) -> Vec<Arc<Snapshot>> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (inputs, _, _) = common::session("deluxe", seed, rounds);
    let opened = Store::open(&dir.path().join("t.db"), "t1", "t", "deluxe")
        .await
        .expect("store");
    let (mut table, handle, _rx, _) = Table::recover(
        "t1",
        "t",
        "deluxe",
        common::variant("deluxe"),
        Ok((opened.store, opened.log)),
    );
    let mut out = vec![handle.snapshot()];
    for input in inputs {
        table
            .handle(Command::Input {
                input,
                source: Source::Api,
                reply: None,
            })
            .await;
        out.push(handle.snapshot());
    }
    out
}

fn other_card(c: Card) -> Card {
    let code = if c.to_string() == "2C" { "3D" } else { "2C" };
    code.parse().expect("card")
}

#[tokio::test]
async fn changing_a_hidden_field_never_changes_the_public_view() {
    let mut hidden = 0;
    let mut revealed = 0;
    for seed in 1..=4 {
        for s in snapshots(seed, 15).await {
            let public = public_view(&s);
            let mut m = (*s).clone();
            if s.round.hole_hidden {
                hidden += 1;
                let hole = m.round.dealer[1];
                m.round.dealer[1] = other_card(hole);
                m.round.dealer_total = m.round.dealer_total.wrapping_add(7);
                m.round.dealer_soft = !m.round.dealer_soft;
                assert_eq!(public.round.dealer[1], None, "seq {}", s.seq);
                assert_eq!(public.round.dealer_total, s.round.up_total);
            } else if s.round.dealer.len() >= 2 {
                revealed += 1;
                assert!(public.round.dealer.iter().all(Option::is_some));
            }
            m.expecting = "something else".into();
            m.expectation = Expectation::Shuffle;
            m.shoe.link = "disconnected: secret".into();
            m.unrecorded = vec!["AS".into()];
            m.bonus_options.insert(1, vec![9]);
            m.alarm = Some(Alarm {
                seq: 1,
                reason: "AS out of the shoe was refused".into(),
                expected: "x".into(),
                held: vec!["AS".into()],
                also: vec![],
            });
            m.broken = Some("why".into());
            m.inputs += 1;
            let mut again = public_view(&m);
            // The state flag itself is public (play is paused); nothing more.
            again.state = public.state;
            assert_eq!(again, public, "seq {}", s.seq);

            // The dealer's panel keeps the card face down too.
            let dealer = dealer_view(&s, &LimitsView::of(&common::variant("deluxe")), false, None);
            assert_eq!(dealer.table, public);
        }
    }
    assert!(
        hidden > 50,
        "too few snapshots with the hole card down: {hidden}"
    );
    assert!(revealed > 20, "too few revealed: {revealed}");
}

#[tokio::test]
async fn the_public_json_has_only_public_keys() {
    fn keys(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    out.push(k.clone());
                    keys(x, &format!("{path}.{k}"), out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, path, out)),
            _ => {}
        }
    }
    for s in snapshots(9, 5).await {
        let json = serde_json::to_value(public_view(&s)).expect("json");
        let mut found = Vec::new();
        keys(&json, "", &mut found);
        for forbidden in [
            "expecting",
            "expectation",
            "alarm",
            "link",
            "unrecorded",
            "bonus_options",
            "broken",
            "hole_hidden",
            "up_total",
        ] {
            assert!(
                !found.iter().any(|k| k == forbidden),
                "{forbidden} in the public view at seq {}",
                s.seq
            );
        }
        assert_ne!(s.state, TableState::Broken);
    }
}

/// The table's offer (issue #60 item 6): the variant's limits, side bets and seats, and no
/// seat free for remote players where the table has no remote play; a common draw has no
/// seats to take at all (`seats_free: null`).
#[tokio::test]
async fn the_offer_says_the_variants_limits_and_seats() {
    let variant = common::variant("deluxe");
    for s in snapshots(3, 6).await {
        let offer = public_view(&s).offer.expect("an offer");
        assert_eq!(
            (offer.min, offer.max, offer.seats),
            (variant.limits.min, variant.limits.max, variant.deal.seats)
        );
        let sides: Vec<_> = offer
            .side_bets
            .iter()
            .map(|b| (b.name.clone(), b.min, b.max))
            .collect();
        let want: Vec<_> = variant
            .side_bets
            .iter()
            .map(|b| (b.name.clone(), b.limits.min, b.limits.max))
            .collect();
        assert!(!want.is_empty());
        assert_eq!(sides, want);
        // This table has no remote play: no seat is a remote player's to take.
        assert_eq!(offer.seats_free, Some(0));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = Store::open(&dir.path().join("m.db"), "m1", "m", "multihand")
        .await
        .expect("store");
    let (_table, handle, _rx, _) = Table::recover(
        "m1",
        "m",
        "multihand",
        common::variant("multihand"),
        Ok((opened.store, opened.log)),
    );
    let offer = public_view(&handle.snapshot()).offer.expect("an offer");
    assert_eq!(offer.seats, common::variant("multihand").deal.seats);
    assert_eq!(offer.seats_free, None, "a common draw has no seats to take");
}
