//! The publisher task: follows the committed log and publishes it to JetStream. New rows
//! come from the writer's memory (`store::outbox::Recent`), older ones (catching up after
//! a restart or an outage of the broker) from SQLite.
//!
//! Each pass: ensure the table's two streams and the bucket exist; ask the broker what it
//! holds (the log stream's last sequence is the last row published, the public stream's
//! last message carries its id and its sequence is its `n`); fold the log up to there;
//! then publish every later row on `croupier.<table>.log` and its public messages on
//! `croupier.<table>.public`, each with `Nats-Msg-Id` and `Nats-Expected-Last-Sequence`,
//! awaiting every acknowledgement before the progress is saved and the snapshot key is
//! put (at most once a second, and when the table goes quiet: see `FLUSH_EVERY`). Any
//! failure ends the pass; the next one starts again from what the broker holds, so
//! nothing is skipped and nothing is stored twice, however the table, the broker or the
//! network failed in between.

use super::fold::PublicFold;
use super::subjects::{self, HEADER_ID, HEADER_SIG, HEADER_TABLE};
use super::{PublishSection, PublishState, PublishStatus};
use crate::engine::Variant;
use crate::store::outbox::{OutboxDb, Progress, Recent, StoredRow};
use crate::store::timeline::Lineage;
use crate::table::{DisputeSettings, Snapshot, TableHandle};
use crate::trust::{wire, TableKeys};
use crate::web::feed::{encode, Body};
use async_nats::jetstream::{self, stream, Context};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

/// Rows read and published per batch (their acknowledgements are awaited together).
const BATCH: u32 = 256;
/// How long a caught-up publisher waits for a commit before looking at the log itself
/// anyway (the table tells it of every commit; this is the safety net, and costs an idle
/// table a read).
const IDLE: Duration = Duration::from_secs(5);
/// How often, at most, the bucket's view and the progress row follow the published rows.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The longest pause between two passes after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How far back from the public stream's end the publisher looks for its own last
/// message, past messages it did not sign (someone else wrote to its subject).
const FOREIGN_SCAN: u64 = 1_000;

/// The table being published.
#[derive(Clone)]
pub struct TableInfo {
    /// Its id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// The game's name.
    pub variant_name: String,
    /// The game's rules.
    pub variant: Arc<Variant>,
    /// The dispute settings (they decide what is provisional).
    pub disputes: DisputeSettings,
    /// The table's keys: the published stream seals and signs as the table does.
    pub trust: Option<Arc<crate::trust::TableKeys>>,
    /// The table's currency: the published views say it, as the table's own do.
    pub currency: crate::currency::Currency,
}

/// A pass failed.
#[derive(Debug, thiserror::Error)]
enum PassError {
    /// The broker failed or refused a request.
    #[error("broker: {0}")]
    Broker(String),
    /// The database could not be read or written.
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    /// A committed row does not replay: the log cannot be followed.
    #[error("the log does not replay: {0}")]
    Replay(String),
    /// The broker holds another history under this table's id.
    #[error("{0}")]
    Fork(String),
    /// A message the table did not send reached its stream while it published.
    #[error("{0}")]
    Raced(String),
}

fn broker(e: impl std::fmt::Display) -> PassError {
    PassError::Broker(e.to_string())
}

/// Starts the publisher for `table` (call inside a runtime); abort the handle to stop it.
pub fn start(
    config: PublishSection,
    info: TableInfo,
    db: PathBuf,
    recent: Option<Recent>,
    table: &TableHandle,
) -> (Arc<PublishStatus>, JoinHandle<()>) {
    let status = Arc::new(PublishStatus::new(config.max_lag));
    let task = tokio::spawn(run(
        config,
        info,
        db,
        recent,
        table.watch(),
        Arc::clone(&status),
    ));
    (status, task)
}

