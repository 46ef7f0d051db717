//! Alarms raised by a device, through the real path (the simulated shoe on a PTY read by the
//! serial driver): clearing re-checks the device and refuses while the fault is still there;
//! a fault reported again after clearing locks the table again.

use crate::common;
use crate::running;
use common::until_snapshot;

use croupier::table::dispute::Resolution;
use croupier::table::{ClearError, DisputeError, TableHandle, TableState};
use croupier_drivers::event::ShoeStatus;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use std::time::Duration;
use tokio::time::timeout;

async fn clear(handle: &TableHandle) -> Result<u64, ClearError> {
    handle
        .clear_alarm("checked the shoe".into(), "user:s1".into())
        .await
}

/// Clears the alarm as soon as the table has heard that the device is fixed (the shoe's
/// report travels over the PTY first).
async fn clear_once_fixed(handle: &TableHandle) {
    let mut cleared = clear(handle).await;
    for _ in 0..50 {
        if cleared.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        cleared = clear(handle).await;
    }
    cleared.expect("clears once the device is fixed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alarm_is_not_cleared_while_its_device_still_reports_the_fault() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        // The table opens the shoe by a name that stays (as udev's alias does): a replugged
        // pseudo-terminal may get another number, and its old one may go meanwhile to
        // another test's shoe running beside this one.
        let sim = SimShoe::start(SimConfig {
            items: vec![ShoeItem::Card("7H".parse().expect("card"))],
            link: Some(dir.path().join("shoe")),
            ..SimConfig::default()
        })
        .expect("pty shoe");
        let cfg = common::config(dir.path(), &sim.path(), "deluxe");
        let run = running::start(cfg).await;
        let h = &run.handle;
        let lid = ShoeStatus {
            lid_open: true,
            ..ShoeStatus::default()
        };

        // The lid opens: locked, and not clearable while it stays open.
        sim.set_status(lid).await.expect("status");
        until_snapshot(h, "locked", |s| s.state == TableState::Locked).await;
        let refused = clear(h).await;
        assert!(
            matches!(&refused, Err(ClearError::Persists(why)) if why.contains("lid open")),
            "{refused:?}"
        );
        // Nor by resolving the alarm's dispute.
        let id = h.snapshot().dispute.as_ref().expect("dispute").head.id;
        let preview = h
            .propose(id, Resolution::Reject, "fine".into(), "user:s1".into())
            .await
            .expect("propose");
        let refused = h.confirm(id, preview.proposal, "user:s1".into()).await;
        assert!(
            matches!(&refused, Err(DisputeError::Persists(_))),
            "{refused:?}"
        );
        // A card meanwhile is held, not applied.
        sim.deal(1).await.expect("deal");
        until_snapshot(h, "held", |s| {
            s.alarm.as_ref().is_some_and(|a| a.held == ["7H"])
        })
        .await;
        assert_eq!(h.snapshot().inputs, 0);

        // Closed: now it clears (the held card voided).
        sim.set_status(ShoeStatus::default()).await.expect("status");
        clear_once_fixed(h).await;
        assert_eq!(h.snapshot().state, TableState::Open);

        // Opened again while clear: locked again.
        sim.set_status(lid).await.expect("status");
        until_snapshot(h, "locked again", |s| s.state == TableState::Locked).await;
        sim.set_status(ShoeStatus::default()).await.expect("status");

        // Unplugged: not clearable until it is back.
        sim.unplug().await.expect("unplug");
        until_snapshot(h, "link down", |s| !s.shoe.connected()).await;
        let refused = clear(h).await;
        assert!(
            matches!(&refused, Err(ClearError::Persists(why)) if why.contains("not connected")),
            "{refused:?}"
        );
        // Over HTTP the refusal is a 409 with its code.
        running::add_users(&common::config(dir.path(), &sim.path(), "deluxe").store.path).await;
        let cookie = running::login_as(run.addr, croupier::auth::Role::Supervisor).await;
        let reply = croupier::web::client::request_with(
            &run.addr.to_string(),
            "POST",
            "/api/alarm/clear",
            Some(r#"{"reason": "plugged?"}"#),
            &[("Cookie", &cookie)],
            Duration::from_secs(10),
        )
        .await
        .expect("http");
        assert_eq!(reply.status, 409, "{}", reply.body);
        assert!(reply.body.contains("condition_persists"), "{}", reply.body);
        sim.replug().await.expect("replug");
        until_snapshot(h, "link up", |s| s.shoe.connected()).await;
        clear_once_fixed(h).await;
        assert_eq!(h.snapshot().state, TableState::Open);
        run.stop().await;
    })
    .await
    .expect("bounded");
}
