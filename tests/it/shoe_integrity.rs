//! Detection and false-alarm rates of the shoe-integrity checks on simulated 6-deck shoes
//! (75% penetration, compared with the last 5 shoes, default thresholds): the figures in
//! docs/src/shoe-integrity.md come from this test's output
//! (`cargo test --test it shoe_integrity -- --nocapture`).

use croupier::integrity::riffle::{rate, Preparation, Simulation};
use croupier::integrity::shoe::Thresholds;

const SHOES: usize = 200;

#[test]
fn detection_and_false_alarm_rates() {
    let sim = Simulation {
        decks: 6,
        penetration: 0.75,
        history: 5,
        thresholds: Thresholds::default(),
    };
    let classes = [
        ("unshuffled", Preparation::Unshuffled),
        ("riffled once", Preparation::Riffled(1)),
        ("riffled 3 times", Preparation::Riffled(3)),
        ("riffled 7 times", Preparation::Riffled(7)),
        ("properly shuffled", Preparation::Shuffled),
    ];
    println!("| cards | preparation | flagged | by repeat | by order |");
    println!("|---|---|---|---|---|");
    let mut measured = Vec::new();
    for (fresh, origin) in [(false, "last shoe's"), (true, "new decks")] {
        for (i, (name, prep)) in classes.iter().enumerate() {
            let r = rate(
                &sim,
                *prep,
                fresh,
                SHOES,
                1000 + i as u64 + u64::from(fresh) * 100,
            );
            println!(
                "| {origin} | {name} | {:.1}% | {} | {} |",
                100.0 * r.fraction(),
                r.by_repeat,
                r.by_order
            );
            measured.push((fresh, *prep, r));
        }
    }
    for (fresh, prep, r) in &measured {
        match prep {
            // Every unshuffled shoe is caught, whatever the cards' origin.
            Preparation::Unshuffled => assert_eq!(r.flagged, r.shoes, "fresh={fresh}: {r:?}"),
            // A single riffle leaves runs of the last order, or the box order, nearly always.
            Preparation::Riffled(1) => assert!(r.fraction() > 0.95, "fresh={fresh}: {r:?}"),
            // A proper shuffle is almost never flagged (false alarms).
            Preparation::Shuffled => assert!(r.fraction() < 0.02, "{prep:?}: {r:?}"),
            _ => {}
        }
    }
}