async fn run(
    config: PublishSection,
    info: TableInfo,
    path: PathBuf,
    recent: Option<Recent>,
    mut commits: watch::Receiver<Arc<Snapshot>>,
    status: Arc<PublishStatus>,
) {
    let id = info.id.clone();
    // The relays serve only what the table signs: unsigned, nothing would be served.
    let Some(keys) = info.trust.clone() else {
        status.stop("the table has no key: relays serve only what a table signs".into());
        error!(table = %id, "publisher stopped: the table has no key, and relays serve only what a table signs");
        return;
    };
    let db = loop {
        match OutboxDb::open(&path, &id).await {
            Ok(db) => {
                break match &recent {
                    Some(r) => db.with_recent(r.clone()),
                    None => db,
                }
            }
            Err(e) => {
                status.count_failure();
                warn!(table = %id, error = %e, "publisher: the database cannot be opened; trying again");
                tokio::time::sleep(MAX_BACKOFF).await;
            }
        }
    };
    // The lag is known before the broker answers.
    if let Ok(p) = db.progress().await {
        status.set_acked(p.log_seq, p.public_n);
    }
    let mut backoff = Duration::from_millis(250);
    let client = loop {
        match crate::broker::connect(&config.broker_options(&id), &format!("croupier table {id}"))
            .await
        {
            Ok(client) => break client,
            Err(e) => {
                status.set_state(PublishState::Disconnected);
                status.count_failure();
                warn!(table = %id, error = %e, "publisher: the broker is unreachable; the table goes on");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    };
    info!(table = %id, url = %crate::broker::redact(&config.nats_url), "publisher connected");
    status.set_client(client.clone());
    let js = crate::broker::jetstream(client, config.broker_options(&id).api_prefix());
    let mut publisher = Publisher {
        config,
        info,
        keys,
        db,
        status: Arc::clone(&status),
        fold: None,
        lineage: Lineage::default(),
    };
    let mut backoff = Duration::from_millis(250);
    loop {
        status.set_state(PublishState::Connecting);
        match publisher.pass(&js, &mut commits, &mut backoff).await {
            Err(PassError::Replay(why)) => {
                status.stop(format!("the log does not replay: {why}"));
                error!(table = %id, %why, "publisher stopped: the log cannot be followed");
                return;
            }
            Err(PassError::Fork(why)) => {
                // Never published over: the operator decides (a restored table, a
                // second table configured with this id).
                status.stop(why.clone());
                error!(table = %id, %why, "publisher stopped: the broker holds another history of this table");
                publisher.announce_fork(&js, &why).await;
                return;
            }
            Err(PassError::Raced(why)) => {
                // Not a broker failure: a message the table did not send reached its
                // stream (see `scan_own`). Start again at once from what the broker holds.
                warn!(table = %id, %why, "publisher: a foreign message reached the table's stream; resuming after it");
                publisher.fold = None;
            }
            Err(e) => {
                status.set_state(PublishState::Disconnected);
                status.count_failure();
                warn!(table = %id, error = %e, "publisher: pass failed; starting again from what the broker holds");
                // A fold that ran ahead of what was acknowledged is rebuilt.
                publisher.fold = None;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Ok(()) => return,
        }
    }
}

struct Publisher {
    config: PublishSection,
    info: TableInfo,
    keys: Arc<TableKeys>,
    db: OutboxDb,
    status: Arc<PublishStatus>,
    fold: Option<PublicFold>,
    /// The log's timelines, read at the start of each pass (a new one only begins while
    /// the table is stopped: a restore, `croupier timeline continue`).
    lineage: Lineage,
}

/// What the broker holds for the table.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// The table's last row on the log stream.
    log: u64,
    /// The log stream's last sequence: `log`, unless something else reached the table's
    /// log subject (passed over, as the floor's chain check does).
    log_seq: u64,
    /// The last public message's id, in row terms (its row and index among the row's
    /// messages; published ids add the branch's offset: [`Lineage::branch_at`]).
    public: (u64, u32),
    /// Its number.
    n: u64,
    /// A branch begins: the public stream's viewers must be sent the whole state at the
    /// common row before anything of the branch (the superseded history's state is not
    /// this log's).
    resync_due: bool,
    /// The public stream's last sequence: `n`, unless someone else wrote to the table's
    /// subject (the messages it did not sign are skipped, by the relays too).
    public_seq: u64,
}

impl Publisher {
    /// One pass; returns `Ok` only when the table has stopped.
    async fn pass(
        &mut self,
        js: &Context,
        commits: &mut watch::Receiver<Arc<Snapshot>>,
        backoff: &mut Duration,
    ) -> Result<(), PassError> {
        let id = self.info.id.clone();
        let log_stream = self.ensure_stream(js, false).await?;
        let public_stream = self.ensure_stream(js, true).await?;
        self.ensure_bucket(js).await?;
        let bucket_subject = subjects::bucket_key(&self.config.bucket, &id);
        let saved = self.db.progress().await?;
        self.lineage = self.db.lineage().await?;
        let mut held = self.held(&log_stream, &public_stream, saved).await?;
        // Re-fold to the first row whose messages may be missing.
        // (A row's messages may be published in part: its drafts are made again, unless
        // the position is past all of them, as a branch's resync view is.)
        let public_row = if held.public.1 == u32::MAX {
            held.public.0
        } else {
            held.public.0.saturating_sub(1)
        };
        let start = held.log.min(public_row);
        if self.fold.as_ref().is_none_or(|f| f.seq() > start) {
            let fold = PublicFold::new(
                &id,
                &self.info.name,
                &self.info.variant_name,
                Arc::clone(&self.info.variant),
                self.info.disputes,
            )
            .with_currency(self.info.currency.clone());
            self.fold = Some(match &self.info.trust {
                Some(keys) => fold.with_trust(Arc::clone(keys)),
                None => fold,
            });
        }
        let fold = self.fold.as_mut().ok_or_else(|| broker("no fold"))?;
        while fold.seq() < start {
            let rows = self.db.rows_after(fold.seq(), BATCH).await?;
            if rows.is_empty() {
                break;
            }
            for r in rows.iter().take_while(|r| r.row.seq <= start) {
                fold.row(&r.row).map_err(PassError::Replay)?;
            }
        }
        info!(table = %id, log = held.log, public = ?held.public, n = held.n, "publisher: resuming after what the broker holds");
        if held.resync_due {
            held = self.begin_branch(js, held).await?;
        }
        self.status.set_acked(held.log, held.n);
        self.status.set_state(PublishState::Publishing);
        *backoff = Duration::from_millis(250);
        let log_subject = subjects::log(&id);
        let public_subject = subjects::public(&id);
        // The bucket's view and the progress row follow the published messages at most
        // every FLUSH_EVERY (and once the table stops or goes quiet), not after every
        // batch: each costs an encoding of the whole view, a signature, a round trip to
        // the broker and a write to SQLite, and neither is needed per row (a relay seeded
        // from an older view reads the messages after it from the stream; the progress
        // row is a hint, the broker's streams the authority).
        let mut flushed: Option<tokio::time::Instant> = None;
        let mut unflushed: Option<i64> = None;
        let mut from_disk = false;
        loop {
            let fold = self.fold.as_mut().ok_or_else(|| broker("no fold"))?;
            let rows = if from_disk {
                self.db.stored_rows_after(fold.seq(), BATCH).await?
            } else {
                self.db.rows_after(fold.seq(), BATCH).await?
            };
            from_disk = false;
            if rows.is_empty() {
                // On the process's grid of seconds, with its other timers (`clock::every`).
                let due = unflushed
                    .and(flushed)
                    .map(|at| crate::clock::on_grid(at + FLUSH_EVERY, FLUSH_EVERY));
                let idle = crate::clock::on_grid(tokio::time::Instant::now() + IDLE, FLUSH_EVERY);
                tokio::select! {
                    changed = commits.changed() => if changed.is_err() {
                        if let Some(at_ms) = unflushed {
                            self.flush(js, &bucket_subject, held, at_ms).await?;
                        }
                        return Ok(());
                    },
                    _ = crate::clock::until(due) => {
                        if let Some(at_ms) = unflushed.take() {
                            self.flush(js, &bucket_subject, held, at_ms).await?;
                            flushed = Some(tokio::time::Instant::now());
                        }
                    }
                    // Nothing for a while: look at the log itself, in case a row was
                    // committed that the writer's buffer does not hold.
                    _ = tokio::time::sleep_until(idle) => from_disk = true,
                }
                continue;
            }
            // Everything is sent, then every acknowledgement awaited in order: a batch
            // costs one round trip, and `Nats-Expected-Last-Sequence` keeps it in order.
            let mut pending = Vec::new();
            let mut next = held;
            // The first message of a batch expects the stream's last sequence; each later
            // one expects the message before it by id, so that once one is refused (a
            // foreign message got in between) every later one is refused too, and none is
            // stored after a hole.
            let (mut log_prev, mut public_prev): (Option<String>, Option<String>) = (None, None);
            for r in &rows {
                let drafts = fold.row(&r.row).map_err(PassError::Replay)?;
                let seq = r.row.seq;
                let branch = self.lineage.branch_at(seq);
                let offset = branch.as_ref().map_or(0, |b| b.public_offset);
                // The row's log message (unless the broker holds it) and the public messages
                // it does not hold yet, made first: one signature covers them all.
                let log = (seq > next.log).then(|| {
                    let timeline = self.lineage.timeline_at(seq);
                    let on = branch.as_ref().map_or("", |b| b.id);
                    // Unique across histories: a branch republishes row numbers the
                    // superseded history used, within the broker's duplicate window too.
                    let msg_id =
                        format!("{id}:{}:{seq}", if on.is_empty() { timeline } else { on });
                    (log_json(&id, r, timeline, on), msg_id)
                });
                let at_ms = u64::try_from(r.row.at_ms).unwrap_or(0);
                let mut n = next.n;
                let publics: Vec<_> = drafts
                    .iter()
                    .filter(|d| d.key() > next.public)
                    .map(|d| {
                        n += 1;
                        let published = (d.seq + offset, d.sub);
                        (d.key(), n, published, d.text_as(published, n, at_ms))
                    })
                    .collect();
                let mut parts = Vec::with_capacity(1 + publics.len());
                if let Some((text, msg_id)) = &log {
                    parts.push(wire::Part {
                        domain: wire::LOG,
                        payload: text.as_bytes(),
                        salt: Some(wire::salt(&self.keys, msg_id)),
                    });
                }
                parts.extend(publics.iter().map(|(.., text)| wire::Part {
                    domain: wire::PUBLIC,
                    payload: text.as_bytes(),
                    salt: None,
                }));
                let mut proofs = wire::sign_together(&self.keys, &id, &parts).into_iter();
                if let Some((text, msg_id)) = log {
                    let proof = proofs.next().ok_or_else(|| broker("no proof"))?;
                    let message = jetstream::message::PublishMessage::build()
                        .payload(text.into())
                        .message_id(msg_id.as_str())
                        .header(HEADER_TABLE, id.as_str());
                    let message = subjects::with_proof(message, &proof);
                    let message = match log_prev.replace(msg_id) {
                        Some(prev) => message.expected_last_message_id(prev),
                        None => message.expected_last_sequence(next.log_seq),
                    };
                    let ack = js
                        .send_publish(log_subject.clone(), message)
                        .await
                        .map_err(broker)?;
                    next.log_seq += 1;
                    pending.push((next.log_seq, ack));
                    next.log = r.row.seq;
                }
                for ((draft, n, published, text), proof) in publics.into_iter().zip(proofs) {
                    let key = format!("{}.{}", published.0, published.1);
                    let msg_id = format!("{id}:{key}");
                    let message = jetstream::message::PublishMessage::build()
                        .payload(text.into())
                        .message_id(msg_id.as_str())
                        .header(HEADER_ID, key.as_str())
                        .header(HEADER_TABLE, id.as_str());
                    let message = subjects::with_proof(message, &proof);
                    let message = match public_prev.replace(msg_id) {
                        Some(prev) => message.expected_last_message_id(prev),
                        None => message.expected_last_sequence(next.public_seq),
                    };
                    let ack = js
                        .send_publish(public_subject.clone(), message)
                        .await
                        .map_err(broker)?;
                    next.public_seq += 1;
                    pending.push((next.public_seq, ack));
                    next.public = draft;
                    next.n = n;
                }
            }
            let sent = pending.len() as u64;
            for (expected, ack) in pending {
                let ack = match ack.await {
                    Ok(ack) => ack,
                    // Something else reached the stream between two of its messages.
                    Err(e)
                        if matches!(
                            e.kind(),
                            jetstream::context::PublishErrorKind::WrongLastSequence
                                | jetstream::context::PublishErrorKind::WrongLastMessageId
                        ) =>
                    {
                        return Err(PassError::Raced(e.to_string()))
                    }
                    Err(e) => return Err(broker(e)),
                };
                if ack.sequence != expected {
                    return Err(broker(format!(
                        "stream {} stored sequence {} where {expected} was expected",
                        ack.stream, ack.sequence
                    )));
                }
            }
            held = next;
            self.status.count_published(sent);
            self.status.set_acked(held.log, held.n);
            let at_ms = rows.last().map_or(0, |r| r.row.at_ms);
            if flushed.is_none_or(|at| at.elapsed() >= FLUSH_EVERY) {
                self.flush(js, &bucket_subject, held, at_ms).await?;
                flushed = Some(tokio::time::Instant::now());
                unflushed = None;
            } else {
                unflushed = Some(at_ms);
            }
        }
    }

    /// The late joiners' snapshot (the bucket's view, signed) and the progress row, as of
    /// `held`, the last published row having been committed at `at_ms`.
    async fn flush(
        &self,
        js: &Context,
        bucket_subject: &str,
        held: Held,
        at_ms: i64,
    ) -> Result<(), PassError> {
        let id = self.info.id.as_str();
        let fold = self.fold.as_ref().ok_or_else(|| broker("no fold"))?;
        let public_id = self.published_id(held.public);
        if let Some(view) = fold.view() {
            let text = encode(
                public_id.0,
                public_id.1,
                held.n,
                u64::try_from(at_ms).unwrap_or(0),
                Body::View { view, resync: true },
            );
            // Published with its signature (a relay seeds its feed only from a value
            // the table signed), on the key-value subject itself.
            let sig = wire::sign(&self.keys, wire::SNAPSHOT, id, text.as_bytes());
            let message = jetstream::message::PublishMessage::build()
                .payload(text.into())
                .header(HEADER_SIG, sig.as_str());
            js.send_publish(bucket_subject.to_string(), message)
                .await
                .map_err(broker)?
                .await
                .map_err(broker)?;
        }
        self.db
            .save(Progress {
                log_seq: held.log,
                public_id,
                public_n: held.n,
            })
            .await?;
        Ok(())
    }

    /// Says on the table's log subject, signed, that publishing stopped over another
    /// history (`{"table", "notice": "fork", "detail"}`): not a row — nothing follows from
    /// it — but the floor raises a `fork` alarm on it, so the divergence is seen there
    /// before the operator acts. Best effort: the stop stands whatever the broker answers.
    async fn announce_fork(&self, js: &Context, why: &str) {
        let id = self.info.id.as_str();
        let text = serde_json::json!({"table": id, "notice": "fork", "detail": why}).to_string();
        let sig = wire::sign(&self.keys, wire::LOG, id, text.as_bytes());
        let digest = hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(why.as_bytes())[..8]);
        let message = jetstream::message::PublishMessage::build()
            .payload(text.into())
            .message_id(format!("{id}:fork:{digest}").as_str())
            .header(HEADER_TABLE, id)
            .header(HEADER_SIG, sig.as_str());
        match js.send_publish(subjects::log(id), message).await {
            Ok(ack) => {
                if let Err(e) = ack.await {
                    warn!(table = %id, error = %e, "publisher: the fork notice was not stored");
                }
            }
            Err(e) => warn!(table = %id, error = %e, "publisher: the fork notice was not sent"),
        }
    }

    /// A public message's id as published: `key` (row terms) plus its branch's offset.
    fn published_id(&self, key: (u64, u32)) -> (u64, u32) {
        let offset = self.lineage.branch_at(key.0).map_or(0, |b| b.public_offset);
        (key.0 + offset, key.1)
    }

    /// The start of a branch on the public stream: a resync view of the state at the
    /// common row, so every viewer and relay replaces what it holds of the superseded
    /// history before the branch's messages follow. Its id sorts after the superseded
    /// history's last message and before the branch's first.
    async fn begin_branch(&mut self, js: &Context, mut held: Held) -> Result<Held, PassError> {
        let id = self.info.id.clone();
        let Some(branch) = self.lineage.last_branch() else {
            return Ok(held);
        };
        let (common, offset) = (branch.common_seq, branch.public_offset);
        let fold = self.fold.as_ref().ok_or_else(|| broker("no fold"))?;
        if fold.seq() != common {
            return Err(PassError::Replay(format!(
                "the branch begins after row {common}, the log was followed to row {}",
                fold.seq()
            )));
        }
        let Some(view) = fold.view() else {
            held.resync_due = false;
            return Ok(held);
        };
        let key = (common, u32::MAX);
        let published = (common + offset, u32::MAX);
        let n = held.n + 1;
        let text = encode(
            published.0,
            published.1,
            n,
            u64::try_from(crate::store::now_ms()).unwrap_or(0),
            Body::View { view, resync: true },
        );
        let sig = wire::sign(&self.keys, wire::PUBLIC, &id, text.as_bytes());
        let header_id = format!("{}.{}", published.0, published.1);
        let message = jetstream::message::PublishMessage::build()
            .payload(text.into())
            .message_id(format!("{id}:{}:{header_id}", branch.id).as_str())
            .header(HEADER_ID, header_id.as_str())
            .header(HEADER_TABLE, id.as_str())
            .header(HEADER_SIG, sig.as_str())
            .expected_last_sequence(held.public_seq);
        let ack = js
            .send_publish(subjects::public(&id), message)
            .await
            .map_err(broker)?
            .await
            .map_err(|e| match e.kind() {
                jetstream::context::PublishErrorKind::WrongLastSequence => {
                    PassError::Raced(e.to_string())
                }
                _ => broker(e),
            })?;
        warn!(table = %id, branch = branch.id, common, superseded = branch.superseded.seq, n, "publisher: a new branch begins after the common row; viewers are sent its state");
        held.public = key;
        held.n = n;
        held.public_seq = ack.sequence;
        held.resync_due = false;
        Ok(held)
    }

    /// The table's stream, created when missing (on a studio broker the admin creates
    /// it: `croupier studio provision`, the table may only read its description).
    async fn ensure_stream(&self, js: &Context, public: bool) -> Result<stream::Stream, PassError> {
        let names = self.config.stream_names();
        let config = if public {
            names.public(&self.info.id)
        } else {
            names.log(&self.info.id)
        };
        get_or_create(js, config).await
    }

    /// The bucket's stream, created when missing (likewise).
    async fn ensure_bucket(&self, js: &Context) -> Result<stream::Stream, PassError> {
        get_or_create(js, self.config.stream_names().bucket()).await
    }
}

/// The stream, created only when the broker says it does not exist.
async fn get_or_create(js: &Context, config: stream::Config) -> Result<stream::Stream, PassError> {
    match js.get_stream(&config.name).await {
        Ok(stream) => Ok(stream),
        Err(e)
            if matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(ref j)
                if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND) =>
        {
            let name = config.name.clone();
            js.create_stream(config).await.map_err(|e| {
                broker(format!(
                    "stream {name} is missing and cannot be created ({e}); on a studio broker, create it with `croupier studio provision`"
                ))
            })
        }
        Err(e) => Err(broker(format!("stream {}: {e}", config.name))),
    }
}

