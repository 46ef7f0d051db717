//! `croupier timeline continue`: the operator keeps this table's log although the broker
//! holds another history of the table (a restored database whose lost tail was
//! published; a second table that published under this id).
//!
//! Run while the table is stopped (it takes the database's writer lock). It reads what
//! the broker holds — the last row the table signed there, the last row both histories
//! share, the last public message's id — and appends a `timeline` row (cause
//! `continued`) that names them. The publisher, at the table's next start, publishes
//! the log after the common row as a new branch: a resync view first (every relay and
//! viewer replaces the superseded state), then the rows, their public ids offset past
//! the superseded history's. Nothing on the broker is deleted: the superseded rows stay,
//! each marked by its own `timeline`/`branch` fields, and the new ones say theirs.

use super::subjects::{HEADER_ID, HEADER_SIG};
use crate::store::{timeline, BrokerHead, Record, Store, TimelineCause};
use crate::table::TableConfig;
use crate::trust::{wire, TableKeys};
use async_nats::jetstream::{self, stream};
use std::collections::HashMap;

/// What `continue` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new timeline begins (the row's sequence number and the branch's facts).
    Continued {
        /// The `timeline` row.
        seq: u64,
        /// The new timeline's id.
        id: String,
        /// The broker's row it supersedes.
        superseded: BrokerHead,
        /// The last row both histories share.
        common_seq: u64,
        /// The public id offset.
        public_offset: u64,
    },
    /// The broker holds nothing this log lacks: there is nothing to continue over.
    NothingToContinue(String),
}

/// A row the table signed on its log stream.
#[derive(serde::Deserialize)]
struct Row {
    table: String,
    seq: u64,
    hash: String,
    #[serde(default)]
    timeline: String,
}

/// Continues the table of `config` (database `db`) over what the broker holds.
pub async fn continue_timeline(
    config: &TableConfig,
    db: &std::path::Path,
) -> Result<Outcome, String> {
    let id = config.table.id.as_str();
    let publish = config
        .publish
        .as_ref()
        .ok_or("the configuration has no [publish] section: there is no broker to continue over")?;
    let keys = TableKeys::load(&crate::trust::keys::path_for(db)).map_err(|e| e.to_string())?;
    // The writer's lock first: a running table refuses, before the broker is asked.
    let opened = Store::open(db, id, &config.table.name, &config.table.variant)
        .await
        .map_err(|e| format!("{e} (stop the table first)"))?;
    let mut store = opened.store;
    let ours: HashMap<u64, String> = opened.log.iter().map(|r| (r.seq, r.hash.clone())).collect();
    let client = crate::broker::connect(
        &publish.broker_options(id),
        &format!("croupier timeline continue {id}"),
    )
    .await
    .map_err(|e| e.to_string())?;
    let js = jetstream::new(client);
    let names = publish.stream_names();
    let mut log = js
        .get_stream(names.log(id).name)
        .await
        .map_err(|e| format!("the table's log stream: {e}"))?;
    let mut public = js
        .get_stream(names.public(id).name)
        .await
        .map_err(|e| format!("the table's public stream: {e}"))?;
    let key = keys.verifying_key();
    // Newest first: the broker's last own row, then back to the last one this log holds.
    let mut superseded = None;
    let mut common = 0;
    let state = log.info().await.map_err(|e| e.to_string())?.state.clone();
    let mut seq = state.last_sequence;
    while seq >= state.first_sequence.max(1) {
        if let Some(row) = own(&log, seq, wire::LOG, id, &key).await? {
            if let Ok(row) = serde_json::from_slice::<Row>(&row.payload) {
                if row.table == id {
                    if ours.get(&row.seq) == Some(&row.hash) {
                        common = row.seq;
                        break;
                    }
                    superseded.get_or_insert(BrokerHead {
                        timeline: row.timeline,
                        seq: row.seq,
                        hash: row.hash,
                    });
                }
            }
        }
        seq -= 1;
    }
    let Some(superseded) = superseded else {
        return Ok(Outcome::NothingToContinue(format!(
            "the broker's last row of table {id} (row {common}) is this log's: nothing to continue over; start the table"
        )));
    };
    let lineage = crate::store::timeline::Lineage::new(
        "",
        opened
            .log
            .iter()
            .map(|r| (r.seq, r.record.clone()))
            .filter(|(_, r)| matches!(r, Record::Timeline { .. })),
    );
    if lineage
        .last_branch()
        .is_some_and(|b| *b.superseded == superseded)
    {
        return Ok(Outcome::NothingToContinue(format!(
            "this log already continues over the broker's row {} of table {id}: start the table",
            superseded.seq
        )));
    }
    let state = public
        .info()
        .await
        .map_err(|e| e.to_string())?
        .state
        .clone();
    let mut last_public = (0, 0);
    let mut seq = state.last_sequence;
    while seq >= state.first_sequence.max(1) {
        if let Some(m) = own(&public, seq, wire::PUBLIC, id, &key).await? {
            if let Some(found) = m
                .headers
                .get(HEADER_ID)
                .and_then(|v| crate::web::feed::parse_id(v.as_str()))
            {
                last_public = found;
                break;
            }
        }
        seq -= 1;
    }
    let public_offset = last_public.0.saturating_sub(common) + 1;
    let new_id = timeline::new_id().map_err(|e| e.to_string())?;
    let record = Record::Timeline {
        id: new_id.clone(),
        parent: store.timeline().id.clone(),
        cause: TimelineCause::Continued {
            superseded: superseded.clone(),
            common_seq: common,
            public_offset,
        },
    };
    let seq = store
        .append(&record, &[], 0)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Outcome::Continued {
        seq,
        id: new_id,
        superseded,
        common_seq: common,
        public_offset,
    })
}

/// The message at `seq` of `stream` if the table signed it for `domain`.
async fn own(
    stream: &stream::Stream,
    seq: u64,
    domain: &str,
    table: &str,
    key: &ed25519_dalek::VerifyingKey,
) -> Result<Option<jetstream::message::StreamMessage>, String> {
    match stream.get_raw_message(seq).await {
        Ok(m) => {
            let signed = m
                .headers
                .get(HEADER_SIG)
                .is_some_and(|sig| wire::verify(key, domain, table, &m.payload, sig.as_str()));
            Ok(signed.then_some(m))
        }
        Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}
