//! The writer's path: [`Store::append`] (one row and its projections in one transaction,
//! in place on the direct connection where it can be), what follows each commit (the
//! position, the anchor, the publisher's buffer), the audit rows written by the writer, and
//! [`Store::reload`] after a failed write. Apart from opening the store (`mod.rs`) because
//! this is the path every card takes.

use super::chain::{chain_hash, read_log, LogRow};
use super::projections::project;
use super::{anchor, audit, direct, now_ms, outbox, Record, Store, StoreError, Timeline};
use crate::engine::Event;
use sqlx::Connection;
use std::time::Duration;

impl Store {
    /// Appends `record` as the next row, with the projections of `events` (what the engine
    /// said about an accepted input; empty otherwise) and `shoe` (the shoe in play after
    /// it), in one transaction. Returns the row's sequence number once it is on disk.
    pub async fn append(
        &mut self,
        record: &Record,
        events: &[Event],
        shoe: u32,
    ) -> Result<u64, StoreError> {
        self.append_audited(record, events, shoe, None).await
    }

    /// [`Store::append`], plus `audit` (an override, an alarm clear) appended to the audit
    /// log **in the same transaction**: both rows commit or neither does. The audit row's
    /// `detail` gets `table` and `event_seq` (the event row's sequence number). The event
    /// row is inserted first, so the transaction holds SQLite's write lock before the audit
    /// chain's head is read.
    pub async fn append_audited(
        &mut self,
        record: &Record,
        events: &[Event],
        shoe: u32,
        audit: Option<&audit::AuditEntry>,
    ) -> Result<u64, StoreError> {
        let seq = self.last_seq + 1;
        let at_ms = now_ms();
        let kind = record.kind();
        let payload = serde_json::to_string(record)?;
        let hash = chain_hash(&self.last_hash, seq, at_ms, kind, &payload);
        let table = self.table.as_str();
        let seq_i = i64::try_from(seq).unwrap_or(i64::MAX);
        let projected = audit.is_some()
            || matches!(
                record,
                Record::Alarm { .. }
                    | Record::Clear { .. }
                    | Record::Dispute(_)
                    | Record::Resolve { .. }
                    | Record::Final { .. }
                    | Record::Recovered { .. }
            )
            || events.iter().any(|e| {
                matches!(
                    e,
                    Event::ShoeShuffled { .. } | Event::RoundOpened { .. } | Event::RoundSettled(_)
                )
            });
        // Without an audit row (nearly every row: cards, decisions, a round's settlement),
        // in place on this thread (`direct.rs`); through SQLite's thread when another
        // process holds the lock, without the direct connection, or with an audit row
        // (whose chain `audit::append` reads and extends on the sqlx writer).
        if let (Some(direct), None) = (&self.direct, audit) {
            let row = direct::EventRow {
                table,
                seq: seq_i,
                kind,
                payload: &payload,
                at_ms,
                hash: &hash,
            };
            let projection = projected.then_some(direct::Projected {
                record,
                events,
                shoe,
            });
            if direct.append(&row, projection)? == direct::Inserted::Committed {
                self.committed(seq, at_ms, hash, record, payload);
                return Ok(seq);
            }
        }
        // Built only off the card's path: the direct connection has its own statement.
        let insert = sqlx::query(
            "INSERT INTO events (table_id, seq, kind, payload, at_ms, hash) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(table)
        .bind(seq_i)
        .bind(kind)
        .bind(&payload)
        .bind(at_ms)
        .bind(&hash[..]);
        if !projected {
            // One statement, atomic and durable on its own (autocommit): one round trip
            // to SQLite's thread instead of three.
            insert.execute(&mut *self.conn).await?;
            self.committed(seq, at_ms, hash, record, payload);
            return Ok(seq);
        }
        let mut tx = self.conn.begin().await?;
        insert.execute(&mut *tx).await?;
        if let Some(entry) = audit {
            let mut entry = entry.clone();
            if let Some(detail) = entry.detail.as_object_mut() {
                detail.insert("table".into(), table.into());
                detail.insert("event_seq".into(), seq.into());
            }
            audit::append(&mut tx, &entry).await?;
        }
        // The projections are derived data: if one cannot be written, the row (the truth)
        // still commits and the projection is logged as missing, rather than the table
        // going out of service over a report.
        let mut savepoint = (*tx).begin().await?;
        match project(&mut *savepoint, table, seq_i, record, events, shoe).await {
            Ok(()) => savepoint.commit().await?,
            Err(e) => {
                savepoint.rollback().await?;
                tracing::error!(table, seq, error = %e, "projection not written (the event row is)");
            }
        }
        tx.commit().await?;
        self.committed(seq, at_ms, hash, record, payload);
        Ok(seq)
    }

    /// After a commit: the writer's position and the anchor follow the log's new head.
    fn committed(
        &mut self,
        seq: u64,
        at_ms: i64,
        hash: [u8; 32],
        record: &Record,
        payload: String,
    ) {
        self.last_seq = seq;
        self.last_hash = hash;
        self.timeline.follow(seq, record);
        if let Some(a) = &mut self.anchor {
            if let Err(e) = a.set(&anchor::head(&self.table, seq, &hash)) {
                tracing::warn!(error = %e, "the anchor could not follow the log head");
            }
        }
        if let Some(recent) = &self.recent {
            let hash = hex::encode(hash);
            recent.push(outbox::StoredRow {
                row: LogRow {
                    seq,
                    at_ms,
                    record: record.clone(),
                    hash: hash.clone(),
                },
                kind: record.kind().to_string(),
                payload,
                hash,
            });
        }
    }

    /// The buffer of the rows this writer commits from now on, for the broker publisher
    /// ([`outbox::OutboxDb::with_recent`]): made at the first call, the same one after.
    pub fn recent(&mut self) -> outbox::Recent {
        let last_seq = self.last_seq;
        self.recent
            .get_or_insert_with(|| {
                let recent = outbox::Recent::default();
                recent.reset(last_seq);
                recent
            })
            .clone()
    }

    /// The log's head: the last row's chain hash (lowercase hex).
    pub fn head_hash(&self) -> String {
        hex::encode(self.last_hash)
    }

    /// Re-reads and verifies the whole log after a failed write, and positions the writer
    /// after its last row: whatever the failed write left (nothing, or a row that did
    /// commit after all), the log on disk is what counts.
    pub async fn reload(&mut self) -> Result<Vec<LogRow>, StoreError> {
        let (log, last_hash) = read_log(&mut self.conn, &self.table).await?;
        self.last_seq = log.last().map_or(0, |r| r.seq);
        self.last_hash = last_hash;
        if let Some(recent) = &self.recent {
            recent.reset(self.last_seq);
        }
        self.timeline = Timeline::of(&self.first_timeline, &log);
        Ok(log)
    }

    /// How long a write waits for another connection's lock before it fails
    /// (SQLite's busy timeout; [`WRITE_BUSY`] unless changed).
    pub async fn set_busy_timeout(&mut self, wait: Duration) -> Result<(), StoreError> {
        sqlx::query(&format!("PRAGMA busy_timeout = {}", wait.as_millis()))
            .execute(&mut *self.conn)
            .await?;
        if let Some(direct) = &self.direct {
            direct.set_busy_timeout(wait)?;
        }
        Ok(())
    }

    /// Appends `entry` to the audit log on its own, in a `BEGIN IMMEDIATE` transaction of
    /// this (the writer's) connection: a decision that changes no event row (a withdrawn
    /// proposal).
    pub async fn audit(&mut self, entry: &audit::AuditEntry) -> Result<(), StoreError> {
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await?;
        audit::append(&mut tx, entry).await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fresh;
    use super::super::{direct, options, outbox, Reader, Record, Source, Store};
    use crate::engine::{Event, Input};
    use sqlx::ConnectOptions;
    use std::path::Path;

    #[tokio::test]
    async fn a_projection_that_cannot_be_written_does_not_lose_the_row() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let record = Record::Input {
            source: Source::Api,
            input: Input::Shuffle,
        };
        let opened = [Event::RoundOpened { round: 1 }];
        assert_eq!(store.append(&record, &opened, 1).await.expect("first"), 1);
        // The same round number again: its `rounds` row collides, the event row stays.
        assert_eq!(store.append(&record, &opened, 1).await.expect("second"), 2);
        store.close().await.expect("close");
        let reopened = Store::open(&db, "t", "t", "deluxe").await.expect("reopen");
        assert_eq!(reopened.log.len(), 2, "the chain verifies with both rows");
        drop(reopened);
        let reader = Reader::open(&db).await.expect("reader");
        assert_eq!(reader.recall("t", 10).await.expect("recall").len(), 1);
    }

    #[tokio::test]
    async fn a_row_waits_out_a_lock_longer_than_the_direct_connections_and_is_written_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let card = |c: &str| Record::Input {
            source: Source::Shoe,
            input: Input::Card(c.parse().expect("card")),
        };
        assert_eq!(store.append(&card("AS"), &[], 1).await.expect("row 1"), 1);
        // A plain row (one autocommit INSERT) and a projected one (a transaction) in turn.
        let shuffled = [Event::ShoeShuffled { shoe: 2 }];
        let rows: [(Record, &[Event]); 2] = [(card("KH"), &[]), (card("QD"), &shuffled)];
        for (n, (record, events)) in rows.iter().enumerate() {
            // Another process holds the write lock ten times as long as the direct
            // connection waits: the row goes through the sqlx connection's longer wait.
            let mut blocker = options(&db).connect().await.expect("blocker");
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut blocker)
                .await
                .expect("lock");
            let held = direct::DIRECT_BUSY * 10;
            let release = tokio::spawn(async move {
                tokio::time::sleep(held).await;
                sqlx::query("COMMIT")
                    .execute(&mut blocker)
                    .await
                    .expect("unlock");
            });
            let started = std::time::Instant::now();
            let seq = store.append(record, events, 2).await.expect("written");
            assert_eq!(seq, n as u64 + 2);
            assert!(
                started.elapsed() >= held,
                "written only once the lock was released"
            );
            release.await.expect("released");
        }
        assert_eq!(store.append(&card("JC"), &[], 2).await.expect("row 4"), 4);
        store.close().await.expect("close");
        let reopened = Store::open(&db, "t", "t", "deluxe").await.expect("reopen");
        assert_eq!(
            reopened.log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "each row once, and the chain verifies across both connections"
        );
        drop(reopened);
        assert_eq!(
            projections_of(&db).await,
            ["shoes [\"t\",2,3,null]"],
            "the projection of the row written under the lock"
        );
    }

    /// Every projection table, row by row, in a stable order.
    async fn projections_of(db: &Path) -> Vec<String> {
        let mut conn = options(db).connect().await.expect("connect");
        let mut out = Vec::new();
        for (table, order) in [
            ("shoes", "shoe"),
            ("rounds", "round"),
            ("bets", "round, line"),
            ("settlements", "round, line"),
            ("alarms", "raised_seq"),
        ] {
            let columns: String =
                sqlx::query_scalar("SELECT group_concat(name, ', ') FROM pragma_table_info(?)")
                    .bind(table)
                    .fetch_one(&mut conn)
                    .await
                    .expect("columns");
            let sql = format!("SELECT json_array({columns}) FROM {table} ORDER BY {order}");
            let rows: Vec<String> = sqlx::query_scalar(&sql)
                .fetch_all(&mut conn)
                .await
                .expect("dump");
            out.extend(rows.into_iter().map(|r| format!("{table} {r}")));
        }
        out
    }

    #[tokio::test]
    async fn the_direct_connection_projects_a_session_as_the_sqlx_writer_does() {
        use crate::engine::{Engine, Variant};
        use crate::sim::{Style, TableSim};
        let variant =
            std::sync::Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let mut engine = Engine::new(std::sync::Arc::clone(&variant));
        let mut sim = TableSim::new(variant, 11, Style::Random);
        let (one, two) = (
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        );
        let (direct_db, mut direct) = fresh(one.path()).await;
        let (sqlx_db, mut through_sqlx) = fresh(two.path()).await;
        assert!(direct.direct.is_some(), "the direct connection opened");
        through_sqlx.direct = None;
        let (mut events, mut settled) = (Vec::new(), 0);
        while settled < 40 {
            let input = sim.next_input(&engine);
            events.clear();
            engine.apply(&input, &mut events).expect("legal");
            settled += events
                .iter()
                .filter(|e| matches!(e, Event::RoundSettled(_)))
                .count();
            let record = Record::Input {
                source: Source::Api,
                input,
            };
            let shoe = engine.shoe().number();
            let a = direct.append(&record, &events, shoe).await.expect("direct");
            let b = through_sqlx
                .append(&record, &events, shoe)
                .await
                .expect("sqlx");
            assert_eq!(a, b);
        }
        // An alarm and its clearing (projected, no audit row) go the direct way too.
        let alarm = Record::Alarm {
            reason: "wrong card".into(),
            expected: "a card for seat 1".into(),
            item: None,
        };
        for store in [&mut direct, &mut through_sqlx] {
            store.append(&alarm, &[], 1).await.expect("alarm");
        }
        direct.close().await.expect("close");
        through_sqlx.close().await.expect("close");
        let (a, b) = (
            projections_of(&direct_db).await,
            projections_of(&sqlx_db).await,
        );
        assert!(a.iter().filter(|r| r.starts_with("settlements ")).count() >= 40);
        assert!(a.iter().any(|r| r.starts_with("shoes ")));
        assert!(a.iter().any(|r| r.starts_with("alarms ")));
        assert_eq!(a, b, "the same projections whichever connection wrote them");
    }

    #[tokio::test]
    async fn the_publishers_buffer_serves_what_the_database_holds_and_falls_back_past_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let record = |n: u64| Record::Input {
            source: if n.is_multiple_of(2) {
                Source::Api
            } else {
                Source::Shoe
            },
            input: Input::Shuffle,
        };
        // Rows committed before the buffer was asked for are only in the database.
        store.append(&record(0), &[], 1).await.expect("row 1");
        let recent = store.recent();
        let total = super::outbox::RECENT_ROWS as u64 + 40;
        for n in 2..=total {
            store.append(&record(n), &[], 1).await.expect("a row");
        }
        let plain = outbox::OutboxDb::open(&db, "t").await.expect("outbox");
        let buffered = outbox::OutboxDb::open(&db, "t")
            .await
            .expect("outbox")
            .with_recent(recent.clone());
        let key = |rows: Vec<outbox::StoredRow>| {
            rows.into_iter()
                .map(|r| (r.row, r.kind, r.payload, r.hash))
                .collect::<Vec<_>>()
        };
        for after in [0, 1, 30, 41, total - 100, total - 1, total] {
            let from_db = plain.rows_after(after, 64).await.expect("db rows");
            let from_memory = buffered.rows_after(after, 64).await.expect("rows");
            assert_eq!(key(from_memory), key(from_db), "rows after {after}");
        }
        // In memory: the last row, not read from the database (which no longer has it).
        assert!(recent.after(total - 1, 1).is_some());
        // Past its reach (and before the buffer began): not in memory, so from the database.
        assert!(recent.after(1, 1).is_none());
        assert!(recent.after(0, 1).is_none());
        // A reload starts the buffer again at the log's head.
        store.reload().await.expect("reload");
        assert_eq!(recent.after(total - 1, 1), None);
        assert_eq!(recent.after(total, 1).map(|r| r.len()), Some(0));
        store
            .append(&record(1), &[], 1)
            .await
            .expect("after reload");
        let next = recent.after(total, 8).expect("in memory again");
        assert_eq!(
            next.iter().map(|r| r.row.seq).collect::<Vec<_>>(),
            [total + 1]
        );
    }
}