/// The newest message at the end of `stream` that `own` accepts (the table's own: signed
/// with its key), scanning back past up to [`FOREIGN_SCAN`] others — messages someone
/// else put on the table's subject, or JetStream's answers a client pointed there (any
/// client with a JetStream grant can name any reply subject). `fresh` tells a message
/// from now (at or after what was saved as acknowledged) from a replayed copy of an
/// older one. Returns the fresh message, else (when the scan reached the stream's first
/// message) the newest own one at all, and the stream's last sequence.
async fn scan_own<T>(
    stream: &stream::Stream,
    table: &str,
    own: impl Fn(&jetstream::message::StreamMessage) -> Option<T>,
    fresh: impl Fn(&T) -> bool,
) -> Result<Scanned<T>, PassError> {
    // The description `get_stream` fetched at the start of this pass.
    let state = &stream.cached_info().state;
    let last = state.last_sequence;
    let first = state.first_sequence.max(1);
    let lowest = first.max(last.saturating_sub(FOREIGN_SCAN - 1));
    let mut newest = None;
    let mut seq = last;
    while seq >= lowest && seq > 0 {
        match stream.get_raw_message(seq).await {
            Ok(m) => match own(&m) {
                Some(t) if fresh(&t) => {
                    return Ok(Scanned {
                        fresh: Some(t),
                        any: None,
                        last,
                        whole: true,
                    })
                }
                Some(t) => {
                    warn!(table, stream = %stream.cached_info().config.name, seq, "publisher: a copy of an older message of the table's; passed over");
                    newest.get_or_insert(t);
                }
                None => {
                    warn!(table, stream = %stream.cached_info().config.name, seq, "publisher: a message the table did not sign; passed over");
                }
            },
            Err(e) if e.kind() == stream::RawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(broker(e)),
        }
        seq -= 1;
    }
    Ok(Scanned {
        fresh: None,
        any: newest,
        last,
        whole: lowest <= first,
    })
}

