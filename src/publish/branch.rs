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

pub use super::lost::{LostMove, LostTail};
use super::position::LoggedRow;
use super::subjects::{self, HEADER_ID};
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

/// A log message in full (`publish::outbox::log_json`), the record's text kept as sent.
#[derive(serde::Deserialize)]
struct FullRow<'a> {
    table: String,
    seq: u64,
    at_ms: i64,
    kind: String,
    hash: String,
    #[serde(default)]
    branch: String,
    #[serde(borrow)]
    record: &'a serde_json::value::RawValue,
}

/// A superseded row read back: enough to check its chain and fold it.
struct Superseded {
    seq: u64,
    at_ms: i64,
    kind: String,
    hash: [u8; 32],
    payload: String,
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
    let js = crate::broker::jetstream(client, publish.broker_options(id).api_prefix());
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
    // The newest row of this table's id signed with another key, newer than the last row
    // both histories share: what a publisher that never published refuses as
    // `timeline_foreign`.
    let mut foreign = None;
    let state = log.info().await.map_err(|e| e.to_string())?.state.clone();
    let mut seq = state.last_sequence;
    while seq >= state.first_sequence.max(1) {
        if let Some(m) = message(&log, seq).await? {
            let signed = subjects::signed(&key, wire::LOG, id, &m.payload, &m.headers);
            match serde_json::from_slice::<LoggedRow>(&m.payload) {
                Ok(row) if row.table == id && signed => {
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
                // Signed, but with another key: another table's history under this id.
                // (An unsigned row is only noise someone wrote, as it is to the publisher.)
                Ok(row) if row.table == id && m.headers.get(subjects::HEADER_SIG).is_some() => {
                    foreign.get_or_insert(row);
                }
                _ => {}
            }
        }
        seq -= 1;
    }
    let Some(superseded) = superseded else {
        if let Some(row) = foreign {
            return Err(foreign_history(config, db, &keys, &row));
        }
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

/// What the operator is told when the broker's history of this table's id is signed
/// with another key (`row` its newest row): nothing of it is this table's to continue
/// over, and what to do instead.
fn foreign_history(
    config: &TableConfig,
    db: &std::path::Path,
    keys: &TableKeys,
    row: &LoggedRow,
) -> String {
    let id = config.table.id.as_str();
    let key_file = crate::trust::keys::path_for(db);
    format!(
        "the broker's history of table {id} (its last row {}, timeline {}) is signed with another key than this table's ({}): another table publishes under this id, or this table's key file was replaced. `timeline continue` continues only over this table's own history: nothing was written, and the table publishes nothing until one of these is done — if another table runs as {id}, give this one an id of its own ([table] id in its configuration; its database starts a new log under it, and the studio needs its credentials and its pinned key, `croupier table-key`); if this table replaces that one and its old key file still exists, put it back as {} and start the table; if that key is lost, the id cannot be published again: give this table a new id",
        row.seq,
        if row.timeline.is_empty() {
            "from before timelines"
        } else {
            row.timeline.as_str()
        },
        keys.public_hex(),
        key_file.display(),
    )
}

/// The message at `seq` of `stream`, if there is one.
async fn message(
    stream: &stream::Stream,
    seq: u64,
) -> Result<Option<jetstream::message::StreamMessage>, String> {
    match stream.get_raw_message(seq).await {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The message at `seq` of `stream` if the table signed it for `domain`.
async fn own(
    stream: &stream::Stream,
    seq: u64,
    domain: &str,
    table: &str,
    key: &ed25519_dalek::VerifyingKey,
) -> Result<Option<jetstream::message::StreamMessage>, String> {
    Ok(message(stream, seq)
        .await?
        .filter(|m| subjects::signed(key, domain, table, &m.payload, &m.headers)))
}

/// The wallet movements of the rows the table's newest branch superseded (the rounds a
/// restore lost), read from the broker, which keeps them: the rows are taken in chain
/// order from the last row both histories share, and folded after this log's rows up to
/// it through the same table the live service runs. Read-only: the table may be running.
pub async fn lost_tail(config: &TableConfig, db: &std::path::Path) -> Result<LostTail, String> {
    let id = config.table.id.as_str();
    let publish = config
        .publish
        .as_ref()
        .ok_or("the configuration has no [publish] section: nothing was published to lose")?;
    let keys = TableKeys::load(&crate::trust::keys::path_for(db)).map_err(|e| e.to_string())?;
    let reader = crate::store::Reader::open(db)
        .await
        .map_err(|e| e.to_string())?;
    let log = reader.log(id).await.map_err(|e| e.to_string())?;
    let lineage = crate::store::timeline::Lineage::new(
        "",
        log.iter()
            .filter(|r| matches!(r.record, Record::Timeline { .. }))
            .map(|r| (r.seq, r.record.clone())),
    );
    let branch = lineage.last_branch().ok_or_else(|| {
        format!("table {id} has not continued over another history (`croupier timeline continue`): the broker superseded nothing")
    })?;
    let (common, last) = (branch.common_seq, branch.superseded.seq);
    let client = crate::broker::connect(
        &publish.broker_options(id),
        &format!("croupier timeline lost {id}"),
    )
    .await
    .map_err(|e| e.to_string())?;
    let js = crate::broker::jetstream(client, publish.broker_options(id).api_prefix());
    let mut stream = js
        .get_stream(publish.stream_names().log(id).name)
        .await
        .map_err(|e| format!("the table's log stream: {e}"))?;
    let state = stream
        .info()
        .await
        .map_err(|e| e.to_string())?
        .state
        .clone();
    let key = keys.verifying_key();
    // Every signed candidate for each superseded row (a row number may be on the stream
    // more than once: the branch's own rows, other histories).
    let mut candidates: HashMap<u64, Vec<Superseded>> = HashMap::new();
    for seq in state.first_sequence.max(1)..=state.last_sequence {
        let Some(m) = own(&stream, seq, wire::LOG, id, &key).await? else {
            continue;
        };
        let Ok(row) = serde_json::from_slice::<FullRow<'_>>(&m.payload) else {
            continue;
        };
        let hash = hex::decode(&row.hash)
            .ok()
            .and_then(|h| <[u8; 32]>::try_from(h).ok());
        if let (Some(hash), true) = (
            hash,
            row.table == id && row.seq > common && row.seq <= last && row.branch != branch.id,
        ) {
            candidates.entry(row.seq).or_default().push(Superseded {
                seq: row.seq,
                at_ms: row.at_ms,
                kind: row.kind,
                hash,
                payload: row.record.get().to_string(),
            });
        }
    }
    let mut prev: [u8; 32] = match log.get(common.saturating_sub(1) as usize) {
        Some(r) if common > 0 => hex::decode(&r.hash)
            .ok()
            .and_then(|h| h.try_into().ok())
            .ok_or("this log's common row has no hash")?,
        _ => [0; 32],
    };
    let mut rows = Vec::new();
    for seq in common + 1..=last {
        let row = candidates
            .get(&seq)
            .and_then(|c| {
                c.iter().find(|r| {
                    crate::store::chain_hash(&prev, r.seq, r.at_ms, &r.kind, &r.payload) == r.hash
                })
            })
            .ok_or_else(|| format!("the broker no longer holds row {seq} of the superseded history (its retention, or its store was lost)"))?;
        prev = row.hash;
        let record: Record =
            serde_json::from_str(&row.payload).map_err(|e| format!("row {seq}: {e}"))?;
        rows.push(crate::store::LogRow {
            seq,
            at_ms: row.at_ms,
            record,
            hash: hex::encode(row.hash),
        });
    }
    let variant = std::sync::Arc::new(config.variant().map_err(|e| e.to_string())?);
    let follower = || {
        crate::table::Follower::new(
            id,
            &config.table.name,
            &config.table.variant,
            std::sync::Arc::clone(&variant),
            config.disputes.settings(),
        )
    };
    let split = log.partition_point(|r| r.seq <= common);
    let moves = super::lost::lost_moves(
        follower,
        &log[..split],
        &log[split..],
        &rows,
        config.disputes.window_seconds == 0,
    )?;
    Ok(LostTail {
        timeline: branch.id.to_string(),
        superseded: branch.superseded.timeline.clone(),
        common_seq: common,
        last_seq: last,
        moves,
    })
}
