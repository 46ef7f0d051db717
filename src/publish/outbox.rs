//! The publisher task: follows the committed log and publishes it to JetStream. New rows
//! come from the writer's memory (`store::outbox::Recent`), older ones (catching up after
//! a restart or an outage of the broker) from SQLite.
//!
//! Each pass: ensure the table's two streams and the bucket exist; find where the table's
//! own last messages are on them (`position.rs`: read on from the stream sequences the
//! broker's acknowledgements gave, past anything the table did not sign); fold the log up
//! to there; then publish every later row on `croupier.<table>.log` and its public
//! messages on `croupier.<table>.public`, each with `Nats-Msg-Id`, one message in flight
//! per stream: the next is sent once the broker acknowledged the one before, so no message
//! is ever stored after one that was not (no hole), a message sent again after a lost
//! acknowledgement is answered as a duplicate (none stored twice), and what others write
//! to the same subjects in between is only interleaved, never a refusal (no guard on the
//! stream's last sequence that a stranger could break, and so no way to starve the table).
//! The progress (each stream's last row or message and its stream sequence) is kept in
//! memory as acknowledgements arrive and saved with the bucket's view at most once a
//! second and when the table goes quiet (see `FLUSH_EVERY`). Any failure ends the pass;
//! the next one reads on from the last acknowledged messages, so nothing is skipped and
//! nothing is stored twice, however the table, the broker or the network failed.

use super::fold::PublicFold;
use super::subjects::{self, HEADER_ID, HEADER_SIG, HEADER_TABLE};
use super::{PublishSection, PublishState, PublishStatus};
use crate::broker::liveness::Remedy;
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
    /// Whether remote players may join (`[play] enabled`): the published views count the
    /// free seats only then.
    pub remote_play: bool,
}

/// A pass failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum PassError {
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
}

