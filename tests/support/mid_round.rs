//! A table's round caught in the middle: the table folded over a log, and a backup of the
//! running table taken while a round is in play with its up card out and its hole card
//! not yet dealt (issue #58: the backup a restore mid-round comes from), for
//! `tests/it/second_history.rs` and `tests/it/studio/`.
#![allow(dead_code)]

use super::common;
use super::public_check::Viewer;
use croupier::store::LogRow;
use croupier::table::{Follower, TableConfig};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::sleep;

/// The table of `cfg` folded over `log`: what it shows after each row.
pub fn follower(cfg: &Path) -> Follower {
    let config = TableConfig::load(cfg).expect("config");
    Follower::new(
        &config.table.id,
        &config.table.name,
        &config.table.variant,
        Arc::new(config.variant().expect("variant")),
        config.disputes.settings(),
    )
}

/// The round `log` ends in, if it ends with a round in play whose up card is out and
/// whose hole card is not.
pub fn ends_before_the_hole_card(cfg: &Path, log: &[LogRow]) -> Option<u64> {
    let mut f = follower(cfg);
    let mut last = None;
    for row in log {
        last = Some(f.follow(row).expect("the log replays").0);
    }
    let round = &last?.round;
    (round.number > 0 && !round.settled && round.dealer.len() == 1).then_some(round.number)
}

/// The viewer's latest view.
pub fn last_view(v: &Viewer) -> Option<Value> {
    v.values().into_iter().rev().find(|m| m["type"] == "view")
}

/// Takes a backup of the running table while a round is in play with its up card out and
/// its hole card not yet dealt (tried round after round until a copy holds exactly that):
/// the backup and the round it ends in.
pub async fn backup_mid_round(
    dir: &Path,
    cfg: &Path,
    viewer: &Viewer,
) -> (std::path::PathBuf, u64) {
    let cfg_s = cfg.display().to_string();
    for attempt in 0..60 {
        // The up card alone on the table.
        for _ in 0..600 {
            let up_only = last_view(viewer).is_some_and(|m| {
                let r = &m["view"]["round"];
                r["settled"] == false && r["dealer"].as_array().is_some_and(|d| d.len() == 1)
            });
            if up_only {
                break;
            }
            sleep(Duration::from_millis(10)).await;
        }
        let copy = dir.join(format!("backup-{attempt}.db"));
        let out = common::croupier(
            &["backup", copy.to_str().expect("utf-8"), "--config", &cfg_s],
            None,
        );
        assert!(out.status.success(), "{}", common::text(&out));
        let id = TableConfig::load(cfg).expect("config").table.id;
        if let Some(round) = ends_before_the_hole_card(cfg, &common::log_of(&copy, &id).await) {
            return (copy, round);
        }
        // Too late (or too early): the next round.
        std::fs::remove_file(&copy).expect("remove");
        std::fs::remove_file(croupier::store::anchor::path_for(&copy)).expect("remove");
        let now = last_view(viewer).and_then(|m| m["view"]["round"]["number"].as_u64());
        for _ in 0..600 {
            let next = last_view(viewer).and_then(|m| m["view"]["round"]["number"].as_u64());
            if next > now {
                break;
            }
            sleep(Duration::from_millis(10)).await;
        }
    }
    panic!("no backup caught a round between its up card and its hole card");
}
