//! Every dialect end to end through a real pseudo-terminal: the simulator writes, the
//! serial driver (tokio-serial) reads.

mod common;

use common::{expressible, items, rig, DIALECTS};
use croupier_drivers::card::Card;
use croupier_drivers::proto::ascii::AsciiSuitRank;
use croupier_drivers::proto::barcode::Barcode4;
use croupier_drivers::proto::line::LineFormat;
use croupier_drivers::proto::v1::{Body, Frame};
use croupier_drivers::shoe::config::Dialect;
use croupier_drivers::shoe::Shoe;
use croupier_drivers::sim::InjectedFault;
use croupier_drivers::{FaultKind, ShoeItem};

const SCRIPT: &str = "AS KD 10C 2H CUT QS 9D";

fn wire(dialect: Dialect, item: ShoeItem, seq: u8) -> Vec<u8> {
    match dialect {
        Dialect::CroupierV1 => Frame::new(
            seq,
            match item {
                ShoeItem::Card(card) => Body::Card(card),
                ShoeItem::CutCard => Body::CutCard,
            },
        )
        .to_wire(),
        Dialect::AsciiSuitRank => AsciiSuitRank::new(&common::ascii_options())
            .expect("valid")
            .encode(item)
            .expect("encodable"),
        Dialect::Barcode4 => Barcode4.encode(item).expect("encodable"),
    }
}

#[tokio::test]
async fn deals_a_script_in_order_in_every_dialect() {
    for dialect in DIALECTS {
        let mut rig = rig(dialect, SCRIPT).await;
        let dealt = rig.sim.deal(100).await.expect("sim running");
        assert_eq!(dealt, items(SCRIPT));
        let want = expressible(dialect, &dealt);
        let got = rig.take_items(want.len()).await;
        assert_eq!(got.items, want, "{dialect:?}");
        assert!(got.faults.is_empty(), "{dialect:?}: {:?}", got.faults);
        rig.assert_no_more_items().await;
        assert_eq!(rig.shoe.counters().errors, 0);
    }
}

#[tokio::test]
async fn a_frame_split_at_every_byte_boundary_arrives_once() {
    for dialect in DIALECTS {
        let mut rig = rig(dialect, "").await;
        let card = ShoeItem::Card("QD".parse::<Card>().expect("card"));
        let bytes = wire(dialect, card, 1);
        if dialect == Dialect::CroupierV1 {
            // Let the Hello through first so sequence 1 is fresh.
            rig.sim.settled().await.expect("sim running");
        }
        for cut in 1..bytes.len() {
            let seq = u8::try_from(cut).expect("short frame");
            let bytes = wire(dialect, card, seq);
            let (a, b) = bytes.split_at(cut);
            rig.sim
                .write_raw(vec![a.to_vec(), b.to_vec()])
                .await
                .expect("sim running");
            let got = rig.take_items(1).await;
            assert_eq!(got.items, vec![card], "{dialect:?} cut at {cut}");
            assert!(
                got.faults.is_empty(),
                "{dialect:?} cut at {cut}: {:?}",
                got.faults
            );
        }
    }
}

#[tokio::test]
async fn noise_between_frames_is_a_fault_never_a_card() {
    for dialect in DIALECTS {
        let mut rig = rig(dialect, SCRIPT).await;
        let script = items(SCRIPT);
        let want = expressible(dialect, &script);
        for _ in &script {
            rig.sim
                .inject(InjectedFault::Garbage(b"\x00zz9\xff\r\n".to_vec()))
                .await
                .expect("sim running");
            rig.sim.deal(1).await.expect("sim running");
        }
        let got = rig.take_items(want.len()).await;
        assert_eq!(got.items, want, "{dialect:?}");
        assert!(
            !got.faults.is_empty(),
            "{dialect:?}: noise must be reported"
        );
        assert!(got.faults.iter().all(|f| f.kind != FaultKind::Truncated));
        rig.assert_no_more_items().await;
    }
}

#[tokio::test]
async fn split_writes_mode_delivers_every_card() {
    for dialect in DIALECTS {
        let mut rig = rig(dialect, SCRIPT).await;
        rig.sim
            .inject(InjectedFault::SplitWrites(true))
            .await
            .expect("sim running");
        let dealt = rig.sim.deal(100).await.expect("sim running");
        let want = expressible(dialect, &dealt);
        let got = rig.take_items(want.len()).await;
        assert_eq!(got.items, want, "{dialect:?}");
        assert!(got.faults.is_empty());
    }
}

#[tokio::test]
async fn a_corrupted_frame_is_reported_and_the_card_still_arrives_once() {
    for dialect in DIALECTS {
        let mut rig = rig(dialect, SCRIPT).await;
        let script = items(SCRIPT);
        let want = expressible(dialect, &script);
        rig.sim
            .inject(InjectedFault::CorruptNext)
            .await
            .expect("sim running");
        rig.sim.deal(100).await.expect("sim running");
        let got = rig.take_items(want.len()).await;
        assert_eq!(got.items, want, "{dialect:?}");
        let kinds: Vec<FaultKind> = got.faults.iter().map(|f| f.kind).collect();
        let expected = if dialect == Dialect::CroupierV1 {
            FaultKind::BadCrc
        } else {
            FaultKind::Malformed
        };
        assert_eq!(kinds, vec![expected], "{dialect:?}");
        rig.assert_no_more_items().await;
        if dialect == Dialect::CroupierV1 {
            assert_eq!(rig.shoe.counters().naks, 1);
        }
    }
}