/// What [`scan_own`] found.
struct Scanned<T> {
    fresh: Option<T>,
    any: Option<T>,
    last: u64,
    /// Whether every message of the stream was looked at.
    whole: bool,
}

/// A log message's row: its `seq`, chain hash and timeline (`branch.rs` reads it too).
#[derive(serde::Deserialize)]
pub(super) struct LoggedRow {
    pub(super) table: String,
    pub(super) seq: u64,
    pub(super) hash: String,
    /// Absent in rows published before timelines existed.
    #[serde(default)]
    pub(super) timeline: String,
}

/// A public message's number.
#[derive(serde::Deserialize)]
struct Numbered {
    n: u64,
}

/// What the broker's last own row says of this log.
enum Standing {
    /// The log holds it: publishing goes on after it.
    Holds,
    /// The log's newest branch supersedes it: publishing goes on after the common row.
    Superseded,
}

impl Publisher {
    /// What the two streams hold of this table's: the last row and public message it
    /// signed (see [`scan_own`]). The log's last row must be the table's own row at that
    /// `seq` (same chain hash), or the very row the log's newest branch supersedes (the
    /// operator's `croupier timeline continue`): anything else is another history under
    /// this table's id (a restored database, a second table with the same id), and
    /// nothing is published. So is a newest row of this table's signed by another key.
    /// When the broker lost its store (the log stream holds less than was acknowledged),
    /// what it holds now is where publishing resumes.
    async fn held(
        &self,
        log: &stream::Stream,
        public: &stream::Stream,
        saved: Progress,
    ) -> Result<Held, PassError> {
        let table = self.info.id.as_str();
        let key = self.keys.verifying_key();
        let signed = |domain: &str, m: &jetstream::message::StreamMessage| {
            subjects::signed(&key, domain, table, &m.payload, &m.headers)
        };
        // A well-formed row of this table's signed with another key: another table
        // publishes under this id (or this table's key was replaced).
        // A Mutex, not a RefCell: the scan awaits, and the pass must stay Send.
        let foreign = std::sync::Mutex::new(None);
        let rows = scan_own(
            log,
            table,
            |m| {
                let row = serde_json::from_slice::<LoggedRow>(&m.payload)
                    .ok()
                    .filter(|r| r.table == table)?;
                if signed(wire::LOG, m) {
                    return Some(row);
                }
                if m.headers.get(HEADER_SIG).is_some() {
                    foreign
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert((row.seq, row.timeline));
                }
                None
            },
            |r| r.seq >= saved.log_seq,
        )
        .await?;
        let foreign = foreign.into_inner().unwrap_or_else(|e| e.into_inner());
        if let (Some((seq, timeline)), true) =
            (&foreign, rows.fresh.is_none() && rows.any.is_none())
        {
            return Err(PassError::Fork(format!(
                "timeline_foreign: the broker holds rows of table {table} signed with another key (row {seq}, timeline {timeline}): another table publishes under this id, or this table's key was replaced. Nothing is published; give one of the tables another id"
            )));
        }
        let (row, lost) = match (rows.fresh, rows.any) {
            (Some(r), _) => (Some(r), false),
            (None, any) if rows.whole => (any, true),
            (None, _) => {
                return Err(broker(format!(
                    "none of the log stream's last {FOREIGN_SCAN} messages is this table's"
                )))
            }
        };
        let mut position = row.as_ref().map_or(0, |r| r.seq);
        if let Some(r) = &row {
            match self.standing(r).await? {
                Standing::Holds => {}
                Standing::Superseded => {
                    let branch = self
                        .lineage
                        .last_branch()
                        .ok_or_else(|| broker("no branch"))?;
                    position = branch.common_seq;
                }
            }
        }
        let messages = scan_own(
            public,
            table,
            |m| {
                if !signed(wire::PUBLIC, m) {
                    return None;
                }
                let id = m
                    .headers
                    .get(HEADER_ID)
                    .and_then(|v| crate::web::feed::parse_id(v.as_str()))?;
                let n = serde_json::from_slice::<Numbered>(&m.payload).ok()?;
                Some((id, n.n))
            },
            |(id, _)| lost || *id >= saved.public_id,
        )
        .await?;
        let (public_id, n) = match (messages.fresh, messages.any) {
            (Some(m), _) => m,
            (None, Some(m)) if lost => m,
            (None, _) if messages.whole && (lost || messages.last == 0) => ((0, 0), 0),
            // Its own messages expired (the public stream's retention): the saved
            // progress says where it stands.
            (None, _) if messages.whole => (saved.public_id, saved.public_n),
            (None, _) => {
                return Err(broker(format!(
                    "none of the public stream's last {FOREIGN_SCAN} messages is this table's"
                )))
            }
        };
        let (public, resync_due) = self.public_position(public_id);
        Ok(Held {
            log: position,
            log_seq: rows.last,
            public,
            n,
            resync_due,
            public_seq: messages.last,
        })
    }

