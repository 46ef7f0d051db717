//! Shared harness: a simulated shoe on a real PTY and the real serial driver reading it.
#![allow(dead_code)] // each test binary uses a different subset

use std::time::Duration;

use croupier_drivers::shoe::config::{AsciiOptions, Dialect, ShoeConfig};
use croupier_drivers::shoe::{SerialShoe, Shoe};
use croupier_drivers::sim::deck::parse_script;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::{Fault, ShoeEvent, ShoeItem};

/// Every wait in these tests is bounded so a bug fails the test instead of hanging CI.
pub const LIMIT: Duration = Duration::from_secs(10);

pub const DIALECTS: [Dialect; 3] = [
    Dialect::CroupierV1,
    Dialect::AsciiSuitRank,
    Dialect::Barcode4,
];

pub fn items(script: &str) -> Vec<ShoeItem> {
    parse_script(script).expect("valid script")
}

/// A cut card only goes over dialects that can say it.
pub fn expressible(dialect: Dialect, items: &[ShoeItem]) -> Vec<ShoeItem> {
    items
        .iter()
        .copied()
        .filter(|i| dialect != Dialect::Barcode4 || *i != ShoeItem::CutCard)
        .collect()
}

pub fn ascii_options() -> AsciiOptions {
    AsciiOptions {
        suit_letters: "SHDC".into(),
        cut_card_line: Some("CUT".into()),
    }
}

pub struct Rig {
    pub sim: SimShoe,
    pub shoe: SerialShoe,
    pub _dir: tempfile::TempDir,
}

/// Starts a simulated shoe of `dialect` holding `script`, published under a stable link,
/// and the serial driver on that link; waits for `Connected`.
pub async fn rig(dialect: Dialect, script: &str) -> Rig {
    let dir = tempfile::tempdir().expect("temp dir");
    let link = dir.path().join("shoe");
    let sim = SimShoe::start(SimConfig {
        dialect,
        ascii: ascii_options(),
        items: items(script),
        link: Some(link.clone()),
        heartbeat: Duration::from_millis(200),
        ack_timeout: Duration::from_millis(100),
    })
    .expect("sim starts");
    let shoe = SerialShoe::spawn(ShoeConfig {
        port: link,
        baud: 9600,
        dialect,
        ascii: ascii_options(),
        heartbeat_timeout_ms: 1_000,
        reconnect_initial_ms: 20,
        reconnect_max_ms: 200,
        ..ShoeConfig::default()
    })
    .expect("valid config");
    let mut rig = Rig {
        sim,
        shoe,
        _dir: dir,
    };
    let event = rig.next().await;
    assert!(
        matches!(event, ShoeEvent::Connected { .. }),
        "expected Connected, got {event:?}"
    );
    rig
}

impl Rig {
    pub async fn next(&mut self) -> ShoeEvent {
        tokio::time::timeout(LIMIT, self.shoe.next_event())
            .await
            .expect("event within the time limit")
            .expect("driver running")
    }

    /// Reads events until `n` cards / cut cards have arrived; returns them and the faults
    /// seen meanwhile. Link events are returned separately.
    pub async fn take_items(&mut self, n: usize) -> Taken {
        let mut taken = Taken::default();
        while taken.items.len() < n {
            match self.next().await {
                ShoeEvent::Card(card) => taken.items.push(ShoeItem::Card(card)),
                ShoeEvent::CutCard => taken.items.push(ShoeItem::CutCard),
                ShoeEvent::Fault(fault) => taken.faults.push(fault),
                other => taken.link.push(other),
            }
        }
        taken
    }

    /// Asserts nothing but (optionally) faults arrives for a short while: no stray cards.
    pub async fn assert_no_more_items(&mut self) {
        let quiet = Duration::from_millis(300);
        while let Ok(Some(event)) = tokio::time::timeout(quiet, self.shoe.next_event()).await {
            assert!(
                !matches!(event, ShoeEvent::Card(_) | ShoeEvent::CutCard),
                "unexpected {event:?}"
            );
        }
    }
}

#[derive(Debug, Default)]
pub struct Taken {
    pub items: Vec<ShoeItem>,
    pub faults: Vec<Fault>,
    pub link: Vec<ShoeEvent>,
}
