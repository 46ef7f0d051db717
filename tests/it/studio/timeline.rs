//! Timelines (issue #31): a restored table publishes nothing until the operator continues it;
//! a second table under the same id publishes nothing.

use super::*;

/// The guide's repair for a damaged database (docs/src/alarms.md) — restore the backup and its `.anchor` —
/// with the broker, a relay and a viewer attached (issue #31). The restored table begins a
/// new timeline, finds that the broker holds rows it lost, and publishes nothing; its
/// readiness and panel say why. After the operator's `croupier timeline continue`, it
/// publishes its log after the last row both histories share: the relay and the viewer
/// follow it without a gap, and the broker keeps the superseded rows beside the new ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_table_publishes_nothing_until_the_operator_continues_its_timeline() {
    use croupier::store::{Record, TimelineCause};
    in_studio(&["alpha"], 300, |mut studio| async move {
        let relay = studio.relay("relay").await;
        let viewer = Viewer::connect(&relay.addr, "alpha", None).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 20).await;
        let backup = studio.dir.join("alpha-backup.db");
        let cfg = studio.tables[0].demo.display().to_string();
        let out = common::croupier(&["backup", backup.to_str().expect("utf-8"), "--config", &cfg], None);
        assert!(out.status.success(), "{}", common::text(&out));
        let backed = Reader::open(&backup).await.expect("backup").log("alpha").await.expect("log").len() as u64;
        // The table deals on, and its publisher puts the tail the restore will lose on
        // the broker.
        studio.tables[0].wait_rows(backed + 40).await;
        let table = &mut studio.tables[0];
        table.stop();
        let nats = async_nats::connect(studio.nats.url()).await.expect("nats");
        let js = async_nats::jetstream::new(nats);
        let started = Instant::now();
        while last_row(&js, "alpha").await["seq"] != table.seq().await {
            // The quiet twin publishes what the demo table left.
            assert!(started.elapsed() < Duration::from_secs(30), "the tail reaches the broker");
            table.start(false).await;
            sleep(Duration::from_millis(1500)).await;
            table.stop();
        }
        let lost_head = table.seq().await;
        let broker_head = last_row(&js, "alpha").await;
        assert_eq!(broker_head["seq"], lost_head);

        // The restore, as the guide tells it: the backup and its anchor over the live ones.
        common::restore(&backup, &table.db);
        table.start(false).await;
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let row = &log[backed as usize];
        assert!(
            matches!(&row.record, Record::Timeline { cause: TimelineCause::Restored { backup_seq, .. }, .. } if *backup_seq == backed),
            "the row after the backup's last begins a restored timeline: {:?}",
            row.record
        );
        // Not ready, and says why; nothing of the restored log reaches the broker.
        let started = Instant::now();
        let ready = loop {
            let (status, r) = get(&table.addr(), "/readyz").await;
            if r["reasons"].as_array().is_some_and(|a| a.iter().any(|x| x == "publish_stopped")) {
                assert_eq!(status, 503, "{r}");
                break r;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "publish_stopped: {r}");
            sleep(Duration::from_millis(200)).await;
        };
        let stopped = ready["publish"]["stopped"].as_str().expect("why");
        assert!(stopped.starts_with("timeline_fork"), "{stopped}");
        assert!(stopped.contains("croupier timeline continue"), "{stopped}");
        sleep(Duration::from_secs(2)).await;
        assert_eq!(last_row(&js, "alpha").await, broker_head, "nothing published over the broker's history");
        // It said so on its log subject, signed, for the floor (a notice, not a row).
        let mut s = js.get_stream("CROUPIER_LOG_alpha").await.expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let notice = s.get_raw_message(last).await.expect("notice");
        let notice: Value = serde_json::from_slice(&notice.payload).expect("json");
        assert_eq!(notice["notice"], "fork", "{notice}");
        assert!(notice["detail"].as_str().is_some_and(|d| d.starts_with("timeline_fork")), "{notice}");
        table.stop();

        // The operator keeps the restored log.
        let idle = table.idle.display().to_string();
        let out = common::croupier(&["timeline", "continue", "--config", &idle], None);
        assert!(out.status.success(), "{}", common::text(&out));
        let said = common::text(&out);
        assert!(said.contains(&format!("published after row {backed}")), "{said}");
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let Some(Record::Timeline { cause: TimelineCause::Continued { superseded, common_seq, .. }, .. }) = log.last().map(|r| &r.record) else {
            panic!("a continued timeline: {:?}", log.last());
        };
        assert_eq!((superseded.seq, *common_seq), (lost_head, backed));
        // Twice is nothing new.
        let again = common::croupier(&["timeline", "continue", "--config", &idle], None);
        assert!(again.status.success() && common::text(&again).contains("already continues"), "{}", common::text(&again));

        // What the lost rows moved in the wallet, read back from the broker's superseded
        // rows in chain order (the folding itself: `publish::branch` unit tests).
        let lost = common::croupier(&["timeline", "lost", "--config", &idle, "--json"], None);
        assert!(lost.status.success(), "{}", common::text(&lost));
        let lost: Value = serde_json::from_slice(&lost.stdout).expect("json");
        assert_eq!(lost["common_seq"].as_u64(), Some(backed), "{lost}");
        assert_eq!(lost["last_seq"].as_u64(), Some(lost_head), "{lost}");
        assert!(lost["moves"].is_array(), "{lost}");

        // The new timeline deals and is published; the relay's viewer follows.
        table.start(true).await;
        let now = table.seq().await;
        table.wait_rows(now + 30).await;
        table.stop();
        table.start(false).await;
        let mut rows = table.seq().await;
        loop {
            sleep(Duration::from_millis(1500)).await;
            let now = table.seq().await;
            if now == rows {
                break;
            }
            rows = now;
        }
        let started = Instant::now();
        loop {
            let (status, r) = get(&table.addr(), "/readyz").await;
            if status == 200 && r["publish"]["lag"] == 0 {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "caught up: {r}");
            sleep(Duration::from_millis(200)).await;
        }
        // The viewer's state is the restored log's, reached without a gap.
        let (stream, _) = table.expected().await;
        let expected = state_at(&stream).expect("a view");
        let started = Instant::now();
        loop {
            let got = viewer.messages();
            if state_at(&got).as_ref() == Some(&expected) {
                let ns: Vec<u64> = got
                    .iter()
                    .map(|t| serde_json::from_str::<Value>(t).expect("json")["n"].as_u64().expect("n"))
                    .collect();
                assert!(ns.windows(2).all(|w| w[1] == w[0] + 1), "consecutive numbers: {ns:?}");
                let branch = got
                    .iter()
                    .map(|t| serde_json::from_str::<Value>(t).expect("json"))
                    .filter(|m| m["resync"] == true)
                    .count();
                assert_eq!(branch, 2, "the first view and the branch's resync view");
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "the viewer follows the new timeline");
            sleep(Duration::from_millis(200)).await;
        }
        let (_, relay_ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(relay_ready["refused"]["alpha"], Value::Null, "nothing refused: {relay_ready}");
        // What the viewer saved checks out, across the restore, which it names: not a cut
        // log, and not nothing (exit 3).
        let saved = studio.dir.join("viewer-history.jsonl");
        std::fs::write(&saved, viewer.messages().join("\n")).expect("save");
        let checked = common::croupier(&["verify-results", saved.to_str().expect("utf-8")], None);
        let said = common::text(&checked);
        assert_eq!(checked.status.code(), Some(3), "{said}");
        assert!(said.contains("TIMELINE CHANGE") && !said.contains("FAILED"), "{said}");

        // The broker keeps both histories: the superseded rows under the old timeline,
        // then the restored log's rows after the common one, marked with their branch.
        let mut s = js.get_stream("CROUPIER_LOG_alpha").await.expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let mut held = Vec::new();
        for seq in 1..=last {
            let m = s.get_raw_message(seq).await.expect("message");
            held.push(serde_json::from_slice::<Value>(&m.payload).expect("json"));
        }
        let log = Reader::open(&table.db).await.expect("reader").log("alpha").await.expect("log");
        let Some(Record::Timeline { id: branch, .. }) = log.iter().rev().map(|r| &r.record).find(|r| matches!(r, Record::Timeline { .. })) else {
            panic!("the continue row");
        };
        let superseded = held.iter().filter(|m| m["branch"] == "" && m["seq"].as_u64() > Some(backed)).count() as u64;
        assert_eq!(superseded, lost_head - backed, "every superseded row is kept");
        let on_branch: Vec<&Value> = held.iter().filter(|m| m["branch"] == branch.as_str()).collect();
        assert_eq!(on_branch.len(), log.len() - backed as usize, "every row after the common one, once");
        for (m, row) in on_branch.iter().zip(&log[backed as usize..]) {
            assert_eq!((m["seq"].as_u64(), m["hash"].as_str()), (Some(row.seq), Some(row.hash.as_str())));
        }
    })
    .await;
}

