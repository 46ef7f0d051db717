//! Shoe-integrity alerts at the real table task and store: a shoe dealt in the same order
//! as the one before is judged suspicious when it ends — shown to the dealer panel, one
//! audit row, marked in `recall` — and not locked; the verdict survives a restart without a
//! second audit row; a properly shuffled shoe after it clears the notice.

use crate::common;

use croupier::engine::{Engine, Expectation, Input};
use croupier::sim::{Style, TableSim};
use croupier::store::{audit, Reader};
use croupier::table::{IntegritySettings, Table, TableHandle, TableState};
use croupier::web::view::{dealer_view, LimitsView};
use std::path::Path;

async fn open(dir: &Path) -> (Table, TableHandle) {
    let (mut table, handle, _) = common::recover_table(dir).await;
    table.set_integrity(IntegritySettings::default());
    (table, handle)
}

async fn submit(t: &mut Table, shadow: &mut Engine, input: Input) {
    let mut events = Vec::new();
    shadow
        .apply(&input, &mut events)
        .expect("the shadow engine accepts");
    common::table_input(t, input).await.expect("accepted");
}

/// Shuffles, then deals one whole shoe from a fresh `TableSim` seeded with `seed` (the same
/// seed deals the same order: a shoe that was not shuffled).
async fn deal_shoe(t: &mut Table, shadow: &mut Engine, seed: u64) {
    submit(t, shadow, Input::Shuffle).await;
    let mut sim = TableSim::new(common::variant("deluxe"), seed, Style::Steady { seats: 3 });
    while shadow.expectation() != Expectation::Shuffle {
        let input = sim.next_input(shadow);
        submit(t, shadow, input).await;
    }
}

#[tokio::test]
async fn an_unshuffled_shoe_raises_a_notice_not_a_lock_and_is_marked_in_recall() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut table, handle) = open(dir.path()).await;
    let mut shadow = Engine::new(common::variant("deluxe"));

    deal_shoe(&mut table, &mut shadow, 11).await;
    let first = handle.snapshot().shoe_integrity.clone().expect("judged");
    assert!(first.checked && !first.suspicious(), "{first:?}");

    deal_shoe(&mut table, &mut shadow, 11).await;
    let snap = handle.snapshot();
    let v = snap.shoe_integrity.clone().expect("judged");
    assert!(v.suspicious(), "{v:?}");
    assert_eq!(v.common_run, v.cards, "the whole shoe repeats the last one");
    assert_eq!(v.common_with, Some(first.shoe));
    assert_eq!(snap.state, TableState::Open, "an alert, not a lock");
    let panel = dealer_view(
        &snap,
        &LimitsView::of(&common::variant("deluxe")),
        false,
        None,
    );
    assert_eq!(panel.shoe_alert.as_ref().map(|a| a.shoe), Some(v.shoe));

    // Play goes on: the next shoe opens.
    submit(&mut table, &mut shadow, Input::Shuffle).await;
    drop(table);

    let db = dir.path().join("t.db");
    let reader = Reader::open(&db).await.expect("reader");
    let rounds = reader.recall("t1", 1000).await.expect("recall");
    let marked: Vec<u32> = rounds
        .iter()
        .filter(|r| r.shoe_integrity.as_ref().is_some_and(|v| v.suspicious()))
        .map(|r| r.shoe)
        .collect();
    assert!(
        !marked.is_empty() && marked.iter().all(|s| *s == v.shoe),
        "{marked:?}"
    );
    assert!(rounds.iter().any(
        |r| r.shoe == first.shoe && r.shoe_integrity.as_ref().is_some_and(|v| !v.suspicious())
    ));
    let alerts = |rows: &[audit::AuditRow]| {
        rows.iter()
            .filter(|r| r.entry.action == audit::actions::SHOE_SUSPICIOUS)
            .count()
    };
    let pool = croupier::auth::open_pool(&db).await.expect("pool");
    let audit_rows = || async {
        let mut conn = pool.acquire().await.expect("conn");
        audit::rows_since(&mut conn, 0).await.expect("audit")
    };
    assert_eq!(alerts(&audit_rows().await), 1);

    // A restart judges the same shoes the same way, and writes no second audit row.
    let (mut table, handle) = open(dir.path()).await;
    assert_eq!(handle.snapshot().shoe_integrity, Some(v.clone()));
    // A properly shuffled shoe clears the notice.
    let mut shadow = Engine::new(common::variant("deluxe"));
    for input in reader
        .log("t1")
        .await
        .expect("log")
        .iter()
        .filter_map(|r| match &r.record {
            croupier::store::Record::Input { input, .. } => Some(input.clone()),
            _ => None,
        })
    {
        shadow.apply(&input, &mut Vec::new()).expect("replays");
    }
    let mut sim = TableSim::new(common::variant("deluxe"), 99, Style::Steady { seats: 3 });
    while shadow.expectation() != Expectation::Shuffle {
        let input = sim.next_input(&shadow);
        submit(&mut table, &mut shadow, input).await;
    }
    let snap = handle.snapshot();
    let clean = snap.shoe_integrity.clone().expect("judged");
    assert!(clean.shoe > v.shoe && !clean.suspicious(), "{clean:?}");
    assert!(dealer_view(
        &snap,
        &LimitsView::of(&common::variant("deluxe")),
        false,
        None
    )
    .shoe_alert
    .is_none());
    drop(table);
    assert_eq!(alerts(&audit_rows().await), 1);
}