    /// Whether this log holds the broker's last own row `r`, or its newest branch
    /// supersedes it; otherwise the broker holds another history ([`PassError::Fork`]).
    async fn standing(&self, r: &LoggedRow) -> Result<Standing, PassError> {
        let table = self.info.id.as_str();
        let ours = self.db.rows_after(r.seq - 1, 1).await?;
        if ours
            .first()
            .is_some_and(|o| o.row.seq == r.seq && o.hash == r.hash)
        {
            return Ok(Standing::Holds);
        }
        if let Some(b) = self.lineage.last_branch() {
            if b.superseded.seq == r.seq && b.superseded.hash == r.hash {
                return Ok(Standing::Superseded);
            }
        }
        let last = self.db.last_seq().await?;
        let why = if r.seq > last {
            format!(
                "it holds row {} and this log ends at row {last} (a restored or cut-back database)",
                r.seq
            )
        } else {
            format!(
                "its row {} (hash {}) is not this log's row {}",
                r.seq, r.hash, r.seq
            )
        };
        Err(PassError::Fork(format!(
            "timeline_fork: the broker holds another history of table {table}: {why}. Nothing is published. If this log is the one to keep, stop the table and run `croupier timeline continue` (the broker's history is kept, marked superseded)"
        )))
    }

    /// The public stream's position in row terms from its last own message's id, and
    /// whether a branch's resync view is still due: a message of the superseded history
    /// after the newest branch's common row puts the position back to that row, with a
    /// resync first. (A stream behind the common row — one the broker lost and that is
    /// being filled again — goes on from where it is.)
    fn public_position(&self, id: (u64, u32)) -> ((u64, u32), bool) {
        let Some(newest) = self.lineage.last_branch() else {
            return (id, false);
        };
        let branches = self.lineage.branches_newest_first();
        let on = branches
            .iter()
            .position(|b| id >= (b.common_seq + b.public_offset, u32::MAX));
        let row = match on {
            Some(i) => (id.0 - branches[i].public_offset, id.1),
            None => id,
        };
        if on == Some(0) || row.0 <= newest.common_seq {
            return (row, false);
        }
        ((newest.common_seq, u32::MAX), true)
    }
}

/// A log row on `croupier.<table>.log`: `{"table", "seq", "at_ms", "kind", "hash",
/// "timeline", "branch", "record"}`, the record exactly as stored; `timeline` is the
/// timeline the row belongs to, `branch` the continue it is published on ("" before any).
fn log_json(table: &str, r: &StoredRow, timeline: &str, branch: &str) -> String {
    format!(
        r#"{{"table":{},"seq":{},"at_ms":{},"kind":{},"hash":"{}","timeline":{},"branch":{},"record":{}}}"#,
        serde_json::Value::from(table),
        r.row.seq,
        r.row.at_ms,
        serde_json::Value::from(r.kind.as_str()),
        r.hash,
        serde_json::Value::from(timeline),
        serde_json::Value::from(branch),
        r.payload
    )
}