/// A second table configured with an id that already publishes (its own database and
/// key) publishes nothing and says why; the first table's history on the broker is
/// untouched (issue #31).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_table_with_the_same_id_publishes_nothing() {
    in_studio(&["alpha"], 180, |studio| async move {
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 20).await;
        let twin_dir = studio.dir.join("twin");
        std::fs::create_dir_all(&twin_dir).expect("dir");
        let mut twin = Table::new(&twin_dir, "alpha", &studio.nats.url());
        twin.start(true).await;
        let started = Instant::now();
        let ready = loop {
            let (status, r) = get(&twin.addr(), "/readyz").await;
            if r["reasons"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "publish_stopped"))
            {
                assert_eq!(status, 503, "{r}");
                break r;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "publish_stopped: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        };
        let stopped = ready["publish"]["stopped"].as_str().expect("why");
        assert!(stopped.starts_with("timeline_foreign"), "{stopped}");
        twin.wait_rows(10).await;
        // Every row on the broker is the first table's own.
        let nats = async_nats::connect(studio.nats.url()).await.expect("nats");
        let js = async_nats::jetstream::new(nats);
        let mut s = js
            .get_stream("CROUPIER_LOG_alpha")
            .await
            .expect("log stream");
        let last = s.info().await.expect("info").state.last_sequence;
        let reader = Reader::open(&studio.tables[0].db).await.expect("reader");
        let log = reader.log("alpha").await.expect("log");
        let mut notices = 0;
        for seq in 1..=last {
            let m = s.get_raw_message(seq).await.expect("message");
            let row: Value = serde_json::from_slice(&m.payload).expect("json");
            if row["notice"] == "fork" {
                // The twin's word that it stopped, for the floor: not a row.
                assert!(
                    row["detail"]
                        .as_str()
                        .is_some_and(|d| d.starts_with("timeline_foreign")),
                    "{row}"
                );
                notices += 1;
                continue;
            }
            let i = row["seq"].as_u64().expect("seq") as usize - 1;
            assert_eq!(
                row["hash"].as_str(),
                Some(log[i].hash.as_str()),
                "row {} on the broker is the first table's",
                i + 1
            );
        }
        assert_eq!(notices, 1, "the twin said it stopped");
        twin.stop();

        // The operator tries `timeline continue` on the twin: refused, with what to do,
        // and nothing written (issue #58: it said "start the table", which stayed stopped).
        let rows = twin.seq().await;
        let idle = twin.idle.display().to_string();
        let out = common::croupier(&["timeline", "continue", "--config", &idle], None);
        let said = common::text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains("signed with another key") && said.contains("an id of its own"),
            "{said}"
        );
        assert_eq!(twin.seq().await, rows, "nothing written");
        // Done as it says: given an id of its own, the twin publishes under it.
        for cfg in [&twin.demo, &twin.idle] {
            let text = std::fs::read_to_string(cfg).expect("config");
            std::fs::write(cfg, text.replace("id = \"alpha\"", "id = \"alpha-2\""))
                .expect("config");
        }
        twin.id = "alpha-2".into();
        twin.start(true).await;
        let started = Instant::now();
        loop {
            let (status, r) = get(&twin.addr(), "/readyz").await;
            let published = r["publish"]["acked"].as_u64().unwrap_or(0);
            if status == 200 && published >= 5 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "alpha-2 publishes: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }
        twin.stop();
    })
    .await;
}
