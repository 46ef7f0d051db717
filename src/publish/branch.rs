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

use super::outbox::LoggedRow;
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
    let state = log.info().await.map_err(|e| e.to_string())?.state.clone();
    let mut seq = state.last_sequence;
    while seq >= state.first_sequence.max(1) {
        if let Some(row) = own(&log, seq, wire::LOG, id, &key).await? {
            if let Ok(row) = serde_json::from_slice::<LoggedRow>(&row.payload) {
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
            let signed = subjects::signed(key, domain, table, &m.payload, &m.headers);
            Ok(signed.then_some(m))
        }
        Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// One wallet movement of the rounds a restore lost: what the broker's superseded rows
/// say was staked and returned at a seat, for one player.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LostMove {
    /// The round (on the superseded history).
    pub round: u64,
    /// The seat (box).
    pub seat: u8,
    /// The player.
    pub player: String,
    /// Staked: what the wallet was debited for it.
    pub staked: i64,
    /// Returned: what the wallet was credited once the round was final (0 if it was not
    /// settled before the history ends).
    pub returned: i64,
    /// Whether the round was settled on the superseded history.
    pub settled: bool,
}

/// What `croupier timeline lost` found: the superseded rows it read and the movements.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LostTail {
    /// The continue's timeline id.
    pub timeline: String,
    /// The superseded rows: `common_seq + 1 ..= last_seq`.
    pub common_seq: u64,
    /// The superseded history's last row.
    pub last_seq: u64,
    /// Every player's stakes and returns in those rows, by round and seat.
    pub moves: Vec<LostMove>,
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
    let mut follower = crate::table::Follower::new(
        id,
        &config.table.name,
        &config.table.variant,
        variant,
        config.disputes.settings(),
    );
    for row in log.iter().take_while(|r| r.seq <= common) {
        follower.follow(row)?;
    }
    Ok(LostTail {
        timeline: branch.id.to_string(),
        common_seq: common,
        last_seq: last,
        moves: moves(&mut follower, &rows)?,
    })
}

/// The movements `rows` make after what `follower` has folded: each settled round's
/// stakes and returns by seat and player (the seated player named in the round's bets; a
/// player behind or on a common draw's box in the result), and the stakes of a round the
/// rows end in before it settled.
fn moves(
    follower: &mut crate::table::Follower,
    rows: &[crate::store::LogRow],
) -> Result<Vec<LostMove>, String> {
    use crate::engine::{Event, Input};
    use std::collections::BTreeMap;
    let mut out = Vec::new();
    // The bets of the round in play: seat → (seated player, stakes by player).
    let mut placed: BTreeMap<u8, (Option<String>, BTreeMap<String, i64>)> = BTreeMap::new();
    let mut round = 0;
    for row in rows {
        let (snapshot, events) = follower.follow(row)?;
        round = snapshot.round.number;
        if let Record::Input {
            input: Input::Bets(bets),
            ..
        } = &row.record
        {
            placed.clear();
            for b in bets {
                let (seated, stakes) = placed.entry(b.seat).or_default();
                if let Some(p) = &b.player {
                    *seated = Some(p.clone());
                    *stakes.entry(p.clone()).or_default() +=
                        b.main + b.side.iter().map(|(_, a)| *a).sum::<i64>();
                }
                for behind in &b.behind {
                    *stakes.entry(behind.player.clone()).or_default() +=
                        behind.main + behind.side.iter().map(|(_, a)| *a).sum::<i64>();
                }
            }
        }
        for e in &events {
            let Event::RoundSettled(result) = e else {
                continue;
            };
            let mut settled: BTreeMap<(u8, String), (i64, i64)> = BTreeMap::new();
            for bet in &result.bets {
                let player = match &bet.player {
                    Some(p) => p.to_string(),
                    None => match placed.get(&bet.seat).and_then(|(p, _)| p.clone()) {
                        Some(p) => p,
                        None => continue,
                    },
                };
                let s = settled.entry((bet.seat, player)).or_default();
                // The settlement's stakes include doubles, splits and insurance.
                s.0 += bet.staked;
                s.1 += bet.returned;
            }
            out.extend(
                settled
                    .into_iter()
                    .map(|((seat, player), (staked, returned))| LostMove {
                        round: result.round,
                        seat,
                        player,
                        staked,
                        returned,
                        settled: true,
                    }),
            );
            placed.clear();
        }
    }
    // Bets the rows end with, unsettled.
    for (seat, (_, stakes)) in placed {
        out.extend(stakes.into_iter().map(|(player, staked)| LostMove {
            round,
            seat,
            player,
            staked,
            returned: 0,
            settled: false,
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, Event, Input, Variant};
    use crate::sim::{Style, TableSim};
    use crate::store::{LogRow, Source};
    use std::sync::Arc;

    /// A session of `rounds` settled rounds whose seats are held by players `p<seat>`:
    /// the log rows, and what the engine settled.
    fn session(rounds: usize) -> (Vec<LogRow>, Vec<crate::engine::RoundResult>) {
        let v = Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let mut engine = Engine::new(Arc::clone(&v));
        let mut sim = TableSim::new(v, 7, Style::Random);
        let (mut rows, mut results, mut events) = (Vec::new(), Vec::new(), Vec::new());
        while results.len() < rounds {
            let mut input = sim.next_input(&engine);
            if let Input::Bets(bets) = &mut input {
                for b in bets.iter_mut() {
                    b.player = Some(format!("p{}", b.seat));
                }
            }
            events.clear();
            engine.apply(&input, &mut events).expect("legal");
            for e in events.drain(..) {
                if let Event::RoundSettled(r) = e {
                    results.push(*r);
                }
            }
            rows.push(LogRow {
                seq: rows.len() as u64 + 1,
                at_ms: 0,
                record: Record::Input {
                    source: Source::Api,
                    input,
                },
                hash: String::new(),
            });
        }
        (rows, results)
    }

    #[test]
    fn the_lost_rows_movements_are_each_seated_players_stakes_and_returns() {
        let (rows, results) = session(6);
        let v = Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let mut follower = crate::table::Follower::new(
            "t",
            "t",
            "deluxe",
            v,
            crate::table::DisputeSettings::default(),
        );
        let got = moves(&mut follower, &rows).expect("folds");
        assert!(!got.is_empty());
        assert!(got.iter().all(|m| m.settled), "{got:?}");
        for r in &results {
            // Every bet line's stake and return, by seat and player: the seat's own lines
            // (no player in the result) are its seated player's.
            let mut want: std::collections::BTreeMap<(u8, String), (i64, i64)> = Default::default();
            for b in &r.bets {
                let player = b
                    .player
                    .as_deref()
                    .map_or_else(|| format!("p{}", b.seat), str::to_string);
                let e = want.entry((b.seat, player)).or_default();
                e.0 += b.staked;
                e.1 += b.returned;
            }
            let have: std::collections::BTreeMap<(u8, String), (i64, i64)> = got
                .iter()
                .filter(|m| m.round == r.round)
                .map(|m| ((m.seat, m.player.clone()), (m.staked, m.returned)))
                .collect();
            assert_eq!(have, want, "round {}", r.round);
        }
    }
}