pub(super) fn broker(e: impl std::fmt::Display) -> PassError {
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
    let mut link = loop {
        match crate::broker::liveness::Watched::connect(
            &config.broker_options(&id),
            &format!("croupier table {id}"),
        )
        .await
        {
            Ok(link) => break link,
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
    status.set_client(link.client().clone());
    let api_prefix = config.broker_options(&id).api_prefix().to_string();
    let mut js = crate::broker::jetstream(link.client().clone(), &api_prefix);
    let mut publisher = Publisher {
        config,
        info,
        keys,
        db,
        status: Arc::clone(&status),
        fold: None,
        lineage: Lineage::default(),
        acked: None,
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
            Err(e) => {
                status.set_state(PublishState::Retrying);
                status.count_failure();
                warn!(table = %id, error = %e, "publisher: pass failed; starting again from what the broker holds");
                // A fold that ran ahead of what was acknowledged is rebuilt.
                publisher.fold = None;
                match link.after_failure().await {
                    Remedy::None => {}
                    Remedy::LeftNode => {
                        info!(table = %id, "publisher: the broker node sent nothing during the pass; trying another node")
                    }
                    Remedy::NewClient => {
                        info!(table = %id, "publisher: the client's reconnect did not get an answer either; connected anew");
                        status.set_client(link.client().clone());
                        js = crate::broker::jetstream(link.client().clone(), &api_prefix);
                    }
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Ok(()) => return,
        }
    }
}

pub(super) struct Publisher {
    config: PublishSection,
    pub(super) info: TableInfo,
    pub(super) keys: Arc<TableKeys>,
    pub(super) db: OutboxDb,
    pub(super) status: Arc<PublishStatus>,
    fold: Option<PublicFold>,
    /// The log's timelines, read at the start of each pass (a new one only begins while
    /// the table is stopped: a restore, `croupier timeline continue`).
    pub(super) lineage: Lineage,
    /// What this process last had acknowledged, and where the broker stored it: the next
    /// pass reads on from here (`None`: from the saved progress).
    acked: Option<Progress>,
}

/// Where the table's own last messages are on the broker.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    /// The table's last row on the log stream.
    pub(super) log: u64,
    /// Its sequence in the log stream (0: not known).
    pub(super) log_at: u64,
    /// The log stream's last sequence already looked at (what others put there up to it
    /// is counted).
    pub(super) log_read: u64,
    /// The last public message's id, in row terms (its row and index among the row's
    /// messages; published ids add the branch's offset: [`Lineage::branch_at`]).
    pub(super) public: (u64, u32),
    /// Its number.
    pub(super) n: u64,
    /// Its sequence in the public stream (0: not known).
    pub(super) public_at: u64,
    /// The public stream's last sequence already looked at.
    pub(super) public_read: u64,
    /// A branch begins: the public stream's viewers must be sent the whole state at the
    /// common row before anything of the branch (the superseded history's state is not
    /// this log's).
    pub(super) resync_due: bool,
}

/// What one stream's messages of a batch came to: sent one at a time, each once the one
/// before it was acknowledged.
struct Sent<P> {
    /// The last acknowledged message's position and its stream sequence.
    last: Option<(P, u64)>,
    /// The stream's last sequence looked at: the highest acknowledged.
    read: u64,
    /// Messages acknowledged.
    count: u64,
    /// Messages someone else put on the stream between two of the table's (the gaps
    /// between consecutive acknowledgements).
    foreign: u64,
    /// Why the batch stopped short, if it did.
    error: Option<PassError>,
}

/// Publishes `messages` on `subject` in order, one in flight: a message is sent only once
/// the broker acknowledged the one before, so none is stored after one that was not. `read`
/// is the stream's last sequence already looked at (0: none): the messages others stored
/// after it and before the first acknowledged one are counted as foreign.
async fn send_in_order<P>(
    js: &Context,
    status: &PublishStatus,
    subject: &str,
    messages: Vec<(jetstream::message::PublishMessage, P)>,
    read: u64,
) -> Sent<P> {
    let mut sent = Sent {
        last: None,
        read,
        count: 0,
        foreign: 0,
        error: None,
    };
    for (message, position) in messages {
        let sent_at = std::time::Instant::now();
        let ack = match js.send_publish(subject.to_string(), message).await {
            Ok(ack) => ack.await.map_err(broker),
            Err(e) => Err(broker(e)),
        };
        if ack.is_ok() {
            status.observe_ack(sent_at.elapsed());
        }
        match ack {
            Ok(ack) => {
                if !ack.duplicate && sent.read > 0 && ack.sequence > sent.read + 1 {
                    sent.foreign += ack.sequence - sent.read - 1;
                }
                sent.read = sent.read.max(ack.sequence);
                sent.last = Some((position, ack.sequence));
                sent.count += 1;
            }
            Err(e) => {
                sent.error = Some(e);
                break;
            }
        }
    }
    sent
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
        let from = match self.acked {
            Some(acked) => acked,
            None => self.db.progress().await?,
        };
        self.lineage = self.db.lineage().await?;
        let mut held = self.held(&log_stream, &public_stream, from).await?;
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
            let fold = fold.with_remote_play(self.info.remote_play);
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
        self.acked = Some(self.progress_of(held));
        self.status.set_acked(held.log, held.n);
        self.status.set_state(PublishState::Publishing);
        *backoff = Duration::from_millis(250);
        let log_subject = subjects::log(&id);
        let public_subject = subjects::public(&id);
        // The bucket's view and the progress row follow the published messages at most
        // every FLUSH_EVERY (and once the table stops or goes quiet), not after every
        // batch: each costs an encoding of the whole view, a signature, a round trip to
        // the broker and a write to SQLite, and neither is needed per row (a relay seeded
        // from an older view reads the messages after it from the stream; the saved
        // progress is where a restarted publisher starts reading, and it reads on from
        // there to what it acknowledged since).
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
            // The batch's messages for each stream, signed, then sent: the two streams at
            // once, each in order and one in flight.
            let mut logs = Vec::new();
            let mut publics = Vec::new();
            let mut next = held;
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
                let drafted: Vec<_> = drafts
                    .iter()
                    .filter(|d| d.key() > next.public)
                    .map(|d| {
                        n += 1;
                        let published = (d.seq + offset, d.sub);
                        (d.key(), n, published, d.text_as(published, n, at_ms))
                    })
                    .collect();
                let mut parts = Vec::with_capacity(1 + drafted.len());
                if let Some((text, msg_id)) = &log {
                    parts.push(wire::Part {
                        domain: wire::LOG,
                        payload: text.as_bytes(),
                        salt: Some(wire::salt(&self.keys, msg_id)),
                    });
                }
                parts.extend(drafted.iter().map(|(.., text)| wire::Part {
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
                    logs.push((subjects::with_proof(message, &proof), seq));
                    next.log = seq;
                }
                for ((key, n, published, text), proof) in drafted.into_iter().zip(proofs) {
                    let header_id = format!("{}.{}", published.0, published.1);
                    let message = jetstream::message::PublishMessage::build()
                        .payload(text.into())
                        .message_id(format!("{id}:{header_id}").as_str())
                        .header(HEADER_ID, header_id.as_str())
                        .header(HEADER_TABLE, id.as_str());
                    publics.push((subjects::with_proof(message, &proof), (key, n)));
                    next.public = key;
                    next.n = n;
                }
            }
            let (log_sent, public_sent) = tokio::join!(
                send_in_order(js, &self.status, &log_subject, logs, held.log_read),
                send_in_order(js, &self.status, &public_subject, publics, held.public_read),
            );
            if let Some((seq, at)) = log_sent.last {
                (held.log, held.log_at) = (seq, at);
            }
            if let Some(((key, n), at)) = public_sent.last {
                (held.public, held.n, held.public_at) = (key, n, at);
            }
            (held.log_read, held.public_read) = (log_sent.read, public_sent.read);
            self.acked = Some(self.progress_of(held));
            self.status
                .count_published(log_sent.count + public_sent.count);
            self.status.set_acked(held.log, held.n);
            let foreign = log_sent.foreign + public_sent.foreign;
            if foreign > 0 {
                self.status.count_foreign(foreign);
            }
            if let Some(e) = log_sent.error.or(public_sent.error) {
                // What was acknowledged is kept; the next pass reads on from it.
                return Err(e);
            }
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

    /// The progress `held` stands for, as saved (public ids as published).
    fn progress_of(&self, held: Held) -> Progress {
        Progress {
            log_seq: held.log,
            log_stream_seq: held.log_at,
            public_id: self.published_id(held.public),
            public_n: held.n,
            public_stream_seq: held.public_at,
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
        let progress = self.progress_of(held);
        let public_id = progress.public_id;
        if let Some(view) = fold.view() {
            let text = encode(
                public_id.0,
                public_id.1,
                held.n,
                u64::try_from(at_ms).unwrap_or(0),
                Body::View {
                    view,
                    resync: true,
                    signed: None,
                },
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
        self.db.save(progress).await?;
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
            Body::View {
                view,
                resync: true,
                signed: None,
            },
        );
        let sig = wire::sign(&self.keys, wire::PUBLIC, &id, text.as_bytes());
        let header_id = format!("{}.{}", published.0, published.1);
        let message = jetstream::message::PublishMessage::build()
            .payload(text.into())
            .message_id(format!("{id}:{}:{header_id}", branch.id).as_str())
            .header(HEADER_ID, header_id.as_str())
            .header(HEADER_TABLE, id.as_str())
            .header(HEADER_SIG, sig.as_str());
        let ack = js
            .send_publish(subjects::public(&id), message)
            .await
            .map_err(broker)?
            .await
            .map_err(broker)?;
        warn!(table = %id, branch = branch.id, common, superseded = branch.superseded.seq, n, "publisher: a new branch begins after the common row; viewers are sent its state");
        held.public = key;
        held.n = n;
        held.public_at = ack.sequence;
        held.public_read = held.public_read.max(ack.sequence);
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
